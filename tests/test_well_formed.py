"""Well-formed files raise nothing: what Claude Code and Codex write by design (timestamp
inversions, provider-run web searches, ``<synthetic>`` messages) is no warning, and the real
fixture sessions open with no AdfWarning and no integrity finding above ``info``, except the
ones listed here, which are true of the file."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from test_codex import Roll, basic

import adfkit

TRANSCRIPTS = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "transcripts"

# Findings above info that are true of the file (README of the fixtures).
TRUE_OF_FILE = {
    # D5: the Bash call at line 392 has no result in the file: its tool_result is the record
    # (2c2644bc...) that the hook at line 393 and the boundary at line 394 point to, never written
    "c010174c-a7cd-4bcc-b7d4-61258d6c463f": {("tool_use_without_result", "warning")},
    # D16: the function_call at line 826 was interrupted, then the session resumed without it
    "019c8a53-a0dd-7130-bcd7-95445d84846a": {("tool_use_without_result", "warning")},
}


def _sessions() -> list[Any]:
    if not TRANSCRIPTS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{TRANSCRIPTS} absent"))]
    out = []
    for p in sorted(TRANSCRIPTS.rglob("*.jsonl")):
        if "subagents" in p.parts:
            continue  # opened through their session's subagents()
        out.append(pytest.param(p, id=p.stem[-36:][:8]))
    return out


def _everything(agent: Any) -> None:
    agent.history()
    agent.usage()
    agent.compactions()
    agent.replay()
    agent.tool_calls()


@pytest.mark.parametrize("path", _sessions())
def test_h83_real_session_opens_without_warnings(path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with adfkit.open(path) as agent:
            _everything(agent)
            findings = [agent.integrity()]
            for sub in agent.subagents():
                _everything(sub)
                findings.append(sub.integrity())
    adf = [str(w.message) for w in caught if issubclass(w.category, adfkit.AdfWarning)]
    assert adf == []
    above = {
        (c, s)
        for f in findings
        for c, s in zip(f["check"], f["severity"], strict=True)
        if s != "info"
    }
    key = next((k for k in TRUE_OF_FILE if k in path.name), None)
    assert above == TRUE_OF_FILE.get(key or "", set())


# --- hand-built files --------------------------------------------------------------------


def _claude(tmp_path: Path, recs: list[dict[str, Any]]) -> Path:
    sid = "11111111-2222-3333-4444-555555555555"
    env = {"sessionId": sid, "cwd": "/p", "version": "2.1.7", "isSidechain": False}
    p = tmp_path / f"{sid}.jsonl"
    p.write_text("".join(json.dumps({**env, **r}) + "\n" for r in recs), encoding="utf-8")
    return p


def _user(uuid: str, parent: str | None, ts: str, content: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "timestamp": ts,
            "message": {"role": "user", "content": content}}  # fmt: skip


def _asst(uuid: str, parent: str, ts: str, mid: str, text: str, model: str) -> dict[str, Any]:
    usage = {"input_tokens": 5, "output_tokens": 2} if model != "<synthetic>" else {
        "input_tokens": 0, "output_tokens": 0}  # fmt: skip
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "timestamp": ts,
            "requestId": f"req_{mid}",
            "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": text}], "usage": usage}}  # fmt: skip


def _findings(agent: Any) -> set[tuple[str, str]]:
    f = agent.integrity()
    return set(zip(f["check"], f["severity"], strict=True))


def test_h80_claude_code_timestamp_inversion_is_info(tmp_path: Path) -> None:
    """The /exit pair: the caveat is stamped 1 ms after the command record that follows it."""
    p = _claude(
        tmp_path,
        [
            _user("u1", None, "2026-03-01T10:00:00.000Z", "hi"),
            _asst("a1", "u1", "2026-03-01T10:00:01.000Z", "msg_1", "yo", "claude-opus-4-5"),
            _user("u2", "a1", "2026-03-01T10:00:05.001Z", "<local-command-caveat>Caveat"),
            _user("u3", "u2", "2026-03-01T10:00:05.000Z", "<command-name>/exit</command-name>"),
        ],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)
        with adfkit.open(p) as agent:
            got = _findings(agent)
    assert ("created_at_out_of_order", "info") in got
    assert ("created_at_out_of_order", "warning") not in got


def test_synthetic_message_is_not_a_model_call(tmp_path: Path) -> None:
    p = _claude(
        tmp_path,
        [
            _user("u1", None, "2026-03-01T10:00:00.000Z", "hi"),
            _asst("a1", "u1", "2026-03-01T10:00:01.000Z", "msg_1", "yo", "claude-opus-4-5"),
            _user("u2", "a1", "2026-03-01T10:00:02.000Z", "bye"),
            _asst(
                "a2",
                "u2",
                "2026-03-01T10:00:03.000Z",
                "msg_2",
                "No response requested.",
                "<synthetic>",
            ),  # fmt: skip
        ],
    )
    with adfkit.open(p) as agent:
        h = agent.history()
        r = agent.replay()
        u = agent.usage()
    assert h["text"].tolist()[-1] == "No response requested."  # kept in the history
    assert h["kind"].astype(str).tolist()[-1] == "notice"
    assert r["seq"].tolist() == u["seq"].tolist() == [int(h["seq"].iloc[1])]  # one call


def test_h81_codex_web_search_needs_no_result_but_a_function_call_does(tmp_path: Path) -> None:
    r = Roll()
    basic(r)  # one function_call with its output
    r.ev("task_started", turn_id="2", model_context_window=258400)
    r.msg("user", "search the web")
    r.add("response_item", {"type": "web_search_call", "status": "completed",
                            "action": {"type": "search", "query": "adfkit"}})  # fmt: skip
    r.fcall("c2")  # never answered: interrupted
    r.tc((400, 90, 30, 4), (170, 0, 15, 0))
    r.msg("assistant", "Found it.")
    r.tc((600, 190, 40, 4), (200, 100, 10, 0))
    r.ev("task_complete", turn_id="2", last_agent_message="Found it.")
    with adfkit.open(r.write(tmp_path / "rollout-2026-03-14T09-00-00-x.jsonl")) as agent:
        calls = agent.tool_calls()
        f = agent.integrity()
    assert sorted(calls["tool_name"]) == ["shell", "shell", "web_search"]
    (open_,) = f.loc[f["check"] == "tool_use_without_result", "detail"]
    assert "c2" in open_ and "web_search" not in open_
    assert f.loc[f["check"] == "tool_use_without_result", "severity"].tolist() == ["warning"]
