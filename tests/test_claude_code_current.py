"""Shapes the current Claude Code releases write (2.1.2xx-2.1.3xx), in hand-built tiny files
with every expected value written here: a preserved segment kept by reference (2.1.217), the
summary sent before the rows a compaction preserved, the new record types that are no rows, and
a Qwen Code chat (the same record type names and id keys) that is not a Claude Code session."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from test_claude_code import Log, parse, text, usage, uuids

import adfkit


def _open(path: Path) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean file warns about nothing
        return adfkit.open(path)


def _window(agent: adfkit.AgentFile, seq: int) -> list[str]:
    """The uuids of the rows the model saw at the call of row ``seq``, in order."""
    idx = agent.source.row_index().set_index("seq")  # type: ignore[attr-defined]
    ctx = agent.context_at(seq, context=False)
    return [str(idx.at[int(q), "uuid"]) for q in ctx["seq"]]


def _manual_compaction_217(log: Log) -> None:
    """u1 a1 u2 a2 | B1 (manual, preserves u2 a2 by reference) S1 | u3 a3, u3 hanging off a2
    (the segment's last record, written before the boundary), as Claude Code 2.1.217 writes a
    ``/compact`` that keeps a preserved segment."""
    log.user("u1", None, "first")
    log.asst("a1", "u1", "m1", [text("one")], usage(2, 100, 0, 5), req="r1")
    log.user("u2", "a1", "second")
    log.asst("a2", "u2", "m2", [text("two")], usage(2, 10, 100, 5), req="r2")
    seg = {"headUuid": "u2", "anchorUuid": "s1", "tailUuid": "a2"}
    log.system(
        "b1",
        None,
        "compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="a2",
        compactMetadata={"trigger": "manual", "preTokens": 120, "preservedSegment": seg},
    )
    log.user("s1", "b1", "This session is being continued. Summary: ...", isCompactSummary=True)
    log.user("u3", "a2", "third")  # hangs off the segment's tail, not the summary
    log.asst("a3", "u3", "m3", [text("three")], usage(2, 20, 30, 5), req="r3")


def test_a_segment_kept_by_reference_is_a_compaction(tmp_path: Path) -> None:
    log = Log()
    _manual_compaction_217(log)
    t = parse(log.write(tmp_path / "s.jsonl"))
    assert uuids(t.rows) == ["u1", "a1", "u2", "a2", "s1", "u3", "a3"]
    (c,) = [e for e in t.events if e.kind == "compaction"]
    assert (c.trigger, c.pre_tokens) == ("manual", 120)
    assert c.swept == (1, 2) and c.preserved == (3, 4) and c.summary_seq == 5
    assert c.tokens_before == 112 and c.tokens_after == 52  # a2: 2+10+100, a3: 2+20+30
    assert t.other_branches == []


def test_the_summary_is_sent_before_the_segment_kept_by_reference(tmp_path: Path) -> None:
    log = Log()
    _manual_compaction_217(log)
    agent = _open(log.write(tmp_path / "s.jsonl"))
    a3 = int(agent.replay()["seq"].iloc[-1])
    assert _window(agent, a3) == ["s1", "u2", "a2", "u3"]
    assert agent.compactions()[["kind", "n_swept", "n_tail"]].values.tolist() == [["manual", 2, 2]]


def test_the_summary_is_sent_before_a_segment_written_before_it(tmp_path: Path) -> None:
    """Claude Code 2.1.332: the records after the summary hang off it (the walk meets the
    boundary), but the preserved segment stays where it was written, before the boundary; the
    request holds the summary, then the segment (tests/test_recorded.py on a recording)."""
    log = Log()
    log.user("u1", None, "first")
    log.asst("a1", "u1", "m1", [text("one")], usage(2, 100, 0, 5), req="r1")
    log.user("u2", "a1", "second")
    log.asst("a2", "u2", "m2", [text("two")], usage(2, 10, 100, 5), req="r2")
    seg = {"headUuid": "u2", "anchorUuid": "s1", "tailUuid": "a2"}
    pm = {"anchorUuid": "s1", "uuids": ["u2", "a2"], "allUuids": ["u2", "a2"]}
    md = {"trigger": "auto", "preTokens": 120, "postTokens": 40, "cumulativeDroppedTokens": 80}
    md |= {"durationMs": 534, "preservedSegment": seg, "preservedMessages": pm}
    md |= {"preCompactOrganizationsCoverStart": False, "runningTurnPrompt": {}}
    log.system("b1", None, "compact_boundary", logicalParentUuid="a2", compactMetadata=md)
    log.user("s1", "b1", "This session is being continued. Summary: ...", isCompactSummary=True)
    log.user("u3", "s1", "third")
    log.asst("a3", "u3", "m3", [text("three")], usage(2, 20, 30, 5), req="r3")
    agent = _open(log.write(tmp_path / "s.jsonl"))
    h = agent.history()
    assert h["seq"].tolist() == [1, 2, 5, 3, 4, 6, 7]  # displayed: the summary first
    assert _window(agent, 7) == ["s1", "u2", "a2", "u3"]
    c = agent.compactions()
    assert c[["kind", "n_swept", "n_tail"]].values.tolist() == [["auto", 2, 2]]
    assert c["tail_seqs"].tolist() == [(3, 4)]


#: Records Claude Code 2.1.332 writes beside the conversation (values shortened from a
#: recording): none is a row, a call or a warning.
NEW_RECORDS: list[dict[str, Any]] = [
    {"type": "atis-latch", "atis": "", "sessionId": "S"},
    {"type": "api-request-shape", "sessionId": "S", "shapeHash": "h1", "shape": {"system": []}},
    {"type": "api-request-blob", "sessionId": "S", "hash": "h2", "message": {"role": "user"}},
    {"type": "api-request", "sessionId": "S", "id": "q1", "shapeHash": "h1", "params": {}},
    {"type": "tools-used", "tools": ["Read"], "sessionId": "S"},
    {"type": "cost-state", "sessionId": "S", "totalCostUSD": 0.1, "modelUsage": {}},
    {"type": "mode", "mode": "normal", "sessionId": "S"},
]


def test_the_new_record_types_are_no_rows(tmp_path: Path) -> None:
    log = Log()
    log.user("u1", None, "first")
    for r in NEW_RECORDS:
        log.raw(r)
    log.asst("a1", "u1", "m1", [text("one")], usage(2, 100, 0, 5), req="r1")
    for r in NEW_RECORDS:
        log.raw(r)
    t = parse(log.write(tmp_path / "s.jsonl"))  # no warning
    assert uuids(t.rows) == ["u1", "a1"] and len(t.calls) == 1


def _qwen_chat(path: Path) -> Path:
    """A Qwen Code chat as its ``chatRecordingService`` writes one: the same record type
    names and id keys as Claude Code, a Gemini message (``parts``), a ``tool_result`` record,
    a ``system`` record of subtype ``chat_compression`` with its ``systemPayload``."""
    env = {"sessionId": "q-1", "cwd": "/home/user/proj", "version": "0.24.4"}
    recs = [
        {"uuid": "q1", "parentUuid": None, **env, "type": "user",
         "message": {"role": "user", "parts": [{"text": "list the files"}]}},
        {"uuid": "q2", "parentUuid": "q1", **env, "type": "assistant", "model": "qwen3-coder",
         "message": {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
         "usageMetadata": {"promptTokenCount": 900, "candidatesTokenCount": 12}},
        {"uuid": "q3", "parentUuid": "q2", **env, "type": "tool_result",
         "message": {"role": "user", "parts": [{"functionResponse": {"name": "ls"}}]}},
        {"uuid": "q4", "parentUuid": "q3", **env, "type": "system",
         "subtype": "chat_compression",
         "systemPayload": {"info": {"originalTokenCount": 900, "newTokenCount": 200,
                                    "compressionStatus": 1},
                           "compressedHistory": []}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_a_qwen_code_chat_is_not_a_claude_code_session(tmp_path: Path) -> None:
    path = _qwen_chat(tmp_path / "q-1.jsonl")
    with pytest.raises(adfkit.UnknownFormatError):
        adfkit.open(path)


def test_a_cache_split_of_zeros_under_a_cache_write_is_no_split(tmp_path: Path) -> None:
    """Claude Code writes ``cache_creation`` zeros when the response carried no split (a
    gateway that drops it; the first recording's server did): the write it states stands."""
    log = Log()
    log.user("u1", None, "first")
    u = usage(4, 22294, 0, 69) | {
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}
    }
    log.asst("a1", "u1", "m1", [text("one")], u, req="r1")
    got = _open(log.write(tmp_path / "s.jsonl")).usage()
    assert got[["tokens_input", "tokens_cache_write"]].values.tolist() == [[22298, 22294]]
    assert got["tokens_cache_write_1h"].isna().all()  # its lifetime is not recorded
