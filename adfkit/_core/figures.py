"""What ``adfkit usage`` needs of one session, as plain values: the fast path a format may
declare on its :class:`~adfkit._core.registry.FormatSpec` (``figures``), so that many files are
summed without making their frames. A format without it is read through its full tables.

Its figures must equal the tables' (``tests/test_usage_fast.py`` checks every sample and
fixture of each format that has one): the calls are :meth:`AgentFile.usage`'s, the events
:meth:`AgentFile.events`', the name and meta the source's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


class UsageCall(NamedTuple):
    """One call of :meth:`AgentFile.usage`: its kind (``assistant``, ``compaction``), time (ms,
    None when unknown), model, token counts (None when absent; ``input`` includes the cache
    parts) and cost (USD, NaN when unpriced)."""

    call_kind: str
    at: int | None
    model: str | None
    input: int | None
    output: int | None
    cache_read: int | None
    cache_write: int | None
    cache_write_1h: int | None
    cost_usd: float


class SessionFigures(NamedTuple):
    """One input's figures: ``name`` and ``meta`` (the source's), ``messages`` (``(subkind,
    text)`` of each user message row in seq order: where a label finds the first prompt; an
    iterator, read at most once and only as far as the label needs),
    ``calls`` (the session's and then each subagent's, as :meth:`AgentFile.usage` lists them),
    ``events`` (``(event, ms or None)`` of each compaction, microcompaction and clear, dated as
    ``usage_days`` dates them) and ``notes`` (the warnings ``usage()`` would give, with the
    file they are about)."""

    name: str
    meta: dict[str, str]
    messages: Iterable[tuple[str | None, str]]
    calls: list[UsageCall]
    events: list[tuple[str, int | None]]
    notes: list[str]
