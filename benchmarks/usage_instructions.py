"""``adfkit usage``'s work on Claude Code sessions against the floor, in instructions: the same
figure every run, where CPU seconds on a shared 2-core virtual machine vary by a quarter.

Runs one interpreter per mode under ``valgrind --tool=callgrind`` (instructions counted, not
time: the same count for the same code and input, whatever else the machine does):
``none`` (imports, the price table, one session read to load what a first read loads),
``floor`` (then ``fleet_floor.parse_all`` of each session: every line parsed with orjson) and
``usage`` (then ``session_days`` of each session: what ``adfkit usage`` does for a file). A
mode less ``none`` is its work; the ratio of the two is what ``fleet-real``'s "first run /
floor" measures in seconds. Instructions are not seconds: orjson's few instructions do more
in a cycle than the interpreter's, so the ratio in CPU seconds is higher (about 2.5x where this
says 2.06x, issue 38).

adfkit's modules are compiled first (``compileall``): with ``PYTHONDONTWRITEBYTECODE`` set, a
changed module would else be compiled again in every interpreter, and counted.

Usage: ``python benchmarks/usage_instructions.py FOLDER [--files N] [--tree DIR]`` (FOLDER: a
``projects`` folder such as ``build/bench/fleet-real-500x520mb/projects``, the first N
sessions by name; DIR: another checkout, a ``git worktree`` of an older commit, to compare).
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: What each mode runs after the imports and the warm-up read (``FILES``: the sessions).
CHILD = """
import sys
sys.path.insert(0, {bench!r})
from fleet_floor import parse_all
from adfkit._base.collector import gc_paused
from adfkit._facade.usage.reading import session_days
FILES, WARM, MODE = {files!r}, {warm!r}, {mode!r}
session_days(WARM, None)
with gc_paused():
    for f in FILES:
        if MODE == "floor":
            parse_all(f)
        elif MODE == "usage":
            session_days(f, None)
"""


def instructions(mode: str, files: list[str], warm: str, tree: Path) -> int:
    """Instructions of one interpreter running ``mode`` on the adfkit of ``tree`` (callgrind's
    total)."""
    code = CHILD.format(bench=str(ROOT / "benchmarks"), files=files, warm=warm, mode=mode)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = subprocess.run(
        [*cmd, sys.executable, "-c", code],
        env=env,
        cwd=tree,  # ``python -c`` imports from its folder first
        capture_output=True,
        text=True,
        check=True,
    )
    m = re.search(r"Collected : (\d+)", done.stderr)
    if m is None:
        raise SystemExit(f"callgrind printed no total:\n{done.stderr[-2000:]}")
    return int(m.group(1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--files", type=int, default=20, help="sessions counted (the first N)")
    ap.add_argument(
        "--tree", type=Path, default=ROOT, help="the checkout whose adfkit is counted (this one)"
    )
    a = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)")
        return 1
    found = sorted(str(p) for p in Path(a.folder).rglob("*.jsonl") if "subagents" not in p.parts)
    if len(found) <= a.files:
        print(f"{a.folder}: {len(found)} sessions, more than --files {a.files} needed")
        return 1
    tree = a.tree.resolve()
    compileall.compile_dir(str(tree / "adfkit"), quiet=1)
    files, warm = found[: a.files], str(Path(found[-1]).resolve())
    files = [str(Path(f).resolve()) for f in files]
    got = {mode: instructions(mode, files, warm, tree) for mode in ("none", "floor", "usage")}
    floor, usage = got["floor"] - got["none"], got["usage"] - got["none"]
    print(f"{a.files} sessions, instructions after the imports (callgrind):")
    print(f"  floor {floor / 1e6:9.1f}M")
    print(f"  usage {usage / 1e6:9.1f}M   {usage / floor:.2f}x the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
