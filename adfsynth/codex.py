"""Seeded simulator of OpenAI Codex CLI rollouts, with ground truth.

Writes ``<out>/codex/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl`` (and one
``.jsonl.zst``), each with ``<name>.truth.json`` beside it: rows in order (line of each row's first
item), roles, kind hints, rolled-back rows, usage totals (the sum of every real call's
``last_token_usage``), and per compaction its trigger, swept and preserved rows, summary line,
prompt sizes before/after and window size. The truth is the simulator's own state, not a re-read.
Independent of adfkit. Same seed, same bytes.

Run: ``python adfsynth/codex.py sample_agents/``
"""

from __future__ import annotations

import json
import random
import sys
import uuid as uuidlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import zstandard

WORDS = [
    "rollout",
    "parser",
    "window",
    "token",
    "budget",
    "shell",
    "patch",
    "plan",
    "test",
    "build",
    "lint",
    "module",
    "crate",
    "function",
    "struct",
    "trait",
    "error",
    "result",
    "config",
    "cache",
    "index",
    "stream",
    "buffer",
    "merge",
    "branch",
]
BASE_TOKENS = 9_500  # instructions + tools
RESULT_SCALE = 25  # tool outputs are stored shortened; they count this many times in the prompt
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. You also have access to the state of the tools that were used by that "
    "language model. Use this to build on the work that has already been done and avoid "
    "duplicating work. Here is the summary produced by the other language model, use the "
    "information in this summary to assist with your own analysis:"
)


def _iso(ms: int) -> str:
    d = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@dataclass
class _Row:
    line: int
    role: str
    hint: str | None
    text: str
    size: int
    item: dict[str, Any] | None = None  # the message item, for replacement histories
    prompt: bool = False


class Rollout:
    def __init__(
        self, rng: random.Random, cwd: str, t0: int, model: str, window: int = 272_000
    ) -> None:
        self.rng = rng
        self.sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
        self.cwd = cwd
        self.t = t0
        self.t0 = t0
        self.model = model
        self.ctx_window = window
        self.lines: list[str] = []
        self.window: list[_Row] = []
        self.rows: list[_Row] = []
        self.branch_rows: list[_Row] = []
        self.total = {"input": 0, "cached": 0, "output": 0, "reasoning": 0, "total": 0}
        self.usage = {"input": 0, "output": 0, "cache_read": 0, "reasoning": 0}
        self.last_prompt = 0
        self.last_input: int | None = None
        self.compactions: list[dict[str, Any]] = []
        self.rewinds: list[list[int]] = []
        self.awaiting: list[dict[str, Any]] = []
        self.turn_rows: list[int] = []

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def rec(self, type_: str, payload: dict[str, Any]) -> int:
        self.t += self.rng.randint(30, 2500)
        line = {"timestamp": _iso(self.t), "type": type_, "payload": payload}
        self.lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
        return len(self.lines)

    def add(self, row: _Row) -> _Row:
        self.rows.append(row)
        self.window.append(row)
        return row

    # -- structure ---------------------------------------------------------------------------

    def start(self, cli_version: str) -> None:
        self.rec(
            "session_meta",
            {
                "id": self.sid,
                "timestamp": _iso(self.t),
                "cwd": self.cwd,
                "originator": "codex_cli_rs",
                "cli_version": cli_version,
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent. " + self.words(40)},
                "git": {"commit_hash": "0" * 40, "branch": "main"},
            },
        )
        self.context(
            "developer",
            "<permissions instructions>Filesystem sandboxing: workspace-write."
            "</permissions instructions>",
        )
        self.context(
            "user",
            f"# AGENTS.md instructions for {self.cwd}\n\n<INSTRUCTIONS>\n"
            f"Run cargo test before committing. {self.words(20)}\n</INSTRUCTIONS>",
        )
        self.context(
            "user",
            f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n"
            "</environment_context>",
        )

    def context(self, role: str, text: str) -> None:
        item = {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
        line = self.rec("response_item", item)
        self.add(_Row(line, "user", "context", text, len(text) // 4, item))

    def turn_context(self) -> None:
        self.rec(
            "turn_context",
            {
                "turn_id": str(self.rng.getrandbits(32)),
                "cwd": self.cwd,
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write"},
                "model": self.model,
                "effort": "medium",
                "summary": "auto",
            },
        )

    def task_started(self) -> None:
        self.rec(
            "event_msg",
            {"type": "task_started", "turn_id": "t", "model_context_window": self.ctx_window},
        )

    def task_complete(self, last: str) -> None:
        self.rec("event_msg", {"type": "task_complete", "turn_id": "t", "last_agent_message": last})

    def prompt(self, text: str) -> _Row:
        item = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }
        line = self.rec("response_item", item)
        self.rec("event_msg", {"type": "user_message", "message": text, "images": []})
        row = self.add(_Row(line, "user", None, text, len(text) // 4 + 4, item, prompt=True))
        self.turn_rows.append(line)
        return row

    def token_count(self, usage: dict[str, int] | None) -> None:
        if usage is not None:
            for k in ("input", "cached", "output", "reasoning", "total"):
                self.total[k] += usage[k]
        info = {
            "total_token_usage": self._u(self.total),
            "last_token_usage": self._u(
                usage or {"input": 0, "cached": 0, "output": 0, "reasoning": 0, "total": 0}
            ),
            "model_context_window": self.ctx_window,
        }
        self.rec(
            "event_msg",
            {
                "type": "token_count",
                "info": info,
                "rate_limits": {"primary": {"used_percent": 12.0}},
            },
        )

    @staticmethod
    def _u(u: dict[str, int]) -> dict[str, int]:
        return {
            "input_tokens": u["input"],
            "cached_input_tokens": u["cached"],
            "output_tokens": u["output"],
            "reasoning_output_tokens": u["reasoning"],
            "total_tokens": u["total"],
        }

    def _usage(self, out: int, reasoning: int) -> dict[str, int]:
        prompt = BASE_TOKENS + sum(r.size for r in self.window)
        cached = min(self.last_prompt, prompt) // 64 * 64
        u = {
            "input": prompt,
            "cached": cached,
            "output": out,
            "reasoning": reasoning,
            "total": prompt + out,
        }
        self.usage["input"] += prompt
        self.usage["output"] += out
        self.usage["cache_read"] += cached
        self.usage["reasoning"] += reasoning
        self.last_prompt = prompt + out
        self.last_input = prompt
        for ev in self.awaiting:
            ev["tokens_after"] = prompt
        self.awaiting.clear()
        return u

    def call(self, tools: list[tuple[str, str, dict[str, Any] | str]], final: str | None) -> _Row:
        """One model call: reasoning, optional message, tool calls; then its token_count."""
        self.turn_context()
        reasoning = self.words(self.rng.randint(8, 30))
        first = self.rec(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "**" + reasoning + "**"}],
                "content": None,
                "encrypted_content": "gAAAA" + "x" * 60,
            },
        )
        self.rec("event_msg", {"type": "agent_reasoning", "text": reasoning})
        size = len(reasoning) // 4
        text = ""
        if final is not None:
            self.rec(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": final}],
                    "phase": "final_answer",
                },
            )
            self.rec("event_msg", {"type": "agent_message", "message": final})
            size += len(final) // 4
            text = final
        for call_id, name, args in tools:
            if name == "apply_patch":
                self.rec(
                    "response_item",
                    {
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call_id,
                        "name": name,
                        "input": args,
                    },
                )
            else:
                self.rec(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": name,
                        "arguments": json.dumps(args),
                        "call_id": call_id,
                    },
                )
            size += len(json.dumps(args)) // 4
        row = self.add(_Row(first, "assistant", None, text, size + 12))
        u = self._usage(size + self.rng.randint(20, 300), len(reasoning) // 4)
        self.token_count(u)
        if self.rng.random() < 0.25:
            self._repeat_token_count()
        return row

    def _repeat_token_count(self) -> None:
        info = {
            "total_token_usage": self._u(self.total),
            "last_token_usage": self._u(
                {
                    "input": self.last_input or 0,
                    "cached": 0,
                    "output": 1,
                    "reasoning": 0,
                    "total": 1,
                }
            ),
            "model_context_window": self.ctx_window,
        }
        self.rec(
            "event_msg",
            {
                "type": "token_count",
                "info": info,
                "rate_limits": {"primary": {"used_percent": 12.5}},
            },
        )

    def output(self, call_id: str, name: str, text: str) -> None:
        if name == "apply_patch":
            line = self.rec(
                "response_item",
                {"type": "custom_tool_call_output", "call_id": call_id, "output": text},
            )
        else:
            out = json.dumps(
                {"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.4}}
            )
            line = self.rec(
                "response_item", {"type": "function_call_output", "call_id": call_id, "output": out}
            )
        self.add(_Row(line, "user", None, text, len(text) // 4 * RESULT_SCALE + 6))

    def tool(self) -> tuple[str, str, dict[str, Any] | str]:
        cid = f"call_{self.rng.getrandbits(64):016x}"
        kind = self.rng.choice(("shell", "shell", "shell", "apply_patch", "update_plan"))
        if kind == "shell":
            cmd = self.rng.choice(("rg -n ", "sed -n 1,80p src/", "cargo test -q ", "ls "))
            return (
                cid,
                "shell",
                {
                    "command": ["bash", "-lc", cmd + self.rng.choice(WORDS)],
                    "workdir": self.cwd,
                    "timeout_ms": 120000,
                },
            )
        if kind == "apply_patch":
            f = f"src/{self.rng.choice(WORDS)}.rs"
            return (
                cid,
                "apply_patch",
                (
                    f"*** Begin Patch\n*** Update File: {f}\n@@\n-{self.words(4)}\n"
                    f"+{self.words(5)}\n*** End Patch\n"
                ),
            )
        return (
            cid,
            "update_plan",
            {
                "plan": [
                    {"step": self.words(4), "status": "in_progress"},
                    {"step": self.words(3), "status": "pending"},
                ]
            },
        )

    def tool_output(self, name: str) -> str:
        if name == "apply_patch":
            return "Success. Updated the following files:\nM src/" + self.rng.choice(WORDS) + ".rs"
        if name == "update_plan":
            return "Plan updated"
        return "\n".join(
            f"src/{self.rng.choice(WORDS)}.rs:{self.rng.randint(1, 500)}: {self.words(8)}"
            for _ in range(self.rng.randint(5, 30))
        )

    def turn(
        self, n_calls: int, text: str | None = None, *, compact_mid: str | None = None
    ) -> None:
        self.task_started()
        self.turn_context()
        self.prompt(text or f"{self.words(self.rng.randint(6, 18)).capitalize()}.")
        for i in range(n_calls):
            tools = [self.tool() for _ in range(self.rng.choice((1, 1, 2)))]
            self.call(tools, None)
            if self.rng.random() < 0.3:
                self.rec(
                    "response_item",
                    {
                        "type": "ghost_snapshot",
                        "ghost_commit": {"id": f"{self.rng.getrandbits(64):016x}", "parent": None},
                    },
                )
            for cid, name, _ in tools:
                self.output(cid, name, self.tool_output(name))
            if compact_mid and i == n_calls // 2:
                if compact_mid == "remote":
                    self.compact_remote()
                else:
                    self.compact_local(replacement=compact_mid == "local-replacement")
        final = self.words(self.rng.randint(15, 45))
        self.call([], final)
        self.task_complete(final)

    # -- compaction and rollback --------------------------------------------------------------

    def _summarize_call(self) -> dict[str, int]:
        self.turn_context()
        return self._usage(self.rng.randint(400, 900), self.rng.randint(50, 200))

    def compact_local(self, *, replacement: bool, manual: bool = False) -> None:
        if manual:
            self.task_started()
        usage = self._summarize_call()
        before = self.last_input
        self.token_count(usage)
        summary = SUMMARY_PREFIX + "\n" + self.words(120)
        kept_ctx = [r for r in self.window if r.hint == "context"]
        kept_users = [r for r in self.window if r.prompt]
        payload: dict[str, Any] = {"message": summary}
        if replacement:
            hist = [r.item for r in kept_ctx + kept_users]
            hist.append(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": summary}],
                }
            )
            payload["replacement_history"] = hist
        line = self.rec("compacted", payload)
        self.rec("event_msg", {"type": "context_compacted"})
        preserved = kept_ctx + kept_users
        self._after_compaction(
            line, "manual" if manual else "auto", preserved, before, summary, usage
        )
        if manual:
            self.turn_context()
            self.task_complete("")

    def compact_remote(self) -> None:
        before = self.last_input
        kept_ctx = [r for r in self.window if r.hint == "context"]
        kept_users = [r for r in self.window if r.prompt]
        answers = [r for r in self.window if r.role == "assistant" and r.text][-1:]
        hist = [r.item for r in kept_ctx + kept_users]
        hist += [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": r.text}],
            }
            for r in answers
        ]
        hist.append({"type": "compaction", "encrypted_content": "gAAAAB" + "y" * 80})
        line = self.rec("compacted", {"message": "", "replacement_history": hist})
        self.rec("event_msg", {"type": "context_compacted"})
        self._after_compaction(line, "auto", kept_ctx + kept_users + answers, before, "", None)

    def _after_compaction(
        self,
        line: int,
        trigger: str,
        preserved: list[_Row],
        before: int | None,
        summary: str,
        usage: dict[str, int] | None,
    ) -> None:
        swept = [r for r in self.window if r not in preserved]
        srow = _Row(line, "user", "compaction_summary", summary, len(summary) // 4 + 40)
        self.rows.append(srow)
        self.window = [*preserved, srow]
        ev = {
            "trigger": trigger,
            "summary": line,
            "swept": sorted(r.line for r in swept),
            "preserved": sorted(r.line for r in preserved),
            "tokens_before": before,
            "tokens_after": None,
            "context_window": self.ctx_window,
            "summary_tokens": None
            if usage is None
            else {
                "input": usage["input"],
                "output": usage["output"],
                "cache_read": usage["cached"],
                "reasoning": usage["reasoning"],
            },
        }
        self.compactions.append(ev)
        self.awaiting.append(ev)
        self.last_prompt = 0

    def rolled_back_turn(self) -> None:
        """A turn the user then rolls back (Esc Esc): its rows leave the context."""
        keep_window, keep_n, keep_last = list(self.window), len(self.rows), self.last_prompt
        self.turn(1, "Actually, try rewriting the " + self.words(4))
        gone = self.rows[keep_n:]
        self.rec("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
        self.branch_rows.extend(gone)
        self.rewinds.append([r.line for r in gone])
        del self.rows[keep_n:]
        self.window = keep_window
        self.last_prompt = keep_last

    def truth(self, file: str, n_warnings: int, findings: list[str]) -> dict[str, Any]:
        return {
            "file": file,
            "session_id": self.sid,
            "n_warnings": n_warnings,
            "rows": [r.line for r in self.rows],
            "roles": [r.role for r in self.rows],
            "kind_hints": [r.hint for r in self.rows],
            "other_branches": [r.line for r in self.branch_rows],
            "usage": self.usage,
            "final_total": self.total,
            "n_compactions": len(self.compactions),
            "compactions": self.compactions,
            "rewinds": self.rewinds,
            "finding_checks": findings,
        }

    def name(self) -> str:
        d = datetime.fromtimestamp(self.t0 / 1000, tz=UTC)  # the samples' "local time" is UTC
        return f"rollout-{d.strftime('%Y-%m-%dT%H-%M-%S')}-{self.sid}.jsonl"

    def folder(self, out: Path) -> Path:
        d = datetime.fromtimestamp(self.t0 / 1000, tz=UTC)
        return out / "sessions" / d.strftime("%Y") / d.strftime("%m") / d.strftime("%d")


def _main(out: Path, rng: random.Random) -> None:
    r = Rollout(rng, "/home/user/src/tracer", 1773479553000, "gpt-5.1-codex")
    r.start("0.77.0")
    for _ in range(5):
        r.turn(rng.randint(1, 4))
    r.turn(5, "Now refactor the " + r.words(3), compact_mid="local-replacement")  # auto, mid-turn
    for _ in range(3):
        r.turn(rng.randint(1, 3))
    r.compact_local(replacement=True, manual=True)  # /compact
    for _ in range(3):
        r.turn(rng.randint(1, 3))
    r.rolled_back_turn()
    for _ in range(2):
        r.turn(rng.randint(1, 3))
    r.turn(4, "Keep going with " + r.words(3), compact_mid="remote")  # after the rollback
    for _ in range(3):
        r.turn(rng.randint(1, 3))
    # a local estimate: zero last usage, nonzero total (not a model call)
    info = {
        "total_token_usage": r._u(r.total),
        "last_token_usage": {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": 250000,
        },
        "model_context_window": r.ctx_window,
    }
    r.rec("event_msg", {"type": "token_count", "info": info, "rate_limits": None})
    folder = r.folder(out)
    folder.mkdir(parents=True, exist_ok=True)
    body = "\n".join(r.lines) + "\n"
    tail = json.dumps(
        {
            "timestamp": _iso(r.t + 10),
            "type": "response_item",
            "payload": {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": r.words(20)}],
            },
        }
    )
    body += tail[: len(tail) // 2]  # still being written
    (folder / r.name()).write_text(body, encoding="utf-8")
    truth = r.truth(r.name(), 1, ["truncated_last_line"])
    (folder / r.name().replace(".jsonl", ".truth.json")).write_text(
        json.dumps(truth, indent=1) + "\n"
    )


def _compressed(out: Path, rng: random.Random) -> None:
    r = Rollout(rng, "/home/user/src/webui", 1773570000000, "gpt-5-codex", window=200_000)
    r.start("0.64.0")
    for _ in range(4):
        r.turn(rng.randint(1, 3))
    r.turn(4, "Fix the build " + r.words(3), compact_mid="local")  # old style: message only
    for _ in range(3):
        r.turn(rng.randint(1, 3))
    folder = r.folder(out)
    folder.mkdir(parents=True, exist_ok=True)
    raw = ("\n".join(r.lines) + "\n").encode()
    data = zstandard.ZstdCompressor(level=10, write_checksum=True).compress(raw)
    (folder / (r.name() + ".zst")).write_bytes(data)
    truth = r.truth(r.name() + ".zst", 0, [])
    (folder / r.name().replace(".jsonl", ".truth.json")).write_text(
        json.dumps(truth, indent=1) + "\n"
    )


def write_samples(outdir: str | Path, seed: int = 20260314) -> Path:
    """Write the sample rollouts under ``<outdir>/codex``; returns that folder."""
    out = Path(outdir) / "codex"
    rng = random.Random(seed)
    _main(out, rng)
    _compressed(out, rng)
    return out


if __name__ == "__main__":
    print(write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"))
