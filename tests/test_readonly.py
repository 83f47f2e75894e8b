"""Files in use and folders that must stay untouched: WAL sidecars, writers holding locks,
read-only folders, the real fixtures (cases H09-H13, H29-H31 of ROBUSTNESS.md).

Tests run as root, so a folder without write bits does not stop a write: "nothing was
created or changed" is proven by fingerprinting the folder, never by relying on permissions.
The writers run in another process, as a runtime would (SQLite shares one lock table between
connections of one process, which would hide what a second process sees).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from adfbuild import build, row, text
from conftest import RUNTIME_FIXTURES, fingerprint, runtime_fixture
from test_hostile import exercise

import adfkit
from adfkit import cli
from adfkit.cli import _info as _cli_info

BASE = [row(1, "user", text("checkpointed")), row(2, "assistant", text("also in the main file"))]

WRITER = textwrap.dedent(
    """
    import sqlite3, sys
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    for stmt in sys.argv[2:]:
        con.execute(stmt)
    print("ready", flush=True)
    sys.stdin.readline()          # hold the connection (and its locks) until told to stop
    if sys.stdin.readline().strip() == "close":
        con.close()
    """
)

INSERT = (
    "INSERT INTO adf_loop (seq, role, content_json, created_at) "
    """VALUES ({seq}, 'user', '[{{"type":"text","text":"{t}"}}]', 1)"""
)


@contextlib.contextmanager
def writer(path: Path, *stmts: str, close: bool = False) -> Iterator[subprocess.Popen]:
    """Another process that runs ``stmts`` on ``path`` and keeps its connection open.

    On exit the process is killed (``close=False``: the connection dies as in a crash, leaving
    sidecars and locks as they were) or closes cleanly (``close=True``)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), *stmts],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "ready", proc.stderr.read()
        yield proc
    finally:
        if close:
            proc.stdin.write("\nclose\n")
            proc.stdin.flush()
            proc.wait(timeout=10)
        else:
            proc.kill()
            proc.wait(timeout=10)


def wal_file(folder: Path) -> Path:
    folder.mkdir()
    return build(folder / "agent.adf", loop=BASE, journal="wal")


def test_h09_uncheckpointed_wal_with_a_live_writer(tmp_path):
    """db + wal + shm of a running agent: the WAL-only rows are read; no byte of the file, the
    -wal or the -shm changes (the -shm is mapped read-only), and no file appears."""
    f = wal_file(tmp_path / "live")
    stmts = ["PRAGMA wal_autocheckpoint=0", INSERT.format(seq=3, t="only in the wal")]
    with writer(f, *stmts):
        assert sorted(os.listdir(f.parent)) == ["agent.adf", "agent.adf-shm", "agent.adf-wal"]
        before = fingerprint(f.parent)
        with adfkit.open_adf(f) as agent:
            assert agent.info()["open_mode"] == "ro"
            res = exercise(agent)
        assert fingerprint(f.parent) == before
    assert res["loop"]["text"].tolist() == [
        "checkpointed",
        "also in the main file",
        "only in the wal",
    ]
    assert res["info"]["loop_rows"] == 3 and res["info"]["sidecars"] == ["-wal", "-shm"]


def test_h09_crashed_writer_leaves_wal_and_shm(tmp_path):
    """The same after the writer died (no process holds the -shm): still read-only, untouched."""
    f = wal_file(tmp_path / "crashed")
    with writer(f, "PRAGMA wal_autocheckpoint=0", INSERT.format(seq=3, t="wal")):
        pass  # killed: -wal and -shm stay behind
    before = fingerprint(f.parent)
    with adfkit.open_adf(f) as agent:
        assert agent.info()["open_mode"] == "ro"
        assert agent.loop()["seq"].tolist() == [1, 2, 3]
    assert fingerprint(f.parent) == before


@pytest.mark.parametrize("shm", [b"", b"\x00" * 100, bytes(range(256)) * 128])
def test_h09_stale_or_damaged_shm(tmp_path, shm):
    """A -shm that is empty, short or garbage (no runtime attached) is not trusted and not
    repaired: the rows come from the -wal, and the sidecars keep their bytes."""
    f = wal_file(tmp_path / "stale")
    with writer(f, "PRAGMA wal_autocheckpoint=0", INSERT.format(seq=3, t="wal")):
        pass
    Path(f"{f}-shm").write_bytes(shm)
    before = fingerprint(f.parent)
    with adfkit.open_adf(f) as agent:
        assert agent.loop()["seq"].tolist() == [1, 2, 3]
    assert fingerprint(f.parent) == before


def test_h10_db_and_wal_without_shm(tmp_path):
    """A copied db + -wal (no -shm): read through a private copy, so the WAL is replayed
    there; the folder is untouched."""
    src = wal_file(tmp_path / "src")
    with writer(src, "PRAGMA wal_autocheckpoint=0", INSERT.format(seq=3, t="wal")):
        dst = tmp_path / "copy"
        dst.mkdir()
        shutil.copyfile(src, dst / "agent.adf")
        shutil.copyfile(f"{src}-wal", dst / "agent.adf-wal")
    f = dst / "agent.adf"
    before = fingerprint(dst)
    with adfkit.open_adf(f) as agent:
        assert agent.info()["open_mode"] == "copy"
        res = exercise(agent)
        tmp = agent.source.sqlite._tmpdir.name
    assert res["loop"]["seq"].tolist() == [1, 2, 3]
    assert fingerprint(dst) == before
    assert not os.path.exists(tmp), "the private copy is removed on close"


def test_h11_writer_mid_transaction_wal(tmp_path):
    """A WAL writer inside BEGIN IMMEDIATE with an uncommitted row: the last committed state is
    read (the committed WAL row, not the pending one)."""
    f = wal_file(tmp_path / "txn")
    stmts = [
        "PRAGMA wal_autocheckpoint=0",
        INSERT.format(seq=3, t="committed"),
        "BEGIN IMMEDIATE",
        INSERT.format(seq=4, t="pending"),
    ]
    with writer(f, *stmts):
        before = fingerprint(f.parent)
        with adfkit.open_adf(f, timeout=0.2) as agent:
            assert agent.loop()["text"].tolist()[-1] == "committed"
            assert agent.info()["loop_rows"] == 3
        assert fingerprint(f.parent) == before


def test_h12_exclusive_lock_raises_file_busy(tmp_path, capsys, monkeypatch):
    """A writer holding an exclusive lock (locking_mode=EXCLUSIVE): after the given timeout,
    FileBusyError names the file; the CLI says so in one line and exits 2."""
    f = wal_file(tmp_path / "busy")
    stmts = [
        "PRAGMA wal_autocheckpoint=0",
        INSERT.format(seq=3, t="x"),
        "PRAGMA locking_mode=EXCLUSIVE",
        "BEGIN EXCLUSIVE",
        INSERT.format(seq=4, t="y"),
    ]
    with writer(f, *stmts):
        before = fingerprint(f.parent)
        with pytest.raises(
            adfkit.FileBusyError, match=r"agent.adf: locked by a writer for more than 0.2 s"
        ):
            adfkit.open_adf(f, timeout=0.2)
        monkeypatch.setattr(_cli_info, "open_agent", functools.partial(adfkit.open, timeout=0.2))
        assert cli.main(["info", str(f)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith(f"adfkit: error: {f}: locked by a writer")
        assert fingerprint(f.parent) == before


def test_h13_rollback_journal_writer_mid_transaction(tmp_path):
    """A rollback-journal writer inside BEGIN EXCLUSIVE (a -journal beside the file): the file
    and journal are copied and the copy rolled back, giving the last committed state."""
    d = tmp_path / "journal"
    d.mkdir()
    f = build(d / "agent.adf", loop=BASE)
    stmts = ["PRAGMA cache_size=1", "BEGIN EXCLUSIVE"] + [
        INSERT.format(seq=s, t="x" * 3000) for s in range(3, 60)
    ]
    with writer(f, *stmts):
        assert (d / "agent.adf-journal").exists()
        before = fingerprint(d)
        with adfkit.open_adf(f, timeout=0.2) as agent:
            assert agent.info()["open_mode"] == "copy"
            assert agent.loop()["seq"].tolist() == [1, 2]
        assert fingerprint(d) == before


@pytest.fixture
def read_only_folder(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    build(
        d / "agent.adf",
        loop=BASE,
        audit=[{"source": "loop", "rows": [row(0, "user", text("old"))]}],
        journal="wal",
    )
    d.chmod(0o555)
    yield d
    d.chmod(0o755)


def test_h29_read_only_folder(read_only_folder):
    """chmod 555 on the folder: everything reads, and (proven by fingerprint, since tests run
    as root) nothing is created or changed."""
    before = fingerprint(read_only_folder)
    with adfkit.open_adf(read_only_folder / "agent.adf") as agent:
        res = exercise(agent)
    assert res["history"]["seq"].tolist() == [0, 1, 2]
    assert fingerprint(read_only_folder) == before
    assert os.listdir(read_only_folder) == ["agent.adf"]


def test_h30_wal_mode_without_sidecars_opens_immutable(tmp_path):
    """A WAL-mode file with no -wal/-shm (closed cleanly): opened with immutable=1, so no
    sidecar is created (a plain mode=ro open would create both)."""
    f = wal_file(tmp_path / "clean")
    before = fingerprint(f.parent)
    mtime = f.stat().st_mtime_ns
    with adfkit.open_adf(f) as agent:
        assert agent.info()["open_mode"] == "immutable"
        exercise(agent)
        assert os.listdir(f.parent) == ["agent.adf"]
    assert fingerprint(f.parent) == before and f.stat().st_mtime_ns == mtime


@pytest.mark.parametrize(
    "name",
    [
        "long-runner",
        "audited-messenger",
        "forgetful",
        "manual-compact",
        "mind-keeper",
        "big-runner",
    ],
)
def test_h31_real_fixtures_create_nothing(name):
    """Each real-runtime fixture, used through every public method, leaves /work/shared's
    fixture folder byte-identical with no new file."""
    f = runtime_fixture(name)
    before = fingerprint(RUNTIME_FIXTURES)
    with adfkit.open_adf(f) as agent:
        assert agent.info()["open_mode"] == "immutable"
        res = exercise(agent)
    assert len(res["history"]) >= len(res["loop"]) > 0
    assert fingerprint(RUNTIME_FIXTURES) == before
