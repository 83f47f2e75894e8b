"""The only place a sqlite3 connection to an agent file is made.

Opening follows ADF_FORMAT.md §1.3 ("reading without leaving a trace"):

* ``-wal`` and ``-shm`` both present (agent running, or crashed): ``mode=ro``, which uses the
  sidecars and sees every commit, including those only in the WAL. Nothing is created.
* no sidecars: every commit is in the main file, so ``immutable=1`` reads everything and creates
  nothing (``mode=ro`` would create ``-wal``/``-shm`` on a WAL-mode file, and fails in a read-only
  folder). The sidecars are checked again after the metadata is read; if a runtime started in
  between, the file is reopened the ``mode=ro`` way.
* only one sidecar, or a hot rollback journal: the file and its sidecars are copied with the
  backup-free byte copy into a private temporary folder and the copy is opened. The input is
  never touched.

Every connection gets ``PRAGMA query_only = ON``. ``adf_identity`` is never selected: tables are
read from an allowlist only.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sqlite3
import tempfile
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from ._errors import (
    AdfError,
    CorruptFileError,
    FileBusyError,
    NewerSchemaWarning,
    NotAdfError,
    NotSQLiteError,
)

#: Highest storage schema this version of adfkit knows (``adf_meta.adf_schema_version``).
KNOWN_SCHEMA = 28

#: Tables adfkit may read. ``adf_identity`` (key material) is deliberately absent.
ALLOWED_TABLES = frozenset(
    {
        "adf_meta",
        "adf_config",
        "adf_loop",
        "adf_inbox",
        "adf_outbox",
        "adf_timers",
        "adf_files",
        "adf_audit",
        "adf_attestations",
        "adf_tasks",
        "adf_logs",
        "sqlite_sequence",
    }
)

SQLITE_HEADER = b"SQLite format 3\x00"


def _uri(path: pathlib.Path, query: str) -> str:
    # as_uri() percent-encodes '?' and '#', so odd file names stay inside the path.
    return f"{path.as_uri()}?{query}"


def _sidecars(path: pathlib.Path) -> tuple[bool, bool, bool]:
    s = str(path)
    return (
        os.path.exists(s + "-wal"),
        os.path.exists(s + "-shm"),
        os.path.exists(s + "-journal"),
    )


class Source:
    """A read-only connection plus what was learnt about the file's layout."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = pathlib.Path(path).expanduser().resolve()
        self.name = str(path)
        self.timeout = timeout
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self.con: sqlite3.Connection | None = None
        self._check_header()
        self.mode = self._connect()
        self.tables = self._tables()
        if "adf_loop" not in self.tables and "adf_meta" not in self.tables:
            self.close()
            raise NotAdfError(
                "SQLite database without ADF tables (no adf_meta, no adf_loop); "
                "is this an agent file?",
                path=self.name,
            )
        self.columns: dict[str, list[str]] = {
            t: self._table_columns(t) for t in self.tables if t in ALLOWED_TABLES
        }
        if self.mode == "immutable" and any(_sidecars(self.path)[:2]):
            # A runtime opened the file while we looked: re-open the WAL-aware way.
            self.close()
            self.mode = self._connect()
            self.tables = self._tables()
            self.columns = {t: self._table_columns(t) for t in self.tables if t in ALLOWED_TABLES}

    # -- opening ---------------------------------------------------------------------------
    def _check_header(self) -> None:
        if not self.path.exists():
            raise AdfError("no such file", path=self.name)
        if self.path.is_dir():
            raise AdfError("is a directory, not an agent file", path=self.name)
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(100)
        except OSError as exc:
            raise AdfError(f"cannot read the file: {exc.strerror}", path=self.name) from None
        if not head:
            raise NotSQLiteError("empty file (0 bytes), not a SQLite database", path=self.name)
        if not head.startswith(SQLITE_HEADER):
            raise NotSQLiteError(
                "not a SQLite database (the first bytes are not the SQLite header)",
                path=self.name,
            )
        if len(head) < 100:
            raise CorruptFileError("truncated SQLite header", path=self.name)

    def _connect(self) -> str:
        wal, shm, journal = _sidecars(self.path)
        if wal and shm:
            mode, target, query = "ro", self.path, "mode=ro"
        elif not wal and not shm and not journal:
            mode, target, query = "immutable", self.path, "immutable=1"
        else:
            mode, target, query = "copy", self._private_copy(), "mode=rw"
        try:
            con = sqlite3.connect(
                _uri(target, query), uri=True, timeout=self.timeout, check_same_thread=False
            )
            con.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            raise self.wrap(exc) from None
        self.con = con
        return mode

    def _private_copy(self) -> pathlib.Path:
        """Copy the file and whatever sidecars exist into a private folder; open that."""
        self._tmpdir = tempfile.TemporaryDirectory(prefix="adfkit-")
        dst = pathlib.Path(self._tmpdir.name) / "agent.adf"
        for suffix in ("", "-wal", "-journal"):
            src = pathlib.Path(str(self.path) + suffix)
            if src.exists():
                shutil.copyfile(src, str(dst) + suffix)
        return dst

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    # -- errors ----------------------------------------------------------------------------
    def wrap(self, exc: sqlite3.Error, where: str = "") -> AdfError:
        msg = str(exc)
        at = f" (reading {where})" if where else ""
        low = msg.lower()
        if "file is not a database" in low:
            return NotSQLiteError(f"not a SQLite database{at}: {msg}", path=self.name)
        if "malformed" in low or "corrupt" in low or "disk i/o" in low:
            return CorruptFileError(f"damaged SQLite file{at}: {msg}", path=self.name)
        if "locked" in low or "busy" in low:
            return FileBusyError(
                f"locked by a writer for more than {self.timeout:g} s{at}: {msg}", path=self.name
            )
        return AdfError(f"SQLite error{at}: {msg}", path=self.name)

    # -- reading ---------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = (), *, table: str = "") -> list[tuple]:
        if table and table not in ALLOWED_TABLES:  # pragma: no cover - programming error
            raise ValueError(f"table {table!r} is not on the read allowlist")
        assert self.con is not None, "source is closed"
        try:
            return self.con.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self.wrap(exc, table) from None

    def cursor(self, sql: str, params: Sequence[Any] = (), *, table: str = "") -> Iterable[tuple]:
        assert self.con is not None, "source is closed"
        try:
            return self.con.execute(sql, params)
        except sqlite3.Error as exc:
            raise self.wrap(exc, table) from None

    def _tables(self) -> set[str]:
        rows = self.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return {r[0] for r in rows}

    def _table_columns(self, table: str) -> list[str]:
        return [r[1] for r in self.query(f'PRAGMA table_info("{table}")', table=table)]

    def has(self, table: str, column: str | None = None) -> bool:
        cols = self.columns.get(table)
        if cols is None:
            return False
        return column is None or column in cols

    def schema_version(self, meta: dict[str, str]) -> int:
        raw = meta.get("adf_schema_version", meta.get("schema_version"))
        if raw is None:
            return 0
        try:
            v = int(str(raw).strip())
        except ValueError:
            warnings.warn(
                f"{self.name}: adf_meta schema version {raw!r} is not a number; treated as 0",
                NewerSchemaWarning,
                stacklevel=4,
            )
            return 0
        if v > KNOWN_SCHEMA:
            warnings.warn(
                f"{self.name}: schema version {v} is newer than adfkit knows ({KNOWN_SCHEMA}); "
                "known columns are read, unknown ones kept as they are",
                NewerSchemaWarning,
                stacklevel=4,
            )
        return v
