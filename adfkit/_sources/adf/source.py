"""The ADF reader: one agent file (SQLite) read-only, as an :class:`AgentSource`.

Opening goes through :class:`adfkit._sources.adf.sqlite.Source` (the only place a connection is
made); rows go through the one row rule (:mod:`adfkit._core.rows`, via
:class:`adfkit._core.loopframe.RowBuilder`); audit blobs through :mod:`adfkit._core.blobs`; the
merged history, its events and gaps through :mod:`adfkit._core.history`. Nothing here knows any
analysis.
"""

from __future__ import annotations

import gc
import os
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pandas as pd

from adfkit import schema
from adfkit._base.config import audit_settings, compact_threshold, threshold_rule
from adfkit._base.errors import AdfError, AdfWarning, BlobError, MalformedRowError
from adfkit._base.js import JSONError, parse_json
from adfkit._core import blobs as _blobs
from adfkit._core import history as _history
from adfkit._core.loopframe import RowBuilder, side_frame, side_int, side_ms, side_text
from adfkit._core.source import AgentSource, Info, Key, Settings, StorageReport, info_record
from adfkit._sources.adf.checks import check_storage
from adfkit._sources.adf.sqlite import Source

_LOOP: Key[pd.DataFrame] = Key("adf.loop")
_AUDIT: Key[pd.DataFrame] = Key("adf.audit")
_AUDIT_ROWS: Key[list[tuple[Any, ...]]] = Key("adf.audit_rows")
_LOOP_INDEX: Key[list[tuple[int, int, int | None, int | None, int]]] = Key("adf.loop_index")
_CONFIG: Key[dict[str, Any]] = Key("adf.config")
_SETTINGS: Key[Settings] = Key("adf.settings")
_HISTORY: Key[tuple[pd.DataFrame, pd.DataFrame]] = Key("adf.history")
_BLOB: Key[pd.DataFrame] = Key("adf.blob")
_STORAGE: Key[StorageReport] = Key("adf.storage")

#: Side tables: (table, schema, order by, columns stored as ISO text rather than epoch ms).
_SIDE: dict[str, tuple[str, dict[str, str], str, tuple[str, ...]]] = {
    "inbox": ("adf_inbox", schema.INBOX, "received_at", ()),
    "outbox": ("adf_outbox", schema.OUTBOX, "created_at", ()),
    "files": ("adf_files", schema.FILES, "path", ("created_at", "updated_at")),
    "logs": ("adf_logs", schema.LOGS, "id", ()),
    "tasks": ("adf_tasks", schema.TASKS, "created_at", ()),
    "timers": ("adf_timers", schema.TIMERS, "id", ()),
}


#: ``history()`` moves values to numpy and Arrow after this many rows or decompressed bytes of
#: blobs: a few blobs' worth, converted while their strings are still in the CPU's caches
#: (16 MiB at a time cost 15% more CPU on rows of a few KB).
_FLUSH_ROWS = 8192
_FLUSH_BYTES = 256 * 1024
#: ``history()`` reads and decompresses loop blobs in batches of at most this many blobs and
#: stored bytes (a larger blob is a batch of its own). Small batches keep the decompressing
#: thread ahead: between two blobs of a batch it needs the GIL back, which this busy thread
#: gives up only every switch interval (5 ms); so a blob that takes the reader longer than
#: that to flatten is best a batch of its own (measured: 1 MiB batches left the reader waiting
#: 0.3 s for the thread on 600 MB of rows of a few KB, and history() 20% slower).
_BATCH_BLOBS = 256
_BATCH_BYTES = 64 * 1024
#: Only batches whose blobs average this many stored bytes go to the decompressing thread:
#: smaller ones decompress in less time than the hand-over takes (measured: the real
#: runtime's 181 blobs of ~7 KB, 10% faster without the thread; 20,000 tiny ones, 20%).
_THREAD_BLOB_BYTES = 16 * 1024
#: The decompressing thread stops at this many bytes out per batch (the reader decompresses
#: the rest of the batch itself, one blob at a time).
_BATCH_RAW = 32 * 1024 * 1024


class _Inline:
    """A stand-in for a one-thread executor that runs each call at ``submit``."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by fut.result()
            fut.set_exception(exc)
        return fut


class AdfSource(AgentSource):
    """An ADF agent file read-only (ADF_FORMAT.md): loop, audit archive, history, side tables.

    Parameters
    ----------
    path : the ``.adf`` file; never written, nothing created beside it.
    max_blob_bytes : cap on one decompressed audit blob.
    timeout : seconds to wait for a writer's lock.
    """

    format = "adf"
    flush_nudge = True  # the runtime's nudge and grace call before an automatic compaction

    #: ``history()`` decodes the next blob on a second thread while this one flattens rows;
    #: ``load_fleet``'s process engine turns it off (every core already runs a loader there).
    prefetch: bool = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_blob_bytes: int = _blobs.DEFAULT_MAX_BLOB_BYTES,
        timeout: float = 5.0,
    ) -> None:
        super().__init__(path)
        self.max_blob_bytes = int(max_blob_bytes)
        self._live_warned = False
        self._src = Source(path, timeout=timeout)
        try:
            self._meta = self._read_meta()
            self.schema_version = self._src.schema_version(self._meta)
        except Exception:
            self._src.close()
            raise

    def close(self) -> None:
        """Close the connection (and remove a private copy, if one was needed)."""
        self._src.close()

    @property
    def sqlite(self) -> Source:
        """The read-only SQLite connection holder (for tests and diagnostics)."""
        return self._src

    @property
    def mode(self) -> str:
        """How the file was opened: ``wal``, ``immutable`` or ``copy``."""
        return str(self._src.mode)

    @property
    def name(self) -> str:
        """The agent's name from its metadata or config, else the file name."""
        return str(
            self._meta.get("adf_name")
            or self.config().get("name")
            or os.path.splitext(os.path.basename(self.path))[0]
        )

    def _q(self, sql: str, params: tuple[Any, ...] = (), *, table: str) -> list[tuple[Any, ...]]:
        return self._src.query(sql, params, table=table)

    def _cols(self, table: str, wanted: Iterable[str]) -> list[str]:
        """Select list for ``wanted`` columns; absent ones become NULL (older layouts)."""
        return [f'"{c}"' if self._src.has(table, c) else f'NULL AS "{c}"' for c in wanted]

    # -- meta and config -----------------------------------------------------------------
    def _read_meta(self) -> dict[str, str]:
        if not self._src.has("adf_meta"):
            return {}
        return {str(k): v for k, v in self._q("SELECT key, value FROM adf_meta", table="adf_meta")}

    def meta(self) -> dict[str, str]:
        """``adf_meta`` as key -> value."""
        return dict(self._meta)

    def config(self) -> dict[str, Any]:
        """``adf_config.config_json`` parsed (empty with a warning when it is not an object)."""
        return self.memo.get(_CONFIG, self._read_config)

    def _read_config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {}
        if self._src.has("adf_config", "config_json"):
            rows = self._q("SELECT config_json FROM adf_config LIMIT 1", table="adf_config")
            if rows and rows[0][0] is not None:
                try:
                    val = parse_json(rows[0][0])
                    if isinstance(val, dict):
                        cfg = val
                    else:
                        raise JSONError("not an object")
                except JSONError:
                    warnings.warn(
                        f"{self.path}: adf_config id=1: config_json is not a JSON object; "
                        "using an empty config (threshold and audit settings take defaults)",
                        AdfWarning,
                        stacklevel=2,
                    )
        return cfg

    def settings(self) -> Settings:
        """The settings of :meth:`config` (ADF_FORMAT.md §10): the compaction threshold
        (``configured``: ``context.compact_threshold``, else the deprecated
        ``model.compact_threshold``, else the runtime's default; None when the number is out of
        range), the effective audit switches, the configured model and provider. The config
        names no context window."""
        return self.memo.get(_SETTINGS, self._read_settings)

    def _read_settings(self) -> Settings:
        cfg = self.config()
        model = cfg.get("model")
        model = model if isinstance(model, dict) else {}
        return Settings(
            compact_threshold=compact_threshold(cfg),
            threshold_source="configured",
            threshold_rule=threshold_rule(cfg),
            audit=audit_settings(cfg),
            model=model.get("model_id") or None,
            provider=model.get("provider") or None,
        )

    # -- the loop ------------------------------------------------------------------------
    def loop(self) -> pd.DataFrame:
        """The live loop in position order (``COALESCE(ord, seq), seq``)."""
        return self.memo.get(_LOOP, self._live_loop).copy(deep=False)

    def _live_loop(self) -> pd.DataFrame:
        b = RowBuilder()
        self._add_live(b)
        self._warn_live(b, stacklevel=5)
        return b.frame()

    def _warn_live(self, b: RowBuilder, *, stacklevel: int) -> None:
        """The warnings about the live rows just added to ``b``: given once per source, by
        :meth:`loop` or :meth:`history`, whichever reads the table first."""
        if not self._live_warned:
            b.warn(f"{self.path}: adf_loop", stacklevel=stacklevel)
            self._live_warned = True
        b.bad_content, b.bad_tokens, b.bad_nulls = [], [], []

    def _add_live(self, b: RowBuilder) -> None:
        b.created_at_stored = self._src.has("adf_loop", "created_at")
        if self._src.has("adf_loop"):
            cols = self._cols(
                "adf_loop", ["seq", "ord", "role", "content_json", "model", "tokens", "created_at"]
            )
            sql = f"SELECT {', '.join(cols)} FROM adf_loop"
            for seq, ord_, role, content, model, tokens, created in self._src.cursor(
                sql, table="adf_loop"
            ):
                if type(seq) is not int:
                    raise MalformedRowError(
                        f"adf_loop seq={seq!r}: seq is not an integer (the table's key); "
                        "cannot place the row",
                        path=self.path,
                    )
                b.add(seq, ord_, role, content, model, tokens, created, "live", None)
        b.flush()

    # -- audit ---------------------------------------------------------------------------
    def audit(self) -> pd.DataFrame:
        """``adf_audit`` metadata, one row per audit row (no blob decompressed)."""
        return self.memo.get(_AUDIT, self._read_audit).copy(deep=False)

    def _read_audit(self) -> pd.DataFrame:
        df = side_frame(self._audit_rows(), schema.AUDIT)
        # Categories as plain ``str`` (like the loop frames'), so Parquet round-trips them.
        cats = pd.Index(sorted(df["source"].dropna().unique().tolist()), dtype="str")
        df["source"] = df["source"].astype(pd.CategoricalDtype(cats))
        return df

    def _audit_rows(self) -> list[tuple[Any, ...]]:
        """``adf_audit`` metadata as SQLite gives it, one tuple per row in :data:`schema.AUDIT`
        column order, by id."""
        return self.memo.get(_AUDIT_ROWS, self._read_audit_rows)

    def _read_audit_rows(self) -> list[tuple[Any, ...]]:
        if not self._src.has("adf_audit"):
            return []
        sel = self._cols(
            "adf_audit",
            ["id", "source", "start_seq", "end_seq", "ref", "entry_count", "size_bytes"],
        )
        sel.append('length("data")' if self._src.has("adf_audit", "data") else "NULL")
        sel += self._cols("adf_audit", ["created_at", "start_at", "end_at"])
        rows = self._q(f"SELECT {', '.join(sel)} FROM adf_audit ORDER BY id", table="adf_audit")
        for r in rows:
            if type(r[0]) is not int:
                raise MalformedRowError(
                    f"adf_audit id={r[0]!r}: id is not an integer (the table's key)",
                    path=self.path,
                )
        return rows

    def _loop_index(self) -> list[tuple[int, int, int | None, int | None, int]]:
        """``(id, stored bytes, start_seq, end_seq, created_at ms or 0)`` of each ``loop``
        audit row, by id: the values :meth:`audit` holds, without building its frame (what
        :meth:`history` needs of it costs a tenth as much this way)."""
        return self.memo.get(_LOOP_INDEX, self._read_loop_index)

    def _read_loop_index(self) -> list[tuple[int, int, int | None, int | None, int]]:
        names = list(schema.AUDIT)
        src, size, lo, hi, at = (
            names.index(c)
            for c in ("source", "compressed_bytes", "start_seq", "end_seq", "created_at")
        )
        return [
            (r[0], side_int(r[size]) or 0, side_int(r[lo]), side_int(r[hi]), side_ms(r[at]) or 0)
            for r in self._audit_rows()
            if side_text(r[src]) == "loop"
        ]

    def _blob(self, audit_id: int) -> tuple[str, bytes]:
        rows = self._q(
            "SELECT source, data FROM adf_audit WHERE id = ?", (int(audit_id),), table="adf_audit"
        )
        if not rows:
            raise AdfError(f"adf_audit has no row with id={audit_id}", path=self.path)
        return rows[0][0], rows[0][1]

    def blob_bytes(self, audit_id: int) -> bytes | Any:
        """The stored (compressed) ``data`` of one audit row, as SQLite gives it."""
        return self._blob(audit_id)[1]

    def decode_audit(self, audit_id: int) -> pd.DataFrame | dict[str, Any] | list[Any]:
        """One audit blob decoded: a loop frame for ``loop`` rows, parsed JSON otherwise."""
        source, data = self._blob(audit_id)
        if source == "loop":
            return self.archive(int(audit_id))
        value: dict[str, Any] | list[Any] = _blobs.decode(
            data, source, limit=self.max_blob_bytes, path=self.path, audit_id=int(audit_id)
        )
        return value

    def archive(self, audit_id: int) -> pd.DataFrame:
        """The rows of one ``loop`` audit blob, decoded once and cached."""
        aid = int(audit_id)

        def build() -> pd.DataFrame:
            _, data = self._blob(aid)
            value = _blobs.decode(
                data, "loop", limit=self.max_blob_bytes, path=self.path, audit_id=aid
            )
            b = RowBuilder()
            b.add_blob(value, aid)
            b.warn(f"{self.path}: adf_audit id={aid}")
            return b.frame()

        return self.memo.get(_BLOB, build, aid).copy(deep=False)

    def storage_report(self) -> StorageReport:
        """Every audit blob decoded once: decoding, shape, counters and recorded ranges."""
        return self.memo.get(
            _STORAGE,
            lambda: check_storage(
                self.audit(),
                self.blob_bytes,
                limit=self.max_blob_bytes,
                path=self.path,
                recorded=self._src.has("adf_audit", "start_seq"),
            ),
        )

    # -- history -------------------------------------------------------------------------
    def history(self, *, errors: str = "warn") -> pd.DataFrame:
        """Audited and live rows, one per seq, in position order, with ``epoch``, ``copies``."""
        if errors not in ("warn", "raise"):
            raise ValueError(f"errors must be one of ['warn', 'raise'], got {errors!r}")
        return self.memo.get(_HISTORY, lambda: self._build_history(errors))[0].copy(deep=False)

    def events(self) -> pd.DataFrame:
        """Compaction and clear events found in the history, in order."""
        self.history()
        return self.memo.get(_HISTORY, lambda: self._build_history("warn"))[1].copy()

    def _build_history(self, errors: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Every loop blob decoded once, flattened into one :class:`RowBuilder` with the live
        rows, then deduplicated and ordered with numpy. Blobs are read and decompressed in
        batches (:meth:`_loop_batches`); the next batch of large blobs is decompressed on a
        second thread while this one is parsed and flattened (Brotli releases the GIL), a batch
        of small ones here (handing it over costs more than it saves); the cyclic garbage
        collector is paused meanwhile (the parsed rows are acyclic and short-lived)."""
        rows = RowBuilder()
        spans: list[tuple[int, int, int]] = []  # (audit id, first row, end row) per blob
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            bad = self._add_loops(rows, spans, errors)
            self._add_live(rows)
            self._warn_live(rows, stacklevel=6)
        finally:
            if gc_was_on:
                gc.enable()
        for msg in bad:
            warnings.warn(
                f"{self.path}: {msg}; its rows are missing from history()",
                AdfWarning,
                stacklevel=3,
            )
        rows.flush()
        tops = _history.blob_tops(rows, spans)
        rewritten = _history.rewritten_blobs(rows)
        positions, copies = _history.history_rows(rows)
        h = rows.frame(positions, consume=True)
        del rows  # its memory stays with the process for the next tables (not trimmed)
        h["copies"] = pd.array(copies, dtype="Int64")
        ev = self._events_from(h, tops, rewritten)
        h = _history.add_epochs(h, ev)
        h["copies"] = h.pop("copies")  # the schema's order, as every format: epoch, copies
        return h, ev

    def _add_loops(
        self, rows: RowBuilder, spans: list[tuple[int, int, int]], errors: str
    ) -> list[str]:
        """Add every loop blob's rows to ``rows`` (and each blob's ``(audit id, first row, end
        row)`` to ``spans``), batch by batch as :meth:`_build_history` says; returns what was
        wrong with each blob left out (``errors="raise"``: raises instead)."""
        bad: list[str] = []
        batches = iter(self._loop_batches())
        pending: deque[Future[list[tuple[int, Any, bool]]]] = deque()
        # decompressed bytes read so far; rows and bytes at the last flush
        size = flushed = flushed_size = 0
        inline = _Inline()
        with ThreadPoolExecutor(max_workers=1) if self.prefetch else inline as pool:

            def fetch_next() -> None:
                batch, stored_bytes = next(batches, ([], 0))
                if batch:
                    stored = self._blobs_of(batch)
                    started = threading.Event()
                    big = stored_bytes >= _THREAD_BLOB_BYTES * len(batch)
                    runner = pool if big else inline
                    pending.append(runner.submit(self._decompress_loops, stored, started))
                    # Wait (without the GIL) until the thread holds the blobs: a thread that
                    # has to take the GIL from this busy one waits up to the switch interval.
                    started.wait()

            fetch_next()
            while pending:
                fut = pending.popleft()
                fetch_next()
                done = fut.result()
                del fut
                done.reverse()  # popped from the end: each blob's bytes go once parsed
                while done:
                    aid, raw, ready = done.pop()
                    try:
                        if not ready:  # left stored by the thread: decompress it here
                            raw = self._decompress_loop(aid, raw)
                        elif isinstance(raw, BaseException):
                            raise raw
                        size += len(raw)
                        value = _blobs.unpack(raw, "loop", path=self.path, audit_id=aid)
                        del raw
                    except BlobError as exc:
                        if errors == "raise":
                            raise
                        bad.append(exc.detail)
                        continue
                    start = rows.n
                    rows.add_blob(value, aid)
                    del value
                    if rows.n - flushed >= _FLUSH_ROWS or size - flushed_size >= _FLUSH_BYTES:
                        rows.flush()
                        flushed, flushed_size = rows.n, size
                    rows.warn(f"{self.path}: adf_audit id={aid}", stacklevel=6)
                    if rows.n > start:
                        spans.append((aid, start, rows.n))
        return bad

    def _loop_batches(self) -> list[tuple[list[int], int]]:
        """The loop audit ids in order, in batches read and decompressed together (one query
        and one hand-over to the decompressing thread each): consecutive ids, up to
        :data:`_BATCH_BLOBS` of them and :data:`_BATCH_BYTES` stored (a larger blob alone);
        with each batch, its stored bytes."""
        out: list[tuple[list[int], int]] = []
        ids: list[int] = []
        total = 0
        for aid, n, _, _, _ in self._loop_index():
            if ids and (len(ids) >= _BATCH_BLOBS or total + n > _BATCH_BYTES):
                out.append((ids, total))
                ids, total = [], 0
            ids.append(aid)
            total += n
        if ids:
            out.append((ids, total))
        return out

    def _blobs_of(self, ids: list[int]) -> list[tuple[int, Any]]:
        """``(audit id, stored data)`` of each id, in the order given."""
        marks = ", ".join("?" * len(ids))
        found = dict(
            self._q(
                f"SELECT id, data FROM adf_audit WHERE id IN ({marks})",
                tuple(ids),
                table="adf_audit",
            )
        )
        out = []
        for aid in ids:
            if aid not in found:
                raise AdfError(f"adf_audit has no row with id={aid}", path=self.path)
            out.append((aid, found[aid]))
        return out

    def _decompress_loops(
        self, stored: list[tuple[int, Any]], started: threading.Event
    ) -> list[tuple[int, Any, bool]]:
        """``(audit id, bytes or the error that stopped them, True)`` per blob, decompressed in
        order until :data:`_BATCH_RAW` bytes are out; the rest ``(audit id, stored data,
        False)``, left for the reader (so a batch of small blobs that expand a lot holds no
        more than about one blob's cap beyond that)."""
        started.set()
        out: list[tuple[int, Any, bool]] = []
        total = 0
        for aid, data in stored:
            if total > _BATCH_RAW:
                out.append((aid, data, False))
                continue
            try:
                raw = self._decompress_loop(aid, data)
            except Exception as exc:  # noqa: BLE001 - raised at this blob's turn
                out.append((aid, exc, True))
                continue
            total += len(raw)
            out.append((aid, raw, True))
        stored.clear()  # the stored bytes, no longer needed
        return out

    def _decompress_loop(self, audit_id: int, data: Any) -> bytes:
        return _blobs.decompress(data, limit=self.max_blob_bytes, path=self.path, audit_id=audit_id)

    def _events_from(
        self, h: pd.DataFrame, tops: dict[int, int | None], rewritten: set[int]
    ) -> pd.DataFrame:
        """``tops``: loop audit id -> highest seq of every blob that decoded to at least a
        row."""
        index = self._loop_index()
        times = {aid: ms for aid, _, _, _, ms in index}
        tops = dict(tops)
        # An undecodable blob still marks an event; its range comes from the metadata.
        for aid, _, lo, hi, _ in index:
            if aid not in tops:
                tops[aid] = max((x for x in (lo, hi) if x is not None), default=None)
        return _history.events(h, tops, times, rewritten)

    def highest_seq(self) -> int | None:
        """The highest ``adf_loop`` seq ever assigned (``sqlite_sequence``), if recorded."""
        if not self._src.has("sqlite_sequence"):
            return None
        rows = self._q(
            "SELECT seq FROM sqlite_sequence WHERE name = 'adf_loop'", table="sqlite_sequence"
        )
        return int(rows[0][0]) if rows and isinstance(rows[0][0], int) else None

    # -- side tables ---------------------------------------------------------------------
    def _side(self, name: str) -> pd.DataFrame:
        table, columns, order, iso = _SIDE[name]
        rows: list[tuple[Any, ...]] = []
        if self._src.has(table):
            sel = self._cols(table, columns)
            ob = f' ORDER BY "{order}"' if self._src.has(table, order) else ""
            rows = self._q(f"SELECT {', '.join(sel)} FROM {table}{ob}", table=table)
        return side_frame(rows, columns, iso=iso)

    def inbox(self) -> pd.DataFrame:
        """``adf_inbox``, oldest first."""
        return self._side("inbox")

    def outbox(self) -> pd.DataFrame:
        """``adf_outbox``, oldest first."""
        return self._side("outbox")

    def files(self) -> pd.DataFrame:
        """``adf_files`` metadata, by path."""
        return self._side("files")

    def logs(self) -> pd.DataFrame:
        """``adf_logs``, oldest first."""
        return self._side("logs")

    def tasks(self) -> pd.DataFrame:
        """``adf_tasks``, oldest first."""
        return self._side("tasks")

    def timers(self) -> pd.DataFrame:
        """``adf_timers``."""
        return self._side("timers")

    def read_file(self, path: str) -> bytes:
        """The content of one ``adf_files`` row."""
        rows = []
        if self._src.has("adf_files"):
            rows = self._q(
                "SELECT content FROM adf_files WHERE path = ?", (path,), table="adf_files"
            )
        if not rows:
            raise AdfError(f"adf_files has no file at path {path!r}", path=self.path)
        v = rows[0][0]
        return v.encode("utf-8") if isinstance(v, str) else bytes(v or b"")

    # -- summary -------------------------------------------------------------------------
    def info(self, *, sizes: bool = True) -> Info:
        """COUNT and MIN/MAX queries only, never a blob (see ``AgentFile.info``). What only a
        transcript has (a session id, subagents, event counts...) is None."""
        src = self._src
        meta = self.meta()
        cfg = self.config()
        settings = self.settings()
        out: dict[str, Any] = {
            "handle": meta.get("adf_handle") or cfg.get("handle"),
            "schema_version": self.schema_version,
            "adf_version": meta.get("adf_version") or cfg.get("adf_version"),
            "file_bytes": os.path.getsize(src.path),
            "open_mode": src.mode,
            "clean_close": meta.get("adf_clean_close"),
            "sidecars": [s for s in ("-wal", "-shm") if os.path.exists(str(src.path) + s)],
        }
        ckpt = meta.get("adf_runtime_turn_checkpoint")
        status = None
        if ckpt:
            try:
                status = parse_json(ckpt).get("status")
            except (JSONError, AttributeError):
                status = "unreadable"
        out["turn_checkpoint"] = status
        out["live"] = not bool(meta.get("adf_clean_close")) or bool(out["sidecars"])
        out.update(self._info_model(settings))
        out.update(self._info_loop())
        out.update(self._info_audit(sizes))
        out.update(self._info_side_tables())
        return info_record(self, settings, **out)

    def _info_model(self, settings: Settings) -> dict[str, Any]:
        """``model`` and ``model_source``: the configured model, else the latest live call's."""
        src = self._src
        out: dict[str, Any] = {}
        out["model"] = settings.model
        out["model_source"] = "config" if out["model"] else None
        if not out["model"] and src.has("adf_loop", "model"):
            last = src.query(
                "SELECT model FROM adf_loop WHERE role = 'assistant' AND model IS NOT NULL "
                "ORDER BY seq DESC LIMIT 1",
                table="adf_loop",
            )
            if last and isinstance(last[0][0], str):
                out["model"], out["model_source"] = last[0][0], "loop"
        return out

    def _info_loop(self) -> dict[str, Any]:
        """``loop_rows``, ``loop_seq_range``, ``highest_seq``, ``first_live_at`` and
        ``last_live_at``."""
        src = self._src
        out: dict[str, Any] = {}
        n, lo, hi, t0, t1 = 0, None, None, None, None
        if src.has("adf_loop"):
            n, lo, hi = src.query(
                "SELECT COUNT(*), MIN(seq), MAX(seq) FROM adf_loop", table="adf_loop"
            )[0]
            if src.has("adf_loop", "created_at"):
                # The first and last stamped rows by seq, found through the rowid: O(log n) and one
                # row read each, where MIN/MAX(created_at) would read every row's overflow pages.
                # The runtime stamps rows as it appends them, so these are the earliest and latest
                # times unless the clock went backwards.
                sql = (
                    "SELECT created_at FROM adf_loop WHERE created_at IS NOT NULL "
                    "AND created_at != 0 ORDER BY seq {} LIMIT 1"
                )
                first = src.query(sql.format("ASC"), table="adf_loop")
                last = src.query(sql.format("DESC"), table="adf_loop")
                t0 = first[0][0] if first else None
                t1 = last[0][0] if last else None
        out["loop_rows"] = n
        out["loop_seq_range"] = (lo, hi)
        out["highest_seq"] = self.highest_seq()
        out["first_live_at"] = _iso(t0)
        out["last_live_at"] = _iso(t1)
        return out

    def _info_audit(self, sizes: bool) -> dict[str, Any]:
        """``audit_rows`` per source, ``first_archived_at``, and with ``sizes`` the sums of
        ``audited_loop_entries``, ``audit_json_chars`` and ``audit_compressed_bytes``."""
        src = self._src
        out: dict[str, Any] = {}
        by_source: dict[str, int] = {}
        if src.has("adf_audit"):
            for source, cnt in src.query(
                "SELECT source, COUNT(*) FROM adf_audit GROUP BY source", table="adf_audit"
            ):
                by_source[str(source)] = int(cnt)
        out["audit_rows"] = by_source
        first_archive = (
            src.query(
                "SELECT created_at FROM adf_audit WHERE source = 'loop' ORDER BY id LIMIT 1",
                table="adf_audit",
            )
            if by_source.get("loop") and src.has("adf_audit", "created_at")
            else []
        )
        out["first_archived_at"] = _iso(first_archive[0][0]) if first_archive else None
        out["audited_loop_entries"] = out["audit_json_chars"] = out["audit_compressed_bytes"] = None
        if sizes:
            entries = size = packed = 0
            if src.has("adf_audit"):
                for source, ent, sz, pk in src.query(
                    "SELECT source, SUM(entry_count), SUM(size_bytes), SUM(length(data)) "
                    "FROM adf_audit GROUP BY source",
                    table="adf_audit",
                ):
                    if source == "loop":
                        entries += int(ent or 0)
                    size += int(sz or 0)
                    packed += int(pk or 0)
            out["audited_loop_entries"] = entries
            out["audit_json_chars"] = size
            out["audit_compressed_bytes"] = packed
        return out

    def _info_side_tables(self) -> dict[str, Any]:
        """Rows of each side table (0 for a table the file lacks)."""
        src = self._src
        out: dict[str, Any] = {}
        for table, key in (
            ("adf_inbox", "inbox_rows"),
            ("adf_outbox", "outbox_rows"),
            ("adf_files", "files"),
            ("adf_logs", "log_rows"),
            ("adf_tasks", "tasks"),
            ("adf_timers", "timers"),
        ):
            out[key] = (
                int(src.query(f"SELECT COUNT(*) FROM {table}", table=table)[0][0])
                if src.has(table)
                else 0
            )
        return out


def _iso(ms: Any) -> str | None:
    # Beyond ~year 2262 pandas cannot represent the instant; a hostile file may hold anything.
    if not isinstance(ms, int) or ms <= 0 or ms >= (2**63 - 1) // 1_000_000:
        return None
    return str(pd.Timestamp(ms, unit="ms", tz="UTC").isoformat())
