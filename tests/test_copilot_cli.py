"""GitHub Copilot CLI sessions: the reader is tested on the adfsynth session (written from the
published schema, with ground truth), on hand-built files with every expected value written
here, strictness first (whatever the schema does not name gives a finding), and on the session
Copilot CLI 1.0.102 wrote against the scripted model server (``tests/fixtures/recorded``; its
request log is the truth)."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from conftest import fingerprint
from test_pi import probe, registry

import adfkit
from adfkit._sources import copilot_cli as spec
from adfkit._sources import pi as pi_spec
from adfkit._sources.copilot_cli.listing import list_copilot_sessions
from adfkit._sources.copilot_cli.parser import parse_copilot_cli
from adfsynth.copilot_cli import write_samples

SID = "7d3f1c2e-5a6b-4c8d-9e0f-1a2b3c4d5e6f"


class Co:
    """An events.jsonl written event by event."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.n = 0
        self.last: str | None = None
        self.ev(
            "session.start",
            {
                "sessionId": SID,
                "version": 1,
                "producer": "copilot-agent",
                "copilotVersion": "0.0.400",
                "startTime": "2026-03-14T09:00:00.000Z",
                "selectedModel": "gpt-5",
                "context": {"cwd": "/w"},
            },
        )

    def ev(self, type_: str, data: Any, **env: Any) -> int:
        self.n += 1
        eid = f"e{self.n:04d}"
        rec = {
            "id": eid,
            "parentId": self.last,
            "timestamp": f"2026-03-14T09:00:{self.n:02d}.000Z",
            "type": type_,
            "data": data,
            **env,
        }
        self.last = eid
        self.lines.append(json.dumps(rec).encode())
        return len(self.lines)

    def raw(self, data: bytes) -> int:
        self.lines.append(data)
        return len(self.lines)

    def user(self, text: str) -> int:
        return self.ev("user.message", {"content": text})

    def asst(self, text: str = "", calls: tuple[str, ...] = (), out: int = 10) -> int:
        reqs = [{"toolCallId": c, "name": "bash", "arguments": {"command": "ls"}} for c in calls]
        return self.ev(
            "assistant.message",
            {"messageId": f"m{self.n}", "content": text, "toolRequests": reqs, "outputTokens": out},
        )

    def result(self, cid: str, text: str = "ok", ok: bool = True) -> int:
        d: dict[str, Any] = {"toolCallId": cid, "success": ok}
        d["result" if ok else "error"] = {"content": text} if ok else {"message": text}
        return self.ev("tool.execution_complete", d)

    def write(self, folder: Path, tail: bytes = b"") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "events.jsonl").write_bytes(b"\n".join(self.lines) + b"\n" + tail)
        return folder


def parse(p: Path, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_copilot_cli(p, **kw)


def lines(rows: Any) -> list[int]:
    return [r.line for r in rows]


def _compacting(c: Co) -> dict[str, int]:
    n = {"sys": c.ev("system.message", {"role": "system", "content": "You are Copilot."})}
    n["u1"] = c.user("list files")
    n["a1"] = c.asst(calls=("t1",), out=12)
    n["r1"] = c.result("t1", "a\nb")
    n["a2"] = c.asst("two files", out=5)
    n["start"] = c.ev(
        "session.compaction_start",
        {
            "conversationTokens": 900,
            "systemTokens": 100,
            "toolDefinitionsTokens": 50,
            "currentTokens": 1050,
            "tokenLimit": 10_000,
            "model": "gpt-5",
            "trigger": "threshold",
        },
    )
    n["u2"] = c.user("and count them")  # sent while the compaction runs: kept
    used = {
        "inputTokens": 1050,
        "outputTokens": 80,
        "cacheReadTokens": 1000,
        "cacheWriteTokens": 0,
        "duration": 900,
        "model": "gpt-5-mini",
    }
    n["done"] = c.ev(
        "session.compaction_complete",
        {
            "success": True,
            "preCompactionTokens": 1050,
            "postCompactionTokens": 300,
            "preCompactionMessagesLength": 6,
            "messagesRemoved": 4,
            "tokensRemoved": 750,
            "summaryContent": "SUMMARY",
            "checkpointNumber": 1,
            "compactionTokensUsed": used,
            "trigger": "threshold",
            "tokenLimit": 10_000,
        },
    )
    n["a3"] = c.asst("2", out=3)
    return n


def test_compaction_from_the_schema(tmp_path: Path) -> None:
    c = Co()
    n = _compacting(c)
    t = parse(c.write(tmp_path / SID))
    assert lines(t.rows) == [n[k] for k in ("sys", "u1", "a1", "r1", "a2", "u2", "done", "a3")]
    seq = {r.line: r.seq for r in t.rows}
    (e,) = t.events
    assert (e.kind, e.trigger, e.pre_tokens, e.post_tokens) == (
        "compaction",
        "threshold",
        1050,
        300,
    )
    assert e.swept == tuple(seq[n[k]] for k in ("u1", "a1", "r1", "a2"))
    assert e.preserved == (seq[n["sys"]], seq[n["u2"]])
    assert e.context_window == 10_000 and e.extra["swept_estimated"] is True
    assert e.extra["messagesRemoved"] == 4 and e.extra["start_line"] == n["start"]
    s = t.rows[6]
    assert s.kind_hint == "compaction_summary" and s.content == [
        {"type": "text", "text": "SUMMARY"}
    ]
    assert s.tokens == {"input": 1050, "output": 80, "cache_read": 1000, "cache_write": 0}
    assert s.model == "gpt-5-mini"
    assert t.rows[2].content[0] == {
        "type": "tool_use",
        "id": "t1",
        "name": "bash",
        "input": {"command": "ls"},
    }
    assert t.rows[3].content == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "a\nb", "is_error": False}
    ]
    assert [c.tokens for c in t.calls] == [{"output": 12}, {"output": 5}, s.tokens, {"output": 3}]
    assert t.session_id == SID and t.meta["cwd"] == "/w" and t.findings == []

    a = adfkit.AgentFile(spec.open_session(tmp_path / SID))
    comp = a.compactions()
    assert list(comp["recorded_tokens_before"]) == [1050]
    assert list(comp["recorded_tokens_after"]) == [300]
    assert list(comp["n_swept"]) == [4]
    u = a.usage()
    assert list(u["call_kind"]) == ["assistant", "assistant", "compaction", "assistant"]
    assert u["tokens_input"].isna().tolist() == [True, True, False, True]  # not on disk per call
    assert list(u["tokens_output"]) == [12, 5, 80, 3]
    assert list(a.loop()["seq"]) == [seq[n[k]] for k in ("sys", "u2", "done", "a3")]


def test_strict_about_what_the_schema_does_not_name(tmp_path: Path) -> None:
    c = Co()
    u = c.user("hi")  # 2
    c.ev("brand.new_event", {"x": 1})  # 3
    a = c.ev("assistant.message", {"messageId": "m", "content": "yo", "sparkle": True})  # 4
    c.ev("assistant.turn_start", {"turnId": "1"}, extraEnvelope=1)  # 5
    usage = {"model": "gpt-5", "inputTokens": 500, "outputTokens": 9, "cacheReadTokens": 400}
    c.ev("assistant.usage", usage, ephemeral=True)  # 6: ephemeral, yet on disk
    c.ev("session.info", {"infoType": "x", "message": "m"})  # 7: known, not read
    p = c.write(tmp_path / SID)
    with pytest.warns(adfkit.AdfWarning):
        t = parse_copilot_cli(p)
    got = sorted((f.check, f.severity, f.line) for f in t.findings)
    assert got == [
        ("ephemeral_on_disk", "info", 6),
        ("event_not_read", "info", None),
        ("unknown_event_type", "warning", 3),
        ("unknown_field", "warning", 4),
        ("unknown_field", "warning", 5),
    ]
    assert lines(t.rows) == [u, a]
    assert t.rows[1].tokens == {"input": 500, "output": 9, "cache_read": 400}
    assert any("sparkle" in f.detail for f in t.findings)


def test_hostile_lines_give_findings(tmp_path: Path) -> None:
    c = Co()
    c.user("hi")  # 2
    c.raw(b'{"id":"x","type":"user.message","data":{')  # 3
    c.raw(b'{"id":"y","type":"user.message","data":{"content":"' + b"x" * 5000 + b'"}}')  # 4
    c.lines.append(
        b'{"id":"z","parentId":"nope","timestamp":"t","type":"user.message","data":{"content":"a"}}'
    )
    c.ev(
        "session.compaction_complete",
        {"success": True, "messagesRemoved": 9, "summaryContent": "S"},
    )  # 6
    c.ev("assistant.message", {"messageId": "m", "content": "", "outputTokens": -3})  # 7
    p = c.write(tmp_path / SID, tail=b'{"id":"w","ty')
    with pytest.warns(adfkit.AdfWarning) as rec:
        t = parse_copilot_cli(p, max_line_bytes=4096)
    assert len(rec) == 1 and "xxxx" not in str(rec[0].message)
    got = sorted((f.check, f.line) for f in t.findings)
    assert got == [
        ("bad_json", 3),
        ("bad_token_count", 7),
        ("compaction_count_mismatch", 6),
        ("compaction_incomplete", 6),
        ("dangling_parent", 5),
        ("huge_line", 4),
        ("truncated_last_line", 8),
    ]
    assert t.rows[-1].tokens == {}  # a count that is no count is NA


def test_bom_and_folder_or_file(tmp_path: Path) -> None:
    c = Co()
    c.user("hi")
    folder = tmp_path / SID
    folder.mkdir()
    f = folder / "events.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + b"\n".join(c.lines) + b"\n")
    assert spec.claims(probe(folder)) and spec.claims(probe(f))
    assert not pi_spec.claims(probe(f))
    assert [r.content for r in parse(folder).rows] == [[{"type": "text", "text": "hi"}]]
    assert parse(f).session_id == SID


@pytest.mark.parametrize(
    "first",
    [
        b'{"type":"session","id":"x","timestamp":"t","cwd":"/"}',
        b'{"type":"user","uuid":"u","sessionId":"s","message":{"content":"x"}}',
        b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}',
        b'{"id":"e","type":"session.start","timestamp":"t","data":{}}',
    ],
)
def test_other_records_are_not_claimed(tmp_path: Path, first: bytes) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "events.jsonl").write_bytes(first + b"\n")
    assert not spec.claims(probe(folder))
    with pytest.raises(adfkit.NotTranscriptError, match="not a Copilot CLI session"):
        parse_copilot_cli(folder)


@pytest.mark.parametrize(("data", "match"), [(b"", "empty file"), (b"\x00\x01" * 40, "binary")])
def test_not_a_session(tmp_path: Path, data: bytes, match: str) -> None:
    (tmp_path / "events.jsonl").write_bytes(data)
    with pytest.raises(adfkit.AdfError, match=match):
        parse_copilot_cli(tmp_path)


def test_folder_without_events(tmp_path: Path) -> None:
    with pytest.raises(adfkit.NotTranscriptError, match="without events.jsonl") as ei:
        parse_copilot_cli(tmp_path)
    assert str(tmp_path) in str(ei.value)


# --- the adfsynth session ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    (folder,) = write_samples(tmp_path_factory.mktemp("synth"))
    return folder


def test_synth_matches_ground_truth(synth: Path) -> None:
    truth = json.loads((synth / "events.truth.json").read_text())
    before = fingerprint(synth)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = parse_copilot_cli(synth)
    assert fingerprint(synth) == before
    assert len(w) == 1  # the half-written last line
    assert sorted((f.check, f.line) for f in t.findings) == [
        ("compaction_failed", next(f.line for f in t.findings if f.check == "compaction_failed")),
        ("truncated_last_line", truth["half_written_line"]),
    ]
    assert lines(t.rows) == truth["rows"]
    assert [r.role for r in t.rows] == truth["roles"]
    assert [r.kind_hint for r in t.rows] == truth["kind_hints"]
    (sub,) = t.subagents
    assert sub.agent_id == truth["subagent_id"] and lines(sub.rows) == truth["subagent_rows"]
    line_of = {r.seq: r.line for r in t.rows}
    assert len(t.events) == len(truth["compactions"]) == 3
    for e, c in zip(t.events, truth["compactions"], strict=True):
        assert (e.line, e.trigger, e.pre_tokens, e.post_tokens) == (
            c["line"],
            c["trigger"],
            c["pre"],
            c["post"],
        )
        assert sorted(line_of[q] for q in e.swept) == sorted(c["swept"])
        assert sorted(line_of[q] for q in e.preserved) == c["preserved"]
    outs = [x.tokens.get("output", 0) for x in t.calls if t.rows[x.seq - 1].role == "assistant"]
    outs += [x.tokens.get("output", 0) for x in sub.calls]
    assert sum(outs) == truth["output_tokens"]
    assert len(t.calls) + len(sub.calls) == truth["n_assistant_calls"] + 2  # + 2 compactions
    for k, v in truth["totals"].items():
        assert t.meta[f"total_{k}_tokens"] == str(v)
    assert "total_reasoning_tokens" not in t.meta  # not recorded: NA, not 0
    assert t.meta["total_requests"] == str(truth["requests"])

    a = adfkit.AgentFile(spec.open_session(synth))
    line_of = {r.seq: r.line for r in t.rows}
    assert sorted(line_of[int(q)] for q in a.loop()["seq"]) == truth["window"]
    rp = a.replay()  # the window rebuilt for each reply is the one the documented rule gives
    got = {
        line_of[int(q)]: sorted(line_of[int(x)] for x in c)
        for q, c in zip(rp["seq"], rp["context_seqs"], strict=True)
    }
    assert got == {int(k): v for k, v in truth["contexts"].items()}
    comp = a.compactions()
    assert list(comp["recorded_tokens_before"]) == [c["pre"] for c in truth["compactions"]]
    # two summaries written, and a truncation, which writes none by design: none was lost
    assert [c["trigger"] for c in truth["compactions"]][-1] == "truncation"
    assert comp["summary_lost"].tolist() == [False, False, False]
    assert a.usage()["tokens_input"].notna().sum() == 2  # the two compaction calls only
    assert len(a.source.subagents()) == 1


def test_listing_newest_first(tmp_path: Path) -> None:
    old, new = Co(), Co()
    a = old.write(tmp_path / "state" / "a")
    b = new.write(tmp_path / "state" / "b")
    os.utime(a / "events.jsonl", ns=(10**18, 10**18))
    os.utime(b / "events.jsonl", ns=(2 * 10**18, 2 * 10**18))
    (tmp_path / "state" / "c").mkdir()  # no events.jsonl: not a session
    before = fingerprint(tmp_path)
    df = list_copilot_sessions(tmp_path)
    assert fingerprint(tmp_path) == before
    assert list(df["path"]) == [str(b), str(a)]
    assert list(df["session_id"]) == [SID, SID] and list(df["model"]) == ["gpt-5"] * 2
    assert list(df["cwd"]) == ["/w", "/w"]
    assert str(df["modified"].dtype) == "datetime64[ns, UTC]"
    assert list(spec.sessions_under(tmp_path)) == [a, b]
    assert list(spec.find(tmp_path / "state")) == [a, b] and list(spec.find(tmp_path)) == []


def test_compaction_rule() -> None:
    assert spec.compaction_rule("gpt-5", 128_000)[:2] == (128_000, 102_400)
    w, th, text = spec.compaction_rule("gpt-5", None)
    assert (w, th) == (None, None) and "80%" in text


def test_no_counterparts_are_na(tmp_path: Path) -> None:
    c = Co()
    c.user("hi")
    c.asst("hello")
    a = adfkit.AgentFile(spec.open_session(c.write(tmp_path / SID)))
    u = a.usage()
    assert u[["tokens_input", "tokens_cache_read", "tokens_cache_write"]].isna().all().all()
    assert a.compactions().empty and "recorded_tokens_before" in a.compactions().columns


def test_subagent_by_agent_id_or_by_parent_tool_call(tmp_path: Path) -> None:
    c = Co()
    c.user("explore")
    c.asst(calls=("task1",))
    c.ev(
        "subagent.started",
        {
            "toolCallId": "task1",
            "agentName": "explore",
            "agentDisplayName": "Explore",
            "agentDescription": "reads",
        },
    )
    s1 = c.ev(
        "assistant.message", {"messageId": "s", "content": "sub", "parentToolCallId": "task1"}
    )
    s2 = c.ev("assistant.message", {"messageId": "t", "content": "other"}, agentId="ag-2")
    r = c.result("task1", "found it")
    t = parse(c.write(tmp_path / SID))
    assert lines(t.rows) == [2, 3, r]
    subs = {s.agent_id: (lines(s.rows), s.parent_tool_use_id) for s in t.subagents}
    assert subs == {"tool-task1": ([s1], "task1"), "ag-2": ([s2], None)}


def test_adfkit_open_reads_copilot_sessions(synth: Path) -> None:
    for p in (synth, synth / "events.jsonl"):
        assert registry.recognise(p).name == "copilot_cli"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", adfkit.AdfWarning)
            a = adfkit.open(p)
        assert a.format == "copilot_cli"
        cfg = a.source.config()
        # the window the session recorded (tokenLimit); the threshold its automatic
        # compaction shows (preCompactionTokens of the one whose trigger is "threshold"),
        # recorded, where the documented 80% of the window would say 102,400
        assert cfg["context_window"] == 128_000
        assert cfg["context"]["compact_threshold"] == 7_843
        st = a.settings()
        assert st.threshold_source == "recorded" and "would say 102,400" in str(st.threshold_rule)
        assert a.info()["provider"] == "github-copilot"


def test_a_fleet_of_copilot_sessions(synth: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        # the session-state folder: each subfolder holding an events.jsonl is one session
        res = adfkit.load_fleet(synth.parent, "compactions", engine="serial")
    assert res.errors.empty and list(res.df["agent_path"].unique()) == [str(synth)]
    assert len(res.df) == 3


def test_context_cleared_empties_the_window_but_the_system_prompt(tmp_path: Path) -> None:
    c = Co()
    sysm = c.ev("system.message", {"role": "system", "content": "You are Copilot."})
    u1 = c.user("one")
    a1 = c.asst("1")
    c.ev("session.context_cleared", {})
    u2 = c.user("two")
    t = parse(c.write(tmp_path / SID))
    seq = {r.line: r.seq for r in t.rows}
    (e,) = t.events
    assert e.kind == "clear" and e.swept == (seq[u1], seq[a1])
    a = adfkit.AgentFile(spec.open_session(tmp_path / SID))
    assert list(a.loop()["seq"]) == [seq[sysm], seq[u2]]


def test_the_committed_samples_are_what_adfsynth_writes(tmp_path: Path) -> None:
    """``make samples`` rewrites sample_agents/copilot_cli/ byte for byte (the seeded writer)."""
    committed = Path(__file__).resolve().parents[1] / "sample_agents" / "copilot_cli"
    write_samples(tmp_path)
    mine = {
        p.relative_to(tmp_path / "copilot_cli"): p
        for p in (tmp_path / "copilot_cli").rglob("*")
        if p.is_file()
    }
    theirs = {p.relative_to(committed): p for p in committed.rglob("*") if p.is_file()}
    assert sorted(mine) == sorted(theirs) and len(mine) >= 2
    for rel, p in mine.items():
        assert p.read_bytes() == theirs[rel].read_bytes(), rel


# -- 1.0.102, as a recording of the release wrote it (tests/fixtures/recorded/copilot-cli) ----
RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded" / "copilot-cli" / "1.0.102"


def _recorded() -> tuple[Path, list[dict[str, Any]]]:
    (folder,) = (RECORDED / "home" / ".copilot" / "session-state").iterdir()
    with (RECORDED / "requests.jsonl").open(encoding="utf-8") as f:
        log = [json.loads(line) for line in f]
    return folder, log


def test_usage_record_gives_every_call_its_usage() -> None:
    """1.0.102 writes a ``session.usage_record`` before every reply (main agent and subagent),
    its ``apiCallId`` the reply's: each call is a usage row with the input, cache read and
    output the server reported for that call (``chatcmpl-rec<n>`` is the log's line ``n``)."""
    folder, log = _recorded()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = parse_copilot_cli(folder)
    sent = {f"chatcmpl-rec{x['n']:05d}": x["answer"]["usage"] for x in log if x["kind"] == "turn"}
    got = {}
    for tr in [t, *t.subagents]:
        for c in tr.calls:
            row = next((r for r in tr.rows if r.seq == c.seq), None)
            if row is None or row.kind_hint == "compaction_summary":
                continue  # a compaction's call (one cancelled: on no row)
            got[row.uuid] = c.tokens
    assert len(got) == len(sent) == 18
    by_id = _api_call_ids(folder)
    for uuid, tokens in got.items():
        want = sent[by_id[uuid]]
        assert (tokens["input"], tokens["cache_read"], tokens["output"]) == (
            want["input"],
            want["cache_read"],
            want["output"],
        )


def _api_call_ids(folder: Path) -> dict[str, str]:
    """Event id of each ``assistant.message`` -> its ``apiCallId``."""
    out = {}
    for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["type"] == "assistant.message":
            out[rec["id"]] = rec["data"]["apiCallId"]
    return out


def test_a_cancelled_compaction_is_no_compaction() -> None:
    """The last automatic compaction of the recording starts in the background and is
    cancelled when ``copilot -p`` exits (``success: false``, ``outcome: cancelled``): the
    window is unchanged, three compactions remain (two automatic, one manual). The recorder
    holds its answer until Copilot hangs up (the log's ``hangup`` names it), so no usage of it
    reached Copilot and none is on disk: no call of ``calls()`` stands for it."""
    folder, log = _recorded()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = adfkit.open(folder)
    comp = a.compactions()
    assert list(comp["kind"]) == ["threshold", "threshold", "manual"]
    t = parse_copilot_cli(folder, warn=False)
    assert [f.check for f in t.findings].count("compaction_failed") == 1
    (gone,) = [x["of"] for x in log if x["kind"] == "hangup"]
    assert next(x for x in log if x.get("n") == gone)["kind"] == "compaction"
    assert a.calls()["seq"].notna().all()


def test_a_cancelled_compaction_whose_usage_was_recorded_is_a_call(tmp_path: Path) -> None:
    """When the answer beat the exit, Copilot records the cancelled compaction's usage
    (``compactionTokensUsed``, as an earlier recording showed): the call was made and paid,
    so it is a call of ``calls()`` on no row, with those tokens; still no compaction."""
    c = Co()
    c.user("hi")
    c.asst("hello")
    c.ev("session.compaction_start", {"trigger": "threshold", "currentTokens": 900})
    used = {"inputTokens": 17_451, "outputTokens": 120, "cacheReadTokens": 15_808}
    c.ev(
        "session.compaction_complete",
        {
            "success": False,
            "outcome": "cancelled",
            "error": "Compaction Cancelled",
            "trigger": "threshold",
            "compactionTokensUsed": {**used, "model": "gpt-5"},
        },
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = adfkit.open(c.write(tmp_path / SID))
    assert a.compactions().empty
    loose = a.calls()[a.calls()["seq"].isna()]
    assert loose[["tokens_input", "tokens_cache_read", "tokens_output"]].values.tolist() == [
        [17_451, 15_808, 120]
    ]


def test_an_outcome_other_than_applied_changes_nothing(tmp_path: Path) -> None:
    c = Co()
    c.user("hi")
    c.asst("hello")
    c.ev("session.compaction_start", {"trigger": "threshold", "currentTokens": 900})
    c.ev(
        "session.compaction_complete",
        {"success": True, "outcome": "cancelled", "summaryContent": "S", "trigger": "threshold"},
    )
    c.asst("more")
    t = parse_copilot_cli(c.write(tmp_path / SID), warn=False)
    assert t.events == [] and [r.role for r in t.rows] == ["user", "assistant", "assistant"]
    assert [f.check for f in t.findings] == ["compaction_failed"]


def test_trigger_tokens_are_copilots_own_count(tmp_path: Path) -> None:
    """Copilot compacts on its own count of the context, written as ``preCompactionTokens``
    (issue 33 item 7: 160,540 before the compaction, where the last call's recorded output was
    468 and its input is not on disk): ``trigger_tokens`` is that count, never the output."""
    c = Co()
    c.user("work")
    c.asst("working", out=468)
    c.ev("session.compaction_start", {"trigger": "threshold", "currentTokens": 160_000})
    c.ev(
        "session.compaction_complete",
        {
            "success": True,
            "preCompactionTokens": 160_540,
            "postCompactionTokens": 20_000,
            "summaryContent": "S",
            "trigger": "threshold",
        },
    )
    c.asst("on", out=5)
    a = adfkit.AgentFile(spec.open_session(c.write(tmp_path / SID)))
    assert list(a.compactions()["trigger_tokens"]) == [160_540]


def test_trigger_tokens_on_the_recording_are_the_recorded_counts() -> None:
    """With every call's usage on disk, the last call before a compaction has an input too;
    the count Copilot compacted on stays ``preCompactionTokens``."""
    folder, _ = _recorded()
    pre = [
        json.loads(line)["data"].get("preCompactionTokens")
        for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
        if '"session.compaction_complete"' in line
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = adfkit.open(folder).compactions()
    # Copilot's own counts (its system prompt holds the time: they move by a few tokens
    # between recordings); the cancelled compaction records none
    assert len(pre) == 4 and pre[-1] is None
    assert list(comp["trigger_tokens"]) == pre[:3]


def _billing(**counts: int) -> dict[str, Any]:
    lines = [
        {"tokenType": k, "tokenCount": v, "batchSize": 1000, "costPerBatch": 3}
        for k, v in counts.items()
    ]
    return {"totalNanoAiu": 12345, "model": "claude-sonnet-4.5", "tokenDetails": lines}


def test_billing_lines_correct_the_recorded_counts(tmp_path: Path) -> None:
    """``copilotUsage.tokenDetails`` (1.0.102's schema, ``CompactionCompleteCompactionTokensUsed``
    and ``AssistantUsageCopilotUsage``) read as Copilot CLI reads them: a compaction recording
    ``cacheWriteTokens`` 0 whose billing says 139,926 written has a cache write of 139,926 (on
    main: 0); a usage record's cache read from its ``cache_read`` line; input = the ``input``
    line plus the cached parts; a line whose count cannot be read leaves the recorded count."""
    c = Co()
    n = _compacting(c)
    done = json.loads(c.lines[n["done"] - 1])
    used = done["data"]["compactionTokensUsed"]
    used.update(inputTokens=150_000, cacheReadTokens=0, cacheWriteTokens=0)
    used["copilotUsage"] = _billing(input=10_074, cache_write=139_926, output=80)
    c.lines[n["done"] - 1] = json.dumps(done).encode()
    c.ev(
        "session.usage_record",
        {
            "usage": {
                "model": "gpt-5",
                "inputTokens": 5_000,
                "outputTokens": 7,
                "cacheReadTokens": 0,
                "cacheWriteTokens": 0,
                "apiCallId": "call-9",
                "copilotUsage": _billing(input=1_000, cache_read=4_000, cache_write_1h="x"),
            }
        },
    )
    c.ev(
        "assistant.message",
        {"messageId": "m9", "content": "done", "toolRequests": [], "apiCallId": "call-9"},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        calls = adfkit.open(c.write(tmp_path / SID)).usage()
    comp = calls[calls["call_kind"] == "compaction"].iloc[0]
    assert (comp["tokens_input"], comp["tokens_cache_write"], comp["tokens_output"]) == (
        150_000,
        139_926,
        80,
    )
    last = calls.iloc[-1]
    assert (last["tokens_input"], last["tokens_cache_read"], last["tokens_cache_write"]) == (
        5_000,
        4_000,
        0,
    )
