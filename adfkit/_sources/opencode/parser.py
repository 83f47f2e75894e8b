"""OpenCode sessions (one ``opencode.db`` holds them all: :mod:`.store`).

Reads one session's ``message`` and ``part`` rows (JSON in ``data``) into
:class:`~adfkit._sources.transcript.kit.TranscriptRow` objects, one compaction event per
compaction, one microcompaction per prune, the model calls; its child sessions (the ``task``
tool's subagents, ``session.parent_id``) into ``subagents``. What OpenCode 1.18 writes (checked on
a store its 1.18.33 release wrote against a recording model server, tests/fixtures/recorded):

- **Order.** Messages in id order (OpenCode's ids ascend with time), each message's parts in id
  order. A row's ``line`` is its place in that order (each message, then each of its parts,
  counted from 1; what places events among rows): a store has no lines, so findings and errors
  name the message and part ids instead.
- **Rows.** A user message is one row: its text parts (``ignored`` ones are not sent), a file
  as OpenCode's placeholder ``[Attached mime: name]`` (its content is not in the part); one
  whose parts are all ``synthetic`` OpenCode wrote itself (the "Continue if you have next
  steps" after an automatic compaction: a message of the conversation, noted ``synthetic``).
  An assistant message is one row per step (``step-start`` .. ``step-finish``; 1.18 writes one
  step a message): its text, reasoning (``thinking``) and tool calls (``tool`` parts:
  ``callID``, ``tool``, ``state.input``), then one row per tool result (``state.output``; an
  ``error`` state's ``error``, ``is_error``; a call left ``pending``/``running`` as the
  interrupted result OpenCode sends).
- **Calls.** Each step is a model call keyed by its message id; its usage is the
  ``step-finish`` part's ``tokens`` (the message's for a message of one step): ``input`` is the
  part not read from or written to the cache, so adfkit's ``input`` is ``input + cache.read +
  cache.write``; OpenCode's ``output`` leaves the ``reasoning`` out, adfkit's is ``output +
  reasoning`` (the provider's count); ``reasoning``, ``cache.read``, ``cache.write`` as they
  are. The model is ``providerID/modelID``, as OpenCode names it (``anthropic/claude-sonnet-4-5``).
  OpenCode's title call (its ``title`` agent) writes no message: the session's title is its
  answer, its usage is nowhere in the store.
- **Compaction.** A user message with a ``compaction`` part (``auto``: false for ``/compact``
  and ``POST /session/ID/summarize``, ``overflow``: the provider refused the context) is the
  compaction's request, sent to the model afterwards as "What did we do so far?"; the assistant
  message answering it (``parentID``) with ``summary: true`` and ``mode: "compaction"`` holds
  the summary and the compaction call's usage. ``tail_start_id`` names the first message kept
  verbatim: the rows of the window from that message on are ``preserved``, the rest ``swept``.
  OpenCode then sends the request and the summary first, then the kept tail, then what follows
  (checked on every request of the recording): those two rows are displayed (``ord``) before the
  first kept row. A compaction whose summary message has an ``error`` or no ``finish`` did not
  replace anything (OpenCode ignores it): a finding, no event. ``trigger``: ``manual``
  (``auto`` false), ``auto``, ``overflow``. ``pre_tokens``: the ``tokens.total`` of the last
  finished call before the request, the count OpenCode's automatic check compares with its
  threshold (``isOverflow``); the store records no count after a compaction (NA).
- **Pruning.** ``compaction.prune`` replaces old tool outputs by "[Old tool result content
  cleared]" in what it sends, keeping the output in the part and setting
  ``state.time.compacted``: each prune is a ``microcompaction`` whose swept rows are those tool
  results (they stay in the window as stubs), placed before the first message written after it.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.opencode.store import Record, Rows
from adfkit._sources.transcript.kit import (
    CallInputs,
    EventDraft,
    Findings,
    ParsedTranscript,
    RowDraft,
    final_calls,
    number_rows,
    own_call,
    tool_input,
)

FORMAT = "opencode"
#: What OpenCode sends for a compaction part (message-v2.ts ``toModelMessages``).
COMPACTION_PROMPT = "What did we do so far?"
#: What it sends for a tool call that never finished (a pruned output is sent as
#: :data:`adfkit._sources.transcript.source.STUB_TEXT`, the microcompaction's stub).
INTERRUPTED = "[Tool execution was interrupted]"
#: Parts that mark a step's start and end (no content).
STEP_PARTS = ("step-start", "step-finish")


def tokens_of(t: Any) -> dict[str, int]:
    """OpenCode ``tokens`` -> adfkit's, the provider's counts again (session getUsage takes
    them apart): ``input`` made whole (OpenCode's ``input`` is the part not read from or
    written to the cache), ``output`` with the ``reasoning`` OpenCode took out of it (as
    Anthropic and OpenAI count output), ``reasoning``, ``cache_read``, ``cache_write``; {} for
    none, or for the zeros an assistant message starts with when no step finished.

    Examples
    --------
    >>> tokens_of({"input": 345, "output": 3337, "reasoning": 20,
    ...            "cache": {"read": 7616, "write": 0}})
    {'input': 7961, 'output': 3357, 'reasoning': 20, 'cache_read': 7616, 'cache_write': 0}
    >>> tokens_of({"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}})
    {}
    """
    if type(t) is not dict:
        return {}
    cache = _obj(t.get("cache"))
    base, out, reasoning = (as_count(t.get(k)) for k in ("input", "output", "reasoning"))
    read, write = as_count(cache.get("read")), as_count(cache.get("write"))
    got = {
        "input": None if base is None else base + (read or 0) + (write or 0),
        "output": None if out is None else out + (reasoning or 0),
        "reasoning": reasoning,
        "cache_read": read,
        "cache_write": write,
    }
    kept = {k: v for k, v in got.items() if v is not None}
    return kept if any(kept.values()) else {}


def _obj(v: Any) -> dict[str, Any]:
    """``v`` when it is a JSON object, else an empty one."""
    return v if type(v) is dict else {}


class _Row(RowDraft):
    """A row being built from one message (or one step or tool result of it)."""

    __slots__ = ("message",)

    def __init__(self, message: Record, role: str, content: list[Any], line: int) -> None:
        super().__init__(role, content, line, message.time_created)
        self.message = message.id
        self.uuid = message.id


@dataclass
class _State:
    rows: list[_Row] = field(default_factory=list)
    window: list[_Row] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)
    inputs: CallInputs = field(default_factory=CallInputs)
    #: Message id -> its place in the session; part id -> its line.
    place: dict[str, int] = field(default_factory=dict)
    line: dict[str, int] = field(default_factory=dict)
    #: The compaction requests met (user message id -> its row and compaction part).
    requests: dict[str, tuple[_Row, dict[str, Any]]] = field(default_factory=dict)
    #: ``tokens.total`` of the last finished call (what OpenCode's check compares).
    last_total: int | None = None
    #: Per compaction: the rows it writes and the rows it kept (displayed after them).
    ahead: list[tuple[list[_Row], list[_Row]]] = field(default_factory=list)
    #: Pruned tool results: (time compacted, row).
    pruned: list[tuple[int, _Row]] = field(default_factory=list)
    #: The compaction requests a finished summary answered.
    answered: set[str] = field(default_factory=set)
    #: Child session id -> the call id of the ``task`` tool that made it.
    spawned: dict[str, str] = field(default_factory=dict)


# --- content --------------------------------------------------------------------------------


def _user_blocks(parts: list[Record]) -> tuple[list[dict[str, Any]], bool]:
    """A user message's blocks and whether every text of it is synthetic."""
    out: list[dict[str, Any]] = []
    synthetic = True
    for p in parts:
        d = p.data
        t = d.get("type")
        if t == "text" and isinstance(d.get("text"), str) and d.get("ignored") is not True:
            out.append({"type": "text", "text": d["text"]})
            synthetic = synthetic and d.get("synthetic") is True
        elif t == "file":
            name = d.get("filename") if isinstance(d.get("filename"), str) else "file"
            out.append({"type": "text", "text": f"[Attached {d.get('mime')}: {name}]"})
            synthetic = False
    return out, synthetic and bool(out)


def _tool_result(d: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """A ``tool`` part's result block and when it was pruned (None: never)."""
    st = _obj(d.get("state"))
    status = st.get("status")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": d.get("callID")}
    if status == "completed":
        out = st.get("output")
        block.update(content=out if isinstance(out, str) else "", is_error=False)
    elif status == "error":
        err = st.get("error")
        block.update(content=err if isinstance(err, str) else "", is_error=True)
    else:
        block.update(content=INTERRUPTED, is_error=True)
    when = _obj(st.get("time"))
    return block, _ms(when.get("compacted")) if status == "completed" else None


def _ms(v: Any) -> int | None:
    """A time in ms since the epoch (a positive whole number), else None."""
    if type(v) is float and v.is_integer():
        v = int(v)
    return v if type(v) is int and v > 0 else None


def _steps(parts: list[Record]) -> list[tuple[list[Record], Record | None]]:
    """An assistant message's parts cut into steps (``step-start`` .. ``step-finish``), each
    with its finish part (None: the step did not finish)."""
    steps: list[tuple[list[Record], Record | None]] = []
    cur: list[Record] = []
    for p in parts:
        t = p.data.get("type")
        if t == "step-start" and cur:
            steps.append((cur, None))
            cur = []
        if t == "step-finish":
            steps.append((cur, p))
            cur = []
        elif t != "step-start":
            cur.append(p)
    if cur or not steps:
        steps.append((cur, None))
    return steps


# --- messages -------------------------------------------------------------------------------


def _user(m: Record, parts: list[Record], st: _State) -> None:
    ln = st.place[m.id]
    comp = next((p.data for p in parts if p.data.get("type") == "compaction"), None)
    if comp is not None:
        row = _Row(m, "user", [{"type": "text", "text": COMPACTION_PROMPT}], ln)
        row.kind_hint = "notice"
        row.note = "compaction request"
        st.rows.append(row)
        st.window.append(row)
        st.requests[m.id] = (row, comp)
        return
    blocks, synthetic = _user_blocks(parts)
    row = _Row(m, "user", blocks, ln)
    if synthetic:  # sent as a message of the conversation, not as instructions
        row.note = "synthetic"
    st.rows.append(row)
    st.window.append(row)


def _assistant(m: Record, parts: list[Record], st: _State, fnd: Findings) -> None:
    """An assistant message: a compaction's summary (:func:`_compaction`), else one row per
    step, each a model call, and its tool results."""
    d = m.data
    request = st.requests.get(str(d.get("parentID")))
    if request is not None and d.get("summary") is True:
        row = _Row(m, "assistant", [], st.place[m.id])
        _blocks([p for p in parts if p.data.get("type") not in STEP_PARTS], row, st)
        _call(row, tokens_of(d.get("tokens")), _model(d))
        st.rows.append(row)
        _compaction(m, row, request, st, fnd)
        return
    steps = _steps(parts)
    for i, (body, finish) in enumerate(steps):
        # one step: the message's usage; several: each finished step's own
        if len(steps) == 1:
            usage = d.get("tokens")
        else:
            usage = finish.data.get("tokens") if finish is not None else None
        tokens = tokens_of(usage)
        _step(m, None if len(steps) == 1 else i, body, tokens, st)
        total = _total(usage) if tokens else None
        st.last_total = total if total is not None else st.last_total
    err = d.get("error")
    if type(err) is dict:
        name = err.get("name") if isinstance(err.get("name"), str) else "an error"
        fnd.add("call_error", "info", None, f"message {m.id} ended with {name}")


def _step(m: Record, i: int | None, body: list[Record], tokens: dict[str, int], st: _State) -> None:
    """One step of an assistant message (``i``: its index in a message of several): its row,
    its call, its tool results' rows."""
    row = _Row(m, "assistant", [], st.place[m.id])
    if i is not None:
        row.uuid = f"{m.id}:{i + 1}"
    results = _blocks(body, row, st)
    if not row.content and not tokens and not results:
        return
    _call(row, tokens, _model(m.data))
    st.rows.append(row)
    st.window.append(row)
    st.rows += results
    st.window += results
    if tokens:
        st.inputs.call(tokens.get("input", 0))


def _call(row: _Row, tokens: dict[str, int], model: str | None) -> None:
    """``row`` the model call of ``tokens`` (none: no call recorded)."""
    row.model = model
    if tokens:
        row.tokens = dict(tokens)
        own_call(row, tokens, model)


def _model(d: dict[str, Any]) -> str | None:
    """``providerID/modelID`` (OpenCode's own name of a model: its prices and provider follow
    from it), ``modelID`` alone without a provider."""
    model, provider = d.get("modelID"), d.get("providerID")
    if not isinstance(model, str) or not model:
        return None
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model


def _total(t: Any) -> int | None:
    """OpenCode's count of a call (overflow.ts ``isOverflow``): ``total``, else ``input +
    output + cache.read + cache.write`` (OpenCode's fields: reasoning not in them).

    Examples
    --------
    >>> _total({"total": 0, "input": 5, "output": 2, "reasoning": 9, "cache": {"read": 3}})
    10
    """
    if type(t) is not dict:
        return None
    total = as_count(t.get("total"))
    if total:
        return total
    cache = _obj(t.get("cache"))
    parts = (t.get("input"), t.get("output"), cache.get("read"), cache.get("write"))
    return sum(as_count(v) or 0 for v in parts) or None


def _blocks(body: list[Record], row: _Row, st: _State) -> list[_Row]:
    """Fill ``row`` with a step's text, reasoning and tool calls; the tool results' rows."""
    results: list[_Row] = []
    for p in body:
        d = p.data
        t = d.get("type")
        if t == "text" and isinstance(d.get("text"), str) and d["text"]:
            row.content.append({"type": "text", "text": d["text"]})
        elif t == "reasoning" and isinstance(d.get("text"), str) and d["text"]:
            row.content.append({"type": "thinking", "thinking": d["text"]})
        elif t == "tool":
            st_ = _obj(d.get("state"))
            row.content.append(
                {
                    "type": "tool_use",
                    "id": d.get("callID"),
                    "name": d.get("tool"),
                    "input": tool_input(st_.get("input")),
                }
            )
            block, pruned = _tool_result(d)
            msg = Record(p.message_id, p.message_id, p.time_created, {})
            res = _Row(msg, "user", [block], st.line[p.id])
            res.uuid = p.id
            results.append(res)
            if pruned is not None:
                st.pruned.append((pruned, res))
            meta = _obj(st_.get("metadata"))
            child = meta.get("sessionId")
            if d.get("tool") == "task" and isinstance(child, str):
                st.spawned[child] = str(d.get("callID"))
    return results


def _compaction(
    m: Record,
    srow: _Row,
    request: tuple[_Row, dict[str, Any]],
    st: _State,
    fnd: Findings,
) -> None:
    """The summary ``srow`` of the compaction ``request``: its event, the new window."""
    crow, part = request
    srow.kind_hint = "compaction_summary"
    d = m.data
    if d.get("error") is not None or not d.get("finish"):
        srow.kind_hint = None
        srow.note = "compaction summary that did not finish"
        fnd.add(
            "compaction_failed",
            "info",
            None,
            f"message {m.id}: the compaction's summary has an error or did not finish; "
            "OpenCode ignores it",
        )
        st.window.append(srow)
        return
    st.answered.add(crow.message)
    before = [r for r in st.window if r is not crow]
    tail = part.get("tail_start_id")
    start = st.place.get(tail) if isinstance(tail, str) else None
    preserved = [] if start is None else [r for r in before if st.place[r.message] >= start]
    kept = set(map(id, preserved))
    trigger = "manual" if part.get("auto") is not True else "auto"
    if part.get("overflow") is True:
        trigger = "overflow"
    extra: dict[str, Any] = {k: part[k] for k in ("auto", "overflow", "tail_start_id") if k in part}
    ev = EventDraft(
        "compaction",
        st.place[crow.message],
        crow.created_at,
        m.id,
        trigger=trigger,
        pre_tokens=st.last_total,
        swept=[r for r in before if id(r) not in kept],
        preserved=preserved,
        summary=srow,
        extra=extra,
    )
    st.inputs.event(ev)
    st.events.append(ev)
    st.window = [crow, srow, *preserved]
    st.ahead.append(([crow, srow], preserved))


# --- pruning, display -----------------------------------------------------------------------


def _prunes(st: _State, messages: list[Record], end: int) -> None:
    """One microcompaction per prune: the tool results pruned before the same message, the
    event placed before the first message written after them."""
    # the first message written after a time: the latest time so far, at each message
    latest = list(itertools.accumulate((m.time_created or 0 for m in messages), max))
    groups: dict[int, list[tuple[int, _Row]]] = {}
    for when, row in st.pruned:
        i = bisect.bisect_right(latest, when)
        after = st.place[messages[i].id] if i < len(messages) else end
        groups.setdefault(after, []).append((when, row))
    for line, items in sorted(groups.items()):
        st.events.append(
            EventDraft(
                "microcompaction",
                line,
                min(w for w, _ in items),
                swept=[r for _, r in items],
                extra={"n_tool_ids": len(items)},
                summarises=False,
            )
        )
    st.events.sort(key=lambda e: e.line)


def _display_ahead(st: _State, rows: list[Any]) -> None:
    """OpenCode sends a compaction's request and summary before the tail it kept, which was
    written before them: those rows are displayed (``ord``) right before the first kept row."""
    for written, kept in st.ahead:
        if kept:
            first = min(r.seq for r in kept)
            for r in written:
                rows[r.seq - 1].ord = first - 1


# --- a session ----------------------------------------------------------------------------------

#: ``session`` columns kept in ``meta`` (adfkit's names).
META = {
    "title": "title",
    "directory": "cwd",
    "version": "version",
    "slug": "slug",
    "agent": "agent",
    "worktree": "project",
}


def _meta(session: dict[str, Any]) -> dict[str, str]:
    out = {mine: str(session[k]) for k, mine in META.items() if session.get(k)}
    if out.get("version"):
        out["agent_version"] = out["version"]
    return out


def parse_session(
    store: Rows,
    session: dict[str, Any],
    children: Callable[[str], list[dict[str, Any]]],
    *,
    above: tuple[str, ...] = (),
) -> ParsedTranscript:
    """One session of ``store`` (a row of :meth:`.store.OpenCodeStore.sessions`; an export
    document serves its one session the same way) and, as its subagents, its child sessions
    (``children(session id)``), nested ones too, listed after their parent's (as Claude Code's:
    ``parent_agent_id`` names a nested one's parent). ``above``: the sessions it descends from
    (a ``parent_id`` cycle is not followed).

    :raises MalformedRowError: a message or part row that is not a JSON object, a part of a
        message the session does not have (naming the store, the table and the row).
    """
    sid = str(session["id"])
    parsed, spawned = _session(store, session)
    for child in children(sid):
        cid = str(child["id"])
        if cid == sid or cid in above:
            continue
        sub = parse_session(store, child, children, above=(*above, sid))
        sub.agent_id = cid
        sub.parent_tool_use_id = spawned.get(cid)
        sub.parent_agent_id = sid if above else None
        nested, sub.subagents = sub.subagents, []
        parsed.subagents += [sub, *nested]
    return parsed


def _session(store: Rows, session: dict[str, Any]) -> tuple[ParsedTranscript, dict[str, str]]:
    """One session alone, and the sessions its ``task`` calls made (id -> call id)."""
    sid = str(session["id"])
    messages = store.messages(sid)
    parts = store.parts(sid, {m.id for m in messages})
    by_message: dict[str, list[Record]] = {}
    for p in parts:
        by_message.setdefault(p.message_id, []).append(p)
    st = _State()
    fnd = Findings()
    n = 0
    for m in messages:
        n += 1
        st.place[m.id] = n
        for p in by_message.get(m.id, []):
            n += 1
            st.line[p.id] = n
    for m in messages:
        role = m.data.get("role")
        mine = by_message.get(m.id, [])
        if role == "user":
            _user(m, mine, st)
        elif role == "assistant":
            _assistant(m, mine, st, fnd)
        else:
            fnd.add("unknown_role", "warning", None, f"message {m.id}: role {role!r}")
    for mid in st.requests.keys() - st.answered:
        fnd.add(
            "compaction_unanswered",
            "info",
            None,
            f"message {mid}: a compaction request no finished summary answered",
        )
    if not messages:
        fnd.add("empty_session", "info", None, "the session has no message")
    _prunes(st, messages, n + 1)
    rows, _ = number_rows(st.rows, [])
    _display_ahead(st, rows)
    parsed = ParsedTranscript(
        path=store.name,
        format=FORMAT,
        session_id=sid,
        meta=_meta(session),
        rows=rows,
        events=[ev.final() for ev in st.events],
        findings=fnd.done(),
        calls=final_calls(r.call for r in st.rows if r.call is not None),
    )
    return parsed, st.spawned
