"""The command line as a user meets it: several agents at once, one error form, terminal-safe
output, one warning about prices, and a wheel install that has everything it needs."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import venv
import warnings
from pathlib import Path

import pytest
from adfbuild import build, result, row, text, use
from conftest import sample

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


@pytest.mark.skipif(
    not shutil.which("git") or os.environ.get("ADFKIT_SKIP_WHEEL") == "1",
    reason="builds and installs a wheel (set ADFKIT_SKIP_WHEEL=1 to skip)",
)
def test_a_wheel_install_has_notebooks_reports_and_no_synth(tmp_path):
    """Build the wheel, install it in a fresh venv, run `adfkit report` and `adfkit notebooks`
    from it, outside the source tree."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(wheels)],
        check=True,
        cwd=tmp_path,
    )
    (whl,) = wheels.glob("adfkit-*.whl")
    names = subprocess.run(
        [sys.executable, "-m", "zipfile", "-l", str(whl)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "adfkit/notebooks/01-quickstart.ipynb" in names
    assert "adfkit/sample_agents/long-runner.adf" in names
    assert "synth" not in names and "adfsynth" not in names
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", f"adfkit[notebooks] @ {whl.as_uri()}"],
        check=True,
        cwd=tmp_path,
    )
    run = tmp_path / "elsewhere"
    run.mkdir()
    adfkit = env_dir / "bin" / "adfkit"
    done = subprocess.run(
        [str(adfkit), "notebooks", str(run / "nb")], capture_output=True, text=True, cwd=run
    )
    assert done.returncode == 0, done.stderr
    assert (run / "nb" / "notebooks" / "04-fleet.ipynb").is_file()
    agent = run / "nb" / "sample_agents" / "long-runner.adf"
    done = subprocess.run(
        [str(adfkit), "report", str(agent), "-o", "r.html"], capture_output=True, text=True, cwd=run
    )
    assert done.returncode == 0, done.stderr
    assert (run / "r.html").read_text().count("adfkit report: long-runner") >= 1


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
