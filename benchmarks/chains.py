"""Claude Code chain shapes that were quadratic to walk, at growing sizes (``make bench``'s
``chains`` section): a long dead branch, attachments off the active path, many records fanning
into one progress cycle, one microcompaction naming many tool ids. Each file is written here
(JSON lines, the same for a size) and timed through ``adfkit.open`` + ``history()`` +
``events()`` (the reader's walk; the analyses' own scaling is the ``scale`` section); the
growth step against linear is the verdict.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import adfkit

SID = "00000000-0000-4000-8000-00000000c4a1"


def _env(n: int, type_: str, uuid: str, parent: str | None, **kw: Any) -> dict[str, Any]:
    s, ms = divmod(n, 1000)
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": type_,
        "uuid": uuid,
        "sessionId": SID,
        "timestamp": f"2026-03-01T{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{ms:03d}Z",
        **kw,
    }


def _user(n: int, uuid: str, parent: str | None, content: Any) -> dict[str, Any]:
    return _env(n, "user", uuid, parent, message={"role": "user", "content": content})


def _asst(n: int, uuid: str, parent: str | None, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    msg = {
        "id": f"msg_{uuid}",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": blocks,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return _env(n, "assistant", uuid, parent, message=msg)


def _text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]


def dead_branch(n: int) -> Iterator[dict[str, Any]]:
    """A short active chain and an abandoned branch of ``n`` records off its first record."""
    yield _user(0, "root", None, "start")
    prev = "root"
    for i in range(n):
        u = f"d{i}"
        yield (_asst if i % 2 == 0 else _user)(i + 1, u, prev, _text(f"dead {i}"))  # type: ignore[operator]
        prev = u
    yield _asst(n + 1, "live", "root", _text("the answer that stayed"))


def attachments(n: int) -> Iterator[dict[str, Any]]:
    """``n`` attachment records chained off the active path, each off the one before."""
    yield _user(0, "root", None, "start")
    prev = "root"
    for i in range(n):
        u = f"t{i}"
        yield _env(i + 1, "attachment", u, prev, attachment={"type": "hook_result", "content": "x"})
        prev = u
    yield _asst(n + 1, "live", "root", _text("answer"))


def progress_fan(n: int) -> Iterator[dict[str, Any]]:
    """``n`` user records whose parents all reach one cycle of 200 progress records."""
    k = 200
    for i in range(k):
        yield _env(i, "progress", f"p{i}", f"p{(i + 1) % k}", data={"type": "hook_progress"})
    for i in range(n):
        yield _user(k + i, f"u{i}", "p0", f"prompt {i}")
    yield _asst(k + n, "live", f"u{n - 1}", _text("answer"))


def microcompaction(n: int) -> Iterator[dict[str, Any]]:
    """``n`` tool calls and results, then one microcompaction that names every tool id."""
    yield _user(0, "root", None, "start")
    prev = "root"
    for i in range(n):
        tool = {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {}}
        yield _asst(2 * i + 1, f"a{i}", prev, [tool])
        res = [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x" * 40}]
        yield _user(2 * i + 2, f"r{i}", f"a{i}", res)
        prev = f"r{i}"
    md = {"trigger": "auto", "compactedToolIds": [f"toolu_{i}" for i in range(n)]}
    yield _env(2 * n + 1, "system", "mc", prev, subtype="microcompact_boundary",
               microcompactMetadata=md)  # fmt: skip
    yield _asst(2 * n + 2, "live", "mc", _text("answer"))


SHAPES: dict[str, tuple[Callable[[int], Iterator[dict[str, Any]]], tuple[int, int, int]]] = {
    "long dead branch": (dead_branch, (2_000, 8_000, 32_000)),
    "attachments off the path": (attachments, (2_000, 8_000, 32_000)),
    "records into one progress cycle": (progress_fan, (1_000, 4_000, 16_000)),
    "microcompaction of many tool ids": (microcompaction, (8_000, 32_000, 128_000)),
}


def write(folder: Path, name: str, n: int) -> Path:
    gen = SHAPES[name][0]
    p = folder / f"{name.replace(' ', '-')}-{n}.jsonl"
    if not p.exists():
        p.write_text("".join(json.dumps(r) + "\n" for r in gen(n)))
    return p


def analyse(path: Path) -> float:
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open(path) as a:
            a.history(), a.events()
    return time.perf_counter() - t


def run(folder: Path, growth: Callable[[str, dict[int, float], str], None]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    print("chains: Claude Code shapes that were quadratic to walk (open + history + events)")
    for name, (_, sizes) in SHAPES.items():
        times = {n: min(analyse(write(folder, name, n)) for _ in range(2)) for n in sizes}
        growth("records", times, name)


def real(fixtures: Path) -> None:
    """history() + compactions() + usage() of the largest real Claude Code session, against
    its floor (reading and parsing every line with orjson), when ../shared is present."""
    import orjson

    files = (
        sorted(fixtures.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
        if fixtures.is_dir()
        else []
    )
    if not files:
        print(f"real: skipped ({fixtures} is absent)")
        return
    big = files[-1]

    def floor() -> float:
        t = time.perf_counter()
        with open(big, "rb") as f:
            for line in f:
                orjson.loads(line)
        return time.perf_counter() - t

    def ours() -> float:
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with adfkit.open(big) as a:
                a.history(), a.compactions(), a.usage()
        return time.perf_counter() - t

    f = min(floor() for _ in range(5))
    o = min(ours() for _ in range(5))
    print(f"real: the largest real session ({big.stat().st_size / 1e6:.1f} MB, {big.name[:8]})")
    print(f"  floor (orjson of every line)            {f * 1e3:8.1f} ms")
    print(f"  history() + compactions() + usage()      {o * 1e3:8.1f} ms  {o / f:.1f}x the floor")
