"""Derived tables over loop frames (blocks, tool calls) and the cheap ``info()`` summary."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import orjson
import pandas as pd

from ._content import block_chars, block_text
from ._frames import _json_text, parse_content

if TYPE_CHECKING:
    from ._agent import AgentFile

BLOCK_COLUMNS = {
    "seq": "Int64",
    "block_index": "Int64",
    "type": "string",
    "text": "string",
    "tool_use_id": "string",
    "tool_name": "string",
    "tool_input": "string",
    "is_error": "boolean",
    "chars": "Int64",
}


def blocks_frame(loop: pd.DataFrame) -> pd.DataFrame:
    """One row per content block of the rows of ``loop`` (in the frame's order)."""
    cols: dict[str, list[Any]] = {c: [] for c in BLOCK_COLUMNS}
    for seq, content in zip(loop["seq"].tolist(), loop["content"].tolist(), strict=True):
        blocks, _ = parse_content(content if isinstance(content, str) else "[]")
        for i, b in enumerate(blocks):
            t = b.get("type")
            cols["seq"].append(seq)
            cols["block_index"].append(i)
            cols["type"].append(None if t is None else str(t))
            cols["text"].append(block_text(b) if t != "tool_use" else None)
            if t == "tool_use":
                uid = b.get("id")
            elif t == "tool_result":
                uid = b.get("tool_use_id")
            else:
                uid = None
            cols["tool_use_id"].append(None if uid is None else str(uid))
            cols["tool_name"].append(str(b.get("name")) if t == "tool_use" else None)
            cols["tool_input"].append(_json_str(b.get("input")) if t == "tool_use" else None)
            err = b.get("is_error") if t == "tool_result" else None
            cols["is_error"].append(bool(err) if t == "tool_result" else None)
            cols["chars"].append(block_chars(b)[0])
    return pd.DataFrame({c: pd.array(v, dtype=BLOCK_COLUMNS[c]) for c, v in cols.items()})


def _json_str(value: Any) -> str | None:
    """Compact JSON text of a parsed value (None if it nests too deep to write back)."""
    out = _json_text(value)
    return out.decode() if isinstance(out, bytes) else out


def tool_calls_frame(blocks: pd.DataFrame, loop: pd.DataFrame) -> pd.DataFrame:
    """Each ``tool_use`` joined to the first later ``tool_result`` with its id."""
    uses = blocks[blocks["type"] == "tool_use"]
    res = blocks[blocks["type"] == "tool_result"]
    res = res.drop_duplicates("tool_use_id", keep="first")
    out = uses[["seq", "tool_use_id", "tool_name", "tool_input"]].rename(
        columns={"seq": "call_seq"}
    )
    out = out.merge(
        res[["seq", "tool_use_id", "text", "is_error"]].rename(
            columns={"seq": "result_seq", "text": "result"}
        ),
        on="tool_use_id",
        how="left",
    )
    out["result_chars"] = out["result"].str.len().astype("Int64")
    out["result_preview"] = out["result"].str.slice(0, 300)
    out["matched"] = out["result_seq"].notna().to_numpy(dtype=bool)
    times = loop.drop_duplicates("seq").set_index("seq")["created_at"]
    out["created_at"] = times.reindex(out["call_seq"].to_numpy()).to_numpy()
    out = out.drop(columns="result")
    return out[
        [
            "call_seq",
            "tool_use_id",
            "tool_name",
            "tool_input",
            "result_seq",
            "result_preview",
            "result_chars",
            "is_error",
            "matched",
            "created_at",
        ]
    ].reset_index(drop=True)


def info(agent: AgentFile, *, sizes: bool = False) -> dict[str, Any]:
    """The body of ``AgentFile.info()``: COUNT and MIN/MAX queries only, never a blob.

    The cost does not grow with the archive: audit rows are counted from the covering index on
    ``adf_audit (source, ...)``; ``first_live_at``/``last_live_at`` are the ``created_at`` of the
    first and last live rows by seq that carry one (0 = not recorded). ``sizes=True`` also sums
    ``entry_count``, ``size_bytes`` and ``length(data)`` over ``adf_audit``, which reads one
    table page per audit row (no blob is decompressed, but it grows with the archive).
    """
    src = agent._src
    meta = agent.meta()
    cfg = agent.config()
    out: dict[str, Any] = {
        "path": agent.path,
        "name": agent.name,
        "handle": meta.get("adf_handle") or cfg.get("handle"),
        "schema_version": agent.schema_version,
        "adf_version": meta.get("adf_version") or cfg.get("adf_version"),
        "file_bytes": os.path.getsize(src.path),
        "open_mode": src.mode,
        "clean_close": meta.get("adf_clean_close"),
        "sidecars": [s for s in ("-wal", "-shm") if os.path.exists(str(src.path) + s)],
    }
    ckpt = meta.get("adf_runtime_turn_checkpoint")
    status = None
    if ckpt:
        try:
            status = orjson.loads(ckpt).get("status")
        except (orjson.JSONDecodeError, AttributeError):
            status = "unreadable"
    out["turn_checkpoint"] = status
    out["live"] = not bool(meta.get("adf_clean_close")) or bool(out["sidecars"])
    model = cfg.get("model") if isinstance(cfg.get("model"), dict) else {}
    out["model"] = model.get("model_id") or None
    out["provider"] = model.get("provider") or None
    out["compact_threshold"] = agent.compact_threshold()
    out["audit_settings"] = agent.audit_settings()
    n, lo, hi, t0, t1 = 0, None, None, None, None
    if src.has("adf_loop"):
        n, lo, hi = src.query(
            "SELECT COUNT(*), MIN(seq), MAX(seq) FROM adf_loop", table="adf_loop"
        )[0]
        if src.has("adf_loop", "created_at"):
            # The first and last stamped rows by seq, found through the rowid: O(log n) and one
            # row read each, where MIN/MAX(created_at) would read every row's overflow pages.
            # The runtime stamps rows as it appends them, so these are the earliest and latest
            # times unless the clock went backwards.
            sql = (
                "SELECT created_at FROM adf_loop WHERE created_at IS NOT NULL "
                "AND created_at != 0 ORDER BY seq {} LIMIT 1"
            )
            first = src.query(sql.format("ASC"), table="adf_loop")
            last = src.query(sql.format("DESC"), table="adf_loop")
            t0 = first[0][0] if first else None
            t1 = last[0][0] if last else None
    out["loop_rows"] = n
    out["loop_seq_range"] = (lo, hi)
    out["highest_seq"] = agent.highest_seq()
    out["first_live_at"] = _iso(t0)
    out["last_live_at"] = _iso(t1)
    by_source: dict[str, int] = {}
    if src.has("adf_audit"):
        for source, cnt in src.query(
            "SELECT source, COUNT(*) FROM adf_audit GROUP BY source", table="adf_audit"
        ):
            by_source[str(source)] = int(cnt)
    out["audit_rows"] = by_source
    out["audited_loop_entries"] = out["audit_json_chars"] = out["audit_compressed_bytes"] = None
    if sizes:
        entries = size = packed = 0
        if src.has("adf_audit"):
            for source, ent, sz, pk in src.query(
                "SELECT source, SUM(entry_count), SUM(size_bytes), SUM(length(data)) "
                "FROM adf_audit GROUP BY source",
                table="adf_audit",
            ):
                if source == "loop":
                    entries += int(ent or 0)
                size += int(sz or 0)
                packed += int(pk or 0)
        out["audited_loop_entries"] = entries
        out["audit_json_chars"] = size
        out["audit_compressed_bytes"] = packed
    for table, key in (
        ("adf_inbox", "inbox_rows"),
        ("adf_outbox", "outbox_rows"),
        ("adf_files", "files"),
        ("adf_logs", "log_rows"),
        ("adf_tasks", "tasks"),
        ("adf_timers", "timers"),
    ):
        out[key] = (
            int(src.query(f"SELECT COUNT(*) FROM {table}", table=table)[0][0])
            if src.has(table)
            else 0
        )
    return out


def _iso(ms: Any) -> str | None:
    # Beyond ~year 2262 pandas cannot represent the instant; a hostile file may hold anything.
    if not isinstance(ms, int) or ms <= 0 or ms >= (2**63 - 1) // 1_000_000:
        return None
    return pd.Timestamp(ms, unit="ms", tz="UTC").isoformat()
