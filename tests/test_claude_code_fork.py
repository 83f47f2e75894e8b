"""A session forked with ``claude --resume ID --fork-session`` (Claude Code 2.1.332, recorded
in ``fixtures/recorded/claude-code/2.1.332-fork``): the new file copies the parent's records,
its copied assistant records marked ``requestSessionId`` (the parent's session). Each paid call
counts once, in the session that made it; the copies stay in the fork's history.

The figures are the server's log (``requests.jsonl``: every request once, as answered), the
records themselves read by message and request id as ccusage reads them, and ccusage 20.0.24's
own reports on the folder."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path

import pytest
from test_usage_report import _ccusage

import adfkit
from adfkit import load_fleet
from adfkit._facade.usage import reading as uf

FOLDER = Path(__file__).resolve().parent / "fixtures" / "recorded" / "claude-code" / "2.1.332-fork"
HOME = FOLDER / "home"
#: ``ccusage daily --json --offline`` and ``ccusage session --json --offline`` of ccusage
#: 20.0.24 with CLAUDE_CONFIG_DIR = HOME/.claude, run 2026-12-03: input, output, cache
#: creation, cache read tokens and cost USD. Its session report puts all four calls under the
#: fork, the file it reads first (each call counted where it first meets it): the parent made
#: and paid for two of them, which adfkit takes from the records (``requestSessionId``).
CCUSAGE_DAILY = {"2026-12-03": [16, 73, 23158, 66560, 0.1079535]}
CCUSAGE_SESSIONS = {"95b0ee40-bd2d-4cf2-8ef2-19d156649c66": [16, 73, 23158, 66560, 0.1079535]}
#: The parent's two calls priced (claude-sonnet-4-5: $3 input, $15 output, $3.75 cache write,
#: $0.30 cache read per million): 8 x 3 + 42 x 15 + 22,597 x 3.75 + 22,080 x 0.3, / 1e6.
PARENT_COST = (8 * 3 + 42 * 15 + 22597 * 3.75 + 22080 * 0.3) / 1e6
PARENT = "d2352618-13e6-4548-91ea-6629b3dd76dc"
FORK = "95b0ee40-bd2d-4cf2-8ef2-19d156649c66"


def _file(sid: str) -> Path:
    (path,) = HOME.rglob(f"{sid}.jsonl")
    return path


def _log_figures() -> dict[str, int]:
    """calls, the whole prompt (uncached + cache write + cache read), cache read, output."""
    with (FOLDER / "requests.jsonl").open(encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    usage = [line["answer"]["usage"] for line in lines if line["kind"] == "turn"]
    return {
        "calls": len(usage),
        "prompt": sum(u["input"] for u in usage),
        "cache_read": sum(u["cache_read"] for u in usage),
        "output": sum(u["output"] for u in usage),
    }


def _ccusage_figures() -> dict[str, int]:
    """Every assistant record of both files, one per ``message.id:requestId`` (the scripted
    server sends a ``request-id`` header, as the API does), as ccusage deduplicates them."""
    seen: dict[str, dict[str, int]] = {}
    for path in sorted(HOME.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("type") != "assistant":
                continue
            key = f"{rec['message']['id']}:{rec.get('requestId')}"
            seen[key] = rec["message"]["usage"]
    u = list(seen.values())
    read = sum(x["cache_read_input_tokens"] for x in u)
    write = sum(x["cache_creation_input_tokens"] for x in u)
    return {
        "calls": len(u),
        "prompt": sum(x["input_tokens"] for x in u) + read + write,
        "cache_read": read,
        "output": sum(x["output_tokens"] for x in u),
    }


def _adfkit_figures(rows: list[dict[str, object]]) -> dict[str, int]:
    def total(col: str) -> int:
        return sum(int(r[col]) for r in rows)  # type: ignore[call-overload]

    return {
        "calls": total("calls"),
        "prompt": total("input") + total("cache_write") + total("cache_read"),
        "cache_read": total("cache_read"),
        "output": total("output"),
    }


def test_the_log_and_the_records_read_by_message_id_agree() -> None:
    assert (
        _log_figures()
        == _ccusage_figures()
        == {
            "calls": 4,
            "prompt": 89734,
            "cache_read": 66560,
            "output": 73,
        }
    )


def test_adfkit_usage_counts_each_paid_call_once_in_the_session_that_made_it() -> None:
    rows, errors = uf.usage_fleet([str(_file(PARENT)), str(_file(FORK))], engine="serial")
    assert errors == []
    rows = list(rows)
    assert _adfkit_figures(rows) == _log_figures()
    by = {r["agent"]: r["calls"] for r in rows}
    assert by == {PARENT: 2, FORK: 2}


def test_the_fleet_usage_table_counts_each_paid_call_once() -> None:
    df, errors = load_fleet([str(_file(PARENT)), str(_file(FORK))], "usage", engine="serial")
    assert len(errors) == 0
    assert df.groupby("agent")["seq"].apply(list).to_dict() == {PARENT: [12, 16], FORK: [19, 22]}
    assert int(df["tokens_output"].sum()) == _log_figures()["output"]


def test_the_fork_keeps_the_copied_calls_in_its_history_not_in_its_usage() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fork = adfkit.open(_file(FORK))
    assert isinstance(fork, adfkit.AgentFile)
    assert list(fork.calls()["key"]) == ["msg_rec00002:req_rec00002", "msg_rec00003:req_rec00003"]
    assert list(fork.usage()["seq"]) == [19, 22]
    h = fork.history()
    answers = h[h["role"] == "assistant"]
    assert list(answers["seq"]) == [12, 16, 19, 22]  # the parent's two answers, then its own
    assert list(answers["tokens_output"].isna()) == [True, True, False, False]


def _ccusage_run(report: str) -> list[dict[str, object]]:
    exe = _ccusage()
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(HOME / ".claude")}
    cmd = [exe, report, "--json", "--offline"]
    run = subprocess.run(cmd, env=env, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows: list[dict[str, object]] = json.loads(run.stdout)[report]
    return rows


def _figures(r: dict[str, object]) -> list[object]:
    keys = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")
    return [*(r[k] for k in keys), round(float(r["totalCost"]), 10)]  # type: ignore[arg-type]


def test_ccusage_20_run_live_gives_the_committed_figures() -> None:
    assert {str(r["period"]): _figures(r) for r in _ccusage_run("daily")} == CCUSAGE_DAILY
    assert {str(r["period"]): _figures(r) for r in _ccusage_run("session")} == CCUSAGE_SESSIONS


def test_adfkit_usage_totals_equal_ccusage_20() -> None:
    rows, _ = uf.usage_fleet([str(_file(PARENT)), str(_file(FORK))], engine="serial")
    rows = list(rows)

    def total(col: str) -> int:
        return sum(int(r[col]) for r in rows)  # type: ignore[call-overload]

    cost = round(sum(float(r["cost_usd"]) for r in rows), 10)
    got = [total("input"), total("output"), total("cache_write"), total("cache_read"), cost]
    assert got == CCUSAGE_DAILY["2026-12-03"] == CCUSAGE_SESSIONS[FORK]


def test_watch_counts_the_forks_own_calls_as_a_full_read_does() -> None:
    """``adfkit watch`` on the fork, record by record: its 2 calls and their cost (the
    requests.jsonl figures of calls 2 and 3, priced), the full read's figures."""
    from adfkit._facade.watch import Watched, figures_of

    w = Watched(_file(FORK))
    assert w.incremental
    w.update()
    full, _ = figures_of(_file(FORK))
    assert (w.figures.calls, full.calls) == (2, 2)
    # ccusage's total less the parent's own cost (its session report keeps no parent row)
    want = CCUSAGE_DAILY["2026-12-03"][4] - PARENT_COST
    assert w.figures.cost_usd == pytest.approx(want, abs=1e-12)
    assert full.cost_usd == pytest.approx(want, abs=1e-12)
