"""Opening hardened against crafted files (cases H42-H51 of ROBUSTNESS.md).

Three classes, each checked on several files built here by hand with ``sqlite3``:

* **key material** (H42-H46): an allowlisted table that is not a plain table of its own (a view,
  a virtual or shadow table however its SQL text is spelled, a b-tree borrowed from
  ``adf_identity`` or another table, a column computed when read) is refused with
  ``UnsafeSchemaError``; connections run with ``trusted_schema=OFF`` (and defensive mode where
  Python offers it);
* **sidecars that are not files** (H47-H49): a ``-wal``/``-shm``/``-journal`` that is a FIFO,
  socket, directory or symbolic link is refused with ``SidecarError`` before SQLite sees it; the
  input is checked on its open descriptor; a private copy stops at the size seen by ``fstat``;
* **private copies** (H50-H51): a copy left by a killed process is removed by the next open,
  live ones are kept, and copies are readable by their user alone.

Every refusal is checked the same three ways: the exact error class naming the file, the folder
byte-identical afterwards with no new file, and ``adfkit info`` printing one
``adfkit: error: <file>: ...`` line with exit status 2 (no traceback, no byte of the key).
Cases that could hang or fill the disk on a reader without these checks run ``adfkit info`` in a
child process with a timeout and a file-size limit first.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import resource
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from adfbuild import SECRET, build, row, text
from conftest import ROOT, fingerprint
from test_hostile import LOOP, exercise
from test_readonly import INSERT, wal_file, writer

import adfkit
from adfkit import cli
from adfkit._base.errors import SidecarError, UnsafeSchemaError
from adfkit._sources.adf import sqlite as _open

IDENTITY_ROOT = "(SELECT rootpage FROM sqlite_master WHERE name = 'adf_identity')"
IDENTITY_INDEX_ROOT = (
    "(SELECT rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name = 'adf_identity')"
)


def hostile(path: Path, *stmts: str) -> Path:
    """An agent file with the schema edited by hand (``writable_schema``), as an attacker
    would: test code on a file the test just built, never on an input."""
    build(path, loop=LOOP, audit=[{"source": "loop", "rows": [row(0, "user", text("old"))]}])
    con = sqlite3.connect(path)
    con.execute("PRAGMA writable_schema = ON")
    for s in stmts:
        con.execute(s)
    con.commit()
    con.close()
    return path


def secret_forms() -> list[str]:
    return [SECRET.decode(), SECRET.hex(), base64.b64encode(SECRET).decode()]


def assert_refused(f: Path, error: type[adfkit.AdfError], match: str, capsys) -> None:
    """``error`` (exactly that class) names the file and the problem; the folder is untouched;
    ``adfkit info`` says it in one line, exit 2, with no trace of the key."""
    before, names = fingerprint(f.parent), sorted(os.listdir(f.parent))
    with pytest.raises(adfkit.AdfError) as info, adfkit.open_adf(f) as agent:
        exercise(agent)
    assert type(info.value) is error, repr(info.value)
    assert str(info.value).startswith(f"{f}: ") and match in str(info.value), str(info.value)
    capsys.readouterr()
    rc = cli.main(["info", str(f)])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "", (rc, out)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"adfkit: error: {f}: "), err
    assert match in lines[0]
    for form in secret_forms():
        assert form not in out + err
    assert fingerprint(f.parent) == before and sorted(os.listdir(f.parent)) == names


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """This test's own temporary folder (for the private copies of this process)."""
    t = tmp_path / "tmp"
    t.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(t))
    monkeypatch.setenv("TMPDIR", str(t))
    return t


# -- H42-H45: allowlisted tables that are not plain tables of their own ----------------------

#: sqlite_sequence is on the allowlist (``highest_seq()``, ``adfkit info``): checked like the rest.
SEQUENCE_CASES: dict[str, tuple[list[str], str]] = {
    "view over adf_identity": (
        [
            "UPDATE sqlite_master SET type = 'view', rootpage = 0, sql = 'CREATE VIEW "
            "sqlite_sequence(name, seq) AS SELECT ''adf_loop'', length(value) FROM adf_identity'"
            " WHERE name = 'sqlite_sequence'"
        ],
        "sqlite_sequence is a view, not a table",
    ),
    "view giving a byte of the key": (
        [
            "UPDATE sqlite_master SET type = 'view', rootpage = 0, sql = 'CREATE VIEW "
            "sqlite_sequence(name, seq) AS SELECT ''adf_loop'', unicode(CAST(value AS TEXT)) "
            "FROM adf_identity' WHERE name = 'sqlite_sequence'"
        ],
        "sqlite_sequence is a view, not a table",
    ),
    "virtual table": (
        [
            "UPDATE sqlite_master SET rootpage = 0, sql = 'CREATE VIRTUAL TABLE sqlite_sequence "
            "USING fts5(name, seq)' WHERE name = 'sqlite_sequence'"
        ],
        "sqlite_sequence is a virtual table",
    ),
    "root page of adf_identity": (
        [f"UPDATE sqlite_master SET rootpage = {IDENTITY_ROOT} WHERE name = 'sqlite_sequence'"],
        "sqlite_sequence is not a table of its own (its b-tree, page",
    ),
}


@pytest.mark.parametrize("variant", sorted(SEQUENCE_CASES))
def test_h42_sqlite_sequence_not_a_plain_table(tmp_path, capsys, variant):
    stmts, match = SEQUENCE_CASES[variant]
    f = hostile(tmp_path / "agent.adf", *stmts)
    assert_refused(f, UnsafeSchemaError, match, capsys)


#: An FTS5 table reading adf_identity through a view whose columns have adf_audit's names.
_LEAKY_AUDIT = [
    "CREATE VIEW leak AS SELECT rowid AS rowid, purpose AS source, value AS data FROM adf_identity",
    "DROP TABLE adf_audit",
    "CREATE VIRTUAL TABLE adf_audit USING fts5(source, data, content='leak', "
    "content_rowid='rowid')",
]


def _respell(text_: str) -> str:
    return (
        "UPDATE sqlite_master SET sql = replace(sql, 'CREATE VIRTUAL', '"
        + text_
        + "') WHERE name = 'adf_audit'"
    )


VIRTUAL_CASES: dict[str, tuple[list[str], str]] = {
    "two spaces": ([*_LEAKY_AUDIT, _respell("CREATE  VIRTUAL")], "adf_audit is a virtual table"),
    "a comment": (
        [*_LEAKY_AUDIT, _respell("CREATE /* plain */ VIRTUAL")],
        "adf_audit is a virtual table",
    ),
    "lower case, newline and tab": (
        [*_LEAKY_AUDIT, _respell("create \n\tvirtual")],
        "adf_audit is a virtual table",
    ),
    "a root page of its own": (
        [*_LEAKY_AUDIT, "UPDATE sqlite_master SET rootpage = 2 WHERE name = 'adf_audit'"],
        "adf_audit is a virtual table",
    ),
    "shadow table of an FTS5 table": (
        ["DROP TABLE adf_config", "CREATE VIRTUAL TABLE adf USING fts5(x)"],
        "adf_config is a shadow table of a virtual table",
    ),
}


@pytest.mark.parametrize("table_list", [True, False], ids=["table_list", "sqlite<3.37"])
@pytest.mark.parametrize("variant", sorted(VIRTUAL_CASES))
def test_h43_virtual_or_shadow_table_however_spelled(
    tmp_path, capsys, monkeypatch, variant, table_list
):
    """Whether a table is virtual is what SQLite says (``PRAGMA table_list``), not what its
    stored SQL text starts with. Without the pragma (SQLite < 3.37) a root page of 0 or SQL
    that reads ``CREATE VIRTUAL`` once comments and spacing are dropped still refuses it."""
    stmts, match = VIRTUAL_CASES[variant]
    if not table_list and variant.startswith("shadow"):
        pytest.skip("shadow tables are told apart only by PRAGMA table_list (SQLite >= 3.37)")
    monkeypatch.setattr(_open, "_HAS_TABLE_LIST", table_list, raising=False)
    f = hostile(tmp_path / "agent.adf", *stmts)
    assert_refused(f, UnsafeSchemaError, match, capsys)


SHARED_CASES: dict[str, tuple[list[str], str]] = {
    "adf_logs on adf_identity's b-tree": (
        [f"UPDATE sqlite_master SET rootpage = {IDENTITY_ROOT} WHERE name = 'adf_logs'"],
        "adf_logs is not a table of its own (its b-tree, page",
    ),
    "adf_meta on adf_identity's primary-key index": (
        [f"UPDATE sqlite_master SET rootpage = {IDENTITY_INDEX_ROOT} WHERE name = 'adf_meta'"],
        "index sqlite_autoindex_adf_identity_1",
    ),
    "an adf_audit index on adf_identity's index": (
        [
            "CREATE INDEX adf_audit_by_source ON adf_audit(source)",
            f"UPDATE sqlite_master SET rootpage = {IDENTITY_INDEX_ROOT} "
            "WHERE name = 'adf_audit_by_source'",
        ],
        "adf_audit is not a table of its own (its index adf_audit_by_source's b-tree",
    ),
    "adf_tasks on adf_logs's b-tree": (
        [
            "UPDATE sqlite_master SET rootpage = "
            "(SELECT rootpage FROM sqlite_master WHERE name = 'adf_logs') "
            "WHERE name = 'adf_tasks'"
        ],
        "table adf_logs",
    ),
}


@pytest.mark.parametrize("variant", sorted(SHARED_CASES))
def test_h44_borrowed_b_tree(tmp_path, capsys, variant):
    """A table (or one of its indexes) whose root page is another object's: reading it would
    read that object's rows, adf_identity's key material above all."""
    stmts, match = SHARED_CASES[variant]
    f = hostile(tmp_path / "agent.adf", *stmts)
    assert_refused(f, UnsafeSchemaError, match, capsys)


def test_h44_borrowed_b_tree_would_leak(tmp_path):
    """Why: SQLite itself reads adf_identity's rows through adf_logs (checked here with a plain
    connection, test code), so the refusal is what keeps the key out of ``logs()``."""
    f = hostile(tmp_path / "agent.adf", *SHARED_CASES["adf_logs on adf_identity's b-tree"][0])
    con = sqlite3.connect(f"{f.as_uri()}?immutable=1", uri=True)
    assert SECRET in [r[1] for r in con.execute("SELECT * FROM adf_logs")]
    con.close()


GENERATED_CASES: dict[str, tuple[list[str], str]] = {
    "adf_meta.value": (
        [
            "UPDATE sqlite_master SET sql = 'CREATE TABLE adf_meta (key TEXT PRIMARY KEY, "
            "protection TEXT, value TEXT AS (printf(''%.*c'', 100000, key)))' "
            "WHERE name = 'adf_meta'"
        ],
        "adf_meta is computing column(s) value when read",
    ),
    "adf_files.content": (
        [
            "UPDATE sqlite_master SET sql = 'CREATE TABLE adf_files (path TEXT PRIMARY KEY, "
            "mime_type TEXT, size INTEGER, protection TEXT, authorized INTEGER, created_at TEXT, "
            "updated_at TEXT, content BLOB AS (zeroblob(size * 1000)))' WHERE name = 'adf_files'"
        ],
        "adf_files is computing column(s) content when read",
    ),
    "adf_logs.lvl (a column table_info does not list)": (
        ["DROP TABLE adf_logs", "CREATE TABLE adf_logs (id INTEGER, lvl TEXT AS (upper(id)))"],
        "adf_logs is computing column(s) lvl when read",
    ),
}


@pytest.mark.parametrize("variant", sorted(GENERATED_CASES))
def test_h45_virtual_generated_column(tmp_path, capsys, variant):
    """A virtual generated column is computed by the reader from an expression in the file
    (deterministic functions only, so it cannot reach another table, but it can make a value
    of a gigabyte); an agent file has none."""
    stmts, match = GENERATED_CASES[variant]
    f = hostile(tmp_path / "agent.adf", *stmts)
    assert_refused(f, UnsafeSchemaError, match, capsys)


# -- H46: connection settings -----------------------------------------------------------------


@contextlib.contextmanager
def opened_in_mode(tmp_path: Path, mode: str) -> Iterator[adfkit.AgentFile]:
    """An agent opened the given way: immutable (no sidecars), ro (live writer), copy."""
    if mode == "immutable":
        d = tmp_path / "plain"
        d.mkdir()
        with adfkit.open_adf(build(d / "agent.adf", loop=LOOP)) as agent:
            yield agent
    elif mode == "ro":
        f = wal_file(tmp_path / "live")
        stmts = ("PRAGMA wal_autocheckpoint=0", INSERT.format(seq=3, t="wal"))
        with writer(f, *stmts), adfkit.open_adf(f) as agent:
            yield agent
    else:
        with adfkit.open_adf(copy_mode_file(tmp_path)) as agent:
            yield agent


def copy_mode_file(tmp_path: Path) -> Path:
    """A db + -wal with no -shm (a WAL-only row in it): opened through a private copy."""
    src = wal_file(tmp_path / "src")
    dst = tmp_path / "copied"
    dst.mkdir()
    with writer(src, "PRAGMA wal_autocheckpoint=0", INSERT.format(seq=3, t="wal")):
        shutil.copyfile(src, dst / "agent.adf")
        shutil.copyfile(f"{src}-wal", dst / "agent.adf-wal")
    return dst / "agent.adf"


@pytest.mark.parametrize("mode", ["immutable", "ro", "copy"])
def test_h46_connection_does_not_trust_the_schema(tmp_path, mode, private_tmp):
    """``trusted_schema`` is OFF on every connection (functions and virtual tables that are not
    innocuous cannot run from the file's schema), whichever way the file was opened."""
    with opened_in_mode(tmp_path, mode) as agent:
        assert agent.info()["open_mode"] == mode
        assert agent.source.sqlite.con.execute("PRAGMA trusted_schema").fetchone()[0] == 0
        assert agent.source.sqlite.con.execute("PRAGMA query_only").fetchone()[0] == 1
        assert agent.loop()["seq"].tolist()[:2] == [1, 2]


@pytest.mark.skipif(
    not hasattr(sqlite3.Connection, "setconfig"),
    reason="SQLITE_DBCONFIG_DEFENSIVE is reachable from Python 3.12 (Connection.setconfig)",
)
@pytest.mark.parametrize("mode", ["immutable", "ro", "copy"])
def test_h46_connection_is_defensive(tmp_path, mode, private_tmp):
    with opened_in_mode(tmp_path, mode) as agent:
        con = agent.source.sqlite.con
        assert con.getconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE) is True
        assert con.getconfig(sqlite3.SQLITE_DBCONFIG_TRUSTED_SCHEMA) is False


# -- H47-H49: only regular files are opened or copied -----------------------------------------

PROBE_LIMIT = 64 << 20  #: the child may write at most this much per file (RLIMIT_FSIZE)


def cli_in_child(f: Path, tmp: Path, timeout: float = 45) -> subprocess.CompletedProcess:
    """``adfkit info f`` in a child process that may not run longer than ``timeout`` nor write
    a file past 64 MiB, with its temporary folder in ``tmp`` (a reader without the checks
    hangs on a FIFO, or copies /dev/zero until the disk is full)."""
    tmp.mkdir(exist_ok=True)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (PROBE_LIMIT, PROBE_LIMIT))

    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    try:
        return subprocess.run(
            [sys.executable, "-m", "adfkit", "info", str(f)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=limit,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"adfkit info {f.name} did not return within {timeout:g} s (blocked)")


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _socket(p: Path) -> None:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(p))
    s.close()


def _zero(p: Path) -> None:
    p.symlink_to("/dev/zero")


def _dir(p: Path) -> None:
    p.mkdir()


def _dangling(p: Path) -> None:
    p.symlink_to(p.parent / "nowhere")


def _other_wal(p: Path) -> None:
    """A link to another agent's (regular) WAL file."""
    other = wal_file(p.parent.parent / "other")
    with writer(other, "PRAGMA wal_autocheckpoint=0", INSERT.format(seq=3, t="theirs")):
        pass
    p.symlink_to(f"{other}-wal")


#: (sidecars made regular first, the odd sidecar, how to make it, what it is called)
SIDECAR_CASES: dict[str, tuple[tuple[str, ...], str, Callable[[Path], None], str]] = {
    "-shm FIFO beside a -wal": (("-wal",), "-shm", _fifo, "a named pipe (FIFO)"),
    "-wal FIFO beside a -shm": (("-shm",), "-wal", _fifo, "a named pipe (FIFO)"),
    "-wal FIFO alone": ((), "-wal", _fifo, "a named pipe (FIFO)"),
    "-journal FIFO": ((), "-journal", _fifo, "a named pipe (FIFO)"),
    "-wal linked to /dev/zero": ((), "-wal", _zero, "a symbolic link"),
    "-wal linked to /dev/zero beside a -shm": (("-shm",), "-wal", _zero, "a symbolic link"),
    "-wal linked to another agent's WAL": ((), "-wal", _other_wal, "a symbolic link"),
    "-wal dangling link beside a -shm": (("-shm",), "-wal", _dangling, "a symbolic link"),
    "-shm directory beside a -wal": (("-wal",), "-shm", _dir, "a directory"),
    "-journal socket": ((), "-journal", _socket, "a socket"),
}


def sidecar_case(tmp_path: Path, variant: str) -> Path:
    regular, odd, make, _ = SIDECAR_CASES[variant]
    d = tmp_path / "case"
    d.mkdir()
    f = build(d / "agent.adf", loop=LOOP, journal="wal")
    for suffix in regular:
        Path(f"{f}{suffix}").write_bytes(b"")
    make(Path(f"{f}{odd}"))
    return f


@pytest.mark.parametrize("variant", sorted(SIDECAR_CASES))
def test_h47_sidecar_not_a_regular_file(tmp_path, capsys, variant, private_tmp):
    """A sidecar that is a FIFO, socket, directory or symbolic link (even to a regular file)
    is refused before SQLite opens or anything is copied: no hang, no endless copy."""
    _, odd, _, what = SIDECAR_CASES[variant]
    f = sidecar_case(tmp_path, variant)
    before, names = fingerprint(f.parent), sorted(os.listdir(f.parent))
    child_tmp = tmp_path / "child-tmp"
    res = cli_in_child(f, child_tmp)
    match = f"agent.adf{odd} is {what}, not a regular file"
    assert res.returncode == 2 and res.stdout == "", (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"adfkit: error: {f}: {match}"), res.stderr
    assert not any(p.is_file() for p in child_tmp.rglob("*")), "nothing copied"
    with pytest.raises(SidecarError, match=re.escape(match)):
        adfkit.open_adf(f)
    assert_refused(f, SidecarError, match, capsys)
    assert fingerprint(f.parent) == before and sorted(os.listdir(f.parent)) == names


SWAP = textwrap.dedent(
    """
    import os, sys
    import adfkit
    fifo, regular = sys.argv[1], sys.argv[2]
    real_stat = os.stat

    def stat(p, *a, **k):  # the name was checked while it was still a regular file
        return real_stat(regular if os.fspath(p) == fifo else p, *a, **k)

    os.stat = stat
    try:
        adfkit.open_adf(fifo)
    except adfkit.AdfError as exc:
        print(exc)
    """
)


def test_h48_input_swapped_for_a_fifo_after_the_check(tmp_path):
    """The input is read through a descriptor opened without blocking and checked with
    ``fstat``: a FIFO put in its place after the ``stat`` cannot hang the open."""
    regular = build(tmp_path / "real.adf", loop=LOOP)
    fifo = tmp_path / "agent.adf"
    os.mkfifo(fifo)
    try:
        res = subprocess.run(
            [sys.executable, "-c", SWAP, str(fifo), str(regular)],
            capture_output=True,
            text=True,
            timeout=45,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("opening a FIFO blocked")
    assert res.stdout.strip() == f"{fifo}: not a regular file (pipe, socket or device)", res


@pytest.mark.parametrize("kind", ["device", "link to a FIFO", "socket"])
def test_h48_input_not_a_regular_file(tmp_path, capsys, kind):
    """The input itself: a device, a symbolic link to a FIFO, a socket (already refused before
    these changes; kept as a guard for the descriptor-based check)."""
    f = tmp_path / "agent.adf"
    if kind == "device":
        f.symlink_to("/dev/zero")
    elif kind == "socket":
        _socket(f)
    else:
        os.mkfifo(tmp_path / "pipe")
        f.symlink_to(tmp_path / "pipe")
    with pytest.raises(adfkit.AdfError, match=r"agent.adf: not a regular file"):
        adfkit.open_adf(f)
    assert cli.main(["info", str(f)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"adfkit: error: {f}: not a regular file")


def test_h49_copy_stops_at_the_size_seen(tmp_path, monkeypatch, private_tmp):
    """A -wal that grows while it is copied (a writer appending, here right after the copy's
    ``fstat``): the private copy holds exactly the bytes there were then, and the rows read
    are the committed ones."""
    f = copy_mode_file(tmp_path)
    wal = Path(f"{f}-wal")
    size = wal.stat().st_size
    real_fstat = os.fstat
    grown: list[int] = []

    def fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        with contextlib.suppress(OSError):
            if not grown and os.readlink(f"/proc/self/fd/{fd}") == str(wal):
                with open(wal, "ab") as fh:
                    fh.write(os.urandom(1 << 20))
                grown.append(1)
        return st

    monkeypatch.setattr(os, "fstat", fstat)
    with adfkit.open_adf(f) as agent:
        assert agent.info()["open_mode"] == "copy" and grown
        monkeypatch.setattr(os, "fstat", real_fstat)
        copied = Path(agent.source.sqlite._tmpdir.name) / "agent.adf-wal"
        assert copied.stat().st_size == size
        assert agent.loop()["seq"].tolist() == [1, 2, 3]


# -- H50-H51: private copies ------------------------------------------------------------------


HOLDER = textwrap.dedent(
    """
    import sys
    import adfkit
    agent = adfkit.open_adf(sys.argv[1])
    assert agent.info()["open_mode"] == "copy"
    print(agent.source.sqlite._tmpdir.name, flush=True)
    sys.stdin.readline()
    """
)


def hold_copy(f: Path, tmp: Path) -> tuple[subprocess.Popen, Path]:
    """A process that opened ``f`` through a private copy and keeps it open."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(f)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)},
    )
    line = proc.stdout.readline().strip()
    assert line, proc.stderr.read()
    return proc, Path(line)


@pytest.mark.parametrize("next_open", ["a plain file", "another copy"])
def test_h50_killed_process_copy_removed_at_next_open(tmp_path, private_tmp, next_open):
    """SIGKILL a process holding a private copy (a copy of the whole file, adf_identity
    included): the next open, of any file, in any process of the user, removes it; the copy of
    a process still alive is kept."""
    f = copy_mode_file(tmp_path)
    killed, stale = hold_copy(f, private_tmp)
    alive, live = hold_copy(f, private_tmp)
    try:
        assert (stale / "agent.adf").is_file() and (live / "agent.adf").is_file()
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=10)
        assert (stale / "agent.adf").is_file(), "SIGKILL leaves the copy behind"
        if next_open == "a plain file":
            d = tmp_path / "plain"
            d.mkdir()
            with adfkit.open_adf(build(d / "agent.adf", loop=LOOP)) as agent:
                assert agent.info()["open_mode"] == "immutable"
        else:
            with adfkit.open_adf(f) as agent:
                assert agent.info()["open_mode"] == "copy"
        assert not stale.exists(), "the killed process's copy is removed"
        assert (live / "agent.adf").is_file(), "a live process's copy is kept"
        leftovers = [p.name for p in stale.parent.iterdir() if p.name.startswith(stale.name)]
        assert leftovers == [], leftovers
    finally:
        alive.stdin.close()
        alive.wait(timeout=10)
        if killed.poll() is None:
            killed.kill()
    assert not live.exists(), "a process removes its copy when it ends cleanly"


def test_h51_private_copy_readable_by_the_user_alone(tmp_path, private_tmp):
    """Under umask 022 the copy's folder is 0700 and every file in it (the copy, its WAL and
    the -shm SQLite makes there) 0600, in a per-user folder that is 0700 too."""
    f = copy_mode_file(tmp_path)
    old = os.umask(0o022)
    try:
        with adfkit.open_adf(f) as agent:
            agent.loop()
            d = Path(agent.source.sqlite._tmpdir.name)
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in d.iterdir()}
            assert stat.S_IMODE(d.stat().st_mode) == 0o700
            assert stat.S_IMODE(d.parent.stat().st_mode) == 0o700
            assert d.parent.parent == private_tmp
    finally:
        os.umask(old)
    assert "agent.adf" in modes and "agent.adf-wal" in modes
    assert set(modes.values()) == {0o600}, modes


@pytest.mark.parametrize("problem", ["another user's", "a symbolic link", "open to others"])
def test_h51_per_user_folder_is_checked(tmp_path, private_tmp, problem):
    """The per-user folder of copies is used only if it is this user's own folder: one made by
    another user (or a link to elsewhere) is refused with an AdfError naming the file and
    saying what to do; one of ours that others could read is closed to 0700 first."""
    f = copy_mode_file(tmp_path)
    root = private_tmp / f"adfkit-{os.getuid()}"
    if problem == "a symbolic link":
        (tmp_path / "elsewhere").mkdir()
        root.symlink_to(tmp_path / "elsewhere")
    else:
        root.mkdir(mode=0o777)
        root.chmod(0o777)
        if problem == "another user's":
            os.chown(root, os.getuid() + 4242, os.getgid() + 4242)
    if problem == "open to others":
        with adfkit.open_adf(f) as agent:
            assert agent.info()["open_mode"] == "copy"
            assert Path(agent.source.sqlite._tmpdir.name).parent == root
        assert stat.S_IMODE(root.stat().st_mode) == 0o700
        return
    with pytest.raises(
        adfkit.AdfError, match=re.escape(f"{f}: cannot make a private copy: {root}")
    ):
        adfkit.open_adf(f)
    assert list((tmp_path / "elsewhere").iterdir() if problem == "a symbolic link" else []) == []
