"""The only place a sqlite3 connection to an agent file is made.

Opening follows ADF_FORMAT.md §1.3 ("reading without leaving a trace"):

* ``-wal`` and ``-shm`` both present (agent running, or crashed): ``mode=ro&readonly_shm=1``,
  which uses the sidecars and sees every commit, including those only in the WAL. Nothing is
  created, and the ``-shm`` is mapped read-only, so not even the WAL read marks change (a plain
  ``mode=ro`` reader writes them). If SQLite cannot read that way (a stale or damaged ``-shm``
  with no runtime attached), the private copy below is used instead.
* no sidecars: every commit is in the main file, so ``immutable=1`` reads everything and creates
  nothing (``mode=ro`` would create ``-wal``/``-shm`` on a WAL-mode file, and fails in a read-only
  folder). The sidecars are checked again after the metadata is read; if a runtime started in
  between, the file is reopened the ``mode=ro`` way.
* only one sidecar, or a rollback journal (hot, or a writer mid-transaction): the file and its
  ``-wal``/``-journal`` are copied byte for byte into a private temporary folder and the copy is
  opened; SQLite then replays the WAL or rolls the journal back *in the copy*, which gives the
  last committed state. The input is never touched.

Only regular files are opened or copied. A sidecar that is a pipe, socket, device, directory or
symbolic link is refused with :class:`SidecarError` before SQLite sees it (a FIFO ``-shm`` would
block the open forever; a ``-wal`` linked to ``/dev/zero`` would never finish copying). A
symbolic link is refused even when it points at a regular file: the runtime never makes one, and
SQLite would follow it anywhere (another agent's WAL, a device). The input itself may be a
symbolic link; its sidecars are then looked up beside the file it resolves to, as SQLite does.
Copies are made from an open descriptor and stop at the size seen by ``fstat``, so a file that
grows (or is swapped) while being copied cannot make the copy grow.

Private copies hold the whole file, ``adf_identity`` included. They live in
``<tempdir>/adfkit-<uid>/`` (mode 0700), one folder per copy (0700, files 0600) named
``<pid>-<random>``, beside a lock file its process holds (``flock``) while the copy exists.
A process killed before it could remove its copy releases the lock with its death, and every
later :class:`Source` of the same user (in any process) removes folders whose lock is free.

Every connection gets ``PRAGMA query_only = ON`` and ``PRAGMA trusted_schema = OFF`` (and, from
Python 3.12, ``SQLITE_DBCONFIG_DEFENSIVE``). ``adf_identity`` is never selected: tables are read
from an allowlist only, and each allowlisted table must be a plain table of its own, as SQLite
reports it: ``sqlite_schema.type`` 'table', ``PRAGMA table_list`` type 'table' (not 'view',
'virtual' or 'shadow'), a root page that no other table or index uses (neither
``adf_identity``'s nor its indexes', nor another allowlisted table's), the same for its
indexes, and no column computed when read (a virtual generated column). Anything else is refused
with :class:`UnsafeSchemaError` (a view, virtual table or borrowed b-tree could read key material
behind the reader's back). ``sqlite_sequence`` is checked like the others.

Text that is not valid UTF-8 does not stop a read: the query is re-run with invalid bytes replaced
by U+FFFD, and an :class:`AdfWarning` names the table.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pathlib
import re
import secrets
import shutil
import sqlite3
import stat
import tempfile
import warnings
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, stale copies are not swept
    fcntl = None  # type: ignore[assignment]

from adfkit._base.errors import (
    AdfError,
    AdfWarning,
    CorruptFileError,
    FileBusyError,
    NewerSchemaWarning,
    NotAdfError,
    NotSQLiteError,
    SidecarError,
    UnsafeSchemaError,
    UnsupportedSchemaError,
)
from adfkit._base.files import O_CLOEXEC as _O_CLOEXEC
from adfkit._base.files import O_NOFOLLOW as _O_NOFOLLOW
from adfkit._base.files import kind as _kind
from adfkit._base.files import open_regular
from adfkit._base.outputs import SIDECARS

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

#: ``PRAGMA table_list`` exists from SQLite 3.37.0.
_HAS_TABLE_LIST = sqlite3.sqlite_version_info >= (3, 37, 0)


def _words(sql: str) -> list[str]:
    """Upper-cased words of SQL text with comments removed (only for SQLite < 3.37)."""
    return re.sub(r"/\*.*?(\*/|$)|--[^\n]*", " ", sql, flags=re.S).upper().split()


#: Rows fetched per step by :meth:`Source.cursor`.
_BATCH = 2048


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _uri(path: pathlib.Path, query: str) -> str:
    # as_uri() percent-encodes '?' and '#', so odd file names stay inside the path.
    return f"{path.as_uri()}?{query}"


def _sidecars(path: pathlib.Path, name: str | None = None) -> tuple[bool, bool, bool]:
    """Which of ``-wal``, ``-shm``, ``-journal`` exist beside ``path``.

    Looked at with ``lstat``: a sidecar that exists but is not a regular file (a symbolic link
    included, even a dangling one) raises :class:`SidecarError` naming it; SQLite never sees it.
    """
    found = []
    for suffix in SIDECARS:
        side = f"{path}{suffix}"
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            found.append(False)
            continue
        except OSError as exc:
            raise SidecarError(
                f"cannot look at {os.path.basename(side)}: {exc.strerror}", path=name or path
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise SidecarError(
                f"{os.path.basename(side)} is {_kind(st.st_mode)}, not a regular file; "
                "adfkit opens and copies only regular sidecar files (a runtime makes nothing "
                "else): remove it or read a copy of the agent file",
                path=name or path,
            )
        found.append(True)
    return found[0], found[1], found[2]


def _copy_bounded(src: pathlib.Path, dst: pathlib.Path, *, follow: bool) -> bool:
    """Copy the regular file ``src`` to the new file ``dst`` (mode 0600); False if ``src`` is
    absent.

    ``src`` is opened without blocking (a FIFO cannot hang the open) and, unless ``follow``,
    without following a symbolic link; it must be a regular file by ``fstat`` of that very
    descriptor, and at most the ``st_size`` seen then is copied, so a file that grows while it
    is copied (or ``/dev/zero`` swapped in) cannot make the copy grow. Raises ``OSError`` (with
    ``errno``) or ``ValueError`` (not a regular file).
    """
    try:
        fd, st = open_regular(src, follow=follow)
    except FileNotFoundError:
        return False
    try:
        left = st.st_size
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600)
        with open(out, "wb", closefd=True) as fh:
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break  # shrank since fstat: the copy is what is there
                fh.write(chunk)
                left -= len(chunk)
    finally:
        os.close(fd)
    return True


# -- private copies ------------------------------------------------------------------------------


def _private_root() -> pathlib.Path:
    """``<tempdir>/adfkit-<uid>``: this user's folder of private copies (not created here)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    tag = str(uid) if uid is not None else (os.environ.get("USERNAME") or "user")
    return pathlib.Path(tempfile.gettempdir()) / f"adfkit-{tag}"


def _make_private_root(name: str) -> pathlib.Path:
    """Create (0700) or check this user's folder of private copies."""
    root = _private_root()
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o700)
    st = os.lstat(root)
    uid = os.getuid() if hasattr(os, "getuid") else st.st_uid
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
        raise AdfError(
            f"cannot make a private copy: {root} is not a folder of this user's "
            "(remove it, or point TMPDIR elsewhere)",
            path=name,
        )
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(root, 0o700)  # ours, but readable by others: close it
    return root


def sweep_stale_copies() -> int:
    """Remove private copies whose process is gone (killed before it could clean up).

    A copy's folder ``<pid>-<random>`` sits beside ``<pid>-<random>.lock``, which its process
    holds with ``flock`` for as long as the copy exists; the kernel releases it when the
    process dies, however it dies. A lock that can be taken therefore belongs to a dead process:
    its folder and lock file are removed. A folder without a lock file is left over from a
    cleanup cut short, and is removed too. Returns how many folders were removed.
    """
    if fcntl is None:  # pragma: no cover - Windows
        return 0
    root = _private_root()
    try:
        st = os.lstat(root)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return 0
        entries = list(os.scandir(root))
    except OSError:
        return 0
    removed = 0
    names = {e.name for e in entries}
    for e in entries:
        stem, dot, ext = e.name.rpartition(".")
        if dot and ext in ("lock", "new"):
            try:
                fd = os.open(e.path, os.O_RDWR | _O_NOFOLLOW | _O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)  # held: its process is alive
                continue
            try:
                if os.path.isdir(root / stem):
                    shutil.rmtree(root / stem, ignore_errors=True)
                    removed += 1
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
            finally:
                os.close(fd)
        elif (
            e.is_dir(follow_symlinks=False)
            and f"{e.name}.lock" not in names
            and not os.path.lexists(root / f"{e.name}.lock")
        ):
            shutil.rmtree(e.path, ignore_errors=True)
            removed += 1
    return removed


def _remove_private(name: str, lock: pathlib.Path, fd: int) -> None:
    shutil.rmtree(name, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.unlink(lock)
    with contextlib.suppress(OSError):
        os.close(fd)


class _PrivateDir:
    """A folder for one private copy, locked for as long as it exists (see
    :func:`sweep_stale_copies`). ``name`` is its path; ``cleanup()`` removes it, and so does
    garbage collection or the end of the interpreter if nobody called it."""

    def __init__(self, agent_name: str) -> None:
        root = _make_private_root(agent_name)
        for _ in range(8):
            stem = f"{os.getpid()}-{secrets.token_hex(8)}"
            fresh = root / f"{stem}.new"
            fd = os.open(
                fresh, os.O_RDWR | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600
            )
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # a sweeper holds a free lock only briefly
            try:
                # Visible as a lock only once held: a sweeper never sees a free .lock of ours.
                os.rename(fresh, root / f"{stem}.lock")
            except FileNotFoundError:
                os.close(fd)  # a sweeper took it for a dead one: try another name
                continue
            self.name = str(root / stem)
            self._finalizer = weakref.finalize(
                self, _remove_private, self.name, root / f"{stem}.lock", fd
            )
            try:
                os.mkdir(self.name, 0o700)
            except OSError:
                self.cleanup()
                raise
            return
        raise AdfError(
            "cannot make a private copy: no private folder could be locked", path=agent_name
        )

    def cleanup(self) -> None:
        self._finalizer()


class Source:
    """A read-only connection plus what was learnt about the file's layout.

    A store of another format opened the same way subclasses it: :attr:`allowed` (the tables it
    may read, nothing else), :attr:`guarded` (what a refused table could reach, for the error)
    and :meth:`_recognise` (the tables that make the file one of its format's).
    """

    #: Tables this reader may read; every other table is never selected.
    allowed: frozenset[str] = ALLOWED_TABLES
    #: What reading a table that is not a plain table of its own could reach.
    guarded = "adf_identity"

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = pathlib.Path(path).expanduser().resolve()
        self.name = str(path)
        self.timeout = timeout
        self._tmpdir: _PrivateDir | None = None
        self.con: sqlite3.Connection | None = None
        self._lenient_warned: set[str] = set()
        self.tables: set[str] = set()
        self.columns: dict[str, list[str]] = {}
        with contextlib.suppress(OSError):
            sweep_stale_copies()
        self._check_header()
        try:
            self._open_and_probe()
            if self.mode == "immutable" and any(_sidecars(self.path, self.name)):
                # A writer opened the file while we looked: re-open the lock-aware way.
                self.close()
                self._open_and_probe()
        except BaseException:
            self.close()
            raise

    def _open_and_probe(self) -> None:
        self.mode = self._connect()
        self.tables = self._tables()
        self._recognise()
        self.columns = {t: self._table_columns(t) for t in self.tables if t in self.allowed}

    def _recognise(self) -> None:
        """Raise unless the tables make the file an ADF agent file."""
        if "adf_loop" not in self.tables and "adf_meta" not in self.tables:
            raise NotAdfError(
                "SQLite database without ADF tables (no adf_meta, no adf_loop); "
                "is this an agent file?",
                path=self.name,
            )

    # -- opening ---------------------------------------------------------------------------
    def _check_header(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise AdfError("no such file", path=self.name) from None
        except OSError as exc:
            raise AdfError(f"cannot read the file: {exc.strerror}", path=self.name) from None
        if stat.S_ISDIR(st.st_mode):
            raise AdfError("is a directory, not an agent file", path=self.name)
        if not stat.S_ISREG(st.st_mode):
            # A FIFO or device would block or never end; SQLite needs a regular file anyway.
            raise AdfError("not a regular file (pipe, socket or device)", path=self.name)
        try:
            # Without blocking, and checked again on the descriptor: the name may have been
            # swapped for a FIFO since the stat above.
            try:
                fd, _st = open_regular(self.path)
            except ValueError:
                what = "not a regular file (pipe, socket or device)"
                raise AdfError(what, path=self.name) from None
            try:
                head = os.read(fd, 100)
            finally:
                os.close(fd)
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
        wal, shm, journal = _sidecars(self.path, self.name)
        if wal and shm and not journal:
            try:
                self.con = self._open(self.path, "mode=ro&readonly_shm=1", probe=True)
                return "ro"
            except FileBusyError:
                raise
            except AdfError:
                # A stale or damaged -shm that SQLite will not use read-only: read a copy.
                self.close()
        elif not wal and not shm and not journal:
            self.con = self._open(self.path, "immutable=1", probe=False)
            return "immutable"
        self.con = self._open(self._private_copy(), "mode=rw", probe=False)
        return "copy"

    def _open(self, target: pathlib.Path, query: str, *, probe: bool) -> sqlite3.Connection:
        con = None
        try:
            con = sqlite3.connect(
                _uri(target, query), uri=True, timeout=self.timeout, check_same_thread=False
            )
            if hasattr(con, "setconfig"):  # Python 3.12+
                con.setconfig(getattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE"), True)  # noqa: B009
                con.setconfig(getattr(sqlite3, "SQLITE_DBCONFIG_TRUSTED_SCHEMA"), False)  # noqa: B009
            con.execute("PRAGMA query_only = ON")
            con.execute("PRAGMA trusted_schema = OFF")
            if probe:
                con.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.Error as exc:
            if con is not None:
                con.close()
            raise self.wrap(exc) from None
        return con

    def _private_copy(self) -> pathlib.Path:
        """Copy the file and its ``-wal``/``-journal`` (never the ``-shm``) into a private
        folder (0700, files 0600); SQLite recovers the copy to its last committed state.

        Only regular files are copied, each at most as long as it was when opened."""
        if self._tmpdir is None:
            try:
                self._tmpdir = _PrivateDir(self.name)
            except OSError as exc:
                raise AdfError(
                    f"cannot make a private copy in {_private_root()}: {exc.strerror}",
                    path=self.name,
                ) from None
        dst = pathlib.Path(self._tmpdir.name) / "agent.adf"
        for suffix in ("", "-wal", "-journal"):
            src = pathlib.Path(str(self.path) + suffix)
            target = pathlib.Path(str(dst) + suffix)
            target.unlink(missing_ok=True)
            try:
                copied = _copy_bounded(src, target, follow=not suffix)
            except ValueError as exc:
                raise (SidecarError if suffix else AdfError)(
                    f"{src.name} is {exc}, not a regular file; adfkit copies only regular files",
                    path=self.name,
                ) from None
            except OSError as exc:
                what = exc.strerror
                if suffix and exc.errno == errno.ELOOP:
                    raise SidecarError(
                        f"{src.name} is a symbolic link, not a regular file; adfkit copies only "
                        "regular sidecar files",
                        path=self.name,
                    ) from None
                raise AdfError(
                    f"cannot copy {src.name} to a private folder: {what}", path=self.name
                ) from None
            if not copied and not suffix:
                raise AdfError("file vanished while being opened", path=self.name)
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
        """The :class:`AdfError` subclass for a SQLite error, naming the file and table."""
        msg = str(exc)
        at = f" (reading {where})" if where else ""
        low = msg.lower()
        if "file is not a database" in low:
            return NotSQLiteError(f"not a SQLite database{at}: {msg}", path=self.name)
        if (
            "malformed" in low
            or "corrupt" in low
            or "disk i/o" in low
            or "no such table" in low
            or "no such column" in low
        ):
            return CorruptFileError(f"damaged SQLite file{at}: {msg}", path=self.name)
        if "locked" in low or "busy" in low:
            return FileBusyError(
                f"locked by a writer for more than {self.timeout:g} s{at}: {msg}", path=self.name
            )
        if "no such module" in low:
            return UnsupportedSchemaError(
                f"needs a SQLite extension adfkit does not load{at}: {msg}", path=self.name
            )
        return AdfError(f"SQLite error{at}: {msg}", path=self.name)

    def _lenient(self, exc: sqlite3.Error, table: str) -> bool:
        """After a text-decoding error: replace invalid UTF-8 (for this query) and say so."""
        if "could not decode to utf-8" not in str(exc).lower() or self.con is None:
            return False
        if self.con.text_factory is _lenient_text:
            return False
        self.con.text_factory = _lenient_text
        key = table or "the schema"
        if key not in self._lenient_warned:
            self._lenient_warned.add(key)
            warnings.warn(
                f"{self.name}: {key} holds text that is not valid UTF-8; "
                "invalid bytes are shown as U+FFFD",
                AdfWarning,
                stacklevel=5,
            )
        return True

    # -- reading ---------------------------------------------------------------------------
    def _check(self, table: str) -> None:
        """A read may go ahead: ``table`` is on the allowlist and the file is open."""
        if table and table not in self.allowed:  # pragma: no cover - programming error
            raise ValueError(f"table {table!r} is not on the read allowlist")
        if self.con is None:
            raise AdfError("the agent file is closed", path=self.name)

    def query(
        self, sql: str, params: Sequence[Any] = (), *, table: str = ""
    ) -> list[tuple[Any, ...]]:
        """All rows of one SELECT; any SQLite error becomes an :class:`AdfError`."""
        self._check(table)
        assert self.con is not None  # _check raises on a closed file
        try:
            while True:
                try:
                    return self.con.execute(sql, params).fetchall()
                except sqlite3.Error as exc:
                    if self._lenient(exc, table):
                        continue
                    raise self.wrap(exc, table) from None
        finally:
            if self.con is not None:
                self.con.text_factory = str

    def cursor(
        self, sql: str, params: Sequence[Any] = (), *, table: str = ""
    ) -> Iterator[tuple[Any, ...]]:
        """Rows of one SELECT, fetched in batches; errors while iterating are wrapped too."""
        self._check(table)
        return self._iterate(sql, params, table)

    def _iterate(self, sql: str, params: Sequence[Any], table: str) -> Iterator[tuple[Any, ...]]:
        done = 0
        try:
            while True:
                assert self.con is not None
                try:
                    cur = self.con.execute(sql, params)
                    if done:  # re-run after switching text decoding: skip what was yielded
                        cur.fetchmany(done)
                    while batch := cur.fetchmany(_BATCH):
                        done += len(batch)
                        yield from batch
                    return
                except sqlite3.Error as exc:
                    if self._lenient(exc, table):
                        continue
                    raise self.wrap(exc, table) from None
        finally:
            if self.con is not None:
                self.con.text_factory = str

    def _tables(self) -> set[str]:
        """Names of the file's tables and views; every allowlisted one is checked to be a plain
        table with storage of its own (:meth:`_check_plain`)."""
        assert self.con is not None
        try:
            rows = self.con.execute(
                "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master"
            ).fetchall()
            out = {str(r[1]) for r in rows if r[0] in ("table", "view")}
            self._check_plain(rows, out & self.allowed)
        except sqlite3.Error as exc:
            raise self.wrap(exc, "the schema") from None
        except UnicodeDecodeError as exc:  # a damaged byte in a table's name or its SQL
            raise CorruptFileError(
                f"damaged SQLite file (reading the schema): a name is not UTF-8 ({exc.reason})",
                path=self.name,
            ) from None
        return out

    def _refuse(self, table: str, problem: str) -> UnsafeSchemaError:
        return UnsafeSchemaError(
            f"{table} is {problem}; refusing to read it (reading it can select other tables, "
            f"including {self.guarded})",
            path=self.name,
        )

    def _table_kind(self, table: str) -> str | None:
        """``PRAGMA table_list``'s type of ``table`` ('table', 'view', 'virtual', 'shadow');
        None where SQLite is older than 3.37 (the pragma is then silently empty)."""
        assert self.con is not None
        if not _HAS_TABLE_LIST:
            return None
        rows = self.con.execute(f'PRAGMA main.table_list("{table}")').fetchall()
        return str(rows[0][2]) if rows else None

    def _check_plain(self, rows: list[tuple[Any, ...]], allowed: set[str]) -> None:
        """Refuse the file unless every allowlisted table is a plain table of its own.

        Decided from what SQLite says, never from the text of the schema: the object's type in
        ``sqlite_schema``, its type in ``PRAGMA table_list``, its root page (and its indexes'),
        which no other object may use, and ``PRAGMA table_xinfo`` for computed columns.
        """
        assert self.con is not None
        by_name = {str(r[1]): r for r in rows}
        for table in sorted(allowed):
            kind = by_name[table][0]
            if kind != "table":
                raise self._refuse(table, f"a {kind}, not a table")
            listed = self._table_kind(table)
            if listed is None:  # SQLite < 3.37: a virtual table has no b-tree of its own
                root, sql = by_name[table][3], by_name[table][4]
                words = _words(sql if isinstance(sql, str) else "")
                listed = "virtual" if root == 0 or words[:2] == ["CREATE", "VIRTUAL"] else kind
            if listed != "table":
                what = {
                    "virtual": "a virtual table",
                    "shadow": "a shadow table of a virtual table",
                    "view": "a view",
                }.get(listed, f"a {listed}")
                raise self._refuse(table, f"{what}, not a plain table")
        # Storage: a b-tree belongs to one table or index. Page 1 is sqlite_schema's.
        owners: dict[int, list[str]] = {1: ["sqlite_schema"]}
        for kind, name, _tbl, root, _sql in rows:
            if isinstance(root, int) and root > 0:
                owners.setdefault(root, []).append(f"{kind} {name}")
        wanted = {t.lower() for t in allowed}
        for kind, name, tbl, root, _sql in rows:
            if str(tbl).lower() not in wanted or kind not in ("table", "index"):
                continue
            if not isinstance(root, int) or root <= 0:
                raise self._refuse(
                    str(tbl), f"stored nowhere ({kind} {name} has root page {root!r})"
                )
            others = [o for o in owners[root] if o != f"{kind} {name}"]
            if others:
                whose = "its" if name == tbl else f"its index {name}'s"
                raise self._refuse(
                    str(tbl),
                    f"not a table of its own ({whose} b-tree, page {root}, is also that of "
                    f"{', '.join(others)})",
                )
        for table in sorted(allowed):
            computed = [
                str(r[1])
                for r in self.con.execute(f'PRAGMA main.table_xinfo("{table}")').fetchall()
                if r[6] == 2
            ]
            if computed:
                raise self._refuse(
                    table,
                    f"computing column(s) {', '.join(computed)} when read (virtual generated "
                    "columns; an agent file has none)",
                )

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
