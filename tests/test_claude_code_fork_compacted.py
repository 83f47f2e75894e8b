"""A session forked after it compacted (Claude Code 2.1.332, recorded in
``fixtures/recorded/claude-code/2.1.332-fork-compacted``): turn 1, ``/compact``, then
``claude --resume ID --fork-session`` and a resume of the fork. The fork's file copies the
parent's compaction (its ``compact_boundary``, the summary, the message it kept) before its own
records; the boundary's ``logicalParentUuid`` names the kept message, which the copy writes
after the summary.

What is checked: the parent's compaction counted once (the parent's), in a fleet and by
``adfkit watch``; the fork opens without a warning and says what it inherited; its history and
``replay()`` hold the inherited summary as its model was sent it; each call paid once. The
figures are the server's log (``requests.jsonl``)."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from test_recorded import skeleton, summary_lines

import adfkit
from adfkit import load_fleet
from adfkit._facade.usage import reading as uf

FOLDER = (
    Path(__file__).resolve().parent
    / "fixtures"
    / "recorded"
    / "claude-code"
    / "2.1.332-fork-compacted"
)
PARENT = "e11040ee-9a7a-4cf9-91c7-b6355b2e498c"
FORK = "d364f6e8-ac2d-4bcd-b032-5cdeb0476d1b"


def _file(sid: str) -> Path:
    (path,) = FOLDER.rglob(f"{sid}.jsonl")
    return path


def _log() -> list[dict[str, Any]]:
    with (FOLDER / "requests.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _calls(kind: str, *phases: str) -> list[dict[str, Any]]:
    return [c for c in _log() if c["kind"] == kind and c["phase"] in phases]


def _records(sid: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in _file(sid).read_text(encoding="utf-8").splitlines()]


def _boundary_line(sid: str) -> int:
    """The 1-based line of the file's one ``compact_boundary``."""
    (line,) = [
        i for i, r in enumerate(_records(sid), start=1) if r.get("subtype") == "compact_boundary"
    ]
    return line


def _open(sid: str) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)
        agent = adfkit.open(_file(sid))
        agent.history()
    assert isinstance(agent, adfkit.AgentFile)
    return agent


def test_the_recording_is_a_fork_that_copied_the_compaction() -> None:
    """What the files hold, read directly: both write the same boundary, the fork's before
    its own records; the log has one compaction call, made by the parent."""
    parent, fork = _records(PARENT), _records(FORK)
    (pb,) = [r for r in parent if r.get("subtype") == "compact_boundary"]
    (fb,) = [r for r in fork if r.get("subtype") == "compact_boundary"]
    assert fb["uuid"] == pb["uuid"] and fb["sessionId"] == FORK
    assert [c["phase"] for c in _log() if c["kind"] == "compaction"] == ["manual compact"]
    copied = [r["message"]["id"] for r in fork if r.get("requestSessionId") == PARENT]
    assert copied == ["msg_rec00001"]  # the message the compaction kept, after the summary


def test_the_parents_compaction_is_counted_once_in_a_fleet() -> None:
    """One compaction in the fleet, the parent's; its recorded size is the prompt and answer
    of the parent's last call before it (log line 1)."""
    (before,) = [c for c in _calls("turn", "turn 1") if c["n"] == 1]
    want = before["answer"]["usage"]["input"] + before["answer"]["usage"]["output"]
    files = [str(_file(PARENT)), str(_file(FORK))]
    df, errors = load_fleet(files, "compactions", engine="serial")
    assert len(errors) == 0
    assert list(df["agent"]) == [PARENT]
    assert list(df["kind"]) == ["manual"]
    assert list(df["recorded_tokens_before"]) == [want] == [22412]
    assert len(_open(FORK).compactions()) == 0
    assert len(_open(PARENT).compactions()) == 1


def test_the_fork_opens_without_a_warning_and_says_what_it_inherited() -> None:
    fork = _open(FORK)  # AdfWarning raised: the chain-loop warning would fail here
    f = fork.integrity()
    row = f[f["check"] == "inherited_compaction"]
    assert len(row) == 1
    assert f"line {_boundary_line(FORK)}: a copy of session {PARENT}'s" in str(
        row["detail"].iloc[0]
    )
    assert "parent_cycle" not in set(f["check"])


def test_the_forks_history_holds_the_inherited_summary_as_it_was_sent() -> None:
    """The fork's first own call (log line 3) was sent the summary first, then the kept
    message: the fork's history starts with them, the summary's text as sent."""
    (first,) = [c for c in _calls("turn", "fork") if c["n"] == 3]
    sent = first["call"]["messages"]
    h = _open(FORK).history()
    assert list(h["kind"][:2]) == ["compaction_summary", "assistant"]
    (block,) = json.loads(h["content"].iloc[0])
    assert sent[0]["role"] == "user" and block["text"] == sent[0]["content"][0]["text"]
    (answer,) = json.loads(h["content"].iloc[1])
    assert sent[1]["role"] == "assistant" and answer["text"] == sent[1]["content"][0]["text"]


def test_replay_of_the_fork_equals_each_request_it_made() -> None:
    """At each of the fork's own calls (log lines 3-6), the rows ``replay()`` puts in context
    are the messages sent (``test_recorded.skeleton``: roles, prompts, assistant texts, tool
    ids, the summary), and the call's usage is the log's."""
    fork = _open(FORK)
    calls = fork.calls()
    replay = fork.replay().set_index("seq")
    h = fork.history().set_index("seq")
    summaries = summary_lines(_log())
    own = _calls("turn", "fork", "fork resumed")
    assert [c["n"] for c in own] == [3, 4, 5, 6]
    for c in own:
        (seq,) = calls.loc[calls["key"].str.startswith(f"msg_rec{c['n']:05d}:"), "seq"]
        rows = h.loc[list(replay.loc[seq, "context_seqs"])].reset_index()
        got = [
            {"role": r, "content": json.loads(x)}
            for r, x in zip(rows["role"], rows["content"], strict=True)
        ]
        for m, kind in zip(got, rows["kind"], strict=True):
            if kind == "compaction_summary":
                m["content"] = [{"type": "text", "text": "\0summary"}]
        assert skeleton(got, ["\0summary"]) == skeleton(c["call"]["messages"], summaries)
        assert skeleton(got, ["\0summary"])[0] == ("user", (("summary",),))
        u = c["answer"]["usage"]
        assert int(replay.loc[seq, "tokens_input"]) == u["input"]
        assert int(replay.loc[seq, "tokens_output"]) == u["output"]
        assert int(replay.loc[seq, "tokens_cache_read"]) == u["cache_read"]


def test_each_call_is_paid_once_by_the_session_that_made_it() -> None:
    """The parent's 2 calls and the fork's 4 (the kept message's copy is the parent's), their
    sums the log's turns (compaction calls leave no usage in the file)."""
    rows, errors = uf.usage_fleet([str(_file(PARENT)), str(_file(FORK))], engine="serial")
    assert errors == []
    rows = list(rows)
    assert {r["agent"]: r["calls"] for r in rows} == {PARENT: 2, FORK: 4}
    turns = [c["answer"]["usage"] for c in _log() if c["kind"] == "turn"]

    def total(col: str) -> int:
        return sum(int(r[col]) for r in rows)

    prompt = total("input") + total("cache_write") + total("cache_read")
    assert prompt == sum(u["input"] for u in turns) == 136777
    assert total("cache_read") == sum(u["cache_read"] for u in turns) == 90432
    assert total("output") == sum(u["output"] for u in turns) == 102


def test_watch_lands_the_parents_compaction_once() -> None:
    """``adfkit watch``, record by record: the parent's compaction lands in the parent, the
    fork's copy of it does not land (its first call is a copy), as a full read says."""
    from adfkit._facade.watch import Watched, figures_of

    landed = {}
    for sid in (PARENT, FORK):
        w = Watched(_file(sid))
        assert w.incremental
        landed[sid] = w.update()
        full, _ = figures_of(_file(sid))
        assert len(w.figures.landed) == len(full.landed)
    assert [x.tokens_before for x in landed[PARENT]] == [22412]
    assert landed[FORK] == []


def _with_own_compaction(tmp_path: Path) -> Path:
    """The fork's file with a compaction of its own appended after its last call: a boundary
    hanging off the last record, and a summary under it."""
    recs = _records(FORK)
    last = [r for r in recs if r.get("type") in ("user", "assistant")][-1]
    boundary = {
        **{k: v for k, v in recs[_boundary_line(FORK) - 1].items() if k != "logicalParentUuid"},
        "uuid": "00000000-0000-4000-8000-000000000001",
        "logicalParentUuid": last["uuid"],
        "timestamp": "2026-12-04T05:20:00.000Z",
        "compactMetadata": {"trigger": "manual", "preTokens": 23175},
    }
    summary = {
        **next(r for r in recs if r.get("isCompactSummary")),
        "uuid": "00000000-0000-4000-8000-000000000002",
        "parentUuid": boundary["uuid"],
        "timestamp": "2026-12-04T05:20:00.100Z",
    }
    out = tmp_path / f"{FORK}.jsonl"
    text = _file(FORK).read_text(encoding="utf-8")
    out.write_text(text + json.dumps(boundary) + "\n" + json.dumps(summary) + "\n")
    return out


def test_a_compaction_the_fork_made_itself_still_counts(tmp_path: Path) -> None:
    """Only the copied boundary is the parent's: a boundary after the fork's own calls is
    the fork's, in its compactions() and in watch."""
    from adfkit._facade.watch import Watched

    path = _with_own_compaction(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)
        agent = adfkit.open(path)
        comp = agent.compactions()
    assert list(comp["recorded_tokens_before"]) == [23175]
    w = Watched(path)
    assert [x.tokens_before for x in w.update()] == [23175]


@pytest.mark.parametrize("sid", [PARENT, FORK])
def test_no_record_of_the_recording_names_a_machine_path(sid: str) -> None:
    assert re.search(r"/tmp/adfkit-record|/work/", _file(sid).read_text(encoding="utf-8")) is None
