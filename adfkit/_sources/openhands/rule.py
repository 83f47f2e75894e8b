"""OpenHands' condenser rule as adfkit states it: the token threshold and where it comes from."""

from __future__ import annotations

#: Defaults of OpenHands' ``LLMSummarizingCondenser`` (openhands-sdk 1.58,
#: ``openhands/sdk/context/condenser/llm_summarizing_condenser.py``; SOURCES-NEXT.md §2.2).
DEFAULT_MAX_SIZE = 240
DEFAULT_KEEP_FIRST = 2


def rule_text(
    window: int | None,
    max_size: int | None = None,
    keep_first: int | None = None,
    max_tokens: int | None = None,
) -> str:
    """How OpenHands decides to condense, and what :func:`compaction_rule`'s token threshold
    stands for. ``max_size``/``keep_first``/``max_tokens``: as ``base_state.json`` records the
    condenser (None: not recorded, the defaults are assumed)."""
    size = (
        f"max_size={max_size} (recorded)" if max_size else f"max_size={DEFAULT_MAX_SIZE} (default)"
    )
    first = (
        f"keep_first={keep_first} (recorded)"
        if keep_first is not None
        else f"keep_first={DEFAULT_KEEP_FIRST} (default)"
    )
    toks = f"max_tokens={max_tokens:,} (recorded)" if max_tokens else "max_tokens unset (default)"
    if max_tokens:
        thr = f"the token threshold is max_tokens={max_tokens:,}"
    elif window:
        thr = (
            f"the token threshold is the context window ({window:,}, recorded in "
            "TokenUsage.context_window): the agent requests a condensation when the LLM reports "
            "the window exceeded"
        )
    else:
        thr = "no token threshold is known (no context window recorded)"
    return (
        "OpenHands LLMSummarizingCondenser (openhands-sdk 1.58 llm_summarizing_condenser.py): "
        f"condenses when the view holds more than {size} events, keeping the first "
        f"{first} and half of max_size, or past {toks}, or on a CondensationRequest; {thr}. "
        "The event-count rule has no token counterpart, so simulate() does not reproduce "
        "event-count condensations (assumed)"
    )


def compaction_rule(
    model: str | None,
    window: int | None,
    *,
    max_size: int | None = None,
    keep_first: int | None = None,
    max_tokens: int | None = None,
) -> tuple[int | None, int | None, str]:
    """``(window, threshold, rule text)``: the window as recorded (None: unknown, OpenHands
    runs any model), the token threshold (``max_tokens`` when the condenser records one, else
    the window) and how it was decided.

    Examples
    --------
    >>> compaction_rule("openai/gpt-4o-mini", 128000)[:2]
    (128000, 128000)
    >>> compaction_rule(None, None, max_tokens=90000)[:2]
    (None, 90000)
    """
    threshold = max_tokens or window or None
    return window, threshold, rule_text(window, max_size, keep_first, max_tokens)
