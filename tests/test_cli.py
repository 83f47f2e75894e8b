"""The command line as a user meets it: several agents at once, one error form, terminal-safe
output, one warning about prices, and a wheel install that has everything it needs."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import warnings
from pathlib import Path

import pytest
import wheelenv
from adfbuild import build, result, row, text, use
from background import Background
from conftest import sample
from wheelenv import Wheel

import adfkit
import adfkit.cli
from adfkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
ESC = "\x1b]0;pwned\x07\x1b[2J"


def test_info_reads_several_paths_and_quoted_globs(capsys, tmp_path):
    a, b = sample("clean"), sample("forgetful")
    assert main(["info", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.count("agent      ") == 2 and "clean" in out and "forgetful" in out
    assert main(["info", str(a.parent / "c*.adf"), "--json"]) == 0  # a quoted glob
    docs = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in docs] == ["clean"]  # a list: the pattern may match several


def test_a_bad_file_among_good_ones_gives_one_error_line_and_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.adf"
    bad.write_text("not sqlite")
    assert main(["info", str(sample("clean")), str(bad), str(sample("messenger"))]) == 2
    got = capsys.readouterr()
    assert "clean" in got.out and "messenger" in got.out
    assert got.err.splitlines() == [got.err.splitlines()[0]]
    assert got.err.startswith(f"adfkit: error: {bad}: ")
    assert main(["check", str(tmp_path / "none-*.adf")]) == 2
    assert capsys.readouterr().err.startswith("adfkit: error: no file matches")


@pytest.fixture
def escapes(tmp_path):
    """An agent whose name, model, provider and tool ids carry terminal escape sequences."""
    loop = [
        row(1, "user", text(f"Agent started {ESC}")),
        row(
            2, "assistant", [use(f"t{ESC}", f"fs_{ESC}", {})], model=f"m{ESC}", tokens={"input": 5}
        ),
        row(3, "user", [result(f"u{ESC}", "orphan")]),
    ]
    cfg = {"name": f"evil{ESC}", "model": {"model_id": f"m{ESC}", "provider": f"p{ESC}"}}
    return build(tmp_path / "esc.adf", loop=loop, config=cfg)


@pytest.mark.parametrize("command", ["info", "check", "observe"])
def test_h60_control_characters_never_reach_the_terminal(escapes, capsys, command):
    main([command, str(escapes)])
    got = capsys.readouterr()
    for stream in (got.out, got.err):
        assert "\x1b" not in stream and "\x07" not in stream
    if command != "observe":  # observe prints counts, not this agent's strings
        assert "\\x1b]0;pwned\\x07" in got.out  # shown, as an escape


def test_h60_json_output_escapes_c1_controls_too(escapes, capsys):
    main(["info", str(escapes), "--json"])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out
    assert json.loads(out)["model"] == f"m{ESC}"  # the data is intact


def test_the_missing_price_warning_is_given_once_in_cli_terms(tmp_path, capsys):
    loop = [row(1, "user", text("hi")), row(2, "assistant", text("yo"), tokens={"input": 5})]
    paths = [build(tmp_path / f"{n}.adf", loop=loop) for n in "ab"]
    prices = tmp_path / "prices.json"
    assert main(["export", *map(str, paths), "--to", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("no price for model") == 1 and "pass --prices FILE" in err
    prices.write_text(json.dumps({"models": {"test-model": {"input": 1.0, "output": 2.0}}}))
    args = ["export", *map(str, paths), "--to", str(tmp_path / "o2"), "--quiet"]
    assert main([*args, "--prices", str(prices)]) == 0
    assert "no price" not in capsys.readouterr().err


def test_outputs_default_to_the_current_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["export", str(sample("clean")), "--quiet"]) == 0
    assert (tmp_path / "clean" / "history.parquet").is_file()


NOTEBOOKS_EXTRA = 'pip install "adfkit[notebooks]"'
SESSION = "claude-code/projects/-home-user-work-webapp/24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"


@pytest.fixture(scope="module", autouse=True)
def _wheels_in_the_background(request, tmp_path_factory):
    """Start the wheel's venvs with this module's first test when one of its selected tests
    needs them (under ``pytest -n`` the worker that runs this module; tests/conftest.py starts
    them at collection otherwise, and starting twice is once)."""
    if any(
        item.module is request.module and set(wheelenv.FIXTURES) & set(item.fixturenames)
        for item in request.session.items
    ):
        wheelenv.start(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def wheel() -> Wheel:
    """A venv with the wheel as a plain ``pip install`` leaves it (no extras); made in the
    background from the start of the session (tests/wheelenv.py)."""
    if not wheelenv.wanted():
        pytest.skip(wheelenv.SKIP_REASON)
    return wheelenv.plain()


@pytest.fixture(scope="session")
def wheel_with_notebooks() -> Wheel:
    """A venv where ``pip install "adfkit[notebooks]"`` followed a plain install."""
    if not wheelenv.wanted():
        pytest.skip(wheelenv.SKIP_REASON)
    return wheelenv.with_notebooks()


def _documented_commands() -> list[str]:
    """The commands README's command table documents."""
    import re

    readme = (ROOT / "README.md").read_text()
    return re.findall(r"^\| `adfkit (\w+)", readme, re.M)


def test_the_wheel_ships_every_sample_the_notebooks_open_and_no_synth(wheel):
    import zipfile

    names = zipfile.ZipFile(wheel.whl).namelist()
    assert "adfkit/notebooks/01-quickstart.ipynb" in names
    assert "adfkit/sample_agents/long-runner.adf" in names
    assert f"adfkit/sample_agents/{SESSION}" in names
    assert any("/subagents/agent-" in n for n in names)
    # notebook 06's other agents too: an Inspect log, an OpenHands conversation folder
    from adfkit._base.bundled import sample_files

    shipped = [f"adfkit/sample_agents/{f.as_posix()}" for f in sample_files()]
    missing = [f for f in shipped if f not in names]
    assert not missing, missing
    assert any(n.endswith(".eval") for n in names) and any("/events/event-" in n for n in names)
    assert not any("synth" in n or n.endswith(".truth.json") for n in names)


def test_a_plain_pip_install_runs_every_command_but_says_what_report_needs(wheel):
    """Without extras: every documented command works on the bundled samples, ``report`` too
    (the plain report); ``report --notebook`` is one error line naming what to install,
    ``notebooks`` says JupyterLab is missing and how to get it, instead of telling the user to
    run a program they lack."""
    if wheel.has("nbformat"):
        pytest.fail("the plain venv has the notebooks extra: it is not a plain install")
    done = wheel.adfkit("notebooks", "nb")
    assert done.returncode == 0, done.stderr
    lab = f"jupyter lab {Path('nb') / 'notebooks'}"
    assert done.stderr.splitlines()[-1].endswith(
        f"JupyterLab is not installed here: {NOTEBOOKS_EXTRA}, then open them with: {lab}"
    ), done.stderr
    agent = "nb/sample_agents/long-runner.adf"
    session = f"nb/sample_agents/{SESSION}"
    runs = {
        "info": ["info", agent, session],
        "plot": ["plot", agent, "--kind", "all", "-o", "plots"],
        "observe": ["observe", agent, session],
        "check": ["check", agent, session],
        "export": ["export", agent, session, "--to", "parquet"],
        "usage": ["usage", agent, session],
        "index": ["index", agent, session, "--to", "index"],
        "watch": ["watch", "--once", agent, session],
        "lab": ["lab", agent, session],
    }
    with Background() as background:  # independent commands, two at a time
        for name, args in runs.items():
            background.start(name, wheel.adfkit, *args)
        results = {name: background.result(name) for name in runs}
    for name, done in results.items():
        assert done.returncode in (0, 1), f"{name}: {done.stderr}"  # 1: findings
        assert "error" not in done.stderr, f"{name}: {done.stderr}"
    assert len(list((wheel.run / "plots").glob("*.png"))) >= 5
    assert (wheel.run / "parquet" / "long-runner" / "history.parquet").is_file()
    assert any((wheel.run / "index").rglob("*.parquet"))
    done = wheel.adfkit("report", agent, "-o", "r.html")  # the plain report: no kernel needed
    assert done.returncode == 0, done.stderr
    assert "adfkit report: long-runner" in (wheel.run / "r.html").read_text()
    done = wheel.adfkit("report", agent, "-o", "nb.html", "--notebook", "01")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("adfkit: error: running a notebook needs nbformat"), line
    assert line.endswith(f"not installed: {NOTEBOOKS_EXTRA}"), line
    assert not (wheel.run / "nb.html").exists()
    assert set(_documented_commands()) == {*runs, "report", "notebooks"}


def test_the_readme_quick_start_runs_after_a_pip_install_outside_the_clone(wheel, tmp_path):
    """README's Quick start, as a pip user pastes it: in the wheel's venv, from a folder that is
    not the clone (its first line opened sample_agents/long-runner.adf, which only a clone
    has). Its fleet is the compactions of every sample the wheel ships, as read in the clone."""
    import subprocess

    readme = (ROOT / "README.md").read_text()
    code = re.search(r"## Quick start\n.*?```python\n(.*?)```", readme, re.S).group(1)
    assert "sample_agents/" not in code
    script = "import matplotlib\nmatplotlib.use('Agg')\n" + code + "\nprint(len(df), errors.empty)"
    assert ROOT not in wheel.run.resolve().parents
    done = subprocess.run(
        [str(wheel.env / "bin" / "python"), "-c", script],
        capture_output=True,
        text=True,
        cwd=wheel.run,
        env=wheelenv.environment(),
    )
    assert done.returncode == 0, done.stderr
    # the same shipped samples, copied here from the clone: every agent's compactions
    import shutil
    import warnings

    from adfkit._base.bundled import sample_files
    from adfkit._facade.agent import agents_of

    shipped = tmp_path / "shipped"
    for rel in sample_files():
        (shipped / rel).parent.mkdir(parents=True, exist_ok=True)
        src = ROOT / "sample_agents" / rel
        (shutil.copytree if src.is_dir() else shutil.copyfile)(src, shipped / rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = adfkit.list_sessions(shipped)["path"]
        fleet = sum(len(a.compactions()) for p in inputs for a in agents_of(adfkit.open(p)))
    assert done.stdout.split() == [str(fleet), "True"]


def test_with_the_notebooks_extra_every_bundled_notebook_reports(wheel_with_notebooks):
    """Every bundled notebook through ``adfkit report``, outside the source tree: from the
    wheel's own folder the default notebook and 06 (it opens a second sample), and the copies
    ``adfkit notebooks DIR`` writes of the others and of 06 (by path: their relative sample
    paths are the copies'). tests/test_notebooks.py checks that a notebook opens samples only
    from its parameters cell, and only shipped ones, so each runs alike from both places."""
    w = wheel_with_notebooks
    done = w.adfkit("notebooks", "nb2")
    assert done.returncode == 0, done.stderr
    lab = f"jupyter lab {Path('nb2') / 'notebooks'}"
    assert done.stderr.splitlines()[-1].endswith(f"copied; open them with: {lab}"), done.stderr
    copies = sorted((w.run / "nb2" / "notebooks").glob("*.ipynb"))
    assert [p.stem for p in copies] == sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    agent = "nb2/sample_agents/long-runner.adf"
    bundled = ("01-quickstart", "06-compare-agents")  # the default; the one with a SESSION
    runs = [("bundled", stem, stem) for stem in bundled]
    runs += [("copied", nb.stem, str(nb)) for nb in copies if nb.stem != bundled[0]]
    with Background() as background:  # each report is a kernel of its own: two at a time
        for how, stem, which in runs:
            out = f"{how}-{stem}.html"
            background.start(out, w.adfkit, "report", agent, "--notebook", which, "-o", out)
        done_all = [background.result(f"{how}-{stem}.html") for how, stem, _ in runs]
    for (how, stem, _which), done in zip(runs, done_all, strict=True):
        out = f"{how}-{stem}.html"
        assert done.returncode == 0, f"{how} {stem}: {done.stderr}"
        html = (w.run / out).read_text()
        assert "adfkit report: long-runner" in html, f"{how} {stem}"
        assert "Traceback" not in html, f"{how} {stem}"


def test_a_file_left_open_elsewhere_is_not_a_cli_warning(monkeypatch, capsys):
    """The CLI shows every warning as one line, but not a ResourceWarning (ignored by Python's
    default too): a file some other code left open, collected while a command runs, is no news
    for the user (it made a refusal print three lines instead of one)."""

    def command(_args: argparse.Namespace) -> int:
        warnings.warn("unclosed file <_io.TextIOWrapper name=16>", ResourceWarning, stacklevel=1)
        warnings.warn("x.adf: a real warning", adfkit.AdfWarning, stacklevel=1)
        return 0

    parser = argparse.ArgumentParser()
    parser.set_defaults(func=command)
    monkeypatch.setattr(adfkit.cli, "build_parser", lambda: parser)
    assert main([]) == 0
    assert capsys.readouterr().err.splitlines() == ["adfkit: warning: x.adf: a real warning"]


def test_report_without_the_notebooks_extra_says_what_to_install(monkeypatch, capsys, tmp_path):
    """One error line naming the missing modules and the pip command, not an internal error."""
    monkeypatch.setattr("adfkit._facade.report.missing", lambda: ["nbformat", "nbclient"])
    out = tmp_path / "r.html"
    assert main(["report", str(sample("clean")), "-o", str(out), "--notebook", "01"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "adfkit: error: running a notebook needs nbformat, nbclient, which are not installed: "
        'pip install "adfkit[notebooks]"'
    ]
    assert not out.exists()


def test_an_output_named_as_the_input_is_refused_in_plain_words(tmp_path, capsys):
    agent = tmp_path / "long-runner.adf"
    shutil.copyfile(sample("long-runner"), agent)
    assert main(["report", str(agent), "-o", str(agent)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"it is the input file {agent};" in line and "another name" not in line, line
    link = tmp_path / "other-name.adf"
    os.link(agent, link)
    assert main(["report", str(agent), "-o", str(link)]) == 2
    assert "under another name" in capsys.readouterr().err


def test_plot_takes_several_agents_and_a_folder(tmp_path, capsys, monkeypatch):
    """`-o plots/` is a folder (not a hidden `plots/.png`); several agents each get a file."""
    monkeypatch.chdir(tmp_path)
    a, b = str(sample("clean")), str(sample("forgetful"))
    assert main(["plot", a, "--kind", "context", "-o", "plots/"]) == 0
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["clean-context.png"]
    assert main(["plot", a, b, "--kind", "growth", "-o", "many"]) == 0
    written = capsys.readouterr().out.split()
    assert written[-2:] == ["many/clean-growth.png", "many/forgetful-growth.png"]
    assert all((tmp_path / w).stat().st_size > 1000 for w in written)
    assert main(["plot", a, b]) == 0  # default: the current folder
    assert (tmp_path / "clean-context.png").is_file()
    assert (tmp_path / "forgetful-context.png").is_file()


def test_info_shows_lost_history_and_times_in_words(capsys):
    """Where the history's range is shown, so are the seqs lost without audit (counted here
    from the gaps); times to the second in UTC; one name for what `check` lists."""
    f = sample("forgetful")
    lost = int(adfkit.open_adf(f).history_gaps()["n_seqs"].sum())
    assert lost > 0
    assert main(["info", str(f)]) == 0
    out = capsys.readouterr().out
    assert f"history    seq 1..284, {lost} of them lost (discarded without audit)" in out
    assert re.search(r"live loop  41 rows, seq 244\.\.284, 2026-\d\d-\d\d \d\d:\d\d:\d\d UTC", out)
    assert "+00:00" not in out and ".000" not in out
    session = ROOT / "sample_agents" / SESSION
    assert main(["info", str(session)]) == 0
    out = capsys.readouterr().out
    n = len(adfkit.open(session).loop())
    assert f"in context  {n} rows, seq " in out  # a transcript has no "live loop"
    findings = len(adfkit.open(session).integrity())
    assert f"adfkit check lists {findings} finding(s)" in out, out
