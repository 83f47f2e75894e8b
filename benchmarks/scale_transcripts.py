"""The transcript readers' part of ``make bench``'s scale section (issue 24 items 4 and 5).

- ``list_claude_code_sessions()`` over one project folder of ``n`` sessions with ``n`` legacy
  ``agent-*.jsonl`` files beside them (each agent file was once peeked once per session: n^2).
- ``parse_codex()`` of a ``.jsonl.zst`` of tiny lines (the worst case for memory) as it grows
  under the default cap, and the peak RSS of a fresh process reading ever larger such files
  under one fixed cap: it stays flat (the cap bounds memory, not only bytes).

Inputs are written once under ``build/bench`` (small: a few MB).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import zstandard

from adfkit._sources.claude_code.listing import list_claude_code_sessions
from adfkit._sources.codex.parser import parse_codex

SID = "0199a213-81c0-7800-8aa1-bbab2a035a53"
_LINE = (
    json.dumps(
        {
            "timestamp": "2026-03-14T09:00:01.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hello"}],
            },
        }
    ).encode()
    + b"\n"
)
_META = (
    json.dumps(
        {
            "timestamp": "2026-03-14T09:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": SID, "cwd": "/w", "cli_version": "0.77.0"},
        }
    ).encode()
    + b"\n"
)


def _record(sid: str, uuid: str, side: bool, agent: str | None = None) -> bytes:
    r = {
        "parentUuid": None,
        "isSidechain": side,
        "sessionId": sid,
        "type": "user",
        "uuid": uuid,
        "cwd": "/w",
        "timestamp": "2026-03-01T10:00:00.000Z",
        "message": {"role": "user", "content": "hi"},
    }
    if agent is not None:
        r["agentId"] = agent
    return json.dumps(r).encode() + b"\n"


def listing_folder(root: Path, n: int) -> Path:
    """``n`` sessions and ``n`` legacy agent files (one per session) in one project folder."""
    folder = root / f"listing-{n}" / "-proj"
    if folder.is_dir() and len(list(folder.iterdir())) == 2 * n:
        return folder.parent
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        sid = f"{i:08d}-2222-3333-4444-555555555555"
        (folder / f"{sid}.jsonl").write_bytes(_record(sid, f"u{i}", False))
        (folder / f"agent-{i:08d}.jsonl").write_bytes(_record(sid, f"s{i}", True, f"{i:08d}"))
    return folder.parent


def tiny_zst(root: Path, mb: int) -> Path:
    """A rollout of ``mb`` MiB of tiny lines, zstd-compressed (a few KB)."""
    path = root / f"zst-{mb}" / f"rollout-2026-03-14T09-00-00-{SID}.jsonl.zst"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _META + _LINE * ((mb << 20) // len(_LINE))
        path.write_bytes(zstandard.ZstdCompressor(level=19).compress(data))
    return path


#: Peak RSS is VmHWM (this process's own high-water mark), not ``ru_maxrss``: after ``exec``
#: Linux keeps the parent's high-water mark in ``ru_maxrss``, so a big parent would hide it.
_PEAK = """
import sys, warnings
from pathlib import Path
from adfkit._sources.codex.parser import parse_codex

def kib(key):
    line = next(x for x in open("/proc/self/status") if x.startswith(key))
    return int(line.split()[1])

base = kib("VmRSS:")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    t = parse_codex(Path(sys.argv[1]), max_decompressed_bytes=int(sys.argv[2]))
print(len(t.rows), (kib("VmHWM:") - base) * 1024)
"""


def _best(fn: Callable[[], object], repeat: int = 2) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench(root: Path, quick: bool, growth: Callable[..., None]) -> None:
    """Print the three scale entries (``growth`` prints times by size against linear)."""
    sizes = (50, 100, 200) if quick else (250, 500, 1000)
    folders = {n: listing_folder(root, n) for n in sizes}
    times = {n: _best(lambda f=f: list_claude_code_sessions(f)) for n, f in folders.items()}
    print("list_claude_code_sessions() of one folder: n sessions, n legacy agent-*.jsonl")
    growth("sessions", times)

    mbs = (2, 4, 8) if quick else (8, 16, 32)
    files = {mb: tiny_zst(root, mb) for mb in mbs}
    lines = {mb: (mb << 20) // len(_LINE) for mb in mbs}

    def parse(p: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parse_codex(p)

    times = {lines[mb]: _best(lambda p=p: parse(p)) for mb, p in files.items()}
    print("parse_codex() of a .jsonl.zst of tiny lines (default cap)")
    growth("lines", times)

    cap = 16 << 20
    big = {mb: tiny_zst(root, mb) for mb in ((16, 32, 64) if quick else (32, 64, 128))}
    print(f"peak RSS of a fresh process reading it under a {cap >> 20} MiB cap (bounded: flat)")
    for mb, p in big.items():
        out = subprocess.run(
            [sys.executable, "-c", _PEAK, str(p), str(cap)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows, grew = (int(x) for x in out.stdout.split())
        print(
            f"  {mb} MiB decompressed ({p.stat().st_size:,} bytes): {rows:,} rows kept, "
            f"peak RSS +{grew / 2**20:.0f} MiB"
        )
    print()
