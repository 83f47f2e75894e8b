"""Gemini CLI chats: the reader against the files Gemini CLI 0.61.0 wrote (tests/fixtures/recorded,
``make record AGENT=gemini_cli``) and the request log's truth, plus hand-built files (hostile
ones among them). The figures every format shares are checked by tests/test_recorded.py."""

from __future__ import annotations

import json
import os
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pandas as pd
import pytest

import adfkit
from adfkit._core import registry
from adfkit._sources.gemini_cli.parser import parse_gemini

RECORDED = Path(__file__).parent / "fixtures" / "recorded" / "gemini-cli" / "0.61.0"
TMP = RECORDED / "home" / ".gemini" / "tmp"
CHATS = TMP / "demo" / "chats"
HASH = "ab" * 32


def _files() -> tuple[Path, Path, Path]:
    """(the session's first file, the resume's stub file, the subagent's chat)."""
    first, stub = sorted(CHATS.glob("session-*.jsonl"))
    (sub,) = sorted(CHATS.glob("*/*.jsonl"))
    return first, stub, sub


def _log() -> list[dict[str, Any]]:
    with (RECORDED / "requests.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _subagents_calls() -> list[dict[str, Any]]:
    """The log's turn calls of the subagent: its first message is its task prompt."""
    return [
        x
        for x in _log()
        if x["kind"] == "turn"
        and x["call"]["messages"][0]["content"][0].get("text", "").startswith("task-s1")
    ]


def _open(path: Path, **kw: Any) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cast(adfkit.AgentFile, adfkit.open(path, **kw))


@pytest.fixture(scope="module")
def agent() -> adfkit.AgentFile:
    return _open(_files()[0])


def test_gemini_cli_claims_its_files_and_only_them() -> None:
    """Each recorded file (the chat, the resume's stub, the subagent's chat) is claimed by
    gemini_cli alone; the recorded Qwen Code chat and Claude Code session are not."""
    for f in _files():
        assert [s.name for s in registry.claimants(registry.Probe(f))] == ["gemini_cli"]
    others = Path(__file__).parent / "fixtures" / "recorded"
    for f in [
        *sorted((others / "qwen-code").rglob("chats/*.jsonl")),
        *sorted((others / "claude-code").rglob("*.jsonl"))[:3],
        *sorted((others / "pi").rglob("*.jsonl")),
    ]:
        assert "gemini_cli" not in [s.name for s in registry.claimants(registry.Probe(f))], f


def test_the_resume_stub_opens_the_same_session(agent: adfkit.AgentFile) -> None:
    """A resumed process wrote a file of its own (same sessionId, the header and the session
    context only): opening it opens the session, read from its first file; the stub adds no
    row and is an info finding."""
    other = _open(_files()[1])
    assert other.history()["text"].tolist() == agent.history()["text"].tolist()
    assert len(agent.history()) == 43
    checks = agent.integrity()
    assert "resume_stub" in set(checks["check"])


def _results(content: Any) -> list[dict[str, Any]]:
    """The tool_result blocks of a row's content (JSON) or of a logged message."""
    blocks = json.loads(content) if isinstance(content, str) else content["content"]
    return [b for b in blocks if b["type"] == "tool_result"]


def _log_of(chats: Path) -> list[dict[str, Any]]:
    """The request log of the recording whose chats folder is ``chats``."""
    with (chats.parents[4] / "requests.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


ONE_FILE = RECORDED.with_name("0.61.0-one-file") / "home" / ".gemini" / "tmp" / "demo" / "chats"


def test_resumes_into_the_first_file_are_no_compactions() -> None:
    """All five turns started in one minute (``ADFKIT_GEMINI_ONE_MINUTE=1``): each resumed
    process appended its own header and a $set of the list holding only the session context
    to the one chat file, then $set sessionId and the whole list. Those lists are skipped (an
    info finding at each, found here as the line after a header that is not the first line):
    the compactions are the two $set lists holding a new <state_snapshot> message (lines 50
    and 83; the resumes' lists hold the last one again), each prompt is one row, and each tool
    output is held as often as the request log sent it at most (skipped lists read as the
    conversation's made the chat's rows leave and come back as new rows: 81 rows, not 40)."""
    (chat,) = ONE_FILE.glob("session-*.jsonl")
    lines = [json.loads(x) for x in chat.read_text(encoding="utf-8").splitlines()]
    headers = [n for n, r in enumerate(lines, 1) if "projectHash" in r and n > 1]
    summaries = {  # a <state_snapshot> message's id -> the first list holding it
        m["id"]: n
        for n, r in reversed(list(enumerate(lines, 1)))
        for m in r.get("$set", {}).get("messages", [])
        if "<state_snapshot>" in json.dumps(m)
    }
    prompts = [r for r in lines if r.get("type") == "user" and "task-g" in json.dumps(r)]
    a = _open(chat)
    c = a.compactions()
    assert sorted(summaries.values()) == [50, 83]
    assert len(c) == len(summaries)
    assert c["kind"].tolist() == ["auto", "auto"]
    h = a.history()
    assert sum(h["text"].str.contains("task-g").fillna(False)) == len(prompts) == 5
    # each tool output as many times as the request that sent it most often held it (0.61
    # sends a resumed chat's tool outputs twice)
    held = Counter(b.get("tool_use_id") for x in h["content"] for b in _results(x))
    sent: Counter[str] = Counter()
    for x in _log_of(ONE_FILE):
        first = x["call"]["messages"][0]["content"][0] if x["kind"] == "turn" else {}
        if x["kind"] == "turn" and not first.get("text", "").startswith("task-s1"):  # subagent
            sent |= Counter(b["tool_use_id"] for m in x["call"]["messages"] for b in _results(m))
    assert held == sent and sum(sent.values()) == 19
    assert len(h) == 40
    checks = a.integrity()
    stubs = checks[checks["check"] == "resume_stub"]["detail"].str.extract(r"^line (\d+):")[0]
    assert stubs.astype(int).tolist() == [n + 1 for n in headers] == [18, 41, 61, 74]


def test_compressions_sweep_what_the_set_lines_dropped(agent: adfkit.AgentFile) -> None:
    """Two compressions (the $set lines 46 and 75 of the chat): each has its summary (a new
    <state_snapshot> message), sweeps the rows the list no longer holds (21, then 15: the
    first summary and its "Got it" among them) and keeps the session context and the turn's
    prompt and reply; no usage of the compression calls is in the file (NA); both happened
    mid-turn (after a reply with tool calls), so automatic."""
    c = agent.compactions()
    assert c["n_swept"].tolist() == [21, 15]
    assert c["kind"].tolist() == ["auto", "auto"]
    assert c["summary_seq"].notna().all()
    assert c["n_tail"].tolist() == [3, 3]
    assert c["compaction_input"].isna().all() and c["compaction_output"].isna().all()
    assert c["recorded_tokens_before"].isna().all()  # Gemini CLI writes no count
    h = agent.history().set_index("seq")
    summaries = h.loc[c["summary_seq"].astype(int), "text"]
    assert summaries.str.contains("<state_snapshot>").all()
    # the model's acknowledgement Gemini CLI writes after the summary: a notice, no call
    assert (h["kind"] == "notice").sum() == 2


def test_call_ids_are_the_ones_sent(agent: adfkit.AgentFile) -> None:
    """The file writes a call id as ``<tool>__<id>``; Gemini CLI sends the model's id back
    (stripToolCallIdPrefixes): the request log's ``call_rec00001``."""
    ids = agent.tool_calls(history=True)["tool_use_id"].tolist()
    assert ids[:3] == ["call_rec00001", "call_rec00002", "call_rec00003"]


def test_the_subagent_is_read_with_its_parent(agent: adfkit.AgentFile) -> None:
    """``chats/<session id>/<its id>.jsonl``: its calls and tools, and the parent's
    ``invoke_agent`` call whose prompt is its first message."""
    (sub,) = agent.subagents()
    assert sub.meta()["parent_tool_use_id"] == "call_rec00004"
    want = [x["answer"]["usage"]["input"] for x in _subagents_calls()]
    assert sub.usage()["tokens_input"].tolist() == want and len(want) == 2
    assert sorted(sub.tool_calls(history=True)["tool_name"]) == [
        "complete_task",
        "run_shell_command",
    ]


def test_listing_has_one_row_per_session() -> None:
    """The session's two files are one session: the listing names its first file."""
    df = adfkit.list_sessions(TMP, format="gemini_cli")
    assert df["path"].tolist() == [str(_files()[0])]
    header = json.loads(_files()[0].read_text(encoding="utf-8").splitlines()[0])
    assert df["session_id"].tolist() == [header["sessionId"]]
    assert df["model"].tolist() == ["gemini-2.5-flash"]
    assert df["cwd"].tolist() == ["/home/user/proj/demo"]  # ~/.gemini/projects.json


def test_a_folder_holds_the_session_once() -> None:
    """Found in a folder (``adfkit usage``, fleets), the session is its first file alone: the
    resume's stub file and the subagent's folder are read with it (``companions``), not
    inputs of their own (each was a session of its own, the stub a second copy of it)."""
    assert registry.discover(str(TMP)).inputs == [str(_files()[0])]


def test_threshold_is_gemini_clis_default_assumed(agent: adfkit.AgentFile) -> None:
    """compressionThreshold is a setting not written to the chat: Gemini CLI's default, half
    of gemini-2.5-flash's 1,048,576-token limit, assumed."""
    s = agent.settings()
    assert (s.context_window, s.window_source) == (1_048_576, "assumed")
    assert (s.compact_threshold, s.threshold_source) == (524_288, "assumed")


def test_usage_is_priced(agent: adfkit.AgentFile) -> None:
    """gemini-2.5-flash's list rates (model_catalog): the first call's prompt tokens (none
    cached) and output, as the request log says, at 0.30 and 2.50 USD per million."""
    u = agent.usage()
    first = _log()[0]["answer"]["usage"]
    assert first["cache_read"] == 0
    want = first["input"] * 0.30e-6 + first["output"] * 2.50e-6
    assert u["cost_usd"].iloc[0] == pytest.approx(want)


# --- hand-built files ------------------------------------------------------------------------
def _header(sid: str = "5e3c9f8a-0000-4000-8000-000000000001") -> dict[str, Any]:
    return {
        "sessionId": sid,
        "projectHash": HASH,
        "startTime": "2026-01-01T00:00:00.000Z",
        "lastUpdated": "2026-01-01T00:00:00.000Z",
        "kind": "main",
    }


def _msg(mid: str, t: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-01-01T00:00:01.000Z", "type": t, "content": content}


def _reply(mid: str, text: str, prompt: int, **extra: Any) -> dict[str, Any]:
    tokens = {"input": prompt, "output": 5, "cached": 0, "thoughts": 0, "tool": 0}
    return {**_msg(mid, "gemini", text), "tokens": {**tokens, "total": prompt + 5}, **extra}


def _chat(tmp_path: Path, lines: list[Any]) -> Path:
    chats = tmp_path / "proj" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    f = chats / "session-2026-01-01T00-00-5e3c9f8a.jsonl"
    f.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return f


def _base() -> list[Any]:
    return [
        _header(),
        _msg("u1", "user", [{"text": "do the job"}]),
        _reply("g1", "on it", 100),
        {"$set": {"lastUpdated": "2026-01-01T00:00:02.000Z"}},
    ]


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ('{"$set": {"messages": [{"id": "u1", "type": "user", "content"', "not valid JSON"),
        ('{"$rewindTo": "nowhere"}', "names no message"),
        ('{"$set": {"messages": {"id": "u1"}}}', "is not a list"),
        ("[" * 2000 + "]" * 2000, "nested too deeply"),
    ],
    ids=["set-not-json", "rewind-to-nothing", "set-not-a-list", "deep-line"],
)
def test_a_hostile_line_is_an_error_naming_file_and_line(
    tmp_path: Path, line: str, what: str
) -> None:
    """A patch that cannot be applied (not JSON, naming no message, not a list, too deep)
    leaves every message list after it unknown: an AdfError naming the file and line 5."""
    f = _chat(tmp_path, [*_base(), line, _reply("g2", "more", 120)])
    with pytest.raises(adfkit.AdfError, match=what) as ei:
        _open(f, format="gemini_cli")
    assert "line 5" in str(ei.value) and f.name in str(ei.value)


def test_a_huge_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    big = {"$set": {"messages": [_msg("u1", "user", [{"text": "x" * 5000}])]}}
    f = _chat(tmp_path, [*_base(), big, _reply("g2", "more", 120)])
    with pytest.raises(adfkit.AdfError, match="longer than max_line_bytes") as ei:
        parse_gemini(f, max_line_bytes=1000)
    assert "line 5" in str(ei.value) and f.name in str(ei.value)


def test_a_fifo_is_an_error_naming_it(tmp_path: Path) -> None:
    chats = tmp_path / "proj" / "chats"
    chats.mkdir(parents=True)
    fifo = chats / "session-2026-01-01T00-00-5e3c9f8a.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(adfkit.AdfError, match="FIFO") as ei:
        _open(fifo, format="gemini_cli")
    assert fifo.name in str(ei.value)


def test_a_half_written_last_line_is_a_warning(tmp_path: Path) -> None:
    """The agent still writing: the last line without its newline is left out, with a
    warning, and the rest is read."""
    f = _chat(tmp_path, _base())
    with f.open("a") as fh:
        fh.write('{"id": "u2", "type": "user", "cont')
    with pytest.warns(adfkit.AdfWarning, match="truncated_last_line|incomplete"):
        a = cast(adfkit.AgentFile, adfkit.open(f, format="gemini_cli"))
    assert a.usage()["tokens_input"].tolist() == [100]


def test_rewind_leaves_an_abandoned_branch(tmp_path: Path) -> None:
    """``$rewindTo`` takes the message it names and those after it out of the conversation
    (Gemini CLI's loader drops them): they are a branch, not history."""
    lines = [
        *_base(),
        _msg("u2", "user", [{"text": "a second job"}]),
        _reply("g2", "wrong way", 150),
        {"$rewindTo": "u2"},
        _msg("u3", "user", [{"text": "another job"}]),
        _reply("g3", "done", 130),
    ]
    a = _open(_chat(tmp_path, lines), format="gemini_cli")
    assert a.history()["text"].tolist() == ["do the job", "on it", "another job", "done"]
    assert a.branches()["text"].tolist() == ["a second job", "wrong way"]
    # the abandoned reply was a call made all the same
    assert sorted(a.usage()["tokens_input"].tolist()) == [100, 130, 150]


def _compressed(mid_turn: bool) -> list[Any]:
    """A chat compressed after a reply with a tool call (mid-turn) or after a final reply."""
    call = {"id": "read_file__c1", "name": "read_file", "args": {"file_path": "a"}}
    calls = {"toolCalls": [call]} if mid_turn else {}
    snapshot = "<state_snapshot>the job so far</state_snapshot>"
    return [
        *_base(),
        _msg("u2", "user", [{"text": "next job"}]),
        _reply("g2", "reading", 150, **calls),
        {
            "$set": {
                "messages": [
                    _msg("s1", "user", [{"text": snapshot}]),
                    _msg("a1", "gemini", [{"text": "Got it. Thanks for the additional context!"}]),
                    _msg("n2", "user", [{"text": "next job"}]),
                    _msg("n3", "gemini", [{"text": "reading"}, {"functionCall": call}])
                    if mid_turn
                    else _msg("n3", "gemini", [{"text": "reading"}]),
                ]
            }
        },
        _reply("g3", "done", 60),
    ]


@pytest.mark.parametrize(("mid_turn", "kind"), [(True, "auto"), (False, None)])
def test_a_compression_mid_turn_is_automatic_else_na(
    tmp_path: Path, mid_turn: bool, kind: str | None
) -> None:
    """The file holds no trigger: a compression between a reply's tool call and its result
    can only be automatic (/compress is typed between turns); one between turns is NA. The
    kept rows are the list's copies of the prompt and reply (new ids, same content)."""
    a = _open(_chat(tmp_path, _compressed(mid_turn)), format="gemini_cli")
    c = a.compactions()
    assert len(c) == 1
    assert (c["kind"].iloc[0] if not c["kind"].isna().iloc[0] else None) == kind
    assert c["n_swept"].tolist() == [2]  # do the job, on it
    assert c["n_tail"].tolist() == [2]  # next job, reading
    assert c["trigger_tokens"].tolist() == [155]  # the last call: 150 in, 5 out
    seq = int(a.usage()["seq"].iloc[-1])
    window = a.context_at(seq, context=False)["text"].tolist()
    assert window == [
        "<state_snapshot>the job so far</state_snapshot>",
        "Got it. Thanks for the additional context!",
        "next job",
        "reading",
    ]


# --- adfsynth -----------------------------------------------------------------------------------
def _key(role: str, content: list[dict[str, Any]]) -> str:
    """adfsynth's key of a message (``role:texts`` or ``role:ids``) from a row's blocks."""
    out = []
    for b in content:
        if b["type"] == "text":
            out.append(b["text"])
        elif b["type"] in ("tool_use", "tool_result"):
            out.append(b.get("id") or b.get("tool_use_id"))
    return f"{role}:" + "|".join(out)


def _ctx(k: str) -> str:
    """The session context is regenerated by each process under one id: the row holds its
    last version, so windows compare it as one item."""
    return "user:<context>" if k.startswith("user:<session_context>") else k


def test_synth_matches_ground_truth(tmp_path: Path) -> None:
    """adfsynth's chat (a resume with its stub file, three compressions, a rewind, an info
    record) read back against the simulator's own record: every row in order, the abandoned
    rows, the calls and their summed tokens, the tool calls, each compression's trigger,
    swept and kept rows and summary, and the window of every call."""
    from adfsynth.gemini_cli import write_samples

    (f,) = write_samples(tmp_path)
    truth = json.loads(f.with_name(f.name[: -len(".jsonl")] + ".truth.json").read_text())
    t = parse_gemini(f)
    assert [[r.line, r.role, _key(r.role, r.content)] for r in t.rows] == truth["rows"]
    assert [_key(r.role, r.content) for r in t.other_branches] == truth["abandoned"]
    assert len(t.calls) == truth["n_calls"] == 18
    assert {k: t.usage()[k] for k in ("input", "output", "cache_read")} == truth["usage"]
    assert {e.kind for e in t.events} == {"compaction"}
    a = _open(f)
    assert dict(Counter(a.tool_calls(history=True)["tool_name"])) == truth["tool_calls"]
    c = a.compactions()
    want = truth["compactions"]
    assert [None if pd.isna(k) else k for k in c["kind"]] == [w["trigger"] for w in want]
    assert c["n_swept"].tolist() == [len(w["swept"]) for w in want] == [19, 10, 8]
    h = a.history().set_index("seq")
    for seqs, w in zip(c["tail_seqs"], want, strict=True):
        assert [_key(h.loc[q, "role"], json.loads(h.loc[q, "content"])) for q in seqs] == w["kept"]
    assert h.loc[c["summary_seq"].astype(int), "text"].tolist() == [w["summary"] for w in want]
    calls = [q for i, q in enumerate(a.calls()["seq"]) if i not in truth["abandoned_calls"]]
    sent = [x for i, x in enumerate(truth["contexts"]) if i not in truth["abandoned_calls"]]
    for seq, want_keys in zip(calls, sent, strict=True):
        rows = a.context_at(int(seq), context=False)
        pairs = zip(rows["role"], rows["content"], strict=True)
        got = [_ctx(_key(r, json.loads(c))) for r, c in pairs]
        assert got == [_ctx(k) for k in want_keys], seq
    assert "resume_stub" in set(a.integrity()["check"])


def test_masked_tool_outputs_are_a_microcompaction(tmp_path: Path) -> None:
    """Tool output masking rewrites a result under its id with a ``<tool_output_masked>``
    preview: a microcompaction clearing that row (which keeps the output it had), not a
    rewrite of the history; the next list holding the mask again changes nothing."""
    call = {"id": "run_shell_command__c1", "name": "run_shell_command", "args": {"command": "ls"}}
    result = {"id": "run_shell_command__c1", "name": "run_shell_command"}
    out = _msg("r1", "user", [{"functionResponse": {**result, "response": {"output": "x" * 9000}}}])
    mask = "<tool_output_masked>\nx\nOutput too large.\n</tool_output_masked>"
    masked = {**out, "content": [{"functionResponse": {**result, "response": {"output": mask}}}]}
    listed = [_msg("u1", "user", [{"text": "do the job"}]), None, masked]
    lines = [
        _header(),
        _msg("u1", "user", [{"text": "do the job"}]),
        _reply("g1", "looking", 100, toolCalls=[call]),
        out,
        _reply("g2", "read it", 2400),
    ]
    reply = {**_msg("g1", "gemini", [{"text": "looking"}, {"functionCall": call}])}
    listed[1] = reply
    lines += [{"$set": {"messages": [*listed, _msg("g2", "gemini", [{"text": "read it"}])]}}]
    later = [_msg("u2", "user", [{"text": "next"}]), _msg("g3", "gemini", [{"text": "ok"}])]
    lines += [_msg("u2", "user", [{"text": "next"}]), _reply("g3", "ok", 200)]
    lines += [{"$set": {"messages": [*listed, _msg("g2", "gemini", [{"text": "read it"}])]}}]
    lines[-1]["$set"]["messages"] += later
    a = _open(_chat(tmp_path, lines), format="gemini_cli")
    ev = a.compactions()
    assert ev["event"].tolist() == ["microcompaction"]
    h = a.history()
    assert "x" * 9000 in h.loc[h["kind"] == "tool_result", "content"].iloc[0]
    r = a.replay().set_index("seq")
    seqs = a.usage()["seq"].tolist()
    assert r.loc[seqs[2], "est_chars"] < r.loc[seqs[1], "est_chars"] - 8000


@pytest.mark.parametrize(
    "rec",
    [
        {**_msg("m1", "user", "x"), "type": ["user"]},
        {**_reply("m1", "x", 10), "thoughts": 7},
        _msg("m1", "user", [{"text": None}, {"functionCall": "ls"}]),
        {**_reply("m1", "x", 10), "toolCalls": [{"id": 3, "name": None}], "tokens": "many"},
    ],
    ids=["type-a-list", "thoughts-a-number", "parts-of-no-object", "calls-and-tokens-odd"],
)
def test_odd_values_are_read_not_raised(tmp_path: Path, rec: dict[str, Any]) -> None:
    """Values of the wrong type (found by mutating the recorded chat at random: 1,500 files,
    each table read) are skipped or kept as they are, never a traceback."""
    a = _open(_chat(tmp_path, [*_base(), rec, _reply("g9", "end", 50)]), format="gemini_cli")
    assert a.history()["text"].iloc[0] == "do the job"
    assert len(a.replay()) >= 2
