"""Compaction replay, context reconstruction and counterfactual memory policies (issue 3).

Three layers, all computed from :meth:`AgentFile.history` and :meth:`AgentFile.events`:

- **Replay of what happened.** Rows are walked in creation (seq) order while a live set is kept:
  every compaction or clear removes the rows it swept (ADF_FORMAT.md §5.4-§5.5, §6). At every
  model call (assistant row) the live set is the context window the model saw; its size is
  measured with the runtime's own estimator (§9.1): context rows excluded except delivered
  ``loop_inject`` v2 text, 16 characters per message, ``ceil(text / 3.5) + ceil(media / 100)``
  over the sums.
- **Compactions.** One row per compaction or clear with what it swept, what it kept, the summary,
  its recall of the swept identifiers, refetches and cache effect.
- **Simulation.** :func:`simulate` replays the whole recorded history under another memory
  policy, with no model call. The model's own actions (every assistant and tool row) are kept;
  the runtime's artifacts (summaries, memory-flush nudges) are dropped and re-created where the
  simulated policy would create them.

Counterfactual token model
--------------------------
For a model call ``c`` the real history gives the provider-reported input ``I_c`` and the
estimator's size ``E_c`` of the real context. Under the simulated policy the context differs;
its estimate is ``S_c``. The reported input is modelled as ``I'_c = max(0, I_c + S_c - E_c)``:
the part the estimator does not see (system prompt, tool schemas, dynamic instructions,
tokenizer differences) is assumed unchanged, and the conversation part moves with the estimate.
When the simulated context equals the real one, ``I'_c = I_c`` exactly, so the runtime's policy
at the threshold in force reproduces the real compaction points. The output ``O_c`` is kept, and
the runtime's ``chatTokens`` after the call is ``I'_c + O_c`` (§5.1).

A simulated compaction inserts a summary whose size is the real summary's when a real compaction
happened at that same point, else ``summary_chars`` (default: the mean size of the agent's real
summaries, or :data:`DEFAULT_SUMMARY_CHARS` when it has none). A simulated compaction call costs
the real one's tokens when it coincides with a real compaction, else the estimate of its swept
conversation plus the agent's mean prompt overhead of real compaction calls (input), and the
mean real compaction output (or the summary estimate).
"""

from __future__ import annotations

import bisect
import math
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from ._audit import js_length
from ._content import (
    MESSAGE_OVERHEAD,
    context_body,
    estimate_tokens,
    parse_context_header,
    strip_summary,
)
from ._context import PARTS, superseded_injects
from ._errors import AdfError
from ._frames import parse_content
from ._history import REAPPENDED_TAIL, reappended_copies

if TYPE_CHECKING:
    from ._agent import AgentFile

#: Summary size (estimator characters, marker and footer included) used for a simulated
#: compaction when the agent has no real summary to measure.
DEFAULT_SUMMARY_CHARS = 2000
#: Length of the runtime's default memory-flush nudge text (§3.4), used when the agent has none.
DEFAULT_NUDGE_CHARS = 300
#: The runtime preserves this many conversation messages on a ``loop_compact`` call (§5.1).
MANUAL_TAIL = REAPPENDED_TAIL
#: Extra allowance of the pre-flight guard during the grace call (§5.1).
GRACE_EXTRA = 30_000
GRACE_FACTOR = 1.3

_THRESHOLD_TEXT = re.compile(r"threshold:?\s*([0-9][0-9,]*)")
_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")
_PATH = re.compile(
    r"(?<![\w/.:-])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b|\b[\w-]+\.(?:md|json|txt|csv|py|js|ts|ya?ml|html|log)\b"
)
_NUMBER = re.compile(r"(?<![\w.#/-])\d{3,}(?![\w/-])")
_CITE = re.compile(r"\[S(\d+)\]")
_MSG_ID = re.compile(r'"(?:id|message_id|thread_id|parent_id)"\s*:\s*"([A-Za-z0-9_-]{8,64})"')
_PATH_KEYS = ("path", "file", "filename", "filepath", "prefix", "dir", "directory")
_ID_KEYS = ("id", "message_id", "msg_id", "thread_id", "parent_id", "reply_to_id")
ID_KINDS = ("path", "url", "tool", "message_id", "number", "seq")


#: Context categories the model receives outside the conversation (ADF_FORMAT.md §7): the
#: system part and the trailing dynamic-instructions message.
_PROMPT_PARTS = ("system_prompt", "dynamic_instructions")


def _i(v: Any) -> int | None:
    return None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else int(v)


# ---------------------------------------------------------------------------------------------
# row table and the replay of what happened
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Row:
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
    content: str
    part: int  # index into PARTS when ``conv``, else -1
    inject: bool  # a loop_inject row (v2 or the old form), delivered or not
    body: int  # JS length of a context row's text without its header (0 for other rows)


#: Part (index into :data:`adfkit._context.PARTS`) of a conversation row, by kind; the rest
#: (chat messages, triggers, notices, unknown rows) are messages (1); delivered injects are 4.
_PART_OF = {"compaction_summary": 0, "assistant": 2, "tool_result": 3, "context": 4}


@dataclass
class _Replay:
    rows: dict[int, _Row]
    order: list[int]  # seqs in creation order
    events: pd.DataFrame
    swept: list[list[int]]  # per event: swept seqs present in history, display order
    tails: list[list[int]]  # per event: preserved tail (original seqs)
    forced: list[bool]  # per event: the history around it is incomplete
    manual: list[bool]
    instructions: list[str | None]
    calls: list[int]
    ctx: dict[int, tuple[int, ...]]  # call seq -> live seqs (display order), context rows too
    est: dict[int, tuple[int, int, int]]  # call seq -> (chars incl. overhead, media, n_conv)
    # call seq -> per part (PARTS order): (chars incl. overhead, media)
    parts: dict[int, tuple[tuple[int, int], ...]]
    reappended: set[int] = field(default_factory=set)
    fallback: set[int] = field(default_factory=set)  # events whose tail was re-appended


def _rows(h: pd.DataFrame) -> dict[int, _Row]:
    """The history's rows by seq. A context row is part of the conversation only when it is
    ``loop_inject`` v2 text that was delivered: a keyed update superseded before the next call
    was never sent (ADF_FORMAT.md §7)."""
    out: dict[int, _Row] = {}
    cols = [
        "seq", "ord", "kind", "subkind", "text", "chars", "media_chars", "tokens_input",
        "tokens_output", "tokens_total", "tokens_cache_write", "tokens_cache_read", "audit_id",
        "content",
    ]  # fmt: skip
    data = {c: h[c].tolist() for c in cols}
    headers: dict[int, dict[str, str]] = {}
    for i, kind in enumerate(data["kind"]):
        text = data["text"][i]
        if kind == "context" and isinstance(text, str):
            headers[i] = parse_context_header(text) or {}
    keyed = [
        (int(data["seq"][i]), hdr["category"], hdr["key"])
        for i, hdr in headers.items()
        if hdr.get("loop_inject") == "v2" and "key" in hdr
    ]
    calls = np.sort(h.loc[h["kind"] == "assistant", "seq"].to_numpy(dtype="int64"))
    gone = superseded_injects(keyed, calls) if keyed else set()
    for i in range(len(h)):
        seq = int(data["seq"][i])
        ordv = _i(data["ord"][i])
        kind = str(data["kind"][i])
        hdr = headers.get(i, {})
        v2 = hdr.get("loop_inject") == "v2"
        inject = v2 or hdr.get("category") == "loop_inject"
        conv = kind != "context" or (v2 and seq not in gone)
        body = 0
        if kind == "context" and not inject and hdr.get("category") in _PROMPT_PARTS:
            body = js_length(context_body(data["text"][i]))
        out[seq] = _Row(
            seq=seq,
            key=ordv if ordv is not None else seq,
            kind=kind,
            sub=data["subkind"][i] if isinstance(data["subkind"][i], str) else None,
            conv=conv,
            chars=_i(data["chars"][i]) or 0,
            media=_i(data["media_chars"][i]) or 0,
            call=kind == "assistant",
            tin=_i(data["tokens_input"][i]),
            tout=_i(data["tokens_output"][i]),
            ttot=_i(data["tokens_total"][i]),
            cw=_i(data["tokens_cache_write"][i]),
            cr=_i(data["tokens_cache_read"][i]),
            ord=ordv,
            audit_id=_i(data["audit_id"][i]),
            content=data["content"][i] if isinstance(data["content"][i], str) else "[]",
            part=_PART_OF.get(kind, 1) if conv else -1,
            inject=inject,
            body=body,
        )
    return out


def _build_replay(agent: AgentFile) -> _Replay:
    h = agent.history()
    ev = agent.events()
    rows = _rows(h)
    order = sorted(rows)
    present = set(order)
    n_ev = len(ev)
    bounds = [int(b) for b in ev["boundary_seq"]]
    summ = [_i(s) for s in ev["summary_seq"]]
    kinds = [str(e) for e in ev["event"]]
    aids = [tuple(a) for a in ev["audit_ids"]]
    lost = [bool(x) for x in ev["summary_lost"]]
    swept: list[list[int]] = [[] for _ in range(n_ev)]
    tails: list[list[int]] = [[] for _ in range(n_ev)]
    live: dict[int, _Row] = {}
    ctx: dict[int, tuple[int, ...]] = {}
    est: dict[int, tuple[int, int, int]] = {}
    part_sums: dict[int, tuple[tuple[int, int], ...]] = {}
    calls: list[int] = []
    # a fallback-path compaction's re-appended tail (§5.5): copies, not model calls
    copies = reappended_copies(h)
    reappended = set(copies)
    for q in reappended:
        rows[q].call = False
    fallback: set[int] = set()
    ev_order = sorted(range(n_ev), key=lambda j: (bounds[j], j))
    p = 0

    def apply(j: int) -> None:
        b = bounds[j]
        if kinds[j] == "clear":
            gone = [q for q in live if q <= b]
            keep: list[int] = []
        elif summ[j] is not None and summ[j] in rows:
            o = rows[summ[j]].ord
            keep = [q for q in live if q <= b and o is not None and live[q].key > o]
            gone = [q for q in live if q <= b and q not in keep]
        else:  # summary lost: the blob says what went
            ids = set(aids[j])
            gone = [q for q in live if live[q].audit_id in ids]
            keep = []
        gone.sort(key=lambda q: (live[q].key, q))
        swept[j] = gone
        tails[j] = sorted(keep, key=lambda q: (live[q].key, q))
        for q in gone:
            del live[q]

    for s in order:
        while p < len(ev_order) and bounds[ev_order[p]] < s:
            apply(ev_order[p])
            p += 1
        r = rows[s]
        if r.call:
            disp = sorted(live.values(), key=lambda x: (x.key, x.seq))
            pc = [0] * len(PARTS)
            pm = [0] * len(PARTS)
            n_conv = 0
            for x in disp:
                if x.part >= 0:
                    pc[x.part] += x.chars + MESSAGE_OVERHEAD
                    pm[x.part] += x.media
                    n_conv += 1
            ctx[s] = tuple(x.seq for x in disp)
            est[s] = (sum(pc), sum(pm), n_conv)
            part_sums[s] = tuple(zip(pc, pm, strict=True))
            calls.append(s)
        live[s] = r
        # a fallback-path summary: its preserved tail is the originals of the copies after it
        if r.kind == "compaction_summary" and r.ord is None and s + 1 in copies:
            j = next((k for k in range(n_ev) if summ[k] == s), None)
            if j is not None and not tails[j]:
                t = [copies[q] for q in range(s + 1, s + 1 + MANUAL_TAIL) if q in copies]
                tails[j] = t
                fallback.add(j)
    while p < len(ev_order):
        apply(ev_order[p])
        p += 1

    # manual compactions and their instructions; forced (incomplete) events
    manual = [False] * n_ev
    instructions: list[str | None] = [None] * n_ev
    forced = [False] * n_ev
    for j in range(n_ev):
        if kinds[j] == "compaction":
            forced[j] = lost[j] or not aids[j] or bounds[j] not in present
            call = _loop_compact_before(rows, order, bounds[j])
            if call is not None:
                manual[j] = True
                instructions[j] = call
        else:
            forced[j] = bounds[j] not in present
    return _Replay(
        rows=rows,
        order=order,
        events=ev,
        swept=swept,
        tails=tails,
        forced=forced,
        manual=manual,
        instructions=instructions,
        calls=calls,
        ctx=ctx,
        est=est,
        parts=part_sums,
        reappended=reappended,
        fallback=fallback,
    )


_NO_INSTR = ""


def _loop_compact_before(rows: dict[int, _Row], order: list[int], boundary: int) -> str | None:
    """The latest model call at or before ``boundary``: if it called ``loop_compact`` (and its
    results are stored before the boundary), return its instructions ('' when none)."""
    i = int(np.searchsorted(np.asarray(order), boundary, side="right")) - 1
    while i >= 0:
        r = rows[order[i]]
        if r.kind == "assistant" and r.call:
            blocks, _ = parse_content(r.content)
            for b in blocks:
                if b.get("type") == "tool_use" and b.get("name") == "loop_compact":
                    inp = b.get("input")
                    v = inp.get("instructions") if isinstance(inp, dict) else None
                    return v if isinstance(v, str) else _NO_INSTR
            return None
        i -= 1
    return None


def _replay_state(agent: AgentFile) -> _Replay:
    if "replay_state" not in agent._cache:
        agent._cache["replay_state"] = _build_replay(agent)
    return agent._cache["replay_state"]


# ---------------------------------------------------------------------------------------------
# threshold in force
# ---------------------------------------------------------------------------------------------


def _threshold_schedule(agent: AgentFile, st: _Replay) -> list[tuple[int, int, str]]:
    """``[(from_seq, threshold, source), ...]`` ascending. Changes made by approved
    ``sys_update_config`` calls take effect from their result row; before the first change the
    value is read from a context-warning text (``threshold: N``) when one exists, else the
    current config value is assumed."""
    current = agent.compact_threshold()
    changes: list[tuple[int, int]] = []
    for s in st.order:
        r = st.rows[s]
        if r.kind != "assistant" or "sys_update_config" not in r.content:
            continue
        blocks, _ = parse_content(r.content)
        for b in blocks:
            if b.get("type") != "tool_use" or b.get("name") != "sys_update_config":
                continue
            inp = b.get("input") if isinstance(b.get("input"), dict) else {}
            path, val = inp.get("path"), inp.get("value")
            if path in ("context", "model") and isinstance(val, dict):
                val = val.get("compact_threshold")
            elif path not in ("context.compact_threshold", "model.compact_threshold"):
                continue
            numeric = isinstance(val, int | float) and not isinstance(val, bool)
            if numeric and _tool_ok(st, s, str(b.get("id"))):
                changes.append((s + 1, int(val)))
    if not changes:
        return [(0, current, "config")]
    first = changes[0][0]
    initial, source = current, "assumed"
    for s in st.order:
        if s >= first:
            break
        r = st.rows[s]
        if r.kind == "context" and r.sub == "dynamic_instructions":
            m = _THRESHOLD_TEXT.search(_row_text(r))
            if m:
                initial, source = int(m.group(1).replace(",", "")), "warning_text"
                break
    return [(0, initial, source)] + [(f, v, "sys_update_config") for f, v in changes]


def _tool_ok(st: _Replay, call_seq: int, uid: str) -> bool:
    """The tool result for ``uid`` exists after ``call_seq`` and is not an error."""
    for s in st.order[st.order.index(call_seq) + 1 : st.order.index(call_seq) + 6]:
        r = st.rows[s]
        if r.kind != "tool_result":
            continue
        blocks, _ = parse_content(r.content)
        for b in blocks:
            if b.get("type") == "tool_result" and str(b.get("tool_use_id")) == uid:
                return not b.get("is_error")
    return False


def _row_text(r: _Row) -> str:
    blocks, _ = parse_content(r.content)
    return "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))


def _threshold_at(schedule: list[tuple[int, int, str]], seq: int) -> tuple[int, str]:
    val, src = schedule[0][1], schedule[0][2]
    for f, v, s in schedule:
        if f <= seq:
            val, src = v, s
    return val, src


# ---------------------------------------------------------------------------------------------
# identifiers (summary recall)
# ---------------------------------------------------------------------------------------------


def _walk_input(x: Any, key: str | None, out: list[tuple[str, str]]) -> None:
    if isinstance(x, dict):
        for k, v in x.items():
            _walk_input(v, str(k), out)
    elif isinstance(x, list):
        for v in x:
            _walk_input(v, key, out)
    elif isinstance(x, str):
        k = (key or "").lower()
        if _URL.fullmatch(x):
            out.append(("url", x))
        elif k in _PATH_KEYS or k == "url":
            out.append(("url" if k == "url" else "path", x))
        elif k in _ID_KEYS:
            out.append(("message_id", x))
        else:
            _scan_text(x, out, numbers=False)
    elif isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 100:
        out.append(("number", str(x)))


def _scan_text(t: str, out: list[tuple[str, str]], *, numbers: bool) -> None:
    for m in _URL.finditer(t):
        out.append(("url", m.group(0).rstrip(".,;:")))
    rest = _URL.sub(" ", t)
    for m in _PATH.finditer(rest):
        out.append(("path", m.group(0)))
    for m in _MSG_ID.finditer(t):
        out.append(("message_id", m.group(1)))
    for m in _CITE.finditer(t):
        out.append(("seq", m.group(1)))
    if numbers:
        for m in _NUMBER.finditer(_PATH.sub(" ", rest)):
            out.append(("number", m.group(0)))


def identifiers(rows: list[_Row]) -> list[tuple[str, str, int]]:
    """``(kind, value, first_seq)`` of every identifier in the given rows (deduplicated).

    Kinds: ``path`` (tool-input paths and path-like text), ``url``, ``tool`` (names of tools
    called), ``message_id`` (ids in tool inputs and message JSON), ``number`` (3+ digit numbers
    in message and assistant text, numeric tool inputs >= 100), ``seq`` (the seqs of rows that
    made tool calls, the provenance a summary should cite as ``[S<seq>]``, plus ``[S<n>]``
    citations found in the swept text).
    """
    found: list[tuple[str, str, int]] = []
    seen: set[tuple[str, str]] = set()
    for r in rows:
        if not r.conv:
            continue
        blocks, _ = parse_content(r.content)
        items: list[tuple[str, str]] = []
        for b in blocks:
            t = b.get("type")
            if t == "tool_use":
                items.append(("tool", str(b.get("name"))))
                _walk_input(b.get("input"), None, items)
                items.append(("seq", str(r.seq)))
            elif t == "tool_result":
                c = b.get("content")
                if isinstance(c, str):
                    _scan_text(c, items, numbers=False)
            elif t == "text" and isinstance(b.get("text"), str):
                txt = b["text"]
                if r.kind == "compaction_summary":
                    txt = strip_summary(txt)
                _scan_text(txt, items, numbers=r.kind in ("message", "assistant", "trigger"))
        for k, v in items:
            if (k, v) not in seen:
                seen.add((k, v))
                found.append((k, v, r.seq))
    return found


def _recalled(kind: str, value: str, summary: str) -> bool:
    if kind == "seq":
        return re.search(rf"\bS{re.escape(value)}\b", summary) is not None
    if kind == "number":
        return re.search(rf"(?<!\d){re.escape(value)}(?!\d)", summary) is not None
    return value in summary


# ---------------------------------------------------------------------------------------------
# the mixin
# ---------------------------------------------------------------------------------------------

REPLAY_COLUMNS = {
    "seq": "Int64",
    "position": "Int64",
    "epoch": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "model": "string",
    "context_seqs": "object",
    "n_context_rows": "Int64",
    "system_prompt_seq": "Int64",
    "system_prompt_tokens": "float64",
    "dynamic_instructions_seq": "Int64",
    "dynamic_instructions_tokens": "float64",
    "summary_tokens": "float64",
    "message_tokens": "float64",
    "assistant_tokens": "float64",
    "tool_result_tokens": "float64",
    "inject_tokens": "float64",
    "est_chars": "Int64",
    "est_media_chars": "Int64",
    "est_tokens": "Int64",
    "tokens_input": "Int64",
    "tokens_output": "Int64",
    "tokens_cache_read": "Int64",
    "tokens_cache_write": "Int64",
    "tokens_total": "Int64",
    "report_minus_est": "Int64",
    "chat_tokens_before": "Int64",
    "threshold": "Int64",
    "threshold_source": "string",
    "over_threshold": "boolean",
}


def _prompt_parts(
    agent: AgentFile, st: _Replay, positions: dict[int, int]
) -> dict[int, tuple[int | None, float, int | None, float]]:
    """Call seq -> (system prompt seq, its tokens, dynamic instructions seq, their tokens).

    The system prompt in force is the latest ``system_prompt`` row written before the call, in
    display order, across compactions (the runtime sends one on every call, ADF_FORMAT.md §7);
    unknown (None, NaN) when none precedes it or a history gap lies between. The dynamic
    instructions are the latest row written since the last reset or restart (0 tokens when
    none): the runtime writes them again after a compaction or clear when non-empty.
    """
    prompts = [r for r in st.rows.values() if r.kind == "context" and not r.inject]
    sp = sorted((positions[r.seq], r.seq, r.body) for r in prompts if r.sub == "system_prompt")
    sp_pos = [p for p, _, _ in sp]
    di = sorted((r.seq, r.body) for r in prompts if r.sub == "dynamic_instructions")
    di_seq = [q for q, _ in di]
    r_points = [r[0] for r in agent._resets()]
    restarts = agent._restarts()
    gaps = agent._gap_list()
    out: dict[int, tuple[int | None, float, int | None, float]] = {}
    for c in st.calls:
        j = bisect.bisect_right(sp_pos, positions[c]) - 1
        sp_s, sp_t = None, math.nan
        if j >= 0 and not any(hi > sp[j][1] and lo < c for lo, hi in gaps):
            sp_s, sp_t = sp[j][1], sp[j][2] / 3.5
        k = bisect.bisect_right(r_points, c) - 1
        start = r_points[k] if k >= 0 else 0
        rk = bisect.bisect_left(restarts, c) - 1
        if rk >= 0:
            start = max(start, restarts[rk])
        d = bisect.bisect_left(di_seq, c) - 1
        di_s, di_t = None, 0.0
        if d >= 0 and di_seq[d] >= start:
            di_s, di_t = di_seq[d], (di[d][1] + MESSAGE_OVERHEAD) / 3.5
        out[c] = (sp_s, sp_t, di_s, di_t)
    return out


class ReplayMixin:
    """Mixed into :class:`adfkit.AgentFile`: ``replay()``, ``context_at()``, ``compactions()``,
    ``summary_recall()``, ``refetches()``."""

    # -- replay ------------------------------------------------------------------------------
    def replay(self: AgentFile) -> pd.DataFrame:  # type: ignore[misc]
        """What each model call had in its context window, and what it was made of. One row
        per model call (assistant row) over the whole history, in call order.

        The context window is rebuilt by replaying the history: rows are added in seq order and
        every compaction or clear removes what it swept. Context rows are not part of the
        conversation, except ``loop_inject`` v2 text that was delivered: keyed updates made
        before the next call collapse to the latest one, so a superseded version is not in the
        window (ADF_FORMAT.md §7). Re-appended copies of a fallback compaction's tail (§5.5)
        are not model calls and get no row (:func:`adfkit._history.reappended_copies`, the rule
        :meth:`usage` and :func:`observe` share).

        Columns (dtype):

        - ``seq`` (Int64: the assistant row; join key for per-call tables), ``position``,
          ``epoch`` (Int64, from :meth:`history`), ``created_at``, ``model``
        - ``context_seqs`` (object: tuple of the conversation seqs in the window, display
          order), ``n_context_rows`` (Int64: their count)
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
          ``sys_update_config``, ``warning_text`` or ``assumed``), ``over_threshold`` (boolean:
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
        if "replay" in self._cache:
            return self._cache["replay"].copy(deep=False)
        st = _replay_state(self)
        sched = _threshold_schedule(self, st)
        h = self.history()
        positions = dict(
            zip(
                h["seq"].astype("int64").tolist(),
                h["position"].astype("int64").tolist(),
                strict=True,
            )
        )
        prompt = _prompt_parts(self, st, positions)
        hc = h.set_index("seq").loc[st.calls]
        cols: dict[str, list[Any]] = {
            c: []
            for c in REPLAY_COLUMNS
            if c not in ("position", "epoch", "created_at", "model", "tokens_input")
        }
        chat: int | None = None
        epoch_prev = None
        bounds = [int(b) for b in st.events["boundary_seq"]]
        epochs = hc["epoch"].tolist()
        for i, s in enumerate(st.calls):
            r = st.rows[s]
            ch, md, n = st.est[s]
            e = estimate_tokens(ch, md)
            conv = tuple(q for q in st.ctx[s] if st.rows[q].conv)
            ep = epochs[i]
            if epoch_prev is not None and ep != epoch_prev:
                chat = None
            epoch_prev = ep
            t, tsrc = _threshold_at(sched, s)
            sp_s, sp_t, di_s, di_t = prompt[s]
            cols["seq"].append(s)
            cols["context_seqs"].append(conv)
            cols["n_context_rows"].append(n)
            cols["system_prompt_seq"].append(sp_s)
            cols["system_prompt_tokens"].append(sp_t)
            cols["dynamic_instructions_seq"].append(di_s)
            cols["dynamic_instructions_tokens"].append(di_t)
            for name, (pc, pm) in zip(PARTS, st.parts[s], strict=True):
                cols[name].append(pc / 3.5 + pm / 100)
            cols["est_chars"].append(ch)
            cols["est_media_chars"].append(md)
            cols["est_tokens"].append(e)
            cols["tokens_output"].append(r.tout)
            cols["tokens_cache_read"].append(r.cr)
            cols["tokens_cache_write"].append(r.cw)
            cols["tokens_total"].append(r.ttot)
            cols["report_minus_est"].append(None if r.tin is None else r.tin - e)
            if chat is None:  # first call of an epoch: the estimate of the rebuilt conversation
                lim = max((b for b in bounds if b < s), default=0)
                first = [q for q in conv if st.rows[q].kind == "compaction_summary" or q <= lim]
                chat = estimate_tokens(
                    sum(st.rows[q].chars + MESSAGE_OVERHEAD for q in first),
                    sum(st.rows[q].media for q in first),
                )
            cols["chat_tokens_before"].append(chat)
            cols["threshold"].append(t)
            cols["threshold_source"].append(tsrc)
            cols["over_threshold"].append(None if r.ttot is None else r.ttot >= t)
            chat = r.ttot if r.ttot is not None else e
        data: dict[str, Any] = {}
        for c, d in REPLAY_COLUMNS.items():
            if c in cols:
                v = cols[c]
                data[c] = (
                    pd.Series(v, dtype=object)
                    if d == "object"
                    else np.asarray(v, dtype="float64")
                    if d == "float64"
                    else pd.array(v, dtype=d)
                )
            else:  # straight from history()
                data[c] = hc[c].astype(d).array
        df = pd.DataFrame(data)
        self._cache["replay"] = df
        return df.copy(deep=False)

    def context_at(self: AgentFile, seq: int, *, context: bool = True) -> pd.DataFrame:  # type: ignore[misc]
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
        st = _replay_state(self)
        if int(seq) not in st.ctx:
            raise AdfError(f"seq {seq} is not a model call in the history", path=self.path)
        r = self.replay().set_index("seq").loc[int(seq)]
        conv = list(r["context_seqs"])
        parts = ["message"] * len(conv)
        if context:
            if not pd.isna(r["system_prompt_seq"]):
                conv.insert(0, int(r["system_prompt_seq"]))
                parts.insert(0, "system")
            if not pd.isna(r["dynamic_instructions_seq"]):
                conv.append(int(r["dynamic_instructions_seq"]))
                parts.append("dynamic")
        h = self.history().set_index("seq")
        out = h.loc[conv].reset_index()
        out["part"] = pd.array(parts, dtype="string")
        return out

    # -- compactions -------------------------------------------------------------------------
    def compactions(self: AgentFile, *, cache_window: int = 3) -> pd.DataFrame:  # type: ignore[misc]
        """Every compaction and clear over the whole history. One row per event, in order.

        Events whose swept rows were discarded (loop audit off) are listed too, with NA sizes.

        Parameters
        ----------
        cache_window : how many model calls before and after each event the cache columns sum.

        Columns (dtype):

        - ``event_id`` (Int64: 0-based, the argument of :meth:`summary_recall`), ``event``
          (string: ``compaction``/``clear``), ``kind`` (string: ``auto`` after a memory-flush
          nudge and grace call, ``preflight`` (the pre-flight guard, no grace call),
          ``manual`` (a ``loop_compact`` call) or ``clear``; when the swept rows were
          discarded, an automatic one is reported as ``auto``), ``instructions`` (string: the
          ``loop_compact`` instructions), ``summary_seq`` (Int64), ``created_at``
          (datetime64[ms, UTC]: the summary's time, else the audit row's)
        - ``boundary_seq`` (Int64: rows with a larger seq came after), ``audited`` (boolean:
          an audit row holds the swept rows), ``audit_ids`` (object: tuple), ``summary_lost``
          (bool: known only from its archive)
        - ``swept_start``, ``swept_end``, ``n_swept`` (Int64: seq range and row count swept,
          context rows included; NA when unknown), ``swept_seqs`` (object: tuple of the swept
          seqs present in the history, display order)
        - ``swept_chars``, ``swept_tokens`` (Int64: estimator characters and tokens (§9.1) of the
          swept conversation rows, i.e. what the summarizer was given, tail excluded; NA when
          rows were discarded)
        - ``summary_chars``, ``summary_tokens`` (Int64: the summary row, marker and footer
          included), ``compression_ratio`` (Float64: swept_tokens / summary_tokens)
        - ``compaction_input``, ``compaction_output`` (Int64: the compaction call's own usage,
          stored on the summary row), ``compaction_model`` (string)
        - ``tail_seqs`` (object: tuple of the preserved tail's original seqs), ``n_tail``
        - ``trigger_tokens`` (Int64: ``input + output`` of the last model call before the
          event), ``threshold`` (Int64: in force then)
        - ``n_identifiers``, ``n_recalled`` (Int64), ``recall`` and ``recall_<kind>`` for each
          kind in ``path, url, tool, message_id, number, seq`` (Float64): the share of the
          swept identifiers that the summary repeats (:meth:`summary_recall`)
        - ``n_refetches``, ``refetch_tokens`` (Int64: see :meth:`refetches`)
        - ``cache_write_before``, ``cache_write_after``, ``cache_read_before``,
          ``cache_read_after`` (Int64: summed over ``cache_window`` model calls before and after
          the event)

        Examples
        --------
        >>> import adfkit
        >>> c = adfkit.open_adf("sample_agents/long-runner.adf").compactions()
        >>> c["kind"].tolist().count("manual")
        1
        """
        key = ("compactions", cache_window)
        if key in self._cache:
            return self._cache[key].copy(deep=False)
        st = _replay_state(self)
        ev = st.events
        sched = _threshold_schedule(self, st)
        present = set(st.order)
        a = self.audit()
        a_times = dict(zip(a["id"].astype("int64"), a["created_at"], strict=True)) if len(a) else {}
        h = self.history().set_index("seq")
        ref = self.refetches()
        calls = np.asarray(st.calls, dtype="int64")
        recs: list[dict[str, Any]] = []
        prev_bound: int | None = None
        prev_tail: list[int] = []
        for j in range(len(ev)):
            e = ev.iloc[j]
            b = int(e["boundary_seq"])
            s_seq = _i(e["summary_seq"])
            audited = bool(len(e["audit_ids"]))
            swept = st.swept[j]
            tail = st.tails[j]
            kind = self._kind(st, j)
            # range and size
            if audited:
                known = swept
                missing = 0
                lo = min(swept) if swept else None
                hi = max(swept) if swept else None
            else:
                lo = min([prev_bound + 1, *prev_tail]) if prev_bound is not None else None
                hi = b
                if lo is not None:
                    rng = set(range(lo, hi + 1)) | set(prev_tail)
                    missing = sum(1 for q in rng if q not in present)
                else:
                    missing = None
                known = swept
            n_swept = None if missing is None else len(known) + missing
            summ_rows = [st.rows[q] for q in known if q not in tail]
            conv_rows = [r for r in summ_rows if r.conv]
            if audited or (missing == 0 and lo is not None):
                sch = sum(r.chars for r in conv_rows)
                stok = estimate_tokens(
                    sch + MESSAGE_OVERHEAD * len(conv_rows), sum(r.media for r in conv_rows)
                )
            else:
                sch = stok = None
            srow = st.rows.get(s_seq) if s_seq is not None else None
            sum_chars = srow.chars if srow else None
            sum_tok = estimate_tokens(srow.chars + MESSAGE_OVERHEAD, srow.media) if srow else None
            ratio = stok / sum_tok if stok is not None and sum_tok else None
            before = calls[calls <= b]
            trig = st.rows[int(before[-1])].ttot if len(before) else None
            if s_seq is not None and s_seq in h.index:
                created = h.at[s_seq, "created_at"]
            else:
                ts = [a_times.get(x) for x in e["audit_ids"]]
                ts = [t for t in ts if t is not None and not pd.isna(t)]
                created = max(ts) if ts else pd.NaT
            rec = {
                "event_id": j,
                "event": str(e["event"]),
                "kind": kind,
                "instructions": st.instructions[j] if st.instructions[j] else None,
                "summary_seq": s_seq,
                "created_at": created,
                "boundary_seq": b,
                "audited": audited,
                "audit_ids": tuple(e["audit_ids"]),
                "summary_lost": bool(e["summary_lost"]),
                "swept_start": lo,
                "swept_end": hi,
                "n_swept": n_swept,
                "swept_seqs": tuple(known),
                "swept_chars": sch,
                "swept_tokens": stok,
                "summary_chars": sum_chars,
                "summary_tokens": sum_tok,
                "compression_ratio": ratio,
                "compaction_input": srow.tin if srow else None,
                "compaction_output": srow.tout if srow else None,
                "compaction_model": h.at[s_seq, "model"] if srow else None,
                "tail_seqs": tuple(tail),
                "n_tail": len(tail),
                "trigger_tokens": trig,
                "threshold": _threshold_at(sched, b)[0],
            }
            rec.update(self._recall_columns(st, j))
            mine = ref[ref["event_id"] == j]
            rec["n_refetches"] = len(mine)
            rec["refetch_tokens"] = int(mine["result_tokens"].fillna(0).sum())
            after = calls[calls > b][:cache_window]
            bef = before[-cache_window:] if cache_window else before[:0]
            for name, attr in (("cache_write", "cw"), ("cache_read", "cr")):
                rec[f"{name}_before"] = sum(getattr(st.rows[int(q)], attr) or 0 for q in bef)
                rec[f"{name}_after"] = sum(getattr(st.rows[int(q)], attr) or 0 for q in after)
            recs.append(rec)
            prev_bound, prev_tail = b, list(tail)
        df = _typed(recs, COMPACTION_COLUMNS)
        self._cache[key] = df
        return df.copy(deep=False)

    def _kind(self: AgentFile, st: _Replay, j: int) -> str:  # type: ignore[misc]
        ev = st.events
        if str(ev["event"].iloc[j]) == "clear":
            return "clear"
        if st.manual[j]:
            return "manual"
        swept = st.swept[j]
        if not swept:
            return "auto"
        # auto: a memory-flush nudge followed by at least one model call before the event
        nudges = [q for q in swept if st.rows[q].sub == "memory_flush"]
        if nudges and any(st.rows[q].call and q > nudges[-1] for q in swept):
            return "auto"
        return "preflight"

    def _recall_columns(self: AgentFile, st: _Replay, j: int) -> dict[str, Any]:  # type: ignore[misc]
        rec: dict[str, Any] = {"n_identifiers": None, "n_recalled": None, "recall": None}
        for k in ID_KINDS:
            rec[f"recall_{k}"] = None
        df = self._recall_frame(st, j)
        if df is None:
            return rec
        rec["n_identifiers"] = len(df)
        rec["n_recalled"] = int(df["recalled"].sum())
        rec["recall"] = float(df["recalled"].mean()) if len(df) else None
        for k in ID_KINDS:
            sub = df[df["kind"] == k]
            rec[f"recall_{k}"] = float(sub["recalled"].mean()) if len(sub) else None
        return rec

    def _recall_frame(self: AgentFile, st: _Replay, j: int) -> pd.DataFrame | None:  # type: ignore[misc]
        key = ("recall", j)
        if key in self._cache:
            return self._cache[key]
        ev = st.events
        s_seq = _i(ev["summary_seq"].iloc[j])
        if str(ev["event"].iloc[j]) != "compaction" or s_seq is None or s_seq not in st.rows:
            self._cache[key] = None
            return None
        if not len(ev["audit_ids"].iloc[j]):
            self._cache[key] = None
            return None
        summary = strip_summary(_row_text(st.rows[s_seq]))
        tail = set(st.tails[j])
        rows = [st.rows[q] for q in st.swept[j] if q not in tail]
        ids = identifiers(rows)
        df = pd.DataFrame(
            {
                "kind": pd.array([k for k, _, _ in ids], dtype="string"),
                "value": pd.array([v for _, v, _ in ids], dtype="string"),
                "first_seq": pd.array([q for _, _, q in ids], dtype="Int64"),
                "recalled": np.array([_recalled(k, v, summary) for k, v, _ in ids], dtype=bool),
            }
        )
        self._cache[key] = df
        return df

    def summary_recall(self: AgentFile, event: int) -> pd.DataFrame:  # type: ignore[misc]
        """Which identifiers of what a compaction swept its summary repeats. One row per
        distinct identifier in the swept conversation rows (tail excluded).

        Parameters
        ----------
        event : the ``event_id`` of a compaction in :meth:`compactions`.

        Columns: ``kind`` (string: ``path``, ``url``, ``tool``, ``message_id``, ``number``,
        ``seq``), ``value`` (string), ``first_seq`` (Int64: the first swept row holding it),
        ``recalled`` (bool: the summary text contains it; for ``seq`` as ``S<seq>``, for numbers
        as a whole number). ``seq`` identifiers are the seqs of the swept rows that made tool
        calls (and ``[S<n>]`` citations in the swept text): what a summary should cite.

        Raises
        ------
        AdfError
            no such event, a clear, or a compaction whose swept rows or summary are not in the
            file (audit off, or summary discarded).

        Examples
        --------
        >>> import adfkit
        >>> r = adfkit.open_adf("sample_agents/long-runner.adf").summary_recall(0)
        >>> set(r["kind"]) <= {"path", "url", "tool", "message_id", "number", "seq"}
        True
        """
        st = _replay_state(self)
        if not 0 <= int(event) < len(st.events):
            raise AdfError(
                f"no compaction event {event} (there are {len(st.events)} events)", path=self.path
            )
        df = self._recall_frame(st, int(event))
        if df is None:
            raise AdfError(
                f"event {event} has no summary recall: it is a clear, or its swept rows or its "
                "summary are not in the file",
                path=self.path,
            )
        return df.copy()

    # -- refetches ---------------------------------------------------------------------------
    def refetches(self: AgentFile) -> pd.DataFrame:  # type: ignore[misc]
        """Tool calls that repeat, after a compaction, a call that the compaction swept. One row
        per repeating call (same tool name, same arguments), made in the epoch that follows.

        Columns: ``event_id`` (Int64, as in :meth:`compactions`), ``summary_seq`` (Int64),
        ``seq`` (Int64: the assistant row of the repeat), ``tool_name``, ``tool_input``
        (string: compact JSON), ``swept_seq`` (Int64: the latest swept call it repeats),
        ``result_seq`` (Int64), ``result_tokens`` (Int64: the result row's estimated tokens),
        ``call_tokens_input`` (Int64: the reported input of the repeating call).

        Examples
        --------
        >>> import adfkit
        >>> r = adfkit.open_adf("sample_agents/long-runner.adf").refetches()
        >>> bool((r["seq"] > r["swept_seq"]).all())
        True
        """
        if "refetches" in self._cache:
            return self._cache["refetches"].copy(deep=False)
        st = _replay_state(self)
        ev = st.events
        tc = self.tool_calls(history=True)
        sigs: list[tuple[int, str, str, int | None]] = []
        for cs, name, inp, rs in zip(
            tc["call_seq"], tc["tool_name"], tc["tool_input"], tc["result_seq"], strict=True
        ):
            if pd.isna(cs) or name in ("loop_compact", "loop_clear"):
                continue
            try:
                canon = orjson.dumps(orjson.loads(inp), option=orjson.OPT_SORT_KEYS).decode()
            except (orjson.JSONDecodeError, TypeError):
                canon = str(inp)
            sigs.append((int(cs), str(name), canon, _i(rs)))
        bounds = [int(b) for b in ev["boundary_seq"]]
        recs = []
        for j in range(len(ev)):
            if str(ev["event"].iloc[j]) != "compaction":
                continue
            swept = set(st.swept[j]) - set(st.tails[j])
            hi = bounds[j + 1] if j + 1 < len(ev) else None
            last: dict[tuple[str, str], int] = {}
            for cs, name, canon, _ in sigs:
                if cs in swept:
                    last[(name, canon)] = cs
            for cs, name, canon, rs in sigs:
                if cs <= bounds[j] or (hi is not None and cs > hi):
                    continue
                orig = last.get((name, canon))
                if orig is None:
                    continue
                rr = st.rows.get(rs) if rs is not None else None
                recs.append(
                    {
                        "event_id": j,
                        "summary_seq": _i(ev["summary_seq"].iloc[j]),
                        "seq": cs,
                        "tool_name": name,
                        "tool_input": canon,
                        "swept_seq": orig,
                        "result_seq": rs,
                        "result_tokens": (
                            estimate_tokens(rr.chars + MESSAGE_OVERHEAD, rr.media) if rr else None
                        ),
                        "call_tokens_input": st.rows[cs].tin if cs in st.rows else None,
                    }
                )
        df = _typed(recs, REFETCH_COLUMNS)
        self._cache["refetches"] = df
        return df.copy(deep=False)


REFETCH_COLUMNS = {
    "event_id": "Int64",
    "summary_seq": "Int64",
    "seq": "Int64",
    "tool_name": "string",
    "tool_input": "string",
    "swept_seq": "Int64",
    "result_seq": "Int64",
    "result_tokens": "Int64",
    "call_tokens_input": "Int64",
}

COMPACTION_COLUMNS = {
    "event_id": "Int64",
    "event": "string",
    "kind": "string",
    "instructions": "string",
    "summary_seq": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "boundary_seq": "Int64",
    "audited": "boolean",
    "audit_ids": "object",
    "summary_lost": "bool",
    "swept_start": "Int64",
    "swept_end": "Int64",
    "n_swept": "Int64",
    "swept_seqs": "object",
    "swept_chars": "Int64",
    "swept_tokens": "Int64",
    "summary_chars": "Int64",
    "summary_tokens": "Int64",
    "compression_ratio": "Float64",
    "compaction_input": "Int64",
    "compaction_output": "Int64",
    "compaction_model": "string",
    "tail_seqs": "object",
    "n_tail": "Int64",
    "trigger_tokens": "Int64",
    "threshold": "Int64",
    "n_identifiers": "Int64",
    "n_recalled": "Int64",
    "recall": "Float64",
    **{f"recall_{k}": "Float64" for k in ID_KINDS},
    "n_refetches": "Int64",
    "refetch_tokens": "Int64",
    "cache_write_before": "Int64",
    "cache_write_after": "Int64",
    "cache_read_before": "Int64",
    "cache_read_after": "Int64",
}


def _typed(recs: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    data: dict[str, Any] = {}
    for c, d in columns.items():
        v = [r.get(c) for r in recs]
        if d == "object":
            data[c] = pd.Series(v, dtype=object)
        elif d.startswith("datetime"):
            data[c] = pd.Series(
                [pd.NaT if x is None or x is pd.NA else x for x in v], dtype="datetime64[ms, UTC]"
            )
        elif d == "bool":
            data[c] = np.array(v, dtype=bool)
        else:
            data[c] = pd.array([None if x is pd.NA else x for x in v], dtype=d)
    return pd.DataFrame(data)


# ---------------------------------------------------------------------------------------------
# simulation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThresholdPolicy:
    """The runtime's policy (§5.1): automatic compaction when the last call's reported
    ``input + output`` reaches ``threshold``, after the memory-flush nudge and one grace call,
    plus the pre-flight guard on ``max(chatTokens, estimate)``.

    Parameters
    ----------
    threshold : tokens; None uses the threshold in force at each call (the real one).
    preserve : conversation rows kept after an automatic compaction (the runtime keeps 0).
    manual : replay the model's ``loop_compact`` calls (their compactions keep 2 rows).
    """

    threshold: int | None = None
    preserve: int = 0
    manual: bool = True


@dataclass(frozen=True)
class SlidingWindowPolicy:
    """Keep only the most recent ``max_tokens`` estimated tokens of conversation: before each
    call the oldest rows are evicted (a tool result never outlives its call). No summary.

    Parameters
    ----------
    max_tokens : the window, in the runtime's estimated tokens (§9.1).
    manual : replay the model's ``loop_compact`` calls.
    """

    max_tokens: int
    manual: bool = True


@dataclass(frozen=True)
class TrimToolResultsPolicy:
    """Cut every tool result older than the ``keep_recent`` newest tool-result rows to
    ``max_chars`` characters, then apply ``then`` (None: nothing else).

    Parameters
    ----------
    max_chars : characters kept of each older tool-result block.
    keep_recent : newest tool-result rows left whole.
    then : another policy applied after trimming (e.g. a :class:`ThresholdPolicy`).
    """

    max_chars: int
    keep_recent: int = 1
    then: ThresholdPolicy | SlidingWindowPolicy | None = None


Policy = ThresholdPolicy | SlidingWindowPolicy | TrimToolResultsPolicy


@dataclass(slots=True)
class _SRow:
    seq: int | None
    kind: str
    conv: bool
    chars: int
    media: int
    tr_lens: list[int] | None = None
    trimmed: bool = False


SIM_EVENT_COLUMNS = {
    "event_id": "Int64",
    "kind": "string",
    "simulated": "bool",
    "before_call": "Int64",
    "boundary_seq": "Int64",
    "summary_seq": "Int64",
    "matches_real": "bool",
    "dropped_seqs": "object",
    "n_dropped": "Int64",
    "dropped_tokens": "Int64",
    "kept_seqs": "object",
    "summary_tokens": "Int64",
    "chat_tokens": "Int64",
    "threshold": "Int64",
    "compaction_input": "Int64",
    "compaction_output": "Int64",
}

SIM_CALL_COLUMNS = {
    "seq": "Int64",
    "epoch": "Int64",
    "est_tokens_real": "Int64",
    "est_tokens_sim": "Int64",
    "tokens_input_real": "Int64",
    "tokens_input_sim": "Int64",
    "tokens_output": "Int64",
    "tokens_total_real": "Int64",
    "tokens_total_sim": "Int64",
    "threshold": "Int64",
    "n_rows_sim": "Int64",
}


@dataclass
class SimulationResult:
    """What :func:`simulate` found.

    Attributes
    ----------
    policy : the policy simulated.
    events : one row per compaction, eviction, trim or clear in the simulated run. Columns:
        ``event_id``, ``kind`` (``auto``, ``preflight``, ``manual``, ``evict``, ``trim``,
        ``clear``, or ``recorded`` for a real compaction applied as recorded because the
        history around it is incomplete), ``simulated`` (False for events replayed as
        recorded: clears and ``recorded``), ``before_call`` (the model call it precedes),
        ``boundary_seq`` (highest real seq processed before it), ``summary_seq`` (the real
        summary reused, NA for an estimated one), ``matches_real`` (a real event happened at
        the same boundary), ``dropped_seqs`` (tuple of real seqs removed, context rows
        included), ``n_dropped``, ``dropped_tokens`` (estimate of the dropped conversation),
        ``kept_seqs`` (tail), ``summary_tokens``, ``chat_tokens`` (the runtime counter when it
        fired), ``threshold``, ``compaction_input``, ``compaction_output`` (the compaction
        call's tokens: real when reused, else modelled).
    calls : one row per model call: ``seq``, ``epoch`` (simulated), ``est_tokens_real``,
        ``est_tokens_sim``, ``tokens_input_real``, ``tokens_input_sim`` (the counterfactual
        model in the module docstring), ``tokens_output``, ``tokens_total_real``,
        ``tokens_total_sim``, ``threshold``, ``n_rows_sim`` (conversation rows in context).
    summary : dict of totals: ``n_events``, ``n_compactions`` (simulated auto, preflight and
        manual), ``n_real_compactions``, ``tokens_sent`` (model-call input + compaction-call
        input, simulated), ``tokens_sent_actual`` (the same, recorded), ``tokens_sent_ratio``,
        ``calls_input``, ``calls_input_actual``, ``compaction_input``,
        ``compaction_input_actual``, ``max_context_tokens``, ``max_context_tokens_actual``.
    """

    policy: Any
    events: pd.DataFrame
    calls: pd.DataFrame
    summary: dict[str, Any]

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<SimulationResult {self.policy!r}: {s['n_compactions']} compactions "
            f"(real {s['n_real_compactions']}), {s['n_events']} events, tokens sent "
            f"{s['tokens_sent']:,} vs {s['tokens_sent_actual']:,}>"
        )


class _Sim:
    def __init__(self, agent: AgentFile, st: _Replay, policy: Policy, summary_chars: int | None):
        self.agent, self.st, self.policy = agent, st, policy
        self.sched = _threshold_schedule(agent, st)
        rows = st.rows
        self.live: list[_SRow] = []
        self.chat = 0
        self.flushed = False
        self.grace = False
        self.events: list[dict[str, Any]] = []
        self.call_recs: list[dict[str, Any]] = []
        self.epoch = 0
        self.last_seq = 0
        summ = [r for r in rows.values() if r.kind == "compaction_summary"]
        nudges = [r for r in rows.values() if r.sub == "memory_flush"]
        self.summary_chars = (
            summary_chars
            if summary_chars is not None
            else round(sum(r.chars for r in summ) / len(summ))
            if summ
            else DEFAULT_SUMMARY_CHARS
        )
        self.nudge_chars = (
            round(sum(r.chars for r in nudges) / len(nudges)) if nudges else DEFAULT_NUDGE_CHARS
        )
        # compaction call model: input overhead over the swept estimate, mean output
        ev = st.events
        over, outs = [], []
        for j in range(len(ev)):
            s = _i(ev["summary_seq"].iloc[j])
            if s is None or s not in rows or not len(ev["audit_ids"].iloc[j]):
                continue
            r = rows[s]
            conv = [rows[q] for q in st.swept[j] if rows[q].conv and q not in st.tails[j]]
            e = estimate_tokens(
                sum(x.chars + MESSAGE_OVERHEAD for x in conv), sum(x.media for x in conv)
            )
            if r.tin is not None:
                over.append(r.tin - e)
            if r.tout is not None:
                outs.append(r.tout)
        self.comp_overhead = round(sum(over) / len(over)) if over else 0
        self.comp_output = round(sum(outs) / len(outs)) if outs else None

    # -- helpers ---------------------------------------------------------------------------
    def est(self, rows: list[_SRow] | None = None) -> int:
        rows = self.live if rows is None else rows
        return estimate_tokens(
            sum(r.chars + MESSAGE_OVERHEAD for r in rows if r.conv),
            sum(r.media for r in rows if r.conv),
        )

    def srow(self, r: _Row) -> _SRow:
        tr = None
        if r.kind == "tool_result":
            blocks, _ = parse_content(r.content)
            tr = [
                js_length(b["content"])
                for b in blocks
                if b.get("type") == "tool_result" and isinstance(b.get("content"), str)
            ]
        return _SRow(r.seq, r.kind, r.conv, r.chars, r.media, tr)

    def threshold(self, seq: int) -> int:
        pol = self.policy
        if isinstance(pol, TrimToolResultsPolicy):
            pol = pol.then  # type: ignore[assignment]
        if isinstance(pol, ThresholdPolicy) and pol.threshold is not None:
            return int(pol.threshold)
        return _threshold_at(self.sched, seq)[0]

    def add_event(self, **kw: Any) -> None:
        kw.setdefault("event_id", len(self.events))
        kw.setdefault("boundary_seq", self.last_seq)
        self.events.append(kw)

    def compact(
        self,
        kind: str,
        *,
        call: int | None,
        keep: set[int] | int,
        real_summary: _Row | None,
        threshold: int | None,
        simulated: bool = True,
        boundary: int | None = None,
    ) -> None:
        if isinstance(keep, int):
            conv_idx = [i for i, r in enumerate(self.live) if r.conv]
            tail_idx = set(conv_idx[len(conv_idx) - keep :]) if keep else set()
        else:
            tail_idx = {i for i, r in enumerate(self.live) if r.seq in keep}
        tail = [r for i, r in enumerate(self.live) if i in tail_idx]
        gone = [r for i, r in enumerate(self.live) if i not in tail_idx]
        if not any(r.conv for r in gone) and kind not in ("recorded", "manual"):
            return
        dropped_tok = self.est([r for r in gone if r.conv])
        if real_summary is not None:
            summ = _SRow(real_summary.seq, "compaction_summary", True, real_summary.chars, 0)
            cin, cout = real_summary.tin, real_summary.tout
        elif kind == "recorded":  # its summary was discarded: size and cost unknown
            summ = _SRow(None, "compaction_summary", True, 0, 0)
            cin = cout = None
        else:
            summ = _SRow(None, "compaction_summary", True, self.summary_chars, 0)
            cin = dropped_tok + self.comp_overhead
            cout = (
                self.comp_output
                if self.comp_output is not None
                else estimate_tokens(self.summary_chars, 0)
            )
        self.add_event(
            kind=kind,
            simulated=simulated,
            before_call=call,
            boundary_seq=max([self.last_seq, *(r.seq for r in self.live if r.seq is not None)])
            if boundary is None
            else boundary,
            summary_seq=summ.seq,
            matches_real=real_summary is not None,
            dropped_seqs=tuple(r.seq for r in gone if r.seq is not None),
            n_dropped=len(gone),
            dropped_tokens=dropped_tok,
            kept_seqs=tuple(r.seq for r in tail if r.seq is not None),
            summary_tokens=None
            if kind == "recorded" and real_summary is None
            else estimate_tokens(summ.chars + MESSAGE_OVERHEAD, 0),
            chat_tokens=self.chat,
            threshold=threshold,
            compaction_input=cin,
            compaction_output=cout,
        )
        # a recorded event's real summary arrives later as an ordinary row
        self.live = tail if kind == "recorded" else [summ, *tail]
        self.after_reset()

    def after_reset(self) -> None:
        self.chat = self.est()
        self.flushed = False
        self.grace = False
        self.epoch += 1

    def clear(self, *, call: int | None, simulated: bool, boundary: int) -> None:
        gone = self.live
        self.add_event(
            kind="clear",
            simulated=simulated,
            before_call=call,
            boundary_seq=boundary,
            summary_seq=None,
            matches_real=True,
            dropped_seqs=tuple(r.seq for r in gone if r.seq is not None),
            n_dropped=len(gone),
            dropped_tokens=self.est([r for r in gone if r.conv]),
            kept_seqs=(),
            summary_tokens=None,
            chat_tokens=self.chat,
            threshold=None,
            compaction_input=None,
            compaction_output=None,
        )
        self.live = []
        self.after_reset()

    # -- policies before a model call ------------------------------------------------------
    def pre_call(self, c: int, seg_nudge: _Row | None, seg_summary: _Row | None) -> _Row | None:
        """Top of the iteration (before context rows are written). Returns the real summary
        still unused."""
        pol = self.policy
        if isinstance(pol, TrimToolResultsPolicy):
            self.trim(c, pol)
            pol = pol.then  # type: ignore[assignment]
        if isinstance(pol, SlidingWindowPolicy):
            self.slide(c, pol)
        if not isinstance(pol, ThresholdPolicy):
            return seg_summary
        t = self.threshold(c)
        if self.chat >= t and self.flushed:
            self.compact("auto", call=c, keep=pol.preserve, real_summary=seg_summary, threshold=t)
            return None
        if self.chat >= t:
            chars = seg_nudge.chars if seg_nudge is not None else self.nudge_chars
            self.live.append(_SRow(seg_nudge.seq if seg_nudge else None, "notice", True, chars, 0))
            self.flushed = True
            self.grace = True
        return seg_summary

    def guard(self, c: int, seg_summary: _Row | None) -> None:
        """The pre-flight guard, right before the call (after the context rows, §5.1)."""
        pol = self.policy
        if isinstance(pol, TrimToolResultsPolicy):
            pol = pol.then  # type: ignore[assignment]
        if not isinstance(pol, ThresholdPolicy):
            return
        t = self.threshold(c)
        bound = min(t + GRACE_EXTRA, math.floor(t * GRACE_FACTOR)) if self.grace else t
        if max(self.chat, self.est()) >= bound:
            self.compact(
                "preflight", call=c, keep=pol.preserve, real_summary=seg_summary, threshold=t
            )

    def slide(self, c: int, pol: SlidingWindowPolicy) -> None:
        gone: list[_SRow] = []
        while self.est() > pol.max_tokens and sum(1 for r in self.live if r.conv) > 1:
            r = self.live.pop(0)
            gone.append(r)
            # a tool result never outlives its call; context rows go with what follows them
            while self.live and (self.live[0].kind == "tool_result" or not self.live[0].conv):
                if sum(1 for x in self.live if x.conv) <= 1 and self.live[0].conv:
                    break
                gone.append(self.live.pop(0))
        if gone:
            self.add_event(
                kind="evict",
                simulated=True,
                before_call=c,
                summary_seq=None,
                matches_real=False,
                dropped_seqs=tuple(r.seq for r in gone if r.seq is not None),
                n_dropped=len(gone),
                dropped_tokens=self.est([r for r in gone if r.conv]),
                kept_seqs=(),
                summary_tokens=None,
                chat_tokens=self.chat,
                threshold=pol.max_tokens,
                compaction_input=None,
                compaction_output=None,
            )

    def trim(self, c: int, pol: TrimToolResultsPolicy) -> None:
        results = [r for r in self.live if r.kind == "tool_result" and r.tr_lens]
        old = results[: max(0, len(results) - pol.keep_recent)]
        seqs, cut_total = [], 0
        for r in old:
            if r.trimmed or r.tr_lens is None:
                continue
            cut = sum(max(0, n - pol.max_chars) for n in r.tr_lens)
            r.trimmed = True
            if cut:
                before = self.est([r])
                r.chars -= cut
                cut_total += before - self.est([r])
                seqs.append(r.seq)
        if seqs:
            self.add_event(
                kind="trim",
                simulated=True,
                before_call=c,
                summary_seq=None,
                matches_real=False,
                dropped_seqs=tuple(s for s in seqs if s is not None),
                n_dropped=len(seqs),
                dropped_tokens=cut_total,
                kept_seqs=(),
                summary_tokens=None,
                chat_tokens=self.chat,
                threshold=None,
                compaction_input=None,
                compaction_output=None,
            )

    # -- the run -----------------------------------------------------------------------------
    def run(self) -> None:
        st = self.st
        rows = st.rows
        ev = st.events
        bounds = [int(b) for b in ev["boundary_seq"]]
        summ_of = {_i(s): j for j, s in enumerate(ev["summary_seq"]) if _i(s) is not None}
        manual_on = getattr(
            self.policy.then if isinstance(self.policy, TrimToolResultsPolicy) else self.policy,
            "manual",
            True,
        )
        # actions replayed at their boundary: clears, manual compactions, incomplete events
        actions: list[tuple[int, int]] = []  # (boundary, event index)
        artifacts: set[int] = set()
        for j in range(len(ev)):
            s = _i(ev["summary_seq"].iloc[j])
            is_clear = str(ev["event"].iloc[j]) == "clear"
            if is_clear or st.forced[j] or st.manual[j]:
                actions.append((bounds[j], j))
            if s is not None and s in rows and not st.forced[j]:
                artifacts.add(s)
        for r in rows.values():
            if r.sub == "memory_flush":
                artifacts.add(r.seq)
        actions.sort()
        ai = 0
        used_summaries: set[int] = set()

        def run_actions(upto: int, call: int | None) -> None:
            nonlocal ai
            while ai < len(actions) and actions[ai][0] < upto:
                _, j = actions[ai]
                ai += 1
                s = _i(ev["summary_seq"].iloc[j])
                real = rows.get(s) if s is not None else None
                if str(ev["event"].iloc[j]) == "clear":
                    self.clear(call=call, simulated=False, boundary=bounds[j])
                elif st.forced[j]:
                    self.compact(
                        "recorded",
                        call=call,
                        keep=set(st.tails[j]),
                        real_summary=real,
                        threshold=None,
                        simulated=False,
                        boundary=bounds[j],
                    )
                elif st.manual[j] and manual_on:
                    if real is not None:
                        used_summaries.add(real.seq)
                    self.compact(
                        "manual",
                        call=call,
                        keep=set() if j in st.fallback else set(st.tails[j]),
                        real_summary=real,
                        threshold=None,
                    )

        calls = set(st.calls)
        seg_nudge: _Row | None = None
        seg_summary: _Row | None = None
        trailing: list[_Row] = []
        for s in st.order:
            r = rows[s]
            if s in artifacts:
                if r.sub == "memory_flush":
                    seg_nudge = r
                elif r.kind == "compaction_summary":
                    j = summ_of.get(s)
                    if j is not None and not st.manual[j]:
                        seg_summary = r
                continue
            if s in calls:
                run_actions(s, s)
                if seg_summary is not None and seg_summary.seq in used_summaries:
                    seg_summary = None
                left = self.pre_call(s, seg_nudge, seg_summary)
                for t in trailing:
                    self.live.append(self.srow(t))
                trailing = []
                self.guard(s, left)
                self.record_call(r)
                self.live.append(self.srow(r))
                self.last_seq = s
                seg_nudge = seg_summary = None
                continue
            if r.kind == "context" and not r.conv:
                trailing.append(r)
                continue
            run_actions(s, None)
            for t in trailing:
                self.live.append(self.srow(t))
            trailing = []
            self.live.append(self.srow(r))
            self.last_seq = s
        run_actions(1 << 62, None)
        for t in trailing:
            self.live.append(self.srow(t))

    def record_call(self, r: _Row) -> None:
        ch, md, _ = self.st.est[r.seq]
        e_real = estimate_tokens(ch, md)
        e_sim = self.est()
        out = r.tout or 0
        base = r.tin if r.tin is not None else (r.ttot - out if r.ttot is not None else None)
        if base is None:
            tin_sim = e_sim
        else:
            tin_sim = max(0, base + e_sim - e_real)
        total_sim = tin_sim + out
        self.call_recs.append(
            {
                "seq": r.seq,
                "epoch": self.epoch,
                "est_tokens_real": e_real,
                "est_tokens_sim": e_sim,
                "tokens_input_real": base,
                "tokens_input_sim": tin_sim,
                "tokens_output": r.tout,
                "tokens_total_real": r.ttot,
                "tokens_total_sim": total_sim,
                "threshold": self.threshold(r.seq),
                "n_rows_sim": sum(1 for x in self.live if x.conv),
            }
        )
        self.chat = total_sim
        self.grace = False


def simulate(
    agent: AgentFile | str | os.PathLike[str],
    policy: Policy,
    *,
    summary_chars: int | None = None,
) -> SimulationResult:
    """Replay an agent's whole recorded history under another memory policy, with no model
    call. The model's rows are kept as recorded; the runtime's artifacts (summaries, nudges)
    are re-created where the simulated policy puts them. Clears, and compactions whose
    surroundings the file no longer holds (audit off), are applied as recorded.

    Parameters
    ----------
    agent : an open :class:`AgentFile` or a path.
    policy : :class:`ThresholdPolicy`, :class:`SlidingWindowPolicy` or
        :class:`TrimToolResultsPolicy`.
    summary_chars : size of a simulated summary that no real one matches (default: the mean of
        the agent's real summaries, else :data:`DEFAULT_SUMMARY_CHARS`).

    Returns
    -------
    SimulationResult
        ``events`` and ``calls`` frames and ``summary`` totals. The token model is described in
        the module docstring: at the policy and threshold in force it reproduces the real
        compaction points and token counts exactly.

    Examples
    --------
    >>> import adfkit
    >>> from adfkit._replay import simulate, ThresholdPolicy
    >>> agent = adfkit.open_adf("sample_agents/clean.adf")
    >>> res = simulate(agent, ThresholdPolicy())
    >>> res.summary["n_compactions"] == res.summary["n_real_compactions"]
    True
    """
    if not isinstance(policy, ThresholdPolicy | SlidingWindowPolicy | TrimToolResultsPolicy):
        raise TypeError(
            "policy must be one of [ThresholdPolicy, SlidingWindowPolicy, "
            f"TrimToolResultsPolicy], got {type(policy).__name__}"
        )
    if isinstance(agent, str | os.PathLike):
        from ._agent import open_adf

        with open_adf(agent) as a:
            return simulate(a, policy, summary_chars=summary_chars)
    st = _replay_state(agent)
    sim = _Sim(agent, st, policy, summary_chars)
    sim.run()
    call_seqs = np.asarray(st.calls, dtype="int64")
    for e in sim.events:  # an event replayed between rows precedes the next model call
        if e.get("before_call") is None:
            nxt = call_seqs[call_seqs > e["boundary_seq"]]
            e["before_call"] = int(nxt[0]) if len(nxt) else None
    events = _typed(sim.events, SIM_EVENT_COLUMNS)
    calls = _typed(sim.call_recs, SIM_CALL_COLUMNS)
    comp = agent.compactions()
    real_comp = comp[(comp["event"] == "compaction")]
    ci_act = int(real_comp["compaction_input"].fillna(0).sum())
    sim_comp = events[events["kind"].isin(["auto", "preflight", "manual", "recorded"])]
    ci_sim = int(sim_comp["compaction_input"].fillna(0).sum())
    cin = int(calls["tokens_input_sim"].fillna(0).sum())
    cin_act = int(calls["tokens_input_real"].fillna(0).sum())
    summary = {
        "n_events": int(events["simulated"].sum()),
        "n_compactions": int(
            (events["simulated"] & events["kind"].isin(["auto", "preflight", "manual"])).sum()
        ),
        "n_real_compactions": int(
            ((comp["event"] == "compaction") & ~pd.Series(st.forced, dtype=bool)).sum()
        ),
        "tokens_sent": cin + ci_sim,
        "tokens_sent_actual": cin_act + ci_act,
        "tokens_sent_ratio": (cin + ci_sim) / (cin_act + ci_act) if cin_act + ci_act else None,
        "calls_input": cin,
        "calls_input_actual": cin_act,
        "compaction_input": ci_sim,
        "compaction_input_actual": ci_act,
        "max_context_tokens": int(calls["tokens_total_sim"].max()) if len(calls) else 0,
        "max_context_tokens_actual": int(calls["tokens_total_real"].max())
        if len(calls) and calls["tokens_total_real"].notna().any()
        else 0,
    }
    return SimulationResult(policy=policy, events=events, calls=calls, summary=summary)


def simulate_sweep(
    agent: AgentFile | str | os.PathLike[str],
    thresholds: list[int] | np.ndarray,
    *,
    preserve: int = 0,
    manual: bool = True,
    summary_chars: int | None = None,
) -> pd.DataFrame:
    """The runtime's policy at each of several thresholds. One row per threshold.

    Columns: ``threshold`` (Int64), ``n_compactions``, ``n_real_compactions``,
    ``tokens_sent``, ``tokens_sent_actual`` (Int64), ``tokens_sent_ratio`` (Float64: simulated
    / actual), ``tokens_saved`` (Int64: actual - simulated), ``max_context_tokens``,
    ``mean_context_tokens`` (Float64: mean simulated ``input + output`` per call).

    Examples
    --------
    >>> from adfkit._replay import simulate_sweep
    >>> s = simulate_sweep("sample_agents/clean.adf", [6000, 8000, 12000])
    >>> s["n_compactions"].is_monotonic_decreasing
    True
    """
    if isinstance(agent, str | os.PathLike):
        from ._agent import open_adf

        with open_adf(agent) as a:
            return simulate_sweep(
                a, thresholds, preserve=preserve, manual=manual, summary_chars=summary_chars
            )
    recs = []
    for t in thresholds:
        res = simulate(
            agent,
            ThresholdPolicy(int(t), preserve=preserve, manual=manual),
            summary_chars=summary_chars,
        )
        s = res.summary
        recs.append(
            {
                "threshold": int(t),
                "n_compactions": s["n_compactions"],
                "n_real_compactions": s["n_real_compactions"],
                "tokens_sent": s["tokens_sent"],
                "tokens_sent_actual": s["tokens_sent_actual"],
                "tokens_sent_ratio": s["tokens_sent_ratio"],
                "tokens_saved": s["tokens_sent_actual"] - s["tokens_sent"],
                "max_context_tokens": s["max_context_tokens"],
                "mean_context_tokens": float(res.calls["tokens_total_sim"].mean())
                if len(res.calls)
                else None,
            }
        )
    return _typed(
        recs,
        {
            "threshold": "Int64",
            "n_compactions": "Int64",
            "n_real_compactions": "Int64",
            "tokens_sent": "Int64",
            "tokens_sent_actual": "Int64",
            "tokens_sent_ratio": "Float64",
            "tokens_saved": "Int64",
            "max_context_tokens": "Int64",
            "mean_context_tokens": "Float64",
        },
    )
