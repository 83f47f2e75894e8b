"""One rule for rows a fallback (or pre-v28) compaction re-appended (ADF_FORMAT.md §4.4, §5.5).

``usage()``, ``observe()`` and ``replay()`` / ``compactions()`` all go through
:func:`adfkit._core.history.reappended_copies`; these tests check that they agree on which rows are
copies, so no call, token or turn is counted twice.
"""

from __future__ import annotations

import json
import warnings

import pytest
from adfbuild import build, result, row, text, use
from conftest import sample

import adfkit
from adfkit import observe
from adfkit._core.history import reappended_copies

SONNET = "claude-sonnet-4-5-20250929"
STARTUP = "Agent started. Review your mind for context and take any startup actions."
COMPACT_RESULT = "Compaction initiated for 6 loop entries."

# Before the compaction: a startup turn that reads a file and calls loop_compact. A dynamic-
# instructions row (5) sits between the loop_compact call and its result (§7).
ARCHIVED = [
    row(1, "user", text(STARTUP)),
    row(2, "assistant", [use("r1", "fs_read", {"path": "notes.md"})], model=SONNET,
        tokens={"input": 100, "output": 10}),
    row(3, "user", [result("r1", "the notes")]),
    row(4, "assistant", [use("c1", "loop_compact", {})], model=SONNET,
        tokens={"input": 200, "output": 20}),
    row(5, "user", text("[Context: dynamic_instructions] [Inbox: 1 unread]")),
    row(6, "user", [result("c1", COMPACT_RESULT)]),
]  # fmt: skip
# Fallback path (§5.5): the whole loop (1-6) archived, the summary appended under seq 7 with no
# ord, then the preserved tail (4, 6) re-appended as 8 and 9: 8 keeps 4's model and tokens, 9
# has none. Then a system-prompt row, a chat turn (11) with one msg_send call (12) and a reply.
LIVE = [
    row(7, "user", text("[Loop Compacted, audited] - notes.md\n\n---\nYour loop was compacted."),
        model=SONNET, tokens={"input": 300, "output": 30}),
    row(8, "assistant", [use("c1", "loop_compact", {})], model=SONNET,
        tokens={"input": 200, "output": 20}, created_at=1_800_000_000_000),
    row(9, "user", [result("c1", COMPACT_RESULT)], created_at=1_800_000_000_001),
    row(10, "user", text("[Context: system_prompt] You are a test agent.")),
    row(11, "user", text("please send the report")),
    row(12, "assistant", [use("m1", "msg_send", {"to": "boss", "body": "report"})], model=SONNET,
        tokens={"input": 400, "output": 40}),
    row(13, "user", [result("m1", "sent")]),
    row(14, "assistant", text("Done."), model=SONNET, tokens={"input": 500, "output": 50}),
]  # fmt: skip
COPIES = {8: 4, 9: 6}  # copy seq -> original seq


@pytest.fixture
def fallback(tmp_path):
    return build(tmp_path / "fallback.adf", loop=LIVE, audit=[{"source": "loop", "rows": ARCHIVED}])


def _all_three(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        agent = adfkit.open_adf(path)
        return agent, agent.usage(), observe(agent), agent.replay()


def test_mapping_on_hand_built(fallback):
    assert reappended_copies(adfkit.open_adf(fallback).history()) == COPIES


def test_usage_observe_replay_agree_on_hand_built(fallback):
    agent, u, obs, rep = _all_three(fallback)
    # usage: calls 2, 4, 12, 14 plus the compaction call on the summary 7; the copy 8 is out.
    assert u["seq"].tolist() == [2, 4, 7, 12, 14]
    assert int(u["tokens_input"].sum()) == 100 + 200 + 300 + 400 + 500
    assert int(u["tokens_output"].sum()) == 10 + 20 + 30 + 40 + 50
    # replay: one row per model call (assistant row), the copy 8 is none.
    assert rep["seq"].tolist() == [2, 4, 12, 14]
    assert rep["seq"].tolist() == u.loc[u["call_kind"] == "assistant", "seq"].tolist()
    # observe: each tool call once (loop_compact at its original seq 4 only) ...
    assert obs.calls["seq"].tolist() == [2, 4, 12]
    assert obs.calls["tool"].tolist() == ["fs_read", "loop_compact", "msg_send"]
    assert set(obs.calls["seq"]) <= set(rep["seq"])
    # ... and two turns: the startup turn (1) holds 2 and 4, the chat turn (11) holds 12 and 14.
    t = obs.turns
    assert t["start_seq"].tolist() == [1, 11]
    assert t["trigger_kind"].tolist() == ["startup", "chat"]
    assert t["n_calls"].tolist() == [2, 1]
    assert t["tokens_in"].tolist() == [100 + 200, 400 + 500]
    assert t["tokens_out"].tolist() == [10 + 20, 40 + 50]
    # observe counts assistant tokens only: usage minus the compaction call on the summary.
    assert int(t["tokens_in"].sum()) == int(u["tokens_input"].sum()) - 300
    # compactions(): the fallback event's preserved tail is the originals of the copies.
    c = agent.compactions()
    ev = c[c["summary_seq"] == 7]
    assert len(ev) == 1
    assert tuple(ev["tail_seqs"].iloc[0]) == (4, 6)


def test_copy_counts_when_original_was_discarded(tmp_path):
    """Unaudited fallback compaction: the originals are gone, so 8 is the only record of that
    call; all three count it, once."""
    f = build(tmp_path / "unaudited.adf", loop=LIVE, config={"context": {"audit": {}}})
    agent, u, obs, rep = _all_three(f)
    assert reappended_copies(agent.history()) == {}
    assert u["seq"].tolist() == [7, 8, 12, 14]
    assert int(u["tokens_input"].sum()) == 300 + 200 + 400 + 500
    assert rep["seq"].tolist() == [8, 12, 14]
    assert obs.calls["seq"].tolist() == [8, 12]
    assert int(obs.turns["tokens_in"].sum()) == 200 + 400 + 500


def test_same_content_other_tokens_is_a_new_call(tmp_path):
    """The row after the summary repeats 4's content but reports other tokens: a new call that
    happens to repeat the request, not a copy (§4.4 matches on role, content and tokens)."""
    live = [dict(r) for r in LIVE]
    live[1] = row(8, "assistant", [use("c1", "loop_compact", {})], model=SONNET,
                  tokens={"input": 250, "output": 20})  # fmt: skip
    f = build(tmp_path / "new-call.adf", loop=live, audit=[{"source": "loop", "rows": ARCHIVED}])
    agent, u, obs, rep = _all_three(f)
    assert reappended_copies(agent.history()) == {}
    assert u["seq"].tolist() == [2, 4, 7, 8, 12, 14]
    assert rep["seq"].tolist() == [2, 4, 8, 12, 14]
    assert obs.calls["seq"].tolist() == [2, 4, 8, 12]


def test_legacy_v27_through_all_three():
    """The sample's truth lists the re-appended rows (original seq -> new seq)."""
    truth = json.loads(sample("legacy-v27").with_suffix(".truth.json").read_text())
    expected = {r["new_seq"]: r["orig_seq"] for r in truth["reappended"]}
    assert expected  # the scenario has a pre-v28 manual compaction
    agent, u, obs, rep = _all_three(sample("legacy-v27"))
    h = agent.history()
    assert reappended_copies(h) == expected
    originals, copies = set(expected.values()), set(expected)
    # usage: the original calls stay, no copy is a call; the truth sums every stored row.
    useq = set(u["seq"].tolist())
    assert not useq & copies
    orig_calls = originals & set(h.loc[h["kind"] == "assistant", "seq"].tolist())
    assert orig_calls and orig_calls <= useq
    copy_tokens = int(h.loc[h["seq"].isin(list(copies)), "tokens_input"].fillna(0).sum())
    assert copy_tokens > 0
    assert int(u["tokens_input"].sum()) == truth["tokens_total"]["input"] - copy_tokens
    # replay: the same assistant calls as usage.
    assert rep["seq"].tolist() == u.loc[u["call_kind"] == "assistant", "seq"].tolist()
    # observe: every tool call the scenario executed, once; the truth's turns exactly.
    assert len(obs.calls) == truth["n_tool_calls"]
    assert not set(obs.calls["seq"]) & copies
    assert set(obs.calls["seq"]) <= set(rep["seq"])
    assert obs.turns["start_seq"].tolist() == [t["start_seq"] for t in truth["turns"]]
    # compactions(): the fallback event's tail is the truth's tail.
    c = agent.compactions()
    manual = [x for x in truth["compactions"] if x["tail_seqs"]]
    for x in manual:
        got = c.loc[c["summary_seq"] == x["summary_seq"], "tail_seqs"]
        assert [tuple(v) for v in got] == [tuple(x["tail_seqs"])]
