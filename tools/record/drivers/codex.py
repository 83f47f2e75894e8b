"""Codex (``@openai/codex``): ``codex exec`` turns against a Responses provider in
``$CODEX_HOME/config.toml``, an automatic compaction (``model_auto_compact_token_limit``), a
manual compaction through ``codex app-server`` (JSON-RPC ``initialize``, ``thread/resume``,
``thread/compact/start``: ``exec`` sends a ``/compact`` prompt to the model as text) and a
resume (``codex exec resume --last``)."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from ..drive import Context, Recorded, npm_install, run
from ..script import Answer, Call, Scenario, Step, Want, default_summary, locate, resolve_tool
from ..server import Recorder

AGENT = "codex"
PACKAGE = "@openai/codex"
VERSION = "0.171.0"
MODEL = "gpt-rec-1"
#: Codex's own summarisation prompt (codex-rs ``templates/compact/prompt.md``); the second
#: marker is what this server's Responses dialect adds to a remote ``responses/compact`` call.
COMPACTION_MARKERS = ("CONTEXT CHECKPOINT COMPACTION", "(remote compaction)")
#: Auto compaction past this many tokens: a call of Codex is ~10k (its instructions and tools
#: at 4 bytes a token); turn 2 reads a 20 KB file and compacts in the middle of the turn.
AUTO_LIMIT = 13000
#: The limit of turn 3 alone: under what turn 2 ended with, over any call after a compaction.
PRE_TURN_LIMIT = 10000

BIG = "\n".join(f"line {i:04d}: the quick brown fox checks the demo project" for i in range(400))

#: Codex's prefix of the summary message it puts in the history after a compaction.
SUMMARY_PREFIX = "Another language model started to solve this problem"
PROGRESS = re.compile(r"\[progress: job ([a-z0-9]+) step (\d+)\]")


class MidTurnScenario(Scenario):
    """A scenario that goes on where it was after a compaction in the middle of a turn: Codex
    keeps the turn's prompt and puts the summary after it, so counting the assistant turns
    since the prompt would start the task over. The summary this server writes ends with
    ``[progress: job X step N]`` (no task marker in it); a call whose last summary comes
    after its task's prompt counts its steps from there."""

    def kind_of(self, call: Call) -> str:
        last = call.messages[-1]["content"] if call.messages else []
        if any(b["type"] == "compaction_trigger" for b in last):
            return "compaction"  # a remote compaction (the OpenAI provider)
        return super().kind_of(call)

    def decide(self, call: Call, ids: Any) -> Answer:
        if self.kind_of(call) != "turn":
            return super().decide(call, ids)
        task, step = progress(call)
        steps = self.tasks.get(task or "", [])
        if task is None or step >= len(steps):
            return Answer(
                "turn", text=f"Done: job {task or 'none'} finished.", task=task, step=step
            )
        return self._step(call, steps[step], task, step, ids)


def progress(call: Call) -> tuple[str | None, int]:
    task, step = locate(call)
    texts = [_user_text(m) for m in call.messages]
    prompt = max((i for i, t in enumerate(texts) if f"task-{task}" in t), default=-1)
    summary = max((i for i, t in enumerate(texts) if PROGRESS.search(t)), default=-1)
    found = PROGRESS.search(texts[summary]) if summary > prompt else None
    if found is None or found.group(1) != task:
        return task, step
    after = [m for m in call.messages[summary + 1 :] if m["role"] in ("assistant", "tool")]
    return task, int(found.group(2)) + _turns(after)


def _user_text(m: dict[str, Any]) -> str:
    if m["role"] != "user":
        return ""
    return "\n".join(b.get("text", "") for b in m["content"] if b["type"] == "text")


def _turns(messages: list[dict[str, Any]]) -> int:
    return sum(
        1
        for i, m in enumerate(messages)
        if m["role"] == "assistant" and (i == 0 or messages[i - 1]["role"] != "assistant")
    )


def resolver(call: Call, want: Want) -> tuple[str, dict[str, Any]] | None:
    """``wait_agent`` on the agent the last ``spawn_agent`` output named; any other tool as
    ``script.resolve_tool`` maps it."""
    if want.kind != "=wait_agent":
        return resolve_tool(call.tools, want)
    ids = [
        found
        for m in call.messages
        for b in m["content"]
        if b["type"] == "tool_result"
        for found in re.findall(r'"agent_id"\s*:\s*"([^"]+)"', b["content"])
    ]
    return ("wait_agent", {"targets": ids[-1:], "timeout_ms": 60000}) if ids else None


def summary(call: Call) -> str:
    task, step = progress(call)
    text = default_summary(call)
    return text if task is None else f"{text}\n[progress: job {task} step {step}]"


SCENARIO = MidTurnScenario(
    tasks={
        "a": [
            Step("Looking around.", [Want("shell", {"command": "ls"})]),
            Step(
                "Reading both files at once.",
                [
                    Want("shell", {"command": "cat app.py"}),
                    Want("shell", {"command": "cat notes.txt"}),
                ],
            ),
        ],
        "b": [
            Step("Writing the log.", [Want("shell", {"command": "python3 gen.py > big.log"})]),
            Step("Reading it.", [Want("shell", {"command": "cat big.log"})]),
        ],
        "c": [],  # text only: a turn whose one call needs no follow-up
        "d": [
            Step("After the manual compaction.", [Want("shell", {"command": "head -3 README.md"})]),
        ],
        "e": [
            Step("Resumed.", [Want("shell", {"command": "git status --short"})]),
        ],
        "f": [
            Step("Writing the log.", [Want("shell", {"command": "python3 gen.py > big.log"})]),
            Step("Reading it.", [Want("shell", {"command": "cat big.log"})]),
        ],
        "h": [],  # text only, as task c
        "p": [  # a subagent: spawned with its own task marker, then waited for
            Step("Delegating.", [Want("=spawn_agent", {"message": "task-s: list the files"})]),
            Step("Waiting for it.", [Want("=wait_agent")]),
        ],
        "s": [Step("Listing.", [Want("shell", {"command": "ls"})])],
        "g": [
            Step("After the remote compaction.", [Want("shell", {"command": "wc -l app.py"})]),
        ],
    },
    compaction_markers=COMPACTION_MARKERS,
    summary=summary,
    resolver=resolver,
)


def config(url: str) -> str:
    return f"""model = "{MODEL}"
model_provider = "rec"
model_context_window = 64000
model_auto_compact_token_limit = {AUTO_LIMIT}
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
openai_base_url = "{url}/v1"

[model_providers.rec]
name = "rec"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "REC_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"""


def record(ctx: Context) -> Recorded:
    bin_dir = npm_install(ctx, PACKAGE, VERSION)
    ctx.fresh()
    (ctx.project / "gen.py").write_text(f"print('''{BIG}''')\n")
    codex_home = ctx.home / ".codex"
    codex_home.mkdir()
    notes: list[str] = []
    with Recorder(SCENARIO, ctx.log) as rec:
        (codex_home / "config.toml").write_text(config(rec.url))
        env = ctx.env(
            CODEX_HOME=str(codex_home),
            REC_API_KEY="dummy",
            OPENAI_API_KEY="dummy",
            RUST_LOG="error",
        )
        exe = [str(bin_dir / "codex")]
        flags = ["--skip-git-repo-check", "--json"]

        def exec_(*args: str) -> None:
            out = run(ctx, [*exe, "exec", *args], env, timeout=240)
            if out.returncode != 0:
                raise RuntimeError(
                    f"codex exec {args[:1]} -> {out.returncode}: {out.stderr[-800:]}"
                )

        rec.phase("turn 1")
        exec_(*flags, "task-a: look at the project and read app.py and notes.txt")
        rec.phase("turn 2")
        exec_("resume", "--last", *flags, "task-b: generate big.log with gen.py and read it")
        rec.phase("turn 3")
        # a lower limit for this turn: Codex compacts before its first call (turn 2 ended above it)
        low = ["-c", f"model_auto_compact_token_limit={PRE_TURN_LIMIT}"]
        exec_("resume", "--last", *flags, *low, "task-c: say what the project is about")
        rollout = _rollouts(codex_home)[-1]
        thread = _thread_id(rollout)
        rec.phase("manual compaction")
        notes += _app_server_compact(ctx, exe, env, thread)
        rec.phase("turn 4")
        exec_("resume", "--last", *flags, "task-d: show the head of README.md")
        rec.phase("turn 5")
        exec_("resume", thread, *flags, "task-e: show git status")
        # a second session on the built-in OpenAI provider: its compactions are remote (a
        # compaction_trigger item, answered with an opaque compaction item)
        openai = ["-c", 'model_provider="openai"']
        rec.phase("turn 6")
        exec_(*flags, *openai, "task-f: generate big.log with gen.py and read it")
        thread2 = _thread_id(_rollouts(codex_home)[-1])
        rec.phase("turn 7")  # as turn 3: a remote compaction before its first call
        exec_("resume", thread2, *flags, *openai, *low, "task-h: say what big.log holds")
        rec.phase("manual remote compaction")
        notes += _app_server_compact(ctx, [*exe, *openai], env, thread2)
        notes += [
            "manual compactions through codex app-server (thread/resume, thread/compact/start):"
            " codex exec sends a /compact prompt to the model as text",
            "the second session runs on the built-in OpenAI provider (openai_base_url): its"
            " compactions are remote, a compaction_trigger item answered with a compaction"
            " item; Codex tries the Responses WebSocket first (logged as websocket, refused)",
            "a third session spawns a subagent (multi_agent_v1 spawn_agent, wait_agent): the"
            " child's calls run while the parent waits, so their order in the log may vary, and"
            " the spawn_agent output holds a random nickname",
        ]
        rec.phase("turn 8")
        exec_("resume", thread2, *flags, *openai, "task-g: show the head of README.md")
        # a third session: a subagent (multi_agent_v1 spawn_agent, then wait_agent); the
        # child writes a rollout of its own
        rec.phase("turn 9")
        exec_(*flags, "task-p: delegate listing the files to a subagent")
    files = [p for p in codex_home.rglob("*") if p.is_file() and _keep(p, codex_home)]
    return Recorded(VERSION, files, notes)


def _keep(p: Path, home: Path) -> bool:
    rel = p.relative_to(home).parts
    if p.name.endswith(("-wal", "-shm")):
        return False
    return rel[0] == "sessions" or (
        len(rel) == 1 and p.name.startswith(("thread_history", "state"))
    )


def _rollouts(home: Path) -> list[Path]:
    return sorted((home / "sessions").rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)


def _thread_id(rollout: Path) -> str:
    with rollout.open() as f:
        first = json.loads(f.readline())
    return str(first["payload"]["id"])


def _app_server_compact(
    ctx: Context, exe: list[str], env: dict[str, str], thread: str
) -> list[str]:
    """``thread/compact/start`` on the thread through ``codex app-server`` (stdio JSON-RPC)."""
    proc = subprocess.Popen(
        [*exe, "app-server"],
        cwd=ctx.project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[dict[str, Any]] = []

    def send(obj: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()

    def wait_for(pred: Any, timeout: float = 120) -> dict[str, Any]:
        assert proc.stdout is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = proc.stdout.readline()
            if not line:
                break
            try:
                msg: dict[str, Any] = json.loads(line)
            except ValueError:
                continue
            seen.append(msg)
            if pred(msg):
                return msg
        raise RuntimeError(f"app-server: no answer; last messages {seen[-5:]!r}")

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {"clientInfo": {"name": "rec", "version": "1"}},
            }
        )
        wait_for(lambda m: m.get("id") == 1)
        send({"method": "initialized"})
        send({"id": 2, "method": "thread/resume", "params": {"threadId": thread}})
        r = wait_for(lambda m: m.get("id") == 2)
        if "error" in r:
            raise RuntimeError(f"thread/resume: {r['error']}")
        send({"id": 3, "method": "thread/compact/start", "params": {"threadId": thread}})
        r = wait_for(lambda m: m.get("id") == 3)
        if "error" in r:
            raise RuntimeError(f"thread/compact/start: {r['error']}")
        wait_for(lambda m: m.get("method") in ("thread/compacted", "turn/completed"))
    finally:
        with (ctx.build / "app-server.log").open("a") as f:
            f.write("\n".join(json.dumps(m) for m in seen) + "\n")
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    return []
