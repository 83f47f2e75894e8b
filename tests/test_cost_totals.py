"""One rule for summing cost (issue 37): :func:`adfkit._base.totals.cost_total`, the exact sum of
the costs' hundred-millionths, in ``usage()``'s ``cum_cost_usd`` and in every total of
``adfkit usage`` (its fast path, the full ``usage_days`` table, the sums per session, day and
month). Checked here against an independent exact sum (:class:`decimal.Decimal` of each cost as
printed) on every sample and fixture; the agreement with ccusage is tests/test_usage_report.py's
and tests/test_prices.py's."""

from __future__ import annotations

import math
import random
import warnings
from decimal import Decimal

import pandas as pd
import pytest
from conftest import ROOT, SAMPLES

import adfkit
from adfkit._base.totals import cost_total, running_cost_totals
from adfkit._facade.usage import reading
from adfkit._facade.usage.days import _figures as figures
from adfkit._facade.usage.days import summarize
from adfkit.cli._common import agent_inputs

SHARED = ROOT.parent / "shared" / "fixtures"


def exact(costs: list[float]) -> float:
    """The known costs' exact decimal total, correctly rounded to a float (each cost has at
    most 8 decimals: its shortest repr is that decimal)."""
    return float(sum((Decimal(repr(c)) for c in costs if not math.isnan(c)), Decimal(0)))


def test_a_total_is_the_exact_sum_whatever_the_grouping() -> None:
    rng = random.Random(37)
    for _ in range(2000):
        n = rng.choice([rng.randint(0, 12), rng.randint(100, 600)])
        xs = [round(rng.random() * rng.choice([1, 10, 1000]), 8) for _ in range(n)]
        assert cost_total(xs) == exact(xs)
        cut = rng.randint(0, n)
        assert cost_total([cost_total(xs[:cut]), cost_total(xs[cut:])]) == cost_total(xs)
        assert cost_total(list(reversed(xs))) == cost_total(xs)
        assert running_cost_totals(xs)[-1:] == ([cost_total(xs)] if xs else [])
    assert math.isnan(cost_total([1.0, math.nan]))
    # numpy's pairwise sum, the previous rule, is not exact here: a sum where the rules differ
    assert sum([0.1] * 10) != cost_total([0.1] * 10) == 1.0


def _inputs() -> list[str]:
    """Every agent input of the samples, the recordings and (when present) ../shared."""
    roots = [SAMPLES, ROOT / "tests" / "fixtures" / "recorded"]
    if SHARED.is_dir():
        roots.append(SHARED)
    return agent_inputs([str(r) for r in roots]).inputs


@pytest.fixture(scope="module")
def fleet() -> tuple[list[dict], list[tuple[str, str, str]], pd.DataFrame, pd.DataFrame]:
    """``adfkit usage``'s rows and the fleet's ``usage`` table of every input."""
    paths = _inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, errors = reading.usage_fleet(paths, engine="serial")
        calls, call_errors = adfkit.load_fleet(paths, "usage", engine="serial", progress=False)
    return rows, errors, calls, call_errors


def test_usage_running_cost_is_the_exact_sum_on_every_fixture(fleet) -> None:
    """``usage()``'s ``cum_cost_usd`` at each call is the exact total of the known costs so far,
    for every agent and subagent of every sample and fixture."""
    calls = fleet[2]
    n = 0
    for _key, u in calls.groupby(["agent_path", "agent", "subagent"], dropna=False, sort=False):
        costs = u["cost_usd"].tolist()
        want = [exact(costs[: i + 1]) for i in range(len(costs))]
        assert u["cum_cost_usd"].tolist() == want, _key
        n += len(costs)
    # the samples and recordings alone hold 1,794 calls; ../shared's fixtures add the rest
    assert n > (5000 if SHARED.is_dir() else 1500)


def test_adfkit_usage_totals_are_the_exact_sums_of_usage_on_every_fixture(fleet) -> None:
    """Each session's, day's and month's cost in ``adfkit usage`` (fast path and full table
    alike) equals the exact total of its calls' costs in the fleet's ``usage`` table (each
    agent's ``usage()`` and its subagents', compaction calls left out), to the last bit."""
    rows, errors, calls, call_errors = fleet
    assert [e[0] for e in errors] == call_errors["path"].tolist()  # the request logs
    calls = calls[calls["call_kind"].astype("string") != "compaction"]
    day = calls["created_at"].dt.strftime("%Y-%m-%d").fillna("unknown")
    key = ["agent_path", "agent"]
    groups = {
        "session": calls.groupby(key, sort=False)["cost_usd"],
        "day": calls.groupby(day.to_numpy())["cost_usd"],
        "month": calls.groupby(day.str[:7].to_numpy())["cost_usd"],
    }
    for by, group in groups.items():
        want = {k: exact(v.tolist()) for k, v in group}
        got = {
            (r["agent_path"], r["agent"]) if by == "session" else r[by]: r["cost_known_usd"]
            for r in summarize(rows, by)
            if r["calls"]
        }
        assert got == want, by
        assert len(got) >= (20 if by == "session" else 3)


def test_the_total_line_is_the_same_by_session_day_and_month() -> None:
    """The total ``adfkit usage`` prints is the same whether the rows are sessions, days or
    months (one exact sum: the grouping does not change it), and the exact total of every
    call."""
    real = SHARED / "transcripts" / "claude-code" / "projects"
    if not real.is_dir():
        pytest.skip(f"real transcripts not present at {real} (../shared is absent in a clone)")
    paths = agent_inputs([str(real), str(SAMPLES)]).inputs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, errors = reading.usage_fleet(paths, engine="serial")
        calls, _ = adfkit.load_fleet(paths, "usage", engine="serial", progress=False)
    assert not errors
    calls = calls[calls["call_kind"].astype("string") != "compaction"]
    want = exact(calls["cost_usd"].tolist())
    for by in ("session", "day", "month"):
        assert figures(summarize(rows, by))["cost_known_usd"] == want, by
