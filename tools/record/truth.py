"""Figures from a request log alone: what the agent really sent and was answered.

``from_log(path)`` gives ``calls`` (model calls by kind: ``turn``, ``compaction``, ``side``),
``compactions`` (by trigger: ``manual`` when the driver's phase said so, else ``auto``),
``unanswered`` (calls whose client hung up before their held answer: not counted),
``tool_calls`` and ``tool_calls_by_name`` (the tool uses the server answered), ``tokens``
(the usage the server reported, summed by kind) and ``per_call``: for every model call, in
order, its kind, phase, model, usage and the messages it was sent as a signature (role and
blocks: a text's sha256 prefix (times and ids in it neutralised) and length, a tool use's id
and name, a tool result's id)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

MODEL_KINDS = ("turn", "compaction", "side")


def read_log(path: Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def model_calls(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model calls the agent was answered (a call whose client hung up before its held
    answer was sent is not one: no usage reached the agent)."""
    gone = {line["of"] for line in lines if line["kind"] == "hangup"}
    return [line for line in lines if line["kind"] in MODEL_KINDS and line["n"] not in gone]


def unanswered(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls whose client hung up before the held answer was sent."""
    gone = {line["of"] for line in lines if line["kind"] == "hangup"}
    return [
        {"n": line["n"], "kind": line["kind"], "phase": line["phase"]}
        for line in lines
        if line["kind"] in MODEL_KINDS and line["n"] in gone
    ]


def from_log(path: Path) -> dict[str, Any]:
    lines = read_log(path)
    calls = model_calls(lines)
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
        "unanswered": unanswered(lines),
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


#: Times and ids an agent writes into what it sends (Copilot's ``<current_datetime>``): the
#: hash of a text is of the text with these neutralised, so a re-recording gives the same one.
_VOLATILE = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def _block(b: dict[str, Any]) -> list[Any]:
    kind = b["type"]
    if kind in ("text", "thinking"):
        text = b.get("text", "")
        neutral = _VOLATILE.sub("<v>", text)
        return [kind, hashlib.sha256(neutral.encode()).hexdigest()[:12], len(text)]
    if kind == "tool_use":
        return [kind, b["id"], b["name"]]
    if kind == "tool_result":
        return [kind, b["tool_use_id"]]
    return [kind]
