"""simulate() on the agents' recorded files (tests/fixtures/recorded): unknown figures stay
unknown, and each format's own compaction rule reproduces the recorded compaction points."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import adfkit
from adfkit._core.registry import discover

RECORDED = Path(__file__).parent / "fixtures" / "recorded"


def _folder(name: str) -> Path:
    """The recording of ``name`` (one version recorded; a variant of its layout,
    ``<version>-<layout>``, beside it is left out)."""
    (folder,) = [d for d in (RECORDED / name).iterdir() if "-" not in d.name]
    return folder


def _agent(name: str) -> adfkit.AgentFile:
    """The one agent file of the recording of ``name``."""
    (path,) = discover(_folder(name) / "home").inputs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return adfkit.open(path)


def _truth(name: str) -> dict[str, Any]:
    return json.loads((_folder(name) / "truth.json").read_text())


def _compaction_input(name: str) -> int:
    """The compaction calls' input as the recording server saw it."""
    return sum(c["usage"]["input"] for c in _truth(name)["per_call"] if c["kind"] == "compaction")


# -- unknown stays unknown -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["claude-code", "gemini-cli", "pi"])
def test_unrecorded_compaction_calls_are_na_not_zero(name: str) -> None:
    """These formats write no usage for their compaction calls (the server saw them): the
    recorded figures that hold them are NA, never 0."""
    assert _compaction_input(name) > 0  # the calls were made
    res = adfkit.simulate(_agent(name), adfkit.ThresholdPolicy())
    s = res.summary
    assert s["n_real_compactions"] >= 1
    assert s["compaction_input_actual"] is None
    assert s["tokens_sent_actual"] is None
    assert s["tokens_sent_ratio"] is None
    assert s["calls_input_actual"] > 0  # the model calls' usage is recorded
    assert "vs ->" in repr(res)
    sweep = adfkit.simulate_sweep(_agent(name), [10**6])
    assert pd.isna(sweep["tokens_sent_actual"].iloc[0])
    assert pd.isna(sweep["tokens_saved"].iloc[0])


@pytest.mark.parametrize("name", ["copilot-cli", "qwen-code"])
def test_recorded_compaction_calls_are_summed(name: str) -> None:
    """Where the file records the compaction calls' usage, their total is the server's."""
    s = adfkit.simulate(_agent(name), adfkit.ThresholdPolicy()).summary
    assert s["compaction_input_actual"] == _compaction_input(name)
    assert s["tokens_sent_actual"] == s["calls_input_actual"] + _compaction_input(name)


# -- the format's own count -------------------------------------------------------------------
def _inputs_before_compressions(name: str) -> list[int]:
    """The prompt tokens (the server's usage) of the turn call right before each recorded
    compression (a compression is two calls, after a turn call)."""
    out, last = [], None
    for c in _truth(name)["per_call"]:
        if c["kind"] != "compaction":
            last = c["usage"]["input"]
        elif last is not None:
            out.append(last)
            last = None
    return out


def test_gemini_cli_compresses_on_the_last_prompt_per_process() -> None:
    """Gemini CLI compares the last call's prompt tokens (not prompt + output + what was
    written since) with its threshold, and a new process (each turn of the recording is a
    ``--resume``) counts afresh: at the recorded threshold (0.018 of 1,048,576 tokens, the
    recording's notes) the simulation compresses right after the calls Gemini CLI did."""
    agent = _agent("gemini-cli")
    threshold = int(0.018 * 1_048_576)
    assert threshold == 18_874
    res = adfkit.simulate(agent, adfkit.ThresholdPolicy(threshold))
    calls = res.calls.set_index("seq")
    auto = res.events[res.events["kind"] == "auto"]
    seqs = [int(q) for q in res.calls["seq"]]
    after = [seqs[seqs.index(int(b)) - 1] for b in auto["before_call"]]
    got = [int(calls.loc[q, "tokens_input_real"]) for q in after]
    want = _inputs_before_compressions("gemini-cli")  # the request log's prompt tokens
    assert got == want and len(want) == 2
    assert after == [24, 39]  # the calls the chat's compressions follow
    # each of the 5 turns is a process of its own (the recording's notes): its first call
    turns = [c["phase"] for c in _truth("gemini-cli")["per_call"]]
    assert len(set(turns)) == len(agent.source.process_starts()) == 5
    assert agent.source.process_starts() == [3, 11, 24, 33, 39]
    assert auto["matches_real"].all()
    assert res.summary["n_compactions"] == res.summary["n_real_compactions"] == 2
