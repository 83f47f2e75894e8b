"""Tables derived from the loop rows: content blocks, tool calls, tool result texts."""

from __future__ import annotations

from typing import Any

import pandas as pd

from adfkit import schema
from adfkit._core.loopframe import json_text
from adfkit._core.rows import block_chars, block_text, parse_content
from adfkit._core.source import AgentSource, Key

_BLOCKS: Key[pd.DataFrame] = Key("blocks")
_TOOL_CALLS: Key[pd.DataFrame] = Key("tool_calls")
_RESULT_TEXTS: Key[dict[str, str]] = Key("result_texts")


def blocks(src: AgentSource, *, history: bool = False) -> pd.DataFrame:
    """Content blocks of the live loop (or of the whole history); see ``AgentFile.blocks``."""
    return src.memo.get(
        _BLOCKS, lambda: blocks_frame(src.history() if history else src.loop()), history
    ).copy(deep=False)


def tool_calls(src: AgentSource, *, history: bool = False) -> pd.DataFrame:
    """Tool calls joined to their results; see ``AgentFile.tool_calls``."""
    return src.memo.get(
        _TOOL_CALLS,
        lambda: tool_calls_frame(
            blocks(src, history=history), src.history() if history else src.loop()
        ),
        history,
    ).copy(deep=False)


def result_texts(src: AgentSource) -> dict[str, str]:
    """tool_use_id -> full text of its first tool_result in the history."""

    def build() -> dict[str, str]:
        b = blocks(src, history=True)
        r = b[(b["type"] == "tool_result") & _has_id(b)].drop_duplicates(
            "tool_use_id", keep="first"
        )
        return {
            str(u): ("" if pd.isna(t) else str(t))
            for u, t in zip(r["tool_use_id"], r["text"], strict=True)
        }

    return src.memo.get(_RESULT_TEXTS, build)


def _has_id(frame: pd.DataFrame) -> pd.Series:
    """Rows whose ``tool_use_id`` is a real id (not NA, not empty)."""
    ids = frame["tool_use_id"]
    return ids.notna() & (ids != "")


def blocks_frame(loop: pd.DataFrame) -> pd.DataFrame:
    """One row per content block of the rows of ``loop`` (in the frame's order)."""
    cols: dict[str, list[Any]] = {c: [] for c in schema.BLOCKS}
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
    return pd.DataFrame({c: pd.array(v, dtype=schema.BLOCKS[c]) for c, v in cols.items()})


def _json_str(value: Any) -> str | None:
    """Compact JSON text of a parsed value (None if it nests too deep to write back)."""
    out = json_text(value)
    return out.decode() if isinstance(out, bytes) else out


def tool_calls_frame(blocks: pd.DataFrame, loop: pd.DataFrame) -> pd.DataFrame:
    """Each ``tool_use`` joined to the first later ``tool_result`` with its id."""
    uses = blocks[blocks["type"] == "tool_use"]
    res = blocks[blocks["type"] == "tool_result"]
    # A missing id never matches: a result without one joins no call (pandas would pair NA
    # with NA).
    res = res[_has_id(res)].drop_duplicates("tool_use_id", keep="first")
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
