"""Token usage and cost of every model call.

Prices come from ``adfkit/data/prices.json``: the providers' list prices in USD per million
tokens, keyed by the exact model id, each entry with the page it was taken from (``source``)
and the date (``as_of``), including the cache rates. The user's table (``prices=``) is laid
over it. The cost rule is :func:`call_costs`.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from importlib import resources
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from adfkit._analysis.timeline import turn_starts
from adfkit._base.errors import AdfWarning
from adfkit._base.user_files import read_json_file
from adfkit._core.history import reappended_copies
from adfkit._core.rows import TOKEN_COLUMNS
from adfkit._core.source import AgentSource


class Price(NamedTuple):
    """One model's prices, USD per million tokens. A cache rate that is None is charged at
    ``input`` (``cache_write_1h``: at ``cache_write``), which is the rule of a table without
    cache rates, such as the ADF runtime's (ADF_FORMAT.md §9.4)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    cache_write_1h: float | None = None

    def rates(self) -> tuple[float, float, float, float, float]:
        """``(input, output, cache_read, cache_write, cache_write_1h)`` with the fallbacks."""
        cw = self.input if self.cache_write is None else self.cache_write
        return (
            self.input,
            self.output,
            self.input if self.cache_read is None else self.cache_read,
            cw,
            cw if self.cache_write_1h is None else self.cache_write_1h,
        )


#: Prices as ``{model_id: Price}``.
PriceTable = dict[str, Price]
PricesArg = Mapping[str, Any] | str | os.PathLike[str] | None


CALL_KINDS = ("assistant", "compaction")
_TOKEN_COLS = list(TOKEN_COLUMNS)
_RATES = ("input", "output", "cache_read", "cache_write", "cache_write_1h")


# --- the price table ----------------------------------------------------------------------


def _rate(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v >= 0


def _models_of(obj: Any, where: str) -> PriceTable:
    """``{"models": {id: {"input": x, "output": y, ...}}}`` or the bare inner mapping -> table."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"{where}: prices must be a JSON object, got {type(obj).__name__}")
    models = obj.get("models", obj)
    if not isinstance(models, Mapping):
        raise ValueError(f"{where}: 'models' must be an object of model id -> prices")
    out: PriceTable = {}
    for model, p in models.items():
        ok = (
            isinstance(p, Mapping)
            and all(_rate(p.get(k)) for k in ("input", "output"))
            and all(p.get(k) is None or _rate(p.get(k)) for k in _RATES[2:])
        )
        if not ok:
            raise ValueError(
                f"{where}: prices for model {model!r} must be "
                f'{{"input": <USD per million>, "output": <USD per million>}} with optional '
                f'"cache_read", "cache_write", "cache_write_1h" (non-negative numbers), got {p!r}'
            )
        out[str(model)] = Price(
            *(None if p.get(k) is None else float(p[k]) for k in _RATES)  # type: ignore[arg-type]
        )
    return out


def price_for(prices: PriceTable, model: str | None) -> Price | None:
    """The price of ``model``: its own entry, else the entry of its id without the provider
    prefix that routers and frameworks write (``anthropic/claude-sonnet-4-5`` in Inspect AI,
    ``openrouter/anthropic/...`` through LiteLLM in OpenHands); None when neither is priced.

    Examples
    --------
    >>> from adfkit._analysis.usage import default_prices, price_for
    >>> price_for(default_prices(), "anthropic/claude-sonnet-4-5-20250929").input
    3.0
    >>> price_for(default_prices(), "anthropic/no-such-model") is None
    True
    """
    if not model:
        return None
    return prices.get(model) or prices.get(model.rsplit("/", 1)[-1])


def default_prices() -> PriceTable:
    """The shipped price table (``adfkit/data/prices.json``), model id -> :class:`Price`
    (USD per million tokens).

    Examples
    --------
    >>> from adfkit._analysis.usage import default_prices
    >>> default_prices()["claude-sonnet-4-5-20250929"]
    Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, cache_write_1h=6.0)
    >>> default_prices()["gpt-5.3-codex"].rates()
    (1.75, 14.0, 0.175, 1.75, 1.75)
    """
    text = resources.files("adfkit").joinpath("data/prices.json").read_text("utf-8")
    return _models_of(json.loads(text), "adfkit/data/prices.json")


def load_prices(prices: PricesArg = None) -> PriceTable:
    """The shipped price table with ``prices`` laid over it.

    Parameters
    ----------
    prices : None (the shipped table), a mapping, or the path of a JSON file. Either shape is
        accepted: ``{"models": {"<model id>": {"input": 3.0, "output": 15.0}}}`` (the shape of
        ``adfkit/data/prices.json``; optional ``cache_read``, ``cache_write`` and
        ``cache_write_1h`` rates) or the inner ``{"<model id>": {...}}`` mapping. An entry
        replaces the shipped one for the same model id as a whole (a rate it lacks falls back
        as :class:`Price` says) and adds new ones. ``adfkit/data/prices-adf-runtime.json`` is
        the ADF runtime's own table, for the runtime's figures.

    Raises
    ------
    ValueError
        the file is missing or not JSON, or an entry's rates are not non-negative numbers.

    Examples
    --------
    >>> from adfkit._analysis.usage import load_prices
    >>> load_prices({"my-model": {"input": 1, "output": 2}})["my-model"]
    Price(input=1.0, output=2.0, cache_read=None, cache_write=None, cache_write_1h=None)
    """
    table = default_prices()
    if prices is None:
        return table
    if isinstance(prices, str | os.PathLike):
        where = os.fspath(prices)
        obj = read_json_file(where, "price file")
    else:
        where, obj = "prices", prices
    table.update(_models_of(obj, where))
    return table


def _na0(a: pd.Series) -> np.ndarray:
    out: np.ndarray = a.to_numpy(dtype="float64", na_value=0.0)
    return out


def call_costs(df: pd.DataFrame, prices: PriceTable) -> tuple[np.ndarray, np.ndarray]:
    """``(cost_usd, rates)`` of each call of a usage frame: the one cost rule.

    ``cost = (uncached * input + cache_read * cache_read_rate + (cache_write - cache_write_1h)
    * cache_write_rate + cache_write_1h * cache_write_1h_rate + output * output_rate) / 1e6``
    USD rounded to 8 decimals, where ``uncached = tokens_input - cache_read - cache_write``
    (``tokens_input`` includes the cache parts, in every format). An absent cache count is 0;
    ``rates`` is an ``(n, 5)`` array of :data:`Price.rates`, NaN for a model without a price,
    whose cost is NaN (never 0), as is the cost of a call whose input or output is unknown or
    whose cache parts exceed its input.
    """
    nan = (np.nan,) * 5
    found = [price_for(prices, m) for m in df["model"].fillna("")]
    rates = np.array(
        [nan if p is None else p.rates() for p in found],
        dtype="float64",
    ).reshape(len(df), 5)
    tin = df["tokens_input"].to_numpy(dtype="float64", na_value=np.nan)
    tout = df["tokens_output"].to_numpy(dtype="float64", na_value=np.nan)
    cr, cw = _na0(df["tokens_cache_read"]), _na0(df["tokens_cache_write"])
    w1h = np.minimum(_na0(df["tokens_cache_write_1h"]), cw)
    uncached = tin - cr - cw
    uncached[uncached < 0] = np.nan
    cost = (
        uncached * rates[:, 0]
        + tout * rates[:, 1]
        + cr * rates[:, 2]
        + (cw - w1h) * rates[:, 3]
        + w1h * rates[:, 4]
    ) / 1e6
    return np.round(cost, 8), rates


# --- usage frame ------------------------------------------------------------------------


def usage_frame(
    history: pd.DataFrame, prices: PriceTable, writes_1h: Mapping[int, int] | None = None
) -> tuple[pd.DataFrame, dict[str, int], int]:
    """Per-call usage from a history frame. Returns ``(frame, unpriced, n_total_only)``.

    ``writes_1h`` is :meth:`AgentSource.cache_writes_1h` (seq -> 1-hour cache writes).
    ``unpriced`` maps each model without a price (``"(none recorded)"`` for a NULL model) to
    its number of calls; ``n_total_only`` counts priced calls whose tokens are a bare total.
    """
    h = history
    has_tokens = h[_TOKEN_COLS].notna().any(axis=1).to_numpy()
    kind = h["kind"].astype("string")
    is_call = (kind == "assistant").fillna(False).to_numpy() | (
        has_tokens & (kind == "compaction_summary").fillna(False).to_numpy()
    )
    # A fallback compaction's re-appended copy of a call in the history is not a second call.
    copies = list(reappended_copies(h))
    keep = has_tokens & is_call & ~h["seq"].isin(copies).to_numpy(dtype=bool)
    src = h.loc[keep]
    # every column built first and the frame made once (a column set at a time costs more
    # than the arithmetic on a small file)
    w = writes_1h or {}
    seq = src["seq"].astype("Int64").array
    cols: dict[str, Any] = {
        "seq": seq,
        "position": src["position"].astype("Int64").array,
        "epoch": (
            src["epoch"].astype("Int64").array
            if "epoch" in src
            else pd.array([pd.NA] * len(src), dtype="Int64")
        ),
        "call_kind": pd.Categorical(
            np.where(src["kind"].astype("string") == "assistant", "assistant", "compaction"),
            categories=list(CALL_KINDS),
        ),
        "created_at": src["created_at"].array,
        "model": src["model"].astype("string").array,
    }
    for c in _TOKEN_COLS:
        cols[c] = src[c].astype("Int64").array
        if c == "tokens_cache_write":
            cols["tokens_cache_write_1h"] = pd.array(
                [w.get(int(q)) for q in seq.to_numpy(dtype="int64")], dtype="Int64"
            )
    for k in ("input", "output", "total"):
        tok = cols[f"tokens_{k}"]
        cols[f"cum_{k}"] = pd.array(np.cumsum(tok.to_numpy(dtype="int64", na_value=0)), "Int64")
    cost, rates = call_costs(pd.DataFrame(cols, copy=False), prices)
    for i, k in enumerate(_RATES):
        cols[f"price_{k}"] = rates[:, i]
    cols["cost_usd"] = cost
    cols["cum_cost_usd"] = np.cumsum(np.nan_to_num(cost, nan=0.0))
    df = pd.DataFrame(cols)
    unpriced: dict[str, int] = {}
    for m in df["model"].fillna("").tolist():
        if price_for(prices, m) is None:
            name = m or "(none recorded)"
            unpriced[name] = unpriced.get(name, 0) + 1
    total_only = int((~np.isnan(rates[:, 0]) & np.isnan(cost)).sum())
    return df, unpriced, total_only


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
    h = src.history()
    b = src.branches()
    if b.empty:
        return h, {}
    b = b[b[list(_TOKEN_COLS)].notna().any(axis=1).to_numpy()]
    if b.empty:
        return h, {}
    on_branch = dict(zip(b["seq"].astype("int64").tolist(), b["branch"].tolist(), strict=True))
    b = b.reindex(columns=h.columns)
    b["position"] = pd.NA  # in no display order of the history
    # the latest time written so far at each history row (NaT and 1 ms inversions do not
    # move it back), then each branch row after the last history row at or before its time
    ht = h["created_at"].ffill().to_numpy(dtype="datetime64[ms]").astype("int64")
    bt = b["created_at"].to_numpy(dtype="datetime64[ms]").astype("int64")
    at = np.searchsorted(np.maximum.accumulate(ht), bt, side="right") if len(ht) else bt * 0
    key = np.concatenate([np.arange(len(h), dtype="float64"), at - 0.5])
    rows = pd.concat([h, b], ignore_index=True)
    return rows.iloc[np.argsort(key, kind="stable")].reset_index(drop=True), on_branch


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
    table = load_prices(prices)
    rows, on_branch = _paid_rows(src)
    df, unpriced, total_only = usage_frame(rows, table, src.cache_writes_1h())
    df.insert(
        df.columns.get_loc("model") + 1,
        "branch",
        pd.array(df["seq"].map(on_branch).tolist(), dtype="string"),
    )
    if unpriced or total_only:
        parts = []
        if unpriced:
            names = ", ".join(f"{m!r} ({n} calls)" for m, n in sorted(unpriced.items()))
            parts.append(
                f"no price for model(s) {names}: their cost_usd is NaN; "
                "pass usage(prices={model: {'input': ..., 'output': ...}}) to price them"
            )
        if total_only:
            legacy = int((df["tokens_input"].isna() & df["tokens_total"].notna()).sum())
            if legacy:
                parts.append(
                    f"{legacy} call(s) store only a legacy token total (no input/output "
                    "split): their cost_usd is NaN"
                )
            if total_only > legacy:
                parts.append(
                    f"{total_only - legacy} call(s) report cache parts larger than their "
                    "input (which includes them) or an unreadable count: their cost_usd is NaN"
                )
        warnings.warn(f"{src.path}: " + "; ".join(parts), AdfWarning, stacklevel=2)
    return df
