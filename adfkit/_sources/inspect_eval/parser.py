"""One Inspect AI sample (``samples/<id>_epoch_<n>.json`` of an ``.eval`` log) as a
:class:`~adfkit._sources.transcript.kit.ParsedTranscript` (SOURCES-NEXT.md §1).

- **Rows** are ``sample.messages`` in order (Inspect keeps the full history there: compaction
  changes only what the model is sent). ``seq`` = 1-based position, ``line`` = the same
  position, ``uuid`` = the message ``id``. A ``system`` message is a user row with
  ``kind_hint="context"``; a user message with ``metadata.summary`` true is the compaction
  summary (``kind_hint="compaction_summary"``); an assistant message's ``tool_calls`` are
  ``tool_use`` blocks, its reasoning parts ``thinking`` blocks; a ``tool`` message is a user row
  holding one ``tool_result`` (``is_error`` when it has an ``error``). ``attachment://<hash>``
  strings are resolved from ``sample.attachments``. Messages carry no time: an assistant row
  has its call's time (``ModelEvent.completed``, else ``timestamp``), a tool row its
  ``ToolEvent``'s, a summary row its ``CompactionEvent``'s; the others none.
- **Model calls**: every top-level ``ModelEvent``. Its input is ``input`` when written, else
  expanded from ``input_refs`` (``[start, end)`` ranges, in order) into
  ``events_data.messages`` (0.3.206+) or the sample's ``message_pool`` (the experimental
  version-3 layout). Each input message is matched to a row by its content (role, content,
  tool call id, tool calls; the pool deduplicates identical messages under the first one's id,
  so an id alone can name the wrong row), aligned from the end of the input so each message is
  the latest row with that content before the next one's; a message whose content matches no
  row but whose id does is that row *edited* (an ``edit`` compaction). Its usage
  (``output.usage``: ``input_tokens`` full-rate only, plus ``input_tokens_cache_read`` and
  ``_write``) is counted once: ``input`` = the three together, ``output``, ``cache_read``,
  ``cache_write``, ``reasoning``. ``ModelEvent.cache`` is Inspect's own response cache, not
  provider tokens: it is not read. The call is put on the assistant row its output message is
  (by id, else the next assistant row); the summarizer call of a ``summary`` compaction (the
  tool-less call right before the ``CompactionEvent``) on the summary row; calls with no row
  (a scorer's) on none.
- **Compactions**: each ``CompactionEvent``. ``pre_tokens``/``post_tokens`` are its
  ``tokens_before``/``tokens_after``: **Inspect's estimates** (the last reported input plus
  counted new messages; a ``count_tokens`` of the result), not provider usage. What it swept is
  not on the event: it is the rows in the window before it (every row up to the event that no
  earlier event swept) that the next agent call's input no longer holds; kept = those it still
  holds. ``type`` ``summary``/``trim`` is a ``compaction``; ``edit`` (tool results and thinking
  cleared in place, messages kept) is a ``microcompaction`` whose cleared rows are those the next
  input holds edited. ``trigger``: ``metadata.trigger`` ``threshold`` -> ``auto``, ``forced`` ->
  ``manual``; strategy, type, source, ``messages_before``/``_after`` are kept in ``extra``.
  ``tokens_before``/``tokens_after`` = ``input`` of the last agent call before and the first
  after.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson

from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import (
    Findings,
    ModelCall,
    ParsedTranscript,
    TranscriptEvent,
    TranscriptRow,
    anthropic_tokens,
    as_int,
    bad_usage,
    iso_ms,
    result_text,
    unknown_counts,
)

FORMAT = "inspect_eval"
#: Attachment references: ``attachment://<hash>`` (``tc://<hash>`` in logs before ~0.3.50).
_ATTACH = ("attachment://", "tc://")
_TRIGGERS = {"threshold": "auto", "forced": "manual", "auto": "auto", "manual": "manual"}


@dataclass(slots=True)
class _Call:
    index: int  # 0-based position in sample.events
    ev: dict[str, Any]
    inputs: list[dict[str, Any]]
    seqs: list[int | None] = field(default_factory=list)
    edited: list[int] = field(default_factory=list)
    out_seq: int | None = None
    summarizer: bool = False


class _Resolver:
    """``attachment://<hash>`` strings -> the attachment's text (missing ones are kept, and
    counted for one finding)."""

    def __init__(self, attachments: Any) -> None:
        self.att = attachments if isinstance(attachments, dict) else {}
        self.missing: set[str] = set()

    def __call__(self, x: Any) -> Any:
        if isinstance(x, str):
            for pre in _ATTACH:
                if x.startswith(pre):
                    h = x[len(pre) :]
                    v = self.att.get(h)
                    if isinstance(v, str):
                        return v
                    self.missing.add(h)
            return x
        if isinstance(x, list):
            return [self(v) for v in x]
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        return x


def _key(m: dict[str, Any]) -> bytes:
    """What identifies a message's content (not its id, source, metadata or model)."""
    calls = m.get("tool_calls")
    tc = (
        [[c.get("id"), c.get("function"), c.get("arguments")] for c in calls if isinstance(c, dict)]
        if isinstance(calls, list)
        else None
    )
    return orjson.dumps(
        [m.get("role"), m.get("content"), m.get("tool_call_id"), tc], option=orjson.OPT_SORT_KEYS
    )


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    if not isinstance(content, list):
        return out
    for p in content:
        if not isinstance(p, dict):
            continue
        t = p.get("type")
        if t == "text" and isinstance(p.get("text"), str):
            out.append({"type": "text", "text": p["text"]})
        elif t == "reasoning":
            r = p.get("reasoning")
            if p.get("redacted") or not isinstance(r, str):
                out.append({"type": "thinking", "thinking": ""})
            else:
                out.append({"type": "thinking", "thinking": r})
        elif t == "image" and isinstance(p.get("image"), str):
            url = p["image"]
            url = url if not url.startswith("data:") else url[:64]  # never the whole base64
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append({"type": str(t) if isinstance(t, str) else "part"})
    return out


def _blocks(m: dict[str, Any]) -> list[dict[str, Any]]:
    role = m.get("role")
    if role == "tool":
        err = m.get("error")
        text = result_text(m.get("content"))
        if isinstance(err, dict) and isinstance(err.get("message"), str) and not text:
            text = err["message"]
        return [
            {
                "type": "tool_result",
                "tool_use_id": m.get("tool_call_id"),
                "content": text,
                "is_error": err is not None,
            }
        ]
    blocks = _text_parts(m.get("content"))
    calls = m.get("tool_calls")
    if role == "assistant" and isinstance(calls, list):
        for c in calls:
            if not isinstance(c, dict):
                continue
            args = c.get("arguments")
            if not isinstance(args, dict):
                args = {"_error": c.get("parse_error") or "not an object", "_raw_arguments": args}
            blocks.append(
                {"type": "tool_use", "id": c.get("id"), "name": c.get("function"), "input": args}
            )
    return blocks


def _row(seq: int, m: dict[str, Any]) -> TranscriptRow:
    role = m.get("role")
    hint: str | None = None
    note = None
    meta = m.get("metadata")
    if role == "assistant":
        out_role = "assistant"
    else:
        out_role = "user"
        if role == "system":
            hint = "context"
        elif role == "user" and isinstance(meta, dict) and meta.get("summary") is True:
            hint = "compaction_summary"
        elif role not in ("user", "tool"):
            note = f"message role {str(role)[:20]!r}"
    mid = m.get("id")
    model = m.get("model") if role == "assistant" else None
    return TranscriptRow(
        seq=seq,
        role=out_role,
        content=_blocks(m),
        model=model if isinstance(model, str) else None,
        kind_hint=hint,
        line=seq,
        lines=(seq,),
        uuid=mid if isinstance(mid, str) else None,
        note=note,
    )


def _usage(u: Any, fnd: Findings, line: int) -> tuple[dict[str, int], dict[str, Any]]:
    """(ADF tokens, counts that are not counts as written) of an Inspect ``ModelUsage``."""
    if not isinstance(u, dict):
        return {}, {}
    a = {
        "input_tokens": u.get("input_tokens"),
        "output_tokens": u.get("output_tokens"),
        "cache_read_input_tokens": u.get("input_tokens_cache_read"),
        "cache_creation_input_tokens": u.get("input_tokens_cache_write"),
    }
    tokens = anthropic_tokens(a)
    unknown = unknown_counts(a, "anthropic")
    bad = [k for k, v in u.items() if k.endswith("_tokens") or k.startswith("input_tokens")]
    bad = [k for k in bad if u.get(k) is not None and as_count(u.get(k)) is None]
    if bad:
        bad_usage(fnd, line, sorted(bad))
    r = as_count(u.get("reasoning_tokens"))
    if r is not None:
        tokens["reasoning"] = r
    return tokens, unknown


#: Pool messages all the calls of one sample may name through ``input_refs`` together: a real
#: sample's inputs hold ~500,000 (500 calls of 1,000 messages); a crafted one can name the whole
#: pool from every call, or one range many times in one call.
MAX_EXPANDED_REFS = 5_000_000


class _Pool:
    def __init__(self, msgs: Any, resolve: _Resolver) -> None:
        self.raw = msgs if isinstance(msgs, list) else []
        self.resolve = resolve
        self._done: dict[int, dict[str, Any]] = {}
        #: Messages the calls named so far (against :data:`MAX_EXPANDED_REFS`); None once past.
        self.named: int | None = 0

    def __len__(self) -> int:
        return len(self.raw)

    def get(self, i: int) -> dict[str, Any]:
        m = self._done.get(i)
        if m is None:
            x = self.raw[i]
            m = self.resolve(x) if isinstance(x, dict) else {}
            self._done[i] = m
        return m


def _expand(ev: dict[str, Any], pool: _Pool, resolve: _Resolver, fnd: Findings, line: int) -> list:
    inp = ev.get("input")
    if isinstance(inp, list) and inp:
        return [resolve(m) for m in inp if isinstance(m, dict)]
    refs = ev.get("input_refs")
    if not isinstance(refs, list):
        return []
    out: list[dict[str, Any]] = []
    again = _named_again(refs)
    for k, r in enumerate(refs):
        ok = (
            isinstance(r, list)
            and len(r) == 2
            and all(type(x) is int for x in r)
            and 0 <= r[0] <= r[1] <= len(pool)
        )
        if not ok or k in again:
            why = (
                "names messages another range of this call named (each is expanded once)"
                if ok
                else f"names no messages of the pool ({len(pool)} messages)"
            )
            fnd.add(
                "bad_ref",
                "error",
                line,
                f"event {line}: input_refs range {str(r)[:40]} {why}; the call's input is "
                "incomplete",
            )
            continue
        if pool.named is None or pool.named + (r[1] - r[0]) > MAX_EXPANDED_REFS:
            if pool.named is not None:
                fnd.add(
                    "input_refs_cap",
                    "error",
                    line,
                    f"event {line}: the calls' input_refs name more than {MAX_EXPANDED_REFS:,} "
                    "pool messages in all; this call's input and the later ones are incomplete",
                )
            pool.named = None
            break
        pool.named += r[1] - r[0]
        out.extend(pool.get(i) for i in range(r[0], r[1]))
    return out


def _named_again(refs: list[Any]) -> set[int]:
    """Positions in ``refs`` of the ``[start, end)`` ranges that name a pool message a range
    before them (by start) named already; ranges that are not ranges are left to the caller."""
    good = sorted(
        (r[0], r[1], k)
        for k, r in enumerate(refs)
        if isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r) and r[0] < r[1]
    )
    out: set[int] = set()
    end = 0
    for start, stop, k in good:
        if start < end:
            out.add(k)
        else:
            end = stop
    return out


class _Matcher:
    """Input messages -> row seqs (see the module docstring)."""

    def __init__(self, msgs: list[dict[str, Any]]) -> None:
        self.by_key: dict[bytes, list[int]] = {}
        self.by_id: dict[str, int] = {}
        # id(message) -> (message, key): a pooled message is one object however many inputs
        # hold it, so its key is computed once (the message is kept, so its id stays its own)
        self._keys: dict[int, tuple[dict[str, Any], bytes]] = {}
        for i, m in enumerate(msgs, start=1):
            self.by_key.setdefault(self.key(m), []).append(i)
            mid = m.get("id")
            if isinstance(mid, str):
                self.by_id.setdefault(mid, i)

    def key(self, m: dict[str, Any]) -> bytes:
        got = self._keys.get(id(m))
        if got is None:
            got = self._keys[id(m)] = (m, _key(m))
        return got[1]

    def match(self, inputs: list[dict[str, Any]], bound: int) -> tuple[list[int | None], list[int]]:
        """Seqs of ``inputs`` (None: no row), all below ``bound``, and the seqs found edited."""
        out: list[int | None] = [None] * len(inputs)
        edited: list[int] = []
        hi = bound
        for j in range(len(inputs) - 1, -1, -1):
            m = inputs[j]
            cands = self.by_key.get(self.key(m))
            q = None
            if cands:
                k = bisect.bisect_left(cands, hi) - 1
                if k >= 0:
                    q = cands[k]
            if q is None:
                mid = m.get("id")
                i = self.by_id.get(mid) if isinstance(mid, str) else None
                if i is not None and i < hi:
                    q = i
                    edited.append(i)
            if q is not None:
                out[j] = q
                hi = q
        return out, edited


def _row_model(ev: dict[str, Any]) -> str | None:
    """The model a call's row names: the provider's own name, as assistant messages carry it
    (``output.model``, then the output message's ``model``), else Inspect's
    ``<provider>/<model>`` of the event."""
    out = ev.get("output")
    om = _output_message(ev)
    for v in (
        out.get("model") if isinstance(out, dict) else None,
        om.get("model") if om else None,
        ev.get("model"),
    ):
        if isinstance(v, str) and v:
            return v
    return None


def _is_model(e: Any) -> bool:
    return isinstance(e, dict) and e.get("event") == "model"


def _output_message(ev: dict[str, Any]) -> dict[str, Any] | None:
    out = ev.get("output")
    ch = out.get("choices") if isinstance(out, dict) else None
    if isinstance(ch, list) and ch and isinstance(ch[0], dict):
        m = ch[0].get("message")
        return m if isinstance(m, dict) else None
    return None


@dataclass(frozen=True, slots=True)
class ParsedSample:
    """A parsed sample: the transcript, and the rows each agent call's input held (call seq ->
    input seqs in input order, context rows included; messages that are no row left out)."""

    parsed: ParsedTranscript
    inputs: dict[int, tuple[int, ...]]


def parse_sample(
    sample: Any, *, path: str, member: str, meta: dict[str, str], findings: list | None = None
) -> ParsedSample:
    """Parse one EvalSample object (``member`` of the log at ``path``); ``findings`` are the
    log's own (a missing header...), repeated in every sample's."""
    fnd = Findings()
    for f in findings or []:
        fnd.add(f.check, f.severity, f.line, f.detail)
    if not isinstance(sample, dict):
        fnd.add("not_a_sample", "error", None, f"member {member!r} is JSON but not an object")
        sample = {}
    st = _Sample(sample, member, fnd)
    st.match_calls()
    events = st.compactions()
    calls, input_of = st.usage(events)
    events = [
        dataclasses.replace(
            e,
            tokens_before=input_of.get(e.extra.pop("_before_call", None)),
            tokens_after=input_of.get(e.extra.pop("_after_call", None)),
        )
        for e in events
    ]
    st.stamp_rows()
    st.final_findings()
    m2 = dict(meta)
    for k, v in (("sample_id", sample.get("id")), ("epoch", sample.get("epoch"))):
        if v is not None:
            m2[k] = str(v)
    uuid = sample.get("uuid") if isinstance(sample.get("uuid"), str) else None
    if uuid:
        m2["sample_uuid"] = uuid
    m2["member"] = member
    parsed = ParsedTranscript(
        path=path,
        format=FORMAT,
        session_id=uuid,
        meta=m2,
        rows=st.rows,
        events=events,
        findings=fnd.done(),
        calls=calls,
    )
    inputs = {
        c.out_seq: tuple(q for q in c.seqs if q is not None)
        for c in st.calls
        if c.out_seq is not None and not c.summarizer
    }
    return ParsedSample(parsed, inputs)


class _Sample:
    """The parse of one sample, step by step (each step a method, in :func:`parse_sample`)."""

    def __init__(self, sample: dict[str, Any], member: str, fnd: Findings) -> None:
        self.sample = sample
        self.fnd = fnd
        self.resolve = _Resolver(sample.get("attachments"))
        raw_msgs = sample.get("messages")
        if not isinstance(raw_msgs, list):
            fnd.add("no_messages", "warning", None, f"member {member!r} holds no messages list")
            raw_msgs = []
        self.msgs = [self.resolve(m) if isinstance(m, dict) else {} for m in raw_msgs]
        self.rows = [_row(i, m) for i, m in enumerate(self.msgs, start=1)]
        ed = sample.get("events_data")
        self.pool = _Pool(
            ed.get("messages") if isinstance(ed, dict) else sample.get("message_pool"),
            self.resolve,
        )
        events = sample.get("events")
        self.events: list[Any] = events if isinstance(events, list) else []
        self.matcher = _Matcher(self.msgs)
        self.calls = [
            _Call(i, ev, _expand(ev, self.pool, self.resolve, fnd, i + 1))
            for i, ev in enumerate(self.events)
            if _is_model(ev)
        ]
        self.comps = [
            (i, e)
            for i, e in enumerate(self.events)
            if isinstance(e, dict) and e.get("event") == "compaction"
        ]
        self.tool_seq: dict[int, int] = {}  # event index -> seq of the tool message it wrote
        self.times: dict[int, int | None] = {}  # seq -> the time its event states

    # -- calls and rows ---------------------------------------------------------------------
    def match_calls(self) -> None:
        """Summarizer calls marked, each call's output and input matched to rows, each tool
        event to its tool message."""
        for ci, ce in self.comps:  # the summarizer: the tool-less call right before
            if ce.get("type") not in ("summary", None):
                continue
            prev = [c for c in self.calls if c.index < ci]
            if (
                prev
                and not prev[-1].ev.get("tools")
                and not any(prev[-1].index < i2 < ci for i2, _ in self.comps)
            ):
                prev[-1].summarizer = True
        self._outputs()
        nxt = len(self.rows) + 1  # each input lies before its output row (else the next known)
        for c in reversed(self.calls):
            bound = c.out_seq if c.out_seq is not None else nxt
            c.seqs, c.edited = self.matcher.match(c.inputs, bound)
            if c.out_seq is not None:
                nxt = c.out_seq
                t = iso_ms(c.ev.get("completed")) or iso_ms(c.ev.get("timestamp"))
                self.times.setdefault(c.out_seq, t)
        by_call = {
            r.content[0].get("tool_use_id"): r.seq
            for r in self.rows
            if r.content and r.content[0].get("type") == "tool_result"
        }
        for idx, ev in enumerate(self.events):
            if not (isinstance(ev, dict) and ev.get("event") == "tool"):
                continue
            mid = ev.get("message_id")
            q = self.matcher.by_id.get(mid) if isinstance(mid, str) else None
            if q is None:
                q = by_call.get(ev.get("id"))
            if q is not None:
                self.tool_seq[idx] = q
                t = iso_ms(ev.get("completed")) or iso_ms(ev.get("timestamp"))
                self.times.setdefault(q, t)

    def _outputs(self) -> None:
        """Each agent call's output message -> its assistant row: by id, else the next
        assistant row with the same content, else (a log without ids) the next one."""
        asst = [r.seq for r in self.rows if r.role == "assistant"]
        used: set[int] = set()
        last = 0
        for c in self.calls:
            if c.summarizer:
                continue
            om = _output_message(c.ev)
            if om is None:
                continue
            mid = om.get("id")
            q = self.matcher.by_id.get(mid) if isinstance(mid, str) else None
            if q is None or self.rows[q - 1].role != "assistant":
                k = _key(self.resolve(om))
                key = self.matcher.key
                q = next((s for s in asst if s > last and key(self.msgs[s - 1]) == k), None)
                if q is None and not isinstance(mid, str):
                    q = next((s for s in asst if s > last and s not in used), None)
            if q is not None and q not in used:
                c.out_seq = q
                used.add(q)
                last = q

    # -- compactions ------------------------------------------------------------------------
    def compactions(self) -> list[TranscriptEvent]:
        """One event per CompactionEvent: swept = the rows in the window before it (every row
        up to it that no earlier event swept) that the agent's next call no longer holds."""
        # the agent's own calls: those whose output is a row (a scorer's, a tool-agent's not)
        agent = [c for c in self.calls if not c.summarizer and c.out_seq is not None]
        # (event index, the highest row seq it shows existing), in event order
        reach = [(c.index, max([q for q in c.seqs if q] + [c.out_seq or 0])) for c in self.calls]
        reach = sorted(reach + list(self.tool_seq.items()))
        at = [i for i, _ in reach]
        upto = list(itertools.accumulate((q for _, q in reach), max))
        summary_rows = sorted(r.seq for r in self.rows if r.kind_hint == "compaction_summary")
        swept_all: set[int] = set()
        cleared_all: set[int] = set()  # rows an earlier edit compaction cleared
        used: set[int] = set()
        out = []
        for ci, ce in self.comps:
            span = ce.get("span_id")
            mine = [c for c in agent if span is None or c.ev.get("span_id") in (span, None)]
            mine = mine or agent
            k = bisect.bisect_left(at, ci)
            bound = upto[k - 1] if k else 0
            e = self._compaction(ci, ce, mine, bound, summary_rows, used, swept_all, cleared_all)
            (swept_all if e.kind == "compaction" else cleared_all).update(e.swept)
            out.append(e)
        return out

    def _compaction(
        self,
        ci: int,
        ce: dict[str, Any],
        mine: list[_Call],
        bound: int,
        summary_rows: list[int],
        used: set[int],
        swept_all: set[int],
        cleared_all: set[int],
    ) -> TranscriptEvent:
        before = [c for c in mine if c.index < ci]
        after = next((c for c in mine if c.index > ci), None)
        ctype = ce.get("type")
        s_seq = None
        if ctype in ("summary", None):  # the summary row: the next input's, after the bound
            cand = [q for q in (after.seqs if after else []) if q in summary_rows and q > bound]
            cand = [q for q in cand or summary_rows if q > bound and q not in used]
            if cand:
                s_seq = cand[0]
                used.add(s_seq)
                bound = s_seq - 1
                self.times.setdefault(s_seq, iso_ms(ce.get("timestamp")))
        md_raw = ce.get("metadata")
        md: dict[str, Any] = md_raw if isinstance(md_raw, dict) else {}
        extra: dict[str, Any] = {"type": ctype, "event_index": ci + 1}
        for name in ("strategy", "messages_before", "messages_after"):
            if md.get(name) is not None:
                extra[name] = md[name]
        if isinstance(ce.get("source"), str):
            extra["source"] = ce["source"]
        if isinstance(md.get("trigger"), str):
            extra["recorded_trigger"] = md["trigger"]
        window = [q for q in range(1, bound + 1) if q not in swept_all]
        swept: list[int] = []
        kept: list[int] = []
        edited: list[int] = []
        if after is None:
            self.fnd.add(
                "no_call_after_compaction",
                "info",
                None,
                f"event {ci + 1}: no model call follows the compaction, so what it swept is not "
                "recorded (nothing counted as swept)",
            )
        else:
            held = {q for q in after.seqs if q is not None}
            swept = [q for q in window if q not in held]
            kept = [q for q in window if q in held]
            edited = sorted(set(after.edited) - cleared_all)
        kind = "compaction"
        if ctype == "edit" and not swept:  # cleared in place: a microcompaction
            kind = "microcompaction"
            swept, kept = [q for q in edited if q <= bound], []
            if after is not None and swept:
                sizes = [
                    len(result_text(m.get("content")))
                    for m, q in zip(after.inputs, after.seqs, strict=True)
                    if q in swept
                ]
                extra["stub_chars"] = round(sum(sizes) / len(sizes)) if sizes else 0
        elif edited:
            extra["edited_seqs"] = tuple(edited)
        trig = md.get("trigger")
        extra["_before_call"] = before[-1].index if before else None
        extra["_after_call"] = after.index if after else None
        return TranscriptEvent(
            kind=kind,
            trigger=_TRIGGERS.get(trig) if isinstance(trig, str) else None,
            pre_tokens=as_int(ce.get("tokens_before")),
            post_tokens=as_int(ce.get("tokens_after")),
            created_at=iso_ms(ce.get("timestamp")),
            line=bound + 1,
            uuid=ce.get("uuid") if isinstance(ce.get("uuid"), str) else None,
            summary_seq=s_seq,
            swept=tuple(swept),
            preserved=tuple(kept),
            extra=extra,
            summarises=ctype not in ("trim", "edit"),
        )

    # -- usage, times, findings -------------------------------------------------------------
    def usage(self, events: list[TranscriptEvent]) -> tuple[list[ModelCall], dict[int, int]]:
        """Every call's usage counted once, on the row that is its output (a summarizer's: its
        compaction's summary row); and each call's ADF input, by event index."""
        out: list[ModelCall] = []
        on_row: set[int] = set()
        input_of: dict[int, int] = {}
        summaries = [(ci, e.summary_seq) for (ci, _), e in zip(self.comps, events, strict=True)]
        for c in self.calls:
            out_ = c.ev.get("output")
            u = out_.get("usage") if isinstance(out_, dict) else None
            tokens, unknown = _usage(u, self.fnd, c.index + 1)
            seq, note = c.out_seq, None
            if c.summarizer:
                seq = next((q for ci, q in summaries if ci > c.index), None)
                note = "the summarizer call of a summary compaction"
            if seq is not None and seq in on_row:
                seq, note = None, "a second call for the same row"
            if seq is not None:
                on_row.add(seq)
                r = self.rows[seq - 1]
                r.tokens = {**tokens, **unknown} if unknown else dict(tokens)
                if unknown:
                    r.malformed = True
                    r.note = "usage holds values that are not token counts"
                if r.model is None:
                    r.model = _row_model(c.ev)
            elif note is None:
                note = "no row holds the call's output (a scorer's or a failed call)"
            if "input" in tokens:
                input_of[c.index] = tokens["input"]
            model, uid = c.ev.get("model"), c.ev.get("uuid")
            out.append(
                ModelCall(
                    key=uid if isinstance(uid, str) else f"model@{c.index + 1}",
                    seq=seq,
                    line=c.index + 1,
                    model=model if isinstance(model, str) else None,
                    tokens=tokens,
                    created_at=iso_ms(c.ev.get("timestamp")),
                    note=note,
                )
            )
        return out, input_of

    def stamp_rows(self) -> None:
        """Each row's time: its own event's; else the time of the first call whose input holds
        it (it was there by then), else the previous row's, else the sample's start."""
        for q, t in self.times.items():
            if t is not None:
                self.rows[q - 1].created_at = t
        seen_at: dict[int, int | None] = {}
        for c in self.calls:
            seen = iso_ms(c.ev.get("timestamp"))
            for held in c.seqs:
                if held is not None and held not in seen_at:
                    seen_at[held] = seen
        prev = iso_ms(self.sample.get("started_at"))
        for r in self.rows:
            if r.created_at is None:
                r.created_at = seen_at.get(r.seq) or prev
            prev = r.created_at or prev

    def final_findings(self) -> None:
        fnd = self.fnd
        calls = self.calls
        unmatched = sum(1 for c in calls if c.out_seq is not None for q in c.seqs if q is None)
        if unmatched:
            fnd.add(
                "input_not_in_history",
                "warning",
                None,
                f"{unmatched} message(s) of the agent's model inputs match no message of the "
                "sample's history; replay() rebuilds the window without them",
            )
        if self.resolve.missing:
            fnd.add(
                "missing_attachment",
                "warning",
                None,
                f"{len(self.resolve.missing)} attachment://<hash> reference(s) name no "
                "attachment of the sample; the text is the reference itself",
            )
        err = self.sample.get("error")
        if err:
            msg = err.get("message") if isinstance(err, dict) else err
            fnd.add(
                "sample_error", "info", None, f"the sample ended with an error: {str(msg)[:200]}"
            )
