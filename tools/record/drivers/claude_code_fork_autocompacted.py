"""Claude Code (``@anthropic-ai/claude-code``), a session forked after an automatic
compaction: :mod:`.claude_code_fork_compacted`'s fork and resume, the parent compacted by the
lowered automatic point (``CLAUDE_CODE_AUTO_COMPACT_WINDOW``, ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``,
as in :mod:`.claude_code`) in the middle of turn 2. Recorded into
``tests/fixtures/recorded/claude-code/<version>-fork-autocompacted/``."""

from __future__ import annotations

from ..drive import Context, Recorded
from ..script import Scenario, Step, Want
from .claude_code import AGENT as AGENT  # the same agent folder: claude-code/
from .claude_code import BIG, COMPACTION, SIDE, VERSION
from .claude_code_fork_compacted import fork_tasks, record_fork

NOTES = [
    "a fork after an automatic compaction: turn 1 reads a file, turn 2 writes and cats a long "
    "one, which crosses the lowered point (CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000, "
    "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=40: 32,000 tokens), then '--resume ID --fork-session -p' "
    "starts a second session file (phase 'fork'), then '--resume FORK -p' goes on in the fork "
    "(phase 'fork resumed')",
    "no side call: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 sends no title or topic request",
]


def scenario() -> Scenario:
    return Scenario(
        tasks={
            **fork_tasks(),
            "c3": [
                Step(
                    "Writing the report.",
                    [Want("write", {"path": "{P}/report.txt", "content": BIG})],
                ),
                Step("Checking it.", [Want("shell", {"command": "cat report.txt"})]),
            ],
        },
        compaction_markers=COMPACTION,
        side_markers=SIDE,
    )


def record(ctx: Context) -> Recorded:
    first = [
        ("turn 1", ["-p", "task-a1 Read the notes."]),
        ("turn 2", ["--resume", "{SID}", "-p", "task-c3 Write a report and check it."]),
    ]
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "40"}
    rec = Recorded(f"{VERSION}-fork-autocompacted", [], NOTES)
    return record_fork(ctx, scenario(), first, env, rec)
