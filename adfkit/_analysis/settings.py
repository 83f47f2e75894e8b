"""The agent's settings over time: configuration changes and the compaction threshold in force.

:func:`config_changes` lists every ``sys_update_config`` the agent made (from its tool calls and
from ``adf_tasks``, which outlives discarded rows); :func:`threshold_schedule` is the one rule
for the compaction threshold in force at any seq, used by the replay, the compactions, the
simulator and the plots.
"""

from __future__ import annotations

import bisect
import re
import warnings
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from adfkit import schema
from adfkit._analysis.tables import result_texts, tool_calls
from adfkit._base.config import threshold_value
from adfkit._base.errors import AdfWarning
from adfkit._base.js import loads_or_none
from adfkit._core.source import AgentSource, Key

_CHANGES: Key[pd.DataFrame] = Key("settings.config_changes")
#: ``[(from_seq, threshold, source), ...]`` (:func:`threshold_schedule`) and, by index into it,
#: the changes known only from ``adf_tasks``: (the present seq before from_seq, time in ms).
_Schedule = tuple[list[tuple[int, int | None, str | None]], dict[int, tuple[int, int]]]
#: The schedule's ``source`` of the threshold in :meth:`AgentSource.settings`, by its provenance
#: (NA when the record gives no threshold at all).
_SOURCE_OF = {"configured": "config", "recorded": "recorded", "assumed": "assumed"}
_SCHEDULE: Key[_Schedule] = Key("settings.threshold_schedule")
#: A dynamic-instructions warning names the threshold in force: ``threshold: 9,000``.
_THRESHOLD_TEXT = re.compile(r"threshold:?\s*([0-9][0-9,]*)")
_THRESHOLD_PATHS = ("context.compact_threshold", "model.compact_threshold")


def _names_tool(history: pd.DataFrame, tool: str) -> bool:
    """Whether a row of ``history`` may call ``tool``: its ``tool_names`` (the names of its
    ``tool_use`` blocks, :func:`adfkit._core.rows.row_facts`) contain the name."""
    names = pa.array(history["tool_names"].array)  # Arrow's search: no Series of flags
    return bool(pc.any(pc.match_substring(names, tool)).as_py())


def _config_record(inp: Any) -> dict[str, Any]:
    inp = inp if isinstance(inp, dict) else {}
    val = inp.get("value")
    reason = inp.get("_reason")
    return {
        "path": None if inp.get("path") is None else str(inp.get("path")),
        "value": orjson.dumps(val).decode() if "value" in inp else None,
        "action": str(inp.get("action") or "set"),
        "reason": None if reason is None else str(reason),
    }


# -- configuration changes ---------------------------------------------------------------
def config_changes(src: AgentSource) -> pd.DataFrame:
    """Configuration changes the agent made. One row per ``sys_update_config`` call.

    Calls come from the history (the assistant row's seq and time; success from the
    matching ``tool_result``). ``sys_update_config`` is restricted by default, so each
    approved call also leaves an ``adf_tasks`` row (``origin`` ``hil:...``): it is matched
    to its call by arguments and time, and a task whose call was discarded with its loop
    rows (a history gap) still gives a row, with ``source`` ``task`` and no seq.

    Columns (dtype): ``seq`` (Int64: the call's assistant row), ``created_at``
    (datetime64[ms, UTC]), ``epoch`` (Int64), ``path``, ``value`` (string: compact JSON),
    ``action`` (string: ``set``, ``append`` or ``remove``), ``reason`` (string: the
    ``_reason`` argument, if given), ``succeeded`` (boolean: from the tool result or the
    task; NA when neither survives), ``result`` (string), ``result_seq`` (Int64), ``by``
    (string: ``agent`` for a model tool call, else the task's origin), ``approved_by``
    (string: the task's origin, e.g. ``hil:<agent>:<did>`` for a human approval),
    ``task_id`` (string), ``source`` (string: ``tool_call``, ``tool_call+task`` or
    ``task``).

    Examples
    --------
    >>> import adfkit
    >>> ch = adfkit.open_adf("sample_agents/mind-keeper.adf").config_changes()
    >>> "context.audit.loop" in set(ch["path"])
    True
    """
    return src.memo.get(_CHANGES, lambda: _config_changes(src)).copy(deep=False)


def _config_changes(src: AgentSource) -> pd.DataFrame:
    tasks = src.tasks()
    if len(tasks):  # none (every transcript): no mask to make
        tasks = tasks[tasks["tool"] == "sys_update_config"].copy()
    if tasks.empty and not _names_tool(src.history_view(), "sys_update_config"):
        # no change: the tool-call table (every block of the history) is not needed
        return schema.frame([], schema.CONFIG_CHANGES)
    calls = tool_calls(src, history=True)
    calls = calls[calls["tool_name"] == "sys_update_config"]
    if calls.empty and tasks.empty:  # no change: nothing to match or look up
        return schema.frame([], schema.CONFIG_CHANGES)
    h = src.history()
    epochs = dict(zip(h["seq"].tolist(), h["epoch"].tolist(), strict=True))
    res_text = result_texts(src)
    used: set[int] = set()
    records: list[dict[str, Any]] = []
    for r in calls.itertuples(index=False):
        inp = loads_or_none(r.tool_input)
        rec = _config_record(inp)
        ok = None if pd.isna(r.is_error) else not bool(r.is_error)
        rec.update(
            seq=int(r.call_seq),
            created_at=r.created_at,
            epoch=epochs.get(int(r.call_seq)),
            succeeded=ok,
            result=res_text.get(str(r.tool_use_id)),
            result_seq=None if pd.isna(r.result_seq) else int(r.result_seq),
            by="agent",
            approved_by=None,
            task_id=None,
            source="tool_call",
        )
        t_ms = schema.to_ms(r.created_at)
        best = None
        for i, trow in tasks.iterrows():
            if i in used or loads_or_none(trow["args"]) != inp:
                continue
            d = abs((schema.to_ms(trow["created_at"]) or 0) - (t_ms or 0))
            if best is None or d < best[0]:
                best = (d, i)
        if best is not None:
            trow = tasks.loc[best[1]]
            used.add(best[1])
            rec.update(approved_by=trow["origin"], task_id=trow["id"], source="tool_call+task")
            if rec["succeeded"] is None:
                rec["succeeded"] = trow["status"] == "completed"
                rec["result"] = trow["result"] if not pd.isna(trow["result"]) else None
        records.append(rec)
    for i, trow in tasks.iterrows():
        if i in used:
            continue
        rec = _config_record(loads_or_none(trow["args"]))
        rec.update(
            seq=None,
            created_at=trow["created_at"],
            epoch=None,
            succeeded=(
                None
                if trow["status"] in ("pending", "pending_approval", "running")
                else trow["status"] == "completed"
            ),
            result=(
                trow["result"]
                if not pd.isna(trow["result"])
                else (None if pd.isna(trow["error"]) else trow["error"])
            ),
            result_seq=None,
            by=trow["origin"],
            approved_by=trow["origin"],
            task_id=trow["id"],
            source="task",
        )
        records.append(rec)
    df = schema.frame(records, schema.CONFIG_CHANGES)
    return df.sort_values("created_at", kind="stable", na_position="last").reset_index(drop=True)


def threshold_schedule(src: AgentSource) -> list[tuple[int, int | None, str | None]]:
    """The compaction threshold in force over the agent's life: ``[(from_seq, threshold,
    source), ...]`` ascending.

    Every approved change of ``compact_threshold`` in :func:`config_changes` takes effect after
    its call: from the row after the ``sys_update_config`` call, or, for a change known only
    from ``adf_tasks`` (its rows were discarded), from the first row written after the task.
    Before the first change the value is read from a context-warning text (``threshold: N``,
    source ``warning_text``) when one exists, else the current config value is assumed
    (``assumed``); with no change at all it is the threshold of
    :meth:`~adfkit._core.source.AgentSource.settings`, with the source its provenance says:
    ``config`` (configured), ``recorded``, or ``assumed`` (a rule of the tool that wrote the
    record: a transcript's, which records no threshold); NA when the record gives none. The
    threshold
    of a compaction whose place and the change's were lost to one gap is decided by time:
    :func:`threshold_of_event`.
    """
    return src.memo.get(_SCHEDULE, lambda: _schedule(src))[0]


def threshold_at(
    schedule: list[tuple[int, int | None, str | None]], seq: int
) -> tuple[int | None, str | None]:
    """``(threshold, source)`` in force at ``seq`` under a :func:`threshold_schedule`."""
    i = bisect.bisect_right(schedule, seq, key=lambda c: c[0]) - 1
    _, val, source = schedule[max(i, 0)]
    return val, source


def threshold_of_event(src: AgentSource, boundary: int, at: Any) -> int | None:
    """The threshold in force at a compaction (or clear) with this boundary seq that happened
    at ``at`` (a time; NaT or None when unknown).

    By seq, as :func:`threshold_at`, except for a change known only from ``adf_tasks`` whose
    place among the seqs is lost: the rows between the last one written before the task and
    the first one after it are gone, and the event's boundary lies in that gap too (its
    triggering rows were discarded as well). Then the order is decided by time: the change
    is in force when the event happened after the task (ADF_FORMAT.md §2.11: ``created_at``).
    """
    sched, timed = src.memo.get(_SCHEDULE, lambda: _schedule(src))
    i = bisect.bisect_right(sched, boundary, key=lambda c: c[0]) - 1
    val = sched[max(i, 0)][1]
    if i + 1 not in timed:
        return val
    ms = None if at is None or pd.isna(at) else schema.to_ms(at)
    k = i + 1
    # the changes after the boundary by seq whose gap holds it (at most one gap qualifies)
    while k < len(sched) and k in timed and timed[k][0] <= boundary:
        if ms is not None and timed[k][1] < ms:
            val = sched[k][1]
        k += 1
    return val


def _schedule(src: AgentSource) -> _Schedule:
    settings = src.settings()
    current = settings.compact_threshold
    if current is None and settings.threshold_source == "configured":
        warnings.warn(
            f"{src.path}: compact_threshold in the config is out of range (not a number above 0 "
            "and at most 2**53-1); the threshold is NA, and no automatic compaction is simulated",
            AdfWarning,
            stacklevel=4,
        )
    changed = config_changes(src)
    stated = _SOURCE_OF.get(settings.threshold_source or "")
    if not len(changed):  # no change (most agents): one threshold throughout
        return [(0, current, stated)], {}
    h = src.history()
    seqs = h["seq"].to_numpy(dtype="int64")
    present = np.sort(seqs)
    times = h["created_at"]
    # (from_seq, value, (present seq before from_seq, time in ms) for a change known by time)
    changes: list[tuple[int, int | None, tuple[int, int] | None]] = []
    for r in changed.itertuples(index=False):
        if pd.isna(r.succeeded) or not bool(r.succeeded):
            continue
        if not _sets_threshold(r.path, r.value):
            continue
        val = _threshold_value(r.path, r.value)
        if not pd.isna(r.seq):
            changes.append((int(r.seq) + 1, val, None))
        elif not pd.isna(r.created_at):
            later = seqs[(times > r.created_at).to_numpy(dtype=bool, na_value=False)]
            if len(later):
                f = int(later.min())
                i = int(np.searchsorted(present, f)) - 1
                before = int(present[i]) if i >= 0 else 0
                if f - before > 1:  # seqs lost between: its place is known by time only
                    changes.append((f, val, (before, int(schema.to_ms(r.created_at) or 0))))
                else:
                    changes.append((f, val, None))
    changes.sort(key=lambda c: c[0])
    if not changes:
        return [(0, current, stated)], {}
    first = changes[0][0]
    initial: int | None = current
    source: str | None = "assumed"
    ctx = h[(h["kind"] == "context") & (h["subkind"] == "dynamic_instructions")]
    for s, text in zip(ctx["seq"].tolist(), ctx["text"].tolist(), strict=True):
        if s >= first:
            break
        m = _THRESHOLD_TEXT.search(str(text))
        if m:
            initial, source = int(m.group(1).replace(",", "")), "warning_text"
            break
    timed = {i + 1: t for i, (_, _, t) in enumerate(changes) if t is not None}
    return [(0, initial, source)] + [(f, v, "sys_update_config") for f, v, _ in changes], timed


def _new_threshold(path: Any, value: Any) -> Any:
    """What a config change sets ``compact_threshold`` to (None when it sets no number)."""
    if pd.isna(path) or pd.isna(value):
        return None
    val = loads_or_none(value)
    if path in ("context", "model") and isinstance(val, dict):
        val = val.get("compact_threshold")
    elif path not in _THRESHOLD_PATHS:
        return None
    return val if isinstance(val, int | float) and not isinstance(val, bool) else None


def _sets_threshold(path: Any, value: Any) -> bool:
    return _new_threshold(path, value) is not None


def _threshold_value(path: Any, value: Any) -> int | None:
    """The threshold a config change puts in force (None: out of range, see
    :func:`adfkit._base.config.threshold_value`)."""
    return threshold_value(_new_threshold(path, value))
