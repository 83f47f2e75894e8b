"""The read-only reader: tables of hand-built files with known values, older layouts, fixtures."""

from __future__ import annotations

import json
import math
import sqlite3

import brotli
import pandas as pd
import pytest
from adfbuild import BASE_MS, build, result, row, text, use
from conftest import RUNTIME_FIXTURES, fingerprint, runtime_fixture

import adfkit
from adfkit import schema

# A turn: trigger, context, assistant with two calls, results, summary-with-tail, reply.
TURN = [
    row(1, "user", text("A scheduled timer has fired.\nPayload: digest")),
    row(2, "user", text("[Context: dynamic_instructions] [Inbox: 2 unread] Use msg_read")),
    row(
        3,
        "assistant",
        [text("Checking.")[0], use("t1", "msg_read", {"limit": 5}), use("t2", "fs_read")],
        tokens={"input": 1200, "output": 40, "cache_read": 1000},
    ),
    row(4, "user", [result("t1", "two messages"), result("t2", "no such file", True)]),
    row(5, "assistant", [use("t3", "loop_compact", {})], tokens={"input": 1300, "output": 9}),
    row(6, "user", [result("t3", "Compaction initiated for 5 loop entries.")]),
    row(
        7,
        "user",
        text("[Loop Compacted, audited] - digest read [S3]\n\n---\nYour loop was compacted."),
        ord=4,
        model="test-model",
        tokens={"input": 300, "output": 50},
    ),
    row(8, "assistant", text("Done."), tokens=7),
]


@pytest.fixture
def turn_file(tmp_path):
    live = [r for r in TURN if r["seq"] >= 5]
    return build(
        tmp_path / "turn.adf",
        loop=live,
        audit=[{"source": "loop", "rows": [r for r in TURN if r["seq"] <= 4]}],
        files={"mind.md": "# Mind\n"},
        highest_seq=8,
    )


def test_loop_columns_and_dtypes(turn_file):
    """loop() has the documented columns, in order, with the documented dtypes."""
    loop = adfkit.open_adf(turn_file).loop()
    assert list(loop.columns) == list(schema.LOOP)
    for col, dtype in schema.LOOP.items():
        assert str(loop[col].dtype) == dtype, col


def test_loop_position_order_puts_summary_before_its_tail(turn_file):
    """The summary (seq 7, ord 4) comes before the preserved tail 5, 6."""
    loop = adfkit.open_adf(turn_file).loop()
    assert loop["seq"].tolist() == [7, 5, 6, 8]
    assert loop["position"].tolist() == [0, 1, 2, 3]
    assert loop["kind"].tolist() == ["compaction_summary", "assistant", "tool_result", "assistant"]


def test_loop_tokens_and_estimates(turn_file):
    """Token keys become columns; a bare integer is a legacy total; estimates follow §9.1."""
    loop = adfkit.open_adf(turn_file).loop().set_index("seq")
    assert loop.loc[7, "tokens_input"] == 300 and loop.loc[7, "tokens_total"] == 350
    assert pd.isna(loop.loc[8, "tokens_input"]) and loop.loc[8, "tokens_total"] == 7
    assert pd.isna(loop.loc[6, "tokens_total"])
    # seq 5: tool_use "loop_compact" with {} -> len("loop_compact") 12 + obj({}) 2 = 14 chars.
    assert loop.loc[5, "chars"] == 14
    assert loop.loc[5, "est_tokens"] == math.ceil((14 + 16) / 3.5)
    # seq 6: result content, 41 chars.
    assert loop.loc[6, "chars"] == len("Compaction initiated for 5 loop entries.")
    assert loop.loc[5, "tool_names"] == "loop_compact"
    assert loop.loc[7, "model"] == "test-model"
    assert loop.loc[8, "created_at"] == pd.Timestamp(BASE_MS + 8000, unit="ms", tz="UTC")


def test_kinds_of_user_rows(turn_file):
    """Trigger, context (with category), tool results and summary are told apart."""
    h = adfkit.open_adf(turn_file).history().set_index("seq")
    assert h.loc[1, "kind"] == "trigger" and h.loc[1, "subkind"] == "timer"
    assert h.loc[2, "kind"] == "context"
    assert h.loc[2, "context_category"] == "dynamic_instructions"
    assert h.loc[4, "kind"] == "tool_result"
    assert h.loc[7, "subkind"] == "audited"


def test_blocks_and_tool_calls(turn_file):
    """Blocks flatten one row each; calls join to results by id, errors kept."""
    agent = adfkit.open_adf(turn_file)
    b = agent.blocks(history=True)
    assert b[b["seq"] == 3]["type"].tolist() == ["text", "tool_use", "tool_use"]
    assert b[(b["seq"] == 3) & (b["block_index"] == 1)]["tool_input"].item() == '{"limit":5}'
    calls = agent.tool_calls(history=True).set_index("tool_use_id")
    assert calls.loc["t1", "result_seq"] == 4 and not calls.loc["t1", "is_error"]
    assert calls.loc["t2", "is_error"]
    assert calls.loc["t3", "result_preview"].startswith("Compaction initiated")
    assert calls["matched"].all()
    # Live loop only: t3's call and result are both live; t1/t2 are archived.
    assert agent.tool_calls()["tool_use_id"].tolist() == ["t3"]


def test_unmatched_call_is_kept_and_flagged(tmp_path):
    """A tool_use without a tool_result stays, with matched=False."""
    f = build(tmp_path / "a.adf", loop=[row(1, "assistant", [use("x", "fs_read")])])
    calls = adfkit.open_adf(f).tool_calls()
    assert calls["matched"].tolist() == [False]
    assert pd.isna(calls["result_seq"].iloc[0])


def test_history_origin_epoch_gaps(turn_file):
    """History stitches audit + live: one row per seq, origin, audit id, epochs, no gaps."""
    agent = adfkit.open_adf(turn_file)
    h = agent.history()
    assert h["seq"].tolist() == [1, 2, 3, 4, 7, 5, 6, 8]
    assert h.set_index("seq")["origin"].to_dict() == {
        1: "audit",
        2: "audit",
        3: "audit",
        4: "audit",
        7: "live",
        5: "live",
        6: "live",
        8: "live",
    }
    assert h.set_index("seq")["audit_id"].dropna().unique().tolist() == [1]
    # One compaction (summary seq 7): rows written before it are epoch 0.
    assert h.set_index("seq")["epoch"].to_dict() == {
        1: 0,
        2: 0,
        3: 0,
        4: 0,
        5: 0,
        6: 0,
        7: 1,
        8: 1,
    }
    assert len(agent.history_gaps()) == 0
    ev = agent.events()
    assert ev["event"].tolist() == ["compaction"] and ev["audit_ids"].tolist() == [(1,)]


def test_history_gaps_when_audit_was_off(tmp_path):
    """Seqs 1..4 discarded without audit; highest seq ever 9 but 9 deleted too."""
    f = build(
        tmp_path / "g.adf",
        loop=[
            row(5, "user", text("[Loop Compacted] lost it all")),
            row(6, "user", text("hello")),
            row(8, "assistant", text("hi"), tokens={"input": 10, "output": 2}),
        ],
        highest_seq=9,
    )
    gaps = adfkit.open_adf(f).history_gaps()
    assert gaps.to_dict("list") == {
        "start_seq": [1, 7, 9],
        "end_seq": [4, 7, 9],
        "n_seqs": [4, 1, 1],
    }


def test_duplicate_seq_prefers_oldest_blob(tmp_path):
    """Seq 2 is in two blobs and live: the copy in the lowest audit id wins (§4.4)."""
    first = [row(1, "user", text("one")), row(2, "user", text("original"))]
    second = [row(2, "user", text("repaired")), row(3, "user", text("three"))]
    f = build(
        tmp_path / "d.adf",
        loop=[row(2, "user", text("live copy")), row(4, "user", text("four"))],
        audit=[{"source": "loop", "rows": first}, {"source": "loop", "rows": second}],
    )
    h = adfkit.open_adf(f).history().set_index("seq")
    assert h.loc[2, "text"] == "original" and h.loc[2, "audit_id"] == 1
    assert h.loc[2, "copies"] == 3
    assert h["copies"].to_dict() == {1: 1, 2: 3, 3: 1, 4: 1}


def test_decode_audit_sources(tmp_path):
    """Loop blobs decode to frames with loop() columns; message and file sources to dicts."""
    msg = {"id": "m1", "from": "did:a", "payload": {"content": "hi"}}
    f = build(
        tmp_path / "m.adf",
        loop=[row(3, "user", text("x"))],
        audit=[
            {"source": "loop", "rows": [row(1, "user", text("a")), row(2, "user", text("b"))]},
            {"source": "inbox_message", "value": msg, "ref": "m1"},
            {
                "source": "file",
                "value": {"path": "s.txt", "content_base64": "aGk=", "size": 2},
                "ref": "s.txt",
            },
        ],
    )
    agent = adfkit.open_adf(f)
    loop_rows = agent.decode_audit(1)
    assert list(loop_rows.columns) == list(schema.LOOP)
    assert loop_rows["seq"].tolist() == [1, 2] and set(loop_rows["origin"]) == {"audit"}
    assert agent.decode_audit(2) == msg
    assert agent.decode_audit(3)["path"] == "s.txt"
    a = agent.audit()
    assert a["source"].tolist() == ["loop", "inbox_message", "file"]
    assert a["ref"].tolist()[1:] == ["m1", "s.txt"]
    assert a["entry_count"].tolist() == [2, 1, 1]
    with pytest.raises(adfkit.AdfError, match="no row with id=99"):
        agent.decode_audit(99)


def test_blob_cap(tmp_path):
    """A blob past max_blob_bytes raises BlobTooLargeError naming the file and audit row."""
    big = [row(i, "user", text("x" * 1000)) for i in range(1, 50)]
    f = build(tmp_path / "cap.adf", audit=[{"source": "loop", "rows": big}])
    agent = adfkit.open_adf(f, max_blob_bytes=10_000)
    with pytest.raises(adfkit.BlobTooLargeError, match=r"cap.adf: adf_audit id=1: .*cap"):
        agent.decode_audit(1)
    with pytest.warns(adfkit.AdfWarning, match="id=1"):
        assert len(agent.history()) == 0


def test_older_layout_v27(tmp_path):
    """Schema 27: no ord, audit start_at/end_at; normalised to the current column set."""
    f = build(
        tmp_path / "old.adf",
        schema=27,
        loop=[row(3, "user", text("hi")), row(4, "assistant", text("yo"), tokens=55)],
        audit=[
            {
                "source": "loop",
                "rows": [row(1, "user", text("a")), row(2, "user", text("b"))],
                "start_at": BASE_MS + 1000,
                "end_at": BASE_MS + 2000,
            }
        ],
    )
    agent = adfkit.open_adf(f)
    assert agent.schema_version == 27
    loop = agent.loop()
    assert list(loop.columns) == list(schema.LOOP) and loop["ord"].isna().all()
    assert loop["tokens_total"].tolist()[1] == 55
    a = agent.audit()
    assert a["start_seq"].isna().all()
    assert a["start_at"].iloc[0] == pd.Timestamp(BASE_MS + 1000, unit="ms", tz="UTC")
    assert agent.history()["seq"].tolist() == [1, 2, 3, 4]


def test_pre_public_layout(tmp_path):
    """No model/tokens/created_at columns and the old meta key still read."""
    f = tmp_path / "ancient.adf"
    con = sqlite3.connect(f)
    con.executescript(
        "CREATE TABLE adf_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE adf_loop (seq INTEGER PRIMARY KEY AUTOINCREMENT, role TEXT NOT NULL,"
        " content_json TEXT NOT NULL);"
        "INSERT INTO adf_meta VALUES ('schema_version', '9');"
        'INSERT INTO adf_loop (role, content_json) VALUES (\'user\', \'[{"type":"text",'
        '"text":"hello"}]\');'
    )
    con.commit()
    con.close()
    agent = adfkit.open_adf(f)
    assert agent.schema_version == 9
    loop = agent.loop()
    assert loop["text"].tolist() == ["hello"]
    assert loop["created_at"].isna().all() and loop["model"].isna().all()
    assert agent.audit().empty and agent.config() == {}
    assert agent.info()["loop_rows"] == 1


def test_config_threshold_and_audit_settings(tmp_path):
    """context.* wins over model.* and top-level audit; missing keys count as off."""
    cfg = {
        "model": {"compact_threshold": 5},
        "context": {"compact_threshold": None, "audit": {"loop": True}},
        "audit": {"inbox": True},
    }
    agent = adfkit.open_adf(build(tmp_path / "c.adf", config=cfg))
    assert agent.compact_threshold() == 5
    assert agent.audit_settings() == {"loop": True, "inbox": False, "outbox": False, "files": False}
    agent2 = adfkit.open_adf(build(tmp_path / "d.adf", config={"audit": {"outbox": True}}))
    assert agent2.compact_threshold() == 100_000
    assert agent2.audit_settings()["outbox"] is True


def test_files_and_read_file(turn_file):
    agent = adfkit.open_adf(turn_file)
    files = agent.files()
    assert files["path"].tolist() == ["mind.md"] and files["size"].tolist() == [7]
    assert str(files["updated_at"].dtype) == "datetime64[ms, UTC]"
    assert agent.read_file("mind.md") == b"# Mind\n"
    with pytest.raises(adfkit.AdfError, match="no file at path 'nope'"):
        agent.read_file("nope")


def test_errors_name_the_file(tmp_path):
    with pytest.raises(adfkit.AdfError, match="nope.adf: no such file"):
        adfkit.open_adf(tmp_path / "nope.adf")
    txt = tmp_path / "notes.adf"
    txt.write_text("hello")
    with pytest.raises(adfkit.NotSQLiteError, match="notes.adf: not a SQLite database"):
        adfkit.open_adf(txt)
    plain = tmp_path / "plain.adf"
    sqlite3.connect(plain).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(adfkit.NotAdfError, match="plain.adf"):
        adfkit.open_adf(plain)


def _use_everything(agent: adfkit.AgentFile) -> None:
    agent.info()
    agent.meta()
    agent.config()
    agent.history()
    agent.loop()
    agent.blocks(history=True)
    agent.tool_calls(history=True)
    agent.history_gaps()
    for aid in agent.audit()["id"]:
        agent.decode_audit(int(aid))
    for table in (agent.inbox, agent.outbox, agent.files, agent.logs, agent.tasks, agent.timers):
        table()
    for p in agent.files()["path"]:
        agent.read_file(p)


def test_full_use_changes_nothing_wal_file_without_sidecars(tmp_path):
    """A WAL-mode file with no sidecars is read (immutable) and nothing is written or created."""
    folder = tmp_path / "ro"
    folder.mkdir()
    f = build(
        folder / "w.adf", loop=TURN[4:], journal="wal", audit=[{"source": "loop", "rows": TURN[:4]}]
    )
    assert set(fingerprint(folder)) == {"w.adf"}  # no -wal/-shm beside it
    before = fingerprint(folder)
    mtime = f.stat().st_mtime_ns
    with adfkit.open_adf(f) as agent:
        assert agent.info()["open_mode"] == "immutable"
        _use_everything(agent)
    assert fingerprint(folder) == before and f.stat().st_mtime_ns == mtime


def test_full_use_changes_nothing_on_runtime_fixtures():
    """Every real fixture, used fully, leaves its folder byte-identical with no new files."""
    runtime_fixture("long-runner")
    before = fingerprint(RUNTIME_FIXTURES)
    for name in sorted(before):
        with adfkit.open_adf(RUNTIME_FIXTURES / name) as agent:
            _use_everything(agent)
    assert fingerprint(RUNTIME_FIXTURES) == before


def _sql_counts(path) -> tuple[int, int, dict[int, int]]:
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    live = con.execute("SELECT COUNT(*) FROM adf_loop").fetchone()[0]
    blobs = {}
    for aid, data in con.execute("SELECT id, data FROM adf_audit WHERE source = 'loop'"):
        blobs[aid] = len(json.loads(brotli.decompress(data)))
    entries = con.execute(
        "SELECT COALESCE(SUM(entry_count), 0) FROM adf_audit WHERE source = 'loop'"
    ).fetchone()[0]
    con.close()
    return live, entries, blobs


# (file, live rows, history seqs as (lo, hi, excluded range or None)) from fixtures/README.md
FIXTURES = {
    "long-runner": (27, 395, (1, 395), None),
    "audited-messenger": (20, 98, (1, 98), None),
    "forgetful": (17, 17, (193, 209), None),
    "manual-compact": (11, 65, (1, 65), None),
    "mind-keeper": (17, 325, (1, 378), (166, 218)),
    "big-runner": (4, 10031, (1, 10031), None),
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_runtime_fixture_history(name):
    """history() covers exactly the seqs the fixture README states; counts match SQL."""
    path = runtime_fixture(name)
    live_n, hist_n, (lo, hi), hole = FIXTURES[name]
    agent = adfkit.open_adf(path)
    live, entries, blobs = _sql_counts(path)
    assert len(agent.loop()) == live == live_n
    expected = set(range(lo, hi + 1)) - (set(range(hole[0], hole[1] + 1)) if hole else set())
    h = agent.history()
    assert set(h["seq"]) == expected and len(h) == hist_n
    assert h["seq"].is_unique
    for aid, n in blobs.items():  # every loop audit row decodes, to the stored entry count
        assert len(agent.decode_audit(aid)) == n
    assert sum(blobs.values()) == entries
    for aid in agent.audit()["id"]:
        agent.decode_audit(int(aid))
    gaps = agent.history_gaps()
    if name == "forgetful":
        assert gaps[["start_seq", "end_seq"]].values.tolist() == [[1, 192]]
    elif hole:
        assert gaps[["start_seq", "end_seq"]].values.tolist() == [list(hole)]
    else:
        assert gaps.empty


def test_runtime_fixture_events():
    """Events per fixture: compactions and the loop_clear two-blob pattern."""
    ev = adfkit.open_adf(runtime_fixture("audited-messenger")).events()
    assert ev["event"].tolist() == ["clear", "compaction"]
    assert ev["audit_ids"].tolist()[0] == (11, 12)
    assert ev["summary_seq"].tolist()[1] == 81
    mk = adfkit.open_adf(runtime_fixture("mind-keeper")).events()
    assert (mk["event"] == "compaction").sum() == 7
    assert mk["summary_lost"].sum() == 1
    lr = adfkit.open_adf(runtime_fixture("long-runner")).events()
    assert len(lr) == 8 and all(len(a) == 1 for a in lr["audit_ids"])


def test_cli_info_and_version(turn_file, capsys):
    from adfkit.cli import main

    assert main(["info", str(turn_file)]) == 0
    out = capsys.readouterr().out
    assert "live loop  4 rows, seq 5..8, " in out
    assert "history    seq 1..8; first archive written " in out
    assert "audit      1 archive(s) of loop rows, holding 4 loop rows" in out
    assert "threshold  1,000 tokens" in out
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"adfkit {adfkit.__version__}"
    assert main(["info", str(turn_file.parent / "missing.adf")]) == 2
    assert "adfkit: error:" in capsys.readouterr().err


def test_info_counts_from_the_index_and_sizes_on_request(tmp_path):
    """info() counts audit rows per source; the size sums unless sizes=False."""
    blob = brotli.compress(b"[]")
    p = build(
        tmp_path / "a.adf",
        loop=[row(7, "user", text("first")), row(9, "user", text("last"), created_at=BASE_MS + 5)],
        audit=[
            {"source": "loop", "data": blob, "entry_count": 3, "size_bytes": 40},
            {"source": "loop", "data": blob, "entry_count": 2, "size_bytes": 10},
            {"source": "file", "data": blob, "entry_count": 1, "size_bytes": 5},
        ],
    )
    with adfkit.open_adf(p) as agent:
        cheap, full = agent.info(sizes=False), agent.info()
    assert cheap["audit_rows"] == full["audit_rows"] == {"file": 1, "loop": 2}
    assert cheap["audited_loop_entries"] is None and cheap["audit_compressed_bytes"] is None
    assert full["audited_loop_entries"] == 5  # loop rows only
    assert full["audit_json_chars"] == 55
    assert full["audit_compressed_bytes"] == 3 * len(blob)
    # First and last live rows by seq (row 9 is stamped earlier than row 7: the clock went back).
    assert cheap["first_live_at"] == pd.Timestamp(BASE_MS + 7000, unit="ms", tz="UTC").isoformat()
    assert cheap["last_live_at"] == pd.Timestamp(BASE_MS + 5, unit="ms", tz="UTC").isoformat()
