"""What the Codex parser holds while it walks a rollout's items: the items, the rows being
built, the window, the turn, the calls and events so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adfkit._sources.transcript.kit import (
    CallDraft,
    CallInputs,
    EventDraft,
    RowDraft,
    TokenCount,
)


@dataclass
class _Item:
    line: int
    ts: int | None
    type: str
    payload: dict[str, Any]


class _CRow(RowDraft):
    """A row being built; ``turn_start``: a typed user message (a turn a rollback counts)."""

    __slots__ = ("turn_start",)

    def __init__(
        self, it: _Item, role: str, content: list[dict[str, Any]], model: str | None
    ) -> None:
        super().__init__(role, content, it.line, it.ts)
        self.model = model
        i = it.payload.get("id")
        self.uuid = i if isinstance(i, str) else None
        self.turn_start = False


@dataclass(slots=True)
class _Turn:
    """The turn in progress (``task_started`` .. ``task_complete``)."""

    line: int
    #: a typed user message was met in it (a compaction then is automatic)
    has_user: bool = False
    #: compactions of this turn before its user message (automatic if one comes)
    pending: list[EventDraft] = field(default_factory=list)


@dataclass(slots=True)
class _TokenCountDraft:
    """A ``token_count`` read (``seq`` not set yet) and the row its usage went to."""

    count: TokenCount
    row: _CRow | None


@dataclass
class _State:
    rows: list[_CRow] = field(default_factory=list)
    window: list[_CRow] = field(default_factory=list)
    open_asst: _CRow | None = None
    model: str | None = None
    ctx_window: int | None = None
    turn: _Turn | None = None
    prev_total: int = -1
    #: the last model call's input, for the compactions around it
    inputs: CallInputs = field(default_factory=CallInputs)
    #: a model call not on a row yet: the next compaction's summary row takes it
    pending_call: CallDraft | None = None
    events: list[EventDraft] = field(default_factory=list)
    calls: list[CallDraft] = field(default_factory=list)
    tcs: list[_TokenCountDraft] = field(default_factory=list)
    n_branches: int = 0
    rows_since_comp: int = 0
    #: the file writes a ``token_usage_record`` per call (0.171): those are the calls, and
    #: ``token_count`` events only report totals
    usage_records: bool = False
