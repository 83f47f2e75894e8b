"""The ``adfkit`` console script: answers ``--version`` before anything heavy is imported,
and hands every other command line to :func:`adfkit.cli.main` (which imports pandas)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from adfkit import __version__

        sys.stdout.write(f"adfkit {__version__}\n")
        return 0
    from adfkit._base.collector import imports_frozen

    # pandas and the CLI imported frozen (not walked by every collection), when this is the
    # program itself (its command line from sys.argv), not a caller's main([...])
    with imports_frozen(entry=argv is None):
        from adfkit.cli import main as cli_main

    return cli_main(args)
