"""The public facade: ``open_adf`` and ``AgentFile``, one read-only handle per agent.

``AgentFile`` holds an :class:`adfkit._core.source.AgentSource` (the reader core) and offers every
table and analysis as a method; each method is one call into the module that computes it. Only
this layer (and ``plots``, ``widgets``, the CLI) knows all the analyses; they never import it.

The facade owns opening: the public functions that take "an agent" (:func:`observe`,
:func:`simulate`, :func:`simulate_sweep`) accept a path, an ``AgentFile`` or a source, open a
path for the duration of the call (:func:`opened`) and hand the analysis an ``AgentSource``;
no analysis opens a file.
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeAlias, TypeVar, overload

import pandas as pd

from adfkit._analysis import compaction_audit as _audit
from adfkit._analysis import compactions as _compactions
from adfkit._analysis import context as _context
from adfkit._analysis import forgetting as _forgetting
from adfkit._analysis import integrity as _integrity
from adfkit._analysis import lab as _lab
from adfkit._analysis import mind as _mind
from adfkit._analysis import observe as _observe
from adfkit._analysis import replay as _replay
from adfkit._analysis import settings as _settings
from adfkit._analysis import simulate as _simulate
from adfkit._analysis import tables as _tables
from adfkit._analysis import usage as _usage
from adfkit._analysis.mind import Mind, read_mind
from adfkit._analysis.observe import Observation, TaxonomyArg
from adfkit._analysis.simulate import Policy, SimulationResult
from adfkit._analysis.usage import PricesArg
from adfkit._base.allocator import system_allocator
from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfWarning
from adfkit._core import registry
from adfkit._core.blobs import DEFAULT_MAX_BLOB_BYTES
from adfkit._core.opening import member_names, open_any, open_source
from adfkit._core.registry import MEMBER, split_member
from adfkit._core.source import AgentSource, Info, Settings

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def _documented_by(fn: Callable[..., Any]) -> Callable[[F], F]:
    """Give a facade method the docstring of the analysis function it calls."""

    def deco(method: F) -> F:
        method.__doc__ = fn.__doc__
        return method

    return deco


def _at_callers_line(fn: F, *, pause: bool = True) -> F:
    """Issue ``fn``'s :class:`AdfWarning` at the line that called it, so a notebook or a script
    shows the user's own call (``agent = adfkit.open(...)``), not a line inside adfkit. Other
    warnings keep their place (their module, for filters such as ``error::...:adfkit``).

    With ``pause`` (every facade call but those that run the caller's own code), the cyclic
    garbage collector is paused while ``fn`` runs (:class:`gc_paused`, ``settle=True``): a
    table's build makes many objects and no cycle worth finding, and a full collection (a
    fifth of a second on big-runner x16, its cost growing with everything already read) would
    otherwise land in whichever table's allocations happened to trigger it; and pyarrow
    allocates with the C library's ``malloc`` (:class:`system_allocator`: mimalloc faulted
    fresh pages in for every large column)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        got: list[warnings.WarningMessage] | None = None
        try:
            with warnings.catch_warnings(record=True) as got:
                warnings.simplefilter("always")
                if not pause:
                    return fn(*args, **kwargs)
                with gc_paused(settle=True), system_allocator():
                    return fn(*args, **kwargs)
        finally:  # the caller's filters are back: issue each warning under them
            for w in got or ():
                if issubclass(w.category, AdfWarning):
                    warnings.warn(w.message, w.category, stacklevel=2)
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    return call  # type: ignore[return-value]


@_at_callers_line
def open_adf(
    path: str | os.PathLike[str],
    *,
    max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
    timeout: float = 5.0,
) -> AgentFile:
    """Open an agent file read-only.

    Parameters
    ----------
    path : path to an ``.adf`` file. It is never written, and nothing is created beside it.
    max_blob_bytes : cap on one decompressed audit blob (default 256 MiB); a larger blob raises
        :class:`adfkit.BlobTooLargeError` instead of exhausting memory.
    timeout : seconds to wait for a writer's lock before :class:`adfkit.FileBusyError`.

    Raises
    ------
    AdfError
        (or a subclass) naming the file: missing, not SQLite, not an agent file, damaged.

    Examples
    --------
    >>> import adfkit
    >>> with adfkit.open_adf("sample_agents/long-runner.adf") as agent:
    ...     agent.info()["schema_version"]
    28
    """
    return AgentFile(
        open_source(path, max_blob_bytes=max_blob_bytes, timeout=timeout, format="adf")
    )


@_at_callers_line
def open(  # noqa: A001 - adfkit.open, as the issue names it; the builtin is untouched elsewhere
    path: str | os.PathLike[str],
    *,
    max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
    timeout: float = 5.0,
    format: str | None = None,  # noqa: A002 - the record kind, as AgentFile.format
) -> AgentFile | AgentCollection:
    """Open any agent record adfkit reads, read-only: an ADF agent file (``.adf``), a Claude
    Code session (``<session>.jsonl``, with its subagents), a Codex CLI rollout
    (``rollout-*.jsonl`` or ``.jsonl.zst``), or any other format in :func:`adfkit.formats`.
    The format is recognised from the input's first bytes and name (exactly one format must
    claim it); every table and analysis works the same on all of them. An input that holds
    several agents (a log of many samples) gives an :class:`AgentCollection` of them.

    Parameters
    ----------
    path : the file or folder. It is never written, and nothing is created beside it.
    max_blob_bytes, timeout : as for :func:`open_adf` (ADF files only).
    format : a name from :func:`adfkit.formats` to skip recognition.

    Raises
    ------
    AdfError
        (or a subclass) naming the file: missing, damaged, or of no format adfkit reads
        (:class:`adfkit.UnknownFormatError`, saying what was looked for).

    Examples
    --------
    >>> import adfkit
    >>> adfkit.open("sample_agents/long-runner.adf").format
    'adf'
    >>> sessions = adfkit.list_claude_code_sessions("sample_agents/claude-code/projects")
    >>> adfkit.open(sessions.path[0]).format
    'claude_code'
    """
    got = open_any(path, max_blob_bytes=max_blob_bytes, timeout=timeout, format=format)
    if isinstance(got, AgentSource):
        agent = AgentFile(got)
        if split_member(path)[1] is not None:  # one agent of several: its path names it
            agent.path = os.fspath(path)
        return agent
    return AgentCollection(os.fspath(path), got)


def open_one(path: str | os.PathLike[str], **options: Any) -> AgentFile:
    """:func:`open` for a caller that needs one agent (a plot, a report): an input holding
    several is an :class:`AdfError` naming them (``log.eval#<name>`` opens one)."""
    agent = AgentFile(open_source(path, **options))
    if split_member(path)[1] is not None:  # one agent of several: its path names it
        agent.path = os.fspath(path)
    return agent


@_at_callers_line
def open_claude_code(path: str | os.PathLike[str]) -> AgentFile:
    """Open a Claude Code session transcript (``~/.claude/projects/<project>/<session>.jsonl``,
    or a subagent's ``agent-<id>.jsonl``) read-only.

    The file is read once, line by line; a half-written last line (a session still running) is
    read up to the line before, with an :class:`adfkit.AdfWarning`. The session's subagents
    are :meth:`AgentFile.subagents`. History is the active branch (after a rewind, the branch
    the last record continues); abandoned branches are :meth:`AgentFile.branches`.

    Raises
    ------
    NotTranscriptError
        the file is not a Claude Code transcript (empty, binary, an ``.adf``, a Codex rollout).

    Examples
    --------
    >>> import adfkit
    >>> sessions = adfkit.list_claude_code_sessions("sample_agents/claude-code/projects")
    >>> path = sessions.set_index("session_id").path["24422850-abc3-4525-9567-e2fd4bd0adcb"]
    >>> c = adfkit.open_claude_code(path).compactions()
    >>> c[["event", "kind", "n_swept", "n_tail"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['compaction', 'auto', 119, 0], ['microcompaction', 'auto', 1, 0],
     ['compaction', 'manual', 64, 4], ['microcompaction', 'auto', 2, 0],
     ['compaction', 'auto', 33, 2]]
    """
    return AgentFile(open_source(path, format="claude_code"))


@_at_callers_line
def open_codex(path: str | os.PathLike[str]) -> AgentFile:
    """Open a Codex CLI rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, or
    ``.jsonl.zst``) read-only.

    A half-written last line is read up to the line before, with an
    :class:`adfkit.AdfWarning`; a ``.zst`` file is decompressed as a stream, capped.

    Raises
    ------
    NotTranscriptError
        the file is not a Codex rollout.

    Examples
    --------
    >>> import adfkit
    >>> sessions = adfkit.list_codex_sessions("sample_agents/codex")
    >>> path = sessions.set_index("session_id").path["51ea40b0-7088-4482-8231-74d06cde3e3a"]
    >>> agent = adfkit.open_codex(path)
    >>> agent.compactions()["kind"].tolist(), agent.compact_threshold()
    (['auto', 'manual', 'auto'], 244800)
    """
    return AgentFile(open_source(path, format="codex"))


#: Facade methods that run the caller's own code (compactors, a judge that may call a model
#: for minutes): the collector stays as the caller has it.
_RUNS_CALLERS_CODE = frozenset({"compaction_lab"})


def _warnings_at_callers_line(cls: type[T]) -> type[T]:
    """Every public method of ``cls`` issues its warnings at its caller's line, and runs with
    the collector paused (:func:`_at_callers_line`) unless it runs the caller's code."""
    for name, value in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(value):
            setattr(cls, name, _at_callers_line(value, pause=name not in _RUNS_CALLERS_CODE))
    return cls


@_warnings_at_callers_line
class AgentFile:
    """A read-only view of one agent. Tables and analyses are methods returning DataFrames.

    Use :func:`open_adf` to make one; close it (or use ``with``) to release the file.
    Results of expensive methods (``history()``, decoded blobs, the replay) are cached on the
    handle's source.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | AgentSource,
        *,
        max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
        timeout: float = 5.0,
    ) -> None:
        if isinstance(path, AgentSource):
            self.source = path
        else:
            self.source = open_source(path, max_blob_bytes=max_blob_bytes, timeout=timeout)
        self.path = self.source.path

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Close the file (and remove a private copy, if one was needed)."""
        self.source.close()

    def __enter__(self) -> AgentFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        extra = "".join(
            f" {k}={getattr(self.source, a)}"
            for k, a in (("schema", "schema_version"), ("mode", "mode"))
            if hasattr(self.source, a)
        )
        return f"<AgentFile {self.path!r} format={self.source.format}{extra}>"

    @property
    def name(self) -> str:
        """The agent's name from its metadata or config, else the file name."""
        return self.source.name

    @property
    def format(self) -> str:
        """The kind of record: ``adf``, ..."""
        return self.source.format

    @property
    def format_label(self) -> str:
        """The format's human name, as tables and the CLI show it.

        Examples
        --------
        >>> import adfkit
        >>> adfkit.open("sample_agents/long-runner.adf").format_label
        'ADF agent file'
        """
        return registry.label(self.source.format)

    @property
    def schema_version(self) -> int | None:
        """The ADF schema version of the file (None for other kinds of record)."""
        v = getattr(self.source, "schema_version", None)
        return v if isinstance(v, int) else None

    @property
    def max_blob_bytes(self) -> int:
        """Cap on one decompressed audit blob."""
        v = getattr(self.source, "max_blob_bytes", DEFAULT_MAX_BLOB_BYTES)
        return int(v)

    def meta(self) -> dict[str, str]:
        """``adf_meta`` as a dict of key -> value (text).

        Examples
        --------
        >>> import adfkit
        >>> adfkit.open_adf("sample_agents/long-runner.adf").meta()["adf_version"]
        '0.2'
        """
        return self.source.meta()

    def config(self) -> dict[str, Any]:
        """The agent's configuration (``adf_config.config_json``) as a dict.

        Invalid JSON gives an empty dict and an :class:`adfkit.AdfWarning`.

        Examples
        --------
        >>> import adfkit
        >>> adfkit.open_adf("sample_agents/long-runner.adf").config()["context"]["audit"]["loop"]
        True
        """
        return self.source.config()

    def settings(self) -> Settings:
        """The settings the agent ran with, the same record for every kind of agent; None (NA)
        where the record does not say.

        Fields: ``compact_threshold`` (tokens; None when unknown, or configured out of range),
        ``threshold_source`` (``recorded``: the record states it, or the tokens in context it
        records before each automatic compaction show it (the fewest of them: Claude Code's
        ``preTokens``, Copilot CLI's ``preCompactionTokens``); ``configured``: the agent's
        configuration sets it, the runtime's default included; ``assumed``: the rule of the
        tool that wrote the record, which records none), ``threshold_rule`` (where it comes
        from, in words; the one rule: :mod:`adfkit._core.thresholds`), ``context_window``
        (tokens; a larger window than the model's when the record shows more tokens in
        context) and ``window_source``, ``audit`` (``loop``,
        ``inbox``, ``outbox``, ``files``: True, False, or None where the record has no such
        part), ``model``, ``provider``.

        Examples
        --------
        >>> import adfkit
        >>> s = adfkit.open_adf("sample_agents/long-runner.adf").settings()
        >>> s.threshold_source, s.audit["loop"], s.context_window
        ('configured', True, None)
        """
        return self.source.settings()

    def compact_threshold(self) -> int | None:
        """The compaction threshold in force now: :meth:`settings`' ``compact_threshold`` (for
        an ADF file ``context.compact_threshold``, else the deprecated
        ``model.compact_threshold``, else 100000); None when the config sets a number out of
        range (1e300, 2**64-1, 0 or below: see ``threshold_schedule``)."""
        return self.source.settings().compact_threshold

    def audit_settings(self) -> dict[str, bool | None]:
        """Effective audit switches (:meth:`settings`' ``audit``): for an ADF file
        ``context.audit`` if present, else ``audit``, else all off; None for a part the record
        does not have (a transcript's inbox, outbox and files)."""
        return dict(self.source.settings().audit)

    def loop(self) -> pd.DataFrame:
        """Live loop entries. One row per entry, in position order (``COALESCE(ord, seq), seq``).

        Columns (dtype):

        - ``seq`` (Int64), ``ord`` (Int64, set only on summaries with a preserved tail),
          ``position`` (Int64, 0-based display position)
        - ``role`` (category: user/assistant), ``kind`` (category: message, assistant,
          tool_result, context, compaction_summary, trigger, notice, unknown), ``subkind``
          (string: the context category, trigger kind, notice kind, or ``audited``/``unaudited``
          for summaries), ``context_category`` (string)
        - ``model`` (string), ``created_at`` (datetime64[ms, UTC]; NaT where the file holds 0)
        - ``tokens_input``, ``tokens_output``, ``tokens_cache_read``, ``tokens_cache_write``,
          ``tokens_reasoning`` (Int64, provider-reported; ``input`` already includes the cache
          parts), ``tokens_total`` (Int64: input + output, or a legacy bare integer)
        - ``n_blocks`` (Int64), ``block_types`` and ``tool_names`` (comma-joined strings),
          ``text`` (the text blocks joined by newlines)
        - ``chars``, ``media_chars`` (Int64: the runtime estimator's character counts, JS
          lengths, without the 16-character message overhead), ``est_tokens`` (Int64:
          ``ceil((chars + 16) / 3.5) + ceil(media_chars / 100)`` for this row alone)
        - ``content`` (string: the raw ``content_json``), ``origin`` (category: live/audit),
          ``audit_id`` (Int64, NA for live rows), ``malformed`` (bool: unreadable
          ``content_json`` or ``tokens``; a warning names the rows)

        Examples
        --------
        >>> import adfkit
        >>> loop = adfkit.open_adf("sample_agents/long-runner.adf").loop()
        >>> list(loop.columns[:3])
        ['seq', 'ord', 'position']
        """
        return self.source.loop()

    def blocks(self, *, history: bool = False) -> pd.DataFrame:
        """Content blocks. One row per block of the live loop (or of ``history()``).

        Columns: ``seq`` (Int64), ``block_index`` (Int64), ``type`` (string), ``text`` (string:
        text, thinking or tool-result content), ``tool_use_id`` (string: a tool_use's ``id`` or a
        tool_result's ``tool_use_id``), ``tool_name`` (string), ``tool_input`` (string: compact
        JSON), ``is_error`` (boolean), ``chars`` (Int64: estimator characters of the block).

        Examples
        --------
        >>> import adfkit
        >>> b = adfkit.open_adf("sample_agents/long-runner.adf").blocks()
        >>> set(b["type"]) <= {"text", "tool_use", "tool_result", "thinking"}
        True
        """
        return _tables.blocks(self.source, history=history)

    def tool_calls(self, *, history: bool = False) -> pd.DataFrame:
        """Tool calls. One row per ``tool_use`` block, joined to its ``tool_result`` by id.

        Columns: ``call_seq`` (Int64), ``tool_use_id``, ``tool_name``, ``tool_input`` (compact
        JSON string), ``result_seq`` (Int64, NA when unmatched), ``result_preview`` (first 300
        characters), ``result_chars`` (Int64), ``is_error`` (boolean, NA when unmatched),
        ``matched`` (bool), ``created_at`` (of the call row).

        Examples
        --------
        >>> import adfkit
        >>> calls = adfkit.open_adf("sample_agents/long-runner.adf").tool_calls()
        >>> bool(calls["matched"].all())
        True
        """
        return _tables.tool_calls(self.source, history=history)

    def audit(self) -> pd.DataFrame:
        """Audit rows, metadata only (no blob is decompressed). One row per ``adf_audit`` row.

        Columns: ``id`` (Int64), ``source`` (category), ``start_seq``, ``end_seq`` (Int64; NA
        on pre-v28 rows), ``ref`` (string), ``entry_count``, ``size_bytes`` (Int64; JS length
        of the JSON), ``compressed_bytes`` (Int64), ``created_at`` (datetime64[ms, UTC]),
        ``start_at``, ``end_at`` (datetime64[ms, UTC]; only pre-v28 layouts have them).

        Examples
        --------
        >>> import adfkit
        >>> a = adfkit.open_adf("sample_agents/long-runner.adf").audit()
        >>> set(a["source"]) == {"loop"}
        True
        """
        return self.source.audit()

    def decode_audit(self, audit_id: int) -> pd.DataFrame | dict[str, Any] | list[Any]:
        """Decode one audit row's blob.

        A ``loop`` row gives a DataFrame with the columns of :meth:`loop` (``origin`` is
        ``audit``); ``inbox_message``/``outbox_message``/``file`` rows give the decoded dict;
        legacy ``inbox``/``outbox`` batches give a list of dicts.

        Raises
        ------
        BlobError
            not Brotli, not UTF-8 JSON, or the wrong shape for its source.
        BlobTooLargeError
            decompresses past ``max_blob_bytes``.

        Examples
        --------
        >>> import adfkit
        >>> agent = adfkit.open_adf("sample_agents/long-runner.adf")
        >>> first = int(agent.audit()["id"].iloc[0])
        >>> rows = agent.decode_audit(first)
        >>> bool(rows["origin"].eq("audit").all())
        True
        """
        return self.source.decode_audit(audit_id)

    def history(self, *, errors: str = "warn") -> pd.DataFrame:
        """The whole lifetime transcript. One row per ``seq``, audited or live, in position order.

        Every audited loop row plus the live loop, with the columns of :meth:`loop` plus ``epoch``
        (Int64: compactions and clears before the row) and ``copies`` (Int64: how many stored
        copies of the seq exist, live and archived). A seq held more than once keeps the copy
        of the oldest blob (ADF_FORMAT.md §4.4).

        Parameters
        ----------
        errors : ``"warn"`` (default) skips an undecodable blob with an
            :class:`adfkit.AdfWarning` naming it; ``"raise"`` raises its :class:`BlobError`.

        Examples
        --------
        >>> import adfkit
        >>> h = adfkit.open_adf("sample_agents/long-runner.adf").history()
        >>> bool(h["seq"].is_unique)
        True
        """
        return self.source.history(errors=errors)

    def events(self) -> pd.DataFrame:
        """Compaction, clear and repair events found in the history. One row per event, in order.

        Columns: ``event`` (``compaction``, ``clear``, ``repair``: the provider-compatibility
        repair, which archives the loop and rewrites its rows without tool blocks under their
        old seqs, or, in a Claude Code session, ``microcompaction``: tool results cleared to
        stubs, nothing archived), ``summary_seq`` (Int64), ``boundary_seq`` (Int64: rows with a
        larger seq were written after the event), ``audit_ids`` (tuple of the ``loop`` audit
        rows written for it; empty when the history was discarded), ``summary_lost`` (bool: a
        compaction known only from its archive, whose summary row was discarded later).

        Examples
        --------
        >>> import adfkit
        >>> ev = adfkit.open_adf("sample_agents/long-runner.adf").events()
        >>> bool((ev["event"] == "compaction").sum() >= 4)
        True
        """
        return self.source.events()

    def branches(self) -> pd.DataFrame:
        """Rows of abandoned branches (a Claude Code rewind, a Codex rollback), in no other
        table. One row per seq; empty for an ADF file (its loop has no branches).

        Columns: those of :meth:`loop`, then ``branch`` (string: ``branch-1``...). Their seqs
        follow the active conversation's.

        Examples
        --------
        >>> import adfkit
        >>> adfkit.open_adf("sample_agents/long-runner.adf").branches().empty
        True
        """
        return self.source.branches()

    def calls(self) -> pd.DataFrame:
        """Model calls the record states apart from its rows, usage counted once, in file
        order; empty for an ADF file (its calls are its assistant rows: :meth:`usage`).

        Columns: ``key`` (string: Claude Code ``message.id:requestId``), ``seq`` (Int64: the
        row holding the usage, NA when none), ``line`` (Int64), ``model`` (string),
        ``created_at`` (datetime64[ms, UTC]), ``n_records`` (Int64: records the call was
        written over), ``sidechain`` (bool), then ``tokens_input``, ``tokens_output``,
        ``tokens_cache_read``, ``tokens_cache_write``, ``tokens_cache_write_1h`` (NA where the
        file does not split it), ``tokens_reasoning`` (Int64; ``input`` includes the cache
        parts).

        Examples
        --------
        >>> import adfkit
        >>> list(adfkit.open_adf("sample_agents/long-runner.adf").calls().columns[:3])
        ['key', 'seq', 'line']
        """
        return self.source.calls()

    def history_gaps(self) -> pd.DataFrame:
        """Seq ranges discarded without audit. One row per gap (seqs in no table and no blob).

        Columns: ``start_seq``, ``end_seq``, ``n_seqs`` (Int64). The upper bound is the
        highest seq ever assigned (``sqlite_sequence``), so rows deleted at the end count too.

        Examples
        --------
        >>> import adfkit
        >>> len(adfkit.open_adf("sample_agents/long-runner.adf").history_gaps())
        0
        """
        return self.source.history_gaps()

    def highest_seq(self) -> int | None:
        """The highest ``adf_loop`` seq ever assigned (``sqlite_sequence``), if recorded."""
        return self.source.highest_seq()

    def inbox(self) -> pd.DataFrame:
        """Received messages. One row per ``adf_inbox`` row, oldest first.

        Columns: ``id``, ``message_id``, ``from``, ``to``, ``thread_id``, ``subject``,
        ``content``, ``content_type``, ``source``, ``status`` (string), ``sent_at``,
        ``received_at`` (datetime64[ms, UTC]).

        Examples
        --------
        >>> import adfkit
        >>> list(adfkit.open_adf("sample_agents/messenger.adf").inbox().columns[:3])
        ['id', 'message_id', 'from']
        """
        return self.source.inbox()

    def outbox(self) -> pd.DataFrame:
        """Sent messages. One row per ``adf_outbox`` row, oldest first.

        Columns: ``id``, ``message_id``, ``from``, ``to``, ``address``, ``thread_id``,
        ``subject``, ``content``, ``content_type``, ``status`` (string), ``status_code``
        (Int64), ``created_at``, ``delivered_at`` (datetime64[ms, UTC]).

        Examples
        --------
        >>> import adfkit
        >>> len(adfkit.open_adf("sample_agents/messenger.adf").outbox()) > 0
        True
        """
        return self.source.outbox()

    def files(self) -> pd.DataFrame:
        """Stored files, metadata only. One row per ``adf_files`` row, by path.

        Columns: ``path``, ``mime_type``, ``protection`` (string), ``size`` (Int64, bytes),
        ``authorized`` (boolean), ``created_at``, ``updated_at`` (datetime64[ms, UTC]).
        Use :meth:`read_file` for content.

        Examples
        --------
        >>> import adfkit
        >>> "mind.md" in set(adfkit.open_adf("sample_agents/long-runner.adf").files()["path"])
        True
        """
        return self.source.files()

    def read_file(self, path: str) -> bytes:
        """The content of one stored file, as bytes.

        Raises
        ------
        AdfError
            no file at that path.

        Examples
        --------
        >>> import adfkit
        >>> adfkit.open_adf("sample_agents/long-runner.adf").read_file("mind.md")[:6]
        b'# Mind'
        """
        return self.source.read_file(path)

    def read_text(self, path: str) -> str:
        """The content of one stored file decoded as UTF-8 (invalid bytes replaced)."""
        return self.source.read_file(path).decode("utf-8", "replace")

    def logs(self) -> pd.DataFrame:
        """Runtime log entries. One row per ``adf_logs`` row, oldest first.

        Columns: ``id`` (Int64), ``level``, ``origin``, ``event``, ``target``, ``message``,
        ``data`` (string), ``created_at`` (datetime64[ms, UTC]).
        """
        return self.source.logs()

    def tasks(self) -> pd.DataFrame:
        """Tool tasks. One row per ``adf_tasks`` row, oldest first.

        Columns: ``id``, ``tool``, ``args``, ``status``, ``result``, ``error``, ``origin``
        (string), ``requires_authorization`` (boolean), ``created_at``, ``completed_at``.
        """
        return self.source.tasks()

    def timers(self) -> pd.DataFrame:
        """Timers. One row per ``adf_timers`` row.

        Columns: ``id`` (Int64), ``schedule_json``, ``payload``, ``scope``, ``lambda`` (string),
        ``run_count`` (Int64), ``expired`` (boolean), ``next_wake_at``, ``created_at``,
        ``last_fired_at`` (datetime64[ms, UTC]).
        """
        return self.source.timers()

    def info(self, *, sizes: bool = True) -> Info:
        """A cheap summary: counts, settings and liveness. No blob is decompressed.

        The same keys for every kind of record (:data:`adfkit._core.source.INFO_KEYS`); a key the
        record has nothing for is None (an ADF file has no session id, a transcript no inbox).
        The same fields, with the same meaning, as ``adfkit info`` prints:

        - ``path``, ``name``, ``format``, ``handle``, ``session_id``, ``schema_version``,
          ``adf_version``, ``tool_version`` (of the tool that wrote a transcript),
          ``file_bytes``, ``open_mode``, ``clean_close``, ``sidecars``, ``turn_checkpoint``,
          ``live`` (being written, or crashed / cut off)
        - ``model``, ``provider``: the configured model, else the model of the latest live
          model call (``model_source`` says which: ``config``, ``loop``, ``transcript`` or None)
        - ``compact_threshold`` (None when the config's number is out of range),
          ``threshold_source``, ``threshold_rule``, ``context_window``, ``window_source``,
          ``audit_settings``: as in :meth:`settings`
        - ``loop_rows``, ``loop_seq_range``, ``history_rows`` (transcripts: counted when read),
          ``highest_seq``; ``first_live_at`` and ``last_live_at`` (ISO text): the live loop's
          first and last stamped rows; ``first_archived_at``: when the oldest loop archive was
          written (the history goes back further than the live loop when there is one)
        - ``audit_rows`` (rows per source), ``audited_loop_entries``, ``audit_json_chars``,
          ``audit_compressed_bytes``
        - ``inbox_rows``, ``outbox_rows``, ``files``, ``log_rows``, ``tasks``, ``timers``
        - ``subagents``, ``branches`` (abandoned ones), ``findings`` (what ``adfkit check``
          lists), ``compactions``, ``microcompactions``, ``clears``, ``rewinds``: counted where
          the reader has them at hand (transcripts), else None

        Parameters
        ----------
        sizes : fill ``audited_loop_entries``, ``audit_json_chars`` and
            ``audit_compressed_bytes`` (the default). That reads one table page per audit row
            (about 1 ms per 1,000 rows); ``sizes=False`` leaves them None and keeps the cost
            independent of the archive.

        Examples
        --------
        >>> import adfkit
        >>> info = adfkit.open_adf("sample_agents/long-runner.adf").info()
        >>> info["audit_rows"]["loop"] >= 4 and info["audited_loop_entries"] > 0
        True
        >>> adfkit.open_adf("sample_agents/long-runner.adf").info(sizes=False)["audit_json_chars"]
        """
        return self.source.info(sizes=sizes)

    @_documented_by(_replay.replay)
    def replay(self) -> pd.DataFrame:
        return _replay.replay(self.source)

    @_documented_by(_replay.context_at)
    def context_at(self, seq: int, *, context: bool = True) -> pd.DataFrame:
        return _replay.context_at(self.source, seq, context=context)

    @_documented_by(_replay.composition)
    def composition(self) -> pd.DataFrame:
        return _replay.composition(self.source)

    @_documented_by(_compactions.compactions)
    def compactions(self, *, cache_window: int = 3) -> pd.DataFrame:
        return _compactions.compactions(self.source, cache_window=cache_window)

    @_documented_by(_compactions.summary_recall)
    def summary_recall(self, event: int) -> pd.DataFrame:
        return _compactions.summary_recall(self.source, event)

    @_documented_by(_audit.compaction_audit)
    def compaction_audit(self, *, cache_window: int = 3) -> pd.DataFrame:
        return _audit.compaction_audit(self.source, cache_window=cache_window)

    @_documented_by(_audit.missed_compactions)
    def missed_compactions(self) -> pd.DataFrame:
        return _audit.missed_compactions(self.source)

    @_documented_by(_lab.compaction_lab)
    def compaction_lab(
        self,
        compactors: Sequence[_lab.CompactorArg] = _lab.DEFAULT,
        *,
        prices: PricesArg = None,
        judge: _lab.JudgeArg = None,
    ) -> pd.DataFrame:
        return _lab.compaction_lab(self.source, compactors, prices=prices, judge=judge)

    @_documented_by(_compactions.refetches)
    def refetches(self) -> pd.DataFrame:
        return _compactions.refetches(self.source)

    @_documented_by(_forgetting.compaction_ledger)
    def compaction_ledger(self, *, prices: PricesArg = None) -> pd.DataFrame:
        return _forgetting.compaction_ledger(self.source, prices=prices)

    @_documented_by(_forgetting.forgetting)
    def forgetting(self, *, prices: PricesArg = None) -> pd.DataFrame:
        return _forgetting.forgetting(self.source, prices=prices)

    @_documented_by(_forgetting.item_survival)
    def item_survival(self) -> pd.DataFrame:
        return _forgetting.item_survival(self.source)

    @_documented_by(_forgetting.survival_curve)
    def survival_curve(self) -> pd.DataFrame:
        return _forgetting.survival_curve(self.source)

    @_documented_by(_forgetting.compaction_cache)
    def compaction_cache(
        self, *, k: int = 10, window: int | None = None, prices: PricesArg = None
    ) -> pd.DataFrame:
        return _forgetting.compaction_cache(self.source, k=k, window=window, prices=prices)

    @_documented_by(_forgetting.recovery)
    def recovery(self, *, taxonomy: TaxonomyArg = None) -> pd.DataFrame:
        return _forgetting.recovery(self.source, taxonomy=taxonomy)

    @_documented_by(_usage.usage)
    def usage(self, *, prices: PricesArg = None) -> pd.DataFrame:
        return _usage.usage(self.source, prices=prices)

    @_documented_by(_context.context_blocks)
    def context_blocks(self) -> pd.DataFrame:
        return _context.context_blocks(self.source)

    @_documented_by(_context.system_prompt_at)
    def system_prompt_at(self, seq: int) -> str | None:
        return _context.system_prompt_at(self.source, seq)

    @_documented_by(_settings.config_changes)
    def config_changes(self) -> pd.DataFrame:
        return _settings.config_changes(self.source)

    @_documented_by(_mind.mind_history)
    def mind_history(self) -> pd.DataFrame:
        return _mind.mind_history(self.source)

    @_documented_by(_mind.mind_at)
    def mind_at(self, seq: int) -> str | None:
        return _mind.mind_at(self.source, seq)

    @_documented_by(_integrity.integrity)
    def integrity(self) -> pd.DataFrame:
        return _integrity.integrity(self.source)

    def observe(self, *, taxonomy: TaxonomyArg = None, segmentation: str = "smart") -> Observation:
        """Self-observation metrics of this agent; same as ``adfkit.observe(self, ...)``.

        Examples
        --------
        >>> import adfkit
        >>> obs = adfkit.open_adf("sample_agents/clean.adf").observe()
        >>> obs.flagged.empty
        True
        """
        return _observe.observe(self.source, taxonomy=taxonomy, segmentation=segmentation)

    def to_otlp(self, *, with_messages: bool = False, redact: bool = False) -> dict[str, Any]:
        """The agent (and its subagents) as an OpenTelemetry GenAI trace in OTLP/JSON: one
        ``invoke_agent`` span per agent, one ``chat`` span per model call with its usage,
        ``gen_ai.conversation.compacted`` on the first call after each compaction and an
        ``adfkit.compaction`` event per compaction (:mod:`adfkit._facade.otlp` lists every
        attribute). The same file gives the same ids. Needs ``pip install "adfkit[otel]"``.

        Examples
        --------
        >>> import adfkit
        >>> doc = adfkit.open_adf("sample_agents/long-runner.adf").to_otlp()
        >>> spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        >>> sorted({s["name"].split()[0] for s in spans})
        ['chat', 'invoke_agent']
        """
        from adfkit._facade import otlp

        return otlp.to_json(otlp.spans(self, with_messages=with_messages, redact=redact))

    def subagents(self) -> list[AgentFile]:
        """The agents this one started, each a handle of its own (empty for an ADF file).

        For a Claude Code session: every subagent transcript (``subagents/agent-*.jsonl``,
        legacy ``agent-*.jsonl`` beside the session, sidechains inside older files),
        nested ones included; ``sub.meta()`` gives ``agent_id``, ``parent_tool_use_id`` (the
        ``Task``/``Agent`` call that started it), ``parent_agent_id`` (None: this session) and
        ``agent_type`` (``compact`` for the compaction helper ``agent-acompact-*``). Their usage
        is not in this handle's :meth:`usage`.

        Examples
        --------
        >>> import adfkit
        >>> sessions = adfkit.list_claude_code_sessions("sample_agents/claude-code/projects")
        >>> path = sessions.set_index("session_id").path["24422850-abc3-4525-9567-e2fd4bd0adcb"]
        >>> subs = adfkit.open(path).subagents()
        >>> sorted(s.name for s in subs)
        ['agent-a1b2c3d4', 'agent-acompact-9f8e7d', 'agent-e5f6a7b8']
        """
        return [AgentFile(s) for s in self.source.subagents()]

    def mind(self) -> Mind:
        """The agent's mind as data: ``mind.md`` sections, ``mind/<slug>.md`` pages, the log.

        See :class:`adfkit.Mind`.

        Examples
        --------
        >>> import adfkit
        >>> m = adfkit.open_adf("sample_agents/mind-keeper.adf").mind()
        >>> sorted(m.pages["slug"])
        ['frost-watch', 'grafting', 'growers', 'open-threads']
        """
        return read_mind(self.source)


class AgentCollection(Sequence[AgentFile]):
    """The agents of one input that holds several (a log of many samples, each an agent), in
    the order the input lists them. Index by position or by name (``AgentFile.name``); each
    item is an :class:`AgentFile`, read on first access (listing the names reads none where the
    reader lists them), and its ``path`` (``input#name``) opens that one agent again. Closing
    the collection closes every agent read.
    """

    def __init__(self, path: str, sources: Sequence[AgentSource]) -> None:
        self.path = path
        self._sources = sources
        self._agents: dict[int, AgentFile] = {}
        self._names: list[str] | None = None

    def _agent(self, i: int) -> AgentFile:
        if i not in self._agents:
            a = AgentFile(self._sources[i])
            a.path = f"{self.path}{MEMBER}{self.names[i]}"
            self._agents[i] = a
        return self._agents[i]

    @overload
    def __getitem__(self, key: int | str) -> AgentFile: ...
    @overload
    def __getitem__(self, key: slice) -> list[AgentFile]: ...
    def __getitem__(self, key: int | str | slice) -> AgentFile | list[AgentFile]:
        if isinstance(key, str):
            if key not in self.names:
                raise KeyError(f"{self.path}: no agent named {key!r} (names: {self.names[:10]})")
            return self._agent(self.names.index(key))
        if isinstance(key, slice):
            return [self._agent(i) for i in range(len(self))[key]]
        return self._agent(range(len(self))[key])

    def __len__(self) -> int:
        return len(self._sources)

    def __iter__(self) -> Iterator[AgentFile]:
        return (self._agent(i) for i in range(len(self)))

    @property
    def names(self) -> list[str]:
        """Each agent's name, in order."""
        if self._names is None:
            self._names = member_names(self._sources)
        return self._names

    @property
    def paths(self) -> list[str]:
        """Each agent's path (``input#name``), in order: what opens that one agent."""
        return [f"{self.path}{MEMBER}{n}" for n in self.names]

    @property
    def format(self) -> str:
        """The format of the input (every agent's)."""
        return self[0].format if len(self) else ""

    def close(self) -> None:
        """Close every agent read."""
        for a in self._agents.values():
            a.close()
        close = getattr(self._sources, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> AgentCollection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<AgentCollection {self.path!r} agents={len(self)}>"


def agents_of(opened: AgentFile | AgentCollection) -> list[AgentFile]:
    """The agents an :func:`open` result holds: itself, or a collection's items."""
    return list(opened) if isinstance(opened, AgentCollection) else [opened]


#: What the public functions accept as "an agent": a handle, a source, or a path to open.
AgentLike: TypeAlias = AgentFile | AgentSource | str | os.PathLike[str]


@contextmanager
def opened(agent: AgentLike) -> Iterator[AgentSource]:
    """The source behind ``agent``; a path is opened here (:func:`open`) and closed on exit.

    Raises
    ------
    TypeError
        ``agent`` is none of an ``AgentFile``, an ``AgentSource`` or a path.
    """
    if isinstance(agent, AgentSource):
        yield agent
    elif isinstance(agent, AgentFile):
        yield agent.source
    elif isinstance(agent, str | os.PathLike):
        src = open_source(agent)
        try:
            yield src
        finally:
            src.close()
    else:
        raise TypeError(
            f"expected an AgentFile, an agent source or a path, got {type(agent).__name__}"
        )


@_at_callers_line
def observe(
    agent: AgentLike | pd.DataFrame,
    *,
    taxonomy: TaxonomyArg = None,
    segmentation: str = "smart",
) -> Observation:
    """Self-observation metrics of one agent: turns, calls by class, signatures, anomalies.

    A batch re-implementation of the runtime's self-observation analyzer (ADF_FORMAT.md
    §8.2-§8.4) over the whole history (live loop plus every audited loop row).

    Parameters
    ----------
    agent : an open :class:`AgentFile`, the path of an agent record (opened and closed
        here), or a loop/history DataFrame (the columns of :meth:`AgentFile.loop`).
    taxonomy : None (the shipped default for the agent's kind: the skill's taxonomy for ADF
        agents, ``default_taxonomy`` for Claude Code and Codex sessions), a mapping, or a
        JSON file path; see :func:`adfkit.load_taxonomy`.
    segmentation : ``"smart"`` (default: display order, one copy per seq, context rows,
        notices and summaries are not turn boundaries, precise trigger kinds) or
        ``"reference"`` (the reference analyzer's boundaries exactly, quirks included). The
        module docstring of ``adfkit._analysis.observe`` tabulates every difference.

    Returns
    -------
    Observation
        ``turns``, ``calls``, ``signatures``, ``streaks`` and ``anomalies`` DataFrames (their
        columns are documented on :class:`adfkit.Observation`).

    Raises
    ------
    ValueError
        unknown ``segmentation``.
    TypeError
        ``agent`` is none of the above.
    AdfError
        the file cannot be read, or the taxonomy file is bad.

    Examples
    --------
    >>> import adfkit
    >>> obs = adfkit.observe("sample_agents/long-runner.adf")
    >>> obs.flagged["check"].tolist()
    ['null_streak', 'repeated_signature', 'spend_without_change']
    >>> top = obs.signatures.iloc[0]
    >>> str(top["signature"]), int(top["count"])
    ('fs_read:1f1udza', 5)
    """
    if isinstance(agent, pd.DataFrame):
        return _observe.observe(agent, taxonomy=taxonomy, segmentation=segmentation)
    _observe.check_segmentation(segmentation)  # before opening anything
    with opened(agent) as src:
        return _observe.observe(src, taxonomy=taxonomy, segmentation=segmentation)


@_at_callers_line
def simulate(
    agent: AgentLike, policy: Policy, *, summary_chars: int | None = None
) -> SimulationResult:
    """Replay an agent's whole recorded history under another memory policy, with no model
    call. The model's rows are kept as recorded; the runtime's artifacts (summaries, nudges)
    are re-created where the simulated policy puts them. Clears, and compactions whose
    surroundings the file no longer holds (audit off), are applied as recorded.

    Parameters
    ----------
    agent : an open :class:`AgentFile`, a source or a path (opened and closed here).
    policy : :class:`adfkit.ThresholdPolicy`, :class:`adfkit.SlidingWindowPolicy` or
        :class:`adfkit.TrimToolResultsPolicy`.
    summary_chars : size of a simulated summary that no real one matches (default: the mean of
        the agent's real summaries, else ``DEFAULT_SUMMARY_CHARS``, 2,000).

    Returns
    -------
    SimulationResult
        ``events`` and ``calls`` frames and ``summary`` totals. The token model is described in
        the docstring of ``adfkit._analysis.simulate``: at the policy and threshold in force it
        reproduces the real compaction points and token counts exactly.

    Raises
    ------
    TypeError
        ``policy`` is not a policy, or ``agent`` none of the above.

    Examples
    --------
    >>> import adfkit
    >>> res = adfkit.simulate("sample_agents/clean.adf", adfkit.ThresholdPolicy())
    >>> res.summary["n_compactions"] == res.summary["n_real_compactions"]
    True
    """
    _simulate.check_policy(policy)  # before opening anything
    with opened(agent) as src:
        return _simulate.simulate(src, policy, summary_chars=summary_chars)


@_at_callers_line
def simulate_sweep(
    agent: AgentLike,
    thresholds: list[int] | Any,
    *,
    preserve: int = 0,
    manual: bool = True,
    summary_chars: int | None = None,
) -> pd.DataFrame:
    """The runtime's policy (:class:`adfkit.ThresholdPolicy`) at each of several thresholds.
    One row per threshold.

    Parameters
    ----------
    agent : an open :class:`AgentFile`, a source or a path (opened and closed here).
    thresholds : the thresholds (tokens), a list or an array.
    preserve, manual : as for :class:`adfkit.ThresholdPolicy`.
    summary_chars : as for :func:`simulate`.

    Returns
    -------
    DataFrame
        Columns: ``threshold`` (Int64), ``n_compactions``, ``n_real_compactions``,
        ``tokens_sent``, ``tokens_sent_actual`` (Int64), ``tokens_sent_ratio`` (Float64:
        simulated / actual), ``tokens_saved`` (Int64: actual - simulated),
        ``max_context_tokens``, ``mean_context_tokens`` (Float64: mean simulated
        ``input + output`` per call), ``context_window`` (Int64: the agent's window,
        :meth:`AgentFile.settings`; NA when unknown), ``window_source`` (string:
        ``recorded`` or ``assumed``), ``past_window`` (boolean: the threshold is above the
        window, so the tool would never let the context reach it: the row is a
        counterfactual no agent could run; NA when the window is unknown). A sweep with
        thresholds past the window warns once (:class:`adfkit.AdfWarning`).

    Examples
    --------
    >>> import adfkit
    >>> s = adfkit.simulate_sweep("sample_agents/clean.adf", [6000, 8000, 12000])
    >>> s["n_compactions"].is_monotonic_decreasing
    True
    """
    with opened(agent) as src:
        return _simulate.simulate_sweep(
            src, thresholds, preserve=preserve, manual=manual, summary_chars=summary_chars
        )
