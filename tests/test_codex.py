"""Codex CLI rollouts: hand-built tiny files with every expected value written here, then the
parser against the simulator's ground truth on the committed samples."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
import zstandard
from conftest import fingerprint

from adfkit._base.errors import AdfWarning, NotTranscriptError
from adfkit._sources.codex.listing import list_codex_sessions
from adfkit._sources.codex.parser import parse_codex
from adfkit._sources.transcript.kit import ParsedTranscript

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_agents" / "codex"
SID = "0199a213-81c0-7800-8aa1-bbab2a035a53"
PREFIX = "Another language model started to solve this problem and produced a summary"


class Roll:
    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.t = 0

    def add(self, type_: str, payload: dict[str, Any]) -> int:
        self.t += 1
        ts = f"2026-03-14T09:00:{self.t:02d}.000Z"
        self.lines.append(json.dumps({"timestamp": ts, "type": type_, "payload": payload}).encode())
        return len(self.lines)

    def raw(self, data: bytes) -> int:
        self.lines.append(data)
        return len(self.lines)

    def meta(self) -> int:
        return self.add(
            "session_meta",
            {
                "id": SID,
                "timestamp": "2026-03-14T09:00:00.000Z",
                "cwd": "/w",
                "originator": "codex_cli_rs",
                "cli_version": "0.77.0",
                "source": "cli",
                "model_provider": "openai",
                "git": {"branch": "main", "commit_hash": "abc", "repository_url": "https://x"},
            },
        )

    def ctx(self, model: str = "gpt-5-codex") -> int:
        return self.add("turn_context", {"cwd": "/w", "model": model, "approval_policy": "never"})

    def msg(self, role: str, text: str) -> int:
        kind = "output_text" if role == "assistant" else "input_text"
        return self.add(
            "response_item",
            {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
        )

    def fcall(self, cid: str, name: str = "shell", args: str | None = None) -> int:
        a = args if args is not None else json.dumps({"command": ["ls"]})
        return self.add(
            "response_item", {"type": "function_call", "name": name, "arguments": a, "call_id": cid}
        )

    def fout(self, cid: str, out: Any) -> int:
        return self.add(
            "response_item", {"type": "function_call_output", "call_id": cid, "output": out}
        )

    def reason(self, text: str) -> int:
        return self.add(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": text}],
                "encrypted_content": "SECRET",
            },
        )

    def tc(
        self,
        total: tuple[int, int, int, int],
        last: tuple[int, int, int, int] | None,
        window: int = 100_000,
    ) -> int:
        def u(x: tuple[int, int, int, int]) -> dict[str, int]:
            return {
                "input_tokens": x[0],
                "cached_input_tokens": x[1],
                "output_tokens": x[2],
                "reasoning_output_tokens": x[3],
                "total_tokens": x[0] + x[2],
            }

        info: dict[str, Any] = {"total_token_usage": u(total), "model_context_window": window}
        if last is not None:
            info["last_token_usage"] = u(last)
        return self.add("event_msg", {"type": "token_count", "info": info, "rate_limits": {}})

    def ev(self, type_: str, **kw: Any) -> int:
        return self.add("event_msg", {"type": type_, **kw})

    def write(self, path: Path, tail: bytes = b"") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(self.lines) + b"\n" + tail)
        return path


def parse(p: Path, **kw: Any) -> ParsedTranscript:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_codex(p, **kw)


def lines(rows: Any) -> list[int]:
    return [r.line for r in rows]


def basic(r: Roll) -> None:
    r.meta()  # 1
    r.msg("developer", "<permissions instructions>sandbox</permissions instructions>")  # 2
    r.msg("user", "<environment_context><cwd>/w</cwd></environment_context>")  # 3
    r.ev("task_started", turn_id="1", model_context_window=258400)  # 4
    r.ctx()  # 5
    r.msg("user", "list the files")  # 6
    r.ev("user_message", message="list the files")  # 7
    r.reason("Listing")  # 8
    r.fcall("c1")  # 9
    r.tc((100, 0, 10, 4), (100, 0, 10, 4))  # 10: call 1
    r.tc((100, 0, 10, 4), (100, 0, 10, 4))  # 11: repeat (rate limits), not a call
    r.fout("c1", json.dumps({"output": "a\nb", "metadata": {"exit_code": 0}}))  # 12
    r.ctx("gpt-5.1-codex")  # 13
    r.msg("assistant", "Two files.")  # 14
    r.ev("agent_message", message="Two files.")  # 15
    r.tc((230, 90, 15, 4), (130, 90, 5, 0))  # 16: call 2
    r.ev("task_complete", turn_id="1", last_agent_message="Two files.")  # 17


def test_rows_calls_and_usage_once(tmp_path: Path) -> None:
    r = Roll()
    basic(r)
    t = parse(r.write(tmp_path / f"rollout-2026-03-14T09-00-00-{SID}.jsonl"))
    assert lines(t.rows) == [2, 3, 6, 8, 12, 14]
    assert [x.seq for x in t.rows] == [1, 2, 3, 4, 5, 6]
    assert [x.role for x in t.rows] == ["user", "user", "user", "assistant", "user", "assistant"]
    assert [x.kind_hint for x in t.rows] == ["context", "context", None, None, None, None]
    a = t.rows[3]
    assert a.content == [
        {"type": "thinking", "thinking": "Listing"},
        {"type": "tool_use", "id": "c1", "name": "shell", "input": {"command": ["ls"]}},
    ]
    assert a.lines == (8, 9) and a.model == "gpt-5-codex"
    assert a.tokens == {"input": 100, "output": 10, "cache_read": 0, "reasoning": 4}
    assert t.rows[5].tokens == {"input": 130, "output": 5, "cache_read": 90, "reasoning": 0}
    assert t.rows[5].model == "gpt-5.1-codex"
    assert t.rows[4].content[0]["tool_use_id"] == "c1" and t.rows[4].tokens == {}
    assert t.usage() == {"input": 230, "output": 15, "cache_read": 90, "reasoning": 4}
    assert [(c.line, c.seq) for c in t.calls] == [(10, 4), (16, 6)]
    assert [(x.line, x.is_call, x.seq) for x in t.token_counts] == [
        (10, True, 4),
        (11, False, None),
        (16, True, 6),
    ]
    assert t.token_counts[0].context_window == 100_000
    assert t.session_id == SID and t.meta["cli_version"] == "0.77.0"
    assert t.meta["model"] == "gpt-5-codex" and "repository_url" not in str(t.meta)
    assert "SECRET" not in repr(t.rows)
    assert t.rows[0].created_at == 1773478802000  # 2026-03-14T09:00:02Z


def _compacting(r: Roll) -> dict[str, int]:
    basic(r)  # rows at 2 3 6 8 12 14
    ln: dict[str, int] = {}
    r.ev("task_started", turn_id="2")  # 18
    r.ctx()  # 19
    ln["p2"] = r.msg("user", "now fix them")  # 20
    ln["a2"] = r.reason("fixing")  # 21
    r.fcall("c2")  # 22
    r.tc((530, 190, 25, 4), (300, 100, 10, 0))  # 23
    ln["o2"] = r.fout("c2", "done")  # 24
    r.ctx()  # 25
    r.tc((1030, 190, 45, 4), (500, 0, 20, 0))  # 26: the summarization call, no row of its own
    hist = [
        {
            "type": "message",
            "role": "developer",
            "content": [
                {
                    "type": "input_text",
                    "text": "<permissions instructions>sandbox</permissions instructions>",
                }
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "now fix them"}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "not in the window"}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": PREFIX + "\nfixed half of it"}],
        },
    ]
    ln["c1"] = r.add("compacted", {"message": "", "replacement_history": hist})  # 27
    r.ev("context_compacted")  # 28
    ln["a3"] = r.msg("assistant", "continuing")  # 29
    r.tc((1270, 1290, 50, 4), (240, 100, 5, 0))  # 30
    r.ev("task_complete", turn_id="2")  # 31
    return ln


def test_compaction_with_replacement_history(tmp_path: Path) -> None:
    r = Roll()
    ln = _compacting(r)
    t = parse(r.write(tmp_path / "rollout.jsonl"))
    assert lines(t.rows) == [2, 3, 6, 8, 12, 14, 20, 21, 24, 27, 29]
    (c,) = t.events
    assert c.kind == "compaction" and c.line == ln["c1"] == 27
    assert c.trigger == "auto"  # the turn had a user message
    assert c.preserved == (1, 7)  # the developer context and "now fix them"
    assert c.swept == (2, 3, 4, 5, 6, 8, 9)
    assert c.summary_seq == 10
    s = t.rows[9]
    assert s.kind_hint == "compaction_summary"
    assert s.content == [{"type": "text", "text": PREFIX + "\nfixed half of it"}]
    assert s.tokens == {"input": 500, "output": 20, "cache_read": 0, "reasoning": 0}
    assert (c.tokens_before, c.tokens_after, c.context_window) == (500, 240, 100_000)
    assert c.extra["unmatched_replacement_items"] == 1 and c.extra["context_compacted_line"] == 28
    assert t.usage()["input"] == 1270 and len(t.calls) == 5


def test_manual_compaction_without_replacement_history(tmp_path: Path) -> None:
    r = Roll()
    basic(r)  # rows 2 3 6 8 12 14; context rows 2 and 3; typed prompt at 6
    r.ev("task_started", turn_id="2")  # 18
    r.tc((400, 0, 25, 4), (170, 0, 10, 0))  # 19: summarization call
    r.add("compacted", {"message": PREFIX + " summary"})  # 20
    r.ev("context_compacted")  # 21
    r.ev("task_complete", turn_id="2")  # 22
    t = parse(r.write(tmp_path / "rollout.jsonl"))
    (c,) = t.events
    assert c.trigger == "manual" and c.preserved == (1, 2, 3) and c.swept == (4, 5, 6)
    assert c.summary_seq == 7 and t.rows[6].tokens["input"] == 170
    assert c.extra["replacement_history"] == "absent"


def test_compaction_before_the_turns_user_message_is_automatic(tmp_path: Path) -> None:
    """Codex compacts automatically before a turn's first call when the last one was over the
    limit: the compaction comes before the turn's user message, which then arrives in the same
    turn. A manual compaction is a turn of its own, so the message settles it: auto."""
    r = Roll()
    basic(r)
    r.ev("task_started", turn_id="2")  # 18
    r.tc((400, 0, 25, 4), (170, 0, 10, 0))  # 19: summarization call
    r.add("compacted", {"message": PREFIX + " summary"})  # 20
    r.ev("context_compacted")  # 21
    r.msg("user", "now count them")  # 22
    r.ev("task_complete", turn_id="2")  # 23
    t = parse(r.write(tmp_path / "rollout.jsonl"))
    (c,) = t.events
    assert c.trigger == "auto"


def test_0171_compaction_item_in_a_turn_without_user_message_has_no_trigger(
    tmp_path: Path,
) -> None:
    """0.171 writes ``item_completed`` ``ContextCompaction`` (no ``context_compacted``): a
    compaction in a turn with no user message is not told apart, trigger None."""
    r = Roll()
    basic(r)
    r.ev("task_started", turn_id="2")  # 18
    r.msg("assistant", "the summary")  # 19: the compaction call's answer
    r.tc((400, 0, 25, 4), (170, 0, 10, 0))  # 20
    r.add("compacted", {"message": PREFIX + " the summary"})  # 21
    r.ev("item_completed", item={"type": "ContextCompaction", "id": "x"})  # 22
    r.ev("task_complete", turn_id="2")  # 23
    t = parse(r.write(tmp_path / "rollout.jsonl"))
    (c,) = t.events
    assert c.trigger is None and c.extra["context_compaction_item_line"] == 22
    assert 19 not in lines(t.rows)  # the summary message is the call's output, not a row
    s = t.rows[c.summary_seq - 1]
    assert s.kind_hint == "compaction_summary" and s.tokens["input"] == 170


def _usage_record(r: Roll, rid: str, inp: int, out: int) -> int:
    usage = {"input_tokens": inp, "cached_input_tokens": 0, "output_tokens": out}
    return r.add("token_usage_record", {"response_id": rid, "usage": usage})


def test_0171_compaction_response_id_names_the_compaction_call(tmp_path: Path) -> None:
    """0.171's ``compacted`` names its call (``compaction_response_id``): that call is the
    compaction's, its assistant message no row, even when the message is not the summary's
    text; the other calls stay on their rows, one per ``token_usage_record``."""
    r = Roll()
    basic(r)  # rows 2 3 6 8 12 14
    r.ev("task_started", turn_id="2")  # 18
    r.msg("user", "go on")  # 19
    r.msg("assistant", "ok")  # 20
    _usage_record(r, "resp_a", 300, 5)  # 21
    r.msg("assistant", "<summary>reworded</summary>")  # 22: the compaction call's answer
    _usage_record(r, "resp_b", 320, 40)  # 23
    comp = {"message": PREFIX + " the summary", "compaction_response_id": "resp_b"}
    r.add("compacted", comp)  # 24
    r.ev("task_complete", turn_id="2")  # 25
    t = parse(r.write(tmp_path / "rollout.jsonl"))
    assert 22 not in lines(t.rows) and 20 in lines(t.rows)
    (c,) = t.events
    assert c.trigger == "auto"
    calls = {x.key: t.rows[x.seq - 1] for x in t.calls}
    assert calls["resp_a"].line == 20 and calls["resp_a"].tokens["input"] == 300
    assert calls["resp_b"].kind_hint == "compaction_summary"
    assert calls["resp_b"].tokens == {"input": 320, "cache_read": 0, "output": 40}
    assert len(t.calls) == 2  # the token_count events of basic() are no calls here


def test_remote_compaction_summary_is_opaque(tmp_path: Path) -> None:
    r = Roll()
    basic(r)
    hist = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "list the files"}],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Two files."}],
        },
        {"type": "compaction", "encrypted_content": "OPAQUE"},
    ]
    r.add("compacted", {"message": "", "replacement_history": hist})  # 18
    t = parse(r.write(tmp_path / "rollout.jsonl"))
    (c,) = t.events
    assert c.preserved == (3, 6) and c.swept == (1, 2, 4, 5) and c.trigger is None
    s = t.rows[6]
    assert s.content == [] and "encrypted" in (s.note or "") and s.tokens == {}
    assert "OPAQUE" not in repr(t)


def test_rollback_then_compaction(tmp_path: Path) -> None:
    r = Roll()
    basic(r)  # rows 2 3 6 8 12 14
    r.ev("task_started", turn_id="2")  # 18
    r.msg("user", "try something else")  # 19
    r.msg("assistant", "ok trying")  # 20
    r.tc((330, 0, 25, 4), (100, 0, 10, 0))  # 21
    r.ev("task_complete", turn_id="2")  # 22
    r.ev("thread_rolled_back", num_turns=1)  # 23
    r.ev("task_started", turn_id="3")  # 24
    r.msg("user", "instead, count them")  # 25
    r.add("compacted", {"message": "summary text"})  # 26
    t = parse(r.write(tmp_path / "rollout.jsonl"))
    assert lines(t.rows) == [2, 3, 6, 8, 12, 14, 25, 26]
    assert lines(t.other_branches) == [19, 20]
    assert [x.seq for x in t.other_branches] == [9, 10]
    assert {x.branch for x in t.other_branches} == {"branch-1"}
    rw, c = t.events
    assert (rw.kind, rw.line, rw.swept) == ("rewind", 23, (9, 10))
    # the rolled-back turn had left the window before the compaction
    assert c.swept == (4, 5, 6) and c.preserved == (1, 2, 3, 7) and c.summary_seq == 8
    assert c.trigger == "auto"
    assert t.other_branches[1].tokens["input"] == 100  # its call still cost tokens, once


def test_zst_reads_like_plain_and_size_cap(tmp_path: Path) -> None:
    r = Roll()
    basic(r)
    plain = r.write(tmp_path / "a" / f"rollout-2026-03-14T09-00-00-{SID}.jsonl")
    z = tmp_path / "b" / (plain.name + ".zst")
    z.parent.mkdir()
    z.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    a, b = parse(plain), parse(z)
    assert a.rows == b.rows and a.events == b.events and a.token_counts == b.token_counts
    with pytest.warns(AdfWarning, match="max_decompressed_bytes"):
        c = parse_codex(z, max_decompressed_bytes=1500)
    assert ("decompressed_size_cap", "error") in [(f.check, f.severity) for f in c.findings]
    assert len(c.rows) < len(a.rows)
    bad = tmp_path / "b" / "rollout-bad.jsonl.zst"
    bad.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes())[:-40])
    d = parse_codex(bad, warn=False)  # a cut frame reads as far as it decodes, never raises
    assert len(d.rows) <= len(a.rows)


def test_hostile_lines(tmp_path: Path) -> None:
    r = Roll()
    r.meta()  # 1
    r.msg("user", "hello")  # 2
    r.raw(b'{"timestamp": "x", "type": "response_item", "payload": {')  # 3 bad JSON
    r.add("brand_new_thing", {"x": 1})  # 4 unknown type
    r.add("world_state", {"x": 1})  # 5 newer type (info)
    r.raw(
        json.dumps(
            {
                "timestamp": "2026-03-14T09:00:09.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "caf\u00e9"}],
                },
            }
        )
        .encode()
        .replace(b"caf\\u00e9", b"caf\xe9")
    )  # 6 latin-1 byte
    r.raw(b'{"type":"response_item","payload":{"type":"message","pad":"' + b"x" * 5000 + b'"}}')
    r.fcall("c9", "shell", args="{not json")  # 8
    r.add("response_item", {"type": "mystery_item"})  # 9
    p = r.write(tmp_path / "rollout.jsonl", tail=b'{"timestamp":"2026-03-14T09:00:20.000Z","ty')
    with pytest.warns(AdfWarning) as rec:
        t = parse_codex(p, max_line_bytes=4096)
    assert len(rec) == 1 and "payload" not in str(rec[0].message)
    assert lines(t.rows) == [2, 6, 8]
    assert t.rows[1].content == [{"type": "text", "text": "caf\ufffd"}] and t.rows[1].malformed
    assert t.rows[2].content[0]["input"] == {
        "_error": "arguments are not valid JSON",
        "_raw_arguments": "{not json",
    }
    got = sorted((f.check, f.line, f.severity) for f in t.findings)
    assert got == [
        ("bad_json", 3, "warning"),
        ("encoding", 6, "warning"),
        ("huge_line", 7, "warning"),
        ("newer_record_type", None, "info"),
        ("truncated_last_line", 10, "warning"),
        ("unknown_item_type", 9, "warning"),
        ("unknown_record_type", 4, "warning"),
    ]


def test_legacy_bare_lines(tmp_path: Path) -> None:
    p = tmp_path / f"rollout-2025-05-01-{SID}.jsonl"
    p.write_text(
        json.dumps({"id": SID, "timestamp": "2025-05-01T10:00:00Z", "instructions": None})
        + "\n"
        + json.dumps(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        )
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hello"}],
            }
        )
        + "\n"
    )
    t = parse(p)
    assert [(x.role, x.content[0]["text"]) for x in t.rows] == [
        ("user", "hi"),
        ("assistant", "hello"),
    ]
    assert t.session_id == SID


@pytest.mark.parametrize(
    ("name", "data", "match"),
    [
        ("r.jsonl", b"", "empty file"),
        ("r.jsonl", b"\x89PNG\r\n\x1a\n" + bytes(64), "binary data"),
        ("r.jsonl", b"SQLite format 3\x00" + bytes(64), "SQLite database"),
        ("r.jsonl", b'{"a": 1}\n', "no Codex rollout record"),
        # a Claude Code session: which format it is, is the registry's to say (adfkit.open)
        ("r.jsonl", b'{"type":"user","uuid":"u","message":{"content":"x"}}\n', "no Codex"),
        ("r.jsonl.zst", b"plain text", "not zstd-compressed"),
    ],
)
def test_not_a_rollout(tmp_path: Path, name: str, data: bytes, match: str) -> None:
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(NotTranscriptError, match=match) as ei:
        parse_codex(p)
    assert str(p) in str(ei.value)


def test_list_sessions_plain_wins_newest_first(tmp_path: Path) -> None:
    r = Roll()
    basic(r)
    day = tmp_path / "sessions" / "2026" / "03" / "14"
    a = r.write(day / f"rollout-2026-03-14T09-00-00-{SID}.jsonl")
    (day / (a.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(a.read_bytes()))
    other = "0199a213-81c0-7800-8aa1-000000000000"
    b = day.parent / "15" / f"rollout-2026-03-15T09-00-00-{other}.jsonl.zst"
    b.parent.mkdir()
    b.write_bytes(zstandard.ZstdCompressor().compress(a.read_bytes().replace(SID.encode(), b"x")))
    os.utime(a, ns=(10**18, 10**18))
    os.utime(b, ns=(2 * 10**18, 2 * 10**18))
    (day / "notes.txt").write_text("x")
    before = fingerprint(tmp_path)
    df = list_codex_sessions(tmp_path)
    assert fingerprint(tmp_path) == before
    assert list(df["path"]) == [str(b), str(a)]
    assert list(df["session_id"]) == ["x", SID]  # session_meta id wins over the file name
    assert list(df["compressed"]) == [True, False]
    assert list(df["model"]) == ["gpt-5-codex", "gpt-5-codex"]
    assert df.loc[1, "cwd"] == "/w" and df.loc[1, "size_bytes"] == a.stat().st_size
    assert str(df["modified"].dtype) == "datetime64[ns, UTC]"


def test_reading_writes_nothing(tmp_path: Path) -> None:
    r = Roll()
    _compacting(r)
    p = r.write(tmp_path / "rollout.jsonl", tail=b'{"half')
    os.chmod(p, 0o444)
    before = fingerprint(tmp_path)
    parse_codex(p, warn=False)
    assert fingerprint(tmp_path) == before


# --- the committed samples against the simulator's ground truth --------------------------------


def _truth_files() -> list[Path]:
    return sorted(SAMPLES.rglob("*.truth.json"))


def test_samples_exist() -> None:
    assert len(_truth_files()) >= 2, "run `python adfsynth/codex.py sample_agents/`"
    assert any(p.name.endswith(".zst") for p in SAMPLES.rglob("rollout-*"))


@pytest.mark.parametrize("truth_path", _truth_files(), ids=lambda p: p.name)
def test_sample_matches_ground_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = parse_codex(truth_path.with_name(truth["file"]))
    assert len([x for x in w if issubclass(x.category, AdfWarning)]) == truth["n_warnings"]
    assert t.session_id == truth["session_id"]
    assert lines(t.rows) == truth["rows"]
    assert [r.role for r in t.rows] == truth["roles"]
    assert [r.kind_hint for r in t.rows] == truth["kind_hints"]
    assert lines(t.other_branches) == truth["other_branches"]
    assert t.usage() == truth["usage"]
    final = truth["final_total"]
    assert t.usage()["input"] == final["input"] and t.usage()["output"] == final["output"]
    line_of = {r.seq: r.line for r in t.rows + t.other_branches}
    comp = [e for e in t.events if e.kind == "compaction"]
    assert len(comp) == truth["n_compactions"]
    for ev, exp in zip(comp, truth["compactions"], strict=True):
        assert ev.trigger == exp["trigger"]
        assert sorted(line_of[s] for s in ev.swept) == exp["swept"]
        assert sorted(line_of[s] for s in ev.preserved) == exp["preserved"]
        assert ev.summary_seq is not None and line_of[ev.summary_seq] == exp["summary"]
        assert (ev.tokens_before, ev.tokens_after) == (exp["tokens_before"], exp["tokens_after"])
        assert ev.context_window == exp["context_window"]
        summary = t.rows[ev.summary_seq - 1]
        assert summary.tokens == (exp["summary_tokens"] or {})
    rew = [e for e in t.events if e.kind == "rewind"]
    assert [sorted(line_of[s] for s in e.swept) for e in rew] == truth["rewinds"]
    assert sorted(f.check for f in t.findings if f.severity != "info") == truth["finding_checks"]


# -- Codex 0.171.0, recorded against the scripted model server (tools/record) -----------------
RECORDED_0171 = ROOT / "tests" / "fixtures" / "recorded" / "codex" / "0.171.0"


def _recorded_log() -> list[dict[str, Any]]:
    with (RECORDED_0171 / "requests.jsonl").open(encoding="utf-8") as f:
        lines = [json.loads(x) for x in f if x.strip()]
    return [x for x in lines if x["kind"] in ("turn", "compaction", "side")]


def _recorded_rollouts() -> list[ParsedTranscript]:
    """The sessions: the first on a custom provider (local compactions), the second on the
    built-in OpenAI provider (remote compactions: a compaction_trigger item), the third a
    parent and the fourth its subagent (spawn_agent)."""
    paths = sorted((RECORDED_0171 / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    return [parse_codex(p, warn=False) for p in paths]


def test_0171_one_call_per_token_usage_record_with_the_usage_the_server_sent() -> None:
    """Every call the server answered is one call, keyed by its response id, with the usage
    the server reported; token_count events (totals, repeated) add none."""
    want = {
        f"resp_rec{x['n']:05d}": (
            x["answer"]["usage"]["input"],
            x["answer"]["usage"]["cache_read"],
            x["answer"]["usage"]["output"],
        )
        for x in _recorded_log()
    }
    got = {
        c.key: (c.tokens["input"], c.tokens["cache_read"], c.tokens["output"])
        for t in _recorded_rollouts()
        for c in t.calls
    }
    assert got == want and len(got) == 27


def test_0171_compaction_calls_are_on_summary_rows_not_assistant_rows() -> None:
    """Codex 0.171 writes the summary a local compaction call answered as an assistant message
    before the ``compacted`` item: that call is a compaction, its message no row. A remote
    compaction's call (an opaque compaction item) goes to its summary row too."""
    log = {f"resp_rec{x['n']:05d}": x for x in _recorded_log()}
    kinds, assistant_texts = {}, []
    for t in _recorded_rollouts():
        by_seq = {r.seq: r for r in t.rows}
        kinds |= {c.key: by_seq[c.seq].kind_hint for c in t.calls}
        assistant_texts += [
            b.get("text") for r in t.rows if r.role == "assistant" for b in r.content
        ]
    compaction_calls = {k for k, x in log.items() if x["kind"] == "compaction"}
    assert {k for k, v in kinds.items() if v == "compaction_summary"} == compaction_calls
    assert len(compaction_calls) == 5
    summaries = [x["answer"]["text"] for x in log.values() if x["kind"] == "compaction"]
    assert not set(summaries) & set(assistant_texts)


def test_0171_triggers_auto_where_the_turn_says_so_else_unknown() -> None:
    """Mid-turn and before-a-turn automatic compactions run in a turn with a user message:
    auto. The app-server's thread/compact/start is a turn with none, which the file does not
    tell from an automatic one: None, never a guessed manual."""
    phases = [x["phase"] for x in _recorded_log() if x["kind"] == "compaction"]
    assert phases == [
        "turn 2",
        "turn 3",
        "manual compaction",
        "turn 7",
        "manual remote compaction",
    ]
    got = [[e.trigger for e in t.events if e.kind == "compaction"] for t in _recorded_rollouts()]
    assert got == [["auto", "auto", None], ["auto", None], [], []]


def test_0171_thread_history_store_beside_the_rollouts_lists_the_sessions() -> None:
    """``thread_history_1.sqlite`` and ``state_5.sqlite`` beside ``sessions/``: the listing
    has the four rollouts, read without error."""
    home = RECORDED_0171 / "home" / ".codex"
    assert (home / "thread_history_1.sqlite").is_file()
    df = list_codex_sessions(home)
    assert len(df) == 4 and df["error"].isna().all()
    assert df["cli_version"].tolist() == ["0.171.0"] * 4


def test_0171_rollouts_are_claimed_by_codex_alone() -> None:
    from adfkit._core import registry

    paths = sorted((RECORDED_0171 / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    assert len(paths) == 4
    for path in paths:
        assert [s.name for s in registry.claimants(registry.Probe(path))] == ["codex"]


def test_0171_adfkit_usage_totals_equal_the_servers(capsys: pytest.CaptureFixture[str]) -> None:
    """``adfkit usage ~/.codex`` on the recording: every session (the subagent's rollout among
    them), the turn calls' tokens as the server reported them (input uncached, as the command
    counts it), the compactions apart; the stores beside ``sessions/`` read as no session."""
    from adfkit.cli import main

    truth = json.loads((RECORDED_0171 / "truth.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["usage", "--json", str(RECORDED_0171 / "home" / ".codex")]) == 0
    rows = json.loads(capsys.readouterr().out)
    turn = truth["tokens"]["turn"]
    assert len(rows) == 4
    assert sum(r["calls"] for r in rows) == truth["calls"]["turn"] == 22
    assert sum(r["input"] for r in rows) == turn["input"] - turn["cache_read"]
    assert sum(r["cache_read"] for r in rows) == turn["cache_read"]
    assert sum(r["output"] for r in rows) == turn["output"]
    assert sum(r["compactions"] for r in rows) == truth["calls"]["compaction"] == 5
