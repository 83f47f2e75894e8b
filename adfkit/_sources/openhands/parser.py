"""OpenHands conversations (V1 SDK and CLI): one folder per conversation, one JSON file per event.

Layout (``../shared/SOURCES-NEXT.md`` §2): ``<conversation>/base_state.json`` (the agent, its LLM
and condenser settings, ``stats.usage_to_metrics``, ``leaf_event_id``) and
``<conversation>/events/event-<idx:05d>-<event id>.json``, one compact JSON object per file
(``kind`` names the event class); dot-files in ``events/`` (``.eventlog.lock``,
``.eventlog-len-<N>.marker``) are bookkeeping. The folder is read read-only, file by file, each
file capped (``max_event_bytes``), the number of files capped (``max_events``). The choices made
where the format leaves room:

- **Order**: events by ``idx`` (the file name), on the active branch: the path from
  ``leaf_event_id`` to the root through ``parent_id`` (an event without the key: the previous
  event). Events off that path are abandoned branches (``other_branches``, ``branch-1``...).
- **Rows**: ``SystemPromptEvent``/``SystemPromptUpdateEvent`` -> a user row of kind ``context``
  (the prompt the model is given); ``MessageEvent`` -> a row of ``llm_message.role`` (its text,
  images, ``extended_content``; the assistant's ``reasoning_content``/``thinking_blocks`` as
  thinking); ``ActionEvent`` -> an assistant row (``thought`` text, reasoning, one ``tool_use``
  with ``tool_call_id``, ``tool_name`` and the call's ``arguments``); the ActionEvents of one
  model response (same ``llm_response_id``: parallel tool calls) are one row, one call;
  ``ObservationEvent``/``UserRejectObservation``/``AgentErrorEvent`` -> a ``tool_result`` row
  joined by ``tool_call_id`` (an error with no call: a ``notice`` row); ``Condensation`` -> a
  ``compaction_summary`` row holding ``summary`` (empty when the condenser writes none).
  Other kinds (state updates, pauses, hooks, ``CondensationRequest``) are not messages: no row.
- **Usage** is not in the events: ``base_state.stats.usage_to_metrics[<usage id>].token_usages``
  holds one ``TokenUsage`` per call, joined to the events by ``response_id ==
  llm_response_id``. ``prompt_tokens`` -> ``input`` (it includes the cached part),
  ``cache_read_tokens``, ``cache_write_tokens``, ``completion_tokens`` -> ``output``,
  ``reasoning_tokens``. The condenser's call (the ``response_id`` a ``Condensation`` names) is on
  its summary row, so ``usage()`` lists it as a ``compaction`` call. A usage no event names is a
  call of no row (``calls()``, finding ``usage_without_event``); a response with no usage keeps
  NA tokens (finding ``call_without_usage``).
- **Compaction**: each ``Condensation`` on the active branch. ``swept`` = exactly the rows its
  ``forgotten_event_ids`` name (an id ``<condensation id>-summary`` names that condensation's
  derived summary row), ``preserved`` = the rows of the window it did not name. ``trigger`` is
  not written by OpenHands and is **inferred**: ``manual`` when a ``CondensationRequest`` follows
  a user message ``/condense``; else ``auto`` (a request the agent emitted on a context-window
  error, or the condenser's own rule: more than ``max_size`` events or ``max_tokens`` tokens);
  ``extra["trigger_basis"]`` says which. ``tokens_before``/``tokens_after`` = ``input`` of the last
  agent call before and the first after (OpenHands records no sizes: ``pre_tokens`` stays None).
  ``extra`` holds ``summary_offset``, the condenser's ``kind`` and the ``llm_response_id``.
- **Time**: OpenHands writes ``datetime.now().isoformat()``, local time without a zone. The zone
  is inferred from the calls' cost records (``costs[].timestamp``, epoch seconds) against their
  events' local times (median difference, rounded to 15 minutes); when that is not possible the
  times are unknown (None), with a finding.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.openhands.branches import active_events, branch_rewinds
from adfkit._sources.openhands.condensations import condensation
from adfkit._sources.openhands.content import get, str_or_none
from adfkit._sources.openhands.files import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_TOTAL_BYTES,
    EventFile,
    check_sequence,
    conversation_folder,
    list_events,
    read_events,
    read_state,
)
from adfkit._sources.openhands.names import STATE_FILE, is_conversation
from adfkit._sources.openhands.rows import (
    OTHER_KINDS,
    ROW_KINDS,
    add_row,
    branch_row,
    no_row,
    row_of_event,
)
from adfkit._sources.openhands.state import Ctx, Row, State, response_call
from adfkit._sources.openhands.times import naive_ms, zone_offset
from adfkit._sources.openhands.usage import Usage, by_response, read_usages
from adfkit._sources.transcript.kit import (
    CallDraft,
    Findings,
    ParsedTranscript,
    event_tokens,
    final_calls,
    gc_paused,
    number_rows,
    warn_findings,
)

FORMAT = "openhands"
_WHAT = "OpenHands conversation folder"


_CONDENSE_COMMAND = "/condense"


def _build(
    files: list[EventFile],
    state: dict[str, Any],
    usages: list[Usage],
    cond_uid: str | None,
    fnd: Findings,
    meta: dict[str, str],
) -> tuple[State, list[Row]]:
    ctx = Ctx(
        fnd,
        by_response(usages, fnd),
        str_or_none(get(state, "agent", "llm", "model")),
        str_or_none(get(state, "agent", "condenser", "llm", "model")),
        str_or_none(get(state, "agent", "condenser", "kind")),
    )
    offset, how = zone_offset(files, usages, fnd)
    meta["timestamps"] = how
    if offset is None and any(f.obj and f.obj.get("timestamp") for f in files):
        fnd.add("timestamps_without_zone", "info", None, f"event times are {how}: NA")
    active = active_events(files, str_or_none(state.get("leaf_event_id")), fnd)
    st = State()
    branch_rows: list[Row] = []
    for i, f in enumerate(files):
        if f.obj is None:
            continue
        t = naive_ms(f.obj.get("timestamp"))
        ts = t - offset if t is not None and offset is not None else None
        if active is None or i in active:
            _event(st, ctx, f, f.obj, ts)
            continue
        row = branch_row(f, f.obj, st)
        if row is not None:
            row.created_at = ts
            branch_rows.append(row)
    for r in st.rows:
        if r.role == "assistant" and r.rid is not None:
            _attach_call(st, r, ctx)
    event_tokens(st.events, [_call_input(r) for r in st.rows])
    windows = [u.window for u in usages if u.window and u.usage_id != cond_uid]
    if windows:
        meta["context_window"] = str(windows[-1])
    _stray_usage(st, usages, cond_uid, fnd)
    return st, branch_rows


def _event(st: State, ctx: Ctx, f: EventFile, ev: dict[str, Any], ts: int | None) -> None:
    """One event of the active branch: a row, a condensation, a request, or nothing."""
    kind = ev.get("kind")
    if not isinstance(kind, str):
        ctx.fnd.add("no_kind", "warning", f.idx + 1, f"{f.name}: event without a kind; skipped")
        return
    if kind == "CondensationRequest":
        st.request = {"idx": f.idx, "manual": st.last_user_text.startswith(_CONDENSE_COMMAND)}
        no_row(st, ev)
        return
    if kind == "Condensation":
        condensation(st, ctx, f, ev, ts)
        return
    if kind not in ROW_KINDS:
        st.skipped[kind[:60]] = st.skipped.get(kind[:60], 0) + 1
        no_row(st, ev)
        return
    row = row_of_event(f, ev, kind, st, on=True)
    if row is None:  # merged into the open call's row
        return
    row.created_at = ts
    if row.role == "assistant":
        row.model = ctx.agent_model
    add_row(st, row)


def _stray_usage(st: State, usages: list[Usage], cond_uid: str | None, fnd: Findings) -> None:
    """Recorded calls no event names: calls of no row, and one finding."""
    free = [u for u in usages if not u.used]
    for u in free:
        c = CallDraft(
            f"usage:{u.usage_id}:{u.response_id or '?'}", None, 0, u.model, u.tokens, u.cost_at_ms
        )
        c.note = f"usage {u.usage_id!r}: no event names this response"
        st.calls.append(c)
    if not free:
        return
    who = sorted({u.usage_id for u in free})
    fnd.add(
        "usage_without_event",
        "info" if cond_uid is not None and set(who) <= {cond_uid} else "warning",
        None,
        f"{len(free)} recorded call(s) of usage {', '.join(map(repr, who))} name no event "
        "(response_id): counted as calls of no row",
    )


def _attach_call(st: State, row: Row, ctx: Ctx) -> None:
    """The usage of the response ``row`` came from, counted once (NA when none is recorded)."""
    rid = row.rid
    assert rid is not None
    u = ctx.by_rid.get(rid)
    if u is not None and not u.used:
        u.used = True
        row.tokens = dict(u.tokens)
        row.model = u.model or ctx.agent_model
    st.calls.append(response_call(f"response:{rid}", row, u))


def _call_input(r: Row) -> int | None:
    """The prompt size of the agent's call on ``r`` (the condenser's, on a summary row, is not
    the conversation's)."""
    return r.tokens.get("input") if r.role == "assistant" and r.tokens else None


def _finish(
    folder: Path,
    st: State,
    branch_rows: list[Row],
    meta: dict[str, str],
    fnd: Findings,
    sid: str | None,
) -> ParsedTranscript:
    rewinds = branch_rewinds(branch_rows)
    rows, branches = number_rows(st.rows, branch_rows)
    calls = final_calls(st.calls)
    n_missing = sum(1 for c in calls if c.seq is not None and not c.tokens)
    if n_missing:
        fnd.add(
            "call_without_usage",
            "info",
            None,
            f"{n_missing} model response(s) named by events have no TokenUsage in "
            f"{STATE_FILE}: their tokens are NA",
        )
    for k, n in sorted(st.skipped.items()):
        known = k in OTHER_KINDS
        fnd.add(
            "other_event_kind" if known else "unknown_event_kind",
            "info" if known else "warning",
            None,
            f"{n} event(s) of kind {k!r}: not a message, no row",
        )
    return ParsedTranscript(
        path=str(folder),
        format=FORMAT,
        session_id=sid,
        meta=meta,
        rows=rows,
        other_branches=branches,
        events=sorted((e.final() for e in [*st.events, *rewinds]), key=lambda e: e.line),
        findings=fnd.done(),
        calls=calls,
    )


def _meta(state: dict[str, Any], folder: Path) -> tuple[dict[str, str], str | None]:
    meta: dict[str, str] = {}
    sid = str_or_none(state.get("id"))
    for key, val in (
        ("model", get(state, "agent", "llm", "model")),
        ("agent_kind", get(state, "agent", "kind")),
        ("cwd", get(state, "workspace", "working_dir")),
        ("execution_status", state.get("execution_status")),
        ("persistence_dir", state.get("persistence_dir")),
        ("condenser", get(state, "agent", "condenser", "kind")),
        ("condenser_model", get(state, "agent", "condenser", "llm", "model")),
    ):
        if isinstance(val, str) and val:
            meta[key] = val
    for key, val in (
        ("condenser_max_size", get(state, "agent", "condenser", "max_size")),
        ("condenser_keep_first", get(state, "agent", "condenser", "keep_first")),
        ("condenser_max_tokens", get(state, "agent", "condenser", "max_tokens")),
        ("max_input_tokens", get(state, "agent", "llm", "max_input_tokens")),
        ("max_iterations", state.get("max_iterations")),
    ):
        if type(val) is int:
            meta[key] = str(val)
    if isinstance(get(state, "agent", "condenser"), dict):
        meta["compaction_trigger"] = (
            "inferred (OpenHands writes none): manual after a user's /condense, else auto"
        )
    if sid is None:
        sid = folder.name
    return meta, sid


def parse_openhands(
    path: str | os.PathLike[str],
    *,
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    max_events: int = DEFAULT_MAX_EVENTS,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    warn: bool = True,
    _depth: int = 0,
    _seen: set[tuple[int, int]] | None = None,
) -> ParsedTranscript:
    """Parse one OpenHands conversation folder (V1 SDK/CLI layout).

    :param path: the conversation folder (holding ``base_state.json`` and ``events/``), or its
        ``events/`` folder.
    :param max_event_bytes: a larger event file is skipped with a ``huge_event_file`` finding.
    :param max_events: event files past this many are left with an ``event_count_cap`` finding.
    :param max_total_bytes: event files past this many bytes in all are left with a
        ``total_size_cap`` finding.
    :param warn: emit one :class:`adfkit.AdfWarning` when there are warning- or error-level
        findings.
    :raises NotTranscriptError: ``path`` is not a folder, or holds neither ``base_state.json``
        nor event files.

    The conversations under ``subagents/`` (delegation) are parsed too, as
    ``ParsedTranscript.subagents`` (``agent_id`` their folder name), three levels deep at most,
    each real folder once (a link to a folder already read, an ancestor or a sibling, is a
    ``subagent_link`` finding).
    """
    p = Path(path).expanduser()
    folder = conversation_folder(p)
    if folder is None:
        what = "a folder" if p.is_dir() else "not a folder" if p.exists() else "no such folder"
        raise NotTranscriptError(
            f"{what} without base_state.json or events/event-<idx>-<id>.json: not an {_WHAT}",
            path=p,
        )
    fnd = Findings()
    with gc_paused():  # many small objects, no cycles: the collector only costs
        state = read_state(folder, fnd)
        files, marker = list_events(folder, fnd, max_events)
        check_sequence(files, marker, fnd)
        read_events(folder, files, fnd, max_event_bytes, max_total_bytes)
        meta, sid = _meta(state, folder)
        usages, cond_uid = read_usages(state, fnd)
        st, branch_rows = _build(files, state, usages, cond_uid, fnd, meta)
        out = _finish(folder, st, branch_rows, meta, fnd, sid)
    seen = _seen if _seen is not None else {_real(folder)}
    out.subagents = _subagents(folder, out, max_event_bytes, max_events, _depth, seen)
    if warn:  # each detail names its event file: no "line" before it
        warn_findings(str(folder), [dataclasses.replace(f, line=None) for f in out.findings])
    return out


#: Nesting of ``subagents/`` folders read (a delegate's delegate...).
MAX_SUBAGENT_DEPTH = 3


def _real(folder: Path) -> tuple[int, int]:
    """A folder's device and inode (links followed): what "the same folder" means here."""
    st = folder.stat()
    return st.st_dev, st.st_ino


def _subagents(
    folder: Path,
    parent: ParsedTranscript,
    max_event_bytes: int,
    max_events: int,
    depth: int,
    seen: set[tuple[int, int]],
) -> list[ParsedTranscript]:
    sub = folder / "subagents"
    if depth >= MAX_SUBAGENT_DEPTH or not sub.is_dir():
        return []
    out: list[ParsedTranscript] = []
    again: list[str] = []
    for child in sorted(sub.iterdir()):
        if not is_conversation(child):
            continue
        try:
            real = _real(child)
        except OSError:
            continue
        if real in seen:  # a link to a folder read already (an ancestor: a cycle)
            again.append(child.name)
            continue
        seen.add(real)
        t = parse_openhands(
            child,
            max_event_bytes=max_event_bytes,
            max_events=max_events,
            warn=False,
            _depth=depth + 1,
            _seen=seen,
        )
        t.agent_id = child.name
        t.parent_agent_id = parent.agent_id
        out.append(t)
        out.extend(t.subagents)  # nested ones are listed too, as Claude Code's are
        t.subagents = []
    if again:
        fnd = Findings()
        fnd.add(
            "subagent_link",
            "warning",
            None,
            f"{len(again)} folder(s) in {sub.name}/ are a folder read already (a link to this "
            f"conversation, an ancestor or another sub-agent): {', '.join(again[:5])}; not read "
            "again",
        )
        parent.findings.extend(fnd.done())
    return out
