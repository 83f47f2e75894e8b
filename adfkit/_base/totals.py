"""Totals of figures some of which may be unknown: the one rule every summary follows.

Unknown stays unknown: a total of figures none of which is known is NA (None), never 0
(``pandas.Series.sum`` skips NA and gives 0 for all-NA: ``min_count=1`` is this rule).
A total of figures some of which are known is the sum of the known ones; a total of no figure
at all (no compaction call) is 0. A total made of parts (:func:`add_known`) is NA when one of its
parts is: a figure wholly unknown makes the whole unknown.

Costs are summed by one rule, :func:`cost_total` (and :func:`running_cost_totals`): every cost
is a whole number of hundred-millionths of a dollar (the cost rule,
:func:`adfkit._core.prices.costs`, rounds each to 8 decimals), so a total is the exact sum of
those integers, made a float once: the same whatever the order or grouping of the parts (a
session's total is the sum of its days' totals, to the last bit). No pandas or numpy here: the
fast path of ``adfkit usage`` sums with it too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

#: Hundred-millionths of a dollar in a dollar: the unit every cost is a whole number of.
COST_UNITS = 10**8


def known_sum(values: Iterable[Any]) -> int | None:
    """The sum of the known values (None, NA and NaN are unknown) as an int; None when there
    are values and none is known; 0 when there are none.

    Examples
    --------
    >>> import pandas as pd
    >>> known_sum([1, None, 2]), known_sum([None, pd.NA]), known_sum([])
    (3, None, 0)
    """
    import pandas as pd

    s = pd.to_numeric(pd.Series(list(values), dtype="object"), errors="coerce")
    total = s.sum(min_count=1 if len(s) else 0)
    return None if pd.isna(total) else int(total)


def known_max(values: Iterable[Any]) -> int | None:
    """The largest known value as an int; None when none is known.

    Examples
    --------
    >>> known_max([3, None, 5]), known_max([None])
    (5, None)
    """
    import pandas as pd

    s = pd.to_numeric(pd.Series(list(values), dtype="object"), errors="coerce")
    top = s.max()
    return None if pd.isna(top) else int(top)


def add_known(*parts: int | None) -> int | None:
    """The sum of a few totals, None when one of them is unknown.

    Examples
    --------
    >>> add_known(5, 2), add_known(5, None)
    (7, None)
    """
    return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)


def _units(cost: float) -> int:
    """``cost`` (USD, a whole number of hundred-millionths) in hundred-millionths, exactly
    (for any cost under 2**51 hundred-millionths: 22 million dollars)."""
    return round(cost * 1e8)


def cost_total(costs: Iterable[float]) -> float:
    """The total of ``costs`` (USD, each rounded to 8 decimals as the cost rule makes them):
    the exact sum of their hundred-millionths, divided once (correctly rounded); NaN when one
    is NaN (unknown stays unknown); 0.0 for none. The same for any order and any grouping:
    ``cost_total([cost_total(a), cost_total(b)]) == cost_total(a + b)``.

    Examples
    --------
    >>> cost_total([0.1] * 10), sum([0.1] * 10), cost_total([0.1, math.nan]), cost_total([])
    (1.0, 0.9999999999999999, nan, 0.0)
    """
    units = 0
    for c in costs:
        if c != c:
            return math.nan
        units += _units(c)
    return units / COST_UNITS


def running_cost_totals(costs: Sequence[float]) -> list[float]:
    """The running totals of the known ``costs`` (a NaN adds nothing) by the rule of
    :func:`cost_total`: the last is ``cost_total`` of the known ones.

    Examples
    --------
    >>> running_cost_totals([0.1, math.nan, 0.2, 0.3])
    [0.1, 0.1, 0.3, 0.6]
    """
    units = itertools.accumulate(0 if c != c else _units(c) for c in costs)
    return [u / COST_UNITS for u in units]
