"""Seeded simulator of an OpenClaw store (``openclaw-agent.sqlite``), with ground truth.

OpenClaw keeps pi's session entries as rows of its SQLite store (2026.x), so the session is
the pi simulator's (:func:`adfsynth.pi.simulate`: turns with tool calls, two automatic
compactions and a manual one, a branch left through ``/tree``, a ``bashExecution``) written
as OpenClaw writes it (the recorded 2026.9.6 store, ``tests/fixtures/recorded/openclaw/``):

- ``transcript_events``: one row per entry, ``seq`` from 0 (the header, ``version: 4``);
  a row over 2 KiB as ``event_zstd`` with ``event_utf8_bytes``, the others as ``event_json``;
- compaction entries with ``tokensAfter`` (the simulator's estimate of the window it leaves:
  the kept rows and the summary) and ``fromHook: true``, as OpenClaw's;
- ``session_windows`` (the session), ``session_nodes`` (its entry: ``compactionCount``,
  ``contextTokens``), ``schema_meta``.

The truth is the simulator's state with each line of pi's file turned into the row's ``seq``
(line - 1): the rows of the conversation, every reply's usage summed, per compaction its seq,
``tokensBefore``, ``tokensAfter``, the seqs it swept and kept. Independent of adfkit. Same seed,
same bytes.

Run: ``python adfsynth/openclaw.py OUT``
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

import zstandard

from adfsynth.pi import simulate

#: Rows longer than this are written compressed.
ZSTD_OVER = 2048
WINDOW = 200_000
DDL = (
    "CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT NOT NULL, "
    "schema_version INTEGER NOT NULL, agent_id TEXT, app_version TEXT, created_at INTEGER NOT "
    "NULL, updated_at INTEGER NOT NULL) STRICT",
    "CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id "
    "TEXT NOT NULL, entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT",
    "CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT "
    "NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, model_provider TEXT, "
    "model TEXT) STRICT",
    "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
    "event_json TEXT, created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, "
    "navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT",
    # a table the reader must never select (credentials, in OpenClaw's store)
    "CREATE TABLE auth_profile_store (id TEXT PRIMARY KEY, secret TEXT) STRICT",
)


def _entries(lines: list[str], after: dict[int, int]) -> list[dict[str, Any]]:
    """pi's lines as OpenClaw's entries: header version 4, compactions with ``tokensAfter``."""
    out = []
    for n, line in enumerate(lines, start=1):
        e = json.loads(line)
        if e["type"] == "session":
            e["version"] = 4
        elif e["type"] == "compaction":
            e["tokensAfter"] = after[n]
            e["fromHook"] = True
        out.append(e)
    return out


def write_store(out: str | Path, seed: int = 3_106) -> Path:
    """Write ``<out>/openclaw/agents/main/agent/openclaw-agent.sqlite`` and
    ``openclaw-agent.truth.json`` beside it; return the store's path."""
    s = simulate(random.Random(seed), "v3", "/home/user/src/claw", 1_780_000_000_000)
    tokens = {e.line: e.tokens for e in s.path}
    after = {
        c["line"]: sum(tokens.get(x, 0) for x in c["preserved"]) + tokens[c["line"]]
        for c in s.compactions
    }
    entries = _entries(s.lines, after)
    folder = Path(out) / "openclaw" / "agents" / "main" / "agent"
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "openclaw-agent.sqlite"
    store.unlink(missing_ok=True)
    key = f"agent:main:explicit:{s.sid}"
    con = sqlite3.connect(store)
    try:
        for stmt in DDL:
            con.execute(stmt)
        t0, t1 = s.t0, s.t
        con.execute(
            "INSERT INTO schema_meta VALUES ('primary', 'agent', 23, 'main', 'synth', ?, ?)",
            (t0, t1),
        )
        con.execute(
            "INSERT INTO session_windows VALUES (?, ?, ?, ?, 'anthropic', ?)",
            (s.sid, key, t0, t1, s.model),
        )
        entry = {"sessionId": s.sid, "compactionCount": len(s.compactions), "contextTokens": WINDOW}
        con.execute(
            "INSERT INTO session_nodes VALUES (?, ?, ?, ?)", (key, s.sid, json.dumps(entry), t1)
        )
        con.execute("INSERT INTO auth_profile_store VALUES ('p', 'sk-synthetic-never-read')")
        packer = zstandard.ZstdCompressor(level=3)
        for seq, e in enumerate(entries):
            text = json.dumps(e, ensure_ascii=False, separators=(",", ":"))
            data = text.encode()
            row: tuple[Any, ...] = (s.sid, seq, text, t0 + seq, None, None)
            if len(data) > ZSTD_OVER:
                row = (s.sid, seq, None, t0 + seq, packer.compress(data), len(data))
            con.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, NULL)", row)
        con.commit()
    finally:
        con.close()
    truth = _truth(s.truth(store.name, None), after)
    (folder / "openclaw-agent.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return store


def _truth(pi: dict[str, Any], after: dict[int, int]) -> dict[str, Any]:
    """pi's truth with lines as seqs (line - 1) and each compaction's ``tokensAfter``."""

    def seqs(lines: list[int]) -> list[int]:
        return [n - 1 for n in lines]

    return {
        "session_id": pi["session_id"],
        "rows": seqs(pi["rows"]),
        "roles": pi["roles"],
        "other_branches": seqs(pi["other_branches"]),
        "n_calls": pi["n_calls"],
        "usage": pi["usage"],
        "window": seqs(pi["window"]),
        "compactions": [
            {
                "seq": c["line"] - 1,
                "tokens_before_recorded": c["tokens_before_recorded"],
                "tokens_after_recorded": after[c["line"]],
                "swept": seqs(c["swept"]),
                "preserved": seqs(c["preserved"]),
            }
            for c in pi["compactions"]
        ],
        "context_window": WINDOW,
    }


if __name__ == "__main__":
    print(write_store(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"))
