"""Qwen Code chats: the reader against a chat Qwen Code 0.24.4 wrote (tests/fixtures/recorded,
``make record AGENT=qwen_code``) and the request log's truth, plus hand-built files."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest

import adfkit
from adfkit._core import registry

RECORDED = Path(__file__).parent / "fixtures" / "recorded" / "qwen-code" / "0.24.4"
PROJECTS = RECORDED / "home" / ".qwen" / "projects"


def _chat() -> Path:
    (chat,) = sorted(PROJECTS.glob("*/chats/*.jsonl"))
    return chat


def _truth() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((RECORDED / "truth.json").read_text()))


@pytest.fixture(scope="module")
def agent() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no price for the recording's model
        return adfkit.open(_chat(), format="qwen_code")


def _usage(a: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return a.usage()


def test_qwen_code_claims_the_recorded_chat() -> None:
    """Positive recognition: the chat and its subagent's file are claimed by qwen_code alone
    (Claude Code's spec claimed Qwen chats before main's fix)."""
    (sub,) = sorted(PROJECTS.glob("*/subagents/*/agent-*.jsonl"))
    for f in (_chat(), sub):
        names = [s.name for s in registry.claimants(registry.Probe(f))]
        assert names == ["qwen_code"]


def test_qwen_code_does_not_claim_a_claude_code_session(tmp_path: Path) -> None:
    rec = {
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:00Z",
        "type": "user",
        "message": {"role": "user", "content": "hi"},
    }
    f = tmp_path / "s1.jsonl"
    f.write_text(json.dumps(rec) + "\n")
    assert "qwen_code" not in [s.name for s in registry.claimants(registry.Probe(f))]


def test_calls_by_kind_equal_the_truth(agent: Any) -> None:
    """Main calls (assistant records and the compaction calls' telemetry) plus the subagent's
    calls are the calls the server answered."""
    truth = _truth()
    main = Counter(_usage(agent)["call_kind"])
    subs = sum(len(_usage(s)) for s in agent.subagents())
    assert main["compaction"] == truth["calls"]["compaction"] == 3
    assert main["assistant"] + subs == truth["calls"]["turn"] == 14
    assert subs == 2


def test_tokens_equal_the_truth(agent: Any) -> None:
    truth = _truth()["tokens"]
    u = _usage(agent)
    for kind, name in (("turn", "assistant"), ("compaction", "compaction")):
        rows = u[u["call_kind"] == name]
        subs = [_usage(s) for s in agent.subagents()] if kind == "turn" else []
        for key in ("input", "output", "cache_read"):
            got = int(rows[f"tokens_{key}"].sum())
            got += sum(int(s[f"tokens_{key}"].sum()) for s in subs)
            assert got == truth[kind][key], (kind, key)


def test_compaction_calls_carry_their_own_usage(agent: Any) -> None:
    """Each compaction's call (no assistant record: its telemetry event) in order."""
    truth = [c for c in _truth()["per_call"] if c["kind"] == "compaction"]
    ev = agent.compactions()
    assert ev["compaction_input"].tolist() == [c["usage"]["input"] for c in truth]
    assert ev["compaction_output"].tolist() == [c["usage"]["output"] for c in truth]


def test_compactions_by_trigger_equal_the_truth(agent: Any) -> None:
    ev = agent.compactions()
    assert dict(Counter(ev["kind"])) == _truth()["compactions"] == {"auto": 2, "manual": 1}
    # originalTokenCount / newTokenCount as the chat_compression records wrote them
    assert ev["recorded_tokens_before"].notna().all()
    assert (ev["recorded_tokens_after"] < ev["recorded_tokens_before"]).all()
    assert (ev["n_swept"] > 0).all()


def test_tool_calls_equal_the_truth(agent: Any) -> None:
    names = Counter(agent.tool_calls(history=True)["tool_name"])
    for s in agent.subagents():
        names.update(s.tool_calls(history=True)["tool_name"])
    assert dict(names) == _truth()["tool_calls_by_name"]
    assert sum(names.values()) == _truth()["tool_calls"] == 11


def test_listing_finds_the_chat() -> None:
    df = adfkit.list_sessions(PROJECTS, format="qwen_code")
    assert df["path"].tolist() == [str(_chat())]
    assert df["session_id"].tolist() == [_chat().stem]
    assert df["agent_version"].tolist() == ["0.24.4"]
    assert df["model"].tolist() == ["qwen3-coder-plus"]


def _rec(t: str, uuid: str, **extra: Any) -> str:
    base = {"uuid": uuid, "parentUuid": None, "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}
    return json.dumps({**base, "type": t, **extra})


def test_failed_compression_is_no_event_and_bad_lines_are_findings(tmp_path: Path) -> None:
    """A compression that kept the history (status 5, NOOP) sweeps nothing; a line that is not
    JSON is a finding, not an error."""
    user = {"role": "user", "parts": [{"text": "hi"}]}
    model = {"role": "model", "parts": [{"text": "hello"}]}
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}
    info = {"originalTokenCount": 10, "newTokenCount": 10, "compressionStatus": 5}
    lines = [
        _rec("user", "a", message=user),
        "{not json",
        _rec("assistant", "b", message=model, usageMetadata=usage, model="qwen3-coder-plus"),
        _rec("system", "c", subtype="chat_compression", systemPayload={"info": info}),
    ]
    chats = tmp_path / "p" / "chats"
    chats.mkdir(parents=True)
    f = chats / "0b5e6a52-7a3b-4f39-9c4e-1c7c1b2f0a11.jsonl"
    f.write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = cast(adfkit.AgentFile, adfkit.open(f, format="qwen_code"))
        assert len(a.compactions()) == 0
        assert _usage(a)["tokens_input"].tolist() == [10]
    checks = set(a.integrity()["check"]) if "check" in a.integrity() else set()
    assert "compression_not_applied" in checks


def test_window_is_the_recorded_one_and_the_threshold_learned(agent: Any) -> None:
    """Each reply records contextWindowSize (64,000: the recording's setting). The lowered
    autoCompactThreshold (0.39: 24,960 tokens) is not on disk, so Qwen Code's default rule
    (min(0.85 x 64,000, 64,000 - 33,000) = 31,000) would be assumed; but the file records the
    count before each automatic (token_limit) compaction, and the fewest of them is the
    threshold in force (recorded): 27,271, at or past the real setting, below the rule's."""
    s = agent.settings()
    assert (s.context_window, s.window_source) == (64_000, "recorded")
    # the fewest count before a token_limit compaction in the recorded chat (Qwen Code's own)
    assert (s.compact_threshold, s.threshold_source) == (27_271, "recorded")
    assert 24_960 <= s.compact_threshold < 31_000


def test_the_acknowledgement_a_compaction_writes_is_no_model_call(agent: Any) -> None:
    """Qwen Code's compressed history holds a model turn it writes itself ("Got it..."): a
    row of the window, not a call: replay() has one row per reply the model made, each with
    the usage the file records (it had three rows of NA, one after each compaction)."""
    replay = agent.replay()
    usage = agent.usage()
    assert len(replay) == int((usage["call_kind"] == "assistant").sum()) == 12
    assert replay["tokens_input"].notna().all()
