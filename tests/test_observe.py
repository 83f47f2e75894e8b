"""adfkit.observe(): turn segmentation, classification, signatures and the anomaly checks.

Every expected value is written here from the rules of ADF_FORMAT.md §8.2-§8.4, for rows
built by hand (tests/adfbuild.py), or comes from the sample agents' ground truth.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from adfbuild import build, result, row, text, use
from conftest import runtime_fixture, sample

import adfkit
from adfkit import Observation, load_taxonomy, observe, schema, signature
from adfkit._analysis.observe import classify_call
from adfkit._base.js import js_stringify, string_hash

CTX = "[Context: system_prompt] You are a test agent."
DYN = "[Context: dynamic_instructions] [Inbox: 1 unread] Use msg_read."
INBOX = '[Inbox notification] You have new messages in your inbox.\n{"unread":1}'

# Startup, a context row, one internal call; a timer turn whose only call is bookkeeping
# (a dynamic-instructions row sits between trigger and call); an inbox turn with one world and
# one internal call whose result row also carries a user-interrupt text block; a legacy bare
# token number (counts 0).
BASE = [
    row(
        1, "user", text("Agent started. Review your mind for context and take any startup actions.")
    ),
    row(2, "user", text(CTX)),
    row(
        3,
        "assistant",
        [use("u1", "fs_read", {"path": "a.md"})],
        tokens={"input": 100, "output": 10},
    ),
    row(4, "user", [result("u1", "contents")]),
    row(5, "assistant", text("Read it."), tokens={"input": 120, "output": 5}),
    row(6, "user", text("A scheduled timer has fired.\nPayload: tick")),
    row(7, "user", text(DYN)),
    row(
        8,
        "assistant",
        [use("u2", "sys_set_meta", {"key": "k", "value": "v"})],
        tokens={"input": 200, "output": 7},
    ),
    row(9, "user", [result("u2", "ok")]),
    row(10, "user", text(INBOX)),
    row(
        11,
        "assistant",
        [use("u3", "msg_send", {"recipient": "x", "content": "hi"}), use("u4", "msg_read", {})],
        tokens={"input": 300, "output": 20},
    ),
    row(12, "user", [result("u3", "sent"), result("u4", "[]"), *text("stop that")]),
    row(13, "assistant", text("Done."), tokens=5),
]


def _turns(obs: Observation) -> list[tuple]:
    cols = [
        "start_seq",
        "trigger_kind",
        "n_calls",
        "n_world",
        "n_internal",
        "n_bookkeeping",
        "is_null_turn",
        "tokens_in",
        "tokens_out",
    ]
    return [tuple(x) for x in obs.turns[cols].astype(object).itertuples(index=False)]


@pytest.fixture
def base_file(tmp_path):
    return build(tmp_path / "base.adf", loop=BASE)


def test_reference_segmentation_splits_at_context_rows(base_file):
    """Context rows open `chat` turns; tool results (even with text) and [Inbox notification]
    count as the reference says."""
    obs = observe(adfkit.open_adf(base_file), segmentation="reference")
    assert _turns(obs) == [
        (1, "startup", 0, 0, 0, 0, False, 0, 0),
        (2, "chat", 1, 0, 1, 0, False, 220, 15),
        (6, "timer", 0, 0, 0, 0, False, 0, 0),
        (7, "chat", 1, 0, 0, 1, True, 200, 7),
        (10, "chat", 2, 1, 1, 0, False, 300, 20),
    ]


def test_smart_segmentation_ignores_context_rows(base_file):
    obs = observe(adfkit.open_adf(base_file))
    assert _turns(obs) == [
        (1, "startup", 1, 0, 1, 0, False, 220, 15),
        (6, "timer", 1, 0, 0, 1, True, 200, 7),
        (10, "inbox", 2, 1, 1, 0, False, 300, 20),
    ]
    assert obs.turns["end_seq"].tolist() == [5, 9, 13]
    assert obs.turns["n_rows"].tolist() == [5, 4, 4]
    assert obs.turns["start_at"].iloc[1] == pd.Timestamp(1_790_000_006_000, unit="ms", tz="UTC")
    assert obs.calls["tool"].tolist() == ["fs_read", "sys_set_meta", "msg_send", "msg_read"]
    assert obs.calls["class"].tolist() == ["internal", "bookkeeping", "world", "internal"]
    assert obs.calls["turn"].tolist() == [0, 1, 2, 2]
    assert obs.calls["seq"].tolist() == [3, 8, 11, 11]
    assert obs.calls["block_index"].tolist() == [0, 0, 0, 1]


def test_frames_have_documented_columns_and_dtypes(base_file):
    obs = observe(adfkit.open_adf(base_file))
    for frame, cols in (
        (obs.turns, schema.OBSERVE_TURNS),
        (obs.calls, schema.OBSERVE_CALLS),
        (obs.signatures, schema.OBSERVE_SIGNATURES),
        (obs.streaks, schema.OBSERVE_STREAKS),
        (obs.anomalies, schema.OBSERVE_ANOMALIES),
    ):
        assert list(frame.columns) == list(cols)
        for c, dt in cols.items():
            assert str(frame[c].dtype) == ("object" if dt == "object" else dt), c


def _compaction_file(tmp_path, *, context_after: bool):
    live = [row(14, "user", text("[Loop Compacted, audited] - handled the inbox [S11]"))]
    if context_after:
        live.append(row(15, "user", text(CTX)))
    live += [
        row(
            16,
            "assistant",
            [use("u5", "fs_write", {"path": "mind.md", "content": "# Mind"})],
            tokens={"input": 50, "output": 3},
        ),
        row(17, "user", [result("u5", "written")]),
    ]
    return build(tmp_path / "c.adf", loop=live, audit=[{"source": "loop", "rows": BASE}])


def test_compaction_turn_is_not_counted_reference(tmp_path):
    """The summary opens a `compaction` turn that is skipped; the context row after it opens a
    `chat` turn holding the next call."""
    obs = observe(
        adfkit.open_adf(_compaction_file(tmp_path, context_after=True)), segmentation="reference"
    )
    assert obs.turns["start_seq"].tolist() == [1, 2, 6, 7, 10, 15]
    assert _turns(obs)[-1] == (15, "chat", 1, 0, 0, 1, True, 50, 3)
    assert "compaction" not in set(obs.turns["trigger_kind"])


def test_calls_after_summary_without_context_are_skipped_reference(tmp_path):
    """Without a context row the calls land in the skipped compaction turn (quirk 3)."""
    agent = adfkit.open_adf(_compaction_file(tmp_path, context_after=False))
    ref = observe(agent, segmentation="reference")
    assert ref.turns["start_seq"].tolist() == [1, 2, 6, 7, 10]
    assert ref.calls["seq"].tolist() == [3, 8, 11, 11]
    smart = observe(agent)
    # Smart: the summary is no boundary; the fs_write of mind.md joins the inbox turn.
    assert _turns(smart)[-1] == (10, "inbox", 3, 1, 1, 1, False, 350, 23)
    assert smart.calls["class"].tolist()[-1] == "bookkeeping"


def test_reference_sorts_by_seq_smart_by_display_order(tmp_path):
    """A preferred-path summary (seq 23, ord 20) sits before its tail in display order but
    after it by seq: the reference puts the final reply in the skipped compaction turn."""
    archived = [
        row(19, "user", text("Please compact now.")),
        row(20, "assistant", text("Sure."), tokens={"input": 10, "output": 1}),
    ]
    live = [
        row(21, "assistant", [use("c1", "loop_compact", {})], tokens={"input": 40, "output": 4}),
        row(22, "user", [result("c1", "Compaction initiated for 4 loop entries.")]),
        row(23, "user", text("[Loop Compacted] - asked to compact"), ord=20),
        row(24, "assistant", text("Compacted; continuing."), tokens={"input": 30, "output": 6}),
    ]
    agent = adfkit.open_adf(
        build(tmp_path / "m.adf", loop=live, audit=[{"source": "loop", "rows": archived}])
    )
    assert _turns(observe(agent, segmentation="reference")) == [
        (19, "chat", 1, 0, 0, 1, True, 50, 5)
    ]
    assert _turns(observe(agent)) == [(19, "chat", 1, 0, 0, 1, True, 80, 11)]


def test_overlapping_blobs_double_count_in_reference_only(tmp_path):
    rows = [
        row(1, "user", text("hello")),
        row(
            2, "assistant", [use("a", "sys_fetch", {"url": "u"})], tokens={"input": 9, "output": 1}
        ),
        row(3, "user", [result("a", "page")]),
    ]
    f = build(
        tmp_path / "d.adf",
        loop=[row(4, "user", text("again"))],
        audit=[{"source": "loop", "rows": rows}, {"source": "loop", "rows": rows[1:]}],
    )
    agent = adfkit.open_adf(f)
    sig = signature("sys_fetch", {"url": "u"})
    ref = observe(agent, segmentation="reference")
    assert ref.signatures.set_index("signature").loc[sig, "count"] == 2
    assert ref.turns["tokens_in"].tolist() == [18, 0]
    smart = observe(agent)
    assert smart.signatures.set_index("signature").loc[sig, "count"] == 1
    assert smart.turns["tokens_in"].tolist() == [9, 0]


def test_fallback_reappended_tail_not_double_counted(tmp_path):
    """Fallback compaction (§5.5): the whole loop archived, the summary appended (seq 6), the
    tail re-appended under new seqs (4 -> 7, 5 -> 8). Smart counts the loop_compact call once."""
    archived = [
        row(1, "user", text("compact please")),
        row(2, "assistant", text("ok"), tokens={"input": 5, "output": 1}),
        row(3, "user", text("now")),
        row(4, "assistant", [use("c", "loop_compact", {})], tokens={"input": 7, "output": 2}),
        row(5, "user", [result("c", "Compaction initiated for 5 loop entries.")]),
    ]
    live = [
        row(6, "user", text("[Loop Compacted] - compacting")),
        row(7, "assistant", [use("c", "loop_compact", {})], tokens={"input": 7, "output": 2}),
        row(8, "user", [result("c", "Compaction initiated for 5 loop entries.")]),
        row(9, "assistant", text("Back."), tokens={"input": 3, "output": 1}),
    ]
    agent = adfkit.open_adf(
        build(
            tmp_path / "f.adf", loop=live, audit=[{"source": "loop", "rows": archived}], schema=27
        )
    )
    smart = observe(agent)
    assert smart.calls["seq"].tolist() == [4]
    assert _turns(smart) == [
        (1, "chat", 0, 0, 0, 0, False, 5, 1),
        (3, "chat", 1, 0, 0, 1, True, 10, 3),
    ]
    # Reference: seq 6 opens a skipped compaction turn holding the copy (7) and the reply (9).
    ref = observe(agent, segmentation="reference")
    assert ref.calls["seq"].tolist() == [4]
    assert _turns(ref) == [
        (1, "chat", 0, 0, 0, 0, False, 5, 1),
        (3, "chat", 1, 0, 0, 1, True, 7, 2),
    ]


# --- signatures ----------------------------------------------------------------------------


def _hand_signature(name: str, json_text: str) -> str:
    """§8.2 written independently: code points -> UTF-16 units, 31-multiplier, base 36."""
    h = 0
    for ch in name + " " + json_text:
        cp = ord(ch)
        if cp < 0x10000:
            units = [cp]
        else:
            cp -= 0x10000
            units = [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        for u in units:
            h = (h * 31 + u) % 4294967296
    return f"{name}:{np.base_repr(h, 36).lower()}"


def _hand_hash(text: str) -> int:
    """§8.2's hash written independently: code points -> UTF-16 units, 31-multiplier."""
    h = 0
    for ch in text:
        cp = ord(ch)
        units = [cp] if cp < 0x10000 else [0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + (cp & 0x3FF)]
        for u in units:
            h = (h * 31 + u) % 4294967296
    return h


def test_string_hashes_of_many_texts_match_the_recurrence(monkeypatch):
    """The hashes computed together (numpy over every text's UTF-16 units, in chunks) equal
    the recurrence run on each text alone: astral characters (two units), empty texts, a text
    longer than a chunk, and chunk boundaries anywhere."""
    import adfkit._base.js as js

    rng = np.random.default_rng(38)
    alphabet = ["a", "Z", " ", '"', "é", "中", "😀", "\n", "🂡"]
    texts = ["", "hello", "x" * 5000, ""] + [
        "".join(rng.choice(alphabet, size=int(rng.integers(0, 300)))) for _ in range(400)
    ]
    expected = [_hand_hash(t) for t in texts]
    assert js.string_hashes(texts) == expected
    monkeypatch.setattr(js, "_HASH_CHUNK", 97)
    assert js.string_hashes(texts) == expected
    assert js.string_hashes([]) == []


def test_string_hash_known_value():
    # Java's String.hashCode uses the same recurrence: "hello".hashCode() == 99162322.
    assert string_hash("hello") == 99162322
    # Wraps past 2**32 and stays unsigned ("hello world".hashCode() == 1794106052).
    assert string_hash("hello world") == 1794106052
    assert string_hash("polygenelubricants") == (-2147483648) % 2**32


@pytest.mark.parametrize(
    ("name", "tool_input", "js_text"),
    [
        ("fs_read", {"path": "notes/todo.md"}, '{"path":"notes/todo.md"}'),
        (
            "msg_send",
            {"recipient": "did:x", "content": "café ☕ 😀"},
            '{"recipient":"did:x","content":"café ☕ 😀"}',
        ),
        (
            "sys_set_meta",
            {"b": 1.0, "10": "x", "2": [True, None]},
            '{"2":[true,null],"10":"x","b":1}',
        ),
        ("respond", None, "{}"),
        ("respond", "", "{}"),
        ("respond", [], "[]"),
        (
            "mcp_a_b",
            {"n": 1.5e-7, "big": 1e21, "q": 'say "hi"\n'},
            '{"n":1.5e-7,"big":1e+21,"q":"say \\"hi\\"\\n"}',
        ),
    ],
)
def test_signature_matches_hand_computation(name, tool_input, js_text):
    assert js_stringify({} if tool_input in (None, "") else tool_input) == js_text
    assert signature(name, tool_input) == _hand_signature(name, js_text)


@pytest.mark.parametrize(
    ("value", "js_text"),
    [
        # integer-like keys first, ascending, even without a float in the value
        ({"b": 1, "10": "x", "2": [True, False, None]}, '{"2":[true,false,null],"10":"x","b":1}'),
        ({"01": 1, "a": {"0": "z"}}, '{"01":1,"a":{"0":"z"}}'),
        # control characters escaped (lowercase hex), DEL and U+2028 as they are
        ({"t": "a\x00\x1f\x7f\u2028\tb"}, '{"t":"a\\u0000\\u001f\x7f\u2028\\tb"}'),
        # a lone surrogate escaped; integers past 64 bits written out
        (["\ud800x", 2**64, -(2**63)], '["\\ud800x",18446744073709551616,-9223372036854775808]'),
        ([[[[]]]], "[[[[]]]]"),
    ],
)
def test_js_stringify_of_values_without_floats(value, js_text):
    """The values orjson writes (no float) and those it refuses come out as JavaScript
    writes them (texts by hand)."""
    assert js_stringify(value) == js_text


def test_js_stringify_of_a_value_nested_past_orjson():
    value: list = []
    inner = value
    for _ in range(300):
        inner.append([])
        inner = inner[0]
    assert js_stringify(value) == "[" * 301 + "]" * 301


def test_signature_of_planted_call_matches_synth_truth():
    truth = json.loads(sample("long-runner").with_suffix(".truth.json").read_text())
    rep = truth["planted"]["repeated_signature"]
    assert signature(rep["tool"], rep["input"]) == rep["signature"]
    assert rep["signature"] == _hand_signature("fs_read", '{"path":"notes/todo.md"}')


# --- classification and taxonomy -----------------------------------------------------------


def test_default_classification():
    t = load_taxonomy()
    cases = {
        ("fs_write", "mind.md"): "bookkeeping",
        ("fs_write", "metrics/x.json"): "bookkeeping",
        ("fs_write", "mind/log.md"): "internal",
        ("fs_write", "public/index.html"): "world",
        ("fs_write", "notes/a.md"): "internal",
        ("fs_write", "soul.md.bak"): "bookkeeping",  # startswith("soul.md")
    }
    for (tool, path), cls in cases.items():
        assert classify_call(tool, {"path": path}, t) == cls, path
    assert classify_call("fs_transfer", {"dest": "public/a"}, t) == "world"
    assert classify_call("fs_transfer", {"path": "", "dest": "memories/x"}, t) == "bookkeeping"
    assert classify_call("mcp_github_issue", {}, t) == "world"
    assert classify_call("loop_clear", {}, t) == "bookkeeping"
    assert classify_call("adf_shell", {}, t) == "internal"


def test_user_taxonomy_dict_and_path(tmp_path, base_file):
    tax = {"tools": {"fs_read": "world"}, "thresholds": {"null_streak": 0}}
    p = tmp_path / "tax.json"
    p.write_text(json.dumps(tax))
    agent = adfkit.open_adf(base_file)
    for arg in (tax, p, str(p)):
        obs = observe(agent, taxonomy=arg)
        # Only the named tool is classified; every other tool falls back to internal.
        assert obs.calls["class"].tolist() == ["world", "internal", "internal", "internal"]
        assert obs.thresholds == {"null_streak": 5, "repeat_signature": 3, "window_turns": 50}
    with pytest.raises(adfkit.AdfError, match="not valid JSON"):
        p.write_text("{nope")
        load_taxonomy(p)
    with pytest.raises(TypeError, match="taxonomy\\['tools'\\] must be an object"):
        load_taxonomy({"tools": ["fs_read"]})


def test_shipped_taxonomy_is_package_data():
    t = load_taxonomy()
    assert t["fs_write_paths"] == {
        "mind.md": "bookkeeping",
        "soul.md": "bookkeeping",
        "metrics/": "bookkeeping",
        "memories/": "bookkeeping",
        "public/": "world",
    }
    assert t["fs_write_default"] == "internal"
    assert sorted(k for k, v in t["tools"].items() if v == "world") == [
        "compute_exec",
        "msg_send",
        "msg_update",
        "sys_create_adf",
        "sys_fetch",
        "sys_update_config",
    ]


# --- anomaly checks ------------------------------------------------------------------------


def _turn_rows(start: int, n: int, *, tool: str, out: int = 4) -> list[dict]:
    """``n`` timer turns of 4 rows each, starting at seq ``start``, each with one call."""
    rows = []
    for k in range(n):
        s = start + 4 * k
        rows += [
            row(s, "user", text(f"A scheduled timer has fired.\nPayload: beat {k}")),
            row(
                s + 1,
                "assistant",
                [use(f"t{s}", tool, {"beat": k})],
                tokens={"input": 100, "output": out},
            ),
            row(s + 2, "user", [result(f"t{s}", "ok")]),
            row(s + 3, "assistant", text("ok"), tokens={"input": 110, "output": 1}),
        ]
    return rows


def _flags(obs: Observation) -> dict[str, bool]:
    return dict(zip(obs.anomalies["check"], obs.anomalies["tripped"], strict=True))


def test_null_streak_threshold(tmp_path):
    world = _turn_rows(1, 2, tool="msg_send")
    four = build(tmp_path / "n4.adf", loop=world + _turn_rows(9, 4, tool="sys_set_meta"))
    five = build(tmp_path / "n5.adf", loop=world + _turn_rows(9, 5, tool="sys_set_meta"))
    o4, o5 = observe(adfkit.open_adf(four)), observe(adfkit.open_adf(five))
    assert not _flags(o4)["null_streak"]
    assert o4.anomalies.set_index("check").loc["null_streak", "value"] == 4
    assert _flags(o5)["null_streak"]
    assert o5.evidence("null_streak")["start_seq"].tolist() == [9, 13, 17, 21, 25]
    a = o5.anomalies.set_index("check").loc["null_streak"]
    assert a["seqs"] == (9, 13, 17, 21, 25) and a["turns"] == (2, 3, 4, 5, 6)
    # streaks: one run of 5 null turns, the current one.
    assert o5.streaks[["first_turn", "last_turn", "length", "current"]].astype(
        object
    ).values.tolist() == [[2, 6, 5, True]]
    assert o5.streaks["end_seq"].tolist() == [28]
    # A window of 3 turns caps the count at 3: trips only with a threshold <= 3.
    # (a user taxonomy replaces the default as a whole: keep its classes, change thresholds)
    tax = {**load_taxonomy(), "thresholds": {"window_turns": 3, "null_streak": 3}}
    small = observe(adfkit.open_adf(five), taxonomy=tax)
    assert small.anomalies.set_index("check").loc["null_streak", "value"] == 3
    assert _flags(small)["null_streak"]


def test_repeated_signature_and_top_five(tmp_path):
    rows = []
    seq = 1
    # Six signatures: counts 4, 3, 3, 3, 3, 3 and one with 2 (below the threshold).
    plan = [("a", 4), ("b", 3), ("c", 3), ("d", 3), ("e", 3), ("f", 3), ("g", 2)]
    for key, n in plan:
        for _ in range(n):
            rows += [
                row(seq, "user", text("hello")),
                row(
                    seq + 1,
                    "assistant",
                    [use(f"x{seq}", "fs_read", {"path": key})],
                    tokens={"input": 1, "output": 1},
                ),
                row(seq + 2, "user", [result(f"x{seq}", "..")]),
            ]
            seq += 3
    obs = observe(adfkit.open_adf(build(tmp_path / "r.adf", loop=rows)))
    a = obs.anomalies.set_index("check").loc["repeated_signature"]
    assert a["tripped"] and a["value"] == 4
    expected = [signature("fs_read", {"path": k}) for k in "abcde"]
    assert list(a["signatures"]) == expected  # top 5: highest count, then first seen
    assert obs.signatures["count"].tolist() == [4, 3, 3, 3, 3, 3, 2]
    assert len(obs.evidence("repeated_signature")) == 4 + 3 * 4
    assert not observe(
        adfkit.open_adf(build(tmp_path / "r2.adf", loop=rows)),
        taxonomy={"thresholds": {"repeat_signature": 5}},
    ).anomalies["tripped"][1]


def test_spend_without_change_needs_20_turns(tmp_path):
    nineteen = build(tmp_path / "s19.adf", loop=_turn_rows(1, 19, tool="fs_list"))
    twenty = build(tmp_path / "s20.adf", loop=_turn_rows(1, 20, tool="fs_list", out=3))
    assert not _flags(observe(adfkit.open_adf(nineteen)))["spend_without_change"]
    o = observe(adfkit.open_adf(twenty))
    assert _flags(o) == {
        "null_streak": False,
        "repeated_signature": False,
        "spend_without_change": True,
    }
    a = o.anomalies.set_index("check").loc["spend_without_change"]
    assert a["value"] == 20 * (3 + 1) and a["window_turns"] == 20
    assert len(o.evidence("spend_without_change")) == 20
    # One world call anywhere in the window clears it.
    mixed = _turn_rows(1, 19, tool="fs_list") + _turn_rows(77, 1, tool="sys_fetch")
    assert not _flags(observe(adfkit.open_adf(build(tmp_path / "m.adf", loop=mixed))))[
        "spend_without_change"
    ]


def test_observe_accepts_path_and_frame_and_rejects_bad_mode(base_file):
    by_path = observe(base_file)
    frame = adfkit.open_adf(base_file).loop()
    by_frame = observe(frame)
    pd.testing.assert_frame_equal(by_path.calls, by_frame.calls)
    assert by_frame.name == "" and by_path.name == "base"
    with pytest.raises(ValueError, match=r"segmentation must be one of \['smart', 'reference'\]"):
        observe(base_file, segmentation="clever")
    with pytest.raises(TypeError, match="expected an AgentFile, an agent source or a path"):
        observe(42)


def test_summary_and_repr_are_readable(base_file):
    obs = observe(adfkit.open_adf(base_file))
    s = obs.summary()
    assert s.splitlines()[0] == "Observation of base (smart segmentation): 3 turns, 4 tool calls"
    assert "turns by trigger: inbox 1, startup 1, timer 1" in s
    assert "calls by class:   bookkeeping 1, internal 2, world 1" in s
    assert repr(obs) == s
    d = obs.to_dict()
    json.dumps(d)
    assert d["tokens_in"] == 720 and d["tokens_out"] == 42 and d["null_turns"] == 1


# --- sample agents: planted behaviour from adfsynth ground truth ------------------------------


def _truth(name: str) -> dict:
    return json.loads(sample(name).with_suffix(".truth.json").read_text())


@pytest.mark.parametrize("mode", ["smart", "reference"])
def test_long_runner_planted_behaviour_found(mode):
    planted = _truth("long-runner")["planted"]
    obs = observe(adfkit.open_adf(sample("long-runner")), segmentation=mode)
    assert _flags(obs) == {
        "null_streak": True,
        "repeated_signature": True,
        "spend_without_change": True,
    }
    assert obs.evidence("null_streak")["start_seq"].tolist() == planted["null_streak"]
    rep = planted["repeated_signature"]
    a = obs.anomalies.set_index("check").loc["repeated_signature"]
    assert a["signatures"] == (rep["signature"],) and a["value"] == rep["count"]
    assert obs.evidence("repeated_signature")["seq"].tolist() == rep["seqs"]
    spend = obs.evidence("spend_without_change")
    assert len(spend) == 50
    if mode == "smart":
        # Every turn of the window is one of the planted turns without a world call.
        assert set(spend["start_seq"]) <= set(planted["spend_without_change"])
        assert spend["start_seq"].iloc[-1] == planted["spend_without_change"][-1]


@pytest.mark.parametrize("mode", ["smart", "reference"])
@pytest.mark.parametrize("name", ["clean", "messenger", "legacy-v27", "forgetful", "mind-keeper"])
def test_nothing_flagged_without_planted_behaviour(name, mode):
    assert _truth(name)["planted"]["null_streak"] == []
    obs = observe(adfkit.open_adf(sample(name)), segmentation=mode)
    assert obs.flagged.empty, obs.summary()


@pytest.mark.parametrize(
    "name", ["long-runner", "clean", "messenger", "legacy-v27", "forgetful", "mind-keeper"]
)
def test_smart_turns_match_synth_truth(name):
    """Smart turns are the simulator's turns, wherever the opening row survives."""
    truth = _truth(name)
    agent = adfkit.open_adf(sample(name))
    kept = set(agent.history()["seq"].astype(int))
    expected = [(t["start_seq"], t["kind"]) for t in truth["turns"] if t["start_seq"] in kept]
    obs = observe(agent)
    got = list(zip(obs.turns["start_seq"].astype(int), obs.turns["trigger_kind"], strict=True))
    extra = [g for g in got if g not in expected]
    assert [g for g in got if g in expected] == expected
    # Anything else is a turn whose trigger was lost: it starts with an assistant row.
    assert all(k == "unknown" for _, k in extra)
    assert len(extra) <= len(truth["lost_seqs"]) and (not extra or truth["lost_seqs"])


def test_clean_sample_signatures_below_threshold():
    truth = _truth("clean")
    obs = observe(adfkit.open_adf(sample("clean")))
    assert truth["signatures_ge3"] == {}
    assert int(obs.signatures["count"].max()) < 3


# --- real-runtime fixtures -------------------------------------------------------------------


def test_runtime_long_runner_counts_every_call():
    """The README of the fixtures: long-runner made 133 tool calls over its whole history."""
    agent = adfkit.open_adf(runtime_fixture("long-runner"))
    for mode in ("smart", "reference"):
        assert len(observe(agent, segmentation=mode).calls) == 133


def test_runtime_reference_has_more_turns_from_context_rows():
    """Every context row opens a turn in reference mode (quirk 1), none in smart mode."""
    agent = adfkit.open_adf(runtime_fixture("long-runner"))
    h = agent.history()
    n_context = int((h["kind"] == "context").sum())
    smart, ref = observe(agent), observe(agent, segmentation="reference")
    skipped = int((h["kind"] == "compaction_summary").sum())
    notices = int((h["kind"] == "notice").sum())
    assert len(ref.turns) == len(smart.turns) + n_context + notices
    assert skipped == 8  # README: 1 live + 7 archived compaction markers


# --- CLI: adfkit observe -----------------------------------------------------------------------


def test_cli_observe_exit_codes_and_json(capsys):
    from adfkit.cli import main

    assert main(["observe", str(sample("clean"))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Observation of clean (smart segmentation): 35 turns")
    assert main(["observe", str(sample("long-runner")), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["segmentation"] == "smart" and d["turns"] == 133
    assert [a["check"] for a in d["anomalies"] if a["tripped"]] == [
        "null_streak",
        "repeated_signature",
        "spend_without_change",
    ]
    null = d["anomalies"][0]
    truth = _truth("long-runner")["planted"]
    assert null["seqs"] == truth["null_streak"]
    assert set(d) >= {"path", "turns_by_trigger", "calls_by_class", "top_signatures"}
    assert (
        main(["observe", str(sample("long-runner")), "--segmentation", "reference", "--json"]) == 1
    )
    assert json.loads(capsys.readouterr().out)["segmentation"] == "reference"


def test_cli_observe_taxonomy_and_unreadable(tmp_path, capsys):
    from adfkit.cli import main

    tax = tmp_path / "t.json"
    tax.write_text(json.dumps({**load_taxonomy(), "thresholds": {"repeat_signature": 6}}))
    # With 6 repeats needed, long-runner's fs_read x5 no longer trips (the others still do).
    main(["observe", str(sample("long-runner")), "--taxonomy", str(tax), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert [a["tripped"] for a in d["anomalies"]] == [True, False, True]
    bad = tmp_path / "bad.adf"
    bad.write_text("not a database")
    assert main(["observe", str(bad)]) == 2
    assert "adfkit: error:" in capsys.readouterr().err
    assert main(["observe", str(sample("clean")), "--taxonomy", str(tmp_path / "no.json")]) == 2
    assert "cannot read the taxonomy file" in capsys.readouterr().err


def test_anomaly_details_name_the_call_and_the_whole_stretch():
    """A repeated call is shown by its input, not its hash; a stretch without a world call is
    counted whole, not cut at the window."""
    obs = adfkit.observe(adfkit.open_adf(sample("long-runner")))
    a = obs.anomalies.set_index("check")
    rep = a.loc["repeated_signature", "detail"]
    assert 'fs_read {"path":"notes/todo.md"} x5' in rep and "1f1udza" not in rep, rep
    quiet = 0
    for n_world in reversed(obs.turns["n_world"].tolist()):  # counted here, by hand
        if n_world:
            break
        quiet += 1
    window = int(a.loc["spend_without_change", "window_turns"])
    assert quiet > window  # the sample's stretch is longer than the window
    detail = a.loc["spend_without_change", "detail"]
    assert detail.startswith(f"{quiet} turns without a world call (the last {window} spent"), detail
