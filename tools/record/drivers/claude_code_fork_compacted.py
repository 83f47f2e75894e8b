"""Claude Code (``@anthropic-ai/claude-code``), a session forked after it compacted: what
``claude --resume ID --fork-session -p ...`` writes when the parent's file holds a compaction.
Recorded into ``tests/fixtures/recorded/claude-code/<version>-fork-compacted/``, beside
:mod:`.claude_code_fork` (a fork of a session that never compacted).

Turn 1 reads a file and answers; ``/compact ...`` compacts the session by hand; a third prompt
resumes it with ``--fork-session`` (a new session file) and runs a shell command there; a last
prompt resumes the fork (``--resume FORK``) for one more call."""

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
    "a fork after a compaction: turn 1, then '/compact keep the file names' (phase 'manual "
    "compact'), then '--resume ID --fork-session -p' starts a second session file (phase "
    "'fork'), then '--resume FORK -p' goes on in the fork (phase 'fork resumed')",
    "no side call: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 sends no title or topic request",
]


def fork_tasks() -> dict[str, list[Step]]:
    """The turns every fork-after-compaction recording runs: a read before the compaction, a
    command in the fork, one more in the resumed fork (made afresh: a recording fills its
    project's path into them)."""
    return {
        "a1": [Step("Reading the notes.", [Want("read", {"path": "{P}/notes.txt"})])],
        "f2": [Step("Counting lines.", [Want("shell", {"command": "wc -l app.py"})])],
        "g3": [Step("Listing the files.", [Want("shell", {"command": "ls"})])],
    }


def scenario() -> Scenario:
    return Scenario(tasks=fork_tasks(), compaction_markers=COMPACTION, side_markers=SIDE)


def record(ctx: Context) -> Recorded:
    first = [
        ("turn 1", ["-p", "task-a1 Read the notes."]),
        ("manual compact", ["--resume", "{SID}", "-p", "/compact keep the file names"]),
    ]
    return record_fork(ctx, scenario(), first, {}, Recorded(f"{VERSION}-fork-compacted", [], NOTES))


def record_fork(
    ctx: Context,
    scen: Scenario,
    first: list[tuple[str, list[str]]],
    env: dict[str, str],
    rec: Recorded,
    files: tuple[tuple[str, str], ...] = (),
) -> Recorded:
    """Run the ``first`` prompts in one session (``{SID}``: its id), then fork it
    (``task-f2``) and resume the fork (``task-g3``), in a project with ``files`` added (name,
    text); ``rec`` with the files Claude Code wrote."""
    bin_dir = npm_install(ctx, PACKAGE, VERSION)
    ctx.fresh()
    for name, text in files:
        (ctx.project / name).write_text(text)
    config = ctx.home / ".claude"
    _paths(scen, str(ctx.project))
    with Recorder(scen, ctx.log) as server:
        base = claude_command(bin_dir)
        prompts = [
            *first,
            ("fork", ["--resume", "{SID}", "--fork-session", "-p", "task-f2 Count lines."]),
            ("fork resumed", ["--resume", "{FORK}", "-p", "task-g3 List the files."]),
        ]
        sid = fork = ""
        for phase, args in prompts:
            server.phase(phase)
            args = [a.replace("{SID}", sid).replace("{FORK}", fork) for a in args]
            out = run(ctx, base + args, claude_env(ctx, server, **env), timeout=240)
            if out.returncode != 0:
                raise RuntimeError(f"claude {phase}: exit {out.returncode}: {out.stderr[-500:]}")
            if phase == "turn 1":
                sid = _session_id(out.stdout)
            if phase == "fork":
                fork = _session_id(out.stdout)
    if not fork or fork == sid:
        raise RuntimeError(f"--fork-session started no session of its own ({sid!r}, {fork!r})")
    rec.files = sorted(p for p in (config / "projects").rglob("*") if p.is_file())
    return rec
