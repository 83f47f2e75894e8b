"""Token maps: a provider's usage (Anthropic, OpenAI, or mapped keys) as the ADF token keys, counts
that are not counts reported, not counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from adfkit._core.rows import MAX_COUNT, as_count

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).

from adfkit._sources.transcript.findings import Findings


def as_int(v: Any) -> int | None:
    """``v`` if it is an int (not a bool) the count rule takes (:func:`adfkit._core.rows.as_count`:
    from 0, fitting Int64), else None.

    Examples
    --------
    >>> as_int(5), as_int(-1), as_int(2**63), as_int(5.0), as_int(True)
    (5, None, None, None, None)
    """
    return v if type(v) is int and as_count(v) is not None else None


def bad_counts(usage: Any, keys: tuple[str, ...]) -> list[str]:
    """The keys of ``usage`` among ``keys`` holding something that is not a token count (by
    :func:`adfkit._core.rows.as_count`: negative, fractional, text, bool, too large); absent and
    null keys are not bad.

    Examples
    --------
    >>> bad_counts({"input_tokens": -5, "output_tokens": 7, "x": "no"}, ("input_tokens",
    ...            "output_tokens", "cache_read_input_tokens"))
    ['input_tokens']
    """
    if not isinstance(usage, dict):
        return []
    return [k for k in keys if usage.get(k) is not None and as_count(usage[k]) is None]


def bad_usage(fnd: Findings, line: int, keys: list[str]) -> None:
    """The finding for a usage holding values that are not token counts."""
    fnd.add(
        "bad_token_count",
        "warning",
        line,
        f"usage {', '.join(keys)}: not a token count (negative, fractional, text or too "
        "large); NA, never summed",
    )


#: Anthropic ``usage`` keys holding token counts (``cache_creation`` holds two more).
ANTHROPIC_COUNT_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_EPHEMERAL_KEYS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def anthropic_bad_counts(usage: Any) -> list[str]:
    """:func:`bad_counts` of an Anthropic ``usage``, ``cache_creation`` parts included."""
    bad = bad_counts(usage, ANTHROPIC_COUNT_KEYS)
    cc = usage.get("cache_creation") if isinstance(usage, dict) else None
    if cc is not None:
        bad += [f"cache_creation.{k}" for k in bad_counts(cc, _EPHEMERAL_KEYS)]
    return bad


#: Which ADF counts an Anthropic usage key is part of (``input`` includes the cache parts).
_ANTHROPIC_PARTS: dict[str, tuple[str, ...]] = {
    "input_tokens": ("input",),
    "output_tokens": ("output",),
    "cache_read_input_tokens": ("cache_read", "input"),
    "cache_creation_input_tokens": ("cache_write", "input"),
}


def unknown_counts(usage: Any, fmt: str) -> dict[str, Any]:
    """ADF token key -> the value, as the file wrote it, that makes that count unknown (not a
    count: :func:`bad_counts`); empty for a clean usage. A row's tokens carry these values, so
    the row rule (:func:`adfkit._core.rows.parse_tokens`) gives NA, flags the row and warns, as for
    an ADF row; a call's tokens leave them out. ``fmt``: ``anthropic`` or ``openai``.

    Examples
    --------
    >>> unknown_counts({"input_tokens": 3, "cache_read_input_tokens": -1}, "anthropic")
    {'cache_read': -1, 'input': -1}
    >>> unknown_counts({"input_tokens": "12", "output_tokens": 5}, "openai")
    {'input': '12'}
    """
    out: dict[str, Any] = {}
    if fmt == "openai":
        for k in bad_counts(usage, tuple(OPENAI_COUNT_KEYS)):
            out[OPENAI_COUNT_KEYS[k]] = usage[k]
        return out
    return _anthropic_unknown(usage, anthropic_bad_counts(usage))


def _anthropic_unknown(usage: Any, bad: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    parts: tuple[str, ...]
    for k in bad:
        if k.startswith("cache_creation."):
            raw, parts = usage["cache_creation"][k.split(".", 1)[1]], ("cache_write", "input")
        else:
            raw, parts = usage[k], _ANTHROPIC_PARTS[k]
        for part in parts:
            out.setdefault(part, raw)
    return out


def anthropic_tokens(usage: Any) -> dict[str, int]:
    """Anthropic ``usage`` -> ADF tokens (``input`` = input + cache read + cache write).

    ``cache_creation.ephemeral_5m_input_tokens + ephemeral_1h_input_tokens`` is used for the cache
    write when present (it is authoritative), else ``cache_creation_input_tokens``. With that
    split, ``cache_write_1h`` is the part written to the 1-hour cache (billed at another rate);
    without it, the TTL is not recorded and the key is absent. A split of zeros under a write
    that is not zero (Claude Code writes one when the response carried none) is no split. A
    count that is not a count (:func:`anthropic_bad_counts`) is unknown, and so is every sum
    holding it: never summed as a number.

    Examples
    --------
    >>> anthropic_tokens({"input_tokens": 3, "cache_read_input_tokens": 100,
    ...                   "cache_creation_input_tokens": 20, "output_tokens": 7})
    {'input': 123, 'output': 7, 'cache_read': 100, 'cache_write': 20}
    >>> anthropic_tokens({"input_tokens": -3, "cache_read_input_tokens": 100, "output_tokens": 7})
    {'output': 7, 'cache_read': 100}
    >>> anthropic_tokens({"input_tokens": 4, "cache_creation_input_tokens": 20, "output_tokens": 7,
    ...                   "cache_creation": {"ephemeral_5m_input_tokens": 0,
    ...                                      "ephemeral_1h_input_tokens": 0}})
    {'input': 24, 'output': 7, 'cache_write': 20}
    """
    if not isinstance(usage, dict):
        return {}
    return _anthropic_tokens(usage, anthropic_bad_counts(usage))


def anthropic_usage(usage: Any) -> tuple[dict[str, int], dict[str, Any]]:
    """``(anthropic_tokens(usage), unknown_counts(usage, "anthropic"))``, the counts checked
    once (a reader making both for every call).

    Examples
    --------
    >>> anthropic_usage({"input_tokens": 3, "cache_read_input_tokens": -1, "output_tokens": 7})
    ({'output': 7}, {'cache_read': -1, 'input': -1})
    """
    if not isinstance(usage, dict):
        return {}, {}
    clean = _clean_anthropic_tokens(usage)
    if clean is not None:
        return clean, {}
    bad = anthropic_bad_counts(usage)
    return _anthropic_tokens(usage, bad), _anthropic_unknown(usage, bad) if bad else {}


def _clean_anthropic_tokens(usage: dict[str, Any]) -> dict[str, int] | None:
    """:func:`_anthropic_tokens` of a usage whose counts are all absent, null or plain ints
    the count rule takes (the usual case, checked in one pass), else None (the full rule).
    A plain int is a count when it is 0 to :data:`MAX_COUNT` (:func:`as_count`'s rule for
    ints, compared here: six calls of it were a third of this, once per call of a session)."""
    get = usage.get
    inp, out = get("input_tokens"), get("output_tokens")
    cr, cw = get("cache_read_input_tokens"), get("cache_creation_input_tokens")
    cc = get("cache_creation")
    a = b = w1h = None
    if isinstance(cc, dict):
        a, b = cc.get("ephemeral_5m_input_tokens"), cc.get("ephemeral_1h_input_tokens")
    for v in (inp, out, cr, cw, a, b):
        if v is not None and (type(v) is not int or not 0 <= v <= MAX_COUNT):
            return None
    if a is not None and b is not None and not _empty_split(cw, a, b):  # authoritative
        cw, w1h = a + b, b  # when both are there (one alone leaves the 1-hour part NA)
    return _token_dict(inp, out, cr, cw, w1h)


def _empty_split(total: int | None, a: int | None, b: int | None) -> bool:
    """A ``cache_creation`` split of zeros under a cache write that is not zero: Claude Code
    writes that when the response had no split (a gateway or proxy that drops it), so the
    split says nothing (the total stands, its lifetime unknown)."""
    return bool(total) and not a and not b


def _anthropic_tokens(usage: dict[str, Any], bad: list[str]) -> dict[str, int]:
    get = usage.get
    inp, out = as_count(get("input_tokens")), as_count(get("output_tokens"))
    cr, cw = as_count(get("cache_read_input_tokens")), as_count(get("cache_creation_input_tokens"))
    cw_bad = bool(bad) and any(k.startswith("cache_creation") for k in bad)
    cc = get("cache_creation")
    w1h = None
    if isinstance(cc, dict):
        a, b = (as_count(cc.get(k)) for k in _EPHEMERAL_KEYS)
        if a is not None and b is not None and not _empty_split(cw, a, b):
            cw, w1h = a + b, b  # authoritative when both are there; one alone (or a split of
            # zeros under a cache write) leaves the 1-hour part unknown (NA), never 0
    if cw_bad:
        cw = w1h = None
    input_bad = bool(bad) and (cw_bad or "input_tokens" in bad or "cache_read_input_tokens" in bad)
    return _token_dict(inp, out, cr, cw, w1h, with_input=not input_bad)


def _token_dict(
    inp: int | None,
    out: int | None,
    cr: int | None,
    cw: int | None,
    w1h: int | None,
    *,
    with_input: bool = True,
) -> dict[str, int]:
    """ADF token keys of an Anthropic usage's counts: ``input`` is the whole prompt (uncached
    plus cache read and write) where the uncached part is known and ``with_input`` (cache
    counts a layout did not write are 0: it had no cache); absent counts are left out."""
    res: dict[str, int] = {}
    if with_input and inp is not None:
        res["input"] = (inp or 0) + (cr or 0) + (cw or 0)
    if out is not None:
        res["output"] = out
    if cr is not None:
        res["cache_read"] = cr
    if cw is not None:
        res["cache_write"] = cw
    if w1h is not None:
        res["cache_write_1h"] = w1h
    return res


#: Codex/OpenAI usage keys -> ADF token keys.
OPENAI_COUNT_KEYS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cached_input_tokens": "cache_read",
    "reasoning_output_tokens": "reasoning",
}


def mapped_tokens(usage: Any, keys: dict[str, str]) -> dict[str, int]:
    """The counts of ``usage`` under ``keys`` (the format's key -> the ADF key), for a usage
    whose input already includes the cached part; a value that is not a count is left out
    (unknown).

    Examples
    --------
    >>> mapped_tokens({"prompt": 12, "completion": "x"}, {"prompt": "input", "completion": "n"})
    {'input': 12}
    """
    if not isinstance(usage, dict):
        return {}
    res: dict[str, int] = {}
    for src, dst in keys.items():
        v = as_count(usage.get(src))
        if v is not None:
            res[dst] = v
    return res


def openai_tokens(usage: Any) -> dict[str, int]:
    """Codex/OpenAI token usage -> ADF tokens (``input`` already includes the cached part;
    ``output`` already includes reasoning). A count that is not a count is left out (unknown).

    Examples
    --------
    >>> openai_tokens({"input_tokens": 120, "cached_input_tokens": 100, "output_tokens": 9,
    ...                "reasoning_output_tokens": 4, "total_tokens": 129})
    {'input': 120, 'output': 9, 'cache_read': 100, 'reasoning': 4}
    """
    return mapped_tokens(usage, OPENAI_COUNT_KEYS)
