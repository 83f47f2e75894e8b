"""The ``inspect`` section of ``make bench`` (issue 38): large Inspect logs against Inspect's own
loader.

Inspect AI's ``read_eval_log(path)`` (every sample parsed into its pydantic models) is the
peer: what a user of Inspect pays to have a log in memory. inspect-ai is installed from PyPI
into ``build/inspect-venv`` by the benchmark itself (pinned: 0.3.285, the version that wrote
the generated fixtures); the logs are written with it too (``gen_inspect.py``: Inspect's
``react`` agent, compaction and ``.eval`` recorder driven by a scripted mock model), 64 and 256
samples of ten model calls each, with a summary compaction (two per sample) and without any,
cached under ``build/bench/inspect``.

Timed, each as whole processes, CPU seconds (user + system of the process and its children,
from ``wait4``: the shared machine's load does not count), best of ``repeat``:

- ``read_eval_log``: Inspect's loader on the log;
- ``history+usage+compactions``: adfkit opens the log (one agent per sample and epoch) and
  takes those three tables of every agent;
- ``every table``: the tables ``benchmarks/latency.py`` times, of every agent.

Each process also reports its own imports' CPU and the work after them, so the ratios are
given both ways: whole processes, and the work alone (what a notebook that has imported both
pays). The goals the issue implies: history+usage+compactions at most about 1x
``read_eval_log`` (the work); every table linear in samples (at most 4.4x per 4x, as
``latency``'s growth goal).

Usage: ``python benchmarks/inspect_peer.py [--quick]`` or ``python benchmarks/run.py --only
inspect`` (``--quick``: 16 and 64 samples, best of 2).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: The peer, pinned: the version that wrote the generated fixtures (their README).
INSPECT = "inspect-ai==0.3.285"
INSPECT_VENV = ROOT / "build" / "inspect-venv"
LOGS = ROOT / "build" / "bench" / "inspect"
#: Model calls per sample (pages read before the submit call).
STEPS = 9
GOALS = {"huc_vs_read_eval_log": 1.0, "growth_per_4x": 4.4}
HUC = ("history", "usage", "compactions")


def inspect_python() -> tuple[Path | None, str]:
    """The Python of build/inspect-venv, with inspect-ai installed (installed if missing), or
    None and why it could not be had."""
    py = INSPECT_VENV / "bin" / "python"
    probe = [str(py), "-c", "import inspect_ai; print(inspect_ai.__version__)"]
    want = INSPECT.split("==")[1]
    if py.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == want:
        return py, ""
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    venv = str(INSPECT_VENV)
    steps = (
        [[uv, "venv", "-q", venv], [uv, "pip", "install", "-q", "--python", str(py), INSPECT]]
        if Path(uv).exists()
        else [[sys.executable, "-m", "venv", venv], [str(py), "-m", "pip", "install", INSPECT]]
    )
    try:
        for step in steps:
            subprocess.run(step, check=True, capture_output=True, timeout=900)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        shutil.rmtree(INSPECT_VENV, ignore_errors=True)
        detail = getattr(exc, "stderr", b"") or b""
        last = detail.decode(errors="replace").strip().splitlines()[-1:] or [str(exc)]
        return None, f"installing {INSPECT} from PyPI failed: {last[0]}"
    return (py, "") if py.exists() else (None, f"installing {INSPECT} gave no python")


def log_path(py: Path, samples: int, strategy: str) -> Path:
    """The log of ``samples`` samples with ``strategy`` (``summary`` or ``none``), written by
    Inspect (``gen_inspect.py``) the first time it is asked for."""
    out = LOGS / f"{samples}-{strategy}.eval"
    if not out.exists():
        tmp = out.with_suffix(".tmp")
        cmd = [str(py), str(HERE / "gen_inspect.py"), str(tmp), str(samples), str(STEPS), strategy]
        subprocess.run(cmd, check=True, capture_output=True, cwd=LOGS.parent, timeout=1800)
        tmp.rename(out)
    return out


# --- the children: one measured process each -------------------------------------------------


def _child_peer(path: str) -> dict[str, Any]:
    t0 = time.process_time()
    from inspect_ai.log import read_eval_log

    t1 = time.process_time()
    log = read_eval_log(path)
    assert log.samples, "read_eval_log gave no samples"
    n = len(log.samples)
    return {"imports": t1 - t0, "work": time.process_time() - t1, "samples": n, "tables": {}}


def _child_adfkit(path: str, which: str) -> dict[str, Any]:
    import warnings

    warnings.simplefilter("ignore")  # mockllm has no price: one warning per sample
    t0 = time.process_time()
    import latency
    from snapshot import tables as built

    import adfkit
    from adfkit._facade.agent import agents_of

    builders = built() | {"observe": built()["turns"]}  # observe(): its turns table
    names = HUC if which == "huc" else latency.TIMED
    t1 = time.process_time()
    times: dict[str, float] = {}
    with adfkit.open(path) as opened:
        agents = agents_of(opened)
        times["open"] = time.process_time() - t1
        for name in names:
            t = time.process_time()
            for agent in agents:
                builders[name](agent)
            times[name] = time.process_time() - t
    return {"imports": t1 - t0, "work": time.process_time() - t1, "tables": times}


# --- the parent --------------------------------------------------------------------------------


def measure(cmd: list[str], repeat: int) -> dict[str, Any]:
    """The child's report of its best run (least process CPU), with ``cpu``: that CPU (user +
    system of the process and its children, from wait4), and each table's least time over
    the runs (``tables``, the adfkit children's)."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
            assert proc.stdout is not None
            out = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode:
                err.seek(0)
                tail = err.read().decode(errors="replace")[-800:]
                raise RuntimeError(f"{cmd[1:4]} failed: {tail}")
        got = json.loads(out.decode().strip().splitlines()[-1])
        got["cpu"] = usage.ru_utime + usage.ru_stime
        tables = {k: min(v, best["tables"][k]) for k, v in got["tables"].items()} if best else {}
        if best is None or got["cpu"] < best["cpu"]:
            best = got
        if tables:  # each table's best over the runs (one slow pass is the machine's)
            best["tables"] = tables
    assert best is not None
    return best


def child(args: list[str]) -> None:
    """``--child peer PATH`` / ``--child adfkit PATH {huc,all}``: run one measurement and print
    its JSON line (imports' and the work's CPU seconds)."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT))
    got = _child_peer(args[1]) if args[0] == "peer" else _child_adfkit(args[1], args[2])
    print(json.dumps(got))


def run(quick: bool) -> dict[str, Any]:
    """The section, printed; returns label -> measurements."""
    print(
        "inspect: Inspect logs written by inspect-ai's own code, adfkit against Inspect's "
        "read_eval_log; whole processes, CPU s (user+sys), best of "
        f"{2 if quick else 3}"
    )
    py, why = inspect_python()
    if py is None:
        print(f"  skipped ({why})")
        return {}
    LOGS.mkdir(parents=True, exist_ok=True)
    repeat = 2 if quick else 3
    sizes = (16, 64) if quick else (64, 256)
    me = [sys.executable, __file__, "--child"]
    results: dict[str, Any] = {}
    missed: list[str] = []
    for strategy in ("summary", "none"):
        for n in sizes:
            try:
                path = log_path(py, n, strategy)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                tail = (getattr(exc, "stderr", b"") or b"").decode(errors="replace")[-300:]
                print(f"  skipped: inspect-ai could not write the {n}-sample log ({tail})")
                return results
            label = _label(n, strategy)
            got = results[label] = {
                "bytes": path.stat().st_size,
                "peer": measure([str(py), __file__, "--child", "peer", str(path)], repeat),
                "huc": measure([*me, "adfkit", str(path), "huc"], repeat),
                "all": measure([*me, "adfkit", str(path), "all"], repeat),
            }
            missed += _report(label, got)
        missed += _growth(results, strategy, sizes)
    print(f"  goals: {'all met' if not missed else 'MISSED: ' + ', '.join(missed)}")
    return results


def _label(samples: int, strategy: str) -> str:
    return f"{samples} samples, " + (
        "summary compaction" if strategy == "summary" else "no compaction"
    )


def _report(label: str, m: dict[str, Any]) -> list[str]:
    peer, huc, alls = m["peer"], m["huc"], m["all"]
    print(f"  {label} ({m['bytes'] / 1e6:.2f} MB)")
    for name, r in (
        ("read_eval_log", peer),
        ("history+usage+compactions", huc),
        ("every table", alls),
    ):
        vs = (
            ""
            if r is peer
            else f"  {r['cpu'] / peer['cpu']:5.2f}x  {r['work'] / peer['work']:5.2f}x"
        )
        print(
            f"    {name:<26} process {r['cpu']:6.2f} s (imports {r['imports']:4.2f} s, work "
            f"{r['work']:6.2f} s){vs}"
        )
    per = "; ".join(f"{k} {v:.2f}" for k, v in alls["tables"].items())
    print(f"      every table, each (s): {per}")
    r = huc["work"] / peer["work"]
    ok = r <= GOALS["huc_vs_read_eval_log"]
    print(
        f"    history+usage+compactions vs read_eval_log, the work: {r:.2f}x (goal <= "
        f"{GOALS['huc_vs_read_eval_log']:g}x: {'met' if ok else 'MISSED'})"
    )
    return [] if ok else [f"{label}: history+usage+compactions {r:.2f}x"]


def _growth(results: dict[str, Any], strategy: str, sizes: tuple[int, int]) -> list[str]:
    a, b = (results[_label(n, strategy)] for n in sizes)
    k = sizes[1] / sizes[0]
    cells, missed = [], []
    for name, t in b["all"]["tables"].items():
        t0 = a["all"]["tables"][name]
        if t >= 0.05:  # below it the ratio of two tiny times is noise
            g = t / max(t0, 1e-6) * 4 / k
            flag = "" if g <= GOALS["growth_per_4x"] else "!"
            cells.append(f"{name} {g:.1f}{flag}")
            if flag:
                missed.append(f"growth {strategy} {name}")
    g_all = b["all"]["work"] / a["all"]["work"] * 4 / k
    g_peer = b["peer"]["work"] / a["peer"]["work"] * 4 / k
    print(
        f"  growth {sizes[0]} -> {sizes[1]} samples ({strategy}), per 4x (goal <= "
        f"{GOALS['growth_per_4x']:g}): every table {g_all:.1f}, read_eval_log {g_peer:.1f}"
    )
    for i in range(0, len(cells), 6):
        print("    " + "; ".join(cells[i : i + 6]))
    return missed


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        run("--quick" in sys.argv)
