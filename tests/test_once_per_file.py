"""Work the tables share is done once per file, and a file without compactions costs nothing in
the compaction tables (issue 38). Each test counts or forbids the shared work itself (no
timing): it fails when a table goes back to doing that work again, or at all."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import sample

import adfkit
from adfkit import schema
from adfkit._analysis import forgetting as _forgetting
from adfkit._analysis import mind as _mind
from adfkit._analysis import settings as _settings
from adfkit._analysis.tables import tool_calls_frame
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
    real = _forgetting.usage_frame

    def counted(*a, **k):
        built.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_forgetting, "usage_frame", counted)
    agent = _open(sample("long-runner"))
    for table in FIVE:
        getattr(agent, table)()
    assert len(built) == 1


def test_history_gaps_found_once(monkeypatch):
    """The timeline, integrity and mind_history read the gaps the source found once."""
    found = []
    real = _source.gaps

    def counted(*a, **k):
        found.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_source, "gaps", counted)
    agent = _open(sample("mind-keeper"))
    agent.replay()
    agent.integrity()
    agent.mind_history()
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
