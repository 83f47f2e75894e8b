"""OpenCode stores: the reader against the store OpenCode 1.18.33 wrote (tests/fixtures/recorded,
``make record AGENT=opencode``; its figures are in test_recorded.py), the adfsynth store and its
ground truth, and hand-built hostile stores."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import adfkit
from adfkit._base.errors import AdfError, MalformedRowError
from adfkit._core import registry
from adfsynth.opencode import write_samples

RECORDED = Path(__file__).parent / "fixtures" / "recorded" / "opencode" / "1.18.33"
STORE = RECORDED / "home" / ".local" / "share" / "opencode" / "opencode.db"


def _store_ids() -> tuple[str, str, str, str, str, str]:
    """Ids of the recorded store, read here without adfkit (a re-recording makes new ones):
    the main session, its child, the main session's first reply and that reply's text part,
    the first compaction's summary message and the user message that asked for it."""
    con = sqlite3.connect(f"file:{STORE}?immutable=1", uri=True)
    try:
        (main,) = con.execute("SELECT id FROM session WHERE parent_id IS NULL").fetchone()
        (child,) = con.execute("SELECT id FROM session WHERE parent_id = ?", (main,)).fetchone()
        msgs = [
            (mid, json.loads(data))
            for mid, data in con.execute(
                "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                (main,),
            )
        ]
        reply = next(mid for mid, d in msgs if d["role"] == "assistant")
        (text_part,) = con.execute(
            "SELECT id FROM part WHERE message_id = ? AND json_extract(data, '$.type') = 'text'",
            (reply,),
        ).fetchone()
    finally:
        con.close()
    summary, asked = next((mid, d["parentID"]) for mid, d in msgs if d.get("summary") is True)
    return main, child, reply, text_part, summary, asked


MAIN, CHILD, FIRST_REPLY, FIRST_REPLY_TEXT, FIRST_SUMMARY, FIRST_ASK = _store_ids()


def _log() -> list[dict[str, Any]]:
    with (RECORDED / "requests.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _open(path: str | Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no price for the recording's model
        return adfkit.open(path)


def _claims(path: Path) -> list[str]:
    return [s.name for s in registry.claimants(registry.Probe(path))]


# --- the recorded store ---------------------------------------------------------------------------


def test_the_store_is_claimed_by_opencode_alone() -> None:
    """Before the reader, the ADF spec claimed every SQLite file, opencode.db too."""
    assert _claims(STORE) == ["opencode"]


def test_a_renamed_store_is_recognised_by_its_tables(tmp_path: Path) -> None:
    copy = tmp_path / "backup.sqlite"
    shutil.copyfile(STORE, copy)
    assert _claims(copy) == ["opencode"]


def test_an_adf_file_and_another_database_are_not_claimed(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE `message` (id text)")  # one of the two tables only
    con.commit()
    con.close()
    assert _claims(other) == ["adf"]  # any other SQLite file: ADF's reader says what it is
    adf = tmp_path / "agent.adf"
    shutil.copyfile(STORE, adf)
    assert _claims(adf) == ["adf"]  # an .adf name is ADF's, whatever it holds


def test_one_agent_per_top_level_session_and_the_subagent() -> None:
    store = _open(STORE)
    assert isinstance(store, adfkit.AgentCollection)
    assert store.names == [MAIN]
    assert store.paths == [f"{STORE}#{MAIN}"]
    (sub,) = store[0].subagents()
    assert sub.name == f"agent-{CHILD}"
    assert sub.meta()["parent_tool_use_id"] == "call_rec00004"
    child = _open(f"{STORE}#{CHILD}")  # a child session by its id, as the listing names it
    # the subagent's calls in the request log: its first message is its task prompt
    want = [
        x["answer"]["usage"]["input"]
        for x in _log()
        if x["kind"] == "turn"
        and x["call"]["messages"][0]["content"][0].get("text", "").startswith("task-s1")
    ]
    assert child.usage()["tokens_input"].tolist() == want and len(want) == 2


def test_the_recorded_compactions() -> None:
    """The manual compaction (POST /session/ID/summarize) and the automatic one: trigger,
    the rows kept from tail_start_id, the count OpenCode's check compared (the last call's
    tokens.total), the compaction call's usage on the summary."""
    a = _open(STORE)[0]
    c = a.compactions()
    assert c["kind"].tolist() == ["manual", "auto"]
    # tokens.total of the main session's last call before each: its input and output as the
    # request log says them
    log = _log()
    before = [
        next(x for x in reversed(log[: log.index(k)]) if x["kind"] == "turn")["answer"]["usage"]
        for k in log
        if k["kind"] == "compaction"
    ]
    want = [u["input"] + u["output"] for u in before]
    assert c["recorded_tokens_before"].tolist() == want and len(want) == 2
    assert c["recorded_tokens_after"].isna().all()
    sent = [x["answer"]["usage"] for x in _log() if x["kind"] == "compaction"]
    assert c["compaction_input"].tolist() == [u["input"] for u in sent]
    assert c["compaction_output"].tolist() == [u["output"] for u in sent] == [40, 40]
    assert c["n_swept"].tolist() == [6, 17]
    assert c["n_tail"].tolist() == [9, 4]
    st = a.settings()
    assert (st.compact_threshold, st.threshold_source) == (want[1], "recorded")


def test_listing_the_default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    shutil.copytree(RECORDED / "home", home)
    monkeypatch.setenv("HOME", str(home))
    df = adfkit.list_sessions(format="opencode")
    assert df["session_id"].tolist() == [MAIN, CHILD]  # newest first (time_updated)
    assert df["parent_id"].tolist()[1] == MAIN and pd.isna(df["parent_id"].iloc[0])
    assert df["title"].tolist() == ["Tidy the demo project", "Copy app (@general subagent)"]
    assert df["agent_version"].tolist() == ["1.18.33"] * 2
    assert registry.spec("opencode").default_root == "~/.local/share/opencode"


def test_reading_creates_nothing_beside_the_store(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copyfile(STORE, folder / "opencode.db")
    folder.chmod(0o555)  # a read-only folder: a sidecar could not be made anyway
    try:
        a = _open(folder / "opencode.db")[0]
        assert len(a.history()) == 35
        assert sorted(os.listdir(folder)) == ["opencode.db"]
    finally:
        folder.chmod(0o755)


# --- adfsynth -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    (store,) = write_samples(tmp_path_factory.mktemp("synth"))
    truth = json.loads((store.parent / "opencode.truth.json").read_text())
    return store, truth


def _keys(a: Any) -> dict[int, str]:
    idx = a.source.row_index()
    return dict(zip(idx["seq"].astype(int), idx["uuid"], strict=True))


def test_synth_sessions(synth: tuple[Path, dict[str, Any]]) -> None:
    store, truth = synth
    coll = _open(store)
    assert coll.names == truth["top"]
    (main,) = [a for a in coll if a.name == truth["top"][0]]
    assert [s.name for s in main.subagents()] == [
        f"agent-{c}" for c in truth["children"][main.name]
    ]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_synth_matches_its_truth(synth: tuple[Path, dict[str, Any]], which: int) -> None:
    """Calls and tokens by kind, tool calls by name, compactions (trigger, swept and kept
    rows, the count before), the prune's cleared results, and every call's window in the
    order OpenCode sends it."""
    store, truth = synth
    sid = list(truth["sessions"])[which]
    t = truth["sessions"][sid]
    a = _open(f"{store}#{sid}")
    u = a.usage()
    kinds = u["call_kind"].astype(str).map({"assistant": "turn", "compaction": "compaction"})
    assert dict(Counter(kinds)) == t["calls"]
    for kind, want in t["tokens"].items():
        got = u[kinds == kind]
        assert {k: int(got[f"tokens_{k}"].sum()) for k in want} == want, kind
    assert dict(Counter(a.tool_calls(history=True)["tool_name"])) == t["tool_calls"]
    keys = _keys(a)
    comp = a.compactions()
    comp = comp[comp["event"] == "compaction"]
    got_c = [
        {
            "trigger": k,
            "summary": keys[int(s)],
            "swept": sorted(keys[q] for q in sw),
            "kept": sorted(keys[q] for q in tail),
            "pre_tokens": int(pre),
        }
        for k, s, sw, tail, pre in zip(
            comp["kind"],
            comp["summary_seq"],
            comp["swept_seqs"],
            comp["tail_seqs"],
            comp["recorded_tokens_before"],
            strict=True,
        )
    ]
    want_c = [
        c | {"swept": sorted(c["swept"]), "kept": sorted(c["kept"])} for c in t["compactions"]
    ]
    assert got_c == want_c
    changes = a.source.window_changes()
    ev = a.events()
    cleared = [
        sorted(keys[q] for q in ch.cleared)
        for e, ch in zip(ev["event"], changes, strict=True)
        if e == "microcompaction"
    ]
    assert cleared == [sorted(p) for p in t["prunes"]]
    calls = a.calls()
    for key, window in t["windows"].items():
        (seq,) = calls.loc[calls["key"] == key, "seq"].tolist()
        rows = a.context_at(int(seq))  # OpenCode's synthetic "Continue" message too
        assert [keys[int(q)] for q in rows["seq"]] == window, key


def test_synth_pruned_outputs_are_stubs_after_the_prune(
    synth: tuple[Path, dict[str, Any]],
) -> None:
    """A pruned tool output is sent as a stub from the prune on (OpenCode keeps the output in
    the part and sends "[Old tool result content cleared]"): replay's estimate of the first call
    after the prune counts the stub, not the output."""
    store, truth = synth
    sid = truth["top"][0]
    a = _open(f"{store}#{sid}")
    ev = a.events()
    (bound,) = ev.loc[ev["event"] == "microcompaction", "boundary_seq"].tolist()
    r = a.replay().set_index("seq")
    after = [q for q in r.index if q > bound and not pd.isna(r.loc[q, "est_chars"])]
    before = [q for q in r.index if q <= bound and not pd.isna(r.loc[q, "est_chars"])]
    keys = _keys(a)
    pruned = set(truth["sessions"][sid]["prunes"][0])
    seqs = [q for q, k in keys.items() if k in pruned]
    chars = a.history().set_index("seq")["content"].str.len()
    saved = sum(int(chars[q]) for q in seqs)
    assert saved > 0 and before and after
    grown = int(r.loc[after[0], "est_chars"]) - int(r.loc[before[-1], "est_chars"])
    assert grown < int(r.loc[before[-1], "est_chars"])  # the window shrank by the outputs
    assert a.compactions().query("event == 'microcompaction'")["n_swept"].tolist() == [0]


def test_synth_listing(synth: tuple[Path, dict[str, Any]]) -> None:
    store, truth = synth
    df = adfkit.list_sessions(store.parent, format="opencode")
    assert sorted(df["session_id"]) == sorted(truth["sessions"])
    assert all(p.startswith(f"{store}#") for p in df["path"])


# --- hostile stores ------------------------------------------------------------------------------


def _copy(tmp_path: Path) -> Path:
    p = tmp_path / "opencode.db"
    shutil.copyfile(STORE, p)
    return p


def _edit(p: Path, sql: str, *args: Any) -> None:
    con = sqlite3.connect(p)
    con.execute(sql, args)
    con.commit()
    con.close()


def test_a_database_that_is_not_opencodes(tmp_path: Path) -> None:
    p = tmp_path / "opencode.db"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE notes (id integer)")
    con.commit()
    con.close()
    with pytest.raises(
        AdfError, match=r"opencode\.db: .*no session, message, part.*not an OpenCode"
    ):
        adfkit.open(p)


def test_a_fifo_in_place_of_the_store(tmp_path: Path) -> None:
    p = tmp_path / "opencode.db"
    os.mkfifo(p)
    with pytest.raises(AdfError, match=r"opencode\.db: not a regular file"):
        adfkit.open(p)


def test_malformed_json_in_a_part_row(tmp_path: Path) -> None:
    p = _copy(tmp_path)
    _edit(
        p,
        'UPDATE part SET data = \'{"type": "text", "te\' WHERE id = ?',
        FIRST_REPLY_TEXT,
    )
    with pytest.raises(
        MalformedRowError,
        match=rf"opencode\.db: part {FIRST_REPLY_TEXT}: data is not JSON",
    ):
        _open(p)[0]


def test_a_part_pointing_at_no_message(tmp_path: Path) -> None:
    p = _copy(tmp_path)
    _edit(p, "UPDATE part SET message_id = 'msg_gone' WHERE id = ?", FIRST_REPLY_TEXT)
    with pytest.raises(
        MalformedRowError,
        match=rf"opencode\.db: part {FIRST_REPLY_TEXT} \(session "
        rf"{MAIN}\) belongs to message 'msg_gone', which the session does not have",
    ):
        _open(p)[0]


def test_a_message_row_that_is_not_an_object(tmp_path: Path) -> None:
    p = _copy(tmp_path)
    _edit(p, "UPDATE message SET data = '[1]' WHERE id = ?", FIRST_REPLY)
    with pytest.raises(
        MalformedRowError,
        match=rf"message {FIRST_REPLY}: data is JSON but not an object",
    ):
        _open(p)[0]


def test_an_unknown_session_is_named(tmp_path: Path) -> None:
    with pytest.raises(
        AdfError, match=rf"no OpenCode session 'ses_nope' in the store \(sessions: {MAIN}"
    ):
        adfkit.open(f"{STORE}#ses_nope")


# --- opencode export ------------------------------------------------------------------------------


def _export(store: Path, sid: str, out: Path, *, stderr_line: bool = False) -> Path:
    """The document ``opencode export <sid>`` writes (cli/cmd/export.ts: ``{info, messages:
    [{info, parts}], todos}``, two-space indents; the message and part ids inside), built from
    the store's rows."""
    con = sqlite3.connect(f"{store.as_uri()}?immutable=1", uri=True)
    try:
        r = con.execute(
            "SELECT id, slug, project_id, directory, title, version, time_created, time_updated "
            "FROM session WHERE id = ?",
            (sid,),
        ).fetchone()
        info = dict(
            zip(("id", "slug", "projectID", "directory", "title", "version"), r[:6], strict=True)
        )
        info["time"] = {"created": r[6], "updated": r[7]}
        messages = []
        for mid, data in con.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY id", (sid,)
        ):
            parts = [
                {"id": pid, "sessionID": sid, "messageID": mid, **json.loads(d)}
                for pid, d in con.execute(
                    "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (mid,)
                )
            ]
            messages.append(
                {"info": {"id": mid, "sessionID": sid, **json.loads(data)}, "parts": parts}
            )
    finally:
        con.close()
    text = json.dumps({"info": info, "messages": messages, "todos": []}, indent=2) + "\n"
    out.write_text((f"Exporting session: {sid}\n" if stderr_line else "") + text)
    return out


@pytest.mark.parametrize("stderr_line", [False, True])
def test_an_export_reads_as_its_session_in_the_store(tmp_path: Path, stderr_line: bool) -> None:
    doc = _export(STORE, MAIN, tmp_path / "session.json", stderr_line=stderr_line)
    assert _claims(doc) == ["opencode"]
    a, b = _open(doc), _open(STORE)[0]
    assert isinstance(a, adfkit.AgentFile) and a.name == MAIN
    cols = ["seq", "ord", "role", "kind", "origin", "content"]
    pd.testing.assert_frame_equal(a.history()[cols], b.history()[cols])
    pd.testing.assert_frame_equal(a.usage(), b.usage())
    pd.testing.assert_frame_equal(a.compactions(), b.compactions())
    assert a.subagents() == []  # an export holds one session: not its task subagent's


def test_an_export_cut_short(tmp_path: Path) -> None:
    doc = _export(STORE, MAIN, tmp_path / "session.json")
    doc.write_bytes(doc.read_bytes()[:5000])
    with pytest.raises(MalformedRowError, match=r"session\.json: not a complete JSON document"):
        adfkit.open(doc)


def test_an_export_part_of_another_message(tmp_path: Path) -> None:
    doc = _export(STORE, MAIN, tmp_path / "session.json")
    d = json.loads(doc.read_text())
    d["messages"][1]["parts"][2]["messageID"] = "msg_elsewhere"
    doc.write_text(json.dumps(d))
    with pytest.raises(
        MalformedRowError,
        match=r"session\.json: messages\[1\]\.parts\[2\] \(prt_\w+\): belongs to message "
        r"'msg_elsewhere'",
    ):
        adfkit.open(doc)


# --- rules, taxonomy, a running store -------------------------------------------------------------


def test_the_threshold_is_assumed_from_opencodes_rule(synth: tuple[Path, dict[str, Any]]) -> None:
    """The store records neither the model's limit.context nor its output limit: the window is
    the catalog's (claude-sonnet-4-5: 200,000), the threshold window - 32,000 (OpenCode's
    output cap), assumed; the synth's counts before its automatic compaction (4,812) do not
    give one, a call above it went on (5,150 before the manual compaction)."""
    store, truth = synth
    st = _open(store)[0].settings()
    assert (st.context_window, st.window_source) == (200_000, "assumed")
    assert (st.compact_threshold, st.threshold_source) == (168_000, "assumed")
    assert "output limit assumed 32,000" in (st.threshold_rule or "")
    assert "the call at seq 11 reached 5,150" in (st.threshold_rule or "")
    assert (st.model, st.provider) == ("anthropic/claude-sonnet-4-5", "anthropic")


def test_every_tool_the_recorded_release_offers_is_classified() -> None:
    offered: set[str] = set()
    with (RECORDED / "requests.jsonl").open() as f:
        for line in f:
            offered |= set(json.loads(line)["call"].get("tools") or [])
    assert len(offered) == 10
    a = _open(STORE)[0]
    taxonomy = adfkit.observe(a).taxonomy["tools"]
    assert sorted(offered - set(taxonomy)) == []
    calls = adfkit.observe(a).calls
    assert dict(zip(calls["tool"], calls["class"], strict=True)) == {
        "bash": "world",
        "read": "internal",
        "write": "world",
        "task": "internal",
        "glob": "internal",
    }


def test_a_store_opencode_is_writing(tmp_path: Path) -> None:
    """OpenCode runs with a write-ahead log: a commit only in the -wal is read (mode=ro with a
    read-only -shm), and reading changes neither sidecar nor creates a file."""
    p = _copy(tmp_path)
    writer = sqlite3.connect(p)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("UPDATE session SET title = 'Renamed while running' WHERE id = ?", (MAIN,))
        writer.commit()
        sides = {f: (f.stat().st_size, f.stat().st_mtime_ns) for f in sorted(tmp_path.iterdir())}
        assert [f.name for f in sides] == ["opencode.db", "opencode.db-shm", "opencode.db-wal"]
        df = adfkit.list_sessions(tmp_path, format="opencode")
        assert df.set_index("session_id").loc[MAIN, "title"] == "Renamed while running"
        assert len(_open(p)[0].history()) == 35
        after = {f: (f.stat().st_size, f.stat().st_mtime_ns) for f in sorted(tmp_path.iterdir())}
        assert after == sides
    finally:
        writer.close()


def test_a_summary_that_did_not_finish_replaces_nothing(tmp_path: Path) -> None:
    """OpenCode ignores a compaction whose summary has an error (completedCompactions): no
    event, the rows stay in the window, and a finding says so."""
    p = _copy(tmp_path)
    con = sqlite3.connect(p)
    (data,) = con.execute("SELECT data FROM message WHERE id = ?", (FIRST_SUMMARY,)).fetchone()
    d = json.loads(data)
    d["error"] = {"name": "MessageAbortedError", "data": {}}
    con.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(d), FIRST_SUMMARY))
    con.commit()
    con.close()
    a = _open(p)[0]
    assert a.compactions()["kind"].tolist() == ["auto"]
    found = a.integrity().set_index("check")["detail"]
    assert found["compaction_failed"] == (
        f"message {FIRST_SUMMARY}: the compaction's summary has an error or did "
        "not finish; OpenCode ignores it"
    )  # a store has no lines: the finding names the message
    assert found["compaction_unanswered"].startswith(f"message {FIRST_ASK}:")


def test_a_parent_cycle_is_not_followed(tmp_path: Path) -> None:
    """Two sessions each the other's parent (a damaged store): neither is a top-level agent,
    each opens by its id with the other as its one subagent."""
    p = _copy(tmp_path)
    _edit(p, "UPDATE session SET parent_id = ? WHERE id = ?", CHILD, MAIN)
    assert _open(p).names == []
    a = _open(f"{p}#{MAIN}")
    assert [s.name for s in a.subagents()] == [f"agent-{CHILD}"]
    assert len(a.usage()) == 16


def test_usage_over_a_folder_of_every_format_counts_the_session_once() -> None:
    """``adfkit usage``'s reading of a folder of every recorded agent: the OpenCode session is
    one session, its 14 turns and its subagent's 2 calls (compaction calls are not counted, as
    for every format), under its own id."""
    from adfkit._core.registry import discover
    from adfkit._facade.usage.reading import usage_fleet

    found = discover(str(RECORDED.parent.parent))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, _errors = usage_fleet(found.inputs, engine="serial")
    mine = [r for r in rows if r["agent"] == MAIN]
    assert {r["agent_path"] for r in mine} == {str(STORE)}  # the input, as for Inspect logs
    assert sum(r["calls"] for r in mine) == 16
    assert not [r for r in rows if r["agent"] in (CHILD, f"agent-{CHILD}")]


def test_a_table_that_is_a_view_of_the_credentials_is_refused(tmp_path: Path) -> None:
    """The store keeps tokens (``account``); a ``part`` that is a view over them is refused as
    an ADF file's borrowed tables are, before any row is read."""
    p = _copy(tmp_path)
    con = sqlite3.connect(p)
    con.execute("DROP TABLE part")
    con.execute(
        "CREATE VIEW part AS SELECT id, id AS message_id, id AS session_id, "
        "access_token AS data, time_created FROM account"
    )
    con.commit()
    con.close()
    with pytest.raises(AdfError, match=r"opencode\.db: part is a view, not a table; refusing"):
        adfkit.open(p)
