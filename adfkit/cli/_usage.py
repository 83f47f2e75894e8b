"""``adfkit usage``: tokens, cost and compactions per session or per day, as ccusage shows them
(its ``session`` and ``daily`` reports), with the compaction columns ccusage does not have."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from adfkit._facade.usage_fleet import usage_fleet
from adfkit._facade.usage_table import records, render, summarize
from adfkit.cli._common import add_command, agent_paths, dump_json, error, say

# No pandas here: ``adfkit usage`` reads transcripts with their parsers alone and a fresh index
# from its manifest (adfkit._facade.usage_table); other formats load it on first use.


def session_paths(specs: list[str]) -> list[str]:
    """Agent files named: a folder is searched through all its subfolders (a whole
    ``~/.claude/projects``), subagent transcripts left out (they count with their session)."""
    out: list[str] = []
    for spec in specs:
        if os.path.isdir(spec) and not spec.rstrip("/").endswith(".adf"):
            found = sorted(
                str(p)
                for pattern in ("*.adf", "*.jsonl", "*.jsonl.zst")
                for p in Path(spec).rglob(pattern)
                if not p.name.startswith("agent-") and p.parent.name != "subagents"
            )
            out += found or agent_paths([spec])  # none: the usual "no agent files" error
        else:
            out += agent_paths([spec])
    return list(dict.fromkeys(out))


def cmd_usage(args: argparse.Namespace) -> int:
    """Tokens, cost and compactions of many sessions: one row per session, or per UTC day.

    PATH is a file, a folder (every agent file in it and its subfolders: a whole
    ~/.claude/projects) or a quoted glob. A Claude Code session counts its subagents' calls.
    input is the uncached part of the prompt (as ccusage counts it); cache write and cache read
    the rest; max context the largest prompt of one call. compactions and micro count the
    compactions and the microcompactions (tool results cleared) apart. Cost is "-" when a model
    has no price (pass --prices FILE). --cache DIR keeps each file's figures in a Parquet index
    (see adfkit index) so that a second run reads only the files that changed.

    Example: adfkit usage ~/.claude/projects --by day
    """
    paths = session_paths(args.paths)
    days, errors = usage_fleet(paths, prices=args.prices, engine=args.engine, cache=args.cache)
    for path, _err, msg in errors:
        error(f"{path}: {msg}")
    if not days and errors:
        return 2
    table = summarize(days, args.by) if days else []
    if args.json:
        say(dump_json(records(table)))
    elif table:
        say(render(table, args.by))
    else:
        say("no calls")
    return 1 if errors else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``usage`` subcommand."""
    p = add_command(
        sub,
        "usage",
        cmd_usage,
        help="tokens, cost, compactions per session or day",
        json=True,
        prices=True,
    )
    p.add_argument(
        "--by",
        choices=["session", "day"],
        default="session",
        help="one row per session (default) or per UTC day",
    )
    p.add_argument(
        "--cache",
        metavar="DIR",
        default=None,
        help="a Parquet index folder (adfkit index): unchanged files are not re-read",
    )
    p.add_argument(
        "--engine",
        default="processes",
        choices=["serial", "processes"],
        help="how to spread the files (default processes; serial for small fleets)",
    )
    _register_index(sub)


#: Tables ``adfkit index`` keeps by default: what ``adfkit usage`` and fleets of usage and
#: compactions read.
INDEX_TABLES = ("usage_days", "usage", "compactions")


def cmd_index(args: argparse.Namespace) -> int:
    """Keep each file's tables in a Parquet index, so that later runs read only what changed.

    PATH is a file, a folder (searched through its subfolders) or a quoted glob. DIR gets one
    folder per table (usage_days, usage, compactions by default; --table to choose), each a
    plain Parquet dataset: one part per file, keyed by its path, size, modification time and
    adfkit's version. A file that changed since it was indexed is read again; one that changes
    while it is read is left out of the index. Read it with load_fleet(..., cache=DIR),
    adfkit usage --cache DIR, DuckDB (select * from 'DIR/usage/*.parquet') or Dask
    (dask.dataframe.read_parquet('DIR/usage')).

    Example: adfkit index ~/.claude/projects --to build/index
    """
    from adfkit._facade.catalog import exported
    from adfkit._facade.fleet import load_fleet

    paths = session_paths(args.paths)
    status = 0
    tables = args.table or INDEX_TABLES
    if "all" in tables:
        tables = [t.name for t in exported()]
    for table in tables:
        df, errors = load_fleet(paths, table, engine=args.engine, progress=False, cache=args.to)
        for path, _err, msg in errors.itertuples(index=False):
            error(f"{path}: {table}: {msg}")
        status = max(status, 1 if len(errors) else 0)
        say(f"{table}: {len(paths) - len(errors)} file(s), {len(df):,} row(s) in {args.to}")
    return status


def _register_index(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "index", cmd_index, help="keep many agents' tables in a Parquet index")
    p.add_argument("--to", required=True, metavar="DIR", help="the index folder")
    p.add_argument(
        "--table",
        action="append",
        metavar="TABLE",
        help=f"a table to keep (repeatable; 'all': every table export writes; default "
        f"{', '.join(INDEX_TABLES)})",
    )
    p.add_argument(
        "--engine",
        default="processes",
        choices=["serial", "processes"],
        help="how to spread the files (default processes; serial for small fleets)",
    )
