"""Why each compaction fired where it did, and where one should have fired and did not.

Every figure comes from tables adfkit already builds (:func:`compactions`, :func:`usage`, the
threshold schedule of :mod:`.settings`), for every format. The findings, with their thresholds
(:data:`LIMITS`), each a name a fleet can count:

- ``early``: an automatic compaction fired below ``early`` (0.8) of the threshold in force:
  the agent compacted well before the point its settings give (the threshold may be assumed:
  its source says so).
- ``summary_grew``: the summary is more than ``summary_grew`` (1.1) times as long as the
  previous compaction's summary.
- ``back_to_back``: at most ``back_to_back`` (2) model calls since the previous compaction.
- ``did_not_shrink``: the context after the compaction is at least ``did_not_shrink`` (0.9) of
  the context before it.
- ``cache_never_read``: the calls after the compaction wrote cache (``cache_write_after``) and
  read none of it back (``cache_read_after`` is 0) within ``cache_window`` calls.
- ``missed`` (:func:`missed_compactions`): a run of at least ``missed`` (3) calls whose
  prompts were above the automatic threshold in force, with no compaction between them.
An unknown figure gives no finding (NA in, no verdict out).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._analysis.compactions import compactions
from adfkit._analysis.settings import threshold_at, threshold_schedule
from adfkit._analysis.usage import call_tokens
from adfkit._base.collector import gc_paused
from adfkit._core.source import AgentSource

#: The findings' thresholds (the module docstring says what each means).
LIMITS: dict[str, float] = {
    "early": 0.8,
    "summary_grew": 1.1,
    "back_to_back": 2,
    "did_not_shrink": 0.9,
    "missed": 3,
}
FINDINGS = ("early", "summary_grew", "back_to_back", "did_not_shrink", "cache_never_read")


def compaction_audit(src: AgentSource, *, cache_window: int = 3) -> pd.DataFrame:
    """Why each compaction fired where it did. One row per compaction (clears left out).

    Columns (dtype):

    - ``event_id`` (Int64: as :meth:`compactions`), ``kind`` (string: ``auto``, ``manual``...,
      NA where the record states none), ``created_at`` (datetime64[ms, UTC]),
      ``boundary_seq`` (Int64)
    - ``threshold`` (Int64: the automatic threshold in force), ``threshold_source`` (string:
      ``configured``, ``recorded``, ``assumed``...), ``context_window`` (Int64),
      ``window_source`` (string)
    - ``tokens_before`` (Int64: what the record states, else the last call's prompt and
      answer), ``tokens_after`` (Int64: what the record states, else the next call's prompt),
      ``fill`` (Float64: tokens_before / context_window), ``of_threshold`` (Float64:
      tokens_before / threshold), ``shrink`` (Float64: tokens_after / tokens_before)
    - ``summary_tokens``, ``previous_summary_tokens`` (Int64), ``calls_since_previous``
      (Int64: model calls since the previous compaction, or since the start)
    - ``cache_write_after``, ``cache_read_after`` (Int64: over ``cache_window`` calls after)
    - ``findings`` (object: tuple of the names in :data:`FINDINGS` that hold), and one bool
      column per finding: ``early``, ``summary_grew``, ``back_to_back``, ``did_not_shrink``,
      ``cache_never_read``

    Examples
    --------
    >>> import adfkit
    >>> a = adfkit.open_adf("sample_agents/long-runner.adf")
    >>> audit = a.compaction_audit()
    >>> len(audit) == (a.compactions()["event"] == "compaction").sum()
    True
    """
    comp = compactions(src, cache_window=cache_window)
    comp = comp[comp["event"] == "compaction"].reset_index(drop=True)
    if comp.empty:  # no compaction: no calls or settings to look up
        return schema.frame([], schema.COMPACTION_AUDIT)
    calls = call_tokens(src)
    calls = calls[calls["call_kind"] == "assistant"]  # not the compaction calls themselves
    with gc_paused():  # a row of values per compaction: many small acyclic objects
        return _audit(comp, calls, src.settings())


def _audit(comp: pd.DataFrame, calls: pd.DataFrame, settings: Any) -> pd.DataFrame:
    seqs = _CallSeqs(calls["seq"].to_numpy(dtype="float64"))
    inputs = calls["tokens_input"]
    rows = []
    previous_boundary: float = -np.inf
    previous_summary: Any = pd.NA
    for _, c in comp.iterrows():
        boundary = c["boundary_seq"]
        row = _figures(c, settings, seqs, inputs, boundary)
        row["previous_summary_tokens"] = previous_summary
        b = np.inf if pd.isna(boundary) else float(boundary)
        row["calls_since_previous"] = seqs.count_in(previous_boundary, b)
        row.update(_findings(row, first=previous_boundary == -np.inf))
        rows.append(row)
        previous_boundary, previous_summary = b, c["summary_tokens"]
    return schema.frame(rows, schema.COMPACTION_AUDIT)


class _CallSeqs:
    """The calls' seqs in display order, searched by bisection: each compaction's look-ups
    cost a logarithm of the calls, not a pass over them."""

    def __init__(self, seqs: np.ndarray) -> None:
        self.sorted = np.sort(seqs)
        self.highest = np.maximum.accumulate(seqs)  # the highest seq up to each call

    def count_in(self, lo: float, hi: float) -> int:
        """Calls with ``lo < seq <= hi``."""
        a, b = np.searchsorted(self.sorted, [lo, hi], side="right")
        return int(b - a)

    def first_after(self, seq: float) -> int | None:
        """Position of the first call (display order) whose seq is above ``seq``."""
        i = int(np.searchsorted(self.highest, seq, side="right"))
        return i if i < len(self.highest) else None


def _figures(
    c: pd.Series, settings: Any, seqs: _CallSeqs, inputs: pd.Series, boundary: Any
) -> dict[str, Any]:
    before = c["recorded_tokens_before"]
    before = c["trigger_tokens"] if pd.isna(before) else before
    after = c["recorded_tokens_after"]
    if pd.isna(after) and not pd.isna(boundary):
        later = seqs.first_after(float(boundary))
        after = inputs.iloc[later] if later is not None else pd.NA
    window, threshold = settings.context_window, c["threshold"]
    return {
        "event_id": c["event_id"],
        "kind": c["kind"],
        "created_at": c["created_at"],
        "boundary_seq": boundary,
        "threshold": threshold,
        "threshold_source": settings.threshold_source if not pd.isna(threshold) else pd.NA,
        "context_window": window,
        "window_source": settings.window_source,
        "tokens_before": before,
        "tokens_after": after,
        "fill": _ratio(before, window),
        "of_threshold": _ratio(before, threshold),
        "shrink": _ratio(after, before),
        "summary_tokens": c["summary_tokens"],
        "cache_write_after": c["cache_write_after"],
        "cache_read_after": c["cache_read_after"],
    }


def _ratio(a: Any, b: Any) -> Any:
    if a is None or b is None or pd.isna(a) or pd.isna(b) or not b:
        return pd.NA
    return float(a) / float(b)


def _known(v: Any) -> bool:
    return v is not None and not pd.isna(v)


def _findings(r: dict[str, Any], *, first: bool) -> dict[str, Any]:
    found = {
        "early": _known(r["kind"])
        and r["kind"] == "auto"
        and _known(r["of_threshold"])
        and r["of_threshold"] < LIMITS["early"],
        "summary_grew": _known(r["summary_tokens"])
        and _known(r["previous_summary_tokens"])
        and r["summary_tokens"] > LIMITS["summary_grew"] * r["previous_summary_tokens"],
        "back_to_back": not first and r["calls_since_previous"] <= LIMITS["back_to_back"],
        "did_not_shrink": _known(r["shrink"]) and r["shrink"] >= LIMITS["did_not_shrink"],
        "cache_never_read": _known(r["cache_write_after"])
        and _known(r["cache_read_after"])
        and r["cache_write_after"] > 0
        and r["cache_read_after"] == 0,
    }
    found = {k: bool(v) for k, v in found.items()}
    return {**found, "findings": tuple(k for k in FINDINGS if found[k])}


#: The threshold schedule's source names in the words of ``Settings.threshold_source``.
_SOURCE = {"config": "configured"}


def missed_compactions(src: AgentSource) -> pd.DataFrame:
    """Where the agent should have compacted and did not: runs of at least ``missed`` (3)
    consecutive model calls whose prompt was above the automatic threshold in force, with no
    compaction between them (an agent that compacts at the end of a turn may make a call or
    two past its threshold first; a longer run is a compaction that did not fire). One row per
    run.

    Columns (dtype): ``first_seq``, ``last_seq`` (Int64: the run's first and last call),
    ``n_calls`` (Int64), ``created_at`` (datetime64[ms, UTC]: the first call's),
    ``threshold`` (Int64), ``threshold_source`` (string), ``max_input`` (Int64: the largest
    prompt of the run), ``over_by`` (Int64: max_input - threshold). Empty when the threshold is
    unknown.

    Examples
    --------
    >>> import adfkit
    >>> adfkit.open_adf("sample_agents/long-runner.adf").missed_compactions().empty
    True
    """
    calls = call_tokens(src)
    calls = calls[calls["call_kind"] == "assistant"]
    bounds = np.sort(compactions(src)["boundary_seq"].dropna().to_numpy(dtype="int64"))
    sched = threshold_schedule(src)
    runs: list[list[Any]] = []
    last_epoch = None
    for call in calls.itertuples(index=False):
        threshold, source = threshold_at(sched, int(call.seq))
        over = threshold is not None and _known(call.tokens_input) and call.tokens_input > threshold
        epoch = int(np.searchsorted(bounds, call.seq, side="left"))
        if not over:
            last_epoch = None
            continue
        if runs and last_epoch == epoch:
            runs[-1].append((call, threshold, source))
        else:
            runs.append([(call, threshold, source)])
        last_epoch = epoch
    rows = [_run_row(r) for r in runs if len(r) >= LIMITS["missed"]]
    return schema.frame(rows, schema.MISSED_COMPACTIONS)


def _run_row(run: list[Any]) -> dict[str, Any]:
    first, threshold, source = run[0]
    top = max(int(c.tokens_input) for c, _, _ in run)
    return {
        "first_seq": first.seq,
        "last_seq": run[-1][0].seq,
        "n_calls": len(run),
        "created_at": first.created_at,
        "threshold": threshold,
        "threshold_source": _SOURCE.get(source or "", source),
        "max_input": top,
        "over_by": top - threshold,
    }
