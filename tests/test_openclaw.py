"""OpenClaw sessions: the store 2026.9.6 wrote (``tests/fixtures/recorded/openclaw/``, figures
counted here from its rows with plain ``sqlite3``, ``zstandard`` and ``json``), the same
session as an older release's ``sessions/<id>.jsonl`` file (hand-built here from the store's
rows: no real one was found), recognition against its neighbours, and crafted hostile stores.
The recorded figures against the request log are ``test_recorded.py``'s."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
import zstandard

import adfkit
from adfkit._base.errors import AdfError, CorruptFileError, NotTranscriptError
from adfkit._core import registry
from adfkit._sources.openclaw import Store, compaction_rule
from adfkit._sources.openclaw.parser import SentIds, parse_store_session, strict_id

ROOT = Path(__file__).resolve().parent.parent
REC = ROOT / "tests" / "fixtures" / "recorded" / "openclaw" / "2026.9.6"
STORE = REC / "home" / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
SID = "demo-1"


def rows_of(store: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(seq, entry)`` of every row, decoded here without adfkit."""
    con = sqlite3.connect(f"file:{store}?immutable=1", uri=True)
    try:
        got = con.execute(
            "select seq, event_json, event_zstd, event_utf8_bytes from transcript_events "
            "where session_id = ? order by seq",
            (SID,),
        ).fetchall()
    finally:
        con.close()
    out = []
    for seq, text, packed, size in got:
        if packed is not None:
            text = zstandard.ZstdDecompressor().decompress(packed, max_output_size=size).decode()
        out.append((seq, json.loads(text)))
    return out


def entry_of(store: Path) -> dict[str, Any]:
    con = sqlite3.connect(f"file:{store}?immutable=1", uri=True)
    try:
        (text,) = con.execute("select entry_json from session_nodes").fetchone()
    finally:
        con.close()
    return dict(json.loads(text))


def quiet(path: Path | str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return adfkit.open(path)


@pytest.fixture(scope="module")
def session() -> adfkit.AgentFile:
    col = quiet(STORE)
    assert isinstance(col, adfkit.AgentCollection)
    return col[0]


# --- the recorded store ----------------------------------------------------------------------


def test_the_store_is_one_agent_per_session_read_with_its_figures(
    session: adfkit.AgentFile,
) -> None:
    entries = rows_of(STORE)
    replies = [
        e["message"]
        for _, e in entries
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    usage = session.usage()
    assert len(usage) == len(replies) == 15
    want_in = sum(m["usage"]["input"] + m["usage"]["cacheRead"] for m in replies)
    assert int(usage["tokens_input"].sum()) == want_in == 242_936
    assert int(usage["tokens_output"].sum()) == sum(m["usage"]["output"] for m in replies)
    assert session.name == SID and session.format == "openclaw"
    assert session.path.endswith(f"openclaw-agent.sqlite#{SID}")
    calls = [m for _, e in entries if e["type"] == "message" for m in [e["message"]]]
    tool_names = [
        b["name"]
        for m in calls
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "toolCall"
    ]
    assert sorted(session.tool_calls(history=True)["tool_name"]) == sorted(tool_names)


def test_compactions_sweep_what_their_first_kept_entry_does_not_keep(
    session: adfkit.AgentFile,
) -> None:
    comp = session.compactions()
    comps = [e for _, e in rows_of(STORE) if e["type"] == "compaction"]
    assert list(comp["recorded_tokens_before"]) == [c["tokensBefore"] for c in comps]
    assert list(comp["recorded_tokens_before"]) == [25_287, 15_480]
    assert list(comp["recorded_tokens_after"]) == [c["tokensAfter"] for c in comps]
    # 24 messages before the first, 3 kept from its first kept entry (seq 33's child on);
    # the second: those 3, the summary and 4 messages, 1 kept (seq 43's child)
    assert list(comp["n_swept"]) == [21, 7]
    assert comp["kind"].isna().all()  # OpenClaw records no trigger
    assert comp["compaction_input"].isna().all()  # nor any usage of the compaction call
    history = session.history()
    summaries = history[history["kind"] == "compaction_summary"]
    assert [json.loads(c)[0]["text"] for c in summaries["content"]] == [c["summary"] for c in comps]


def test_the_memory_flush_is_a_call_on_no_row_with_na_tokens(session: adfkit.AgentFile) -> None:
    calls = session.calls()
    flush = calls[calls["key"] == "memory-flush-0"]
    assert len(flush) == 1 and flush["seq"].isna().all()
    assert flush[["tokens_input", "tokens_output"]].isna().all().all()
    assert entry_of(STORE)["memoryFlush"] == {"kind": "succeeded", "compactionCount": 0}
    assert session.compactions()["event"].tolist() == ["compaction", "compaction"]


def test_tool_call_ids_are_the_ones_sent(session: adfkit.AgentFile) -> None:
    """On openai-completions OpenClaw sends ``call_rec00001`` as ``callrec00001`` (the request
    log: ``test_recorded``); each call and its result keep their pair."""
    tc = session.tool_calls(history=True)
    assert list(tc["tool_use_id"])[:2] == ["callrec00001", "callrec00002"]
    assert tc["tool_use_id"].str.fullmatch(r"[A-Za-z0-9]+").all()
    assert tc["result_seq"].notna().all()


def test_sent_ids_rule() -> None:
    """Letters and digits; a collision takes a hash of the raw id; an id repeated is seeded
    ``<id>:<n>``; a result takes the earliest call of its id still waiting."""
    ids = SentIds()
    assert [ids.call("call_a"), ids.call("call-a"), ids.call("call_a")] == [
        "calla",
        "calla" + hashlib.sha256(b"call-a").hexdigest()[:8],
        "calla2",
    ]
    assert [ids.result("call_a"), ids.result("call_a")] == ["calla", "calla2"]
    assert ids.result("nobody") == "nobodytoolresult1"
    assert strict_id("functions.read:3") == "functions.read:3"


def test_settings_window_recorded_threshold_by_openclaws_rule(session: adfkit.AgentFile) -> None:
    st = session.settings()
    assert (st.context_window, st.window_source) == (entry_of(STORE)["contextTokens"], "recorded")
    status = entry_of(STORE)["contextBudgetStatus"]
    assert (st.compact_threshold, st.threshold_source) == (
        status["promptBudgetBeforeReserve"],
        "assumed",
    )
    assert compaction_rule(None, 200_000)[1] == 180_000
    assert compaction_rule("nobody-knows-this-model", None)[:2] == (None, None)


def test_reading_writes_nothing_and_leaves_no_sidecar() -> None:
    before = hashlib.sha256(STORE.read_bytes()).hexdigest()
    names = sorted(os.listdir(STORE.parent))
    col = quiet(STORE)
    col[0].replay()
    col.close()
    assert hashlib.sha256(STORE.read_bytes()).hexdigest() == before
    assert sorted(os.listdir(STORE.parent)) == names


def test_listing_and_the_default_folder(tmp_path: Path) -> None:
    df = adfkit.list_sessions(REC / "home", format="openclaw")
    assert df["path"].tolist() == [f"{STORE}#{SID}"]
    assert df[["session_key", "layout", "model"]].iloc[0].tolist() == [
        "agent:main:explicit:demo-1",
        "store",
        "rec-model",
    ]
    assert registry.spec("openclaw").default_root == "~/.openclaw/agents"
    assert quiet(df["path"][0]).name == SID


# --- the older layout: sessions/<id>.jsonl beside sessions.json ---------------------------------


def jsonl_session(root: Path, *, index: bool = True) -> Path:
    """The store's session as an older release kept it: its entries as JSON lines in
    ``agents/main/sessions/<id>.jsonl``, its entry in ``sessions.json``."""
    folder = root / ".openclaw" / "agents" / "main" / "sessions"
    folder.mkdir(parents=True)
    path = folder / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for _, e in rows_of(STORE)))
    if index:
        (folder / "sessions.json").write_text(
            json.dumps({"agent:main:explicit:demo-1": entry_of(STORE)})
        )
    return path


def test_a_session_file_reads_as_the_store_session(
    tmp_path: Path, session: adfkit.AgentFile
) -> None:
    path = jsonl_session(tmp_path)
    assert registry.recognise(path).name == "openclaw"
    a = quiet(path)
    assert isinstance(a, adfkit.AgentFile) and a.name == SID
    for table in ("usage", "compactions"):
        got, want = getattr(a, table)(), getattr(session, table)()
        cols = [c for c in want.columns if c.startswith(("tokens_", "n_swept", "recorded_"))]
        assert got[cols].equals(want[cols]), table
    assert a.tool_calls(history=True)["tool_use_id"].tolist() == (
        session.tool_calls(history=True)["tool_use_id"].tolist()
    )
    assert a.settings().context_window == 32_000
    for seq in a.usage()["seq"]:
        assert a.context_at(int(seq))["content"].tolist() == (
            session.context_at(int(seq))["content"].tolist()
        )
    listed = adfkit.list_sessions(tmp_path, format="openclaw")
    assert listed[["path", "layout"]].values.tolist() == [[str(path), "jsonl"]]


def test_recognition_between_openclaw_pi_and_adf(tmp_path: Path) -> None:
    # an OpenClaw file without its index is still OpenClaw's (its entries carry __openclaw)
    assert registry.recognise(jsonl_session(tmp_path / "a", index=False)).name == "openclaw"
    # a pi session beside a sessions.json-less folder is pi's
    pi = tmp_path / "pi.jsonl"
    pi.write_text(
        json.dumps({"type": "session", "version": 3, "id": "x", "timestamp": "t", "cwd": "/"})
        + "\n"
    )
    assert registry.recognise(pi).name == "pi"
    # an unrelated SQLite database is no OpenClaw store (the ADF reader says what it lacks)
    other = tmp_path / "notes.sqlite"
    sqlite3.connect(other).execute("create table notes (x)").connection.close()
    assert registry.recognise(other).name == "adf"
    assert [s.name for s in registry.claimants(registry.Probe(STORE))] == ["openclaw"]
    assert registry.recognise(ROOT / "sample_agents" / "long-runner.adf").name == "adf"


# --- crafted hostile stores ---------------------------------------------------------------------


def crafted(tmp_path: Path, sql: str, *params: Any) -> Path:
    """A copy of the store changed by one statement."""
    folder = tmp_path / "agent"
    folder.mkdir()
    copy = folder / "openclaw-agent.sqlite"
    shutil.copy(STORE, copy)
    con = sqlite3.connect(copy)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute(sql, params)
    con.commit()
    con.close()
    return copy


def test_h440_openclaw_zstd_row_cut_short(tmp_path: Path) -> None:
    path = crafted(
        tmp_path,
        "update transcript_events set event_zstd = substr(event_zstd, 1, length(event_zstd) - 9)"
        " where seq = 9",
    )
    with pytest.raises(
        CorruptFileError,
        match=r"session 'demo-1', transcript_events seq 9: "
        r"event_zstd cut short",
    ) as e:
        quiet(path)[0]
    assert str(path) in str(e.value)


def test_h441_openclaw_zstd_row_larger_than_declared(tmp_path: Path) -> None:
    path = crafted(tmp_path, "update transcript_events set event_utf8_bytes = 100 where seq = 9")
    with pytest.raises(CorruptFileError, match=r"seq 9: event_zstd more than 100 bytes"):
        quiet(path)[0]


def test_h442_openclaw_row_not_json(tmp_path: Path) -> None:
    path = crafted(
        tmp_path, "update transcript_events set event_json = ? where seq = 12", '{"type": "mess'
    )
    with pytest.raises(CorruptFileError, match=r"transcript_events seq 12: not valid JSON") as e:
        quiet(path)[0]
    assert str(path) in str(e.value)


def test_h443_openclaw_database_that_is_not_openclaws(tmp_path: Path) -> None:
    path = tmp_path / "openclaw-agent.sqlite"
    sqlite3.connect(path).execute("create table transcript (x)").connection.close()
    assert registry.recognise(path).name == "openclaw"
    with pytest.raises(NotTranscriptError, match="not an OpenClaw store") as e:
        quiet(path)
    assert str(path) in str(e.value)


def test_h444_openclaw_fifo_in_place_of_the_store(tmp_path: Path) -> None:
    path = tmp_path / "openclaw-agent.sqlite"
    os.mkfifo(path)
    with pytest.raises(AdfError) as e:
        quiet(path)
    assert str(path) in str(e.value)


# --- adfsynth's store against its ground truth --------------------------------------------------


def test_adfsynth_store_reads_back_its_ground_truth(tmp_path: Path) -> None:
    from adfsynth.openclaw import write_store

    store = write_store(tmp_path)
    truth = json.loads(store.with_name("openclaw-agent.truth.json").read_text())
    con = sqlite3.connect(f"file:{store}?immutable=1", uri=True)
    (packed,) = con.execute("select count(*) from transcript_events where event_zstd is not null")
    con.close()
    assert packed[0] > 0  # some rows are read through the zstd reader
    col = quiet(store)
    assert col.names == [truth["session_id"]]
    a = col[0]
    store_db = Store(store)
    t = parse_store_session(store_db.db, store_db.windows[0], max_bytes=2**20)
    store_db.close()
    line_of = {r.seq: r.line for r in t.rows}  # a row's line is its entry's seq
    assert [r.line for r in t.rows] == truth["rows"]
    assert [r.role for r in t.rows] == truth["roles"]
    assert [r.line for r in t.other_branches] == truth["other_branches"]
    u = a.usage()
    assert len(u) == truth["n_calls"]
    for k in ("input", "output", "cache_read", "cache_write"):
        assert int(u[f"tokens_{k}"].sum()) == truth["usage"][k], k
    comps = [e for e in t.events if e.kind == "compaction"]
    want = truth["compactions"]
    assert len(comps) == len(want) == 3
    for e, c in zip(comps, want, strict=True):
        assert e.line == c["seq"]
        assert (e.pre_tokens, e.post_tokens) == (
            c["tokens_before_recorded"],
            c["tokens_after_recorded"],
        )
        assert sorted(line_of[q] for q in e.swept) == c["swept"]
        assert sorted(line_of[q] for q in e.preserved) == c["preserved"]
    comp = a.compactions()
    assert list(comp["recorded_tokens_after"]) == [c["tokens_after_recorded"] for c in want]
    assert list(comp["n_swept"]) == [len(c["swept"]) for c in want]
    assert sorted(line_of[int(q)] for q in a.loop()["seq"]) == truth["window"]
    assert a.settings().context_window == truth["context_window"]
    assert int(a.usage()["cost_usd"].notna().sum()) == truth["n_calls"]  # priced model


def test_info_of_a_store_session_has_no_file_size(session: adfkit.AgentFile) -> None:
    """A session of a store is no file of its own: its size is unknown, not 0 B."""
    assert session.info()["file_bytes"] is None


def test_a_running_openclaw_is_read_through_its_wal(tmp_path: Path) -> None:
    """OpenClaw running: its commits still in the ``-wal`` are seen, nothing is created or
    changed beside the store (the ADF reader's ``mode=ro&readonly_shm=1``)."""
    path = tmp_path / "openclaw-agent.sqlite"
    shutil.copy(STORE, path)
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        entry = dict(rows_of(STORE)[4][1])
        entry["message"] = {**entry["message"], "content": "task-c1 as the running agent has it"}
        writer.execute(
            "update transcript_events set event_json = ? where seq = 4", (json.dumps(entry),)
        )
        writer.commit()
        files = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
        assert {"openclaw-agent.sqlite-wal", "openclaw-agent.sqlite-shm"} <= set(files)
        col = quiet(path)
        first = col[0].history()["content"].iloc[0]
        col.close()
        assert json.loads(first)[0]["text"] == "task-c1 as the running agent has it"
        assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == files
    finally:
        writer.close()


def test_observe_classifies_openclaws_tools() -> None:
    from adfkit._analysis.observe import classify_call, default_taxonomy

    tax = default_taxonomy("openclaw")
    got = {n: classify_call(n, {}, tax) for n in ("exec", "write", "read", "ls", "sessions_yield")}
    assert got == {
        "exec": "world",
        "write": "world",
        "read": "internal",
        "ls": "internal",
        "sessions_yield": "internal",
    }


def test_a_store_of_two_sessions_is_two_agents(tmp_path: Path) -> None:
    """Each session of a store is an agent of its own, ``store#<session>`` opens one."""
    path = crafted(
        tmp_path,
        "insert into session_windows (session_id, session_key, created_at, updated_at) "
        "select 'demo-2', 'agent:main:explicit:demo-2', created_at + 1, updated_at + 1 "
        "from session_windows where session_id = 'demo-1'",
    )
    con = sqlite3.connect(path)
    con.execute("PRAGMA ignore_check_constraints = ON")  # its CHECKs need SQLite 3.43
    con.execute(  # the second session: the first turn's rows (seq 0-12) again
        "insert into transcript_events select 'demo-2', seq, event_json, created_at, "
        "event_zstd, event_utf8_bytes, navigation_json from transcript_events "
        "where session_id = 'demo-1' and seq <= 12"
    )
    con.commit()
    con.close()
    col = quiet(path)
    assert col.names == ["demo-1", "demo-2"]
    assert [len(a.usage()) for a in col] == [15, 3]
    one = quiet(f"{path}#demo-2")
    assert isinstance(one, adfkit.AgentFile) and len(one.usage()) == 3
    listed = adfkit.list_sessions(tmp_path, format="openclaw")
    assert sorted(listed["session_id"]) == ["demo-1", "demo-2"]
    with pytest.raises(AdfError, match="no session 'demo-3'"):
        quiet(f"{path}#demo-3")
