"""OpenClaw (``openclaw``) on Node 24, OpenAI Chat Completions (``api: "openai-completions"``).

Pointing: ``~/.openclaw/openclaw.json``, ``models.providers.rec`` with ``baseUrl`` and a model
whose ``contextWindow`` is small. Automatic compaction: OpenClaw compacts before inference once
the projected usage reaches the window less its reserve (a quarter of windows under 80,000
tokens), keeping ``agents.defaults.compaction.keepRecentTokens``; a one-shot
``openclaw agent --local`` does it at the start of the next command. Manual compaction:
``openclaw gateway run``, then ``openclaw sessions compact <key>`` (``/compact`` in
``--message`` is rejected). Every turn is ``openclaw agent --local --session-id demo-1``."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

from ..drive import Context, Recorded, neutral_text, node24, npm_install, run
from ..script import Call, Scenario, Step, Want
from ..server import Recorder

AGENT = "openclaw"
PACKAGE = "openclaw"
VERSION = "2026.9.6"
PROVIDER, MODEL = "rec", "rec-model"
WINDOW, KEEP = 32_000, 4_000
SESSION = "demo-1"
KEY = f"agent:main:explicit:{SESSION}"


def summary(call: Call) -> str:
    return (
        "## Goal\nKeep the demo project tidy: app.py, notes.txt, plan.md.\n\n"
        "## Progress\nThe last job finished; the next one continues.\n"
    )


def _long(kind: str) -> str:
    """A long answer text (about 12 KB): a turn big enough to move towards the threshold."""
    line = "- {} {}: tidy module part {} and note what changed\n"
    return "".join(line.format(kind, i, i) for i in range(240))


def scenario(project: Path) -> Scenario:
    names = ("app.py", "notes.txt", "plan.md", "report.md")
    app, notes, plan, report = (str(project / n) for n in names)
    tasks = {
        "c1": [
            Step(
                "Looking around.",
                [Want("shell", {"command": "mkdir -p out"}), Want("read", {"path": app})],
            ),
            Step(_long("plan"), [Want("write", {"path": plan, "content": "# plan\n- tidy\n"})]),
        ],
        "c2": [
            Step("And the notes.", [Want("read", {"path": notes})]),
            Step(_long("review"), [Want("shell", {"command": "touch out/reviewed"})]),
        ],
        "c3": [
            Step(
                "Checking both.",
                [Want("read", {"path": app}), Want("shell", {"command": "touch out/checked"})],
            ),
            Step(_long("report"), [Want("write", {"path": report, "content": "# report\nok\n"})]),
        ],
        "c4": [Step(_long("summary"), [Want("read", {"path": plan})])],
        "c5": [Step("Last look.", [Want("list", {"path": str(project)})])],
        "c6": [Step("After the compaction.", [Want("read", {"path": notes})])],
    }
    side = {"Pre-compaction memory flush.": "NO_REPLY"}
    return Scenario(
        tasks, compaction_markers=COMPACTION_MARKERS, side_markers=side, summary=summary
    )


#: pi's summarisation prompts, which OpenClaw's bundle keeps (dist/compaction-*.mjs): the
#: system prompt and the request after the conversation.
COMPACTION_MARKERS = (
    "You are a context summarization assistant.",
    "The messages above are a conversation to summarize.",
)


def _config(url: str, project: Path, port: int) -> dict[str, object]:
    model = {
        "id": MODEL,
        "name": MODEL,
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": WINDOW,
        "maxTokens": 4000,
    }
    provider = {"baseUrl": url + "/v1", "apiKey": "dummy", "api": "openai-completions"}
    return {
        "models": {"mode": "merge", "providers": {PROVIDER: {**provider, "models": [model]}}},
        "agents": {
            "defaults": {
                "workspace": str(project),
                "model": {"primary": f"{PROVIDER}/{MODEL}"},
                "compaction": {"keepRecentTokens": KEEP},
            }
        },
        "gateway": {"mode": "local", "port": port, "bind": "loopback", "auth": {"mode": "none"}},
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: How long the gateway may take to listen (65 s on a loaded 2-core machine), and how often
#: ``sessions compact`` is tried while it refuses connections (it did once, 18 s after the
#: port opened, with the gateway still starting: a re-recording failed there).
GATEWAY_START_S, COMPACT_TRIES = 300, 6


def _wait_for(port: int, seconds: float) -> None:
    """Until something listens on ``port`` (an error after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"the gateway did not listen on port {port} in {seconds:g} s (gateway.log)")


def _compact(ctx: Context, openclaw: Path, env: dict[str, str], port: int) -> None:
    """``openclaw gateway run`` in the background, ``openclaw sessions compact KEY``, stop."""
    log = (ctx.build / "gateway.log").open("w")
    cmd = [str(openclaw), "gateway", "run", "--port", str(port), "--bind", "loopback"]
    cmd += ["--auth", "none"]
    gateway = subprocess.Popen(cmd, cwd=ctx.project, env=env, stdout=log, stderr=log)
    try:
        _wait_for(port, GATEWAY_START_S)
        cmd = [str(openclaw), "sessions", "compact", KEY, "--json"]
        for attempt in range(1, COMPACT_TRIES + 1):
            out = run(ctx, cmd, env, timeout=400)  # the gateway of the config's port
            if out.returncode == 0:
                break
            if "Gateway not reachable" not in out.stderr or attempt == COMPACT_TRIES:
                raise RuntimeError(
                    f"sessions compact: exit {out.returncode} (try {attempt}): {out.stderr[-800:]}"
                )
            time.sleep(10)  # the port is open before the gateway takes connections
    finally:
        gateway.terminate()
        try:
            gateway.wait(timeout=60)
        except subprocess.TimeoutExpired:
            gateway.kill()
            gateway.wait()
        log.close()


def neutral_zstd_rows(store: Path, ctx: Context) -> None:
    """Machine paths neutralised inside the zstd-compressed transcript rows too (the common
    copy rewrites text columns only): each row decompressed, rewritten, compressed again, its
    ``event_utf8_bytes`` set to the new length (``navigation_json``'s byte counts are left as
    OpenClaw wrote them)."""
    import zstandard

    con = sqlite3.connect(store)
    try:
        rows = con.execute(
            "select session_id, seq, event_zstd, event_utf8_bytes from transcript_events "
            "where event_zstd is not null"
        ).fetchall()
        for sid, seq, blob, size in rows:
            text = zstandard.ZstdDecompressor().decompress(blob, max_output_size=size).decode()
            new = neutral_text(text, ctx)
            if new != text:
                data = new.encode()
                packed = zstandard.ZstdCompressor(level=3).compress(data)
                con.execute(
                    "update transcript_events set event_zstd = ?, event_utf8_bytes = ? "
                    "where session_id = ? and seq = ?",
                    (packed, len(data), sid, seq),
                )
        con.commit()
    finally:
        con.close()


def record(ctx: Context) -> Recorded:
    node = node24(ctx)
    openclaw = npm_install(ctx, PACKAGE, VERSION, node) / "openclaw"
    ctx.fresh()
    config = ctx.home / ".openclaw"
    config.mkdir()
    port = _free_port()
    with Recorder(scenario(ctx.project), ctx.log) as rec:
        settings = _config(rec.url, ctx.project, port)
        (config / "openclaw.json").write_text(json.dumps(settings, indent=1))
        env = ctx.env(PATH=f"{node}:{os.environ['PATH']}")
        prompts = [
            ("turn 1", "Please do task-c1: look at the project and write a plan."),
            ("turn 2", "Now task-c2: read the notes, then review."),
            ("turn 3", "Then task-c3: check app.py and write a report."),
            ("turn 4", "Next task-c4: summarise the plan."),
            ("turn 5", "Then task-c5: list the project."),
            ("manual compact", None),
            ("turn 6", "Finally task-c6: read the notes again."),
        ]
        for phase, prompt in prompts:
            rec.phase(phase)
            if prompt is None:
                _compact(ctx, openclaw, env, port)
                continue
            cmd = [str(openclaw), "agent", "--local", "--session-id", SESSION, "--json"]
            out = run(ctx, [*cmd, "--message", prompt], env, timeout=400)
            if out.returncode != 0:
                raise RuntimeError(f"openclaw {phase}: exit {out.returncode}: {out.stderr[-800:]}")
    store = config / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    con = sqlite3.connect(store)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    neutral_zstd_rows(store, ctx)
    return Recorded(
        VERSION,
        [store],
        notes=[
            "OpenClaw 2026.9.6: openclaw agent --local --session-id demo-1 --json per turn "
            "(Node 24).",
            "The pre-compaction memory flush (a turn of the agent asked to store memories) is "
            "answered NO_REPLY and counted as a side call.",
            f"Automatic compaction: contextWindow {WINDOW}, compaction.keepRecentTokens {KEEP}.",
            "Manual compaction: openclaw gateway run, then openclaw sessions compact "
            f"{KEY} (phase 'manual compact').",
            "No subagent: the default tool set offers none (sessions_spawn is not among the "
            "tools a --local turn is given).",
        ],
    )
