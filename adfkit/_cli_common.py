"""What every CLI command shares: one way to declare a subcommand."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from typing import Any

Handler = Callable[[argparse.Namespace], int]


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
    p: argparse.ArgumentParser = sub.add_parser(
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
