"""Timestamps: :func:`iso_ms`, an ISO 8601 time (or an epoch number) as milliseconds since the
epoch."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


_END_OF_DAY = re.compile(r"([Tt ])24:00(?::00(?:[.,]0+)?)?")


def iso_ms(value: Any) -> int | None:
    """ISO-8601 timestamp -> ms since the epoch, else None.

    Claude Code and Codex write ``2026-03-01T10:00:00.123Z``; every other ISO-8601 form with a
    zone reads too: an offset (``+02:00``, ``+0200``, ``+02``), no fraction or any number of
    digits, a space or ``t`` for ``T``, a lower-case ``z``, ``24:00`` (the next midnight),
    surrounding blanks. A time without a zone is unknown (None): its offset is not known.

    Examples
    --------
    >>> iso_ms("1970-01-01T00:00:01.500Z")
    1500
    >>> iso_ms("1970-01-01 02:00:01+02:00"), iso_ms("1970-01-01t00:00:01z")
    (1000, 1000)
    >>> iso_ms("yesterday") is None, iso_ms("1970-01-01T00:00:01") is None
    (True, True)
    """
    if not isinstance(value, str):
        return None
    d: datetime | None
    try:
        d = datetime.fromisoformat(value)
    except ValueError:
        d = _iso_other(value)
    if d is None or d.tzinfo is None:
        return None
    return (d - _EPOCH) // _MS


def _iso_other(value: str) -> datetime | None:
    """The ISO-8601 forms ``datetime.fromisoformat`` refuses: blanks around, ``z``, ``24:00``."""
    s = value.strip()
    if s[-1:] == "z":
        s = s[:-1] + "Z"
    s, n_days = _END_OF_DAY.subn(r"\g<1>00:00", s, count=1)
    try:
        return datetime.fromisoformat(s) + timedelta(days=n_days)
    except ValueError:
        return None
