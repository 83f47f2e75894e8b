"""Counterfactual memory policies: the whole recorded history replayed under another rule.

:func:`simulate` replays the history with no model call. The model's own actions (every
assistant and tool row) are kept; the runtime's artifacts (summaries, memory-flush nudges) are
dropped and re-created where the simulated policy would create them. :func:`simulate_sweep`
runs the runtime's own policy at several thresholds.

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

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._analysis.replay import ReplayRow, ReplayState, as_int, replay_state
from adfkit._analysis.settings import threshold_at, threshold_schedule
from adfkit._base.config import threshold_value
from adfkit._base.errors import AdfWarning
from adfkit._base.js import js_length
from adfkit._base.totals import add_known, known_max, known_sum
from adfkit._core.rows import MESSAGE_OVERHEAD, estimate_tokens, parse_content
from adfkit._core.source import AgentSource
from adfkit._core.thresholds import automatic

#: Summary size (estimator characters, marker and footer included) used for a simulated
#: compaction when the agent has no real summary to measure.
DEFAULT_SUMMARY_CHARS = 2000

#: Length of the runtime's default memory-flush nudge text (§3.4), used when the agent has none.
DEFAULT_NUDGE_CHARS = 300

#: Extra allowance of the pre-flight guard during the grace call (§5.1): the bound is
#: ``min(threshold + GRACE_EXTRA, floor(threshold * GRACE_FACTOR))``.
GRACE_EXTRA = 30_000
GRACE_FACTOR = 1.3


class _Policy:
    """What a policy answers the simulator (:class:`_Sim` asks; it never looks at the type).

    The defaults fit a policy that only changes the context: the threshold in force is the
    recorded one, nothing happens right before the call, the model's ``loop_compact`` calls
    are replayed.
    """

    def threshold_at(self, sim: _Sim, seq: int) -> int | None:
        """The automatic-compaction threshold this policy applies at ``seq`` (None: none)."""
        return sim.recorded_threshold(seq)

    def replays_manual(self) -> bool:
        """Whether the model's own ``loop_compact`` calls are replayed."""
        return True

    def before_call(
        self, sim: _Sim, call: int, nudge: ReplayRow | None, summary: ReplayRow | None
    ) -> ReplayRow | None:
        """Act at the top of the iteration of model call ``call`` (before its context rows are
        written); ``nudge`` and ``summary`` are the real memory-flush nudge and summary of the
        segment. Returns the real summary still unused."""
        return summary

    def preflight(self, sim: _Sim, call: int, summary: ReplayRow | None) -> None:
        """Act right before the call, after its context rows (the runtime's pre-flight guard)."""


@dataclass(frozen=True)
class ThresholdPolicy(_Policy):
    """Automatic compaction at a threshold, as the agent's tool fires it.

    With the memory-flush nudge (the ADF runtime, §5.1): when the last call's reported
    ``input + output`` reaches ``threshold``, the nudge, one grace call, then the compaction;
    plus the pre-flight guard on ``max(chatTokens, estimate)``. Without it (Claude Code and the
    other transcripts' tools): before a call, when the last call's ``input + output`` plus the
    estimate of what was written since reaches ``threshold`` (Claude Code's ``preTokens``),
    the compaction at once.

    Parameters
    ----------
    threshold : tokens; None uses the threshold in force at each call (the real one:
        configured, recorded, or assumed, :func:`adfkit._analysis.settings.threshold_schedule`).
    preserve : conversation rows kept after an automatic compaction (the runtime keeps 0).
    manual : replay the model's ``loop_compact`` calls (their compactions keep 2 rows).
    nudge : the memory-flush nudge and grace call; None: the agent's own
        (:attr:`adfkit._core.source.AgentSource.flush_nudge`: ADF yes, transcripts no).
    """

    threshold: int | None = None
    preserve: int = 0
    manual: bool = True
    nudge: bool | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None and threshold_value(self.threshold) is None:
            raise ValueError(
                f"threshold must be a number above 0 and at most 2**53-1, got {self.threshold!r}"
            )

    def threshold_at(self, sim: _Sim, seq: int) -> int | None:
        """``threshold`` if set, else the one in force at ``seq``."""
        if self.threshold is not None:
            return threshold_value(self.threshold)
        return sim.recorded_threshold(seq)

    def replays_manual(self) -> bool:
        """``manual``."""
        return self.manual

    def _nudges(self, sim: _Sim) -> bool:
        return sim.flush_nudge if self.nudge is None else self.nudge

    def before_call(
        self, sim: _Sim, call: int, nudge: ReplayRow | None, summary: ReplayRow | None
    ) -> ReplayRow | None:
        """With the nudge: compact when the runtime's counter reached the threshold and the
        nudge was sent; send the nudge when it reached it first. Without: compact when the
        counter and what was written since reach it."""
        t = self.threshold_at(sim, call)
        if t is None:  # no usable threshold: never compacts automatically
            return summary
        if not self._nudges(sim):
            if sim.count(summary) >= t:
                keep = sim.real_tail(summary) if summary is not None and not self.preserve else None
                sim.compact(
                    "auto",
                    call=call,
                    keep=self.preserve if keep is None else keep,
                    real_summary=summary,
                    threshold=t,
                )
                return None
            return summary
        if sim.chat < t:
            return summary
        if sim.flushed:
            sim.compact("auto", call=call, keep=self.preserve, real_summary=summary, threshold=t)
            return None
        sim.send_nudge(nudge)
        return summary

    def preflight(self, sim: _Sim, call: int, summary: ReplayRow | None) -> None:
        """With the nudge: compact when ``max(chatTokens, estimate)`` reaches the threshold
        (the grace bound during the grace call). Without it there is no other check."""
        t = self.threshold_at(sim, call)
        if t is None or not self._nudges(sim):
            return
        bound = min(t + GRACE_EXTRA, math.floor(t * GRACE_FACTOR)) if sim.grace else t
        if max(sim.chat, sim.est()) >= bound:
            sim.compact(
                "preflight", call=call, keep=self.preserve, real_summary=summary, threshold=t
            )


@dataclass(frozen=True)
class SlidingWindowPolicy(_Policy):
    """Keep only the most recent ``max_tokens`` estimated tokens of conversation: before each
    call the oldest rows are evicted (a tool result never outlives its call). No summary.

    Parameters
    ----------
    max_tokens : the window, in the runtime's estimated tokens (§9.1).
    manual : replay the model's ``loop_compact`` calls.
    """

    max_tokens: int
    manual: bool = True

    def replays_manual(self) -> bool:
        """``manual``."""
        return self.manual

    def before_call(
        self, sim: _Sim, call: int, nudge: ReplayRow | None, summary: ReplayRow | None
    ) -> ReplayRow | None:
        """Evict the oldest rows until the conversation fits ``max_tokens`` (one row is
        always kept); one ``evict`` event for what left."""
        live = sim.live
        gone: list[_SRow] = []
        while sim.est() > self.max_tokens and live.n_conv > 1:
            gone.append(live.popleft())
            # a tool result never outlives its call; context rows go with what follows them
            while live and (live[0].kind == "tool_result" or not live[0].conv):
                if live.n_conv <= 1 and live[0].conv:
                    break
                gone.append(live.popleft())
        if gone:
            sim.add_removal(
                "evict", call, gone, sim.est([r for r in gone if r.conv]), self.max_tokens
            )
        return summary


@dataclass(frozen=True)
class TrimToolResultsPolicy(_Policy):
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

    def _then(self) -> _Policy:
        """The policy applied after trimming (one that changes nothing when there is none)."""
        return _Policy() if self.then is None else self.then

    def threshold_at(self, sim: _Sim, seq: int) -> int | None:
        """``then``'s."""
        return self._then().threshold_at(sim, seq)

    def replays_manual(self) -> bool:
        """``then``'s (True without one)."""
        return self._then().replays_manual()

    def before_call(
        self, sim: _Sim, call: int, nudge: ReplayRow | None, summary: ReplayRow | None
    ) -> ReplayRow | None:
        """Trim the older tool results not trimmed yet (one ``trim`` event), then ``then``."""
        results = [r for r in sim.live if r.kind == "tool_result" and r.tr_lens]
        old = results[: max(0, len(results) - self.keep_recent)]
        cut_rows: list[_SRow] = []
        cut_total = 0
        for r in old:
            if r.trimmed or r.tr_lens is None:
                continue
            cut = sum(max(0, n - self.max_chars) for n in r.tr_lens)
            r.trimmed = True
            if cut:
                before = sim.est([r])
                sim.live.resize(r, -cut)
                cut_total += before - sim.est([r])
                cut_rows.append(r)
        if cut_rows:
            sim.add_removal("trim", call, cut_rows, cut_total, None)
        return self._then().before_call(sim, call, nudge, summary)

    def preflight(self, sim: _Sim, call: int, summary: ReplayRow | None) -> None:
        """``then``'s."""
        self._then().preflight(sim, call, summary)


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


class _Window:
    """The simulated context: its rows in order, and the sums :meth:`_Sim.est` needs (the
    conversation rows' characters with their message overhead, their media, their count),
    kept as rows come and go, so that a call costs the rows that changed, not the window."""

    __slots__ = ("rows", "head", "chars", "media", "n_conv")

    def __init__(self, rows: list[_SRow] | None = None) -> None:
        self.rows: list[_SRow] = rows if rows is not None else []
        self.head = 0  # rows[:head] have left from the front (popleft), not yet cut off
        conv = [r for r in self.rows if r.conv]
        self.chars = sum(r.chars + MESSAGE_OVERHEAD for r in conv)
        self.media = sum(r.media for r in conv)
        self.n_conv = len(conv)

    def _count(self, r: _SRow, sign: int) -> None:
        if r.conv:
            self.chars += sign * (r.chars + MESSAGE_OVERHEAD)
            self.media += sign * r.media
            self.n_conv += sign

    def append(self, r: _SRow) -> None:
        self.rows.append(r)
        self._count(r, 1)

    def popleft(self) -> _SRow:
        r = self.rows[self.head]
        self.head += 1
        if self.head > 64 and self.head * 2 > len(self.rows):  # cut what left, now and then
            del self.rows[: self.head]
            self.head = 0
        self._count(r, -1)
        return r

    def resize(self, r: _SRow, delta: int) -> None:
        """Change the characters of ``r``, one of the window's rows, by ``delta``."""
        r.chars += delta
        if r.conv:
            self.chars += delta

    def __len__(self) -> int:
        return len(self.rows) - self.head

    def __iter__(self) -> Iterator[_SRow]:
        return iter(self.rows[self.head :]) if self.head else iter(self.rows)

    def __getitem__(self, i: int) -> _SRow:
        return self.rows[self.head + i]

    def since(self, i: int) -> list[_SRow]:
        """The rows from position ``i`` on."""
        return self.rows[self.head + i :]


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
        Unknown stays unknown (:mod:`adfkit._base.totals`): a figure none of whose parts is
        recorded is None (the compaction calls' input of a format that records no usage for
        them), and so is a total with such a part (``tokens_sent_actual``, the ratio).
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
            f"{_count(s['tokens_sent'])} vs {_count(s['tokens_sent_actual'])}>"
        )


def _count(n: int | None) -> str:
    """A token count for a person: ``-`` when unknown."""
    return "-" if n is None else f"{n:,}"


class _Sim:
    """One simulated run: the context the policy leaves (``live``), the runtime's counters
    (``chat``: its ``chatTokens``; ``flushed``: the nudge was sent; ``grace``: the call after
    it), the events and calls recorded so far. The policy decides (:class:`_Policy`); this
    class holds the state and the moves (compact, clear, nudge, remove)."""

    def __init__(
        self, src: AgentSource, st: ReplayState, policy: Policy, summary_chars: int | None
    ):
        self.st, self.policy = st, policy
        self.sched = threshold_schedule(src)
        self.flush_nudge = src.flush_nudge
        # what the tool compares with its threshold (the format's rule), and where a process
        # of the agent started (its count then starts afresh)
        self.counts_prompt = src.compaction_count == "prompt"
        self.process_starts = set(src.process_starts()) if self.counts_prompt else set()
        self.live = _Window()
        self.mark = 0  # live[mark:]: the last model call's row and the rows after it
        self.chat = 0
        self.chat_in = 0  # the last call's (simulated) input
        self.shift = 0  # the last call's simulated input less its real one
        self.flushed = False
        self.grace = False
        # one tuple per event, its values in the order of schema.SIM_EVENTS (a tuple of plain
        # values is no object the garbage collector keeps watching; a dict is)
        self.events: list[tuple[Any, ...]] = []
        # one list per column, not a dict per call: no object per call left for the garbage
        # collector to watch (a full collection's cost grows with the file)
        self.call_cols: dict[str, list[Any]] = {c: [] for c in schema.SIM_CALLS}
        self.epoch = 0
        self.last_seq = 0
        # the recorded events, as lists (read per event, many times)
        ev = st.events
        self.ev_kind = [str(x) for x in ev["event"]]
        self.ev_summary = [as_int(x) for x in ev["summary_seq"]]
        self.ev_bound = [int(b) for b in ev["boundary_seq"]]
        self.ev_audited = [bool(len(x)) for x in ev["audit_ids"]]
        rows = st.rows.values()
        summ = [r for r in rows if r.kind == "compaction_summary"]
        nudges = [r for r in rows if r.sub == "memory_flush"]
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
        self.comp_overhead, self.comp_output = self._compaction_call_model()
        # summary seq -> the count the record states before that automatic compaction
        changes = src.window_changes() or []
        self.counted = {
            sj: c.tokens_before
            for sj, kind, c in zip(self.ev_summary, self.ev_kind, changes, strict=False)
            if sj is not None and automatic(kind, c)
        }
        # the segment before the next model call: its real nudge and summary, and the context
        # rows written after the call's trigger (they join the window after the policy acted)
        self.seg_nudge: ReplayRow | None = None
        self.seg_summary: ReplayRow | None = None
        self.trailing: list[ReplayRow] = []

    def _compaction_call_model(self) -> tuple[int, int | None]:
        """``(input overhead, output)`` of a simulated compaction call: the mean prompt
        overhead of the real compaction calls over the estimate of what they swept, and their
        mean output (None when no real one is known)."""
        st, rows = self.st, self.st.rows
        over, outs = [], []
        for j, s in enumerate(self.ev_summary):
            if s is None or s not in rows or not self.ev_audited[j]:
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
        return (
            round(sum(over) / len(over)) if over else 0,
            round(sum(outs) / len(outs)) if outs else None,
        )

    def real_totals(self) -> tuple[int, int | None]:
        """``(real compactions, their compaction calls' input)`` as recorded: what
        ``compactions()`` counts (events ``compaction``; the ones applied as recorded are not
        counted as real), from the run's own state. The input is NA when no compaction call's
        input is recorded (:func:`adfkit._base.totals.known_sum`)."""
        rows = self.st.rows
        n = 0
        tokens: list[int | None] = []
        for j, kind in enumerate(self.ev_kind):
            if kind != "compaction":
                continue
            n += not self.st.forced[j]
            s = self.ev_summary[j]
            summary = rows.get(s) if s is not None else None
            tokens.append(summary.tin if summary is not None else None)
        return n, known_sum(tokens)

    # -- helpers ---------------------------------------------------------------------------
    def est(self, rows: list[_SRow] | None = None) -> int:
        """The estimate of the conversation rows of ``rows`` (None: the window)."""
        if rows is None:
            return estimate_tokens(self.live.chars, self.live.media)
        return estimate_tokens(
            sum(r.chars + MESSAGE_OVERHEAD for r in rows if r.conv),
            sum(r.media for r in rows if r.conv),
        )

    def srow(self, r: ReplayRow) -> _SRow:
        tr = None
        if r.kind == "tool_result":
            blocks, _ = parse_content(r.content)
            tr = [
                js_length(b["content"])
                for b in blocks
                if b.get("type") == "tool_result" and isinstance(b.get("content"), str)
            ]
        return _SRow(r.seq, r.kind, r.conv, r.chars, r.media, tr)

    def recorded_threshold(self, seq: int) -> int | None:
        """The threshold in force at ``seq`` in the real run (:func:`threshold_schedule`)."""
        return threshold_at(self.sched, seq)[0]

    def add_event(self, **kw: Any) -> None:
        kw.setdefault("event_id", len(self.events))
        kw.setdefault("boundary_seq", self.last_seq)
        self.events.append(tuple(kw.get(c) for c in schema.SIM_EVENTS))

    def compact(
        self,
        kind: str,
        *,
        call: int | None,
        keep: set[int] | int,
        real_summary: ReplayRow | None,
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
        self.live = _Window(tail if kind == "recorded" else [summ, *tail])
        self.after_reset()

    def count(self, summary: ReplayRow | None) -> int:
        """The tool's count of the context before a call, what its threshold is compared with:
        where a real automatic compaction took place here and the record states its count
        (Claude Code's ``preTokens``), that count moved by what the simulated context differs
        from the real one; else the last call's input and the estimate of its reply and of
        the rows written since (a reply's recorded output can be short of what it wrote); a
        tool that counts the prompt alone, the last call's input (at a process's first call,
        the estimate of the history it resumes: :meth:`_call`)."""
        rec = self.counted.get(summary.seq) if summary is not None else None
        if rec is not None:
            return rec + self.shift
        if self.counts_prompt:  # the last call's prompt alone (AgentSource.compaction_count)
            return self.chat_in
        return self.chat_in + self.est(self.live.since(self.mark))

    def real_tail(self, summary: ReplayRow) -> set[int]:
        """The rows the real compaction whose summary this is kept (its preserved tail)."""
        j = self.event_of_summary.get(summary.seq)
        return set(self.st.tails[j]) if j is not None else set()

    def after_reset(self) -> None:
        self.mark = len(self.live)
        self.chat = self.chat_in = self.est()
        self.flushed = False
        self.grace = False
        self.epoch += 1

    def clear(self, *, call: int | None, simulated: bool, boundary: int) -> None:
        gone = list(self.live)
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
        self.live = _Window()
        self.after_reset()

    def send_nudge(self, nudge: ReplayRow | None) -> None:
        """The memory-flush nudge (the real one's size, else the agent's mean), then one grace
        call before the automatic compaction."""
        chars = nudge.chars if nudge is not None else self.nudge_chars
        self.live.append(_SRow(nudge.seq if nudge else None, "notice", True, chars, 0))
        self.flushed = True
        self.grace = True

    def add_removal(
        self, kind: str, call: int, rows: list[_SRow], tokens: int, threshold: int | None
    ) -> None:
        """An event that removed ``rows`` (or cut them) with no summary: ``evict``, ``trim``."""
        self.add_event(
            kind=kind,
            simulated=True,
            before_call=call,
            summary_seq=None,
            matches_real=False,
            dropped_seqs=tuple(r.seq for r in rows if r.seq is not None),
            n_dropped=len(rows),
            dropped_tokens=tokens,
            kept_seqs=(),
            summary_tokens=None,
            chat_tokens=self.chat,
            threshold=threshold,
            compaction_input=None,
            compaction_output=None,
        )

    # -- the run -----------------------------------------------------------------------------
    def run(self) -> None:
        """Every row in creation order: the runtime's artifacts are left out (the policy makes
        its own), recorded actions are applied at their boundary (:meth:`_replay_actions`),
        and each model call goes through the policy (:meth:`_call`)."""
        st = self.st
        artifacts = self._artifacts()
        self.actions = self._recorded_actions()
        self.next_action = 0
        # summary seq -> its event (the last one, should two name the same row)
        self.event_of_summary = {s: j for j, s in enumerate(self.ev_summary) if s is not None}
        self.used_summaries: set[int] = set()
        calls = set(st.calls)
        for s in st.order:
            r = st.rows[s]
            if s in artifacts:
                self._note_artifact(r)
            elif s in calls:
                self._call(r)
            elif r.kind == "context" and not r.conv:
                self.trailing.append(r)
            else:
                self._replay_actions(s, None)
                self._flush_trailing()
                self.live.append(self.srow(r))
                self.last_seq = s
        self._replay_actions(1 << 62, None)
        self._flush_trailing()

    def _artifacts(self) -> set[int]:
        """Seqs of the runtime's artifacts the policy re-creates: the summaries of events it
        simulates (not those applied as recorded) and the memory-flush nudges."""
        rows = self.st.rows
        out = {
            s
            for j, s in enumerate(self.ev_summary)
            if s is not None and s in rows and not self.st.forced[j]
        }
        out.update(r.seq for r in rows.values() if r.sub == "memory_flush")
        return out

    def _recorded_actions(self) -> list[tuple[int, int]]:
        """``(boundary, event index)`` of the events replayed at their boundary, in order:
        clears, manual compactions and events whose surroundings are incomplete."""
        st = self.st
        return sorted(
            (self.ev_bound[j], j)
            for j, kind in enumerate(self.ev_kind)
            if kind == "clear" or st.forced[j] or st.manual[j]
        )

    def _note_artifact(self, r: ReplayRow) -> None:
        """Keep a real nudge or (automatic) summary for the segment: a simulated one at the same
        point reuses its size and cost."""
        if r.sub == "memory_flush":
            self.seg_nudge = r
        elif r.kind == "compaction_summary":
            j = self.event_of_summary.get(r.seq)
            if j is not None and not self.st.manual[j]:
                self.seg_summary = r

    def _call(self, r: ReplayRow) -> None:
        """One model call: recorded actions before it, the policy's move, the context rows
        written meanwhile, the pre-flight guard, then the call itself."""
        s = r.seq
        self._replay_actions(s, s)
        if s in self.process_starts:  # a new process counts the history it resumes
            self.chat_in = self.est()
        if self.seg_summary is not None and self.seg_summary.seq in self.used_summaries:
            self.seg_summary = None
        left = self.policy.before_call(self, s, self.seg_nudge, self.seg_summary)
        self._flush_trailing()
        self.policy.preflight(self, s, left)
        self.record_call(r)
        self.mark = len(self.live)
        self.live.append(self.srow(r))
        self.last_seq = s
        self.seg_nudge = self.seg_summary = None

    def _flush_trailing(self) -> None:
        for t in self.trailing:
            self.live.append(self.srow(t))
        self.trailing = []

    def _replay_actions(self, upto: int, call: int | None) -> None:
        """Apply the recorded actions whose boundary is below ``upto``: a clear as recorded, an
        incomplete event as recorded (``recorded``), the model's ``loop_compact`` when the
        policy replays it (``manual``)."""
        st, rows = self.st, self.st.rows
        replay_manual = self.policy.replays_manual()
        while self.next_action < len(self.actions) and self.actions[self.next_action][0] < upto:
            bound, j = self.actions[self.next_action]
            self.next_action += 1
            s = self.ev_summary[j]
            real = rows.get(s) if s is not None else None
            if self.ev_kind[j] == "clear":
                self.clear(call=call, simulated=False, boundary=bound)
            elif st.forced[j]:
                self.compact(
                    "recorded",
                    call=call,
                    keep=set(st.tails[j]),
                    real_summary=real,
                    threshold=None,
                    simulated=False,
                    boundary=bound,
                )
            elif st.manual[j] and replay_manual:
                if real is not None:
                    self.used_summaries.add(real.seq)
                self.compact(
                    "manual",
                    call=call,
                    keep=set() if j in st.fallback else set(st.tails[j]),
                    real_summary=real,
                    threshold=None,
                )

    def record_call(self, r: ReplayRow) -> None:
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
        self.chat_in = tin_sim
        self.shift = 0 if base is None else tin_sim - base
        rec = {
            "seq": r.seq,
            "epoch": self.epoch,
            "est_tokens_real": e_real,
            "est_tokens_sim": e_sim,
            "tokens_input_real": base,
            "tokens_input_sim": tin_sim,
            "tokens_output": r.tout,
            "tokens_total_real": r.ttot,
            "tokens_total_sim": total_sim,
            "threshold": self.policy.threshold_at(self, r.seq),
            "n_rows_sim": self.live.n_conv,
        }
        for name, v in rec.items():
            self.call_cols[name].append(v)
        self.chat = total_sim
        self.grace = False


def check_policy(policy: Any) -> None:
    """Raise TypeError unless ``policy`` is one of the policies :func:`simulate` runs."""
    if not isinstance(policy, ThresholdPolicy | SlidingWindowPolicy | TrimToolResultsPolicy):
        raise TypeError(
            "policy must be one of [ThresholdPolicy, SlidingWindowPolicy, "
            f"TrimToolResultsPolicy], got {type(policy).__name__}"
        )


def simulate(
    src: AgentSource,
    policy: Policy,
    *,
    summary_chars: int | None = None,
) -> SimulationResult:
    """The history of ``src`` replayed under ``policy`` (the analysis behind
    :func:`adfkit.simulate`, which documents the parameters and opens paths).

    Examples
    --------
    >>> import adfkit
    >>> from adfkit._analysis.simulate import simulate, ThresholdPolicy
    >>> src = adfkit.open_adf("sample_agents/clean.adf").source
    >>> res = simulate(src, ThresholdPolicy())
    >>> res.summary["n_compactions"] == res.summary["n_real_compactions"]
    True
    """
    check_policy(policy)
    return _simulate(src, policy, summary_chars)


def _simulate(src: AgentSource, policy: Policy, summary_chars: int | None) -> SimulationResult:
    st = replay_state(src)
    sim = _Sim(src, st, policy, summary_chars)
    sim.run()
    call_seqs = np.asarray(st.calls, dtype="int64")
    cols = {c: [e[i] for e in sim.events] for i, c in enumerate(schema.SIM_EVENTS)}
    before, bounds = cols["before_call"], cols["boundary_seq"]
    for i, b in enumerate(before):  # an event replayed between rows precedes the next call
        if b is None:
            nxt = call_seqs[call_seqs > bounds[i]]
            before[i] = int(nxt[0]) if len(nxt) else None
    events = schema.frame(cols, schema.SIM_EVENTS)
    calls = schema.frame(sim.call_cols, schema.SIM_CALLS)
    n_real, ci_act = sim.real_totals()
    sim_comp = events[events["kind"].isin(["auto", "preflight", "manual", "recorded"])]
    ci_sim = known_sum(sim_comp["compaction_input"])
    cin = known_sum(calls["tokens_input_sim"])
    cin_act = known_sum(calls["tokens_input_real"])
    sent, sent_act = add_known(cin, ci_sim), add_known(cin_act, ci_act)
    summary = {
        "n_events": int(events["simulated"].sum()),
        "n_compactions": int(
            (events["simulated"] & events["kind"].isin(["auto", "preflight", "manual"])).sum()
        ),
        "n_real_compactions": n_real,
        "tokens_sent": sent,
        "tokens_sent_actual": sent_act,
        "tokens_sent_ratio": sent / sent_act if sent is not None and sent_act else None,
        "calls_input": cin,
        "calls_input_actual": cin_act,
        "compaction_input": ci_sim,
        "compaction_input_actual": ci_act,
        "max_context_tokens": known_max(calls["tokens_total_sim"]),
        "max_context_tokens_actual": known_max(calls["tokens_total_real"]),
    }
    return SimulationResult(policy=policy, events=events, calls=calls, summary=summary)


def simulate_sweep(
    src: AgentSource,
    thresholds: list[int] | np.ndarray,
    *,
    preserve: int = 0,
    manual: bool = True,
    summary_chars: int | None = None,
) -> pd.DataFrame:
    """The runtime's policy at each of several thresholds, one row per threshold (the analysis
    behind :func:`adfkit.simulate_sweep`, which documents the columns).

    Examples
    --------
    >>> import adfkit
    >>> from adfkit._analysis.simulate import simulate_sweep
    >>> s = simulate_sweep(adfkit.open_adf("sample_agents/clean.adf").source, [6000, 12000])
    >>> s["n_compactions"].is_monotonic_decreasing
    True
    """
    return _sweep(src, thresholds, preserve=preserve, manual=manual, summary_chars=summary_chars)


def _sweep(
    src: AgentSource,
    thresholds: list[int] | np.ndarray,
    *,
    preserve: int,
    manual: bool,
    summary_chars: int | None,
) -> pd.DataFrame:
    recs = []
    st = src.settings()
    win = st.context_window
    past = [int(t) for t in thresholds if win and (threshold_value(t) or 0) > win]
    if past:
        warnings.warn(
            f"{src.path}: thresholds {', '.join(f'{t:,}' for t in past)} are above the context "
            f"window ({win:,} tokens, {st.window_source}): the agent's tool would never let the "
            "context reach them; those rows (past_window) are counterfactuals no agent could run",
            AdfWarning,
            stacklevel=3,
        )
    for t in thresholds:
        res = _simulate(
            src,
            ThresholdPolicy(t, preserve=preserve, manual=manual),
            summary_chars,
        )
        s = res.summary
        recs.append(
            {
                "threshold": threshold_value(t),
                "n_compactions": s["n_compactions"],
                "n_real_compactions": s["n_real_compactions"],
                "tokens_sent": s["tokens_sent"],
                "tokens_sent_actual": s["tokens_sent_actual"],
                "tokens_sent_ratio": s["tokens_sent_ratio"],
                "tokens_saved": None
                if s["tokens_sent_actual"] is None or s["tokens_sent"] is None
                else s["tokens_sent_actual"] - s["tokens_sent"],
                "max_context_tokens": s["max_context_tokens"],
                "mean_context_tokens": float(res.calls["tokens_total_sim"].mean())
                if len(res.calls)
                else None,
                "context_window": win,
                "window_source": st.window_source if win else None,
                "past_window": None if not win else (threshold_value(t) or 0) > win,
            }
        )
    return schema.frame(
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
            "context_window": "Int64",
            "window_source": "string",
            "past_window": "boolean",
        },
    )
