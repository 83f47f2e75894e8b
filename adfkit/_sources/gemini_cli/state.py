"""What the parser builds as it reads a session's files: its rows, the message list as Gemini
CLI holds it, events and calls (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._sources.gemini_cli.content import CONTEXT, message_blocks, signature, text_of
from adfkit._sources.transcript.kit import CallInputs, EventDraft, RowDraft, iso_ms


class Row(RowDraft):
    """A row being built from one message."""

    __slots__ = ("mid", "mtype", "sig", "anchor", "before")

    def __init__(self, msg: dict[str, Any], line: int) -> None:
        t = msg.get("type")
        super().__init__("assistant" if t == "gemini" else "user", [], line, None)
        self.created_at = iso_ms(msg.get("timestamp"))
        self.mid: str = msg["id"]
        self.mtype = t
        self.uuid = self.mid
        self.sig = ""
        #: The row a new row of a ``$set`` list follows there, or (first in the list) the
        #: kept row it goes before; None both: appended.
        self.anchor: Row | None = None
        self.before: Row | None = None
        self.set_content(msg)

    def set_content(self, msg: dict[str, Any]) -> None:
        self.content = message_blocks(msg)
        self.sig = signature(self.mtype, self.content)
        if self.mtype == "user" and text_of(self.content).startswith(CONTEXT):
            self.kind_hint = "context"  # sent as the conversation's first message


@dataclass
class State:
    path: Path
    rows: list[Row] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)
    #: The message list as Gemini CLI holds it now, in its order.
    window: list[Row] = field(default_factory=list)
    inputs: CallInputs = field(default_factory=CallInputs)
    meta: dict[str, str] = field(default_factory=dict)
    #: Whether a turn is going on: the last record was a prompt or a reply with tool calls.
    in_turn: bool = False
    notices: int = 0
    #: Rows a ``$rewindTo`` took out of the conversation, and how many rewinds.
    abandoned: list[Row] = field(default_factory=list)
    branch: int = 0
    #: A process started (a ``$set`` of the list that is no compaction nor masking): its first
    #: call is the next one; those first calls.
    new_process: bool = False
    first_calls: list[Row] = field(default_factory=list)
    #: A resumed process's own header came, its ``sessionId`` not yet (module docstring).
    resuming: bool = False

    def last_with(self, mid: str, mtype: Any) -> Row | None:
        for r in reversed(self.window):
            if r.mid == mid and r.mtype == mtype:
                return r
        return None
