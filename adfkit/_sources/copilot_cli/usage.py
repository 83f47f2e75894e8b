"""Token counts of a usage object (``session.usage_record``, ``compactionTokensUsed``,
``assistant.usage``), corrected by its billing lines as Copilot CLI reads them (the
format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import Findings, bad_counts, bad_usage, mapped_tokens


def counts_of(u: Any, keys: dict[str, str], fnd: Findings, line: int) -> dict[str, int]:
    """Counts of ``u`` under ``keys`` (source -> ADF key); a bad value is left out (NA)."""
    if type(u) is not dict:
        return {}
    bad = bad_counts(u, tuple(keys))
    if bad:
        bad_usage(fnd, line, bad)
    return mapped_tokens(u, keys)


#: ``session.usage_record`` / ``compactionTokensUsed`` keys -> the ADF keys (the live follower
#: reads them too).
USAGE_KEYS = {
    "inputTokens": "input",
    "outputTokens": "output",
    "cacheReadTokens": "cache_read",
    "cacheWriteTokens": "cache_write",
    "reasoningTokens": "reasoning",
}


def billed(u: Any, fnd: Findings, line: int) -> dict[str, int]:
    """A usage object's counts (``_USAGE_KEYS``), corrected by its ``copilotUsage.tokenDetails``
    (the billing lines CAPI returns, ``[{"tokenType": "cache_write", "tokenCount": n}, ...]``)
    the way Copilot CLI itself reads them (1.0.102, ``cli-main.js``): cache read is the
    ``cache_read`` line where there is one; cache write the larger of ``cacheWriteTokens`` and
    ``cache_write`` + ``cache_write_1h``; input, where an ``input`` line is given, that line plus
    the cache read and write (Copilot's input counts the cached parts); output the ``output``
    line. A compaction recorded ``cacheWriteTokens`` 0 where its billing said 139,926 written.

    Examples
    --------
    >>> f = Findings()
    >>> used = {"inputTokens": 150000, "outputTokens": 900, "cacheReadTokens": 0,
    ...         "cacheWriteTokens": 0, "copilotUsage": {"totalNanoAiu": 1, "tokenDetails": [
    ...             {"tokenType": "input", "tokenCount": 10074, "batchSize": 1, "costPerBatch": 0},
    ...             {"tokenType": "cache_write", "tokenCount": 139926, "batchSize": 1,
    ...              "costPerBatch": 0}]}}
    >>> billed(used, f, 1)
    {'input': 150000, 'output': 900, 'cache_read': 0, 'cache_write': 139926}
    """
    tokens = counts_of(u, USAGE_KEYS, fnd, line)
    billed = _details(u.get("copilotUsage") if type(u) is dict else None)
    if not billed:
        return tokens
    read = billed.get("cache_read", tokens.get("cache_read"))
    if read is not None:
        tokens["cache_read"] = read
    if "cache_write" in billed or "cache_write_1h" in billed:
        parts = billed.get("cache_write", 0) + billed.get("cache_write_1h", 0)
        tokens["cache_write"] = max(tokens.get("cache_write", 0), parts)
    if "input" in billed:
        tokens["input"] = billed["input"] + (read or 0) + tokens.get("cache_write", 0)
    if "output" in billed:
        tokens["output"] = billed["output"]
    return tokens


def _details(usage: Any) -> dict[str, int]:
    """``copilotUsage.tokenDetails`` as ``{tokenType: tokenCount}`` (counts summed per type;
    a line whose count cannot be read makes its type unknown, left out)."""
    lines = usage.get("tokenDetails") if type(usage) is dict else None
    out: dict[str, int] = {}
    bad: set[str] = set()
    for d in lines if isinstance(lines, list) else ():
        kind = d.get("tokenType") if type(d) is dict else None
        if not isinstance(kind, str):
            continue
        n = as_count(d.get("tokenCount"))
        if n is None:
            bad.add(kind)
        else:
            out[kind] = out.get(kind, 0) + n
    return {k: v for k, v in out.items() if k not in bad}
