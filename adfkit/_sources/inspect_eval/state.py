"""What the parser builds as it reads one sample: its rows, calls and compaction events, each
call's output and input matched to rows, the rows' times (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._sources.inspect_eval.calls import Call, is_model, output_message
from adfkit._sources.inspect_eval.content import Resolver, message_key, message_row
from adfkit._sources.inspect_eval.inputs import Matcher, Pool, expand
from adfkit._sources.transcript.kit import Findings, iso_ms


class Sample:
    """The parse of one sample, step by step (the steps in :func:`.parser.parse_sample`)."""

    def __init__(self, sample: dict[str, Any], member: str, fnd: Findings) -> None:
        self.sample = sample
        self.fnd = fnd
        self.resolve = Resolver(sample.get("attachments"))
        raw_msgs = sample.get("messages")
        if not isinstance(raw_msgs, list):
            fnd.add("no_messages", "warning", None, f"member {member!r} holds no messages list")
            raw_msgs = []
        self.msgs = [self.resolve(m) if isinstance(m, dict) else {} for m in raw_msgs]
        self.rows = [message_row(i, m) for i, m in enumerate(self.msgs, start=1)]
        ed = sample.get("events_data")
        self.pool = Pool(
            ed.get("messages") if isinstance(ed, dict) else sample.get("message_pool"),
            self.resolve,
        )
        events = sample.get("events")
        self.events: list[Any] = events if isinstance(events, list) else []
        self.matcher = Matcher(self.msgs)
        self.calls = [
            Call(i, ev, expand(ev, self.pool, self.resolve, fnd, i + 1))
            for i, ev in enumerate(self.events)
            if is_model(ev)
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
            om = output_message(c.ev)
            if om is None:
                continue
            mid = om.get("id")
            q = self.matcher.by_id.get(mid) if isinstance(mid, str) else None
            if q is None or self.rows[q - 1].role != "assistant":
                k = message_key(self.resolve(om))
                key = self.matcher.key
                q = next((s for s in asst if s > last and key(self.msgs[s - 1]) == k), None)
                if q is None and not isinstance(mid, str):
                    q = next((s for s in asst if s > last and s not in used), None)
            if q is not None and q not in used:
                c.out_seq = q
                used.add(q)
                last = q

    # -- times, findings ---------------------------------------------------------------------
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
