"""The calls' usage: ``stats.usage_to_metrics`` of ``base_state.json``, one ``TokenUsage``
per call, joined to the events by ``response_id`` (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.openhands.content import get, str_or_none
from adfkit._sources.transcript.kit import Findings, bad_counts, mapped_tokens

_COUNT_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
_TOKEN_MAP = {
    "prompt_tokens": "input",
    "completion_tokens": "output",
    "cache_read_tokens": "cache_read",
    "cache_write_tokens": "cache_write",
    "reasoning_tokens": "reasoning",
}


def tokens_of(u: dict[str, Any]) -> dict[str, int]:
    """One ``TokenUsage`` -> ADF tokens (``input`` = ``prompt_tokens``, which includes the cached
    part). A value that is not a count is left out (unknown).

    Examples
    --------
    >>> tokens_of({"prompt_tokens": 3869, "completion_tokens": 32, "cache_read_tokens": 3712,
    ...            "cache_write_tokens": 0, "reasoning_tokens": 0})
    {'input': 3869, 'output': 32, 'cache_read': 3712, 'cache_write': 0, 'reasoning': 0}
    """
    return mapped_tokens(u, _TOKEN_MAP)


@dataclass
class Usage:
    usage_id: str
    model: str | None
    tokens: dict[str, int]
    response_id: str | None
    window: int | None
    cost_at_ms: int | None = None
    used: bool = False


def read_usages(state: dict[str, Any], fnd: Findings) -> tuple[list[Usage], str | None]:
    """Every per-call ``TokenUsage`` of ``stats.usage_to_metrics``, and the condenser's usage id."""
    out: list[Usage] = []
    metrics = get(state, "stats", "usage_to_metrics")
    cond_uid = str_or_none(get(state, "agent", "condenser", "llm", "usage_id"))
    if not isinstance(metrics, dict):
        return out, cond_uid
    for uid, m in metrics.items():
        if not isinstance(m, dict):
            continue
        tus = m.get("token_usages")
        if not isinstance(tus, list):
            acc = m.get("accumulated_token_usage")
            if isinstance(acc, dict):
                fnd.add(
                    "usage_totals_only",
                    "warning",
                    None,
                    f"usage {uid!r} records totals only (no per-call token_usages): its calls "
                    "have NA tokens",
                )
            continue
        raw_costs = m.get("costs")
        costs: list[Any] = raw_costs if isinstance(raw_costs, list) else []
        paired = len(costs) == len(tus)
        bad_n = 0
        for i, u in enumerate(tus):
            if not isinstance(u, dict):
                bad_n += 1
                continue
            if bad_counts(u, _COUNT_KEYS):
                bad_n += 1
            cts = get(costs[i], "timestamp") if paired else None
            w = as_count(u.get("context_window"))
            out.append(
                Usage(
                    str(uid),
                    str_or_none(u.get("model")) or str_or_none(m.get("model_name")),
                    tokens_of(u),
                    str_or_none(u.get("response_id")),
                    w or None,
                    int(cts * 1000)
                    if isinstance(cts, int | float) and not isinstance(cts, bool) and cts > 0
                    else None,
                )
            )
        if bad_n:
            fnd.add(
                "bad_token_count",
                "warning",
                None,
                f"usage {uid!r}: {bad_n} TokenUsage record(s) hold values that are not token "
                "counts; NA, never summed",
            )
    return out, cond_uid


def by_response(usages: list[Usage], fnd: Findings) -> dict[str, Usage]:
    by_rid: dict[str, Usage] = {}
    for u in usages:
        if not u.response_id:
            continue
        if u.response_id in by_rid:
            fnd.add(
                "duplicate_response_id",
                "warning",
                None,
                f"usage response_id {u.response_id[:40]!r} recorded twice: counted once",
            )
            continue
        by_rid[u.response_id] = u
    return by_rid
