"""Seeded simulator of GitHub Copilot CLI sessions, with ground truth.

Writes ``<out>/copilot_cli/session-state/<sessionId>/events.jsonl`` with
``events.truth.json`` beside it. **From the writer's published schema only**
(github/copilot-sdk ``session-events.ts``; no real file was available): a ``session.start``,
a system message, turns of ``user.message`` / ``assistant.message`` (``toolRequests``,
``outputTokens``) / ``tool.execution_start`` / ``tool.execution_complete``, a background
compaction (``trigger: threshold``) during which a tool call finishes, a manual one, a failed
one, a ``session.truncation``, a sub-agent (``subagent.started`` ... events with ``agentId``
... ``subagent.completed``), ``session.shutdown`` with per-model totals, and a half-written
last line. Per-call usage (``assistant.usage``) is ephemeral in the schema, so it is not
written, as Copilot CLI does not write it.

The truth is the simulator's state: the main agent's rows (line of each, roles, kind hints),
the sub-agent's rows, each compaction's line, trigger, recorded tokens and the rows it swept
and kept under GitHub's documented rule (history before the compaction started is replaced by
the summary, system instructions stay, messages added while it ran are kept), the sum of
``outputTokens`` and the shutdown totals. Independent of adfkit. Same seed, same bytes.

Run: ``python adfsynth/copilot_cli.py sample_agents/``
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
    "copilot",
    "session",
    "event",
    "token",
    "summary",
    "checkpoint",
    "tool",
    "bash",
    "view",
    "edit",
    "grep",
    "glob",
    "test",
    "build",
    "config",
    "module",
    "window",
]
SYSTEM = 6_000
MODEL = "claude-sonnet-4.5"
WINDOW = 128_000


def _iso(ms: int) -> str:
    d = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@dataclass
class _R:
    line: int
    role: str
    hint: str | None
    size: int


@dataclass
class Session:
    rng: random.Random
    t: int
    lines: list[str] = field(default_factory=list)
    last: str | None = None
    rows: list[_R] = field(default_factory=list)
    window: list[_R] = field(default_factory=list)
    sub_rows: list[_R] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    output_tokens: int = 0
    n_calls: int = 0
    totals: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("input", "output", "cache_read", "cache_write"), 0)
    )
    requests: int = 0
    #: main-agent reply line -> lines of the conversation rows sent for it (system prompt apart)
    contexts: dict[int, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sid = str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def _uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def emit(self, type_: str, data: dict[str, Any], agent: str | None = None) -> int:
        self.t += self.rng.randint(50, 2500)
        eid = self._uuid()
        rec: dict[str, Any] = {
            "id": eid,
            "parentId": self.last,
            "timestamp": _iso(self.t),
            "type": type_,
            "data": data,
        }
        if agent is not None:
            rec["agentId"] = agent
        self.lines.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
        self.last = eid
        return len(self.lines)

    def _row(self, line: int, role: str, hint: str | None, size: int, sub: bool) -> None:
        r = _R(line, role, hint, size)
        if sub:
            self.sub_rows.append(r)
        else:
            self.rows.append(r)
            self.window.append(r)

    def _spend(self, out: int) -> None:
        prompt = SYSTEM + sum(r.size for r in self.window)
        read = min(prompt, int(prompt * 0.8))
        self.totals["input"] += prompt
        self.totals["cache_read"] += read
        self.totals["cache_write"] += prompt - read
        self.totals["output"] += out
        self.requests += 1

    # -- events ----------------------------------------------------------------------------

    def start(self) -> None:
        self.emit(
            "session.start",
            {
                "sessionId": self.sid,
                "version": 1,
                "producer": "copilot-agent",
                "copilotVersion": "0.0.400",
                "startTime": _iso(self.t),
                "selectedModel": MODEL,
                "context": {
                    "cwd": "/home/user/src/shop",
                    "gitRoot": "/home/user/src/shop",
                    "branch": "main",
                    "repository": "user/shop",
                },
            },
        )
        text = "You are the GitHub Copilot CLI, a terminal assistant. " + self.words(60)
        line = self.emit("system.message", {"role": "system", "content": text})
        self._row(line, "user", "context", len(text) // 4, False)

    def user(self, text: str, agent: str | None = None) -> None:
        shown = f"<current_datetime>{_iso(self.t)}</current_datetime>\n\n{text}"
        line = self.emit("user.message", {"content": text, "transformedContent": shown}, agent)
        self._row(line, "user", None, len(shown) // 4, agent is not None)

    def tool_request(self) -> dict[str, Any]:
        name = self.rng.choice(("bash", "view", "edit", "grep", "report_intent"))
        args: dict[str, Any] = {
            "bash": {"command": f"npm test -- {self.rng.choice(WORDS)}", "description": "test"},
            "view": {"path": f"/home/user/src/shop/{self.rng.choice(WORDS)}.ts"},
            "edit": {"path": "src/cart.ts", "old_str": self.words(4), "new_str": self.words(5)},
            "grep": {"pattern": self.rng.choice(WORDS)},
            "report_intent": {"intent": self.words(3)},
        }[name]
        return {
            "toolCallId": f"toolu_{self.rng.getrandbits(64):016x}",
            "name": name,
            "arguments": args,
            "type": "function",
        }

    def assistant(self, text: str, reqs: list[dict[str, Any]], agent: str | None = None) -> None:
        out = len(text) // 4 + 30 * len(reqs) + self.rng.randint(5, 40)
        if agent is None:
            self._spend(out)
        else:
            self.totals["input"] += 3000
            self.totals["cache_read"] += 2400
            self.totals["cache_write"] += 600
            self.totals["output"] += out
            self.requests += 1
        data = {
            "messageId": self._uuid(),
            "content": text,
            "toolRequests": reqs,
            "model": MODEL,
            "outputTokens": out,
            "requestId": f"req-{self.rng.getrandbits(32):08x}",
            "reasoningText": self.words(10),
        }
        context = sorted(r.line for r in self.window if r.hint != "context")
        line = self.emit("assistant.message", data, agent)
        if agent is None:
            self.contexts[line] = context
        size = (len(text) + sum(len(json.dumps(r["arguments"])) for r in reqs)) // 4 + 10
        self._row(line, "assistant", None, size, agent is not None)
        self.output_tokens += out
        self.n_calls += 1

    def result(self, req: dict[str, Any], agent: str | None = None, ok: bool = True) -> None:
        text = "\n".join(self.words(9) for _ in range(self.rng.randint(3, 30)))
        data: dict[str, Any] = {"toolCallId": req["toolCallId"], "success": ok, "model": MODEL}
        if ok:
            data["result"] = {"content": text, "detailedContent": text + "\n(full)"}
        else:
            data["error"] = {"message": "command failed: exit 1", "code": "failure"}
        line = self.emit("tool.execution_complete", data, agent)
        self._row(line, "user", None, len(text) // 4 + 4 if ok else 8, agent is not None)

    def turn(self, n_calls: int, text: str | None = None) -> None:
        self.user(text or self.words(self.rng.randint(6, 15)).capitalize() + ".")
        self.emit("assistant.turn_start", {"turnId": str(len(self.lines))})
        for _ in range(n_calls):
            reqs = [self.tool_request() for _ in range(self.rng.choice((1, 1, 2)))]
            self.assistant("", reqs)
            for r in reqs:
                self.emit(
                    "tool.execution_start",
                    {
                        "toolCallId": r["toolCallId"],
                        "toolName": r["name"],
                        "arguments": r["arguments"],
                    },
                )
                self.result(r, ok=self.rng.random() > 0.1)
        self.assistant(self.words(self.rng.randint(12, 30)), [])
        self.emit("assistant.turn_end", {"turnId": str(len(self.lines))})

    def compaction(self, trigger: str, *, during: bool = False, fail: bool = False) -> None:
        """A compaction: start, (a tool call finishing meanwhile), complete."""
        conv = sum(r.size for r in self.window if r.hint != "context")
        sys_t = sum(r.size for r in self.window if r.hint == "context")
        start = self.emit(
            "session.compaction_start",
            {
                "conversationTokens": conv,
                "systemTokens": sys_t,
                "toolDefinitionsTokens": 4200,
                "currentTokens": conv + sys_t + 4200,
                "tokenLimit": WINDOW,
                "model": MODEL,
                "trigger": trigger,
            },
        )
        cut = len(self.window)
        if during:  # the agent goes on in the background: its messages are kept
            req = self.tool_request()
            self.assistant("", [req])
            self.result(req)
        if fail:
            self.emit(
                "session.compaction_complete",
                {"success": False, "error": "timeout", "statusCode": 504, "trigger": trigger},
            )
            return
        before, added = self.window[:cut], self.window[cut:]
        swept = [r for r in before if r.hint != "context"]
        kept = [r for r in before if r.hint == "context"] + added
        summary = "<overview>" + self.words(50) + "</overview>\n<history>" + self.words(80)
        pre = SYSTEM + sum(r.size for r in self.window)
        used = {
            "inputTokens": pre,
            "outputTokens": len(summary) // 4,
            "cacheReadTokens": 0,
            "cacheWriteTokens": pre,
            "duration": 8123,
            "model": MODEL,
        }
        self.totals["input"] += pre
        self.totals["cache_write"] += pre
        self.totals["output"] += used["outputTokens"]
        self.requests += 1
        post = SYSTEM + sum(r.size for r in kept) + len(summary) // 4
        data = {
            "success": True,
            "preCompactionTokens": pre,
            "postCompactionTokens": post,
            "preCompactionMessagesLength": len(self.window),
            "messagesRemoved": len(swept),
            "tokensRemoved": pre - post,
            "summaryContent": summary,
            "checkpointNumber": len(self.compactions) + 1,
            "checkpointPath": f"checkpoints/{len(self.compactions) + 1:03d}.md",
            "compactionTokensUsed": used,
            "requestId": "req-c",
            "trigger": trigger,
            "tokenLimit": WINDOW,
        }
        line = self.emit("session.compaction_complete", data)
        srow = _R(line, "user", "compaction_summary", len(summary) // 4)
        self.rows.append(srow)
        self.window = [*kept, srow]
        self.compactions.append(
            {
                "line": line,
                "start_line": start,
                "trigger": trigger,
                "pre": pre,
                "post": post,
                "swept": [r.line for r in swept],
                "preserved": sorted(r.line for r in kept),
                "summary_output": used["outputTokens"],
            }
        )

    def truncation(self, n: int) -> None:
        movable = [r for r in self.window if r.hint != "context"][:n]
        pre = sum(r.size for r in self.window)
        gone = {id(r) for r in movable}
        self.window = [r for r in self.window if id(r) not in gone]
        post = sum(r.size for r in self.window)
        line = self.emit(
            "session.truncation",
            {
                "preTruncationTokensInMessages": pre,
                "postTruncationTokensInMessages": post,
                "preTruncationMessagesLength": len(self.window) + n,
                "postTruncationMessagesLength": len(self.window),
                "messagesRemovedDuringTruncation": n,
                "tokensRemovedDuringTruncation": pre - post,
                "tokenLimit": WINDOW,
                "performedBy": "BasicTruncator",
            },
        )
        self.compactions.append(
            {
                "line": line,
                "trigger": "truncation",
                "pre": pre,
                "post": post,
                "swept": [r.line for r in movable],
                "preserved": [],
                "summary_output": None,
            }
        )

    def subagent(self) -> None:
        req = {
            "toolCallId": f"toolu_{self.rng.getrandbits(64):016x}",
            "name": "task",
            "arguments": {"agent_type": "explore", "prompt": "find the cart code"},
        }
        self.user("Find where the cart total is computed.")
        self.assistant("", [req])
        self.emit(
            "tool.execution_start",
            {"toolCallId": req["toolCallId"], "toolName": "task", "arguments": req["arguments"]},
        )
        agent = self._uuid()
        self.emit(
            "subagent.started",
            {
                "toolCallId": req["toolCallId"],
                "agentName": "explore",
                "agentDisplayName": "Explore",
                "agentDescription": "reads code",
            },
            agent,
        )
        self.user("find the cart code", agent)
        g = {
            "toolCallId": f"toolu_{self.rng.getrandbits(64):016x}",
            "name": "grep",
            "arguments": {"pattern": "total"},
        }
        self.assistant("", [g], agent)
        self.result(g, agent)
        self.assistant("It is in src/cart.ts.", [], agent)
        self.emit(
            "subagent.completed",
            {
                "toolCallId": req["toolCallId"],
                "agentName": "explore",
                "agentDisplayName": "Explore",
                "durationMs": 4000,
                "totalToolCalls": 1,
            },
            agent,
        )
        self.result(req)
        self.assistant("The total is computed in src/cart.ts.", [])
        self.agent = agent

    def shutdown(self) -> None:
        usage = {
            "inputTokens": self.totals["input"],
            "outputTokens": self.totals["output"],
            "cacheReadTokens": self.totals["cache_read"],
            "cacheWriteTokens": self.totals["cache_write"],
        }
        self.emit(
            "session.shutdown",
            {
                "shutdownType": "routine",
                "totalPremiumRequests": 3,
                "totalApiDurationMs": 90000,
                "sessionStartTime": 1774000000000,
                "currentModel": MODEL,
                "codeChanges": {
                    "linesAdded": 4,
                    "linesRemoved": 1,
                    "filesModified": ["src/cart.ts"],
                },
                "modelMetrics": {
                    MODEL: {"requests": {"count": self.requests, "cost": 1}, "usage": usage}
                },
            },
        )

    def truth(self, half_line: int) -> dict[str, Any]:
        return {
            "session_id": self.sid,
            "rows": [r.line for r in self.rows],
            "roles": [r.role for r in self.rows],
            "kind_hints": [r.hint for r in self.rows],
            "window": sorted(r.line for r in self.window),
            "contexts": {str(k): v for k, v in self.contexts.items()},
            "subagent_id": self.agent,
            "subagent_rows": [r.line for r in self.sub_rows],
            "compactions": self.compactions,
            "output_tokens": self.output_tokens,
            "n_assistant_calls": self.n_calls,
            "totals": self.totals,
            "requests": self.requests,
            "half_written_line": half_line,
        }


def write_samples(out: str | Path) -> list[Path]:
    """Write the Copilot CLI sample under ``<out>/copilot_cli``; return the session folders."""
    rng = random.Random(2209)
    s = Session(rng, 1774000000000)
    s.start()
    for _ in range(3):
        s.turn(rng.randint(1, 3))
    s.compaction("threshold", during=True)
    s.turn(2)
    s.subagent()
    s.compaction("manual")
    s.turn(1)
    s.compaction("threshold", fail=True)
    s.turn(2)
    s.truncation(3)
    s.turn(1)
    s.shutdown()
    folder = Path(out) / "copilot_cli" / "session-state" / s.sid
    folder.mkdir(parents=True, exist_ok=True)
    half = s.lines[-1][: len(s.lines[-1]) // 3]  # a resume's first event, being written
    (folder / "events.jsonl").write_text("\n".join(s.lines) + "\n" + half, encoding="utf-8")
    truth = s.truth(len(s.lines) + 1)
    (folder / "events.truth.json").write_text(json.dumps(truth, indent=1) + "\n", "utf-8")
    return [folder]


if __name__ == "__main__":
    for p in write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"):
        print(p)
