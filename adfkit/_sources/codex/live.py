"""A running Codex rollout followed record by record (``adfkit watch``), from each appended line
alone: a model call is a ``token_count`` whose ``total_token_usage.total_tokens`` grew and whose
``last_token_usage`` is not a local estimate (zero input and output), as :mod:`.calls` rules;
its usage is ``last_token_usage`` (``input_tokens`` includes the cached part); the model is the
latest ``turn_context``'s; each ``compacted`` item is a compaction, and what it swept is counted
in records: the response items since the previous one.
"""

from __future__ import annotations

from typing import Any

from adfkit._core.live import Landed, LiveFigures, Spend, call_cost
from adfkit._core.prices import PriceTable, default_prices
from adfkit._sources.transcript.kit import openai_tokens


class CodexFollower:
    """The :class:`adfkit._core.live.Follower` of a Codex rollout."""

    folder_file = None

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.figures = LiveFigures()
        self._prices = default_prices() if prices is None else prices
        self._model: str | None = None
        self._total = 0  # the highest total_tokens seen
        self._spend = Spend()
        self._items = 0  # response items since the last compaction

    def feed(self, record: dict[str, Any]) -> list[Landed]:
        kind, p = record.get("type"), record.get("payload")
        p = p if isinstance(p, dict) else {}
        if kind == "turn_context" and isinstance(p.get("model"), str):
            self._model = p["model"]
        elif kind == "response_item":
            self._items += 1
        elif kind == "event_msg" and p.get("type") == "token_count":
            self._token_count(p.get("info"))
        elif kind == "compacted":
            when = record.get("timestamp")
            landed = Landed(
                when if isinstance(when, str) else None, None, None, None, self._items, "records"
            )
            self.figures.landed.append(landed)
            self._items = 0
            return [landed]
        return []

    def _token_count(self, info: Any) -> None:
        if not isinstance(info, dict):
            return
        total = info.get("total_token_usage")
        tt = total.get("total_tokens") if isinstance(total, dict) else None
        last = openai_tokens(info.get("last_token_usage"))
        estimate = bool(last) and not last.get("input") and not last.get("output")
        grew = isinstance(tt, int) and tt > self._total
        if isinstance(tt, int):
            self._total = max(self._total, tt)
        if not grew or estimate or not last:
            return
        cost = call_cost(self._prices, self._model, {**last, "cache_write": 0})
        f = self.figures
        self._spend.add(f.calls, cost)
        f.calls += 1
        f.cost_usd = self._spend.total
        f.context_tokens = last.get("input")
        f.model = self._model
