"""Claude Code sessions for the forgetting benchmark: the planted story of
``adfsynth.forgetting`` told ``n`` times in one session, each time with its own files and a
compaction, so rows, items and compactions grow together; and hostile texts for the item
rules (``a-`` runs, digits, backquotes, error-like lines) of growing size."""

from __future__ import annotations

import random
from pathlib import Path

from adfsynth.claude_code import SUMMARY_PREFIX
from adfsynth.forgetting import LONG, QUIET, _Recording, _set_summary


def long_session(folder: Path, n: int, seed: int = 7) -> Path:
    """One session telling the story ``n`` times (about 30 rows and one compaction each)."""
    path = folder / f"forgetting-{n}.jsonl"
    if path.exists():
        return path
    rng = random.Random(seed)
    s = _Recording(rng, f"00000000-0000-4000-8000-{n:012d}", "/w/app", "2.1.90", 1772352000000)
    for i in range(n):
        up, lim = f"/w/app/src/upload_{i}.py", f"/w/app/src/limits_{i}.py"
        cmd = f"pytest -q tests/test_upload_{i}.py"
        err = f"FAILED tests/test_upload_{i}.py::test_big - AssertionError: {400 + i}"
        s.user(f"Always run make check {i} before committing. The limit is {i} MB, see `h_{i}`.")
        s.tool("Read", {"file_path": up}, LONG[: 2000 + 40 * (i % 50)])
        s.tool("Read", {"file_path": lim}, QUIET)
        s.tool("Bash", {"command": cmd}, err, error=True)
        s.tool("Edit", {"file_path": up, "old_string": "a", "new_string": "b"}, QUIET)
        s.tool("TodoWrite", {"todos": [{"content": f"Raise limit {i}", "status": "pending"}]}, "ok")
        s.say(f"Done {i}; see https://docs.example.org/limits/{i}.")
        s.compact("auto")
        _set_summary(s, SUMMARY_PREFIX + f"Summary:\n1. Edited {up}; h_{i} streams.\n")
        s.tool("Read", {"file_path": lim}, QUIET)
        s.tool("Bash", {"command": cmd}, err, error=True)
        s.user(f"Always run make check {i} before committing.")
        s.say(f"Step {i} is done.")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(s.text(), encoding="utf-8")
    return path


def hostile(n: int) -> dict[str, str]:
    """Texts of about ``n`` characters that would make a backtracking pattern quadratic."""
    return {
        '"a-" repeated': "a-" * (n // 2),
        "digits then a unit": "1" * n + " ms",
        "open backquote": "`" + "x" * n,
        "error-like lines": ("xError" * 10 + "\n") * (n // 61),
        "snake-like words": "_a" * (n // 2),
    }
