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


def _agent(name: str) -> adfkit.AgentFile:
    """The one agent file of the recording of ``name`` (one version recorded)."""
    (folder,) = (RECORDED / name).iterdir()
    (path,) = discover(folder / "home").inputs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return adfkit.open(path)


def _truth(name: str) -> dict[str, Any]:
    (folder,) = (RECORDED / name).iterdir()
    return json.loads((folder / "truth.json").read_text())


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
