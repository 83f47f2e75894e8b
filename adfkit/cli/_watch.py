"""``adfkit watch``: running agents followed as they write."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from adfkit._base.errors import AdfError
from adfkit._facade.fleet import settle
from adfkit.cli._common import add_command, agent_paths, error, say


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow running agents: one line each, updated in place, with the context size against
    the compaction threshold, the model calls and the cost so far; each compaction is printed
    as it lands, with the context before and after it and the rows it swept.

    A Claude Code session, a Codex rollout (.jsonl), a pi session or a Copilot CLI session
    (its folder or events.jsonl) is read incrementally (each update reads only the bytes
    appended; a file rewritten or cut is read again from its start, with a note); other
    records are read again in full when they change (an ADF file read-only, its WAL
    included). Stop with Ctrl-C; --once prints the figures once and exits.

    Example: adfkit watch ~/.claude/projects/-home-me-webapp/*.jsonl
    """
    from adfkit._facade.watch import Watched, landed_text, status_text

    watched: list[Any] = []
    found = agent_paths(args.paths)
    unclaimed: list[tuple[str, str, str]] = []
    for path in found.inputs:
        try:
            watched.append(Watched(path))
        except AdfError as exc:
            if found.skips(path, type(exc).__name__):
                unclaimed.append((path, type(exc).__name__, exc.detail))
            else:
                error(exc)
    settle(found, unclaimed)
    if not watched:
        return 2
    tty = sys.stdout.isatty() and not args.once
    shown = 0
    try:
        while True:
            lines = []
            for w in watched:
                for landed in w.update():
                    lines.append(f"{w.path.name}: {landed_text(landed)}")
                lines += w.notes
                w.notes.clear()
            if tty and shown:  # back over the status lines, to write them again in place
                sys.stdout.write(f"\x1b[{shown}F\x1b[J")
            for line in lines:
                say(line)
            for w in watched:
                say(status_text(w.path.name, w.figures, w.threshold))
            shown = len(watched)
            sys.stdout.flush()
            if args.once:
                return 0
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def register(sub: Any) -> None:
    """Add the ``watch`` subcommand."""
    p = add_command(sub, "watch", cmd_watch, help="follow running agents as they write")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between looks")
    p.add_argument("--once", action="store_true", help="print the figures once and exit")
