"""A hand-built Claude Code session that grows as a running one does: calls appended, then a
compaction (tests/test_what_users_see.py, tests/test_live_view.py, tests/test_browser.py)."""

from __future__ import annotations

import json


def call(n: int, prompt: int, parent: str) -> list[dict]:
    """Call ``n`` of a hand-built Claude Code session: a user record, then the assistant's."""
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": prompt - 110,
        "output_tokens": 50,
    }
    env = {"isSidechain": False, "sessionId": "w", "version": "2.1.90", "cwd": "/home/u/p"}
    stamp = f"2026-03-01T10:{n // 3600 % 60:02d}:{n % 60:02d}.000Z"
    user = {**env, "type": "user", "uuid": f"u{n}", "parentUuid": parent, "timestamp": stamp}
    user["message"] = {"role": "user", "content": f"step {n}: " + "pad " * 60}
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant"}
    message |= {"model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "ok"}]}
    message |= {"usage": usage, "stop_reason": "end_turn"}
    asst = {**env, "type": "assistant", "uuid": f"a{n}", "parentUuid": f"u{n}", "timestamp": stamp}
    asst["message"] = message
    return [user, asst]


def lines(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def session(first: int, last: int, parent: str = "") -> bytes:
    recs = []
    for n in range(first, last):
        recs += call(n, 20_000 + n % 5_000, parent or f"a{n - 1}")
        parent = ""
    return lines(recs)


def boundary(uuid: str, pre: int, post: int, when: str = "2026-03-01T11:00:00.000Z") -> bytes:
    """The line of an automatic compaction's ``compact_boundary`` record."""
    rec = {"type": "system", "subtype": "compact_boundary", "uuid": uuid, "sessionId": "w"}
    rec |= {"timestamp": when, "parentUuid": None}
    rec["compactMetadata"] = {"trigger": "auto", "preTokens": pre, "postTokens": post}
    return json.dumps(rec).encode() + b"\n"
