"""GitHub Copilot CLI (``@github/copilot``) against the Chat Completions dialect, offline
(``COPILOT_OFFLINE=true``, a BYOK provider of type ``openai`` at the server's ``/v1``).

One session, five ``copilot -p`` runs (the first new, the others ``--continue``): two turns
with tool calls (parallel ones among them), a turn that delegates to a ``task`` subagent, a
turn that reads two big files so the prompt crosses the automatic threshold
(``COPILOT_PROVIDER_MAX_PROMPT_TOKENS`` lowered; Copilot compacts at about 80% of it), a
``/compact`` prompt (a manual compaction), and a turn after it (the resume of a compacted
session). The last turn ends above the threshold: the compaction Copilot starts in the
background then is cancelled when the process exits (``outcome: cancelled``). Its answer is
held until Copilot hangs up (``phase(hold=...)``): whether the answer beat the exit was a race,
its usage written on some runs and not on others; held, the cancelled compaction has no usage
on every run and the log says ``hangup``. The files kept:
the session's ``events.jsonl``, ``workspace.yaml`` and its checkpoints (the summaries Copilot
saves beside the session)."""

from __future__ import annotations

from pathlib import Path

from ..drive import Context, Recorded, npm_install, run
from ..script import Scenario, Step, Want
from ..server import Recorder

AGENT = "copilot-cli"
PACKAGE = "@github/copilot"
VERSION = "1.0.102"
MODEL = "rec-model"
#: Copilot compacts in the background at about 80% of this (its system prompt and tools
#: alone are about 10,500 of its tokens).
MAX_PROMPT_TOKENS = "20000"
#: Copilot sends an automatic compaction in the background beside its next turn call: turn
#: answers wait this long so the compaction is logged and answered first on every run.
TURN_DELAY = 1.0
#: Copilot's summarisation prompt (the runtime's, sent as the last user message).
COMPACTION_MARKERS = (
    "Please create a detailed summary of the conversation so far. The history is being compacted",
)


def _filler(name: str, lines: int) -> str:
    line = "the quick brown fox jumps over the lazy dog"
    return "".join(f"{name} line {i:04d}: {line}\n" for i in range(lines))


def scenario(project: Path) -> Scenario:
    p = str(project)
    sub = "task-s1 inspect the demo project: list it and read README.md, then report."
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
            Step(
                "Delegating.",
                [
                    Want(
                        "task",
                        {
                            "description": "Inspect project",
                            "prompt": sub,
                            "agent_type": "general-purpose",
                            "name": "inspector",
                            "mode": "sync",
                        },
                    )
                ],
            ),
            Step("The subagent looked at the project."),
        ],
        "s1": [
            Step(
                "Listing and reading.",
                [Want("shell", {"command": "ls -la"}), Want("read", {"path": f"{p}/README.md"})],
            ),
            Step("The project has README.md, app.py, notes.txt and test_app.py."),
        ],
        "t3": [
            Step("Reading the first log.", [Want("shell", {"command": "cat logs/big1.txt"})]),
            Step("Reading the second log.", [Want("shell", {"command": "cat logs/big2.txt"})]),
            Step("Reading the third log.", [Want("read", {"path": f"{p}/logs/big3.txt"})]),
            Step("Reading the fourth log.", [Want("shell", {"command": "cat logs/big4.txt"})]),
            Step("Counting lines.", [Want("shell", {"command": "wc -l logs/*.txt"})]),
            Step("Counting words.", [Want("shell", {"command": "wc -w logs/*.txt"})]),
            Step("The logs repeat one line."),
        ],
        "t4": [
            Step(
                "Checking the notes.",
                [
                    Want("read", {"path": f"{p}/notes.txt"}),
                    Want("shell", {"command": "git status --short"}),
                ],
            ),
            Step("Notes still say to add a test; test_app.py is there."),
        ],
        "t5": [
            Step(
                "Reading three logs at once.",
                [Want("shell", {"command": f"cat logs/big{i}.txt"}) for i in (1, 2, 3)],
            ),
            Step("All three logs repeat one line."),
        ],
    }
    return Scenario(tasks, compaction_markers=COMPACTION_MARKERS)


PROMPTS = [
    ("turn 1", "task-t1 read notes.txt and app.py, then add a test for greet."),
    ("turn 2", "task-t2 have a subagent inspect the project."),
    ("turn 3", "task-t3 read the four logs under logs/ and tell me what they hold."),
    ("manual compact", "/compact"),
    ("turn 4", "task-t4 check the notes again."),
    ("turn 5", "task-t5 read three logs at once."),
]


def record(ctx: Context) -> Recorded:
    bin_dir = npm_install(ctx, PACKAGE, VERSION)
    ctx.fresh()
    logs = ctx.project / "logs"
    logs.mkdir()
    for i in (1, 2, 3, 4):
        (logs / f"big{i}.txt").write_text(_filler(f"big{i}", 110))
    notes: list[str] = []
    with Recorder(scenario(ctx.project), ctx.log, turn_delay=TURN_DELAY) as rec:
        env = ctx.env(
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=rec.url + "/v1",
            COPILOT_PROVIDER_TYPE="openai",
            COPILOT_PROVIDER_API_KEY="dummy",
            COPILOT_MODEL=MODEL,
            COPILOT_PROVIDER_MAX_PROMPT_TOKENS=MAX_PROMPT_TOKENS,
            COPILOT_AUTO_UPDATE="false",
        )
        for k, (phase, prompt) in enumerate(PROMPTS):
            last = k == len(PROMPTS) - 1
            rec.phase(phase, hold=("compaction",) if last else ())
            cmd = [str(bin_dir / "copilot"), "-p", prompt, "--allow-all-tools"]
            cmd += ["--output-format", "json"] + (["--continue"] if k else [])
            out = run(ctx, cmd, env, timeout=240)
            if out.returncode != 0:
                notes.append(f"{phase}: copilot exited {out.returncode}")
    state = ctx.home / ".copilot" / "session-state"
    sessions = [d for d in state.iterdir() if (d / "events.jsonl").is_file()]
    files = []
    for d in sessions:
        files += [d / "events.jsonl", d / "workspace.yaml"]
        files += sorted((d / "checkpoints").glob("*.md"))
    notes.append(
        "manual compaction: a /compact prompt in -p mode (Copilot waits 60 s for its event "
        "stream after it, then exits 0)"
    )
    return Recorded(VERSION, [f for f in files if f.is_file()], notes)
