"""Token usage and cost of every model call.

Prices and the cost rule live in :mod:`adfkit._core.prices` (``adfkit/data/prices.json``
laid over by the user's table; :func:`adfkit._core.prices.costs`), re-exported here.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._analysis.replay import reappended_of
from adfkit._analysis.timeline import turn_starts
from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfWarning
from adfkit._base.totals import running_cost_totals
from adfkit._core.calls import CALL_ROW_KINDS, paid_order
from adfkit._core.history import reappended_copies
from adfkit._core.prices import _RATES, cost_warning, costs, unpriced
from adfkit._core.prices import Price as Price  # re-exported: the price table's API
from adfkit._core.prices import PricesArg as PricesArg
from adfkit._core.prices import PriceTable as PriceTable
from adfkit._core.prices import default_prices as default_prices
from adfkit._core.prices import load_prices as load_prices
from adfkit._core.prices import price_for as price_for
from adfkit._core.rows import TOKEN_COLUMNS
from adfkit._core.source import AgentSource, Key

CALL_KINDS = tuple(CALL_ROW_KINDS.values())
#: A call row's kind -> its ``call_kind`` code (the position of its name in CALL_KINDS).
_KIND_CODE = {k: CALL_KINDS.index(v) for k, v in CALL_ROW_KINDS.items()}
_TOKEN_COLS = list(TOKEN_COLUMNS)
#: The history's columns a usage frame is made of.
_USED = ["seq", "position", "epoch", "kind", "created_at", "model", *_TOKEN_COLS]


def _na0(a: pd.Series) -> np.ndarray:
    out: np.ndarray = a.to_numpy(dtype="float64", na_value=0.0)
    return out


def call_costs(
    df: pd.DataFrame | Mapping[str, Any], prices: PriceTable
) -> tuple[np.ndarray, np.ndarray]:
    """``(cost_usd, rates)`` of each call of a usage frame (or of its columns, by name): the
    one cost rule, :func:`adfkit._core.prices.costs` (an absent cache count is 0)."""
    models = _models(df["model"])
    tin = df["tokens_input"].to_numpy(dtype="float64", na_value=np.nan)
    tout = df["tokens_output"].to_numpy(dtype="float64", na_value=np.nan)
    cr, cw = _na0(df["tokens_cache_read"]), _na0(df["tokens_cache_write"])
    w1h = _na0(df["tokens_cache_write_1h"])
    cost, rates = costs(
        models, tin.tolist(), tout.tolist(), cr.tolist(), cw.tolist(), w1h.tolist(), prices
    )
    return np.array(cost, dtype="float64"), np.array(rates, dtype="float64").reshape(-1, 5)


def _models(col: Any) -> list[str | None]:
    """A model column's values, None where NA (converted at once, not value by value)."""
    return schema.plain(col)


# --- usage frame ------------------------------------------------------------------------


def usage_frame(
    history: pd.DataFrame,
    prices: PriceTable,
    writes_1h: Mapping[int, int] | None = None,
    *,
    untokened: bool = False,
    copies: Collection[int] | None = None,
    branches: Mapping[int, str] | None = None,
) -> tuple[pd.DataFrame, dict[str, int], int]:
    """Per-call usage from a history frame. Returns ``(frame, unpriced, n_total_only)``.

    ``writes_1h`` is :meth:`AgentSource.cache_writes_1h` (seq -> 1-hour cache writes).
    ``untokened``: the record states no call's usage (:attr:`AgentSource.usage_recorded`
    False), so every call row is a call, its tokens and cost NA.
    ``copies``: :func:`~adfkit._core.history.reappended_copies` of ``history`` when the caller
    has them (found once per source), else found here.
    ``branches``: seq -> abandoned branch of the calls made on one (:func:`usage`'s
    ``branch`` column, after ``model``; None: no such column).
    ``unpriced`` maps each model without a price (``"(none recorded)"`` for a NULL model) to
    its number of calls; ``n_total_only`` counts priced calls whose tokens are a bare total.
    """
    h = history
    has_tokens = np.zeros(len(h), dtype=bool)  # a column at a time: no frame of flags
    for c in _TOKEN_COLS:
        has_tokens |= ~np.asarray(h[c].array.isna(), dtype=bool)
    is_call = np.array([k in CALL_ROW_KINDS for k in schema.plain(h["kind"])], dtype=bool)
    # A fallback compaction's re-appended copy of a call in the history is not a second call.
    copies = list(reappended_copies(h) if copies is None else copies)
    keep = (has_tokens | untokened) & is_call
    if copies:
        keep &= ~h["seq"].isin(copies).to_numpy(dtype=bool)
    at = np.flatnonzero(keep)

    def taken(name: str, dtype: str | None = None) -> Any:
        """The call rows of a history column (no frame of them: the text columns are not
        copied, and a small file's frame costs more than its arithmetic)."""
        a = h[name].array.take(at)
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)

    # every column built first and the frame made once
    w = writes_1h or {}
    seq = taken("seq", "Int64")
    cols: dict[str, Any] = {
        "seq": seq,
        "position": taken("position", "Int64"),
        "epoch": (
            taken("epoch", "Int64") if "epoch" in h else pd.array([pd.NA] * len(at), dtype="Int64")
        ),
        "call_kind": pd.Categorical.from_codes(
            np.array([_KIND_CODE[k] for k in taken("kind").tolist()], dtype=np.int8),
            dtype=schema.text_categories(CALL_KINDS),
        ),
        "created_at": taken("created_at"),
        "model": taken("model", "string"),
    }
    if branches is not None:
        cols["branch"] = pd.array([branches.get(q) for q in seq.tolist()], dtype="string")
    for c in _TOKEN_COLS:
        cols[c] = taken(c, "Int64")
        if c == "tokens_cache_write":
            cols["tokens_cache_write_1h"] = pd.array(
                [w.get(int(q)) for q in seq.to_numpy(dtype="int64")], dtype="Int64"
            )
    for k in ("input", "output", "total"):
        tok = cols[f"tokens_{k}"]
        cols[f"cum_{k}"] = pd.array(np.cumsum(tok.to_numpy(dtype="int64", na_value=0)), "Int64")
    cost, rates = call_costs(cols, prices)  # the columns, no frame of them first
    for i, k in enumerate(_RATES):
        cols[f"price_{k}"] = rates[:, i].copy()
    cols["cost_usd"] = cost
    cols["cum_cost_usd"] = np.array(running_cost_totals(cost.tolist()), dtype="float64")
    df = pd.DataFrame(cols, copy=False)  # every column is an array made here
    tokened = has_tokens[at]
    # a call with no tokens has no cost whatever its price: not a missing price
    models = _models(cols["model"])
    missing = unpriced(
        ["" if m is None else m for m, t in zip(models, tokened.tolist(), strict=True) if t],
        prices,
    )
    total_only = int((~np.isnan(rates[:, 0]) & np.isnan(cost) & tokened).sum())
    return df, missing, total_only


def turns_frame(history: pd.DataFrame, usage: pd.DataFrame) -> pd.DataFrame:
    """Tokens per turn. One row per turn, in display order.

    Turns are the ones of ``observe()`` (the rule: :func:`adfkit._analysis.timeline.turn_starts`): a
    turn opens at a trigger row or an owner's text message and runs to the next; calls before
    the first one form turn 0 (``trigger_kind`` ``"(none)"``).
    Compaction calls count in the turn where they ran.

    Columns: ``turn`` (Int64, from 1; 0 for calls before the first trigger), ``start_seq``
    (Int64), ``started_at`` (datetime64[ms, UTC]), ``trigger_kind`` (string: the trigger kind,
    or ``chat`` for owner messages), ``n_calls``, ``tokens_input``, ``tokens_output``,
    ``tokens_total`` (Int64; a legacy bare total counts in ``tokens_total`` only).
    """
    h = history
    starts = turn_starts(h)
    turn_of_row = np.cumsum(starts)
    pos_turn = dict(zip(h["position"].to_numpy(dtype="int64"), turn_of_row, strict=True))
    sub = h["subkind"].astype("string").fillna("chat")
    start_rows = h.loc[starts]
    turns = pd.DataFrame(
        {
            "turn": pd.array(np.arange(1, len(start_rows) + 1), dtype="Int64"),
            "start_seq": start_rows["seq"].astype("Int64").to_numpy(),
            "started_at": start_rows["created_at"].to_numpy(),
            "trigger_kind": sub.loc[starts].to_numpy(),
        }
    )
    u = usage
    t = pd.DataFrame(
        {
            "turn": [int(pos_turn.get(int(p), 0)) for p in u["position"].to_numpy(dtype="int64")],
            "tokens_input": u["tokens_input"].fillna(0).to_numpy(dtype="int64"),
            "tokens_output": u["tokens_output"].fillna(0).to_numpy(dtype="int64"),
            "tokens_total": u["tokens_total"].fillna(0).to_numpy(dtype="int64"),
        }
    )
    agg = t.groupby("turn").agg(
        n_calls=("tokens_total", "size"),
        tokens_input=("tokens_input", "sum"),
        tokens_output=("tokens_output", "sum"),
        tokens_total=("tokens_total", "sum"),
    )
    if 0 in agg.index:
        first = u.loc[t["turn"].to_numpy() == 0]
        head = pd.DataFrame(
            {
                "turn": pd.array([0], dtype="Int64"),
                "start_seq": pd.array([int(first["seq"].iloc[0])], dtype="Int64"),
                "started_at": first["created_at"].iloc[:1].to_numpy(),
                "trigger_kind": ["(none)"],
            }
        )
        turns = pd.concat([head, turns], ignore_index=True)
    turns = turns.join(agg, on="turn")
    for c in ("n_calls", "tokens_input", "tokens_output", "tokens_total"):
        turns[c] = turns[c].fillna(0).astype("Int64")
    turns["trigger_kind"] = turns["trigger_kind"].astype("string")
    turns["started_at"] = pd.to_datetime(turns["started_at"], utc=True).astype(
        "datetime64[ms, UTC]"
    )
    return turns


def _paid_rows(src: AgentSource) -> tuple[pd.DataFrame, dict[int, str]]:
    """The history with the rows of abandoned branches that carry a call's usage (a rewind, a
    resume that answered again: those calls were made and paid for), each placed after the
    last history row written before it; and branch row seq -> branch id."""
    h = src.history_view()  # read only (usage_frame reads it)
    b = src.branches()
    if b.empty:
        return h, {}
    b = b[b[list(_TOKEN_COLS)].notna().any(axis=1).to_numpy()]
    if b.empty:
        return h, {}
    on_branch = dict(zip(b["seq"].astype("int64").tolist(), b["branch"].tolist(), strict=True))
    b = b.reindex(columns=h.columns)
    b["position"] = pd.NA  # in no display order of the history
    ht = h["created_at"].to_numpy(dtype="datetime64[ms]").astype("int64").tolist()
    bt = b["created_at"].to_numpy(dtype="datetime64[ms]").astype("int64").tolist()
    rows = pd.concat([h, b], ignore_index=True)
    return rows.iloc[paid_order(ht, bt)].reset_index(drop=True), on_branch


def usage(src: AgentSource, *, prices: PricesArg = None) -> pd.DataFrame:
    """Token usage and estimated cost. One row per model call over the whole history.

    A model call is a row that carries ``tokens``: every assistant row, and each compaction
    summary (schema 28), which carries the *compaction* call's usage (ADF_FORMAT.md §3.3).
    Rows are in display order. A fallback compaction (§5.5) re-appends the first preserved
    assistant row with its tokens under a new seq; such a copy of a call already in the
    history is left out, so no call is counted twice (the rule is
    :func:`adfkit._core.history.reappended_copies`, shared with :meth:`replay` and
    :func:`observe`). A copy whose original was discarded unaudited is the only record of
    that call and counts.

    Cost is the providers' bill at list prices (:func:`call_costs`): uncached input,
    cache reads, 5-minute and 1-hour cache writes and output each at their own rate, USD
    rounded to 8 decimals; reasoning tokens are part of output. Prices are per million tokens,
    keyed by the exact model id, from the shipped table ``adfkit/data/prices.json`` (each
    entry names its provider page and date) overlaid with ``prices``. A call whose record
    does not split its cache write by TTL (ADF files, older Claude Code) is charged the
    5-minute rate, the providers' default. This is not the ADF runtime's own estimate (its
    ``llm-pricing.ts`` has no cache discount and older prices; pass
    ``adfkit/data/prices-adf-runtime.json`` as ``prices`` for those figures). A model without
    a price gets NaN cost, never 0, and one :class:`adfkit.AdfWarning` per call to
    ``usage()`` names every such model. Legacy bare-integer tokens (pre-public files) fill
    ``tokens_total`` only; their split and cost are NA/NaN.

    Parameters
    ----------
    prices : extra or replacement prices: a mapping ``{"<model id>": {"input": 3.0,
        "output": 15.0}}`` (USD per million tokens; optional ``cache_read``,
        ``cache_write``, ``cache_write_1h``), the same wrapped in ``{"models": ...}``, or the
        path of a JSON file shaped like ``adfkit/data/prices.json``.

    Returns
    -------
    DataFrame with columns (dtype):

    - ``seq``, ``position`` (Int64: display position in :meth:`history`), ``epoch`` (Int64)
    - ``call_kind`` (category: ``assistant`` or ``compaction``)
    - ``created_at`` (datetime64[ms, UTC]), ``model`` (string), ``branch`` (string: the
      abandoned branch a call is on (a Claude Code rewind, a resume that answered a prompt
      again: the call was made and paid for), NA for the conversation that went on)
    - ``tokens_input``, ``tokens_output``, ``tokens_cache_read``, ``tokens_cache_write``,
      ``tokens_cache_write_1h`` (the part of the cache write with a 1-hour TTL; NA where the
      record does not split it), ``tokens_reasoning``, ``tokens_total`` (Int64; as
      reported, ``input`` includes the cache parts)
    - ``cum_input``, ``cum_output``, ``cum_total`` (Int64: running sums; an unknown value
      adds nothing)
    - ``price_input``, ``price_output``, ``price_cache_read``, ``price_cache_write``,
      ``price_cache_write_1h`` (float64: USD per million as charged, a missing cache rate
      filled as :class:`Price` says; NaN when unpriced)
    - ``cost_usd`` (float64, NaN when unpriced or the split is unknown), ``cum_cost_usd``
      (float64: running sum of the known costs)

    Raises
    ------
    ValueError
        ``prices`` is not readable or not of the documented shape.

    Examples
    --------
    >>> import adfkit
    >>> u = adfkit.open_adf("sample_agents/clean.adf").usage()
    >>> sorted(u["call_kind"].unique())
    ['assistant', 'compaction']
    >>> bool((u["cost_usd"] > 0).all())
    True
    """
    return _usage(src, prices, warn=True)


def call_tokens(src: AgentSource) -> pd.DataFrame:
    """:func:`usage`'s rows for a figure that needs tokens, not costs: no warning about
    models without a price (the caller shows no cost)."""
    return _usage(src, None, warn=False)


_USAGE: Key[tuple[pd.DataFrame, dict[str, int], int]] = Key("usage.shipped_prices")


def _usage(src: AgentSource, prices: PricesArg, *, warn: bool) -> pd.DataFrame:
    if prices is None:  # the shipped prices: made once per source (usage(), the audits)
        df, unpriced, total_only = src.memo.get(_USAGE, lambda: _usage_of(src, None))
        df = df.copy(deep=False)
    else:  # a table or a file of the caller's: read afresh
        df, unpriced, total_only = _usage_of(src, prices)
    if warn and (unpriced or total_only):
        tin, total = df["tokens_input"].array, df["tokens_total"].array  # arrays: no Series
        legacy = int((np.asarray(tin.isna()) & ~np.asarray(total.isna())).sum())
        note = cost_warning(unpriced, total_only, legacy)
        warnings.warn(f"{src.path}: {note}", AdfWarning, stacklevel=2)
    return df


def history_usage(src: AgentSource, table: PriceTable) -> pd.DataFrame:
    """The per-call usage of ``src``'s history (no abandoned branch) by the one usage rule:
    the source's 1-hour cache writes priced as such, its re-appended copies left out, every call
    NA when the record states no usage. What the forgetting tables and the lab cost calls by, so
    a call costs there what it costs in :func:`usage`."""
    u, _, _ = usage_frame(
        src.history(),
        table,
        src.cache_writes_1h(),
        untokened=not src.usage_recorded,
        copies=reappended_of(src),
    )
    return u


def _usage_of(src: AgentSource, prices: PricesArg) -> tuple[pd.DataFrame, dict[str, int], int]:
    table = load_prices(prices)
    rows, on_branch = _paid_rows(src)
    # the history alone (no paid branch rows): its copies are the ones replay() finds too
    copies = None if on_branch else reappended_of(src)
    with gc_paused():  # plain values per row and per call: many small acyclic objects
        df, unpriced, total_only = usage_frame(
            rows,
            table,
            src.cache_writes_1h(),
            untokened=not src.usage_recorded,
            copies=copies,
            branches=on_branch,
        )
    return df, unpriced, total_only
