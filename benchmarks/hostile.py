"""Time and peak RSS of ``adfkit`` on the heavy crafted files of issue 40, each in a child.

    python benchmarks/hostile.py [--repo CHECKOUT] [--timeout S] [CASE ...]

Builds each case under a temporary folder, then runs ``adfkit info`` (or the case's own
command) with the interpreter of ``CHECKOUT/.venv`` on ``CHECKOUT``'s adfkit (default: this
checkout; give ``/work/main`` for the figures before a change), one child per case, killed after
``--timeout`` seconds (wall). Prints one line per case: wall seconds, the child's CPU seconds
(user + system, ``wait4``: what the case costs, whatever else the machine runs), its peak RSS,
exit status and the first line of its stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_agents"


def _zip(path: Path, members: list[tuple[str, bytes]], central: list[tuple[str, int]]) -> None:
    """A zip of deflated ``members`` whose central directory lists ``central`` (name, index
    of the member whose bytes it points at)."""
    local = bytearray()
    spans = []
    for name, data in members:
        co = zlib.compressobj(9, zlib.DEFLATED, -15)
        comp = co.compress(data) + co.flush()
        nb = name.encode()
        spans.append((len(local), zlib.crc32(data), len(comp), len(data)))
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0x5C21, spans[-1][1],
                             len(comp), len(data), len(nb), 0) + nb + comp  # fmt: skip
    cd = bytearray()
    for name, k in central:
        off, crc, csize, size = spans[k]
        nb = name.encode()
        cd += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x5C21, crc, csize,
                          size, len(nb), 0, 0, 0, 0, 0, off) + nb  # fmt: skip
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), len(cd),
                       len(local), 0)  # fmt: skip
    path.write_bytes(bytes(local + cd + eocd))


HEADER = json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}}).encode()


def overlap(tmp: Path) -> list[str]:
    """24 sample entries pointing at one member of 250 MB of JSON whitespace around ``{}``."""
    members = [("header.json", HEADER), ("s", b" " * (250 * 1024**2) + b"{}")]
    central = [("header.json", 0)] + [(f"samples/{k}_epoch_1.json", 1) for k in range(1, 25)]
    _zip(tmp / "overlap.eval", members, central)
    return ["info", str(tmp / "overlap.eval")]


def many_members(tmp: Path) -> list[str]:
    """A log of 100,000 tiny samples."""
    import zipfile

    sample = json.dumps({"id": 1, "epoch": 1, "messages": [], "events": []}).encode()
    with zipfile.ZipFile(tmp / "many.eval", "w", zipfile.ZIP_DEFLATED) as z:  # zip64 past 65,535
        z.writestr("header.json", HEADER)
        for k in range(1, 100_001):
            z.writestr(f"samples/{k}_epoch_1.json", sample)
    return ["info", str(tmp / "many.eval")]


def _bomb(mib: int, item: bytes = b"{},") -> bytes:
    """``mib`` MiB of a JSON list of empty objects: tens of millions of dicts once parsed."""
    n = mib * 1024**2 // len(item)
    return b"[" + item * n + b"{}]"


def inspect_bomb(tmp: Path) -> list[str]:
    """A log whose header.json and one sample are each 100 MB of ``[{},{},...]``."""
    members = [("header.json", _bomb(100)), ("samples/1_epoch_1.json", _bomb(100))]
    _zip(tmp / "bomb.eval", members, [(n, i) for i, (n, _) in enumerate(members)])
    return ["info", str(tmp / "bomb.eval")]


def openhands_bomb(tmp: Path) -> list[str]:
    """The sample conversation with three more event files of 30 MB of ``{}`` each."""
    src = next((SAMPLES / "openhands" / "conversations").iterdir())
    conv = tmp / src.name
    shutil.copytree(src, conv)
    n = len(list((conv / "events").glob("event-*.json")))
    for k in range(n, n + 3):
        name = f"event-{k:05d}-bomb{k}.json"
        (conv / "events" / name).write_bytes(b'{"kind": "x", "x": ' + _bomb(30) + b"}")
    return ["info", str(conv)]


def _line_bomb(src: Path, dest: Path) -> None:
    lines = src.read_bytes().rstrip(b"\n").split(b"\n")
    big = b'{"type": "custom", "id": "b0mb", "x": ' + _bomb(60) + b"}"
    dest.write_bytes(b"\n".join([*lines[:3], big, big, *lines[3:]]) + b"\n")


def pi_bomb(tmp: Path) -> list[str]:
    """The sample pi session with two 60 MB lines of ``{}`` after its third."""
    src = sorted((SAMPLES / "pi").rglob("*.jsonl"))[-1]
    dest = tmp / src.name
    _line_bomb(src, dest)
    return ["info", str(dest)]


def copilot_bomb(tmp: Path) -> list[str]:
    """The sample Copilot CLI session with two 60 MB lines of ``{}`` after its third."""
    src = next((SAMPLES / "copilot_cli" / "session-state").iterdir())
    (tmp / src.name).mkdir()
    _line_bomb(src / "events.jsonl", tmp / src.name / "events.jsonl")
    return ["info", str(tmp / src.name)]


CASES: dict[str, Callable[[Path], list[str]]] = {
    "inspect-100MB-of-{}": inspect_bomb,
    "openhands-3x30MB-of-{}": openhands_bomb,
    "pi-2x60MB-lines-of-{}": pi_bomb,
    "copilot-2x60MB-lines-of-{}": copilot_bomb,
    "inspect-overlap-24x250MB": overlap,
    "inspect-100000-members": many_members,
}


def run(repo: Path, argv: list[str], timeout: float) -> tuple[float, float, float, str, str]:
    """Run ``adfkit ARGV`` from ``repo``; (wall seconds, CPU seconds, peak RSS MiB, status,
    first stderr line)."""
    py = repo / ".venv" / "bin" / "python"
    py = py if py.exists() else Path(sys.executable)  # another checkout run on this venv
    code = f"import sys; sys.path.insert(0, {str(repo)!r}); from adfkit.cli import main; "
    code += "sys.exit(main(sys.argv[1:]))"
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([str(py), "-c", code, *argv], stdout=subprocess.DEVNULL, stderr=err)
        status = "?"
        while True:
            pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = f"exit {os.waitstatus_to_exitcode(st)}"
                break
            if time.perf_counter() > t0 + timeout:
                os.kill(proc.pid, signal.SIGKILL)
                _, st, ru = os.wait4(proc.pid, 0)
                status = f"no answer in {timeout:.0f} s (killed)"
                break
            time.sleep(0.05)
        secs = time.perf_counter() - t0
        err.seek(0)
        first = err.read().decode(errors="replace").strip().splitlines()[:1]
    cpu = ru.ru_utime + ru.ru_stime
    return secs, cpu, ru.ru_maxrss / 1024, status, (first[0] if first else "")[:160]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=list(CASES))
    ap.add_argument("--repo", type=Path, default=ROOT)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--build", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build:  # in a child of its own: a child's peak RSS counts its parent's at fork
        print(json.dumps(CASES[args.cases[0]](Path(args.build))))
        return
    for name in args.cases:
        tmp = Path(tempfile.mkdtemp(prefix="adfkit-hostile-"))
        try:
            built = subprocess.run(
                [sys.executable, __file__, name, "--build", str(tmp)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            argv = json.loads(built.stdout)
            secs, cpu, rss, status, err = run(args.repo.resolve(), argv, args.timeout)
            line = f"{name:28} {secs:7.1f} s {cpu:7.1f} s-cpu {rss:8.0f} MiB  {status}  {err}"
            print(line, flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
