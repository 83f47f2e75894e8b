"""Qwen Code (``@qwen-code/qwen-code``) on Node 24, OpenAI Chat Completions.

Pointing: ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL`` and settings
``security.auth.selectedType: "openai"``. Automatic compaction: ``context.autoCompactThreshold``
and ``model.generationConfig.contextWindowSize`` (the trigger is
``min(pct * window, window - 20000 - 13000)``, chatCompressionService's computeThresholds).
Manual compaction: a ``/compress`` prompt in ``-p`` mode. Turns after the first one go on with
``--continue`` (a resume of the latest session of the project)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..drive import Context, Recorded, node24, npm_install, run
from ..script import Call, Scenario, Step, Want
from ..server import Recorder

AGENT = "qwen-code"
PACKAGE = "@qwen-code/qwen-code"
VERSION = "0.24.4"
MODEL = "qwen3-coder-plus"
WINDOW = 64_000
THRESHOLD = 0.39  # trigger at 24,960 tokens of a 64,000 window

#: From getCompressionPrompt (system) and COMPRESSION_REQUEST_DIRECTIVE (last user message).
COMPACTION_MARKERS = (
    "You are the component that summarizes a conversation when its context window",
    "Then, produce the <state_snapshot> XML.",
)


def summary(call: Call) -> str:
    """What the compression asks: an analysis, then a non-empty ``<state_snapshot>``."""
    return (
        "<analysis>The user keeps the demo project tidy, job by job.</analysis>\n"
        "<state_snapshot>\n<primary_request_and_intent>Keep the demo project tidy: "
        "app.py, notes.txt, data/log.txt.</primary_request_and_intent>\n"
        "<current_work>The last job finished; the next one continues.</current_work>\n"
        "</state_snapshot>"
    )


def scenario(project: Path) -> Scenario:
    app, notes, plan, report = (
        str(project / n) for n in ("app.py", "notes.txt", "plan.md", "report.md")
    )
    # Turns grow by the model's own long texts (a file read or written is embedded again
    # after a compaction, which then may not shrink the history), and each task's last tool
    # step is the long one, so the threshold is crossed before the task's final answer (a
    # compaction in the middle would drop the task's next steps). Shell commands print
    # nothing: Qwen Code's headless shell sometimes returns an empty output.
    tasks = {
        "q1": [
            Step(
                "Looking around.",
                [Want("shell", {"command": "mkdir -p out"}), Want("read", {"path": app})],
            ),
            Step(_long("plan"), [Want("write", {"path": plan, "content": "# plan\n- tidy\n"})]),
        ],
        "q2": [
            Step(
                "Asking a helper.",
                [
                    Want(
                        "task",
                        {
                            "description": "Copy app",
                            "prompt": "task-s1: copy app.py into out/ and say done.",
                            "subagent_type": "general-purpose",
                            "run_in_background": False,
                        },
                    )
                ],
            ),
            Step("And the notes.", [Want("read", {"path": notes})]),
            Step(_long("review"), [Want("shell", {"command": "touch out/reviewed"})]),
        ],
        "s1": [Step("Copying.", [Want("shell", {"command": "cp app.py out/app.py"})])],
        "q3": [
            Step(
                "Checking both.",
                [Want("read", {"path": app}), Want("shell", {"command": "touch out/checked"})],
            ),
            Step(_long("report"), [Want("write", {"path": report, "content": "# report\nok\n"})]),
        ],
        "q4": [Step(_long("summary"), [Want("read", {"path": plan})])],
    }
    return Scenario(tasks, compaction_markers=COMPACTION_MARKERS, summary=summary)


def _long(kind: str) -> str:
    """A long answer text (about 12 KB): a turn big enough to move towards the threshold."""
    return "".join(
        f"- {kind} {i}: tidy module part {i} and note what changed\n" for i in range(240)
    )


def record(ctx: Context) -> Recorded:
    qwen = npm_install(ctx, PACKAGE, VERSION) / "qwen"
    node = node24(ctx)
    ctx.fresh()
    config = ctx.home / ".qwen"
    config.mkdir()
    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"generationConfig": {"contextWindowSize": WINDOW}},
        "context": {"autoCompactThreshold": THRESHOLD},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (config / "settings.json").write_text(json.dumps(settings, indent=1))
    with Recorder(scenario(ctx.project), ctx.log) as rec:
        env = ctx.env(
            PATH=f"{node}:{os.environ['PATH']}",
            OPENAI_BASE_URL=rec.url + "/v1",
            OPENAI_API_KEY="dummy",
            OPENAI_MODEL=MODEL,
            QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
        )
        prompts = [
            ("turn 1", [], "Please do task-q1: look at the project and write a plan."),
            ("turn 2", ["--continue"], "Now task-q2: get a helper to copy app.py, then review."),
            ("manual compress", ["--continue"], "/compress"),
            ("turn 3", ["--continue"], "Then task-q3: check app.py and write a report."),
            ("turn 4", ["--continue"], "Finally task-q4: summarise the plan."),
        ]
        for phase, flags, prompt in prompts:
            rec.phase(phase)
            out = run(ctx, [str(qwen), "--yolo", "-o", "stream-json", *flags, "-p", prompt], env)
            if out.returncode != 0:
                raise RuntimeError(f"qwen {phase}: exit {out.returncode}: {out.stderr[-500:]}")
    chats = sorted((config / "projects").rglob("*.jsonl"))
    return Recorded(
        VERSION,
        chats,
        notes=[
            "Qwen Code 0.24.4 headless (-p, stream-json), Node 24; each turn a new process "
            "with --continue (the latest session of the project).",
            f"Automatic compaction: contextWindowSize {WINDOW}, autoCompactThreshold {THRESHOLD}.",
            "Manual compaction: a '/compress' prompt in -p mode (phase 'manual compress').",
        ],
    )
