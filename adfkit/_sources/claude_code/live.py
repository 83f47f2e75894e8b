"""A running Claude Code session followed record by record (``adfkit watch``): its model calls,
the latest prompt's size, the cost so far and each compaction as it lands, from each appended
line alone (an update costs in proportion to what was appended).

A call is a ``message.id`` (its block records share one usage: the last one counts, as in
:mod:`.rows`); its prompt is ``input_tokens`` with the cache parts; a ``compact_boundary``
is a compaction (``compactMetadata``: trigger, ``preTokens``, ``postTokens``), and what it
swept is counted in records: the conversation's records since the previous one (user and
assistant records, one per ``message.id``; the history's rows, which walk the chain, can be
fewer). A sidechain record (an inline subagent's) is not the session's; a record repeating an
earlier uuid (a replay) counts once, the first, as the reader keeps it. Calls on abandoned
branches count, as in ``usage()``; a forked session's copies of its parent's calls do not
(:func:`.content._paid_by`), nor its copy of the parent's compaction: a boundary met before
the file's first call of its own lands at the next call, when that call is the file's own
(:class:`.content._CopiedBoundaries`, as the reader decides). Not followed: a 1.0.x summary
without a boundary (the tables find it as a compaction). Against a full read of the 16 real
Claude Code and Codex fixture sessions and the 4 samples: calls, the latest prompt, compactions
and cost agree on 17; one session's last line has no newline (its call waits for it), one
sample's compaction is such a summary, and one session's cost differs by 0.02% ($23.9503
against $23.9548), not explained.
"""

from __future__ import annotations

from typing import Any

from adfkit._core.live import Landed, LiveFigures, Spend
from adfkit._core.prices import PriceTable, costs, default_prices
from adfkit._sources.claude_code.content import _CopiedBoundaries, _paid_by


def _int(v: Any) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0


class ClaudeCodeFollower:
    """The :class:`adfkit._core.live.Follower` of a Claude Code session."""

    folder_file = None

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.figures = LiveFigures()
        self._prices = default_prices() if prices is None else prices
        self._spend = Spend()  # the cost of each message.id
        self._rows = 0  # conversation rows since the last compaction
        self._ids: set[str] = set()  # message ids counted in _rows since then
        self._uuids: set[str] = set()  # every record's uuid, for replays
        self._side: bool | None = None  # whether the file is a subagent's (its first record)
        self._copied = _CopiedBoundaries()  # boundaries held until a call says whose they are

    def feed(self, record: dict[str, Any]) -> list[Landed]:
        side = record.get("isSidechain") is True
        if self._side is None and record.get("type") in ("user", "assistant"):
            self._side = side  # a subagent's own file is all sidechain
        if side and not self._side:
            return []  # a subagent's record, inline: not this session's (as the reader splits)
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self._uuids:
                return []  # a replay of a record written before: the first one counts
            self._uuids.add(uuid)
        kind = record.get("type")
        if kind == "assistant":
            paid, held = self._copied.call(record)
            self._assistant(record)
            if paid is not None or not held:
                return []  # a copied call: the boundaries held were copies too
            self.figures.landed += held
            return held
        elif kind == "user":
            self._rows += 1
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            landed = self._compaction(record)
            if self._copied.boundary(landed):
                return []
            self.figures.landed.append(landed)
            return [landed]
        elif kind == "system" and record.get("subtype") == "microcompact_boundary":
            self.figures.microcompactions += 1
        return []

    def _assistant(self, record: dict[str, Any]) -> None:
        msg = record.get("message")
        if not isinstance(msg, dict):
            return
        mid = msg.get("id")
        if isinstance(mid, str) and mid not in self._ids:
            self._ids.add(mid)
            self._rows += 1
        usage = msg.get("usage")
        model = msg.get("model")
        if not isinstance(mid, str) or not isinstance(usage, dict) or model == "<synthetic>":
            return
        if _paid_by(record) is not None:  # another session's call, copied: paid there
            return
        read = _int(usage.get("cache_read_input_tokens"))
        write = _int(usage.get("cache_creation_input_tokens"))
        split = usage.get("cache_creation")
        hour = _int(split.get("ephemeral_1h_input_tokens")) if isinstance(split, dict) else 0
        prompt = _int(usage.get("input_tokens")) + read + write
        model = model if isinstance(model, str) else None
        (cost,), _ = costs(
            [model],
            [float(prompt)],
            [float(_int(usage.get("output_tokens")))],
            [float(read)],
            [float(write)],
            [float(hour)],
            self._prices,
        )
        f = self.figures
        f.calls += self._spend.add(mid, cost)  # a call's last record's usage counts
        f.cost_usd = self._spend.total
        f.context_tokens, f.model = prompt, model

    def _compaction(self, record: dict[str, Any]) -> Landed:
        meta = record.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        pre, post = meta.get("preTokens"), meta.get("postTokens")
        landed = Landed(
            when=record.get("timestamp") if isinstance(record.get("timestamp"), str) else None,
            trigger=meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
            tokens_before=_int(pre) if pre is not None else None,
            tokens_after=_int(post) if post is not None else None,
            swept=self._rows,
            unit="records",
        )
        self._rows, self._ids = 0, set()
        return landed
