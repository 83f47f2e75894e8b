"""What the parser builds: one :class:`Agent` per agent of the session, and its rows (the
format's notes: :mod:`.parser`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adfkit._sources.copilot_cli.records import Record
from adfkit._sources.transcript.kit import CallDraft, CallInputs, EventDraft, RowDraft


class Row(RowDraft):
    """A row being built from one event; a reply (or a compaction's summary with its usage)
    is a model call of its own (:func:`own_call`)."""

    __slots__ = ()

    def __init__(self, e: Record, role: str, content: list[dict[str, Any]]) -> None:
        super().__init__(role, content, e.line, e.ts)
        self.uuid = e.id


@dataclass
class Agent:
    """One agent's rows, events and calls as they are built."""

    rows: list[Row] = field(default_factory=list)
    window: list[Row] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    #: ``session.usage_record`` counts not yet on a reply: by ``apiCallId`` (None: no id)
    usage: dict[str | None, dict[str, int]] = field(default_factory=dict)
    #: calls no row holds: a compaction call whose compaction was not applied
    loose: list[CallDraft] = field(default_factory=list)
    model: str | None = None
    comp_start: tuple[Record, int] | None = None
    #: the calls' prompt sizes as they come, for the compactions around them
    inputs: CallInputs = field(default_factory=CallInputs)
    tool_call: str | None = None  # the task call that spawned it (sub-agents)
    name: str | None = None

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        self.window.append(row)
        return row
