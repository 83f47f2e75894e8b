"""Claude Code (``@anthropic-ai/claude-code``): ``claude -p`` against the Anthropic Messages
dialect, in a fresh HOME (``CLAUDE_CONFIG_DIR`` inside it), the session resumed between
prompts with ``--resume ID``.

The scenarios, one session: turn 1 reads three files at once (parallel ``Read`` calls) and
cats a generated file; turn 2 has a ``Task`` subagent read a file; turn 3 writes a long file
and cats it, which crosses the lowered automatic-compaction point
(``CLAUDE_CODE_AUTO_COMPACT_WINDOW``, ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``); a ``/compact ...``
prompt compacts by hand; a last prompt after ``--continue`` (a resume) runs a shell command."""

from __future__ import annotations

import json
from pathlib import Path

from ..drive import Context, Recorded, npm_install, run
from ..script import Scenario, Step, Want
from ..server import Recorder

AGENT = "claude-code"
PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.332"

#: Phrases of Claude Code's own summarisation prompt (its bundle, ``grep -o``).
COMPACTION = ("Your task is to create a detailed summary of the conversation so far",)
#: Side calls Claude Code makes besides the turns (a title, a topic check...): a phrase of
#: the request -> the answer.
SIDE = {
    "Generate a concise": '{"title": "Demo chores"}',
    "isNewTopic": '{"isNewTopic": false, "title": null}',
}
#: A generated file big enough that two reads of it cross the lowered compaction point.
BIG = "".join(f"line {i:04d}: the quick brown fox jumps over the lazy dog\n" for i in range(400))


NOTES = [
    "manual compaction: a '/compact keep the file names' prompt in -p mode (phase 'manual "
    "compact')",
    "automatic compaction: CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000 (its floor: a lower value is "
    "raised to it) and CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=40: 40% of the window less the output "
    "reserve (80,000), 32,000 tokens",
    "no microcompaction: Claude Code writes no microcompact_boundary in -p mode",
    "no side call: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 sends no title or topic request",
    "not byte-stable across recordings: the order of the three parallel Read results follows "
    "their completion",
]


def scenario() -> Scenario:
    return Scenario(
        tasks={
            "a1": [
                Step(
                    "Reading the three files at once.",
                    [
                        Want("read", {"path": "{P}/README.md"}),
                        Want("read", {"path": "{P}/app.py"}),
                        Want("read", {"path": "{P}/notes.txt"}),
                    ],
                ),
                Step("Listing the data file.", [Want("shell", {"command": "cat data.txt"})]),
            ],
            "b2": [
                Step(
                    "Asking a subagent to look at app.py.",
                    [
                        Want(
                            "task",
                            {
                                "description": "Inspect app.py",
                                "prompt": "task-s1 Read app.py and say what greet returns.",
                                "subagent_type": "general-purpose",
                            },
                        )
                    ],
                )
            ],
            "s1": [Step("Reading it.", [Want("read", {"path": "{P}/app.py"})])],
            "c3": [
                Step(
                    "Writing the report.",
                    [Want("write", {"path": "{P}/report.txt", "content": BIG})],
                ),
                Step("Checking it.", [Want("shell", {"command": "cat report.txt data.txt"})]),
            ],
            "d4": [Step("Counting lines.", [Want("shell", {"command": "wc -l app.py"})])],
        },
        compaction_markers=COMPACTION,
        side_markers=SIDE,
    )


def record(ctx: Context) -> Recorded:
    bin_dir = npm_install(ctx, PACKAGE, VERSION)
    ctx.fresh()
    (ctx.project / "data.txt").write_text(BIG)
    config = ctx.home / ".claude"
    scen = scenario()
    _paths(scen, str(ctx.project))
    with Recorder(scen, ctx.log) as rec:
        env = claude_env(
            ctx,
            rec,
            # the window's floor (100,000), less the output reserve (20,000), at 40%: 32,000
            CLAUDE_CODE_AUTO_COMPACT_WINDOW="100000",
            CLAUDE_AUTOCOMPACT_PCT_OVERRIDE="40",
        )
        base = claude_command(bin_dir)
        prompts = [
            ("turn 1", ["-p", "task-a1 Look at the project files and the data."]),
            ("turn 2", ["--continue", "-p", "task-b2 Have a helper inspect app.py."]),
            ("turn 3", ["--continue", "-p", "task-c3 Write a report and check it."]),
            ("manual compact", ["--continue", "-p", "/compact keep the file names"]),
            ("turn 4", ["--resume", "{SID}", "-p", "task-d4 Count the lines of app.py."]),
        ]
        sid = ""
        for phase, args in prompts:
            rec.phase(phase)
            args = [a.replace("{SID}", sid) for a in args]
            out = run(ctx, base + args, env, timeout=240)
            if out.returncode != 0:
                raise RuntimeError(f"claude {phase}: exit {out.returncode}: {out.stderr[-500:]}")
            sid = sid or _session_id(out.stdout)
    files = sorted(p for p in (config / "projects").rglob("*") if p.is_file())
    return Recorded(VERSION, files, NOTES)


def claude_env(ctx: Context, rec: Recorder, **extra: str) -> dict[str, str]:
    """The environment that points Claude Code at the recorder, in the fresh HOME (its
    config under ``.claude``), with nothing sent but the model's requests."""
    return ctx.env(
        ANTHROPIC_BASE_URL=rec.url,
        ANTHROPIC_API_KEY="dummy",
        CLAUDE_CONFIG_DIR=str(ctx.home / ".claude"),
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        IS_SANDBOX="1",
        **extra,
    )


def claude_command(bin_dir: Path) -> list[str]:
    """``claude`` in headless stream-json mode, every tool allowed, the scripted model."""
    return [
        str(bin_dir / "claude"),
        *("--output-format", "stream-json", "--verbose"),
        *("--dangerously-skip-permissions", "--model", "claude-sonnet-4-5"),
    ]


def _session_id(stream: str) -> str:
    for line in stream.splitlines():
        if line.startswith("{"):
            sid = json.loads(line).get("session_id")
            if isinstance(sid, str):
                return sid
    raise RuntimeError("claude wrote no session_id")


def _paths(scen: Scenario, project: str) -> None:
    for steps in scen.tasks.values():
        for step in steps:
            for want in step.tools:
                for k, v in want.args.items():
                    if isinstance(v, str):
                        want.args[k] = v.replace("{P}", project)
