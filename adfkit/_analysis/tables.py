"""Tables derived from the loop rows: content blocks, tool calls, tool result texts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._core.loopframe import json_text
from adfkit._core.rows import block_chars, block_text, parse_content
from adfkit._core.source import AgentSource, Key

_BLOCKS: Key[pd.DataFrame] = Key("blocks")
_TOOL_CALLS: Key[pd.DataFrame] = Key("tool_calls")
_RESULT_TEXTS: Key[Mapping[str, str]] = Key("result_texts")


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


def result_texts(src: AgentSource) -> Mapping[str, str]:
    """tool_use_id -> full text of its first tool_result in the history (each text made when
    it is read: the callers read a few, and the blocks already hold them all)."""

    def build() -> Mapping[str, str]:
        b = blocks(src, history=True)  # arrays, not the frame filtered
        kind = b["type"].to_numpy(dtype=object, na_value=None)
        at = np.flatnonzero((kind == "tool_result") & _has_id(b).to_numpy(bool, na_value=False))
        first: dict[str, int] = {}
        for u, i in zip(b["tool_use_id"].iloc[at].tolist(), at.tolist(), strict=True):
            first.setdefault(str(u), i)  # the first result of each id
        return _ResultTexts(first, b["text"].array)

    return src.memo.get(_RESULT_TEXTS, build)


class _ResultTexts(Mapping[str, str]):
    """:func:`result_texts`: the block row of each id's first result, its text read on demand
    ("" for a result without text)."""

    def __init__(self, first: dict[str, int], text: Any) -> None:
        self._first, self._text = first, text

    def __getitem__(self, uid: str) -> str:
        t = self._text[self._first[uid]]
        return "" if pd.isna(t) else str(t)

    def __iter__(self) -> Iterator[str]:
        return iter(self._first)

    def __len__(self) -> int:
        return len(self._first)


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
    """Each ``tool_use`` joined to the first later ``tool_result`` with its id.

    One pass over the blocks' columns as lists: the index of each id's first result, then
    each call's columns taken from the blocks' own arrays (their dtypes kept; -1, a call
    without a result, takes NA)."""
    types = blocks["type"].tolist()
    ids = blocks["tool_use_id"].tolist()
    first: dict[Any, int] = {}
    uses: list[int] = []
    for i, (t, uid) in enumerate(zip(types, ids, strict=True)):
        if type(t) is not str:  # a block without a type (NA) is neither
            continue
        if t == "tool_use":
            uses.append(i)
        elif t == "tool_result" and isinstance(uid, str) and uid and uid not in first:
            # a missing id never matches: a result without one joins no call
            first[uid] = i
    use = np.array(uses, dtype="int64")
    res = np.array([first.get(ids[i], -1) for i in uses], dtype="int64")

    def take(col: str, at: np.ndarray) -> Any:
        return blocks[col].array.take(at, allow_fill=True)

    result = pd.Series(take("text", res))
    row: dict[Any, int] = {}  # seq -> its first row in ``loop``: the call's time
    for i, q in enumerate(loop["seq"].tolist()):
        row.setdefault(q, i)
    call_seq = take("seq", use)
    at = np.array([row.get(q, -1) for q in call_seq.tolist()], dtype="int64")
    return pd.DataFrame(
        {
            "call_seq": call_seq,
            "tool_use_id": take("tool_use_id", use),
            "tool_name": take("tool_name", use),
            "tool_input": take("tool_input", use),
            "result_seq": take("seq", res),
            "result_preview": result.str.slice(0, 300).array,
            "result_chars": result.str.len().astype("Int64").array,
            "is_error": take("is_error", res),
            "matched": res >= 0,
            # as objects, as a reindexed Series gave them (the column's dtype inferred)
            "created_at": loop["created_at"].array.take(at, allow_fill=True).to_numpy(),
        }
    )
