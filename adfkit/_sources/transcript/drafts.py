"""Drafts: the rows, events and calls while a parser builds them (merged, moved to a branch, before
``seq`` is known), and what makes the finished records of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).

from adfkit._sources.transcript.records import ModelCall, TranscriptEvent, TranscriptRow


class RowDraft:
    """A row while a parser builds it: merged into (``content``, ``lines`` grow), moved to a
    branch, numbered last (``seq``). :meth:`final` copies it into the :class:`TranscriptRow` a
    :class:`ParsedTranscript` holds. A parser subclasses it for the state only it keeps (add
    ``__slots__``). Not a dataclass: a plain ``__init__`` on slots is the cheapest to build
    100k+ of."""

    __slots__ = (
        "seq",
        "role",
        "content",
        "model",
        "tokens",
        "created_at",
        "kind_hint",
        "lines",
        "uuid",
        "parent_uuid",
        "call_key",
        "sidechain",
        "agent_id",
        "branch",
        "malformed",
        "note",
        "ord",
        "call",
    )

    def __init__(
        self, role: str, content: list[dict[str, Any]], line: int, created_at: int | None
    ) -> None:
        self.seq = 0
        self.role = role
        self.content = content
        self.model: str | None = None
        #: The row's own dict (:meth:`final` does not copy it), None: no usage.
        self.tokens: dict[str, Any] | None = None
        self.created_at = created_at
        self.kind_hint: str | None = None
        self.lines = [line]
        self.uuid: str | None = None
        self.parent_uuid: str | None = None
        self.call_key: str | None = None
        self.sidechain = False
        self.agent_id: str | None = None
        self.branch: str | None = None
        self.malformed = False
        self.note: str | None = None
        self.ord: int | None = None
        #: The model call whose usage the row carries (None: none, or the parser keeps it).
        self.call: CallDraft | None = None

    def final(self) -> TranscriptRow:
        """The finished row (``seq`` set by :func:`number_rows`). Arguments by position, in
        :class:`TranscriptRow`'s field order (a third of the cost of keywords, once per row;
        tests/test_transcript_kit.py checks the order)."""
        lines = self.lines
        return TranscriptRow(
            self.seq,
            self.role,
            self.content,
            self.model,
            self.tokens or {},
            self.created_at,
            self.kind_hint,
            lines[0],
            tuple(lines),
            self.uuid,
            self.parent_uuid,
            self.call_key,
            self.sidechain,
            self.agent_id,
            self.branch,
            self.malformed,
            self.note,
            self.ord,
        )


def number_rows(
    active: Sequence[RowDraft], branches: Sequence[RowDraft]
) -> tuple[list[TranscriptRow], list[TranscriptRow]]:
    """Number the active conversation 1..N, then the abandoned branches' rows after it (the
    ``seq`` convention of the module docstring), and copy both into finished rows."""
    n = 0
    for row in active:
        n += 1
        row.seq = n
    for row in branches:
        n += 1
        row.seq = n
    return [r.final() for r in active], [r.final() for r in branches]


@dataclass(slots=True)
class EventDraft:
    """A :class:`TranscriptEvent` while its rows have no ``seq`` yet: ``swept``, ``preserved``
    and ``summary`` hold the drafts, turned into seqs by :meth:`final`."""

    kind: str
    line: int
    created_at: int | None = None
    uuid: str | None = None
    trigger: str | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    context_window: int | None = None
    swept: Sequence[RowDraft] = ()
    preserved: Sequence[RowDraft] = ()
    summary: RowDraft | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: How many active rows were built when the event happened (where the parser finds the
    #: calls before and after it), None when the parser tracks those itself.
    pos: int | None = None
    #: :attr:`TranscriptEvent.summarises`.
    summarises: bool = True

    def final(self) -> TranscriptEvent:
        s = self.summary
        return TranscriptEvent(
            kind=self.kind,
            trigger=self.trigger,
            pre_tokens=self.pre_tokens,
            post_tokens=self.post_tokens,
            tokens_before=self.tokens_before,
            tokens_after=self.tokens_after,
            created_at=self.created_at,
            line=self.line,
            uuid=self.uuid,
            summary_seq=s.seq if s is not None else None,
            swept=tuple(sorted(r.seq for r in self.swept)),
            preserved=tuple(sorted(r.seq for r in self.preserved)),
            context_window=self.context_window,
            extra=self.extra,
            summarises=self.summarises,
        )


class CallDraft:
    """A model call while its row has no ``seq`` yet (``row`` None: usage on no row).
    :meth:`final` makes the :class:`ModelCall`. A parser subclasses it for the state only it
    keeps (add ``__slots__``)."""

    __slots__ = (
        "key",
        "row",
        "line",
        "model",
        "tokens",
        "created_at",
        "n_records",
        "sidechain",
        "note",
    )

    def __init__(
        self,
        key: str,
        row: RowDraft | None,
        line: int,
        model: str | None,
        tokens: dict[str, int],
        created_at: int | None,
        sidechain: bool = False,
    ) -> None:
        self.key = key
        self.row = row
        self.line = line
        self.model = model
        self.tokens = tokens
        self.created_at = created_at
        self.n_records = 1
        self.sidechain = sidechain
        #: What the finished call says of itself (a ``note`` given to :meth:`final` wins).
        self.note: str | None = None

    def final(self, note: str | None = None) -> ModelCall:
        r = self.row
        return ModelCall(
            key=self.key,
            seq=(r.seq or None) if r is not None else None,
            line=self.line,
            model=self.model,
            tokens=self.tokens,
            created_at=self.created_at,
            n_records=self.n_records,
            sidechain=self.sidechain,
            note=note if note is not None else self.note,
        )


def own_call(row: RowDraft, tokens: dict[str, int], model: str | None) -> CallDraft:
    """Make ``row`` a model call of its own (a format writing one message per call, its usage
    on it): the call is keyed by the row's ``uuid``, else its line (``line-<n>``), and the row
    names it (``call_key``, ``call``).

    Examples
    --------
    >>> row = RowDraft("assistant", [], 7, None)
    >>> c = own_call(row, {"output": 3}, "m")
    >>> row.call_key, c.key, c.line, row.call is c
    ('line-7', 'line-7', 7, True)
    """
    key = row.uuid or f"line-{row.lines[0]}"
    row.call_key = key
    row.call = CallDraft(key, row, row.lines[0], model, tokens, row.created_at)
    return row.call


class CallInputs:
    """``tokens_before``/``tokens_after`` of events met in file order: the prompt size
    (``input``) of the last model call before the event and of the first call after it.

    An event takes the last call's size as it happens (:meth:`event`) and waits for the next
    call's (:meth:`call`); one with no call after it keeps ``tokens_after`` None.

    Examples
    --------
    >>> w, ev = CallInputs(), EventDraft("compaction", 5)
    >>> w.call(100); w.event(ev); w.call(40); w.call(70)
    >>> ev.tokens_before, ev.tokens_after, w.last
    (100, 40, 70)
    """

    __slots__ = ("last", "waiting")

    def __init__(self) -> None:
        self.last: int | None = None
        self.waiting: list[EventDraft] = []

    def event(self, ev: EventDraft) -> None:
        ev.tokens_before = self.last
        self.waiting.append(ev)

    def call(self, n: int) -> None:
        self.last = n
        for ev in self.waiting:
            ev.tokens_after = n
        self.waiting.clear()


def event_tokens(events: Iterable[EventDraft], inputs: Sequence[int | None]) -> None:
    """Each event's ``tokens_before``/``tokens_after`` (the :class:`CallInputs` rule) when the
    calls are known only after the walk: ``inputs[i]`` is the prompt size of the call on active
    row ``i`` (None: no call), an event stands before row ``EventDraft.pos`` (events without a
    ``pos`` are left as they are).

    Examples
    --------
    >>> a, b = EventDraft("compaction", 3, pos=1), EventDraft("compaction", 9, pos=3)
    >>> event_tokens([b, a], [10, None, 30])
    >>> (a.tokens_before, a.tokens_after), (b.tokens_before, b.tokens_after)
    ((10, 30), (30, None))
    """
    at = sorted((e for e in events if e.pos is not None), key=lambda e: e.pos or 0)
    w = CallInputs()
    k = 0
    for i, n in enumerate(inputs):
        while k < len(at) and at[k].pos == i:
            w.event(at[k])
            k += 1
        if n is not None:
            w.call(n)
    for ev in at[k:]:
        w.event(ev)


def final_calls(calls: Iterable[CallDraft], unattributed: str | None = None) -> list[ModelCall]:
    """The calls in line order; ``unattributed`` is the note of a call on no row."""
    return [
        c.final(unattributed if c.row is None else None)
        for c in sorted(calls, key=lambda c: c.line)
    ]
