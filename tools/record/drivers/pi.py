"""pi (``@mariozechner/pi-coding-agent``) against the Chat Completions dialect: a provider in
``~/.pi/agent/models.json`` (``api: "openai-completions"``) with a small ``contextWindow`` and
compaction settings that make pi compact after a turn of big reads; ``PI_OFFLINE=1``.

``pi --mode rpc`` is driven through JSON commands on stdin: a turn with parallel tool calls
and a write, a turn of big reads (pi compacts automatically when ``agent_end`` finds the
context above ``contextWindow - reserveTokens``), a turn after it, a manual compaction
(``{"type": "compact"}``); then a second process, ``pi --mode rpc --continue``, resumes the
session for a turn of big reads (a second automatic compaction) and one more turn. pi has no
subagent of its own (extensions only): none is recorded."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from ..drive import Context, Recorded, npm_install
from ..script import Scenario, Step, Want
from ..server import Recorder

AGENT = "pi"
PACKAGE = "@mariozechner/pi-coding-agent"
VERSION = "0.73.1"
MODEL = "rec-model"
#: pi compacts when the last call's tokens exceed ``CONTEXT_WINDOW - RESERVE``.
CONTEXT_WINDOW = 7500
RESERVE = 3000
KEEP_RECENT = 1500
#: pi's summarisation system prompt (``SUMMARIZATION_SYSTEM_PROMPT``, compaction/utils.js).
COMPACTION_MARKERS = ("You are a context summarization assistant.",)


def _filler(name: str, lines: int) -> str:
    line = "the quick brown fox jumps over the lazy dog"
    return "".join(f"{name} line {i:04d}: {line}\n" for i in range(lines))


def scenario(project: Path) -> Scenario:
    p = str(project)
    tasks = {
        "t1": [
            Step(
                "Reading both.",
                [
                    Want("shell", {"command": "cat notes.txt"}),
                    Want("read", {"path": f"{p}/app.py"}),
                ],
            ),
            Step(
                "Writing the test.",
                [
                    Want(
                        "write",
                        {
                            "path": f"{p}/test_app.py",
                            "content": "from app import greet\n\n\ndef test_greet():\n"
                            "    assert greet('x') == 'hello x'\n",
                        },
                    )
                ],
            ),
            Step("Added test_app.py for greet."),
        ],
        "t2": [
            Step("Reading the first log.", [Want("shell", {"command": "cat logs/big1.txt"})]),
            Step("Reading the second log.", [Want("read", {"path": f"{p}/logs/big2.txt"})]),
            Step("Both logs repeat one line."),
        ],
        "t3": [
            Step(
                "Checking.",
                [Want("read", {"path": f"{p}/notes.txt"}), Want("shell", {"command": "ls"})],
            ),
            Step("Notes still say to add a test; test_app.py is there."),
        ],
        "t4": [
            Step("Reading the third log.", [Want("shell", {"command": "cat logs/big3.txt"})]),
            Step("Reading the first log again.", [Want("read", {"path": f"{p}/logs/big1.txt"})]),
            Step("Done reading."),
        ],
        "t5": [
            Step("Listing.", [Want("shell", {"command": "ls logs"})]),
            Step("Three logs."),
        ],
    }
    return Scenario(tasks, compaction_markers=COMPACTION_MARKERS)


class Rpc:
    """One ``pi --mode rpc`` process: commands in, events and responses out (a reader thread
    puts each stdout line on a queue)."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.log = log
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            with self.log.open("a") as f:
                f.write(json.dumps({k: obj[k] for k in ("type", "command") if k in obj}) + "\n")
            self.lines.put(obj)

    def send(self, cmd: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def wait_for(self, pred: Any, timeout: float = 120) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("pi rpc: no expected event")
            obj = self.lines.get(timeout=left)
            if pred(obj):
                return obj

    def settle(self, quiet: float = 2.0, timeout: float = 120) -> None:
        """Wait until pi is quiet: a compaction it starts after ``agent_end`` runs to its
        ``compaction_end``."""
        end = time.monotonic() + timeout
        compacting = False
        while time.monotonic() < end:
            try:
                obj = self.lines.get(timeout=quiet)
            except queue.Empty:
                if not compacting:
                    return
                continue
            if obj.get("type") == "compaction_start":
                compacting = True
            elif obj.get("type") == "compaction_end":
                compacting = False
        raise TimeoutError("pi rpc: still busy")

    def prompt(self, text: str) -> None:
        self.send({"type": "prompt", "message": text})
        self.wait_for(lambda o: o.get("type") == "agent_end")
        self.settle()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def configure(ctx: Context, url: str) -> None:
    agent = ctx.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            "rec": {
                "baseUrl": url + "/v1",
                "api": "openai-completions",
                "apiKey": "dummy",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": MODEL,
                        "name": "Recorder model",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": CONTEXT_WINDOW,
                        "maxTokens": 1000,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            }
        }
    }
    settings = {
        "defaultProvider": "rec",
        "defaultModel": MODEL,
        "compaction": {
            "enabled": True,
            "reserveTokens": RESERVE,
            "keepRecentTokens": KEEP_RECENT,
        },
    }
    (agent / "models.json").write_text(json.dumps(models, indent=1))
    (agent / "settings.json").write_text(json.dumps(settings, indent=1))


def record(ctx: Context) -> Recorded:
    bin_dir = npm_install(ctx, PACKAGE, VERSION)
    ctx.fresh()
    logs = ctx.project / "logs"
    logs.mkdir()
    for i in (1, 2, 3):
        (logs / f"big{i}.txt").write_text(_filler(f"big{i}", 90))
    notes = [
        "no subagent: pi has none of its own (extensions only)",
        "manual compaction: the RPC command {'type': 'compact'}",
        "resume: a second `pi --mode rpc --continue` process",
    ]
    events = ctx.build / "rpc-events.jsonl"
    events.write_text("")
    with Recorder(scenario(ctx.project), ctx.log) as rec:
        configure(ctx, rec.url)
        env = ctx.env(PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1")
        pi = [str(bin_dir / "pi"), "--mode", "rpc"]
        first = Rpc(pi, ctx.project, env, events)
        try:
            rec.phase("turn 1")
            first.prompt("task-t1 read notes.txt and app.py, then add a test for greet.")
            rec.phase("turn 2")
            first.prompt("task-t2 read logs/big1.txt and logs/big2.txt.")
            rec.phase("turn 3")
            first.prompt("task-t3 check the notes again.")
            rec.phase("manual compact")
            first.send({"type": "compact"})
            done = first.wait_for(
                lambda o: o.get("type") == "response" and o.get("command") == "compact"
            )
            if not done.get("success"):
                notes.append(f"manual compaction refused: {done.get('error')}")
        finally:
            first.close()
        second = Rpc([*pi, "--continue"], ctx.project, env, events)
        try:
            rec.phase("turn 4 (resumed)")
            second.prompt("task-t4 read logs/big3.txt and logs/big1.txt.")
            rec.phase("turn 5 (resumed)")
            second.prompt("task-t5 list the logs.")
        finally:
            second.close()
    files = sorted((ctx.home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
    return Recorded(VERSION, files, notes)
