"""Real Claude Code sessions and Codex rollouts against figures computed without adfkit.

``../shared/fixtures/transcripts/`` holds real transcripts laid out as on disk and
``reference.json``, exact figures an independent reader computed from the JSONL (its README
gives the rules: one call per distinct ``message.id``, usage from the last block record, the
active chain walked back from the last record, bridged in file order where a link was never
written). One test per figure and file, so a failure names both. Skipped, with the reason, when
``../shared`` is absent (a user's clone).
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import adfkit
from adfkit import AdfWarning

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "transcripts"
REFERENCE = FIXTURES / "reference.json"


def _reference() -> dict[str, dict[str, Any]]:
    if not REFERENCE.exists():
        return {}
    return json.loads(REFERENCE.read_text())


REF = _reference()
FILES = sorted(REF)
CLAUDE = [f for f in FILES if REF[f]["format"] == "claude_code"]
CODEX = [f for f in FILES if REF[f]["format"] == "codex"]
COMPACTED = [f for f in CLAUDE if REF[f]["compaction_events"]]


def _short(rel: str) -> str:
    return Path(rel).name[:8] if "rollout-" not in rel else Path(rel).name[17:36]


def _need() -> None:
    if not REF:
        pytest.skip(f"real transcripts not present at {FIXTURES} (../shared is absent in a clone)")


@cache
def _open(rel: str) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return adfkit.open(FIXTURES / rel)


def _main_part(rel: str) -> dict[str, int]:
    ref = REF[rel]
    return ref["parts"]["main"] if "parts" in ref else {**ref["tokens"], "calls": ref["api_calls"]}


def _tokens(u: pd.DataFrame) -> dict[str, int]:
    cr = int(u["tokens_cache_read"].fillna(0).sum())
    cw = int(u["tokens_cache_write"].fillna(0).sum())
    return {
        "calls": len(u),
        "input": int(u["tokens_input"].sum()) - cr - cw,
        "output": int(u["tokens_output"].sum()),
        "cache_read": cr,
        "cache_write": cw,
    }


FIGURES = ("calls", "input", "output", "cache_read", "cache_write")


@pytest.mark.parametrize("figure", FIGURES)
@pytest.mark.parametrize("rel", FILES, ids=_short)
def test_usage_of_the_main_conversation(rel: str, figure: str) -> None:
    _need()
    got = _tokens(_open(rel).usage())
    assert got[figure] == _main_part(rel)[figure]


@pytest.mark.parametrize(
    "rel", [f for f in CLAUDE if REF[f]["parts"]["sidechain"]["calls"]], ids=_short
)
def test_usage_of_sidechains_inside_the_file(rel: str) -> None:
    _need()
    subs = _open(rel).subagents()
    got = pd.concat([s.usage() for s in subs], ignore_index=True)
    want = REF[rel]["parts"]["sidechain"]
    assert {k: _tokens(got)[k] for k in FIGURES} == {k: want[k] for k in FIGURES}


@pytest.mark.parametrize("rel", [f for f in CLAUDE if REF[f]["subagent_files"]], ids=_short)
def test_usage_of_each_subagent_file(rel: str) -> None:
    _need()
    by_file = {Path(s.path).name: _tokens(s.usage()) for s in _open(rel).subagents()}
    for want in REF[rel]["subagent_files"]:
        assert by_file[want["file"]] == {k: want[k] for k in FIGURES}, want["file"]


@pytest.mark.parametrize("rel", FILES, ids=_short)
def test_every_tool_call_of_the_conversation_is_in_history(rel: str) -> None:
    _need()
    ids = set(_open(rel).tool_calls(history=True)["tool_use_id"].dropna())
    want = set(REF[rel]["tool_ids"]["main"])
    # a Codex web_search_call has no call_id: adfkit names it by its line
    want |= {f"{c['type'][:-5]}@{c['line']}" for c in REF[rel].get("tool_calls_without_id", [])}
    assert sorted(want - ids) == []
    assert sorted(ids - want) == []


@pytest.mark.parametrize(
    "rel", [f for f in CLAUDE if REF[f]["parts"]["sidechain"]["calls"]], ids=_short
)
def test_every_tool_call_of_the_sidechains_is_in_a_subagent(rel: str) -> None:
    _need()
    ids: set[str] = set()
    for s in _open(rel).subagents():
        ids |= set(s.tool_calls(history=True)["tool_use_id"].dropna())
    assert ids == set(REF[rel]["tool_ids"]["sidechain"])


@pytest.mark.parametrize(
    "rel", [f for f in CLAUDE if REF[f]["parallel_tool_ids_on_side_branch"]], ids=_short
)
def test_parallel_calls_on_side_branches_are_joined_to_their_results(rel: str) -> None:
    _need()
    tc = _open(rel).tool_calls(history=True).set_index("tool_use_id")
    side = REF[rel]["parallel_tool_ids_on_side_branch"]
    assert tc.loc[side, "matched"].all()


@pytest.mark.parametrize("event", ["compaction", "microcompaction"])
@pytest.mark.parametrize("rel", FILES, ids=_short)
def test_every_compaction_is_found(rel: str, event: str) -> None:
    _need()
    c = _open(rel).compactions()
    want = REF[rel]["compactions" if event == "compaction" else "microcompactions"]
    assert int((c["event"] == event).sum()) == want


@pytest.mark.parametrize("rel", COMPACTED, ids=_short)
def test_recorded_tokens_and_trigger_tokens_of_each_compaction(rel: str) -> None:
    _need()
    c = _open(rel).compactions()
    c = c[c["event"] == "compaction"]
    want = REF[rel]["compaction_events"]
    assert c["recorded_tokens_before"].tolist() == [e["pre_tokens"] for e in want]
    assert c["trigger_tokens"].tolist() == [e["trigger_tokens"] for e in want]
    assert c["kind"].tolist() == [e["trigger"] for e in want]


@pytest.mark.parametrize("rel", [f for f in CLAUDE if REF[f]["microcompaction_events"]], ids=_short)
def test_microcompactions_carry_their_recorded_tokens(rel: str) -> None:
    _need()
    c = _open(rel).compactions()
    c = c[c["event"] == "microcompaction"]
    want = REF[rel]["microcompaction_events"]
    assert c["recorded_tokens_before"].tolist() == [e["pre_tokens"] for e in want]
    assert c["kind"].tolist() == [e["trigger"] for e in want]


@pytest.mark.parametrize("rel", FILES, ids=_short)
def test_no_rewind_invented(rel: str) -> None:
    """None of these files has a tool call on an abandoned branch (README): a bridged gap or a
    parallel call on a side branch is never a rewind."""
    _need()
    assert "rewind" not in {e.kind for e in _open(rel).source.parsed.events}


#: Findings above ``info`` that are true of the file: the tool result that was never written
#: (D5: it is the record the boundary's ``logicalParentUuid`` names; D16: the call at line
#: 826 was interrupted, the README says).
TRUE_OF_THE_FILE = {
    "c010174c": ["tool_use_without_result"],
    "3T12-47-42-019c8a53": ["tool_use_without_result"],
}


@pytest.mark.parametrize("rel", FILES, ids=_short)
def test_opens_without_warnings(rel: str) -> None:
    """Well-formed real files open with no AdfWarning, and no integrity finding above info
    but those true of the file."""
    _need()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a = adfkit.open(FIXTURES / rel)
        a.history(), a.usage(), a.compactions(), a.replay()
        for s in a.subagents():
            s.history(), s.usage()
    f = a.integrity()
    true = TRUE_OF_THE_FILE.get(_short(rel), [])
    assert f[f["severity"].isin(["warning", "error"])]["check"].tolist() == true
    said = [str(x.message) for x in w if issubclass(x.category, AdfWarning)]
    assert [m for m in said if not any(c in m for c in true)] == []


@pytest.mark.parametrize("rel", CLAUDE, ids=_short)
def test_one_count_of_each_event_everywhere(rel: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A microcompaction is not a compaction: ``info()``, ``compactions()``'s ``event`` column
    and ``adfkit info`` count each kind apart, and agree with the file."""
    from adfkit.cli import main

    _need()
    ref = REF[rel]
    info = _open(rel).info()
    assert (info["compactions"], info["microcompactions"]) == (
        ref["compactions"],
        ref["microcompactions"],
    )
    ev = _open(rel).compactions()["event"].value_counts()
    assert (ev.get("compaction", 0), ev.get("microcompaction", 0)) == (
        ref["compactions"],
        ref["microcompactions"],
    )
    assert main(["info", str(FIXTURES / rel)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("history"))
    assert f"{ref['compactions']} compaction(s)" in line
    assert (f"{ref['microcompactions']} microcompaction(s)" in line) == bool(
        ref["microcompactions"]
    )
