"""``adfkit report PATH -o report.html``: a notebook run headless on one agent file."""

from __future__ import annotations

import argparse
from typing import Any

from ._cli_common import add_command


def cmd_report(args: argparse.Namespace) -> int:
    """Run a notebook on an agent file and write it as one self-contained HTML file.

    The notebook (01-quickstart by default) runs headless in a fresh kernel with AGENT set to
    PATH; plots are inline PNG and nothing is loaded from the network. The report is never
    written beside the agent file.

    Example: adfkit report sample_agents/long-runner.adf -o build/long-runner-report.html
    """
    from ._report import write_report

    out = write_report(args.path, args.output, notebook=args.notebook, timeout=args.timeout)
    print(out)
    return 0


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    from ._report import DEFAULT_NOTEBOOK, available_notebooks

    p = add_command(
        subparsers, "report", cmd_report, help="run a notebook on an agent file and write HTML"
    )
    p.add_argument(
        "-o", "--output", required=True, help="the HTML file to write (not beside the input)"
    )
    names = available_notebooks()
    p.add_argument(
        "--notebook",
        default=DEFAULT_NOTEBOOK,
        help=f"notebook name, unique prefix or .ipynb path (default {DEFAULT_NOTEBOOK}; "
        f"bundled: {', '.join(names) or 'none found'})",
    )
    p.add_argument("--timeout", type=int, default=120, help="seconds allowed per cell")
