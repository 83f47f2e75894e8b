"""Headless reports: run a bundled notebook on one agent file and write self-contained HTML.

The notebook's ``parameters`` cell holds ``AGENT = "..."``; a cell tagged
``injected-parameters`` is inserted after it (papermill's convention, without papermill), the
notebook runs in a fresh ``python3`` kernel (nbclient) and nbconvert's ``HTMLExporter`` turns it
into one HTML file: plots are inline base64 PNG, and no script is loaded from the network.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

from ._errors import AdfError
from ._open import refuse_beside_input

#: Where the bundled notebooks live (a source checkout: ``<repo>/notebooks``).
NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
DEFAULT_NOTEBOOK = "01-quickstart"

# The lab template minus every <script src=...> from a CDN (require.js, MathJax, mermaid,
# the widget manager): the report must open offline and run no third-party code.
_TEMPLATE = """{%- extends "lab/index.html.j2" -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


class ReportError(AdfError):
    """A report could not be made: unknown notebook, a cell failed, or a bad output path."""


def available_notebooks() -> list[str]:
    """Names of the bundled notebooks (without ``.ipynb``), sorted.

    Examples
    --------
    >>> "01-quickstart" in available_notebooks()
    True
    """
    if not NOTEBOOKS_DIR.is_dir():
        return []
    return sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))


def notebook_path(name: str | os.PathLike[str]) -> Path:
    """Path of a bundled notebook by name (``01-quickstart``, ``02``...) or an ``.ipynb`` path.

    Raises
    ------
    ReportError
        no such notebook; the message lists the ones there are.
    """
    p = Path(name)
    if p.suffix == ".ipynb" and p.is_file():
        return p.resolve()
    names = available_notebooks()
    if not names:
        raise ReportError(
            f"the bundled notebooks are not at {NOTEBOOKS_DIR} (they come with a source "
            "checkout of adfkit); pass the path of an .ipynb instead"
        )
    stem = p.stem if p.suffix == ".ipynb" else str(name)
    hits = [n for n in names if n == stem] or [n for n in names if n.startswith(stem)]
    if len(hits) != 1:
        raise ReportError(f"no notebook {str(name)!r}; choose one of {names} or an .ipynb path")
    return NOTEBOOKS_DIR / f"{hits[0]}.ipynb"


def inject_parameters(nb: Any, params: dict[str, Any]) -> Any:
    """Insert a cell tagged ``injected-parameters`` after the ``parameters`` cell (or first).

    Values are written with ``repr`` so any path round-trips. Returns the same notebook node.

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook()
    >>> nb.cells = [nbformat.v4.new_code_cell('AGENT = "a.adf"',
    ...                                       metadata={"tags": ["parameters"]})]
    >>> inject_parameters(nb, {"AGENT": "/x/b.adf"}).cells[1].source
    "# Parameters\\nAGENT = '/x/b.adf'"
    """
    import nbformat

    src = "# Parameters\n" + "\n".join(f"{k} = {v!r}" for k, v in params.items())
    cell = nbformat.v4.new_code_cell(src, metadata={"tags": ["injected-parameters"]})
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    at = next(
        (i + 1 for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), 0
    )
    nb.cells.insert(at, cell)
    return nb


def execute_notebook(
    notebook: str | os.PathLike[str],
    agent: str | os.PathLike[str],
    *,
    timeout: int = 120,
    kernel_name: str = "python3",
) -> Any:
    """Run a notebook top to bottom with ``AGENT`` set to ``agent``; return the executed node.

    The kernel's working directory is the notebook's folder, so relative paths in it resolve
    as they do in JupyterLab.

    Raises
    ------
    ReportError
        a cell raised (the message names the notebook, the cell and the error).
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    path = notebook_path(notebook)
    nb = nbformat.read(path, as_version=4)
    inject_parameters(nb, {"AGENT": os.path.abspath(os.fspath(agent))})
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
    )
    # Plots must come out as inline PNG even when the caller set a non-GUI MPLBACKEND (Agg).
    env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    try:
        # The kernel's own stderr carries only start-up chatter (a TCP transport notice);
        # cell errors and outputs come back through the messaging protocol.
        client.execute(env=env, stderr=subprocess.DEVNULL)
    except (CellExecutionError, CellTimeoutError) as exc:
        where = next(
            (
                i
                for i, c in enumerate(nb.cells)
                if any(o.get("output_type") == "error" for o in c.get("outputs", []))
            ),
            None,
        )
        if isinstance(exc, CellExecutionError):
            what = f"{exc.ename}: {exc.evalue}"
        else:
            what = f"a cell ran longer than {timeout} s"
        cell = f" cell {where}" if where is not None else ""
        raise ReportError(
            f"notebook {path.name}{cell} failed on {os.fspath(agent)}: "
            + re.sub(r"\x1b\[[0-9;]*m", "", what)
        ) from exc
    return nb


def to_html(nb: Any) -> str:
    """Self-contained HTML of an executed notebook (inline images, no external scripts)."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        extra_loaders=[DictLoader({"adfkit_report.j2": _TEMPLATE})],
        template_file="adfkit_report.j2",
        embed_images=True,
    )
    body, _ = exporter.from_notebook_node(_static(nb))
    # Belt and braces: no script may come from elsewhere.
    return re.sub(r"<script[^>]*\bsrc=[^>]*>\s*</script>", "", body)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _static(nb: Any) -> Any:
    """A copy without live widgets: outputs that also carry ``text/html`` (adfkit's widgets
    do: their current view) keep that; widget state, which needs scripts, is dropped."""
    import copy

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data and "text/html" in data:
                del data[WIDGET_VIEW]
    return nb


def write_report(
    agent: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    notebook: str = DEFAULT_NOTEBOOK,
    timeout: int = 120,
) -> Path:
    """Run a bundled notebook on one agent file and write it as one HTML file.

    Parameters
    ----------
    agent : the ``.adf`` file (opened read-only, as everywhere in adfkit).
    output : the HTML file to write; its folder is created if needed, and it may not be the
        agent file's folder.
    notebook : a bundled notebook name (``01-quickstart`` ... ``05-teaching-memory``; a
        unique prefix such as ``02`` works) or a path to an ``.ipynb``.
    timeout : seconds allowed per cell.

    Returns
    -------
    Path
        the absolute path of the written report.

    Raises
    ------
    AdfError
        the agent file cannot be read (checked before a kernel starts), or a
        :class:`ReportError`: unknown notebook, a failing cell, an output beside the input.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "report.html")
    >>> write_report("sample_agents/clean.adf", out).name  # doctest: +SKIP
    'report.html'
    """
    from ._agent import open_adf

    agent_p, out_p = Path(agent), Path(output)
    refuse_beside_input(agent_p, out_p, error=ReportError)
    if out_p.suffix.lower() not in (".html", ".htm"):
        raise ReportError(f"the report is HTML: give an output path ending in .html, got {out_p}")
    with open_adf(agent_p) as handle:  # a clear AdfError now rather than a kernel traceback
        handle.info()
    nb = execute_notebook(notebook, agent_p, timeout=timeout)
    html = to_html(nb)
    out_p.parent.mkdir(parents=True, exist_ok=True)
    out_p.write_text(html, encoding="utf-8")
    return out_p.resolve()
