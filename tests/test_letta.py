"""Letta agent files (``.af``): recognition, the tables, compactions and the memory blocks.

Figures are computed here from the JSON itself (messages, ``in_context_message_ids`` or
``_indices``, ``tool_calls``, blocks), never by adfkit. The published files (letta-ai's, see
tests/fixtures/letta/README.md) are read from ``../shared/fixtures/letta`` (or the folder
``ADFKIT_LETTA_FIXTURES`` names) and skipped when absent; the adfsynth agent and the hand-built
files run everywhere.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

import adfkit
from adfkit._base.errors import AdfError, UnknownFormatError
from adfkit._core import registry
from adfsynth import letta as synth_letta

ROOT = Path(__file__).resolve().parent.parent
REAL = Path(os.environ.get("ADFKIT_LETTA_FIXTURES", ROOT.parent / "shared" / "fixtures" / "letta"))
#: The published files the tests read (tests/fixtures/letta/README.md: source, commit, licence).
REAL_FILES = (
    "memgpt_agent_with_convo-0.6.47.af",
    "customer_service.af",
    "evie.af",
    "test_basic_agent_with_blocks_tools_messages_v2.af",
)


def real(name: str) -> Path:
    p = REAL / name
    if not p.exists():
        pytest.skip(f"published Letta agent file {p} not present (see tests/fixtures/letta)")
    return p


def _doc(path: Path) -> dict[str, Any]:
    d = json.loads(path.read_text(encoding="utf-8"))
    return json.loads(d) if isinstance(d, str) else d


def _agents(path: Path) -> list[dict[str, Any]]:
    d = _doc(path)
    return d.get("agents", [d])


def _ctx(agent: dict[str, Any]) -> list[int]:
    if "in_context_message_ids" in agent:
        pos = {m["id"]: i for i, m in enumerate(agent["messages"])}
        return [pos[x] for x in agent["in_context_message_ids"]]
    return list(agent["in_context_message_indices"])


def _agent_files(got: Any) -> list[Any]:
    return [got] if isinstance(got, adfkit.AgentFile) else list(got)


# --- the published files ----------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL_FILES)
def test_published_file_is_claimed_by_letta_alone(name):
    p = real(name)
    assert registry.recognise(p).name == "letta"
    assert [s.name for s in registry.specs() if s.claims(registry.Probe(p))] == ["letta"]


@pytest.mark.parametrize("name", REAL_FILES)
def test_published_file_rows_calls_tools_and_blocks(name):
    p = real(name)
    doc = _doc(p)
    agents = _agents(p)
    got = _agent_files(adfkit.open(p))
    assert [a.name for a in got] == [a["name"] for a in agents]
    for ag, src in zip(agents, got, strict=True):
        msgs = ag["messages"]
        assert len(src.history()) == len(msgs)
        calls = [
            m
            for m in msgs
            if m["role"] == "assistant" or (m["role"] == "approval" and m.get("tool_calls"))
        ]
        assert len(src.source.calls()) == len(calls)
        assert src.source.calls()["tokens_input"].isna().all()  # Letta exports no usage
        n_tools = sum(len(m.get("tool_calls") or []) for m in calls)
        assert len(src.tool_calls(history=True)) == n_tools
        blocks = ag.get("core_memory") or [
            b for b in doc["blocks"] if b["id"] in (ag["block_ids"] or [])
        ]
        pages = src.mind().pages
        assert sorted(pages["slug"]) == sorted(b["label"] for b in blocks)
        assert sorted(pages["body"]) == sorted(b["value"] for b in blocks)
        assert src.settings().context_window == ag["llm_config"]["context_window"]


def test_published_conversation_compaction_figures():
    """Letta 0.6.47's export of a MemGPT agent: 91 messages, one summary, 11 in context."""
    p = real("memgpt_agent_with_convo-0.6.47.af")
    (ag,) = _agents(p)
    msgs, ctx = ag["messages"], _ctx(ag)
    summaries = [
        i
        for i, m in enumerate(msgs)
        if m["role"] == "user"
        and '"system_alert"' in m["content"][0]["text"]
        and "hidden" in m["content"][0]["text"]
    ]
    assert summaries == [81]
    systems = [i for i, m in enumerate(msgs) if m["role"] == "system"]
    current = max(i for i in systems if i < 81)  # the prompt sent with the summary
    swept = [i for i in range(81) if i not in ctx and i != current]
    kept = [i for i in range(81) if i in ctx and msgs[i]["role"] != "system"]
    a = adfkit.open(p)
    c = a.compactions()
    assert len(c) == 1
    row = c.iloc[0]
    assert row["summary_seq"] == 82
    assert list(row["swept_seqs"]) == [i + 1 for i in swept]
    assert row["n_swept"] == 79
    assert list(row["tail_seqs"]) == [i + 1 for i in kept] == [81]
    text = json.loads(msgs[81]["content"][0]["text"])["message"]
    assert "69 of 80 total messages" in text
    ev = a.source.parsed.events[0]
    assert ev.extra["hidden_message_count"] == 69
    assert ev.extra["total_message_count"] == 80
    assert ev.extra["summary_message_count"] == 65
    # in context now: the 11 messages, and the system prompt the last memory edit replaced
    live = sorted(int(q) - 1 for q in a.loop()["seq"])
    assert live == sorted([*ctx, current])
    # replay: the window of the last call is the summary, the kept row and what came after
    last = a.replay().iloc[-1]
    assert msgs[int(last["seq"]) - 1]["role"] == "assistant"
    # the file's in-context list, in its order, before that call (system prompt left out)
    at = int(last["seq"]) - 1
    sent = [i + 1 for i in ctx if i < at and msgs[i]["role"] != "system"]
    assert [int(q) for q in last["context_seqs"]] == sent == [82, 81, 83, 84, 85, 86, 87, 88]
    # the threshold: 0.9 of llm_config.context_window, assumed (the file does not record it)
    st = a.settings()
    assert (st.context_window, st.compact_threshold, st.threshold_source) == (8192, 7372, "assumed")


def test_published_file_encoded_twice():
    p = real("customer_service.af")
    assert p.read_bytes().startswith(b'"{')
    a = adfkit.open(p)
    assert a.name == json.loads(json.loads(p.read_text()))["agents"][0]["name"]


def test_published_sleeptime_group_opens_as_two_agents():
    p = real("evie.af")
    got = adfkit.open(p)
    assert isinstance(got, adfkit.AgentCollection)
    names = [a["name"] for a in _agents(p)]
    assert got.names == names
    one = adfkit.open(f"{p}#{names[1]}")
    assert one.name == names[1]


# --- the adfsynth agent: ground truth ---------------------------------------------------------


@pytest.fixture(scope="module")
def fern(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    path, truth = synth_letta.write_samples(out)
    return path, json.loads(truth.read_text())


def test_synth_compactions_equal_the_truth(fern):
    path, t = fern
    a = adfkit.open(path)
    c = a.compactions()
    assert len(c) == len(t["compactions"]) == 3
    for tc, (_, row) in zip(t["compactions"], c.iterrows(), strict=True):
        assert row["summary_seq"] == tc["summary"] + 1
        assert sorted(row["swept_seqs"]) == sorted(
            q + 1 for q in tc["swept"] + tc["superseded_system"]
        )
        assert sorted(row["tail_seqs"]) == sorted(q + 1 for q in tc["kept"])
    assert [e.extra["swept_exact"] for e in a.source.parsed.events] == [True, True, True]
    ev = a.source.parsed.events
    assert [e.trigger for e in ev] == [tc["trigger"] for tc in t["compactions"]]
    assert [e.pre_tokens for e in ev] == [tc["tokens_before"] for tc in t["compactions"]]


def test_synth_rows_calls_tools_mind(fern):
    path, t = fern
    a = adfkit.open(path)
    assert len(a.history()) == t["n_messages"]
    assert len(a.source.calls()) == t["n_calls"]
    assert a.tool_calls(history=True)["tool_name"].value_counts().to_dict() == t["tool_calls"]
    u = a.usage()  # every call, its tokens and cost unknown (Letta records none), never 0
    kinds = u["call_kind"].astype(str).value_counts().to_dict()
    assert kinds == {"assistant": t["n_calls"], "compaction": len(t["compactions"])}
    assert u["tokens_input"].isna().all() and u["tokens_output"].isna().all()
    assert u["cost_usd"].isna().all()
    m = a.mind()
    assert dict(zip(m.pages["slug"], m.pages["body"], strict=True)) == t["blocks"]
    assert set(m.pages["type"]) == {"memory_block"}
    assert m.pages["linked"].all()
    # in context now: the file's list, and the system prompts replaced since the one sent
    # with the last summary (replaced by a memory edit, swept by no compaction)
    systems = [i for i, k in enumerate(t["kinds"]) if k == "system"]
    sent = max(i for i in systems if i < t["compactions"][-1]["summary"])
    replaced = [i for i in systems if i >= sent and i not in t["in_context"]]
    assert replaced == [sent]
    assert sorted(int(q) - 1 for q in a.loop()["seq"]) == sorted(t["in_context"] + replaced)
    assert a.settings().context_window == t["context_window"]


# --- hand-built and hostile files ---------------------------------------------------------------


def _agent(**kw: Any) -> dict[str, Any]:
    base = {
        "name": "a",
        "llm_config": {"model": "gpt-4o-mini", "context_window": 32000},
        "id": "agent-0",
        "in_context_message_ids": ["message-0"],
        "messages": [
            {"role": "system", "id": "message-0", "content": [{"type": "text", "text": "sys"}]}
        ],
    }
    base.update(kw)
    return base


def _write(tmp_path: Path, doc: Any, name: str = "x.af") -> Path:
    p = tmp_path / name
    p.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return p


@pytest.mark.parametrize(
    "doc",
    [
        {"agents": []},
        {"agents": [{"name": "a"}]},
        [{"agents": [_agent()]}],
        {"name": "a", "llm_config": {}, "in_context_message_ids": []},
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    ],
    ids=["no-agents", "no-llm-config", "a-list", "no-agents-key", "gemini-export"],
)
def test_a_json_document_that_is_no_agent_file_is_not_claimed(tmp_path, doc):
    p = _write(tmp_path, doc)
    with pytest.raises(UnknownFormatError):
        adfkit.open(p)


def test_two_agents_one_name_get_their_ids(tmp_path):
    doc = {"agents": [_agent(), _agent(id="agent-1")], "blocks": []}
    got = adfkit.open(_write(tmp_path, doc))
    assert got.names == ["a (agent-0)", "a (agent-1)"]
    with pytest.raises(AdfError, match="no agent named"):
        adfkit.open(f"{tmp_path / 'x.af'}#b")


def test_deep_nesting_is_an_error_naming_the_file(tmp_path):
    deep = (
        b'{"agents": [{"llm_config": {}, "in_context_message_ids": [], "x": '
        + b"[" * 5000
        + b"]" * 5000
        + b"}]}"
    )
    p = _write(tmp_path, deep)
    with pytest.raises(AdfError) as e:
        adfkit.open(p)
    assert str(p) in str(e.value)


def test_too_many_containers_is_an_error(tmp_path):
    body = b"{}," * 300_000
    p = _write(
        tmp_path,
        b'{"agents": [{"llm_config": {}, "in_context_message_ids": [], "x": [' + body + b"{}]}]}",
    )
    with pytest.raises(AdfError, match="lists and objects"):
        adfkit.open(p)


def test_cut_document_is_an_error(tmp_path):
    text = json.dumps({"agents": [_agent()], "blocks": []})
    p = _write(tmp_path, text[: len(text) - 5].encode())
    with pytest.raises(AdfError, match="not a JSON document"):
        adfkit.open(p)


def test_huge_numbers_are_unknown_not_wrong(tmp_path):
    msgs = [
        {"role": "system", "id": "message-0", "content": [{"type": "text", "text": "sys"}]},
        {
            "role": "assistant",
            "id": "message-1",
            "content": [],
            "tool_calls": None,
            "created_at": "9" * 40,
        },
    ]
    doc = {
        "agents": [
            _agent(
                llm_config={"model": "m", "context_window": 10**30},
                messages=msgs,
                in_context_message_ids=["message-0", "message-1"],
                block_ids=["block-0"],
            )
        ],
        "blocks": [{"id": "block-0", "label": "human", "value": "v", "limit": 10**40}],
    }
    a = adfkit.open(_write(tmp_path, doc))
    assert a.settings().context_window is None or a.settings().context_window < 10**13
    assert a.history()["created_at"].isna().all()
    assert "limit" not in a.source.read_file("mind/human.md").decode()


def test_in_context_id_missing_from_the_file_is_a_finding(tmp_path):
    doc = {"agents": [_agent(in_context_message_ids=["message-0", "message-9"])], "blocks": []}
    a = adfkit.open(_write(tmp_path, doc))
    assert any(f.check == "missing_message" for f in a.source.parsed.findings)


def test_a_fifo_is_refused(tmp_path):
    p = tmp_path / "x.af"
    os.mkfifo(p)
    with pytest.raises(AdfError):
        adfkit.open(p, format="letta")


def test_autoclear_agent_is_a_clear(tmp_path):
    msgs = [
        {"role": "system", "id": "message-0", "content": [{"type": "text", "text": "sys"}]},
        {"role": "user", "id": "message-1", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "id": "message-2", "content": [{"type": "text", "text": "yo"}]},
    ]
    doc = {"agents": [_agent(messages=msgs, message_buffer_autoclear=True)], "blocks": []}
    a = adfkit.open(_write(tmp_path, doc))
    assert a.events()["event"].tolist() == ["clear"]
    assert a.loop()["seq"].tolist() == [1]


def _summary_text(text: str) -> str:
    return json.dumps({"type": "system_alert", "message": text, "time": "t"})


def test_summary_whose_swept_messages_are_not_in_the_file_is_unknown(tmp_path):
    """A current export holds the messages in context only: a summary right after the system
    prompt swept messages the file does not hold, so its swept size is NA, not 0."""
    hidden = "Note: prior messages have been hidden from view due to conversation memory "
    msgs = [
        {"role": "system", "id": "message-0", "content": [{"type": "text", "text": "sys"}]},
        {
            "role": "user",
            "id": "message-1",
            "content": [{"type": "text", "text": _summary_text(hidden + "constraints. sum")}],
        },
        {"role": "user", "id": "message-2", "content": [{"type": "text", "text": "hi"}]},
    ]
    ids = [m["id"] for m in msgs]
    doc = {"agents": [_agent(messages=msgs, in_context_message_ids=ids)], "blocks": []}
    a = adfkit.open(_write(tmp_path, doc))
    c = a.compactions()
    assert len(c) == 1 and c["summary_seq"].iloc[0] == 2
    assert c[["n_swept", "swept_tokens", "compression_ratio"]].isna().all(axis=None)


def test_a_summary_quoted_inside_a_message_is_no_compaction(tmp_path):
    """A sleeptime agent is sent the primary agent's transcript, summaries included: text that
    only quotes a system_alert is a message, not a summary."""
    quoted = "Messages:\nuser: " + _summary_text("prior messages have been hidden from view")
    msgs = [
        {"role": "system", "id": "message-0", "content": [{"type": "text", "text": "sys"}]},
        {"role": "user", "id": "message-1", "content": [{"type": "text", "text": quoted}]},
    ]
    doc = {"agents": [_agent(messages=msgs, in_context_message_ids=["message-0", "message-1"])]}
    a = adfkit.open(_write(tmp_path, doc))
    assert a.compactions().empty
    assert a.history()["kind"].tolist()[1] == "message"


def test_listing_names_every_agent_of_every_file(tmp_path):
    from adfkit._sources.letta.listing import list_letta_files

    (tmp_path / "sub").mkdir()
    _write(tmp_path, {"agents": [_agent()], "blocks": []}, "one.af")
    _write(tmp_path / "sub", {"agents": [_agent(), _agent(name="b")], "blocks": []}, "two.af")
    _write(tmp_path, {"agents": []}, "none.af")
    df = list_letta_files(tmp_path)
    assert sorted(df["path"].map(lambda p: Path(p).name)) == ["one.af", "two.af#a", "two.af#b"]
    assert set(df["model"]) == {"gpt-4o-mini"}
    via = adfkit.list_sessions(tmp_path, format="letta")
    assert len(via) == 3 and set(via["format"]) == {"letta"}


def test_tool_taxonomy_classes_letta_tools(fern):
    """observe() takes Letta's taxonomy: memory edits are bookkeeping, send_message and the web
    world, memory searches internal (adfkit/data/taxonomy.letta.json)."""
    path, t = fern
    calls = adfkit.observe(adfkit.open(path)).calls
    classes = dict(zip(calls["tool"], calls["class"], strict=True))
    want = {
        "memory_replace": "bookkeeping",
        "send_message": "world",
        "web_search": "world",
        "archival_memory_search": "internal",
    }
    assert {k: classes[k] for k in t["tool_calls"]} == {k: want[k] for k in t["tool_calls"]}
    assert len(calls) == sum(t["tool_calls"].values())


def test_synth_replay_is_the_window_sent_at_every_call(fern):
    """replay(): at every model call, the messages the simulator sent (summary first, then the
    messages it kept and those after), in that order."""
    path, t = fern
    r = adfkit.open(path).replay()
    got = {
        int(s) - 1: [int(q) - 1 for q in c]
        for s, c in zip(r["seq"], r["context_seqs"], strict=True)
    }
    assert got == {int(k): v for k, v in t["contexts"].items()}


def test_newest_summary_role_with_compaction_stats(tmp_path):
    """Letta's newest releases write the summary with role ``summary`` and
    ``compaction_stats``: trigger, tokens before and after, the window, messages kept."""
    stats = {
        "trigger": "post_step_context_check",
        "context_tokens_before": 9100,
        "context_tokens_after": 1200,
        "context_window": 10000,
        "messages_count_before": 6,
        "messages_count_after": 3,
    }
    text = json.dumps(
        {
            "type": "system_alert",
            "message": "Note: 3 messages from the beginning of the conversation have been hidden "
            "from view due to memory constraints.\nThe following is a summary of the previous "
            "messages:\n the user said hi",
            "time": "t",
            "compaction_stats": stats,
        }
    )
    msgs = [
        {"role": "system", "id": "message-0", "content": [{"type": "text", "text": "sys"}]},
        {"role": "user", "id": "message-1", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "id": "message-2", "content": [{"type": "text", "text": "yo"}]},
        {"role": "user", "id": "message-3", "content": [{"type": "text", "text": "more"}]},
        {"role": "summary", "id": "message-4", "content": [{"type": "text", "text": text}]},
    ]
    ctx = ["message-0", "message-4", "message-3"]
    p = _write(tmp_path, {"agents": [_agent(messages=msgs, in_context_message_ids=ctx)]})
    assert [s.name for s in registry.specs() if s.claims(registry.Probe(p))] == ["letta"]
    a = adfkit.open(p)
    (ev,) = a.source.parsed.events
    assert (ev.trigger, ev.pre_tokens, ev.post_tokens, ev.context_window) == (
        "auto",
        9100,
        1200,
        10000,
    )
    assert ev.extra["evicted_message_count"] == 3
    assert (ev.summary_seq, ev.swept, ev.preserved) == (5, (2, 3), (4,))
    assert a.settings().context_window == 32000  # the agent's llm_config wins over a summary's


def test_usage_command_says_the_tokens_are_not_recorded(fern, capsys):
    """adfkit usage on a Letta agent: its calls counted, tokens and cost '-', and one warning
    that says the record states no tokens (no price would help: none is asked for)."""
    from adfkit.cli import main

    path, t = fern
    assert main(["usage", str(path), "--json"]) == 0
    got = capsys.readouterr()
    (row,) = json.loads(got.out)
    assert (row["calls"], row["input"], row["cost_usd"]) == (t["n_calls"], None, None)
    assert row["compactions"] == len(t["compactions"])
    assert "the record does not state their tokens" in got.err
    assert "--prices" not in got.err
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "no price for model(s) '(none recorded)'"
        adfkit.open(path).usage()
