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
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._core.rows import as_count
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
from adfkit._sources.openhands.names import EVENT_NAME, STATE_FILE, is_conversation
from adfkit._sources.transcript.kit import (
    CallDraft,
    EventDraft,
    Findings,
    ParsedTranscript,
    RowDraft,
    bad_counts,
    event_tokens,
    final_calls,
    gc_paused,
    mapped_tokens,
    number_rows,
    result_text,
    tool_input,
    warn_findings,
)

FORMAT = "openhands"
_WHAT = "OpenHands conversation folder"


#: Event kinds that are messages to or from the model (rows).
ROW_KINDS = frozenset(
    {
        "SystemPromptEvent",
        "SystemPromptUpdateEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "AgentErrorEvent",
        "Condensation",
    }
)
#: Event kinds known not to be messages: no row, counted in one ``info`` finding.
OTHER_KINDS = frozenset(
    {
        "CondensationRequest",
        "CondensationSummaryEvent",
        "ConversationStateUpdateEvent",
        "PauseEvent",
        "ConversationErrorEvent",
        "HookExecutionEvent",
        "TokenEvent",
        "LLMCompletionLogEvent",
        "ServerErrorEvent",
        "StreamingDeltaEvent",
    }
)
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
_QUARTER_HOUR_MS = 15 * 60 * 1000
_CONDENSE_COMMAND = "/condense"


# --- reading files -------------------------------------------------------------------------


# --- values --------------------------------------------------------------------------------


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


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


def _blocks(content: Any) -> list[dict[str, Any]]:
    """OpenHands ``TextContent``/``ImageContent`` list -> ADF blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if type(c) is not dict:
            continue
        t = c.get("type")
        if t == "text":
            txt = c.get("text")
            if isinstance(txt, str) and txt:
                out.append({"type": "text", "text": txt})
        elif t == "image":
            urls = c.get("image_urls")
            for u in urls if isinstance(urls, list) else []:
                out.append(
                    {"type": "image_url", "image_url": {"url": u if isinstance(u, str) else ""}}
                )
        else:
            out.append({k: v for k, v in c.items() if k != "cache_prompt"})
    return out


def _thinking(ev: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    rc = ev.get("reasoning_content")
    if isinstance(rc, str) and rc:
        out.append({"type": "thinking", "thinking": rc})
    tb = ev.get("thinking_blocks")
    for b in tb if isinstance(tb, list) else []:
        if type(b) is dict and isinstance(b.get("thinking"), str) and b["thinking"]:
            out.append({"type": "thinking", "thinking": b["thinking"]})
    return out


def _arguments(ev: dict[str, Any]) -> dict[str, Any]:
    raw = _get(ev, "tool_call", "arguments")
    if isinstance(raw, str | dict):
        return tool_input(raw)
    action = ev.get("action")
    if isinstance(action, dict):
        return {k: v for k, v in action.items() if k != "kind"}
    return {}


def _observation_text(obs: Any) -> tuple[str, bool]:
    if not isinstance(obs, dict):
        return result_text(obs), False
    err = obs.get("is_error") is True or obs.get("error") not in (None, False, "")
    if "content" in obs:
        return result_text(_blocks(obs.get("content")) or obs.get("content")), err
    for k in ("output", "text", "message", "error"):
        v = obs.get(k)
        if isinstance(v, str):
            return v, err
    return "", err


# --- building ------------------------------------------------------------------------------


class _Row(RowDraft):
    """A row being built from one event file: ``event_ids`` of every event merged into it,
    ``rid`` the model response it came from (its call: ``response:<rid>``)."""

    __slots__ = ("event_ids", "rid")

    def __init__(
        self, f: EventFile, role: str, content: list[dict[str, Any]], rid: str | None = None
    ) -> None:
        ev = f.obj or {}
        super().__init__(role, content, f.idx + 1, None)
        self.uuid = _str(ev.get("id"))
        self.parent_uuid = _str(ev.get("parent_id"))
        self.event_ids = [self.uuid] if self.uuid else []
        self.rid = rid
        self.call_key = f"response:{rid}" if rid else None


def _call(key: str, row: _Row, u: _Usage | None) -> CallDraft:
    """The call of a response an event names: its usage, or none recorded."""
    model = (u.model if u is not None else None) or row.model
    tokens = dict(u.tokens) if u is not None else {}
    c = CallDraft(key, row, row.lines[0], model, tokens, row.created_at)
    if u is None:
        c.note = "no usage recorded for this response"
    return c


@dataclass
class _Usage:
    usage_id: str
    model: str | None
    tokens: dict[str, int]
    response_id: str | None
    window: int | None
    cost_at_ms: int | None = None
    used: bool = False


@dataclass
class _State:
    rows: list[_Row] = field(default_factory=list)
    window: list[_Row] = field(default_factory=list)
    row_of: dict[str, _Row] = field(default_factory=dict)
    summary_of: dict[str, _Row] = field(default_factory=dict)
    no_row_ids: set[str] = field(default_factory=set)
    open_call: _Row | None = None
    request: dict[str, Any] | None = None
    last_user_text: str = ""
    events: list[EventDraft] = field(default_factory=list)
    calls: list[CallDraft] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def _usages(state: dict[str, Any], fnd: Findings) -> tuple[list[_Usage], str | None]:
    """Every per-call ``TokenUsage`` of ``stats.usage_to_metrics``, and the condenser's usage id."""
    out: list[_Usage] = []
    metrics = _get(state, "stats", "usage_to_metrics")
    cond_uid = _str(_get(state, "agent", "condenser", "llm", "usage_id"))
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
            cts = _get(costs[i], "timestamp") if paired else None
            w = as_count(u.get("context_window"))
            out.append(
                _Usage(
                    str(uid),
                    _str(u.get("model")) or _str(m.get("model_name")),
                    tokens_of(u),
                    _str(u.get("response_id")),
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


def _active(files: list[EventFile], leaf: str | None, fnd: Findings) -> set[int] | None:
    """Indexes (into ``files``) of the events on the active branch; None: all of them.

    A leaf whose own file could not be read (the half-written last event) is replaced by the
    last readable event before it."""
    ids: dict[str, int] = {}
    named: dict[str, int] = {}  # event id in the file name -> index
    parent: dict[int, str | None] = {}
    prev: str | None = None
    tree = False
    for i, f in enumerate(files):
        m = EVENT_NAME.match(f.name)
        if m:
            named.setdefault(m.group(2), i)
        ev = f.obj
        if ev is None:
            continue
        eid = _str(ev.get("id"))
        if "parent_id" in ev:
            tree = True
            parent[i] = _str(ev.get("parent_id"))
        else:
            parent[i] = prev
        if eid:
            ids.setdefault(eid, i)
            prev = eid
    if not tree or leaf is None:
        return None
    start = ids.get(leaf)
    if start is None and leaf in named:
        start = next((j for j in range(named[leaf] - 1, -1, -1) if files[j].obj is not None), None)
        if start is None:
            return None
    elif start is None:
        fnd.add(
            "leaf_not_found",
            "warning",
            None,
            f"base_state leaf_event_id {leaf[:40]!r} names no event: every event read as one "
            "branch",
        )
        return None
    on: set[int] = set()
    at: int | None = start
    while at is not None and at not in on:
        on.add(at)
        p = parent.get(at)
        nxt = ids.get(p) if p else None
        if p and nxt is None:  # a parent lost with its file: go on from the event before
            nxt = next((j for j in range(at - 1, -1, -1) if files[j].obj is not None), None)
        at = nxt
    return on


def _zone_offset(
    files: list[EventFile], usages: list[_Usage], fnd: Findings
) -> tuple[int | None, str]:
    """The local zone's offset (ms to subtract from a naive time), inferred from the calls'
    epoch cost timestamps against their events' local times."""
    by_rid: dict[str, int] = {}
    for f in files:
        ev = f.obj
        if ev is None:
            continue
        rid = _str(ev.get("llm_response_id"))
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


@dataclass
class _Ctx:
    """What every event's handling reads: the findings, the usage by response id, the models."""

    fnd: Findings
    by_rid: dict[str, _Usage]
    agent_model: str | None
    cond_model: str | None
    condenser: str | None


def _by_response(usages: list[_Usage], fnd: Findings) -> dict[str, _Usage]:
    by_rid: dict[str, _Usage] = {}
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


def _build(
    files: list[EventFile],
    state: dict[str, Any],
    usages: list[_Usage],
    cond_uid: str | None,
    fnd: Findings,
    meta: dict[str, str],
) -> tuple[_State, list[_Row]]:
    ctx = _Ctx(
        fnd,
        _by_response(usages, fnd),
        _str(_get(state, "agent", "llm", "model")),
        _str(_get(state, "agent", "condenser", "llm", "model")),
        _str(_get(state, "agent", "condenser", "kind")),
    )
    offset, how = _zone_offset(files, usages, fnd)
    meta["timestamps"] = how
    if offset is None and any(f.obj and f.obj.get("timestamp") for f in files):
        fnd.add("timestamps_without_zone", "info", None, f"event times are {how}: NA")
    active = _active(files, _str(state.get("leaf_event_id")), fnd)
    st = _State()
    branch_rows: list[_Row] = []
    for i, f in enumerate(files):
        if f.obj is None:
            continue
        t = naive_ms(f.obj.get("timestamp"))
        ts = t - offset if t is not None and offset is not None else None
        if active is None or i in active:
            _event(st, ctx, f, f.obj, ts)
            continue
        row = _branch_row(f, f.obj, st)
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


def _event(st: _State, ctx: _Ctx, f: EventFile, ev: dict[str, Any], ts: int | None) -> None:
    """One event of the active branch: a row, a condensation, a request, or nothing."""
    kind = ev.get("kind")
    if not isinstance(kind, str):
        ctx.fnd.add("no_kind", "warning", f.idx + 1, f"{f.name}: event without a kind; skipped")
        return
    if kind == "CondensationRequest":
        st.request = {"idx": f.idx, "manual": st.last_user_text.startswith(_CONDENSE_COMMAND)}
        _no_row(st, ev)
        return
    if kind == "Condensation":
        _condensation(st, ctx, f, ev, ts)
        return
    if kind not in ROW_KINDS:
        st.skipped[kind[:60]] = st.skipped.get(kind[:60], 0) + 1
        _no_row(st, ev)
        return
    row = _row_of_event(f, ev, kind, st, on=True)
    if row is None:  # merged into the open call's row
        return
    row.created_at = ts
    if row.role == "assistant":
        row.model = ctx.agent_model
    _add(st, row)


def _branch_row(f: EventFile, ev: dict[str, Any], st: _State) -> _Row | None:
    """The row of an event off the active branch (no window, no calls: it is not in the
    conversation that went on)."""
    kind = ev.get("kind")
    if kind == "Condensation":
        return _summary_row(f, ev)
    if not isinstance(kind, str) or kind not in ROW_KINDS:
        return None
    return _row_of_event(f, ev, kind, st, on=False)


def _stray_usage(st: _State, usages: list[_Usage], cond_uid: str | None, fnd: Findings) -> None:
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


def _no_row(st: _State, ev: dict[str, Any]) -> None:
    eid = _str(ev.get("id"))
    if eid:
        st.no_row_ids.add(eid)


def _add(st: _State, row: _Row) -> None:
    st.rows.append(row)
    st.window.append(row)
    for eid in row.event_ids:
        st.row_of.setdefault(eid, row)


def _row_of_event(
    f: EventFile, ev: dict[str, Any], kind: str, st: _State, *, on: bool
) -> _Row | None:
    """The row of one event (None: merged into the open call's row). ``on``: the event is on
    the active branch (it moves the open call)."""
    if kind == "ActionEvent":
        return _action_row(f, ev, st, on=on)
    if on:
        st.open_call = None
    if kind in ("SystemPromptEvent", "SystemPromptUpdateEvent"):
        prompt = ev.get("system_prompt")
        blocks = _blocks([prompt] if isinstance(prompt, dict) else prompt)
        dyn = ev.get("dynamic_context")
        if dyn is not None:
            blocks += _blocks(dyn if isinstance(dyn, list) else [dyn])
        row = _Row(f, "user", blocks)
        row.kind_hint = "context"
        return row
    if kind == "MessageEvent":
        return _message_row(f, ev, st, on=on)
    return _observation_row(f, ev, kind)


def _message_row(f: EventFile, ev: dict[str, Any], st: _State, *, on: bool) -> _Row:
    raw = ev.get("llm_message")
    msg: dict[str, Any] = raw if isinstance(raw, dict) else {}
    role = msg.get("role")
    blocks = _blocks(msg.get("content"))
    ext = ev.get("extended_content")
    if isinstance(ext, list):
        blocks += _blocks(ext)
    if role == "assistant":
        rid = _str(ev.get("llm_response_id"))
        return _Row(f, "assistant", _thinking(msg) + _thinking(ev) + blocks, rid)
    row = _Row(f, "user", blocks)
    if role == "system":
        row.kind_hint = "context"
    elif role != "user":
        row.malformed = True
        row.note = f"message role {str(role)[:20]!r}"
    else:
        row.kind_hint = "message"  # the user's chat message: it opens a turn
        if on:
            st.last_user_text = next(
                (b["text"].strip() for b in blocks if b.get("type") == "text"), ""
            )
    return row


def _action_row(f: EventFile, ev: dict[str, Any], st: _State, *, on: bool) -> _Row | None:
    """An assistant row with the action's tool call; the actions of one response (parallel
    calls, one ``llm_response_id``) are one row."""
    rid = _str(ev.get("llm_response_id"))
    use = {
        "type": "tool_use",
        "id": _str(ev.get("tool_call_id")) or _str(_get(ev, "tool_call", "id")),
        "name": _str(ev.get("tool_name")) or _str(_get(ev, "tool_call", "name")),
        "input": _arguments(ev),
    }
    open_row = st.open_call if on else None
    if open_row is not None and rid is not None and open_row.rid == rid:
        open_row.content.extend([*_blocks(ev.get("thought")), use])
        open_row.lines.append(f.idx + 1)
        eid = _str(ev.get("id"))
        if eid:
            open_row.event_ids.append(eid)
            st.row_of.setdefault(eid, open_row)
        return None
    row = _Row(f, "assistant", [*_thinking(ev), *_blocks(ev.get("thought")), use], rid)
    if on:
        st.open_call = row
    return row


def _observation_row(f: EventFile, ev: dict[str, Any], kind: str) -> _Row:
    """A tool result joined by ``tool_call_id`` (an error with no call: a notice)."""
    call_id = _str(ev.get("tool_call_id"))
    if kind == "ObservationEvent":
        text, err = _observation_text(ev.get("observation"))
    elif kind == "UserRejectObservation":
        reason = ev.get("rejection_reason")
        text = "rejected by the user" + (f": {reason}" if isinstance(reason, str) else "")
        err = True
    else:  # AgentErrorEvent
        e = ev.get("error")
        text, err = (e if isinstance(e, str) else result_text(e)), True
    if call_id is None:
        row = _Row(f, "user", [{"type": "text", "text": text}])
        row.kind_hint = "notice"
        return row
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": err}
    return _Row(f, "user", [block])


def _attach_call(st: _State, row: _Row, ctx: _Ctx) -> None:
    """The usage of the response ``row`` came from, counted once (NA when none is recorded)."""
    rid = row.rid
    assert rid is not None
    u = ctx.by_rid.get(rid)
    if u is not None and not u.used:
        u.used = True
        row.tokens = dict(u.tokens)
        row.model = u.model or ctx.agent_model
    st.calls.append(_call(f"response:{rid}", row, u))


def _call_input(r: _Row) -> int | None:
    """The prompt size of the agent's call on ``r`` (the condenser's, on a summary row, is not
    the conversation's)."""
    return r.tokens.get("input") if r.role == "assistant" and r.tokens else None


def _forgotten(
    st: _State, f: EventFile, ids: list[Any], fnd: Findings
) -> tuple[list[_Row], list[_Row], int]:
    """``(swept, preserved, unknown)``: the window's rows the ids name, the window's other
    rows, and how many ids name no event before the condensation."""
    line = f.idx + 1
    named: list[_Row] = []
    unknown = 0
    seen: set[int] = set()
    for x in ids:
        r = (st.row_of.get(x) or st.summary_of.get(x)) if isinstance(x, str) else None
        if r is None:
            unknown += 0 if isinstance(x, str) and x in st.no_row_ids else 1
        elif id(r) not in seen:
            seen.add(id(r))
            named.append(r)
    if unknown:
        fnd.add(
            "forgotten_id_unknown",
            "warning",
            line,
            f"{f.name}: {unknown} of {len(ids)} forgotten_event_ids name no event before it",
        )
    in_window = {id(r) for r in st.window}
    swept = [r for r in named if id(r) in in_window]
    if len(swept) < len(named):
        fnd.add(
            "forgotten_twice",
            "info",
            line,
            f"{f.name}: {len(named) - len(swept)} forgotten event(s) had already left the context",
        )
    gone = {id(r) for r in swept}
    return swept, [r for r in st.window if id(r) not in gone], unknown


def _trigger(req: dict[str, Any] | None) -> tuple[str, str]:
    """``(trigger, basis)``: OpenHands writes no trigger; it is inferred."""
    if req is None:
        return "auto", (
            "inferred: no CondensationRequest before it, so the condenser's own rule (more "
            "than max_size events, or max_tokens tokens)"
        )
    if req["manual"]:
        return "manual", "inferred: a CondensationRequest after a user message /condense"
    return "auto", (
        "inferred: a CondensationRequest before it (the agent's on a context-window error, "
        "or a request made through the API)"
    )


def _condensation(st: _State, ctx: _Ctx, f: EventFile, ev: dict[str, Any], ts: int | None) -> None:
    """A summary row, and the compaction: swept exactly what ``forgotten_event_ids`` names."""
    st.open_call = None
    eid = _str(ev.get("id")) or f"event-{f.idx}"
    swept, preserved, unknown = _forgotten(st, f, _forgotten_ids(f, ev, ctx.fnd), ctx.fnd)
    srow = _summary_row(f, ev)
    srow.created_at = ts
    srow.model = ctx.cond_model
    if not srow.content:
        srow.note = "this condensation holds no summary (a forgetting condenser)"
    rid = _str(ev.get("llm_response_id"))
    u = _condenser_call(st, ctx, srow, rid)
    pos = len(st.rows)
    st.rows.append(srow)
    st.summary_of[f"{eid}-summary"] = srow
    st.row_of.setdefault(eid, srow)
    st.window = [*preserved, srow]
    req, st.request = st.request, None
    trigger, basis = _trigger(req)
    extra = _condensation_extra(ev, ctx, rid, req, unknown)
    st.events.append(
        EventDraft(
            "compaction",
            f.idx + 1,
            ts,
            eid,
            trigger=trigger,
            context_window=u.window if u is not None else None,
            swept=swept,
            preserved=preserved,
            summary=srow,
            extra={"trigger_basis": basis, **extra},
            pos=pos,
        )
    )


def _forgotten_ids(f: EventFile, ev: dict[str, Any], fnd: Findings) -> list[Any]:
    ids = ev.get("forgotten_event_ids")
    if isinstance(ids, list):
        return ids
    fnd.add(
        "bad_condensation", "warning", f.idx + 1, f"{f.name}: forgotten_event_ids is not a list"
    )
    return []


def _summary_row(f: EventFile, ev: dict[str, Any]) -> _Row:
    """A condensation's summary row (no text when the condenser writes none)."""
    summary = ev.get("summary")
    row = _Row(f, "user", [{"type": "text", "text": summary}] if isinstance(summary, str) else [])
    row.kind_hint = "compaction_summary"
    return row


def _condenser_call(st: _State, ctx: _Ctx, srow: _Row, rid: str | None) -> _Usage | None:
    """The condenser's call, on the summary row: its usage there (a compaction call), counted
    once."""
    u = ctx.by_rid.get(rid) if rid else None
    if u is not None and u.used:
        u = None
    if u is not None:
        u.used = True
        srow.tokens = dict(u.tokens)
        srow.model = u.model or ctx.cond_model
    if rid is not None:
        st.calls.append(_call(f"response:{rid}", srow, u))
    return u


def _condensation_extra(
    ev: dict[str, Any], ctx: _Ctx, rid: str | None, req: dict[str, Any] | None, unknown: int
) -> dict[str, Any]:
    """What a condensation records beyond the event's own fields."""
    off = ev.get("summary_offset")
    extra: dict[str, Any] = {}
    for key, val in (
        ("summary_offset", off if type(off) is int else None),
        ("condenser", ctx.condenser),
        ("llm_response_id", rid),
        ("request_line", req["idx"] + 1 if req is not None else None),
        ("unknown_forgotten_ids", unknown or None),
    ):
        if val is not None:
            extra[key] = val
    return extra


def _branches(rows: list[_Row]) -> list[EventDraft]:
    """Branch ids for the rows off the active branch (one per fork) and one rewind each."""
    by_id = {eid: r for r in rows for eid in r.event_ids}
    swept: dict[str, list[_Row]] = {}
    for r in rows:  # in idx order: a branch's root comes before its children
        parent = by_id.get(r.parent_uuid) if r.parent_uuid else None
        if parent is not None and parent.branch is not None:
            r.branch = parent.branch
        else:
            r.branch = f"branch-{len(swept) + 1}"
        swept.setdefault(r.branch, []).append(r)
    return [
        EventDraft("rewind", g[0].lines[0], swept=g, extra={"branch": b}) for b, g in swept.items()
    ]


def _finish(
    folder: Path,
    st: _State,
    branch_rows: list[_Row],
    meta: dict[str, str],
    fnd: Findings,
    sid: str | None,
) -> ParsedTranscript:
    rewinds = _branches(branch_rows)
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
    sid = _str(state.get("id"))
    for key, val in (
        ("model", _get(state, "agent", "llm", "model")),
        ("agent_kind", _get(state, "agent", "kind")),
        ("cwd", _get(state, "workspace", "working_dir")),
        ("execution_status", state.get("execution_status")),
        ("persistence_dir", state.get("persistence_dir")),
        ("condenser", _get(state, "agent", "condenser", "kind")),
        ("condenser_model", _get(state, "agent", "condenser", "llm", "model")),
    ):
        if isinstance(val, str) and val:
            meta[key] = val
    for key, val in (
        ("condenser_max_size", _get(state, "agent", "condenser", "max_size")),
        ("condenser_keep_first", _get(state, "agent", "condenser", "keep_first")),
        ("condenser_max_tokens", _get(state, "agent", "condenser", "max_tokens")),
        ("max_input_tokens", _get(state, "agent", "llm", "max_input_tokens")),
        ("max_iterations", state.get("max_iterations")),
    ):
        if type(val) is int:
            meta[key] = str(val)
    if isinstance(_get(state, "agent", "condenser"), dict):
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
        usages, cond_uid = _usages(state, fnd)
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
