"""Figures from a request log alone: what the agent really sent and was answered.

``from_log(path)`` gives ``calls`` (model calls by kind: ``turn``, ``compaction``, ``side``),
``compactions`` (by trigger: ``manual`` when the driver's phase said so, else ``auto``),
``tool_calls`` and ``tool_calls_by_name`` (the tool uses the server answered), ``tokens``
(the usage the server reported, summed by kind) and ``per_call``: for every model call, in
order, its kind, phase, model, usage and the messages it was sent as a signature (role and
blocks: a text's sha256 prefix and length, a tool use's id and name, a tool result's id)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

MODEL_KINDS = ("turn", "compaction", "side")


def read_log(path: Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def model_calls(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["kind"] in MODEL_KINDS]


def from_log(path: Path) -> dict[str, Any]:
    calls = model_calls(read_log(path))
    uses = [u for c in calls for u in c["answer"]["tool_uses"]]
    tokens: dict[str, dict[str, int]] = {}
    for c in calls:
        sums = tokens.setdefault(c["kind"], {"input": 0, "cache_read": 0, "output": 0})
        for key in sums:
            sums[key] += c["answer"]["usage"][key]
    return {
        "calls": dict(Counter(c["kind"] for c in calls)),
        "compactions": dict(Counter(trigger(c) for c in calls if c["kind"] == "compaction")),
        "tool_calls": len(uses),
        "tool_calls_by_name": dict(Counter(u["name"] for u in uses)),
        "tokens": tokens,
        "per_call": [
            {
                "n": c["n"],
                "kind": c["kind"],
                "phase": c["phase"],
                "model": c["call"]["model"],
                "usage": c["answer"]["usage"],
                "tool_uses": [u["id"] for u in c["answer"]["tool_uses"]],
                "messages": signature(c["call"]["messages"]),
            }
            for c in calls
        ],
    }


def trigger(call: dict[str, Any]) -> str:
    return "manual" if call["phase"].startswith("manual") else "auto"


def signature(messages: list[dict[str, Any]]) -> list[list[Any]]:
    return [[m["role"], *(_block(b) for b in m["content"])] for m in messages]


def _block(b: dict[str, Any]) -> list[Any]:
    kind = b["type"]
    if kind in ("text", "thinking"):
        text = b.get("text", "")
        return [kind, hashlib.sha256(text.encode()).hexdigest()[:12], len(text)]
    if kind == "tool_use":
        return [kind, b["id"], b["name"]]
    if kind == "tool_result":
        return [kind, b["tool_use_id"]]
    return [kind]
