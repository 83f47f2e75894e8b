"""``open_adf`` and ``AgentFile``: one read-only handle per agent file, its tables as methods."""

from __future__ import annotations

import gc
import os
import threading
import warnings
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa

from . import _audit, _history
from ._context import ContextMixin
from ._errors import AdfError, AdfWarning, BlobError, MalformedRowError
from ._frames import RowBuilder, records_frame
from ._observe import ObserveMixin
from ._open import Source
from ._replay import ReplayMixin
from ._tokens import UsageMixin

DEFAULT_THRESHOLD = 100_000


def open_adf(
    path: str | os.PathLike[str],
    *,
    max_blob_bytes: int = _audit.DEFAULT_MAX_BLOB_BYTES,
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
    return AgentFile(path, max_blob_bytes=max_blob_bytes, timeout=timeout)


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


class AgentFile(ReplayMixin, UsageMixin, ObserveMixin, ContextMixin):
    """A read-only view of one agent file. Tables are methods returning DataFrames.

    Use :func:`open_adf` to make one; close it (or use ``with``) to release the file.
    Results of expensive methods (``history()``, decoded blobs) are cached on the handle.
    """

    #: ``history()`` decodes the next blob on a second thread while this one flattens rows;
    #: ``load_fleet``'s process engine turns it off on its handles (every core already runs
    #: a loader there, so the thread would only add switching).
    _prefetch: bool = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_blob_bytes: int = _audit.DEFAULT_MAX_BLOB_BYTES,
        timeout: float = 5.0,
    ) -> None:
        self.path = os.fspath(path)
        self.max_blob_bytes = int(max_blob_bytes)
        self._src = Source(path, timeout=timeout)
        self._cache: dict[Any, Any] = {}
        try:
            self._meta = self._read_meta()
            self.schema_version = self._src.schema_version(self._meta)
        except Exception:
            self._src.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (and remove a private copy, if one was needed)."""
        self._src.close()

    def __enter__(self) -> AgentFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<AgentFile {self.path!r} schema={self.schema_version} mode={self._src.mode}>"

    @property
    def name(self) -> str:
        """The agent's name from its metadata or config, else the file name."""
        return (
            self._meta.get("adf_name")
            or self.config().get("name")
            or os.path.splitext(os.path.basename(self.path))[0]
        )

    def _q(self, sql: str, params: tuple = (), *, table: str) -> list[tuple]:
        return self._src.query(sql, params, table=table)

    def _cols(self, table: str, wanted: list[str]) -> list[str]:
        """Select list for ``wanted`` columns; absent ones become NULL (older layouts)."""
        return [f'"{c}"' if self._src.has(table, c) else f'NULL AS "{c}"' for c in wanted]

    # -- meta and config -------------------------------------------------------------------
    def _read_meta(self) -> dict[str, str]:
        if not self._src.has("adf_meta"):
            return {}
        return {str(k): v for k, v in self._q("SELECT key, value FROM adf_meta", table="adf_meta")}

    def meta(self) -> dict[str, str]:
        """``adf_meta`` as a dict of key -> value (text).

        Examples
        --------
        >>> import adfkit
        >>> adfkit.open_adf("sample_agents/long-runner.adf").meta()["adf_version"]
        '0.2'
        """
        return dict(self._meta)

    def config(self) -> dict[str, Any]:
        """The agent's configuration (``adf_config.config_json``) as a dict.

        Invalid JSON gives an empty dict and an :class:`adfkit.AdfWarning`.

        Examples
        --------
        >>> import adfkit
        >>> adfkit.open_adf("sample_agents/long-runner.adf").config()["context"]["audit"]["loop"]
        True
        """
        if "config" in self._cache:
            return self._cache["config"]
        cfg: dict[str, Any] = {}
        if self._src.has("adf_config", "config_json"):
            rows = self._q("SELECT config_json FROM adf_config LIMIT 1", table="adf_config")
            if rows and rows[0][0] is not None:
                try:
                    val = orjson.loads(rows[0][0])
                    if isinstance(val, dict):
                        cfg = val
                    else:
                        raise orjson.JSONDecodeError("not an object", "", 0)
                except orjson.JSONDecodeError:
                    warnings.warn(
                        f"{self.path}: adf_config id=1: config_json is not a JSON object; "
                        "using an empty config (threshold and audit settings take defaults)",
                        AdfWarning,
                        stacklevel=2,
                    )
        self._cache["config"] = cfg
        return cfg

    def compact_threshold(self) -> int:
        """The compaction threshold in force now (``context.compact_threshold``, else the
        deprecated ``model.compact_threshold``, else 100000)."""
        cfg = self.config()
        for sect in ("context", "model"):
            v = (
                (cfg.get(sect) or {}).get("compact_threshold")
                if isinstance(cfg.get(sect), dict)
                else None
            )
            if isinstance(v, int | float) and not isinstance(v, bool):
                return int(v)
        return DEFAULT_THRESHOLD

    def audit_settings(self) -> dict[str, bool]:
        """Effective audit switches: ``context.audit`` if present, else ``audit``, else all off."""
        cfg = self.config()
        ctx = cfg.get("context") if isinstance(cfg.get("context"), dict) else {}
        obj = ctx.get("audit") if isinstance(ctx.get("audit"), dict) else cfg.get("audit")
        obj = obj if isinstance(obj, dict) else {}
        return {k: obj.get(k) is True for k in ("loop", "inbox", "outbox", "files")}

    # -- the loop ----------------------------------------------------------------------------
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
        if "loop" not in self._cache:
            self._cache["loop"] = self._live_loop()
        return self._cache["loop"].copy(deep=False)

    def _live_loop(self) -> pd.DataFrame:
        b = RowBuilder()
        self._add_live(b)
        b.warn(f"{self.path}: adf_loop")
        return b.frame()

    def _add_live(self, b: RowBuilder) -> None:
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
        from ._tables import blocks_frame

        src = self.history() if history else self.loop()
        return blocks_frame(src)

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
        from ._tables import tool_calls_frame

        return tool_calls_frame(
            self.blocks(history=history), self.history() if history else self.loop()
        )

    # -- audit -------------------------------------------------------------------------------
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
        if "audit" in self._cache:
            return self._cache["audit"].copy(deep=False)
        cols = {
            "id": "Int64",
            "source": "string",
            "start_seq": "Int64",
            "end_seq": "Int64",
            "ref": "string",
            "entry_count": "Int64",
            "size_bytes": "Int64",
            "compressed_bytes": "Int64",
            "created_at": "ms",
            "start_at": "ms",
            "end_at": "ms",
        }
        rows: list[tuple] = []
        if self._src.has("adf_audit"):
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
        df = records_frame((dict(zip(cols, r, strict=True)) for r in rows), cols)
        # Categories as plain ``str`` (like the loop frames'), so Parquet round-trips them.
        cats = pd.Index(sorted(df["source"].dropna().unique().tolist()), dtype="str")
        df["source"] = df["source"].astype(pd.CategoricalDtype(cats))
        self._cache["audit"] = df
        return df.copy(deep=False)

    def _blob(self, audit_id: int) -> tuple[str, bytes]:
        rows = self._q(
            "SELECT source, data FROM adf_audit WHERE id = ?", (int(audit_id),), table="adf_audit"
        )
        if not rows:
            raise AdfError(f"adf_audit has no row with id={audit_id}", path=self.path)
        return rows[0][0], rows[0][1]

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
        source, data = self._blob(audit_id)
        if source == "loop":
            return self._loop_blob(int(audit_id), data).copy(deep=False)
        return _audit.decode(
            data, source, limit=self.max_blob_bytes, path=self.path, audit_id=int(audit_id)
        )

    def _loop_blob(self, audit_id: int, data: bytes | None = None) -> pd.DataFrame:
        key = ("blob", audit_id)
        if key not in self._cache:
            if data is None:
                _, data = self._blob(audit_id)
            value = _audit.decode(
                data, "loop", limit=self.max_blob_bytes, path=self.path, audit_id=audit_id
            )
            b = RowBuilder()
            b.add_blob(value, audit_id)
            b.warn(f"{self.path}: adf_audit id={audit_id}")
            self._cache[key] = b.frame()
        return self._cache[key]

    # -- history -----------------------------------------------------------------------------
    def _loop_audit_ids(self) -> list[int]:
        a = self.audit()
        return [int(i) for i in a.loc[a["source"] == "loop", "id"]]

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
        if errors not in ("warn", "raise"):
            raise ValueError(f"errors must be one of ['warn', 'raise'], got {errors!r}")
        if "history" not in self._cache:
            self._cache["history"], self._cache["events"] = self._build_history(errors)
        return self._cache["history"].copy(deep=False)

    def _build_history(self, errors: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Every loop blob decoded once, flattened into one :class:`RowBuilder` with the live
        rows, then deduplicated and ordered with numpy. The next blob is decompressed on a
        second thread while this one is parsed and flattened (Brotli releases the GIL); the
        cyclic garbage collector is paused meanwhile (the parsed rows are acyclic and
        short-lived)."""
        self.loop()  # the live rows' warnings are given (once) by loop()
        rows = RowBuilder()
        spans: list[tuple[int, int, int]] = []  # (audit id, first row, end row) per blob
        bad: list[str] = []
        ids = iter(self._loop_audit_ids())
        pending: deque[tuple[int, Future[Any]]] = deque()
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            with ThreadPoolExecutor(max_workers=1) if self._prefetch else _Inline() as pool:

                def fetch_next() -> None:
                    aid = next(ids, None)
                    if aid is not None:
                        _, data = self._blob(aid)
                        started = threading.Event()
                        pending.append(
                            (aid, pool.submit(self._decompress_loop, aid, data, started))
                        )
                        # Wait (without the GIL) until the thread holds the blob: a thread that
                        # has to take the GIL from this busy one waits up to the switch interval.
                        started.wait()

                fetch_next()
                while pending:
                    aid, fut = pending.popleft()
                    fetch_next()
                    try:
                        value = _audit.unpack(fut.result(), "loop", path=self.path, audit_id=aid)
                    except BlobError as exc:
                        if errors == "raise":
                            raise
                        bad.append(exc.detail)
                        continue
                    finally:
                        del fut
                    start = rows.n
                    rows.add_blob(value, aid)
                    del value
                    rows.flush()
                    rows.warn(f"{self.path}: adf_audit id={aid}", stacklevel=5)
                    if rows.n > start:
                        spans.append((aid, start, rows.n))
            self._add_live(rows)
            rows.bad_content, rows.bad_tokens = [], []
        finally:
            if gc_was_on:
                gc.enable()
        for msg in bad:
            warnings.warn(
                f"{self.path}: {msg}; its rows are missing from history()",
                AdfWarning,
                stacklevel=3,
            )
        blob_seqs = {aid: rows.seqs(lo, hi) for aid, lo, hi in spans}
        positions, copies = _history.history_rows(rows)
        h = rows.frame(positions, consume=True)
        del rows
        pa.default_memory_pool().release_unused()
        h["copies"] = pd.array(copies, dtype="Int64")
        ev = self._events_from(h, blob_seqs)
        return _history.add_epochs(h, ev), ev

    def _decompress_loop(self, audit_id: int, data: Any, started: threading.Event) -> bytes:
        started.set()
        return _audit.decompress(data, limit=self.max_blob_bytes, path=self.path, audit_id=audit_id)

    def _events_from(self, h: pd.DataFrame, blob_seqs: dict[int, list[int]]) -> pd.DataFrame:
        """``blob_seqs``: loop audit id -> seqs of every blob that decoded to at least a row."""
        a = self.audit()
        times = {
            int(i): int(t.value // 1_000_000) if not pd.isna(t) else 0
            for i, t in zip(a["id"], a["created_at"], strict=True)
        }
        blob_seqs = dict(blob_seqs)
        loop_ids = set(self._loop_audit_ids())
        # An undecodable blob still marks an event; its range comes from the metadata.
        for aid, lo, hi in zip(a["id"], a["start_seq"], a["end_seq"], strict=True):
            if int(aid) in loop_ids and int(aid) not in blob_seqs:
                blob_seqs[int(aid)] = [int(x) for x in (lo, hi) if not pd.isna(x)]
        return _history.events(h, blob_seqs, times)

    def events(self) -> pd.DataFrame:
        """Compaction and clear events found in the history. One row per event, in order.

        Columns: ``event`` (``compaction`` or ``clear``), ``summary_seq`` (Int64), ``boundary_seq``
        (Int64: rows with a larger seq were written after the event), ``audit_ids`` (tuple of
        the ``loop`` audit rows written for it; empty when the history was discarded).

        Examples
        --------
        >>> import adfkit
        >>> ev = adfkit.open_adf("sample_agents/long-runner.adf").events()
        >>> bool((ev["event"] == "compaction").sum() >= 4)
        True
        """
        self.history()
        return self._cache["events"].copy()

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
        h = self.history()
        high = int(h["seq"].max()) if len(h) else 0
        high = max(high, self.highest_seq() or 0)
        return _history.gaps(h["seq"], high)

    def highest_seq(self) -> int | None:
        """The highest ``adf_loop`` seq ever assigned (``sqlite_sequence``), if recorded."""
        if not self._src.has("sqlite_sequence"):
            return None
        rows = self._q(
            "SELECT seq FROM sqlite_sequence WHERE name = 'adf_loop'", table="sqlite_sequence"
        )
        return int(rows[0][0]) if rows and isinstance(rows[0][0], int) else None

    # -- side tables -----------------------------------------------------------------------
    def _side(self, table: str, columns: dict[str, str], order: str) -> pd.DataFrame:
        rows: list[tuple] = []
        if self._src.has(table):
            sel = self._cols(table, list(columns))
            ob = f' ORDER BY "{order}"' if self._src.has(table, order) else ""
            rows = self._q(f"SELECT {', '.join(sel)} FROM {table}{ob}", table=table)
        return records_frame((dict(zip(columns, r, strict=True)) for r in rows), columns)

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
        s = "string"
        cols = {
            "id": s,
            "message_id": s,
            "from": s,
            "to": s,
            "thread_id": s,
            "subject": s,
            "content": s,
            "content_type": s,
            "source": s,
            "status": s,
            "sent_at": "ms",
            "received_at": "ms",
        }
        return self._side("adf_inbox", cols, "received_at")

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
        s = "string"
        cols = {
            "id": s,
            "message_id": s,
            "from": s,
            "to": s,
            "address": s,
            "thread_id": s,
            "subject": s,
            "content": s,
            "content_type": s,
            "status": s,
            "status_code": "Int64",
            "created_at": "ms",
            "delivered_at": "ms",
        }
        return self._side("adf_outbox", cols, "created_at")

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
        s = "string"
        cols = {
            "path": s,
            "mime_type": s,
            "protection": s,
            "size": "Int64",
            "authorized": "boolean",
            "created_at": "iso",
            "updated_at": "iso",
        }
        return self._side("adf_files", cols, "path")

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
        rows = []
        if self._src.has("adf_files"):
            rows = self._q(
                "SELECT content FROM adf_files WHERE path = ?", (path,), table="adf_files"
            )
        if not rows:
            raise AdfError(f"adf_files has no file at path {path!r}", path=self.path)
        v = rows[0][0]
        return v.encode("utf-8") if isinstance(v, str) else bytes(v or b"")

    def read_text(self, path: str) -> str:
        """The content of one stored file decoded as UTF-8 (invalid bytes replaced)."""
        return self.read_file(path).decode("utf-8", "replace")

    def logs(self) -> pd.DataFrame:
        """Runtime log entries. One row per ``adf_logs`` row, oldest first.

        Columns: ``id`` (Int64), ``level``, ``origin``, ``event``, ``target``, ``message``,
        ``data`` (string), ``created_at`` (datetime64[ms, UTC]).
        """
        s = "string"
        cols = {
            "id": "Int64",
            "level": s,
            "origin": s,
            "event": s,
            "target": s,
            "message": s,
            "data": s,
            "created_at": "ms",
        }
        return self._side("adf_logs", cols, "id")

    def tasks(self) -> pd.DataFrame:
        """Tool tasks. One row per ``adf_tasks`` row, oldest first.

        Columns: ``id``, ``tool``, ``args``, ``status``, ``result``, ``error``, ``origin``
        (string), ``requires_authorization`` (boolean), ``created_at``, ``completed_at``.
        """
        s = "string"
        cols = {
            "id": s,
            "tool": s,
            "args": s,
            "status": s,
            "result": s,
            "error": s,
            "origin": s,
            "requires_authorization": "boolean",
            "created_at": "ms",
            "completed_at": "ms",
        }
        return self._side("adf_tasks", cols, "created_at")

    def timers(self) -> pd.DataFrame:
        """Timers. One row per ``adf_timers`` row.

        Columns: ``id`` (Int64), ``schedule_json``, ``payload``, ``scope``, ``lambda`` (string),
        ``run_count`` (Int64), ``expired`` (boolean), ``next_wake_at``, ``created_at``,
        ``last_fired_at`` (datetime64[ms, UTC]).
        """
        s = "string"
        cols = {
            "id": "Int64",
            "schedule_json": s,
            "payload": s,
            "scope": s,
            "lambda": s,
            "run_count": "Int64",
            "expired": "boolean",
            "next_wake_at": "ms",
            "created_at": "ms",
            "last_fired_at": "ms",
        }
        return self._side("adf_timers", cols, "id")

    # -- summary ---------------------------------------------------------------------------
    def info(self, *, sizes: bool = False) -> dict[str, Any]:
        """A cheap summary: counts, settings and liveness. No blob is decompressed.

        Its cost does not grow with the audit archive (audit rows are counted from an index).
        ``first_live_at``/``last_live_at`` (ISO text) are the ``created_at`` of the first and
        last live rows by seq that carry one: the earliest and latest times unless the clock
        went backwards (found through the key, not by reading every row).

        Parameters
        ----------
        sizes : also fill ``audited_loop_entries``, ``audit_json_chars`` and
            ``audit_compressed_bytes`` (None otherwise). This reads one page per audit row, so
            it grows with the archive (about 1 ms per 1,000 audit rows); ``adfkit info`` does it.

        Examples
        --------
        >>> import adfkit
        >>> info = adfkit.open_adf("sample_agents/long-runner.adf").info()
        >>> info["audit_rows"]["loop"] >= 4
        True
        >>> info["audited_loop_entries"] is None
        True
        >>> agent = adfkit.open_adf("sample_agents/long-runner.adf")
        >>> agent.info(sizes=True)["audited_loop_entries"] > 0
        True
        """
        from ._tables import info

        return info(self, sizes=sizes)
