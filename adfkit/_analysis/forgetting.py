"""What forgetting costs: the loss ledger of every compaction, survival across chained
compactions, cache economics around each compaction, and recovery after it.

Functions over any :class:`AgentSource` (ADF, Claude Code, Codex...), over the replay of
:mod:`adfkit._analysis.replay`: the swept rows, the summary and the tail of each compaction are the
ones :func:`adfkit._analysis.compactions.compactions` reports. Items are found by the rules of
:mod:`adfkit._analysis.items`.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pandas as pd

from adfkit import schema
from adfkit._analysis.compactions import compactions
from adfkit._analysis.items import ITEM_KINDS, input_items, text_items
from adfkit._analysis.kept import (
    Found,
    compaction_ids,
    kept_by,
    row_items,
    summaries,
    swept_items,
)
from adfkit._analysis.observe import classify_call, default_taxonomy
from adfkit._analysis.replay import ReplayState, reappended_of, replay_state
from adfkit._analysis.tables import tool_calls
from adfkit._analysis.usage import PricesArg, PriceTable, load_prices, usage_frame
from adfkit._base.collector import gc_paused
from adfkit._core.prices import price_for
from adfkit._core.rows import MESSAGE_OVERHEAD, estimate_tokens, parse_content
from adfkit._core.source import AgentSource, Key

_LEDGER: Key[pd.DataFrame] = Key("forgetting.ledger")


def provider_of(model: str | None) -> str | None:
    """The provider whose cache rules a model follows: ``anthropic`` for ``claude-*``,
    ``openai`` for ``gpt-*``, ``o<digit>*`` and ``codex*``; None when unknown."""
    m = (model or "").lower()
    if m.startswith("claude"):
        return "anthropic"
    if m.startswith(("gpt", "codex")) or (len(m) > 1 and m[0] == "o" and m[1].isdigit()):
        return "openai"
    return None


#: Tool names whose call saves what it writes (a todo list), wherever they run.
_TODO_TOOLS = frozenset(("TodoWrite",))
#: Tools that write a file: a save when the file is a memory file (:func:`_memory_path`).
_WRITE_TOOLS = frozenset(("Write", "Edit", "MultiEdit", "fs_write", "NotebookEdit"))


# -- saves ---------------------------------------------------------------------------------
def _memory_path(p: str) -> bool:
    """A file the agent keeps as memory: ``mind.md`` and ``mind/*.md`` (ADF), ``CLAUDE.md``,
    ``AGENTS.md``, ``MEMORY.md`` anywhere, any file under a ``memory/`` folder."""
    base = p.rsplit("/", 1)[-1]
    s = p.lstrip("./")
    return (
        base in ("mind.md", "CLAUDE.md", "AGENTS.md", "MEMORY.md")
        or (s.startswith("mind/") and s.endswith(".md"))
        or "memory/" in p
    )


def _strings(x: Any, out: list[str]) -> None:
    """Every string in ``x`` (a parsed JSON value), in document order, without recursion."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
        elif isinstance(v, str):
            out.append(v)


def _saves(src: AgentSource) -> dict[tuple[str, str], tuple[int, str]]:
    """(kind, key) -> (seq of the first call that saved it, where to): calls of a todo tool
    (saved to ``todos``) and writes to a memory file (:func:`_memory_path`)."""
    h = src.history()
    out: dict[tuple[str, str], tuple[int, str]] = {}
    is_call = (h["kind"].astype(str) == "assistant").to_numpy()
    for q, content in zip(h["seq"][is_call].tolist(), h["content"][is_call], strict=True):
        if not isinstance(content, str) or not any(n in content for n in _SAVE_HINTS):
            continue
        blocks, _ = parse_content(content)
        for b in blocks:
            if b.get("type") != "tool_use":
                continue
            name, inp = str(b.get("name")), b.get("input")
            target = _save_target(name, inp)
            if target is None:
                continue
            texts: list[str] = []
            if isinstance(inp, dict):  # what it wrote, not where
                _strings({k: v for k, v in inp.items() if k not in _WHERE_KEYS}, texts)
            found = text_items("\n".join(texts), "summary", every_sentence=True)
            if name in _TODO_TOOLS:
                found += input_items(inp)
            for k, _, key in found:
                out.setdefault((k, key), (int(q), target))
    return out


_SAVE_HINTS = (*_TODO_TOOLS, *_WRITE_TOOLS)
_WHERE_KEYS = frozenset(("file_path", "path", "notebook_path"))


def _save_target(name: str, inp: Any) -> str | None:
    if name in _TODO_TOOLS:
        return "todos"
    if name in _WRITE_TOOLS and isinstance(inp, dict):
        p = inp.get("file_path") or inp.get("path") or inp.get("notebook_path")
        if isinstance(p, str) and _memory_path(p):
            return p
    return None


# -- the ledger ----------------------------------------------------------------------------
@dataclass
class _Calls:
    """Model calls in seq order with prefix sums of their tokens and costs."""

    seqs: list[int]
    tokens: list[int]  # prefix sums of input + output (unknown counts 0)
    cost: list[float]  # prefix sums of cost (NaN poisons every later sum: unknown)
    usage: pd.DataFrame
    prices: PriceTable = field(default_factory=dict)

    def between(self, lo: int, hi: int) -> tuple[int, int, int, float]:
        """(first index, count, tokens, cost) of the calls with lo < seq <= hi."""
        a = bisect.bisect_right(self.seqs, lo)
        b = bisect.bisect_right(self.seqs, hi)
        return a, b - a, self.tokens[b] - self.tokens[a], self.cost[b] - self.cost[a]


_CALLS: Key[_Calls] = Key("forgetting.calls")


def _calls(src: AgentSource, prices: PricesArg = None) -> _Calls:
    """The model calls with their prefix sums, built once per source and price table (every
    table of this module reads them)."""
    key = None if prices is None else repr(prices)
    return src.memo.get(_CALLS, lambda: _build_calls(src, prices), key)


def _build_calls(src: AgentSource, prices: PricesArg) -> _Calls:
    table = load_prices(prices)
    u, _, _ = usage_frame(src.history(), table, copies=reappended_of(src))
    u = u.loc[u["call_kind"] == "assistant"].sort_values("seq").reset_index(drop=True)
    tok = (u["tokens_input"].fillna(0) + u["tokens_output"].fillna(0)).to_numpy(dtype="int64")
    cost = u["cost_usd"].to_numpy(dtype="float64")
    return _Calls(
        seqs=u["seq"].astype("int64").tolist(),
        tokens=[0, *np.cumsum(tok).tolist()],
        cost=[0.0, *np.cumsum(cost).tolist()],
        usage=u[list(_KEPT)],  # held for the file's life: the columns the tables read
        prices=table,
    )


#: The columns of the calls' usage frame that :func:`forgetting` and
#: :func:`compaction_cache` read.
_KEPT = ("seq", "model", "tokens_input", "tokens_output", "tokens_cache_read",
         "tokens_cache_write", "price_input")  # fmt: skip


_BOUNDS: Key[list[int]] = Key("forgetting.bounds")


def _epoch_end(src: AgentSource, st: ReplayState, j: int) -> int:
    """The last seq of the epoch after event ``j`` (the next event's boundary, else the end)."""
    bounds = src.memo.get(_BOUNDS, lambda: sorted(st.boundaries))
    b = st.boundaries[j]
    i = bisect.bisect_right(bounds, b)
    return bounds[i] if i < len(bounds) else (st.order[-1] if st.order else b)


def compaction_ledger(src: AgentSource, *, prices: PricesArg = None) -> pd.DataFrame:
    """The loss ledger: one row per item in the span each compaction swept (its preserved
    tail excluded), for every compaction in order.

    Items (file paths, identifiers, URLs, error lines, commands, user instructions and
    corrections, todos, numbers with a unit) are found by the rules of :mod:`adfkit._analysis.items`
    (linear in the text, documented there). An item is one ``kind`` and ``item_key``. Which
    items a compaction swept and whether its summary kept each is the one rule of
    :mod:`adfkit._analysis.kept`, shared with :meth:`summary_recall` and the recall columns of
    :meth:`compactions`: a tool's name, a seq or a row number is never an item. A compaction
    whose swept rows the record does not hold has no rows here.

    Columns (dtype):

    - ``event_id`` (Int64: as in :meth:`compactions`), ``summary_seq``, ``boundary_seq``
      (Int64)
    - ``kind`` (string: ``path``, ``identifier``, ``url``, ``error``, ``command``,
      ``instruction``, ``todo``, ``quantity``), ``value`` (string: as first written, at most
      200 characters), ``item_key`` (string: its identity)
    - ``first_seq``, ``last_seq`` (Int64), ``n_seen`` (Int64: swept rows holding it),
      ``seqs`` (object: tuple of those seqs), ``carried`` (bool: seen only in an earlier
      compaction's summary that this one swept)
    - ``kept`` (string: ``exact`` when the summary holds the value or an item of the same
      kind and key, ``normalised`` when it holds the item's words (for a path the words of
      its last part, for a URL, identifier, command or quantity all its words, in order; for
      an instruction, todo or error line 80% of them when there are three or more),
      ``lost`` otherwise; NA when the summary's text is not in the record: lost, encrypted,
      an empty transcript row)
    - ``saved`` (bool: a call before the compaction wrote it to memory: a todo list
      (``TodoWrite``) or a memory file (``mind.md``, ``mind/*.md``, ``CLAUDE.md``,
      ``AGENTS.md``, ``MEMORY.md``, a ``memory/`` folder); Codex has none),
      ``saved_seq`` (Int64: that call), ``saved_to`` (string: ``todos`` or the file)
    - ``needed_again`` (bool: after the compaction, before the next event, a row other than
      the summary and the kept tail brought the same item back: a tool call's input (the
      path read again, the command run again), a tool result (the same error hit again) or
      a person's message (the instruction repeated)), ``needed_seq`` (Int64: the first such
      row), ``needed_how`` (string: ``tool_input``, ``tool_result`` or ``user``)
    - what it took to have it back, from the compaction to ``needed_seq``: ``calls_until``
      (Int64: model calls), ``tokens_until`` (Int64: their input + output), ``cost_until_usd``
      (Float64: their cost at the price table, NA when a call is unpriced),
      ``seconds_until`` (Float64: from the summary (else the boundary row) to that row),
      ``refetch_tokens`` (Int64: estimated tokens of what brought it back: the results of the
      tool call whose input named it, else the row itself). Calls
      and tokens are shared by every item brought back by the same work.

    Examples
    --------
    >>> import adfkit
    >>> led = adfkit.open("sample_agents/long-runner.adf").compaction_ledger()
    >>> set(led["kept"].dropna()) <= {"exact", "normalised", "lost"}
    True
    """
    key = None if prices is None else repr(prices)
    return src.memo.get(_LEDGER, lambda: _ledger(src, prices), key).copy(deep=False)


def _ledger(src: AgentSource, prices: PricesArg) -> pd.DataFrame:
    with gc_paused():  # a record per item: many small acyclic objects
        return _ledger_of(src, prices)


def _ledger_of(src: AgentSource, prices: PricesArg) -> pd.DataFrame:
    st = replay_state(src)
    if not compaction_ids(st):  # nothing swept: no prices, saves or calls to look up
        return schema.frame([], schema.COMPACTION_LEDGER)
    items = row_items(src)
    saves = _saves(src)
    calls = _calls(src, prices)
    clock = _clock(src)
    results = _results_of(src)
    recs: list[dict[str, Any]] = []
    for j, sw in swept_items(src).items():
        b = st.boundaries[j]
        tail = set(st.tails[j])
        s_seq = st.summaries[j]
        back = _needed(src, st, j, items, tail, results)
        start = s_seq if s_seq is not None else b
        for k, v, key, seqs, carried, kept in zip(
            sw.kinds, sw.values, sw.keys, sw.seqs, sw.carried, sw.kept, strict=True
        ):
            saved = saves.get((k, key))
            saved = saved if saved is not None and saved[0] <= b else None
            rec = {
                "event_id": j,
                "summary_seq": s_seq,
                "boundary_seq": b,
                "kind": k,
                "value": v,
                "item_key": key,
                "first_seq": seqs[0],
                "last_seq": seqs[-1],
                "n_seen": len(seqs),
                "seqs": seqs,
                "carried": carried,
                "kept": kept,
                "saved": saved is not None,
                "saved_seq": saved[0] if saved else None,
                "saved_to": saved[1] if saved else None,
                "needed_again": (k, key) in back,
            }
            need = back.get((k, key))
            if need is not None:
                nq, how, ntok = need
                _, n, tok, cost = calls.between(b, nq)
                rec.update(
                    needed_seq=nq,
                    needed_how=how,
                    calls_until=n,
                    tokens_until=tok,
                    cost_until_usd=None if math.isnan(cost) else round(cost, 8),
                    seconds_until=clock.seconds(start, nq),
                    refetch_tokens=ntok,
                )
            recs.append(rec)
    return schema.frame(recs, schema.COMPACTION_LEDGER)


class _Clock:
    """Each row's time as an integer in the history's unit, by seq: the seconds between two
    rows without a Timestamp made for every row of the history."""

    def __init__(self, h: pd.DataFrame) -> None:
        times = h["created_at"].array
        self.per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[times.unit]
        nat = np.iinfo("int64").min
        self.at = {
            q: None if t == nat else t
            for q, t in zip(h["seq"].astype("int64").tolist(), times.asi8.tolist(), strict=True)
        }

    def seconds(self, a: int, b: int) -> float | None:
        """Seconds from row ``a`` to row ``b`` (None when either time is unknown)."""
        t0, t1 = self.at.get(a), self.at.get(b)
        return None if t0 is None or t1 is None else (t1 - t0) / self.per_second


_CLOCK: Key[_Clock] = Key("forgetting.clock")


def _clock(src: AgentSource) -> _Clock:
    return src.memo.get(_CLOCK, lambda: _Clock(src.history()))


def _results_of(src: AgentSource) -> dict[int, list[int]]:
    """Call seq -> the seqs of its tool results."""
    tc = tool_calls(src, history=True)
    out: dict[int, list[int]] = {}
    for c, r in zip(tc["call_seq"].tolist(), tc["result_seq"].tolist(), strict=True):
        if not _na(c) and not _na(r):
            out.setdefault(int(c), []).append(int(r))
    return out


def _row_tokens(st: ReplayState, q: int) -> int:
    r = st.rows[q]
    return estimate_tokens(r.chars + MESSAGE_OVERHEAD, r.media)


def _needed(
    src: AgentSource,
    st: ReplayState,
    j: int,
    items: dict[int, list[Found]],
    tail: set[int],
    results: dict[int, list[int]],
) -> dict[tuple[str, str], tuple[int, str, int]]:
    """(kind, key) -> (first seq, how, tokens it brought back) of the items brought back
    after event ``j`` and before the next event: a tool call's results, else the row."""
    b = st.boundaries[j]
    end = _epoch_end(src, st, j)
    s = st.summaries[j]
    lo = bisect.bisect_right(st.order, b)
    hi = bisect.bisect_right(st.order, end)
    out: dict[tuple[str, str], tuple[int, str, int]] = {}
    for q in st.order[lo:hi]:
        if q == s or q in tail or q in st.reappended:
            continue
        r = st.rows[q]
        for k, _, key, how in items.get(q, ()):
            if how in ("tool_input", "tool_result", "user") and (k, key) not in out:
                got = results.get(q, []) if how == "tool_input" else []
                tok = sum(_row_tokens(st, x) for x in got if x in st.rows)
                out[(k, key)] = (q, how, tok if got else _row_tokens(st, r.seq))
    return out


def forgetting(src: AgentSource, *, prices: PricesArg = None) -> pd.DataFrame:
    """What each compaction forgot, and what forgetting cost. One row per compaction, from
    :meth:`compaction_ledger`.

    Columns (dtype):

    - ``event_id``, ``summary_seq``, ``boundary_seq`` (Int64)
    - ``n_items`` (Int64: ledger rows; NA when the swept rows are not in the record, as
      ``n_identifiers`` of :meth:`compactions`), ``n_kept_exact``, ``n_kept_normalised``,
      ``n_lost`` (Int64; NA when the summary is not in the record), ``n_saved`` (Int64)
    - ``loss_rate`` (Float64: ``n_lost / n_items``, ``1 - recall`` of :meth:`compactions`),
      ``loss_rate_<kind>`` (Float64: the same per item kind; NA for a kind with no item)
    - ``n_needed_again`` (Int64: items brought back after), ``n_forgotten`` (Int64: lost,
      not saved, and needed again: what forgetting cost), ``forgetting_rows`` (Int64: the
      distinct rows that brought forgotten items back), ``forgetting_tokens`` (Int64: their
      estimated tokens), ``forgetting_cost_usd`` (Float64: those tokens at the input price
      of the first model call after the compaction, sent once; NA when unpriced),
      ``calls_until_last`` (Int64: model calls until the last forgotten item was back)

    Examples
    --------
    >>> import adfkit
    >>> f = adfkit.open("sample_agents/long-runner.adf").forgetting()
    >>> bool((f["n_lost"] <= f["n_items"]).all())
    True
    """
    st = replay_state(src)
    if not compaction_ids(st):
        return schema.frame([], schema.FORGETTING)
    led = compaction_ledger(src, prices=prices)
    calls = _calls(src, prices)
    swept = swept_items(src)
    cols = _LedgerColumns(led)
    recs = []
    for j in compaction_ids(st):
        b = st.boundaries[j]
        a = bisect.bisect_right(calls.seqs, b)
        pin = float(calls.usage["price_input"].iloc[a]) if a < len(calls.seqs) else float("nan")
        sw = swept.get(j)
        judged = sw is not None and sw.summary is not None  # items and summary both known
        rec: dict[str, Any] = {
            "event_id": j,
            "summary_seq": st.summaries[j],
            "boundary_seq": b,
            "n_items": None,
            **cols.counts(j, judged, pin),
        }
        if j in swept:
            rec["n_items"] = cols.size(j)
        recs.append(rec)
    return schema.frame(recs, schema.FORGETTING)


class _LedgerColumns:
    """The ledger's columns as plain arrays, grouped by compaction in one pass: the per
    compaction sums of :func:`forgetting` without a pandas call per compaction."""

    def __init__(self, led: pd.DataFrame) -> None:
        ev = led["event_id"].to_numpy(dtype="int64")
        order = np.argsort(ev, kind="stable")
        ev = ev[order]
        kept = led["kept"].to_numpy(dtype=object, na_value=None)[order]
        self.known = np.array([k is not None for k in kept], dtype=bool)
        self.lost = kept == "lost"
        self.exact = kept == "exact"
        self.normalised = kept == "normalised"
        self.saved = led["saved"].to_numpy(dtype=bool)[order]
        self.needed = led["needed_again"].to_numpy(dtype=bool)[order]
        self.kind = led["kind"].to_numpy(dtype=object, na_value=None)[order]
        self.needed_seq = led["needed_seq"].to_numpy(dtype=object, na_value=None)[order]
        self.refetch = led["refetch_tokens"].to_numpy(dtype=object, na_value=None)[order]
        self.calls_until = led["calls_until"].to_numpy(dtype=object, na_value=None)[order]
        ids, starts = np.unique(ev, return_index=True)
        ends = [*starts[1:].tolist(), len(ev)][: len(ids)]
        self.spans = {
            int(e): (int(a), int(z)) for e, a, z in zip(ids, starts.tolist(), ends, strict=True)
        }

    def size(self, j: int) -> int:
        a, z = self.spans.get(j, (0, 0))
        return z - a

    def counts(self, j: int, judged: bool, pin: float) -> dict[str, Any]:
        """The counts and rates of compaction ``j`` (its ledger rows)."""
        a, z = self.spans.get(j, (0, 0))
        known, lost = self.known[a:z], self.lost[a:z]
        forgot = np.flatnonzero(lost & ~self.saved[a:z] & self.needed[a:z]) + a
        rows: dict[Any, Any] = {}
        for i in forgot.tolist():  # the distinct rows that brought forgotten items back
            rows.setdefault(self.needed_seq[i], self.refetch[i])
        ftok = int(sum(0 if t is None else t for t in rows.values()))
        rec: dict[str, Any] = {
            "n_kept_exact": int(self.exact[a:z].sum()) if judged else None,
            "n_kept_normalised": int(self.normalised[a:z].sum()) if judged else None,
            "n_lost": int(lost.sum()) if judged else None,
            "n_saved": int(self.saved[a:z].sum()),
            "loss_rate": lost.sum() / known.sum() if known.any() else None,
            "n_needed_again": int(self.needed[a:z].sum()),
            "n_forgotten": len(forgot),
            "forgetting_rows": len(rows),
            "forgetting_tokens": ftok,
            "forgetting_cost_usd": None if math.isnan(pin) else round(ftok * pin / 1e6, 8),
            "calls_until_last": max((int(self.calls_until[i]) for i in forgot), default=0),
        }
        kinds = self.kind[a:z]
        for k in ITEM_KINDS:
            m = (kinds == k) & known
            rec[f"loss_rate_{k}"] = lost[m].sum() / m.sum() if m.any() else None
        return rec


# -- survival across chained compactions ---------------------------------------------------
def item_survival(src: AgentSource) -> pd.DataFrame:
    """How many compactions each item survived. One row per item that a compaction swept
    from the rows themselves (not only from an earlier summary), at the first compaction
    that did, followed through the summaries after it.

    At its first compaction the item is checked against that summary; at each later
    compaction it is checked against the later summary (``exact``/``normalised``/``lost`` as
    in :meth:`compaction_ledger`), as long as the earlier summary is what carried it: when
    the item is swept again from fresh rows (the agent met it again) it is *refreshed* and
    followed no further (censored). An item that every summary kept is censored at the end.

    Columns (dtype): ``kind``, ``value``, ``item_key`` (string), ``first_event`` (Int64: the
    compaction that first swept it), ``n_checked`` (Int64: summaries it was checked
    against), ``n_survived`` (Int64: summaries in a row that kept it), ``lost_at`` (Int64:
    the event whose summary dropped it; NA when none did), ``refreshed_at`` (Int64: the
    event that swept it again from fresh rows), ``censored`` (bool: not lost while
    followed), ``kept_chain`` (string: the verdicts in order, e.g. ``exact>normalised>lost``:
    summary-of-summary drift).

    Examples
    --------
    >>> import adfkit
    >>> s = adfkit.open("sample_agents/long-runner.adf").item_survival()
    >>> bool((s["n_survived"] <= s["n_checked"]).all())
    True
    """
    st = replay_state(src)
    events = compaction_ids(st)
    if not events:
        return schema.frame([], schema.ITEM_SURVIVAL)
    led = compaction_ledger(src)
    summs = summaries(src)
    fresh: dict[int, set[tuple[str, str]]] = {j: set() for j in events}
    first: dict[tuple[str, str], tuple[int, str]] = {}
    for j, k, key, v, carried in zip(
        led["event_id"].tolist(), led["kind"].tolist(), led["item_key"].tolist(),
        led["value"].tolist(), led["carried"].tolist(), strict=True,
    ):  # fmt: skip
        if not carried:
            fresh[int(j)].add((k, key))
            first.setdefault((k, key), (int(j), v))
    position = {j: i for i, j in enumerate(events)}
    recs = []
    for (k, key), (e0, v) in first.items():
        chain: list[str] = []
        lost_at = refreshed = None
        for j in events[position[e0] :]:
            if j != e0 and (k, key) in fresh[j]:
                refreshed = j
                break
            s = summs[j]
            if s is None:
                break
            verdict = kept_by(k, v, key, s)
            chain.append(verdict)
            if verdict == "lost":
                lost_at = j
                break
        recs.append(
            {
                "kind": k,
                "value": v,
                "item_key": key,
                "first_event": e0,
                "n_checked": len(chain),
                "n_survived": sum(1 for c in chain if c != "lost"),
                "lost_at": lost_at,
                "refreshed_at": refreshed,
                "censored": lost_at is None,
                "kept_chain": ">".join(chain),
            }
        )
    return schema.frame(recs, schema.ITEM_SURVIVAL)


def survival_curve(src: AgentSource) -> pd.DataFrame:
    """The share of items still kept after n compactions (product-limit estimate over
    :meth:`item_survival`, censored items leave the risk set). One row per n from 1.

    Columns (dtype): ``compactions`` (Int64: n), ``n_at_risk`` (Int64: items checked against
    an n-th summary), ``n_lost`` (Int64: items the n-th summary dropped), ``n_censored``
    (Int64: items followed no further after n-1 summaries), ``survival`` (Float64: the
    estimated share kept through n summaries).

    Examples
    --------
    >>> import adfkit
    >>> c = adfkit.open("sample_agents/long-runner.adf").survival_curve()
    >>> bool(c["survival"].is_monotonic_decreasing)
    True
    """
    s = item_survival(src)
    return survival_of(s["n_checked"].to_numpy(dtype="int64"), s["lost_at"].notna().to_numpy())


def survival_of(n_checked: np.ndarray, lost: np.ndarray) -> pd.DataFrame:
    """The product-limit curve of items checked ``n_checked`` times, the last check a loss
    where ``lost`` (the rule of :func:`survival_curve`, for one agent or a fleet)."""
    recs = []
    surv = 1.0
    top = int(n_checked.max()) if len(n_checked) else 0
    for n in range(1, top + 1):
        at_risk = int((n_checked >= n).sum())
        died = int(((n_checked == n) & lost).sum())
        cens = (
            int(((n_checked == n - 1) & ~lost).sum())
            if n > 1
            else int(((n_checked == 0) & ~lost).sum())
        )
        if at_risk:
            surv *= 1 - died / at_risk
        recs.append(
            {
                "compactions": n,
                "n_at_risk": at_risk,
                "n_lost": died,
                "n_censored": cens,
                "survival": surv,
            }
        )
    return schema.frame(recs, schema.SURVIVAL_CURVE)


# -- cache economics -----------------------------------------------------------------------
def _rates(model: str | None, prices: PriceTable) -> tuple[float, ...] | None:
    """(base input, cache write, cache read, output) USD per token from the price table (its
    cache rates: Anthropic writes 1.25x, reads 0.1x; OpenAI cached input at its discounted
    rate, writes at base input), or None when the model is unpriced."""
    p = price_for(prices, model)
    if p is None:
        return None
    base, out, read, write, _ = p.rates()
    return base / 1e6, write / 1e6, read / 1e6, out / 1e6


def _call_cost(rates: tuple[float, ...], uncached: int, write: int, read: int, out: int) -> float:
    base, w, r, o = rates
    return uncached * base + write * w + read * r + out * o


def compaction_cache(
    src: AgentSource, *, k: int = 10, window: int | None = None, prices: PricesArg = None
) -> pd.DataFrame:
    """Prompt-cache economics of each compaction: what the calls around it read from and
    wrote to the cache, what it invalidated, and what the next ``k`` calls cost against a
    world without the compaction. One row per compaction.

    Figures come from the usage fields of the model calls (``tokens_input`` includes the
    cached parts): the *before* call is the last model call at or before the boundary, the
    *after* call the first one after it. Costs use the price table's rates (``usage()``'s:
    Anthropic cache writes at 1.25x the input price, reads at 0.1x; OpenAI cached input at its
    discounted rate). Every cache column is NA when the calls carry no cache fields; every
    cost NA when the model is unpriced. OpenAI
    reports no cache writes: it caches every prompt at the base rate, so a call's cache write
    is taken as its input less its cache read.

    The counterfactual without compaction: each later call's prompt is its real prompt plus
    ``shed_tokens`` (the drop from the before call's prompt and output to the after call's
    prompt), and each call reads from the cache the previous call's whole prompt (the first
    one, the before call's prompt and output) and writes the rest, with the same uncached
    part and output as really sent. It stops at the first call whose prompt would overflow
    ``window``. The stable-prefix counterfactual: the compaction as it happened, but with the
    summary placed after the system prompt and tools, so the after call reads them from the
    cache (``stable_prefix_tokens``: the smallest prompt of any call, an upper bound of that
    prefix) instead of writing them.

    Parameters
    ----------
    k : how many calls after the compaction the costs sum (fewer when the epoch ends).
    window : the context window in tokens (default: the threshold in force at the
        compaction, from :meth:`compactions`; no overflow check when unknown).

    Columns (dtype):

    - ``event_id``, ``boundary_seq`` (Int64), ``provider``, ``model`` (string: of the after
      call)
    - ``before_seq``, ``after_seq`` (Int64), ``input_before``, ``output_before``,
      ``cache_read_before``, ``cache_write_before``, ``input_after``, ``cache_read_after``,
      ``cache_write_after`` (Int64: as reported)
    - ``cached_prefix_before`` (Int64: ``cache_read_before + cache_write_before``, what the
      cache held after the before call), ``invalidated_tokens`` (Int64: the part of it not
      read again, ``max(0, cached_prefix_before - cache_read_after)``), ``shed_tokens``
      (Int64: ``input_before + output_before - input_after``)
    - ``compaction_cost_usd`` (Float64: the compaction call's own cost, from the summary's
      usage, at base rates; NA when the record does not keep it)
    - ``k`` (Int64), ``n_after`` (Int64: calls summed), ``n_compared`` (Int64: those before
      the overflow, which the counterfactual without compaction covers), ``cost_after_usd``
      (Float64: what the ``n_after`` calls cost), ``cost_no_compaction_usd`` (Float64: the
      counterfactual without compaction over the ``n_compared`` calls),
      ``cost_stable_prefix_usd`` (Float64: the stable-prefix counterfactual),
      ``net_saving_usd`` (Float64: the counterfactual's cost less the real cost of the same
      ``n_compared`` calls, less ``compaction_cost_usd`` (0 when unknown)),
      ``stable_prefix_tokens`` (Int64)
    - ``overflow_call`` (Int64: 1-based index of the first later call that would have
      overflowed the window without compaction; NA when none of the ``n_after`` did),
      ``window_tokens`` (Int64)
    - ``break_even_calls`` (Int64: the fewest calls after which the compaction (its call
      included when known) has cost no more than going on without it; NA when not within
      ``n_after``)

    Examples
    --------
    >>> import adfkit
    >>> c = adfkit.open("sample_agents/long-runner.adf").compaction_cache()
    >>> bool((c["invalidated_tokens"].dropna() >= 0).all())
    True
    """
    st = replay_state(src)
    if not compaction_ids(st):
        return schema.frame([], schema.COMPACTION_CACHE)
    calls = _calls(src, prices)
    u = calls.usage
    comp = None
    recs = []
    cols = {
        c: u[c].tolist()
        for c in ("seq", "tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write")
    }
    models = u["model"].tolist()
    # OpenAI writes every prompt to its cache at the base rate and reports no writes
    cols["tokens_cache_write"] = [
        int(t) - int(r)
        if _na(w) and not _na(t) and not _na(r) and provider_of(m) == "openai"
        else w
        for w, t, r, m in zip(
            cols["tokens_cache_write"],
            cols["tokens_input"],
            cols["tokens_cache_read"],
            models,
            strict=True,
        )
    ]
    ins = [x for x in cols["tokens_input"] if x is not None and not pd.isna(x)]
    stable = int(min(ins)) if ins else None
    for j in compaction_ids(st):
        b = st.boundaries[j]
        end = _epoch_end(src, st, j)
        a = bisect.bisect_right(calls.seqs, b)
        z = bisect.bisect_right(calls.seqs, end)
        rec: dict[str, Any] = {"event_id": j, "boundary_seq": b, "k": k}
        if window is None:
            if comp is None:
                comp = compactions(src)
            t = comp["threshold"].iloc[j]
            win = None if pd.isna(t) else int(t)
        else:
            win = window
        rec["window_tokens"] = win
        s_seq = st.summaries[j]
        srow = st.rows.get(s_seq) if s_seq is not None else None
        if a > 0 and a < len(calls.seqs):
            rec.update(_cache_row(cols, models, calls.prices, a, min(z, a + k), win, stable))
            rates = _rates(rec.get("model"), calls.prices)
            if srow is not None and srow.tin is not None and rates is not None:
                rec["compaction_cost_usd"] = srow.tin * rates[0] + (srow.tout or 0) * rates[3]
            rec["break_even_calls"] = _break_even(rec, rec.pop("_series", None))
            if rec.get("_net") is not None:
                rec["net_saving_usd"] = rec.pop("_net") - (rec.get("compaction_cost_usd") or 0.0)
        recs.append({c: v for c, v in rec.items() if not c.startswith("_")})
    return schema.frame(recs, schema.COMPACTION_CACHE)


def _na(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _cache_row(
    cols: dict[str, list[Any]],
    models: list[Any],
    prices: PriceTable,
    a: int,
    z: int,
    win: int | None,
    stable: int | None,
) -> dict[str, Any]:
    """The columns of one compaction: calls ``a-1`` (before) and ``a..z-1`` (after)."""
    i_in, i_out = cols["tokens_input"], cols["tokens_output"]
    i_cr, i_cw = cols["tokens_cache_read"], cols["tokens_cache_write"]
    model = models[a] if not _na(models[a]) else None
    rec: dict[str, Any] = {
        "provider": provider_of(model),
        "model": model,
        "before_seq": cols["seq"][a - 1],
        "after_seq": cols["seq"][a],
        "input_before": i_in[a - 1],
        "output_before": i_out[a - 1],
        "cache_read_before": i_cr[a - 1],
        "cache_write_before": i_cw[a - 1],
        "input_after": i_in[a],
        "cache_read_after": i_cr[a],
        "cache_write_after": i_cw[a],
        "n_after": z - a,
        "stable_prefix_tokens": stable,
    }
    if not any(_na(x) for x in (i_in[a - 1], i_out[a - 1], i_in[a])):
        rec["shed_tokens"] = int(i_in[a - 1]) + int(i_out[a - 1]) - int(i_in[a])
    cache_known = not any(_na(x) for x in (i_cr[a - 1], i_cw[a - 1], i_cr[a]))
    if cache_known:
        rec["cached_prefix_before"] = int(i_cr[a - 1]) + int(i_cw[a - 1])
        rec["invalidated_tokens"] = max(0, rec["cached_prefix_before"] - int(i_cr[a]))
    rates = _rates(model, prices)
    span = range(a, z)
    if (
        rates is None
        or not cache_known
        or "shed_tokens" not in rec
        or any(_na(i_in[i]) or _na(i_out[i]) or _na(i_cr[i]) or _na(i_cw[i]) for i in span)
    ):
        return rec
    shed = rec["shed_tokens"]
    actual, cf, stab = [], [], []
    prev = int(i_in[a - 1]) + int(i_out[a - 1])  # what the before call left in the cache
    overflow = None
    for n, i in enumerate(span, start=1):
        tin, out, cr, cw = int(i_in[i]), int(i_out[i]), int(i_cr[i]), int(i_cw[i])
        unc = tin - cr - cw
        actual.append(_call_cost(rates, unc, cw, cr, out))
        p = tin + shed
        if overflow is None and win is not None and p > win:
            overflow = n
        read = min(prev, p - unc)
        cf.append(_call_cost(rates, unc, p - unc - read, read, out))
        prev = p + out
        if i == a and stable is not None:
            s_read = max(cr, min(stable, tin - unc))
            stab.append(_call_cost(rates, unc, tin - unc - s_read, s_read, out))
        else:
            stab.append(actual[-1])
    m = len(actual) if overflow is None else overflow - 1
    rec.update(
        cost_after_usd=round(sum(actual), 8),
        cost_no_compaction_usd=round(sum(cf[:m]), 8),
        cost_stable_prefix_usd=round(sum(stab), 8),
        overflow_call=overflow,
        n_compared=m,
        _net=sum(cf[:m]) - sum(actual[:m]),
        _series=(actual[:m], cf[:m]),
    )
    return rec


def _break_even(rec: dict[str, Any], series: tuple[list[float], list[float]] | None) -> int | None:
    if series is None:
        return None
    actual, cf = series
    spent = rec.get("compaction_cost_usd") or 0.0
    without = 0.0
    for n, (x, y) in enumerate(zip(actual, cf, strict=True), start=1):
        spent += x
        without += y
        if spent <= without + 1e-12:
            return n
    return None


# -- recovery ------------------------------------------------------------------------------
def recovery(src: AgentSource, *, taxonomy: Any = None) -> pd.DataFrame:
    """How long the agent took to get going again. One row for the session's cold start
    (its first row), then one per compaction.

    From the start (the first row; a compaction's summary, else its boundary) to the end of
    that epoch, tool calls are classified by the format's taxonomy (:func:`adfkit.observe`'s:
    ``world`` acts outside the agent: an edit, a write, a command, a message sent). The
    first ``world`` call is the first productive action.

    Columns (dtype): ``start`` (string: ``cold`` or ``compaction``), ``event_id`` (Int64: NA
    for the cold start), ``start_seq``, ``end_seq`` (Int64: the span looked at),
    ``actions_to_productive`` (Int64: tool calls before the first productive one),
    ``calls_to_productive`` (Int64: model calls up to and including the one that made it),
    ``productive_seq`` (Int64), ``productive_tool`` (string), ``seconds_to_productive``
    (Float64: from the start row to that call) (these five NA when no productive action came
    in the span), ``n_reads`` (Int64: tool calls before it that name a path),
    ``reorientation_reads`` (Int64: those whose path a tool call had named before the
    start: files read again), ``reorientation_paths`` (object: tuple of those paths).

    Examples
    --------
    >>> import adfkit
    >>> r = adfkit.open("sample_agents/long-runner.adf").recovery()
    >>> r["start"].iloc[0]
    'cold'
    """
    with gc_paused():  # a tuple per action, a time per row: many small acyclic objects
        return _recovery(src, taxonomy)


def _recovery(src: AgentSource, taxonomy: Any) -> pd.DataFrame:
    tax = default_taxonomy(src.format) if taxonomy is None else taxonomy
    st = replay_state(src)
    acts = _actions(src, tax)
    act_seqs = [a[0] for a in acts]
    clock = _clock(src)
    starts: list[tuple[str, int | None, int, int]] = []
    if st.order:
        bounds = sorted(st.boundaries)
        starts.append(("cold", None, st.order[0], bounds[0] if bounds else st.order[-1]))
    for j in compaction_ids(st):
        b = st.boundaries[j]
        s = st.summaries[j]
        starts.append(("compaction", j, s if s is not None else b, _epoch_end(src, st, j)))
    recs = []
    before: set[str] = set()
    done = 0  # acts[:done] are in ``before``
    for kind, ev, s0, end in starts:
        lo = bisect.bisect_left(act_seqs, s0)
        for _q, _, _, ps in acts[done:lo]:
            before.update(ps)
        done = max(done, lo)
        hi = bisect.bisect_right(act_seqs, end)
        rec: dict[str, Any] = {"start": kind, "event_id": ev, "start_seq": s0, "end_seq": end}
        span = acts[lo:hi]
        first = next((i for i, a in enumerate(span) if a[2] == "world"), None)
        if first is not None:
            q, name = span[first][0], span[first][1]
            c0 = bisect.bisect_left(st.calls, s0)
            rec.update(
                actions_to_productive=first,
                calls_to_productive=bisect.bisect_right(st.calls, q) - c0,
                productive_seq=q,
                productive_tool=name,
            )
            rec["seconds_to_productive"] = clock.seconds(s0, q)
        looked = span if first is None else span[:first]
        again = [a for a in looked if any(p in before for p in a[3])]
        rec["n_reads"] = sum(1 for a in looked if a[3])
        rec["reorientation_reads"] = len(again)
        rec["reorientation_paths"] = tuple(
            dict.fromkeys(p for a in again for p in a[3] if p in before)
        )
        recs.append(rec)
    return schema.frame(recs, schema.RECOVERY)


def _actions(src: AgentSource, tax: Any) -> list[tuple[int, str, str, tuple[str, ...]]]:
    """Every tool call of the history in seq order: (seq, tool, class, paths it names)."""
    tc = tool_calls(src, history=True)
    tc = tc.loc[tc["call_seq"].notna()].sort_values("call_seq", kind="stable")
    out = []
    for q, name, inp in zip(
        tc["call_seq"].tolist(), tc["tool_name"], tc["tool_input"], strict=True
    ):
        try:
            parsed = orjson.loads(inp) if isinstance(inp, str) else None
        except orjson.JSONDecodeError:
            parsed = None
        paths = tuple(dict.fromkeys(key for k, _, key in input_items(parsed) if k == "path"))
        out.append((int(q), str(name), classify_call(str(name), parsed, tax), paths))
    return out
