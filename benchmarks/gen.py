"""Fast generator of benchmark agent files (schema 28).

:func:`ensure` writes one large agent (rows of a few KB) and a fleet of small ones;
:func:`ensure_shapes` writes the shapes that per-row and per-archive costs show on: rows of the
size the runtime writes (~400-650 bytes of JSON), with and without a compaction summary after
every archive (``loop_clear`` archives, or summaries lost), many archives of one new row each,
and agents whose one compaction swept many identifiers or pathological text.

The files are plausible rather than scripted: turns of trigger, context, assistant (thinking,
text, tool calls with nested input), tool results and a compaction summary opening every
archived blob. Text is cut from one seeded pseudo-word corpus, with some non-ASCII, so Brotli
has realistic work. Blobs use Brotli quality 5 (the runtime uses 11; quality only changes
generation time, not how the reader works).

Usage: ``python benchmarks/gen.py [--quick]`` (also called by ``benchmarks/run.py``; results
are cached under ``build/bench``).
"""

from __future__ import annotations

import base64
import os
import random
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import brotli
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # adfsynth, when run directly
from adfsynth.ddl import schema_ddl  # noqa: E402

BASE_MS = 1_780_300_800_000

TOOLS = ("fs_read", "fs_write", "db_query", "msg_send", "web_fetch", "mcp_github_search")


class Corpus:
    """Cheap seeded text: slices of one long pseudo-word string."""

    def __init__(self, rng: random.Random, n_words: int = 600_000) -> None:
        syll = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "pa", "zo", "el", "an"]
        vocab = ["".join(rng.choices(syll, k=rng.randint(1, 4))) for _ in range(3000)]
        vocab += ["café", "naïve", "Zürich", "日本語", "✓", "🙂", "—"]
        words = rng.choices(vocab, k=n_words)
        for i in range(0, n_words, 17):
            words[i] += "." if i % 3 else ",\n"
        self.text = " ".join(words)
        self.rng = rng

    def take(self, n: int) -> str:
        start = self.rng.randrange(0, len(self.text) - n - 1)
        return self.text[start : start + n]


def _turn(corpus: Corpus, rng: random.Random, scale: float) -> list[dict[str, Any]]:
    """Rows of one turn (without seq/created_at), as a loop blob holds them."""
    rows: list[dict[str, Any]] = []
    rows.append(
        {
            "role": "user",
            "content_json": [
                {
                    "type": "text",
                    "text": "A scheduled timer has fired.\nPayload: " + corpus.take(60),
                }
            ],
        }
    )
    rows.append(
        {
            "role": "user",
            "content_json": [
                {
                    "type": "text",
                    "text": "[Context: dynamic_instructions] [Inbox: 2 unread] "
                    + corpus.take(int(300 * scale)),
                }
            ],
        }
    )
    for _ in range(rng.randint(1, 4)):
        n_calls = rng.randint(1, 3)
        ids = [f"toolu_{rng.getrandbits(48):012x}" for _ in range(n_calls)]
        blocks: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": corpus.take(int(rng.randint(200, 900) * scale))},
            {"type": "text", "text": corpus.take(int(rng.randint(50, 500) * scale))},
        ]
        for uid in ids:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": uid,
                    "name": rng.choice(TOOLS),
                    "input": {
                        "path": f"notes/{corpus.take(12).strip()}.md",
                        "limit": rng.randint(1, 500),
                        "flags": [True, None, 1.5],
                        "query": {"text": corpus.take(int(80 * scale)), "n": rng.randint(1, 9)},
                    },
                }
            )
        rows.append(
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "tokens": {
                    "input": rng.randint(5000, 90000),
                    "output": rng.randint(20, 2000),
                    "cache_read": rng.randint(0, 5000),
                },
                "content_json": blocks,
            }
        )
        rows.append(
            {
                "role": "user",
                "content_json": [
                    {
                        "type": "tool_result",
                        "tool_use_id": uid,
                        "content": corpus.take(int(rng.randint(500, 7000) * scale)),
                        "is_error": rng.random() < 0.05,
                    }
                    for uid in ids
                ],
            }
        )
    rows.append(
        {
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "tokens": {"input": rng.randint(5000, 90000), "output": rng.randint(20, 2000)},
            "content_json": [{"type": "text", "text": corpus.take(int(400 * scale))}],
        }
    )
    return rows


# fmt: off
_WORDS = (
    "cache", "quarterly", "latency", "budget", "timer", "draft", "review", "outage", "vendor",
    "digest", "report", "anomaly", "cohort", "backlog", "rollback", "deploy", "forecast",
    "metric", "schema", "inventory", "migration", "ledger", "invoice",
)
# fmt: on


def _real_turn(corpus: Corpus, rng: random.Random, n: int) -> list[dict[str, Any]]:
    """Rows of one turn the size the runtime writes (~400-650 bytes of JSON per row, like the
    ``big-runner`` fixture): a short message, a dynamic-instructions context row now and then,
    assistant rows with one or two small tool calls, short tool results, a closing text."""

    def words(k: int) -> str:
        return " ".join(rng.choices(_WORDS, k=k)).capitalize() + "."

    rows: list[dict[str, Any]] = [
        {
            "role": "user",
            "content_json": [{"type": "text", "text": f"[br {n}] Please continue: " + words(40)}],
        }
    ]
    if rng.random() < 0.3:
        rows.append(
            {
                "role": "user",
                "content_json": [
                    {
                        "type": "text",
                        "text": "[Context: dynamic_instructions] APPROACHING CONTEXT LIMIT: "
                        + corpus.take(rng.randint(250, 450)),
                    }
                ],
            }
        )
    for k in range(rng.randint(1, 3)):
        ids = [f"toolu_{n}_{k}_{rng.getrandbits(24):06x}" for _ in range(rng.randint(1, 2))]
        blocks: list[dict[str, Any]] = []
        if rng.random() < 0.5:
            blocks.append({"type": "text", "text": "Checking: " + words(rng.randint(8, 30))})
        for uid in ids:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": uid,
                    "name": rng.choice(TOOLS),
                    "input": {
                        "path": f"notes/t{n}-{rng.randint(1, 999)}.md",
                        "limit": rng.randint(1, 500),
                        "query": words(rng.randint(4, 24)),
                    },
                }
            )
        rows.append(
            {
                "role": "assistant",
                "model": "mock-v1",
                "tokens": {"input": rng.randint(5000, 9000), "output": rng.randint(20, 200)},
                "content_json": blocks,
            }
        )
        rows.append(
            {
                "role": "user",
                "content_json": [
                    {
                        "type": "tool_result",
                        "tool_use_id": uid,
                        "content": corpus.take(rng.randint(120, 520)),
                        "is_error": rng.random() < 0.05,
                    }
                    for uid in ids
                ],
            }
        )
    rows.append(
        {
            "role": "assistant",
            "model": "mock-v1",
            "tokens": {"input": rng.randint(5000, 9000), "output": rng.randint(20, 200)},
            "content_json": [{"type": "text", "text": f"Turn {n} done. " + words(45)}],
        }
    )
    return rows


def _stream(corpus: Corpus, rng: random.Random, scale: float, shape: str = "large"):
    n = 0
    while True:
        n += 1
        yield from (_turn(corpus, rng, scale) if shape == "large" else _real_turn(corpus, rng, n))


def write_agent(
    path: Path,
    *,
    n_blobs: int,
    rows_per_blob: int,
    live_rows: int,
    seed: int,
    scale: float = 1.0,
    corpus: Corpus | None = None,
    quality: int = 5,
    shape: str = "large",
    summaries: bool = True,
    archive_gap_ms: int = 60_000,
) -> dict[str, int]:
    """Write one agent file; returns counts (entries, blobs, json_bytes).

    ``shape``: ``large`` (rows of a few KB, big tool results) or ``real`` (rows of the size the
    runtime writes, see :func:`_real_turn`). ``summaries=False``: every blob is an archive
    without a compaction summary after it (what ``loop_clear`` writes, or a compaction whose
    summary was lost). ``archive_gap_ms``: time added between two archives (60 s: each is an
    event of its own; below the 5 s of a ``loop_clear``'s pair, archives without summaries
    chain into one clear, whose window holds every row before it).
    """
    rng = random.Random(seed)
    corpus = corpus or Corpus(rng, 60_000)
    stream = _stream(corpus, rng, scale, shape)
    con, tmp = _new_file(path)
    seq = 0
    json_bytes = 0
    summary = None
    clock = BASE_MS  # by default a minute passes at every archive: they are not one clear
    for _ in range(n_blobs):
        rows = []
        if summary is not None:
            rows.append(summary)
        while len(rows) < rows_per_blob:
            seq += 1
            r = next(stream)
            r = {"seq": seq, **r, "created_at": clock + seq * 1500}
            rows.append(r)
        data = orjson.dumps(rows)
        json_bytes += len(data)
        con.execute(
            "INSERT INTO adf_audit (source, start_seq, end_seq, ref, entry_count, size_bytes, "
            "data, created_at) VALUES ('loop', ?, ?, NULL, ?, ?, ?, ?)",
            (
                min(r["seq"] for r in rows),
                max(r["seq"] for r in rows),
                len(rows),
                len(data.decode("utf-8").encode("utf-16-le")) // 2,
                brotli.compress(data, quality=quality),
                clock + seq * 1500 + 1,
            ),
        )
        clock += archive_gap_ms
        if not summaries:
            continue
        seq += 1
        summary = {
            "seq": seq,
            "role": "user",
            "model": "claude-sonnet-4-5",
            "tokens": {"input": 90000, "output": 1200},
            "content_json": [
                {
                    "type": "text",
                    "text": "[Loop Compacted, audited] "
                    + corpus.take(1500 if shape == "large" else 500),
                }
            ],
            "created_at": clock + seq * 1500,
        }
    live = [summary] if summary else []
    while len(live) < live_rows:
        seq += 1
        live.append({"seq": seq, **next(stream), "created_at": clock + seq * 1500})
    for r in live:
        con.execute(
            "INSERT INTO adf_loop (seq, role, content_json, model, tokens, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                r["seq"],
                r["role"],
                orjson.dumps(r["content_json"]).decode(),
                r.get("model"),
                orjson.dumps(r["tokens"]).decode() if "tokens" in r else None,
                r["created_at"],
            ),
        )
    con.execute(
        "INSERT INTO adf_files VALUES ('mind.md', ?, 'text/markdown', 12, 'none', 0, "
        "'2026-06-01T08:00:00.000Z', '2026-06-01T08:00:00.000Z')",
        (b"# Mind\nnotes",),
    )
    _finish(con, tmp, path)
    return {"entries": seq, "blobs": n_blobs, "json_bytes": json_bytes}


def _new_file(path: Path) -> tuple[sqlite3.Connection, Path]:
    """An empty schema-28 agent at a temporary name beside ``path``: meta, config."""
    tmp = path.with_suffix(".tmp")
    if tmp.exists():
        tmp.unlink()
    con = sqlite3.connect(tmp)
    con.executescript(schema_ddl(28))
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    meta = {"adf_version": "0.2", "adf_schema_version": "28", "adf_name": path.stem}
    con.executemany("INSERT INTO adf_meta (key, value) VALUES (?, ?)", meta.items())
    cfg = {
        "name": path.stem,
        "model": {"provider": "anthropic", "model_id": "claude-sonnet-4-5"},
        "context": {"compact_threshold": 100000, "audit": {"loop": True}},
    }
    con.execute(
        "INSERT INTO adf_config VALUES (1, ?, '2026-06-01T08:00:00.000Z')",
        (orjson.dumps(cfg).decode(),),
    )
    return con, tmp


def _finish(con: sqlite3.Connection, tmp: Path, path: Path) -> None:
    con.commit()
    con.close()
    os.replace(tmp, path)


def write_recall_agent(path: Path, swept: list[str], summary: str) -> None:
    """One compaction for summary recall: an archive holding one message per text of
    ``swept`` and a model call, the summary (``summary`` after the marker), one more call."""
    con, tmp = _new_file(path)
    call = {"role": "assistant", "model": "m", "tokens": {"input": 900, "output": 9}}
    rows: list[dict[str, Any]] = [
        {"seq": i + 1, "role": "user", "content_json": [{"type": "text", "text": t}]}
        for i, t in enumerate(swept)
    ]
    rows.append({"seq": len(rows) + 1, **call, "content_json": [{"type": "text", "text": "ok"}]})
    for r in rows:
        r["created_at"] = BASE_MS + r["seq"]
    data = orjson.dumps(rows)
    con.execute(
        "INSERT INTO adf_audit (source, start_seq, end_seq, ref, entry_count, size_bytes, "
        "data, created_at) VALUES ('loop', 1, ?, NULL, ?, ?, ?, ?)",
        (len(rows), len(rows), len(data), brotli.compress(data, quality=1), BASE_MS + 10**6),
    )
    top = len(rows)
    live = [
        (top + 1, "user", [{"type": "text", "text": "[Loop Compacted, audited] " + summary}]),
        (top + 2, "assistant", [{"type": "text", "text": "done"}]),
    ]
    for seq, role, content in live:
        con.execute(
            "INSERT INTO adf_loop (seq, role, content_json, model, tokens, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (seq, role, orjson.dumps(content).decode(), "m", None, BASE_MS + 10**6 + seq),
        )
    _finish(con, tmp, path)


def ensure(root: Path, *, quick: bool = False) -> tuple[Path, Path, list[Path]]:
    """Generate (once) the large agent, a small single agent and the fleet under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    tag = "quick" if quick else "full"
    large = root / f"large-{tag}.adf"
    small = root / "small.adf"
    fleet_dir = root / f"fleet-{tag}"
    n_fleet = 20 if quick else 200
    if not large.exists():
        t = time.perf_counter()
        corpus = Corpus(random.Random(1))
        n_blobs, per = (40, 200) if quick else (1000, 205)
        c = write_agent(
            large, n_blobs=n_blobs, rows_per_blob=per, live_rows=300, seed=1, corpus=corpus
        )
        print(
            f"generated {large}: {c['entries']:,} entries, {c['blobs']} blobs, "
            f"{c['json_bytes'] / 1e6:,.0f} MB of JSON in {time.perf_counter() - t:.0f} s",
            file=sys.stderr,
        )
    if not small.exists():
        write_agent(small, n_blobs=2, rows_per_blob=50, live_rows=50, seed=2, scale=0.5)
    fleet_dir.mkdir(exist_ok=True)
    fleet = [fleet_dir / f"agent-{i:03d}.adf" for i in range(n_fleet)]
    missing = [p for p in fleet if not p.exists()]
    if missing:
        corpus = Corpus(random.Random(3), 100_000)
        for p in missing:
            i = int(p.stem.split("-")[1])
            write_agent(
                p,
                n_blobs=6,
                rows_per_blob=120,
                live_rows=60,
                seed=100 + i,
                corpus=corpus,
                scale=0.5,
            )
    return large, small, fleet


#: Sizes of the shapes of ``make bench`` by mode: real-shaped rows (blobs, rows per blob);
#: tiny archives (one new row each) for history() and for the analyses; identifiers swept by
#: one compaction; bytes of pathological text in one swept row.
SIZES: dict[str, dict[str, tuple[int, ...]]] = {
    "full": {
        "real": (400, 300),
        "tiny_history": (5_000, 10_000, 20_000),
        "tiny_analyses": (1_000, 10_000, 100_000),
        "recall_ids": (1_000, 10_000, 100_000),
        "text_bytes": (10_000, 100_000, 1_000_000),
        "loose": (2_500, 5_000, 10_000),
        "live": (5_000, 10_000, 20_000),
    },
    "quick": {
        "real": (40, 300),
        "tiny_history": (500, 1_000, 2_000),
        "tiny_analyses": (300, 1_000, 3_000),
        "recall_ids": (1_000, 3_000, 10_000),
        "text_bytes": (10_000, 30_000, 100_000),
        "loose": (500, 1_000, 2_000),
        "live": (1_000, 2_000, 4_000),
    },
}


def ensure_shapes(root: Path, *, quick: bool = False) -> dict[str, Any]:
    """Generate (once) the files of the row-shape and scaling benchmarks under ``root``.

    Returns ``sizes`` (this mode's :data:`SIZES`), ``real`` and ``real_nosum`` (the same
    real-shaped rows, with and without a
    compaction summary after every archive), ``tiny`` (n archives -> file), ``loose``
    ((``spaced`` or ``chained``, n one-row archives without summaries) -> file), ``live``
    (n rows in the live loop, no compaction -> file), ``recall``
    (n numbers with a unit swept -> file) and ``text`` ((kind, bytes) -> file: ``a-`` repeated, or
    base64url text, in one swept row).
    """
    root.mkdir(parents=True, exist_ok=True)
    size = SIZES["quick" if quick else "full"]
    t = time.perf_counter()
    made: list[str] = []
    corpus = Corpus(random.Random(7), 200_000)
    blobs, per = size["real"]
    out: dict[str, Any] = {"sizes": size}
    for key, summaries in (("real", True), ("real_nosum", False)):
        p = root / f"{key.replace('_', '-')}-{blobs}x{per}.adf"
        if not p.exists():
            write_agent(
                p,
                n_blobs=blobs,
                rows_per_blob=per,
                live_rows=300,
                seed=5,
                corpus=corpus,
                shape="real",
                summaries=summaries,
            )
            made.append(p.name)
        out[key] = p
    out["tiny"] = {}
    for n in sorted({*size["tiny_history"], *size["tiny_analyses"]}):
        p = root / f"tiny-{n}.adf"
        if not p.exists():
            write_agent(
                p, n_blobs=n, rows_per_blob=2, live_rows=10, seed=6, corpus=corpus, shape="real"
            )
            made.append(p.name)
        out["tiny"][n] = p
    # one-row archives without summaries, each its own clear ("spaced") or chained into one
    # ("chained"); a live loop of n rows and no compaction
    out["loose"] = {}
    for n in size["loose"]:
        for kind, gap in (("spaced", 60_000), ("chained", 0)):
            p = root / f"loose-{kind}-{n}.adf"
            if not p.exists():
                write_agent(
                    p,
                    n_blobs=n,
                    rows_per_blob=1,
                    live_rows=10,
                    seed=9,
                    corpus=corpus,
                    shape="real",
                    summaries=False,
                    archive_gap_ms=gap,
                )
                made.append(p.name)
            out["loose"][kind, n] = p
    out["live"] = {}
    for n in size["live"]:
        p = root / f"live-{n}.adf"
        if not p.exists():
            write_agent(
                p, n_blobs=0, rows_per_blob=1, live_rows=n, seed=10, corpus=corpus, shape="real"
            )
            made.append(p.name)
        out["live"][n] = p
    out["recall"] = {}
    for n in size["recall_ids"]:
        p = root / f"recall-quantities-{n}.adf"
        if not p.exists():  # numbers with a unit: items (a bare number is none)
            nums = [f"{100_000 + 7 * i} ms" for i in range(n)]
            swept = [" ".join(nums[i : i + 100]) for i in range(0, n, 100)]
            write_recall_agent(p, swept, "kept " + " ".join(nums[::3]))
            made.append(p.name)
        out["recall"][n] = p
    out["text"] = {}
    rng = random.Random(8)
    for n in size["text_bytes"]:
        for kind in ("dashes", "base64url"):
            p = root / f"recall-{kind}-{n}.adf"
            if not p.exists():
                if kind == "dashes":
                    text = "a-" * (n // 2)
                else:
                    text = base64.urlsafe_b64encode(rng.randbytes(n * 3 // 4)).decode()
                write_recall_agent(p, [text], "kept nothing of note")
                made.append(p.name)
            out["text"][kind, n] = p
    if made:
        print(
            f"generated {len(made)} shape files under {root} in {time.perf_counter() - t:.0f} s",
            file=sys.stderr,
        )
    return out


if __name__ == "__main__":
    _root = Path(__file__).resolve().parent.parent / "build" / "bench"
    ensure(_root, quick="--quick" in sys.argv)
    ensure_shapes(_root, quick="--quick" in sys.argv)
