"""What a researcher, a student and a pip user see (issue 35): outputs named and placed as asked,
each format described in its own words, transcripts readable, samples that make a fleet."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SAMPLES, sample

import adfkit.cli._report as report_cli
from adfkit.cli import main

COPILOT = SAMPLES / "copilot_cli" / "session-state" / "6df5dfb8-76b8-47ef-add4-3e771030055d"
SESSION = (
    SAMPLES
    / "claude-code/projects/-home-user-work-webapp/24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"
)


@pytest.fixture
def reports(monkeypatch):
    """``adfkit report`` with its kernel replaced by a recorder of the paths it would write."""
    written: list[Path] = []

    def fake(path, target, **_):
        written.append(Path(target))
        return Path(target)

    monkeypatch.setattr(report_cli, "write_report", fake)
    return written


# item 6 ---------------------------------------------------------------------------------------


def test_report_into_an_existing_folder(tmp_path, reports, capsys):
    """`adfkit report F -o reports/` (a folder that exists, with or without the slash) writes
    reports/<stem>-report.html; it was refused as 'not .html'."""
    (tmp_path / "reports").mkdir()
    for out in (tmp_path / "reports", f"{tmp_path / 'reports'}/"):
        assert main(["report", str(sample("clean")), "-o", str(out)]) == 0, capsys.readouterr()
    assert reports == [tmp_path / "reports" / "clean-report.html"] * 2
    assert main(["report", str(sample("clean")), "-o", str(tmp_path / "one.html")]) == 0
    assert reports[-1] == tmp_path / "one.html"  # a file name is still a file


def test_copilot_outputs_are_named_by_session(tmp_path, reports, capsys):
    """Every Copilot CLI session's file is events.jsonl: plots and reports are named by the
    session's folder, as other formats' are by their session, not events-*.png."""
    sid = COPILOT.name
    for given in (COPILOT, COPILOT / "events.jsonl"):
        out = tmp_path / given.name
        assert main(["plot", str(given), "--kind", "all", "-o", str(out)]) == 0
        names = sorted(p.name for p in out.iterdir())
        assert names and all(n.startswith(f"{sid}-") for n in names), names
        assert main(["report", str(given), "-o", f"{out}/"]) == 0
        assert reports[-1] == out / f"{sid}-report.html"
    capsys.readouterr()


def _make_chromium(tmp_path: Path, uid: int) -> tuple[str, list[str]]:
    """``make chromium`` on a PATH without Chromium, as user ``uid``, with an apt-get that
    records what it was asked to do instead of doing it."""
    import shutil
    import subprocess

    bin_ = tmp_path / f"bin{uid}"
    bin_.mkdir()
    for tool in ("make", "sh"):
        (bin_ / tool).symlink_to(shutil.which(tool))  # type: ignore[arg-type]
    log = tmp_path / f"apt{uid}.log"
    (bin_ / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_ / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    for f in ("id", "apt-get"):
        (bin_ / f).chmod(0o755)
    env = {"PATH": str(bin_), "HOME": str(tmp_path)}
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        ["make", "-s", "-C", str(root), "chromium"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, log.read_text().splitlines() if log.exists() else []


def test_make_test_finds_or_installs_chromium_or_says_what_is_skipped(tmp_path):
    """`make test` gets Chromium the way .ci/run did (as root, from Debian), so the browser
    tests run; where it cannot, it says they will be skipped and how to get them. README says
    the same, not "browser included" unconditionally."""
    import re

    root = Path(__file__).resolve().parents[1]
    assert re.search(r"^test: .*\bchromium\b", (root / "Makefile").read_text(), re.M)
    out, apt = _make_chromium(tmp_path, 0)
    assert apt == ["install -y -qq chromium"], (out, apt)
    out, apt = _make_chromium(tmp_path, 1000)
    assert apt == []
    assert "the browser tests (tests/test_browser.py) will be skipped" in out
    readme = (root / "README.md").read_text()
    assert "browser included" not in readme
    assert "make test` installs it" in readme
