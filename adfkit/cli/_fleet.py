"""``adfkit export``: many agent files to Parquet folders (one per agent)."""

from __future__ import annotations

import argparse

from adfkit._facade.fleet import export
from adfkit.cli._common import add_command, error, say


def cmd_export(args: argparse.Namespace) -> int:
    """Export every table and the history of each agent to Parquet, one folder per agent.

    PATH is a file, a folder (its agent files) or a quoted glob pattern; several may be given.
    Each folder gets <table>.parquet (pandas dtypes round-trip) plus meta.json, config.json
    (secrets redacted) and info.json; adf_identity is never read. --redact blanks message bodies,
    tool inputs and results, and file contents. A file that cannot be read is reported on
    stderr and the others are still exported (exit 1; exit 2 when none could be).

    With --otlp FILE (and/or --otlp-endpoint URL) each agent becomes an OpenTelemetry GenAI
    trace instead: one OTLP/JSON line per agent in FILE, or OTLP/HTTP to the endpoint (a
    Phoenix or collector's .../v1/traces); --with-messages adds the messages (redacted with
    --redact).

    Example: adfkit export "sample_agents/*.adf" --to build/export --redact
    """
    if args.otlp or args.otlp_endpoint:
        return _export_otlp(args)
    written, errors = export(
        args.paths,
        args.to,
        redact=args.redact,
        engine=args.engine,
        workers=args.workers,
        progress=False if args.quiet else None,
        prices=args.prices,
    )
    for path, _err, msg in errors.itertuples(index=False):
        error(f"{path}: {msg}")
    if not len(written):
        return 2
    agents = written["agent"].nunique()
    say(f"exported {agents} agent(s), {len(written)} file(s) to {args.to}")
    return 1 if len(errors) else 0


def _export_otlp(args: argparse.Namespace) -> int:
    from adfkit._facade.fleet import export_otlp

    n, errors = export_otlp(
        args.paths,
        to=args.otlp,
        endpoint=args.otlp_endpoint,
        with_messages=args.with_messages,
        redact=args.redact,
    )
    for path, _err, msg in errors:
        error(f"{path}: {msg}")
    where = " and ".join(x for x in (args.otlp, args.otlp_endpoint) if x)
    say(f"exported {n} span(s) to {where}")
    return (2 if not n else 1) if errors else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``export`` subcommand."""
    p = add_command(
        sub,
        "export",
        cmd_export,
        help="every table of many agents to Parquet",
        prices=True,
    )
    p.add_argument(
        "--to", default=".", metavar="DIR", help="output folder (default: the current folder)"
    )
    p.add_argument("--redact", action="store_true", help="blank message bodies and contents")
    p.add_argument("--otlp", metavar="FILE", help="OpenTelemetry GenAI spans as OTLP JSON lines")
    p.add_argument("--otlp-endpoint", metavar="URL", help="send the spans by OTLP/HTTP")
    p.add_argument("--with-messages", action="store_true", help="with --otlp: the messages too")
    p.add_argument(
        "--engine",
        default="serial",
        choices=["serial", "processes", "dask"],
        help="how to spread the files (default serial)",
    )
    p.add_argument("--workers", type=int, default=None, help="processes or dask workers")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
