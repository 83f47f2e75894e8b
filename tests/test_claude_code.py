"""Claude Code session transcripts: hand-built tiny files with every expected value written here,
then the parser against the simulator's ground truth on the committed samples."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from conftest import fingerprint

from adfkit._base.errors import AdfWarning, NotTranscriptError
from adfkit._sources.claude_code.listing import list_claude_code_sessions
from adfkit._sources.claude_code.parser import parse_claude_code
from adfkit._sources.transcript.kit import ParsedTranscript

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_agents" / "claude-code"

SID = "11111111-2222-3333-4444-555555555555"


class Log:
    """Builds records with increasing timestamps; ``lines()`` gives the JSONL text."""

    def __init__(self, session: str = SID, side: bool = False, agent: str | None = None) -> None:
        self.recs: list[dict[str, Any] | bytes] = []
        self.t = 0
        self.session = session
        self.side = side
        self.agent = agent

    def _env(self, type_: str, uuid: str | None, parent: str | None) -> dict[str, Any]:
        self.t += 1
        r: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": self.side,
            "userType": "external",
            "cwd": "/home/u/proj",
            "sessionId": self.session,
            "version": "2.1.90",
            "gitBranch": "main",
            "type": type_,
        }
        if self.agent:
            r["agentId"] = self.agent
        if uuid is not None:
            r["uuid"] = uuid
        r["timestamp"] = f"2026-03-01T10:00:{self.t:02d}.000Z"
        return r

    def user(self, uuid: str, parent: str | None, content: Any, **kw: Any) -> dict[str, Any]:
        r = self._env("user", uuid, parent)
        r["message"] = {"role": "user", "content": content}
        r.update(kw)
        self.recs.append(r)
        return r

    def result(self, uuid: str, parent: str | None, tool_id: str, text: str, **kw: Any) -> None:
        c = [{"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": False}]
        self.user(uuid, parent, c, **kw)

    def asst(
        self,
        uuid: str,
        parent: str | None,
        mid: str,
        blocks: list[dict[str, Any]],
        usage: dict[str, int] | None = None,
        req: str | None = "req_1",
        model: str = "claude-sonnet-4-5",
        **kw: Any,
    ) -> None:
        r = self._env("assistant", uuid, parent)
        r["message"] = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": None,
            "usage": usage
            if usage is not None
            else {
                "input_tokens": 3,
                "cache_creation_input_tokens": 10,
                "cache_read_input_tokens": 100,
                "output_tokens": 7,
            },
        }
        if req is not None:
            r["requestId"] = req
        r.update(kw)
        self.recs.append(r)

    def progress(self, uuid: str, parent: str | None) -> None:
        r = self._env("progress", uuid, parent)
        r["data"] = {"type": "hook_progress", "hookEvent": "PostToolUse"}
        self.recs.append(r)

    def system(self, uuid: str, parent: str | None, subtype: str, **kw: Any) -> None:
        r = self._env("system", uuid, parent)
        r["subtype"] = subtype
        r["level"] = "info"
        r.update(kw)
        self.recs.append(r)

    def raw(self, obj: dict[str, Any] | bytes) -> None:
        self.recs.append(obj)

    def write(self, path: Path, tail: bytes = b"") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        out = bytearray()
        for r in self.recs:
            out += r if isinstance(r, bytes) else json.dumps(r).encode()
            out += b"\n"
        path.write_bytes(bytes(out) + tail)
        return path


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool(i: str, name: str = "Read", **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": name, "input": inp}


def usage(inp: int, cw: int, cr: int, out: int) -> dict[str, int]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": cw,
        "cache_read_input_tokens": cr,
        "output_tokens": out,
    }


def parse(p: Path, **kw: Any) -> ParsedTranscript:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean file warns about nothing
        return parse_claude_code(p, **kw)


def uuids(rows: Any) -> list[str | None]:
    return [r.uuid for r in rows]


# --- order, merging, usage ------------------------------------------------------------------


def test_multi_record_call_is_one_row_with_usage_counted_once(tmp_path: Path) -> None:
    log = Log()
    log.raw({"type": "summary", "summary": "Fix the parser", "leafUuid": "a2"})
    log.user("u1", None, "read the file please")
    log.asst(
        "a1a",
        "u1",
        "msg_1",
        [{"type": "thinking", "thinking": "ok", "signature": "SIG"}],
        usage(3, 20, 100, 1),
    )
    log.asst("a1b", "a1a", "msg_1", [text("Reading.")], usage(3, 20, 100, 9))
    log.asst("a1c", "a1b", "msg_1", [tool("t1", file_path="/x")], usage(3, 20, 100, 9))
    log.progress("p1", "a1c")
    log.raw({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}})
    log.result("r1", "a1c", "t1", "file body")
    log.asst("a2", "r1", "msg_2", [text("Done.")], usage(1, 5, 130, 4), req="req_2")
    t = parse(log.write(tmp_path / f"{SID}.jsonl"))
    assert [r.seq for r in t.rows] == [1, 2, 3, 4]
    assert uuids(t.rows) == ["u1", "a1a", "r1", "a2"]
    assert [r.role for r in t.rows] == ["user", "assistant", "user", "assistant"]
    a1 = t.rows[1]
    assert a1.lines == (3, 4, 5)
    assert a1.content == [
        {"type": "thinking", "thinking": "ok"},
        text("Reading."),
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/x"}},
    ]
    # input = 3 + 20 + 100; output from the fragment with the most output (9)
    assert a1.tokens == {"input": 123, "output": 9, "cache_read": 100, "cache_write": 20}
    assert a1.call_key == "msg_1:req_1"
    assert a1.model == "claude-sonnet-4-5"
    assert t.rows[3].tokens == {"input": 136, "output": 4, "cache_read": 130, "cache_write": 5}
    assert t.rows[0].tokens == {} and t.rows[2].tokens == {}
    assert t.rows[2].content == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "file body", "is_error": False}
    ]
    assert len(t.calls) == 2 and t.calls[0].n_records == 3
    assert t.usage() == {"input": 259, "output": 13, "cache_read": 230, "cache_write": 25}
    assert t.other_branches == [] and t.events == []
    assert t.session_id == SID
    assert t.meta["cwd"] == "/home/u/proj" and t.meta["summary"] == "Fix the parser"
    assert t.rows[0].created_at == 1772359201000  # 2026-03-01T10:00:01Z


def test_tool_result_sibling_of_next_fragment_is_spliced(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "look at two files")
    log.asst("a1", "u1", "msg_1", [tool("t1")], usage(2, 0, 50, 3))
    log.result("r1", "a1", "t1", "one")  # written while the next block streamed
    log.asst("a2", "a1", "msg_1", [tool("t2")], usage(2, 0, 50, 8))
    log.result("r2", "a2", "t2", "two")
    log.asst("a3", "r2", "msg_2", [text("both read")], usage(2, 0, 60, 5), req="req_2")
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == ["u1", "a1", "r1", "r2", "a3"]
    assert [b["id"] for b in t.rows[1].content] == ["t1", "t2"]
    assert t.rows[1].tokens["output"] == 8
    assert t.other_branches == []


def test_same_message_id_on_a_separate_row_is_counted_once(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "hi")
    log.asst("a1", "u1", "msg_1", [text("hello")], usage(5, 0, 0, 2))
    log.user("u2", "a1", "again")
    log.asst("a2", "u2", "msg_1", [text("hello")], usage(5, 0, 0, 2))
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == ["u1", "a1", "u2", "a2"]
    assert t.rows[1].tokens == {"input": 5, "output": 2, "cache_read": 0, "cache_write": 0}
    assert t.rows[3].tokens == {}
    assert t.usage()["input"] == 5
    dup = [f for f in t.findings if f.check == "duplicate_usage"]
    assert [(f.line, f.severity) for f in dup] == [(4, "info")]


def test_synthetic_and_api_error_records_carry_no_usage(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "hi")
    log.asst("a1", "u1", "msg_x", [text("No response requested.")], model="<synthetic>")
    log.user("u2", "a1", "hello?")
    log.asst("a2", "u2", "msg_y", [text("API Error: 529")], isApiErrorMessage=True)
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert [r.tokens for r in t.rows] == [{}, {}, {}, {}]
    assert t.rows[1].model is None and t.rows[3].kind_hint == "notice"
    assert t.calls == []


def test_kind_hints(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "<command-name>/clear</command-name>")
    log.user("u2", "u1", [text("caveat text")], isMeta=True)
    log.user("u3", "u2", "<task-notification>agent done</task-notification>")
    log.user("u4", "u3", "plain prompt")
    att = log._env("attachment", "at1", "u4")
    att["attachment"] = {"type": "queued_command", "prompt": "also do X"}
    log.raw(att)
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert [r.kind_hint for r in t.rows] == ["context", "context", "message", None, "message"]
    assert t.rows[4].content == [text("also do X")]


# --- branches and compaction ----------------------------------------------------------------


def test_rewind_keeps_the_last_written_branch_and_exposes_the_other(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "first")
    log.asst("a1", "u1", "msg_1", [text("one")], usage(1, 0, 10, 1))
    log.user("u2", "a1", "second (abandoned)")
    log.asst("a2", "u2", "msg_2", [text("two")], usage(1, 0, 20, 2), req="req_2")
    log.user("u3", "a1", "second, edited")  # rewind to a1
    log.asst("a3", "u3", "msg_3", [text("three")], usage(1, 0, 20, 3), req="req_3")
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == ["u1", "a1", "u3", "a3"]
    assert uuids(t.other_branches) == ["u2", "a2"]
    assert [r.seq for r in t.other_branches] == [5, 6]
    assert {r.branch for r in t.other_branches} == {"branch-1"}
    assert all(r.branch is None for r in t.rows)
    (ev,) = t.events
    assert ev.kind == "rewind" and ev.swept == (5, 6) and ev.line == 5 and ev.uuid == "u3"
    assert ev.extra["fork_uuid"] == "a1"
    # abandoned calls still cost tokens: counted once, on their branch rows
    assert t.usage()["output"] == 6
    assert t.other_branches[1].tokens["output"] == 2


def _compacted_session(log: Log) -> None:
    """u1 a1 [u2 a2 abandoned] u3 a3 u4 a4 | B1(manual, preserve u4 a4) S1 u4' a4' u5 a5 |
    B2(auto) S2 u6 a6."""
    log.user("u1", None, "start")
    log.asst("a1", "u1", "m1", [text("ok")], usage(2, 100, 0, 5), req="r1")
    log.user("u2", "a1", "wrong way")
    log.asst("a2", "u2", "m2", [text("hmm")], usage(2, 10, 100, 5), req="r2")
    log.user("u3", "a1", "right way")
    log.asst("a3", "u3", "m3", [tool("t3", "Bash", command="ls")], usage(2, 30, 100, 5), req="r3")
    log.result("r3", "a3", "t3", "a b c")
    log.asst("a3b", "r3", "m3b", [text("files")], usage(2, 10, 130, 5), req="r3b")
    log.user("u4", "a3b", "keep this")
    log.asst("a4", "u4", "m4", [text("kept answer")], usage(2, 20, 140, 5), req="r4")
    log.system(
        "b1",
        None,
        "compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="a4",
        compactMetadata={
            "trigger": "manual",
            "preTokens": 170,
            "postTokens": 40,
            "userContext": "keep the plan",
            "preservedMessages": {"anchorUuid": "s1", "uuids": ["u4", "a4"]},
        },
    )
    log.user(
        "s1",
        "b1",
        "This session is being continued from a previous conversation that ran out of "
        "context. Summary: ...",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    # preserved copies re-parented under the summary (same uuids)
    c4 = dict(log.recs[8])  # u4
    c4["parentUuid"] = "s1"
    log.raw(c4)
    c4a = dict(log.recs[9])  # a4
    log.raw(c4a)
    log.user("u5", "a4", "continue")
    log.asst("a5", "u5", "m5", [text("continuing")], usage(2, 30, 40, 5), req="r5")
    log.system(
        "b2",
        None,
        "compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="a5",
        compactMetadata={"trigger": "auto", "preTokens": 190},
    )
    log.user(
        "s2",
        "b2",
        [text("This session is being continued ... second summary")],
        isCompactSummary=True,
    )
    log.user("u6", "s2", "go on")
    log.asst("a6", "u6", "m6", [text("sure")], usage(3, 12, 30, 5), req="r6")


def test_compactions_after_a_rewind_with_a_preserved_segment(tmp_path: Path) -> None:
    log = Log()
    _compacted_session(log)
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == [
        "u1",
        "a1",
        "u3",
        "a3",
        "r3",
        "a3b",
        "u4",
        "a4",
        "s1",
        "u5",
        "a5",
        "s2",
        "u6",
        "a6",
    ]
    assert uuids(t.other_branches) == ["u2", "a2"]
    assert [r.seq for r in t.other_branches] == [15, 16]
    assert t.rows[8].kind_hint == "compaction_summary" and t.rows[11].kind_hint == (
        "compaction_summary"
    )
    comp = [e for e in t.events if e.kind == "compaction"]
    assert len(comp) == 2
    c1, c2 = comp
    assert (c1.trigger, c1.pre_tokens, c1.post_tokens) == ("manual", 170, 40)
    assert c1.swept == (1, 2, 3, 4, 5, 6)  # u1 a1 u3 a3 r3 a3b; the abandoned u2 a2 never counted
    assert c1.preserved == (7, 8)
    assert c1.summary_seq == 9
    assert c1.tokens_before == 162  # a4: 2 + 20 + 140
    assert c1.tokens_after == 72  # a5: 2 + 30 + 40
    assert c1.extra["user_context"] == "keep the plan" and c1.line == 11
    # the second window held S1, the preserved u4 a4, then u5 a5
    assert (c2.trigger, c2.pre_tokens, c2.post_tokens) == ("auto", 190, None)
    assert c2.swept == (7, 8, 9, 10, 11) and c2.preserved == () and c2.summary_seq == 12
    assert (c2.tokens_before, c2.tokens_after) == (72, 45)
    (rw,) = [e for e in t.events if e.kind == "rewind"]
    assert rw.swept == (15, 16)
    assert [e.kind for e in t.events] == ["rewind", "compaction", "compaction"]
    assert t.usage()["output"] == 35  # 7 calls, abandoned one included, copies not recounted


def test_preserved_segment_head_to_tail(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "a")
    log.asst("a1", "u1", "m1", [text("b")], usage(1, 1, 1, 1), req="r1")
    log.user("u2", "a1", "c")
    log.asst("a2", "u2", "m2", [text("d")], usage(1, 1, 1, 1), req="r2")
    log.user("u3", "a2", "e")
    log.asst("a3", "u3", "m3", [text("f")], usage(1, 1, 1, 1), req="r3")
    seg = {"headUuid": "u2", "anchorUuid": "s1", "tailUuid": "a2"}
    log.system(
        "b1",
        None,
        "compact_boundary",
        logicalParentUuid="a3",
        compactMetadata={"trigger": "auto", "preTokens": 99, "preservedSegment": seg},
    )
    log.user("s1", "b1", "summary", isCompactSummary=True)
    log.user("u4", "s1", "g")
    t = parse(log.write(tmp_path / "s.jsonl"))
    (c,) = t.events
    assert c.preserved == (3, 4) and c.swept == (1, 2, 5, 6) and c.summary_seq == 7


def test_microcompaction_sweeps_the_cleared_tool_results(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "read")
    log.asst("a1", "u1", "m1", [tool("t1"), tool("t2")], usage(1, 1, 1, 1), req="r1")
    log.result("r1", "a1", "t1", "big")
    log.result("r2", "r1", "t2", "bigger")
    log.system(
        "mc",
        "r2",
        "microcompact_boundary",
        content="Context microcompacted",
        microcompactMetadata={
            "trigger": "auto",
            "preTokens": 5000,
            "tokensSaved": 4000,
            "compactedToolIds": ["t2", "t_unknown"],
        },
    )
    log.asst("a2", "mc", "m2", [text("ok")], usage(1, 1, 1, 1), req="r2")
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == ["u1", "a1", "r1", "r2", "a2"]
    (m,) = t.events
    assert (m.kind, m.swept, m.pre_tokens, m.extra["tokens_saved"]) == (
        "microcompaction",
        (4,),
        5000,
        4000,
    )


def test_duplicate_uuid_replay_is_dropped(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "x")
    log.asst("a1", "u1", "m1", [text("y")], usage(1, 0, 0, 1), req="r1")
    log.raw(dict(log.recs[0]))  # replay of u1 (same uuid and parent)
    log.user("u2", "a1", "z")
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == ["u1", "a1", "u2"] and t.other_branches == []
    assert [f.check for f in t.findings] == ["duplicate_uuid"]


def test_parent_cycle_and_dangling_parent_do_not_hang(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", "u3", "a")  # parent written later: makes a cycle u1 <- u2 <- u3 <- u1
    log.user("u2", "u1", "b")
    log.user("u3", "u2", "c")
    log.user("u4", "missing-uuid", "d")
    t = parse_claude_code(log.write(tmp_path / "s.jsonl"), warn=False)
    # the missing parent is a gap bridged in file order (to u3); the cycle is cut where the
    # walk comes back to a record it has seen
    assert uuids(t.rows) == ["u1", "u2", "u3", "u4"]
    assert {f.check for f in t.findings} >= {"chain_gap", "parent_cycle"}
    assert t.other_branches == []


# --- subagents ------------------------------------------------------------------------------


def test_subagents_current_and_legacy_layout(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "-home-u-proj"
    log = Log()
    log.user("u1", None, "delegate")
    log.asst(
        "a1", "u1", "m1", [tool("task1", "Task", prompt="search")], usage(1, 0, 0, 1), req="r1"
    )
    log.result(
        "r1", "a1", "task1", "found it", toolUseResult={"agentId": "aaa111", "totalTokens": 10}
    )
    log.asst("a2", "r1", "m2", [tool("task2", "Agent", prompt="more")], usage(1, 0, 0, 1), req="r2")
    log.result("r2", "a2", "task2", "done\nagentId: bbb222 (for resuming)")
    main = log.write(proj / f"{SID}.jsonl")
    sub = Log(side=True, agent="aaa111")
    sub.user("s-u1", None, "search")
    sub.asst(
        "s-a1",
        "s-u1",
        "sm1",
        [tool("nested1", "Task", prompt="deeper")],
        usage(4, 0, 0, 4),
        req="sr1",
    )
    sub.result("s-r1", "s-a1", "nested1", "deep result")
    sub.asst("s-a2", "s-r1", "sm2", [text("found it")], usage(4, 0, 0, 4), req="sr2")
    sub.write(proj / SID / "subagents" / "agent-aaa111.jsonl")
    (proj / SID / "subagents" / "agent-aaa111.meta.json").write_text(
        json.dumps({"agentType": "general-purpose", "description": "search", "toolUseId": "task1"})
    )
    nested = Log(side=True, agent="ccc333")
    nested.user("n-u1", None, "deeper")
    nested.asst("n-a1", "n-u1", "nm1", [text("deep")], usage(2, 0, 0, 2), req="nr1")
    nested.write(proj / SID / "subagents" / "agent-ccc333.jsonl")
    (proj / SID / "subagents" / "agent-ccc333.meta.json").write_text(
        json.dumps({"agentType": "Explore", "toolUseId": "nested1"})
    )
    legacy = Log(side=True)
    legacy.user("l-u1", None, "more")
    legacy.asst("l-a1", "l-u1", "lm1", [text("done")], usage(3, 0, 0, 3), req="lr1")
    legacy.write(proj / "agent-bbb222.jsonl")
    other = Log(session="99999999-0000-0000-0000-000000000000", side=True)
    other.user("o-u1", None, "not ours")
    other.write(proj / "agent-zzz999.jsonl")
    before = fingerprint(tmp_path)
    t = parse(main)
    assert fingerprint(tmp_path) == before
    subs = {s.agent_id: s for s in t.subagents}
    assert sorted(subs) == ["aaa111", "bbb222", "ccc333"]
    a = subs["aaa111"]
    assert (a.parent_tool_use_id, a.parent_agent_id) == ("task1", None)
    assert a.meta["agent_type"] == "general-purpose" and a.meta["layout"] == "subagents"
    assert uuids(a.rows) == ["s-u1", "s-a1", "s-r1", "s-a2"]
    assert all(r.sidechain and r.agent_id == "aaa111" for r in a.rows)
    assert a.usage()["output"] == 8 and a.session_id == SID
    assert (subs["ccc333"].parent_tool_use_id, subs["ccc333"].parent_agent_id) == (
        "nested1",
        "aaa111",
    )
    b = subs["bbb222"]
    assert (b.parent_tool_use_id, b.meta["layout"]) == ("task2", "legacy")
    assert t.usage()["output"] == 2  # the main file alone

    df = list_claude_code_sessions(tmp_path / "projects")
    assert list(df["session_id"]) == [SID]
    assert df.loc[0, "cwd"] == "/home/u/proj" and df.loc[0, "n_subagents"] == 3
    assert df.loc[0, "size_bytes"] == main.stat().st_size
    assert str(df["modified"].dtype) == "datetime64[ns, UTC]"
    assert list(list_claude_code_sessions(proj)["session_id"]) == [SID]


def test_inline_sidechain_records_become_a_subagent(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "go")
    log.asst("a1", "u1", "m1", [tool("task1", "Task")], usage(1, 0, 0, 1), req="r1")
    side = Log(side=True)
    side.t = 10
    side.user("x1", None, "sub prompt")
    side.asst("x2", "x1", "xm1", [text("sub answer")], usage(1, 0, 0, 5), req="xr1")
    log.recs.extend(side.recs)
    log.result("r1", "a1", "task1", "sub answer")
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == ["u1", "a1", "r1"]
    (s,) = t.subagents
    assert uuids(s.rows) == ["x1", "x2"] and s.meta["inline"] == "true"
    assert s.rows[1].tokens["output"] == 5


# --- hostile input --------------------------------------------------------------------------


def test_half_written_last_line(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "hi")
    log.asst("a1", "u1", "m1", [text("hello")], usage(1, 0, 0, 1), req="r1")
    p = log.write(tmp_path / "s.jsonl", tail=b'{"parentUuid":"a1","type":"user","mess')
    with pytest.warns(AdfWarning, match="line 3: last line is incomplete"):
        t = parse_claude_code(p)
    assert uuids(t.rows) == ["u1", "a1"]
    assert [(f.check, f.line) for f in t.findings] == [("truncated_last_line", 3)]


def test_lines_off_the_usual_path(tmp_path: Path) -> None:
    """Blank and whitespace lines, an indented record, a JSON array, a progress record without a
    uuid, a progress link through a line read the slow way, and a last line that is whole but
    has no newline: each read as the format allows."""
    log = Log()
    log.user("u1", None, "hi")
    log.raw(b"")
    log.raw(b"   \t")
    log.raw(b"  " + json.dumps(log._env("progress", "p1", "u1") | {"data": {}}).encode())
    log.raw(b"[1, 2]")
    log.raw(json.dumps(log._env("progress", None, "p1") | {"data": {}}).encode())
    log.user("u2", "p1", "through the indented progress record")
    tail = json.dumps(log._env("user", "u3", "u2") | {"message": {"role": "user", "content": "x"}})
    p = log.write(tmp_path / "s.jsonl", tail=tail.encode())
    with pytest.warns(AdfWarning, match="line 5: line is JSON but not an object"):
        t = parse_claude_code(p)
    assert uuids(t.rows) == ["u1", "u2", "u3"]
    assert [(f.check, f.line) for f in t.findings] == [("not_an_object", 5)]


def test_bad_json_unknown_type_non_utf8_huge_line(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "hi")
    log.raw(b"{not json at all")
    log.raw({"type": "brand-new-record", "x": 1})
    r = log._env("user", "u2", "u1")
    r["message"] = {"role": "user", "content": "caf\x00"}
    log.raw(json.dumps(r).encode().replace(b"caf\\u0000", b"caf\xff"))
    log.raw(b'{"type":"user","pad":"' + b"x" * 5000 + b'"}')
    log.user("u3", "u2", "after")
    p = log.write(tmp_path / "s.jsonl")
    with pytest.warns(AdfWarning) as rec:
        t = parse_claude_code(p, max_line_bytes=4096)
    assert len(rec) == 1
    assert uuids(t.rows) == ["u1", "u2", "u3"]
    assert t.rows[1].content == [text("caf\ufffd")]
    assert t.rows[1].malformed and t.rows[1].note == "non-UTF-8 bytes replaced"
    got = sorted((f.check, f.line) for f in t.findings)
    assert got == [
        ("bad_json", 2),
        ("encoding", 4),
        ("huge_line", 5),
        ("unknown_record_type", 3),
    ]
    assert "not json" not in str(rec[0].message)  # never echoes line content


def test_lone_surrogate_and_deep_nesting(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "x")
    r = log._env("user", "u2", "u1")
    r["message"] = {"role": "user", "content": "SURR"}
    log.raw(json.dumps(r).encode().replace(b"SURR", b"a\\ud83d b"))
    deep: Any = "leaf"
    for _ in range(600):
        deep = {"k": deep}
    log.asst(
        "a1",
        "u2",
        "m1",
        [{"type": "tool_use", "id": "t", "name": "X", "input": deep}],
        usage(1, 0, 0, 1),
        req="r1",
    )
    log.raw(b'{"type":"user","message":' + b"[" * 3000 + b"]" * 3000 + b"}")
    log.user("u3", "a1", "y")
    t = parse_claude_code(log.write(tmp_path / "s.jsonl"), warn=False)
    # 600 levels is past MAX_DEPTH (200, the one depth rule of every format): a finding
    # naming the line, the record not read; 3,000 levels is past orjson's own 1,024
    assert uuids(t.rows) == ["u1", "u2", "u3"]
    assert t.rows[1].content == [text("a\ufffd b")]
    found = [(f.check, f.line) for f in t.findings]
    assert ("too_deep", 3) in found and ("bad_json", 4) in found


@pytest.mark.parametrize("opener", ["[", "{"])
def test_nesting_at_the_depth_limit_is_read_one_level_more_is_not(
    tmp_path: Path, opener: str
) -> None:
    """The line loop's quick test (a line's ``[`` and ``{`` counted in one pass) lets every line
    nested more than MAX_DEPTH levels through to the walk: lists or objects alike."""
    from adfkit._base.js import MAX_DEPTH, too_deep

    def nested(levels: int) -> Any:
        v: Any = "leaf"
        for _ in range(levels):
            v = [v] if opener == "[" else {"k": v}
        return v

    found = {}
    for extra in (0, 1):  # the record's own levels (record, message, content, block, input)
        log = Log()
        log.user("u1", None, "x")
        rec = log._env("assistant", "a1", "u1")
        inp = {"x": nested(MAX_DEPTH - 5 + extra)}
        rec["message"] = {
            "id": "m1",
            "model": "claude-x",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "X", "input": inp}],
        }
        assert (too_deep(rec) is not None) == bool(extra)
        log.raw(json.dumps(rec, separators=(",", ":")).encode())
        t = parse_claude_code(log.write(tmp_path / f"s{extra}.jsonl"), warn=False)
        found[extra] = ([r.uuid for r in t.rows], [f.check for f in t.findings])
    assert found[0][0] == ["u1", "a1"] and "too_deep" not in found[0][1]
    assert found[1][0] == ["u1"] and "too_deep" in found[1][1]


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "empty file"),
        (b"\x89PNG\r\n\x1a\n" + bytes(100), "binary data"),
        (b"SQLite format 3\x00" + bytes(100), "SQLite database"),
        (b"hello world\n", "first bytes are text"),
        (b'{"a": 1}\n{"b": 2}\n', "no Claude Code record"),
        # a Codex rollout: which format it is, is the registry's to say (adfkit.open)
        (
            b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{}}\n',
            "no Claude Code record",
        ),
    ],
)
def test_not_a_transcript(tmp_path: Path, data: bytes, match: str) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    with pytest.raises(NotTranscriptError, match=match) as ei:
        parse_claude_code(p)
    assert str(p) in str(ei.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(NotTranscriptError, match="no such file"):
        parse_claude_code(tmp_path / "gone.jsonl")


def test_reading_writes_nothing(tmp_path: Path) -> None:
    log = Log()
    _compacted_session(log)
    p = log.write(tmp_path / "proj" / f"{SID}.jsonl", tail=b'{"half')
    os.chmod(p, 0o444)
    before = fingerprint(tmp_path)
    parse_claude_code(p, warn=False)
    list_claude_code_sessions(tmp_path)
    assert fingerprint(tmp_path) == before


# --- the committed samples against the simulator's ground truth --------------------------------


def _truth_files() -> list[Path]:
    return sorted(SAMPLES.rglob("*.truth.json"))


def test_samples_exist() -> None:
    assert len(_truth_files()) >= 2, "run `python adfsynth/claude_code.py sample_agents/`"


@pytest.mark.parametrize("truth_path", _truth_files(), ids=lambda p: p.name)
def test_sample_matches_ground_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    path = truth_path.with_name(truth["file"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = parse_claude_code(path)
    assert len([x for x in w if issubclass(x.category, AdfWarning)]) == truth["n_warnings"]
    assert uuids(t.rows) == truth["rows"]
    assert [r.role for r in t.rows] == truth["roles"]
    assert [r.kind_hint for r in t.rows] == truth["kind_hints"]
    assert uuids(t.other_branches) == truth["other_branches"]
    got = t.usage()
    # the simulator writes every cache write as a 5-minute one (ephemeral_1h_input_tokens 0)
    assert got.pop("cache_write_1h", 0) == truth["usage"].get("cache_write_1h", 0)
    assert got == truth["usage"]
    by_uuid = {r.uuid: r.seq for r in t.rows + t.other_branches}
    comp = [e for e in t.events if e.kind == "compaction"]
    assert len(comp) == truth["n_compactions"]
    for ev, exp in zip(comp, truth["compactions"], strict=True):
        assert ev.trigger == exp["trigger"]
        assert ev.pre_tokens == exp["pre_tokens"]
        assert ev.swept == tuple(sorted(by_uuid[u] for u in exp["swept"]))
        assert ev.preserved == tuple(sorted(by_uuid[u] for u in exp["preserved"]))
        assert ev.summary_seq == by_uuid[exp["summary"]]
        assert (ev.tokens_before, ev.tokens_after) == (exp["tokens_before"], exp["tokens_after"])
    micro = [e for e in t.events if e.kind == "microcompaction"]
    assert [tuple(sorted(by_uuid[u] for u in m["swept"])) for m in truth["microcompactions"]] == [
        m.swept for m in micro
    ]
    rew = [e for e in t.events if e.kind == "rewind"]
    assert [tuple(sorted(by_uuid[u] for u in x)) for x in truth["rewinds"]] == [
        e.swept for e in rew
    ]
    subs = {s.agent_id: s for s in t.subagents}
    assert sorted(subs) == sorted(truth["subagents"])
    for aid, exp in truth["subagents"].items():
        s = subs[aid]
        assert uuids(s.rows) == exp["rows"]
        sub_got = s.usage()
        assert sub_got.pop("cache_write_1h", 0) == exp["usage"].get("cache_write_1h", 0)
        assert sub_got == exp["usage"]
        assert s.parent_tool_use_id == exp["tool_use_id"]
        assert s.parent_agent_id == exp["parent_agent_id"]
    assert sorted(f.check for f in t.findings if f.severity != "info") == truth["finding_checks"]


SECRET_KEY = "sk-ant-api03-FAKEFAKEFAKEFAKE1234"


def test_secrets_in_tool_output_leave_redacted_exports_and_reports(tmp_path: Path) -> None:
    """A credential a tool printed: ``export --redact`` blanks the bodies that hold it, and a
    report shows the output with the credential replaced, as config secrets are."""
    import adfkit
    from adfkit.report import write_report

    log = Log()
    log.user("u1", None, "show me the environment")
    log.asst("a1", "u1", "msg_1", [tool("t1", "Bash", command="env")])
    log.result("r1", "a1", "t1", f"HOME=/home/u\nANTHROPIC_API_KEY={SECRET_KEY}\nPATH=/bin")
    log.asst("a2", "r1", "msg_2", [text("done")])
    session = log.write(tmp_path / "in" / f"{SID}.jsonl")
    out = tmp_path / "export"
    written, errors = adfkit.export(str(session), out, redact=True, progress=False)
    assert errors.empty and len(written)
    blob = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert SECRET_KEY.encode() not in blob
    html = write_report(session, tmp_path / "r.html", notebook="01").read_text()
    assert SECRET_KEY not in html and "ANTHROPIC_API_KEY=__redacted__" in html


def test_block_of_an_unhashable_or_unknown_type_is_kept_as_written(tmp_path: Path) -> None:
    """A content block whose ``type`` is a list, an object or a name adfkit does not convert is
    kept as written: block types are looked up by name, and a list is no key (a TypeError)."""
    odd = [{"type": ["text"], "text": "a"}, {"type": {"k": 1}}, {"type": "server_tool_use"}]
    log = Log()
    log.user("u1", None, "hi")
    log.asst("a1", "u1", "m1", [text("ok"), *odd])
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert [r.content for r in t.rows] == [[text("hi")], [text("ok"), *odd]]
