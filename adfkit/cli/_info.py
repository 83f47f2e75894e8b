"""``adfkit info``: a cheap summary of one or more agent files."""

from __future__ import annotations

import argparse
from typing import Any

from adfkit._facade.info_lines import format_info
from adfkit.cli._common import add_command, dump_json, for_each_agent, say, single


def open_agent(path: str) -> Any:
    """:func:`adfkit.open`, imported when a command first opens a file (an index hit never
    does); a module-level name, so a test can put another opener in its place."""
    from adfkit._facade.agent import open as open_any_agent

    return open_any_agent(path)


#: Agents of one input (an Inspect log's samples) ``adfkit info`` summarises: each is parsed.
MAX_AGENTS = 50


def cmd_info(args: argparse.Namespace) -> int:
    """Print a summary of each agent file (cheap: no blob is decoded; audit sizes included).

    Several paths, folders or quoted globs may be given; each file gets its summary (a JSON
    list with --json and more than one file).

    Example: adfkit info sample_agents/*.adf
    """
    docs: list[dict[str, Any]] = []

    def one(path: str) -> int:
        import itertools

        from adfkit._facade.agent import AgentCollection

        with open_agent(path) as opened:
            many = isinstance(opened, AgentCollection)
            agents = iter(opened) if many else iter([opened])
            if many and len(opened) > MAX_AGENTS:  # each costs a parse: 100,000 took hours
                say(
                    f"adfkit: warning: {path}: {len(opened):,} agents; the first {MAX_AGENTS} "
                    f"are shown (name one as {path}#NAME)",
                    err=True,
                )
            for agent in itertools.islice(agents, MAX_AGENTS):
                doc: dict[str, Any] = dict(agent.info())
                doc["lost_seqs"] = int(agent.history_gaps()["n_seqs"].sum())
                docs.append(doc)
                if not args.json:
                    if len(docs) > 1:
                        say()
                    say(format_info(docs[-1]))
        return 0

    status = for_each_agent(args.paths, one)
    if args.json:
        print(dump_json(docs[0] if len(docs) == 1 and single(args.paths) else docs))
    return status


def register(sub: Any) -> None:
    """Add ``info``."""
    add_command(sub, "info", cmd_info, help="summary of agent files", json=True)
