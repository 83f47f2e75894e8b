"""Totals of figures some of which may be unknown: the one rule every summary follows.

Unknown stays unknown: a total of figures none of which is known is NA (None), never 0
(``pandas.Series.sum`` skips NA and gives 0 for all-NA: ``min_count=1`` is this rule).
A total of figures some of which are known is the sum of the known ones; a total of no figure
at all (no compaction call) is 0. A total made of parts (:func:`add_known`) is NA when one of its
parts is: a figure wholly unknown makes the whole unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd


def known_sum(values: Iterable[Any]) -> int | None:
    """The sum of the known values (None, NA and NaN are unknown) as an int; None when there
    are values and none is known; 0 when there are none.

    Examples
    --------
    >>> known_sum([1, None, 2]), known_sum([None, pd.NA]), known_sum([])
    (3, None, 0)
    """
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
