"""``adfkit plot``: draw one plot of an agent file to a PNG (or every plot into a folder)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import plots
from ._agent import open as open_agent
from ._cli_common import add_command, agent_paths, say
from ._errors import AdfError
from ._outputs import check_output, safe_name


def png_path(output: str) -> str:
    """The file a single plot's ``-o`` names: as given when it ends in ``.png``, with
    ``.png`` added when it has no suffix; any other suffix is an error (plots are PNG)."""
    suffix = Path(output).suffix
    if not suffix:
        return output + ".png"
    if suffix.lower() != ".png":
        raise AdfError(f"-o {output!r}: plots are written as PNG; give a .png name (or none)")
    return output


def cmd_plot(args: argparse.Namespace) -> int:
    """Draw a plot of an agent file and write it as a PNG (read-only on the agent file).

    Kinds: context (context size per call against the threshold, with compactions),
    growth (cumulative tokens), spend (tokens per turn), ratio (swept vs summary size per
    compaction), composition (what each call was sent, stacked by part, with compactions),
    window (the parts of the context window at one call: --seq, default the last),
    all (every kind, written as <stem>-<kind>.png into the folder -o).

    -o is a PNG file for one kind (.png is added to a name without a suffix) and a folder
    for --kind all. Every path written is printed, one a line. The output may go anywhere,
    the agent file's folder included, but never onto the agent file or the names SQLite
    uses beside it (<file>-wal, <file>-shm, <file>-journal).

    Example: adfkit plot sample_agents/long-runner.adf --kind context -o context.png
    """
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")  # only a file is written: no window, no display needed
    import matplotlib.pyplot as plt

    paths = agent_paths(args.paths)
    if len(paths) != 1:
        raise AdfError(f"adfkit plot draws one agent at a time; {len(paths)} were given")
    kinds = [*plots.PLOTS, "all"]
    if args.kind not in kinds:
        raise AdfError(f"--kind must be one of {kinds}, got {args.kind!r}")
    if args.seq is not None and args.kind != "window":
        raise AdfError("--seq picks the call of --kind window; it does not apply to other kinds")
    if args.output is None:  # outputs go to the current folder by default
        args.output = "." if args.kind == "all" else f"{safe_name(Path(paths[0]).stem)}-{args.kind}"
    if args.kind == "all":
        if Path(args.output).suffix.lower() == ".png":
            raise AdfError(
                f"-o {args.output!r}: with --kind all, -o is a folder for the PNG files; "
                "give a folder name, not a .png name"
            )
        check_output(args.output, paths)
        if os.path.exists(args.output) and not os.path.isdir(args.output):
            raise AdfError(f"-o {args.output!r} exists and is not a folder")
        with open_agent(paths[0]) as agent:
            try:
                written = plots.save_all(agent, args.output, dpi=args.dpi)
            except ValueError as exc:  # what a plot cannot draw: one line, as for one kind
                raise AdfError(str(exc)) from None
            for p in written:
                say(str(p))
        return 0
    out = png_path(args.output)
    if os.path.isdir(out):
        raise AdfError(f"-o {out!r} is a folder; give a PNG file name (or use --kind all)")
    check_output(out, paths)
    with open_agent(paths[0]) as agent:
        extra = {} if args.seq is None else {"seq": args.seq}
        try:
            ax = plots.PLOTS[args.kind](agent, **extra)
        except ValueError as exc:
            raise AdfError(str(exc)) from None
        fig = plots.figure_of(ax)
        try:
            parent = os.path.dirname(out)
            if parent:
                os.makedirs(parent, exist_ok=True)
            fig.savefig(out, dpi=args.dpi, format="png")
        finally:
            plt.close(fig)
    say(out)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plot`` subcommand."""
    p = add_command(
        sub,
        "plot",
        cmd_plot,
        help="draw a plot (context sawtooth, token growth, spend, ratio, composition, window) "
        "to a PNG",
    )
    p.add_argument(
        "--kind",
        default="context",
        choices=[*plots.PLOTS, "all"],
        help="which plot (default: context); 'all' writes every kind into the folder -o",
    )
    p.add_argument(
        "-o",
        "--output",
        help="PNG file to write (.png added when there is no suffix); a folder with --kind all "
        "(default: <stem>-<kind>.png, or the current folder, here)",
    )
    p.add_argument(
        "--seq", type=int, default=None, help="--kind window: the call's seq (default: the last)"
    )
    p.add_argument("--dpi", type=int, default=120, help="resolution (default 120)")
