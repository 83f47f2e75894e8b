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
#: ccusage 20.0.24's ``session --json --offline`` figures on PROJECTS (the file says how made).
CCUSAGE_SESSION = Path(__file__).with_name("ccusage_20_session.json")


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


# --- per session: ccusage 20's session report, less the progress-only calls ------------------

#: The calls of each session seen only inside ``agent_progress`` records, worked out from the
#: records (one per message id and request id): input, output, cache write, cache read tokens
#: and their cost at claude-haiku-4-5's list prices (all of them are haiku calls whose cache
#: writes are all 1-hour ones): $1/M input, $5/M output, $2/M 1-hour writes, $0.10/M reads.
#: ccusage's ``session`` report leaves them out (its ``daily``, ``weekly`` and ``monthly``
#: reports count them); every other session has none.
PROGRESS_ONLY = {
    "03a1382e": (50, 27, 49796, 341277, 0.1339047),
    "67d765b5": (6756, 143, 131334, 1161228, 0.3862618),
    "ca8cc13b": (39, 16, 71746, 371072, 0.1807182),
}


def _assert_sessions_are_ccusages_plus_progress_only(rows: list[dict], want: dict) -> None:
    got = {
        r["agent"][:8]: (r["input"], r["output"], r["cache_write"], r["cache_read"], r["cost_usd"])
        for r in rows
    }
    assert sorted(got) == sorted(want)
    for sid, w in want.items():
        extra = PROGRESS_ONLY.get(sid, (0, 0, 0, 0, 0.0))
        assert got[sid][:4] == tuple(a + b for a, b in zip(w[:4], extra[:4], strict=True)), sid
        assert got[sid][4] == pytest.approx(w[4] + extra[4], rel=1e-9), sid


def test_usage_by_session_is_ccusage_20_session_plus_the_progress_only_calls(capsys):
    """Each of the 14 real sessions: the 11 without progress-only calls equal ccusage 20's
    ``session`` report (tokens exactly, cost to 1e-9); the other 3 are its figures plus those
    calls, which ccusage's session report does not read (committed in
    tests/ccusage_20_session.json)."""
    want = json.loads(CCUSAGE_SESSION.read_text())["sessions"]
    _assert_sessions_are_ccusages_plus_progress_only(_usage_json(capsys, str(_projects())), want)


def test_ccusage_20s_session_report_is_its_daily_report_less_the_progress_only_calls():
    """ccusage disagrees with itself by exactly those calls: its sessions sum to its days
    (which adfkit equals) less the progress-only calls, token part by token part."""
    sessions = json.loads(CCUSAGE_SESSION.read_text())["sessions"].values()
    days = json.loads(CCUSAGE_DAILY.read_text())["days"].values()
    extra = [sum(x[k] for x in PROGRESS_ONLY.values()) for k in range(5)]
    for k in range(4):
        assert sum(s[k] for s in sessions) + extra[k] == sum(d[k] for d in days)
    assert sum(s[4] for s in sessions) + extra[4] == pytest.approx(sum(d[4] for d in days))
    assert extra[4] == pytest.approx(0.7008847, abs=1e-12)


def test_usage_by_session_is_ccusage_session_run_live_plus_the_progress_only_calls(
    tmp_path, capsys
):
    projects = _projects()
    exe = _ccusage()
    (tmp_path / "projects").symlink_to(projects, target_is_directory=True)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path)}
    run = subprocess.run(
        [exe, "session", "--json", "--offline"], env=env, capture_output=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    want = {
        r["period"][:8]: [
            r["inputTokens"],
            r["outputTokens"],
            r["cacheCreationTokens"],
            r["cacheReadTokens"],
            r["totalCost"],
        ]
        for r in json.loads(run.stdout)["session"]
    }
    _assert_sessions_are_ccusages_plus_progress_only(_usage_json(capsys, str(projects)), want)


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


def test_a_folder_that_cannot_be_read_is_a_line_never_a_silent_skip(tmp_path, capsys, monkeypatch):
    """A folder the walk cannot list (here: os.scandir refuses it, as for a folder of mode
    0 when not root) is an error line of every command and an error row of load_fleet; the
    rest is read."""
    from adfkit._core import registry
    from tests.adfbuild import build, row, text

    good = tmp_path / "top" / "a"
    good.mkdir(parents=True)
    build(good / "one.adf", loop=[row(1, "user", text("hi"))])
    shut = tmp_path / "top" / "shut"
    shut.mkdir()
    build(shut / "two.adf", loop=[row(1, "user", text("hi"))])
    real = os.scandir

    def scandir(path):
        if os.fspath(path) == str(shut):
            raise PermissionError(13, "Permission denied", str(shut))
        return real(path)

    monkeypatch.setattr(registry.os, "scandir", scandir)
    status = main(["info", str(tmp_path / "top"), "--json"])
    cap = capsys.readouterr()
    assert status == 2
    assert f"{shut}: cannot read the folder: Permission denied" in cap.err
    assert [r["name"] for r in json.loads(cap.out)] == ["one"]
    _, errors = adfkit.load_fleet(tmp_path / "top", "info", engine="serial")
    assert errors["path"].tolist() == [str(shut)]
    assert main(["usage", str(tmp_path / "top"), "--json"]) == 1
    assert f"{shut}: cannot read the folder" in capsys.readouterr().err


# --- item 6: each Inspect sample its own row; the unknown-cost warning counts every call ------


def test_each_inspect_sample_is_a_row_of_its_own(capsys):
    log = (
        _fixtures()
        / "inspect-eval"
        / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
    )
    rows = _usage_json(capsys, str(log))
    with adfkit.open(log) as agents:
        names = [a.name for a in agents]
    assert len(names) == 10
    assert [r["agent"] for r in rows] == names
    assert len({r["label"] for r in rows}) == 10
    assert all(r["agent_path"] == str(log) and r["calls"] == 1 for r in rows)


def test_unknown_cost_warning_counts_every_unpriced_call(tmp_path, capsys):
    """Two hand-built files of an unpriced model, 3 and 5 calls: one warning, 8 calls (the
    per-file warning of the first file said 3)."""
    from tests.adfbuild import build, row, text

    for name, n in (("a", 3), ("b", 5)):
        loop = [row(1, "user", text("go"))] + [
            row(i, "assistant", text("ok"), tokens={"input": 10, "output": 1}, model="no-such")
            for i in range(2, n + 2)
        ]
        build(tmp_path / f"{name}.adf", loop=loop)
    assert main(["usage", str(tmp_path)]) == 0
    cap = capsys.readouterr()
    warn = [line for line in cap.err.splitlines() if "unknown" in line]
    assert len(warn) == 1
    assert "the cost of 8 call(s) is unknown (no price for model(s) 'no-such')" in warn[0]
    assert "priced calls" not in cap.out  # no call priced: no subtotal to give


# --- item 7: unknown stays unknown, in JSON and in text -------------------------------------


def test_unrecorded_token_parts_are_null_and_dash_never_0(tmp_path, capsys):
    """Calls whose file records input and output only (no cache parts): the cache columns
    are null in --json and '-' in the text, the figures recorded are summed."""
    from tests.adfbuild import build, row, text

    loop = [row(1, "user", text("go"))] + [
        row(i, "assistant", text("ok"), tokens={"input": 10 * i, "output": i}) for i in (2, 3)
    ]
    build(tmp_path / "a.adf", loop=loop)
    (r,) = _usage_json(capsys, str(tmp_path / "a.adf"))
    assert (r["input"], r["output"], r["cache_write"], r["cache_read"]) == (50, 5, None, None)
    assert main(["usage", str(tmp_path / "a.adf")]) == 0
    line = capsys.readouterr().out.splitlines()[1].split()
    assert line[1:6] == ["2", "50", "5", "-", "-"]


def test_copilot_cli_input_and_cache_are_null_not_0(capsys):
    """Copilot CLI records no per-call input or cache figures (the library gives NA)."""
    (r,) = _usage_json(capsys, "sample_agents/copilot_cli")
    assert r["calls"] > 0 and r["output"] > 0
    assert (r["input"], r["cache_write"], r["cache_read"], r["max_context"]) == (None,) * 4
    assert main(["usage", "sample_agents/copilot_cli"]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    cells = line.split("  ")
    assert [c.strip() for c in cells if c.strip()][2] == "-"  # input


def test_codex_cache_write_is_null_not_0(capsys):
    rows = _usage_json(capsys, str(_fixtures() / "transcripts" / "codex"))
    assert len(rows) == 2
    assert all(r["cache_write"] is None and r["cache_read"] > 0 for r in rows)


# --- item 8: created_at in another unit ------------------------------------------------------


@pytest.mark.parametrize(
    "stamps",
    [
        (1_790_000_000_000, 1_790_000_001_000_000),  # ms, then µs
        (1_790_000_001_000_000, 1_790_000_000_000),  # µs, then ms
        (1_790_000_000, 1_790_000_001),  # seconds
        (1_790_000_000_000_000_000, 1_790_000_001_000_000_000),  # ns
    ],
)
def test_info_on_times_in_another_unit_is_no_internal_error(tmp_path, capsys, stamps):
    from tests.adfbuild import build, row, text

    loop = [
        row(1, "user", text("hi"), created_at=stamps[0]),
        row(2, "assistant", text("yo"), tokens={"input": 3, "output": 1}, created_at=stamps[1]),
    ]
    path = build(tmp_path / "t.adf", loop=loop)
    for cmd in (["info"], ["info", "--json"], ["usage"], ["usage", "--by", "day"], ["check"]):
        status = main([cmd[0], str(path), *cmd[1:]])
        err = capsys.readouterr().err
        assert "internal error" not in err, (cmd, err)
        assert status in (0, 1), (cmd, err)


# --- issue 35 item 7: the report as complete as ccusage's ------------------------------------


def _peer(key: str) -> dict:
    return json.loads(CCUSAGE_DAILY.read_text())[key]


def test_by_month_equals_ccusage_monthly(capsys):
    rows = _usage_json(capsys, str(_projects()), "--by", "month")
    got = {
        r["month"]: (r["input"], r["output"], r["cache_write"], r["cache_read"], r["cost_usd"])
        for r in rows
    }
    _assert_days_equal(got, _peer("months"))


def test_days_in_a_time_zone_equal_ccusage_with_that_time_zone(capsys):
    rows = _usage_json(capsys, str(_projects()), "--by", "day", "--tz", "Asia/Tokyo")
    _assert_days_equal(_by_day(rows), _peer("days_asia_tokyo"))


def test_models_of_each_day_are_ccusages(capsys):
    rows = _usage_json(capsys, str(_projects()), "--by", "day")
    assert {r["day"]: r["models"].split(", ") for r in rows} == _peer("models_by_day")


def test_since_and_until_keep_the_days_between(capsys):
    rows = _usage_json(
        capsys, str(_projects()), "--by", "day", "--since", "2026-01-20", "--until", "20260123"
    )
    want = {d: v for d, v in _peer("days").items() if "2026-01-20" <= d <= "2026-01-23"}
    assert len(want) == 4
    _assert_days_equal(_by_day(rows), want)


def test_sort_orders_the_rows(capsys):
    rows = _usage_json(capsys, str(_projects()), "--by", "day", "--sort", "cost")
    peer = _peer("days")
    assert [r["day"] for r in rows] == sorted(peer, key=lambda d: -peer[d][4])
    rows = _usage_json(capsys, str(_projects()), "--sort", "date", "--order", "desc")
    firsts = [r["first_at"] for r in rows]
    assert firsts == sorted(firsts, reverse=True) and len(firsts) == 14


def test_session_rows_keep_first_and_last_activity_and_the_documented_keys(capsys):
    rows = _usage_json(capsys, str(_session("fe5e1c67")))
    (r,) = rows
    assert list(r) == [
        "label",
        "agent",
        "agent_path",
        "first_at",
        "last_at",
        "models",
        "calls",
        "input",
        "output",
        "cache_write",
        "cache_read",
        "cost_usd",
        "cost_known_usd",
        "unpriced_calls",
        "compactions",
        "microcompactions",
        "max_context",
    ]
    # the first and last assistant record with usage in the file (sidechains included), read
    # with json.loads line by line: 2025-09-03T00:52:34.495Z and 01:02:03.665Z
    assert (r["first_at"], r["last_at"]) == (
        "2025-09-03T00:52:34.495000+00:00",
        "2025-09-03T01:02:03.665000+00:00",
    )
    day = _usage_json(capsys, str(_session("fe5e1c67")), "--by", "day")[0]
    assert list(day)[:2] == ["day", "sessions"] and list(day)[2:] == list(r)[3:]


def test_known_costs_are_subtotalled_when_one_model_is_unpriced(tmp_path, capsys):
    """One file of a priced model (claude-sonnet-4-5: $3 in, $15 out per million) and one of
    an unpriced one: the total cost is '-', the 'priced calls' line sums the known costs."""
    from tests.adfbuild import build, row, text

    for name, model in (("a", "claude-sonnet-4-5"), ("b", "no-such")):
        loop = [
            row(1, "user", text("go")),
            row(
                2,
                "assistant",
                text("ok"),
                tokens={"input": 1_000_000, "output": 100_000},
                model=model,
            ),
        ]
        build(tmp_path / f"{name}.adf", loop=loop)
    assert main(["usage", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = next(x for x in lines if x.startswith("total")).split()
    assert total[6] == "-"
    priced = next(x for x in lines if x.startswith("priced calls")).split()
    assert priced[2:4] == ["1", "4.50"]  # 1 call: 3.00 + 1.50
    rows = _usage_json(capsys, str(tmp_path))
    assert [r["cost_known_usd"] for r in rows] == [pytest.approx(4.5), 0.0]
    assert [r["cost_usd"] for r in rows][1] is None


def test_progress_goes_to_stderr_with_the_flag_only(tmp_path, capsys):
    from tests.adfbuild import build, row, text

    for i in range(3):
        build(tmp_path / f"{i}.adf", loop=[row(1, "user", text("go"))])
    assert main(["usage", str(tmp_path), "--engine", "serial"]) == 0
    assert "usage" not in capsys.readouterr().err  # not a terminal, no flag: no bar
    assert main(["usage", str(tmp_path), "--engine", "serial", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "usage" in err and "3/3" in err
    assert main(["index", str(tmp_path), "--to", str(tmp_path / "ix"), "--progress"]) == 0
    assert "3/3" in capsys.readouterr().err


def test_a_wrong_time_zone_or_day_is_an_error_line(capsys):
    assert main(["usage", "sample_agents/clean.adf", "--tz", "Mars/Base"]) == 2
    assert "no such time zone" in capsys.readouterr().err
    assert main(["usage", "sample_agents/clean.adf", "--since", "2026-13-01"]) == 2
    assert "is not a day" in capsys.readouterr().err


# --- item 4: the index, usage and usage_days count the same calls ----------------------------


def test_index_usage_parts_give_adfkit_usages_figures(tmp_path, capsys):
    """README's query over DIR/usage/*.parquet (here with pyarrow: group by agent, the calls
    that are not a compaction's) gives each session's output and cost as ``adfkit usage``:
    subagents' and sidechains' calls included (fe5e1c67: 51,933 output tokens, where the
    index held 2,636)."""
    import pyarrow.dataset as pads

    folder = _fixtures()
    assert main(["index", str(folder), "--to", str(tmp_path), "--table", "usage"]) == 0
    capsys.readouterr()
    df = pads.dataset(tmp_path / "usage", format="parquet").to_table().to_pandas()
    df = df[df["call_kind"] != "compaction"]
    out = df.groupby(["agent_path", "agent"])["tokens_output"].sum()
    cost = df.groupby(["agent_path", "agent"])["cost_usd"].sum(min_count=1)
    rows = _usage_json(capsys, str(folder))
    assert len(rows) == len(out.index.union(cost.index)) + 1  # + an Inspect sample of no call
    for r in rows:
        key = (r["agent_path"], r["agent"])
        if r["calls"] == 0:
            assert key not in out.index
            continue
        assert int(out[key]) == r["output"], key
        if r["unpriced_calls"] == 0:
            assert float(cost[key]) == pytest.approx(r["cost_usd"], rel=1e-12), key
    fe = next(r for r in rows if r["agent"].startswith("fe5e1c67"))
    assert int(out[(fe["agent_path"], fe["agent"])]) == 51_933


# --- item 9: prices (and windows) of models the shipped table lacks, from genai-prices --------


def _opus5_file(tmp_path: Path) -> Path:
    from tests.adfbuild import build, row, text

    loop = [
        row(1, "user", text("go")),
        row(
            2,
            "assistant",
            text("ok"),
            tokens={"input": 1_000_000, "output": 100_000},
            model="claude-opus-5",
        ),
    ]
    return build(tmp_path / "opus5.adf", loop=loop)


def test_a_model_the_shipped_table_lacks_is_priced_by_genai_prices(tmp_path, capsys):
    """claude-opus-5 is not in adfkit/data/prices.json: its cost is genai-prices' own
    calc_price of the same usage (a peer's figure), where it was unknown."""
    from genai_prices import Usage, calc_price

    want = calc_price(Usage(input_tokens=1_000_000, output_tokens=100_000), "claude-opus-5")
    (r,) = _usage_json(capsys, str(_opus5_file(tmp_path)))
    assert r["unpriced_calls"] == 0
    assert r["cost_usd"] == pytest.approx(float(want.total_price), rel=1e-9)
    assert r["cost_usd"] == pytest.approx(7.5)  # $5 in, $25 out per million


def test_the_users_price_file_still_comes_first(tmp_path, capsys):
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({"claude-opus-5": {"input": 1, "output": 2}}))
    (r,) = _usage_json(capsys, str(_opus5_file(tmp_path)), "--prices", str(prices))
    assert r["cost_usd"] == pytest.approx(1.2)


def test_context_windows_come_from_genai_prices():
    from adfkit._core.model_catalog import context_window

    assert context_window("claude-opus-5") == 1_000_000
    assert context_window("gpt-4o-mini-2024-07-18") == 128_000
    assert context_window("mock-v1") is None


def test_every_command_sums_the_unpriced_calls_of_all_files(tmp_path, capsys):
    """adfkit index (and every command but usage, which counts from its rows) gives one
    missing-price warning with the calls of every file: 3 + 5 = 8, not the first file's 3."""
    from tests.adfbuild import build, row, text

    (tmp_path / "in").mkdir()
    for name, n in (("a", 3), ("b", 5)):
        loop = [row(1, "user", text("go"))] + [
            row(i, "assistant", text("ok"), tokens={"input": 10, "output": 1}, model="no-such")
            for i in range(2, n + 2)
        ]
        build(tmp_path / "in" / f"{name}.adf", loop=loop)
    args = ["index", str(tmp_path / "in"), "--to", str(tmp_path / "ix"), "--table", "usage"]
    assert main([*args, "--engine", "serial"]) == 0
    warn = [x for x in capsys.readouterr().err.splitlines() if "no price" in x]
    assert warn == [
        "adfkit: warning: no price for model(s) 'no-such' (8 calls): their cost is shown as "
        "unknown; pass --prices FILE (a JSON price table) to price them"
    ]


def test_plot_export_and_report_take_a_folder_of_folders(tmp_path, capsys):
    """sample_agents/codex keeps its rollouts in sessions/YYYY/MM/DD/: every command finds
    both (they said "no agent files in the folder")."""
    folder = "sample_agents/codex"
    assert main(["plot", folder, "--kind", "context", "-o", str(tmp_path / "p")]) == 0
    assert len(list((tmp_path / "p").glob("*.png"))) == 2
    written, errors = adfkit.export(folder, tmp_path / "x")
    assert errors.empty and written["agent"].nunique() == 2
    from adfkit.cli._common import agent_inputs

    found = agent_inputs([folder])  # what report (and every command) reads
    assert len(found.inputs) == 2 and not found.problems
