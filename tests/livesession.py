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


# pi: a session file whose entries are a chain (version 3) --------------------------------------
PI_SID = "5e551011-0000-4000-8000-0000000000d1"


def _stamp(n: int) -> str:
    return f"2026-03-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def pi_header() -> bytes:
    rec = {"type": "session", "version": 3, "id": PI_SID, "timestamp": _stamp(0), "cwd": "/w"}
    return json.dumps(rec).encode() + b"\n"


def pi_session(first: int, last: int, parent: str = "") -> bytes:
    """Calls ``first``..``last - 1`` of a pi session: a user message, then the reply (prompt
    ``20,000 + n % 5,000`` tokens, 30 of them uncached, 100 written to the cache); the first
    entry's parent is ``parent`` when given (a compaction's id), else the call before."""
    recs = []
    for n in range(first, last):
        prompt = 20_000 + n % 5_000
        user = {"role": "user", "content": [{"type": "text", "text": f"step {n}: " + "pad " * 60}]}
        usage = {"input": 30, "output": 50, "cacheRead": prompt - 130, "cacheWrite": 100}
        reply = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
        reply |= {"provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage}
        reply |= {"stopReason": "stop"}
        above = parent or (f"a{n - 1}" if n else None)
        parent = ""
        for kind, key, msg in (("u", above, user), ("a", f"u{n}", reply)):
            recs.append(
                {"type": "message", "id": f"{kind}{n}", "parentId": key, "timestamp": _stamp(n)}
                | {"message": msg}
            )
    return lines(recs)


def pi_compaction(after: int, before_tokens: int) -> bytes:
    """A compaction entry after call ``after - 1`` (its id ``c<after>``), keeping that call's
    user message."""
    rec = {"type": "compaction", "id": f"c{after}", "parentId": f"a{after - 1}"}
    rec |= {"timestamp": _stamp(after), "summary": "## Goal\nfix the parser"}
    rec |= {"firstKeptEntryId": f"u{after - 1}", "tokensBefore": before_tokens}
    return json.dumps(rec).encode() + b"\n"


# Copilot CLI: a session folder's events.jsonl ---------------------------------------------------
COPILOT_SID = "5e551011-0000-4000-8000-0000000000c0"


def _event(kind: str, n: int, data: dict) -> dict:
    return {"type": kind, "data": data, "id": f"{kind}-{n}", "timestamp": _stamp(n)}


def copilot_start() -> bytes:
    data = {"sessionId": COPILOT_SID, "version": 1, "producer": "copilot-agent"}
    data |= {"copilotVersion": "1.0.102", "selectedModel": "claude-sonnet-4.5"}
    return lines([_event("session.start", 0, data) | {"parentId": None}])


def copilot_session(first: int, last: int) -> bytes:
    """Calls ``first``..``last - 1``: a user message, the call's usage record, the reply."""
    recs = []
    for n in range(first, last):
        usage = {"apiCallId": f"c{n}", "inputTokens": 20_000 + n % 5_000, "outputTokens": 50}
        usage |= {"cacheReadTokens": 19_000, "cacheWriteTokens": 100, "model": "claude-sonnet-4.5"}
        reply = {"messageId": f"m{n}", "content": "ok", "model": "claude-sonnet-4.5"}
        reply |= {"outputTokens": 50, "apiCallId": f"c{n}"}
        recs += [
            _event("user.message", n, {"content": f"step {n}: " + "pad " * 60}),
            _event("session.usage_record", n, {"usage": usage}),
            _event("assistant.message", n, reply),
        ]
    return lines(recs)


def copilot_compaction(n: int, pre: int, post: int, window: int = 128_000) -> bytes:
    """An automatic compaction, applied: its start, then its completion."""
    start = {"trigger": "threshold", "tokenLimit": window}
    done = {"success": True, "outcome": "applied", "trigger": "threshold"}
    done |= {"preCompactionTokens": pre, "postCompactionTokens": post, "tokenLimit": window}
    done |= {"summaryContent": "<overview>fix the parser</overview>"}
    return lines(
        [
            _event("session.compaction_start", n, start),
            _event("session.compaction_complete", n, done),
        ]
    )
