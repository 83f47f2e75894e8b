"""Reports: one agent file as one self-contained HTML file, the plain report
(:mod:`adfkit.report.page`, no kernel) or a bundled notebook run on it
(:func:`adfkit._facade.report.write_notebook_report`). A layer above the plots: the plain
report draws them."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from adfkit._facade.report import ReportError, report_path, write_notebook_report

__all__ = ["ReportError", "write_report"]


def write_report(
    agent: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    notebook: str | None = None,
    timeout: int = 120,
    prices: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    plots: bool = True,
) -> Path:
    """Write one agent file as one HTML file: the plain report, or a bundled notebook run on it.

    Parameters
    ----------
    agent : the agent file (opened read-only, as everywhere in adfkit).
    output : the HTML file to write (default ``<agent stem>-report.html`` in the current
        folder); its folder is created if needed. It may be anywhere but the input itself or a
        name SQLite uses beside it (``-wal``, ``-shm``, ``-journal``).
    notebook : None (the default) for the plain report, made with no kernel
        (:mod:`adfkit.report.page`); else a bundled notebook name (``01-quickstart``
        ... ``08-compaction-lab``), number (``2``), unique prefix or word (``fleet``), or a
        path to an ``.ipynb``, run headless in a kernel (the notebooks extra).
    timeout : seconds allowed per cell (a notebook).
    prices : a JSON price table for models the shipped table lacks (``usage(prices=...)``).
    progress : called with ``(cell, cells)`` as each code cell starts (a notebook).
    plots : False to leave the plots out of the plain report (tables and text only; matplotlib
        is not imported).

    Returns
    -------
    Path
        the absolute path of the written report.

    Raises
    ------
    AdfError
        the agent file cannot be read (checked before a kernel starts), or a
        :class:`ReportError`: unknown notebook, a failing cell, the notebooks extra missing
        for a notebook, an output that is not ``.html`` or is an input.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "report.html")
    >>> write_report("sample_agents/clean.adf", out).name  # doctest: +SKIP
    'report.html'
    """
    if notebook is not None:
        return write_notebook_report(
            agent, output, notebook=notebook, timeout=timeout, prices=prices, progress=progress
        )
    from adfkit._facade.agent import open_one
    from adfkit.report.page import render

    agent_p = Path(agent)
    out_p = report_path(agent_p, output)
    with open_one(agent_p) as handle:
        page = render(handle, prices=prices, source_name=agent_p.name, plots=plots)
    out_p.parent.mkdir(parents=True, exist_ok=True)
    out_p.write_text(page, encoding="utf-8")
    return out_p
