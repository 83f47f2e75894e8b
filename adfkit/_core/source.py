"""The reader boundary: what every kind of agent record provides to the analyses.

An :class:`AgentSource` is one agent's stored memory, read-only: its conversation rows (the live
loop and the whole history, with the columns of :data:`adfkit.schema.LOOP`), the events that
emptied the loop (compactions, clears), the archives those events wrote, its settings and its
side tables. Analyses (replay, compactions, usage, observe, integrity, ...) are functions that
take an ``AgentSource`` and read nothing else, so a new kind of record (an ADF file, another
agent's transcript) is one new subclass and no change to any analysis.

Derived results are cached per source in its :class:`Memo`, under typed :class:`Key` objects
that the analysis modules own.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypedDict, TypeVar

import pandas as pd

from adfkit import schema
from adfkit._base.errors import AdfError
from adfkit._core.history import gap_ranges, gaps_frame

T = TypeVar("T")


class Key(Generic[T]):
    """The typed name of one derived result cached in a :class:`Memo`.

    Examples
    --------
    >>> memo = Memo()
    >>> SQUARES: Key[list[int]] = Key("squares")
    >>> memo.get(SQUARES, lambda: [i * i for i in range(4)])
    [0, 1, 4, 9]
    >>> memo.get(SQUARES, lambda: [])  # cached: the builder is not called again
    [0, 1, 4, 9]
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Key({self.name!r})"


class Memo:
    """Results derived from one source, each computed once: ``get(key, build, arg)``."""

    def __init__(self) -> None:
        self._values: dict[tuple[Key[Any], Hashable], Any] = {}

    def get(self, key: Key[T], build: Callable[[], T], arg: Hashable = None) -> T:
        """The value cached under ``(key, arg)``, built by ``build()`` on first use."""
        k = (key, arg)
        if k in self._values:
            value: T = self._values[k]
            return value
        value = build()
        self._values[k] = value
        return value

    def clear(self) -> None:
        """Forget every cached value."""
        self._values.clear()


_GAPS: Key[pd.DataFrame] = Key("source.history_gaps")
_GAP_RANGES: Key[tuple[list[int], list[int]]] = Key("source.gap_ranges")


@dataclass(frozen=True)
class Finding:
    """One problem a source found in its own storage (one row of ``integrity()``)."""

    check: str
    severity: str  # info, warning or error
    table: str
    rows: tuple[int, ...]
    detail: str


@dataclass(frozen=True)
class StorageReport:
    """What a source found when it checked its storage: findings, and the seq range each
    unreadable archive should have held (audit id -> (first, last))."""

    findings: tuple[Finding, ...] = ()
    unreadable: dict[int, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class WindowChange:
    """What one event of :meth:`AgentSource.events` did to the context window, as the record
    itself states it (a transcript names the rows a compaction kept; an ADF file does not).

    ``swept``: seqs that left the window; ``kept``: seqs kept verbatim across the event (a
    preserved segment, a replacement history); ``cleared``: seqs left in the window with their
    content replaced by a short stub (``stub_chars`` characters each: a microcompaction);
    ``trigger``: ``auto`` or ``manual`` when recorded; ``instructions``: the user's focus text
    of a manual compaction; ``tokens_before``, ``tokens_after``, ``duration_ms``: the sizes
    and time the record itself states (Claude Code ``compactMetadata.preTokens``,
    ``postTokens``, ``durationMs``), None where it states none; ``trigger_tokens``: the count
    the agent itself compared with its threshold, where the record says that its stated size
    is that count (Copilot CLI ``preCompactionTokens``), else None; ``summary_first``: the
    agent sends the summary ahead of the rows it kept (Copilot CLI, pi: seen in their requests),
    where the record writes it after them; ``summary_encrypted``: the
    summary exists but the record holds it encrypted (a Codex remote compaction), so its size
    and what it recalls are unknown; ``swept_held`` False: the record holds none of the rows the
    event swept (a Letta agent file exported with only the messages in context), so what it
    swept is unknown (NA), not nothing.
    """

    swept: tuple[int, ...] = ()
    kept: tuple[int, ...] = ()
    cleared: tuple[int, ...] = ()
    stub_chars: int = 0
    trigger: str | None = None
    instructions: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    duration_ms: int | None = None
    trigger_tokens: int | None = None
    summary_first: bool = False
    summary_encrypted: bool = False
    swept_held: bool = True


#: Where a setting's value comes from: the record states the value in force (``recorded``),
#: the agent's configuration sets it, its default included (``configured``), or a rule of the
#: tool that wrote the record gives it, the record stating nothing (``assumed``).
Provenance = Literal["recorded", "configured", "assumed"]

#: The audit switches of :attr:`Settings.audit`, in this order.
AUDIT_SWITCHES = ("loop", "inbox", "outbox", "files")


@dataclass(frozen=True)
class Settings:
    """The settings an agent ran with, as its record gives them; None (NA) where it does not say.

    ``compact_threshold``: tokens at which the agent compacts automatically (None: unknown, or
    a configured number out of range, so it never does); ``threshold_source`` its
    :data:`Provenance` and ``threshold_rule`` the rule in words (where the value comes from);
    ``context_window`` (tokens) and ``window_source``; ``audit``: whether each of
    :data:`AUDIT_SWITCHES` keeps what a compaction or a clear removes (True, False, or None
    where the record has no such part); ``model`` and ``provider``: the model the record names
    for the agent.

    This is the record now; :func:`adfkit._analysis.settings.threshold_schedule` gives the threshold
    over the agent's life (changes the agent made itself).

    Examples
    --------
    >>> Settings().compact_threshold is None and Settings().audit == {}
    True
    """

    compact_threshold: int | None = None
    threshold_source: Provenance | None = None
    threshold_rule: str | None = None
    context_window: int | None = None
    window_source: Provenance | None = None
    audit: Mapping[str, bool | None] = field(default_factory=dict)
    model: str | None = None
    provider: str | None = None


class Info(TypedDict):
    """What :meth:`AgentSource.info` returns: the same keys for every kind of record, None (NA)
    where the record has no such thing or the value was not computed (``sizes=False``).

    The meaning of each key is documented on :meth:`adfkit.AgentFile.info`.
    """

    path: str
    name: str
    format: str
    handle: str | None
    session_id: str | None
    schema_version: int | None
    adf_version: str | None
    tool_version: str | None
    file_bytes: int | None
    open_mode: str | None
    clean_close: str | None
    sidecars: list[str]
    turn_checkpoint: str | None
    live: bool | None
    model: str | None
    provider: str | None
    model_source: str | None
    compact_threshold: int | None
    threshold_source: str | None
    threshold_rule: str | None
    context_window: int | None
    window_source: str | None
    audit_settings: dict[str, bool | None]
    loop_rows: int | None
    loop_seq_range: tuple[int | None, int | None]
    history_rows: int | None
    highest_seq: int | None
    first_live_at: str | None
    last_live_at: str | None
    audit_rows: dict[str, int]
    first_archived_at: str | None
    audited_loop_entries: int | None
    audit_json_chars: int | None
    audit_compressed_bytes: int | None
    inbox_rows: int | None
    outbox_rows: int | None
    files: int | None
    log_rows: int | None
    tasks: int | None
    timers: int | None
    subagents: int | None
    branches: int | None
    findings: int | None
    compactions: int | None
    microcompactions: int | None
    clears: int | None
    rewinds: int | None


#: The keys of :class:`Info`, in order.
INFO_KEYS: tuple[str, ...] = tuple(Info.__annotations__)


def info_record(src: AgentSource, settings: Settings, **values: Any) -> Info:
    """An :class:`Info` of ``src``: identity and ``settings`` filled in, then ``values``; every
    key not given is None (NA), or empty for ``sidecars``, ``audit_rows`` and a range.

    Raises
    ------
    TypeError
        a key :class:`Info` does not have (the key set is the same for every record).
    """
    unknown = sorted(set(values) - set(INFO_KEYS))
    if unknown:
        raise TypeError(
            f"info() has no key(s) {unknown}; the keys are adfkit._core.source.INFO_KEYS"
        )
    out: dict[str, Any] = dict.fromkeys(INFO_KEYS)
    out.update(
        path=src.path,
        name=src.name,
        format=src.format,
        sidecars=[],
        audit_rows={},
        loop_seq_range=(None, None),
        model=settings.model,
        provider=settings.provider,
        compact_threshold=settings.compact_threshold,
        threshold_source=settings.threshold_source,
        threshold_rule=settings.threshold_rule,
        context_window=settings.context_window,
        window_source=settings.window_source,
        # a switch the record does not state is left out (a table shows no None)
        audit_settings={k: v for k, v in settings.audit.items() if v is not None},
    )
    out.update(values)
    info: Info = out  # type: ignore[assignment]
    return info


class AgentSource(ABC):
    """One agent's stored memory, read-only. Subclasses read one kind of record.

    Required: :meth:`meta`, :meth:`loop`, :meth:`history`, :meth:`events`, :meth:`info`.
    Everything else has a default that fits a record without that part (an empty frame with
    the right columns, no settings, no archives), so analyses need no special cases.
    """

    #: Short name of the record kind (``"adf"``, ...).
    format: str = ""
    #: Whether each row is stamped when it is appended, so that a row stamped earlier than the
    #: seq before it is a problem (ADF, Codex). Claude Code stamps a record with the time of
    #: its event and writes some after later ones (a command's caveat and input records after
    #: its output, 1 ms inversions in the ``/exit`` pair): there an inversion is the file's
    #: normal shape, an ``info`` finding of :func:`adfkit.integrity`.
    stamped_on_append: bool = True
    #: Whether the reader may decode stored data on a background thread (a fleet whose every
    #: core runs a loader turns it off).
    prefetch: bool = False
    #: Tool names the provider runs inside the response, so no tool_result ever follows a call
    #: (Codex ``web_search_call``: ``web_search``); none by default.
    provider_tools: frozenset[str] = frozenset()
    #: Whether the context rows other than the system part (attachments, a command's caveat)
    #: are sent inside the conversation's messages (Claude Code renders them as system
    #: reminders in the user's message), so a call's window holds them; else only delivered
    #: ``loop_inject`` text is (ADF_FORMAT.md §7).
    context_in_messages: bool = False
    #: How automatic compaction fires: True for a runtime that first sends a memory-flush
    #: nudge and allows one grace call (the ADF runtime, ADF_FORMAT.md §5.1); False for a tool
    #: that compacts before the call at which its count of the context (the last call's input
    #: and output, and what was written since) reaches the threshold (Claude Code and the
    #: other transcripts' tools). What :class:`adfkit.ThresholdPolicy` simulates by default.
    flush_nudge: bool = False
    #: What a tool without the nudge compares with its threshold before a call: ``context``
    #: (the last call's input and output and what was written since, as above) or ``prompt``
    #: (the last call's prompt tokens alone, and at the first call of a process the estimate
    #: of the history it resumes: Gemini CLI's ``getLastPromptTokenCount``). From the
    #: format's :attr:`adfkit._core.registry.FormatSpec.compaction_count`.
    compaction_count: str = "context"
    #: Whether the record states each model call's usage (tokens); False for a format that
    #: writes none (a Letta agent file): each call is then still a row of ``usage()``, its
    #: tokens and cost NA, never left out as if it had not been made.
    usage_recorded: bool = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.memo = Memo()

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:  # noqa: B027 - an optional hook: most sources hold no handle
        """Release the underlying file (no-op by default)."""

    # -- identity and settings -----------------------------------------------------------
    @abstractmethod
    def meta(self) -> dict[str, str]:
        """Metadata as text key -> value."""

    def config(self) -> dict[str, Any]:
        """The agent's configuration as the record stores it (empty when it has none). Analyses
        read :meth:`settings`, which every kind of record fills the same way."""
        return {}

    def settings(self) -> Settings:
        """The settings the agent ran with (:class:`Settings`; all NA by default)."""
        return Settings()

    @property
    def name(self) -> str:
        """A display name: the agent's own name if recorded, else the file's stem."""
        return os.path.splitext(os.path.basename(self.path))[0]

    @abstractmethod
    def info(self, *, sizes: bool = True) -> Info:
        """A cheap summary of the record (counts, settings, liveness): the keys of
        :class:`Info`, built with :func:`info_record`."""

    # -- the conversation ----------------------------------------------------------------
    @abstractmethod
    def loop(self) -> pd.DataFrame:
        """The rows in the context window now (columns of :data:`schema.LOOP`)."""

    @abstractmethod
    def history(self, *, errors: str = "warn") -> pd.DataFrame:
        """Every row of the agent's life, one per seq (columns of :data:`schema.HISTORY`)."""

    def history_view(self) -> pd.DataFrame:
        """The history frame for reading only: the frame the source holds where it holds one
        (no copy: ~40 us for a transcript's 28 columns, paid by every analysis of every Inspect
        sample), else :meth:`history`. Never change it: an analysis that adds or sets a
        column takes :meth:`history`."""
        return self.history()

    @abstractmethod
    def events(self) -> pd.DataFrame:
        """Events that emptied the loop (columns of :data:`schema.EVENTS`)."""

    def process_starts(self) -> list[int]:
        """Seqs of the model calls that are the first of a process of the agent (its start, a
        resume), where the record shows them; empty (the default) when it does not."""
        return []

    def window_changes(self) -> list[WindowChange] | None:
        """One :class:`WindowChange` per row of :meth:`events`, when the record states what
        each event swept and kept; None (the default) when the analyses must derive it from the
        history (an ADF compaction keeps the rows placed after its summary, ADF_FORMAT.md §5)."""
        return None

    def cache_writes_1h(self) -> dict[int, int]:
        """Tokens each call wrote to the 1-hour prompt cache, by the seq of the row holding its
        usage, for the calls whose record states the split (Claude Code's
        ``usage.cache_creation``); empty (the default) when the record has no such split, and
        then every cache write is a 5-minute one, the providers' default."""
        return {}

    def highest_seq(self) -> int | None:
        """The highest seq ever assigned, if the record says (rows lost at the end count)."""
        return None

    def branches(self) -> pd.DataFrame:
        """Rows of abandoned branches (a rewind, a rollback): the columns of
        :data:`schema.BRANCHES`. None by default (an ADF loop has no branches)."""
        return schema.frame([], schema.BRANCHES)

    def calls(self) -> pd.DataFrame:
        """Every model call the record states apart from its rows, usage counted once (the
        columns of :data:`schema.CALLS`). None by default: an ADF file's calls are its
        assistant rows."""
        return schema.frame([], schema.CALLS)

    def history_gaps(self) -> pd.DataFrame:
        """Seq ranges lost without a trace (columns of :data:`schema.GAPS`), found once per
        source (the timeline, integrity and mind_history read them)."""
        return self.memo.get(_GAPS, lambda: gaps_frame(*self.gap_ranges())).copy(deep=False)

    def gap_ranges(self) -> tuple[list[int], list[int]]:
        """:meth:`history_gaps` as two ascending lists, their first seqs and their last
        seqs (found once per source; what a walk of the seqs reads, without a frame)."""

        def build() -> tuple[list[int], list[int]]:
            seqs = self.history_view()["seq"].to_numpy(dtype="int64")
            high = int(seqs.max()) if len(seqs) else 0
            return gap_ranges(seqs, max(high, self.highest_seq() or 0))

        return self.memo.get(_GAP_RANGES, build)

    # -- archives ------------------------------------------------------------------------
    def audit(self) -> pd.DataFrame:
        """Archive rows, metadata only (columns of :data:`schema.AUDIT`)."""
        return schema.frame([], schema.AUDIT)

    def archive(self, audit_id: int) -> pd.DataFrame:
        """The loop rows one archive holds (columns of :data:`schema.LOOP`)."""
        raise AdfError(f"no archive with id={audit_id}", path=self.path)

    def decode_audit(self, audit_id: int) -> pd.DataFrame | dict[str, Any] | list[Any]:
        """One archive decoded: loop rows as a frame, other sources as parsed JSON."""
        return self.archive(audit_id)

    def storage_report(self) -> StorageReport:
        """Problems in the storage itself (undecodable archives, wrong counters...)."""
        return StorageReport()

    def subagents(self) -> list[AgentSource]:
        """The agents this one started, each a source of its own (none by default)."""
        return []

    # -- side tables ---------------------------------------------------------------------
    def inbox(self) -> pd.DataFrame:
        """Received messages (columns of :data:`schema.INBOX`)."""
        return schema.frame([], schema.INBOX)

    def outbox(self) -> pd.DataFrame:
        """Sent messages (columns of :data:`schema.OUTBOX`)."""
        return schema.frame([], schema.OUTBOX)

    def files(self) -> pd.DataFrame:
        """Stored files, metadata only (columns of :data:`schema.FILES`)."""
        return schema.frame([], schema.FILES)

    def read_file(self, path: str) -> bytes:
        """The content of one stored file."""
        raise AdfError(f"no stored file at path {path!r}", path=self.path)

    def logs(self) -> pd.DataFrame:
        """Runtime log entries (columns of :data:`schema.LOGS`)."""
        return schema.frame([], schema.LOGS)

    def tasks(self) -> pd.DataFrame:
        """Tool tasks (columns of :data:`schema.TASKS`)."""
        return schema.frame([], schema.TASKS)

    def timers(self) -> pd.DataFrame:
        """Timers (columns of :data:`schema.TIMERS`)."""
        return schema.frame([], schema.TIMERS)
