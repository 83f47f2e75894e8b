"""Loop rows -> the typed loop frame, column by column.

:class:`RowBuilder` takes rows one at a time (:meth:`RowBuilder.add` for a stored row,
:meth:`RowBuilder.add_blob` for a decoded loop blob), derives each row's columns with the one
row rule (:mod:`adfkit._core.rows`), keeps integers in int64 matrices and text as Arrow chunks, and
makes one frame with the columns of :data:`adfkit.schema.LOOP` in display order
(:meth:`RowBuilder.frame`). :func:`sort_display` applies the same ordering rule to a frame.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from adfkit._base.errors import AdfWarning
from adfkit._core.rows import (
    KINDS,
    MESSAGE_OVERHEAD,
    MS_LIMIT,
    blob_content,
    created_ms,
    parse_content,
    row_facts,
    stored_facts,
    token_counts,
)
from adfkit.schema import LOOP

_ROLES = ("user", "assistant")
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1

#: Integer fields of a row, in the order :class:`RowBuilder` stores them (one int64 each):
#: the integer columns, ``created_at`` (ms) and the row's flags (the codes of ``role`` and
#: ``kind`` and the ``malformed`` flag, packed as :data:`_KIND_FLAG` says). ``audit_id`` and
#: ``origin`` are the same for every row of a blob: they are kept as runs. ``position`` is set
#: when sorting.
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
)
_FIELDS = (*_INT_COLS, "created_at", "flags")
_NF = len(_FIELDS)
_FIELD = {c: i for i, c in enumerate(_FIELDS)}
_STR_COLS = ("subkind", "context_category", "model", "block_types", "tool_names", "text", "content")
_NS = len(_STR_COLS)
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "role": _ROLES,
    "kind": KINDS,
    "origin": ("live", "audit"),
}
#: The category columns' dtypes, made once (a new one validates its categories each time).
_CATEGORY_DTYPES = {name: pd.CategoricalDtype(list(cats)) for name, cats in _CATEGORIES.items()}
_KIND_CODE = {k: i for i, k in enumerate(KINDS)}
_ORIGIN_CODE = {"live": 0, "audit": 1}
#: A row's flags, one integer: ``role`` code + 1 (0 another role, 1 user, 2 assistant) in
#: bits 0-1, ``kind`` code in bits 2-5 (_KIND_FLAG), ``malformed`` in bit 6 (64).
_KIND_FLAG = {k: 4 * i for i, k in enumerate(KINDS)}
_NA_MS = np.iinfo(np.int64).min
#: Text columns are built blob by blob and then copied once into the final order. The system
#: allocator hands large freed buffers straight back to the OS, where Arrow's default pool
#: (mimalloc) keeps them: measured on 600 MB of text, peak RSS ~2.4x the frame against ~3.4x.
_POOL = pa.system_memory_pool()


def _ival(v: Any) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool) and _I64_MIN < v <= _I64_MAX:
        return v
    return None


#: ``created_at`` values (ms) outside this range (about years 1677-2262) become NaT.
_MS_LIMIT = MS_LIMIT


def _ms(v: Any) -> int:
    out: int = created_ms(v, _NA_MS)
    return out


def json_text(value: Any) -> str | bytes | None:
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
    if values and set(map(type, values)) == {bytes}:
        n = len(values)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=n), out=offsets[1:])
        data = pa.py_buffer(b"".join(values))
        return pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), data])
    return pa.array(values, type=pa.large_string(), memory_pool=_POOL)


class RowBuilder:
    """Accumulates loop rows, then makes one typed frame.

    The per-row work is plain Python over already-parsed values: each row appends its integer
    fields (:data:`_FIELDS`) to one flat list and its text fields to another. Everything after
    it is columnar: at every :meth:`flush` (the caller flushes every few thousand rows or
    megabytes) the integers move to an int64 matrix and the text to Arrow, so few Python
    objects are alive at a time.
    """

    def __init__(self) -> None:
        self.n = 0
        # Integers wait in a flat list (a C-level extend per row) and move to int64 matrices
        # (NA = _NA_MS) at every flush: thousands of long-lived int objects scattered among
        # each blob's short-lived parsed objects would pin the interpreter's memory arenas
        # (measured: ~0.5 GB held on a 600 MB history).
        self._ints: list[int] = []
        self._int_chunks: list[np.ndarray] = []
        #: ``audit_id`` and ``origin`` code of the rows, as runs: [rows, audit id, origin]
        self._runs: list[list[int]] = []
        self._strs: list[Any] = []
        self._chunks: dict[str, list[pa.Array]] = {c: [] for c in _STR_COLS}
        self.bad_content: list[Any] = []
        self.bad_tokens: list[Any] = []
        self.bad_nulls: list[Any] = []
        #: Whether the layout stores ``created_at`` (pre-public files do not): a NULL there is
        #: damage, an absent column is not.
        self.created_at_stored = True

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
        hint: str | None = None,
    ) -> None:
        """Add one stored row: ``content`` as JSON text (or already parsed), ``tokens`` as JSON
        text, a bare integer or a parsed object; ``hint``: the kind the record states, if its
        format says (:func:`adfkit._core.rows.row_facts`)."""
        blocks, bad_c = parse_content(content)
        if isinstance(content, str):
            text: str | bytes | None = content
        elif isinstance(content, bytes):
            text = content.decode("utf-8", "replace")
        else:
            text = json_text(content)  # UTF-8 bytes: Arrow takes them as is
            bad_c = bad_c or text is None
        self._add(seq, ord_, role, blocks, bad_c, text, model, tokens, created_at, hint)
        self._run(1, audit_id, _ORIGIN_CODE[origin])

    def add_blob(self, value: list[Any], audit_id: int) -> None:
        """Add every element of a decoded ``loop`` blob (rows as :func:`_blobs.decode` gives
        them, ``content_json`` already parsed); ``origin`` is ``audit``.

        The usual element (content a list of block objects) is flattened inline here, with the
        same functions of the row rule as :meth:`add`; any other goes through :meth:`_add`.
        """
        na = _NA_MS
        first = self.n
        put_ints = self._ints.extend
        put_strs = self._strs.extend
        bad_tokens, bad_nulls = self.bad_tokens, self.bad_nulls
        need_created = self.created_at_stored
        dumps = orjson.dumps
        facts = row_facts
        counts = token_counts
        kind_flag = _KIND_FLAG
        lo, hi, ms = _I64_MIN, _I64_MAX, _MS_LIMIT
        n = 0
        for el in value:
            get = el.get
            content = get("content_json")
            role = get("role")
            seq = get("seq")
            try:
                if type(content) is not list:
                    raise TypeError
                # a block that is not an object has no .get: AttributeError
                kind, sub, types, tools, text, chars, media = facts(role, content)
                try:
                    js: str | bytes | None = dumps(content)
                except TypeError:
                    js = json_text(content)
            except (TypeError, AttributeError):
                self._add_element(el)
                continue
            tokens = get("tokens")
            if tokens is None:
                ti = to = tcr = tcw = tr = tt = na
                bad_t = False
            else:
                ti, to, tcr, tcw, tr, tt, bad_t = counts(tokens, na)
                if bad_t:
                    bad_tokens.append(seq)
            o = get("ord")
            created = get("created_at")
            model = get("model")
            flags = kind_flag[kind] + (1 if role == "user" else 2 if role == "assistant" else 0)
            if bad_t:
                flags += 64
            if js is None:  # too deep to write again: malformed, never a silent NA
                self.bad_content.append(seq)
                flags |= 64
            if role is None or (created is None and need_created):
                bad_nulls.append(seq)
                flags |= 64
            put_ints(
                (
                    seq if type(seq) is int and lo < seq <= hi else na,
                    na if o is None else o if type(o) is int and lo < o <= hi else na,
                    ti,
                    to,
                    tcr,
                    tcw,
                    tr,
                    tt,
                    len(content),
                    chars,
                    media,
                    created if type(created) is int and created and -ms < created < ms else na,
                    flags,
                )
            )
            put_strs(
                (
                    sub,
                    sub if kind == "context" else None,
                    model if type(model) is str else None,
                    types,
                    tools,
                    text,
                    js,
                )
            )
            n += 1
        self.n += n
        self._run(self.n - first, audit_id, 1)

    def _run(self, n: int, audit_id: Any, origin: int) -> None:
        """``n`` rows just added hold this audit id and origin code."""
        aid = _NA_MS if (v := _ival(audit_id)) is None else v
        runs = self._runs
        if runs and runs[-1][1] == aid and runs[-1][2] == origin:
            runs[-1][0] += n
        elif n:
            runs.append([n, aid, origin])

    def _add_element(self, el: dict[str, Any]) -> None:
        """One blob element whose content is not a list of block objects."""
        get = el.get
        content = blob_content(get("content_json"))
        blocks, bad_c = parse_content(content)
        text = content if isinstance(content, str) else json_text(content)
        bad_c = bad_c or (text is None and content is not None)
        self._add(
            get("seq"),
            get("ord"),
            get("role"),
            blocks,
            bad_c,
            text,
            get("model"),
            get("tokens"),
            get("created_at"),
        )

    def _add(
        self,
        seq: Any,
        ord_: Any,
        role: Any,
        blocks: list[dict[str, Any]],
        bad_c: bool,
        content: str | bytes | None,
        model: Any,
        tokens: Any,
        created_at: Any,
        hint: str | None = None,
    ) -> None:
        """One row's fields (its audit id and origin are recorded by the caller, as runs)."""
        na = _NA_MS
        ti, to, tcr, tcw, tr, tt, bad_t = token_counts(tokens, na)
        if bad_c:
            self.bad_content.append(seq)
        if bad_t:
            self.bad_tokens.append(seq)
        bad_n = role is None or (created_at is None and self.created_at_stored)
        if bad_n:
            self.bad_nulls.append(seq)
        kind, sub, types, tools, text, chars, media = stored_facts(role, blocks, bad_c, hint)
        self._ints.extend(
            (
                na if (v := _ival(seq)) is None else v,
                na if (v := _ival(ord_)) is None else v,
                ti,
                to,
                tcr,
                tcw,
                tr,
                tt,
                len(blocks),
                chars,
                media,
                _ms(created_at),
                _KIND_FLAG[kind]
                + (1 if role == "user" else 2 if role == "assistant" else 0)
                + (64 if bad_c or bad_t or bad_n else 0),
            )
        )
        self._strs.extend(
            (
                sub,
                sub if kind == "context" else None,
                model if isinstance(model, str) else None,
                types,
                tools,
                text,
                content,
            )
        )
        self.n += 1

    def flush(self) -> None:
        """Move the values added since the last call to numpy (integers) and Arrow (text);
        bounds memory: call it every few thousand rows."""
        self._flush_ints()
        strs = self._strs
        if strs:
            for j, name in enumerate(_STR_COLS):
                self._chunks[name].append(_text_array(strs[j::_NS]))
            self._strs = []

    def warn(self, where: str, *, stacklevel: int = 4) -> None:
        """Warn about the rows with unreadable content or tokens, or a NULL role or
        ``created_at``, added since the last call."""
        for what, seqs in (
            ("unreadable content_json", self.bad_content),
            ("unreadable tokens", self.bad_tokens),
            ("a NULL role or created_at", self.bad_nulls),
        ):
            if seqs:
                shown = ", ".join(map(str, seqs[:10])) + (" ..." if len(seqs) > 10 else "")
                warnings.warn(
                    f"{where}: {len(seqs)} row(s) with {what} (seq {shown}); "
                    "kept and flagged in the 'malformed' column",
                    AdfWarning,
                    stacklevel=stacklevel,
                )
        self.bad_content, self.bad_tokens, self.bad_nulls = [], [], []

    def _flush_ints(self) -> None:
        if self._ints:
            ints = np.fromiter(self._ints, dtype=np.int64, count=len(self._ints))
            self._int_chunks.append(ints.reshape(-1, _NF))
            self._ints = []

    def seqs(self, start: int = 0, stop: int | None = None) -> list[int]:
        """The integer ``seq`` values of the rows at positions ``start:stop``."""
        vals: list[int] = self._field("seq")[start:stop].tolist()
        return [v for v in vals if v != _NA_MS]

    def _field(self, name: str) -> np.ndarray:
        """One integer field of every row added: a column of :data:`_FIELDS` (a strided
        view), a category's code (``role``, ``kind``, ``origin``), ``malformed`` (0 or 1) or
        ``audit_id``."""
        self._flush_ints()
        if len(self._int_chunks) != 1:  # one matrix, made when first needed
            self._int_chunks = [np.concatenate([np.zeros((0, _NF), np.int64), *self._int_chunks])]
        m = self._int_chunks[0]
        if name in _FIELD:
            return m[:, _FIELD[name]]
        if name in ("audit_id", "origin"):
            runs = np.array(self._runs, dtype=np.int64).reshape(-1, 3)
            return np.repeat(runs[:, 1 if name == "audit_id" else 2], runs[:, 0])
        flags = m[:, _FIELD["flags"]]
        if name == "role":
            return (flags & 3) - 1
        if name == "kind":
            return (flags >> 2) & 15
        return (flags >> 6) & 1  # malformed

    # -- columnar part ---------------------------------------------------------------------
    def int_array(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(values, mask)`` of an integer column over every row added (NA -> 0, masked)."""
        vals = self._field(name).copy()
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

    def frame(
        self,
        rows: np.ndarray | None = None,
        *,
        consume: bool = False,
        extra: Callable[[np.ndarray], dict[str, Any]] | None = None,
    ) -> pd.DataFrame:
        """Typed frame of the rows at positions ``rows`` (default: all, in display order).

        ``consume=True`` frees each text column's Arrow chunks as soon as it is copied out, so
        the peak stays near one copy of the data; the builder is unusable afterwards.
        ``extra``: more columns after the loop's, from the rows' seqs (int64, in the frame's
        order): made with the frame, not inserted into it afterwards (each insertion into a
        frame of this width costs as much as a small frame).
        """
        self.flush()
        if rows is None:
            key, seq = self.display_key()
            rows = np.lexsort((seq, key))
        rows = np.asarray(rows, dtype=np.int64)
        data: dict[str, Any] = {}
        idx = pa.array(rows)
        for name, dtype in LOOP.items():
            if name == "position":
                data[name] = pd.array(np.arange(len(rows)), dtype="Int64")
            elif dtype == "Int64":
                vals, mask = self.int_array(name) if name != "est_tokens" else self._est()
                data[name] = pd.arrays.IntegerArray(vals[rows], mask[rows])
            elif dtype == "category":
                codes = self._field(name)[rows].astype(np.int8)
                data[name] = pd.Categorical.from_codes(codes, dtype=_CATEGORY_DTYPES[name])
            elif dtype.startswith("datetime"):
                ms = self._field(name)[rows]
                data[name] = pd.array(ms.view("datetime64[ms]")).tz_localize("UTC")
            elif dtype == "bool":
                data[name] = self._field(name)[rows].astype(bool)
            else:
                chunks = self._chunks.pop(name) if consume else self._chunks[name]
                data[name] = pd.arrays.ArrowStringArray(_gather(chunks, rows, idx))
                del chunks
        if extra is not None:
            data.update(extra(self._field("seq")[rows]))
        return pd.DataFrame(data, copy=False)

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


def side_frame(
    rows: list[tuple[Any, ...]], columns: dict[str, str], *, iso: tuple[str, ...] = ()
) -> pd.DataFrame:
    """A typed frame of SQL rows (tuples in ``columns`` order) from a side table.

    Hostile files hold text, BLOBs, fractions or huge numbers anywhere, so every cell is
    cleaned first: integers that fit Int64 (and whole floats, numeric text), text (BLOBs decoded
    as UTF-8, invalid bytes replaced); datetime columns hold epoch milliseconds, or ISO text for
    the columns named in ``iso``; a category column comes out as text (the caller sets its
    categories).
    """
    for r in rows:
        if len(r) != len(columns):
            raise ValueError(f"a row of {len(r)} values for {len(columns)} columns")
    data = dict(zip(columns, map(list, zip(*rows, strict=True)), strict=True)) if rows else {}
    out: dict[str, Any] = {}
    for name, dtype in columns.items():
        vals = data.get(name, [])
        kinds = set(map(type, vals))
        if name in iso:
            s = pd.Series([side_text(v) for v in vals], dtype="object")
            out[name] = pd.to_datetime(s, utc=True, errors="coerce", format="ISO8601").astype(
                "datetime64[ms, UTC]"
            )
        elif dtype.startswith("datetime") or dtype in ("Int64", "boolean"):
            plain = _plain_ints(vals) if kinds <= {int, type(None)} else None
            if plain is None:  # anything but integers and NULLs: cleaned cell by cell
                s = pd.Series([side_int(v) for v in vals], dtype="object").astype("Int64")
                plain = s.to_numpy("int64", na_value=0), s.isna().to_numpy(bool)
            ints, na = plain
            if dtype == "Int64":
                out[name] = pd.Series(pd.arrays.IntegerArray(ints, na))
            elif dtype == "boolean":
                out[name] = pd.Series(pd.arrays.BooleanArray(ints != 0, na))
            else:
                ok = ~na & (ints > 0) & (ints < _MS_LIMIT)
                ms = np.where(ok, ints, _NA_MS).view("datetime64[ms]")
                out[name] = pd.Series(ms).dt.tz_localize("UTC")
        else:
            text_dtype = "string" if dtype == "category" else dtype
            if not kinds <= {str, type(None)}:
                vals = [side_text(v) for v in vals]
            out[name] = pd.Series(vals, dtype="object").astype(text_dtype)
    return pd.DataFrame(out, columns=list(columns))


def _plain_ints(vals: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(values, mask)`` of a column of ints and Nones, when every int fits Int64 (as
    :func:`side_int` keeps it); else None."""
    try:
        if None in vals:
            obj = np.array(vals, dtype=object)
            na = obj == None  # noqa: E711 - elementwise, in C
            ints = np.where(na, 0, obj).astype(np.int64)
        else:
            na = np.zeros(len(vals), dtype=bool)
            ints = np.array(vals, dtype=np.int64)
    except OverflowError:
        return None
    if (ints == _I64_MIN).any():  # side_int's range leaves out the lowest value
        return None
    return ints, na


def side_int(v: Any) -> int | None:
    """A side-table integer cell: ints that fit Int64 and whole floats; else NA."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v if _I64_MIN < v <= _I64_MAX else None
    if isinstance(v, float) and v.is_integer() and _I64_MIN < v < _I64_MAX:
        return int(v)
    if isinstance(v, str):
        try:
            return side_int(float(v)) if "." in v or "e" in v.lower() else side_int(int(v))
        except ValueError:
            return None
    return None


def side_ms(v: Any) -> int | None:
    """A side-table datetime cell as epoch milliseconds: an integer cell (:func:`side_int`)
    from 1 up to about the year 2262, else NA (the rule :func:`side_frame` applies to a whole
    column)."""
    ms = side_int(v)
    return ms if ms is not None and 0 < ms < _MS_LIMIT else None


def side_text(v: Any) -> str | None:
    """A side-table text cell: BLOBs decoded as UTF-8 (invalid bytes replaced)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, float) and v != v:
        return None
    return str(v)
