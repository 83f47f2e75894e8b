"""The windows the compaction lab works on: a window's messages in a format-neutral form,
what a compactor is given and what it returns. Shared by :mod:`adfkit._analysis.compactors`
(the built-in compactors and the registry) and :mod:`adfkit._analysis.llm_compactor`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from adfkit._base.errors import AdfError
from adfkit._core.rows import MESSAGE_OVERHEAD, block_chars, estimate_tokens


@dataclass(frozen=True)
class Message:
    """One message of a window, format-neutral: the history's ``kind`` (``message``,
    ``assistant``, ``tool_result``, ``compaction_summary``, ``context``...) and ``role``, its
    content blocks (adfkit's form: ``text``, ``tool_use``, ``tool_result``, ``thinking``...),
    and ``seq``, the history row it is (None for a message a compactor wrote)."""

    kind: str
    role: str
    blocks: tuple[dict[str, Any], ...]
    seq: int | None = None

    def chars(self) -> tuple[int, int]:
        """``(text_chars, media_chars)`` the estimator counts, the message overhead
        included (:func:`adfkit._core.rows.block_chars`)."""
        text, media = MESSAGE_OVERHEAD, 0
        for b in self.blocks:
            t, m = block_chars(b)
            text, media = text + t, media + m
        return text, media

    def text(self, value: str) -> Message:
        """A message of the same kind and role whose only block is the text ``value``."""
        return Message(self.kind, self.role, ({"type": "text", "text": value},))


def window_tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of a window: the runtime's estimator over its characters."""
    text = media = 0
    for m in messages:
        t, md = m.chars()
        text, media = text + t, media + md
    return estimate_tokens(text, media)


@dataclass(frozen=True)
class CompactionInput:
    """What a compactor is given: the window before one compaction."""

    #: the conversation the model saw before the compaction, in display order
    messages: tuple[Message, ...]
    #: names of the tools the session calls
    tools: tuple[str, ...]
    #: tokens the new window should fit in (the recorded new window's, when known)
    budget: int | None
    #: the compaction prompt or instructions the record holds, else None
    prompt: str | None = None
    #: what the agent's own compaction left (its summary and kept rows), None when unknown
    recorded: tuple[Message, ...] | None = None
    #: the model of the session at the compaction
    model: str | None = None
    #: the compaction (``event_id`` of :meth:`compactions`)
    event_id: int | None = None
    #: what the agent's compaction call cost (USD), None when unknown
    recorded_cost_usd: float | None = None


@dataclass(frozen=True)
class Compacted:
    """What a compactor may return instead of a plain sequence of messages: the new window
    with the cost of the call that made it (USD; None when unknown) and a note."""

    messages: tuple[Message, ...]
    cost_usd: float | None = 0.0
    note: str | None = None


class CompactorError(AdfError):
    """A compactor could not make a window for one compaction (a request refused by its
    budget, an endpoint's error): that compaction's row is NA with this message as its note,
    and the others go on."""


Compactor = Callable[[CompactionInput], "Sequence[Message] | Compacted | None"]
Factory = Callable[..., Compactor]
