"""``adfkit usage``: tokens, cost and compactions per session or per day, as ccusage shows them
(its ``session`` and ``daily`` reports), with the compaction columns ccusage does not have."""

from __future__ import annotations

import argparse
import sys

from adfkit._facade.fleet import problem_rows, settle
from adfkit._facade.usage.days import SORT_KEYS, records, render, summarize
from adfkit._facade.usage.reading import usage_fleet
from adfkit.cli._common import add_command, agent_inputs, dump_json, error, say

# No pandas here: ``adfkit usage`` reads transcripts with their parsers alone and a fresh index
# from its manifest (adfkit._facade.usage.days); other formats load it on first use.


def cmd_usage(args: argparse.Namespace) -> int:
    """Tokens, cost and compactions of many sessions: one row per session, day or month.

    PATH is a file, a folder (every agent file in it and its subfolders, each in its own format:
    a whole ~/.claude/projects, a folder of Inspect logs) or a quoted glob; a folder or file
    that cannot be read is an error line, never skipped without a word; a file found in a folder
    that no format reads (a recorder's requests.jsonl) is skipped, all of them in one note
    (--verbose lists them). A session counts its subagents' calls (a Claude Code session's
    subagent files, sidechains and Task subagents seen only in progress records, as ccusage
    counts them); each sample of an Inspect log is a session of its own. input is the uncached
    part of the prompt (as ccusage counts it); cache write and cache read the rest; max context
    the largest prompt of one call; "-" where the files do not record a figure. compactions and
    micro count the compactions and the microcompactions (tool results cleared) apart. Cost is
    "-" when a model has no price (pass --prices FILE); the line "priced calls" then sums the
    known costs. Days are UTC unless --tz names a time zone; --since and --until keep the days
    between them (YYYY-MM-DD or YYYYMMDD, both included). --cache DIR keeps each file's figures
    in a Parquet index (see adfkit index) so that a second run reads only the files that
    changed. A progress bar goes to stderr on a terminal (20 files or more) or with --progress.

    --json prints a list of rows with these keys, in this order (null where unknown): for
    --by session label, agent (the session id or sample name), agent_path; for --by day or
    month, day or month and sessions; then first_at, last_at (ISO 8601, UTC), models
    (comma-separated), calls, input, output, cache_write, cache_read, cost_usd (null when a
    call's cost is unknown), cost_known_usd (the sum of the known costs), unpriced_calls,
    compactions, microcompactions, max_context.

    Example: adfkit usage ~/.claude/projects --by day --since 2026-01-01 --tz Europe/Paris
    """
    import sys
    import warnings

    from adfkit._facade.usage.days import between, time_zone

    tz = time_zone(args.tz)
    found = agent_inputs(args.paths)
    progress = args.progress or (sys.stderr.isatty() and len(found.inputs) >= 20)
    with warnings.catch_warnings():  # one warning from the rows below, not one per file
        warnings.filterwarnings("ignore", message=".*no price for model")
        days, errors = usage_fleet(
            found.inputs,
            prices=args.prices,
            engine=args.engine,
            cache=args.cache,
            tz=args.tz if tz is not None else None,
            progress=progress,
        )
    errors = problem_rows(found.problems) + settle(found, errors)[0]
    for path, _err, msg in errors:
        error(f"{path}: {msg}")
    if not days and errors:
        return 2
    days = between(days, args.since, args.until)
    table = summarize(days, args.by, sort=args.sort, order=args.order) if days else []
    _warn_unknown_cost(table, args.prices)
    if args.json:
        say(dump_json(records(table)))
    elif table:
        say(render(table, args.by, tz))
    else:
        say("no calls")
    return 1 if errors else 0


def _warn_unknown_cost(table: list[dict], prices: str | None) -> None:
    """One warning for every call whose cost is unknown: how many, and the models with no
    price."""
    n = sum(r["unpriced_calls"] for r in table)
    if not n:
        return
    from adfkit._core.prices import load_prices, price_for

    known = load_prices(prices)
    models = sorted(
        {m for r in table if r["unpriced_calls"] and r["models"] for m in r["models"].split(", ")}
    )
    unpriced = [m for m in models if price_for(known, m) is None]
    if unpriced:
        which = f" (no price for model(s) {', '.join(map(repr, unpriced))})"
        how = "; pass --prices FILE (a JSON price table) to price them"
    else:  # every model has a price: the record states no tokens (a Letta agent file), or
        which, how = " (the record does not state their tokens)", ""  # not split
    say(
        f"adfkit: warning: the cost of {n:,} call(s) is unknown{which}: their cost is shown as "
        f"unknown{how}",
        err=True,
    )


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
        choices=["session", "day", "month"],
        default="session",
        help="one row per session (default), day or month",
    )
    p.add_argument("--since", metavar="DAY", help="only days from DAY (YYYY-MM-DD or YYYYMMDD)")
    p.add_argument("--until", metavar="DAY", help="only days up to DAY (included)")
    p.add_argument(
        "--tz",
        metavar="ZONE",
        default=None,
        help="the time zone days are counted in (an IANA name: Europe/Paris; default UTC)",
    )
    p.add_argument(
        "--sort",
        choices=list(SORT_KEYS),
        default=None,
        help="order the rows by this figure (default: sessions in input order, days in order)",
    )
    p.add_argument(
        "--order",
        choices=["asc", "desc"],
        default=None,
        help="the order of --sort (default: asc for date, desc for the others)",
    )
    p.add_argument(
        "--progress", action="store_true", help="a progress bar on stderr (default: on a terminal)"
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

    found = agent_inputs(args.paths)
    for p in found.problems:
        error(p)
    status = 2 if found.problems else 0
    n = len(found.inputs)
    progress = args.progress or (sys.stderr.isatty() and n >= 20)
    tables = args.table or INDEX_TABLES
    if "all" in tables:
        tables = [t.name for t in exported()]
    each = found._replace(problems=[])  # printed above, once
    for table in tables:
        got = load_fleet(each, table, engine=args.engine, progress=progress, cache=args.to)
        df, errors = got
        for path, _err, msg in errors.itertuples(index=False):
            error(f"{path}: {table}: {msg}")
        status = max(status, 1 if len(errors) else 0)
        read = n - len(errors) - len(got.skipped)
        say(f"{table}: {read} file(s), {len(df):,} row(s) in {args.to}")
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
    p.add_argument(
        "--progress", action="store_true", help="a progress bar on stderr (default: on a terminal)"
    )
