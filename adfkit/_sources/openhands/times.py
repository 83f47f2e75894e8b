"""OpenHands' times: local, without a zone; the zone inferred from the calls' cost records
(the format's notes: :mod:`.parser`)."""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any

from adfkit._sources.openhands.content import str_or_none
from adfkit._sources.openhands.files import EventFile
from adfkit._sources.openhands.usage import Usage
from adfkit._sources.transcript.kit import Findings

_QUARTER_HOUR_MS = 15 * 60 * 1000


def naive_ms(value: Any) -> int | None:
    """An ISO time read as if it were UTC (ms since the epoch); a zoned one as it says.

    Examples
    --------
    >>> naive_ms("1970-01-01T00:00:01.5"), naive_ms("1970-01-01T00:00:01+00:00"), naive_ms(3)
    (1500, 1000, None)
    """
    if not isinstance(value, str):
        return None
    try:
        d = datetime.fromisoformat(value)
    except ValueError:
        return None
    if d.tzinfo is not None:
        return int(d.timestamp() * 1000)
    return int((d - datetime(1970, 1, 1)).total_seconds() * 1000)


def zone_offset(
    files: list[EventFile], usages: list[Usage], fnd: Findings
) -> tuple[int | None, str]:
    """The local zone's offset (ms to subtract from a naive time), inferred from the calls'
    epoch cost timestamps against their events' local times."""
    by_rid: dict[str, int] = {}
    for f in files:
        ev = f.obj
        if ev is None:
            continue
        rid = str_or_none(ev.get("llm_response_id"))
        t = naive_ms(ev.get("timestamp"))
        if rid and t is not None and rid not in by_rid:
            by_rid[rid] = t
    diffs = [
        by_rid[u.response_id] - u.cost_at_ms
        for u in usages
        if u.response_id in by_rid and u.cost_at_ms is not None
    ]
    if not diffs:
        return None, "local time without a zone; no cost timestamps to infer it from"
    med = statistics.median(diffs)
    off = round(med / _QUARTER_HOUR_MS) * _QUARTER_HOUR_MS
    if abs(med - off) > 120_000:
        return None, "local time without a zone; the cost timestamps do not settle it"
    h, rest = divmod(abs(off) // 60000, 60)
    sign = "+" if off >= 0 else "-"
    return int(off), (
        f"local time, zone UTC{sign}{h:02d}:{rest:02d} inferred from {len(diffs)} call cost "
        "timestamp(s)"
    )
