"""What forgetting costs: the loss ledger, survival, cache economics and recovery.

Ground truth: ``adfsynth.forgetting`` plants facts, a compaction whose summary keeps some of
them (exactly or in other words), the agent fetching others again, and records the cache
figures and the counterfactual from its own window. Real sessions: every table computes, and
the cache figures agree with the usage of the raw records (read here with ``json``).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest
from adfbuild import build, result, row, text, use
from conftest import ROOT

import adfkit
from adfkit._analysis.items import input_items, result_items, text_items
from adfsynth.forgetting import write_rollout, write_session

REAL = ROOT.parent / "shared" / "fixtures" / "transcripts"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    path = write_session(tmp_path_factory.mktemp("forgetting"))
    truth = json.loads(path.with_suffix(".truth.json").read_text())
    with adfkit.open(path) as agent:
        yield agent, truth


# -- extraction rules ----------------------------------------------------------------------
def test_items_of_a_message_follow_the_documented_rules():
    got = text_items(
        "Always run `make test` first. It took 250 ms, see src/app/up.py and https://x.org/a. "
        "We call retry_count and UploadHandler.\nTODO: drop the shim",
        "user",
    )
    assert sorted((k, v) for k, v, _ in got) == [
        ("identifier", "UploadHandler"),
        ("identifier", "retry_count"),
        ("instruction", "Always run `make test` first"),
        ("path", "src/app/up.py"),
        ("quantity", "250 ms"),
        ("todo", "drop the shim"),
        ("url", "https://x.org/a"),
    ]


def test_items_of_results_and_inputs():
    errs = result_items("collected 3\nValueError: bad value 17\n  FAILED t.py::x\nok", False)
    assert [(k, key) for k, _, key in errs if k == "error"] == [
        ("error", "valueerror bad value #"),  # digits masked: line numbers change
        ("error", "failed t py x"),
    ]
    assert result_items("boom\nmore", True)[0][:2] == ("error", "boom")
    inp = input_items(
        {"cmd": ["git", "status"], "todos": [{"content": "A", "status": "completed"},
                                             {"content": "B b", "status": "pending"}]}
    )  # fmt: skip
    assert [(k, v) for k, v, _ in inp] == [("command", "git status"), ("todo", "B b")]


def test_hostile_text_gives_no_spurious_items():
    """Long runs of near-matches (the texts that make a backtracking pattern quadratic; their
    cost is measured in ``make bench``, section forgetting) yield at most the one real item."""
    for hostile in ("a-" * 50_000, "_a" * 50_000, "1" * 100_000 + " ms", "`" + "x" * 100_000):
        assert len(text_items(hostile, "user")) <= 2


# -- the ledger on planted facts -----------------------------------------------------------
def test_ledger_has_exactly_the_planted_items(planted):
    agent, truth = planted
    led = agent.compaction_ledger()
    first = led.loc[led["event_id"] == 0]
    got = {
        (r.kind, r.value): (
            r.kept,
            None if r.saved_to is pd_na() else r.saved_to,
            None if r.needed_how is pd_na() else (r.needed_how, int(r.calls_until)),
        )
        for r in first.itertuples()
    }
    want = {
        (i["kind"], i["value"]): (i["kept"], i["saved"], i["back"] and tuple(i["back"]))
        for i in truth["items"]
    }
    assert got == want


def pd_na():
    import pandas as pd

    return pd.NA


def test_forgetting_sums_the_ledger(planted):
    agent, truth = planted
    f = agent.forgetting().iloc[0]
    items = truth["items"]
    lost = [i for i in items if i["kept"] == "lost"]
    assert f["n_items"] == len(items) == 11
    assert f["n_kept_exact"] == sum(i["kept"] == "exact" for i in items)
    assert f["n_kept_normalised"] == sum(i["kept"] == "normalised" for i in items)
    assert f["n_lost"] == len(lost) == 7
    assert f["n_saved"] == sum(i["saved"] is not None for i in items) == 2
    assert f["n_needed_again"] == sum(i["back"] is not None for i in items) == 5
    # lost, not saved, needed again: the command, the test file, the error
    assert f["n_forgotten"] == sum(not i["saved"] and i["back"] is not None for i in lost) == 3
    assert f["loss_rate"] == pytest.approx(7 / 11)
    assert f["loss_rate_path"] == pytest.approx(2 / 4)
    assert f["calls_until_last"] == 2


def test_a_reread_costs_the_result_it_brings_back(planted):
    agent, _ = planted
    led = agent.compaction_ledger()
    row = led.loc[(led["event_id"] == 0) & (led["value"] == "/w/app/src/limits.py")].iloc[0]
    h = agent.history()
    res = h.loc[h["seq"] == int(row["needed_seq"]) + 1].iloc[0]
    assert res["kind"] == "tool_result"
    assert row["refetch_tokens"] == math.ceil((res["chars"] + 16) / 3.5)


# -- survival ------------------------------------------------------------------------------
def test_survival_through_chained_summaries(planted):
    agent, truth = planted
    s = agent.item_survival()
    chains = {f"{r.kind} {r.value}": r.kept_chain.split(">") for r in s.itertuples()}
    for item, chain in truth["survival"].items():
        assert chains[item] == chain, item
    row = s.loc[s["value"] == "handle_upload"].iloc[0]
    assert (row["n_survived"], row["lost_at"], row["censored"]) == (1, 1, False)
    row = s.loc[s["value"] == "/w/app/src/limits.py"].iloc[0]
    assert (row["refreshed_at"], row["censored"]) == (1, True)
    curve = agent.survival_curve()
    first = s.loc[s["first_event"] == 0]
    n0 = len(first)
    lost0 = int((first["lost_at"] == 0).sum())
    assert curve["n_at_risk"].iloc[0] == len(s)
    assert lost0 == 7  # what the first summary dropped
    assert 0 < curve["survival"].iloc[-1] < curve["survival"].iloc[0] < 1 and n0 >= 11


# -- cache economics -----------------------------------------------------------------------
@pytest.mark.parametrize("which", ["cache", "cache_window"])
def test_cache_figures_and_counterfactual_match_the_simulator(planted, which):
    agent, truth = planted
    t = truth[which]
    c = agent.compaction_cache(k=100, window=t["window"] or 10**9).iloc[0]
    b, a = t["before"], t["after"]
    assert (c["input_before"], c["output_before"]) == (b["prompt"], b["output"])
    assert (c["cache_read_before"], c["cache_write_before"]) == (b["cache_read"], b["cache_write"])
    assert (c["input_after"], c["cache_read_after"]) == (a["prompt"], a["cache_read"])
    assert c["cache_write_after"] == a["cache_write"]
    assert c["shed_tokens"] == t["shed"]
    assert c["invalidated_tokens"] == t["invalidated"]
    assert c["n_after"] == t["n_after"]
    assert c["n_compared"] == (t["n_after"] if t["overflow"] is None else t["overflow"] - 1)
    assert c["cost_after_usd"] == pytest.approx(t["cost_after"], abs=1e-8)
    assert c["cost_no_compaction_usd"] == pytest.approx(t["cost_without"], abs=1e-8)
    assert c["net_saving_usd"] == pytest.approx(t["net"], abs=1e-8)
    assert (None if c["break_even_calls"] is pd_na() else c["break_even_calls"]) == t["break_even"]
    assert (None if c["overflow_call"] is pd_na() else c["overflow_call"]) == t["overflow"]
    assert c["provider"] == "anthropic" and c["compaction_cost_usd"] is pd_na()


def test_cache_figures_are_unknown_without_cache_fields(tmp_path):
    """A record whose calls carry no cache fields: NA, never 0."""
    p = tmp_path / "s.jsonl"
    src = write_session(tmp_path)
    lines = []
    for line in src.read_text().splitlines():
        rec = json.loads(line)
        u = rec.get("message", {}).get("usage") if isinstance(rec.get("message"), dict) else None
        if u:
            for k in ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation"):
                u.pop(k, None)
        lines.append(json.dumps(rec))
    p.write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = adfkit.open(p).compaction_cache().iloc[0]
    for col in ("cache_read_before", "invalidated_tokens", "cost_no_compaction_usd"):
        assert c[col] is pd_na(), col


# -- recovery ------------------------------------------------------------------------------
def test_recovery_against_cold_start(planted):
    agent, truth = planted
    r = agent.recovery()
    assert r["start"].tolist() == ["cold", "compaction", "compaction"]
    for i, name in enumerate(("cold", "compaction", "compaction_2")):
        t = truth["recovery"][name]
        row = r.iloc[i]
        got = (
            row["actions_to_productive"],
            row["calls_to_productive"],
            row["productive_tool"],
            row["n_reads"],
            row["reorientation_reads"],
        )
        assert got == (t["actions"], t["calls"], t["tool"], t["reads"], t["again"]), name
    assert list(r["reorientation_paths"].iloc[1]) == truth["recovery"]["reread"]


# -- the same in a Codex rollout ----------------------------------------------------------
@pytest.fixture(scope="module")
def rollout(tmp_path_factory):
    path = write_rollout(tmp_path_factory.mktemp("forgetting-codex"))
    truth = json.loads(path.with_suffix(".truth.json").read_text())
    with adfkit.open(path) as agent:
        yield agent, truth


def test_codex_ledger_has_exactly_the_planted_items(rollout):
    """Codex keeps the user's messages across a compaction: the rule is not in the ledger;
    Codex has no memory store: nothing is saved."""
    agent, truth = rollout
    led = agent.compaction_ledger()
    got = {
        (r.kind, r.value): (
            r.kept,
            None if r.needed_how is pd_na() else (r.needed_how, int(r.calls_until)),
        )
        for r in led.itertuples()
    }
    want = {
        (i["kind"], i["value"]): (i["kept"], i["back"] and tuple(i["back"])) for i in truth["items"]
    }
    assert got == want
    assert not led["saved"].any()


def test_codex_cache_follows_the_openai_rules(rollout):
    agent, truth = rollout
    t = truth["cache"]
    c = agent.compaction_cache().iloc[0]
    b, a = t["before"], t["after"]
    assert (c["input_before"], c["cache_read_before"]) == (b["input"], b["cached"])
    assert c["output_before"] == b["output"]
    # no write reported: OpenAI caches the whole prompt at the base rate
    assert c["cache_write_before"] == b["input"] - b["cached"]
    assert (c["input_after"], c["cache_read_after"]) == (a["input"], a["cached"])
    assert c["invalidated_tokens"] == t["invalidated"]
    assert c["provider"] == "openai"
    assert c["compaction_cost_usd"] == pytest.approx(t["compaction_cost"], abs=1e-8)


def test_codex_recovery(rollout):
    agent, truth = rollout
    r = agent.recovery()
    for i, name in enumerate(("cold", "compaction")):
        t = truth["recovery"][name]
        row = r.iloc[i]
        got = (row["actions_to_productive"], row["calls_to_productive"], row["productive_tool"])
        assert got == (t["actions"], t["calls"], t["tool"]), name
        assert row["reorientation_reads"] == t["again"]
    assert list(r["reorientation_paths"].iloc[1]) == truth["reread"]


# -- the same in a hand-built ADF file ------------------------------------------------------
M = "claude-sonnet-4-5-20250929"  # $3 / $15 per million in the shipped table
RULE = "Always run make check before committing"
DOCS = "https://docs.example.org/limits"
ERR = "Error: 503 Service Unavailable"


def _tok(i, o, cr, cw):
    return {"input": i, "output": o, "cache_read": cr, "cache_write": cw}


@pytest.fixture(scope="module")
def adf(tmp_path_factory):
    """Rows 1-8 swept by an audited compaction (summary 9), then 10-15. Every value here."""
    swept = [
        row(1, "user", text(f"{RULE}. The limit is 25 MB.")),
        row(2, "assistant", [use("u1", "fs_read", {"path": "src/limits.ts"})], model=M,
            tokens=_tok(1000, 10, 0, 900)),
        row(3, "user", [result("u1", "export const LIMIT = 25")]),
        row(4, "assistant", [use("u2", "sys_fetch", {"url": DOCS})], model=M,
            tokens=_tok(1500, 10, 900, 550)),
        row(5, "user", [result("u2", ERR, is_error=True)]),
        row(6, "assistant", [use("u3", "fs_write", {"path": "mind.md", "content": RULE + ".\n"})],
            model=M, tokens=_tok(2000, 10, 1450, 500)),
        row(7, "user", [result("u3", "ok")]),
        row(8, "assistant", text("Waiting for the proxy."), model=M,
            tokens=_tok(3000, 20, 2000, 900)),
    ]  # fmt: skip
    summary = (
        "[Loop Compacted, audited] Read src/limits.ts. The user wants make check run before "
        "committing.\n\n---\nYour loop was compacted."
    )
    live = [
        row(9, "user", text(summary), model=M, tokens={"input": 2500, "output": 80}),
        row(10, "assistant", [use("u4", "fs_read", {"path": "src/limits.ts"})], model=M,
            tokens=_tok(1200, 10, 0, 1100)),
        row(11, "user", [result("u4", "export const LIMIT = 25")]),
        row(12, "assistant", [use("u5", "sys_fetch", {"url": DOCS})], model=M,
            tokens=_tok(1300, 10, 1100, 150)),
        row(13, "user", [result("u5", ERR, is_error=True)]),
        row(14, "user", text(RULE + ".")),
        row(15, "assistant", text("ok"), model=M, tokens=_tok(1500, 5, 1300, 150)),
    ]  # fmt: skip
    p = build(
        tmp_path_factory.mktemp("adf") / "forget.adf",
        loop=live,
        audit=[{"source": "loop", "rows": swept}],
    )
    with adfkit.open(p) as agent:
        yield agent


def test_adf_ledger(adf):
    led = adf.compaction_ledger().set_index("value")
    want = {  # value: kind, kept, saved_to, needed_how, calls_until
        RULE: ("instruction", "normalised", "mind.md", "user", 2),
        "25 MB": ("quantity", "lost", None, None, None),
        "src/limits.ts": ("path", "exact", None, "tool_input", 1),
        DOCS: ("url", "lost", None, "tool_input", 2),
        ERR: ("error", "lost", None, "tool_result", 2),
        "mind.md": ("path", "lost", None, None, None),
    }
    got = {
        v: (r.kind, r.kept, _opt(r.saved_to), _opt(r.needed_how), _opt(r.calls_until))
        for v, r in led.iterrows()
    }
    assert got == want
    err = led.loc[ERR]
    assert err["tokens_until"] == (1200 + 10) + (1300 + 10)
    # calls 10 and 12 at $3 input, $3.75 cache write, $0.30 cache read, $15 output
    c10 = 100 * 3 + 1100 * 3.75 + 10 * 15
    c12 = 50 * 3 + 150 * 3.75 + 1100 * 0.3 + 10 * 15
    assert err["cost_until_usd"] == pytest.approx((c10 + c12) / 1e6)
    assert err["seconds_until"] == 4.0  # rows are one second apart: 9 -> 13
    assert led.loc[DOCS, "refetch_tokens"] == math.ceil((len(ERR) + 16) / 3.5)  # its result
    f = adf.forgetting().iloc[0]
    assert (f["n_items"], f["n_lost"], f["n_saved"], f["n_forgotten"]) == (6, 4, 1, 2)


def _opt(v):
    return None if v is pd_na() else v


def test_adf_cache_economics_by_hand(adf):
    c = adf.compaction_cache(k=3, window=10_000).iloc[0]
    assert (c["before_seq"], c["after_seq"]) == (8, 10)
    assert c["cached_prefix_before"] == 2900 and c["invalidated_tokens"] == 2900
    assert c["shed_tokens"] == 3000 + 20 - 1200
    assert c["compaction_cost_usd"] == pytest.approx((2500 * 3 + 80 * 15) / 1e6)
    # real: (uncached*3 + write*3.75 + read*0.3 + out*15) per million, calls 10, 12, 15
    real = (100 * 3 + 1100 * 3.75 + 150) + (50 * 3 + 150 * 3.75 + 1100 * 0.3 + 150)
    real += 50 * 3 + 150 * 3.75 + 1300 * 0.3 + 75
    assert c["cost_after_usd"] == pytest.approx(real / 1e6)
    # without: prompts 3020, 3120, 3320; each reads what the call before left in the cache
    without = (100 * 3 + 2920 * 0.3 + 150) + (50 * 3 + 40 * 3.75 + 3030 * 0.3 + 150)
    without += 50 * 3 + 140 * 3.75 + 3130 * 0.3 + 75
    assert c["cost_no_compaction_usd"] == pytest.approx(without / 1e6)
    assert c["net_saving_usd"] == pytest.approx((without - real - 8700) / 1e6)
    assert c["break_even_calls"] is pd_na()  # the compaction never paid for itself here
    # stable prefix: the smallest prompt (1000) read from the cache by the first call
    stable = (100 * 3 + 100 * 3.75 + 1000 * 0.3 + 150) + real - (100 * 3 + 1100 * 3.75 + 150)
    assert c["cost_stable_prefix_usd"] == pytest.approx(stable / 1e6)
    # the configured threshold (1000 tokens) as the window: the first call would overflow
    assert adf.compaction_cache(k=3).iloc[0]["overflow_call"] == 1


def test_adf_recovery(adf):
    r = adf.recovery()
    cols = ["actions_to_productive", "calls_to_productive", "productive_seq", "productive_tool",
            "n_reads", "reorientation_reads"]  # fmt: skip
    assert [tuple(x) for x in r[cols].itertuples(index=False)] == [
        (1, 2, 4, "sys_fetch", 1, 0),
        (1, 2, 12, "sys_fetch", 1, 1),
    ]
    assert r["seconds_to_productive"].tolist() == [3.0, 3.0]


# -- the facade ----------------------------------------------------------------------------
TABLES = ("compaction_ledger", "forgetting", "item_survival", "survival_curve",
          "compaction_cache", "recovery")  # fmt: skip


@pytest.mark.parametrize("table", TABLES)
def test_load_fleet_gives_each_table(planted, table):
    agent, _ = planted
    res = adfkit.load_fleet([agent.path, agent.path], table=table, progress=False)
    one = getattr(agent, table)()
    assert res.errors.empty
    assert len(res.df) == 2 * len(one)
    assert list(res.df.columns) == ["label", "agent", "agent_path", *one.columns]


# -- real sessions -------------------------------------------------------------------------
def _real_sessions() -> list[Path]:
    if not REAL.is_dir():
        return []
    return sorted(REAL.glob("claude-code/projects/*/*.jsonl")) + sorted(
        REAL.glob("codex/sessions/**/*.jsonl")
    )


def _need_real() -> None:
    if not REAL.is_dir():
        pytest.skip(f"real transcripts {REAL} not present (../shared is absent in a user's clone)")


@pytest.mark.parametrize(
    "path", _real_sessions() or [None], ids=lambda p: p.name[:8] if p else "none"
)
def test_every_table_computes_on_real_sessions(path):
    _need_real()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open(path) as agent:
            n = int((agent.events()["event"] == "compaction").sum())
            for table in TABLES:
                df = getattr(agent, table)()
                if table in ("forgetting", "compaction_cache"):
                    assert len(df) == n, table
            assert len(agent.recovery()) == n + 1


def _raw_calls(path: Path) -> tuple[list[tuple[int, dict]], list[int]]:
    """(line of the last block record, usage) of every main-chain API call in file order, and
    the lines of the compaction boundaries: read with json, the rules of the fixtures' README."""
    last: dict[str, tuple[int, dict]] = {}
    order: list[str] = []
    bounds = []
    for i, line in enumerate(path.read_text().splitlines()):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            bounds.append(i)
        msg = rec.get("message")
        if rec.get("type") != "assistant" or rec.get("isSidechain") or not isinstance(msg, dict):
            continue
        if msg.get("model") == "<synthetic>" or rec.get("isApiErrorMessage"):
            continue
        mid = msg.get("id")
        if mid not in last:
            order.append(mid)
        last[mid] = (i, msg.get("usage") or {})
    first_line: dict[str, int] = {}
    for i, line in enumerate(path.read_text().splitlines()):
        if '"assistant"' in line:
            try:
                m = json.loads(line).get("message")
            except json.JSONDecodeError:
                continue
            if isinstance(m, dict) and m.get("id") in last:
                first_line.setdefault(m["id"], i)
    calls = sorted((first_line[m], last[m][1]) for m in order)
    return calls, bounds


def _figures(u: dict) -> tuple[int, int, int, int]:
    cr = int(u.get("cache_read_input_tokens") or 0)
    cw = int(u.get("cache_creation_input_tokens") or 0)
    return int(u.get("input_tokens") or 0) + cr + cw, int(u.get("output_tokens") or 0), cr, cw


CLAUDE = [p for p in _real_sessions() if "claude-code" in str(p)]


def _raw_figures(path: Path) -> list[tuple[int, ...]]:
    """Per compaction boundary with a call on each side: the before call's input (cache
    included), output, cache read, cache write; the after call's input, cache read, cache
    write; and the invalidated tokens."""
    calls, bounds = _raw_calls(path)
    raw = []
    for b in bounds:
        before = [u for i, u in calls if i < b]
        after = [u for i, u in calls if i > b]
        if before and after:
            fb, fa = _figures(before[-1]), _figures(after[0])
            raw.append((*fb, fa[0], fa[2], fa[3], max(0, fb[2] + fb[3] - fa[2])))
    return raw


_COLS = ["input_before", "output_before", "cache_read_before", "cache_write_before",
         "input_after", "cache_read_after", "cache_write_after", "invalidated_tokens"]  # fmt: skip


def _adfkit_figures(path: Path) -> list[tuple[int, ...]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = adfkit.open(path).compaction_cache()
    c = c.loc[c["before_seq"].notna()]
    return [tuple(int(x) for x in r[_COLS]) for _, r in c.iterrows()]


@pytest.mark.parametrize("path", CLAUDE or [None], ids=lambda p: p.name[:8] if p else "none")
def test_cache_figures_agree_with_the_raw_records(path):
    """Every compaction whose calls adfkit sees has the figures of the raw records (a
    compaction whose earlier part the reader does not follow has NA, not other numbers)."""
    _need_real()
    raw = _raw_figures(path)
    for g in _adfkit_figures(path):
        assert g in raw


def test_cache_figures_cover_the_real_compactions():
    """Across the fixtures, the 8 compactions with both sides on the main chain (D1 3, D2 2,
    D8, D9, D10 1 each) are all measured."""
    _need_real()
    assert sum(len(_adfkit_figures(p)) for p in CLAUDE) >= 8
