"""The ``fleet-real`` section of ``make bench`` (issue 23): adfkit against ccusage 20.

Whole-process times, in one run, of the same job on the same folder: ccusage's per-session
report (``ccusage session --json --offline``) and ``adfkit usage --json`` (first run, then a
first and a second run with the index: ``--cache``), on the real Claude Code sessions
(../shared) and on a generated fleet of >= 500 sessions (>= 500 MB, Claude Code sessions
written by ``gen_transcript``, about 1 MB each); plus ``import adfkit`` against
``import pandas`` and ``adfkit --version``; and the floor (``fleet_floor.py``: every line
parsed, nothing else). adfkit runs as a pip user has it: this checkout's wheel installed in
``build/bench/venv`` (whose other packages are the dev venv's), not the editable install,
whose import hook costs every process about 13 ms here. ccusage is installed from npm into
``build/ccusage`` by the benchmark itself; without npm (or offline) its rows are skipped with
the reason.

Each figure is a whole process's CPU time (user + system seconds of it and every process it
waited for: adfkit's process pool, the floor's forked parsers, node's threads), the median of
``repeat`` runs, with the best wall time beside it: on a shared, loaded machine the wall time is
mostly the other processes', and the CPU time is what the ratios are made of (ccusage's and the
floor's the same way, in the same run, interleaved).

Usage: ``python benchmarks/run.py --only fleet-real [--quick]`` (quick: a 100-session fleet).
Where the first run's time goes, stage by stage against the same floor in one process:
``benchmarks/usage_stages.py``.
"""

from __future__ import annotations

import compileall
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
import uuid
from pathlib import Path

import gen_transcript

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
#: Where the timed adfkit and python live (:func:`install_wheel` points it at the wheel's venv).
BIN = Path(sys.executable).parent
#: ccusage 20.0.26 (the newest 20) ships no linux-x64 binary; 20.0.24 is the one the issue measured.
CCUSAGE = "ccusage@20.0.24"
GOALS = {
    "import": 1.3,
    "version_s": 0.3,
    "vs_ccusage": 2.0,
    "moonshot": 1.0,
    "vs_floor": 2.0,
    "second": 0.1,
}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def once(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """``(cpu, wall)`` seconds of one run of ``cmd`` as a whole process: its CPU time (user +
    system, its own and that of the processes it waited for) and its wall time; its failure is
    the benchmark's."""
    c, t = _children_cpu(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
    return _children_cpu() - c, time.perf_counter() - t


def timed(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The median CPU time and the best wall time of ``runs``."""
    return statistics.median(c for c, _ in runs), min(w for _, w in runs)


def wall(cmd: list[str], env: dict[str, str] | None = None, repeat: int = 1) -> float:
    """Best whole-process wall time of ``cmd`` (seconds): for start-up times."""
    return min(once(cmd, env)[1] for _ in range(repeat))


def install_wheel() -> str:
    """Install this checkout's wheel in ``build/bench/venv`` and time that from now on
    (:data:`BIN`); its other packages are the dev venv's, seen through a ``.pth`` line. Returns
    what is timed, in words (the dev venv's editable install when the wheel cannot be built)."""
    global BIN
    venv, wheels = ROOT / "build" / "bench" / "venv", ROOT / "build" / "bench" / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    try:
        pip = [sys.executable, "-m", "pip"]
        run = {"check": True, "capture_output": True, "timeout": 600}
        subprocess.run([*pip, "wheel", "-q", "--no-deps", str(ROOT), "-w", str(wheels)], **run)
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], **run)
        site = next((venv / "lib").glob("python*/site-packages"))
        (site / "dev-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        wheel = str(next(wheels.glob("adfkit-*.whl")))
        install = ["install", "-q", "--no-deps", "--force-reinstall", wheel]
        subprocess.run([*pip, "--python", str(venv / "bin" / "python"), *install], **run)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, StopIteration) as exc:
        return f"the dev venv's editable install (the wheel could not be installed: {exc})"
    BIN = venv / "bin"
    return "this checkout's wheel, installed in build/bench/venv"


def ccusage_bin() -> tuple[Path | None, str]:
    """The ccusage executable under build/ccusage (installed if missing), or None and why."""
    prefix = ROOT / "build" / "ccusage"
    exe = prefix / "node_modules" / ".bin" / "ccusage"
    if exe.exists():
        return exe, ""
    if shutil.which("npm") is None:
        return None, "npm is not installed"
    try:
        subprocess.run(
            ["npm", "install", "--prefix", str(prefix), CCUSAGE],
            check=True,
            capture_output=True,
            timeout=300,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return None, f"npm install {CCUSAGE} failed (npm unreachable?): {exc}"
    return (exe, "") if exe.exists() else (None, f"npm install {CCUSAGE} gave no ccusage binary")


def generated_fleet(n: int, mb_total: float) -> Path:
    """A CLAUDE_CONFIG_DIR-shaped folder of ``n`` generated sessions, ``mb_total`` MB in all
    (sizes 0.2x..1.8x of the mean, in 10 projects), made once and kept under build/bench."""
    config = ROOT / "build" / "bench" / f"fleet-real-{n}x{int(mb_total)}mb"
    done = config / ".complete"
    if done.exists():
        return config
    rng = random.Random(23)
    mean = mb_total / n
    for i in range(n):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        gen_transcript.SID = sid  # write() names the session after the module's SID
        path = config / "projects" / f"-home-user-src-p{i % 10}" / f"{sid}.jsonl"
        gen_transcript.write(path, mean * rng.uniform(0.2, 1.8), seed=i)
    done.touch()
    return config


def real_fleet() -> Path | None:
    """A CLAUDE_CONFIG_DIR for the real sessions (``projects`` links to ../shared's)."""
    projects = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude-code" / "projects"
    if not projects.is_dir():
        return None
    config = ROOT / "build" / "bench" / "fleet-real-fixtures"
    config.mkdir(parents=True, exist_ok=True)
    link = config / "projects"
    if not link.exists():
        link.symlink_to(projects, target_is_directory=True)
    return config


def bytes_in(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))


def compare(
    label: str, config: Path, exe: Path | None, why: str, repeat: int = 1
) -> dict[str, float]:
    """ccusage and adfkit on ``config/projects``: CPU times (median of ``repeat`` runs, the
    commands interleaved run by run: the machine may be shared) and ratios printed, returned,
    with the best wall times beside them (the index is made anew for each indexing run)."""
    projects = config / "projects"
    n = sum(1 for p in projects.rglob("*.jsonl") if p.parent.name != "subagents")
    print(f"  {label}: {n} sessions, {bytes_in(projects) / 1e6:,.0f} MB")
    adfkit = [str(BIN / "adfkit"), "usage", str(projects), "--json"]
    index = ROOT / "build" / "bench" / "fleet-real-index" / config.name
    cmds: dict[str, tuple[list[str], dict[str, str] | None]] = {}
    if exe is not None:
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
        cmds["ccusage"] = ([str(exe), "session", "--json", "--offline"], env)
    cmds["floor"] = ([str(BIN / "python"), str(HERE / "fleet_floor.py"), str(projects)], None)
    cmds["first"] = (adfkit, None)
    cmds["indexing"] = ([*adfkit, "--cache", str(index)], None)
    cmds["second"] = ([*adfkit, "--cache", str(index)], None)
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for key, (cmd, env_k) in cmds.items():
            if key == "indexing":
                shutil.rmtree(index, ignore_errors=True)
            runs[key].append(once(cmd, env_k))
    out: dict[str, float] = {}
    walls: dict[str, float] = {}
    for key in cmds:
        out[key], walls[key] = timed(runs[key])
    if exe is None:
        print(f"    ccusage: skipped ({why})")
    base = out.get("ccusage")
    head = f"(CPU s: median of {repeat}; wall s: best)"
    print(f"    {head:<42} {'CPU':>7}   {'wall':>7}")
    for key, text in (
        ("ccusage", "ccusage session --json --offline"),
        ("floor", "floor: every line parsed, no more"),
        ("first", "adfkit usage --json (no index)"),
        ("indexing", "adfkit usage --json --cache (1st)"),
        ("second", "adfkit usage --json --cache (2nd)"),
    ):
        if key not in out:
            continue
        vs = f"{out[key] / base:5.2f}x of ccusage's CPU" if base else ""
        print(f"    {text:<42} {out[key]:7.2f}   {walls[key]:7.2f}   {vs}")
    if base:
        r = out["first"] / base
        print(
            f"    first run vs ccusage {r:.2f}x (CPU): goal {GOALS['vs_ccusage']}x "
            f"{'met' if r <= GOALS['vs_ccusage'] else 'MISSED'}, moonshot {GOALS['moonshot']}x "
            f"{'met' if r <= GOALS['moonshot'] else 'missed'}"
        )
    r_floor = out["first"] / out["floor"]
    print(
        f"    first run / floor {r_floor:.2f}x (CPU: adfkit's own rules): goal "
        f"{GOALS['vs_floor']}x {'met' if r_floor <= GOALS['vs_floor'] else 'MISSED'}"
    )
    r2 = out["second"] / out["first"]
    print(
        f"    second run (index) / first run {r2:.2f}x (CPU): goal {GOALS['second']}x "
        f"{'met' if r2 <= GOALS['second'] else 'MISSED'}"
    )
    return out


def startup() -> None:
    py = str(BIN / "python")
    t_pd = wall([py, "-c", "import pandas"], repeat=5)
    t_ak = wall([py, "-c", "import adfkit"], repeat=5)
    t_open = wall([py, "-c", "import adfkit; adfkit.open"], repeat=5)
    t_ver = wall([str(BIN / "adfkit"), "--version"], repeat=5)
    r = t_ak / t_pd
    print(f"  python -c 'import pandas'              {t_pd:7.3f} s   1.00x")
    print(
        f"  python -c 'import adfkit'              {t_ak:7.3f} s   {r:.2f}x "
        f"(goal {GOALS['import']}x {'met' if r <= GOALS['import'] else 'MISSED'})"
    )
    print(f"  ... and adfkit.open (first use)        {t_open:7.3f} s   {t_open / t_pd:.2f}x")
    print(
        f"  adfkit --version                       {t_ver:7.3f} s   "
        f"(goal {GOALS['version_s']} s {'met' if t_ver <= GOALS['version_s'] else 'MISSED'})"
    )


def run(quick: bool) -> None:
    """The section: start-up, then the real sessions, then the generated fleet."""
    print("fleet-real: whole processes, adfkit usage against ccusage session (same folder)")
    # adfkit's bytecode, as a pip install compiles it: a shell with PYTHONDONTWRITEBYTECODE=1
    # (this machine's) would otherwise make every timed process compile adfkit from source
    compileall.compile_dir(ROOT / "adfkit", quiet=1)
    print(f"  adfkit timed: {install_wheel()}")
    startup()
    exe, why = ccusage_bin()
    real = real_fleet()
    if real is None:
        print("  real sessions: skipped (../shared is absent)")
    else:
        compare("real Claude Code sessions (3 runs)", real, exe, why, repeat=3)
    n, mb = (100, 50.0) if quick else (500, 520.0)
    t = time.perf_counter()
    config = generated_fleet(n, mb)
    print(f"  (generated fleet ready in {time.perf_counter() - t:.0f} s)")
    compare("generated fleet (3 runs)", config, exe, why, repeat=3)
