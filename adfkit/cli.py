"""Command-line interface: ``adfkit <command> PATH``. Each command is a thin layer over the API.

Exit status: 0 success, 1 findings (for checks), 2 unreadable input or bad usage.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__
from ._agent import open_adf
from ._errors import AdfError

Handler = Callable[[argparse.Namespace], int]


def _fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def format_info(info: dict[str, Any]) -> str:
    """Render ``AgentFile.info()`` as aligned ``key: value`` lines."""
    audit = info["audit_rows"]
    audit_txt = ", ".join(f"{k} {v}" for k, v in sorted(audit.items())) or "none"
    switches = info["audit_settings"]
    on = [k for k, v in switches.items() if v]
    lo, hi = info["loop_seq_range"]
    lines = [
        ("agent", f"{info['name']}" + (f" (@{info['handle']})" if info.get("handle") else "")),
        ("file", f"{info['path']} ({_fmt_bytes(info['file_bytes'])})"),
        ("schema", f"{info['schema_version']} (adf {info['adf_version']})"),
        (
            "state",
            ("live or crashed" if info["live"] else "closed cleanly")
            + (f"; sidecars {', '.join(info['sidecars'])}" if info["sidecars"] else "")
            + (f"; last turn {info['turn_checkpoint']}" if info["turn_checkpoint"] else ""),
        ),
        (
            "model",
            f"{info['model'] or '-'}" + (f" via {info['provider']}" if info["provider"] else ""),
        ),
        (
            "live loop",
            f"{info['loop_rows']:,} rows"
            + (f", seq {lo}..{hi}" if lo is not None else "")
            + (f", highest seq ever {info['highest_seq']}" if info["highest_seq"] else ""),
        ),
        (
            "audit",
            audit_txt
            if info.get("audited_loop_entries") is None  # info() without sizes=True
            else f"{audit_txt}; {info['audited_loop_entries']:,} archived loop entries, "
            f"{_fmt_bytes(info['audit_compressed_bytes'])} compressed",
        ),
        ("audit on", ", ".join(on) or "nothing (compacted history is discarded)"),
        ("threshold", f"{info['compact_threshold']:,} tokens"),
        ("messages", f"inbox {info['inbox_rows']}, outbox {info['outbox_rows']}"),
        ("files", f"{info['files']}"),
        ("active", f"{info['first_live_at'] or '-'} .. {info['last_live_at'] or '-'}"),
    ]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in lines)


def cmd_info(args: argparse.Namespace) -> int:
    """Print a summary of an agent file (cheap: no blob is decoded; audit sizes included).

    Example: adfkit info sample_agents/long-runner.adf
    """
    with open_adf(args.path) as agent:
        info = agent.info(sizes=True)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        print(format_info(info))
    return 0


def add_command(
    sub: Any,
    name: str,
    handler: Handler,
    *,
    help: str,  # noqa: A002 - argparse's own name
    path_help: str = "an .adf file",
    path_metavar: str | None = None,
    json: bool = False,
) -> argparse.ArgumentParser:
    """Add subcommand ``name``: its ``--help`` text is the handler's docstring (ending with an
    ``Example:`` line), it takes one positional ``path`` and, with ``json``, a ``--json`` flag.
    Every command module registers through here, so all commands share one shape."""
    p = sub.add_parser(
        name,
        help=help,
        description=inspect.cleandoc(handler.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", help=path_help, metavar=path_metavar)
    if json:
        p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=handler)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adfkit", description="Look inside the memory of ADF agents (read-only)."
    )
    parser.add_argument("--version", action="version", version=f"adfkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_command(sub, "info", cmd_info, help="summary of an agent file", json=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


#: Modules that add subcommands: each has ``register(subparsers)``. Kept as a list so that
#: each concern owns its commands in its own file.
COMMAND_MODULES = [
    "adfkit._cli_plot",
    "adfkit._cli_observe",
    "adfkit._cli_fleet",
    "adfkit._cli_report",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = _show_warning
            return int(args.func(args))
    except AdfError as exc:
        print(f"adfkit: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - `adfkit ... | head`
        return 0
    except (KeyboardInterrupt, SystemExit):  # pragma: no cover
        raise
    except Exception as exc:  # a bug, not bad input: still one line, no traceback
        if os.environ.get("ADFKIT_TRACEBACK"):
            raise
        print(
            f"adfkit: error: internal error ({type(exc).__name__}: {exc}); "
            "please report it (set ADFKIT_TRACEBACK=1 for details)",
            file=sys.stderr,
        )
        return 2


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Warnings as one ``adfkit: warning: ...`` line each (no source line, no traceback)."""
    print(f"adfkit: warning: {message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
