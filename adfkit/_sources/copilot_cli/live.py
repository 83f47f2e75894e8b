"""A running Copilot CLI session followed event by event (``adfkit watch``, ``LiveView``): the
session folder's ``events.jsonl`` read from the bytes appended, each line alone.

The main agent's events only (an event with an ``agentId``, or the older
``parentToolCallId``, is a sub-agent's, a transcript of its own as :mod:`.parser` splits it).
A model call is an ``assistant.message`` (its counts: the ``session.usage_record`` of the same
``apiCallId`` written before it, else the oldest waiting one; none: its input, and so its
cost, unknown), and an applied compaction's own call (``compactionTokensUsed``), as
``usage()`` counts them (a call with no count at all, or of a compaction not applied, is on no
row of it); the model is the message's, else the latest ``session.model_change``'s. An
applied ``session.compaction_complete`` is a compaction (its trigger, else its start's;
``preCompactionTokens``, ``postCompactionTokens``), and what it swept is counted in records:
the conversation's events (user, assistant and tool-result events) since the previous
compaction or clear; a ``session.truncation`` is a compaction of trigger ``truncation``
sweeping ``messagesRemovedDuringTruncation`` records. The window is the latest ``tokenLimit``
recorded, and the threshold shown the format's rule's for it; the one a full read learns from
the recorded ``preCompactionTokens`` (:mod:`adfkit._core.thresholds`) is not learned while
following.
"""

from __future__ import annotations

from typing import Any

from adfkit._core.live import Landed, LiveFigures, Spend, call_cost
from adfkit._core.prices import PriceTable, default_prices
from adfkit._core.rows import as_count
from adfkit._sources.copilot_cli.files import EVENTS
from adfkit._sources.copilot_cli.usage import billed
from adfkit._sources.transcript.kit import Findings, mapped_tokens

#: Events that are turns of the conversation (the rows a compaction sweeps).
_TURNS = frozenset({"user.message", "assistant.message", "tool.execution_complete"})


class CopilotFollower:
    """The :class:`adfkit._core.live.Follower` of a Copilot CLI session."""

    folder_file = EVENTS

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.figures = LiveFigures()
        self._prices = default_prices() if prices is None else prices
        self._spend = Spend()
        self._model: str | None = None
        self._usage: dict[str | None, dict[str, int]] = {}  # usage records waiting for replies
        self._start: dict[str, Any] = {}  # the data of the compaction_start being waited for
        self._events = 0  # conversation events since the last compaction

    def feed(self, record: dict[str, Any]) -> list[Landed]:
        d, t = record.get("data"), record.get("type")
        if type(d) is not dict or record.get("agentId") is not None:
            return []
        if d.get("parentToolCallId") is not None and t not in (
            "subagent.started",
            "subagent.completed",
        ):
            return []
        self._events += t in _TURNS
        if t == "session.model_change" and isinstance(d.get("newModel"), str):
            self._model = d["newModel"]
        elif t == "session.usage_record" and type(d.get("usage")) is dict:
            key = d["usage"].get("apiCallId")
            self._usage[key if isinstance(key, str) else None] = _tokens(d["usage"])
        elif t == "assistant.message":
            self._reply(d)
        elif t == "session.compaction_start":
            self._start = d
            self._window(d)
        elif t == "session.compaction_complete":
            return self._compaction(record, d)
        elif t == "session.truncation":
            n = as_count(d.get("messagesRemovedDuringTruncation")) or 0
            pre = as_count(d.get("preTruncationTokensInMessages"))
            post = as_count(d.get("postTruncationTokensInMessages"))
            return [self._landed(record, "truncation", pre, post, n)]
        elif t == "session.context_cleared":
            self._events = 0
        return []

    def _window(self, d: dict[str, Any]) -> None:
        window = as_count(d.get("tokenLimit"))
        if window is not None:
            self.figures.window = window

    def _reply(self, d: dict[str, Any]) -> None:
        tokens = mapped_tokens(d, {"outputTokens": "output"})
        key = d.get("apiCallId")
        recorded = self._usage.pop(key if isinstance(key, str) else None, None)
        if recorded is None and self._usage:  # a record without the reply's id: the oldest
            recorded = self._usage.pop(next(iter(self._usage)))
        tokens |= recorded or {}
        model = d.get("model") if isinstance(d.get("model"), str) else self._model
        self._call(model, tokens)

    def _call(self, model: str | None, tokens: dict[str, int]) -> None:
        if not tokens:
            return  # a call that reported no count is no row of usage()
        f = self.figures
        self._spend.add(f.calls, call_cost(self._prices, model, tokens))
        f.calls += 1
        f.cost_usd = self._spend.total
        f.context_tokens, f.model = tokens.get("input"), model

    def _compaction(self, record: dict[str, Any], d: dict[str, Any]) -> list[Landed]:
        start, self._start = self._start, {}
        self._window(d)
        if d.get("success") is not True or d.get("outcome") not in (None, "applied"):
            return []  # not applied: the window is unchanged, its call on no row of usage()
        used = d.get("compactionTokensUsed")
        if type(used) is dict:
            model = used.get("model")
            self._call(model if isinstance(model, str) else None, _tokens(used))
        trigger = d.get("trigger", start.get("trigger"))
        pre = as_count(d.get("preCompactionTokens"))
        post = as_count(d.get("postCompactionTokens"))
        swept = self._events
        return [self._landed(record, trigger, pre, post, swept)]

    def _landed(
        self, record: dict[str, Any], trigger: Any, pre: int | None, post: int | None, swept: int
    ) -> Landed:
        when = record.get("timestamp")
        landed = Landed(
            when if isinstance(when, str) else None,
            trigger if isinstance(trigger, str) else None,
            pre,
            post,
            swept,
            "records",
        )
        self.figures.landed.append(landed)
        self._events = 0
        return landed


def _tokens(u: dict[str, Any]) -> dict[str, int]:
    """A usage's counts by the reader's own rule (billing lines applied)."""
    return billed(u, Findings(), 0)
