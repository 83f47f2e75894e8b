"""The forgetting tables cost a call by the one usage rule: what it costs in ``usage()``.

``compaction_ledger``'s ``cost_until_usd`` sums the calls from a compaction to the row that
brought a forgotten item back. It once priced them without the file's 1-hour cache writes
(written at twice the input price, not 1.25 times), so on real Claude Code sessions it
disagreed with ``usage()`` for the very same calls.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import adfkit
from adfkit._facade.agent import agents_of

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude-code" / "projects"
#: Real sessions whose ledger has an item needed again after a compaction with calls between,
#: and whose calls wrote to the 1-hour cache.
SESSIONS = ("03a1382e", "70d782f7", "67d765b5", "c010174c", "ca8cc13b")


def _session(prefix: str) -> Path:
    if not CLAUDE.exists():
        pytest.skip(f"real Claude Code sessions not present at {CLAUDE} (../shared is absent)")
    (path,) = CLAUDE.glob(f"*/{prefix}*.jsonl")
    return path


def _usage_sum(usage: pd.DataFrame, lo: int, hi: int) -> float | None:
    """The model calls' cost with lo < seq <= hi, summed by hand from usage()."""
    calls = usage[(usage["call_kind"] == "assistant") & (usage["seq"] > lo) & (usage["seq"] <= hi)]
    if calls["cost_usd"].isna().any():
        return None
    return round(sum(float(c) for c in calls["cost_usd"]), 8)


@pytest.mark.parametrize("prefix", SESSIONS)
def test_cost_until_is_the_sum_of_usage_s_costs_of_the_same_calls(prefix: str) -> None:
    (agent,) = agents_of(adfkit.open(_session(prefix)))
    assert agent.source.cache_writes_1h(), "the session wrote to the 1-hour cache"
    usage = agent.usage()
    ledger = agent.compaction_ledger()
    needed = ledger[ledger["calls_until"].fillna(0) > 0]
    assert len(needed) > 0
    for row in needed.itertuples():
        want = _usage_sum(usage, int(row.boundary_seq), int(row.needed_seq))
        got = None if pd.isna(row.cost_until_usd) else float(row.cost_until_usd)
        assert want is not None and got is not None
        assert math.isclose(got, want, rel_tol=0, abs_tol=1e-8), (row.event_id, row.item_key)


def test_no_call_between_costs_nothing_even_where_an_earlier_call_is_unpriced() -> None:
    """An item needed again before any model call cost nothing to have back: 0, known, though
    an earlier call of the session has no price (the recorded Codex session's model is not in
    the price table)."""
    rollouts = ROOT / "tests" / "fixtures" / "recorded" / "codex" / "0.171.0"
    path = next(p for p in sorted(rollouts.rglob("rollout-*.jsonl")) if "16-22-56" in p.name)
    (agent,) = agents_of(adfkit.open(path))
    assert agent.usage()["cost_usd"].isna().any(), "some call unpriced"
    ledger = agent.compaction_ledger()
    none_between = ledger[ledger["calls_until"] == 0]
    assert len(none_between) > 0
    assert none_between["cost_until_usd"].tolist() == [0.0] * len(none_between)
    assert none_between["tokens_until"].tolist() == [0] * len(none_between)
