"""What the parser builds as it reads the events: rows, the window, the calls, and what
every event's handling reads (:class:`Ctx`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adfkit._sources.openhands.content import str_or_none
from adfkit._sources.openhands.files import EventFile
from adfkit._sources.openhands.usage import Usage
from adfkit._sources.transcript.kit import CallDraft, EventDraft, Findings, RowDraft


class Row(RowDraft):
    """A row being built from one event file: ``event_ids`` of every event merged into it,
    ``rid`` the model response it came from (its call: ``response:<rid>``)."""

    __slots__ = ("event_ids", "rid")

    def __init__(
        self, f: EventFile, role: str, content: list[dict[str, Any]], rid: str | None = None
    ) -> None:
        ev = f.obj or {}
        super().__init__(role, content, f.idx + 1, None)
        self.uuid = str_or_none(ev.get("id"))
        self.parent_uuid = str_or_none(ev.get("parent_id"))
        self.event_ids = [self.uuid] if self.uuid else []
        self.rid = rid
        self.call_key = f"response:{rid}" if rid else None


def response_call(key: str, row: Row, u: Usage | None) -> CallDraft:
    """The call of a response an event names: its usage, or none recorded."""
    model = (u.model if u is not None else None) or row.model
    tokens = dict(u.tokens) if u is not None else {}
    c = CallDraft(key, row, row.lines[0], model, tokens, row.created_at)
    if u is None:
        c.note = "no usage recorded for this response"
    return c


@dataclass
class State:
    rows: list[Row] = field(default_factory=list)
    window: list[Row] = field(default_factory=list)
    row_of: dict[str, Row] = field(default_factory=dict)
    summary_of: dict[str, Row] = field(default_factory=dict)
    no_row_ids: set[str] = field(default_factory=set)
    open_call: Row | None = None
    request: dict[str, Any] | None = None
    last_user_text: str = ""
    events: list[EventDraft] = field(default_factory=list)
    calls: list[CallDraft] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass
class Ctx:
    """What every event's handling reads: the findings, the usage by response id, the models."""

    fnd: Findings
    by_rid: dict[str, Usage]
    agent_model: str | None
    cond_model: str | None
    condenser: str | None
