"""The compaction audit on a planted Claude Code session: two automatic compactions, the
second early, back to back with the first, with a summary four times as long, that did not
shrink the context and whose cache was written and never read; then three calls past the
threshold with no compaction (missed). Every expected finding is planted here, by hand."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from test_claude_code import Log, text, usage

import adfkit
from adfkit.cli import main

SUMMARY = "This session is being continued from a previous conversation. Summary: "


def _planted(path: Path) -> Path:
    log = Log()
    log.user("u1", None, "start")
    log.asst("a1", "u1", "m1", [text("ok")], usage(3, 1000, 158_000, 50), req="r1")
    log.system(
        "b1",
        None,
        "compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="a1",
        compactMetadata={"trigger": "auto", "preTokens": 160_000, "postTokens": 20_000},
    )
    log.user("s1", "b1", SUMMARY + "x" * 400, isCompactSummary=True)
    log.user("u2", "s1", "go on")
    log.asst("a2", "u2", "m2", [text("sure")], usage(3, 100, 20_000, 50), req="r2")
    log.system(
        "b2",
        None,
        "compact_boundary",
        content="Conversation compacted",
        logicalParentUuid="a2",
        compactMetadata={"trigger": "auto", "preTokens": 50_000, "postTokens": 48_000},
    )
    log.user("s2", "b2", SUMMARY + "y" * 1_800, isCompactSummary=True)
    parent = "s2"
    for i, prompt in enumerate((170_000, 175_000, 180_000)):
        log.user(f"u{3 + i}", parent, f"step {i}")
        # every prompt written to the cache, none read back
        log.asst(
            f"a{3 + i}",
            f"u{3 + i}",
            f"m{3 + i}",
            [text("done")],
            usage(3, prompt - 3, 0, 50),
            req=f"r{3 + i}",
        )
        parent = f"a{3 + i}"
    return log.write(path)


@pytest.fixture
def planted(tmp_path):
    path = _planted(tmp_path / "planted.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield adfkit.open(path)


def test_each_planted_finding_and_nothing_else(planted):
    audit = planted.compaction_audit()
    assert audit["kind"].tolist() == ["auto", "auto"]
    assert audit["tokens_before"].tolist() == [160_000, 50_000]
    assert audit["tokens_after"].tolist() == [20_000, 48_000]
    assert audit["calls_since_previous"].tolist() == [1, 1]
    assert [list(f) for f in audit["findings"]] == [
        [],
        ["early", "summary_grew", "back_to_back", "did_not_shrink", "cache_never_read"],
    ]
    assert audit["shrink"].tolist() == [pytest.approx(20_000 / 160_000), pytest.approx(0.96)]


def test_the_calls_past_the_threshold_are_one_missed_run(planted):
    missed = planted.missed_compactions()
    threshold = planted.settings().compact_threshold
    assert threshold is not None and threshold < 170_000
    assert len(missed) == 1
    run = missed.iloc[0]
    assert (run["n_calls"], run["max_input"]) == (3, 180_000)
    assert run["over_by"] == 180_000 - threshold


def test_check_lists_the_audit_in_text_and_json(planted, capsys):
    assert main(["check", str(planted.path), "--json"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    audit = doc["compaction_audit"]
    assert audit["counts"] == {
        "early": 1,
        "summary_grew": 1,
        "back_to_back": 1,
        "did_not_shrink": 1,
        "cache_never_read": 1,
        "missed": 1,
    }
    assert [f["event_id"] for f in audit["flagged"]] == [1]
    main(["check", str(planted.path)])
    out = capsys.readouterr().out
    assert (
        "compaction 1: early, summary_grew, back_to_back, did_not_shrink, cache_never_read" in out
    )
    assert "missed: 3 calls" in out


def test_a_fleet_counts_sessions_and_compactions_per_finding(tmp_path):
    paths = [_planted(tmp_path / f"s{i}" / "planted.jsonl") for i in range(2)]
    df, errors = adfkit.load_fleet(
        [str(p) for p in paths], "compaction_audit", engine="serial", progress=False
    )
    assert errors.empty and len(df) == 4
    per = df.groupby("agent_path")["early"].sum()
    assert per.tolist() == [1, 1]


def test_every_sample_and_fixture_audits_without_error():
    """Unknown figures (a trigger NA, no summary text, no threshold) give no finding, never an
    error: every sample agent of every format."""
    from test_otlp import _agents, _open

    for path in _agents():
        for agent in _open(path):
            audit = agent.compaction_audit()
            assert len(audit) == int((agent.compactions()["event"] == "compaction").sum())
            agent.missed_compactions()
