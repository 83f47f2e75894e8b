"""history() of this checkout against another revision, file by file, in the same minutes.

An ``.adf`` file is opened with ``open_adf``; a transcript (``*.jsonl``, ``*.jsonl.zst``: a Claude
Code session, a Codex rollout) with ``adfkit.open``, which parses it whole, so its time is the
reader's (parse, rows, events) plus history().

Ratios against a floor (``run.py``) say how close adfkit is to what it must do; this says
whether a change made it faster or slower. Each measurement runs in a fresh process (so one
run's memory does not slow the next), the two revisions interleaved, best of ``--rounds``.
The other revision is checked out into a temporary git worktree, removed afterwards.

Usage: ``python benchmarks/compare.py REV [FILE ...] [--rounds N]`` (default files: the large
agent, the real-shaped agent and, when ``../shared`` is there, the ``big-runner`` fixture;
generate them first with ``make bench`` or ``python benchmarks/gen.py``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIG_RUNNER = ROOT.parent / "shared" / "fixtures" / "adf-runtime" / "big-runner.adf"

#: Run in a child: import adfkit from argv[1], time opening argv[2] + history() (an ``.adf``
#: with open_adf, anything else with adfkit.open: a transcript is parsed as it opens).
_CHILD = """
import gc, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import adfkit
warnings.simplefilter("ignore")
opener = adfkit.open_adf if sys.argv[2].endswith(".adf") else adfkit.open
best = float("inf")
for _ in range(int(sys.argv[3])):
    gc.collect()
    t = time.perf_counter()
    with opener(sys.argv[2]) as agent:
        agent.history()
    best = min(best, time.perf_counter() - t)
print(best)
"""


def _time(root: Path, path: Path, repeat: int) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), str(path), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the revision to compare with (a commit, tag or branch)")
    ap.add_argument("files", nargs="*", type=Path, help="agent files (default: see above)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    args = ap.parse_args(argv)
    files = args.files or [
        p
        for p in (
            ROOT / "build" / "bench" / "large-full.adf",
            ROOT / "build" / "bench" / "real-400x300.adf",
            BIG_RUNNER,
        )
        if p.exists()
    ]
    if not files:
        ap.error("no agent files: run `make bench` (or benchmarks/gen.py) first, or name some")
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "rev"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(other), args.rev],
            check=True,
        )
        try:
            print(f"open + history() (best of {args.rounds} fresh processes)")
            print(f"  {'file':<24} {'this checkout':>14} {args.rev[:14]:>14}  ratio")
            for path in files:
                size = path.stat().st_size
                # small files: several calls per process, so the best is not one unlucky run
                repeat = 1 if size > 50_000_000 else 5 if size > 5_000_000 else 15
                here = there = float("inf")
                for _ in range(args.rounds):
                    here = min(here, _time(ROOT, path, repeat))
                    there = min(there, _time(other, path, repeat))
                print(
                    f"  {path.name:<24} {here * 1000:11.1f} ms {there * 1000:11.1f} ms"
                    f"  {here / there:5.2f}x"
                )
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=True
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
