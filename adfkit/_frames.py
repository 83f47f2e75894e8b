"""Loop rows -> typed DataFrames. The single place where row records become frames.

Column set shared by ``AgentFile.loop()``, ``decode_audit()`` on a loop blob and
``AgentFile.history()`` (which adds ``epoch``): see :data:`LOOP_COLUMNS`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import orjson
import pandas as pd

from ._content import KINDS, MESSAGE_OVERHEAD, block_chars, classify, estimate_tokens
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
        out["total"] = int(val)
        return out, False
    if val is None:
        return out, False
    if not isinstance(val, dict):
        return out, True
    bad = False
    for k in TOKEN_KEYS:
        v = val.get(k)
        if isinstance(v, int | float) and not isinstance(v, bool):
            out[k] = int(v)
        elif v is not None:
            bad = True
    if out["input"] is not None or out["output"] is not None:
        out["total"] = (out["input"] or 0) + (out["output"] or 0)
    return out, bad


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


class RowBuilder:
    """Accumulates loop rows column by column, then makes one typed frame."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {c: [] for c in LOOP_COLUMNS if c != "position"}
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
        c = self.cols
        blocks, bad_c = parse_content(content)
        toks, bad_t = parse_tokens(tokens)
        if bad_c:
            self.bad_content.append(seq)
        if bad_t:
            self.bad_tokens.append(seq)
        kind, sub = classify(role if role in _ROLES else None, blocks)
        if bad_c and not blocks:
            kind = "unknown"
        text_parts: list[str] = []
        types: list[str] = []
        tools: list[str] = []
        chars = media = 0
        for b in blocks:
            t = b.get("type")
            types.append(str(t))
            if t == "text" and isinstance(b.get("text"), str):
                text_parts.append(b["text"])
            elif t == "tool_use":
                tools.append(str(b.get("name")))
            tc, mc = block_chars(b)
            chars += tc
            media += mc
        c["seq"].append(seq)
        c["ord"].append(ord_)
        c["role"].append(role)
        c["kind"].append(kind)
        c["subkind"].append(sub)
        c["context_category"].append(sub if kind == "context" else None)
        c["model"].append(model if isinstance(model, str) else None)
        c["created_at"].append(created_at if isinstance(created_at, int) and created_at else None)
        for k in TOKEN_KEYS:
            c[f"tokens_{k}"].append(toks[k])
        c["tokens_total"].append(toks["total"])
        c["n_blocks"].append(len(blocks))
        c["block_types"].append(",".join(types))
        c["tool_names"].append(",".join(tools))
        c["text"].append("\n".join(text_parts))
        c["chars"].append(chars)
        c["media_chars"].append(media)
        c["est_tokens"].append(estimate_tokens(chars + MESSAGE_OVERHEAD, media))
        if isinstance(content, str):
            c["content"].append(content)
        elif isinstance(content, bytes):
            c["content"].append(content.decode("utf-8", "replace"))
        else:
            c["content"].append(orjson.dumps(content).decode())
        c["origin"].append(origin)
        c["audit_id"].append(audit_id)
        c["malformed"].append(bad_c or bad_t)

    def warn(self, where: str) -> None:
        for what, seqs in (("content_json", self.bad_content), ("tokens", self.bad_tokens)):
            if seqs:
                shown = ", ".join(map(str, seqs[:10])) + (" ..." if len(seqs) > 10 else "")
                warnings.warn(
                    f"{where}: {len(seqs)} row(s) with unreadable {what} (seq {shown}); "
                    "kept and flagged in the 'malformed' column",
                    AdfWarning,
                    stacklevel=4,
                )

    def frame(self) -> pd.DataFrame:
        return loop_frame(self.cols)


def _int_col(values: list[Any]) -> pd.Series:
    return pd.array(
        [v if isinstance(v, int) and not isinstance(v, bool) else None for v in values],
        dtype="Int64",
    )


def loop_frame(cols: dict[str, list[Any]]) -> pd.DataFrame:
    """Typed frame from column lists, sorted by ``COALESCE(ord, seq), seq``."""
    n = len(cols["seq"])
    data: dict[str, Any] = {}
    for name, dtype in LOOP_COLUMNS.items():
        if name == "position":
            continue
        v = cols[name]
        if dtype == "Int64":
            data[name] = _int_col(v)
        elif dtype == "category":
            cats = {"role": _ROLES, "kind": KINDS, "origin": ("live", "audit")}[name]
            data[name] = pd.Categorical(v, categories=list(cats))
        elif dtype.startswith("datetime"):
            ms = (
                np.array([x if x is not None else np.iinfo(np.int64).min for x in v], dtype="int64")
                if n
                else np.array([], dtype="int64")
            )
            s = pd.Series(ms, dtype="int64")
            data[name] = pd.to_datetime(
                s.where(s != np.iinfo(np.int64).min), unit="ms", utc=True
            ).astype("datetime64[ms, UTC]")
        elif dtype == "bool":
            data[name] = np.array(v, dtype=bool)
        else:
            data[name] = pd.array(v, dtype="string")
    return sort_display(pd.DataFrame(data))


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
        if dtype == "ms":
            num = pd.to_numeric(s, errors="coerce")
            df[name] = pd.to_datetime(num.where(num > 0), unit="ms", utc=True).astype(
                "datetime64[ms, UTC]"
            )
        elif dtype == "iso":
            df[name] = pd.to_datetime(s, utc=True, errors="coerce", format="ISO8601").astype(
                "datetime64[ms, UTC]"
            )
        elif dtype == "Int64":
            df[name] = pd.to_numeric(s, errors="coerce").astype("Int64")
        elif dtype == "boolean":
            df[name] = pd.to_numeric(s, errors="coerce").astype("Int64").astype("boolean")
        else:
            df[name] = s.astype(dtype)
    return df
