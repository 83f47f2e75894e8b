"""Work the tables share is done once per file, and a file without compactions costs nothing in
the compaction tables (issue 38). Each test counts or forbids the shared work itself (no
timing): it fails when a table goes back to doing that work again, or at all."""

from __future__ import annotations

import warnings
from pathlib import Path

import orjson
import pandas as pd
import pytest
from conftest import sample

import adfkit
from adfkit import schema
from adfkit._analysis import forgetting as _forgetting
from adfkit._analysis import kept as _kept
from adfkit._analysis import mind as _mind
from adfkit._analysis import settings as _settings
from adfkit._analysis import tables as _tables
from adfkit._analysis.tables import blocks_frame, tool_calls_frame, tool_calls_of
from adfkit._core import source as _source

ROOT = Path(__file__).resolve().parent.parent
#: An OpenHands conversation of the samples without any compaction.
NO_COMPACTION = (
    ROOT / "sample_agents" / "openhands" / "conversations" / "e82659d1ad6244a3809906d6698e1087"
)
FIVE = ("compaction_ledger", "forgetting", "item_survival", "compaction_cache", "recovery")


def _open(path: Path) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(path)
    assert isinstance(agent, adfkit.AgentFile)
    return agent


def _forbid(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> None:
    def fail(*_a: object, **_k: object) -> None:
        raise AssertionError(f"{name} was called")

    monkeypatch.setattr(module, name, fail)


def test_no_compaction_no_price_or_call_lookup(monkeypatch):
    """Without a compaction the ledger, forgetting, survival and cache tables look up no
    price, call, save or tool call: each is its empty frame with the schema's columns."""
    agent = _open(NO_COMPACTION)
    assert len(agent.compactions()) == 0
    for name in ("_calls", "_saves", "_results_of"):
        _forbid(monkeypatch, _forgetting, name)
    for table, cols in (
        ("compaction_ledger", schema.COMPACTION_LEDGER),
        ("forgetting", schema.FORGETTING),
        ("item_survival", schema.ITEM_SURVIVAL),
        ("compaction_cache", schema.COMPACTION_CACHE),
    ):
        got = getattr(agent, table)()
        assert got.empty
        assert {c: str(t) for c, t in got.dtypes.items()} == {
            c: str(t) for c, t in schema.frame([], cols).dtypes.items()
        }
    assert agent.refetches().empty and agent.compaction_audit().empty


def test_the_calls_are_priced_once_for_the_five_tables(monkeypatch):
    """The forgetting tables share one priced call list per source (three usage frames
    were built for them before)."""
    built = []
    real = _forgetting.history_usage

    def counted(*a, **k):
        built.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_forgetting, "history_usage", counted)
    agent = _open(sample("long-runner"))
    for table in FIVE:
        getattr(agent, table)()
    assert len(built) == 1


def test_history_gaps_found_once(monkeypatch):
    """The timeline, integrity and mind_history read the gaps the source found once."""
    found = []
    real = _source.gap_ranges

    def counted(*a, **k):
        found.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_source, "gap_ranges", counted)
    agent = _open(sample("mind-keeper"))
    agent.replay()
    agent.integrity()
    agent.mind_history()
    agent.compactions()  # its trigger tokens read the gaps as lists: the same ones
    assert len(found) == 1
    pd.testing.assert_frame_equal(agent.source.history_gaps(), agent.source.history_gaps())


def test_no_mind_injection_no_context_blocks(monkeypatch):
    """mind_history() builds the context blocks only when a context row injects mind.md."""
    _forbid(monkeypatch, _mind, "context_blocks")
    agent = _open(NO_COMPACTION)
    assert agent.mind_history().empty


def test_no_config_change_no_result_texts(monkeypatch):
    """config_changes() reads no tool result without a sys_update_config call or task."""
    _forbid(monkeypatch, _settings, "result_texts")
    agent = _open(NO_COMPACTION)
    assert agent.config_changes().empty


def test_empty_frames_are_fresh_copies():
    """schema.frame() of no rows builds each empty frame once: every caller gets a copy of
    its own, with the schema's dtypes."""
    a = schema.frame([], schema.FORGETTING)
    a["event_id"] = pd.array([], dtype="Int64")
    a["extra"] = pd.array([], dtype="Int64")
    b = schema.frame({}, schema.FORGETTING)
    assert list(b.columns) == list(schema.FORGETTING)
    assert [str(t) for t in b.dtypes] == list(schema.FORGETTING.values())


def test_tool_calls_join_by_hand():
    """Each call joined to the first result with its id; a result without an id (or with an
    empty one) joins nothing; a call without a result has NA result columns."""
    blocks = pd.DataFrame(
        {
            "seq": pd.array([1, 2, 2, 3, 4, 4], dtype="Int64"),
            "block_index": pd.array([0, 0, 1, 0, 0, 1], dtype="Int64"),
            "type": pd.array(
                ["tool_use", "tool_result", "tool_use", "tool_result", "tool_result", "tool_use"],
                dtype="string",
            ),
            "text": pd.array([None, "ok " * 200, None, "second", "none", None], dtype="string"),
            "tool_use_id": pd.array(["a", "a", None, "a", None, ""], dtype="string"),
            "tool_name": pd.array(["Read", None, "Bash", None, None, "Edit"], dtype="string"),
            "tool_input": pd.array(['{"p":1}', None, "{}", None, None, "{}"], dtype="string"),
            "is_error": pd.array([None, True, None, False, False, None], dtype="boolean"),
            "chars": pd.array([7, 600, 2, 6, 4, 2], dtype="Int64"),
        }
    )
    times = pd.to_datetime([1000, 2000, 3000, 4000], unit="ms", utc=True).as_unit("ms")
    loop = pd.DataFrame({"seq": pd.array([1, 2, 3, 4], dtype="Int64"), "created_at": times})
    tc = tool_calls_frame(blocks, loop)
    assert tc["tool_name"].tolist() == ["Read", "Bash", "Edit"]
    assert tc["result_seq"].tolist() == [2, pd.NA, pd.NA]
    assert tc["result_chars"].tolist() == [600, pd.NA, pd.NA]
    assert tc["result_preview"].iloc[0] == ("ok " * 200)[:300]
    assert tc["is_error"].tolist() == [True, pd.NA, pd.NA]
    assert tc["matched"].tolist() == [True, False, False]
    assert tc["created_at"].tolist() == [times[0], times[1], times[3]]
    assert str(tc["created_at"].dtype) == "datetime64[ms, UTC]"


def test_compactions_parse_the_history_once_and_build_no_blocks(monkeypatch):
    """compactions() reads each history row's content once for the items and the tool calls
    its refetches need, and builds no blocks frame (the tool calls are taken from the rows
    directly); the tool calls it leaves behind are those of the blocks frame, row for row."""
    agent = _open(sample("long-runner"))
    h = agent.history()
    n_events = len(agent.source.events())
    expected = tool_calls_frame(blocks_frame(h), h)
    agent = _open(sample("long-runner"))  # a fresh handle: nothing built yet
    agent.history()
    parsed = []
    for module in (_tables, _kept):
        real = module.parse_content

        def counted(raw, _real=real):
            parsed.append(1)
            return _real(raw)

        monkeypatch.setattr(module, "parse_content", counted)
    _forbid(monkeypatch, _tables, "blocks_frame")
    assert len(agent.compactions()) == n_events
    # each row once, and each summary's text once more (what it kept is read from it)
    assert len(h) < len(parsed) <= len(h) + n_events
    pd.testing.assert_frame_equal(agent.tool_calls(history=True), expected)


def test_tool_calls_without_the_blocks_frame_by_hand():
    """tool_calls_of() gives what tool_calls_frame() of the blocks frame gives, hostile blocks
    included: a block without a type, a result without an id or with an empty one, ids that
    are numbers, a call's input nested too deep to write back, a result twice, text that is
    not JSON, content that is not text, a result that is a list of parts."""
    rows = [
        [{"type": "tool_use", "id": "a", "name": "Read", "input": {"p": "x é"}}, {"text": "x"}],
        [{"type": "tool_result", "tool_use_id": "a", "content": "ok " * 200, "is_error": 1}],
        None,  # a call whose input nests deeper than orjson writes (the stdlib writes it)
        [{"type": "tool_result", "tool_use_id": 7, "content": [{"type": "text", "text": "n"}]}],
        [{"type": "tool_result", "tool_use_id": "a", "content": "second"}],
        [{"type": "tool_result", "content": "no id"}, {"type": "tool_use", "id": ""}],
        [{"type": "tool_result", "tool_use_id": "", "content": "empty id"}],
        [{"type": "tool_use", "name": "NoId", "input": {}}, {"type": None}],
    ]
    content = [None if r is None else orjson.dumps(r).decode() for r in rows]
    content[2] = '[{"type":"tool_use","id":7,"input":' + "[" * 300 + "1" + "]" * 300 + "}]"
    content += ["not json", None]
    n = len(content)
    times = pd.to_datetime(range(1000, 1000 * (n + 1), 1000), unit="ms", utc=True).as_unit("ms")
    loop = pd.DataFrame(
        {
            "seq": pd.array(range(1, n + 1), dtype="Int64"),
            "content": pd.array(content, dtype="string"),
            "created_at": times,
        }
    )
    got = tool_calls_of(loop)
    pd.testing.assert_frame_equal(got, tool_calls_frame(blocks_frame(loop), loop))
    assert got["tool_use_id"].tolist() == ["a", "7", "", pd.NA]
    assert got["result_seq"].tolist() == [2, 4, pd.NA, pd.NA]
    # a result given as parts is read as JavaScript's String() of them: "[object Object]"
    assert got["result_chars"].tolist() == [600, 15, pd.NA, pd.NA]
    assert got["tool_name"].tolist() == ["Read", "None", "None", "NoId"]
    assert got["is_error"].tolist() == [True, False, pd.NA, pd.NA]


@pytest.mark.parametrize("name", ["long-runner", "mind-keeper"])
def test_no_table_but_blocks_builds_the_blocks_frame(monkeypatch, name):
    """integrity(), config_changes(), mind_history() and the compaction tables read the tool
    calls, their ids and the results' texts from one walk of the history's rows, not from
    the blocks frame (whose text column is most of the content); the results' texts are the
    blocks frame's, each id's first."""
    agent = _open(sample(name))
    b = blocks_frame(agent.history())
    expected: dict[str, str] = {}
    for t, u, text in zip(b["type"], b["tool_use_id"], b["text"], strict=True):
        if t == "tool_result" and isinstance(u, str) and u:
            expected.setdefault(u, text)
    agent = _open(sample(name))
    _forbid(monkeypatch, _tables, "blocks_frame")
    for table in ("integrity", "config_changes", "mind_history", "compactions", *FIVE):
        getattr(agent, table)()
    texts = _tables.result_texts(agent.source)
    assert dict(texts) == expected and len(expected)


def test_reappended_copies_found_once(monkeypatch):
    """replay(), usage() and the forgetting tables share one search for a fallback
    compaction's re-appended copies per source (usage and forgetting each made their own)."""
    from adfkit._analysis import replay as _replay
    from adfkit._analysis import usage as _usage

    found = []

    def counted(real):
        def count(*a, **k):
            found.append(1)
            return real(*a, **k)

        return count

    for module in (_replay, _usage):
        monkeypatch.setattr(module, "reappended_copies", counted(module.reappended_copies))
    agent = _open(sample("legacy-v27"))  # a fallback compaction: copies 121 and 122
    agent.replay()
    u = agent.usage()
    agent.forgetting()
    assert len(found) == 1
    # the call at seq 118 counted once: its copy at 121 is no second call
    assert 118 in set(u["seq"]) and 121 not in set(u["seq"])


def test_compactions_build_no_tool_call_refetch_or_audit_frame(monkeypatch):
    """compactions() of an Inspect sample (issue 38: a cost per sample) reads the history's
    tool calls as tuples and the refetches as records, and reads no audit table when every
    summary row is in the history; the frames made afterwards agree with it."""
    from adfkit._analysis import compactions as _compactions
    from adfkit._sources.transcript.source import TranscriptSource

    path = ROOT / "sample_agents" / "inspect" / "2026-06-01T08-00-00+00-00_tide-drift-summary.eval"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(path)[0]
    _forbid(monkeypatch, _tables._CallBlocks, "frame")
    _forbid(monkeypatch, _compactions, "_refetches")
    _forbid(monkeypatch, TranscriptSource, "_audit")
    c = agent.compactions()
    assert len(c) >= 1 and c["summary_seq"].notna().all()
    monkeypatch.undo()
    h = agent.history()
    pd.testing.assert_frame_equal(
        agent.tool_calls(history=True), tool_calls_frame(blocks_frame(h), h)
    )
    r = agent.refetches()
    assert c["n_refetches"].sum() == len(r)
    assert c["refetch_tokens"].sum() == r["result_tokens"].fillna(0).sum()


def test_compactions_and_usage_read_the_history_without_copying_it(monkeypatch):
    """An Inspect sample's compactions() and usage() read its history frame as it is held
    (history_view(): a copy of its 28 columns cost every analysis of every sample); the
    frame is not changed by them."""
    from adfkit._sources.transcript.source import TranscriptSource

    path = ROOT / "sample_agents" / "inspect" / "2026-06-01T08-00-00+00-00_tide-drift-summary.eval"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(path)[0]
        before = agent.history()
        _forbid(monkeypatch, TranscriptSource, "history")
        assert len(agent.compactions()) >= 1 and len(agent.usage()) >= 1
    monkeypatch.undo()
    assert agent.source.history_view() is agent.source.history_view()
    pd.testing.assert_frame_equal(agent.history(), before)
