"""Seeded simulator of pi coding agent sessions, with ground truth.

Writes ``<out>/pi/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`` files as pi writes them
(pi-mono ``packages/coding-agent/src/core/session-manager.ts``), each with
``<name>.truth.json`` beside it:

- ``tree.jsonl``-style sessions (header ``version: 3``, entries with ``id``/``parentId``):
  several turns of user / assistant (``toolCall`` blocks) / ``toolResult`` messages, model and
  thinking-level changes, two automatic compactions and a manual one (``firstKeptEntryId``
  chosen by pi's cut rule: walk back from the newest entry summing ``chars / 4`` until the
  keep budget, cut at the next user or assistant message), a branch the user leaves through
  ``/tree`` with a ``branch_summary``, a ``bashExecution`` the user ran, a ``session_info``
  name and a ``label``; the last line half-written (a session still running).
- the same kind of session in the legacy v1 layout (no ``version``, no ids, the compaction's
  ``firstKeptEntryIndex`` = the index among the file's lines, header 0), as real older files.

The truth is the simulator's own state, not a re-read: the conversation's rows (line of each
entry in conversation order, roles, kind hints), rows of the abandoned branch, the sum of
every reply's usage (adfkit's ``input`` = pi's ``input + cacheRead + cacheWrite``), and per
compaction its line, ``tokensBefore``, the lines it swept and kept, the prompt size of the
last call before and the first after. Independent of adfkit. Same seed, same bytes.

Run: ``python adfsynth/pi.py sample_agents/``
"""

from __future__ import annotations

import json
import random
import sys
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

WORDS = [
    "session",
    "entry",
    "tree",
    "branch",
    "leaf",
    "compact",
    "summary",
    "token",
    "window",
    "budget",
    "read",
    "edit",
    "write",
    "bash",
    "test",
    "build",
    "module",
    "parser",
    "config",
    "cache",
    "index",
    "stream",
]
SYSTEM_TOKENS = 4_200  # pi's system prompt + tool definitions, counted in every prompt
KEEP_RECENT = 1_500  # the synthetic sessions' keepRecentTokens (pi's default is 20,000)


def _iso(ms: int) -> str:
    d = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _est(chars: int) -> int:
    return -(-chars // 4)  # pi's estimateTokens: ceil(chars / 4)


@dataclass
class _E:
    """One entry written: its line, id, its row's role and hint (None: no row), est. tokens."""

    line: int
    id: str | None
    type: str
    role: str | None = None
    hint: str | None = None
    tokens: int = 0
    cut_ok: bool = False  # a valid cut point (user or assistant message)
    index: int = 0  # position among the file's lines, header 0 (v1 firstKeptEntryIndex)


@dataclass
class Session:
    rng: random.Random
    cwd: str
    t: int
    model: str = "claude-sonnet-4-5"
    layout: str = "v3"
    lines: list[str] = field(default_factory=list)
    path: list[_E] = field(default_factory=list)  # the active path, entries in order
    window: list[_E] = field(default_factory=list)  # entries whose rows the model sees now
    branch_rows: list[_E] = field(default_factory=list)
    leaf: str | None = None
    ids: set[str] = field(default_factory=set)
    usage: dict[str, int] = field(
        default_factory=lambda: {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    )
    n_calls: int = 0
    last_prompt: int = 0
    last_context: int = 0
    last_input: int | None = None
    compactions: list[dict[str, Any]] = field(default_factory=list)
    #: reply line -> the lines of the rows the model was sent for it (its context)
    contexts: dict[int, list[int]] = field(default_factory=dict)
    awaiting: list[dict[str, Any]] = field(default_factory=list)
    seen_compaction: _E | None = None

    def __post_init__(self) -> None:
        self.sid = str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))
        self.t0 = self.t

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def _id(self) -> str:
        while True:
            i = f"{self.rng.getrandbits(32):08x}"
            if i not in self.ids:
                self.ids.add(i)
                return i

    def write(self, entry: dict[str, Any], *, parent: str | None | bool = True) -> _E:
        """Append one entry as a child of the leaf (or of ``parent``); return its record."""
        self.t += self.rng.randint(40, 3000)
        rec: dict[str, Any] = {"type": entry["type"]}
        eid = None
        if self.layout != "v1":
            eid = self._id()
            rec["id"] = eid
            rec["parentId"] = self.leaf if parent is True else parent
            self.leaf = eid
        rec["timestamp"] = _iso(self.t)
        rec.update({k: v for k, v in entry.items() if k != "type"})
        self.lines.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
        e = _E(len(self.lines), eid, entry["type"], index=len(self.lines) - 1)
        self.path.append(e)
        return e

    def header(self) -> None:
        h: dict[str, Any] = {"type": "session"}
        if self.layout != "v1":
            h["version"] = 3
        h |= {"id": self.sid, "timestamp": _iso(self.t), "cwd": self.cwd}
        if self.layout == "v1":
            h |= {"provider": "anthropic", "modelId": self.model, "thinkingLevel": "off"}
        self.lines.append(json.dumps(h, separators=(",", ":")))

    # -- messages ------------------------------------------------------------------------

    def _msg(self, message: dict[str, Any], role: str, tokens: int, cut_ok: bool) -> _E:
        message = {**message, "timestamp": self.t + 1}
        e = self.write({"type": "message", "message": message})
        e.role, e.tokens, e.cut_ok = role, tokens, cut_ok
        self.window.append(e)
        return e

    def user(self, text: str) -> _E:
        m = {"role": "user", "content": [{"type": "text", "text": text}]}
        return self._msg(m, "user", _est(len(text)), True)

    def bash(self, command: str, output: str) -> _E:
        m = {
            "role": "bashExecution",
            "command": command,
            "output": output,
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
        e = self._msg(m, "user", _est(len(command) + len(output)), True)
        e.hint = "message"
        return e

    def _usage(self, out: int) -> dict[str, Any]:
        prompt = SYSTEM_TOKENS + sum(e.tokens for e in self.window)
        read = min(self.last_prompt, prompt - 3)
        write = prompt - 3 - read
        u = {
            "input": 3,
            "output": out,
            "cacheRead": read,
            "cacheWrite": write,
            "totalTokens": prompt + out,
            "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0},
        }
        self.usage["input"] += prompt
        self.usage["output"] += out
        self.usage["cache_read"] += read
        self.usage["cache_write"] += write
        self.n_calls += 1
        self.last_prompt = prompt
        self.last_context = prompt + out  # pi's calculateContextTokens
        self.last_input = prompt
        for ev in self.awaiting:
            ev["tokens_after"] = prompt
        self.awaiting.clear()
        return u

    def assistant(self, text: str | None, tools: list[tuple[str, str, dict[str, Any]]]) -> _E:
        content: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": self.words(12), "thinkingSignature": "sig"}
        ]
        chars = len(content[0]["thinking"])
        if text:
            content.append({"type": "text", "text": text})
            chars += len(text)
        for cid, name, args in tools:
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
            chars += len(name) + len(json.dumps(args, separators=(",", ":")))
        context = sorted(e.line for e in self.window)
        usage = self._usage(_est(chars) + self.rng.randint(5, 60))
        m = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": self.model,
            "usage": usage,
            "stopReason": "toolUse" if tools else "stop",
        }
        e = self._msg(m, "assistant", _est(chars), True)
        self.contexts[e.line] = context
        return e

    def tool_result(self, cid: str, name: str, text: str) -> _E:
        m = {
            "role": "toolResult",
            "toolCallId": cid,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": False,
        }
        return self._msg(m, "user", _est(len(text)), False)

    def tool(self) -> tuple[str, str, dict[str, Any], str]:
        cid = f"toolu_{self.rng.getrandbits(64):016x}"
        name = self.rng.choice(("read", "bash", "bash", "edit", "write"))
        f = f"src/{self.rng.choice(WORDS)}.ts"
        if name == "read":
            args: dict[str, Any] = {"path": f}
            out = "\n".join(self.words(10) for _ in range(self.rng.randint(20, 60)))
        elif name == "bash":
            args = {"command": f"npm test -- {self.rng.choice(WORDS)}"}
            out = "\n".join(self.words(8) for _ in range(self.rng.randint(5, 40)))
        elif name == "edit":
            args = {"path": f, "oldText": self.words(5), "newText": self.words(6)}
            out = f"Successfully replaced text in {f}."
        else:
            args = {"path": f, "content": self.words(40)}
            out = f"Successfully wrote {len(args['content'])} bytes to {f}"
        return cid, name, args, out

    def turn(self, n_calls: int, text: str | None = None) -> None:
        self.user(text or f"{self.words(self.rng.randint(6, 16)).capitalize()}.")
        for _ in range(n_calls):
            tools = [self.tool() for _ in range(self.rng.choice((1, 1, 2)))]
            self.assistant(None, [(c, n, a) for c, n, a, _ in tools])
            for c, n, _, out in tools:
                self.tool_result(c, n, out)
        self.assistant(self.words(self.rng.randint(15, 40)), [])

    def setting(self) -> None:
        self.write({"type": "model_change", "provider": "anthropic", "modelId": self.model})
        self.write({"type": "thinking_level_change", "thinkingLevel": "medium"})

    # -- compaction ----------------------------------------------------------------------

    def compact(self, manual: bool = False) -> None:
        """A compaction: pi's cut rule over the path since the previous compaction entry,
        then the entry (the summarising call's usage is not written, as in pi)."""
        start = 0
        if self.seen_compaction is not None:
            start = self.path.index(self.seen_compaction) + 1
        msgs = self.path[start:]
        acc, cut = 0, None
        for j in range(len(msgs) - 1, -1, -1):
            e = msgs[j]
            if e.type != "message":
                continue
            acc += e.tokens
            if acc >= KEEP_RECENT:
                cut = next((x for x in msgs[j:] if x.cut_ok), None)
                break
        if cut is None:
            cut = next(x for x in msgs if x.cut_ok)
        i = self.path.index(cut)
        while i > start and self.path[i - 1].type not in ("message", "compaction"):
            i -= 1  # include the settings entries just before (pi's findCutPoint)
        first = self.path[i]
        kept = [e for e in self.path[i:] if e.role is not None and e.type != "compaction"]
        swept = [e for e in self.window if e not in kept]
        before = self.last_context
        summary = "## Goal\n" + self.words(30) + "\n\n## Progress\n" + self.words(60)
        entry: dict[str, Any] = {"type": "compaction", "summary": summary}
        if self.layout == "v1":
            entry["firstKeptEntryIndex"] = first.index
        else:
            entry["firstKeptEntryId"] = first.id
        entry["tokensBefore"] = before
        if self.layout != "v1":
            entry["details"] = {"readFiles": ["src/index.ts"], "modifiedFiles": ["src/tree.ts"]}
        e = self.write(entry)
        e.role, e.hint, e.tokens = "user", "compaction_summary", _est(len(summary))
        self.seen_compaction = e
        ev = {
            "line": e.line,
            "manual": manual,
            "tokens_before_recorded": before,
            "first_kept_line": first.line,
            "swept": sorted(x.line for x in swept),
            "preserved": sorted(x.line for x in kept),
            "tokens_before": self.last_input,
            "tokens_after": None,
        }
        self.compactions.append(ev)
        self.awaiting.append(ev)
        self.window = [*kept, e]
        self.last_prompt = 0  # the cache prefix changed

    # -- branching (v3 only) ---------------------------------------------------------------

    def abandoned_branch(self) -> None:
        """A turn, then ``/tree`` back to the entry before it, with a branch summary."""
        back = self.path[-1]
        keep_path, keep_window = list(self.path), list(self.window)
        keep_prompt, keep_ctx, keep_input = self.last_prompt, self.last_context, self.last_input
        self.turn(1, "Try it with a recursive " + self.words(3))
        gone = self.path[len(keep_path) :]
        old_leaf = self.leaf
        self.branch_rows.extend(e for e in gone if e.role is not None)
        self.path, self.window = keep_path, keep_window
        self.last_prompt, self.last_context, self.last_input = keep_prompt, keep_ctx, keep_input
        self.leaf = back.id
        s = self.words(25)
        e = self.write({"type": "branch_summary", "fromId": old_leaf, "summary": s})
        e.role, e.hint, e.tokens, e.cut_ok = "user", "message", _est(len(s)), True
        self.window.append(e)

    # -- output ----------------------------------------------------------------------------

    def name(self) -> str:
        stamp = _iso(self.t0).replace(":", "-").replace(".", "-")
        return f"{stamp}_{self.sid}.jsonl"

    def folder(self, out: Path) -> Path:
        return out / "sessions" / ("--" + self.cwd.strip("/").replace("/", "-") + "--")

    def truth(self, file: str, half_line: int | None) -> dict[str, Any]:
        rows = [e for e in self.path if e.role is not None]
        return {
            "file": file,
            "layout": self.layout,
            "session_id": self.sid,
            "rows": [e.line for e in rows],
            "roles": [e.role for e in rows],
            "kind_hints": [e.hint for e in rows],
            "other_branches": [e.line for e in self.branch_rows],
            "n_calls": self.n_calls,
            "usage": self.usage,
            "compactions": self.compactions,
            "window": sorted(e.line for e in self.window),
            "contexts": {str(k): v for k, v in self.contexts.items()},
            "half_written_line": half_line,
        }


def simulate(rng: random.Random, layout: str, cwd: str, t0: int) -> Session:
    """One simulated session (``layout`` v3 or v1): what every pi-shaped sample is made of."""
    s = Session(rng, cwd, t0, layout=layout)
    s.header()
    if layout != "v1":
        s.setting()
    for _ in range(4):
        s.turn(rng.randint(1, 4))
    s.compact()  # automatic
    for _ in range(3):
        s.turn(rng.randint(1, 3))
    if layout != "v1":
        s.abandoned_branch()
    s.bash("git status --short", " M src/tree.ts\n?? notes.md")
    for _ in range(3):
        s.turn(rng.randint(1, 3))
    s.compact()  # automatic
    for _ in range(2):
        s.turn(rng.randint(1, 2))
    s.compact(manual=True)  # /compact
    if layout != "v1":
        s.write({"type": "session_info", "name": "Tree refactor"})
        s.write({"type": "label", "targetId": s.path[3].id, "label": "start"})
    s.turn(2)
    return s


def write_samples(out: str | Path) -> list[Path]:
    """Write the pi samples under ``<out>/pi``; return the session files written."""
    root = Path(out) / "pi"
    rng = random.Random(2207)
    written = []
    for layout, cwd, t0, half in (
        ("v3", "/home/user/src/tree-tool", 1774000000000, True),
        ("v1", "/home/user/src/legacy", 1763600000000, False),
    ):
        s = simulate(rng, layout, cwd, t0)
        folder = s.folder(root)
        folder.mkdir(parents=True, exist_ok=True)
        f = folder / s.name()
        data = "\n".join(s.lines) + "\n"
        half_line = None
        if half:  # one more reply being written: cut inside it, no newline
            extra = s.lines[-1]
            data += extra[: len(extra) // 2]
            half_line = len(s.lines) + 1
        f.write_text(data, encoding="utf-8")
        truth = s.truth(f.name, half_line)
        (folder / (f.name[: -len(".jsonl")] + ".truth.json")).write_text(
            json.dumps(truth, indent=1) + "\n", encoding="utf-8"
        )
        written.append(f)
    return written


if __name__ == "__main__":
    for p in write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"):
        print(p)
