"""The figures of a running agent as ``adfkit watch`` shows them, kept up to date record by
record: what every format's follower (:attr:`adfkit.FormatSpec.follow`) fills in, and what a
full read of any format gives (:func:`adfkit._facade.watch.figures_of`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


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
    that ``landed``, and microcompactions (Claude Code's clearing of old tool results)."""

    calls: int = 0
    context_tokens: int | None = None
    model: str | None = None
    cost_usd: float | None = 0.0
    landed: list[Landed] = field(default_factory=list)
    microcompactions: int = 0


class Follower(Protocol):
    """A format's reader of appended records: :meth:`feed` takes one parsed line (a JSON
    object) and returns the compactions it completed; :attr:`figures` are the figures so far."""

    figures: LiveFigures

    def feed(self, record: dict[str, Any]) -> list[Landed]: ...
