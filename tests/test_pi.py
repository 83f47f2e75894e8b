"""pi coding agent sessions: the real fixture (figures counted here with plain ``json``), the
adfsynth sessions against their ground truth, hand-built files with every expected value
written here, and hostile files."""

from __future__ import annotations

import json
import os
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import fingerprint

import adfkit
from adfkit._core import registry
from adfkit._sources import pi as pi_spec
from adfkit._sources.pi.listing import list_pi_sessions
from adfkit._sources.pi.parser import parse_pi
from adfsynth.pi import write_samples

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT.parent / "shared" / "fixtures" / "pi" / "large-session.jsonl"
SID = "4f6c8f0e-2b7a-4c55-9d1e-0a8b7c6d5e4f"


def real_fixture() -> Path:
    if not FIXTURE.exists():
        pytest.skip(
            f"real pi fixture {FIXTURE} not present (../shared is absent in a user's clone)"
        )
    return FIXTURE


def agent(path: Path, **kw: Any) -> adfkit.AgentFile:
    return adfkit.AgentFile(pi_spec.open_session(path, **kw))


def parse(p: Path, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_pi(p, **kw)


def probe(p: Path) -> registry.Probe:
    return registry.Probe(p)


# --- hand-built sessions ----------------------------------------------------------------------


class Pi:
    """A pi session written line by line; ``layout`` v3 (ids) or v1 (no ids)."""

    def __init__(self, layout: str = "v3") -> None:
        self.layout = layout
        self.lines: list[bytes] = []
        self.t = 0
        self.leaf: str | None = None
        h: dict[str, Any] = {"type": "session", "id": SID, "timestamp": self._ts(), "cwd": "/w"}
        if layout == "v3":
            h["version"] = 3
        self.lines.append(json.dumps(h).encode())

    def _ts(self) -> str:
        self.t += 1
        return f"2026-03-14T09:00:{self.t:02d}.000Z"

    def add(self, entry: dict[str, Any], *, parent: Any = True) -> int:
        rec = dict(entry)
        if self.layout == "v3":
            eid = f"e{len(self.lines):07d}"
            rec = {
                "type": entry["type"],
                "id": eid,
                "parentId": self.leaf if parent is True else parent,
            }
            rec.update(entry)
            self.leaf = eid
        rec["timestamp"] = self._ts()
        self.lines.append(json.dumps(rec).encode())
        return len(self.lines)

    def id_of(self, line: int) -> str:
        return str(json.loads(self.lines[line - 1])["id"])

    def msg(self, message: dict[str, Any]) -> int:
        return self.add({"type": "message", "message": message})

    def user(self, text: str) -> int:
        return self.msg({"role": "user", "content": text})

    def asst(
        self,
        text: str = "",
        calls: tuple[str, ...] = (),
        usage: dict[str, Any] | None = None,
        stop: str = "stop",
    ) -> int:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "toolCall", "id": c, "name": "bash", "arguments": {"command": "ls"}}
            for c in calls
        ]
        u = usage or {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 20}
        m = {
            "role": "assistant",
            "content": content,
            "model": "claude-sonnet-4-5",
            "provider": "anthropic",
            "usage": u,
            "stopReason": stop,
        }
        return self.add({"type": "message", "message": m})

    def result(self, cid: str, text: str = "out", err: bool = False) -> int:
        m = {
            "role": "toolResult",
            "toolCallId": cid,
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
            "isError": err,
        }
        return self.add({"type": "message", "message": m})

    def compact(self, first: int, before: int = 5000, summary: str = "SUMMARY") -> int:
        e: dict[str, Any] = {"type": "compaction", "summary": summary, "tokensBefore": before}
        if self.layout == "v3":
            e["firstKeptEntryId"] = self.id_of(first)
        else:
            e["firstKeptEntryIndex"] = first - 1  # lines are 1-based, pi's index 0 = header
        return self.add(e)

    def raw(self, data: bytes) -> int:
        self.lines.append(data)
        return len(self.lines)

    def write(self, path: Path, tail: bytes = b"") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(self.lines) + b"\n" + tail)
        return path


def lines(rows: Any) -> list[int]:
    return [r.line for r in rows]


def _compacting(s: Pi) -> dict[str, int]:
    """header 1; a turn with a tool call, a compaction keeping from the second prompt."""
    n = {"u1": s.user("list files")}
    n["a1"] = s.asst(
        calls=("c1",), usage={"input": 3, "output": 7, "cacheRead": 0, "cacheWrite": 900}
    )
    n["r1"] = s.result("c1", "a\nb")
    n["a2"] = s.asst(
        "two files", usage={"input": 3, "output": 4, "cacheRead": 900, "cacheWrite": 30}
    )
    n["u2"] = s.user("now count lines")
    n["a3"] = s.asst("42", usage={"input": 5, "output": 2, "cacheRead": 930, "cacheWrite": 12})
    n["c1"] = s.compact(n["u2"], before=949)
    n["u3"] = s.user("thanks")
    n["a4"] = s.asst("ok", usage={"input": 400, "output": 1, "cacheRead": 0, "cacheWrite": 0})
    return n


@pytest.mark.parametrize("layout", ["v3", "v1"])
def test_compaction_sweeps_what_pi_names(tmp_path: Path, layout: str) -> None:
    s = Pi(layout)
    n = _compacting(s)
    t = parse(s.write(tmp_path / "s.jsonl"))
    assert lines(t.rows) == [n[k] for k in ("u1", "a1", "r1", "a2", "u2", "a3", "c1", "u3", "a4")]
    seq = {r.line: r.seq for r in t.rows}
    (ev,) = t.events
    assert ev.kind == "compaction" and ev.line == n["c1"]
    assert ev.swept == tuple(seq[n[k]] for k in ("u1", "a1", "r1", "a2"))
    assert ev.preserved == (seq[n["u2"]], seq[n["a3"]])
    assert ev.pre_tokens == 949 and ev.trigger is None and ev.post_tokens is None
    assert ev.tokens_before == 5 + 930 + 12 and ev.tokens_after == 400
    assert ev.summary_seq == seq[n["c1"]]
    summary = t.rows[6]
    assert summary.kind_hint == "compaction_summary"
    assert summary.content == [{"type": "text", "text": "SUMMARY"}]
    assert t.rows[1].content[0] == {
        "type": "tool_use",
        "id": "c1",
        "name": "bash",
        "input": {"command": "ls"},
    }
    assert t.rows[2].content == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "a\nb", "is_error": False}
    ]
    assert t.rows[1].tokens == {"input": 903, "output": 7, "cache_read": 0, "cache_write": 900}
    assert [c.tokens.get("input") for c in t.calls] == [903, 933, 947, 400]
    assert t.meta["session_version"] == ("3" if layout == "v3" else "1")
    assert t.session_id == SID and t.findings == []

    a = agent(tmp_path / "s.jsonl")
    c = a.compactions()
    assert len(c) == 1
    assert int(c.loc[0, "recorded_tokens_before"]) == 949
    assert pd.isna(c.loc[0, "recorded_tokens_after"])
    assert int(c.loc[0, "n_swept"]) == 4
    assert list(a.loop()["seq"]) == [seq[n[k]] for k in ("u2", "a3", "c1", "u3", "a4")]
    u = a.usage()
    assert list(u["tokens_input"]) == [903, 933, 947, 400]
    assert list(u["tokens_cache_write"]) == [900, 30, 12, 0]


def test_second_compaction_sweeps_the_first_summary(tmp_path: Path) -> None:
    s = Pi()
    n = _compacting(s)
    u4 = s.user("more")
    a5 = s.asst("done")
    c2 = s.compact(u4, before=1200)
    t = parse(s.write(tmp_path / "s.jsonl"))
    seq = {r.line: r.seq for r in t.rows}
    ev = t.events[1]
    # the window before: u2 a3 summary1 u3 a4 u4 a5; kept from u4: the old summary goes
    assert ev.swept == tuple(seq[n[k]] for k in ("u2", "a3", "c1", "u3", "a4"))
    assert ev.preserved == (seq[u4], seq[a5])
    assert ev.line == c2


def test_abandoned_branch_and_branch_summary(tmp_path: Path) -> None:
    s = Pi()
    u1 = s.user("start")
    a1 = s.asst("hi")
    u2 = s.user("try A")
    a2 = s.asst("A done")
    s.leaf = s.id_of(a1)  # /tree back to a1
    bs = s.add({"type": "branch_summary", "fromId": s.id_of(a2), "summary": "tried A"})
    u3 = s.user("try B")
    a3 = s.asst("B done")
    t = parse(s.write(tmp_path / "s.jsonl"))
    assert lines(t.rows) == [u1, a1, bs, u3, a3]
    assert t.rows[2].kind_hint == "message"
    assert lines(t.other_branches) == [u2, a2]
    assert [r.branch for r in t.other_branches] == ["branch-1", "branch-1"]
    assert [r.seq for r in t.other_branches] == [6, 7]
    (rw,) = t.events
    assert rw.kind == "rewind" and rw.swept == (6, 7)
    assert len(t.calls) == 3  # the abandoned reply was made and paid for
    a = agent(tmp_path / "s.jsonl")
    assert len(a.history()) == 5 and len(a.source.branches()) == 2
    assert list(a.usage()["branch"].fillna("-")) == ["-", "branch-1", "-"]


def test_messages_of_every_role(tmp_path: Path) -> None:
    s = Pi()
    s.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    s.add({"type": "thinking_level_change", "thinkingLevel": "high"})
    image = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    img = s.msg({"role": "user", "content": [{"type": "text", "text": "see"}, image]})
    shell = {"command": "ls", "output": "x", "exitCode": 1, "cancelled": False, "truncated": False}
    bash = s.msg({"role": "bashExecution", **shell})
    s.msg({"role": "bashExecution", **shell, "command": "secret", "excludeFromContext": True})
    cm = s.add(
        {"type": "custom_message", "customType": "ext", "content": "injected", "display": True}
    )
    s.add({"type": "custom", "customType": "ext", "data": {"x": 1}})
    hook = s.msg({"role": "hookMessage", "content": "from hook"})
    s.add({"type": "session_info", "name": " My session "})
    s.add({"type": "label", "targetId": s.id_of(img), "label": "here"})
    thinking = {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"}
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0}
    th = s.msg({"role": "assistant", "model": "m", "content": [thinking], "usage": usage})
    t = parse(s.write(tmp_path / "s.jsonl"))
    assert lines(t.rows) == [img, bash, cm, hook, th]
    assert t.rows[0].content[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,QUJD"},
    }
    assert t.rows[1].content == [
        {"type": "text", "text": "Ran `ls`\n```\nx\n```\n\nCommand exited with code 1"}
    ]
    assert [r.kind_hint for r in t.rows] == [None, "message", "message", "message", None]
    assert t.rows[4].content == [{"type": "thinking", "thinking": "hmm"}]
    assert t.meta["title"] == "My session"


def test_aborted_reply_usage_is_unknown_not_zero(tmp_path: Path) -> None:
    s = Pi()
    s.user("go")
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    s.asst(usage=zero, stop="aborted")
    s.asst("fine")
    t = parse(s.write(tmp_path / "s.jsonl"))
    assert t.rows[1].tokens == {} and "aborted" in (t.rows[1].note or "")
    assert [c.tokens.get("input") for c in t.calls] == [None, 130]
    u = agent(tmp_path / "s.jsonl").usage()
    assert list(u["tokens_input"]) == [130]  # the aborted call reported nothing: not a 0 row


# --- the real fixture -------------------------------------------------------------------------


def _plain_figures(path: Path) -> dict[str, Any]:
    """The fixture's figures counted with json only (no adfkit): a v1 file is one line, so the
    conversation is every message entry in file order."""
    roles: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    models: Counter[str] = Counter()
    sums = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    n_calls = n_counted = n_compactions = 0
    called, results_joined, n_results = set(), 0, 0
    answered: set[str] = set()
    calls_in: dict[str, int] = {}  # tool call id -> position of its message (1-based)
    stamped: list[int] = []
    header = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(raw)
        if d["type"] == "session":
            header = d
        n_compactions += d["type"] == "compaction"
        if d["type"] != "message":
            continue
        m = d["message"]
        roles[m["role"]] += 1
        stamped.append(m["timestamp"])
        if m["role"] == "assistant":
            n_calls += 1
            for b in m["content"]:
                if b["type"] == "toolCall":
                    tools[b["name"]] += 1
                    called.add(b["id"])
                    calls_in[b["id"]] = len(stamped)
            u = m["usage"]
            zero = not any(u[k] for k in ("input", "output", "cacheRead", "cacheWrite"))
            if m["stopReason"] in ("aborted", "error") and zero:
                continue  # reported nothing
            n_counted += 1
            models[m["model"]] += 1
            sums["input"] += u["input"] + u["cacheRead"] + u["cacheWrite"]
            sums["output"] += u["output"]
            sums["cache_read"] += u["cacheRead"]
            sums["cache_write"] += u["cacheWrite"]
        elif m["role"] == "toolResult":
            n_results += 1
            results_joined += m["toolCallId"] in called
            answered.add(m["toolCallId"])
    unanswered = {k: q for k, q in calls_in.items() if k not in answered}
    earlier = [q for q in range(2, len(stamped) + 1) if stamped[q - 1] < stamped[q - 2]]
    return {
        "unanswered": unanswered,
        "earlier": earlier,
        "header": header,
        "roles": roles,
        "tools": tools,
        "models": models,
        "sums": sums,
        "n_calls": n_calls,
        "n_counted": n_counted,
        "n_compactions": n_compactions,
        "n_results": n_results,
        "results_joined": results_joined,
    }


def test_real_fixture_exact_figures() -> None:
    path = real_fixture()
    want = _plain_figures(path)
    # the fixture's README: 914 messages (user 88, assistant 453, toolResult 373), no compaction
    assert want["roles"] == {"user": 88, "assistant": 453, "toolResult": 373}
    assert want["n_compactions"] == 0
    before = fingerprint(path.parent)
    t = parse(path)
    a = agent(path)
    assert fingerprint(path.parent) == before
    assert t.session_id == want["header"]["id"] and t.meta["cwd"] == want["header"]["cwd"]
    assert t.meta["session_version"] == "1" and t.findings == []
    h = a.history()
    assert len(h) == sum(want["roles"].values()) and t.other_branches == []
    kinds = h["kind"].value_counts()
    assert kinds["assistant"] == want["roles"]["assistant"]
    assert kinds["tool_result"] == want["roles"]["toolResult"]
    assert kinds["message"] == want["roles"]["user"]
    assert want["results_joined"] == want["n_results"]  # every result follows its call
    assert len(t.calls) == want["n_calls"]
    u = a.usage()
    assert len(u) == want["n_counted"]
    assert dict(u["model"].value_counts()) == dict(want["models"])
    for k, v in want["sums"].items():
        assert int(u[f"tokens_{k}"].sum()) == v, k
    c = a.compactions()
    assert c.empty and "recorded_tokens_before" in c.columns
    integ = a.integrity().set_index("check")
    assert sorted(integ.index) == ["created_at_out_of_order", "tool_use_without_result"]
    # the conversation is every message in order, so a row's seq is its message's position
    assert integ.loc["tool_use_without_result", "rows"] == tuple(
        sorted(set(want["unanswered"].values()))
    )
    assert (
        f"{len(want['unanswered'])} tool call(s)" in integ.loc["tool_use_without_result", "detail"]
    )
    assert integ.loc["created_at_out_of_order", "rows"] == tuple(want["earlier"])
    obs = a.observe()
    calls = obs.calls
    by_class = calls["class"].value_counts()
    tools = want["tools"]
    assert by_class.get("world", 0) == tools["bash"] + tools["edit"] + tools["write"]
    assert by_class.get("internal", 0) == tools["read"]


def test_real_fixture_is_recognised_as_pi_only() -> None:
    path = real_fixture()
    assert pi_spec.claims(probe(path))


# --- the adfsynth sessions --------------------------------------------------------------------


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_samples(tmp_path_factory.mktemp("synth"))


def test_synth_matches_ground_truth(synth: list[Path]) -> None:
    assert len(synth) == 2
    layouts = set()
    for f in synth:
        truth = json.loads(f.with_name(f.name[: -len(".jsonl")] + ".truth.json").read_text())
        layouts.add(truth["layout"])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = parse_pi(f)
        half = truth["half_written_line"]
        assert [x.check for x in t.findings] == (["truncated_last_line"] if half else [])
        assert len(w) == (1 if half else 0)
        if half:
            assert t.findings[0].line == half
        assert lines(t.rows) == truth["rows"]
        assert [r.role for r in t.rows] == truth["roles"]
        assert [r.kind_hint for r in t.rows] == truth["kind_hints"]
        assert lines(t.other_branches) == truth["other_branches"]
        assert len(t.calls) == truth["n_calls"]
        assert t.usage() == truth["usage"]
        line_of = {r.seq: r.line for r in t.rows}
        comps = [e for e in t.events if e.kind == "compaction"]
        assert len(comps) == len(truth["compactions"]) == 3
        for e, c in zip(comps, truth["compactions"], strict=True):
            assert e.line == c["line"]
            assert e.pre_tokens == c["tokens_before_recorded"]
            assert sorted(line_of[q] for q in e.swept) == c["swept"]
            assert sorted(line_of[q] for q in e.preserved) == c["preserved"]
            assert (e.tokens_before, e.tokens_after) == (c["tokens_before"], c["tokens_after"])
        a = agent(f)
        assert sorted(line_of[int(q)] for q in a.loop()["seq"]) == truth["window"]
        comp = a.compactions()
        assert list(comp["recorded_tokens_before"]) == [
            c["tokens_before_recorded"] for c in truth["compactions"]
        ]
        assert list(comp["n_swept"]) == [len(c["swept"]) for c in truth["compactions"]]
        # the context rebuilt for each call on the conversation is the one pi sent
        rp = a.replay()
        got = {
            line_of[int(q)]: sorted(line_of[int(x)] for x in c)
            for q, c in zip(rp["seq"], rp["context_seqs"], strict=True)
        }
        want = {int(k): v for k, v in truth["contexts"].items() if int(k) in got}
        assert got == want and len(got) == truth["roles"].count("assistant")
        u = a.usage()
        assert int(u["tokens_input"].sum()) == truth["usage"]["input"]
        assert int(u["tokens_cache_write"].sum()) == truth["usage"]["cache_write"]
    assert layouts == {"v1", "v3"}


def test_synth_listing_newest_first(synth: list[Path]) -> None:
    root = synth[0].parents[1]
    os.utime(synth[0], ns=(10**18, 10**18))
    os.utime(synth[1], ns=(2 * 10**18, 2 * 10**18))
    before = fingerprint(root)
    df = list_pi_sessions(root)
    assert fingerprint(root) == before
    assert list(df["path"]) == [str(synth[1]), str(synth[0])]
    truths = [json.loads(f.with_name(f.name[:-6] + ".truth.json").read_text()) for f in synth]
    assert list(df["session_id"]) == [truths[1]["session_id"], truths[0]["session_id"]]
    assert list(df["session_version"]) == [1, 3]
    assert list(df["title"].fillna("-")) == ["-", "Tree refactor"]
    assert list(df["model"]) == ["claude-sonnet-4-5"] * 2
    assert str(df["modified"].dtype) == "datetime64[ns, UTC]"
    assert sorted(map(str, pi_spec.sessions_under(root))) == sorted(map(str, synth))
    for f in synth:  # by name, directly in the folder
        assert list(pi_spec.find(f.parent)) == [f]
    assert list(pi_spec.find(root)) == []


# --- recognition and hostile files ------------------------------------------------------------


@pytest.mark.parametrize(
    "first",
    [
        b'{"type":"user","uuid":"u","sessionId":"s","message":{"content":"x"}}',
        b'{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/"}}',
        b'{"type":"message","role":"user","content":[]}',
        b'{"type":"session","id":7,"timestamp":"t","cwd":"/"}',
        b'{"sessionId":"s","messages":[]}',
    ],
)
def test_other_formats_are_not_claimed(tmp_path: Path, first: bytes) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(first + b"\n")
    assert not pi_spec.claims(probe(p))
    with pytest.raises(adfkit.NotTranscriptError, match="not a pi session") as ei:
        parse_pi(p)
    assert str(p) in str(ei.value)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "empty file"),
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "binary data"),
        (b"SQLite format 3\x00" + bytes(64), "SQLite database"),
        (b'{"type":"sess', "no complete JSON record"),
    ],
)
def test_not_a_session(tmp_path: Path, data: bytes, match: str) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    with pytest.raises(adfkit.AdfError, match=match):
        parse_pi(p)


def test_hostile_lines_give_findings(tmp_path: Path) -> None:
    s = Pi()
    u1 = s.user("hello")  # 2
    s.raw(b'{"type":"message","message":{')  # 3 bad JSON
    s.add({"type": "brand_new_entry", "x": 1})  # 4 unknown entry type
    s.raw(b'{"type":"message","pad":"' + b"x" * 5000 + b'"}')  # 5 huge
    bad = {"role": "assistant", "content": [], "usage": {"input": -4, "output": 1}}
    a1 = s.add({"type": "message", "parentId": "nosuchid", "message": bad})  # 6
    s.add({"type": "message", "message": {"role": "alien", "content": "x"}})  # 7 unknown role
    r1 = s.result("never-called")  # 8
    p = s.write(tmp_path / "s.jsonl", tail=b'{"type":"message","mess')
    with pytest.warns(adfkit.AdfWarning) as rec:
        t = parse_pi(p, max_line_bytes=4096)
    assert len(rec) == 1 and "xxxx" not in str(rec[0].message)
    assert lines(t.rows) == [u1, a1, r1]
    assert t.rows[1].malformed and t.rows[1].tokens["input"] == -4
    got = sorted((f.check, f.line) for f in t.findings)
    assert got == [
        ("bad_json", 3),
        ("bad_token_count", a1),
        ("dangling_parent", a1),
        ("huge_line", 5),
        ("truncated_last_line", 9),
        ("unknown_entry_type", 4),
        ("unknown_role", 7),
    ]
    a = agent(p, max_line_bytes=4096)
    integ = a.integrity()
    # the reader's findings, then the analysis's own checks of the rows
    assert set(integ["check"]) == {c for c, _ in got} | {
        "malformed_rows",
        "tool_result_without_call",
    }
    assert integ.set_index("check").loc["tool_result_without_call", "rows"] == (3,)
    assert pd.isna(a.usage()["tokens_input"]).all()


def test_bom_and_dangling_first_kept(tmp_path: Path) -> None:
    s = Pi("v1")
    s.user("a")  # 2
    s.asst("b")  # 3
    s.add({"type": "compaction", "summary": "S", "firstKeptEntryIndex": 99, "tokensBefore": 1})
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + b"\n".join(s.lines) + b"\n")
    assert pi_spec.claims(probe(p))
    t = parse_pi(p, warn=False)
    assert [f.check for f in t.findings] == ["dangling_first_kept"]
    (ev,) = t.events
    assert ev.swept == (1, 2) and ev.preserved == ()


def test_v1_index_after_a_bad_line_is_flagged(tmp_path: Path) -> None:
    s = Pi("v1")
    s.user("a")  # 2
    s.raw(b"{broken")  # 3: pi skipped it too, so its indexes count one line less
    u2 = s.user("b")  # 4, index 2 in pi's array
    s.asst("c")
    s.add({"type": "compaction", "summary": "S", "firstKeptEntryIndex": 2, "tokensBefore": 1})
    t = parse_pi(s.write(tmp_path / "s.jsonl"), warn=False)
    assert sorted(f.check for f in t.findings) == ["bad_json", "index_after_bad_line"]
    seq = {r.line: r.seq for r in t.rows}
    assert t.events[0].preserved == (seq[u2], seq[u2 + 1])


def test_v1_index_counts_huge_and_non_object_lines(tmp_path: Path) -> None:
    s = Pi("v1")
    a = s.user("a")  # 2: index 1 (the header is 0)
    s.raw(b'{"type":"message","pad":"' + b"x" * 5000 + b'"}')  # 3, huge: pi parses it, 2
    s.raw(b"[1, 2]")  # 4: JSON but no object: pi parses it too, 3
    u2 = s.user("b")  # 5: index 4
    s.asst("c")  # 6
    s.add({"type": "compaction", "summary": "S", "firstKeptEntryIndex": 4, "tokensBefore": 1})
    t = parse_pi(s.write(tmp_path / "s.jsonl"), max_line_bytes=4096, warn=False)
    assert sorted(f.check for f in t.findings) == ["huge_line", "not_an_object"]
    seq = {r.line: r.seq for r in t.rows}
    (ev,) = t.events
    assert ev.preserved == (seq[u2], seq[u2 + 1]) and ev.swept == (seq[a],)


def test_duplicate_ids_and_cycle(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    head = {
        "type": "session",
        "version": 3,
        "id": SID,
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/",
    }
    ents = [
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "message": {"role": "user", "content": "1"},
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "message": {"role": "user", "content": "2"},
        },
        {
            "type": "message",
            "id": "a",
            "parentId": "b",
            "message": {"role": "user", "content": "3"},
        },
    ]
    p.write_text("\n".join(json.dumps(x) for x in [head, *ents]) + "\n")
    t = parse_pi(p, warn=False)
    assert sorted(f.check for f in t.findings) == ["duplicate_id", "parent_cycle"]
    assert [r.content[0]["text"] for r in t.rows] == ["2", "3"]


def test_reading_writes_nothing(tmp_path: Path) -> None:
    s = Pi()
    _compacting(s)
    p = s.write(tmp_path / "s.jsonl", tail=b'{"half')
    os.chmod(p, 0o444)
    before = fingerprint(tmp_path)
    agent(p).history()
    assert fingerprint(tmp_path) == before


def test_compaction_rule() -> None:
    w, th, text = pi_spec.compaction_rule("claude-sonnet-4-5", None)
    assert (w, th) == (200_000, 200_000 - 16_384)
    assert "reserveTokens 16,384" in text
    assert pi_spec.compaction_rule("gpt-5.1-codex", None)[:2] == (None, None)
    assert pi_spec.compaction_rule("gpt-5.1-codex", 400_000)[:2] == (400_000, 383_616)


def test_a_newer_entry_type_is_still_pi(tmp_path: Path) -> None:
    s = Pi()
    s.add({"type": "future_thing", "x": 1})
    s.user("hi")
    p = s.write(tmp_path / "s.jsonl")
    assert pi_spec.claims(probe(p))
    t = parse_pi(p, warn=False)
    assert [f.check for f in t.findings] == ["unknown_entry_type"] and len(t.rows) == 1


def test_adfkit_open_reads_pi(synth: list[Path]) -> None:
    """The registry recognises pi sessions (the real one used to open as a Codex rollout)."""
    paths = [*synth, *([FIXTURE] if FIXTURE.exists() else [])]
    for p in paths:
        assert registry.recognise(p).name == "pi"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", adfkit.AdfWarning)  # the half-written last line
            a = adfkit.open(p)
        assert isinstance(a, adfkit.AgentFile) and a.format == "pi"
        cfg = a.source.config()
        assert cfg["context"]["compact_threshold"] == 200_000 - 16_384  # claude-sonnet-4-5
        assert "reserveTokens 16,384" in cfg["compact_rule"]
        assert a.info()["provider"] == "anthropic"
    assert "pi" in adfkit.formats()


def test_simulate_under_pis_rule() -> None:
    """The real session never compacted; under pi's rule (window 200,000 - reserve 16,384 for
    claude-sonnet-4-5) it would not have: its largest context, counted here with plain json as
    pi counts it (input + output + cacheRead + cacheWrite of a reply), stays below 183,616.
    Under Claude Code's rule (167,000) the same session would have compacted."""
    path = real_fixture()
    biggest = 0
    for raw in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(raw)
        if d["type"] == "message" and d["message"]["role"] == "assistant":
            u = d["message"]["usage"]
            biggest = max(biggest, u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"])
    assert 167_000 < biggest < 200_000 - 16_384
    a = adfkit.open(path)
    assert a.source.config()["context"]["compact_threshold"] == 183_616
    assert adfkit.simulate(a, adfkit.ThresholdPolicy()).summary["n_compactions"] == 0
    assert adfkit.simulate(a, adfkit.ThresholdPolicy(167_000)).summary["n_compactions"] >= 1


def test_a_fleet_of_pi_folders(synth: list[Path]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        res = adfkit.load_fleet([f.parent for f in synth], "compactions", engine="serial")
    assert res.errors.empty
    assert sorted(res.df.groupby("agent_path").size().tolist()) == [3, 3]


def test_the_committed_samples_are_what_adfsynth_writes(tmp_path: Path) -> None:
    """``make samples`` rewrites sample_agents/pi/ byte for byte (the seeded writer)."""
    committed = Path(__file__).resolve().parents[1] / "sample_agents" / "pi"
    write_samples(tmp_path)
    out = tmp_path / "pi"
    mine = {p.relative_to(out): p for p in out.rglob("*") if p.is_file()}
    theirs = {p.relative_to(committed): p for p in committed.rglob("*") if p.is_file()}
    assert sorted(mine) == sorted(theirs) and len(mine) >= 2
    for rel, p in mine.items():
        assert p.read_bytes() == theirs[rel].read_bytes(), rel


# -- 0.73.1, as a recording of the release wrote it (tests/fixtures/recorded/pi) -------------
RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded" / "pi" / "0.73.1"


def _recorded_session() -> tuple[Path, list[dict[str, Any]]]:
    (path,) = sorted((RECORDED / "home").rglob("*.jsonl"))
    with (RECORDED / "requests.jsonl").open(encoding="utf-8") as f:
        return path, [json.loads(line) for line in f]


def test_recorded_compactions_have_no_trigger_and_no_tokens_after() -> None:
    """pi 0.73.1 writes ``tokensBefore`` but no trigger and no ``tokensAfter`` on a compaction
    entry (two automatic, one through the RPC ``compact`` command on the recording): the kind
    and the recorded size after are NA, never guessed; the compaction call leaves no usage."""
    path, _ = _recorded_session()
    entries = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    comp_entries = [e for e in entries if e["type"] == "compaction"]
    assert all("trigger" not in e and "tokensAfter" not in e for e in comp_entries)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = adfkit.open(path).compactions()
    assert len(comp) == len(comp_entries) == 3
    assert comp["kind"].isna().all() and comp["recorded_tokens_after"].isna().all()
    assert comp["compaction_input"].isna().all()
    assert list(comp["recorded_tokens_before"]) == [e["tokensBefore"] for e in comp_entries]


def test_recorded_replay_sends_the_summary_first() -> None:
    """pi sends a compaction's summary ahead of the entries it kept (buildSessionContext); the
    file writes the compaction entry after them. The first call after the first compaction
    (the log's first turn call after a compaction call) opens with the summary in adfkit's
    replay, as in the request."""
    path, log = _recorded_session()
    calls = [x for x in log if x["kind"] in ("turn", "compaction")]
    first_after = next(
        i for i, x in enumerate(calls) if x["kind"] == "turn" and calls[i - 1]["kind"] != "turn"
    )
    sent = calls[first_after]["call"]["messages"]
    assert "steps-done" in sent[0]["content"][0]["text"]  # the summary opens the request
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = adfkit.open(path)
    turns = a.usage()
    turns = turns[turns["call_kind"] == "assistant"]
    n_turn = sum(1 for x in calls[:first_after] if x["kind"] == "turn")
    ctx = a.context_at(int(turns["seq"].iloc[n_turn]), context=False)
    assert ctx["kind"].iloc[0] == "compaction_summary"
    assert len(ctx) == len(sent)
