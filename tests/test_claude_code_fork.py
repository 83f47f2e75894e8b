"""A session forked with ``claude --resume ID --fork-session`` (Claude Code 2.1.332, recorded
in ``fixtures/recorded/claude-code/2.1.332-fork``): the new file copies the parent's records,
its copied assistant records marked ``requestSessionId`` (the parent's session). Each paid call
counts once, in the session that made it; the copies stay in the fork's history.

The figures are the server's log (``requests.jsonl``: every request once, as answered), and
the records themselves read by message id as ccusage reads them."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import adfkit
from adfkit import load_fleet
from adfkit._facade.usage import reading as uf

FOLDER = Path(__file__).resolve().parent / "fixtures" / "recorded" / "claude-code" / "2.1.332-fork"
HOME = FOLDER / "home"
PARENT = "783ed152-26b3-4b3d-8157-16489042a55f"
FORK = "6a7084b7-63e4-4cf6-9100-56d3544c12dc"


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
    """Every assistant record of both files, one per ``message.id:requestId`` (the records
    hold no requestId: the scripted server sends no request-id header), the last one's usage."""
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
    assert list(fork.calls()["key"]) == ["msg_rec00002", "msg_rec00003"]
    assert list(fork.usage()["seq"]) == [19, 22]
    h = fork.history()
    answers = h[h["role"] == "assistant"]
    assert list(answers["seq"]) == [12, 16, 19, 22]  # the parent's two answers, then its own
    assert list(answers["tokens_output"].isna()) == [True, True, False, False]
