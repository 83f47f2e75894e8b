"""The transcript kit: format-neutral records of an agent transcript (rows, compaction events,
model calls, integrity findings) and what every JSONL parser shares to make them.

The parsers of Claude Code sessions (``_sources/claude_code/``) and Codex CLI rollouts
(``_sources/codex/``) both return a :class:`ParsedTranscript`, and a new JSONL or JSON format
does the same. What a parser takes from here, so that it only says what its records mean:

- **reading**: :class:`JsonLines` yields each line's JSON object with the caps and findings
  every format needs (byte-order mark, a line over ``max_line_bytes``, bad JSON repaired or
  skipped, a half-written last line, non-objects, a capped ``.zst`` stream);
  :func:`check_head` refuses a file that cannot be a transcript before reading it;
  :class:`TypeCounts` sums the records of a skipped type into one finding;
  :func:`gc_paused` holds the garbage collector off while the many acyclic objects are made.
- **findings**: :class:`Findings` (capped per check), :func:`warn_findings`.
- **drafts**: :class:`RowDraft`, :class:`EventDraft`, :class:`CallDraft` are the rows, events
  and calls while the parser builds them (merged, moved to a branch, before ``seq`` is known);
  :func:`number_rows`, :meth:`EventDraft.final` and :func:`final_calls` make the finished
  records; :func:`own_call` makes a row its own model call; :class:`CallInputs` and
  :func:`event_tokens` give an event the prompt sizes around it. A parser subclasses a draft
  for the state only it keeps.
- **values**: timestamps (:func:`iso_ms`), token usage (:func:`anthropic_tokens`,
  :func:`openai_tokens`, :func:`mapped_tokens`, counts that are not counts), tool-call
  arguments (:func:`tool_input`), tool-result text.

Nothing here knows any one format.

Conventions, the same as ADF loop rows (ADF_FORMAT.md §3):

- ``content`` is a list of Anthropic-style blocks: ``{"type": "text", "text"}``,
  ``{"type": "tool_use", "id", "name", "input"}`` (``input`` an object; arguments that are not
  valid JSON become ``{"_error", "_raw_arguments"}``), ``{"type": "tool_result", "tool_use_id",
  "content", "is_error"}`` (``content`` a string: text parts joined by newlines, other parts as
  ``[image]``-style placeholders), ``{"type": "thinking", "thinking"}`` (signatures and encrypted
  reasoning are dropped), ``{"type": "image_url", "image_url": {"url"}}``. Unknown block types are
  kept as they are.
- ``tokens`` holds only the keys the provider reported among ``input``, ``output``,
  ``cache_read``, ``cache_write`` and ``reasoning``. ``input`` **includes** the cache parts.
  One API call's usage is counted exactly once, on the row of that call.
- ``created_at`` is milliseconds since the epoch (UTC), or None.
- ``seq`` numbers the active conversation 1..N in conversation order; rows of abandoned branches
  (``ParsedTranscript.other_branches``) continue the numbering after N, in file order, so a seq
  is unique within one parsed file. ``line`` is the 1-based line of the row's first record.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfWarning, NotTranscriptError
from adfkit._base.files import open_text_stream, read_head
from adfkit._base.js import too_many_containers
from adfkit._core.rows import KIND_HINTS as _ROW_KIND_HINTS
from adfkit._core.rows import as_count

if TYPE_CHECKING:
    import pandas as pd

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).

#: Default cap on one line; longer lines are skipped with a finding (real lines reach ~1 MB).
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024

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


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model API call with its usage, counted once."""

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


# --- drafts: what a parser builds before the rows are numbered --------------------------------


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


# --- findings -------------------------------------------------------------------------------


class Findings:
    """Collects findings, keeping at most ``cap`` per check (then one summary finding)."""

    def __init__(self, cap: int = 50) -> None:
        self.items: list[Finding] = []
        self._counts: dict[str, int] = {}
        self._cap = cap

    def add(self, check: str, severity: str, line: int | None, detail: str) -> None:
        n = self._counts.get(check, 0) + 1
        self._counts[check] = n
        if n <= self._cap:
            self.items.append(Finding(check, severity, line, detail))

    def done(self) -> list[Finding]:
        """The findings, plus one per check that passed the cap."""
        out = list(self.items)
        for check, n in self._counts.items():
            if n > self._cap:
                sev = next(f.severity for f in self.items if f.check == check)
                out.append(
                    Finding(check, sev, None, f"{n - self._cap} more '{check}' findings omitted")
                )
        return out


def warn_findings(path: str, findings: list[Finding], *, stacklevel: int = 3) -> None:
    """Emit one :class:`AdfWarning` summarising the warning- and error-level findings."""
    bad = [f for f in findings if f.severity in ("warning", "error")]
    if not bad:
        return
    parts = [f"line {f.line}: {f.detail}" if f.line else f.detail for f in bad[:5]]
    more = f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""
    warnings.warn(
        f"{path}: {len(bad)} problem(s) reading the transcript: " + "; ".join(parts) + more,
        AdfWarning,
        stacklevel=stacklevel,
    )


class TypeCounts:
    """Record types a reader skipped (or kept only as links), with their lines: one summary
    finding per type at the end, not one per record."""

    __slots__ = ("lines",)

    def __init__(self) -> None:
        self.lines: dict[str, list[int]] = {}

    def add(self, t: Any, line: int) -> None:
        """Count a record of type ``t`` (a value that is not text is named by its JSON type)."""
        key = t if isinstance(t, str) else f"<{type(t).__name__}>"
        self.lines.setdefault(key[:60], []).append(line)

    def report(
        self,
        fnd: Findings,
        check: str,
        severity: str,
        detail: str | Callable[[int, str], str],
        *,
        at_line: bool = True,
    ) -> None:
        """One finding per type; ``detail`` is formatted with ``n`` (records) and ``t`` (type)
        (or called with them), on the first such record's line (``at_line``) or on the whole
        file."""
        for t, lines in self.lines.items():
            n = len(lines)
            text = detail(n, t) if callable(detail) else detail.format(n=n, t=t)
            fnd.add(check, severity, lines[0] if at_line else None, text)


# --- reading lines --------------------------------------------------------------------------


#: A UTF-8 byte-order mark: some tools write one before the first record.
UTF8_BOM = b"\xef\xbb\xbf"
_SQLITE_MAGIC = b"SQLite format 3\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def sniff(path: Path, head: bytes, what: str) -> None:
    """Raise :class:`NotTranscriptError` when ``head`` (the first bytes) cannot start a JSONL
    transcript."""
    if not head:
        raise NotTranscriptError(f"empty file (0 bytes), not a {what}", path=path)
    if head.startswith(_SQLITE_MAGIC):
        raise NotTranscriptError(
            f"a SQLite database (an .adf agent file?), not a {what}; open it with adfkit.open_adf",
            path=path,
        )
    if head.startswith(ZSTD_MAGIC):
        raise NotTranscriptError(
            f"zstd-compressed data, not a {what}; name it *.jsonl.zst to read it", path=path
        )
    stripped = head.removeprefix(UTF8_BOM).lstrip(b" \t\r\n")
    if not stripped and len(head) < 4096:
        raise NotTranscriptError(f"only whitespace, not a {what}", path=path)
    if stripped and stripped[:1] != b"{":
        kind = (
            "binary data" if b"\x00" in head[:512] or head[:8] == b"\x89PNG\r\n\x1a\n" else "text"
        )
        raise NotTranscriptError(
            f"the first bytes are {kind}, not a JSON object: not a {what}", path=path
        )


def skip_bom(stream: IO[bytes]) -> None:
    """Step over a UTF-8 byte-order mark at the start of ``stream`` (an editor or a Windows tool
    may write one): it is not part of the first record, whose line would else not parse."""
    peek = getattr(stream, "peek", None)
    head = peek(3)[:3] if peek is not None else b""
    if head == UTF8_BOM:
        stream.read(3)


def iter_lines(stream: IO[bytes], max_line_bytes: int) -> Iterator[tuple[int, bytes | None, bool]]:
    """Yield ``(line_number, data, complete)`` for each non-blank line of ``stream``.

    ``data`` is None for a line longer than ``max_line_bytes`` (its bytes are read and dropped a
    MiB at a time, never held whole). ``complete`` is False only for a final line without its
    newline (a line still being written).
    """
    skip_bom(stream)
    n = 0
    limit = max_line_bytes + 1
    readline = stream.readline
    while True:
        data = readline(limit)
        if not data:
            return
        n += 1
        if data[-1:] == b"\n":
            if len(data) > 1 and not data.isspace():
                yield n, data, True
            continue
        if len(data) < limit:  # EOF without a newline
            if not data.isspace():
                yield n, data, False
            return
        # longer than the cap: drop the rest of the line
        while True:
            chunk = readline(1 << 20)
            if not chunk or chunk[-1:] == b"\n":
                break
        yield n, None, bool(chunk)


def head_objects(stream: IO[bytes], max_lines: int) -> Iterator[dict[str, Any]]:
    """The JSON objects among the first ``max_lines`` non-blank lines of ``stream``, for a
    quick look at a file (a listing, a link to its session): a line too long (over 8 MiB),
    not JSON or not an object is passed over, with no finding."""
    for _, data, _c in iter_lines(stream, 8 << 20):
        if max_lines <= 0:
            return
        max_lines -= 1
        obj = loads_line(data)[0] if data is not None else None
        if type(obj) is dict:
            yield obj


_LONE_SURROGATE = re.compile(
    r"(?<!\\)(\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)(\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _fix_surrogate(m: re.Match[str]) -> str:
    prefix = m.group(1) or m.group(2) or ""
    return prefix + "\\ufffd"


#: Lines at least this long are checked for too many lists and objects before parsing (a
#: shorter one holds at most 500,000: about 35 MB parsed).
_CHECKED_LINE = 1 << 20


def loads_line(data: bytes) -> tuple[Any, str | None]:
    """Parse one JSON line. Returns ``(value, problem)``.

    The common case is one ``orjson.loads``. When that fails, the line is decoded as UTF-8 with
    replacement and lone surrogate escapes are replaced by U+FFFD; if that parses, ``problem``
    names what was repaired (``"non-UTF-8 bytes replaced"``...), else ``value`` is None and
    ``problem`` says why (never echoing the line's content). A line of 1 MiB or more holding
    more lists and objects than :func:`adfkit._base.js.too_many_containers` allows is not
    parsed (its memory would be many times its size).
    """
    if len(data) >= _CHECKED_LINE and (many := too_many_containers(data)) is not None:
        return None, f"not parsed: {many}"
    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError as e:
        msg = str(e)
    if "depth limit" in msg or "recursion" in msg.lower():
        return None, "JSON nested too deeply (over 1024 levels)"
    text = data.decode("utf-8", errors="replace")
    repaired = []
    if "\ufffd" in text and b"\xef\xbf\xbd" not in data:
        repaired.append("non-UTF-8 bytes replaced")
    if "surrogate" in msg:
        text2 = _LONE_SURROGATE.sub(_fix_surrogate, text)
        if text2 != text:
            repaired.append("lone surrogate escapes replaced")
            text = text2
    if repaired:
        try:
            return orjson.loads(text), "; ".join(repaired)
        except orjson.JSONDecodeError:
            pass
    return None, "not valid JSON"


#: Cap on a ``.jsonl.zst`` file: decompressed bytes read, and bytes of lines held, each line
#: counted as at least ``LINE_CHARGE`` bytes (a parsed line costs Python objects whatever its
#: length), so the cap bounds memory, not only bytes (README "Limits").
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024**2
LINE_CHARGE = 1024
#: Compressed bytes fed to zstd at a time (at most 32 MiB out of one feed).
_ZSTD_FEED = 1024


class _RawCapped(io.RawIOBase):
    """The decompressed bytes of a zstd file, frame after frame, stopping after ``limit`` bytes
    (``hit`` set). The input is fed ``_ZSTD_FEED`` bytes at a time, so one step never holds more
    than zstd's largest expansion of that (32 MiB); ``cut`` is set when the file ends inside a
    frame (a file cut mid-write: the complete frames before it are read), ``error`` when the
    data is damaged."""

    def __init__(self, fh: IO[bytes], limit: int) -> None:
        self.fh = fh
        self.left = limit
        self.hit = False
        self.cut = False
        self.error: str | None = None
        self.frames = 0
        import zstandard

        self._zstd_error = zstandard.ZstdError
        self._dctx = zstandard.ZstdDecompressor()
        self._obj: Any = None
        self._pending = b""
        self._out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._out:
            if not self._fill():
                return 0
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _fill(self) -> bool:
        if self.left <= 0:
            self.hit = True
            return False
        data = self._pending or self.fh.read(_ZSTD_FEED)
        self._pending = b""
        if not data:
            self.cut = self._obj is not None  # the file ended inside a frame
            return False
        if self._obj is None:
            self._obj = self._dctx.decompressobj()
        try:
            out = self._obj.decompress(data)
        except self._zstd_error as e:
            self.error = str(e)[:120]
            return False
        if self._obj.eof:
            self.frames += 1
            self._pending = self._obj.unused_data
            self._obj = None
        if len(out) > self.left:
            out = out[: self.left]
        self.left -= len(out)
        self._out = memoryview(out)
        return True


def open_lines(
    path: Path, max_decompressed_bytes: int | None
) -> tuple[IO[bytes], _RawCapped | None, IO[bytes]]:
    """``(stream, zst, file)``: the bytes to read lines from, the capped zstd reader under them
    (None for a plain file) and the file to close. A name ending ``.zst`` is read as zstd when
    ``max_decompressed_bytes`` is given (the format reads compressed files), else as it is."""
    fh = open_text_stream(path)
    if max_decompressed_bytes is not None and path.name.endswith(".zst"):
        raw = _RawCapped(fh, max_decompressed_bytes)
        return io.BufferedReader(raw, buffer_size=1 << 20), raw, fh
    return fh, None, fh


def check_head(path: Path, what: str, *, zst: bool = False) -> None:
    """Raise :class:`NotTranscriptError` when the first bytes of ``path`` cannot start a
    ``what`` (``zst``: a ``.zst`` file the format reads compressed, whose bytes must be zstd)."""
    head = read_head(path)
    if not zst or not path.name.endswith(".zst"):
        sniff(path, head, what)
    elif not head:
        raise NotTranscriptError(f"empty file (0 bytes), not a {what}", path=path)
    elif not head.startswith(ZSTD_MAGIC):
        raise NotTranscriptError(
            f"named .zst but not zstd-compressed data: not a {what}", path=path
        )


class JsonLines:
    """The JSON objects of a JSONL transcript, one per line, with what every format's reader
    does about bad lines: iterating yields ``(line_number, object)``.

    - a UTF-8 byte-order mark before the first line is stepped over; blank lines are skipped;
    - a line over ``max_line_bytes`` is dropped unread (``huge_line``);
    - a line that is not JSON is repaired if it can be (non-UTF-8 bytes, lone surrogates:
      ``encoding``, and :attr:`repaired` maps its number to what was done), else skipped
      (``bad_json``; ``truncated_last_line`` for a last line without its newline, a file still
      being written);
    - a JSON value that is not an object is skipped (``not_an_object``);
    - lines starting with one of ``skip`` (records the format never uses, written with their
      ``type`` first) are counted in :attr:`n_skipped`, not parsed;
    - a ``.zst`` file (when ``max_decompressed_bytes`` is given) is read as a capped zstd
      stream: decompressed bytes and bytes of lines held (each at least :data:`LINE_CHARGE`)
      stop at the cap (``decompressed_size_cap``), a damaged or cut stream is reported
      (``zstd_error``, ``zstd_cut``).

    ``noun`` names the file in findings ("the session is probably still being written").
    :attr:`n_parsed` counts the lines that parsed as JSON (objects or not), :attr:`n_huge` the
    lines dropped unread, :attr:`first_bad_line` is the first complete line that was not JSON
    (a format whose records count lines knows each line's place from these). The file is
    closed when the iteration ends. Iterate once.
    """

    def __init__(
        self,
        path: Path,
        fnd: Findings,
        noun: str,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_decompressed_bytes: int | None = None,
        skip: tuple[bytes, ...] = (),
    ) -> None:
        self.path = path
        self.fnd = fnd
        self.noun = noun
        self.max_line_bytes = max_line_bytes
        self.max_decompressed_bytes = max_decompressed_bytes
        self.skip = skip
        self.n_parsed = 0
        self.n_skipped = 0
        self.n_huge = 0
        self.first_bad_line: int | None = None
        self.repaired: dict[int, str] = {}

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        stream, raw, fh = open_lines(self.path, self.max_decompressed_bytes)
        try:
            yield from self._objects(stream, raw)
            if raw is not None:
                self._zst_findings(raw)
        finally:
            fh.close()

    def _objects(
        self, stream: IO[bytes], raw: _RawCapped | None
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        skip_bom(stream)
        readline = stream.readline
        limit = self.max_line_bytes + 1
        cap = self.max_decompressed_bytes or 0
        held = 0  # bytes of lines held, each counted as at least LINE_CHARGE (.zst only)
        skip = self.skip
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        n = 0
        while True:  # once per line of a large file: the usual case in as few steps as can be
            data = readline(limit)
            if not data:
                return
            n += 1
            whole = data[-1] == 10
            if whole or len(data) < limit:
                if raw is not None and not data.isspace():
                    held += max(LINE_CHARGE, len(data))
                    if held > cap:
                        raw.hit = True
                        return
                if whole and data[0] == 123:  # a whole line opening an object: the usual case
                    if skip and data.startswith(skip):
                        self.n_skipped += 1
                        continue
                    if len(data) >= _CHECKED_LINE and self._too_many(n, data):
                        continue
                    try:
                        obj = loads(data)  # a line opening "{" that parses is an object
                    except decode_error:
                        obj = self._rare(n, data, True)
                        if obj is None:
                            continue
                    else:
                        self.n_parsed += 1
                    yield n, obj
                    continue
                if not data.isspace():  # a line that does not open an object, or the last one
                    obj = self._rare(n, data, whole)
                    if obj is not None:
                        yield n, obj
                if whole:
                    continue
                return  # the last line, without its newline
            while True:  # longer than the cap: drop the rest of the line
                chunk = readline(1 << 20)
                if not chunk or chunk[-1:] == b"\n":
                    break
            if raw is not None:
                held += LINE_CHARGE
                if held > cap:
                    raw.hit = True
                    return
            self.n_huge += 1
            self.fnd.add(
                "huge_line",
                "warning",
                n,
                f"line longer than max_line_bytes={self.max_line_bytes:,}; skipped",
            )

    def _too_many(self, n: int, data: bytes) -> bool:
        """Whether line ``n`` holds too many lists and objects to parse (then a finding)."""
        many = too_many_containers(data)
        if many is not None:
            self.fnd.add("too_many_containers", "warning", n, f"{many}; line not parsed")
        return many is not None

    def _rare(self, n: int, data: bytes, complete: bool) -> dict[str, Any] | None:
        """A line off the usual path: not valid JSON (repaired if it can be), not an object,
        or the last line without its newline."""
        obj, problem = loads_line(data)
        if obj is None:
            if not complete:
                self.fnd.add(
                    "truncated_last_line",
                    "warning",
                    n,
                    f"last line is incomplete (no newline, not valid JSON): the {self.noun} is "
                    "probably still being written; read up to the line before",
                )
            else:
                self.fnd.add("bad_json", "warning", n, f"{problem}; line skipped")
                if self.first_bad_line is None:
                    self.first_bad_line = n
            return None
        self.n_parsed += 1
        if problem is not None:
            self.fnd.add("encoding", "warning", n, problem)
            self.repaired[n] = problem
        if type(obj) is not dict:
            self._not_an_object(n)
            return None
        return obj

    def _not_an_object(self, n: int) -> None:
        self.fnd.add("not_an_object", "warning", n, "line is JSON but not an object; skipped")

    def _zst_findings(self, raw: _RawCapped) -> None:
        if raw.hit:
            self.fnd.add(
                "decompressed_size_cap",
                "error",
                None,
                f"stopped after max_decompressed_bytes={self.max_decompressed_bytes:,} bytes",
            )
        if raw.error is not None:
            self.fnd.add("zstd_error", "error", None, f"zstd stream is damaged ({raw.error})")
        elif raw.cut and not raw.hit:
            self.fnd.add(
                "zstd_cut",
                "warning",
                None,
                f"the zstd stream ends inside a frame (cut mid-write?): read the lines of the "
                f"{raw.frames} complete frame(s) before it",
            )


# --- values ---------------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


_END_OF_DAY = re.compile(r"([Tt ])24:00(?::00(?:[.,]0+)?)?")


def iso_ms(value: Any) -> int | None:
    """ISO-8601 timestamp -> ms since the epoch, else None.

    Claude Code and Codex write ``2026-03-01T10:00:00.123Z``; every other ISO-8601 form with a
    zone reads too: an offset (``+02:00``, ``+0200``, ``+02``), no fraction or any number of
    digits, a space or ``t`` for ``T``, a lower-case ``z``, ``24:00`` (the next midnight),
    surrounding blanks. A time without a zone is unknown (None): its offset is not known.

    Examples
    --------
    >>> iso_ms("1970-01-01T00:00:01.500Z")
    1500
    >>> iso_ms("1970-01-01 02:00:01+02:00"), iso_ms("1970-01-01t00:00:01z")
    (1000, 1000)
    >>> iso_ms("yesterday") is None, iso_ms("1970-01-01T00:00:01") is None
    (True, True)
    """
    if not isinstance(value, str):
        return None
    d: datetime | None
    try:
        d = datetime.fromisoformat(value)
    except ValueError:
        d = _iso_other(value)
    if d is None or d.tzinfo is None:
        return None
    return (d - _EPOCH) // _MS


def _iso_other(value: str) -> datetime | None:
    """The ISO-8601 forms ``datetime.fromisoformat`` refuses: blanks around, ``z``, ``24:00``."""
    s = value.strip()
    if s[-1:] == "z":
        s = s[:-1] + "Z"
    s, n_days = _END_OF_DAY.subn(r"\g<1>00:00", s, count=1)
    try:
        return datetime.fromisoformat(s) + timedelta(days=n_days)
    except ValueError:
        return None


def as_int(v: Any) -> int | None:
    """``v`` if it is an int (not a bool) the count rule takes (:func:`adfkit._core.rows.as_count`:
    from 0, fitting Int64), else None.

    Examples
    --------
    >>> as_int(5), as_int(-1), as_int(2**63), as_int(5.0), as_int(True)
    (5, None, None, None, None)
    """
    return v if type(v) is int and as_count(v) is not None else None


def bad_counts(usage: Any, keys: tuple[str, ...]) -> list[str]:
    """The keys of ``usage`` among ``keys`` holding something that is not a token count (by
    :func:`adfkit._core.rows.as_count`: negative, fractional, text, bool, too large); absent and
    null keys are not bad.

    Examples
    --------
    >>> bad_counts({"input_tokens": -5, "output_tokens": 7, "x": "no"}, ("input_tokens",
    ...            "output_tokens", "cache_read_input_tokens"))
    ['input_tokens']
    """
    if not isinstance(usage, dict):
        return []
    return [k for k in keys if usage.get(k) is not None and as_count(usage[k]) is None]


def bad_usage(fnd: Findings, line: int, keys: list[str]) -> None:
    """The finding for a usage holding values that are not token counts."""
    fnd.add(
        "bad_token_count",
        "warning",
        line,
        f"usage {', '.join(keys)}: not a token count (negative, fractional, text or too "
        "large); NA, never summed",
    )


#: Anthropic ``usage`` keys holding token counts (``cache_creation`` holds two more).
ANTHROPIC_COUNT_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_EPHEMERAL_KEYS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def anthropic_bad_counts(usage: Any) -> list[str]:
    """:func:`bad_counts` of an Anthropic ``usage``, ``cache_creation`` parts included."""
    bad = bad_counts(usage, ANTHROPIC_COUNT_KEYS)
    cc = usage.get("cache_creation") if isinstance(usage, dict) else None
    if cc is not None:
        bad += [f"cache_creation.{k}" for k in bad_counts(cc, _EPHEMERAL_KEYS)]
    return bad


#: Which ADF counts an Anthropic usage key is part of (``input`` includes the cache parts).
_ANTHROPIC_PARTS: dict[str, tuple[str, ...]] = {
    "input_tokens": ("input",),
    "output_tokens": ("output",),
    "cache_read_input_tokens": ("cache_read", "input"),
    "cache_creation_input_tokens": ("cache_write", "input"),
}


def unknown_counts(usage: Any, fmt: str) -> dict[str, Any]:
    """ADF token key -> the value, as the file wrote it, that makes that count unknown (not a
    count: :func:`bad_counts`); empty for a clean usage. A row's tokens carry these values, so
    the row rule (:func:`adfkit._core.rows.parse_tokens`) gives NA, flags the row and warns, as for
    an ADF row; a call's tokens leave them out. ``fmt``: ``anthropic`` or ``openai``.

    Examples
    --------
    >>> unknown_counts({"input_tokens": 3, "cache_read_input_tokens": -1}, "anthropic")
    {'cache_read': -1, 'input': -1}
    >>> unknown_counts({"input_tokens": "12", "output_tokens": 5}, "openai")
    {'input': '12'}
    """
    out: dict[str, Any] = {}
    if fmt == "openai":
        for k in bad_counts(usage, tuple(OPENAI_COUNT_KEYS)):
            out[OPENAI_COUNT_KEYS[k]] = usage[k]
        return out
    return _anthropic_unknown(usage, anthropic_bad_counts(usage))


def _anthropic_unknown(usage: Any, bad: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    parts: tuple[str, ...]
    for k in bad:
        if k.startswith("cache_creation."):
            raw, parts = usage["cache_creation"][k.split(".", 1)[1]], ("cache_write", "input")
        else:
            raw, parts = usage[k], _ANTHROPIC_PARTS[k]
        for part in parts:
            out.setdefault(part, raw)
    return out


def anthropic_tokens(usage: Any) -> dict[str, int]:
    """Anthropic ``usage`` -> ADF tokens (``input`` = input + cache read + cache write).

    ``cache_creation.ephemeral_5m_input_tokens + ephemeral_1h_input_tokens`` is used for the cache
    write when present (it is authoritative), else ``cache_creation_input_tokens``. With that
    split, ``cache_write_1h`` is the part written to the 1-hour cache (billed at another rate);
    without it, the TTL is not recorded and the key is absent. A split of zeros under a write
    that is not zero (Claude Code writes one when the response carried none) is no split. A
    count that is not a count (:func:`anthropic_bad_counts`) is unknown, and so is every sum
    holding it: never summed as a number.

    Examples
    --------
    >>> anthropic_tokens({"input_tokens": 3, "cache_read_input_tokens": 100,
    ...                   "cache_creation_input_tokens": 20, "output_tokens": 7})
    {'input': 123, 'output': 7, 'cache_read': 100, 'cache_write': 20}
    >>> anthropic_tokens({"input_tokens": -3, "cache_read_input_tokens": 100, "output_tokens": 7})
    {'output': 7, 'cache_read': 100}
    >>> anthropic_tokens({"input_tokens": 4, "cache_creation_input_tokens": 20, "output_tokens": 7,
    ...                   "cache_creation": {"ephemeral_5m_input_tokens": 0,
    ...                                      "ephemeral_1h_input_tokens": 0}})
    {'input': 24, 'output': 7, 'cache_write': 20}
    """
    if not isinstance(usage, dict):
        return {}
    return _anthropic_tokens(usage, anthropic_bad_counts(usage))


def anthropic_usage(usage: Any) -> tuple[dict[str, int], dict[str, Any]]:
    """``(anthropic_tokens(usage), unknown_counts(usage, "anthropic"))``, the counts checked
    once (a reader making both for every call).

    Examples
    --------
    >>> anthropic_usage({"input_tokens": 3, "cache_read_input_tokens": -1, "output_tokens": 7})
    ({'output': 7}, {'cache_read': -1, 'input': -1})
    """
    if not isinstance(usage, dict):
        return {}, {}
    clean = _clean_anthropic_tokens(usage)
    if clean is not None:
        return clean, {}
    bad = anthropic_bad_counts(usage)
    return _anthropic_tokens(usage, bad), _anthropic_unknown(usage, bad) if bad else {}


def _clean_anthropic_tokens(usage: dict[str, Any]) -> dict[str, int] | None:
    """:func:`_anthropic_tokens` of a usage whose counts are all absent, null or plain ints
    the count rule takes (the usual case, checked in one pass), else None (the full rule)."""
    get = usage.get
    inp, out = get("input_tokens"), get("output_tokens")
    cr, cw = get("cache_read_input_tokens"), get("cache_creation_input_tokens")
    cc = get("cache_creation")
    a = b = w1h = None
    if isinstance(cc, dict):
        a, b = cc.get("ephemeral_5m_input_tokens"), cc.get("ephemeral_1h_input_tokens")
    for v in (inp, out, cr, cw, a, b):
        if v is not None and (type(v) is not int or as_count(v) is None):
            return None
    if a is not None and b is not None and not _empty_split(cw, a, b):  # authoritative
        cw, w1h = a + b, b  # when both are there (one alone leaves the 1-hour part NA)
    return _token_dict(inp, out, cr, cw, w1h)


def _empty_split(total: int | None, a: int | None, b: int | None) -> bool:
    """A ``cache_creation`` split of zeros under a cache write that is not zero: Claude Code
    writes that when the response had no split (a gateway or proxy that drops it), so the
    split says nothing (the total stands, its lifetime unknown)."""
    return bool(total) and not a and not b


def _anthropic_tokens(usage: dict[str, Any], bad: list[str]) -> dict[str, int]:
    get = usage.get
    inp, out = as_count(get("input_tokens")), as_count(get("output_tokens"))
    cr, cw = as_count(get("cache_read_input_tokens")), as_count(get("cache_creation_input_tokens"))
    cw_bad = bool(bad) and any(k.startswith("cache_creation") for k in bad)
    cc = get("cache_creation")
    w1h = None
    if isinstance(cc, dict):
        a, b = (as_count(cc.get(k)) for k in _EPHEMERAL_KEYS)
        if a is not None and b is not None and not _empty_split(cw, a, b):
            cw, w1h = a + b, b  # authoritative when both are there; one alone (or a split of
            # zeros under a cache write) leaves the 1-hour part unknown (NA), never 0
    if cw_bad:
        cw = w1h = None
    input_bad = bool(bad) and (cw_bad or "input_tokens" in bad or "cache_read_input_tokens" in bad)
    return _token_dict(inp, out, cr, cw, w1h, with_input=not input_bad)


def _token_dict(
    inp: int | None,
    out: int | None,
    cr: int | None,
    cw: int | None,
    w1h: int | None,
    *,
    with_input: bool = True,
) -> dict[str, int]:
    """ADF token keys of an Anthropic usage's counts: ``input`` is the whole prompt (uncached
    plus cache read and write) where the uncached part is known and ``with_input`` (cache
    counts a layout did not write are 0: it had no cache); absent counts are left out."""
    res: dict[str, int] = {}
    if with_input and inp is not None:
        res["input"] = (inp or 0) + (cr or 0) + (cw or 0)
    if out is not None:
        res["output"] = out
    if cr is not None:
        res["cache_read"] = cr
    if cw is not None:
        res["cache_write"] = cw
    if w1h is not None:
        res["cache_write_1h"] = w1h
    return res


#: Codex/OpenAI usage keys -> ADF token keys.
OPENAI_COUNT_KEYS = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cached_input_tokens": "cache_read",
    "reasoning_output_tokens": "reasoning",
}


def mapped_tokens(usage: Any, keys: dict[str, str]) -> dict[str, int]:
    """The counts of ``usage`` under ``keys`` (the format's key -> the ADF key), for a usage
    whose input already includes the cached part; a value that is not a count is left out
    (unknown).

    Examples
    --------
    >>> mapped_tokens({"prompt": 12, "completion": "x"}, {"prompt": "input", "completion": "n"})
    {'input': 12}
    """
    if not isinstance(usage, dict):
        return {}
    res: dict[str, int] = {}
    for src, dst in keys.items():
        v = as_count(usage.get(src))
        if v is not None:
            res[dst] = v
    return res


def openai_tokens(usage: Any) -> dict[str, int]:
    """Codex/OpenAI token usage -> ADF tokens (``input`` already includes the cached part;
    ``output`` already includes reasoning). A count that is not a count is left out (unknown).

    Examples
    --------
    >>> openai_tokens({"input_tokens": 120, "cached_input_tokens": 100, "output_tokens": 9,
    ...                "reasoning_output_tokens": 4, "total_tokens": 129})
    {'input': 120, 'output': 9, 'cache_read': 100, 'reasoning': 4}
    """
    return mapped_tokens(usage, OPENAI_COUNT_KEYS)


def tool_input(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as the ``input`` object of a ``tool_use`` block: an object as it
    is, JSON text parsed (not valid JSON: ``{"_error", "_raw_arguments"}``), none at all ``{}``,
    any other value kept under ``_raw_arguments``.

    Examples
    --------
    >>> tool_input('{"cmd": "ls"}'), tool_input(None), tool_input("[1]")
    ({'cmd': 'ls'}, {}, {'_raw_arguments': [1]})
    >>> tool_input("{oops")
    {'_error': 'arguments are not valid JSON', '_raw_arguments': '{oops'}
    """
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            v = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"_error": "arguments are not valid JSON", "_raw_arguments": raw}
        return v if isinstance(v, dict) else {"_raw_arguments": v}
    return {} if raw is None else {"_raw_arguments": raw}


def result_text(content: Any) -> str:
    """A tool result's ``content`` (string or list of parts) as one string (ADF shape).

    Text parts are joined by newlines; other parts become ``[<type>]`` placeholders, so base64
    images never travel in the text.

    Examples
    --------
    >>> result_text([{"type": "text", "text": "a"}, {"type": "image", "source": {}}])
    'a\\n[image]'
    """
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content) if isinstance(content, int | float | bool) else ""
    parts: list[str] = []
    for p in content:
        if isinstance(p, str):
            parts.append(p)
        elif isinstance(p, dict):
            t = p.get("type")
            txt = p.get("text")
            if isinstance(txt, str) and t in ("text", "input_text", "output_text", None):
                parts.append(txt)
            else:
                parts.append(f"[{t if isinstance(t, str) else 'part'}]")
    return "\n".join(parts)


def text_of(content: list[dict[str, Any]]) -> str:
    """The row's text blocks joined by newlines (used to match copies of a message)."""
    return "\n".join(
        b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def sessions_frame(recs: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    """A session listing (one record per session file, with ``path`` and ``modified``) as a
    typed frame of ``columns``, newest first (then by path)."""
    recs = sorted(recs, key=lambda r: r["path"])
    from adfkit import schema

    recs.sort(key=lambda r: r["modified"], reverse=True)  # stable: equal times stay by path
    return schema.frame(recs, columns)


def file_size(path: Path) -> int:
    return os.stat(path).st_size


__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "CallDraft",
    "CallInputs",
    "EventDraft",
    "Finding",
    "Findings",
    "JsonLines",
    "ModelCall",
    "ParsedTranscript",
    "RowDraft",
    "TokenCount",
    "TranscriptEvent",
    "TranscriptRow",
    "TypeCounts",
    "check_head",
    "event_tokens",
    "final_calls",
    "gc_paused",
    "head_objects",
    "number_rows",
    "own_call",
]
