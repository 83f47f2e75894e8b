"""Loop rows -> typed DataFrames. The single place where row records become frames.

:class:`RowBuilder` takes rows one at a time (:meth:`RowBuilder.add` for a live row,
:meth:`RowBuilder.add_blob` for a decoded loop blob, with the common shape handled inline for
speed), keeps integers in raw buffers and text as Arrow chunks, and makes one typed frame in
display order (:meth:`RowBuilder.frame`). Its per-row results equal the plain
:mod:`adfkit._content` functions (``tests/reference_frames.py`` checks this on every sample).
:func:`records_frame` types the side tables.

Column set shared by ``AgentFile.loop()``, ``decode_audit()`` on a loop blob and
``AgentFile.history()`` (which adds ``epoch`` and ``copies``): see :data:`LOOP_COLUMNS`.
"""

from __future__ import annotations

import json
import warnings
from array import array
from collections.abc import Iterable
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._audit import js_length
from ._content import KINDS, MESSAGE_OVERHEAD, block_chars, classify, js_string, obj_chars
from ._errors import AdfWarning

#: Column -> dtype of the loop/history frames (documented in AgentFile.loop()).
LOOP_COLUMNS: dict[str, str] = {
    "seq": "Int64",
    "ord": "Int64",
    "position": "Int64",
    "role": "category",
    "kind": "category",
    "subkind": "string",
    "context_category": "string",
    "model": "string",
    "created_at": "datetime64[ms, UTC]",
    "tokens_input": "Int64",
    "tokens_output": "Int64",
    "tokens_cache_read": "Int64",
    "tokens_cache_write": "Int64",
    "tokens_reasoning": "Int64",
    "tokens_total": "Int64",
    "n_blocks": "Int64",
    "block_types": "string",
    "tool_names": "string",
    "text": "string",
    "chars": "Int64",
    "media_chars": "Int64",
    "est_tokens": "Int64",
    "content": "string",
    "origin": "category",
    "audit_id": "Int64",
    "malformed": "bool",
}

TOKEN_KEYS = ("input", "output", "cache_read", "cache_write", "reasoning")
#: The token columns of loop/history frames, ``tokens_total`` last.
TOKEN_COLUMNS = (*(f"tokens_{k}" for k in TOKEN_KEYS), "tokens_total")
_ROLES = ("user", "assistant")


def parse_tokens(raw: Any) -> tuple[dict[str, int | None], bool]:
    """``tokens`` column or blob field -> ({key: value}, malformed).

    JSON object (only present keys), bare integer (legacy total), NULL or unparseable text.
    """
    out: dict[str, int | None] = dict.fromkeys(TOKEN_KEYS)
    out["total"] = None
    if raw is None:
        return out, False
    val = raw
    if isinstance(raw, str | bytes):
        try:
            val = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return out, True
    if isinstance(val, bool):
        return out, True
    if isinstance(val, int | float):
        out["total"] = _count(val)
        return out, out["total"] is None
    if val is None:
        return out, False
    if not isinstance(val, dict):
        return out, True
    bad = False
    for k in TOKEN_KEYS:
        v = val.get(k)
        if isinstance(v, int | float) and not isinstance(v, bool):
            out[k] = _count(v)
            bad = bad or out[k] is None
        elif v is not None:
            bad = True
    if out["input"] is not None or out["output"] is not None:
        out["total"] = _count((out["input"] or 0) + (out["output"] or 0))
    return out, bad


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _count(v: int | float) -> int | None:
    """An integer that fits Int64 (floats truncated as before), else None (malformed)."""
    if not (_I64_MIN < v < _I64_MAX):  # also NaN
        return None
    return int(v)


def parse_content(raw: Any) -> tuple[list[dict[str, Any]], bool]:
    """``content_json`` (text or parsed) -> (list of block dicts, malformed)."""
    val = raw
    if isinstance(raw, str | bytes):
        try:
            val = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return [], True
    if isinstance(val, str):  # a plain-string message: one text block
        return [{"type": "text", "text": val}], False
    if isinstance(val, dict):
        val = [val]
    if not isinstance(val, list):
        return [], True
    blocks = [b for b in val if isinstance(b, dict)]
    return blocks, len(blocks) != len(val)


def blob_content(value: Any) -> Any:
    """A loop blob element's ``content_json`` as :meth:`RowBuilder.add` takes it.

    Blobs hold it parsed (ADF_FORMAT.md §4.2). A string there is either a stringified array
    (accepted defensively) or a plain-string message, which the live table stores as JSON text.
    """
    if isinstance(value, str):
        try:
            if isinstance(orjson.loads(value), list | dict):
                return value
        except orjson.JSONDecodeError:
            pass
        return orjson.dumps(value).decode()
    return value


#: Integer columns built by :class:`RowBuilder` (besides ``position``, set when sorting).
_INT_COLS = (
    "seq",
    "ord",
    "tokens_input",
    "tokens_output",
    "tokens_cache_read",
    "tokens_cache_write",
    "tokens_reasoning",
    "tokens_total",
    "n_blocks",
    "chars",
    "media_chars",
    "audit_id",
)
_STR_COLS = ("subkind", "context_category", "model", "block_types", "tool_names", "text", "content")
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "role": _ROLES,
    "kind": KINDS,
    "origin": ("live", "audit"),
}
_KIND_CODE = {k: i for i, k in enumerate(KINDS)}
_ORIGIN_CODE = {"live": 0, "audit": 1}
_NA_MS = np.iinfo(np.int64).min
_NO_TOKENS, _ = parse_tokens(None)
#: Text columns are built blob by blob and then copied once into the final order. The system
#: allocator hands large freed buffers straight back to the OS, where Arrow's default pool
#: (mimalloc) keeps them: measured on 600 MB of text, peak RSS ~2.4x the frame against ~3.4x.
_POOL = pa.system_memory_pool()


def _obj(x: Any) -> int:
    """:func:`adfkit._content.obj_chars` for parsed JSON, dispatching on exact types."""
    try:
        return _obj_fast(x)
    except RecursionError:  # a hostile value nested ~1000 deep: the iterative version
        return obj_chars(x)


def _obj_fast(x: Any) -> int:
    # Scalar members are counted inline (most tool inputs are flat): one call per container.
    t = type(x)
    if t is dict:
        n = 2
        for k, v in x.items():
            n += (len(k) if type(k) is str and k.isascii() else js_length(str(k))) + 2
            t = type(v)
            if t is str:
                n += (len(v) if v.isascii() else js_length(v)) + 2
            elif t is int or t is float or t is bool:
                n += 5
            elif v is None:
                n += 4
            else:
                n += _obj_fast(v)
        return n
    if t is list:
        n = 2 + len(x)
        for v in x:
            t = type(v)
            if t is str:
                n += (len(v) if v.isascii() else js_length(v)) + 2
            elif t is int or t is float or t is bool:
                n += 5
            elif v is None:
                n += 4
            else:
                n += _obj_fast(v)
        return n
    if t is str:
        return (len(x) if x.isascii() else js_length(x)) + 2
    if t is int or t is float or t is bool:
        return 5
    if x is None:
        return 4
    return obj_chars(x)


_K_CONTEXT = _KIND_CODE["context"]


def _classify_user(first_text: Any, has_blocks: bool) -> tuple[str, str | None]:
    """:func:`adfkit._content.classify` of a user row without tool results, from its first
    text block's ``text``."""
    return classify("user", [{"type": "text", "text": first_text}] if has_blocks else [])


#: Fields of one inline row in :meth:`RowBuilder.add_blob` (``audit_id``, ``origin`` and
#: ``malformed`` are the same for every inline row of a blob).
_ROW_FIELDS = (*_INT_COLS[:-1], "role", "kind", "created_at", *_STR_COLS)  # no audit_id


def _one_block(b: dict[str, Any], t: Any) -> tuple[str, str, str, int, int]:
    """``(block_types, tool_names, text, chars, media_chars)`` of a row whose only block ``b``
    (of type ``t``) is neither text nor a tool result."""
    if t == "tool_use":
        name = b.get("name")
        s = str(name or "")
        n = (len(s) if s.isascii() else js_length(s)) + _obj(b.get("input"))
        return "tool_use", str(name), "", n, 0
    if t == "thinking" and b.get("reasoning_details") is None:
        v = b.get("thinking")
        n = (len(v) if v.isascii() else js_length(v)) if type(v) is str else 0
        return "thinking", "", "", n, 0
    tc, mc = block_chars(b)
    return (t if type(t) is str else str(t)), "", "", tc, mc


def _ival(v: Any) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool) and _I64_MIN < v <= _I64_MAX:
        return v
    return None


#: ``created_at`` values (ms) outside this range (about years 1677-2262) become NaT.
_MS_LIMIT = (2**63 - 1) // 1_000_000


def _ms(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v and -_MS_LIMIT < v < _MS_LIMIT:
        return v
    return _NA_MS


def _json_text(value: Any) -> str | bytes | None:
    """Compact JSON of an already-parsed value; None when it nests too deep to serialise."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson stops at 255 levels; the stdlib goes deeper
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, ValueError, TypeError):
            return None


def _gather(chunks: list[pa.Array], rows: np.ndarray, idx: pa.Array) -> pa.ChunkedArray:
    """``chunks`` concatenated, then the values at ``rows``, without copying where possible.

    Rows come mostly in storage order (blobs are archived in seq order), so the result is a
    list of zero-copy slices, one per run of consecutive positions. Many short runs (rows
    shuffled) fall back to one Arrow ``take``, which copies.
    """
    typ = pa.large_string()
    if not len(rows):
        return pa.chunked_array([], type=typ)
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    if len(breaks) > max(4 * len(chunks), len(rows) // 16):
        return pc.take(pa.chunked_array(chunks, type=typ), idx, memory_pool=_POOL)
    offsets = np.cumsum([0, *(len(c) for c in chunks)])
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [len(rows)]))
    pieces = []
    for lo, hi in zip(rows[starts].tolist(), (rows[ends - 1] + 1).tolist(), strict=True):
        ci = int(np.searchsorted(offsets, lo, side="right")) - 1
        while lo < hi:
            stop = min(hi, int(offsets[ci + 1]))
            pieces.append(chunks[ci].slice(lo - int(offsets[ci]), stop - lo))
            lo = stop
            ci += 1
    return pa.chunked_array(pieces, type=typ)


def _text_array(values: list[Any]) -> pa.Array:
    """Arrow large_string array of str / UTF-8 bytes / None values.

    A list of only ``bytes`` (what :func:`orjson.dumps` gives, valid UTF-8 by construction) is
    joined into one buffer with computed offsets: one copy, no per-value conversion.
    """
    if all(type(v) is bytes for v in values):
        n = len(values)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=n), out=offsets[1:])
        data = pa.py_buffer(b"".join(values))
        return pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), data])
    return pa.array(values, type=pa.large_string(), memory_pool=_POOL)


class RowBuilder:
    """Accumulates loop rows column by column, then makes one typed frame.

    The per-row work is plain Python over already-parsed values; everything after it is
    columnar. Text columns move to Arrow at every :meth:`flush` (the caller flushes once per
    blob), so the Python strings of only one blob are alive at a time.
    """

    def __init__(self) -> None:
        self.n = 0
        # Integers go to raw int64 buffers (NA = _NA_MS), not lists of int objects: thousands
        # of long-lived ints scattered among each blob's short-lived parsed objects would pin
        # the interpreter's memory arenas (measured: ~0.5 GB held on a 600 MB history).
        self._ints: dict[str, array[int]] = {c: array("q") for c in _INT_COLS}
        self._codes: dict[str, array[int]] = {c: array("b") for c in _CATEGORIES}
        self._created: array[int] = array("q")
        self._malformed: list[bool] = []
        self._strs: dict[str, list[Any]] = {c: [] for c in _STR_COLS}
        self._chunks: dict[str, list[pa.Array]] = {c: [] for c in _STR_COLS}
        self.bad_content: list[int] = []
        self.bad_tokens: list[int] = []

    def add(
        self,
        seq: Any,
        ord_: Any,
        role: Any,
        content: Any,
        model: Any,
        tokens: Any,
        created_at: Any,
        origin: str,
        audit_id: int | None,
    ) -> None:
        blocks, bad_c = parse_content(content)
        if tokens is None:
            toks, bad_t = _NO_TOKENS, False
        else:
            toks, bad_t = parse_tokens(tokens)
        if bad_c:
            self.bad_content.append(seq)
        if bad_t:
            self.bad_tokens.append(seq)
        kind, sub = classify(role if role in _ROLES else None, blocks)
        if bad_c and not blocks:
            kind = "unknown"
        parts: list[str] = []
        types: list[str] = []
        tools: list[str] = []
        chars = media = 0
        for b in blocks:
            t = b.get("type")
            types.append(t if type(t) is str else str(t))
            if t == "text":
                v = b.get("text")
                if isinstance(v, str):
                    parts.append(v)
                    chars += len(v) if v.isascii() else js_length(v)
            elif t == "tool_result":
                v = b.get("content")
                if type(v) is str:
                    chars += len(v) if v.isascii() else js_length(v)
                else:
                    chars += js_length(js_string(v))
            elif t == "tool_use":
                name = b.get("name")
                tools.append(str(name))
                name = str(name or "")
                chars += (len(name) if name.isascii() else js_length(name)) + _obj(b.get("input"))
            else:
                tc, mc = block_chars(b)
                chars += tc
                media += mc
        ints = self._ints
        na = _NA_MS
        v = _ival(seq)
        ints["seq"].append(na if v is None else v)
        v = _ival(ord_)
        ints["ord"].append(na if v is None else v)
        for k in TOKEN_KEYS:
            v = toks[k]
            ints["tokens_" + k].append(na if v is None else v)
        v = toks["total"]
        ints["tokens_total"].append(na if v is None else v)
        ints["n_blocks"].append(len(blocks))
        ints["chars"].append(chars)
        ints["media_chars"].append(media)
        v = _ival(audit_id)
        ints["audit_id"].append(na if v is None else v)
        codes = self._codes
        codes["role"].append(0 if role == "user" else 1 if role == "assistant" else -1)
        codes["kind"].append(_KIND_CODE[kind])
        codes["origin"].append(_ORIGIN_CODE[origin])
        self._created.append(_ms(created_at))
        self._malformed.append(bad_c or bad_t)
        s = self._strs
        s["subkind"].append(sub)
        s["context_category"].append(sub if kind == "context" else None)
        s["model"].append(model if isinstance(model, str) else None)
        s["block_types"].append(",".join(types))
        s["tool_names"].append(",".join(tools))
        s["text"].append(parts[0] if len(parts) == 1 else "\n".join(parts))
        if isinstance(content, str):
            s["content"].append(content)
        elif isinstance(content, bytes):
            s["content"].append(content.decode("utf-8", "replace"))
        else:
            s["content"].append(_json_text(content))  # UTF-8 bytes: Arrow takes them as is
        self.n += 1

    def add_blob(self, value: list[Any], audit_id: int) -> None:
        """Add every element of a decoded ``loop`` blob (rows as :func:`_audit.decode` gives them).

        Same result as calling :meth:`add` per element (``origin`` = ``audit``), with the common
        shape (a list of block objects, integer tokens) handled inline; anything else goes
        through :meth:`add`. Inline rows are gathered as one tuple each and moved to the
        columns in bulk (:meth:`_put_rows`), before any row that takes the general path.
        """
        pending: list[tuple[Any, ...]] = []
        put = pending.append
        na, lo, hi, ms_lim = _NA_MS, _I64_MIN, _I64_MAX, _MS_LIMIT
        k_assistant, k_tool_result = _KIND_CODE["assistant"], _KIND_CODE["tool_result"]
        k_unknown = _KIND_CODE["unknown"]
        aid = audit_id if _ival(audit_id) is not None else na
        dumps = orjson.dumps
        for el in value:
            get = el.get
            content = get("content_json")
            tokens = get("tokens")
            if type(content) is not list:
                self._general(pending, aid, el, blob_content(content), audit_id)
                continue
            # Tokens: present integer keys; anything unusual takes the general parser.
            if tokens is None:
                ti = to = tcr = tcw = trs = tot = na
            elif type(tokens) is dict:
                tg = tokens.get
                ti, to, tcr, tcw, trs = (
                    tg("input"),
                    tg("output"),
                    tg("cache_read"),
                    tg("cache_write"),
                    tg("reasoning"),
                )
                if not (
                    (ti is None or (type(ti) is int and lo < ti < hi))
                    and (to is None or (type(to) is int and lo < to < hi))
                    and (tcr is None or (type(tcr) is int and lo < tcr < hi))
                    and (tcw is None or (type(tcw) is int and lo < tcw < hi))
                    and (trs is None or (type(trs) is int and lo < trs < hi))
                ):
                    self._general(pending, aid, el, content, audit_id)
                    continue
                if ti is None:
                    if to is None:
                        tot = ti = to = na
                    else:
                        tot, ti = to, na
                elif to is None:
                    tot, to = ti, na
                else:
                    tot = ti + to
                    if not lo < tot < hi:
                        tot = na
                if tcr is None:
                    tcr = na
                if tcw is None:
                    tcw = na
                if trs is None:
                    trs = na
            else:
                self._general(pending, aid, el, content, audit_id)
                continue
            first_text: Any = None
            saw_result = False
            if len(content) == 1 and type(b := content[0]) is dict:
                # One block (a message, trigger, context row or single tool result).
                t = b.get("type")
                tools = ""
                media = 0
                if t == "text":
                    types = "text"
                    first_text = v = b.get("text")
                    if type(v) is str:
                        text = v
                        chars = len(v) if v.isascii() else js_length(v)
                    else:
                        text, chars = "", 0
                elif t == "tool_result":
                    types, text = "tool_result", ""
                    saw_result = True
                    v = b.get("content")
                    if type(v) is str:
                        chars = len(v) if v.isascii() else js_length(v)
                    else:
                        chars = js_length(js_string(v))
                else:
                    types, tools, text, chars, media = _one_block(b, t)
                n_dicts = 1
            else:
                parts: list[str] = []
                tlist: list[str] = []
                tool_list: list[str] = []
                chars = media = n_dicts = 0
                for b in content:
                    if type(b) is not dict:
                        continue
                    n_dicts += 1
                    t = b.get("type")
                    if t == "text":
                        tlist.append("text")
                        v = b.get("text")
                        if first_text is None:
                            first_text = v
                        if type(v) is str:
                            parts.append(v)
                            chars += len(v) if v.isascii() else js_length(v)
                    elif t == "tool_use":
                        tlist.append("tool_use")
                        name = b.get("name")
                        tool_list.append(str(name))
                        name = str(name or "")
                        chars += (len(name) if name.isascii() else js_length(name)) + _obj(
                            b.get("input")
                        )
                    elif t == "tool_result":
                        tlist.append("tool_result")
                        saw_result = True
                        v = b.get("content")
                        if type(v) is str:
                            chars += len(v) if v.isascii() else js_length(v)
                        else:
                            chars += js_length(js_string(v))
                    elif t == "thinking" and b.get("reasoning_details") is None:
                        tlist.append("thinking")
                        v = b.get("thinking")
                        if type(v) is str:
                            chars += len(v) if v.isascii() else js_length(v)
                    else:
                        tlist.append(t if type(t) is str else str(t))
                        tc, mc = block_chars(b)
                        chars += tc
                        media += mc
                if n_dicts != len(content):  # non-object blocks: malformed, the general path
                    self._general(pending, aid, el, content, audit_id)
                    continue
                types = ",".join(tlist)
                tools = ",".join(tool_list)
                text = parts[0] if len(parts) == 1 else "\n".join(parts)
            role = get("role")
            if role == "assistant":
                kc, sub, cat, rc = k_assistant, None, None, 1
            elif role == "user":
                rc = 0
                if saw_result:
                    kc, sub, cat = k_tool_result, None, None
                else:
                    kind, sub = _classify_user(first_text, bool(content))
                    kc = _KIND_CODE[kind]
                    cat = sub if kc == _K_CONTEXT else None
            else:
                kc, sub, cat, rc = k_unknown, None, None, -1
            seq = get("seq")
            ord_ = get("ord")
            created = get("created_at")
            model = get("model")
            try:
                data = dumps(content)
            except TypeError:
                data = _json_text(content)
            put(
                (
                    seq if type(seq) is int and lo < seq <= hi else na,
                    na if ord_ is None else ord_ if type(ord_) is int and lo < ord_ <= hi else na,
                    ti,
                    to,
                    tcr,
                    tcw,
                    trs,
                    tot,
                    n_dicts,
                    chars,
                    media,
                    rc,
                    kc,
                    created
                    if type(created) is int and created and -ms_lim < created < ms_lim
                    else na,
                    sub,
                    cat,
                    model if isinstance(model, str) else None,
                    types,
                    tools,
                    text,
                    data,
                )
            )
        self._put_rows(pending, aid)

    def _general(
        self,
        pending: list[tuple[Any, ...]],
        aid: int,
        el: dict[str, Any],
        content: Any,
        audit_id: int,
    ) -> None:
        """A blob element off the inline path: the pending inline rows first, then :meth:`add`."""
        self._put_rows(pending, aid)
        get = el.get
        self.add(
            get("seq"),
            get("ord"),
            get("role"),
            content,
            get("model"),
            get("tokens"),
            get("created_at"),
            "audit",
            audit_id,
        )

    def _put_rows(self, pending: list[tuple[Any, ...]], aid: int) -> None:
        """Move the inline rows (tuples in :data:`_ROW_FIELDS` order) to the columns; clears
        ``pending``."""
        k = len(pending)
        if not k:
            return
        cols = list(zip(*pending, strict=True))
        pending.clear()
        ints, codes, strs = self._ints, self._codes, self._strs
        for name, col in zip(_ROW_FIELDS, cols, strict=True):
            if name in ints:
                ints[name].extend(col)
            elif name in codes:
                codes[name].extend(col)
            elif name == "created_at":
                self._created.extend(col)
            else:
                strs[name].extend(col)
        ints["audit_id"].extend(array("q", [aid]) * k)
        codes["origin"].extend(array("b", [1]) * k)
        self._malformed.extend([False] * k)
        self.n += k

    def flush(self) -> None:
        """Move the pending text values to Arrow (call once per blob to bound memory)."""
        for name, values in self._strs.items():
            if values:
                self._chunks[name].append(_text_array(values))
                self._strs[name] = []

    def warn(self, where: str, *, stacklevel: int = 4) -> None:
        """Warn about the rows with unreadable content or tokens added since the last call."""
        for what, seqs in (("content_json", self.bad_content), ("tokens", self.bad_tokens)):
            if seqs:
                shown = ", ".join(map(str, seqs[:10])) + (" ..." if len(seqs) > 10 else "")
                warnings.warn(
                    f"{where}: {len(seqs)} row(s) with unreadable {what} (seq {shown}); "
                    "kept and flagged in the 'malformed' column",
                    AdfWarning,
                    stacklevel=stacklevel,
                )
        self.bad_content, self.bad_tokens = [], []

    def seqs(self, start: int = 0, stop: int | None = None) -> list[int]:
        """The integer ``seq`` values of the rows at positions ``start:stop``."""
        return [v for v in self._ints["seq"][start:stop] if v != _NA_MS]

    # -- columnar part ---------------------------------------------------------------------
    def int_array(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(values, mask)`` of an integer column over every row added (NA -> 0, masked)."""
        vals = np.frombuffer(self._ints[name], dtype=np.int64).copy()
        mask = vals == _NA_MS
        vals[mask] = 0
        return vals, mask

    def display_key(self) -> tuple[np.ndarray, np.ndarray]:
        """``(COALESCE(ord, seq), seq)`` as int64 arrays (NA -> 0), for :func:`numpy.lexsort`."""
        seq, seq_na = self.int_array("seq")
        ord_, ord_na = self.int_array("ord")
        key = np.where(ord_na, seq, ord_)
        key[ord_na & seq_na] = 0
        return key, seq

    def frame(self, rows: np.ndarray | None = None, *, consume: bool = False) -> pd.DataFrame:
        """Typed frame of the rows at positions ``rows`` (default: all, in display order).

        ``consume=True`` frees each text column's Arrow chunks as soon as it is copied out, so
        the peak stays near one copy of the data; the builder is unusable afterwards.
        """
        self.flush()
        if rows is None:
            key, seq = self.display_key()
            rows = np.lexsort((seq, key))
        rows = np.asarray(rows, dtype=np.int64)
        data: dict[str, Any] = {}
        idx = pa.array(rows)
        for name, dtype in LOOP_COLUMNS.items():
            if name == "position":
                continue
            if dtype == "Int64":
                vals, mask = self.int_array(name) if name != "est_tokens" else self._est()
                data[name] = pd.arrays.IntegerArray(vals[rows], mask[rows])
            elif dtype == "category":
                codes = np.frombuffer(self._codes[name], dtype=np.int8)[rows]
                data[name] = pd.Categorical.from_codes(
                    codes, dtype=pd.CategoricalDtype(list(_CATEGORIES[name]))
                )
            elif dtype.startswith("datetime"):
                ms = np.frombuffer(self._created, dtype=np.int64)[rows]
                data[name] = pd.Series(ms.view("datetime64[ms]")).dt.tz_localize("UTC").array
            elif dtype == "bool":
                data[name] = np.asarray(self._malformed, dtype=bool)[rows]
            else:
                chunks = self._chunks.pop(name) if consume else self._chunks[name]
                data[name] = pd.arrays.ArrowStringArray(_gather(chunks, rows, idx))
                del chunks
        df = pd.DataFrame(data, copy=False)
        df.insert(2, "position", pd.array(np.arange(len(df)), dtype="Int64"))
        return df

    def _est(self) -> tuple[np.ndarray, np.ndarray]:
        chars, _ = self.int_array("chars")
        media, _ = self.int_array("media_chars")
        # Same IEEE operations as math.ceil((chars + 16) / 3.5) + math.ceil(media / 100).
        est = np.ceil((chars + MESSAGE_OVERHEAD) / 3.5) + np.ceil(media / 100)
        return est.astype(np.int64), np.zeros(len(est), dtype=bool)


def sort_display(df: pd.DataFrame) -> pd.DataFrame:
    """Sort by ``COALESCE(ord, seq), seq`` (the ordering rule everywhere) and number positions."""
    df = df.drop(columns="position", errors="ignore")
    key = df["ord"].fillna(df["seq"])
    order = np.lexsort(
        (df["seq"].to_numpy(dtype="int64", na_value=0), key.to_numpy(dtype="int64", na_value=0))
    )
    df = df.iloc[order].reset_index(drop=True)
    df.insert(2, "position", pd.array(np.arange(len(df)), dtype="Int64"))
    return df


def records_frame(records: Iterable[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    """Generic typed frame for the side tables: ms ints -> UTC datetimes, ISO text -> UTC."""
    df = pd.DataFrame.from_records(list(records), columns=list(columns))
    for name, dtype in columns.items():
        s = df[name]
        if dtype in ("ms", "Int64", "boolean"):
            # Hostile files hold text, BLOBs, fractions or huge numbers in integer columns.
            s = pd.Series([_side_int(v) for v in s.tolist()], index=s.index, dtype="object").astype(
                "Int64"
            )
        if dtype == "ms":
            num = s.where((s > 0) & (s < _MS_LIMIT))
            df[name] = pd.to_datetime(num, unit="ms", utc=True).astype("datetime64[ms, UTC]")
        elif dtype == "iso":
            df[name] = pd.to_datetime(s, utc=True, errors="coerce", format="ISO8601").astype(
                "datetime64[ms, UTC]"
            )
        elif dtype == "Int64":
            df[name] = s
        elif dtype == "boolean":
            df[name] = s.ne(0).astype("boolean")
        else:
            df[name] = pd.Series(
                [_side_text(v) for v in s.tolist()], index=s.index, dtype="object"
            ).astype(dtype)
    return df


def _side_int(v: Any) -> int | None:
    """A side-table integer cell: ints that fit Int64 and whole floats; else NA."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v if _I64_MIN < v <= _I64_MAX else None
    if isinstance(v, float) and v.is_integer() and _I64_MIN < v < _I64_MAX:
        return int(v)
    if isinstance(v, str):
        try:
            return _side_int(float(v)) if "." in v or "e" in v.lower() else _side_int(int(v))
        except ValueError:
            return None
    return None


def _side_text(v: Any) -> str | None:
    """A side-table text cell: BLOBs decoded as UTF-8 (invalid bytes replaced)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, float) and v != v:
        return None
    return str(v)
