"""The one discovery rule on a folder holding every agent's recording: each recorded session
once, in its own format, and a "not an agent file" line per file a format's ``find`` named
that no format reads (the request logs), never an error."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import pytest

import adfkit
from adfkit._core import registry
from adfkit._facade.fleet import resolve_inputs

RECORDED = Path(__file__).parent / "fixtures" / "recorded"

#: Sessions each recording holds (its notes): Codex's three sessions and the subagent the third
#: spawned, each its own rollout; every other agent one session.
SESSIONS = {
    "claude-code": ("claude_code", 1),
    "codex": ("codex", 4),
    "copilot-cli": ("copilot_cli", 1),
    "gemini-cli": ("gemini_cli", 1),
    "openclaw": ("openclaw", 1),
    "opencode": ("opencode", 1),
    "pi": ("pi", 1),
    "qwen-code": ("qwen_code", 1),
}


def test_every_recording_once_in_its_own_format() -> None:
    found = registry.discover(RECORDED)
    assert found.problems == []
    by_agent: Counter[tuple[str, str]] = Counter()
    for p in found.inputs:
        agent = Path(p).relative_to(RECORDED).parts[0]
        by_agent[agent, registry.recognise(p).name] += 1
    assert dict(by_agent) == {(a, f): n for a, (f, n) in SESSIONS.items()}
    # the request logs: named by Claude Code's find (*.jsonl), read by no format: one line each
    assert sorted(str(s.path) for s in found.skipped) == sorted(
        str(RECORDED / a / v.name / "requests.jsonl")
        for a in SESSIONS
        for v in (RECORDED / a).iterdir()
    )
    assert all("not an agent file" in s.detail for s in found.skipped)


def test_load_fleet_warns_a_line_per_skipped_file() -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        paths, problems = resolve_inputs(str(RECORDED))
    assert problems == []
    lines = [str(w.message) for w in got if "not an agent file" in str(w.message)]
    assert len(lines) == len(SESSIONS)
    assert len(paths) == sum(n for _, n in SESSIONS.values())


def test_a_named_file_no_format_reads_is_still_an_error() -> None:
    (log,) = (RECORDED / "pi").glob("*/requests.jsonl")
    found = registry.discover(log)
    assert found.inputs == [str(log)] and found.skipped == []
    with pytest.raises(adfkit.UnknownFormatError):
        registry.recognise(log)


def test_usage_of_the_recordings_folder_runs_clean() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "adfkit", "usage", str(RECORDED), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "error" not in run.stderr
    assert run.stderr.count("not an agent file") == len(SESSIONS)
