"""``adfkit plot``: draw a plot of agent files to PNG files (or every plot into a folder)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from adfkit._base.errors import AdfError
from adfkit._base.outputs import check_output, unique_names
from adfkit.cli._common import (
    LazyChoices,
    add_command,
    agent_inputs,
    each_agent,
    error,
    for_each_agent,
    say,
)


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
    """Draw a plot of agent files and write each as a PNG (read-only on the agent files).

    Kinds: context (context size per call against the threshold, with compactions),
    growth (cumulative tokens), spend (tokens per turn), ratio (swept vs summary size per
    compaction), composition (what each call was sent, stacked by part, with compactions),
    window (the parts of the context window at one call: --seq, default the last),
    all (every kind, written as <stem>-<kind>.png into the folder -o).

    -o is a PNG file for one kind of one agent (.png is added to a name without a suffix), and
    a folder (<stem>-<kind>.png in it) for --kind all, for several agents, or when it is a
    folder already or ends with /. Every path written is printed, one a line. The output may
    go anywhere, the agent file's folder included, but never onto the agent file or the names
    SQLite uses beside it (<file>-wal, <file>-shm, <file>-journal).

    Example: adfkit plot sample_agents/long-runner.adf --kind context -o context.png
    """
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")  # only a file is written: no window, no display needed

    found = agent_inputs(args.paths)
    for p in found.problems:
        error(p)
    from adfkit import plots

    kinds = _kinds()
    if args.kind not in kinds:
        raise AdfError(f"--kind must be one of {kinds}, got {args.kind!r}")
    if args.seq is not None and args.kind != "window":
        raise AdfError("--seq picks the call of --kind window; it does not apply to other kinds")
    each = each_agent(found)  # each agent of a multi-agent input; no file no format claims
    paths = each.inputs
    folder = _folder(args.output, args.kind, len(paths))
    from adfkit._core import registry

    names = iter(unique_names([registry.agent_stem(p) for p in paths]))

    def one(path: str) -> int:
        name = next(names)
        if args.kind == "all":
            check_output(folder, registry.input_places(paths))  # type: ignore[arg-type]
            from adfkit._facade.agent import open as open_agent

            with open_agent(path) as agent:
                try:
                    written = plots.save_all(agent, folder, dpi=args.dpi)  # type: ignore[arg-type]
                except ValueError as exc:  # what a plot cannot draw: one line, as for one kind
                    raise AdfError(str(exc)) from None
            for p in written:
                say(str(p))
            return 0
        if folder is not None:
            out = os.path.join(folder, f"{name}-{args.kind}.png")
        else:
            out = png_path(args.output or f"{name}-{args.kind}")
        _draw(path, out, args, paths)
        return 0

    return max(for_each_agent(each, one), 2 if found.problems else 0)


def _folder(output: str | None, kind: str, n: int) -> str | None:
    """The folder the PNG files go into, or None when ``-o`` names one PNG file: with --kind
    all, for several agents, and when -o is a folder (it exists, or ends with ``/``)."""
    folder_given = output is not None and (output.endswith(("/", os.sep)) or os.path.isdir(output))
    if not (kind == "all" or n > 1 or folder_given):
        return None
    folder = output or "."  # outputs go to the current folder by default
    if Path(folder).suffix.lower() == ".png":
        why = "with --kind all" if kind == "all" else f"for {n} agents"
        raise AdfError(
            f"-o {folder!r}: {why}, -o is a folder for the PNG files; "
            "give a folder name, not a .png name"
        )
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise AdfError(f"-o {folder!r} exists and is not a folder")
    return folder


def _kinds() -> list[str]:
    """The ``--kind`` values: each plot's name, and ``all``."""
    from adfkit import plots

    return [*plots.PLOTS, "all"]


def _draw(path: str, out: str, args: argparse.Namespace, paths: list[str]) -> None:
    """One plot of one agent, written to ``out`` (a PNG file)."""
    import matplotlib.pyplot as plt

    from adfkit import plots
    from adfkit._core.registry import input_places

    check_output(out, input_places(paths))
    from adfkit._facade.agent import open as open_agent

    with open_agent(path) as agent:
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
        choices=LazyChoices(_kinds),
        metavar="KIND",  # the kinds are listed above; naming them here would load the plots
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
