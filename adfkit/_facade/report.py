"""Reports: one agent file as one self-contained HTML file.

The notebook report (:func:`write_notebook_report`; :func:`adfkit.report.write_report` with
``notebook=NAME``, the plain report's page is :mod:`adfkit.report.page`): a bundled notebook
run headless, for what needs a kernel (the notebooks extra).

The notebook's ``parameters`` cell (``AGENT = "..."``, ``PRICES = None``) gets the values for
this run, the notebook runs in a fresh ``python3`` kernel (nbclient) and nbconvert's
``HTMLExporter`` turns it into one HTML file: plots are inline base64 PNG, no script is loaded
from the network, a header says which agent, file, time and adfkit version, and no local path
(the agent's folder, the kernel's temporary files) is left in the page.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adfkit._base.bundled import NOTEBOOKS_EXTRA, missing, notebooks_dir
from adfkit._base.errors import AdfError
from adfkit._base.outputs import check_output, safe_name
from adfkit._base.redact import redact_text
from adfkit._base.terminal import printable
from adfkit._core import registry

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
    folder = notebooks_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.ipynb"))


def notebook_path(name: str | os.PathLike[str]) -> Path:
    """Path of a bundled notebook by name (``01-quickstart``), number (``1``, ``02``), unique
    prefix or words of its name (``fleet``), or an ``.ipynb`` path.

    Raises
    ------
    ReportError
        no such notebook, or several match; the message lists the ones there are.

    Examples
    --------
    >>> notebook_path("2").name, notebook_path("fleet").name
    ('02-compaction-replay.ipynb', '04-fleet.ipynb')
    """
    p = Path(name)
    if p.suffix == ".ipynb" and p.is_file():
        return p.resolve()
    names = available_notebooks()
    if not names:
        raise ReportError(
            f"the bundled notebooks are not at {notebooks_dir()}; pass the path of an .ipynb"
        )
    key = p.stem if p.suffix == ".ipynb" else str(name)
    if key.isdigit() and any(n.startswith(f"{int(key):02d}-") for n in names):
        key = f"{int(key):02d}-"  # a notebook's number
    hits = (
        [n for n in names if n == key]
        or [n for n in names if n.startswith(key)]
        or [n for n in names if key and key in n]
    )
    if len(hits) > 1:
        raise ReportError(f"notebook {str(name)!r} matches {hits}; choose one of {names}")
    if not hits:
        raise ReportError(f"no notebook {str(name)!r}; choose one of {names} or an .ipynb path")
    return notebooks_dir() / f"{hits[0]}.ipynb"


def require_notebooks_extra() -> None:
    """Raise :class:`ReportError` saying what to install when a notebook cannot run here (a
    plain ``pip install adfkit`` has no kernel or nbclient)."""
    gone = missing()
    if gone:
        raise ReportError(
            f"running a notebook needs {', '.join(gone)}, which {'is' if len(gone) == 1 else 'are'}"
            f" not installed: {NOTEBOOKS_EXTRA}"
        )


def inject_parameters(nb: Any, params: dict[str, Any]) -> Any:
    """Set the notebook's parameters: the cell tagged ``parameters`` (else a new first cell)
    becomes one cell holding ``params`` and the cell's other parameters at their defaults, so
    the report shows one parameter cell.

    Values are written with ``repr`` so any path round-trips. Returns the same notebook node.

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook()
    >>> nb.cells = [nbformat.v4.new_code_cell('# the agent\\nAGENT = "a.adf"\\nN = 3',
    ...                                       metadata={"tags": ["parameters"]})]
    >>> nb = inject_parameters(nb, {"AGENT": "/x/b.adf"})
    >>> len(nb.cells), nb.cells[0].source
    (1, "# Parameters of this run\\nAGENT = '/x/b.adf'\\nN = 3")
    """
    import nbformat

    tags = ["parameters", "injected-parameters"]
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    at = next(
        (i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), None
    )
    if at is None:
        src = _parameters("# Parameters of this run", params, "")
        nb.cells.insert(0, nbformat.v4.new_code_cell(src, metadata={"tags": tags}))
    else:
        nb.cells[at].source = _parameters("# Parameters of this run", params, nb.cells[at].source)
        nb.cells[at].metadata["tags"] = tags
    return nb


def _parameters(header: str, params: dict[str, Any], source: str) -> str:
    """A parameters cell: ``header``, ``params`` as ``NAME = repr(value)``, then the statements
    of ``source`` (the notebook's own cell) that set other names, whole (a list over several
    lines too), so a notebook's further parameters (06's ``OTHERS``) keep their defaults.

    Examples
    --------
    >>> print(_parameters("# run", {"AGENT": "b"}, 'AGENT = "a"\\nOTHERS = [\\n    "x",\\n]'))
    # run
    AGENT = 'b'
    OTHERS = [
        "x",
    ]
    """
    import ast

    try:
        body = ast.parse(source).body
    except SyntaxError as exc:
        raise ReportError(f"the notebook's parameters cell is not valid Python: {exc}") from None
    kept = [
        str(ast.get_source_segment(source, node))
        for node in body
        if isinstance(node, ast.Assign)
        and not {t.id for t in node.targets if isinstance(t, ast.Name)} & params.keys()
    ]
    return "\n".join([header, *(f"{k} = {v!r}" for k, v in params.items()), *kept])


def _execute(client: Any, **kwargs: Any) -> None:
    """Run ``client`` to the end. Outside a running event loop (a script, a thread of a
    fleet or a test) it runs in a loop of its own that is closed after, instead of one
    nbclient would leave open on the thread (an unclosed socket warned about later, far from
    here); inside one (a notebook's kernel) nbclient's own runner is used."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(client.async_execute(**kwargs))
        return
    client.execute(**kwargs)


def execute_notebook(
    notebook: str | os.PathLike[str],
    agent: str | os.PathLike[str],
    *,
    timeout: int = 120,
    kernel_name: str = "python3",
    prices: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Any:
    """Run a notebook top to bottom with ``AGENT`` set to ``agent`` (and ``PRICES`` to
    ``prices``); return the executed node. ``progress(i, n)`` is called as cell ``i`` of ``n``
    starts.

    The kernel's working directory is the notebook's folder, so relative paths in it resolve
    as they do in JupyterLab.

    Raises
    ------
    ReportError
        a cell raised (the message names the notebook, the cell and the error), or the
        notebooks extra is not installed (the message says what to install).
    """
    require_notebooks_extra()
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    path = notebook_path(notebook)
    nb = nbformat.read(path, as_version=4)
    params: dict[str, Any] = {"AGENT": os.path.abspath(os.fspath(agent))}
    params["PRICES"] = None if prices is None else os.path.abspath(os.fspath(prices))
    inject_parameters(nb, params)
    n = sum(1 for c in nb.cells if c.cell_type == "code")
    done = [0]

    def started(**_: Any) -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], n)

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        on_cell_execute=started,
    )
    # Plots must come out as inline PNG even when the caller set a non-GUI MPLBACKEND (Agg).
    env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    try:
        # The kernel's own stderr carries only start-up chatter (a TCP transport notice);
        # cell errors and outputs come back through the messaging protocol.
        import subprocess

        _execute(client, env=env, stderr=subprocess.DEVNULL)
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


def to_html(nb: Any, *, title: str = "adfkit report") -> str:
    """Self-contained HTML of an executed notebook (inline images, no external scripts)."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        extra_loaders=[DictLoader({"adfkit_report.j2": _TEMPLATE})],
        template_file="adfkit_report.j2",
        embed_images=True,
    )
    body, _ = exporter.from_notebook_node(_static(nb), resources={"metadata": {"name": title}})
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


def report_path(agent: Path, output: str | os.PathLike[str] | None) -> Path:
    """Where the report of ``agent`` goes, checked: ``output`` (default
    ``<agent stem>-report.html`` in the current folder), an ``.html`` file that is not an
    input nor a name SQLite uses beside one (``-wal``, ``-shm``, ``-journal``)."""
    if output is None:
        output = Path.cwd() / f"{safe_name(registry.agent_stem(agent))}-report.html"
    out_p = check_output(output, registry.input_places([agent]))
    if out_p.suffix.lower() not in (".html", ".htm"):
        raise ReportError(f"the report is HTML: give an output path ending in .html, got {output}")
    return out_p


def adfkit_version() -> str:
    """The installed adfkit's version, for a report's header (``0.0.0`` from a source tree
    without an install)."""
    from adfkit import __version__

    return __version__


def write_notebook_report(
    agent: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    notebook: str = DEFAULT_NOTEBOOK,
    timeout: int = 120,
    prices: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """A bundled notebook run headless on one agent file, written as one HTML file: the
    notebook report of :func:`adfkit.report.write_report` (which documents the arguments)."""
    require_notebooks_extra()  # before any work: a plain install is told what to install
    agent_p = Path(agent)
    out_p = report_path(agent_p, output)
    from adfkit._facade.agent import (
        open_one as open_agent,  # the readers load when a report is made
    )
    from adfkit._facade.fleet import agent_label

    with open_agent(agent_p) as handle:  # a clear AdfError now rather than a kernel traceback
        name = handle.name
        handle.info()
        title = agent_label(handle)  # a session's project and title, not its uuid
    nb = execute_notebook(notebook, agent_p, timeout=timeout, prices=prices, progress=progress)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    nb = without_empty_sections(_for_readers(nb, agent_p, prices))
    nb.cells.insert(
        0, _header(title, name, agent_p.name, notebook_path(notebook).stem, when, adfkit_version())
    )
    title = f"adfkit report: {title} ({agent_p.name})"
    html = to_html(nb, title=title)
    out_p.parent.mkdir(parents=True, exist_ok=True)
    out_p.write_text(html, encoding="utf-8")
    return out_p


def _header(title: str, name: str, file: str, notebook: str, when: str, version: str) -> Any:
    """The report's first cell: which agent (its readable title; its name or session id
    beside it when that differs), which file, which notebook, when, which adfkit."""
    import html

    import nbformat

    def e(text: str) -> str:  # agent text: no markup of markdown's or HTML's from it
        return html.escape(re.sub(r"([\\`*_\[\]()!|~$#{}])", r"\\\1", text))

    ident = "" if name == title else f" ({e(name)})"
    return nbformat.v4.new_markdown_cell(
        f"# adfkit report: {e(title)}\n\n"
        f"Agent file **{e(file)}**{ident} · notebook `{e(notebook)}` · made {when} with adfkit "
        f"{e(version)}. The agent file was read, never written."
    )


def _for_readers(nb: Any, agent: Path, prices: str | os.PathLike[str] | None) -> Any:
    """The executed notebook without local paths or secrets: the parameter cell names the file
    only; the agent's folder, the notebook's and the kernel's temporary files leave every output,
    and so do credentials in agent text (:func:`adfkit._base.redact.redact_text`: what a tool
    printed is redacted the way a config's secrets are)."""
    shown = {"AGENT": agent.name, "PRICES": None if prices is None else Path(prices).name}
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            header = "# Parameters of this run (folders not shown)"
            cell.source = _parameters(header, shown, cell.source)
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = scrub(out["text"], agent)
            for key, val in list(out.get("data", {}).items()):
                if key.startswith("text/") and isinstance(val, str):
                    out["data"][key] = scrub(val, agent)
    return nb


def without_empty_sections(nb: Any) -> Any:
    """The executed notebook without the sections that show nothing: a markdown heading, and
    every cell up to the next heading of its level or higher, when that span holds code cells
    and none of them printed or displayed anything (a session with no compaction gets no
    "What it swept" heading over nothing). A section whose code shows something stays whole.

    Examples
    --------
    >>> import nbformat.v4 as v4
    >>> nb = v4.new_notebook(cells=[
    ...     v4.new_markdown_cell("## Compactions"),
    ...     v4.new_code_cell("print(0)", outputs=[v4.new_output("stream", text="0")]),
    ...     v4.new_markdown_cell("### What it swept"), v4.new_code_cell("pass"),
    ...     v4.new_markdown_cell("## Next"), v4.new_markdown_cell("text only")])
    >>> [c.source for c in without_empty_sections(nb).cells]
    ['## Compactions', 'print(0)', '## Next', 'text only']
    """
    levels = [_heading_level(c) for c in nb.cells]
    drop: set[int] = set()
    for i, level in enumerate(levels):
        if level is None:
            continue
        end = next(
            (j for j in range(i + 1, len(levels)) if (levels[j] or 99) <= level), len(levels)
        )
        code = [c for c in nb.cells[i + 1 : end] if c.cell_type == "code"]
        if code and not any(c.get("outputs") for c in code):
            drop.update(range(i, end))
    nb.cells = [c for k, c in enumerate(nb.cells) if k not in drop]
    return nb


def _heading_level(cell: Any) -> int | None:
    """1 for a markdown cell opening with ``# ``, 2 for ``## ``...; None for any other cell."""
    if cell.cell_type != "markdown":
        return None
    m = re.match(r"(#{1,6})\s", cell.source)
    return len(m.group(1)) if m else None


def stderr_progress(label: str) -> Callable[[int, int], None]:
    """A progress callback that says on stderr which cell runs (one updating line on a
    terminal, a line every few cells otherwise)."""
    tty = sys.stderr.isatty()
    label = printable(label)  # a file name: its control characters shown, never obeyed

    def show(i: int, n: int) -> None:
        if tty:
            end = "\n" if i == n else ""
            print(f"\r{label}: cell {i}/{n}", end=end, file=sys.stderr, flush=True)
        elif i == 1 or i == n or i % 5 == 0:
            print(f"{label}: cell {i}/{n}", file=sys.stderr, flush=True)

    return show


_KERNEL_FILE = re.compile(r"/tmp/ipykernel_\d+/\d+\.py:\d+: ")


def scrub(text: str, agent: str | os.PathLike[str]) -> str:
    """``text`` for readers of a report: credentials redacted
    (:func:`adfkit._base.redact.redact_text`), the agent's path replaced by its name, its
    folder and the home folder left out, a kernel's temporary file names removed.

    Examples
    --------
    >>> scrub("read /data/x/a.adf and /data/x/b.txt", "/data/x/a.adf")
    'read a.adf and b.txt'
    """
    path = Path(agent).resolve()
    folder, name = str(path.parent), path.name
    text = redact_text(_KERNEL_FILE.sub("", text))
    text = text.replace(str(path), name).replace(folder + os.sep, "").replace(folder, ".")
    home = os.path.expanduser("~")
    return text.replace(home + os.sep, "~" + os.sep) if home not in ("/", "~") else text
