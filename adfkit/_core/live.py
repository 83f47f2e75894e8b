"""The figures of a running agent as ``adfkit watch`` shows them, kept up to date record by
record: what every format's follower (:attr:`adfkit.FormatSpec.follow`) fills in, and what a
full read of any format gives (:func:`adfkit._facade.watch.figures_of`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from adfkit._core.prices import PriceTable, costs


@dataclass
class Landed:
    """One compaction as it landed: when (ISO time, None when not recorded), its ``trigger``
    (``auto``, ``manual``; None when not recorded), the context before and after it in
    tokens (None where not recorded), and ``swept``: what it took out of the context, counted
    in ``unit`` (``rows`` of the history from a full read; ``records`` of the file counted as
    they were appended, where a follower cannot rebuild the history's rows)."""

    when: str | None
    trigger: str | None
    tokens_before: int | None
    tokens_after: int | None
    swept: int | None
    unit: str = "rows"


@dataclass
class LiveFigures:
    """A running agent's figures: model ``calls`` made, the latest call's prompt
    (``context_tokens``, None before any call), its ``model``, the cost so far (``cost_usd``:
    None when a call's model has no price or its usage is unknown: never 0), every compaction
    that ``landed``, microcompactions (Claude Code's clearing of old tool results), and the
    context ``window`` where the record states one (Copilot CLI's ``tokenLimit``; None: the
    format's rule assumes it from the model)."""

    calls: int = 0
    context_tokens: int | None = None
    model: str | None = None
    cost_usd: float | None = 0.0
    landed: list[Landed] = field(default_factory=list)
    microcompactions: int = 0
    window: int | None = None


class Follower(Protocol):
    """A format's reader of appended records: :meth:`feed` takes one parsed line (a JSON
    object) and returns the compactions it completed; :attr:`figures` are the figures so far.
    A format whose session is a folder names the file in it that is appended to
    (``folder_file``, Copilot CLI's ``events.jsonl``; None: the session is the file)."""

    figures: LiveFigures
    folder_file: str | None

    def feed(self, record: dict[str, Any]) -> list[Landed]: ...


class Spend:
    """The cost so far of a running agent's calls, each under a key (a later cost under the
    same key replaces the earlier: a call whose usage is written again): ``total`` is None
    once any call's cost is unknown (NaN), never a partial sum.

    Examples
    --------
    >>> s = Spend()
    >>> s.add("a", 0.5), s.add("b", 0.25), s.add("a", 1.0), s.total
    (True, True, False, 1.25)
    >>> _ = s.add("c", float("nan")); s.total is None
    True
    """

    def __init__(self) -> None:
        self._calls: dict[Any, float] = {}
        self._known = 0.0
        self._unknown = 0

    def add(self, key: Any, cost: float) -> bool:
        """Count ``cost`` for the call ``key``; True when the call is new."""
        old = self._calls.get(key)
        if old is not None and old != old:
            self._unknown -= 1
        elif old is not None:
            self._known -= old
        self._calls[key] = cost
        if cost != cost:
            self._unknown += 1
        else:
            self._known += cost
        return old is None

    @property
    def total(self) -> float | None:
        return None if self._unknown else round(self._known, 8)


def call_cost(prices: PriceTable, model: str | None, tokens: dict[str, int]) -> float:
    """The cost of one call from its counts under the ADF keys (``input``, cache parts
    included, ``output``, ``cache_read``, ``cache_write``), by the one cost rule
    (:func:`adfkit._core.prices.costs`): NaN when the input or output is unknown or the model
    has no price.

    Examples
    --------
    >>> from adfkit._core.prices import Price
    >>> call_cost({"m": Price(3.0, 15.0)}, "m", {"input": 100, "output": 10})
    0.00045
    >>> call_cost({"m": Price(3.0, 15.0)}, "m", {"output": 10})
    nan
    """
    nan = float("nan")
    (cost,), _ = costs(
        [model],
        [float(tokens.get("input", nan))],
        [float(tokens.get("output", nan))],
        [float(tokens.get("cache_read", 0))],
        [float(tokens.get("cache_write", 0))],
        [0.0],
        prices,
    )
    return cost
