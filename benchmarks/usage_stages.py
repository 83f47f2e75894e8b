"""Where ``adfkit usage``'s time goes on Claude Code sessions, stage by stage, against the floor
(``fleet_floor.parse_all``: every line parsed with orjson, nothing else), in one process, on
the same files: what ``fleet-real``'s "first run / floor" is made of (issue 38).

Each stage is timed as the whole reading up to it, so a row less the row before it is that
stage's own cost (CPU seconds, the best of ``--repeat`` rounds, the stages interleaved in each
round (the machine may be shared), the collector paused as ``adfkit usage`` pauses it):

- ``read``: the lines read and sorted into records (``records._read``: ``JsonLines`` with its
  caps and depth check, the dispatch by record type, the links of ``progress`` records);
- ``parse``: the whole parser (the chain walked, rows built and merged by call, events,
  branches, subagents, the usage counted once per call);
- ``figures``: the parser and the fast path's calls, events, label texts
  (``transcript.figures.session_figures``);
- ``session``: ``adfkit usage``'s work for the file (recognition, the figures, the days);
- ``recognise`` alone (the format's recognition from the file's head);
- ``no depth`` alone: ``read`` without the check of each line's nesting (``JsonLines``' opener
  count of every line over 400 bytes, then the walk of a line with more than 200): ``read``
  less this row is what that check costs (about 0.3x the floor on the generated fleet).

Each stage's result is dropped file by file, as ``adfkit usage`` drops it (results held for
every file at once cost page faults the command never pays).

Usage: ``python benchmarks/usage_stages.py FOLDER [--files N] [--repeat K]`` (FOLDER: a
``projects`` folder such as ``build/bench/fleet-real-500x520mb/projects``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fleet_floor import parse_all

from adfkit._base.collector import gc_paused
from adfkit._core import registry
from adfkit._core.prices import load_prices
from adfkit._facade.usage.reading import session_days
from adfkit._sources.claude_code.parser import parse_claude_code
from adfkit._sources.claude_code.records import _read
from adfkit._sources.transcript import json_lines
from adfkit._sources.transcript.figures import session_figures
from adfkit._sources.transcript.findings import Findings
from adfkit._sources.transcript.lines import DEFAULT_MAX_LINE_BYTES


def cpu(fn: Callable[[str], object], files: list[str]) -> float:
    """The CPU time of ``fn`` on every file (seconds), the collector paused, each result
    dropped before the next file."""
    t = time.process_time()
    with gc_paused():
        for f in files:
            fn(f)
    return time.process_time() - t


def _no_depth_read(path: str) -> object:
    """:func:`_read` with ``JsonLines``' depth check off (no line is long enough for it)."""
    deep = json_lines._DEEP_LINE
    json_lines._DEEP_LINE = 1 << 62
    try:
        return _read(Path(path), DEFAULT_MAX_LINE_BYTES, Findings())
    finally:
        json_lines._DEEP_LINE = deep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--files", type=int, default=60, help="sessions timed (the first N by name)")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    files = [
        p for p in registry.discover(a.folder).inputs if registry.recognise(p).name == "claude_code"
    ][: a.files]
    if not files:
        print(f"no Claude Code session under {a.folder}")
        return 1
    prices = load_prices(None)
    session_days(files[0], None)  # imports and the price table loaded before any timing
    stages: list[tuple[str, Callable[[str], object]]] = [
        ("floor", parse_all),
        ("read", lambda f: _read(Path(f), DEFAULT_MAX_LINE_BYTES, Findings())),
        ("parse", lambda f: parse_claude_code(f, warn=False)),
        ("figures", lambda f: session_figures(parse_claude_code(f, warn=False), prices)),
        ("session", lambda f: session_days(f, None)),
        ("recognise", registry.recognise),
        ("no depth", _no_depth_read),
    ]
    got = dict.fromkeys((name for name, _ in stages), float("inf"))
    for _ in range(a.repeat):
        for name, fn in stages:
            got[name] = min(got[name], cpu(fn, files))
    floor = got["floor"]
    print(f"{len(files)} Claude Code sessions, CPU s (best of {a.repeat}), x the floor")
    prev = floor
    for name, _ in stages:
        alone = name in ("floor", "recognise", "no depth")
        own = "" if alone else f"   (+{got[name] - prev:.3f})"
        print(f"  {name:10} {got[name]:7.3f}  {got[name] / floor:5.2f}x{own}")
        if not alone or name == "floor":
            prev = got[name]
    return 0


if __name__ == "__main__":
    sys.exit(main())
