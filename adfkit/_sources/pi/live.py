"""A running pi session followed entry by entry (``adfkit watch``, ``LiveView``), from each
appended line alone: an update costs in proportion to what was appended.

A model call is an ``assistant`` message (one per message, as :mod:`.parser` counts them); its
prompt is ``input + cacheRead + cacheWrite`` (pi's ``input`` is the uncached part:
:func:`.parser.pi_tokens`, the reader's own rule); an aborted or failed reply whose usage is all
zeros reported nothing: it is no row of ``usage()`` and not counted here. The model is the
message's. A ``compaction`` entry is a compaction (``tokensBefore``; pi records no trigger and
no tokens after); what it swept is counted in records: the conversation's entries (messages,
custom messages, branch summaries) since the previous one. Not as a full read: a compaction on
a branch the user later left through ``/tree`` is counted (the tables keep only the path's),
since which branch is left is known only at the end of the file.
"""

from __future__ import annotations

from typing import Any

from adfkit._core.live import Landed, LiveFigures, Spend, call_cost
from adfkit._core.prices import PriceTable, default_prices
from adfkit._sources.pi.parser import pi_tokens

#: Entries that are turns of the conversation (the rows a compaction sweeps).
_TURNS = frozenset({"message", "custom_message", "branch_summary"})


class PiFollower:
    """The :class:`adfkit._core.live.Follower` of a pi session."""

    folder_file = None

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.figures = LiveFigures()
        self._prices = default_prices() if prices is None else prices
        self._spend = Spend()
        self._entries = 0  # conversation entries since the last compaction

    def feed(self, record: dict[str, Any]) -> list[Landed]:
        kind = record.get("type")
        if kind in _TURNS:
            self._entries += 1
            msg = record.get("message")
            if kind == "message" and isinstance(msg, dict) and msg.get("role") == "assistant":
                self._assistant(msg)
        elif kind == "compaction":
            return [self._compaction(record)]
        return []

    def _assistant(self, msg: dict[str, Any]) -> None:
        tokens, unknown = pi_tokens(msg.get("usage"))
        if msg.get("stopReason") in ("aborted", "error") and not unknown:
            tokens = tokens if any(tokens.values()) else {}  # reported nothing: unknown
        if not tokens:
            return  # a reply that reported nothing is no row of usage()
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        f = self.figures
        self._spend.add(f.calls, call_cost(self._prices, model, tokens))
        f.calls += 1
        f.cost_usd = self._spend.total
        f.context_tokens, f.model = tokens.get("input"), model

    def _compaction(self, record: dict[str, Any]) -> Landed:
        pre = record.get("tokensBefore")
        when = record.get("timestamp")
        landed = Landed(
            when=when if isinstance(when, str) else None,
            trigger=None,
            tokens_before=pre if isinstance(pre, int) and not isinstance(pre, bool) else None,
            tokens_after=None,
            swept=self._entries,
            unit="records",
        )
        self.figures.landed.append(landed)
        self._entries = 0
        return landed
