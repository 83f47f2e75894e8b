"""Hand-built tiny agent files for tests: every value is written in the test that uses it.

``build(path, loop=[...], audit=[...], ...)`` writes a schema-28 ``.adf`` (or an older layout
with ``schema=27`` / ``schema=20``) with the stdlib ``sqlite3`` and ``brotli``, in the tables
of ``adfsynth.ddl``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import brotli

from adfsynth.ddl import schema_ddl

BASE_MS = 1_790_000_000_000

SECRET = b"FAKE-PRIVATE-KEY-never-to-be-read"


def text(t: str) -> list[dict[str, Any]]:
    """Content of a one-text-block row."""
    return [{"type": "text", "text": t}]


def use(uid: str, name: str, inp: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": name, "input": inp or {}}


def result(uid: str, content: str, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": uid, "content": content, "is_error": is_error}


def row(
    seq: int,
    role: str,
    content: Any,
    *,
    tokens: Any = None,
    model: str | None = None,
    created_at: int | None = None,
    ord: int | None = None,  # noqa: A002 - the format's name
) -> dict[str, Any]:
    """A loop row as the runtime stores it (``content`` list/str, tokens dict/int/str/None)."""
    if model is None and role == "assistant":
        model = "test-model"
    return {
        "seq": seq,
        "role": role,
        "content": content,
        "tokens": tokens,
        "model": model,
        "created_at": BASE_MS + seq * 1000 if created_at is None else created_at,
        "ord": ord,
    }


def blob_element(r: dict[str, Any]) -> dict[str, Any]:
    """A loop row as a loop audit blob holds it: parsed content, NULL keys left out."""
    el: dict[str, Any] = {"seq": r["seq"], "role": r["role"]}
    content = r["content"]
    el["content_json"] = json.loads(content) if isinstance(content, str) else content
    if r.get("model") is not None:
        el["model"] = r["model"]
    if r.get("tokens") is not None:
        t = r["tokens"]
        el["tokens"] = json.loads(t) if isinstance(t, str) else t
    el["created_at"] = r["created_at"]
    if r.get("ord") is not None:
        el["ord"] = r["ord"]
    return el


def compress_json(value: Any) -> tuple[bytes, int]:
    """(brotli blob, JS length of the JSON text)."""
    txt = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return brotli.compress(txt.encode("utf-8")), len(txt.encode("utf-16-le")) // 2


def build(
    path: str | Path,
    *,
    loop: list[dict[str, Any]] = (),  # type: ignore[assignment]
    audit: list[dict[str, Any]] = (),  # type: ignore[assignment]
    config: dict[str, Any] | None = None,
    meta: dict[str, str] | None = None,
    files: dict[str, bytes | str] | None = None,
    schema: int = 28,
    highest_seq: int | None = None,
    journal: str = "delete",
    not_null: bool = True,
    loop_columns: tuple[str, ...] | None = None,
    sql: list[str | tuple[str, tuple[Any, ...]]] = (),  # type: ignore[assignment]
) -> Path:
    """Write a tiny agent file.

    ``audit`` items: ``{"source": "loop", "rows": [row(...), ...]}`` (blob built from rows), or
    ``{"source": ..., "value": obj}`` for message/file sources, or ``{"source": ..., "data":
    raw_bytes, "entry_count": n, "size_bytes": n}`` for damaged blobs. Optional ``created_at``,
    ``start_seq``, ``end_seq``, ``ref`` override the derived values.

    Damage and old layouts: ``not_null=False`` drops every NOT NULL constraint (so a test can
    store NULLs where the runtime never does); ``loop_columns`` limits ``adf_loop`` to the named
    columns (pre-public files lack ``model``, ``tokens``, ``created_at``); ``sql`` statements
    (text or ``(text, params)``) run last, before the commit.
    """
    path = Path(path)
    con = sqlite3.connect(path)
    # any schema below 28 gets the schema-27 layout (only the meta key says which schema it is)
    ddl = schema_ddl(28 if schema >= 28 else 27)
    if not not_null:
        ddl = ddl.replace(" NOT NULL", "")
    if loop_columns is not None:
        start = ddl.index("CREATE TABLE adf_loop (")
        end = ddl.index(");", start)
        decls = [d.strip() for d in ddl[start + 23 : end].split(",")]
        keep = {"seq", "role", "content_json", "ord", *loop_columns}
        decls = [d for d in decls if d.split()[0] in keep]
        ddl = ddl[: start + 23] + ", ".join(decls) + ddl[end:]
    con.executescript(ddl)
    con.execute(f"PRAGMA journal_mode={journal}")
    m = {"adf_version": "0.2", "adf_name": path.stem}
    if schema >= 14:
        m["adf_schema_version"] = str(schema)
    else:
        m["schema_version"] = str(schema)
    m.update(meta or {})
    con.executemany("INSERT INTO adf_meta (key, value) VALUES (?, ?)", m.items())
    cfg = {"name": path.stem, "context": {"compact_threshold": 1000, "audit": {"loop": True}}}
    if config is not None:
        cfg = config
    con.execute(
        "INSERT INTO adf_config VALUES (1, ?, '2026-01-01T00:00:00.000Z')",
        (cfg if isinstance(cfg, str) else json.dumps(cfg),),
    )
    for r in loop:
        content = r["content"] if isinstance(r["content"], str) else json.dumps(r["content"])
        tokens = r["tokens"]
        if isinstance(tokens, dict):
            tokens = json.dumps(tokens)
        cols = ["seq", "role", "content_json", "model", "tokens", "created_at"]
        vals = [r["seq"], r["role"], content, r["model"], tokens, r["created_at"]]
        if schema >= 28:
            cols.append("ord")
            vals.append(r["ord"])
        if loop_columns is not None:
            keep = [i for i, c in enumerate(cols) if c in loop_columns or c in ("seq", "role")]
            keep = [i for i in keep if cols[i] != "content_json"] + [2]
            cols = [cols[i] for i in keep]
            vals = [vals[i] for i in keep]
        con.execute(
            f"INSERT INTO adf_loop ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            vals,
        )
    for i, a in enumerate(audit, start=1):
        src = a["source"]
        if "data" in a:
            data, size, count = a["data"], a.get("size_bytes", 0), a.get("entry_count", 1)
            lo, hi, ref = a.get("start_seq"), a.get("end_seq"), a.get("ref")
        elif src == "loop":
            els = [blob_element(r) for r in a["rows"]]
            data, size = compress_json(els)
            count = len(els)
            seqs = [e["seq"] for e in els]
            lo, hi, ref = a.get("start_seq", min(seqs)), a.get("end_seq", max(seqs)), None
        else:
            data, size = compress_json(a["value"])
            count, lo, hi, ref = 1, None, None, a.get("ref")
        created = a.get("created_at", BASE_MS + 10_000_000 + i * 1000)
        if schema >= 28:
            con.execute(
                "INSERT INTO adf_audit (source, start_seq, end_seq, ref, entry_count, size_bytes,"
                " data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (src, lo, hi, ref, count, size, data, created),
            )
        else:
            con.execute(
                "INSERT INTO adf_audit (source, start_at, end_at, entry_count, size_bytes, data,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    src,
                    a.get("start_at", created),
                    a.get("end_at", created),
                    count,
                    size,
                    data,
                    created,
                ),
            )
    for p, content in (files or {}).items():
        b = content.encode() if isinstance(content, str) else content
        con.execute(
            "INSERT INTO adf_files (path, content, mime_type, size, created_at, updated_at) "
            "VALUES (?, ?, 'text/markdown', ?, '2026-01-01T00:00:00.000Z', "
            "'2026-01-02T00:00:00.000Z')",
            (p, b, len(b)),
        )
    con.execute("INSERT INTO adf_identity (purpose, value) VALUES ('signing_key', ?)", (SECRET,))
    if highest_seq is not None:
        con.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'adf_loop'", (highest_seq,))
        if con.execute("SELECT changes()").fetchone()[0] == 0:
            con.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('adf_loop', ?)", (highest_seq,)
            )
    for stmt in sql:
        if isinstance(stmt, tuple):
            con.execute(*stmt)
        else:
            con.execute(stmt)
    con.commit()
    con.close()
    return path
