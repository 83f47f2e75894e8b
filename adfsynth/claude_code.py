"""Seeded simulator of Claude Code session transcripts, with ground truth.

Writes a ``projects``-like tree (``<out>/claude-code/projects/<encoded-cwd>/<session>.jsonl``, its
``<session>/subagents/agent-*.jsonl`` + ``.meta.json``, a legacy ``agent-*.jsonl``) and, beside
each main session, ``<session>.truth.json``: the rows in conversation order (first-record uuids),
roles, kind hints, abandoned branches, usage totals, every compaction's trigger, preTokens, swept
and preserved rows, summary and the prompt sizes before/after, microcompactions, rewinds and
subagents. The truth is what the simulator *did* (its own context-window state), not a re-read of
the file. Independent of adfkit (imports nothing from it). Same seed, same bytes.

Run: ``python adfsynth/claude_code.py sample_agents/``
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
    "parser",
    "cache",
    "token",
    "window",
    "branch",
    "compaction",
    "summary",
    "module",
    "test",
    "fixture",
    "schema",
    "column",
    "frame",
    "index",
    "merge",
    "chain",
    "record",
    "stream",
    "buffer",
    "offset",
    "error",
    "warning",
    "retry",
    "limit",
    "budget",
    "session",
    "agent",
    "context",
    "history",
    "replay",
    "model",
    "usage",
    "cost",
    "plot",
    "report",
    "config",
    "path",
    "folder",
]
TOOLS = ("Read", "Grep", "Glob", "Bash", "Edit", "Write", "WebFetch", "TodoWrite")
SYSTEM_TOKENS = 24_000  # system prompt + tool definitions, part of every prompt
#: Tool outputs are stored shortened to keep samples small; they count as this many times their
#: stored size in the simulated prompt, so windows reach realistic fill levels.
RESULT_SCALE = 6
SUMMARY_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
)


def _iso(ms: int) -> str:
    d = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass
class _Row:
    uuid: str
    role: str
    hint: str | None
    size: int  # tokens this row adds to the prompt
    uuids: list[str] = field(default_factory=list)


class Session:
    """One transcript file being written; tracks what the model's context holds."""

    def __init__(
        self,
        rng: random.Random,
        sid: str,
        cwd: str,
        version: str,
        t0: int,
        *,
        agent_id: str | None = None,
        model: str = "claude-sonnet-4-5-20250929",
    ) -> None:
        self.rng = rng
        self.sid = sid
        self.cwd = cwd
        self.version = version
        self.t = t0
        self.agent_id = agent_id
        self.side = agent_id is not None
        self.model = model
        self.lines: list[str] = []
        self.tip: str | None = None
        self.window: list[_Row] = []
        self.rows: list[_Row] = []  # active conversation, in order
        self.branch_rows: list[_Row] = []
        self.usage: dict[str, int] = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
        self.last_prompt = 0  # prompt size of the previous call (what is cached)
        self.last_call_prompt: int | None = None
        self.compactions: list[dict[str, Any]] = []
        self.micro: list[dict[str, Any]] = []
        self.rewinds: list[list[str]] = []
        self.pending_after: dict[str, Any] | None = None
        self.result_rows: dict[str, _Row] = {}
        self.n_msg = 0
        self.subagents: dict[str, dict[str, Any]] = {}
        self.written: dict[str, dict[str, Any]] = {}

    # -- primitives --------------------------------------------------------------------------

    def uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self, lo: int = 200, hi: int = 4000) -> int:
        self.t += self.rng.randint(lo, hi)
        return self.t

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def env(self, type_: str, parent: str | None, uid: str | None = None) -> dict[str, Any]:
        r: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": self.side,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": "main",
        }
        if self.agent_id:
            r["agentId"] = self.agent_id
        r["type"] = type_
        r["uuid"] = uid or self.uuid()
        r["timestamp"] = _iso(self.tick())
        return r

    def emit(self, rec: dict[str, Any]) -> dict[str, Any]:
        self.lines.append(_dump(rec))
        u = rec.get("uuid")
        if isinstance(u, str) and u not in self.written:
            self.written[u] = json.loads(self.lines[-1])
        return rec

    def add_row(self, row: _Row) -> None:
        self.rows.append(row)
        self.window.append(row)

    # -- records -----------------------------------------------------------------------------

    def user(
        self, content: Any, hint: str | None = None, size: int | None = None, **kw: Any
    ) -> _Row:
        r = self.env("user", self.tip)
        r["message"] = {"role": "user", "content": content}
        r.update(kw)
        self.emit(r)
        self.tip = r["uuid"]
        text = content if isinstance(content, str) else json.dumps(content)
        row = _Row(r["uuid"], "user", hint, size if size is not None else len(text) // 4 + 4)
        row.uuids.append(r["uuid"])
        self.add_row(row)
        return row

    def prompt(self, text: str | None = None) -> _Row:
        row = self.user(text or f"Please {self.words(self.rng.randint(6, 20))}.")
        if not self.side and self.rng.random() < 0.7:
            self.emit(
                {
                    "type": "file-history-snapshot",
                    "messageId": row.uuid,
                    "snapshot": {
                        "messageId": row.uuid,
                        "trackedFileBackups": {
                            f"src/{self.rng.choice(WORDS)}.py": {
                                "backupFileName": f"{self.uuid()[:16]}@v1",
                                "version": 1,
                                "backupTime": _iso(self.t),
                            }
                        },
                        "timestamp": _iso(self.t),
                    },
                    "isSnapshotUpdate": False,
                }
            )
        return row

    def progress(self, parent: str, n: int) -> str:
        last = parent
        tool_id = f"toolu_{self.uuid()[:8]}"
        for i in range(n):
            r = self.env("progress", last)
            r["data"] = {
                "type": "bash_progress" if i else "hook_progress",
                "output": self.words(3),
                "elapsedTimeSeconds": i,
            }
            r["toolUseID"] = tool_id
            r["parentToolUseID"] = tool_id
            self.emit(r)
            last = r["uuid"]
        return last

    def call(
        self,
        blocks: list[dict[str, Any]],
        *,
        out_tokens: int | None = None,
        splice_results: dict[str, str] | None = None,
    ) -> _Row:
        """One API call written as one record per content block (same message.id)."""
        prompt = SYSTEM_TOKENS + sum(r.size for r in self.window)
        inp = self.rng.randint(1, 6)
        cached = min(self.last_prompt, prompt - inp)
        cache_write = prompt - inp - cached
        out = out_tokens or sum(len(json.dumps(b)) // 4 for b in blocks) + self.rng.randint(5, 60)
        self.n_msg += 1
        mid = f"msg_{self.uuid().replace('-', '')[:24]}"
        req = f"req_{self.uuid().replace('-', '')[:24]}"
        row: _Row | None = None
        spliced: list[tuple[str, str]] = []
        for i, b in enumerate(blocks):
            last = i == len(blocks) - 1
            partial = out if last else self.rng.randint(1, max(1, out // 3))
            r = self.env("assistant", self.tip)
            r["message"] = {
                "model": self.model,
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [b],
                "stop_reason": "tool_use" if last and b["type"] == "tool_use" else None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": inp,
                    "cache_creation_input_tokens": cache_write,
                    "cache_read_input_tokens": cached,
                    "cache_creation": {
                        "ephemeral_5m_input_tokens": cache_write,
                        "ephemeral_1h_input_tokens": 0,
                    },
                    "output_tokens": partial,
                    "service_tier": "standard",
                },
            }
            r["requestId"] = req
            self.emit(r)
            self.tip = r["uuid"]
            if row is None:
                row = _Row(r["uuid"], "assistant", None, out)
                self.add_row(row)
            row.uuids.append(r["uuid"])
            if (
                splice_results
                and b["type"] == "tool_use"
                and b["id"] in splice_results
                and not last
            ):
                # the tool ran while the next block streamed: its result is a sibling record
                res = self.env("user", r["uuid"])
                res["message"] = {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": b["id"],
                            "content": splice_results[b["id"]],
                        }
                    ],
                }
                res["toolUseResult"] = {"stdout": splice_results[b["id"]][:40]}
                spliced.append((b["id"], res["uuid"]))
                self.emit(res)
        assert row is not None
        self.usage["input"] += prompt
        self.usage["output"] += out
        self.usage["cache_read"] += cached
        self.usage["cache_write"] += cache_write
        self.last_prompt = prompt + out
        self.last_call_prompt = prompt
        if self.pending_after is not None:
            self.pending_after["tokens_after"] = prompt
            self.pending_after = None
        for tid, ruid in spliced:
            rrow = _Row(ruid, "user", None, len(splice_results[tid]) // 4 * RESULT_SCALE + 8)  # type: ignore[index]
            rrow.uuids.append(ruid)
            self.add_row(rrow)
            self.result_rows[tid] = rrow
        return row

    def results(self, items: list[tuple[str, str, bool]], *, through_progress: bool) -> None:
        """Tool results, one user record each, after the call's last fragment."""
        fragment = self.tip
        assert fragment is not None
        last = self.progress(fragment, self.rng.randint(1, 4))
        if not through_progress:
            self.tip = fragment  # progress is a side child; results hang off the fragment
        else:
            self.tip = last
        for tid, text, err in items:
            r = self.env("user", self.tip)
            r["message"] = {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": err}
                ],
            }
            r["toolUseResult"] = {"stdout": text[:60], "stderr": "", "interrupted": False}
            r["sourceToolAssistantUUID"] = fragment
            self.emit(r)
            self.tip = r["uuid"]
            row = _Row(r["uuid"], "user", None, len(text) // 4 * RESULT_SCALE + 8)
            row.uuids.append(r["uuid"])
            self.add_row(row)
            self.result_rows[tid] = row

    def system(self, subtype: str, **kw: Any) -> dict[str, Any]:
        r = self.env("system", self.tip)
        r["subtype"] = subtype
        r.update(kw)
        r.setdefault("level", "info")
        self.emit(r)
        return r

    # -- behaviour ---------------------------------------------------------------------------

    def tool_input(self, name: str) -> dict[str, Any]:
        f = f"{self.cwd}/src/{self.rng.choice(WORDS)}_{self.rng.choice(WORDS)}.py"
        return {
            "Read": {"file_path": f},
            "Grep": {"pattern": self.rng.choice(WORDS), "path": self.cwd, "output_mode": "content"},
            "Glob": {"pattern": f"**/*{self.rng.choice(WORDS)}*.py"},
            "Bash": {
                "command": f"pytest -q tests/test_{self.rng.choice(WORDS)}.py",
                "timeout": 120000,
            },
            "Edit": {"file_path": f, "old_string": self.words(4), "new_string": self.words(5)},
            "Write": {"file_path": f, "content": self.code(8)},
            "WebFetch": {
                "url": f"https://docs.example.org/{self.rng.choice(WORDS)}",
                "prompt": "API",
            },
            "TodoWrite": {"todos": [{"content": self.words(4), "status": "in_progress"}]},
        }[name]

    def code(self, n: int) -> str:
        return "\n".join(
            f"{i + 1:>4}\tdef {self.rng.choice(WORDS)}_{i}(x):  # {self.words(5)}" for i in range(n)
        )

    def tool_output(self, name: str) -> str:
        if name == "Read":
            return self.code(self.rng.randint(10, 60))
        if name == "Bash":
            return (
                f"{self.rng.randint(1, 90)} passed in 0.{self.rng.randint(10, 99)}s\n"
                + self.words(30)
            )
        if name in ("Grep", "Glob"):
            return "\n".join(
                f"src/{self.rng.choice(WORDS)}.py:{self.rng.randint(1, 400)}" for _ in range(8)
            )
        return f"The file has been updated. {self.words(12)}"

    def turn(self, n_calls: int, text: str | None = None) -> None:
        """A prompt, then ``n_calls`` model calls using tools, then a final answer."""
        self.prompt(text)
        for _ in range(n_calls):
            names = [self.rng.choice(TOOLS) for _ in range(self.rng.choice((1, 1, 2, 3)))]
            blocks: list[dict[str, Any]] = []
            if self.rng.random() < 0.5:
                blocks.append(
                    {"type": "thinking", "thinking": self.words(25), "signature": "Eq" + "A" * 40}
                )
            if self.rng.random() < 0.6:
                blocks.append({"type": "text", "text": self.words(12)})
            calls = []
            for name in names:
                tid = f"toolu_{self.uuid().replace('-', '')[:22]}"
                calls.append((tid, name))
                blocks.append(
                    {"type": "tool_use", "id": tid, "name": name, "input": self.tool_input(name)}
                )
            splice = {}
            if len(calls) > 1 and self.rng.random() < 0.5:
                splice[calls[0][0]] = self.tool_output(calls[0][1])
            self.call(blocks, splice_results=splice)
            rest = [
                (t, self.tool_output(n), self.rng.random() < 0.08)
                for t, n in calls
                if t not in splice
            ]
            self.results(rest, through_progress=self.rng.random() < 0.5)
        self.call([{"type": "text", "text": self.words(self.rng.randint(20, 60))}])
        if not self.side:
            self.system("turn_duration", durationMs=self.rng.randint(2000, 90000), isMeta=False)
            if self.rng.random() < 0.3:
                self.emit(
                    {
                        "type": "queue-operation",
                        "operation": "enqueue",
                        "timestamp": _iso(self.t),
                        "sessionId": self.sid,
                        "content": self.words(5),
                    }
                )
                self.emit(
                    {
                        "type": "queue-operation",
                        "operation": "dequeue",
                        "timestamp": _iso(self.t),
                        "sessionId": self.sid,
                    }
                )

    def attachment(self) -> None:
        r = self.env("attachment", self.tip)
        r["attachment"] = {"type": "todo_reminder", "content": self.words(10), "itemCount": 2}
        self.emit(r)
        self.tip = r["uuid"]
        row = _Row(r["uuid"], "user", "context", 30)
        row.uuids.append(r["uuid"])
        self.add_row(row)

    def compact(
        self,
        trigger: str,
        *,
        preserve_last: int = 0,
        focus: str | None = None,
        minimal: bool = False,
    ) -> None:
        preserved = self.window[-preserve_last:] if preserve_last else []
        if trigger == "manual":
            self.user(
                [
                    {
                        "type": "text",
                        "text": "Caveat: The messages below were generated by the user while "
                        "running local commands.",
                    }
                ],
                hint="context",
                isMeta=True,
            )
            self.user(
                "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
                f"<command-args>{focus or ''}</command-args>",
                hint="context",
            )
        swept = [r for r in self.window if r not in preserved]
        before = self.last_call_prompt
        pre = (before or 0) + self.rng.randint(50, 900)
        md: dict[str, Any] = {"trigger": trigger, "preTokens": pre}
        if not minimal:
            md.update(
                {
                    "postTokens": 0,
                    "durationMs": self.rng.randint(20000, 120000),
                    "messagesSummarized": len(swept),
                }
            )
            if focus:
                md["userContext"] = focus
        if preserved:
            md["preservedMessages"] = {
                "anchorUuid": None,
                "uuids": [u for r in preserved for u in r.uuids],
            }
        logical = self.tip
        b = self.env("system", None)
        b.update(
            {
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "logicalParentUuid": logical,
                "compactMetadata": md,
            }
        )
        summary_text = SUMMARY_PREFIX + "Summary:\n1. " + self.words(80) + "\n2. " + self.words(60)
        s = self.env("user", b["uuid"])
        s["message"] = {"role": "user", "content": summary_text}
        s["isCompactSummary"] = True
        s["isVisibleInTranscriptOnly"] = True
        if preserved:
            md["preservedMessages"]["anchorUuid"] = s["uuid"]
        if not minimal:
            md["postTokens"] = len(summary_text) // 4 + sum(r.size for r in preserved)
        self.emit(b)
        self.emit(s)
        srow = _Row(s["uuid"], "user", "compaction_summary", len(summary_text) // 4)
        srow.uuids.append(s["uuid"])
        self.rows.append(srow)
        self.tip = s["uuid"]
        # preserved records are written again under the summary, same uuids
        if preserved:
            prev = s["uuid"]
            for r in preserved:
                for u in r.uuids:
                    c = dict(self.written[u])
                    c["parentUuid"] = prev  # re-chained under the summary, same uuid
                    self.emit(c)
                    prev = u
            self.tip = prev
        self.window = [srow, *preserved]
        ev = {
            "trigger": trigger,
            "pre_tokens": pre,
            "swept": [r.uuid for r in swept],
            "preserved": [r.uuid for r in preserved],
            "summary": s["uuid"],
            "tokens_before": before,
            "tokens_after": None,
        }
        self.compactions.append(ev)
        self.pending_after = ev
        self.last_prompt = 0  # the cache does not survive a compaction
        if trigger == "manual":
            self.user(
                "<local-command-stdout>Compacted. ctrl+o to see full summary"
                "</local-command-stdout>",
                hint="context",
            )

    def microcompact(self, n: int) -> None:
        cands = [r for tid, r in self.result_rows.items() if r in self.window][:n]
        ids = [tid for tid, r in self.result_rows.items() if r in cands]
        saved = sum(r.size for r in cands) - 10 * len(cands)
        r = self.system(
            "microcompact_boundary",
            content="Context microcompacted",
            microcompactMetadata={
                "trigger": "auto",
                "preTokens": (self.last_call_prompt or 0) + 300,
                "tokensSaved": saved,
                "compactedToolIds": ids,
                "clearedAttachmentUUIDs": [],
            },
        )
        self.tip = r["uuid"]
        for row in cands:
            row.size = 10
        self.micro.append({"swept": [row.uuid for row in cands]})

    def abandoned_branch(self) -> None:
        """A prompt and its answer, then the user rewinds to before the prompt."""
        fork_tip, fork_window, fork_rows = self.tip, list(self.window), len(self.rows)
        fork_last, fork_call = self.last_prompt, self.last_call_prompt
        self.turn(1, "Try the other approach: " + self.words(8))
        branch = self.rows[fork_rows:]
        self.branch_rows.extend(branch)
        self.rewinds.append([r.uuid for r in branch])
        del self.rows[fork_rows:]
        self.window = fork_window
        self.tip = fork_tip
        self.last_prompt, self.last_call_prompt = fork_last, fork_call

    def truth(self, file: str, n_warnings: int, findings: list[str]) -> dict[str, Any]:
        return {
            "file": file,
            "n_warnings": n_warnings,
            "rows": [r.uuid for r in self.rows],
            "roles": [r.role for r in self.rows],
            "kind_hints": [r.hint for r in self.rows],
            "other_branches": [r.uuid for r in self.branch_rows],
            "usage": self.usage,
            "n_compactions": len(self.compactions),
            "compactions": self.compactions,
            "microcompactions": self.micro,
            "rewinds": self.rewinds,
            "subagents": self.subagents,
            "finding_checks": findings,
        }

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _spawn(
    parent: Session,
    sub_dir: Path,
    agent_id: str,
    desc: str,
    calls: int,
    rng: random.Random,
    *,
    legacy: bool = False,
    parent_agent: str | None = None,
    nested: tuple[str, int] | None = None,
) -> None:
    """``parent`` calls Task; a subagent session runs and writes its own file."""
    tid = f"toolu_{parent.uuid().replace('-', '')[:22]}"
    parent.call(
        [
            {"type": "text", "text": "Delegating: " + desc},
            {
                "type": "tool_use",
                "id": tid,
                "name": "Task",
                "input": {
                    "description": desc,
                    "prompt": parent.words(20),
                    "subagent_type": "general-purpose",
                },
            },
        ]
    )
    sub = Session(
        rng,
        parent.sid,
        parent.cwd,
        parent.version,
        parent.t,
        agent_id=agent_id,
        model="claude-haiku-4-5-20251001",
    )
    sub.turn(calls, parent.words(20))
    if nested:
        _spawn(sub, sub_dir, nested[0], "nested look-up", nested[1], rng, parent_agent=agent_id)
        sub.call([{"type": "text", "text": sub.words(30)}])
    parent.t = sub.t
    name = f"agent-{agent_id}.jsonl"
    path = (sub_dir.parent.parent / name) if legacy else (sub_dir / name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sub.text(), encoding="utf-8")
    if not legacy:
        (sub_dir / f"agent-{agent_id}.meta.json").write_text(
            json.dumps({"agentType": "general-purpose", "description": desc, "toolUseId": tid})
            + "\n"
        )
    answer = sub.words(30)
    text = answer + (
        f"\nagentId: {agent_id} (for resuming to continue this agent's work if needed)"
        if legacy
        else ""
    )
    r = parent.env("user", parent.tip)
    r["message"] = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": text}]}
        ],
    }
    if not legacy:
        r["toolUseResult"] = {
            "status": "completed",
            "agentId": agent_id,
            "totalTokens": sum(sub.usage.values()),
            "totalToolUseCount": calls,
        }
    parent.emit(r)
    parent.tip = r["uuid"]
    row = _Row(r["uuid"], "user", None, len(text) // 4 + 8)
    row.uuids.append(r["uuid"])
    parent.add_row(row)
    parent.subagents[agent_id] = {
        "rows": [x.uuid for x in sub.rows],
        "usage": sub.usage,
        "tool_use_id": tid,
        "parent_agent_id": parent_agent,
    }
    parent.subagents.update(sub.subagents)


def _main_session(out: Path, rng: random.Random) -> None:
    cwd = "/home/user/work/webapp"
    proj = out / "projects" / "-home-user-work-webapp"
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    s = Session(rng, sid, cwd, "2.1.90", 1772352000000)
    sub_dir = proj / sid / "subagents"
    s.lines.append(
        _dump({"type": "summary", "summary": "Webapp: fix the flaky upload test", "leafUuid": None})
    )
    s.user(
        [
            {
                "type": "text",
                "text": "<system-reminder>As you answer, use this context: CLAUDE.md says "
                "run make test.</system-reminder>",
            }
        ],
        hint="context",
        isMeta=True,
    )
    for _ in range(6):
        s.turn(rng.randint(1, 3))
    s.attachment()
    _spawn(s, sub_dir, "a1b2c3d4", "find the upload handler", 3, rng, nested=("e5f6a7b8", 2))
    s.call([{"type": "text", "text": s.words(40)}])
    for _ in range(6):
        s.turn(rng.randint(1, 4))
    s.compact("auto", preserve_last=0)
    # compaction helper agent (what some tools take as the compaction call)
    helper = Session(rng, sid, cwd, "2.1.90", s.t, agent_id="acompact-9f8e7d")
    helper.prompt("Your task is to create a detailed summary of the conversation so far.")
    helper.call([{"type": "text", "text": "<summary>" + helper.words(120) + "</summary>"}])
    sub_dir.mkdir(parents=True, exist_ok=True)
    (sub_dir / "agent-acompact-9f8e7d.jsonl").write_text(helper.text(), encoding="utf-8")
    s.subagents["acompact-9f8e7d"] = {
        "rows": [r.uuid for r in helper.rows],
        "usage": helper.usage,
        "tool_use_id": None,
        "parent_agent_id": None,
    }
    for _ in range(5):
        s.turn(rng.randint(1, 3))
    s.microcompact(2)
    for _ in range(3):
        s.turn(rng.randint(1, 2))
    s.abandoned_branch()
    s.turn(2, "Go back to the first approach instead, " + s.words(6))
    s.turn(2)
    s.compact("manual", preserve_last=4, focus="keep the upload test plan")
    for _ in range(4):
        s.turn(rng.randint(1, 3))
    # a second compaction in one process re-appends earlier history (same uuids and parents)
    s.lines.extend(s.lines[1:9])
    s.compact("auto", preserve_last=2)
    for _ in range(3):
        s.turn(rng.randint(1, 2))
    body = s.text()
    half = _dump(s.env("progress", s.tip) | {"data": {"type": "hook_progress"}})
    body += half[: len(half) // 2]  # the session is still being written
    proj.mkdir(parents=True, exist_ok=True)
    (proj / f"{sid}.jsonl").write_text(body, encoding="utf-8")
    truth = s.truth(f"{sid}.jsonl", 1, ["truncated_last_line"])
    (proj / f"{sid}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")


def _legacy_session(out: Path, rng: random.Random) -> None:
    cwd = "/home/user/src/cli-tool"
    proj = out / "projects" / "-home-user-src-cli-tool"
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    s = Session(rng, sid, cwd, "1.0.98", 1771000000000, model="claude-opus-4-1-20250805")
    s.lines.append(_dump({"type": "summary", "summary": "CLI flags refactor", "leafUuid": None}))
    for _ in range(5):
        s.turn(rng.randint(1, 3))
    _spawn(s, proj / sid / "subagents", "legacy01", "grep the flags", 2, rng, legacy=True)
    s.call([{"type": "text", "text": s.words(30)}])
    s.abandoned_branch()
    for _ in range(3):
        s.turn(rng.randint(1, 3))
    s.compact("auto", minimal=True)
    for _ in range(4):
        s.turn(rng.randint(1, 3))
    proj.mkdir(parents=True, exist_ok=True)
    (proj / f"{sid}.jsonl").write_text(s.text(), encoding="utf-8")
    truth = s.truth(f"{sid}.jsonl", 0, [])
    (proj / f"{sid}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")


def write_samples(outdir: str | Path, seed: int = 20260301) -> Path:
    """Write the sample tree under ``<outdir>/claude-code``; returns that folder."""
    out = Path(outdir) / "claude-code"
    rng = random.Random(seed)
    _main_session(out, rng)
    _legacy_session(out, rng)
    return out


if __name__ == "__main__":
    print(write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"))
