"""Tables derived from the loop rows: content blocks, tool calls, tool result texts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._core.loopframe import json_text
from adfkit._core.rows import block_chars, block_text, parse_content
from adfkit._core.source import AgentSource, Key

T = TypeVar("T")
_BLOCKS: Key[pd.DataFrame] = Key("blocks")
_TOOL_CALLS: Key[pd.DataFrame] = Key("tool_calls")
_RESULT_TEXTS: Key[Mapping[str, str]] = Key("result_texts")
_CALL_INDEX: Key[CallIndex] = Key("tables.call_index")
_CALL_BLOCKS: Key[_CallBlocks] = Key("tables.call_blocks")
_CALL_TUPLES: Key[list[tuple[Any, Any, Any, Any]]] = Key("tables.call_tuples")


def blocks(src: AgentSource, *, history: bool = False) -> pd.DataFrame:
    """Content blocks of the live loop (or of the whole history); see ``AgentFile.blocks``."""
    return src.memo.get(
        _BLOCKS, lambda: blocks_frame(src.history() if history else src.loop()), history
    ).copy(deep=False)


def tool_calls(src: AgentSource, *, history: bool = False) -> pd.DataFrame:
    """Tool calls joined to their results; see ``AgentFile.tool_calls``."""
    if history:  # the history's: from what its walk keeps (:func:`history_blocks`)
        frame = src.memo.get(_TOOL_CALLS, lambda: _call_blocks(src).frame(src.history()), True)
    else:
        frame = src.memo.get(_TOOL_CALLS, lambda: tool_calls_of(src.loop()), False)
    return frame.copy(deep=False)


def history_calls(src: AgentSource) -> list[tuple[Any, Any, Any, Any]]:
    """``(call_seq, tool_name, tool_input, result_seq)`` of each of the history's tool calls,
    in the order and with the values (NA as ``pd.NA``) of those columns of
    :func:`tool_calls` with ``history=True``, without its frame (what a walk over the calls
    reads)."""
    return src.memo.get(_CALL_TUPLES, lambda: _call_blocks(src).tuples())


def _call_blocks(src: AgentSource) -> _CallBlocks:
    """The tool calls' blocks the walk of the history kept (walked now if it has not been)."""
    return src.memo.get(_CALL_BLOCKS, lambda: _walked(src, _CALL_BLOCKS))


def call_index(src: AgentSource) -> CallIndex:
    """Where the history's tool calls and results are (:class:`CallIndex`), from the walk of
    :func:`history_blocks`."""
    return src.memo.get(_CALL_INDEX, lambda: _walked(src, _CALL_INDEX))


def _walked(src: AgentSource, key: Key[T], arg: Any = None) -> T:
    """What the walk of the history's blocks keeps under ``key``: walked now, as it had not
    been."""
    for _ in history_blocks(src):
        pass
    return src.memo.get(key, _kept_by_the_walk, arg)


def _kept_by_the_walk() -> Any:
    raise AssertionError("history_blocks() keeps the tool calls' blocks and their index")


def result_texts(src: AgentSource) -> Mapping[str, str]:
    """tool_use_id -> full text of its first tool_result in the history (each text made when
    it is read, from its row's content: the callers read a few)."""

    def build() -> Mapping[str, str]:
        ix = call_index(src)
        first: dict[str, tuple[int, int]] = {}
        for t, u, r, k in zip(ix.type, ix.tool_use_id, ix.row, ix.block, strict=True):
            if t == "tool_result" and u:  # a real id (not None, not empty)
                first.setdefault(u, (r, k))  # the first result of each id
        return _ResultTexts(first, src.history()["content"].array)

    return src.memo.get(_RESULT_TEXTS, build)


class _ResultTexts(Mapping[str, str]):
    """:func:`result_texts`: the history row and block of each id's first result, its text
    read on demand (the block's text in :func:`blocks_frame`)."""

    def __init__(self, first: dict[str, tuple[int, int]], content: Any) -> None:
        self._first, self._content = first, content

    def __getitem__(self, uid: str) -> str:
        row, k = self._first[uid]
        blocks, _ = parse_content(self._content[row])
        return block_text(blocks[k])

    def __iter__(self) -> Iterator[str]:
        return iter(self._first)

    def __len__(self) -> int:
        return len(self._first)


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
    """Each ``tool_use`` of a blocks frame (:func:`blocks_frame` of ``loop``) joined to the
    first ``tool_result`` with its id (:func:`_join`); the call's columns taken from the
    blocks' own arrays (their dtypes kept; -1, a call without a result, takes NA)."""
    use, res = _join(blocks["type"].tolist(), blocks["tool_use_id"].tolist())

    def take(col: str, at: np.ndarray) -> Any:
        return blocks[col].array.take(at, allow_fill=True)

    result = pd.Series(take("text", res))
    return _calls_frame(
        loop,
        {
            "call_seq": take("seq", use),
            "tool_use_id": take("tool_use_id", use),
            "tool_name": take("tool_name", use),
            "tool_input": take("tool_input", use),
            "result_seq": take("seq", res),
            "result_preview": result.str.slice(0, PREVIEW).array,
            "result_chars": result.str.len().astype("Int64").array,
            "is_error": take("is_error", res),
            "matched": res >= 0,
        },
    )


#: Characters of a result's text in ``result_preview``.
PREVIEW = 300


def tool_calls_of(loop: pd.DataFrame) -> pd.DataFrame:
    """:func:`tool_calls_frame` of ``loop`` without its blocks frame: one pass over the
    rows' content that keeps only the calls and results, each result as its preview and
    length, not its text (the blocks' text column, most of the content, is not built)."""
    calls = _CallBlocks()
    for _ in _row_blocks(loop, calls):
        pass
    return calls.frame(loop)


def history_blocks(src: AgentSource) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    """Each history row's ``(seq, content blocks)``, in order, its content parsed once: the
    history's tool calls (:func:`tool_calls` with ``history=True``) and their
    :func:`call_index` are made on the way and kept when the walk ends, so that a table that
    reads every row's blocks and the tool calls parses the content once."""
    h = src.history_view()  # read only
    calls = _CallBlocks()
    yield from _row_blocks(h, calls)
    src.memo.get(_CALL_BLOCKS, lambda: calls)  # their frame made when first asked for
    src.memo.get(_CALL_INDEX, lambda: calls.index)


def _row_blocks(
    loop: pd.DataFrame, calls: _CallBlocks
) -> Iterator[tuple[Any, list[dict[str, Any]]]]:
    """Each row's ``(seq, content blocks)``, its calls and results added to ``calls``."""
    contents = schema.plain(loop["content"])
    for row, (seq, content) in enumerate(zip(loop["seq"].tolist(), contents, strict=True)):
        blocks, _ = parse_content(content if isinstance(content, str) else "[]")
        for k, blk in enumerate(blocks):
            t = blk.get("type")
            if t == "tool_use" or t == "tool_result":
                calls.add(seq, t, blk, row, k)
        yield seq, blocks


@dataclass
class CallIndex:
    """The ``tool_use`` and ``tool_result`` blocks of the history, in order: each one's row
    ``seq``, ``type``, ``tool_use_id`` (None: none; as in :func:`blocks_frame`), and where
    it is: its ``row`` (position in ``history()``) and its ``block`` (position in the row's
    content)."""

    seq: list[Any] = field(default_factory=list)
    type: list[str] = field(default_factory=list)
    tool_use_id: list[str | None] = field(default_factory=list)
    row: list[int] = field(default_factory=list)
    block: list[int] = field(default_factory=list)


class _CallBlocks:
    """The ``tool_use`` and ``tool_result`` blocks of a frame's rows, in order: their
    :class:`CallIndex` and the columns :func:`blocks_frame` gives them (a result's text as
    its preview and length)."""

    def __init__(self) -> None:
        self.index = CallIndex()
        self.tool_name: list[str | None] = []
        self.tool_input: list[str | None] = []
        self.preview: list[str | None] = []
        self.chars: list[int | None] = []
        self.is_error: list[bool | None] = []

    def add(self, seq: Any, t: str, b: dict[str, Any], row: int, k: int) -> None:
        """Add block ``b``, the ``k``-th of row ``row`` (seq ``seq``), of type ``t``:
        ``tool_use`` or ``tool_result``."""
        if t == "tool_use":
            uid = b.get("id")
            name: str | None = str(b.get("name"))
            inp = _json_str(b.get("input"))
            text = err = None
        else:
            uid = b.get("tool_use_id")
            name = inp = None
            text = block_text(b)
            err = bool(b.get("is_error"))
        ix = self.index
        ix.seq.append(seq)
        ix.type.append(t)
        ix.tool_use_id.append(None if uid is None else str(uid))
        ix.row.append(row)
        ix.block.append(k)
        self.tool_name.append(name)
        self.tool_input.append(inp)
        self.preview.append(None if text is None else text[:PREVIEW])
        self.chars.append(None if text is None else len(text))
        self.is_error.append(err)

    def tuples(self) -> list[tuple[Any, Any, Any, Any]]:
        """``(call_seq, tool_name, tool_input, result_seq)`` of each call, as the columns of
        :meth:`frame` hold them (NA: ``pd.NA``)."""
        ix = self.index
        use, res = _join(ix.type, ix.tool_use_id)
        # NA as pd.NA; the common values (an int seq, a str name or input) as they are
        seq = [v if type(v) is int else _na_to_pd(v) for v in ix.seq]
        name = [v if type(v) is str else _na_to_pd(v) for v in self.tool_name]
        inp = [v if type(v) is str else _na_to_pd(v) for v in self.tool_input]
        return [
            (seq[u], name[u], inp[u], seq[r] if r >= 0 else pd.NA)
            for u, r in zip(use.tolist(), res.tolist(), strict=True)
        ]

    def frame(self, loop: pd.DataFrame) -> pd.DataFrame:
        """The tool-call frame of these blocks (``loop``: the rows they came from)."""
        ix = self.index
        use, res = _join(ix.type, ix.tool_use_id)

        def take(values: list[Any], at: np.ndarray, dtype: str) -> Any:
            return pd.array([values[i] if i >= 0 else None for i in at.tolist()], dtype=dtype)

        return _calls_frame(
            loop,
            {
                "call_seq": take(ix.seq, use, "Int64"),
                "tool_use_id": take(ix.tool_use_id, use, "string"),
                "tool_name": take(self.tool_name, use, "string"),
                "tool_input": take(self.tool_input, use, "string"),
                "result_seq": take(ix.seq, res, "Int64"),
                "result_preview": take(self.preview, res, "string"),
                "result_chars": take(self.chars, res, "Int64"),
                "is_error": take(self.is_error, res, "boolean"),
                "matched": res >= 0,
            },
        )


def _na_to_pd(v: Any) -> Any:
    """A value as a frame's column gives it back: NA (None, NaN, pd.NA) as ``pd.NA``."""
    return pd.NA if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v


def _join(types: list[Any], ids: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(use, res)``: the position of each ``tool_use`` block and of the first
    ``tool_result`` block with its id (-1: none). A block without a type (NA) is neither; a
    result without an id (NA, None or empty) joins no call."""
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
    return use, res


def _calls_frame(loop: pd.DataFrame, cols: dict[str, Any]) -> pd.DataFrame:
    """The tool-call frame of ``cols`` with each call's time: its row's first
    ``created_at`` in ``loop``."""
    row: dict[Any, int] = {}  # seq -> its first row in ``loop``: the call's time
    for i, q in enumerate(loop["seq"].tolist()):
        row.setdefault(q, i)
    at = np.array([row.get(q, -1) for q in pd.array(cols["call_seq"]).tolist()], dtype="int64")
    created = loop["created_at"].array.take(at, allow_fill=True)
    if not isinstance(created.dtype, pd.DatetimeTZDtype) or created.isna().all():
        # as objects, as a reindexed Series gave them (the column's dtype inferred: object
        # when there is no call, datetime64[s] when no call's time is known)
        created = created.to_numpy()
    # else the times as they are: the dtype the objects would give back, without them
    return pd.DataFrame({**cols, "created_at": created})
