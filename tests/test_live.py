"""Reading a file while another process holds it open and appends (WAL), as a runtime does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from adfbuild import build, row, text
from conftest import fingerprint

import adfkit

WRITER = textwrap.dedent(
    """
    import json, sqlite3, sys, time
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")   # keep every commit in the -wal only
    n = 0
    stop = sys.argv[2]  # written while this file is absent: the reader says when to stop
    import os
    while not os.path.exists(stop):
        con.execute("BEGIN IMMEDIATE")
        for _ in range(5):
            con.execute(
                "INSERT INTO adf_loop (role, content_json, created_at) VALUES (?, ?, ?)",
                ("user", json.dumps([{"type": "text", "text": f"msg {n}"}]), 1790000000000 + n),
            )
            n += 1
        con.execute("COMMIT")
        time.sleep(0.005)
    print(n, flush=True)
    sys.stdin.readline()          # hold the file open until the reader is done
    con.close()
    """
)


def test_read_while_a_writer_appends(tmp_path):
    """Each read is consistent (unique, increasing seqs; counts never shrink) and the last read
    sees every committed row, including rows that exist only in the -wal."""
    f = build(tmp_path / "live.adf", loop=[row(1, "user", text("start"))])
    stop = tmp_path.parent / f"{tmp_path.name}-stop"  # outside the folder fingerprinted
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(f), str(stop)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        seen = []
        deadline = time.monotonic() + 120  # only a bound on a broken writer, never reached
        while not (tmp_path / "live.adf-wal").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        # The writer goes on until told to stop, so every read overlaps it, however loaded
        # the machine is (a fixed time window did not hold on a busy 2-core machine).
        for _ in range(5):
            with adfkit.open_adf(f) as agent:
                assert agent.info()["open_mode"] == "ro"
                loop = agent.loop()
            assert loop["seq"].is_unique and loop["seq"].is_monotonic_increasing
            seen.append(len(loop))
            time.sleep(0.02)
        stop.touch()
        written = int(proc.stdout.readline())
        wal_before = fingerprint(tmp_path)
        with adfkit.open_adf(f) as agent:
            final = agent.loop()
            info = agent.info()
        after = fingerprint(tmp_path)
        # The database and its -wal are untouched and no file appeared. The -shm is SQLite's
        # shared-memory lock table: every WAL reader records its read mark there, by design.
        assert after.keys() == wal_before.keys()
        assert after["live.adf"] == wal_before["live.adf"]
        assert after["live.adf-wal"] == wal_before["live.adf-wal"]
        assert info["live"] is True and info["sidecars"] == ["-wal", "-shm"]
    finally:
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(timeout=10)
    assert len(seen) == 5 and seen == sorted(seen)
    assert len(final) == written + 1
    assert final["text"].iloc[-1] == f"msg {written - 1}"
