"""``adfkit report``: a notebook run headless on agent files, as HTML; ``adfkit notebooks``:
the bundled notebooks copied out for a pip user."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from adfkit._base.bundled import (
    NOTEBOOKS_EXTRA,
    has_jupyterlab,
    notebooks_dir,
    sample_files,
    sample_folder,
    skip_iri_grammar,
)
from adfkit._base.collector import imports_frozen, own_process
from adfkit._base.errors import AdfError
from adfkit._base.outputs import check_output, unique_names
from adfkit._core import registry
from adfkit._facade.report import DEFAULT_NOTEBOOK, available_notebooks, stderr_progress
from adfkit.cli._common import (
    add_command,
    agent_inputs,
    cleandoc,
    each_agent,
    error,
    for_each_agent,
    say,
)
from adfkit.report import write_report


def cmd_report(args: argparse.Namespace) -> int:
    """Write each agent file as one self-contained HTML report.

    By default the plain report, made in this process with no kernel (about a second): which
    agent and file, tokens and cost, the plots, each compaction with what it swept and its
    summary, and what forgetting cost. --notebook NAME runs a bundled notebook (or an .ipynb)
    headless in a fresh kernel with AGENT set to PATH instead (needs the notebooks extra;
    progress on stderr). Either way plots are inline PNG, agent text is escaped, and nothing
    is loaded from the network; --no-plots leaves the plots out of the plain report (tables
    and text only, about half the CPU: matplotlib is not imported). A file of several agents
    (an Inspect log's samples) gets a report per agent. Output: -o FILE.html for one agent;
    -o FOLDER (<stem>-report.html in it) for several agents, or when it is a folder already or
    ends with / (default: <stem>-report.html in the current folder). The paths written go to stdout.

    Example: adfkit report sample_agents/long-runner.adf -o build/long-runner-report.html
    """
    if args.notebook is not None and args.no_plots:
        raise AdfError("--no-plots is the plain report's; a --notebook draws what it draws")
    if args.notebook is None:
        with imports_frozen():  # before any file is read: modules only (pandas too)
            from adfkit.report.page import preload

            preload(plots=not args.no_plots, docstrings=not own_process())
    skip_iri_grammar()
    found = agent_inputs(args.paths)
    for p in found.problems:
        error(p)
    each = each_agent(found)  # each agent of a multi-agent input; no file no format claims
    paths = each.inputs
    out = args.output
    many = len(paths) > 1
    if many and out is not None and Path(out).suffix.lower() in (".html", ".htm"):
        raise AdfError(
            f"-o {out} names one file, but {len(paths)} agents were given: give a folder"
        )
    # -o is a folder for several agents, and when it is one already or ends with /
    into_folder = out is not None and (many or out.endswith(("/", os.sep)) or os.path.isdir(out))
    # one name per agent, never two alike (two sessions of one uuid from two project folders)
    names = iter(f"{n}-report.html" for n in unique_names(registry.agent_stem(p) for p in paths))
    places = registry.input_places(paths)

    def one(path: str) -> int:
        name = next(names)
        target = Path(out) / name if into_folder else (Path(out) if out else Path(name))
        check_output(target, places)  # onto no input of the run, not only its own
        written = write_report(
            path,
            target,
            notebook=args.notebook,
            timeout=args.timeout,
            prices=args.prices,
            progress=None
            if args.notebook is None
            else stderr_progress(f"report {Path(path).name}"),
            plots=not args.no_plots,
        )
        say(str(written))
        return 0

    return max(for_each_agent(each, one), 2 if found.problems else 0)


def cmd_notebooks(args: argparse.Namespace) -> int:
    """Copy the bundled notebooks (and the sample agents they open) into a folder of yours.

    Writes DIR/notebooks/*.ipynb and DIR/sample_agents/ (the seven ADF sample agents, and the
    agents notebook 06 compares long-runner.adf with: a Claude Code session, an Inspect AI log,
    an OpenHands conversation), so the notebooks open as they do in a source checkout; then run
    `jupyter lab DIR/notebooks` (JupyterLab comes with: pip install "adfkit[notebooks]").
    Prints one line per folder: how many files were copied and kept. Existing files are kept
    unless --force.

    Example: adfkit notebooks ~/adfkit-notebooks
    """
    import shutil

    root = Path(args.dir).expanduser()
    notebooks = sorted(notebooks_dir().glob("*.ipynb"))
    if not notebooks:
        raise AdfError(f"no bundled notebooks at {notebooks_dir()}")
    groups = {
        root / "notebooks": [(nb, root / "notebooks" / nb.name) for nb in notebooks],
        root / "sample_agents": [
            (sample_folder() / f, root / "sample_agents" / f) for f in sample_files()
        ],
    }
    copied = 0
    for folder, copies in groups.items():
        kept = [dest for _, dest in copies if dest.exists() and not args.force]
        for src, dest in copies:
            if dest not in kept:
                check_output(dest, [])
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
        copied += len(copies) - len(kept)
        say(_copied(folder, len(copies) - len(kept), len(kept)))
    lab = f"jupyter lab {root / 'notebooks'}"
    if has_jupyterlab():
        say(f"{copied} file(s) copied; open them with: {lab}", err=True)
    else:
        say(
            f"{copied} file(s) copied; JupyterLab is not installed here: {NOTEBOOKS_EXTRA}, "
            f"then open them with: {lab}",
            err=True,
        )
    return 0


def _copied(folder: Path, copied: int, kept: int) -> str:
    """One line of ``adfkit notebooks``: ``nb/notebooks: 7 file(s) copied, 0 kept``.

    Examples
    --------
    >>> _copied(Path("nb/sample_agents"), 3, 2)
    'nb/sample_agents: 3 file(s) copied, 2 kept (they exist; --force replaces them)'
    """
    text = f"{folder}: {copied} file(s) copied"
    return text + (f", {kept} kept (they exist; --force replaces them)" if kept else "")


def register(subparsers: Any) -> None:
    """Add the ``report`` and ``notebooks`` subcommands."""
    p = add_command(
        subparsers,
        "report",
        cmd_report,
        help="write an HTML report of agent files (a notebook run on them with --notebook)",
        prices=True,
    )
    p.add_argument(
        "-o",
        "--output",
        help="the HTML file (one agent) or folder (several) to write "
        "(default: <stem>-report.html here)",
    )
    names = available_notebooks()
    p.add_argument(
        "--notebook",
        default=None,
        metavar="NAME",
        help="run a notebook in a kernel instead of the plain report: name, number, unique "
        f"prefix or .ipynb path (bundled: {', '.join(names) or 'none found'}; the one the "
        f"report used to run: {DEFAULT_NOTEBOOK}); needs the notebooks extra",
    )
    p.add_argument("--timeout", type=int, default=120, help="seconds allowed per cell (--notebook)")
    p.add_argument(
        "--no-plots",
        action="store_true",
        help="the plain report without its plots: tables and text only, about half the CPU",
    )
    n = subparsers.add_parser(
        "notebooks",
        help="copy the bundled notebooks into a folder",
        description=cleandoc(cmd_notebooks.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    n.add_argument("dir", metavar="DIR", help="folder to copy into (created if needed)")
    n.add_argument("--force", action="store_true", help="replace files that exist")
    n.set_defaults(func=cmd_notebooks)
