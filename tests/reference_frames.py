"""Frozen copy of adfkit's original dict-per-row loop/history path (before the fast path).

Kept only as the reference that ``tests/test_fastpath.py`` compares the fast path against: same
columns, dtypes, values and order on every sample agent, real fixture and hand-built edge case.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import numpy as np
import orjson
import pandas as pd

from adfkit import _audit, _history
from adfkit._content import KINDS, MESSAGE_OVERHEAD, block_chars, classify, estimate_tokens
from adfkit._errors import AdfWarning, BlobError
from adfkit._frames import LOOP_COLUMNS, TOKEN_KEYS, parse_content, parse_tokens

_ROLES = ("user", "assistant")


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


def merge_history(live: pd.DataFrame, audited: list[pd.DataFrame]) -> pd.DataFrame:
    """One row per seq. A seq in several blobs keeps the oldest blob's copy (lowest audit id),
    then the live copy when no blob has it (ADF_FORMAT.md §4.4). ``copies`` counts them all."""
    parts = [f.drop(columns="position") for f in audited if len(f)]
    if not parts:
        df = live.copy()
        df["copies"] = pd.array(np.ones(len(df), dtype="int64"), dtype="Int64")
        return df
    allrows = pd.concat([*parts, live.drop(columns="position")], ignore_index=True)
    # Audit copies first, by audit id; live last.
    rank = allrows["audit_id"].fillna(np.iinfo(np.int64).max).to_numpy(dtype="int64")
    order = np.lexsort((rank, allrows["seq"].to_numpy(dtype="int64")))
    allrows = allrows.iloc[order]
    copies = allrows.groupby("seq", sort=False).size()
    df = sort_display(allrows.drop_duplicates("seq", keep="first"))
    df["copies"] = pd.array(copies.reindex(df["seq"].to_numpy()).to_numpy(), dtype="Int64")
    return df


def reference_loop(agent: Any) -> pd.DataFrame:
    """``AgentFile.loop()`` the original way."""
    b = RowBuilder()
    if agent._src.has("adf_loop"):
        cols = agent._cols(
            "adf_loop", ["seq", "ord", "role", "content_json", "model", "tokens", "created_at"]
        )
        sql = f"SELECT {', '.join(cols)} FROM adf_loop"
        for seq, ord_, role, content, model, tokens, created in agent._src.cursor(
            sql, table="adf_loop"
        ):
            b.add(seq, ord_, role, content, model, tokens, created, "live", None)
    return b.frame()


def reference_blob(agent: Any, audit_id: int) -> pd.DataFrame:
    """``AgentFile.decode_audit(id)`` of a loop blob, the original way."""
    _, data = agent._blob(audit_id)
    value = _audit.decode(
        data, "loop", limit=agent.max_blob_bytes, path=agent.path, audit_id=audit_id
    )
    b = RowBuilder()
    for el in value:
        b.add(
            el.get("seq"),
            el.get("ord"),
            el.get("role"),
            el.get("content_json"),
            el.get("model"),
            el.get("tokens"),
            el.get("created_at"),
            "audit",
            audit_id,
        )
    return b.frame()


def reference_history(agent: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(history(), events())`` the original way (undecodable blobs skipped)."""
    frames = []
    for aid in agent._loop_audit_ids():
        with contextlib.suppress(BlobError):
            frames.append(reference_blob(agent, aid))
    h = merge_history(reference_loop(agent), frames)
    a = agent.audit()
    times = {
        int(i): int(t.value // 1_000_000) if not pd.isna(t) else 0
        for i, t in zip(a["id"], a["created_at"], strict=True)
    }
    blob_seqs = {
        int(f["audit_id"].iloc[0]): f["seq"].astype("int64").tolist() for f in frames if len(f)
    }
    loop_ids = agent._loop_audit_ids()
    for aid, lo, hi in zip(a["id"], a["start_seq"], a["end_seq"], strict=True):
        if int(aid) in loop_ids and int(aid) not in blob_seqs:
            blob_seqs[int(aid)] = [int(x) for x in (lo, hi) if not pd.isna(x)]
    ev = _history.events(h, blob_seqs, times)
    return _history.add_epochs(h, ev), ev
