"""Context blocks, the system prompt in force, the composition of each call, config changes."""

from __future__ import annotations

import json
import math
import sqlite3
import warnings

import pandas as pd
import pytest
from adfbuild import BASE_MS, build, result, row, text, use
from conftest import runtime_fixture, sample

from adfkit import AdfError, AdfWarning, open_adf, schema

SP1 = "You are A.\nRule one."
SP2 = "You are A.\nRule one.\nRule two."
DI1 = "[Inbox: 1 unread] Read it."
DI2 = "[Inbox: 2 unread] Read it."
STARTUP = "Agent started. Review your mind for context and take any startup actions."
INJ = "[Context: skills | loop_inject=v2 | origin=lambda:lib/a.ts:run | key=reg] "
SUMMARY = "[Loop Compacted, audited] Working on A.\n\n---\nYour loop was compacted. Continue."
TOK = {"input": 100, "output": 5}


def _rows() -> tuple[list[dict], list[dict]]:
    """(archived rows 1..9, live rows 10..23) of the hand-built context file."""
    old = [
        row(1, "user", text(STARTUP)),
        row(2, "user", text("[Context: system_prompt] " + SP1)),
        row(3, "user", text("[Context: dynamic_instructions] " + DI1)),
        row(4, "assistant", [*text("hi"), use("u1", "fs_read", {"path": "x"})], tokens=TOK),
        row(5, "user", [result("u1", "abc")]),
        row(6, "user", text(INJ + "v1")),  # superseded by 7 before the next call
        row(7, "user", text(INJ + "v2")),
        row(8, "user", text("[Context: dynamic_instructions] " + DI1)),  # unexplained repeat
        row(9, "assistant", text("ok"), tokens=TOK),
    ]
    live = [
        row(10, "user", text(SUMMARY), tokens=TOK, model="m"),
        row(11, "user", text("[Context: system_prompt] " + SP1)),  # again after the compaction
        row(12, "user", text("[Context: dynamic_instructions] " + DI2)),
        row(13, "assistant", text("next"), tokens=TOK),
        row(14, "user", text("hello")),
        row(15, "user", text("[Context: system_prompt] " + SP2)),
        row(16, "assistant", text("done"), tokens=TOK),
        row(17, "user", text(STARTUP)),
        row(18, "user", text("[Context: system_prompt] " + SP2)),  # again after the restart
        row(19, "assistant", text("back"), tokens=TOK),
        row(
            20,
            "assistant",
            [use("u2", "sys_update_config", {"path": "context.compact_threshold", "value": 5000})],
            tokens=TOK,
        ),
        row(21, "user", [result("u2", "Updated context.compact_threshold.")]),
        row(22, "user", text("[Context: system_prompt] " + SP2)),  # again after the config change
        row(23, "assistant", text("fine"), tokens=TOK),
    ]
    return old, live


@pytest.fixture
def ctx_file(tmp_path):
    old, live = _rows()
    p = build(
        tmp_path / "ctx.adf",
        loop=live,
        audit=[{"source": "loop", "rows": old, "created_at": BASE_MS + 9_500}],
    )
    con = sqlite3.connect(p)
    task = (
        "INSERT INTO adf_tasks (id, tool, args, status, result, created_at, origin,"
        " requires_authorization) VALUES (?, 'sys_update_config', ?, 'completed', ?, ?, ?, 1)"
    )
    args20 = json.dumps({"path": "context.compact_threshold", "value": 5000})
    con.execute(
        task, ("t20", args20, "Updated context.compact_threshold.", BASE_MS + 20_100, "hil:ctx:did")
    )
    lost = json.dumps({"path": "audit.loop", "value": False, "_reason": "quiet"})
    con.execute(task, ("t0", lost, "Updated audit.loop.", BASE_MS + 500, "hil:ctx:did"))
    con.commit()
    con.close()
    return p


def test_context_blocks_columns_and_dtypes(ctx_file):
    """The frame has the documented columns and dtypes, one row per context entry."""
    cb = open_adf(ctx_file).context_blocks()
    assert list(cb.columns) == list(schema.CONTEXT_BLOCKS)
    assert {c: str(cb[c].dtype) for c in cb.columns} == schema.CONTEXT_BLOCKS
    assert cb["seq"].tolist() == [2, 3, 6, 7, 8, 11, 12, 15, 18, 22]


def test_each_block_category_diff_and_reason(ctx_file):
    """Category, diff against the previous block of the category, and why it was rewritten."""
    cb = open_adf(ctx_file).context_blocks().set_index("seq")
    expect = {
        # seq: (category, prev_seq, added, removed, change, reset_before)
        2: ("system_prompt", None, None, None, "first", None),
        3: ("dynamic_instructions", None, None, None, "first", None),
        6: ("skills", None, None, None, "first", None),
        7: ("skills", 6, 1, 1, "changed", None),
        8: ("dynamic_instructions", 3, 0, 0, "repeat", None),
        11: ("system_prompt", 2, 0, 0, "repeat_after_reset", "compaction"),
        12: ("dynamic_instructions", 8, 1, 1, "changed", "compaction"),
        15: ("system_prompt", 11, 1, 0, "changed", None),
        18: ("system_prompt", 15, 0, 0, "repeat_after_reset", "restart"),
        22: ("system_prompt", 18, 0, 0, "repeat_after_reset", "config_change"),
    }
    for seq, (cat, prev, add, rem, change, reset) in expect.items():
        r = cb.loc[seq]
        assert r["category"] == cat, seq
        assert (None if pd.isna(r["prev_seq"]) else int(r["prev_seq"])) == prev, seq
        assert (None if pd.isna(r["lines_added"]) else int(r["lines_added"])) == add, seq
        assert (None if pd.isna(r["lines_removed"]) else int(r["lines_removed"])) == rem, seq
        assert r["change"] == change, seq
        assert (None if pd.isna(r["reset_before"]) else r["reset_before"]) == reset, seq
    assert cb.loc[15, "diff"] == "+Rule two."
    assert cb.loc[12, "diff"] == f"-{DI1}\n+{DI2}"
    assert cb.loc[2, "text"] == SP1
    assert cb.loc[2, "chars"] == len(SP1)
    assert cb.loc[2, "est_tokens"] == math.ceil(len(SP1) / 3.5)
    assert cb.loc[2, "stored"] == "audit" and cb.loc[22, "stored"] == "live"


def test_loop_inject_header_and_delivery(ctx_file):
    """A v2 header gives origin and key; the keyed update superseded before a call is flagged."""
    cb = open_adf(ctx_file).context_blocks().set_index("seq")
    for seq in (6, 7):
        assert bool(cb.loc[seq, "loop_inject"])
        assert cb.loc[seq, "origin"] == "lambda:lib/a.ts:run"
        assert cb.loc[seq, "key"] == "reg"
    assert cb.loc[6, "text"] == "v1"
    assert not bool(cb.loc[6, "delivered"]) and bool(cb.loc[7, "delivered"])
    assert pd.isna(cb.loc[2, "delivered"]) and not bool(cb.loc[2, "loop_inject"])


def test_system_prompt_at_each_call(ctx_file):
    """The prompt in force at every call of the hand-built file."""
    agent = open_adf(ctx_file)
    expect = {4: SP1, 9: SP1, 13: SP1, 16: SP2, 19: SP2, 20: SP2, 23: SP2}
    for seq, prompt in expect.items():
        assert agent.system_prompt_at(seq) == prompt, seq


def test_system_prompt_before_any_prompt_warns(ctx_file):
    """A row before the first system prompt gets None and a warning saying why."""
    with pytest.warns(AdfWarning, match="no system_prompt context row precedes seq 1"):
        assert open_adf(ctx_file).system_prompt_at(1) is None


def test_system_prompt_unknown_seq(ctx_file):
    """A seq that never existed is an AdfError naming it."""
    with pytest.raises(AdfError, match="no loop row with seq 99"):
        open_adf(ctx_file).system_prompt_at(99)


def test_system_prompt_lost_to_gap(tmp_path):
    """Rows 1..9 discarded without audit: the prompt of the first live call is unknown."""
    p = build(
        tmp_path / "gap.adf",
        loop=[
            row(10, "user", text("[Loop Compacted] Gone.\n\n---\nYour loop was compacted.")),
            row(11, "assistant", text("hm"), tokens=TOK),
            row(12, "user", text("[Context: system_prompt] " + SP1)),
            row(13, "assistant", text("ok"), tokens=TOK),
        ],
        config={"context": {"audit": {"loop": False}}},
        highest_seq=13,
    )
    agent = open_adf(p)
    with pytest.warns(AdfWarning, match=r"lost to the history gap 1\.\.9"):
        assert agent.system_prompt_at(11) is None
    assert agent.system_prompt_at(13) == SP1
    with pytest.warns(AdfWarning, match=r"seq 5 was discarded \(history gap 1\.\.9\)"):
        assert agent.system_prompt_at(5) is None
    comp = agent.composition().set_index("seq")
    assert pd.isna(comp.loc[11, "system_prompt_seq"])
    assert math.isnan(comp.loc[11, "system_prompt_tokens"])
    assert comp.loc[13, "system_prompt_seq"] == 12


def test_composition_of_each_call(ctx_file):
    """Token parts of every call, computed here from the texts with the runtime's estimator."""
    comp = open_adf(ctx_file).composition()
    assert {c: str(comp[c].dtype) for c in comp.columns} == schema.COMPOSITION
    comp = comp.set_index("seq")
    assert comp.index.tolist() == [4, 9, 13, 16, 19, 20, 23]

    def t(chars: int) -> float:  # one message: 16 characters of overhead, chars / 3.5
        return (chars + 16) / 3.5

    fs_read_call = 2 + len("fs_read") + (2 + len("path") + (1 + 2) + 2)  # "hi" + name + obj(input)
    expect = {
        4: dict(msg=t(len(STARTUP)), asst=0, tool=0, inj=0, summ=0),
        # the superseded inject (seq 6) was never sent: only seq 7 counts
        9: dict(
            msg=t(len(STARTUP)),
            asst=t(fs_read_call),
            tool=t(3),
            inj=t(len(INJ + "v2")),
            summ=0,
        ),
        13: dict(msg=0, asst=0, tool=0, inj=0, summ=t(len(SUMMARY))),
        16: dict(msg=t(5), asst=t(4), tool=0, inj=0, summ=t(len(SUMMARY))),
    }
    for seq, e in expect.items():
        r = comp.loc[seq]
        assert r["message_tokens"] == pytest.approx(e["msg"]), seq
        assert r["assistant_tokens"] == pytest.approx(e["asst"]), seq
        assert r["tool_result_tokens"] == pytest.approx(e["tool"]), seq
        assert r["inject_tokens"] == pytest.approx(e["inj"]), seq
        assert r["summary_tokens"] == pytest.approx(e["summ"]), seq
        parts = e["msg"] + e["asst"] + e["tool"] + e["inj"] + e["summ"]
        assert r["est_tokens"] == math.ceil(round(parts * 3.5) / 3.5), seq
    # the system prompt: chars / 3.5; dynamic instructions: a trailing message
    assert comp.loc[9, "system_prompt_tokens"] == pytest.approx(len(SP1) / 3.5)
    assert comp.loc[16, "system_prompt_tokens"] == pytest.approx(len(SP2) / 3.5)
    assert comp.loc[9, "dynamic_instructions_seq"] == 8
    assert comp.loc[9, "dynamic_instructions_tokens"] == pytest.approx(t(len(DI1)))
    assert comp.loc[16, "dynamic_instructions_tokens"] == pytest.approx(t(len(DI2)))
    # after the restart (seq 17) no dynamic instructions were written: none were sent
    assert comp.loc[19, "dynamic_instructions_tokens"] == 0
    assert pd.isna(comp.loc[19, "dynamic_instructions_seq"])
    r = comp.loc[16]
    assert r["total_tokens"] == pytest.approx(
        r["system_prompt_tokens"] + r["dynamic_instructions_tokens"] + t(5) + t(4) + t(len(SUMMARY))
    )
    assert comp.loc[4, "n_messages"] == 1 and comp.loc[9, "n_messages"] == 4


def test_composition_keeps_a_preserved_tail(tmp_path):
    """A manual compaction keeps its last two rows (ord on the summary): they stay in context."""
    archived = [
        row(1, "user", text("first question")),
        row(2, "assistant", text("answer"), tokens=TOK),
        row(3, "user", text("please compact")),
    ]
    live = [
        row(4, "assistant", [use("c1", "loop_compact", {})], tokens=TOK),
        row(5, "user", [result("c1", "Compaction initiated for 5 loop entries.")]),
        row(6, "user", text("[Loop Compacted, audited] S\n\n---\nYour loop was compacted."), ord=3),
        row(7, "user", text("[Context: system_prompt] " + SP1)),
        row(8, "assistant", text("go"), tokens=TOK),
    ]
    agent = open_adf(
        build(tmp_path / "tail.adf", loop=live, audit=[{"source": "loop", "rows": archived}])
    )
    comp = agent.composition().set_index("seq")
    t = lambda n: (n + 16) / 3.5  # noqa: E731
    summ = "[Loop Compacted, audited] S\n\n---\nYour loop was compacted."
    call = len("loop_compact") + 2
    res = len("Compaction initiated for 5 loop entries.")
    r = comp.loc[8]
    assert r["summary_tokens"] == pytest.approx(t(len(summ)))
    assert r["assistant_tokens"] == pytest.approx(t(call))
    assert r["tool_result_tokens"] == pytest.approx(t(res))
    assert r["message_tokens"] == 0
    # the call that asked for the compaction saw rows 1..3
    r = comp.loc[4]
    assert r["message_tokens"] == pytest.approx(t(len("first question")) + t(len("please compact")))
    assert r["summary_tokens"] == 0


def test_config_changes_hand_built(ctx_file):
    """A call matched to its approval task, and a task whose call was lost."""
    ch = open_adf(ctx_file).config_changes()
    assert list(ch.columns) == list(schema.CONFIG_CHANGES)
    assert {c: str(ch[c].dtype) for c in ch.columns} == schema.CONFIG_CHANGES
    assert len(ch) == 2
    lost, call = ch.iloc[0], ch.iloc[1]
    assert lost["source"] == "task" and pd.isna(lost["seq"])
    assert lost["path"] == "audit.loop" and lost["value"] == "false"
    assert lost["reason"] == "quiet" and bool(lost["succeeded"])
    assert call["source"] == "tool_call+task" and call["seq"] == 20
    assert call["path"] == "context.compact_threshold" and call["value"] == "5000"
    assert call["action"] == "set" and call["by"] == "agent"
    assert call["approved_by"] == "hil:ctx:did" and call["task_id"] == "t20"
    assert bool(call["succeeded"]) and call["result_seq"] == 21
    assert call["result"] == "Updated context.compact_threshold."


def test_failed_config_change(tmp_path):
    """A refused call is listed with succeeded False and the refusal."""
    p = build(
        tmp_path / "refused.adf",
        loop=[
            row(
                1,
                "assistant",
                [use("u", "sys_update_config", {"path": "id", "value": "x"})],
                tokens=TOK,
            ),
            row(2, "user", [result("u", "'id' cannot be modified.", is_error=True)]),
        ],
    )
    ch = open_adf(p).config_changes()
    assert ch["succeeded"].tolist() == [False]
    assert ch["result"].tolist() == ["'id' cannot be modified."]


# --- the real runtime's files -----------------------------------------------------------


def test_runtime_long_runner_blocks():
    """long-runner wrote 9 system prompts and 18 dynamic instructions over its history."""
    agent = open_adf(runtime_fixture("long-runner"))
    cb = agent.context_blocks()
    counts = cb["category"].value_counts().to_dict()
    assert counts == {"dynamic_instructions": 18, "system_prompt": 9}
    # every system prompt after the first follows a compaction (8 automatic compactions)
    sp = cb[cb["category"] == "system_prompt"]
    assert sp["change"].iloc[0] == "first"
    assert (sp["reset_before"].iloc[1:] == "compaction").all()
    assert not (cb["change"] == "repeat").any()


@pytest.mark.parametrize(
    ("name", "n_sp", "n_di"),
    [
        ("mind-keeper", 7, 14),
        ("audited-messenger", 3, 7),
        ("forgetful", 1, 2),
        ("manual-compact", 3, 0),
    ],
)
def test_runtime_block_counts(name, n_sp, n_di):
    """Every context row of the whole history is found with its category."""
    cb = open_adf(runtime_fixture(name)).context_blocks()
    assert (cb["category"] == "system_prompt").sum() == n_sp
    assert (cb["category"] == "dynamic_instructions").sum() == n_di
    assert cb["text"].str.startswith("[Context:").sum() == 0


def test_runtime_mind_keeper_prompts_carry_the_mind():
    """Each system prompt of mind-keeper injects mind.md as the agent last wrote it before the
    reset that preceded the prompt (or the seeded index before any write)."""
    agent = open_adf(runtime_fixture("mind-keeper"))
    calls = agent.tool_calls(history=True)
    writes = []
    for seq, inp in zip(calls["call_seq"], calls["tool_input"], strict=True):
        d = json.loads(inp)
        if d.get("path") == "mind.md" and d.get("mode") == "write":
            writes.append((int(seq), d["content"]))
    sp = agent.context_blocks().query("category == 'system_prompt'")
    checked = 0
    for seq, body in zip(sp["seq"], sp["text"], strict=True):
        assert '<injected_file path="mind.md">' in body
        before = [c for s, c in writes if s < seq]
        # the prompt at seq 220 follows a version written in the gap 166..218; at 2, the seed
        if before and int(seq) not in (220,) and before[-1] in body:
            checked += 1
    # prompts 63, 120, 261, 318, 363 each carry the last full write before them
    assert checked == 5
    comp = agent.composition()
    assert comp["system_prompt_seq"].notna().all()


def test_runtime_mind_keeper_config_changes():
    """Two approved sys_update_config calls turned context.audit.loop off, then on again; the
    first call's loop rows were discarded (seqs 166..218) but its approval task remains."""
    ch = open_adf(runtime_fixture("mind-keeper")).config_changes()
    assert ch["path"].tolist() == ["context.audit.loop", "context.audit.loop"]
    assert ch["value"].tolist() == ["false", "true"]
    assert ch["succeeded"].tolist() == [True, True]
    assert ch["source"].tolist() == ["task", "tool_call+task"]
    assert pd.isna(ch["seq"].iloc[0]) and ch["seq"].iloc[1] == 227
    assert ch["approved_by"].str.startswith("hil:").all()


def test_runtime_composition_matches_estimate():
    """On every fixture, the conversation parts add up to the estimate of each call."""
    for name in ("long-runner", "mind-keeper", "audited-messenger", "forgetful", "manual-compact"):
        comp = open_adf(runtime_fixture(name)).composition()
        parts = comp[
            [
                "summary_tokens",
                "message_tokens",
                "assistant_tokens",
                "tool_result_tokens",
                "inject_tokens",
            ]
        ].sum(axis=1)
        exact = comp["context_chars"] / 3.5 + comp["context_media_chars"] / 100
        assert (parts - exact).abs().max() < 1e-6, name
        slack = comp["est_tokens"] - parts
        assert slack.between(-1e-9, 2).all(), name


PART_COLUMNS = [
    "summary_tokens",
    "message_tokens",
    "assistant_tokens",
    "tool_result_tokens",
    "inject_tokens",
]


def _check_parts_sum(agent, name):
    """replay()'s conversation parts add up to its estimate of every call: exactly to
    ``est_chars / 3.5 + est_media_chars / 100`` (the estimator before rounding, ADF_FORMAT.md
    §9.1), and ``est_tokens`` rounds each of the two up, so it exceeds their sum by less than 2.
    composition() shows the same numbers."""
    rep = agent.replay()
    parts = rep[PART_COLUMNS].sum(axis=1)
    chars = rep["est_chars"].astype("float64")
    media = rep["est_media_chars"].astype("float64")
    assert (parts - (chars / 3.5 + media / 100)).abs().max() < 1e-6, name
    expect = [math.ceil(c / 3.5) + math.ceil(m / 100) for c, m in zip(chars, media, strict=True)]
    assert rep["est_tokens"].tolist() == expect, name
    assert (rep["est_tokens"] - parts).between(-1e-9, 2, inclusive="left").all(), name
    # every part is made of whole messages: a non-empty window has a positive estimate
    assert ((rep["n_context_rows"] > 0) == (rep["est_tokens"] > 0)).all(), name
    comp = agent.composition()
    assert comp["seq"].tolist() == rep["seq"].tolist(), name
    for c in [*PART_COLUMNS, "est_tokens", "system_prompt_seq", "dynamic_instructions_tokens"]:
        assert comp[c].equals(rep[c]), (name, c)


@pytest.mark.parametrize(
    "name",
    ["long-runner", "mind-keeper", "messenger", "forgetful", "clean", "legacy-v27", "legacy-v12"],
)
def test_replay_parts_sum_to_estimate_samples(name):
    """On every sample agent, the conversation parts of each call sum to replay()'s estimate."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AdfWarning)
        _check_parts_sum(open_adf(sample(name)), name)


@pytest.mark.parametrize(
    "name",
    [
        "big-runner",
        "long-runner",
        "mind-keeper",
        "audited-messenger",
        "forgetful",
        "manual-compact",
    ],
)
def test_replay_parts_sum_to_estimate_runtime(name):
    """On every real-runtime fixture, the conversation parts of each call sum to replay()'s
    estimate."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AdfWarning)
        _check_parts_sum(open_adf(runtime_fixture(name)), name)


def test_replay_window_leaves_out_a_superseded_inject(ctx_file):
    """ADF_FORMAT.md §7: keyed updates made before the next call collapse to the latest one.
    At call 9 of the hand-built file the inject at seq 6 (key ``reg``) was replaced by seq 7
    before the call: the window holds 1 (startup trigger), 4, 5 (the fs_read call and its
    result) and 7, never 6."""
    rep = open_adf(ctx_file).replay().set_index("seq")
    assert rep.at[9, "context_seqs"] == (1, 4, 5, 7)
    fs_read_call = 2 + len("fs_read") + (2 + len("path") + (1 + 2) + 2)
    chars = [len(STARTUP), fs_read_call, 3, len(INJ + "v2")]
    est_chars = sum(chars) + 16 * len(chars)
    assert rep.at[9, "est_chars"] == est_chars == 236
    assert rep.at[9, "est_tokens"] == math.ceil(est_chars / 3.5) == 68
    # counting the superseded version too would give 94
    assert math.ceil((est_chars + len(INJ + "v1") + 16) / 3.5) == 94
    assert rep.at[9, "inject_tokens"] == pytest.approx((len(INJ + "v2") + 16) / 3.5)
    assert rep.at[9, "n_context_rows"] == 4


def test_replay_keyed_inject_delivery(tmp_path):
    """Several injects before one call: per key only the latest is sent, unkeyed ones all are;
    a version already delivered stays in the window when a newer one follows (ADF_FORMAT.md §7;
    a key does not remove a value already sent)."""
    k = "[Context: reg | loop_inject=v2 | origin=system:x | key=k] "
    k2 = "[Context: reg | loop_inject=v2 | origin=system:x | key=k2] "
    u = "[Context: note | loop_inject=v2 | origin=system:x] "
    p = build(
        tmp_path / "inj.adf",
        loop=[
            row(1, "user", text("hi")),
            row(2, "user", text(k + "one")),
            row(3, "user", text(u + "a")),
            row(4, "user", text(k + "two")),  # replaces 2 before call 7
            row(5, "user", text(k2 + "x")),  # another key: kept
            row(6, "user", text(u + "bb")),  # unkeyed: both 3 and 6 are sent
            row(7, "assistant", text("ok"), tokens=TOK),
            row(8, "user", text(k + "three")),  # after call 7: 4 was already delivered
            row(9, "assistant", text("ok"), tokens=TOK),
        ],
    )
    agent = open_adf(p)
    rep = agent.replay().set_index("seq")
    assert rep.at[7, "context_seqs"] == (1, 3, 4, 5, 6)
    assert rep.at[9, "context_seqs"] == (1, 3, 4, 5, 6, 7, 8)
    injects = [k + "two", k2 + "x", u + "a", u + "bb"]
    inj = sum(len(t) + 16 for t in injects)
    assert rep.at[7, "inject_tokens"] == pytest.approx(inj / 3.5)
    assert rep.at[7, "est_tokens"] == math.ceil((inj + 2 + 16) / 3.5)
    assert rep.at[9, "inject_tokens"] == pytest.approx((inj + len(k + "three") + 16) / 3.5)
    cb = agent.context_blocks().set_index("seq")
    assert cb["delivered"].tolist() == [False, True, True, True, True, True]


def test_system_prompt_in_force_across_a_compaction(tmp_path):
    """A call right after a compaction, before the runtime wrote a new system prompt row, was
    still sent the prompt written before the compaction (ADF_FORMAT.md §7: the system parameter
    goes with every call). context_at, replay, composition and system_prompt_at agree."""
    archived = [
        row(1, "user", text("[Context: system_prompt] " + SP1)),
        row(2, "user", text("[Context: dynamic_instructions] " + DI1)),
        row(3, "user", text("first")),
        row(4, "assistant", text("answer"), tokens=TOK),
    ]
    live = [
        row(5, "user", text(SUMMARY), tokens=TOK, model="m"),
        row(6, "assistant", text("still going"), tokens=TOK),  # no new prompt row yet
        row(7, "user", text("next")),
        row(8, "user", text("[Context: system_prompt] " + SP2)),
        row(9, "assistant", text("fine"), tokens=TOK),
    ]
    agent = open_adf(
        build(tmp_path / "sp.adf", loop=live, audit=[{"source": "loop", "rows": archived}])
    )
    rep = agent.replay().set_index("seq")
    comp = agent.composition().set_index("seq")
    expect = {4: (1, SP1), 6: (1, SP1), 9: (8, SP2)}
    for call, (sp_seq, prompt) in expect.items():
        assert rep.at[call, "system_prompt_seq"] == sp_seq, call
        assert comp.at[call, "system_prompt_seq"] == sp_seq, call
        assert rep.at[call, "system_prompt_tokens"] == pytest.approx(len(prompt) / 3.5), call
        assert agent.system_prompt_at(call) == prompt, call
        win = agent.context_at(call)
        assert win["seq"].iloc[0] == sp_seq and win["part"].iloc[0] == "system", call
    # the window after the compaction is the summary alone; the dynamic instructions were
    # swept with it (none written since the reset)
    win = agent.context_at(6)
    assert win["seq"].tolist() == [1, 5]
    assert win["part"].tolist() == ["system", "message"]
    assert agent.context_at(4)["part"].tolist() == ["system", "message", "dynamic"]
    assert rep.at[6, "dynamic_instructions_tokens"] == 0
    assert rep.at[4, "dynamic_instructions_tokens"] == pytest.approx((len(DI1) + 16) / 3.5)


def test_runtime_big_runner_prompt_after_compaction():
    """big-runner's call 1237 comes right after compaction 21 (summary 1236); the runtime
    wrote the next system prompt only at seq 1239, so the prompt in force is the one at 1196,
    written after compaction 20."""
    agent = open_adf(runtime_fixture("big-runner"))
    rep = agent.replay().set_index("seq")
    assert rep.at[1237, "system_prompt_seq"] == 1196
    assert rep.at[1241, "system_prompt_seq"] == 1239
    win = agent.context_at(1237)
    assert win["seq"].iloc[0] == 1196 and win["part"].iloc[0] == "system"
    assert win["seq"].iloc[1] == 1236  # the conversation starts at the summary
    assert agent.system_prompt_at(1237) == agent.system_prompt_at(1198)


def test_sample_blocks_match_truth():
    """The synth samples' ground truth lists every context row written; those still in the
    history are found with their category."""
    for name in ("long-runner", "mind-keeper", "messenger", "forgetful", "clean"):
        truth = json.loads(sample(name).with_suffix(".truth.json").read_text())
        kept = set(truth["history_seqs"])
        want = {(r["seq"], r["category"]) for r in truth["context_rows"] if r["seq"] in kept}
        cb = open_adf(sample(name)).context_blocks()
        got = set(zip(cb["seq"].astype(int), cb["category"], strict=True))
        assert got == want, name


def test_plot_context_composition(tmp_path):
    """The stacked areas add up to each call's total; one marker per compaction."""
    import numpy as np

    from adfkit import plots

    agent = open_adf(sample("long-runner"))
    comp = agent.composition()
    n_compactions = int((agent.events()["event"] == "compaction").sum())
    ax = plots.context_composition(agent)
    try:
        assert sum(line.get_gid() == "compaction" for line in ax.lines) == n_compactions
        gids = [c.get_gid() for c in ax.collections]
        assert "summary_tokens" in gids and "tool_result_tokens" in gids
        assert "inject_tokens" not in gids  # no loop_inject in this sample: left out
        parts = [c for c in ax.collections if c.get_gid() != "not_in_file"]
        top = max(c.get_paths()[0].vertices[:, 1].max() for c in parts)
        assert top == pytest.approx(float(np.nanmax(comp["total_tokens"])))
        # on top of the estimate: what the provider counted beyond it, up to the input
        full = max(c.get_paths()[0].vertices[:, 1].max() for c in ax.collections)
        est = comp["total_tokens"].to_numpy()
        got = comp["tokens_input"].astype("float64").to_numpy()
        assert full == pytest.approx(float(np.nanmax(np.maximum(est, got))))
    finally:
        plots.close(ax)


def test_cli_plot_composition(tmp_path):
    """`adfkit plot PATH --kind composition` writes a PNG."""
    from adfkit.cli import main

    out = tmp_path / "comp.png"
    assert main(["plot", str(sample("clean")), "--kind", "composition", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
