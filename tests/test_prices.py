"""Prices and cost: the shipped table (provider list prices with cache rates, each with its page
and date), the cost rule on hand-built files, and the cost of every real fixture session against
ccusage's figures."""

from __future__ import annotations

import json
import math
import re
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import adfkit
from adfkit._analysis.usage import default_prices, load_prices

TRANSCRIPTS = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "transcripts"

# Cost per session from ccusage 20.0.24, an independent peer (its prices are LiteLLM's table),
# run offline on ../shared/fixtures/transcripts:
#   npm install ccusage@20.0.24   (in /tmp/ccu)
#   CLAUDE_CONFIG_DIR=<dir whose projects/ is the fixtures' claude-code/projects> \
#       npx ccusage session --json --offline                    -> session[].totalCost
#   CODEX_HOME=<dir whose sessions/ is the fixtures' codex/sessions> \
#       npx ccusage codex session --json --offline              -> sessions[].costUSD
# A Claude Code session's figure includes its sidechains (D13) and subagent files (D14). The
# session report leaves out Task subagents older Claude Code wrote only as agent_progress records
# (issue 33 item 5), which ccusage's daily report counts: for 03a1382e, 67d765b5 and ca8cc13b
# (each alone on its day) the figure is `ccusage daily --json --offline`'s for that day.
CCUSAGE_20_0_24 = {
    "6113e919-67d3-417b-b525-c63700228d19": 23.954783499999987,
    "0442a060-edc3-4307-bddb-11a2951fd1a1": 16.448330250000005,
    "70d782f7-b303-4e48-9512-6bec16c37abd": 14.320965999999999,
    "03a1382e-ecd5-42c4-b3d4-5c659e165904": 12.702731699999996,
    "847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1": 10.870234750000007,
    "c010174c-a7cd-4bcc-b7d4-61258d6c463f": 10.417100500000005,
    "67d765b5-4286-4ec5-b051-950466e186f0": 9.2469898,
    "ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9": 8.393420199999998,
    "0cd9edf7-459c-4900-af40-cf2c64dea525": 4.67740025,
    "cde341db-b80a-44f5-b0f2-94db2ef7a164": 2.4244437500000005,
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b": 2.3932151999999998,
    "5e231473-1e70-45c5-9c18-6510ac844c99": 1.668696,
    "c26d2153-23c8-42ed-ab6c-808579b64e5b": 0.8850675,
    "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68": 0.33618425,
    "rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a": 2.34483935,
    "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a": 2.33318995,
}


def _session_file(sid: str) -> Path:
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"real transcripts {TRANSCRIPTS} not present (../shared is absent)")
    hits = [p for p in TRANSCRIPTS.rglob(f"{sid}.jsonl") if "subagents" not in p.parts]
    assert len(hits) == 1, hits
    return hits[0]


def _cost(agent: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("error", adfkit.AdfWarning)  # every model is priced
        u = agent.usage()
        sub = [s.usage() for s in agent.subagents()]
    assert u["cost_usd"].notna().all()
    return float(u["cost_usd"].sum()) + sum(float(s["cost_usd"].sum()) for s in sub)


@pytest.mark.parametrize("sid", list(CCUSAGE_20_0_24))
def test_cost_of_real_session_agrees_with_ccusage(sid: str) -> None:
    with adfkit.open(_session_file(sid)) as agent:
        cost = _cost(agent)
    assert cost == pytest.approx(CCUSAGE_20_0_24[sid], rel=0.01)


# --- the shipped table ---------------------------------------------------------------------


def _shipped() -> dict[str, Any]:
    text = resources.files("adfkit").joinpath("data/prices.json").read_text("utf-8")
    return json.loads(text)["models"]


def test_every_shipped_price_names_its_provider_page_and_date() -> None:
    for model, p in _shipped().items():
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", p["as_of"]), model
        if model.startswith("claude-"):
            assert p["source"] == "https://platform.claude.com/docs/en/about-claude/pricing"
            # Anthropic: read 0.1x, 5-minute write 1.25x, 1-hour write 2x the base input
            assert p["cache_read"] == pytest.approx(0.1 * p["input"]), model
            assert p["cache_write"] == pytest.approx(1.25 * p["input"]), model
            assert p["cache_write_1h"] == pytest.approx(2 * p["input"]), model
        else:
            assert p["source"] == "https://platform.openai.com/docs/pricing"
            assert 0 < p["cache_read"] < p["input"], model  # cached input at its discount
            assert "cache_write" not in p  # OpenAI does not charge cache writes


def test_every_model_of_the_real_fixtures_is_priced() -> None:
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"real transcripts {TRANSCRIPTS} not present (../shared is absent)")
    models = set()
    for p in TRANSCRIPTS.rglob("*.jsonl"):
        models |= set(re.findall(r'"model":\s*"((?:claude|gpt)-[^"<]+)"', p.read_text("utf-8")))
    assert models >= {"claude-opus-4-6", "gpt-5.3-codex", "claude-haiku-4-5-20251001"}
    assert sorted(models - set(default_prices())) == []


def test_prices_for_the_fixture_models_as_the_provider_pages_give_them() -> None:
    t = default_prices()
    assert t["claude-opus-4-6"].rates() == (5.0, 25.0, 0.5, 6.25, 10.0)
    assert t["claude-opus-4-5-20251101"] == t["claude-opus-4-6"]
    assert t["claude-sonnet-4-20250514"].rates() == (3.0, 15.0, 0.3, 3.75, 6.0)
    assert t["claude-haiku-4-5-20251001"].rates() == (1.0, 5.0, 0.1, 1.25, 2.0)
    assert t["gpt-5.3-codex"].rates() == (1.75, 14.0, 0.175, 1.75, 1.75)


# --- the cost rule on hand-built files ------------------------------------------------------


def _claude_session(tmp_path: Path, usage: dict[str, Any], model: str) -> Path:
    sid = "11111111-2222-3333-4444-555555555555"
    env = {"sessionId": sid, "cwd": "/p", "version": "2.1.42", "isSidechain": False}
    recs = [
        {**env, "type": "user", "uuid": "u1", "parentUuid": None,
         "timestamp": "2026-03-01T10:00:00.000Z",
         "message": {"role": "user", "content": "hi"}},
        {**env, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "timestamp": "2026-03-01T10:00:01.000Z", "requestId": "req_1",
         "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                     "content": [{"type": "text", "text": "yo"}], "usage": usage}},
    ]  # fmt: skip
    p = tmp_path / f"{sid}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return p


def _one_cost(path: Path, **kw: Any) -> tuple[float, Any]:
    with adfkit.open(path) as a:
        u = a.usage(**kw)
    assert len(u) == 1
    return float(u["cost_usd"].iloc[0]), u.iloc[0]


def test_claude_code_cost_charges_each_cache_part_at_its_rate(tmp_path: Path) -> None:
    usage = {
        "input_tokens": 10, "output_tokens": 1000, "cache_read_input_tokens": 200_000,
        "cache_creation_input_tokens": 5000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 4000},
    }  # fmt: skip
    cost, row = _one_cost(_claude_session(tmp_path, usage, "claude-opus-4-6"))
    # 10 x $5 + 200,000 x $0.50 + 1,000 x $6.25 + 4,000 x $10 + 1,000 x $25, per million
    assert cost == pytest.approx((50 + 100_000 + 6250 + 40_000 + 25_000) / 1e6, abs=1e-12)
    assert row["tokens_cache_write"] == 5000 and row["tokens_cache_write_1h"] == 4000
    assert row["price_cache_write_1h"] == 10.0 and row["price_cache_read"] == 0.5


def test_a_cache_write_without_its_ttl_split_is_a_5_minute_write(tmp_path: Path) -> None:
    usage = {"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 1000}
    cost, row = _one_cost(_claude_session(tmp_path, usage, "claude-haiku-4-5"))
    assert cost == pytest.approx((10 * 1 + 1000 * 1.25 + 10 * 5) / 1e6, abs=1e-12)
    assert row["tokens_cache_write_1h"] is pd.NA


def test_user_prices_replace_the_shipped_entry_and_fall_back_to_the_input_rate(
    tmp_path: Path,
) -> None:
    usage = {"input_tokens": 10, "output_tokens": 10, "cache_read_input_tokens": 1000}
    p = _claude_session(tmp_path, usage, "claude-opus-4-6")
    cost, _ = _one_cost(p, prices={"claude-opus-4-6": {"input": 1, "output": 2}})
    assert cost == pytest.approx((1010 * 1 + 10 * 2) / 1e6, abs=1e-12)  # no cache rate: input
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"models": {"claude-opus-4-6": {"input": 1, "output": 2,
                                                              "cache_read": 0.5}}}))  # fmt: skip
    cost, _ = _one_cost(p, prices=f)
    assert cost == pytest.approx((10 * 1 + 1000 * 0.5 + 10 * 2) / 1e6, abs=1e-12)


def test_an_unpriced_model_costs_nan_never_zero(tmp_path: Path) -> None:
    usage = {"input_tokens": 10, "output_tokens": 10}
    p = _claude_session(tmp_path, usage, "claude-imaginary-9")
    with pytest.warns(adfkit.AdfWarning, match="no price for model.*claude-imaginary-9"):
        cost, row = _one_cost(p)
    assert math.isnan(cost) and math.isnan(row["price_cache_read"])


def test_the_adf_runtime_table_ships_for_the_runtimes_own_figures() -> None:
    f = resources.files("adfkit").joinpath("data/prices-adf-runtime.json")
    t = load_prices(str(f))
    assert t["gpt-5.3-codex"].rates() == (3.0, 12.0, 3.0, 3.0, 3.0)  # §9.4, no cache discount
    assert t["claude-opus-4-6"] == default_prices()["claude-opus-4-6"]  # the rest unchanged


def test_a_call_on_an_abandoned_branch_is_priced_with_its_1_hour_write(tmp_path: Path) -> None:
    """A resume that answered again: both calls were paid for, each at its cache rates."""
    from test_claude_code import Log

    def u(out: int) -> dict[str, Any]:
        return {"input_tokens": 10, "output_tokens": out, "cache_creation_input_tokens": 1000,
                "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                   "ephemeral_1h_input_tokens": 1000}}  # fmt: skip

    log = Log()
    log.user("u1", None, "question")
    log.asst("a1", "u1", "m1", [{"type": "text", "text": "first"}], u(5), model="claude-opus-4-6")
    log.asst("a2", "u1", "m2", [{"type": "text", "text": "again"}], u(6), model="claude-opus-4-6")
    with adfkit.open(log.write(tmp_path / "s.jsonl")) as a, warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)  # the rewind is flagged
        got = a.usage()
    assert got["branch"].notna().tolist().count(True) == 1
    assert got["tokens_cache_write_1h"].tolist() == [1000, 1000]
    # 10 x $5 + 1,000 x $10 (1-hour write) + output x $25, per million
    assert sorted(got["cost_usd"]) == [
        pytest.approx((50 + 10_000 + o * 25) / 1e6, abs=1e-12) for o in (5, 6)
    ]


def test_a_call_whose_cache_parts_exceed_its_input_costs_nan_and_says_why(tmp_path: Path) -> None:
    """``input`` includes the cache parts: a call reporting more cache than input cannot be
    priced, and the warning says so (it is no legacy total)."""
    from adfbuild import build, row, text

    m = "claude-sonnet-4-5-20250929"
    bad = {"input": 100, "output": 5, "cache_read": 90, "cache_write": 40}
    good = {"input": 100, "output": 5, "cache_read": 50, "cache_write": 10}
    loop = [
        row(1, "user", text("hi")),
        row(2, "assistant", text("a"), model=m, tokens=bad),
        row(3, "user", text("more")),
        row(4, "assistant", text("b"), model=m, tokens=good),
    ]
    path = build(tmp_path / "a.adf", loop=loop)
    with adfkit.open_adf(path) as agent, pytest.warns(adfkit.AdfWarning) as rec:
        u = agent.usage()
    assert u["cost_usd"].isna().tolist() == [True, False]
    (msg,) = [str(w.message) for w in rec]
    assert "1 call(s) report cache parts larger than their input" in msg
    assert "legacy" not in msg


def test_a_provider_prefixed_model_id_has_its_bare_ids_price():
    """OpenHands (through LiteLLM) and Inspect AI write ``anthropic/claude-...``: each call is
    priced as the bare id is (Anthropic's list price for Claude Sonnet 4.5: 3 / 15 USD per
    million input / output, reads 0.30, 5-minute writes 3.75), not left unknown."""
    samples = Path(__file__).resolve().parent.parent / "sample_agents"
    folder = samples / "openhands" / "conversations"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        u = adfkit.open(folder / "02ff349d4f874aa39c2b9d9f2ae75e2e").usage()
    calls = u[u["model"] == "anthropic/claude-sonnet-4-5-20250929"]
    assert len(calls) == 32
    tin, out = calls["tokens_input"], calls["tokens_output"]
    read, write = calls["tokens_cache_read"].fillna(0), calls["tokens_cache_write"].fillna(0)
    by_hand = ((tin - read - write) * 3 + out * 15 + read * 0.3 + write * 3.75) / 1e6
    assert calls["cost_usd"].tolist() == pytest.approx(by_hand.tolist(), abs=1e-8)
    assert calls["cost_usd"].notna().all()
