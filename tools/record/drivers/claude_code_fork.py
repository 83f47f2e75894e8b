"""Claude Code (``@anthropic-ai/claude-code``), a forked session: what
``claude --resume ID --fork-session -p ...`` writes. A small scenario of its own beside
:mod:`.claude_code` (same release, same HOME set-up), recorded into
``tests/fixtures/recorded/claude-code/<version>-fork/``.

Turn 1 reads a file and answers; a second prompt resumes that session with
``--fork-session``, which starts a new session file, and runs a shell command there."""

from __future__ import annotations

from ..drive import Context, Recorded, npm_install, run
from ..script import Scenario, Step, Want
from ..server import Recorder
from .claude_code import AGENT as AGENT  # the same agent folder: claude-code/
from .claude_code import (
    COMPACTION,
    PACKAGE,
    SIDE,
    VERSION,
    _paths,
    _session_id,
    claude_command,
    claude_env,
)

NOTES = [
    "a fork: turn 1 in one session, then '--resume ID --fork-session -p' starts a second "
    "session file (phase 'fork')",
    "no side call: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 sends no title or topic request",
]


def scenario() -> Scenario:
    return Scenario(
        tasks={
            "a1": [Step("Reading the notes.", [Want("read", {"path": "{P}/notes.txt"})])],
            "f2": [Step("Counting lines.", [Want("shell", {"command": "wc -l app.py"})])],
        },
        compaction_markers=COMPACTION,
        side_markers=SIDE,
    )


def record(ctx: Context) -> Recorded:
    bin_dir = npm_install(ctx, PACKAGE, VERSION)
    ctx.fresh()
    config = ctx.home / ".claude"
    scen = scenario()
    _paths(scen, str(ctx.project))
    with Recorder(scen, ctx.log) as rec:
        env = claude_env(ctx, rec)
        base = claude_command(bin_dir)
        rec.phase("turn 1")
        out = run(ctx, [*base, "-p", "task-a1 Read the notes."], env, timeout=240)
        if out.returncode != 0:
            raise RuntimeError(f"claude turn 1: exit {out.returncode}: {out.stderr[-500:]}")
        sid = _session_id(out.stdout)
        rec.phase("fork")
        args = ["--resume", sid, "--fork-session", "-p", "task-f2 Count the lines of app.py."]
        out = run(ctx, base + args, env, timeout=240)
        if out.returncode != 0:
            raise RuntimeError(f"claude fork: exit {out.returncode}: {out.stderr[-500:]}")
    files = sorted(p for p in (config / "projects").rglob("*") if p.is_file())
    return Recorded(f"{VERSION}-fork", files, NOTES)
