"""Seeded simulator of Claude Code session transcripts, with ground truth.

Writes a ``projects``-like tree (``<out>/claude-code/projects/<encoded-cwd>/<session>.jsonl``, its
``<session>/subagents/agent-*.jsonl`` + ``.meta.json``, a legacy ``agent-*.jsonl``) and, beside
each main session, ``<session>.truth.json``: the rows in conversation order (first-record uuids),
roles, kind hints, abandoned branches, usage totals, every compaction's trigger, preTokens, swept
and preserved rows, summary and the prompt sizes before/after, microcompactions, rewinds and
subagents; every API call (its block records written, tool_use ids, the usage it counts: the
last *written* block record's), the chain gaps (a link to a record never written that the
conversation goes on through: line, and the line of the user/assistant record before it in file
order) and mid-file roots. The truth is what the simulator *did* (its own context-window
state), not a re-read of the file. Independent of adfkit (imports nothing from it). Same seed,
same bytes.

Shapes from real files (TRANSCRIPTS.md §0, fixtures README "Observed in real files"): parallel
tool calls with the later block records on a side branch (2.1.1+, D1/D3) and block records
interleaved with tool results (2.1.25+, D5); Stop hooks (hook_progress -> stop_hook_summary ->
turn_duration, the next prompt's parent) and a final block record never written that the Stop
hook points at (``turn(stop_gap=True)``, D7); a boundary whose ``logicalParentUuid`` was never
written, with a hook_progress off it just before (``compact(dangling=True)``, D5) or after a
microcompaction (D4); microcompactions as D4/D11 write them; the 1.0.x compaction, a summary
root with no boundary, after a "N% context left until auto-compact" line (``old_compact``).

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
#: A microcompaction clears tool results larger than this many tokens (the real ones clear big
#: reads and command outputs: D4 saved 38,535 tokens over 29 results).
MICRO_MIN = 400
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
        self.last_call_total: int | None = None  # its input (cache included) + output as written
        self.compactions: list[dict[str, Any]] = []
        self.micro: list[dict[str, Any]] = []
        self.rewinds: list[list[str]] = []
        self.pending_after: dict[str, Any] | None = None
        self.result_rows: dict[str, _Row] = {}
        self.n_msg = 0
        self.subagents: dict[str, dict[str, Any]] = {}
        self.written: dict[str, dict[str, Any]] = {}
        #: Stop hooks configured: every turn ends hook_progress -> stop_hook_summary ->
        #: turn_duration, and the next prompt hangs off turn_duration (2.1.x, D6, D7)
        self.stop_hooks = False
        self.api_calls: list[dict[str, Any]] = []  # one per API call: records written, usage kept
        self.block_of: dict[str, str] = {}  # tool_use id -> uuid of its block record
        self.gaps: list[dict[str, Any]] = []  # links to records never written (chain gaps)
        self.new_roots: list[dict[str, Any]] = []
        self.last_ua_line = 0  # line of the last user/assistant record written
        self.unwritten: str | None = None  # uuid of the last call's unwritten final block record
        #: (the record the next one must hang off, the gap) after a Stop hook that points at an
        #: unwritten record: a gap on the chain only if the conversation goes on through it
        self.pending_gap: tuple[str, dict[str, Any]] | None = None

    # -- primitives --------------------------------------------------------------------------

    def uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self, lo: int = 200, hi: int = 4000) -> int:
        self.t += self.rng.randint(lo, hi)
        return self.t

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def link(self, parent: str | None) -> None:
        """A record is written off ``parent``: a pending gap is on the chain when it is the
        record the gap's hook chain ends at, and off it (not walked) otherwise."""
        g = self.pending_gap
        if g is not None:
            self.pending_gap = None
            if parent == g[0]:
                self.gaps.append(g[1])

    def env(self, type_: str, parent: str | None, uid: str | None = None) -> dict[str, Any]:
        self.link(parent)
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

    def since(self, version: str) -> bool:
        """The session's Claude Code version is ``version`` or later."""

        def key(v: str) -> tuple[int, ...]:
            return tuple(int(x) for x in v.split("."))

        return key(self.version) >= key(version)

    def emit(self, rec: dict[str, Any]) -> dict[str, Any]:
        self.lines.append(_dump(rec))
        if rec.get("type") in ("user", "assistant"):
            self.last_ua_line = len(self.lines)
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

    def hook(self, parent: str, event: str, name: str, tool_use_id: str | None = None) -> str:
        """A ``hook_progress`` record (PostToolUse, Stop, SessionStart...) off ``parent``."""
        tid = tool_use_id or self.uuid()
        r = self.env("progress", parent)
        r["data"] = {
            "type": "hook_progress",
            "hookEvent": event,
            "hookName": name,
            "command": "entire hooks claude-code " + event.lower(),
        }
        r["parentToolUseID"] = tid
        r["toolUseID"] = tid
        self.emit(r)
        return str(r["uuid"])

    def end_turn(self, unwritten: str | None = None) -> None:
        """What follows a turn's last response: with Stop hooks, hook_progress (off the final
        block record, or off ``unwritten``, a final block record never written) ->
        stop_hook_summary -> turn_duration, the next prompt's parent; else turn_duration aside."""
        if not self.stop_hooks:
            self.system("turn_duration", durationMs=self.rng.randint(2000, 90000), isMeta=False)
            return
        assert self.tip is not None
        parent = unwritten or self.tip
        at = len(self.lines) + 1
        h = self.hook(parent, "Stop", "Stop")
        gap = {"field": "parentUuid", "line": at, "continued_from_line": self.last_ua_line}
        self.tip = h
        r = self.system(
            "stop_hook_summary",
            hookCount=1,
            hookInfos=[{"command": "entire hooks claude-code stop"}],
            hookErrors=[],
            preventedContinuation=False,
            stopReason="",
            hasOutput=False,
        )
        self.tip = r["uuid"]
        r = self.system("turn_duration", durationMs=self.rng.randint(2000, 90000), isMeta=False)
        self.tip = r["uuid"]
        if unwritten is not None:
            self.pending_gap = (r["uuid"], gap)

    def call(
        self,
        blocks: list[dict[str, Any]],
        *,
        out_tokens: int | None = None,
        splice_results: dict[str, str] | None = None,
        unwritten_last: bool = False,
        shape: str = "plain",
    ) -> _Row:
        """One API call written as one record per content block (same message.id), each block
        record the child of the one before. ``splice_results``: tool outputs by tool_use id, each
        written right after its block record and the next block record hangs off it (block
        records interleaved with tool_result records, 2.1.25+; TRANSCRIPTS.md §0 3).
        ``unwritten_last``: the final block record is never written (2.1.23-2.1.29, D7); its uuid
        is ``self.unwritten`` and the call's usage is the last *written* block record's."""
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
        written: list[str] = []
        counted = out
        self.unwritten = None
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
            if last and unwritten_last:
                self.unwritten = r["uuid"]  # the Stop hook will point at it
                break
            self.emit(r)
            counted = partial
            written.append(r["uuid"])
            self.tip = r["uuid"]
            if b["type"] == "tool_use":
                self.block_of[b["id"]] = r["uuid"]
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
                # the tool ran while the next block streamed: its result comes between them
                if self.since("2.1.25") and self.rng.random() < 0.5:
                    self.hook(r["uuid"], "PostToolUse", f"PostToolUse:{b['name']}", b["id"])
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
                res["sourceToolAssistantUUID"] = r["uuid"]
                spliced.append((b["id"], res["uuid"]))
                self.emit(res)
                self.tip = res["uuid"]
        assert row is not None
        self.usage["input"] += prompt
        self.usage["output"] += counted
        self.usage["cache_read"] += cached
        self.usage["cache_write"] += cache_write
        self.api_calls.append(
            {
                "uuid": row.uuid,
                "message_id": mid,
                "records": written,
                "tool_use_ids": [b["id"] for b in blocks if b["type"] == "tool_use"],
                "input": prompt,
                "output": counted,
                "cache_read": cached,
                "cache_write": cache_write,
                "shape": "final_unwritten" if unwritten_last else shape,
            }
        )
        self.last_prompt = prompt + out
        self.last_call_prompt = prompt
        self.last_call_total = prompt + counted
        if self.pending_after is not None:
            self.pending_after["tokens_after"] = prompt
            self.pending_after = None
        for tid, ruid in spliced:
            rrow = _Row(ruid, "user", None, len(splice_results[tid]) // 4 * RESULT_SCALE + 8)  # type: ignore[index]
            rrow.uuids.append(ruid)
            self.add_row(rrow)
            self.result_rows[tid] = rrow
        return row

    def side_results(self, items: list[tuple[str, str, bool]]) -> None:
        """Parallel tool calls as real 2.x files write them (TRANSCRIPTS.md §0 3, D1, D3): each
        result hangs off its own tool_use block record; the later tools' results come first and
        the first tool's result last, and the conversation goes on from that one, which leaves
        the later block records and their results on a side branch."""
        for tid, text, err in [*items[1:], items[0]]:
            src = self.block_of[tid]
            if self.rng.random() < 0.5:
                self.hook(src, "PostToolUse", "PostToolUse:Read", tid)
            self._result(src, src, tid, text, err)

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
            self._result(self.tip, fragment, tid, text, err)

    def _result(self, parent: str | None, source: str, tid: str, text: str, err: bool) -> None:
        """One tool result record (a row) hanging off ``parent``, for the call in ``source``."""
        r = self.env("user", parent)
        r["message"] = {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": err}
            ],
        }
        r["toolUseResult"] = {"stdout": text[:60], "stderr": "", "interrupted": False}
        r["sourceToolAssistantUUID"] = source
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

    def turn(
        self,
        n_calls: int,
        text: str | None = None,
        *,
        parallel: str | None = None,
        stop_gap: bool = False,
    ) -> None:
        """A prompt, then ``n_calls`` model calls using tools, then a final answer.

        A call with several tools is written, from 2.1.1 on, half the time as parallel calls
        on a side branch (``side_results``) or, from 2.1.25 on, with its block records
        interleaved with the results; ``parallel`` ("side", "interleaved") forces the first
        call of the turn into that shape (with two or three tools). ``stop_gap``: the final
        answer's last block record is never written and the Stop hook points at it (D7)."""
        self.prompt(text)
        for k in range(n_calls):
            forced = parallel if k == 0 else None
            n_tools = self.rng.choice((2, 3) if forced else (1, 1, 2, 3))
            names = [self.rng.choice(TOOLS) for _ in range(n_tools)]
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
            shape = forced or "plain"
            draw = self.rng.random()
            if forced is None and len(calls) > 1 and self.since("2.1.1") and draw < 0.5:
                shape = "interleaved" if draw < 0.25 and self.since("2.1.25") else "side"
            splice = {}
            if shape == "interleaved":
                splice = {t: self.tool_output(n) for t, n in calls[:-1]}
            self.call(blocks, splice_results=splice, shape=shape)
            rest = [
                (t, self.tool_output(n), self.rng.random() < 0.08)
                for t, n in calls
                if t not in splice
            ]
            if shape == "side":
                self.side_results(rest)
            else:
                self.results(rest, through_progress=self.rng.random() < 0.5)
        final: list[dict[str, Any]] = [
            {"type": "text", "text": self.words(self.rng.randint(20, 60))}
        ]
        if stop_gap:
            final.insert(0, {"type": "thinking", "thinking": self.words(20), "signature": "EqB"})
        self.call(final, unwritten_last=stop_gap)
        if not self.side:
            self.end_turn(self.unwritten if stop_gap else None)
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
        dangling: bool = False,
        hook_first: bool = True,
        referenced: bool = False,
    ) -> None:
        """A compaction with a ``compact_boundary``. ``dangling``: its ``logicalParentUuid``
        names a uuid never written (2.1.17-2.1.42, TRANSCRIPTS.md §0 1, D4-D6); with
        ``hook_first`` a PostToolUse ``hook_progress`` off that same uuid comes just before the
        boundary (D5). ``referenced`` (with ``preserve_last``): the preserved segment is kept
        by reference, as Claude Code 2.1.217 writes a ``/compact`` (RECORDING.md): a
        ``preservedSegment`` (head, anchor: the summary, tail), no copy written after the
        summary, and the next record hangs off the segment's last record, written before the
        boundary (a walk back from the end never meets the boundary)."""
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
        if preserved and referenced:
            md["preservedSegment"] = {
                "headUuid": preserved[0].uuids[0],
                "anchorUuid": None,
                "tailUuid": preserved[-1].uuids[-1],
            }
        elif preserved:
            md["preservedMessages"] = {
                "anchorUuid": None,
                "uuids": [u for r in preserved for u in r.uuids],
            }
        logical = self.tip
        if not dangling:
            self.link(logical)  # the walk goes on from the boundary to its logical parent
        if dangling:
            logical = self.uuid()  # never written
            if hook_first:
                self.hook(logical, "PostToolUse", "PostToolUse:Bash")
            self.gaps.append(
                {
                    "field": "logicalParentUuid",
                    "line": len(self.lines) + 1,  # the boundary's
                    "continued_from_line": self.last_ua_line,
                }
            )
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
            kept = md["preservedSegment"] if referenced else md["preservedMessages"]
            kept["anchorUuid"] = s["uuid"]
        if not minimal:
            md["postTokens"] = len(summary_text) // 4 + sum(r.size for r in preserved)
        self.emit(b)
        self.emit(s)
        srow = _Row(s["uuid"], "user", "compaction_summary", len(summary_text) // 4)
        srow.uuids.append(s["uuid"])
        self.rows.append(srow)
        self.tip = s["uuid"]
        if preserved and referenced:  # 2.1.217: what comes next hangs off the segment's tail
            self.tip = preserved[-1].uuids[-1]
        # preserved records are written again under the summary, same uuids
        elif preserved:
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
            "form": "boundary",
            "logical_parent_written": not dangling,
            "trigger": trigger,
            "pre_tokens": pre,
            "post_tokens": md.get("postTokens"),
            "swept": [r.uuid for r in swept],
            "preserved": [r.uuid for r in preserved],
            "summary": s["uuid"],
            "tokens_before": before,
            "trigger_tokens": self.last_call_total,
            "tokens_after": None,
        }
        if referenced:  # only then: the committed samples' truth stays as it was
            ev["preserved_by_reference"] = bool(preserved)
        self.compactions.append(ev)
        self.pending_after = ev
        self.last_prompt = 0  # the cache does not survive a compaction
        if trigger == "manual":
            self.user(
                "<local-command-stdout>Compacted. ctrl+o to see full summary"
                "</local-command-stdout>",
                hint="context",
            )

    def old_compact(self, warn_pct: int | None = None) -> None:
        """A compaction as Claude Code 1.0.x wrote it (TRANSCRIPTS.md §0 2): no boundary, a
        ``user`` record with ``isCompactSummary`` and ``parentUuid: null``, the next prompt its
        child; ``warn_pct``: a system line "N% context left until auto-compact" before it."""
        self.pending_gap = None  # the walk bridges from the summary in file order, not via it
        if warn_pct is not None:
            w = self.env("system", self.tip)
            w.update(
                {
                    "content": f"{warn_pct}% context left until auto-compact",
                    "isMeta": False,
                    "level": "warning",
                }
            )
            self.emit(w)
        swept = list(self.window)
        summary_text = SUMMARY_PREFIX + "Summary:\n1. " + self.words(70) + "\n2. " + self.words(50)
        s = self.env("user", None)
        s["message"] = {"role": "user", "content": summary_text}
        s["isCompactSummary"] = True
        self.emit(s)
        self.new_roots.append({"line": len(self.lines), "kind": "compaction"})
        srow = _Row(s["uuid"], "user", "compaction_summary", len(summary_text) // 4)
        srow.uuids.append(s["uuid"])
        self.rows.append(srow)
        self.tip = s["uuid"]
        self.window = [srow]
        ev = {
            "form": "summary_root",
            "logical_parent_written": True,
            "trigger": None,
            "pre_tokens": None,
            "post_tokens": None,
            "swept": [r.uuid for r in swept],
            "preserved": [],
            "summary": s["uuid"],
            "tokens_before": self.last_call_prompt,
            "trigger_tokens": self.last_call_total,
            "tokens_after": None,
        }
        self.compactions.append(ev)
        self.pending_after = ev
        self.last_prompt = 0

    def microcompact(self, n: int) -> None:
        """A ``microcompact_boundary`` clearing the oldest ``n`` large tool results in the window
        (over ``MICRO_MIN`` tokens), as D4 and D11 write it: auto, ``preTokens`` = the tokens of
        the tool results in the window, ``tokensSaved`` = those of the cleared ones (measured on
        D4 and D11: preTokens 58,573 / 78,208 / 65,408 against 65,001 / 83,124 / 71,094 result
        characters / 4; tokensSaved 20,801 / 38,535 / 27,012 against 23,222 / 39,225 / 29,012),
        ``compactedToolIds`` (the oldest: 11 of 45, 29 and 37 of 87), ``clearedAttachmentUUIDs``."""
        big = [r for r in self.result_rows.values() if r in self.window and r.size > MICRO_MIN]
        cands = big[:n]
        ids = [tid for tid, r in self.result_rows.items() if r in cands]
        saved = sum(r.size for r in cands) - 10 * len(cands)
        pre = sum(r.size for r in self.result_rows.values() if r in self.window)
        r = self.system(
            "microcompact_boundary",
            content="Context microcompacted",
            isMeta=False,
            microcompactMetadata={
                "trigger": "auto",
                "preTokens": pre,
                "tokensSaved": saved,
                "compactedToolIds": ids,
                "clearedAttachmentUUIDs": [],
            },
        )
        self.tip = r["uuid"]
        for row in cands:
            row.size = 10
        self.micro.append(
            {
                "swept": [row.uuid for row in cands],
                "trigger": "auto",
                "pre_tokens": pre,
                "tokens_saved": saved,
                "compacted_tool_ids": ids,
                "line": len(self.lines),
            }
        )

    def abandoned_branch(self) -> None:
        """A prompt and its answer, then the user rewinds to before the prompt."""
        fork_tip, fork_window, fork_rows = self.tip, list(self.window), len(self.rows)
        fork_last, fork_call = self.last_prompt, self.last_call_prompt
        fork_total = self.last_call_total
        n_calls = len(self.api_calls)
        self.turn(1, "Try the other approach: " + self.words(8))
        for c in self.api_calls[n_calls:]:
            c["branch"] = True  # made and paid for, on a branch the user left
        branch = self.rows[fork_rows:]
        self.branch_rows.extend(branch)
        self.rewinds.append([r.uuid for r in branch])
        del self.rows[fork_rows:]
        self.window = fork_window
        self.tip = fork_tip
        self.last_prompt, self.last_call_prompt = fork_last, fork_call
        self.last_call_total = fork_total

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
            "calls": self.api_calls,
            "chain_gaps": self.gaps,
            "new_roots": self.new_roots,
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
    s = Session(rng, sid, cwd, "2.1.29", 1772352000000)
    s.stop_hooks = True
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
    s.turn(2, parallel="side")
    s.turn(2, parallel="interleaved")
    for _ in range(4):
        s.turn(rng.randint(1, 3))
    s.attachment()
    _spawn(s, sub_dir, "a1b2c3d4", "find the upload handler", 3, rng, nested=("e5f6a7b8", 2))
    s.call([{"type": "text", "text": s.words(40)}])
    for _ in range(5):
        s.turn(rng.randint(1, 4))
    s.turn(2, stop_gap=True)  # the Stop hook points at a final block record never written
    s.turn(rng.randint(1, 4))
    # the boundary's logical parent is never written; a hook_progress off it comes first (D5)
    s.compact("auto", minimal=True, dangling=True)
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
    s.microcompact(4)
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
    s.microcompact(6)  # just before a boundary whose logical parent is never written (D4)
    s.compact("auto", preserve_last=2, dangling=True, hook_first=False)
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
    s.old_compact(warn_pct=8)  # 1.0.x: no boundary, a summary with no parent
    for _ in range(4):
        s.turn(rng.randint(1, 3))
    proj.mkdir(parents=True, exist_ok=True)
    (proj / f"{sid}.jsonl").write_text(s.text(), encoding="utf-8")
    truth = s.truth(f"{sid}.jsonl", 0, [])
    (proj / f"{sid}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")


def write_samples(outdir: str | Path, seed: int = 20260301) -> Path:
    """Write the sample tree under ``<outdir>/claude-code``; returns that folder."""
    out = Path(outdir) / "claude-code"
    _main_session(out, random.Random(seed))
    _legacy_session(out, random.Random(seed + 1))  # its own stream: the sessions vary apart
    return out


if __name__ == "__main__":
    print(write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"))
