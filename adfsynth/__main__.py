"""``python -m adfsynth FOLDER [SCENARIO ...]``: write sample agents and their ground truth.

Usage::

    python -m adfsynth sample_agents/          # regenerate every committed sample (ADF,
                                               # Claude Code, Codex, Inspect, OpenHands, pi,
                                               # Copilot CLI, Letta, OpenCode,
                                               # Gemini CLI, OpenClaw)
    python -m adfsynth out/ long-runner clean  # just some scenarios
"""

from __future__ import annotations

import pathlib
import sys

from . import (
    claude_code,
    codex,
    copilot_cli,
    gemini_cli,
    inspect_eval,
    letta,
    openclaw,
    opencode,
    openhands,
    pi,
)
from .writer import write_all


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m adfsynth FOLDER [SCENARIO ...]", file=sys.stderr)
        return 2
    folder, names = argv[0], argv[1:] or None
    if names is None:  # every sample: the other agents' transcripts too
        print(claude_code.write_samples(folder))
        print(codex.write_samples(folder))
        print(inspect_eval.write_samples(folder))
        print(openhands.write_samples(folder))
        print(*pi.write_samples(folder), sep="\n")
        print(*copilot_cli.write_samples(folder), sep="\n")
        print(*letta.write_samples(folder), sep="\n")
        print(*opencode.write_samples(folder), sep="\n")
        print(gemini_cli.write_samples(folder))
        print(openclaw.write_store(folder))
    for name, gt in write_all(folder, names=names).items():
        size = (pathlib.Path(folder) / f"{name}.adf").stat().st_size
        print(
            f"{name}: {size} bytes, live={gt.n_live} history={gt.n_history} "
            f"lost={len(gt.lost_seqs)} "
            f"compactions={len(gt.compactions)} audit_rows={len(gt.audit_rows)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
