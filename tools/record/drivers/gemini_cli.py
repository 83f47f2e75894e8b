"""Gemini CLI (``@google/gemini-cli``), the Gemini API.

Pointing: ``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY`` and settings
``security.auth.selectedType: "gemini-api-key"`` (without it the CLI exits 41). Automatic
compression: ``model.compressionThreshold``, a fraction of the model's token limit (1,048,576
for gemini-2.5-flash), checked against the last call's reported prompt tokens. A compression is
two calls with the same system prompt: the summary, then a check of it ("Critically evaluate
the <state_snapshot> ..."); both are compaction calls here. Manual compression: none headless
(``/compress`` in ``-p`` mode goes to the model as text). Turns after the first one go on
with ``--resume latest``.

A process names its chat file by the minute it started (``session-<YYYY-MM-DDTHH-MM>-<id8>``)
and writes its header and session context there: a resumed process started in the minute of
the session's first file appends them to that file, one started in another minute to a stub
file of that minute (its turn goes into the first file). Left to the clock, the layout and even
the requests changed from run to run (a resume in the first file's minute sends no duplicated
tool results; all five turns in one minute left no stub), so turn 1 starts in one minute and
turns 2-5 in the next: always the chat (one header) and one stub (four).

``ADFKIT_GEMINI_ONE_MINUTE=1`` records the other layout instead, into ``<VERSION>-one-file``:
all five turns start in one minute, so every resume appends its header and session context
to the one chat file and no stub is written."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..drive import PROJECT, Context, Recorded, next_minute, npm_install, run, this_minute
from ..script import Call, Scenario, Step, Want
from ..server import Recorder

AGENT = "gemini-cli"
PACKAGE = "@google/gemini-cli"
VERSION = "0.61.0"
MODEL = "gemini-2.5-flash"
#: Every turn starts in one minute: the one-file layout, recorded as ``<VERSION>-one-file``.
ONE_MINUTE = os.environ.get("ADFKIT_GEMINI_ONE_MINUTE") == "1"
THRESHOLD = 0.018  # of 1,048,576: compress from 18,874 prompt tokens

#: getCompressionPrompt (the system prompt of both compression calls).
COMPACTION_MARKERS = ("responsible for distilling chat history into a structured XML",)


def summary(call: Call) -> str:
    return (
        "<scratchpad>The user keeps the demo project tidy, job by job.</scratchpad>\n"
        "<state_snapshot>\n<overall_goal>Keep the demo project tidy: app.py, notes.txt, "
        "plan.md.</overall_goal>\n<current_plan>The last job finished; the next one "
        "continues.</current_plan>\n</state_snapshot>"
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
        "g1": [
            Step(
                "Looking around.",
                [Want("shell", {"command": "mkdir -p out"}), Want("read", {"path": app})],
            ),
            Step(_long("plan"), [Want("write", {"path": plan, "content": "# plan\n- tidy\n"})]),
        ],
        "g2": [
            Step(
                "Asking a helper.",
                [
                    Want(
                        "=invoke_agent",
                        {
                            "agent_name": "generalist",
                            "prompt": "task-s1: copy app.py into out/ and say done.",
                        },
                    )
                ],
            ),
            Step("And the notes.", [Want("read", {"path": notes})]),
            Step(_long("review"), [Want("shell", {"command": "touch out/reviewed"})]),
        ],
        "s1": [
            Step("Copying.", [Want("shell", {"command": "cp app.py out/app.py"})]),
            Step(
                "Reporting.",
                [Want("=complete_task", {"result": {"response": "Copied app.py into out/."}})],
            ),
        ],
        "g3": [
            Step(
                "Checking both.",
                [Want("read", {"path": app}), Want("shell", {"command": "touch out/checked"})],
            ),
            Step(_long("report"), [Want("write", {"path": report, "content": "# report\nok\n"})]),
        ],
        "g4": [Step(_long("summary"), [Want("read", {"path": plan})])],
        "g5": [Step("Last look.", [Want("list", {"path": str(project)})])],
    }
    return Scenario(tasks, compaction_markers=COMPACTION_MARKERS, summary=summary)


def record(ctx: Context) -> Recorded:
    gemini = npm_install(ctx, PACKAGE, VERSION) / "gemini"
    ctx.fresh()
    config = ctx.home / ".gemini"
    config.mkdir()
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"compressionThreshold": THRESHOLD},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (config / "settings.json").write_text(json.dumps(settings, indent=1))
    with Recorder(scenario(ctx.project), ctx.log) as rec:
        env = ctx.env(GOOGLE_GEMINI_BASE_URL=rec.url, GEMINI_API_KEY="dummy")
        prompts = [
            ("turn 1", [], "Please do task-g1: look at the project and write a plan."),
            (
                "turn 2",
                ["--resume", "latest"],
                "Now task-g2: get a helper to copy app.py, then review.",
            ),
            ("turn 3", ["--resume", "latest"], "Then task-g3: check app.py and write a report."),
            ("turn 4", ["--resume", "latest"], "Next task-g4: summarise the plan."),
            ("turn 5", ["--resume", "latest"], "Finally task-g5: list the project."),
        ]
        minute = 0
        for i, (phase, flags, prompt) in enumerate(prompts):
            if i == 0 or (i == 1 and not ONE_MINUTE):
                minute = next_minute()
            elif this_minute() != minute:
                which = "all turns" if ONE_MINUTE else "turns 2-5"
                raise RuntimeError(
                    f"gemini {phase}: {which} must start within one minute (the layout of "
                    "the chat files depends on it); this machine was too slow, run it again"
                )
            rec.phase(phase)
            cmd = [str(gemini), "--yolo", "--skip-trust", "-o", "stream-json", "-m", MODEL]
            out = run(ctx, [*cmd, *flags, "-p", prompt], env)
            if out.returncode != 0:
                raise RuntimeError(f"gemini {phase}: exit {out.returncode}: {out.stderr[-500:]}")
    chats = sorted(p for p in (config / "tmp").rglob("*") if p.is_file() and "chats" in p.parts)
    _neutral_hash(chats, ctx.project)
    return Recorded(
        f"{VERSION}-one-file" if ONE_MINUTE else VERSION,
        [config / "projects.json", *chats],
        notes=[
            "Gemini CLI 0.61.0 headless (-p, stream-json), model gemini-2.5-flash; each turn a "
            "new process with --resume latest.",
            *(
                ["All five turns started in one minute: each resume appended to the one chat file."]
                if ONE_MINUTE
                else []
            ),
            f"Automatic compression: model.compressionThreshold {THRESHOLD} of the model's "
            "1,048,576-token limit.",
            "Each compression is two calls (the summary, then 'Critically evaluate the "
            "<state_snapshot>' with the same system prompt): both count as compaction calls, so "
            "'compactions' here counts two calls per compression.",
            "Manual compression: none headless (/compress in -p mode is sent to the model as "
            "text); not recorded.",
        ],
    )


def _neutral_hash(files: list[Path], project: Path) -> None:
    """``projectHash`` is the sha256 of the project's path: the neutral path's hash instead."""
    real, fake = (hashlib.sha256(str(p).encode()).hexdigest() for p in (project, PROJECT))
    for f in files:
        f.write_text(f.read_text(encoding="utf-8").replace(real, fake), encoding="utf-8")
