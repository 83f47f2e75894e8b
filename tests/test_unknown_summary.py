"""Unknown stays unknown: a Codex remote compaction keeps its summary encrypted, so its size,
compression ratio and recall are NA (never 0 or a ratio against an empty row), flagged
``summary_encrypted``, and the ratio plot says so instead of drawing a bar."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import sample
from test_codex import Roll, basic

import adfkit
from adfkit import plots

ZERO = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
        "reasoning_output_tokens": 0}  # fmt: skip


def _remote_compaction(tmp_path: Path) -> Path:
    """basic() (2 calls), then a remote compaction as Codex writes it (TRANSCRIPTS.md §0.7):
    `compacted` with an empty message and a replacement history ending in an encrypted item,
    `context_compacted`, two token_count events whose last usage is all zero but
    total_tokens, the cumulative total unchanged; then one more call."""
    r = Roll()
    basic(r)
    hist = [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "list the files"}]},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Two files."}]},
        {"type": "compaction", "encrypted_content": "OPAQUE"},
    ]  # fmt: skip
    r.add("compacted", {"message": "", "replacement_history": hist})
    r.ev("context_compacted")
    total = {"input_tokens": 230, "cached_input_tokens": 90, "output_tokens": 15,
             "reasoning_output_tokens": 4, "total_tokens": 245}  # fmt: skip
    for _ in range(2):
        info = {"total_token_usage": total, "last_token_usage": {**ZERO, "total_tokens": 940_499},
                "model_context_window": 258_400}  # fmt: skip
        r.add("event_msg", {"type": "token_count", "info": info, "rate_limits": {}})
    r.ev("task_started", turn_id="2", model_context_window=258_400)
    r.msg("user", "and the tests?")
    r.msg("assistant", "None yet.")
    r.tc((330, 90, 20, 4), (100, 0, 5, 0))
    r.ev("task_complete", turn_id="2", last_agent_message="None yet.")
    return r.write(tmp_path / "rollout-2026-03-14T09-00-00-remote.jsonl")


def test_h82_encrypted_summary_has_na_size_ratio_and_recall(tmp_path: Path) -> None:
    with adfkit.open(_remote_compaction(tmp_path)) as agent:
        comp = agent.compactions()
        with pytest.raises(adfkit.AdfError, match="encrypted"):
            agent.summary_recall(0)
    assert len(comp) == 1
    c = comp.iloc[0]
    assert c["summary_encrypted"] is np.True_
    for col in ("summary_chars", "summary_tokens", "compression_ratio", "n_recalled", "recall"):
        assert c[col] is pd.NA, col
    assert all(c[f"recall_{k}"] is pd.NA for k in adfkit.schema.ITEM_KINDS)
    # what was swept is still known: the rows left out of the replacement history
    assert c["n_swept"] == 4 and c["swept_tokens"] > 0 and c["n_identifiers"] > 0


def test_zero_usage_token_counts_after_a_remote_compaction_are_not_calls(tmp_path: Path) -> None:
    with adfkit.open(_remote_compaction(tmp_path)) as agent:
        u = agent.usage()
    assert u["tokens_input"].tolist() == [100, 130, 100]  # 940,499 is no call's usage
    assert u["tokens_total"].sum() == 110 + 135 + 105


def test_ratio_plot_says_summary_encrypted(tmp_path: Path) -> None:
    with adfkit.open(_remote_compaction(tmp_path)) as agent:
        ax = plots.compaction_ratio(agent)
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["summary encrypted"]  # no ratio, no median over an unknown size
    (bar,) = [p for p in ax.patches if p.get_gid() == "summary"]
    assert np.isnan(bar.get_height())
    plots.close(ax)


def test_readable_summaries_are_measured_and_not_flagged() -> None:
    """An ADF sample, and the Codex sample: two local compactions (summary text in the file)
    and a remote one (encrypted)."""
    with adfkit.open(sample("long-runner")) as agent:
        c = agent.compactions()
    comp = c[c["event"] == "compaction"]
    assert len(comp) and not c["summary_encrypted"].any()
    assert comp["summary_tokens"].notna().all() and comp["compression_ratio"].notna().all()
    cx = "sample_agents/codex/sessions/2026/03/14/"
    cx += "rollout-2026-03-14T09-12-33-51ea40b0-7088-4482-8231-74d06cde3e3a.jsonl"
    with pytest.warns(adfkit.AdfWarning, match="last line is incomplete"), adfkit.open(cx) as a:
        c = a.compactions()
    assert c["summary_encrypted"].tolist() == [False, False, True]
    assert c["summary_tokens"].notna().tolist() == [True, True, False]
    assert c["recall"].notna().tolist() == [True, True, False]
