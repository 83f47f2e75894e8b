"""Model prices and the one cost rule of a call (no pandas: ``adfkit usage`` prices calls
without it; :func:`adfkit._analysis.usage.call_costs` applies the same rule to a usage frame).

Prices come from ``adfkit/data/prices.json``: the providers' list prices in USD per million
tokens, keyed by the exact model id, each entry with the page it was taken from (``source``)
and the date (``as_of``), including the cache rates. The user's table (``prices=``) is laid
over it. A model neither names is priced from ``genai-prices`` (pydantic's table of the
providers' prices, shipped with its data, read offline:
:func:`adfkit._core.model_catalog.library_rates`).
"""

from __future__ import annotations

import collections
import functools
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any, NamedTuple

from adfkit._base.user_files import read_json_file
from adfkit._core.model_catalog import library_rates


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

#: The rates of a :class:`Price`, in the order of :meth:`Price.rates`.
RATES = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
_RATES = RATES


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


def default_prices() -> PriceTable:
    """The shipped price table (``adfkit/data/prices.json``), model id -> :class:`Price`
    (USD per million tokens).

    Examples
    --------
    >>> from adfkit._core.prices import default_prices
    >>> default_prices()["claude-sonnet-4-5-20250929"]
    Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, cache_write_1h=6.0)
    >>> default_prices()["gpt-5.3-codex"].rates()
    (1.75, 14.0, 0.175, 1.75, 1.75)
    """
    return dict(_shipped())


@functools.cache
def _shipped() -> PriceTable:
    """The shipped table, read and checked once a process (a fleet asks for it per file)."""
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
    >>> from adfkit._core.prices import load_prices
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


_NAN5 = (math.nan,) * 5


def price_for(prices: PriceTable, model: str | None) -> Price | None:
    """The price of ``model``: its own entry, else the entry of its id without the provider
    prefix that routers and frameworks write (``anthropic/claude-sonnet-4-5`` in Inspect AI,
    ``openrouter/anthropic/...`` through LiteLLM in OpenHands); None when neither is priced.

    Examples
    --------
    >>> price_for(default_prices(), "anthropic/claude-sonnet-4-5-20250929").input
    3.0
    >>> price_for(default_prices(), "anthropic/no-such-model") is None
    True
    """
    if not model:
        return None
    return prices.get(model) or prices.get(model.rsplit("/", 1)[-1]) or _library_price(model)


def _library_price(model: str) -> Price | None:
    rates = library_rates(model)
    return None if rates is None else Price(*rates)


def unpriced(models: Iterable[str | None], prices: PriceTable) -> dict[str, int]:
    """Each model of ``models`` without a price (``"(none recorded)"`` for none) -> its calls.

    Examples
    --------
    >>> unpriced(["m", "x", None, "x"], {"m": Price(3.0, 15.0)})
    {'x': 2, '(none recorded)': 1}
    """
    out: dict[str, int] = {}
    for m, n in collections.Counter(models).items():  # each model looked up once
        if price_for(prices, m) is None:
            name = m or "(none recorded)"
            out[name] = out.get(name, 0) + n
    return out


def _round8(x: float) -> float:
    """``numpy.round(x, 8)``: times 1e8, rounded half to even, divided by 1e8."""
    y = x * 1e8
    if not math.isfinite(y):
        return y / 1e8
    r = float(round(y))
    return (r if r else math.copysign(0.0, y)) / 1e8


def costs(
    models: Sequence[str | None],
    tin: Sequence[float],
    tout: Sequence[float],
    cr: Sequence[float],
    cw: Sequence[float],
    w1h: Sequence[float],
    prices: PriceTable,
) -> tuple[list[float], list[tuple[float, float, float, float, float]]]:
    """``(cost_usd, rates)`` of calls: the one cost rule (plain floats, no numpy).

    ``cost = (uncached * input + cache_read * cache_read_rate + (cache_write - cache_write_1h)
    * cache_write_rate + cache_write_1h * cache_write_1h_rate + output * output_rate) / 1e6``
    USD rounded to 8 decimals, where ``uncached = tokens_input - cache_read - cache_write``
    (``tokens_input`` includes the cache parts, in every format). ``tin`` and ``tout`` are NaN
    where unknown; ``cr``, ``cw`` and ``w1h`` are 0 where absent (``w1h`` is capped at ``cw``
    here). ``rates`` are :data:`Price.rates` per call, NaN for a model without a price (None:
    none recorded), whose cost is NaN (never 0), as is the cost of a call whose input or output
    is unknown or whose cache parts exceed its input.

    Examples
    --------
    >>> c, _ = costs(["m", "x"], [100.0, 1], [10.0, 1], [0, 0], [0, 0], [0, 0],
    ...              {"m": Price(3.0, 15.0)})
    >>> c[0], math.isnan(c[1])
    (0.00045, True)
    """
    cost: list[float] = []
    rates: list[tuple[float, float, float, float, float]] = []
    known: dict[str | None, tuple[float, float, float, float, float]] = {}
    for m, i, o, r, w, h in zip(models, tin, tout, cr, cw, w1h, strict=True):
        p = known.get(m)
        if p is None:  # each model looked up once, not once per call
            price = price_for(prices, m)
            p = known[m] = _NAN5 if price is None else price.rates()
        h = min(h, w)
        u = i - r - w
        if u < 0:
            u = math.nan
        cost.append(_round8((u * p[0] + o * p[1] + r * p[2] + (w - h) * p[3] + h * p[4]) / 1e6))
        rates.append(p)
    return cost, rates


def cost_warning(unpriced: Mapping[str, int], total_only: int, legacy: int) -> str:
    """The warning of calls whose cost is unknown: ``unpriced`` model -> calls (``"(none
    recorded)"`` for no model), ``total_only`` priced calls with a NaN cost, ``legacy`` those
    of them that store only a bare token total."""
    parts = []
    if unpriced:
        names = ", ".join(f"{m!r} ({n} calls)" for m, n in sorted(unpriced.items()))
        parts.append(
            f"no price for model(s) {names}: their cost_usd is NaN; "
            "pass usage(prices={model: {'input': ..., 'output': ...}}) to price them"
        )
    if total_only:
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
    return "; ".join(parts)
