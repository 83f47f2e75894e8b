"""The records a transcript parser returns: rows, compaction events, model calls, token counts,
integrity findings, the parsed file (:class:`ParsedTranscript`), and the kinds they take.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from adfkit._core.rows import KIND_HINTS as _ROW_KIND_HINTS

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).


#: ``kind_hint`` values a parser may set (None: let the row classifier decide); the row rule
#: (:func:`adfkit._core.rows.row_facts`) applies them.
KIND_HINTS = _ROW_KIND_HINTS

#: ``TranscriptEvent.kind`` values.
EVENT_KINDS = ("compaction", "microcompaction", "clear", "rewind")


def event_counts(kinds: Iterable[str]) -> dict[str, int]:
    """The one count of each kind of event, apart (a microcompaction is not a compaction, a
    clear is neither): ``{"compactions": ..., "microcompactions": ..., "clears": ...,
    "rewinds": ...}``."""
    out = {f"{k}s": 0 for k in EVENT_KINDS}
    for k in kinds:
        if k in EVENT_KINDS:
            out[f"{k}s"] += 1
    return out


#: ``Finding.severity`` values: ``error`` (data lost), ``warning`` (data doubtful), ``info``.
SEVERITIES = ("error", "warning", "info")


@dataclass(slots=True)
class TranscriptRow:
    """One message as sent to or received from the model, in conversation order.

    Not frozen: a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, which triples the cost of building 100k+ rows. Treat it as read-only.
    """

    seq: int
    role: str
    content: list[dict[str, Any]]
    model: str | None = None
    #: A count the file wrote that is not a count keeps that value (the row rule flags it).
    tokens: dict[str, Any] = field(default_factory=dict)
    created_at: int | None = None
    kind_hint: str | None = None
    #: 1-based line of the row's first record; ``lines`` lists every record merged into it.
    line: int = 0
    lines: tuple[int, ...] = ()
    #: Claude Code: the first record's ``uuid``. Codex: the first item's ``id``, if any.
    uuid: str | None = None
    parent_uuid: str | None = None
    #: Key of the model call this row came from (Claude ``message.id:requestId``).
    call_key: str | None = None
    sidechain: bool = False
    agent_id: str | None = None
    #: None on the active conversation, else the branch id (``branch-1``, ...).
    branch: str | None = None
    malformed: bool = False
    note: str | None = None
    #: Where the row is displayed when not at its ``seq`` (ADF ``ord``): a compaction summary
    #: written after the rows its compaction preserved has the seq before the first of them,
    #: as the model was sent it (summary, then the preserved rows).
    ord: int | None = None


@dataclass(frozen=True, slots=True)
class TranscriptEvent:
    """One event that changed the context window other than by appending rows."""

    kind: str
    trigger: str | None = None
    #: Token count the format itself recorded before/after (Claude ``preTokens``/``postTokens``).
    pre_tokens: int | None = None
    post_tokens: int | None = None
    #: Prompt size (``tokens["input"]``) of the last call before and the first call after.
    tokens_before: int | None = None
    tokens_after: int | None = None
    created_at: int | None = None
    line: int = 0
    uuid: str | None = None
    summary_seq: int | None = None
    #: Seqs that left the context at this event (for ``rewind``: the abandoned branch's rows).
    swept: tuple[int, ...] = ()
    #: Seqs kept verbatim across the event (Claude preserved segment, Codex replacement history).
    preserved: tuple[int, ...] = ()
    context_window: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Whether the mechanism writes a summary: False for one that drops rows without any (a
    #: trim, an edit, a truncation), whose missing summary is then not lost.
    summarises: bool = True


@dataclass(frozen=True, slots=True)
class Finding:
    """One integrity observation about the file, with the line it is about (None: whole file)."""

    check: str
    severity: str
    line: int | None
    detail: str


@dataclass(slots=True)
class ModelCall:
    """One model API call with its usage, counted once.

    Not frozen, as :class:`TranscriptRow` (a frozen dataclass's ``__init__`` sets each field
    through ``object.__setattr__``: a session makes one per call; its ``tokens`` dict made it
    unhashable anyway). Treat it as read-only.
    """

    key: str
    seq: int | None
    line: int
    model: str | None
    tokens: dict[str, int]
    created_at: int | None = None
    #: Records the call was written over (Claude streams one record per content block).
    n_records: int = 1
    sidechain: bool = False
    note: str | None = None


@dataclass(frozen=True, slots=True)
class TokenCount:
    """One Codex ``token_count`` event."""

    line: int
    created_at: int | None
    total: dict[str, int] | None
    last: dict[str, int] | None
    context_window: int | None
    #: True when ``total`` grew (a real model call); False for repeats and local estimates.
    is_call: bool
    #: Seq of the row the call's usage was attributed to (None: not attributed to a row).
    seq: int | None = None


@dataclass(slots=True)
class ParsedTranscript:
    """Everything a parser read from one transcript file."""

    path: str
    format: str
    session_id: str | None
    meta: dict[str, str] = field(default_factory=dict)
    rows: list[TranscriptRow] = field(default_factory=list)
    other_branches: list[TranscriptRow] = field(default_factory=list)
    events: list[TranscriptEvent] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    subagents: list[ParsedTranscript] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    token_counts: list[TokenCount] = field(default_factory=list)
    #: Seqs of the model calls that are the first of a process of the agent (a start or a
    #: resume), where the file shows them; empty: not recorded.
    process_starts: list[int] = field(default_factory=list)
    #: For a subagent: its id, the tool_use that spawned it, and the agent holding that tool_use
    #: (None: the main session).
    agent_id: str | None = None
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None

    def usage(self) -> dict[str, int]:
        """Sum of every counted call's tokens (this file only, subagents not included).

        Examples
        --------
        >>> ParsedTranscript("x.jsonl", "codex", None).usage()
        {}
        """
        out: dict[str, int] = {}
        for c in self.calls:
            for k, v in c.tokens.items():
                out[k] = out.get(k, 0) + v
        return out
