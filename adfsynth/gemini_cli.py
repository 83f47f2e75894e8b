"""Seeded simulator of Gemini CLI chats, with ground truth.

Writes ``<out>/gemini-cli/tmp/<project>/chats/session-<minute>-<id8>.jsonl`` as Gemini CLI 0.61
writes it (chatRecordingService.ts; the layout of the recorded 0.61.0 files in
tests/fixtures/recorded/gemini-cli), with ``<name>.truth.json`` beside it:

- the session header, then per process a ``{"$set": {"messages": [...]}}`` of the list it
  holds (the session context message first, under a fixed id); prompts, replies written
  twice (first with their tokens, then again with their ``toolCalls``), tool results as user
  records of ``functionResponse`` parts (ids ``<tool>__<id>``), ``$set`` ``lastUpdated``
  lines, an ``info`` record;
- a resume (``$set sessionId``, then the list with each earlier reply's tool results
  repeated under the reply's id, as 0.61 sends them) and the resume's stub file (a header
  and the session context only);
- two compressions in the middle of a turn (a reply with a tool call, then the list replaced
  by: the context, a ``<state_snapshot>`` summary, the model's "Got it", copies of the turn's
  prompt and reply under new ids) and one between turns; a ``$rewindTo`` dropping a prompt
  and its reply.

The truth is the simulator's own state, not a re-read: every message that became part of
the conversation (in file order: line, role, key), the abandoned ones, the calls and the sum
of their tokens, the tool calls by name, per compression its line, trigger (``auto`` mid-turn,
None between turns), the keys it swept and kept, and the window (keys in order) each call was
sent. A message's key is its texts, or its tool call or result ids (as sent: the ``<tool>__``
prefix off). Independent of adfkit. Same seed, same bytes.

Run: ``python adfsynth/gemini_cli.py sample_agents/``
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import uuid as uuidlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MODEL = "gemini-2.5-flash"
SYSTEM_TOKENS = 9_000  # Gemini CLI's system instruction and tool declarations, every prompt
TOOLS = ("read_file", "run_shell_command", "grep_search", "write_file")
WORDS = ["chat", "record", "patch", "list", "window", "token", "snapshot", "tool", "turn", "file"]
ACK = "Got it. Thanks for the additional context!"


def _iso(ms: int) -> str:
    d = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def key(msg: dict[str, Any]) -> str:
    """``role:texts`` or ``role:ids`` of a message (a reply's tool calls after its text)."""
    role = "assistant" if msg["type"] == "gemini" else "user"
    out = []
    for p in msg["content"]:
        if "text" in p:
            out.append(p["text"])
        for k in ("functionCall", "functionResponse"):
            if k in p:
                out.append(p[k]["id"].split("__", 1)[-1])
    return role + ":" + "|".join(out)


@dataclass
class Chat:
    """A chat being written: its lines, the list Gemini CLI holds, and the truth."""

    rng: random.Random
    t: int
    sid: str = ""
    lines: list[str] = field(default_factory=list)
    window: list[dict[str, Any]] = field(default_factory=list)
    rows: list[tuple[int, str, str]] = field(default_factory=list)  # (line, role, key)
    abandoned: list[str] = field(default_factory=list)
    calls: list[dict[str, int]] = field(default_factory=list)
    contexts: list[list[str]] = field(default_factory=list)
    tools: Counter[str] = field(default_factory=Counter)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    abandoned_calls: list[int] = field(default_factory=list)
    n_call_ids: int = 0
    ctx_text: str = ""

    def write(self, rec: dict[str, Any]) -> int:
        self.lines.append(json.dumps(rec))
        return len(self.lines)

    def tick(self) -> str:
        self.t += self.rng.randint(50, 3000)
        return _iso(self.t)

    def msg(self, t: str, parts: list[dict[str, Any]], mid: str | None = None) -> dict[str, Any]:
        mid = mid or str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))
        return {"id": mid, "timestamp": self.tick(), "type": t, "content": parts}

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def add(self, m: dict[str, Any], line: int) -> None:
        self.window.append(m)
        self.rows.append((line, key(m)[: key(m).index(":")], key(m)))

    def updated(self) -> None:
        self.write({"$set": {"lastUpdated": _iso(self.t)}})

    # -- what Gemini CLI writes ----------------------------------------------------------
    def header(self) -> None:
        self.sid = str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))
        h = hashlib.sha256(b"/home/user/proj/synth").hexdigest()
        self.write(
            {
                "sessionId": self.sid,
                "projectHash": h,
                "startTime": _iso(self.t),
                "lastUpdated": _iso(self.t),
                "kind": "main",
            }
        )

    def process_start(self, resumed: bool) -> None:
        """A process's first ``$set``: the context message (regenerated, same id), and on a
        resume each earlier reply's tool results once more after the reply (0.61)."""
        self.ctx_text = f"<session_context>\nfiles: {self.words(6 + len(self.lines) % 5)}\n"
        ctx = self.msg("user", [{"text": self.ctx_text}], "c0ffee" * 5 + "ab")
        if resumed:
            self.write({"$set": {"sessionId": self.sid}})
        new: list[dict[str, Any]] = [ctx]
        dup_at: list[int] = []
        for m in self.window[1:] if self.window else []:
            new.append(m)
            if resumed and m["type"] == "gemini" and any("functionCall" in p for p in m["content"]):
                results = [
                    {"functionResponse": {**p["functionCall"], "response": {"output": "ok"}}}
                    for p in m["content"]
                    if "functionCall" in p
                ]
                for r in results:
                    r["functionResponse"].pop("args")
                new.append({**m, "type": "user", "content": results})
                dup_at.append(len(new) - 1)
        line = self.write({"$set": {"messages": new, "lastUpdated": _iso(self.t)}})
        if not self.window:
            self.add(ctx, line)
        else:  # rewritten under its id: the row holds the last version
            self.rows[0] = (self.rows[0][0], "user", key(ctx))
        for i in dup_at:
            self.rows.append((line, "user", key(new[i])))
        self.window = new

    def prompt(self, text: str) -> None:
        m = self.msg("user", [{"text": text}])
        self.add(m, self.write(m))
        self.updated()

    def reply(self, text: str, n_tools: int) -> list[dict[str, Any]]:
        """One call: its reply written with its tokens, then again with its tool calls."""
        chars = sum(len(json.dumps(m["content"])) for m in self.window)
        prompt = SYSTEM_TOKENS + chars // 4
        cached = (self.calls[-1]["input"] // 1024 * 1024) if self.calls else 0
        out = len(text) // 4 + 10 * n_tools + 5
        tokens = {"input": prompt, "output": out, "cached": min(cached, prompt)}
        tokens |= {"thoughts": 0, "tool": 0, "total": prompt + out}
        self.calls.append({"input": prompt, "output": out, "cache_read": tokens["cached"]})
        self.contexts.append([key(m) for m in self.window])
        m = self.msg("gemini", [{"text": text}])
        rec = {
            "id": m["id"],
            "timestamp": m["timestamp"],
            "type": "gemini",
            "content": text,
            "thoughts": [],
            "tokens": tokens,
            "model": MODEL,
        }
        line = self.write(rec)
        self.updated()
        calls = []
        for _ in range(n_tools):
            self.n_call_ids += 1
            name = self.rng.choice(TOOLS)
            self.tools[name] += 1
            cid = f"{name}__call_{self.n_call_ids:04d}"
            calls.append({"id": cid, "name": name, "args": {"path": f"src/{self.words(1)}.py"}})
            m["content"].append(
                {"functionCall": {"id": cid, "name": name, "args": calls[-1]["args"]}}
            )
        if calls:
            tcs = [{**c, "status": "success", "timestamp": m["timestamp"]} for c in calls]
            self.write({**rec, "toolCalls": tcs})
        self.add(m, line)
        return calls

    def results(self, calls: list[dict[str, Any]]) -> None:
        parts = [
            {
                "functionResponse": {
                    "id": c["id"],
                    "name": c["name"],
                    "response": {"output": self.words(self.rng.randint(20, 120))},
                }
            }
            for c in calls
        ]
        m = self.msg("user", parts)
        self.add(m, self.write(m))
        self.updated()

    def turn(self, steps: int) -> None:
        self.prompt(f"please {self.words(6)}")
        for _ in range(steps):
            self.results(self.reply(self.words(self.rng.randint(10, 60)), self.rng.randint(1, 2)))
        self.reply(f"done: {self.words(5)}", 0)

    def compress(self, mid_turn: bool) -> None:
        """The list replaced: context, summary, "Got it", then (mid-turn) copies of the turn's
        prompt and of its reply with the pending tool call, under new ids."""
        tail: list[dict[str, Any]] = []
        if mid_turn:
            self.prompt(f"please {self.words(6)}")
            calls = self.reply(self.words(8), 1)
            tail = [
                {**self.window[-2], "id": self.msg("user", [])["id"]},
                {**self.window[-1], "id": self.msg("gemini", [])["id"]},
            ]
        summary = self.msg(
            "user", [{"text": f"<state_snapshot>\n{self.words(30)}\n</state_snapshot>"}]
        )
        ack = self.msg("gemini", [{"text": ACK}])
        ctx = self.window[0]
        new = [ctx, summary, ack, *tail]
        keys = [key(m) for m in self.window]
        kept = [key(ctx), *(key(m) for m in tail)]
        swept = list(keys)
        for k in kept:
            swept.remove(k)
        line = self.write({"$set": {"messages": new, "lastUpdated": _iso(self.t)}})
        self.rows += [(line, "user", key(summary)), (line, "assistant", key(ack))]
        self.compactions.append(
            {
                "line": line,
                "trigger": "auto" if mid_turn else None,
                "swept": swept,
                "kept": kept,
                "summary": summary["content"][0]["text"],
            }
        )
        self.window = new
        if mid_turn:
            self.results(calls)
            self.reply(f"done: {self.words(5)}", 0)

    def rewind(self) -> None:
        """A prompt and its reply, then ``$rewindTo`` the prompt."""
        self.prompt(f"please {self.words(6)}")
        self.reply(self.words(12), 0)
        gone = self.window[-2:]
        self.write({"$rewindTo": gone[0]["id"]})
        self.window = self.window[:-2]
        self.abandoned += [key(m) for m in gone]
        self.rows = self.rows[:-2]
        self.abandoned_calls.append(len(self.calls) - 1)

    def info(self) -> None:
        self.write(self.msg("info", [{"text": "Request cancelled."}]))

    def truth(self, name: str) -> dict[str, Any]:
        usage = {k: sum(c[k] for c in self.calls) for k in ("input", "output", "cache_read")}
        return {
            "file": name,
            "session_id": self.sid,
            "rows": [list(r) for r in self.rows],
            "abandoned": self.abandoned,
            "abandoned_calls": self.abandoned_calls,
            "n_calls": len(self.calls),
            "usage": usage,
            "tool_calls": dict(self.tools),
            "compactions": self.compactions,
            "contexts": self.contexts,
        }


def write_samples(out: str | Path, seed: int = 6104) -> list[Path]:
    """Write the Gemini CLI sample under ``<out>/gemini-cli``; return its main file."""
    rng = random.Random(seed)
    c = Chat(rng, 1780000000000)
    c.header()
    c.process_start(resumed=False)
    c.turn(2)
    c.turn(1)
    c.info()
    start = c.t
    c.process_start(resumed=True)  # --resume latest
    c.turn(2)
    c.compress(mid_turn=True)
    c.turn(1)
    c.rewind()
    c.compress(mid_turn=False)
    c.turn(2)
    c.compress(mid_turn=True)
    chats = Path(out) / "gemini-cli" / "tmp" / "synth" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    first = chats / f"session-{_iso(1780000000000)[:16].replace(':', '-')}-{c.sid[:8]}.jsonl"
    first.write_text("\n".join(c.lines) + "\n", encoding="utf-8")
    stub = chats / f"session-{_iso(start)[:16].replace(':', '-')}-{c.sid[:8]}.jsonl"
    if stub == first:
        stub = chats / f"session-{_iso(start + 60_000)[:16].replace(':', '-')}-{c.sid[:8]}.jsonl"
    header = json.loads(c.lines[0]) | {"startTime": _iso(start + 60_000)}
    ctx = {"$set": {"messages": [c.window[0]]}}
    stub.write_text(json.dumps(header) + "\n" + json.dumps(ctx) + "\n", encoding="utf-8")
    (chats / (first.name[: -len(".jsonl")] + ".truth.json")).write_text(
        json.dumps(c.truth(first.name), indent=1) + "\n", encoding="utf-8"
    )
    return [first]


if __name__ == "__main__":
    for p in write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"):
        print(p)
