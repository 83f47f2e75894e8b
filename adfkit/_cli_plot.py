"""``adfkit plot``: draw one plot of an agent file to a PNG (or every plot into a folder)."""

from __future__ import annotations

import argparse
import os
import sys

from ._cli_common import add_command
from ._errors import AdfError
from ._open import refuse_beside_input


def cmd_plot(args: argparse.Namespace) -> int:
    """Draw a plot of an agent file and write it as a PNG (read-only on the agent file).

    Kinds: context (context size per call against the threshold, with compactions),
    growth (cumulative tokens), spend (tokens per turn), ratio (swept vs summary size per
    compaction), composition (what each call was sent, stacked by part, with compactions),
    all (every kind, written as <stem>-<kind>.png into the folder -o).

    Example: adfkit plot sample_agents/long-runner.adf --kind context -o context.png
    """
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")  # only a file is written: no window, no display needed
    import matplotlib.pyplot as plt

    from . import plots
    from ._agent import open as open_agent

    kinds = [*plots.PLOTS, "all"]
    if args.kind not in kinds:
        raise AdfError(f"--kind must be one of {kinds}, got {args.kind!r}")
    out = os.path.abspath(args.output)
    src = os.path.abspath(args.path)
    if out == src or (args.kind != "all" and os.path.isdir(out)):
        raise AdfError(f"-o {args.output!r} must be a new PNG path, not the input or a folder")
    if args.kind != "all":  # save_all() checks its folder itself
        refuse_beside_input(src, out)
    with open_agent(args.path) as agent:
        if args.kind == "all":
            for p in plots.save_all(agent, out, dpi=args.dpi):
                print(p)
            return 0
        fig = plots.figure_of(plots.PLOTS[args.kind](agent))
        try:
            parent = os.path.dirname(out)
            if parent:
                os.makedirs(parent, exist_ok=True)
            fig.savefig(out, dpi=args.dpi)
        finally:
            plt.close(fig)
    print(args.output)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plot`` subcommand."""
    from .plots import PLOTS

    p = add_command(
        sub,
        "plot",
        cmd_plot,
        help="draw a plot (context sawtooth, token growth, spend, ratio, composition) to a PNG",
    )
    p.add_argument(
        "--kind",
        default="context",
        choices=[*PLOTS, "all"],
        help="which plot (default: context); 'all' writes every kind into the folder -o",
    )
    p.add_argument(
        "-o", "--output", required=True, help="PNG file to write (a folder with --kind all)"
    )
    p.add_argument("--dpi", type=int, default=120, help="resolution (default 120)")
