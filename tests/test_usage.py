"""AgentFile.usage(): per-call tokens, running sums and cost against values written here."""

from __future__ import annotations

import json
import math
import sqlite3
import warnings

import brotli
import numpy as np
import pandas as pd
import pytest
from adfbuild import build, result, row, text, use
from conftest import runtime_fixture, sample

import adfkit
from adfkit import schema
from adfkit._analysis.usage import default_prices, load_prices, turns_frame

SONNET = "claude-sonnet-4-5-20250929"  # 3.00 / 15.00 USD per million, cache read 0.30
MINI = "gpt-5.4-mini"  # 0.75 / 4.50 (adfkit/data/prices.json)
GPT = "gpt-5.4"  # 2.50 / 15.00

SUMMARY = "[Loop Compacted, audited] - timer handled [S2]\n\n---\nYour loop was compacted."

# Timer turn with two calls, a chat turn with an unknown model, an automatic compaction
# (its summary carries the compaction call's usage), then a legacy bare-integer total.
ROWS = [
    row(1, "user", text("A scheduled timer has fired.\nPayload: digest")),
    row(
        2,
        "assistant",
        [use("t1", "msg_read", {"limit": 5})],
        model=SONNET,
        tokens={"input": 1000, "output": 200, "cache_read": 800},
    ),
    row(3, "user", [result("t1", "two messages")]),
    row(4, "assistant", text("Read them."), model=MINI, tokens={"input": 12345, "output": 678}),
    row(5, "user", text("hello there")),
    row(6, "assistant", text("Hi."), model="mystery-model", tokens={"input": 500, "output": 50}),
    row(7, "user", text(SUMMARY), model=GPT, tokens={"input": 2000, "output": 100}),
    row(8, "assistant", text("Back."), model=SONNET, tokens=777),
]


@pytest.fixture
def mixed(tmp_path):
    return build(
        tmp_path / "mixed.adf",
        loop=[r for r in ROWS if r["seq"] >= 7],
        audit=[{"source": "loop", "rows": [r for r in ROWS if r["seq"] <= 6]}],
    )


def _usage(path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        u = adfkit.open_adf(path).usage(**kw)
    return u, [w for w in caught if issubclass(w.category, adfkit.AdfWarning)]


def test_usage_rows_tokens_and_running_sums(mixed):
    """One row per call (assistant rows and the summary), tokens and running sums as written."""
    u, _ = _usage(mixed)
    assert u["seq"].tolist() == [2, 4, 6, 7, 8]
    assert u["call_kind"].astype(str).tolist() == [
        "assistant",
        "assistant",
        "assistant",
        "compaction",
        "assistant",
    ]
    assert u["model"].tolist() == [SONNET, MINI, "mystery-model", GPT, SONNET]
    assert u["tokens_input"].tolist() == [1000, 12345, 500, 2000, pd.NA]
    assert u["tokens_output"].tolist() == [200, 678, 50, 100, pd.NA]
    assert u["tokens_cache_read"].tolist() == [800, pd.NA, pd.NA, pd.NA, pd.NA]
    # the legacy bare integer is a total with no split
    assert u["tokens_total"].tolist() == [1200, 13023, 550, 2100, 777]
    assert u["cum_input"].tolist() == [1000, 13345, 13845, 15845, 15845]
    assert u["cum_output"].tolist() == [200, 878, 928, 1028, 1028]
    assert u["cum_total"].tolist() == [1200, 14223, 14773, 16873, 17650]
    assert u["epoch"].tolist() == [0, 0, 0, 1, 1]


def test_usage_cost_exact_and_unknown_model_warns_once(mixed):
    """Cost at list prices, the cache read (part of input) at its rate; NaN + one warning when
    unpriced."""
    u, warns = _usage(mixed)
    sonnet = (200 * 3.00 + 800 * 0.30 + 200 * 15.00) / 1e6  # 0.00384: 800 of 1000 read cached
    mini = (12345 * 0.75 + 678 * 4.50) / 1e6  # 0.01230975
    gpt = (2000 * 2.50 + 100 * 15.00) / 1e6  # 0.0065
    cost = u["cost_usd"].to_numpy()
    assert cost[0] == pytest.approx(0.00384, abs=1e-12) and cost[0] == pytest.approx(sonnet)
    assert cost[1] == pytest.approx(0.01230975, abs=1e-12) and cost[1] == pytest.approx(mini)
    assert math.isnan(cost[2])  # unknown model
    assert cost[3] == pytest.approx(gpt, abs=1e-12)
    assert math.isnan(cost[4])  # known model, but a bare total: no split, no cost
    assert u["cum_cost_usd"].to_numpy() == pytest.approx(
        [0.00384, 0.01614975, 0.01614975, 0.02264975, 0.02264975], abs=1e-12
    )
    assert u["price_input"].tolist()[:2] == [3.0, 0.75]
    assert u["price_cache_read"].tolist()[:2] == [0.3, 0.075]
    assert len(warns) == 1
    msg = str(warns[0].message)
    assert "'mystery-model' (1 calls)" in msg and str(mixed) in msg
    assert "legacy token total" in msg
    assert SONNET not in msg and MINI not in msg


def test_usage_price_override_mapping_and_file(mixed, tmp_path):
    """User prices add unknown models and replace shipped ones; a JSON file works the same."""
    u, warns = _usage(mixed, prices={"mystery-model": {"input": 1, "output": 10}})
    assert u["cost_usd"].iloc[2] == pytest.approx((500 * 1 + 50 * 10) / 1e6, abs=1e-12)
    assert u["cost_usd"].iloc[0] == pytest.approx(0.00384, abs=1e-12)  # shipped price kept
    assert len(warns) == 1 and "mystery-model" not in str(warns[0].message)  # legacy row only

    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"models": {SONNET: {"input": 1.0, "output": 1.0}}}))
    u2, _ = _usage(mixed, prices=f)
    # an entry without cache rates charges the cache read at its input rate
    assert u2["cost_usd"].iloc[0] == pytest.approx((1000 + 200) / 1e6, abs=1e-12)
    assert u2["cost_usd"].iloc[1] == pytest.approx(0.01230975, abs=1e-12)
    u3, _ = _usage(mixed, prices=str(f))
    assert u3["cost_usd"].iloc[0] == u2["cost_usd"].iloc[0]


def test_bad_prices_raise_clear_errors(mixed, tmp_path):
    agent = adfkit.open_adf(mixed)
    with pytest.raises(ValueError, match="prices for model 'x' must be"):
        agent.usage(prices={"x": {"input": "cheap", "output": 1}})
    with pytest.raises(ValueError, match="cannot read the price file"):
        agent.usage(prices=tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        agent.usage(prices=bad)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"caf\xe9": {"input": 1, "output": 2}}')
    with pytest.raises(adfkit.AdfError, match="latin.json: the price file is not valid JSON"):
        agent.usage(prices=latin)


def test_runtime_table_gives_the_runtimes_own_figures(mixed):
    """adfkit/data/prices-adf-runtime.json holds exactly the §9.4 table: no cache discount."""
    runtime = "adfkit/data/prices-adf-runtime.json"
    t = load_prices(runtime)
    assert {m: t[m].rates()[:2] for m in t if t[m] != default_prices().get(m)} == {
        "gpt-5.4": (2.50, 10.00),
        "gpt-5.4-mini": (0.25, 2.00),
        "gpt-5.3-codex": (3.00, 12.00),
        "gpt-5.3-codex-spark": (0.50, 2.00),
        SONNET: (3.00, 15.00),
    }
    u, _ = _usage(mixed, prices=runtime)
    assert u["cost_usd"].iloc[0] == pytest.approx((1000 * 3.00 + 200 * 15.00) / 1e6, abs=1e-12)
    assert load_prices({"m": {"input": 0, "output": 0}})["m"].rates() == (0.0,) * 5


def test_all_priced_gives_no_warning(tmp_path):
    f = build(
        tmp_path / "ok.adf",
        loop=[
            row(1, "user", text("hi")),
            row(2, "assistant", text("yo"), model=SONNET, tokens={"input": 10, "output": 2}),
        ],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u = adfkit.open_adf(f).usage()
    assert u["cost_usd"].tolist() == [pytest.approx((10 * 3 + 2 * 15) / 1e6)]


def test_usage_columns_and_dtypes(mixed):
    u, _ = _usage(mixed)
    assert list(u.columns) == list(schema.USAGE)
    for col, dtype in schema.USAGE.items():
        assert str(u[col].dtype) == dtype, col


def test_fallback_reappended_call_is_counted_once(tmp_path):
    """A fallback compaction re-appends the tail's assistant row with its tokens (§5.5)."""
    call = [use("c1", "loop_compact", {})]
    before = [
        row(1, "user", text("hello")),
        row(2, "assistant", call, model=SONNET, tokens={"input": 100, "output": 10}),
        row(3, "user", [result("c1", "Compaction initiated for 3 loop entries.")]),
    ]
    live = [
        row(4, "user", text("[Loop Compacted] - said hello\n\n---\nYour loop was compacted.")),
        row(5, "assistant", call, model=SONNET, tokens={"input": 100, "output": 10}),
        row(6, "user", [result("c1", "Compaction initiated for 3 loop entries.")]),
        row(7, "assistant", text("Done."), model=SONNET, tokens={"input": 40, "output": 4}),
    ]
    f = build(tmp_path / "fb.adf", loop=live, audit=[{"source": "loop", "rows": before}])
    u, _ = _usage(f)
    assert u["seq"].tolist() == [2, 7]
    assert int(u["cum_input"].iloc[-1]) == 140
    # Without the archive the copy is the only record of that call: it counts.
    f2 = build(tmp_path / "fb2.adf", loop=live, config={"context": {"audit": {}}})
    u2, _ = _usage(f2)
    assert u2["seq"].tolist() == [5, 7]


def test_turns_frame_on_hand_built(mixed):
    """Turns start at the trigger (seq 1) and at the chat message (seq 5)."""
    agent = adfkit.open_adf(mixed)
    h = agent.history()
    u, _ = _usage(mixed)
    t = turns_frame(h, u)
    assert t["turn"].tolist() == [1, 2]
    assert t["start_seq"].tolist() == [1, 5]
    assert t["trigger_kind"].tolist() == ["timer", "chat"]
    assert t["n_calls"].tolist() == [2, 3]
    assert t["tokens_input"].tolist() == [1000 + 12345, 500 + 2000]
    assert t["tokens_total"].tolist() == [1200 + 13023, 550 + 2100 + 777]


@pytest.mark.parametrize("name", ["clean", "long-runner", "messenger"])
def test_sample_totals_match_ground_truth(name):
    """Sum of input/output over the whole history equals what the scenario generated."""
    truth = json.loads(sample(name).with_suffix(".truth.json").read_text())
    u = adfkit.open_adf(sample(name)).usage()
    assert int(u["tokens_input"].sum()) == truth["tokens_total"]["input"]
    assert int(u["tokens_output"].sum()) == truth["tokens_total"]["output"]
    assert int(u["cum_input"].iloc[-1]) == truth["tokens_total"]["input"]
    n_summ = sum(1 for c in truth["compactions"] if c.get("summary_seq"))
    assert (u["call_kind"] == "compaction").sum() == n_summ


def test_legacy_v27_reappended_copy_left_out():
    """The truth's re-appended copy (new seq) is not a second call; the original stays."""
    truth = json.loads(sample("legacy-v27").with_suffix(".truth.json").read_text())
    copies = {r["new_seq"]: r["orig_seq"] for r in truth["reappended"]}
    agent = adfkit.open_adf(sample("legacy-v27"))
    u = agent.usage()
    seqs = set(u["seq"].tolist())
    # Only the first re-appended row (the assistant call) carries tokens (§5.5).
    h = agent.history()
    with_tokens = h[h["seq"].isin(list(copies)) & h["tokens_input"].notna()]
    assert len(with_tokens) == 1
    copy_seq = int(with_tokens["seq"].iloc[0])
    assert copies[copy_seq] in seqs and copy_seq not in seqs
    # The truth sums every stored row, the copy included.
    dup = int(with_tokens["tokens_input"].iloc[0])
    assert int(u["tokens_input"].sum()) == truth["tokens_total"]["input"] - dup


def test_legacy_v12_integer_totals():
    truth = json.loads(sample("legacy-v12").with_suffix(".truth.json").read_text())
    with pytest.warns(adfkit.AdfWarning, match="no price for model"):
        u = adfkit.open_adf(sample("legacy-v12")).usage()
    assert u["tokens_input"].isna().all()
    assert int(u["tokens_total"].sum()) == truth["tokens_total"]["integer_totals"]
    assert np.isnan(u["cost_usd"]).all()


def _raw_input_sum(path) -> tuple[int, int]:
    """(sum of tokens.input, rows with tokens) over live rows + loop blobs, one copy per seq."""
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        live = con.execute(
            "SELECT seq, json_extract(tokens, '$.input') FROM adf_loop WHERE tokens IS NOT NULL"
        ).fetchall()
        blobs = con.execute("SELECT data FROM adf_audit WHERE source = 'loop'").fetchall()
    finally:
        con.close()
    seen = {seq: inp for seq, inp in live}
    for (data,) in blobs:
        for el in json.loads(brotli.decompress(data)):
            t = el.get("tokens")
            if isinstance(t, dict) and el["seq"] not in seen:
                seen[el["seq"]] = t["input"]
    return sum(seen.values()), len(seen)


@pytest.mark.parametrize(
    "name", ["long-runner", "audited-messenger", "manual-compact", "mind-keeper", "forgetful"]
)
def test_runtime_fixture_input_sum_matches_raw(name):
    path = runtime_fixture(name)
    total, n = _raw_input_sum(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)  # mock model has no price
        u = adfkit.open_adf(path).usage()
    assert len(u) == n
    assert int(u["tokens_input"].sum()) == total
    assert u["cost_usd"].isna().all()


def test_runtime_fixture_unknown_model_warns_once():
    path = runtime_fixture("long-runner")
    _, n_calls = _raw_input_sum(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adfkit.open_adf(path).usage()
    msgs = [str(w.message) for w in caught if issubclass(w.category, adfkit.AdfWarning)]
    assert len(msgs) == 1 and f"'mock-v1' ({n_calls} calls)" in msgs[0]


def test_usage_and_replay_find_the_reappended_copies_once(monkeypatch):
    """Issue 38: the rule of re-appended copies runs once per source, whichever of usage(),
    replay() and the forgetting tables comes first (not once per table), and usage() still
    leaves the copies out (legacy-v27: seqs 121 and 122)."""
    from adfkit._analysis import replay as replay_mod
    from adfkit._analysis import usage as usage_mod

    calls = []
    real = replay_mod.reappended_copies

    def counting(h):
        calls.append(len(h))
        return real(h)

    monkeypatch.setattr(replay_mod, "reappended_copies", counting)
    monkeypatch.setattr(usage_mod, "reappended_copies", counting)
    with warnings.catch_warnings(), adfkit.open_adf(sample("legacy-v27")) as agent:
        warnings.simplefilter("ignore")
        u = agent.usage()
        agent.replay()
        agent.forgetting()
    assert len(calls) == 1
    assert not {121, 122} & set(u["seq"].tolist())
