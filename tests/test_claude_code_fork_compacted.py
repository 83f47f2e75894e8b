"""Sessions forked after they compacted (Claude Code 2.1.332, recorded in
``fixtures/recorded/claude-code/2.1.332-fork-compacted``: turn 1, ``/compact``, then
``claude --resume ID --fork-session`` and a resume of the fork; and in
``2.1.332-fork-autocompacted``: the same after an automatic compaction in turn 2). The fork's
file copies the parent's compaction (its ``compact_boundary``, the summary, the messages it
kept) before its own records; the boundary's ``logicalParentUuid`` names a record the copy
writes after the summary, under it.

What is checked: the parent's compaction counted once (the parent's), in a fleet and by
``adfkit watch``; the fork opens without a warning and says what it inherited; its history and
``replay()`` hold the inherited summary as its model was sent it; each call paid once. The
figures are the server's log (``requests.jsonl``) and the records themselves."""

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

RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded" / "claude-code"
MANUAL = RECORDED / "2.1.332-fork-compacted"
AUTO = RECORDED / "2.1.332-fork-autocompacted"
FOLDERS = pytest.mark.parametrize("folder", [MANUAL, AUTO], ids=["manual", "auto"])
#: The manual recording's sessions.
PARENT = "e11040ee-9a7a-4cf9-91c7-b6355b2e498c"
FORK = "d364f6e8-ac2d-4bcd-b032-5cdeb0476d1b"
#: The phases of the log whose calls the fork made.
FORK_PHASES = ("fork", "fork resumed")


def _files(folder: Path) -> tuple[Path, Path]:
    """(the parent's file, the fork's): the fork's is the one with copied calls."""
    a, b = sorted(folder.rglob("home/**/*.jsonl"))
    return (b, a) if "requestSessionId" in a.read_text(encoding="utf-8") else (a, b)


def _log(folder: Path) -> list[dict[str, Any]]:
    with (folder / "requests.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _turns(folder: Path, *phases: str) -> list[dict[str, Any]]:
    return [c for c in _log(folder) if c["kind"] == "turn" and (not phases or c["phase"] in phases)]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _boundary(path: Path) -> tuple[int, dict[str, Any]]:
    """The 1-based line of the file's one ``compact_boundary``, and the record."""
    ((line, rec),) = [
        (i, r)
        for i, r in enumerate(_records(path), start=1)
        if r.get("subtype") == "compact_boundary"
    ]
    return line, rec


def _open(path: Path) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)
        agent = adfkit.open(path)
        agent.history()
    assert isinstance(agent, adfkit.AgentFile)
    return agent


@FOLDERS
def test_the_recording_is_a_fork_that_copied_the_compaction(folder: Path) -> None:
    """What the files hold, read directly: both write the same boundary, the fork's before
    its own records and before a copied call; the log has one compaction call, the parent's."""
    parent, fork = _files(folder)
    pb, fb = _boundary(parent)[1], _boundary(fork)
    assert fb[1]["uuid"] == pb["uuid"] and fb[1]["sessionId"] == fork.stem
    phases = [c["phase"] for c in _log(folder) if c["kind"] == "compaction"]
    assert phases == (["manual compact"] if folder == MANUAL else ["turn 2"])
    marked = [(i, r) for i, r in enumerate(_records(fork), 1) if "requestSessionId" in r]
    assert marked and {r["requestSessionId"] for _, r in marked} == {parent.stem}
    assert fb[0] < marked[0][0]


def test_the_manual_recordings_copied_calls() -> None:
    parent, fork = _files(MANUAL)
    assert (parent.stem, fork.stem) == (PARENT, FORK)
    copied = [r["message"]["id"] for r in _records(fork) if r.get("requestSessionId") == PARENT]
    assert copied == ["msg_rec00001"]  # the message the compaction kept, after the summary


@FOLDERS
def test_the_parents_compaction_is_counted_once_in_a_fleet(folder: Path) -> None:
    """One compaction in the fleet, the parent's, with the size its boundary records."""
    parent, fork = _files(folder)
    df, errors = load_fleet([str(parent), str(fork)], "compactions", engine="serial")
    assert len(errors) == 0
    assert list(df["agent"]) == [parent.stem]
    assert list(df["kind"]) == ["manual" if folder == MANUAL else "auto"]
    pre = _boundary(parent)[1]["compactMetadata"]["preTokens"]
    assert list(df["recorded_tokens_before"]) == [pre]
    assert len(_open(fork).compactions()) == 0
    assert len(_open(parent).compactions()) == 1


def test_the_manual_compactions_size_is_the_last_call_before_it() -> None:
    """The manual compaction's recorded size is the prompt and answer of the parent's last
    call before it (log line 1)."""
    (before,) = [c for c in _turns(MANUAL, "turn 1") if c["n"] == 1]
    want = before["answer"]["usage"]["input"] + before["answer"]["usage"]["output"]
    comp = _open(_files(MANUAL)[0]).compactions()
    assert list(comp["recorded_tokens_before"]) == [want] == [22412]


@FOLDERS
def test_the_fork_opens_without_a_warning_and_says_what_it_inherited(folder: Path) -> None:
    parent, fork = _files(folder)
    f = _open(fork).integrity()  # AdfWarning raised: the chain-loop warning would fail here
    row = f[f["check"] == "inherited_compaction"]
    assert len(row) == 1
    line = _boundary(fork)[0]
    assert f"line {line}: a copy of session {parent.stem}'s" in str(row["detail"].iloc[0])
    assert "parent_cycle" not in set(f["check"])


@FOLDERS
def test_the_forks_history_holds_the_inherited_summary_as_it_was_sent(folder: Path) -> None:
    """The fork's first own call was sent the summary in its first message (after the
    session-context and date reminders, in the automatic case): the fork's history starts with
    it, after the rows of those reminders, its text as sent; the fork's epochs start at 0 (no
    compaction of its own)."""
    first = _turns(folder, "fork")[0]
    sent = [b["text"] for b in first["call"]["messages"][0]["content"] if b["type"] == "text"]
    h = _open(_files(folder)[1]).history()
    at = list(h["kind"]).index("compaction_summary")
    assert set(h["kind"][:at]) <= {"context"} and at == (0 if folder == MANUAL else 2)
    (block,) = json.loads(h["content"].iloc[at])
    assert block["text"] in sent
    assert set(h["epoch"]) == {0}


def test_the_manual_forks_history_then_holds_the_kept_message() -> None:
    first = _turns(MANUAL, "fork")[0]
    sent = first["call"]["messages"]
    h = _open(_files(MANUAL)[1]).history()
    assert list(h["kind"][:2]) == ["compaction_summary", "assistant"]
    (answer,) = json.loads(h["content"].iloc[1])
    assert sent[1]["role"] == "assistant" and answer["text"] == sent[1]["content"][0]["text"]


@FOLDERS
def test_replay_of_the_fork_equals_each_request_it_made(folder: Path) -> None:
    """At each of the fork's own calls, the rows ``replay()`` puts in context are the messages
    sent (``test_recorded.skeleton``: roles, prompts, assistant texts, tool ids, the summary
    first), and the call's usage is the log's."""
    fork = _open(_files(folder)[1])
    calls = fork.calls()
    replay = fork.replay().set_index("seq")
    h = fork.history().set_index("seq")
    summaries = summary_lines(_log(folder))
    own = _turns(folder, *FORK_PHASES)
    assert len(own) == 4
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
        mine = skeleton(got, ["\0summary"])
        assert mine == skeleton(c["call"]["messages"], summaries)
        assert mine[0] == ("user", (("summary",),))
        u = c["answer"]["usage"]
        assert int(replay.loc[seq, "tokens_input"]) == u["input"]
        assert int(replay.loc[seq, "tokens_output"]) == u["output"]
        assert int(replay.loc[seq, "tokens_cache_read"]) == u["cache_read"]


@FOLDERS
def test_each_call_is_paid_once_by_the_session_that_made_it(folder: Path) -> None:
    """The parent's calls and the fork's own (the kept messages' copies are the parent's),
    their sums the log's turns (compaction calls leave no usage in the file)."""
    parent, fork = _files(folder)
    rows, errors = uf.usage_fleet([str(parent), str(fork)], engine="serial")
    assert errors == []
    rows = list(rows)
    mine = len(_turns(folder, *FORK_PHASES))
    want = {parent.stem: len(_turns(folder)) - mine, fork.stem: mine}
    assert {r["agent"]: r["calls"] for r in rows} == want
    turns = [c["answer"]["usage"] for c in _turns(folder)]

    def total(col: str) -> int:
        return sum(int(r[col]) for r in rows)

    prompt = total("input") + total("cache_write") + total("cache_read")
    assert prompt == sum(u["input"] for u in turns)
    assert total("cache_read") == sum(u["cache_read"] for u in turns)
    assert total("output") == sum(u["output"] for u in turns)
    if folder == MANUAL:
        assert (prompt, total("cache_read"), total("output")) == (136777, 90432, 102)


@FOLDERS
def test_watch_lands_the_parents_compaction_once(folder: Path) -> None:
    """``adfkit watch``, record by record: the parent's compaction lands in the parent, the
    fork's copy of it does not land (its next call is a copy), as a full read says."""
    from adfkit._facade.watch import Watched, figures_of

    parent, fork = _files(folder)
    landed = {}
    for path in (parent, fork):
        w = Watched(path)
        assert w.incremental
        landed[path] = w.update()
        full, _ = figures_of(path)
        assert len(w.figures.landed) == len(full.landed)
    pre = _boundary(parent)[1]["compactMetadata"]["preTokens"]
    assert [x.tokens_before for x in landed[parent]] == [pre]
    assert landed[fork] == []


def _with_own_compaction(tmp_path: Path) -> Path:
    """The fork's file with a compaction of its own appended after its last call: a boundary
    hanging off the last record, and a summary under it."""
    fork = _files(MANUAL)[1]
    recs = _records(fork)
    last = [r for r in recs if r.get("type") in ("user", "assistant")][-1]
    boundary = {
        **{k: v for k, v in _boundary(fork)[1].items() if k != "logicalParentUuid"},
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
    out = tmp_path / fork.name
    text = fork.read_text(encoding="utf-8")
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


@FOLDERS
def test_no_file_of_the_recording_names_a_machine_path(folder: Path) -> None:
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        assert re.search(r"/tmp/adfkit-record|/work/", path.read_text(encoding="utf-8")) is None
