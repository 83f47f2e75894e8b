"""``adfkit usage``'s reading of many files, without pandas where it can.

:func:`usage_fleet` reads a file whose format declares ``figures`` on its
:class:`~adfkit._core.registry.FormatSpec` (Claude Code sessions, Codex rollouts: their parsers
alone, :mod:`adfkit._core.figures`; the calls of ``usage()``, found, deduplicated and priced by
the same rules; the days of :func:`adfkit._facade.usage.days.day_rows`) with that, and every
other file through the full ``usage_days`` table (``load_fleet``'s, with pandas). With an index
(``cache``), a file whose part is fresh is not read at all: its rows are in the manifest
(``rows``), next to the Parquet part that DuckDB and Dask read.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfError, AdfWarning, UnknownFormatError
from adfkit._core.figures import SessionFigures
from adfkit._facade import fleet
from adfkit._facade.index import Index, part_key, stamp, write_rows
from adfkit._facade.usage.days import (
    FLEET_COLUMNS,
    Call,
    day_rows,
    frame_rows,
    time_zone,
    uncached,
)


def session_days(
    path: str, prices: Any = None, tz: str | None = None
) -> list[dict[str, Any]] | None:
    """The ``usage_days`` rows of the file ``path`` (with ``label``, ``agent``, ``agent_path``),
    from its format's ``figures`` (:class:`adfkit.FormatSpec`); None when its format has none
    (or is not recognised: the full table says why). ``tz``: days in that time zone (None:
    UTC)."""
    from adfkit._core import registry
    from adfkit._core.prices import load_prices

    try:
        spec = registry.recognise(path)
    except UnknownFormatError:
        raise  # no table says more of a file no format claims: its row now, no full read
    except AdfError:
        return None
    if spec.figures is None:
        return None
    # the collector paused until the figures are dropped: they are many small acyclic objects
    with gc_paused():
        return _days(path, spec.figures(path, load_prices(prices)), tz)


def _days(path: str, figs: SessionFigures, tz: str | None) -> list[dict[str, Any]]:
    for note in figs.notes:
        warnings.warn(note, AdfWarning, stacklevel=3)
    calls = [
        Call(
            c.at,
            uncached(c.input, c.cache_read, c.cache_write),
            c.output,
            c.cache_write,
            c.cache_read,
            c.cost_usd,
            c.input,
            c.model,
        )
        for c in figs.calls
        if c.call_kind != "compaction"
    ]
    days = day_rows(calls, figs.events, time_zone(tz))
    label = fleet.label_of(figs.name, figs.meta, lambda: fleet.first_prompt(figs.messages))
    return [{"label": label, "agent": figs.name, "agent_path": path, **d} for d in days]


def _job(job: str, prices: Any, tz: str | None = None) -> tuple[str, Any, list[int] | None]:
    """:func:`session_days` of one file on an engine: ``("rows", rows, stamp)``,
    ``("full", None, None)`` for a file only the full table reads, or ``("error", (path, error,
    message), None)``. ``job`` is the path, or ``[path, part]`` as JSON: then the rows are also
    written to that index part (here, so that the processes share the writing) when the file
    did not change while it was read, and ``stamp`` is its ``[size, mtime_ns]`` (else None)."""
    target = None
    if job.startswith("["):
        import orjson

        path, target = orjson.loads(job)
    else:
        path = job
    before = stamp(path)
    try:
        rows = session_days(path, prices, tz)
    except Exception as exc:  # noqa: BLE001 - any failure is recorded, never fatal
        msg = exc.detail if isinstance(exc, AdfError) else str(exc)
        return "error", (path, type(exc).__name__, msg), None
    if rows is None:
        return "full", None, None
    if target is None or before is None or stamp(path) != before:
        return "rows", rows, None
    return "rows", rows, (before if write_rows(rows, target) else None)


#: Below this many bytes of sessions in all, ``adfkit usage`` reads them in this process:
#: forking a second one costs more than it saves (measured on the real sessions).
SMALL_USAGE_BYTES = 32 << 20


def usage_fleet(
    paths: list[str],
    *,
    prices: Any = None,
    engine: str = "processes",
    cache: str | os.PathLike[str] | None = None,
    tz: str | None = None,
    progress: bool = False,
) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """The ``usage_days`` rows of every file (labels made distinct, files in input order) and
    the error rows ``(path, error, message)`` of those that could not be read: the figures of
    ``load_fleet(paths, "usage_days", prices=..., tz=..., cache=...)``. ``tz``: days in that
    time zone (None: UTC); ``progress``: a progress bar on stderr."""
    time_zone(tz)  # a wrong name is an error before any file is read
    kwargs: dict[str, Any] = {} if prices is None else {"prices": prices}
    if tz is not None:
        kwargs["tz"] = tz
    got: dict[int, list[dict[str, Any]]] = {}
    errors: list[tuple[int, tuple[str, str, str]]] = []
    todo = list(range(len(paths)))
    index, keys = None, []
    if cache is not None:
        index = Index(cache, "usage_days", paths)
        keys = [part_key(p, "usage_days", _options(kwargs)) for p in paths]
        todo = _index_hits(index, paths, keys, got)
    run = _runner(engine, progress)
    full = _plain(paths, todo, run, index, keys, kwargs, got, errors) if todo else []
    if full:
        _full(paths, full, run, kwargs, cache, got, errors)
    rows = [r for i in sorted(got) for r in got[i]]
    _relabel(rows)
    return rows, [e for _, e in sorted(errors, key=lambda x: x[0])]


def _options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options an index part is keyed by (those of ``load_fleet``'s usage_days parts)."""
    return {"kwargs": kwargs, "open": {}, "columns": list(FLEET_COLUMNS)}


def _index_hits(
    index: Index, paths: list[str], keys: list[str], got: dict[int, list[dict[str, Any]]]
) -> list[int]:
    """Fill ``got`` with the rows the index holds fresh; return the positions still to read."""
    todo = []
    for i, (p, k) in enumerate(zip(paths, keys, strict=True)):
        rows = index.fresh_rows(k, p) if index.fresh(k, p) else None
        if rows is None:
            todo.append(i)
        else:
            got[i] = rows
    return todo


def _plain(
    paths: list[str],
    todo: list[int],
    run: Callable[..., list[Any]],
    index: Index | None,
    keys: list[str],
    kwargs: dict[str, Any],
    got: dict[int, list[dict[str, Any]]],
    errors: list[tuple[int, tuple[str, str, str]]],
) -> list[int]:
    """Read the files at ``todo`` on the plain path (recorded in the index, if any); return the
    positions of those that need the full tables (a format without a plain path)."""
    jobs = [paths[i] for i in todo]
    if index is not None:
        import orjson

        jobs = [orjson.dumps([paths[i], index.part(keys[i])]).decode() for i in todo]
    results = run(_job, jobs, (kwargs.get("prices"), kwargs.get("tz")), SMALL_USAGE_BYTES)
    full: list[int] = []
    written = False
    for i, (what, value, st) in zip(todo, results, strict=True):
        if what == "error":
            errors.append((i, value))
        elif what == "full":
            full.append(i)
        else:
            got[i] = value
            if index is not None and st is not None:
                index.record(keys[i], paths[i], st, _options(kwargs), rows=value)
                written = True
    if written and index is not None:
        index.save()
    return full


def _full(
    paths: list[str],
    full: list[int],
    run: Callable[..., list[Any]],
    kwargs: dict[str, Any],
    cache: str | os.PathLike[str] | None,
    got: dict[int, list[dict[str, Any]]],
    errors: list[tuple[int, tuple[str, str, str]]],
) -> None:
    """The files at ``full`` through ``load_fleet``'s own usage_days tables."""
    sub = [paths[i] for i in full]
    if cache is None:
        res = run(fleet.load_one, sub, ("usage_days", kwargs, {}))
    else:
        res = fleet.load_cached(run, sub, "usage_days", kwargs, {}, cache)
    where = {p: i for i, p in zip(full, sub, strict=True)}
    for df, err in res:
        if err is not None:
            errors.append((where[err[0]], err))
        if df is not None:
            for r in frame_rows(df):
                got.setdefault(where[r["agent_path"]], []).append(r)


def _relabel(rows: list[dict[str, Any]]) -> None:
    """Make the labels distinct between agents (:func:`fleet.distinct_labels`), in place."""
    seen = list({(r["agent_path"], r["agent"]): r["label"] for r in rows}.items())
    new = fleet.distinct_labels([(p, a, lab) for (p, a), lab in seen])
    for r in rows:
        r["label"] = new[(r["agent_path"], r["agent"])]


def _runner(engine: str, progress: bool) -> Callable[..., list[Any]]:
    """:func:`fleet.run_jobs` on ``engine`` (one progress bar per pass when ``progress``)."""

    def run(
        func: Callable[..., Any],
        paths: list[str],
        args: tuple[Any, ...],
        small_bytes: int | None = None,
    ) -> list[Any]:
        more = {} if small_bytes is None else {"small_bytes": small_bytes}
        return fleet.run_jobs(
            func,
            paths,
            args,
            engine=engine,
            progress=progress,
            desc="usage",
            **more,
        )

    return run
