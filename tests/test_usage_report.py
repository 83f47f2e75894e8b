"""``adfkit usage`` as a report (issue 33 items 3-9, issue 35 item 7): its figures against
ccusage 20's on the real Claude Code sessions, the calls it counts, the rows it makes, what it
shows for unknown figures, and the report options."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import adfkit
from adfkit.cli import main

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
PROJECTS = SHARED / "transcripts" / "claude-code" / "projects"
#: ccusage 20.0.24's ``daily --json --offline`` figures on PROJECTS (the file says how made).
CCUSAGE_DAILY = Path(__file__).with_name("ccusage_20_daily.json")


def _projects() -> Path:
    if not PROJECTS.is_dir():
        pytest.skip(f"real transcripts not present at {PROJECTS} (../shared is absent in a clone)")
    return PROJECTS


def _session(sid: str) -> Path:
    hits = [p for p in _projects().rglob(f"{sid}*.jsonl") if "subagents" not in p.parts]
    assert len(hits) == 1, hits
    return hits[0]


def _usage_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    status = main(["usage", *args, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    return out


def _by_day(rows: list[dict]) -> dict[str, tuple]:
    return {
        r["day"]: (r["input"], r["output"], r["cache_write"], r["cache_read"], r["cost_usd"])
        for r in rows
    }


def _assert_days_equal(got: dict[str, tuple], want: dict[str, list]) -> None:
    assert sorted(got) == sorted(want)
    for day, w in want.items():
        assert got[day][:4] == tuple(w[:4]), day
        assert got[day][4] == pytest.approx(w[4], rel=1e-9), day


# --- the key figure: per day, equal to ccusage 20 ----------------------------------------------


def test_usage_by_day_equals_ccusage_20_daily(capsys):
    """Tokens and cost of every UTC day of the 14 real sessions, as ccusage 20 reports them
    (its figures committed in tests/ccusage_20_daily.json)."""
    rows = _usage_json(capsys, str(_projects()), "--by", "day")
    want = json.loads(CCUSAGE_DAILY.read_text())["days"]
    _assert_days_equal(_by_day(rows), want)


def _ccusage() -> str:
    root = Path(__file__).resolve().parent.parent
    for exe in (os.environ.get("ADFKIT_CCUSAGE"), root / "build/ccusage/node_modules/.bin/ccusage"):
        if exe and Path(exe).exists():
            return str(exe)
    found = shutil.which("ccusage")
    if found is None:
        pytest.skip(
            "ccusage is not installed (npm install --prefix build/ccusage ccusage@20.0.24, "
            "or ADFKIT_CCUSAGE=path)"
        )
    return found


def test_usage_by_day_equals_ccusage_run_live(tmp_path, capsys):
    projects = _projects()
    exe = _ccusage()
    (tmp_path / "projects").symlink_to(projects, target_is_directory=True)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path)}
    run = subprocess.run(
        [exe, "daily", "--json", "--offline"], env=env, capture_output=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    peer = json.loads(run.stdout)["daily"]
    want = {
        r["period"]: [
            r["inputTokens"],
            r["outputTokens"],
            r["cacheCreationTokens"],
            r["cacheReadTokens"],
            r["totalCost"],
        ]
        for r in peer
    }
    _assert_days_equal(_by_day(_usage_json(capsys, str(projects), "--by", "day")), want)


# --- item 5: calls seen only as progress records ----------------------------------------------


@pytest.mark.parametrize(
    ("sid", "agents", "calls", "output", "cache_write"),
    [
        ("03a1382e", {"a37a9c9"}, 9, 27, 49796),
        ("67d765b5", {"a1979ad", "ae59e48"}, 19, 143, 131334),
        ("ca8cc13b", {"a438446"}, 7, 16, 71746),
    ],
)
def test_task_subagents_seen_only_in_progress_records_are_counted(
    sid, agents, calls, output, cache_write
):
    """Older Claude Code wrote a Task subagent's calls only inside ``agent_progress`` records:
    each is a subagent with those calls (figures: the records' usage, one per message id)."""
    with adfkit.open(_session(sid)) as agent:
        subs = [s for s in agent.subagents() if s.meta().get("layout") == "progress"]
        assert {s.meta()["agent_id"] for s in subs} == agents
        u = [s.usage() for s in subs]
    assert sum(len(x) for x in u) == calls
    assert sum(int(x["tokens_output"].sum()) for x in u) == output
    assert sum(int(x["tokens_cache_write"].sum()) for x in u) == cache_write


# --- item 3: one discovery rule ------------------------------------------------------------------

#: Inputs under ../shared/fixtures by format, counted by hand (ls): 6 ADF files, 14 Claude Code
#: sessions (their subagent files go with them), 2 Codex rollouts, 5 Inspect logs, 3 OpenHands
#: conversations, 1 pi session.
FIXTURE_INPUTS = {
    "adf": 6,
    "claude_code": 14,
    "codex": 2,
    "inspect_eval": 5,
    "openhands": 3,
    "pi": 1,
}


def _fixtures() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real fixtures not present at {SHARED} (../shared is absent in a clone)")
    return SHARED


def test_list_sessions_and_load_fleet_find_every_input_of_the_fixtures():
    from collections import Counter

    df = adfkit.list_sessions(_fixtures())
    assert Counter(df["format"].tolist()) == FIXTURE_INPUTS
    fleet, errors = adfkit.load_fleet(_fixtures(), "info", engine="serial")
    assert errors.empty
    # one row per agent: an Inspect log is one per sample
    assert fleet["agent_path"].nunique() == sum(FIXTURE_INPUTS.values())


@pytest.mark.parametrize(
    ("sub", "n"),
    [("transcripts/codex", 2), ("transcripts/claude-code/projects", 14), ("openhands", 3)],
)
def test_info_reads_every_input_of_a_folder_of_folders(capsys, sub, n):
    status = main(["info", str(_fixtures() / sub), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert len(out) == n


def test_usage_and_index_read_the_inspect_logs_and_openhands_conversations(tmp_path, capsys):
    rows = _usage_json(capsys, str(_fixtures()))
    paths = {r["agent_path"] for r in rows}
    assert sum(p.endswith(".eval") for p in paths) == FIXTURE_INPUTS["inspect_eval"]
    assert sum("/openhands/" in p for p in paths) == FIXTURE_INPUTS["openhands"]
    assert main(["index", str(_fixtures()), "--to", str(tmp_path), "--table", "usage_days"]) == 0
    assert f"usage_days: {sum(FIXTURE_INPUTS.values())} file(s)" in capsys.readouterr().out


def test_a_folder_that_cannot_be_read_is_a_line_never_a_silent_skip(tmp_path, capsys):
    import shutil as sh

    from tests.adfbuild import build, row

    if os.geteuid() == 0:
        pytest.skip("root reads a folder whatever its mode")
    good = tmp_path / "top" / "a"
    good.mkdir(parents=True)
    build(good / "one.adf", loop=[row(1, "user", [{"type": "text", "text": "hi"}])])
    shut = tmp_path / "top" / "shut"
    shut.mkdir()
    sh.copy(good / "one.adf", shut / "two.adf")
    shut.chmod(0)
    try:
        status = main(["info", str(tmp_path / "top"), "--json"])
        cap = capsys.readouterr()
        _, errors = adfkit.load_fleet(tmp_path / "top", "info", engine="serial")
    finally:
        shut.chmod(0o700)
    assert status == 2
    assert f"{shut}: cannot read the folder" in cap.err
    assert len(json.loads(cap.out)) == 1
    assert errors["path"].tolist() == [str(shut)]
