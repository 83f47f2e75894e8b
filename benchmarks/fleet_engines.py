"""The ``engines`` section of ``make bench`` (issue 37): ``load_fleet`` on each engine.

One generated fleet of ADF agents (``gen.write_agent``, as the ``fleet`` section's, 200 agents;
``--quick``: 40), one table per round, wall clock, best of 3 interleaved rounds in this process:
``serial``, the process engine adfkit had before issue 37 (``legacy_engine.py``: a hand-made
scheduler, measured here only as the reference), and ``engine="processes"`` as it is now; the
ratios are against the old engine, measured in the same run. The frames are checked identical
to the serial run's. Then the Parquet index: a first and a second run of ``cache=`` against a
fresh read, frames checked identical (types included), best of 3 rounds, wall and CPU time.

Beside the wall clock, each engine's CPU time (user + system of this process and of the worker
processes it waited for, best of the rounds): on a shared, loaded machine the wall clock says
how much of the cores the others left, the CPU time what each engine costs. ``on N free cores``
is the speed-up the pool would give at most where its N workers each had a core of their own
(N times serial's CPU time over the pool's, the work shared evenly): the gain the wall clock can
show only on a quiet machine, and less than that where serial is not one core's work (serially,
the ADF reader decodes audit blobs in a thread beside the loader's; a worker does not). Below
``fleet.SMALL_FLEET_BYTES`` of input (``--quick``) the process engine runs serially, and the
section says so.

Usage: ``python benchmarks/run.py --only engines [--quick]``, or this file directly.
"""

from __future__ import annotations

import functools
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402
import legacy_engine  # noqa: E402

from adfkit._facade import fleet  # noqa: E402

TABLES = ("history", "compactions")


def agents(root: Path, n: int) -> list[str]:
    """``n`` generated agents under ``root`` (made once; the ``fleet`` section's recipe)."""
    folder = root / f"fleet-engines-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"agent-{i:03d}.adf" for i in range(n)]
    corpus = None
    for i, p in enumerate(paths):
        if not p.exists():
            corpus = corpus or gen.Corpus(random.Random(3), 100_000)
            gen.write_agent(
                p,
                n_blobs=6,
                rows_per_blob=120,
                live_rows=60,
                seed=100 + i,
                corpus=corpus,
                scale=0.5,
            )
    return [str(p) for p in paths]


def legacy(paths: list[str], table: str) -> pd.DataFrame:
    """``load_fleet(paths, table)`` with the old scheduler in place of the engine."""
    one = functools.partial(_load, table=table)
    results = legacy_engine.run(one, paths)
    frames = [df for df, _ in results if df is not None]
    assert len(frames) == len(paths), [e for _, e in results if e is not None][:3]
    return fleet._distinct_labels(pd.concat(frames, ignore_index=True))


def _load(path: str, table: str) -> object:
    load = getattr(fleet, "load_one", None) or fleet._load_one  # (before issue 37: private)
    return load(path, table, {}, {})


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def cpu() -> float:
    """CPU seconds so far of this process and of the (worker) processes it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def engines(
    paths: list[str], table: str, rounds: int = 3
) -> tuple[dict[str, float], dict[str, float]]:
    """Best wall time and best CPU time of each engine over ``rounds`` interleaved rounds."""
    runs = {
        "serial": lambda: fleet.load_fleet(paths, table, engine="serial", progress=False).df,
        "old processes": lambda: legacy(paths, table),
        "processes": lambda: fleet.load_fleet(paths, table, engine="processes", progress=False).df,
    }
    best = dict.fromkeys(runs, float("inf"))
    best_cpu = dict.fromkeys(runs, float("inf"))
    ref = None
    for _ in range(rounds):  # interleaved: the machine is shared
        for name, fn in runs.items():
            c = cpu()
            t, df = timed(fn)
            best_cpu[name] = min(best_cpu[name], cpu() - c)
            best[name] = min(best[name], t)
            if ref is None:
                ref = df
            else:
                pd.testing.assert_frame_equal(ref, df, check_exact=True)
    return best, best_cpu


def index_round_trip(
    paths: list[str], table: str, rounds: int = 3
) -> tuple[dict[str, tuple[float, float]], str]:
    """A fresh read, the first run with an index and the second (read back), in ``rounds``
    rounds (a new index each): the best wall and CPU time of each, and how the runs' frames
    compare with the fresh read's (equal frames, and the same type in every cell: a tuple read
    back as a list is a difference)."""
    best = {k: (float("inf"), float("inf")) for k in ("fresh", "first", "second")}
    how = ""
    for _ in range(rounds):
        tmp = tempfile.mkdtemp(prefix="adfkit-bench-index-")
        try:
            got = {}
            for name, kw in (("fresh", {}), ("first", {"cache": tmp}), ("second", {"cache": tmp})):
                c = cpu()
                t, got[name] = timed(
                    lambda kw=kw: (
                        fleet.load_fleet(paths, table, engine="serial", progress=False, **kw).df
                    )
                )
                c = cpu() - c
                best[name] = (min(best[name][0], t), min(best[name][1], c))
            diffs = [_differs(got["fresh"], got[k]) for k in ("first", "second")]
            same = "identical to the fresh read, cell types too"
            how = " / ".join(d or same for d in diffs)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return best, how


def _differs(a: pd.DataFrame, b: pd.DataFrame) -> str | None:
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    except AssertionError as exc:
        return "DIFFERENT: " + str(exc).strip().splitlines()[0]
    for col in a.columns:
        ta = {type(x).__name__ for x in a[col].tolist()}
        tb = {type(x).__name__ for x in b[col].tolist()}
        if ta != tb:
            return f"DIFFERENT cell types in {col}: {sorted(ta)} vs {sorted(tb)}"
    return None


def run(quick: bool) -> None:
    root = HERE.parent / "build" / "bench"
    paths = agents(root, 40 if quick else 200)
    mb = sum(os.path.getsize(p) for p in paths) / 1e6
    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    print(
        f"load_fleet on each engine: {len(paths)} generated agents ({mb:,.0f} MB), {cores} cores "
        f"(load average {load:.1f}), wall clock and CPU time (this process and its workers), "
        "best of 3 interleaved rounds, frames checked identical"
    )
    small = fleet.small_fleet(paths)
    if small:
        print(
            f"  (below {fleet.SMALL_FLEET_BYTES >> 20} MB of input the process engine runs "
            "serially: `processes` is serial here)"
        )
    for table in TABLES:
        best, best_cpu = engines(paths, table)
        old = best["old processes"]
        print(f"  {table}")
        for name, t in best.items():
            c = best_cpu[name]
            n = 1 if name == "serial" or (name == "processes" and small) else cores
            free = n * best_cpu["serial"] / c
            print(
                f"    {name:<15} {t:7.2f} s   {best['serial'] / t:5.2f}x serial's speed   "
                f"{t / old:5.2f}x the old engine's time   CPU {c:7.2f} s "
                f"({c / best_cpu['serial']:4.2f}x serial's; {free:4.2f}x serial's speed on "
                f"{cores} free cores)"
            )
    sub = paths[: min(len(paths), 40)]
    for table in TABLES:
        best, how = index_round_trip(sub, table)
        (w0, c0), (w1, c1), (w2, c2) = best["fresh"], best["first"], best["second"]
        print(
            f"  index ({table}, {len(sub)} agents, best of 3): fresh {w0:.2f} s (CPU {c0:.2f} s), "
            f"first run {w1:.2f} s (CPU {c1:.2f} s), second {w2:.2f} s (CPU {c2:.2f} s: "
            f"{c2 / c0:.2f}x the fresh read's); first run / second run: {how}"
        )


if __name__ == "__main__":
    run("--quick" in sys.argv)
