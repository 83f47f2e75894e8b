"""Replay of what happened: the context window the model saw at every call.

Rows of the history are walked in creation (seq) order while a live set is kept: every
compaction or clear removes the rows it swept (ADF_FORMAT.md §5.4-§5.5, §6). At every model call
(assistant row) the live set is the context window the model saw; its size is measured with the
runtime's own estimator (§9.1): context rows excluded except delivered ``loop_inject`` v2 text
(and, where the source says its context rows are sent inside the messages,
``AgentSource.context_in_messages``, every context row but the system part), 16 characters per
message, ``ceil(text / 3.5) + ceil(media / 100)`` over the sums. The walk
(:func:`replay_state`) is shared by :mod:`adfkit._analysis.compactions` and
:mod:`adfkit._analysis.simulate`.
"""

from __future__ import annotations

import array
import bisect
import dataclasses
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._analysis.context import superseded_injects
from adfkit._analysis.settings import threshold_at, threshold_schedule
from adfkit._analysis.timeline import gap_between, resets, restarts
from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfError
from adfkit._base.js import js_length
from adfkit._core.history import REAPPENDED_TAIL, reappended_copies
from adfkit._core.rows import (
    MESSAGE_OVERHEAD,
    context_body,
    estimate_tokens,
    parse_content,
    parse_context_header,
)
from adfkit._core.source import AgentSource, Key, WindowChange

#: Conversation parts of a call: the columns of :meth:`AgentFile.replay` (and
#: :meth:`AgentFile.composition`) that sum to its estimate, by kind of row: compaction summary,
#: messages (chat, triggers, notices), assistant turns, tool results, delivered loop_inject.
PARTS = (
    "summary_tokens",
    "message_tokens",
    "assistant_tokens",
    "tool_result_tokens",
    "inject_tokens",
)


#: Columns of :meth:`AgentFile.replay` renamed in :meth:`AgentFile.composition`.
_COMPOSITION_FROM_REPLAY = {
    "n_context_rows": "n_messages",
    "est_chars": "context_chars",
    "est_media_chars": "context_media_chars",
}


#: Context categories the model receives outside the conversation (ADF_FORMAT.md §7): the
#: system part and the trailing dynamic-instructions message.
#: A manual compaction keeps this many rows (the ``loop_compact`` call and its result).
MANUAL_TAIL = REAPPENDED_TAIL

_PROMPT_PARTS = ("system_prompt", "dynamic_instructions")


def as_int(v: Any) -> int | None:
    return None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else int(v)


@dataclass(slots=True)
class ReplayRow:
    seq: int
    key: int
    kind: str
    sub: str | None
    conv: bool  # counted by the estimator (part of the conversation)
    chars: int
    media: int
    call: bool  # a model call (assistant row that is not a re-appended copy)
    tin: int | None
    tout: int | None
    ttot: int | None
    cw: int | None
    cr: int | None
    ord: int | None
    audit_id: int | None
    part: int  # index into PARTS when ``conv``, else -1
    inject: bool  # a loop_inject row (v2 or the old form), delivered or not
    body: int  # JS length of a context row's text without its header (0 for other rows)
    # the history's ``content`` column and this row's position in it: read when needed, not
    # copied (a copy would double the memory the history's text takes)
    contents: Any = None
    pos: int = 0

    @property
    def content(self) -> str:
        """The row's ``content`` JSON text (``[]`` when it has none)."""
        v = self.contents[self.pos] if self.contents is not None else None
        return v if isinstance(v, str) else "[]"


#: Part (index into :data:`adfkit._analysis.context.PARTS`) of a conversation row, by kind; the rest
#: (chat messages, triggers, notices, unknown rows) are messages (1); delivered injects are 4.
_PART_OF = {"compaction_summary": 0, "assistant": 2, "tool_result": 3, "context": 4}


#: A model call's window: the first ``n`` seqs of a list shared with other calls.
Window = tuple[list[int], int]


@dataclass
class ReplayState:
    rows: dict[int, ReplayRow]
    order: list[int]  # seqs in creation order
    events: pd.DataFrame
    swept: list[list[int]]  # per event: swept seqs present in history, display order
    tails: list[list[int]]  # per event: preserved tail (original seqs)
    forced: list[bool]  # per event: the history around it is incomplete
    manual: list[bool]
    instructions: list[str | None]
    calls: list[int]
    # call seq -> its window: the conversation seqs, display order (see :meth:`window`)
    ctx: dict[int, Window]
    est: dict[int, tuple[int, int, int]]  # call seq -> (chars incl. overhead, media, n_conv)
    # per call, in call order: each part's chars incl. overhead, then each part's media (PARTS
    # order): one flat array, not a tuple of pairs per call (half a million objects at x16)
    parts: array.array[int]
    # call seq -> the estimate of the conversation rebuilt at the last event before it
    rebuilt: dict[int, int] = field(default_factory=dict)
    reappended: set[int] = field(default_factory=set)
    fallback: set[int] = field(default_factory=set)  # events whose tail was re-appended
    # the columns of ``events`` as lists, per event
    kinds: list[str] = field(default_factory=list)  # compaction or clear
    summaries: list[int | None] = field(default_factory=list)
    boundaries: list[int] = field(default_factory=list)
    audit_ids: list[tuple[int, ...]] = field(default_factory=list)
    # per event: the trigger the record states (auto/manual), None when it does not
    triggers: list[str | None] = field(default_factory=list)
    # per event: the record holds the summary encrypted (WindowChange.summary_encrypted)
    encrypted: list[bool] = field(default_factory=list)
    stated: bool = False  # the source states each event's sweep (AgentSource.window_changes)

    def window(self, call: int) -> tuple[int, ...]:
        """The conversation seqs in the window of a model call, in display order."""
        seqs, n = self.ctx[call]
        return tuple(seqs[:n])

    def windows(self) -> list[tuple[int, ...]]:
        """:meth:`window` of every call, in call order: each shared list made a tuple once,
        each window a slice of it (one allocation of its own size)."""
        frozen: dict[int, tuple[int, ...]] = {}
        out = []
        for c in self.calls:
            seqs, n = self.ctx[c]
            t = frozen.get(id(seqs))
            if t is None:
                t = frozen[id(seqs)] = tuple(seqs)
            out.append(t if n == len(t) else t[:n])
        return out


def _ints(s: pd.Series) -> list[int | None]:
    """:func:`as_int` of every value of a column, in one pass over an integer column's
    values (None where NA)."""
    if not pd.api.types.is_integer_dtype(s.dtype):
        return [as_int(v) for v in s.tolist()]
    a = s.array  # the values and the mask as arrays: no Series made on the way
    vals: list[int | None] = a.to_numpy(dtype="int64", na_value=0).tolist()
    na = np.asarray(a.isna(), dtype=bool)
    if na.any():
        for i in np.flatnonzero(na).tolist():
            vals[i] = None
    return vals


#: Integer columns of the history a :class:`ReplayRow` holds (besides ``seq``).
_INT_COLUMNS = (
    "ord", "chars", "media_chars", "tokens_input", "tokens_output", "tokens_total",
    "tokens_cache_write", "tokens_cache_read", "audit_id",
)  # fmt: skip


def _rows(h: pd.DataFrame, context_sent: bool = False) -> dict[int, ReplayRow]:
    """The history's rows by seq. A context row is part of the conversation only when it is
    ``loop_inject`` v2 text that was delivered: a keyed update superseded before the next call
    was never sent (ADF_FORMAT.md §7); with ``context_sent`` (the source sends its context rows
    inside the messages: Claude Code's attachments) every context row but the system part is,
    as an inject."""
    out: dict[int, ReplayRow] = {}
    ints = {c: _ints(h[c]) for c in _INT_COLUMNS}
    seqs: list[int] = h["seq"].to_numpy(dtype="int64").tolist()
    kinds = [str(k) for k in h["kind"].tolist()]
    subs = [v if isinstance(v, str) else None for v in schema.plain(h["subkind"])]
    contents = h["content"].array
    # the text of the context rows only (their headers and bodies)
    at_ctx = [i for i, k in enumerate(kinds) if k == "context"]
    ctx_text = h["text"].array.take(np.array(at_ctx, dtype=np.intp)).tolist()
    texts = dict(zip(at_ctx, ctx_text, strict=True))
    headers: dict[int, dict[str, str]] = {}
    for i, text in texts.items():
        if isinstance(text, str):
            headers[i] = parse_context_header(text) or {}
    keyed = [
        (seqs[i], hdr["category"], hdr["key"])
        for i, hdr in headers.items()
        if hdr.get("loop_inject") == "v2" and "key" in hdr
    ]
    called = [q for q, k in zip(seqs, kinds, strict=True) if k == "assistant"]
    calls = np.sort(np.array(called, dtype="int64"))
    gone = superseded_injects(keyed, calls) if keyed else set()
    for i, (seq, ordv, kind, sub, chars, media, tin, tout, ttot, cw, cr, aid) in enumerate(
        zip(
            seqs,
            ints["ord"],
            kinds,
            subs,
            ints["chars"],
            ints["media_chars"],
            ints["tokens_input"],
            ints["tokens_output"],
            ints["tokens_total"],
            ints["tokens_cache_write"],
            ints["tokens_cache_read"],
            ints["audit_id"],
            strict=True,
        )
    ):
        conv, inject, body = True, False, 0  # every row but a context row is conversation
        if kind == "context":
            hdr = headers.get(i, {})
            conv, inject = _context_sent(hdr, seq in gone, context_sent)
            if not inject and hdr.get("category") in _PROMPT_PARTS:
                body = js_length(context_body(texts[i]))
        # by position, in the order of ReplayRow's fields (keywords cost 3x: 160,436 rows at
        # big-runner x16)
        out[seq] = ReplayRow(
            seq,  # seq
            ordv if ordv is not None else seq,  # key
            kind,
            sub,
            conv,
            chars or 0,  # chars
            media or 0,  # media
            kind == "assistant",  # call
            tin,
            tout,
            ttot,
            cw,
            cr,
            ordv,  # ord
            aid,  # audit_id
            _PART_OF.get(kind, 1) if conv else -1,  # part
            inject,
            body,
            contents,
            i,  # pos
        )
    return out


def _context_sent(hdr: dict[str, str], superseded: bool, context_sent: bool) -> tuple[bool, bool]:
    """``(conv, inject)`` of a context row with this header (:func:`_rows`): delivered
    ``loop_inject`` v2 text is conversation, the rest is not, unless the source sends its
    context rows in the messages (then every one but the system part is, as an inject)."""
    v2 = hdr.get("loop_inject") == "v2"
    inject = v2 or hdr.get("category") == "loop_inject"
    conv = v2 and not superseded
    if context_sent and not conv and hdr.get("category") not in _PROMPT_PARTS:
        conv = inject = True
    return conv, inject


class _Live:
    """The live rows during the walk of :func:`_build_replay`, kept so that a model call costs
    no rebuild of its window: the conversation rows in display order (a row is appended, or
    inserted where its ``ord`` puts it), the window's characters and media per part as running
    sums, and the live rows by audit id (what a lost summary's archive or a repair names).

    ``low`` and ``high`` give ``chat_tokens_before`` at an epoch's first call (:func:`_replay`):
    the conversation the runtime rebuilt at the last event (boundary ``lim``), at the rows'
    recorded sizes: the rows written at or before ``lim``, and the summaries written after it.
    """

    def __init__(self, recorded: dict[int, ReplayRow]) -> None:
        self.recorded = recorded  # the rows as the history holds them (before any stub)
        self.rows: dict[int, ReplayRow] = {}  # seq -> the row as it is in the window now
        self.by_aid: dict[int | None, dict[int, None]] = {}
        self.conv: list[int] = []  # conversation seqs in display order
        self.keys: list[tuple[int, int]] = []  # their (key, seq)
        self.chars = [0] * len(PARTS)  # per part: characters, 16 per message included
        self.media = [0] * len(PARTS)
        self.total = [0, 0]  # recorded (chars incl. overhead, media) of the conv rows
        self.lim = 0
        self.low = [0, 0]  # the same, of the conv rows at or before lim
        self.high = [0, 0]  # the same, of the summaries after lim

    def __contains__(self, q: int) -> bool:
        return q in self.rows

    def __getitem__(self, q: int) -> ReplayRow:
        return self.rows[q]

    def seqs(self) -> list[int]:
        return list(self.rows)

    def add(self, r: ReplayRow, before: int | None = None) -> None:
        """Add a row to the window, in display order; ``before``: a seq of the window that the
        row is placed just before (a summary the agent sends ahead of the rows it kept)."""
        self.rows[r.seq] = r
        self.by_aid.setdefault(r.audit_id, {})[r.seq] = None
        if not r.conv:
            return
        k = (r.key, r.seq)
        if before is not None and before in self.conv:
            i = self.conv.index(before)
            self.keys.insert(i, self.keys[i])
            self.conv = [*self.conv[:i], r.seq, *self.conv[i:]]
        elif not self.keys or k > self.keys[-1]:
            self.keys.append(k)
            self.conv.append(r.seq)
        else:  # an ord places it before rows written earlier: a new list (see window())
            i = bisect.bisect(self.keys, k)
            self.keys.insert(i, k)
            self.conv = [*self.conv[:i], r.seq, *self.conv[i:]]
        self._count(r, 1)
        size = (r.chars + MESSAGE_OVERHEAD, r.media)
        _add_to(self.total, size, 1)
        if r.seq <= self.lim:
            _add_to(self.low, size, 1)
        elif r.kind == "compaction_summary":
            _add_to(self.high, size, 1)

    def _count(self, r: ReplayRow, sign: int) -> None:
        self.chars[r.part] += sign * (r.chars + MESSAGE_OVERHEAD)
        self.media[r.part] += sign * r.media

    def remove(self, seqs: list[int]) -> None:
        conv = False
        for q in seqs:
            r = self.rows.pop(q)
            del self.by_aid[r.audit_id][q]
            if r.conv:
                self._count(r, -1)
                o = self.recorded[q]
                _add_to(self.total, (o.chars + MESSAGE_OVERHEAD, o.media), -1)
                conv = True
        if conv:
            keep = [i for i, q in enumerate(self.conv) if q in self.rows]
            self.conv = [self.conv[i] for i in keep]
            self.keys = [self.keys[i] for i in keep]

    def stub(self, q: int, chars: int) -> None:
        """Leave the row in the window with its content replaced by ``chars`` characters."""
        r = self.rows[q]
        new = dataclasses.replace(r, chars=chars, media=0)
        if r.conv:
            self._count(r, -1)
            self._count(new, 1)
        self.rows[q] = new

    def of_audits(self, ids: tuple[int, ...]) -> list[int]:
        """The live rows stored in the given archives."""
        return [q for a in set(ids) for q in self.by_aid.get(a, ())]

    def event_done(self, bound: int) -> None:
        """An event with this boundary was applied: every live row is at or before it."""
        self.lim = bound
        self.low = list(self.total)
        self.high = [0, 0]

    def window(self, parts: array.array[int]) -> tuple[Window, tuple[int, int, int]]:
        """A model call's window: its conv seqs (the first ``n`` of ``conv``: that list is
        only ever appended to, a change elsewhere makes a new one, so the calls between two
        events share one list) and ``(chars, media, n)``; its chars, then media, per part
        appended to ``parts``."""
        n = len(self.conv)
        parts.extend(self.chars)
        parts.extend(self.media)
        return (self.conv, n), (sum(self.chars), sum(self.media), n)

    def rebuilt(self) -> int:
        """``chat_tokens_before`` if this call is its epoch's first."""
        return estimate_tokens(self.low[0] + self.high[0], self.low[1] + self.high[1])


def _add_to(acc: list[int], size: tuple[int, int], sign: int) -> None:
    acc[0] += sign * size[0]
    acc[1] += sign * size[1]


@dataclass
class _Events:
    """The columns of :meth:`AgentSource.events` as lists, and what the walk finds per event."""

    bounds: list[int]
    summ: list[int | None]
    kinds: list[str]
    aids: list[tuple[int, ...]]
    lost: list[bool]
    changes: list[WindowChange] | None
    single: set[int]  # seqs stored once: a repair's rows that were not written back
    swept: list[list[int]]
    tails: list[list[int]]


def _events_of(src: AgentSource, h: pd.DataFrame) -> _Events:
    ev = src.events()
    n = len(ev)
    kinds = [str(e) for e in ev["event"].tolist()]
    # the seqs stored once are read by a repair only (an ADF file's): found then
    single = (
        set(h["seq"].to_numpy(dtype="int64")[(h["copies"] == 1).to_numpy(dtype=bool)].tolist())
        if "repair" in kinds
        else set()
    )
    return _Events(
        bounds=[int(b) for b in ev["boundary_seq"].tolist()],
        summ=[as_int(s) for s in ev["summary_seq"].tolist()],
        kinds=kinds,
        aids=[tuple(a) for a in ev["audit_ids"].tolist()],
        lost=[bool(x) for x in ev["summary_lost"].tolist()],
        changes=src.window_changes(),
        single=single,
        swept=[[] for _ in range(n)],
        tails=[[] for _ in range(n)],
    )


def _display(live: _Live, seqs: list[int]) -> list[int]:
    return sorted(seqs, key=lambda q: (live[q].key, q))


def _apply(e: _Events, j: int, live: _Live, rows: dict[int, ReplayRow]) -> None:
    """Apply event ``j`` to the live rows: what it swept and kept goes to ``e.swept[j]`` and
    ``e.tails[j]``. Costs the rows it names or removes, not the window."""
    b = e.bounds[j]
    if e.kinds[j] == "repair":
        # The loop stays; only rows the repair left empty (tool calls and results) are gone.
        # They are not swept: nothing was summarised or cleared.
        live.remove([q for q in live.of_audits(e.aids[j]) if q in e.single])
        return
    if e.changes is not None:  # the record says what went, what stayed, what became a stub
        c = e.changes[j]
        went = [q for q in c.swept if q in live]
        gone = set(went)
        stubs = [q for q in c.cleared if q in live and q not in gone]
        for q in stubs:
            live.stub(q, c.stub_chars)
        e.swept[j] = _display(live, went + stubs)
        e.tails[j] = _display(live, [q for q in c.kept if q in live])
        live.remove(went)
        return
    keep: list[int] = []
    if e.kinds[j] == "clear":
        out = [q for q in live.seqs() if q <= b]
    elif (sj := e.summ[j]) is not None and sj in rows:
        o = rows[sj].ord
        below = [q for q in live.seqs() if q <= b]
        keep = [q for q in below if o is not None and live[q].key > o]
        kept = set(keep)
        out = [q for q in below if q not in kept]
    else:  # summary lost: the blob says what went
        out = live.of_audits(e.aids[j])
    e.swept[j] = _display(live, out)
    e.tails[j] = _display(live, keep)
    live.remove(out)


_SUMMARY = "compaction_summary"


def _ahead_of(e: _Events, j: int | None, live: _Live) -> int | None:
    """The kept row a summary goes ahead of, where the record says the agent sends the
    summary first (:attr:`WindowChange.summary_first`): the first kept conversation row that
    is not context (a system message stays in the system part)."""
    if j is None or e.changes is None or not e.changes[j].summary_first:
        return None
    kept = [q for q in _display(live, e.tails[j]) if q in live]
    return next((q for q in kept if live[q].conv and live[q].kind != "context"), None)


def _build_replay(src: AgentSource) -> ReplayState:
    """The walk, with the cyclic collector paused: it makes a few objects per row and per
    call, none in a cycle (the collector's passes over them were a third of its time at
    big-runner x16, and grew faster than the file)."""
    h = src.history_view()  # read only
    with gc_paused():
        return _walk(src, h)


def _walk(src: AgentSource, h: pd.DataFrame) -> ReplayState:
    e = _events_of(src, h)
    ev = src.events()
    rows = _rows(h, src.context_in_messages)
    order = sorted(rows)
    n_ev = len(e.bounds)
    live = _Live(rows)
    ctx: dict[int, Window] = {}
    est: dict[int, tuple[int, int, int]] = {}
    part_sums: array.array[int] = array.array("q")
    rebuilt: dict[int, int] = {}
    calls: list[int] = []
    # a fallback-path compaction's re-appended tail (§5.5): copies, not model calls
    copies = reappended_of(src)
    reappended = set(copies)
    for q in reappended:
        rows[q].call = False
    fallback: set[int] = set()
    ev_order = sorted(range(n_ev), key=lambda j: (e.bounds[j], j))
    event_of_summary: dict[int, int] = {}  # summary seq -> its first event
    for j in range(n_ev - 1, -1, -1):
        if (sj := e.summ[j]) is not None:
            event_of_summary[sj] = j
    p = 0
    for s in order:
        while p < len(ev_order) and e.bounds[ev_order[p]] < s:
            _apply(e, ev_order[p], live, rows)
            live.event_done(e.bounds[ev_order[p]])
            p += 1
        r = rows[s]
        if r.call:
            ctx[s], est[s] = live.window(part_sums)
            rebuilt[s] = live.rebuilt()
            calls.append(s)
        live.add(r, _ahead_of(e, event_of_summary.get(s), live) if r.kind == _SUMMARY else None)
        # a fallback-path summary: its preserved tail is the originals of the copies after it
        if r.kind == "compaction_summary" and r.ord is None and s + 1 in copies:
            fe = event_of_summary.get(s)
            if fe is not None and not e.tails[fe]:
                e.tails[fe] = [copies[q] for q in range(s + 1, s + 1 + MANUAL_TAIL) if q in copies]
                fallback.add(fe)
    while p < len(ev_order):
        _apply(e, ev_order[p], live, rows)
        p += 1
    manual, instructions, forced, triggers = _event_flags(e, rows, order)
    return ReplayState(
        rows=rows,
        order=order,
        events=ev,
        swept=e.swept,
        tails=e.tails,
        forced=forced,
        manual=manual,
        instructions=instructions,
        calls=calls,
        ctx=ctx,
        est=est,
        parts=part_sums,
        rebuilt=rebuilt,
        reappended=reappended,
        fallback=fallback,
        kinds=e.kinds,
        summaries=e.summ,
        boundaries=e.bounds,
        audit_ids=e.aids,
        triggers=triggers,
        encrypted=[c.summary_encrypted for c in e.changes] if e.changes else [False] * len(ev),
        stated=e.changes is not None,
    )


def _event_flags(
    e: _Events, rows: dict[int, ReplayRow], order: list[int]
) -> tuple[list[bool], list[str | None], list[bool], list[str | None]]:
    """Per event: manual (and its instructions), forced (the history around it is
    incomplete), the trigger the record states."""
    n_ev = len(e.bounds)
    present = set(order)
    manual = [False] * n_ev
    instructions: list[str | None] = [None] * n_ev
    forced = [False] * n_ev
    triggers: list[str | None] = [None] * n_ev
    # index in ``order`` of the latest model call at or before each index (-1: none)
    last_call: list[int] = []
    k = -1
    for i, q in enumerate(order):
        r = rows[q]
        if r.kind == "assistant" and r.call:
            k = i
        last_call.append(k)
    for j in range(n_ev):
        if e.kinds[j] == "compaction":
            forced[j] = e.lost[j] or not e.aids[j] or e.bounds[j] not in present
            if e.changes is not None:
                triggers[j] = e.changes[j].trigger
                if e.changes[j].trigger == "manual":
                    manual[j] = True
                    instructions[j] = e.changes[j].instructions or _NO_INSTR
                continue
            i = bisect.bisect_right(order, e.bounds[j]) - 1
            c = last_call[i] if i >= 0 else -1
            call = _loop_compact_call(rows[order[c]]) if c >= 0 else None
            if call is not None:
                manual[j] = True
                instructions[j] = call
        else:
            forced[j] = e.bounds[j] not in present
            if e.changes is not None:
                triggers[j] = e.changes[j].trigger
    return manual, instructions, forced, triggers


_NO_INSTR = ""


def _loop_compact_call(r: ReplayRow) -> str | None:
    """When the model call ``r`` (the latest at or before an event's boundary) called
    ``loop_compact``, its instructions ('' when none); else None."""
    blocks, _ = parse_content(r.content)
    for b in blocks:
        if b.get("type") == "tool_use" and b.get("name") == "loop_compact":
            inp = b.get("input")
            v = inp.get("instructions") if isinstance(inp, dict) else None
            return v if isinstance(v, str) else _NO_INSTR
    return None


_STATE: Key[ReplayState] = Key("replay.state")
_COPIES: Key[dict[int, int]] = Key("replay.reappended_copies")
_REPLAY: Key[pd.DataFrame] = Key("replay")
_COMPOSITION: Key[pd.DataFrame] = Key("replay.composition")


def reappended_of(src: AgentSource) -> dict[int, int]:
    """:func:`adfkit._core.history.reappended_copies` of the source's history, found once
    per source (the replay and :func:`adfkit._analysis.observe.observe` both need it)."""
    return src.memo.get(_COPIES, lambda: reappended_copies(src.history_view()))


def replay_state(src: AgentSource) -> ReplayState:
    """The walk of the history behind :func:`replay` (cached on the source)."""
    return src.memo.get(_STATE, lambda: _build_replay(src))


#: A seq above every seq: :func:`gap_between` up to it finds the first gap after a seq.
_NEVER = 2**62


@dataclass
class _Prompts:
    """Per call (:attr:`ReplayState.calls` order): the system prompt in force (seq, None
    when unknown; tokens, NaN when unknown) and the dynamic instructions (seq, None when
    none; tokens, 0 when none)."""

    sp_seq: list[int | None]
    sp_tokens: list[float]
    di_seq: list[int | None]
    di_tokens: list[float]


def _prompt_parts(src: AgentSource, st: ReplayState, positions: dict[int, int]) -> _Prompts:
    """The system prompt and dynamic instructions of every call (:class:`_Prompts`).

    The system prompt in force is the latest ``system_prompt`` row written before the call, in
    display order, across compactions (the runtime sends one on every call, ADF_FORMAT.md §7);
    unknown (None, NaN) when none precedes it or a history gap lies between. The dynamic
    instructions are the latest row written since the last reset or restart (0 tokens when
    none): the runtime writes them again after a compaction or clear when non-empty. Both
    are looked up for all calls at once (sorted searches), the gap after each system prompt
    once per prompt.
    """
    calls = np.asarray(st.calls, dtype=np.int64)
    prompts = [r for r in st.rows.values() if r.kind == "context" and not r.inject]
    sp = sorted((positions[r.seq], r.seq, r.body) for r in prompts if r.sub == "system_prompt")
    at = np.array([positions[c] for c in st.calls], dtype=np.int64)
    j = _last_at(np.array([p for p, _, _ in sp], dtype=np.int64), at, "right")
    # a prompt is lost to the calls written after the first history gap that follows it
    gaps = [gap_between(src, q, _NEVER) for _, q, _ in sp]
    gap_at = np.array([_NEVER if g is None else g[0] for g in gaps], dtype=np.int64)
    sp_ok = (j >= 0) & (calls <= gap_at[j]) if len(sp) else np.zeros(len(calls), dtype=bool)
    di = sorted((r.seq, r.body) for r in prompts if r.sub == "dynamic_instructions")
    di_seqs = np.array([q for q, _ in di], dtype=np.int64)
    d = _last_at(di_seqs, calls, "left")
    start = _since_reset(src, calls)
    di_ok = (d >= 0) & (di_seqs[d] >= start) if len(di) else np.zeros(len(calls), dtype=bool)
    js, sp_oks, ds, di_oks = j.tolist(), sp_ok.tolist(), d.tolist(), di_ok.tolist()
    return _Prompts(
        sp_seq=[sp[k][1] if ok else None for k, ok in zip(js, sp_oks, strict=True)],
        sp_tokens=[sp[k][2] / 3.5 if ok else math.nan for k, ok in zip(js, sp_oks, strict=True)],
        di_seq=[di[k][0] if ok else None for k, ok in zip(ds, di_oks, strict=True)],
        di_tokens=[
            (di[k][1] + MESSAGE_OVERHEAD) / 3.5 if ok else 0.0
            for k, ok in zip(ds, di_oks, strict=True)
        ],
    )


def _last_at(keys: np.ndarray, at: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
    """Per value of ``at``: the index of the last of the sorted ``keys`` at or before it
    (``right``) or before it (``left``); -1 when none."""
    return np.searchsorted(keys, at, side=side) - 1


def _since_reset(src: AgentSource, calls: np.ndarray) -> np.ndarray:
    """Per call: the seq of the last reset at or before it or of the last restart before it,
    whichever is later (0 when neither)."""
    r_points = np.array([r[0] for r in resets(src)], dtype=np.int64)
    k = _last_at(r_points, calls, "right")
    start = np.where(k >= 0, r_points[k], 0) if len(r_points) else np.zeros_like(calls)
    restart_points = np.array(restarts(src), dtype=np.int64)
    if len(restart_points):
        rk = _last_at(restart_points, calls, "left")
        start = np.where(rk >= 0, np.maximum(start, restart_points[rk]), start)
    return start


# -- replay ------------------------------------------------------------------------------
def replay(src: AgentSource) -> pd.DataFrame:
    """What each model call had in its context window, and what it was made of. One row
    per model call (assistant row) over the whole history, in call order.

    The context window is rebuilt by replaying the history: rows are added in seq order and
    every compaction or clear removes what it swept. Context rows are not part of the
    conversation, except ``loop_inject`` v2 text that was delivered: keyed updates made
    before the next call collapse to the latest one, so a superseded version is not in the
    window (ADF_FORMAT.md §7). Re-appended copies of a fallback compaction's tail (§5.5)
    are not model calls and get no row (:func:`adfkit._core.history.reappended_copies`, the rule
    :meth:`usage` and :func:`observe` share).

    Columns (dtype):

    - ``seq`` (Int64: the assistant row; join key for per-call tables), ``position``,
      ``epoch`` (Int64, from :meth:`history`), ``created_at``, ``model``
    - ``context_seqs`` (object: tuple of the conversation seqs in the window, display
      order; the column holds every call's window, so its size is the sum of the window
      sizes: 90 million seqs for a 20,000-row loop never compacted), ``n_context_rows``
      (Int64: their count)
    - ``system_prompt_seq`` (Int64: the ``[Context: system_prompt]`` row in force, the
      latest written before the call, across compactions: the runtime sends the system
      prompt on every call (§7); NA when none precedes the call or a history gap lies
      between, see :meth:`system_prompt_at`), ``system_prompt_tokens`` (float64: its text
      without the header, ``chars / 3.5``; NaN when unknown)
    - ``dynamic_instructions_seq`` (Int64: the latest ``[Context: dynamic_instructions]``
      row written since the last reset (compaction, clear, history gap) or restart; NA
      when none), ``dynamic_instructions_tokens`` (float64: sent as a trailing message,
      ``(chars + 16) / 3.5``; 0 when none)
    - ``summary_tokens``, ``message_tokens`` (chat, triggers, notices),
      ``assistant_tokens``, ``tool_result_tokens``, ``inject_tokens`` (float64: the
      window's conversation rows of each kind, ``(chars + 16) / 3.5 + media_chars / 100``
      summed; the parts the replay widget and :func:`adfkit.plots.context_composition`
      stack)
    - ``est_chars`` (Int64: estimator characters of the conversation, 16 per message
      included), ``est_media_chars`` (Int64: media characters), ``est_tokens`` (Int64: the
      runtime's estimate, §9.1: ``ceil(est_chars / 3.5) + ceil(est_media_chars / 100)``).
      The five conversation parts sum to ``est_chars / 3.5 + est_media_chars / 100``
      before rounding, so ``0 <= est_tokens - parts < 2`` (up to float rounding).
    - ``tokens_input``, ``tokens_output``, ``tokens_cache_read``, ``tokens_cache_write``,
      ``tokens_total`` (Int64: provider-reported; ``input`` already includes the cache
      parts, ``total`` = input + output)
    - ``report_minus_est`` (Int64: ``tokens_input - est_tokens``: what the estimator does
      not see: system prompt, tools, dynamic instructions, tokenizer differences)
    - ``chat_tokens_before`` (Int64: the runtime's ``chatTokens`` at this call's pre-call
      check: the previous call's ``input + output``, or the estimate of the rebuilt
      conversation right after a compaction or clear)
    - ``threshold`` (Int64: in force at the call, following ``sys_update_config`` changes of
      ``context.compact_threshold``), ``threshold_source`` (string: ``config``,
      ``sys_update_config``, ``warning_text``, ``recorded`` (the tokens a transcript states
      before its automatic compactions, :mod:`adfkit._core.thresholds`) or ``assumed``),
      ``over_threshold`` (boolean:
      ``tokens_total >= threshold``, which makes the next call's check fire)

    :meth:`composition` is a view of these columns.

    Examples
    --------
    >>> import adfkit
    >>> r = adfkit.open_adf("sample_agents/long-runner.adf").replay()
    >>> bool((r["est_tokens"] > 0).all())
    True
    >>> parts = r[["summary_tokens", "message_tokens", "assistant_tokens",
    ...            "tool_result_tokens", "inject_tokens"]].sum(axis=1)
    >>> bool(((r["est_tokens"] - parts) < 2).all())
    True
    """
    return src.memo.get(_REPLAY, lambda: _replay(src)).copy(deep=False)


def _replay(src: AgentSource) -> pd.DataFrame:
    st = replay_state(src)
    with gc_paused():  # a tuple and a few lists per call, none in a cycle
        return _replay_frame(src, st)


#: Columns of :meth:`replay` taken as they are from the call's row of :meth:`history`.
_FROM_HISTORY = ("position", "epoch", "created_at", "model", "tokens_input")


def _replay_frame(src: AgentSource, st: ReplayState) -> pd.DataFrame:
    h = src.history()
    seqs = h["seq"].to_numpy(dtype="int64").tolist()
    positions = dict(zip(seqs, h["position"].astype("int64").tolist(), strict=True))
    row_of = {q: i for i, q in enumerate(seqs)}
    at = np.array([row_of[c] for c in st.calls], dtype="int64")
    calls = [st.rows[c] for c in st.calls]
    n = len(st.calls)
    flat = itertools.chain.from_iterable
    est = np.fromiter(flat(st.est[c] for c in st.calls), np.int64, 3 * n).reshape(n, 3)
    chars, media = est[:, 0].tolist(), est[:, 1].tolist()
    e = [estimate_tokens(ch, md) for ch, md in zip(chars, media, strict=True)]
    parts = np.frombuffer(st.parts, dtype=np.int64).reshape(n, 2, len(PARTS))
    sched = threshold_schedule(src)
    thresholds = [threshold_at(sched, c) for c in st.calls]
    prompt = _prompt_parts(src, st, positions)
    ttot = [r.ttot for r in calls]
    cols: dict[str, Any] = {
        "seq": st.calls,
        "context_seqs": st.windows(),
        "n_context_rows": est[:, 2],
        "system_prompt_seq": prompt.sp_seq,
        "system_prompt_tokens": prompt.sp_tokens,
        "dynamic_instructions_seq": prompt.di_seq,
        "dynamic_instructions_tokens": prompt.di_tokens,
        **{name: parts[:, 0, k] / 3.5 + parts[:, 1, k] / 100 for k, name in enumerate(PARTS)},
        "est_chars": est[:, 0],
        "est_media_chars": est[:, 1],
        "est_tokens": e,
        "tokens_output": [r.tout for r in calls],
        "tokens_cache_read": [r.cr for r in calls],
        "tokens_cache_write": [r.cw for r in calls],
        "tokens_total": ttot,
        "report_minus_est": [
            None if r.tin is None else r.tin - x for r, x in zip(calls, e, strict=True)
        ],
        "chat_tokens_before": _chat_before(st, h["epoch"].array.take(at).tolist(), ttot, e),
        "threshold": [t for t, _ in thresholds],
        "threshold_source": [ts for _, ts in thresholds],
        "over_threshold": [
            None if tt is None or t is None else tt >= t
            for tt, (t, _) in zip(ttot, thresholds, strict=True)
        ],
    }
    data: dict[str, Any] = {}
    for c, d in schema.REPLAY.items():
        if c in _FROM_HISTORY:
            data[c] = h[c].array.take(at).astype(d)
        elif d == "object":
            data[c] = pd.Series(cols[c], dtype=object)
        elif d == "float64":
            data[c] = np.asarray(cols[c], dtype="float64")
        else:
            data[c] = pd.array(cols[c], dtype=d)
    return pd.DataFrame(data)


def _chat_before(
    st: ReplayState, epochs: list[Any], ttot: list[int | None], est: list[int]
) -> list[int]:
    """``chat_tokens_before`` of every call: the previous call's ``tokens_total`` (its
    estimate when the provider reported none), the estimate of the rebuilt conversation at
    an epoch's first call."""
    out: list[int] = []
    chat: int | None = None
    prev = None
    for s, ep, tt, e in zip(st.calls, epochs, ttot, est, strict=True):
        if prev is not None and ep != prev:
            chat = None
        prev = ep
        if chat is None:
            chat = st.rebuilt[s]
        out.append(chat)
        chat = tt if tt is not None else e
    return out


def context_at(src: AgentSource, seq: int, *, context: bool = True) -> pd.DataFrame:
    """The rows the model saw at one model call. One row per row of that call's window.

    Parameters
    ----------
    seq : the seq of a model call (an assistant row).
    context : also return the system-prompt row (first) and the dynamic-instructions row
        (last) in force, which the model received as the system part and a trailing
        message (§7): ``system_prompt_seq`` and ``dynamic_instructions_seq`` of
        :meth:`replay`, so the system prompt is the latest one written before the call,
        even when it precedes a compaction. False gives the conversation only.

    Returns the :meth:`history` columns plus ``part`` (string: ``system``, ``message`` or
    ``dynamic``), in the order the model received them.

    Raises
    ------
    AdfError
        ``seq`` is not a model call in the history.

    Examples
    --------
    >>> import adfkit
    >>> agent = adfkit.open_adf("sample_agents/long-runner.adf")
    >>> call = int(agent.replay()["seq"].iloc[5])
    >>> ctx = agent.context_at(call, context=False)
    >>> bool((ctx["seq"] < call).all())
    True
    """
    st = replay_state(src)
    if int(seq) not in st.ctx:
        raise AdfError(f"seq {seq} is not a model call in the history", path=src.path)
    r = replay(src).set_index("seq").loc[int(seq)]
    conv = list(r["context_seqs"])
    parts = ["message"] * len(conv)
    if context:
        if not pd.isna(r["system_prompt_seq"]):
            conv.insert(0, int(r["system_prompt_seq"]))
            parts.insert(0, "system")
        if not pd.isna(r["dynamic_instructions_seq"]):
            conv.append(int(r["dynamic_instructions_seq"]))
            parts.append("dynamic")
    h = src.history().set_index("seq")
    out = h.loc[conv].reset_index()
    out["part"] = pd.array(parts, dtype="string")
    return out


# -- composition -----------------------------------------------------------------------
def composition(src: AgentSource) -> pd.DataFrame:
    """What each model call was sent, in estimated tokens. One row per model call.

    A column view of :meth:`replay`, which computes every part once while it rebuilds the
    context windows (see its docstring for the rules). A model call is an assistant row,
    except the copy of one that a fallback-path compaction re-appended after its summary
    (ADF_FORMAT.md §5.5).

    Every part uses the runtime's estimator (ADF_FORMAT.md §9.1) as a float, ``chars /
    3.5`` (plus ``media_chars / 100``), so the parts add up exactly. The conversation at a
    call is the replayed window: every row written before it and not swept by a compaction
    or clear, minus context rows except delivered ``loop_inject`` v2 text (a keyed update
    superseded before the call was never sent, ADF_FORMAT.md §7).

    Columns (dtype):

    - ``seq`` (Int64: the assistant row's seq), ``position``, ``epoch`` (Int64),
      ``created_at`` (datetime64[ms, UTC])
    - ``system_prompt_seq`` (Int64), ``system_prompt_tokens`` (float64: the prompt in force,
      :meth:`system_prompt_at`: the latest ``system_prompt`` row written before the call,
      across compactions, ``chars / 3.5``; NaN when it was lost to a gap)
    - ``dynamic_instructions_seq`` (Int64), ``dynamic_instructions_tokens`` (float64: the
      latest dynamic instructions written since the last reset or restart, sent as a
      trailing user message, ``(chars + 16) / 3.5``; 0 when none. A string that turned
      empty leaves no row, so this can overstate.)
    - ``summary_tokens``, ``message_tokens`` (chat, triggers, notices), ``assistant_tokens``,
      ``tool_result_tokens``, ``inject_tokens`` (float64: ``(chars + 16) / 3.5 +
      media_chars / 100`` summed over the conversation rows of each kind)
    - ``n_messages`` (Int64: conversation rows; ``n_context_rows`` of :meth:`replay`),
      ``context_chars`` (Int64: their characters with the 16-character overhead;
      ``est_chars``), ``context_media_chars`` (Int64; ``est_media_chars``), ``est_tokens``
      (Int64: ``ceil(context_chars / 3.5) + ceil(context_media_chars / 100)``, the
      runtime's estimate of the conversation; the five parts sum to ``context_chars / 3.5
      + context_media_chars / 100``, so ``0 <= est_tokens - parts < 2``, up to float rounding)
    - ``total_tokens`` (float64: every part, system prompt and dynamic instructions
      included), ``tokens_input`` (Int64: what the provider reported, for comparison)

    Examples
    --------
    >>> import adfkit
    >>> comp = adfkit.open_adf("sample_agents/long-runner.adf").composition()
    >>> parts = comp[["summary_tokens", "message_tokens", "assistant_tokens",
    ...               "tool_result_tokens", "inject_tokens"]].sum(axis=1)
    >>> bool(((comp["est_tokens"] - parts) < 2).all())
    True
    """
    return src.memo.get(_COMPOSITION, lambda: _composition(src)).copy(deep=False)


def _composition(src: AgentSource) -> pd.DataFrame:
    rep = replay(src)
    df = rep.rename(columns=_COMPOSITION_FROM_REPLAY)
    parts = df[list(PARTS)].sum(axis=1)
    df["total_tokens"] = (
        parts + df["dynamic_instructions_tokens"] + df["system_prompt_tokens"].fillna(0.0)
    ).astype("float64")
    df = df[list(schema.COMPOSITION)]
    return df
