"""OpenCode (``opencode-ai``, a native binary), OpenAI Chat Completions through the
``@ai-sdk/openai-compatible`` provider (which OpenCode installs from the npm registry on its
first run).

Pointing: ``~/.config/opencode/opencode.json`` with a provider whose ``options.baseURL`` is the
server. Automatic compaction: ``compaction.auto`` and the model's ``limit.context``/``limit.output``
(OpenCode compacts once a call's input + output reach the context less the output limit).
Manual compaction: ``opencode serve``, then ``POST /session/ID/summarize``. Turns after the
first go on with ``opencode run --session ID``."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import time
import urllib.request
from pathlib import Path

from ..drive import Context, Recorded, npm_install, run
from ..script import Call, Scenario, Step, Want
from ..server import Recorder

AGENT = "opencode"
PACKAGE = "opencode-ai"
VERSION = "1.18.33"
PROVIDER, MODEL = "rec", "rec-model"
CONTEXT, OUTPUT = 20_000, 2_000

#: The system prompt of OpenCode's compaction agent.
COMPACTION_MARKERS = ("You are a context summarization agent.",)
SIDE_MARKERS = {"You are a title generator.": "Tidy the demo project"}


def summary(call: Call) -> str:
    return (
        "## Goal\nKeep the demo project tidy: app.py, notes.txt, plan.md.\n\n"
        "## Progress\nThe last job finished; the next one continues.\n"
    )


def _long(kind: str) -> str:
    """A long answer text (about 12 KB): a turn big enough to move towards the threshold."""
    return "".join(
        f"- {kind} {i}: tidy module part {i} and note what changed\n" for i in range(240)
    )


def scenario(project: Path) -> Scenario:
    app, notes, plan, report = (
        str(project / n) for n in ("app.py", "notes.txt", "plan.md", "report.md")
    )
    # Each task's last tool step is the long one: a threshold crossed in a task is crossed
    # before its final answer (a compaction in the middle would drop the task's next steps).
    tasks = {
        "o1": [
            Step(
                "Looking around.",
                [
                    Want("shell", {"command": "mkdir -p out", "description": "Make out"}),
                    Want("read", {"path": app}),
                ],
            ),
            Step(_long("plan"), [Want("write", {"path": plan, "content": "# plan\n- tidy\n"})]),
        ],
        "o2": [
            Step(
                "Asking a helper.",
                [
                    Want(
                        "task",
                        {
                            "description": "Copy app",
                            "prompt": "task-s1: copy app.py into out/ and say done.",
                            "subagent_type": "general",
                        },
                    )
                ],
            ),
            Step("And the notes.", [Want("read", {"path": notes})]),
            Step(
                _long("review"),
                [Want("shell", {"command": "touch out/reviewed", "description": "Mark reviewed"})],
            ),
        ],
        "s1": [
            Step(
                "Copying.",
                [Want("shell", {"command": "cp app.py out/app.py", "description": "Copy app"})],
            )
        ],
        "o3": [
            Step(
                "Checking both.",
                [
                    Want("read", {"path": app}),
                    Want("shell", {"command": "touch out/checked", "description": "Mark checked"}),
                ],
            ),
            Step(_long("report"), [Want("write", {"path": report, "content": "# report\nok\n"})]),
        ],
        "o4": [Step(_long("summary"), [Want("read", {"path": plan})])],
        "o5": [Step("Last look.", [Want("list", {"path": str(project)})])],
    }
    return Scenario(
        tasks, compaction_markers=COMPACTION_MARKERS, side_markers=SIDE_MARKERS, summary=summary
    )


def _config(url: str) -> dict[str, object]:
    limit = {"context": CONTEXT, "output": OUTPUT}
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Recorder",
                "options": {"baseURL": url + "/v1", "apiKey": "dummy"},
                "models": {MODEL: {"name": MODEL, "limit": limit}},
            }
        },
        "model": f"{PROVIDER}/{MODEL}",
        "small_model": f"{PROVIDER}/{MODEL}",
        "compaction": {"auto": True, "prune": True},
        "autoupdate": False,
        "share": "disabled",
    }


def _session_id(stdout: str) -> str:
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("sessionID"):
            return str(event["sessionID"])
    raise RuntimeError("opencode run printed no sessionID")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _summarize(ctx: Context, opencode: Path, env: dict[str, str], session: str) -> None:
    """``opencode serve`` in the project, ``POST /session/ID/summarize``, then stop it."""
    port = _free_port()
    cmd = [str(opencode), "serve", "--port", str(port), "--hostname", "127.0.0.1"]
    log = (ctx.build / "serve.log").open("w")
    server = subprocess.Popen(cmd, cwd=ctx.project, env=env, stdout=log, stderr=log)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(base + "/session", timeout=2).read()
                break
            except OSError:
                time.sleep(0.5)
        body = json.dumps({"providerID": PROVIDER, "modelID": MODEL}).encode()
        req = urllib.request.Request(
            f"{base}/session/{session}/summarize",
            body,
            {"Content-Type": "application/json"},
        )
        answer = urllib.request.urlopen(req, timeout=240).read().decode()
        with (ctx.build / "runs.log").open("a") as f:
            f.write(f"$ POST /session/{session}/summarize\n-> {answer}\n")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def record(ctx: Context) -> Recorded:
    opencode = npm_install(ctx, PACKAGE, VERSION) / "opencode"
    ctx.fresh()
    config = ctx.home / ".config" / "opencode"
    config.mkdir(parents=True)
    with Recorder(scenario(ctx.project), ctx.log) as rec:
        (config / "opencode.json").write_text(json.dumps(_config(rec.url), indent=1))
        env = ctx.env(
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_SHARE="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        )
        session = ""
        prompts = [
            ("turn 1", "Please do task-o1: look at the project and write a plan."),
            ("turn 2", "Now task-o2: get a helper to copy app.py, then review."),
            ("manual summarize", None),
            ("turn 3", "Then task-o3: check app.py and write a report."),
            ("turn 4", "Next task-o4: summarise the plan."),
            ("turn 5", "Finally task-o5: list the project."),
        ]
        for phase, prompt in prompts:
            rec.phase(phase)
            if prompt is None:
                _summarize(ctx, opencode, env, session)
                continue
            flags = ["--session", session] if session else []
            out = run(ctx, [str(opencode), "run", "--format", "json", *flags, prompt], env)
            if out.returncode != 0:
                raise RuntimeError(f"opencode {phase}: exit {out.returncode}: {out.stderr[-500:]}")
            session = session or _session_id(out.stdout)
    store = ctx.home / ".local" / "share" / "opencode" / "opencode.db"
    con = sqlite3.connect(store)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return Recorded(
        VERSION,
        [store],
        notes=[
            "OpenCode 1.18.33: opencode run --format json, then --session ID for later turns; "
            "the title call is a side call.",
            f"Automatic compaction: compaction.auto, model limit.context {CONTEXT}, "
            f"limit.output {OUTPUT}.",
            "Manual compaction: opencode serve, POST /session/ID/summarize (phase "
            "'manual summarize').",
            "Pruning (compaction.prune) is on, but these turns are too small for it to prune.",
        ],
    )
