"""How Inspect decides when to compact, as its log records it, and whose model it is: light
(no reader imported), shared by the spec and the source."""

from __future__ import annotations

from typing import Any


def compaction_config(header: dict[str, Any]) -> dict[str, Any] | None:
    """The ``compaction`` parameters of the first plan step that has them (the ``react`` agent's
    ``CompactionSummary``/``Trim``/``Edit`` as recorded in ``header.plan``), else None."""
    plan = header.get("plan") if isinstance(header, dict) else None
    steps = plan.get("steps") if isinstance(plan, dict) else None
    for st in steps if isinstance(steps, list) else []:
        params = st.get("params") if isinstance(st, dict) else None
        comp = params.get("compaction") if isinstance(params, dict) else None
        if isinstance(comp, dict):
            return comp
    return None


def threshold_of(comp: dict[str, Any] | None, window: int | None) -> tuple[int | None, str]:
    """``(threshold in tokens, where it comes from)`` of a recorded compaction config.

    Inspect's ``threshold`` is an int (tokens) or a float (a fraction of the model's context
    window, default 0.9); it is compared with Inspect's own estimate of the input (the last
    reported input plus counted new messages), not with provider usage.

    Examples
    --------
    >>> threshold_of({"type": "trim", "threshold": 1200}, None)
    (1200, 'recorded: header.plan compaction threshold=1200 tokens (trim)')
    >>> threshold_of({"type": "summary", "threshold": 0.9}, None)[0] is None
    True
    >>> threshold_of(None, None)
    (None, 'no compaction configured in header.plan: Inspect compacts only when a solver asks')
    """
    if comp is None:
        return (
            None,
            "no compaction configured in header.plan: Inspect compacts only when a solver asks",
        )
    t = comp.get("threshold", 0.9)
    kind = comp.get("type")
    if type(t) is int and t > 0:
        return t, f"recorded: header.plan compaction threshold={t} tokens ({kind})"
    if isinstance(t, float) and 0 < t <= 1:
        if window:
            return int(window * t), (
                f"recorded: header.plan compaction threshold={t} of the {window:,}-token "
                f"window ({kind})"
            )
        return None, (
            f"recorded: header.plan compaction threshold={t} of the model's context window, "
            f"which the log does not record ({kind})"
        )
    return None, f"header.plan compaction threshold {str(t)[:20]!r} is not a number adfkit reads"


def provider_of(model: str | None) -> str | None:
    """Inspect names models ``<provider>/<model>``: the part before the first slash.

    Examples
    --------
    >>> provider_of("openai/gpt-4o-mini"), provider_of("gpt-4o") is None
    ('openai', True)
    """
    if isinstance(model, str) and "/" in model:
        return model.split("/", 1)[0] or None
    return None
