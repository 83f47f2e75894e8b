"""Letta agent files (``.af``): one JSON document, one or more agents.

What the file holds (``letta/schemas/agent_file.py``, checked on the files letta-ai publishes
in letta-ai/agent-file and in Letta's tests/test_agent_files):

- **Agents.** A current file lists ``agents`` (a sleeptime group: the main agent and its
  sleeptime agent), each with ``name``, ``system``, ``agent_type``, ``llm_config`` (``model``,
  ``context_window``), ``compaction_settings`` (newer releases), ``block_ids`` into the
  document's ``blocks`` (``label``, ``value``, ``limit``, ``description``, ``read_only``),
  ``tool_ids``, ``messages`` and ``in_context_message_ids``, the ids of the messages the model
  is sent now, in the order it is sent them. An older file (Letta 0.6-0.9) is one agent's
  object with its blocks inline (``core_memory``) and ``in_context_message_indices`` (positions
  in ``messages``).
- **Messages.** ``role`` ``system`` (the system prompt with the memory blocks rendered in it;
  Letta writes a new one each time a block changes and puts it first in context), ``user``,
  ``assistant`` (``content``: ``text``, ``reasoning``; ``tool_calls`` in OpenAI's shape),
  ``tool`` (``tool_call_id``, and ``tool_returns``: one per call answered, parallel calls in
  one message), ``approval`` (a call waiting for approval, with ``tool_calls``; or the answer,
  ``approvals``), ``summary`` (the newest releases' compaction summary). Letta wraps what it
  sends the model as a user in JSON (``{"type": "user_message" | "heartbeat" | "login" |
  "system_alert", "message", "time"}``).
- **Compaction.** A summary is a user (or ``summary``) message whose whole content is a
  ``system_alert`` saying prior messages "have been hidden from view ... The following is a
  summary" (``letta/system.py`` ``package_summarize_message``, ``_no_counts``): older files
  state the counts in its text (``69 of 80 total messages``, ``summary of the previous 65
  messages``), newer ones may carry ``compaction_stats`` (``trigger``,
  ``context_tokens_before``/``after``, ``context_window``, ``messages_count_before``/
  ``after``). What it swept: the messages written before it that are not in context now and no
  earlier summary swept; the rows before it still in context are the rows it kept (the
  summary is sent before them). A current export holds only part of the history (Letta
  exports the messages in context): what it swept is then not in the file, and the swept
  count is that of the rows the file holds.
- **Usage.** No message records tokens (a step's usage is not exported): every call's tokens
  are NA. Each assistant message (and each approval request) is one model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._base.js import JSONError, parse_json, too_deep, too_many_containers
from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import (
    EventDraft,
    Findings,
    ParsedTranscript,
    RowDraft,
    final_calls,
    gc_paused,
    iso_ms,
    number_rows,
    own_call,
    tool_input,
)

FORMAT = "letta"
#: A larger document is refused before it is read (the whole document is parsed at once).
DEFAULT_MAX_BYTES = 256 * 1024**2
#: Nesting a document may have (real files: under 20 levels).
MAX_DEPTH = 200
#: The words of every summary Letta writes (letta/system.py).
_HIDDEN = "have been hidden from view"
_COUNTS = re.compile(r"prior messages \((\d+) of (\d+) total messages\) have been hidden")
_SUMMARISED = re.compile(r"summary of the previous (\d+) messages")
_EVICTED = re.compile(r"Note: (\d+) messages from the beginning of the conversation")
#: ``compaction_stats.trigger`` of an automatic compaction (letta_agent_v3.py).
_AUTO_TRIGGERS = frozenset({"context_window_exceeded", "post_step_context_check"})
#: Packaged user messages Letta writes itself (not the user's words).
_NOTICES = frozenset({"heartbeat", "login", "system_alert"})


@dataclass
class Block:
    """One memory block of an agent: ``label``, ``value``, and what the file says of it."""

    label: str
    value: str
    limit: int | None = None
    description: str | None = None
    read_only: bool | None = None
    created_at: int | None = None
    updated_at: int | None = None


@dataclass
class LettaAgent:
    """One agent of an agent file: its transcript, memory blocks and settings."""

    parsed: ParsedTranscript
    #: Its name in the file (:func:`member_names`): what ``file.af#NAME`` names.
    name: str = ""
    blocks: list[Block] = field(default_factory=list)
    context_window: int | None = None
    compaction: dict[str, Any] = field(default_factory=dict)


# --- the document ---------------------------------------------------------------------------


def load_document(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    """The agent file's document (decoded twice when the file holds it as a JSON string).

    :raises NotTranscriptError: not a regular file, larger than ``max_bytes``, not JSON, too
        many or too deeply nested containers, or not an agent file's object.
    """
    with open_text_stream(path) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as e:
            raise NotTranscriptError(f"cannot read the file ({e.strerror})", path=path) from None
    if len(data) > max_bytes:
        raise NotTranscriptError(
            f"larger than {max_bytes:,} bytes: not read (a Letta agent file is parsed whole)",
            path=path,
        )
    doc = _json(data, path)
    if isinstance(doc, str):  # published files that hold the document as a JSON string
        doc = _json(doc.encode("utf-8", "surrogatepass"), path)
    if not isinstance(doc, dict) or not (
        isinstance(doc.get("agents"), list) or "agent_type" in doc
    ):
        raise NotTranscriptError("not a Letta agent file (no agents in the document)", path=path)
    return doc


def _json(data: bytes, path: Path) -> Any:
    why = too_many_containers(data)
    if why:
        raise NotTranscriptError(f"the document {why}: not parsed", path=path)
    try:
        doc = parse_json(data)
    except (JSONError, RecursionError) as e:
        raise NotTranscriptError(f"not a JSON document ({str(e)[:120]})", path=path) from None
    where = too_deep(doc, MAX_DEPTH)
    if where:
        raise NotTranscriptError(
            f"nested more than {MAX_DEPTH} levels deep at {where[:80]}: not read", path=path
        )
    return doc


def agents_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The agents' objects: a current file's ``agents``, an older file's one agent."""
    if isinstance(doc.get("agents"), list):
        return [a for a in doc["agents"] if isinstance(a, dict)]
    return [doc]


def member_names(agents: list[dict[str, Any]]) -> list[str]:
    """Each agent's name in the file: its ``name``, else its ``id`` in the file, else
    ``agent-<n>``; a name two agents share gets the id (or position) after it."""
    raw = [_str(a.get("name")) or _str(a.get("id")) or f"agent-{i}" for i, a in enumerate(agents)]
    out = []
    for i, (n, a) in enumerate(zip(raw, agents, strict=True)):
        if raw.count(n) > 1:
            n = f"{n} ({_str(a.get('id')) or i})"
        out.append(n)
    return out


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


# --- content --------------------------------------------------------------------------------


def _text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


def blocks_of(content: Any) -> list[dict[str, Any]]:
    """Letta message content -> ADF blocks (``text``; ``reasoning`` as thinking; images and
    other parts by their type).

    Examples
    --------
    >>> blocks_of([{"type": "reasoning", "reasoning": "r"}, {"type": "text", "text": "a"}])
    [{'type': 'thinking', 'thinking': 'r'}, {'type': 'text', 'text': 'a'}]
    >>> blocks_of("plain")
    [{'type': 'text', 'text': 'plain'}]
    """
    if isinstance(content, str):
        return [_text(content)]
    out: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if type(c) is not dict:
            continue
        t = c.get("type")
        if t == "text" and isinstance(c.get("text"), str):
            out.append(_text(c["text"]))
        elif t == "reasoning" and isinstance(c.get("reasoning"), str):
            out.append({"type": "thinking", "thinking": c["reasoning"]})
        elif t in ("omitted_reasoning", "redacted_reasoning"):
            out.append({"type": "redacted_thinking"})
        elif isinstance(t, str):
            out.append({"type": t})
    return out


def _tool_uses(calls: Any) -> list[dict[str, Any]]:
    out = []
    for c in calls if isinstance(calls, list) else []:
        if type(c) is not dict:
            continue
        f = _dict(c.get("function"))
        out.append(
            {
                "type": "tool_use",
                "id": _str(c.get("id")),
                "name": _str(f.get("name")),
                "input": tool_input(f.get("arguments")),
            }
        )
    return out


def _returns(returns: Any) -> list[dict[str, Any]]:
    """``tool_returns`` / ``approvals`` -> tool_result blocks (a denied approval: an error
    whose text is the reason)."""
    out = []
    for r in returns if isinstance(returns, list) else []:
        if type(r) is not dict:
            continue
        if r.get("type") == "approval" or "approve" in r:
            denied = r.get("approve") is False
            reason = r.get("reason")
            text = (
                "approved" if not denied else f"denied: {reason if isinstance(reason, str) else ''}"
            )
            out.append(
                {
                    "type": "tool_result",
                    "tool_use_id": _str(r.get("tool_call_id")),
                    "content": text,
                    "is_error": denied,
                }
            )
            continue
        resp = r.get("func_response")
        out.append(
            {
                "type": "tool_result",
                "tool_use_id": _str(r.get("tool_call_id")),
                "content": resp if isinstance(resp, str) else orjson.dumps(resp).decode(),
                "is_error": r.get("status") == "error",
            }
        )
    return out


def packaged(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The JSON object a user message's only text block holds (Letta's packaged messages),
    else None.

    Examples
    --------
    >>> packaged([{"type": "text", "text": '{"type": "heartbeat", "reason": "r"}'}])
    {'type': 'heartbeat', 'reason': 'r'}
    >>> packaged([{"type": "text", "text": "hello"}]) is None
    True
    """
    if len(blocks) != 1 or blocks[0].get("type") != "text":
        return None
    t = blocks[0]["text"].strip()
    if not (t.startswith("{") and t.endswith("}")):
        return None
    try:
        obj = parse_json(t)
    except JSONError:
        return None
    return obj if isinstance(obj, dict) else None


def is_summary(pkg: dict[str, Any] | None) -> bool:
    """Whether a packaged message is a compaction summary: a ``system_alert`` whose message
    says prior messages have been hidden."""
    if pkg is None or pkg.get("type") != "system_alert":
        return False
    m = pkg.get("message")
    return isinstance(m, str) and _HIDDEN in m


# --- the agent ------------------------------------------------------------------------------


_NAIVE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?")


def utc_ms(value: Any) -> int | None:
    """Milliseconds since the epoch of a Letta time: ISO text, with a zone (current files) or
    without (older files write UTC without saying so: taken as UTC).

    Examples
    --------
    >>> utc_ms("2025-04-01T03:47:27.492924") == utc_ms("2025-04-01T03:47:27.492924+00:00")
    True
    """
    if isinstance(value, str) and _NAIVE.fullmatch(value):
        value += "+00:00"
    return iso_ms(value)


class _LRow(RowDraft):
    __slots__ = ("index", "pkg")

    def __init__(self, m: dict[str, Any], index: int, role: str, content: list[Any]) -> None:
        super().__init__(role, content, index + 1, utc_ms(m.get("created_at")))
        self.uuid = _str(m.get("id"))
        self.index = index
        self.pkg: dict[str, Any] | None = None


@dataclass
class _State:
    rows: list[_LRow] = field(default_factory=list)
    summaries: list[_LRow] = field(default_factory=list)


def _row(m: dict[str, Any], i: int, fnd: Findings) -> _LRow | None:
    role = m.get("role")
    content = blocks_of(m.get("content"))
    calls = _tool_uses(m.get("tool_calls"))
    if role == "assistant" or (role == "approval" and calls):
        row = _LRow(m, i, "assistant", content + calls)
        row.model = _str(m.get("model"))
        own_call(row, {}, row.model)  # Letta exports no usage: the call's tokens are NA
        if role == "approval":
            row.note = "waiting for approval"
        return row
    if role == "tool":
        results = _returns(m.get("tool_returns"))
        if not results:
            text = "\n".join(b["text"] for b in content if b.get("type") == "text")
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": _str(m.get("tool_call_id")),
                    "content": text,
                    "is_error": False,
                }
            ]
        return _LRow(m, i, "user", results)
    if role == "approval":
        row = _LRow(m, i, "user", _returns(m.get("approvals")) or content)
        row.kind_hint = "message"
        row.note = "approval"
        return row
    if role == "system":
        row = _LRow(m, i, "user", content)
        row.kind_hint = "context"
        return row
    if role in ("user", "summary"):
        row = _LRow(m, i, "user", content)
        pkg = packaged(content)
        row.pkg = pkg
        if role == "summary" or is_summary(pkg):
            row.kind_hint = "compaction_summary"
        elif pkg is not None and pkg.get("type") in _NOTICES:
            row.kind_hint = "notice"
            row.note = str(pkg.get("type"))
        else:
            row.kind_hint = "message"
        return row
    fnd.add("unknown_role", "warning", i + 1, f"message of role {str(role)[:40]!r}: skipped")
    return None


def _in_context(agent: dict[str, Any], msgs: list[Any], fnd: Findings) -> list[int] | None:
    """Positions in ``messages`` of the messages in context, in the order they are sent;
    None when the agent states none."""
    ids = agent.get("in_context_message_ids")
    if isinstance(ids, list):
        where = {m.get("id"): i for i, m in enumerate(msgs) if isinstance(m, dict)}
        out = []
        for x in ids:
            if x in where:
                out.append(where[x])
            else:
                fnd.add(
                    "missing_message",
                    "warning",
                    None,
                    f"message {str(x)[:60]!r} in context is not in the file",
                )
        return out
    idx = agent.get("in_context_message_indices")
    if isinstance(idx, list):
        ok = [i for i in idx if type(i) is int and 0 <= i < len(msgs)]
        if len(ok) != len(idx):
            fnd.add(
                "missing_message",
                "warning",
                None,
                "a message position in context is not in the file",
            )
        return ok
    return None


def _compaction(
    row: _LRow, before: list[_LRow], ctx: set[int], taken: set[int], last: bool
) -> EventDraft:
    pkg = row.pkg or {}
    text = _str(pkg.get("message")) or ""
    stats = _dict(pkg.get("compaction_stats"))
    extra: dict[str, Any] = {}
    m = _COUNTS.search(text)
    if m:
        extra["hidden_message_count"] = int(m.group(1))
        extra["total_message_count"] = int(m.group(2))
    m = _SUMMARISED.search(text)
    if m:
        extra["summary_message_count"] = int(m.group(1))
    m = _EVICTED.search(text)
    if m:
        extra["evicted_message_count"] = int(m.group(1))
    trig = stats.get("trigger")
    if isinstance(trig, str):
        extra["letta_trigger"] = trig
    for k in ("messages_count_before", "messages_count_after"):
        n = as_count(stats.get(k))
        if n is not None:
            extra[k] = n
    prompts = [r for r in before if r.kind_hint == "context"]
    current = prompts[-1].index if prompts else None  # sent with the summary: not swept
    out = [r for r in before if r.index not in ctx and r.index not in taken and r.index != current]
    held: list[_LRow] = []
    n_after = extra.get("messages_count_after")
    if not last and n_after is not None:  # it kept its newest messages: the system prompt,
        n_kept = max(n_after - 2, 0)  # the summary and those (letta/services/summarizer)
        body = [r for r in out if r.kind_hint != "context"]
        held = body[len(body) - n_kept :] if n_kept else []
    kept_ids = {id(r) for r in held}
    swept = [r for r in out if id(r) not in kept_ids]
    kept = [r for r in before if r.index in ctx and r.kind_hint != "context"] + held
    extra["swept_exact"] = last or n_after is not None
    if not swept:  # a summary always hid messages: these are not in the file (an export of
        extra["swept_held"] = False  # the messages in context only)
    return EventDraft(
        "compaction",
        row.lines[0],
        row.created_at,
        row.uuid,
        trigger=(
            ("auto" if trig in _AUTO_TRIGGERS else "manual" if trig == "manual" else None)
            if isinstance(trig, str)
            else None
        ),
        pre_tokens=as_count(stats.get("context_tokens_before")),
        post_tokens=as_count(stats.get("context_tokens_after")),
        swept=swept,
        preserved=kept,
        summary=row,
        extra=extra,
        context_window=as_count(stats.get("context_window")),
    )


def parse_agent(path: Path, agent: dict[str, Any], name: str, doc: dict[str, Any]) -> LettaAgent:
    """One agent of the document as a :class:`LettaAgent`."""
    fnd = Findings()
    msgs = agent.get("messages")
    msgs = msgs if isinstance(msgs, list) else []
    st = _read_rows(msgs, fnd)
    order = _in_context(agent, msgs, fnd)
    ctx = set(order) if order is not None else {r.index for r in st.rows}
    events, taken = _compactions(st, ctx)
    rows = _numbered(st)
    stale = [r for r in st.rows if r.index not in ctx and r.index not in taken]
    if stale and agent.get("message_buffer_autoclear") is True:
        # Letta drops the messages after each turn, without a summary: a clear
        last = stale[-1]
        events.append(
            EventDraft("clear", last.lines[0], last.created_at, swept=stale, summarises=False)
        )
    elif stale:
        fnd.add(
            "out_of_context",
            "info",
            stale[0].lines[0],
            f"{len(stale)} message(s) out of context with no summary after them "
            "(a system prompt Letta wrote again, or messages Letta dropped)",
        )
    llm = _dict(agent.get("llm_config"))
    parsed = ParsedTranscript(
        path=str(path),
        format=FORMAT,
        session_id=None,  # an agent has a name, no session id (its ``id`` is per file)
        meta=_meta(agent, llm, doc),
        rows=rows,
        events=[ev.final() for ev in sorted(events, key=lambda e: e.line)],
        findings=fnd.done(),
        calls=final_calls([r.call for r in st.rows if r.call is not None]),
    )
    cs = agent.get("compaction_settings")
    return LettaAgent(
        parsed=parsed,
        name=name,
        blocks=_blocks(agent, doc),
        context_window=as_count(llm.get("context_window")),
        compaction=cs if isinstance(cs, dict) else {},
    )


def _read_rows(msgs: list[Any], fnd: Findings) -> _State:
    """The rows of the agent's messages, in the file's order, and its summaries."""
    st = _State()
    for i, m in enumerate(msgs):
        if type(m) is not dict:
            fnd.add("bad_record", "warning", i + 1, "message that is not an object: skipped")
            continue
        row = _row(m, i, fnd)
        if row is None:
            continue
        st.rows.append(row)
        if row.kind_hint == "compaction_summary":
            st.summaries.append(row)
    return st


def _compactions(st: _State, ctx: set[int]) -> tuple[list[EventDraft], set[int]]:
    """One compaction per summary, in order, and the positions of the rows they swept. Each
    summary is placed (``ord``: the position of its first kept row) before the rows it kept."""
    events: list[EventDraft] = []
    taken: set[int] = set()
    exact = True
    for k, s in enumerate(st.summaries):
        before = [r for r in st.rows if r.index < s.index]
        ev = _compaction(s, before, ctx, taken, k == len(st.summaries) - 1)
        # an earlier compaction that may have claimed rows this one swept makes it uncertain
        exact = ev.extra["swept_exact"] = exact and ev.extra["swept_exact"]
        taken.update(r.index for r in ev.swept if isinstance(r, _LRow))
        events.append(ev)
        if ev.preserved:  # the summary is sent before the rows it kept
            s.ord = min(r.index for r in ev.preserved if isinstance(r, _LRow))  # seq - 1 below
    return events, taken


def _numbered(st: _State) -> list[Any]:
    """The rows numbered, each summary's ``ord`` turned from a position into the seq before
    its first kept row."""
    rows, _ = number_rows(st.rows, [])
    by_index = {r.index: r for r in st.rows}
    for s in st.summaries:
        if s.ord is not None:
            s.ord = by_index[s.ord].seq - 1
            rows[s.seq - 1].ord = s.ord
    return rows


def _meta(agent: dict[str, Any], llm: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """What the file says of the agent (its name, id, type, model...), the keys it states."""
    return {
        k: v
        for k, v in {
            "agent_name": _str(agent.get("name")),
            "letta_agent_id": _str(agent.get("id")),
            "agent_type": _str(agent.get("agent_type")),
            "description": _str(agent.get("description")),
            "agent_version": _str(agent.get("version")),
            "model": _str(llm.get("model")),
            "created_at": _str(agent.get("created_at")) or _str(doc.get("created_at")),
        }.items()
        if v
    }


def _blocks(agent: dict[str, Any], doc: dict[str, Any]) -> list[Block]:
    """The agent's memory blocks: a current file's ``block_ids`` into the document's
    ``blocks``, an older file's ``core_memory``."""
    if isinstance(agent.get("core_memory"), list):
        raw = [b for b in agent["core_memory"] if isinstance(b, dict)]
    else:
        ids = _list(agent.get("block_ids"))
        pool = _list(doc.get("blocks"))
        by_id = {b.get("id"): b for b in pool if isinstance(b, dict)}
        raw = [by_id[i] for i in ids if i in by_id]
        raw += [b for b in agent.get("memory_blocks") or [] if isinstance(b, dict)]
    out = []
    for b in raw:
        label = _str(b.get("label"))
        if label is None:
            continue
        val = b.get("value")
        out.append(
            Block(
                label=label,
                value=val if isinstance(val, str) else "",
                limit=as_count(b.get("limit")),
                description=_str(b.get("description")),
                read_only=b.get("read_only") if isinstance(b.get("read_only"), bool) else None,
                created_at=utc_ms(b.get("created_at")),
                updated_at=utc_ms(b.get("updated_at")),
            )
        )
    return out


def parse_letta(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> list[LettaAgent]:
    """Every agent of the agent file at ``path``, in the file's order.

    :raises NotTranscriptError: not a Letta agent file, or one that cannot be read (see
        :func:`load_document`).
    """
    p = Path(path).expanduser()
    with gc_paused():
        doc = load_document(p, max_bytes)
        agents = agents_of(doc)
        names = member_names(agents)
        return [parse_agent(p, a, n, doc) for a, n in zip(agents, names, strict=True)]
