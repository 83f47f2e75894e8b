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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import schema
from ._compactions import compactions
from ._config import threshold_value
from ._js import js_length
from ._replay import ReplayRow, ReplayState, as_int, replay_state
from ._rows import MESSAGE_OVERHEAD, estimate_tokens, parse_content
from ._settings import threshold_at, threshold_schedule
from ._source import AgentSource

#: Summary size (estimator characters, marker and footer included) used for a simulated
#: compaction when the agent has no real summary to measure.
DEFAULT_SUMMARY_CHARS = 2000

#: Length of the runtime's default memory-flush nudge text (§3.4), used when the agent has none.
DEFAULT_NUDGE_CHARS = 300

#: The runtime preserves this many conversation messages on a ``loop_compact`` call (§5.1).

#: Extra allowance of the pre-flight guard during the grace call (§5.1).
GRACE_EXTRA = 30_000

GRACE_FACTOR = 1.3


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

    def __post_init__(self) -> None:
        if self.threshold is not None and threshold_value(self.threshold) is None:
            raise ValueError(
                f"threshold must be a number above 0 and at most 2**53-1, got {self.threshold!r}"
            )


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
    def __init__(
        self, src: AgentSource, st: ReplayState, policy: Policy, summary_chars: int | None
    ):
        self.st, self.policy = st, policy
        self.sched = threshold_schedule(src)
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
            s = as_int(ev["summary_seq"].iloc[j])
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

    def threshold(self, seq: int) -> int | None:
        pol = self.policy
        if isinstance(pol, TrimToolResultsPolicy):
            pol = pol.then  # type: ignore[assignment]
        if isinstance(pol, ThresholdPolicy) and pol.threshold is not None:
            return threshold_value(pol.threshold)
        return threshold_at(self.sched, seq)[0]

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
    def pre_call(
        self, c: int, seg_nudge: ReplayRow | None, seg_summary: ReplayRow | None
    ) -> ReplayRow | None:
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
        if t is None:  # no usable threshold: the runtime never compacts automatically
            return seg_summary
        if self.chat >= t and self.flushed:
            self.compact("auto", call=c, keep=pol.preserve, real_summary=seg_summary, threshold=t)
            return None
        if self.chat >= t:
            chars = seg_nudge.chars if seg_nudge is not None else self.nudge_chars
            self.live.append(_SRow(seg_nudge.seq if seg_nudge else None, "notice", True, chars, 0))
            self.flushed = True
            self.grace = True
        return seg_summary

    def guard(self, c: int, seg_summary: ReplayRow | None) -> None:
        """The pre-flight guard, right before the call (after the context rows, §5.1)."""
        pol = self.policy
        if isinstance(pol, TrimToolResultsPolicy):
            pol = pol.then  # type: ignore[assignment]
        if not isinstance(pol, ThresholdPolicy):
            return
        t = self.threshold(c)
        if t is None:
            return
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
        summ_of = {as_int(s): j for j, s in enumerate(ev["summary_seq"]) if as_int(s) is not None}
        manual_on = getattr(
            self.policy.then if isinstance(self.policy, TrimToolResultsPolicy) else self.policy,
            "manual",
            True,
        )
        # actions replayed at their boundary: clears, manual compactions, incomplete events
        actions: list[tuple[int, int]] = []  # (boundary, event index)
        artifacts: set[int] = set()
        for j in range(len(ev)):
            s = as_int(ev["summary_seq"].iloc[j])
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
                s = as_int(ev["summary_seq"].iloc[j])
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
        seg_nudge: ReplayRow | None = None
        seg_summary: ReplayRow | None = None
        trailing: list[ReplayRow] = []
        for s in st.order:
            r = rows[s]
            if s in artifacts:
                if r.sub == "memory_flush":
                    seg_nudge = r
                elif r.kind == "compaction_summary":
                    jj = summ_of.get(s)
                    if jj is not None and not st.manual[jj]:
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
    >>> from adfkit._simulate import simulate, ThresholdPolicy
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
    for e in sim.events:  # an event replayed between rows precedes the next model call
        if e.get("before_call") is None:
            nxt = call_seqs[call_seqs > e["boundary_seq"]]
            e["before_call"] = int(nxt[0]) if len(nxt) else None
    events = schema.frame(sim.events, schema.SIM_EVENTS)
    calls = schema.frame(sim.call_recs, schema.SIM_CALLS)
    comp = compactions(src)
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
    >>> from adfkit._simulate import simulate_sweep
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
                "tokens_saved": s["tokens_sent_actual"] - s["tokens_sent"],
                "max_context_tokens": s["max_context_tokens"],
                "mean_context_tokens": float(res.calls["tokens_total_sim"].mean())
                if len(res.calls)
                else None,
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
        },
    )
