"""Claude Code chain rules as real files show them (TRANSCRIPTS.md §0), on hand-built files
with every expected value written here: gaps bridged in file order, parallel tool calls on side
branches, interleaved block records, old-form compactions, cleared contexts, resumes that answer
again, unknown record types in the chain, bad lines mid-session."""

from __future__ import annotations

import warnings
from pathlib import Path

from test_claude_code import Log, tool, usage, uuids

import adfkit
from adfkit._sources.claude_code.parser import parse_claude_code


def _open(path: Path) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return adfkit.open(path)


def _checks(t) -> dict[str, str]:
    return {f.check: f.severity for f in t.findings}


def _calls_of(path: Path) -> list[tuple[int, int]]:
    u = _open(path).usage()
    return list(zip(u["tokens_input"].tolist(), u["tokens_output"].tolist(), strict=True))


def test_h90_a_boundary_whose_logical_parent_was_never_written_bridges_to_the_record_before(
    tmp_path: Path,
) -> None:
    log = Log()
    log.user("u1", None, "start")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "one"}], usage(10, 0, 0, 1))
    log.user("u2", "a1", "more")
    log.asst("a2", "u2", "m2", [{"type": "text", "text": "two"}], usage(20, 0, 0, 2))
    log.progress("h1", "never-written")  # the Stop hook hangs off the unwritten record too
    log.system(
        "b1",
        None,
        "compact_boundary",
        logicalParentUuid="never-written",
        compactMetadata={"trigger": "auto", "preTokens": 157925},
    )
    log.user("s1", "b1", "Summary of the conversation", isCompactSummary=True)
    log.user("u3", "s1", "go on")
    log.asst("a3", "u3", "m3", [{"type": "text", "text": "three"}], usage(5, 0, 0, 3))
    p = log.write(tmp_path / "s.jsonl")
    t = parse_claude_code(p, warn=False)
    assert uuids(t.rows) == ["u1", "a1", "u2", "a2", "s1", "u3", "a3"]
    assert _checks(t).get("chain_gap") == "info"
    assert [f.detail for f in t.findings if f.check == "chain_gap"] == [
        "logicalParentUuid not in the file; continued from line 4"
    ]
    a = _open(p)
    assert _calls_of(p) == [(10, 1), (20, 2), (5, 3)]
    c = a.compactions()
    assert c["event"].tolist() == ["compaction"]
    assert c["swept_seqs"].tolist() == [(1, 2, 3, 4)]
    assert c["recorded_tokens_before"].tolist() == [157925]
    assert c["trigger_tokens"].tolist() == [22]  # input + output of the last call before it


def test_h91_a_missing_parent_outside_compaction_and_an_unknown_linked_type_keep_the_chain(
    tmp_path: Path,
) -> None:
    log = Log()
    log.user("u1", None, "start")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "thinking"}], usage(10, 0, 0, 1))
    # the response's final block record (uuid "final") is never written; the Stop hook's
    # progress record points at it, and the next prompt continues through the hook
    log.progress("h1", "final")
    log.system("sh", "h1", "stop_hook_summary")
    log.user("u2", "sh", "next")
    rec = log._env("brand-new-type", "x1", "u2")  # a type this reader does not know
    log.raw(rec)
    log.asst("a2", "x1", "m2", [{"type": "text", "text": "two"}], usage(20, 0, 0, 2))
    p = log.write(tmp_path / "s.jsonl")
    t = parse_claude_code(p, warn=False)
    assert uuids(t.rows) == ["u1", "a1", "u2", "a2"]
    assert t.other_branches == []
    checks = _checks(t)
    assert checks["chain_gap"] == "info"
    assert checks["unknown_record_type"] == "info"
    assert "broken_parent_chain" not in checks
    assert [f.detail for f in t.findings if f.check == "chain_gap"] == [
        "parentUuid not in the file; continued from line 2"
    ]
    assert _calls_of(p) == [(10, 1), (20, 2)]


def test_h92_parallel_tool_calls_on_a_side_branch_are_one_call_with_both_results(
    tmp_path: Path,
) -> None:
    """TRANSCRIPTS.md §0 3: block record P (tool A) has two children: Q (tool B, the final
    output count) with B's result, and A's result, from which the conversation goes on."""
    log = Log()
    log.user("u1", None, "read two files")
    log.asst("p", "u1", "m1", [tool("ta", "Read", file_path="/a")], usage(10, 5, 50, 1))
    log.asst("q", "p", "m1", [tool("tb", "Read", file_path="/b")], usage(10, 5, 50, 161))
    log.result("rb", "q", "tb", "contents of b")
    log.result("ra", "p", "ta", "contents of a")
    log.asst("a2", "ra", "m2", [{"type": "text", "text": "done"}], usage(1, 0, 80, 4))
    p = log.write(tmp_path / "s.jsonl")
    t = parse_claude_code(p, warn=False)
    assert uuids(t.rows) == ["u1", "p", "rb", "ra", "a2"]
    assert t.other_branches == [] and [e.kind for e in t.events] == []
    a = _open(p)
    assert _calls_of(p) == [(65, 161), (81, 4)]  # usage from the last block record
    tc = a.tool_calls(history=True)
    assert tc["tool_use_id"].tolist() == ["ta", "tb"]
    assert tc["matched"].tolist() == [True, True]


def test_block_records_interleaved_with_results_are_one_call(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "go")
    log.asst("p", "u1", "m1", [tool("ta", "Bash", command="ls")], usage(10, 0, 0, 2))
    log.result("ra", "p", "ta", "a b")
    log.asst("q", "ra", "m1", [tool("tb", "Bash", command="pwd")], usage(10, 0, 0, 9))
    log.result("rb", "q", "tb", "/home")
    log.asst("a2", "rb", "m2", [{"type": "text", "text": "ok"}], usage(30, 0, 0, 1))
    p = log.write(tmp_path / "s.jsonl")
    assert _calls_of(p) == [(10, 9), (30, 1)]
    tc = _open(p).tool_calls(history=True)
    assert tc["tool_use_id"].tolist() == ["ta", "tb"] and tc["matched"].all()


def test_an_old_form_compaction_is_a_compaction(tmp_path: Path) -> None:
    """Claude Code 1.0.x: no boundary; a user record with isCompactSummary and no parent."""
    log = Log()
    log.user("u1", None, "start")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "one"}], usage(100, 0, 0, 10))
    log.user("u2", "a1", "more")
    log.asst("a2", "u2", "m2", [{"type": "text", "text": "two"}], usage(200, 0, 0, 20))
    log.user("s1", None, "This session is being continued. Summary: ...", isCompactSummary=True)
    log.user("u3", "s1", "go on")
    log.asst("a3", "u3", "m3", [{"type": "text", "text": "three"}], usage(30, 0, 0, 3))
    p = log.write(tmp_path / "s.jsonl")
    t = parse_claude_code(p, warn=False)
    assert uuids(t.rows) == ["u1", "a1", "u2", "a2", "s1", "u3", "a3"]
    assert _checks(t)["new_root"] == "info"
    a = _open(p)
    assert _calls_of(p) == [(100, 10), (200, 20), (30, 3)]
    c = a.compactions()
    assert c["event"].tolist() == ["compaction"]
    assert c["summary_seq"].tolist() == [5]
    assert c["swept_seqs"].tolist() == [(1, 2, 3, 4)]
    assert c["trigger_tokens"].tolist() == [220]
    assert c["recorded_tokens_before"].isna().all()


def test_a_cleared_context_in_the_same_file_is_a_clear(tmp_path: Path) -> None:
    """Plan mode's "clear context" (2.1.12): a new root, not a summary. history() keeps both
    conversations in file order, compactions() lists a ``clear`` that swept the first one, and
    usage() counts every call (each was made and paid for)."""
    log = Log()
    log.user("u1", None, "plan it")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "the plan"}], usage(100, 0, 0, 10))
    log.user("u2", None, "Implement the following plan: ...")
    log.asst("a2", "u2", "m2", [{"type": "text", "text": "doing it"}], usage(40, 0, 0, 4))
    p = log.write(tmp_path / "s.jsonl")
    a = _open(p)
    assert a.history()["seq"].tolist() == [1, 2, 3, 4]
    assert _calls_of(p) == [(100, 10), (40, 4)]
    c = a.compactions()
    assert c["event"].tolist() == ["clear"]
    assert c["swept_seqs"].tolist() == [(1, 2)]
    assert c["summary_seq"].isna().all()
    assert a.replay()["context_seqs"].tolist() == [(1,), (3,)]  # the second call saw no plan
    assert (a.info()["compactions"], a.info()["clears"]) == (0, 1)


def test_a_resume_that_answers_a_prompt_again_is_a_rewind_and_both_calls_count(
    tmp_path: Path,
) -> None:
    log = Log()
    log.user("u1", None, "question")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "first answer"}], usage(50, 0, 0, 5))
    log.asst("a2", "u1", "m2", [{"type": "text", "text": "second answer"}], usage(50, 0, 0, 6))
    log.user("u2", "a2", "thanks")
    log.asst("a3", "u2", "m3", [{"type": "text", "text": "welcome"}], usage(70, 0, 0, 2))
    p = log.write(tmp_path / "s.jsonl")
    t = parse_claude_code(p, warn=False)
    assert uuids(t.rows) == ["u1", "a2", "u2", "a3"]
    assert uuids(t.other_branches) == ["a1"]
    assert [e.kind for e in t.events] == ["rewind"]
    assert sorted(_calls_of(p)) == [(50, 5), (50, 6), (70, 2)]
    assert _open(p).compactions().empty


def test_a_local_command_off_the_chain_is_not_a_rewind(tmp_path: Path) -> None:
    """/exit and its output hang off the chain and no model call follows them (D1, D2)."""
    log = Log()
    log.user("u1", None, "hi")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "hello"}], usage(5, 0, 0, 1))
    log.user("c1", "a1", "<command-name>/exit</command-name>")
    log.user("c2", "c1", "<local-command-stdout>Bye!</local-command-stdout>")
    log.user("u2", "a1", "back again")
    log.asst("a2", "u2", "m2", [{"type": "text", "text": "welcome back"}], usage(9, 0, 0, 1))
    t = parse_claude_code(log.write(tmp_path / "s.jsonl"), warn=False)
    assert uuids(t.rows) == ["u1", "a1", "u2", "a2"]
    assert uuids(t.other_branches) == ["c1", "c2"]
    assert [e.kind for e in t.events] == []
    assert _checks(t)["aside_records"] == "info"


def test_h93_a_bad_line_mid_session_is_a_flagged_gap_not_a_rewind(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "one")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "r1"}], usage(1, 0, 0, 1))
    log.user("u2", "a1", "two")
    log.asst("a2", "u2", "m2", [{"type": "text", "text": "r2"}], usage(2, 0, 0, 1))
    log.raw(b'{"parentUuid":"a2","type":"user","uuid":"u3","message":{"role":"us')  # cut
    log.raw(b"\x00" * 64)  # a NUL block
    log.asst("a3", "u3", "m3", [{"type": "text", "text": "r3"}], usage(3, 0, 0, 1))
    log.user("u4", "a3", "four")
    log.asst("a4", "u4", "m4", [{"type": "text", "text": "r4"}], usage(4, 0, 0, 1))
    p = log.write(tmp_path / "s.jsonl")
    t = parse_claude_code(p, warn=False)
    assert uuids(t.rows) == ["u1", "a1", "u2", "a2", "a3", "u4", "a4"]
    assert t.other_branches == [] and [e.kind for e in t.events] == []
    checks = _checks(t)
    assert checks["bad_json"] == "warning" and checks["chain_gap"] == "info"
    assert _calls_of(p) == [(1, 1), (2, 1), (3, 1), (4, 1)]


def test_h94_chain_shapes_that_were_quadratic_read_whole(tmp_path: Path) -> None:
    """The shapes of ``make bench``'s chains section (timed there at three sizes), read here
    at one size for what they give: a long dead branch, attachments chained off the active path,
    many prompts whose parents reach one cycle of progress records, a microcompaction naming
    every tool id."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import chains

    t = parse_claude_code(chains.write(tmp_path, "long dead branch", 3000), warn=False)
    assert uuids(t.rows) == ["root", "live"] and len(t.other_branches) == 3000
    assert [e.kind for e in t.events] == ["rewind"]
    t = parse_claude_code(chains.write(tmp_path, "attachments off the path", 3000), warn=False)
    assert len(t.rows) == 3002 and t.other_branches == []
    t = parse_claude_code(
        chains.write(tmp_path, "records into one progress cycle", 3000), warn=False
    )
    assert len(t.rows) == 3001  # each prompt a root: the cycle is cut, every record kept
    assert _checks(t)["parent_cycle"] == "warning"
    t = parse_claude_code(
        chains.write(tmp_path, "microcompaction of many tool ids", 3000), warn=False
    )
    (mc,) = t.events
    assert mc.kind == "microcompaction" and len(mc.swept) == 3000
