"""``adfkit usage`` without pandas: each session's usage per day, summed per session or day.

The rules of the ``usage_days`` fleet table (:func:`adfkit._facade.fleet_usage.usage_days`
makes its frame with :func:`day_rows`) and of the command's tables (:func:`summarize`,
:func:`render`), over plain values; :mod:`adfkit._facade.usage_fleet` reads the files.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any

#: Columns of :func:`adfkit._facade.fleet_usage.usage_days` (after the ``label``, ``agent`` and
#: ``agent_path`` that fleets add), with their dtypes.
USAGE_DAYS: dict[str, str] = {
    "day": "string",
    "calls": "Int64",
    "input": "Int64",
    "output": "Int64",
    "cache_write": "Int64",
    "cache_read": "Int64",
    "cost_usd": "float64",
    "compactions": "Int64",
    "microcompactions": "Int64",
    "max_context": "Int64",
    "first_at": "string",
    "last_at": "string",
}
#: Columns a fleet frame starts with: the readable label, the agent's name or session id, the
#: file (every fleet table's, defined here, the lowest module that needs them).
FLEET_COLUMNS = ("label", "agent", "agent_path")
#: The float columns (a missing value is NaN in a frame, null in JSON and Parquet).
FLOAT_COLUMNS = tuple(c for c, t in USAGE_DAYS.items() if t == "float64")
#: Integer columns a session or a day sums.
SUMS = ("calls", "input", "output", "cache_write", "cache_read")
COUNTS = ("compactions", "microcompactions")

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


# --- sums as numpy makes them ---------------------------------------------------------------


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r = list(a[lo : lo + 8])
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += a[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[lo + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, lo, n2) + _pairwise(a, lo + n2, n - n2)


def float_sum(values: Sequence[float]) -> float:
    """The sum of float64 ``values`` exactly as ``numpy.sum`` makes it (pairwise summation in
    blocks of 8, as numpy's ``add.reduce`` on a contiguous array), without numpy.

    Examples
    --------
    >>> float_sum([0.1] * 10), sum([0.1] * 10)
    (1.0, 0.9999999999999999)
    """
    return _pairwise(list(values), 0, len(values)) if values else 0.0


def cost_sum(costs: Sequence[float]) -> float:
    """The sum, or NaN when any cost is unknown (unknown stays unknown)."""
    return math.nan if any(math.isnan(c) for c in costs) else float_sum(costs)


# --- times --------------------------------------------------------------------------------


def _when(ms: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(milliseconds=ms)


def day_of(ms: int | None) -> str:
    """The UTC day (``YYYY-MM-DD``) of a time in ms, ``unknown`` for None."""
    if ms is None:
        return "unknown"
    d = _when(ms)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def iso_of(ms: int) -> str:
    """ISO 8601 of a time in ms, UTC (as ``pandas.Timestamp.isoformat`` writes it)."""
    return _when(ms).isoformat()


# --- one agent's days -----------------------------------------------------------------------


def day_rows(
    calls: Iterable[tuple[int | None, int, int, int, int, float, int | None]],
    events: Iterable[tuple[str, int | None]],
) -> list[dict[str, Any]]:
    """Usage per UTC day (the columns of :data:`USAGE_DAYS`, days in order) of one agent's
    calls ``(at ms, input, output, cache_write, cache_read, cost_usd, context)`` (``input`` the
    uncached part; ``context`` the prompt, None when unknown; compaction calls left out) and
    events ``(event, at ms)`` (``compaction``, ``microcompaction``, ``clear``). A day's cost
    is NaN when one of its calls is unpriced; ``first_at``/``last_at`` are its calls' times."""
    by_day: dict[str, list[tuple[Any, ...]]] = {}
    for c in calls:
        by_day.setdefault(day_of(c[0]), []).append(c)
    ev_day: dict[str, list[str]] = {}
    for event, at in events:
        ev_day.setdefault(day_of(at), []).append(event)
    rows = []
    for day in sorted(set(by_day) | set(ev_day)):
        cs = by_day.get(day, [])
        ev = ev_day.get(day, [])
        ctx = [c[6] for c in cs if c[6] is not None]
        dated = [c[0] for c in cs if c[0] is not None]
        rows.append(
            {
                "day": day,
                "calls": len(cs),
                "input": sum(c[1] for c in cs),
                "output": sum(c[2] for c in cs),
                "cache_write": sum(c[3] for c in cs),
                "cache_read": sum(c[4] for c in cs),
                "cost_usd": cost_sum([c[5] for c in cs]) if cs else 0.0,
                "compactions": ev.count("compaction"),
                "microcompactions": ev.count("microcompaction"),
                "max_context": max(ctx) if ctx else None,
                "first_at": iso_of(min(dated)) if dated else None,
                "last_at": iso_of(max(dated)) if dated else None,
            }
        )
    return rows


# --- the command's tables -------------------------------------------------------------------


def summarize(days: list[dict[str, Any]], by: str) -> list[dict[str, Any]]:
    """Per-(agent, day) rows summed per session (``by="session"``: one row per file, in input
    order, with its first and last activity) or per day (``by="day"``, in day order: sessions
    counted)."""
    key = "agent_path" if by == "session" else "day"
    groups: dict[Any, list[dict[str, Any]]] = {}
    for r in days:
        groups.setdefault(r[key], []).append(r)
    names = list(groups) if by == "session" else sorted(groups)
    out = []
    for name in names:
        g = groups[name]
        rec: dict[str, Any] = {key: name}
        for c in (*SUMS, *COUNTS):
            rec[c] = sum(r[c] for r in g)
        rec["cost_usd"] = cost_sum([r["cost_usd"] for r in g])
        ctx = [r["max_context"] for r in g if r["max_context"] is not None]
        rec["max_context"] = max(ctx) if ctx else None
        if by == "session":
            rec["label"] = next((r["label"] for r in g if r["label"] is not None), None)
            rec["agent"] = next((r["agent"] for r in g if r["agent"] is not None), None)
            firsts = [r["first_at"] for r in g if r["first_at"] is not None]
            lasts = [r["last_at"] for r in g if r["last_at"] is not None]
            rec["first_at"] = min(firsts) if firsts else None
            rec["last_at"] = max(lasts) if lasts else None
        else:
            rec["sessions"] = len({r["agent_path"] for r in g})
        out.append(rec)
    return out


#: Columns shown, in order: (column, heading).
COLUMNS = (
    ("calls", "calls"),
    ("input", "input"),
    ("output", "output"),
    ("cache_write", "cache write"),
    ("cache_read", "cache read"),
    ("cost_usd", "cost USD"),
    ("compactions", "compactions"),
    ("microcompactions", "micro"),
    ("max_context", "max context"),
)


def _fmt(value: Any, col: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if col == "cost_usd":
        return f"{value:,.2f}"
    return f"{int(value):,}"


def render(table: list[dict[str, Any]], by: str) -> str:
    """The aligned text table, a total line last. Sessions are named by their fleet label
    (project and title or first prompt), their id in the last column."""
    first = ("label", "session") if by == "session" else ("day", "day")
    last = [("agent", "id")] if by == "session" else []
    cols = [first, *COLUMNS, *last]
    total: dict[str, Any] = {c: sum(r[c] for r in table) for c in (*SUMS, *COUNTS)}
    total["cost_usd"] = cost_sum([r["cost_usd"] for r in table])
    ctx = [r["max_context"] for r in table if r["max_context"] is not None]
    total["max_context"] = max(ctx) if ctx else None
    total[first[0]] = "total"
    rows = [
        [str(r[first[0]])] + [_fmt(r[c], c) for c, _ in COLUMNS] + [str(r[c]) for c, _ in last]
        for r in table
    ]
    rows.append(
        [str(total[first[0]])] + [_fmt(total[c], c) for c, _ in COLUMNS] + ["" for _ in last]
    )
    head = [h for _, h in cols]
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    lines = [
        "  ".join(
            x.ljust(w) if i == 0 or i > len(COLUMNS) else x.rjust(w)
            for i, (x, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [head, *rows]
    ]
    return "\n".join(lines)


def records(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for ``--json``: an unknown cost is null."""
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in table
    ]


def frame_rows(df: Any) -> list[dict[str, Any]]:
    """The rows of a ``usage_days`` fleet frame as plain values (NA as None, NaN cost kept)."""
    import pandas as pd

    if not len(df):
        return []
    cols = [*FLEET_COLUMNS, *USAGE_DAYS]
    out = []
    for rec in df[cols].astype(object).to_dict(orient="records"):
        r: dict[str, Any] = {}
        for k, v in rec.items():
            if k == "cost_usd":
                r[k] = math.nan if pd.isna(v) else float(v)
            elif pd.isna(v):
                r[k] = None
            else:
                r[k] = v if isinstance(v, str) else int(v)
        out.append(r)
    return out


def days_frame(rows: list[dict[str, Any]], *, fleet: bool = True) -> Any:
    """:func:`day_rows` rows as the typed ``usage_days`` frame (``fleet``: with the ``label``,
    ``agent`` and ``agent_path`` columns first, as fleet parts are written)."""
    import numpy as np
    import pandas as pd

    cols = {**dict.fromkeys(FLEET_COLUMNS, "string"), **USAGE_DAYS} if fleet else USAGE_DAYS
    # typed column by column (an astype of the whole object frame costs more than the rest)
    return pd.DataFrame(
        {
            c: (
                np.array([r[c] for r in rows], dtype="float64")
                if t == "float64"
                else pd.array([r[c] for r in rows], dtype=t)
            )
            for c, t in cols.items()
        }
    )


@functools.cache
def _part_schema() -> Any:
    """The Arrow schema of a fleet part, pandas metadata included (made once per process)."""
    import pyarrow as pa

    return pa.Schema.from_pandas(days_frame([]), preserve_index=False)


def days_table(rows: list[dict[str, Any]]) -> Any:
    """Fleet :func:`day_rows` rows as the Arrow table pandas makes of their :func:`days_frame`
    (the schema and its pandas metadata taken once per process from an empty frame), built
    from the rows directly: an index part costs 0.75 ms to make and write instead of 3 ms."""
    import pyarrow as pa

    # pandas writes a NaN of a float column as a null (from_pylist would keep the NaN)
    rows = [{**r, **{c: None for c in FLOAT_COLUMNS if r[c] != r[c]}} for r in rows]
    return pa.Table.from_pylist(rows, schema=_part_schema())
