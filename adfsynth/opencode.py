"""Seeded simulator of an OpenCode store, with ground truth.

Writes ``<out>/opencode/opencode.db`` as OpenCode 1.18 writes it (the ``session``, ``message``,
``part`` and ``project`` tables with their JSON ``data``, as in the store its 1.18.33 release
wrote in tests/fixtures/recorded/opencode) and ``opencode.truth.json`` beside it:

- a session of several turns (text, reasoning, ``bash``/``read``/``write``/``edit`` tool parts,
  a tool that failed, one left ``running``), one assistant message of two steps (two
  ``step-start``/``step-finish`` pairs, as earlier releases wrote), a ``task`` subagent (a child
  session, ``parent_id``), a manual compaction (``auto: false``) and an automatic one (each
  with ``tail_start_id``: the turn kept verbatim) followed by OpenCode's synthetic "Continue"
  message, an overflow compaction keeping nothing, and a prune (old tool outputs get
  ``state.time.compacted``);
- a second session with two turns and nothing else.

The truth is the simulator's own state, not a re-read: per session the model calls by kind,
their summed usage in adfkit's terms (``input`` = OpenCode's ``input + cache.read +
cache.write``, ``output`` = ``output + reasoning``), the tool calls by name, per compaction
its trigger, summary message, the rows it swept and kept (row keys: a message's id,
``<message id>:<step>`` for a step of a message of several, a tool result's part id) and the
tokens OpenCode's check compared before it, per prune the tool results it cleared, and at
every model call the rows OpenCode sends, in its order (the compaction's request and summary
first, then the kept tail, then what follows).
Independent of adfkit. Same seed, same bytes.

Run: ``python adfsynth/opencode.py OUT``
"""

from __future__ import annotations

import json
import random
import sqlite3
import string
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DDL = """
CREATE TABLE `project` (
  `id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `sandboxes` text NOT NULL
);
CREATE TABLE `message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL
);
CREATE TABLE `part` (
  `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL
);
CREATE TABLE `session` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL,
  `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL
);
CREATE TABLE `account` (
  `id` text PRIMARY KEY, `email` text NOT NULL, `access_token` text NOT NULL
);
"""
VERSION = "1.18.33"
PROVIDER, MODEL = "anthropic", "claude-sonnet-4-5"
SYSTEM_TOKENS = 3_000
SUMMARY = (
    "## Goal\nRefactor the parser module.\n\n## Progress\n- read src/parser.py\n"
    "- wrote tests/test_parser.py\n\n## Next\nRun the tests again."
)
WORDS = [
    "parser",
    "token",
    "module",
    "test",
    "build",
    "cache",
    "index",
    "stream",
    "config",
    "window",
    "read",
    "write",
]


def _est(chars: int) -> int:
    return -(-chars // 4)


@dataclass
class Store:
    """Ids and rows of the whole store (every session)."""

    rng: random.Random
    t: int
    n: int = 0
    sessions: list[dict[str, Any]] = field(default_factory=list)
    messages: list[tuple[str, str, int, dict[str, Any]]] = field(default_factory=list)
    parts: list[tuple[str, str, str, int, dict[str, Any]]] = field(default_factory=list)

    def id(self, prefix: str) -> str:
        """Ascending ids, as OpenCode's (time first, then random)."""
        self.n += 1
        tail = "".join(self.rng.choice(string.ascii_letters) for _ in range(14))
        return f"{prefix}_{self.n:012x}{tail}"

    def tick(self) -> int:
        self.t += self.rng.randint(30, 900)
        return self.t


@dataclass
class Sim:
    """One session: what it writes and what OpenCode sends at each call."""

    store: Store
    sid: str
    window: list[tuple[str, int]] = field(default_factory=list)  # (row key, est tokens)
    last_prompt: int = 0
    last_total: int | None = None
    calls: Counter[str] = field(default_factory=Counter)
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    tools: Counter[str] = field(default_factory=Counter)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    prunes: list[list[str]] = field(default_factory=list)
    windows: dict[str, list[str]] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)  # completed tool parts' data
    pruned: set[str] = field(default_factory=set)
    turn_start: str | None = None

    def words(self, n: int) -> str:
        return " ".join(self.store.rng.choice(WORDS) for _ in range(n))

    def _message(self, data: dict[str, Any]) -> tuple[str, int]:
        mid, t = self.store.id("msg"), self.store.tick()
        data["time"] = {"created": t, **({"completed": t + 5} if data["role"] != "user" else {})}
        self.store.messages.append((mid, self.sid, t, data))
        return mid, t

    def _part(self, mid: str, data: dict[str, Any]) -> str:
        pid = self.store.id("prt")
        self.store.parts.append((pid, mid, self.sid, self.store.tick(), data))
        return pid

    def user(self, text: str, *, synthetic: bool = False) -> str:
        mid, _ = self._message(
            {"role": "user", "agent": "build", "model": {"providerID": PROVIDER, "modelID": MODEL}}
        )
        part: dict[str, Any] = {"type": "text", "text": text}
        if synthetic:
            part |= {"synthetic": True, "metadata": {"compaction_continue": True}}
        self._part(mid, part)
        self.window.append((mid, _est(len(text)) + 4))
        if not synthetic:
            self.turn_start = mid
        return mid

    def _usage(self, kind: str, prompt: int, out: int, reasoning: int = 0) -> dict[str, Any]:
        read = min(self.last_prompt, prompt)
        t = {
            "total": prompt + out,
            "input": prompt - read,
            "output": out,
            "reasoning": reasoning,
            "cache": {"read": read, "write": 0},
        }
        self.calls[kind] += 1
        sums = self.tokens.setdefault(
            kind, {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0}
        )
        sums["input"] += prompt
        sums["output"] += out + reasoning  # adfkit's output: the provider's, reasoning in it
        sums["cache_read"] += read
        sums["reasoning"] += reasoning
        return t

    def _prompt(self) -> int:
        return SYSTEM_TOKENS + sum(n for _, n in self.window)

    def assistant(self, steps: list[dict[str, Any]], *, child: str | None = None) -> str:
        """One assistant message of ``steps`` (each: ``text``, ``reasoning``, ``tools`` as
        ``(name, input, output, status)``), each step a model call."""
        base = {
            "role": "assistant",
            "mode": "build",
            "agent": "build",
            "modelID": MODEL,
            "providerID": PROVIDER,
            "cost": 0,
            "finish": "tool-calls",
        }
        mid, _ = self._message(base)
        whole: dict[str, Any] = {
            "total": 0,
            "input": 0,
            "output": 0,
            "reasoning": 0,
            "cache": {"read": 0, "write": 0},
        }
        for i, step in enumerate(steps):
            key = mid if len(steps) == 1 else f"{mid}:{i + 1}"
            self.windows[key] = [k for k, _ in self.window]
            self._part(mid, {"type": "step-start", "snapshot": "0" * 40})
            chars = 0
            if step.get("reasoning"):
                self._part(mid, {"type": "reasoning", "text": step["reasoning"]})
            if step.get("text"):
                self._part(mid, {"type": "text", "text": step["text"]})
                chars += len(step["text"])
            results: list[tuple[str, int]] = []
            for name, inp, output, status in step.get("tools", []):
                state: dict[str, Any] = {
                    "status": status,
                    "input": inp,
                    "time": {"start": self.store.t},
                }
                if status == "completed":
                    state |= {"output": output, "title": name, "metadata": {}}
                    if name == "task" and child:
                        state["metadata"] = {"sessionId": child, "parentSessionId": self.sid}
                elif status == "error":
                    state["error"] = output
                call = f"call_{self.store.n:06d}"
                data = {"type": "tool", "tool": name, "callID": call, "state": state}
                pid = self._part(mid, data)
                if status == "completed":
                    self.results.append(data | {"_pid": pid})
                self.tools[name] += 1
                chars += len(name) + len(json.dumps(inp))
                results.append((pid, _est(len(output)) + 4))
            out = _est(chars) + 10
            r = _est(len(step.get("reasoning", "")))
            prompt = self._prompt()
            t = self._usage("turn", prompt, out, r)
            self._part(mid, {"type": "step-finish", "reason": "tool-calls", "tokens": t, "cost": 0})
            for k in ("total", "input", "output", "reasoning"):
                whole[k] += t[k]
            whole["cache"]["read"] += t["cache"]["read"]
            self.last_prompt, self.last_total = prompt, t["total"]
            self.window.append((key, out))
            self.window.extend(results)
        base["tokens"] = whole
        return mid

    def compact(self, *, auto: bool, overflow: bool = False) -> None:
        """A compaction: its request (keeping the current turn unless ``overflow``), its
        summary and call, the continue message after an automatic one."""
        tail = None if overflow else self.turn_start
        crow, _ = self._message(
            {"role": "user", "agent": "build", "model": {"providerID": PROVIDER, "modelID": MODEL}}
        )
        part: dict[str, Any] = {"type": "compaction", "auto": auto}
        if auto:
            part["overflow"] = overflow
        if tail:
            part["tail_start_id"] = tail
        self._part(crow, part)
        keys = [k for k, _ in self.window]
        start = keys.index(tail) if tail in keys else len(keys)
        swept, kept = self.window[:start], self.window[start:]
        srow, _ = self._message(
            {
                "role": "assistant",
                "parentID": crow,
                "mode": "compaction",
                "agent": "compaction",
                "summary": True,
                "modelID": MODEL,
                "providerID": PROVIDER,
                "cost": 0,
                "finish": "stop",
            }
        )
        self._part(srow, {"type": "step-start"})
        self._part(srow, {"type": "text", "text": SUMMARY})
        prompt = 400 + sum(n for _, n in swept)
        saved = self.last_prompt
        self.last_prompt = 0  # the compaction's request shares no prefix with the turns'
        t = self._usage("compaction", prompt, _est(len(SUMMARY)))
        self.last_prompt = saved
        self._part(srow, {"type": "step-finish", "reason": "stop", "tokens": t, "cost": 0})
        self.store.messages[-1][3]["tokens"] = t
        trigger = "overflow" if overflow else ("auto" if auto else "manual")
        self.compactions.append(
            {
                "trigger": trigger,
                "summary": srow,
                "swept": [k for k, _ in swept],
                "kept": [k for k, _ in kept],
                "pre_tokens": self.last_total,
            }
        )
        self.window = [(crow, 10), (srow, _est(len(SUMMARY))), *kept]
        if auto:
            self.user(
                "Continue if you have next steps, or stop and ask for clarification if you are "
                "unsure how to proceed.",
                synthetic=True,
            )

    def prune(self, n: int) -> None:
        """OpenCode's prune: the ``n`` oldest tool outputs not pruned yet get
        ``state.time.compacted`` (the outputs stay in the store)."""
        at = self.store.tick()
        cleared: list[str] = []
        for data in self.results:
            if len(cleared) == n:
                break
            if data["_pid"] in self.pruned:
                continue
            data["state"]["time"]["compacted"] = at
            self.pruned.add(data["_pid"])
            cleared.append(data["_pid"])
        self.prunes.append(cleared)

    def truth(self) -> dict[str, Any]:
        return {
            "session_id": self.sid,
            "calls": dict(self.calls),
            "tokens": self.tokens,
            "tool_calls": dict(self.tools),
            "compactions": self.compactions,
            "prunes": self.prunes,
            "windows": self.windows,
        }


def _tool(sim: Sim, name: str, status: str = "completed") -> tuple[str, dict[str, Any], str, str]:
    inputs = {
        "bash": {"command": "pytest -q " + sim.words(2)},
        "read": {"filePath": "/home/user/src/app/" + sim.words(1) + ".py"},
        "write": {"filePath": "/home/user/src/app/out.py", "content": sim.words(30)},
        "edit": {"filePath": "/home/user/src/app/parser.py", "oldString": "a", "newString": "b"},
        "task": {"description": "Check", "prompt": "check the tests", "subagent_type": "general"},
    }
    output = "ripgrep failed" if status == "error" else sim.words(sim.store.rng.randint(40, 400))
    return name, inputs[name], output, status


def _session(store: Store, title: str, parent: str | None = None) -> Sim:
    sid = store.id("ses")
    store.sessions.append(
        {
            "id": sid,
            "project_id": "global",
            "parent_id": parent,
            "slug": "quiet-river",
            "directory": "/home/user/src/app",
            "title": title,
            "version": VERSION,
            "time_created": store.t,
        }
    )
    return Sim(store, sid)


def _main(store: Store) -> tuple[Sim, Sim]:
    s = _session(store, "Refactor the parser")
    child = _session(store, "Check (@general subagent)", s.sid)
    s.user("task-m1: read the parser and plan the refactor")
    s.assistant([{"text": "Reading.", "tools": [_tool(s, "read"), _tool(s, "bash")]}])
    s.assistant([{"text": "Plan: " + s.words(80), "reasoning": s.words(20)}])
    s.user("task-m2: write the tests")
    s.assistant(
        [
            {"text": "Writing.", "tools": [_tool(s, "write")]},
            {"text": "And running them.", "tools": [_tool(s, "bash")]},
        ]
    )
    s.assistant([{"text": "Done."}])
    s.compact(auto=False)
    s.user("task-m3: get a helper to check, then edit")
    child.user("check the tests")
    child.assistant([{"text": "Checking.", "tools": [_tool(child, "bash")]}])
    child.assistant([{"text": "All pass."}])
    s.assistant([{"text": "Asking.", "tools": [_tool(s, "task")]}], child=child.sid)
    s.assistant([{"text": "Editing.", "tools": [_tool(s, "edit"), _tool(s, "read", "error")]}])
    s.prune(2)
    s.assistant([{"text": "Reading more.", "tools": [_tool(s, "read", "running")]}])
    s.compact(auto=True)
    s.assistant([{"text": "Continuing: " + s.words(40)}])
    s.user("task-m4: one more pass")
    s.assistant([{"text": "Passing.", "tools": [_tool(s, "read")]}])
    s.compact(auto=True, overflow=True)
    s.assistant([{"text": "Done after the overflow."}])
    return s, child


def _other(store: Store) -> Sim:
    s = _session(store, "List the files")
    s.user("task-o1: list the files")
    s.assistant([{"text": "Listing.", "tools": [_tool(s, "bash")]}])
    s.assistant([{"text": "Listed."}])
    return s


def _write(path: Path, store: Store) -> None:
    con = sqlite3.connect(path)
    try:
        con.executescript(DDL)
        con.execute(
            "INSERT INTO project VALUES ('global', '/home/user/src/app', 'git', NULL, 1, 1, '[]')"
        )
        con.execute("INSERT INTO account VALUES ('acc', 'a@example.com', 'not-a-real-token')")
        for s in store.sessions:
            t = s["time_created"]
            con.execute(
                "INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
                (*(s[k] for k in ("id", "project_id", "parent_id", "slug")),)
                + (s["directory"], s["title"], s["version"], t, t + 1),
            )
        for mid, sid, t, data in store.messages:
            con.execute(
                "INSERT INTO message VALUES (?,?,?,?,?)", (mid, sid, t, t, json.dumps(data))
            )
        for pid, mid, sid, t, data in store.parts:
            clean = {k: v for k, v in data.items() if k != "_pid"}
            con.execute(
                "INSERT INTO part VALUES (?,?,?,?,?,?)", (pid, mid, sid, t, t, json.dumps(clean))
            )
        con.commit()
    finally:
        con.close()


def write_samples(out: str | Path) -> list[Path]:
    """Write ``<out>/opencode/opencode.db`` and ``opencode.truth.json``; return the store."""
    root = Path(out) / "opencode"
    root.mkdir(parents=True, exist_ok=True)
    store = Store(random.Random(3401), 1_790_000_000_000)
    main, child = _main(store)
    other = _other(store)
    path = root / "opencode.db"
    path.unlink(missing_ok=True)
    _write(path, store)
    truth = {
        "store": path.name,
        "sessions": {s.sid: s.truth() for s in (main, child, other)},
        "top": [main.sid, other.sid],
        "children": {main.sid: [child.sid]},
    }
    (root / "opencode.truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    return [path]


if __name__ == "__main__":
    for p in write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"):
        print(p)
