"""Another agent's transcript (Claude Code session, Codex CLI rollout) as an :class:`AgentSource`.

The format readers (:mod:`adfkit._sources.claude_code.parser`, :mod:`adfkit._sources.codex.parser`)
turn one file into a :class:`~adfkit._sources.transcript.kit.ParsedTranscript`: rows in conversation
order, compaction events with the rows each swept and kept, findings. This module puts that record
behind the reader boundary, so every analysis (replay, compactions, usage, observe, integrity,
simulate...) reads it exactly as it reads an ADF file:

- **rows**: every row of the active conversation goes through the one row rule
  (:class:`adfkit._core.loopframe.RowBuilder`), with the kind the record states (``kind_hint``:
  compaction summary, injected context, steering message, error notice). ``seq`` is the
  parser's conversation order (1..N), and display order is conversation order, except where a
  reader sets ``ord`` (:attr:`TranscriptRow.ord`: a Claude Code summary shown before the rows
  its compaction preserved, which were written before it). Rows of abandoned branches (a
  Claude Code rewind, a Codex rollback) are not in :meth:`~TranscriptSource.history`: they
  never were in the conversation that went on; they are in :meth:`~TranscriptSource.branches`.
- **events**: one ``compaction`` per compaction (``summary_seq`` its summary row,
  ``boundary_seq`` the row before it, ``audit_ids`` its archive) and one ``microcompaction`` per
  Claude Code microcompaction (no summary, no archive: the tool results it cleared stay in the
  window as stubs). What each event swept, kept and cleared is stated by the record, not derived
  from ``ord`` as for ADF: :meth:`~TranscriptSource.window_changes`.
- **archives**: the file is append-only, so the rows a compaction swept are still in it. Each
  compaction is given one ``loop`` archive (:meth:`~TranscriptSource.audit`, ids 1, 2, ... in
  event order) holding the rows it swept; those rows have ``origin`` ``audit`` and that
  ``audit_id`` in :meth:`~TranscriptSource.history`. The rows still in the window are ``live``
  (:meth:`~TranscriptSource.loop`).
- **settings** (:meth:`~TranscriptSource.settings`): the model, the context window and the
  automatic-compaction threshold the tool applies (``assumed``: see :func:`compaction_rule`),
  with loop audit "on" (nothing a compaction sweeps is lost from the file).
- **integrity**: the reader's findings (half-written last line, bad JSON, broken parent chains,
  usage repeated across records...) become :meth:`~TranscriptSource.storage_report` rows, table
  ``transcript``, ``rows`` = the line number.

Nothing is ever written: the file is read once, when the source is made.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._base.errors import AdfError
from adfkit._core import registry
from adfkit._core.history import epochs_of
from adfkit._core.loopframe import RowBuilder
from adfkit._core.registry import Rule
from adfkit._core.source import (
    AgentSource,
    Finding,
    Info,
    Key,
    Settings,
    StorageReport,
    WindowChange,
    info_record,
)
from adfkit._core.thresholds import learned_settings
from adfkit._sources.transcript.figures import event_bounds, meta_of, name_of, writes_1h
from adfkit._sources.transcript.kit import (
    ParsedTranscript,
    TranscriptEvent,
    TranscriptRow,
    event_counts,
    gc_paused,
)

_AUDIT: Key[pd.DataFrame] = Key("transcript.audit")
_LOOP: Key[pd.DataFrame] = Key("transcript.loop")
_ARCHIVE: Key[pd.DataFrame] = Key("transcript.archive")

#: Microcompaction replaces a tool result by a stub of about this many characters
#: (``[Old tool result content cleared]``, TRANSCRIPTS.md §1.6, uncertain).
STUB_TEXT = "[Old tool result content cleared]"


def compaction_rule(fmt: str, model: str | None, context_window: int | None = None) -> Rule:
    """The automatic-compaction rule of the format ``fmt`` for ``model``
    (:attr:`FormatSpec.compaction_rule`): ``(window, threshold, text)``, None where the format
    states none and adfkit knows no rule.

    Examples
    --------
    >>> compaction_rule("claude_code", "claude-sonnet-4-5-20250929")[:2]
    (200000, 167000)
    >>> compaction_rule("codex", "gpt-5-codex", 272000)[:2]
    (272000, 244800)
    """
    rule = registry.spec(fmt).compaction_rule
    if rule is None:
        return Rule(context_window, None, "no automatic-compaction rule known for this format")
    return rule(model, context_window)


def _ms_iso(ms: int | None) -> str | None:
    if ms is None or ms <= 0:
        return None
    return str(pd.Timestamp(ms, unit="ms", tz="UTC").isoformat())


class TranscriptSource(AgentSource):
    """One parsed transcript, read-only, behind the :class:`AgentSource` boundary.

    Made by :func:`adfkit._core.opening.open_source` (``adfkit.open``, ``open_claude_code``,
    ``open_codex``) from a file, or from a :class:`ParsedTranscript` (a subagent's).

    The rows are turned into the history frame once, here, with the cyclic garbage collector
    paused (they are acyclic); the source then keeps the frame, not the parsed rows:
    ``parsed`` is the reader's result without ``rows`` and ``other_branches`` (their place in
    the file is :meth:`row_index`), so a long session costs one copy of its rows in memory and
    no collector work afterwards.

    Parameters
    ----------
    parsed : the reader's result for one file (not modified).
    """

    def __init__(self, parsed: ParsedTranscript) -> None:
        super().__init__(parsed.path)
        self.format = parsed.format
        self._spec = registry.spec(parsed.format)
        self.stamped_on_append = self._spec.stamped_on_append
        self.provider_tools = self._spec.provider_tools
        self.context_in_messages = self._spec.context_in_messages
        self.compaction_count = self._spec.compaction_count
        self._process_starts = list(parsed.process_starts)
        self._subagents: list[AgentSource] | None = None
        with gc_paused():
            self._ev, self._changes, swept_by, recs = _event_data(parsed)
            # a compaction starts an epoch (a clear, a microcompaction does not)
            #: (event, boundary seq) of each event, as the events frame holds them
            self._ev_bounds = [(str(r["event"]), int(r["boundary_seq"])) for r in recs]
            bounds = np.array([b for e, b in self._ev_bounds if e == "compaction"], dtype="int64")

            def epochs(seqs: np.ndarray) -> dict[str, Any]:  # made with the frame
                ones = np.ones(len(seqs), dtype="int64")
                return {"epoch": epochs_of(seqs, bounds), "copies": pd.array(ones, dtype="Int64")}

            where = f"{self.path}: transcript rows"
            self._history = _rows_frame(parsed.rows, swept_by, where, epochs)
            # none (most files, every Inspect sample): one empty frame for all (copy-on-write)
            self._branch_rows: pd.DataFrame | None = (
                _branch_frame(parsed.other_branches, self.path) if parsed.other_branches else None
            )
            every = [*parsed.rows, *parsed.other_branches]
            self._index: dict[str, list[Any]] = {  # a frame on demand: plain lists are cheap
                "seq": [r.seq for r in every],
                "line": [r.line for r in every],
                "uuid": [r.uuid for r in every],
                "branch": [r.branch for r in every],
            }
            self._model = _model_of(parsed)
            self._window = _window_of(parsed)
            self._calls = _call_columns(parsed)
            self._writes_1h = writes_1h(parsed)
            #: The reader's result without its per-row and per-call objects (rows, calls and
            #: token counts are in frames now: :meth:`history`, :meth:`branches`, :meth:`calls`).
            self.parsed = dataclasses.replace(
                parsed, rows=[], other_branches=[], calls=[], token_counts=[]
            )

    # -- identity and settings -----------------------------------------------------------
    @property
    def name(self) -> str:
        """The session id (subagents: ``agent-<id>``), else the file name without extensions."""
        return name_of(self.parsed)

    def meta(self) -> dict[str, str]:
        """What the file says about the session (cwd, tool version, git branch, title...),
        plus ``format``, and for a subagent its ``agent_id``, ``parent_tool_use_id`` and
        ``parent_agent_id``. Every value is text."""
        return meta_of(self.parsed)

    def model(self) -> str | None:
        """The model of the session: the last model call's, else the metadata's."""
        return self._model

    def context_window(self) -> int | None:
        """The context window the file records (Codex), else None."""
        return self._window

    def calls(self) -> pd.DataFrame:
        """Every model call the file records, its usage counted once, in file order (those of
        abandoned branches, subagents' own files excluded, and Codex calls no row holds, too).

        Columns (:data:`schema.CALLS`): ``key`` (string: Claude Code
        ``message.id:requestId``), ``seq`` (Int64: the row holding the usage, NA when none),
        ``line`` (Int64), ``model`` (string), ``created_at`` (datetime64[ms, UTC]),
        ``n_records`` (Int64: records the call was written over), ``sidechain`` (bool), then
        ``tokens_input``, ``tokens_output``, ``tokens_cache_read``, ``tokens_cache_write``,
        ``tokens_cache_write_1h`` (the part of the cache write with a 1-hour TTL, NA where the
        file does not split it), ``tokens_reasoning`` (Int64; ``input`` includes the cache
        parts).
        """
        return schema.frame(self._calls, schema.CALLS)

    def cache_writes_1h(self) -> dict[int, int]:
        """1-hour cache writes by seq (see :meth:`AgentSource.cache_writes_1h`)."""
        return dict(self._writes_1h)

    def settings(self) -> Settings:
        """The model (the last model call's) and its provider (the format's spec), the context
        window (``recorded`` when the file states it, else ``assumed`` from the format's rule,
        a larger one when the file shows more tokens in context) and the automatic-compaction
        threshold: ``recorded`` from the tokens the file states before its automatic
        compactions, else :func:`compaction_rule`'s (``assumed``; None where the format has no
        rule), by the one rule of :func:`adfkit._core.thresholds.learned_settings`; audit:
        ``loop`` on (the file keeps every swept row), the rest NA (a transcript has no inbox,
        outbox or files)."""
        model = self.model()
        recorded = self.context_window()
        window, threshold, rule = compaction_rule(self.format, model, recorded)
        base = Settings(
            compact_threshold=threshold,
            threshold_source=None if threshold is None else "assumed",
            threshold_rule=rule,
            context_window=window,
            window_source="recorded" if recorded else (None if window is None else "assumed"),
            audit={"loop": True, "inbox": None, "outbox": None, "files": None},
            model=model,
            provider=self._spec.provider(model),
        )
        events = [(e, b, c) for (e, b), c in zip(self._ev_bounds, self._changes, strict=True)]
        h = self._history
        total = h["tokens_total"].array
        sized = (h["kind"] == "assistant").to_numpy(bool) & ~total.isna()
        calls = list(  # two columns' arrays, not a frame of the sized rows
            zip(
                h["seq"].to_numpy(dtype="int64")[sized].tolist(),
                total.to_numpy(dtype="int64", na_value=0)[sized].tolist(),
                strict=True,
            )
        )
        return learned_settings(
            base, events, lambda least: compaction_rule(self.format, model, least), calls
        )

    def config(self) -> dict[str, Any]:
        """:meth:`settings` in the shape of an ADF config (what ``AgentFile.config()`` gave
        before :meth:`settings` existed): ``model`` (``model_id``, ``provider``), ``context``
        (``compact_threshold``, ``audit.loop`` true), ``context_window`` and ``compact_rule``
        (how the threshold was decided)."""
        st = self.settings()
        return {
            "name": self.name,
            "model": {"model_id": st.model, "provider": st.provider},
            "context": {"compact_threshold": st.compact_threshold, "audit": {"loop": True}},
            "context_window": st.context_window,
            "compact_rule": st.threshold_rule,
        }

    # -- rows ------------------------------------------------------------------------------
    def row_index(self) -> pd.DataFrame:
        """Where each row came from: ``seq`` (Int64, as in :meth:`history` and
        :meth:`branches`), ``line`` (Int64: the file line of its first record), ``uuid``
        (string: Claude Code's record uuid, Codex's item id if any), ``branch`` (string: NA on
        the active conversation)."""
        return schema.frame(self._index, _INDEX)

    def _compaction_events(self) -> list[TranscriptEvent]:
        """The events that have an archive: compactions and clears (their swept rows)."""
        return [e for e in self.parsed.events if e.kind in ("compaction", "clear")]

    def history(self, *, errors: str = "warn") -> pd.DataFrame:
        """Every row of the active conversation, in conversation order, with ``epoch`` (the
        compactions before the row) and ``copies`` (1: one row per seq)."""
        if errors not in ("warn", "raise"):
            raise ValueError(f"errors must be one of ['warn', 'raise'], got {errors!r}")
        return self._history.copy(deep=False)

    def history_view(self) -> pd.DataFrame:
        """The history frame itself, for reading only (see :meth:`AgentSource.history_view`)."""
        return self._history

    def loop(self) -> pd.DataFrame:
        """The rows in the context window now: those no compaction swept (the last summary,
        the rows it kept, the rows after it)."""
        return self.memo.get(_LOOP, lambda: self._subset(self._history["origin"] == "live")).copy(
            deep=False
        )

    def _subset(self, mask: pd.Series) -> pd.DataFrame:
        h = self._history  # read only: no copy of it
        df = h.loc[mask.to_numpy(dtype=bool), list(schema.LOOP)].reset_index(drop=True)
        df["position"] = pd.array(np.arange(len(df)), dtype="Int64")
        return df

    def events(self) -> pd.DataFrame:
        """Compactions and microcompactions in order (columns of :data:`schema.EVENTS`)."""
        return self._ev.copy(deep=False)  # copy-on-write: the caller's changes stay its own

    def process_starts(self) -> list[int]:
        """Seqs of the first call of each process, as the reader found them."""
        return list(self._process_starts)

    def window_changes(self) -> list[WindowChange]:
        """What each event swept, kept (Claude Code preserved segment, Codex replacement
        history) and cleared (microcompaction), as the file states it; the trigger recorded
        (Claude Code ``compactMetadata.trigger``, None when the record states none: an old-form
        summary, a boundary without metadata;
        Codex: the reader's heuristic) and a manual compaction's focus text."""
        return list(self._changes)

    # -- archives ------------------------------------------------------------------------
    def audit(self) -> pd.DataFrame:
        """One ``loop`` archive per compaction (ids 1, 2, ... in order): the seq range and
        number of rows it swept, ``size_bytes`` their JSON content's characters, ``created_at``
        the compaction's time, ``start_at``/``end_at`` the first and last swept row's."""
        return self.memo.get(_AUDIT, self._audit).copy(deep=False)

    def _audit(self) -> pd.DataFrame:
        h = self._history  # read only: no copy of it
        events = self._compaction_events()
        at = {q: i for i, q in enumerate(h["seq"].to_numpy(dtype="int64").tolist())}
        if events:  # each row's length and time read where a sweep holds it, not for every row
            chars = h["content"].str.len().fillna(0).astype(int).to_numpy()
            times = h["created_at"].array
        recs = []
        for i, e in enumerate(events, start=1):
            sw = [q for q in e.swept if q in at]
            ts = [t for q in sw if not pd.isna(t := times[at[q]])]
            recs.append(
                {
                    "id": i,
                    "source": "loop",
                    "start_seq": min(sw) if sw else None,
                    "end_seq": max(sw) if sw else None,
                    "ref": None,
                    "entry_count": len(sw),
                    "size_bytes": sum(chars[at[q]] for q in sw),
                    "compressed_bytes": None,
                    "created_at": e.created_at,
                    "start_at": min(ts) if ts else None,
                    "end_at": max(ts) if ts else None,
                }
            )
        df = schema.frame(recs, schema.AUDIT)
        df["source"] = df["source"].astype(schema.text_categories(("loop",)))
        return df

    def archive(self, audit_id: int) -> pd.DataFrame:
        """The rows compaction ``audit_id`` swept, in conversation order."""
        aid = int(audit_id)
        if not 1 <= aid <= len(self._compaction_events()):
            raise AdfError(f"no archive with id={audit_id}", path=self.path)

        def build() -> pd.DataFrame:
            h = self.history()
            return self._subset(h["audit_id"].eq(aid).fillna(False))

        return self.memo.get(_ARCHIVE, build, aid).copy(deep=False)

    def storage_report(self) -> StorageReport:
        """The reader's findings, one per check and line: table ``transcript``, ``rows`` the
        line number (empty for the whole file)."""
        found = [
            Finding(
                check=f.check,
                severity=f.severity,
                table="transcript",
                rows=(int(f.line),) if f.line else (),
                detail=(f"line {f.line}: " if f.line else "") + f.detail,
            )
            for f in self.parsed.findings
        ]
        return StorageReport(findings=tuple(found))

    # -- other agents, other branches ----------------------------------------------------
    def subagents(self) -> list[AgentSource]:
        """The session's subagents (Claude Code ``subagents/agent-*.jsonl``, legacy
        ``agent-*.jsonl`` beside it, sidechains inside older files), each a source of its own;
        nested ones are listed too (``meta()["parent_agent_id"]`` says whose)."""
        if self._subagents is None:
            self._subagents = [TranscriptSource(s) for s in self.parsed.subagents]
        return list(self._subagents)

    def branches(self) -> pd.DataFrame:
        """Rows of abandoned branches (a rewind, a rollback): the columns of
        :data:`schema.LOOP` plus ``branch`` (string: ``branch-1``...). Their seqs follow the
        active conversation's; they are in no other table."""
        return (_no_branches() if self._branch_rows is None else self._branch_rows).copy(deep=False)

    # -- summary -------------------------------------------------------------------------
    def info(self, *, sizes: bool = True) -> Info:
        """The :class:`~adfkit._core.source.Info` keys that mean something for a transcript (what an
        ADF file alone has is None: schema, handle, checkpoint, inbox and the other side
        tables), among them ``session_id``, ``tool_version``, ``context_window``,
        ``history_rows``, ``subagents``, ``branches``, ``findings`` (what ``integrity()`` and
        ``adfkit check`` list, info ones included) and the events apart: ``compactions``,
        ``microcompactions``, ``clears``, ``rewinds``
        (:func:`adfkit._sources.transcript.kit.event_counts`)."""
        p = self.parsed
        settings = self.settings()
        lp = self.loop()
        seqs = lp["seq"].dropna().astype("int64")
        times = lp["created_at"].dropna()
        n_comp = len(self._compaction_events())
        half = any(f.check == "truncated_last_line" for f in p.findings)
        size: int | None
        try:
            size = os.path.getsize(self.path)
        except OSError:  # a session of a store (``store#id``) is no file of its own: unknown
            size = None
        out: dict[str, Any] = {
            "file_bytes": size,
            "open_mode": "read",
            "live": half,
            "model_source": "transcript" if settings.model else None,
            "loop_rows": len(lp),
            "loop_seq_range": ((int(seqs.min()), int(seqs.max())) if len(seqs) else (None, None)),
            "first_live_at": _ms_iso(schema.to_ms(times.min())) if len(times) else None,
            "last_live_at": _ms_iso(schema.to_ms(times.max())) if len(times) else None,
            "audit_rows": {"loop": n_comp} if n_comp else {},
            # first_archived_at None: the archive is the file itself
        }
        if sizes:
            a = self.audit()
            out["audited_loop_entries"] = int(a["entry_count"].sum())
            out["audit_json_chars"] = int(a["size_bytes"].sum())
            # audit_compressed_bytes None: archives are the file's own lines
        out.update(
            session_id=p.session_id,
            tool_version=p.meta.get("version") or p.meta.get("cli_version"),
            history_rows=len(self._history),
            subagents=len(p.subagents),
            branches=int(self.branches()["branch"].nunique()),
            findings=len(p.findings),
            **event_counts(e.kind for e in p.events),
        )
        return info_record(self, settings, **out)


def _branch_frame(rows: list[Any], path: Any) -> pd.DataFrame:
    """:meth:`TranscriptSource.branches` of the rows of abandoned branches."""
    br = _rows_frame(rows, {}, f"{path}: abandoned branches")
    names = {r.seq: r.branch for r in rows}
    br["branch"] = pd.array([names.get(int(q)) for q in br["seq"]], dtype="string")
    return br


@functools.cache
def _no_branches() -> pd.DataFrame:
    """:meth:`TranscriptSource.branches` of a file without abandoned branches: made once, only
    copied (pandas' copy-on-write keeps it as it is)."""
    return _branch_frame([], "(no branches)")


#: Columns of :meth:`TranscriptSource.row_index`; the token kinds of :data:`schema.CALLS`.
_INDEX = {"seq": "Int64", "line": "Int64", "uuid": "string", "branch": "string"}
_TOKENS = ("input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning")


def _model_of(parsed: ParsedTranscript) -> str | None:
    for c in reversed(parsed.calls):
        if c.model and not c.sidechain:
            return c.model
    m = parsed.meta.get("model")
    return str(m) if m else None


def _window_of(parsed: ParsedTranscript) -> int | None:
    for e in reversed(parsed.events):
        if e.context_window:
            return int(e.context_window)
    for tc in reversed(parsed.token_counts):
        if tc.context_window:
            return int(tc.context_window)
    return None


def _call_columns(parsed: ParsedTranscript) -> dict[str, list[Any]]:
    cs = parsed.calls
    cols: dict[str, list[Any]] = {
        "key": [c.key for c in cs],
        "seq": [c.seq for c in cs],
        "line": [c.line for c in cs],
        "model": [c.model for c in cs],
        "created_at": [c.created_at for c in cs],
        "n_records": [c.n_records for c in cs],
        "sidechain": [c.sidechain for c in cs],
    }
    for k in _TOKENS:
        cols[f"tokens_{k}"] = [c.tokens.get(k) for c in cs]
    return cols


def _event_data(
    parsed: ParsedTranscript,
) -> tuple[pd.DataFrame, list[WindowChange], dict[int, int], list[dict[str, Any]]]:
    """(events frame, window changes, swept seq -> archive id, the frame's records) of a
    parsed transcript."""
    recs: list[dict[str, Any]] = []
    changes: list[WindowChange] = []
    swept_by: dict[int, int] = {}
    aid = 0
    for e, bound in event_bounds(parsed):  # rewinds: the abandoned rows are not in history()
        dur = e.extra.get("duration_ms")
        trig = e.extra.get("trigger_tokens")
        stated = WindowChange(
            tokens_before=e.pre_tokens,
            tokens_after=e.post_tokens,
            duration_ms=dur if type(dur) is int else None,
            trigger_tokens=trig if type(trig) is int else None,
            summary_first=e.extra.get("summary_first") is True,
        )
        if e.kind == "microcompaction":
            recs.append(
                {
                    "event": "microcompaction",
                    "summary_seq": None,
                    "boundary_seq": bound,
                    "audit_ids": (),
                    "summary_lost": False,
                }
            )
            stub = len(STUB_TEXT)
            changes.append(
                dataclasses.replace(
                    stated, cleared=tuple(e.swept), stub_chars=stub, trigger=e.trigger
                )
            )
            continue
        aid += 1  # a compaction or a clear: the rows it swept are its archive
        for q in e.swept:
            swept_by.setdefault(q, aid)
        recs.append(
            {
                "event": e.kind,
                "summary_seq": e.summary_seq,
                "boundary_seq": bound,
                "audit_ids": (aid,),
                "summary_lost": e.kind == "compaction" and e.summary_seq is None and e.summarises,
            }
        )
        focus = e.extra.get("user_context")
        changes.append(
            dataclasses.replace(
                stated,
                swept=tuple(e.swept),
                kept=tuple(e.preserved),
                trigger="clear" if e.kind == "clear" else e.trigger,
                instructions=focus if isinstance(focus, str) else None,
                summary_encrypted=e.extra.get("summary_encrypted") is True,
                swept_held=e.extra.get("swept_held") is not False,
            )
        )

    return schema.frame(recs, schema.EVENTS), changes, swept_by, recs


def _rows_frame(
    rows: list[TranscriptRow],
    swept_by: dict[int, int],
    where: str,
    extra: Callable[[np.ndarray], dict[str, Any]] | None = None,
) -> pd.DataFrame:
    """The rows as a loop frame, through the one row rule (warnings name ``where``), with
    the ``extra`` columns of :meth:`RowBuilder.frame`."""
    b = RowBuilder()
    _add_rows(b, rows, swept_by)
    b.warn(where)
    return b.frame(consume=True, extra=extra)


def _add_rows(b: RowBuilder, rows: list[TranscriptRow], swept_by: dict[int, int]) -> None:
    """Every row through the one row rule, ``origin`` ``audit`` for the swept ones."""
    add = b.add
    get = swept_by.get
    for r in rows:
        aid = get(r.seq)
        add(
            r.seq,
            r.ord,
            r.role,
            r.content,
            r.model,
            r.tokens or None,
            r.created_at,
            "live" if aid is None else "audit",
            aid,
            r.kind_hint,
        )
    b.flush()
