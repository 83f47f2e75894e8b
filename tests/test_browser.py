"""End to end: the notebooks and their widgets in a real JupyterLab, driven by Chromium.

One JupyterLab server and one headless Chromium (Playwright for Python, the system's browser,
never ``playwright install``) serve the whole module. The server runs on a free port of
127.0.0.1 without a token, on a temporary copy of ``notebooks/`` and ``sample_agents/`` laid
out as in the repository (the notebooks open ``../sample_agents/<name>.adf``), with its own
Jupyter config, data, runtime and IPython folders, so nothing is written in the repository or
next to an ``.adf`` input. Every notebook is run with Run > Run All Cells as a person would;
then one control of each widget is moved and the rendered rows must change.

Screenshots for a person to look at land in ``build/browser/``: ``<notebook>.png`` (the whole
notebook after Run All) and ``<notebook>-<Widget>.png`` (the widget after its control moved).

No Chromium or no Playwright: the browser tests are skipped, unless ``CI`` is set: then they fail.
Chromium is looked for as ``$ADFKIT_CHROMIUM``, then ``chromium``/``chromium-browser`` on PATH.
On Debian: ``apt-get install chromium``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import livesession
import mdsession
import nbformat
import pytest
from conftest import ROOT, fingerprint

# --- Everything the tests look for in the page, in one place ---------------------------------
# JupyterLab
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook on show
CELL = ".jp-Cell"
SCROLLER = ".jp-WindowedPanel-outer"  # the notebook's scrolling box
OUTPUT = ".jp-OutputArea-output"
STDERR = '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]'
RUN_MENU = ".lm-MenuBar-itemLabel:text-is('Run')"
RUN_ALL = "li.lm-Menu-item[data-command='runmenu:run-all']"
#: Text in an output that means something went wrong.
BAD_OUTPUT_TEXT = ("Error displaying widget", "Traceback")
# ipywidgets: a displayed widget is a VBox straight in an output area; the three adfkit widgets
# are told apart by the kinds of controls they hold, not by labels (which may be renamed).
BOX = f"{OUTPUT} > .widget-vbox"
WIDGETS = {
    "LoopBrowser": f"{BOX}:has(.widget-toggle-buttons):has(.widget-dropdown)",
    "ReplayPlayer": f"{BOX}:has(.widget-play):has(.widget-slider)",
    "AuditExplorer": f"{BOX}:has(> .widget-dropdown):not(:has(.widget-toggle-buttons))",
    "LiveView": f"{BOX}:has(> .widget-hbox > .widget-toggle-button)",
}
#: Which notebook displays which widget (notebooks/make_notebooks.py).
WIDGET_NOTEBOOKS = {
    "LoopBrowser": ["01-quickstart", "05-teaching-memory"],
    "ReplayPlayer": ["02-compaction-replay"],
    "AuditExplorer": ["03-self-observation-audit"],
}
LABEL = "label.widget-label"  # a control's description
DROPDOWN = ".widget-dropdown"
#: LoopBrowser's kind filter: the dropdown with this description, and the kind chosen in it.
KIND_LABEL = "kind"
KIND_CHOICE = "context"
ALL_CHOICE = "(all)"  # what a filter shows before it is used
SEARCH = "mind.md"  # a text the sample's rows hold (LoopBrowser's text search)
STATUS = ":scope > .widget-label"  # LoopBrowser's "rows a-b of n" line
SLIDER_READOUT = ".widget-slider .widget-readout"  # a slider's own number: hidden in ReplayPlayer
CALL_BOX = ".widget-text input"  # ReplayPlayer's call number, typed into (linked to the slider)
SLIDER_HANDLE = ".widget-slider .noUi-handle"  # carries aria-valuenow / aria-valuemax
AUDIT_SELECT = f"{DROPDOWN} select"  # AuditExplorer's only control
HTML_OUT = ".widget-html"  # where each widget renders its HTML
# adfkit's HTML (adfkit/widgets/__init__.py): one element per rendered row, with its seq and kind.
ROW = ".adf-row[data-seq]"
AUDIT_META = ".adf-audit-meta"  # the chosen audit row's metadata table
AUDIT_ID = f"{AUDIT_META} tr:has(th:text-is('id')) td"

# --- Browser and server set-up ------------------------------------------------------------
VIEWPORT = {"width": 1400, "height": 1000}
MAX_SHOT_HEIGHT = 16_000  # px; a cap, so a runaway measurement cannot make a huge image
CHROMIUM_ARGS = [
    "--no-sandbox",  # running as root
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # the machines reach only package registries: no background calls home
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: JupyterLab user settings for the run: no news or update checks (no network, no toast).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}
}
# Timeouts that hold on a loaded 2-core machine (only a failure waits them out): the tests wait
# for conditions, never for fixed times.
SERVER_START_S = 180
RUN_ALL_S = 300  # per notebook; each runs in ~10 s here
CHANGE_S = 60  # for a widget to re-render after a control moved
SHOTS = ROOT / "build" / "browser"
#: Repository folders the server's copies come from: they must come out untouched.
TOUCHABLE = ("notebooks", "sample_agents")
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
#: A notebook written only in the server's copy, to prove the checks see what they look for:
#: a widget that cannot be displayed, text on stderr, an exception, and a cell after it.
CANARY = "_canary"
CANARY_CELLS = [
    "from IPython.display import display\n"
    'display({"application/vnd.jupyter.widget-view+json": {"model_id": "no-such-model",'
    ' "version_major": 2, "version_minor": 0}}, raw=True)',
    'import sys\nprint("canary on stderr", file=sys.stderr)',
    "1 / 0",
    'print("Run All stops before this cell")',
]

#: A notebook written only in the server's copy: LoopBrowser on a hand-built Claude Code
#: session whose reply is markdown with hostile pieces in it (tests/mdsession.py).
TRANSCRIPT = "_transcript"
TRANSCRIPT_CELLS = [
    "import adfkit, adfkit.widgets\n"
    'adfkit.widgets.LoopBrowser(adfkit.open("../sample_agents/markdown/{}"), history=True)',
]

#: A notebook written only in the server's copy: LiveView following a Claude Code session
#: (tests/livesession.py) that the test writes in the copy and appends to while it is shown.
LIVE = "_live"
LIVE_SESSION = "sample_agents/live/5e551011-0000-4000-8000-00000000f011.jsonl"
LIVE_CELLS = [
    f'import adfkit.widgets\nadfkit.widgets.LiveView("../{LIVE_SESSION}", interval=0.5)',
]
LIVE_STATUS = ":scope > .widget-hbox > .widget-label"  # LiveView's status line
LIVE_LANDED = ".adf-live-landed li"  # one per compaction that landed

# JavaScript run in the page. JupyterLab is started with expose_app_in_browser, so the
# notebook's model (execution counts and outputs, whatever is scrolled into view) is readable.
JS_STATE = """() => {
  const app = window.jupyterapp;
  if (!app) return {error: "window.jupyterapp is missing (expose_app_in_browser off?)"};
  const nb = app.shell.currentWidget;
  if (!nb || !nb.content || !nb.content.model || !nb.sessionContext) return {ready: false};
  const cells = nb.content.model.cells, out = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== "code") continue;
    const head = c.sharedModel.getSource().split("\\n")[0].slice(0, 80);
    out.push({index: i, head: head, count: c.executionCount, outputs: c.outputs.toJSON()});
  }
  const kernel = nb.sessionContext.session && nb.sessionContext.session.kernel;
  return {ready: true, status: kernel ? kernel.status : "none", cells: out};
}"""
JS_DONE = (
    "() => { const s = ("
    + JS_STATE
    + """)();
  if (s.error) return s;
  if (!s.ready || s.status !== "idle") return false;
  const failed = s.cells.some(c => c.outputs.some(o => o.output_type === "error"));
  return failed || s.cells.every(c => c.count !== null) ? s : false;
}"""
)
JS_IDLE = "() => /Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent || '')"
JS_ROWS = "els => els.map(e => e.dataset.kind + ':' + e.dataset.seq)"
JS_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colours in IPython's tracebacks


def _unavailable(reason: str) -> None:
    """Skip locally; fail in CI, where the browser tests must really run."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser tests must run", pytrace=False)
    pytest.skip(reason)


def _chromium() -> str | None:
    given = os.environ.get("ADFKIT_CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class Lab:
    """The JupyterLab server, the browser and one page per notebook, run on first use."""

    def __init__(self, base: str, browser: Any, log: Path, before: dict, root: Path) -> None:
        self.base = base
        self.root = root  # the copies the server serves (a test may write there)
        self.before = before  # fingerprints of the repository folders the copies came from
        self.browser = browser
        self.log = log
        self.pages: dict[str, Any] = {}
        self.page_errors: dict[str, list[str]] = {}
        self.state: dict[str, dict] = {}  # the notebook model after Run All
        self.failed: dict[str, str] = {}

    def run(self, stem: str) -> Any:
        """The page of ``notebooks/<stem>.ipynb`` after Run All (run once, then cached)."""
        if stem in self.failed:
            pytest.fail(self.failed[stem], pytrace=False)
        if stem not in self.state:
            try:
                self._run(stem)
            except BaseException as exc:
                self.failed[stem] = f"{stem}: Run All failed earlier: {exc}"
                raise
        return self.pages[stem]

    def _run(self, stem: str) -> None:
        page = self.browser.new_page(viewport=VIEWPORT)
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        self.pages[stem], self.page_errors[stem] = page, errors
        # A workspace of its own, reset: no tabs left from another notebook's run.
        page.goto(f"{self.base}/lab/workspaces/t-{stem}/tree/notebooks/{stem}.ipynb?reset")
        page.wait_for_selector(f"{PANEL} {CELL}")
        page.wait_for_function(JS_IDLE)  # the kernel is up
        page.evaluate("() => window.jupyterapp && window.jupyterapp.shell.collapseLeft()")
        page.click(RUN_MENU)
        page.click(RUN_ALL)
        try:
            done = page.wait_for_function(JS_DONE, timeout=RUN_ALL_S * 1000).json_value()
        except Exception as exc:  # Playwright's TimeoutError
            done = {"timeout": str(exc).splitlines()[0]}
        if "timeout" in done:
            state = page.evaluate(JS_STATE)
            pending = [c["index"] for c in state.get("cells", []) if c["count"] is None]
            pytest.fail(
                f"{stem}: Run All did not finish in {RUN_ALL_S}s (kernel {state.get('status')},"
                f" cells not run: {pending}): {done['timeout']}\nserver log:\n{_tail(self.log)}",
                pytrace=False,
            )
        if "error" in done:
            pytest.fail(f"{stem}: {done['error']}", pytrace=False)
        self.state[stem] = done


def _problems(lab: Lab, stem: str) -> list[str]:
    """Every error a person would see in the notebook after Run All."""
    page, state = lab.pages[stem], lab.state[stem]
    found = []
    for c in state["cells"]:
        where = f"cell {c['index'] + 1} ({c['head']!r})"  # counted from 1, markdown included
        if c["count"] is None:
            found.append(f"{where}: not run")
        for o in c["outputs"]:
            if o["output_type"] == "error":
                tb = ANSI.sub("", "\n".join(o.get("traceback", [])))[-1500:]
                found.append(f"{where}: {o.get('ename')}: {o.get('evalue')}\n{tb}")
            elif o["output_type"] == "stream" and o.get("name") == "stderr":
                found.append(f"{where}: stderr: {''.join(o.get('text', ''))[:1500]}")
    # What the page rendered (a widget that fails to render shows only here).
    for text in page.locator(f"{PANEL} {STDERR}").all_text_contents():
        found.append(f"rendered stderr: {text[:300]}")
    for bad in BAD_OUTPUT_TEXT:
        for text in page.locator(f"{PANEL} {OUTPUT}", has_text=bad).all_text_contents():
            found.append(f"rendered output with {bad!r}: {text[:300]}")
    found += [f"page error: {e}" for e in lab.page_errors[stem]]
    return list(dict.fromkeys(found))  # the model and the page may report the same one


def _fit_viewport(page: Any) -> None:
    """Make the window as tall as the notebook, scrolled to the top: every cell is drawn, and a
    full-page screenshot shows the whole notebook (JupyterLab's page never scrolls itself)."""
    measure = f"""() => {{
      const o = document.querySelector('{PANEL} {SCROLLER}');
      if (!o) return null;
      const cells = o.querySelectorAll('{CELL}');
      o.scrollTop = 0;
      if (!cells.length) return null;
      // the last cell's bottom, not scrollHeight: that grows with the window (scroll past end)
      const bottom = cells[cells.length - 1].getBoundingClientRect().bottom;
      const top = o.getBoundingClientRect().top;
      return [Math.ceil(bottom - top) + 40, window.innerHeight - o.clientHeight];
    }}"""
    height = VIEWPORT["height"]
    for _ in range(5):  # off-screen cells have estimated heights until drawn: measure again
        got = page.evaluate(measure)
        if not got:
            return
        want = min(MAX_SHOT_HEIGHT, max(VIEWPORT["height"], got[0] + got[1]))
        if want == height:
            break
        height = want
        page.set_viewport_size({"width": VIEWPORT["width"], "height": height})
        page.evaluate(JS_FRAMES)  # the resized page drawn
    page.evaluate(measure)


def _screenshot(page: Any, name: str, target: Any = None) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    try:
        _fit_viewport(page)
        (target or page).screenshot(path=str(path), **({} if target else {"full_page": True}))
    finally:
        page.set_viewport_size(VIEWPORT)
    return path


def _seen(locator: Any) -> str:
    """The text a person sees in ``locator``: scrolled into view and drawn first, since
    JupyterLab does not render cells off screen (``content-visibility``) and their text then
    reads as empty. An element a widget replaced as it re-rendered is looked up again."""
    deadline = time.monotonic() + CHANGE_S
    while True:
        try:
            locator.scroll_into_view_if_needed(timeout=CHANGE_S * 1000)
            locator.page.evaluate(JS_FRAMES)
            text = locator.inner_text(timeout=CHANGE_S * 1000)
        except Exception as exc:  # Playwright's Error: detached while re-rendering
            if "not attached" not in str(exc) or time.monotonic() > deadline:
                raise
            continue
        if text or time.monotonic() > deadline:
            return text
        time.sleep(0.1)


def _texts(locator: Any) -> list[str]:
    """Visible texts; ipywidgets writes option labels with no-break spaces."""
    return [t.replace("\xa0", " ").strip() for t in locator.all_text_contents()]


def _labels(box: Any) -> list[str]:
    return [t for t in _texts(box.locator(LABEL)) if t]


def _widget(lab: Lab, stem: str, widget: str) -> Any:
    """The one ``widget`` box displayed by notebook ``stem``, or a failure saying what was
    there instead."""
    page = lab.run(stem)
    box = page.locator(f"{PANEL} {WIDGETS[widget]}")
    try:
        box.first.wait_for(state="attached", timeout=CHANGE_S * 1000)
        found = True
    except Exception:  # Playwright's TimeoutError; fail below, without the chained timeout
        found = False
    if not found:
        boxes = page.locator(f"{PANEL} {BOX}")
        seen = [_labels(boxes.nth(i)) for i in range(boxes.count())]
        pytest.fail(
            f"{stem}: no {widget} found (selector {WIDGETS[widget]!r}); widget boxes on the "
            f"page, by their control labels: {seen or 'none'}; problems: {_problems(lab, stem)}",
            pytrace=False,
        )
    assert box.count() == 1, f"{stem}: {box.count()} {widget} boxes, expected 1"
    return box.first


def _control(box: Any, selector: str, what: str) -> Any:
    """The control matching ``selector`` in ``box``, or a failure listing the box's labels."""
    ctl = box.locator(selector)
    if ctl.count() != 1:
        pytest.fail(
            f"{what}: {ctl.count()} matches for {selector!r} (expected 1); the widget's control"
            f" labels are {_labels(box)}",
            pytrace=False,
        )
    return ctl


def _rows(box: Any) -> list[str]:
    """``kind:seq`` of every row the widget renders, in order."""
    return box.locator(f"{HTML_OUT} {ROW}").evaluate_all(JS_ROWS)


def _no_page_errors(lab: Lab, stem: str) -> None:
    errors = lab.page_errors[stem]
    assert not errors, f"{stem}: JavaScript errors in the page:\n" + "\n".join(errors)


def _until_changed(read: Callable[[], Any], before: Any, what: str) -> Any:
    deadline = time.monotonic() + CHANGE_S
    while True:
        now = read()
        if now != before:
            return now
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not change within {CHANGE_S}s: {before!r}", pytrace=False)
        time.sleep(0.1)


# --- Fixtures -----------------------------------------------------------------------------
def start_chromium() -> Iterator[Any]:
    """Chromium under Playwright for the test session (``conftest.playwright_browser``: one
    per worker, shared by every module that needs a browser, since a second Playwright started
    while the first runs fails: "Sync API inside the asyncio loop")."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (pip install -e '.[dev]')")
    exe = _chromium()
    if exe is None:
        where = os.environ.get("ADFKIT_CHROMIUM") or "chromium, chromium-browser on PATH"
        _unavailable(f"no Chromium found ({where}): apt-get install chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def lab(playwright_browser, tmp_path_factory) -> Iterator[Lab]:
    """JupyterLab on a temporary copy of the notebooks and sample agents."""
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _unavailable("JupyterLab is not installed (pip install -e '.[notebooks]')")
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "root"
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns("*.py"))
    truths = shutil.ignore_patterns("*.truth.json")  # the simulator's answers stay out
    shutil.copytree(ROOT / "sample_agents", root / "sample_agents", ignore=truths)
    canary = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CANARY_CELLS])
    canary.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(canary, root / "notebooks" / f"{CANARY}.ipynb")
    session = mdsession.write(root / "sample_agents" / "markdown")  # in the copy only
    transcript = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c.format(session.name)) for c in TRANSCRIPT_CELLS]
    )
    transcript.metadata["kernelspec"] = canary.metadata["kernelspec"]
    nbformat.write(transcript, root / "notebooks" / f"{TRANSCRIPT}.ipynb")
    live = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in LIVE_CELLS])
    live.metadata["kernelspec"] = canary.metadata["kernelspec"]
    nbformat.write(live, root / "notebooks" / f"{LIVE}.ipynb")
    config = tmp / "config"
    for name, values in LAB_SETTINGS.items():
        f = config / "lab" / "user-settings" / f"{name}.jupyterlab-settings"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(values))
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),  # also holds the workspaces and user settings
        "JUPYTER_DATA_DIR": str(tmp / "data"),  # no user kernelspecs: this Python's kernel
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "IPYTHONDIR": str(tmp / "ipython"),
    }
    env.pop("MPLBACKEND", None)  # `make test` sets Agg; a person's kernel draws inline
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    port = _free_port()
    log = tmp / "jupyterlab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
    ]
    before = {d: (fingerprint(ROOT / d), sorted(os.listdir(ROOT / d))) for d in TOUCHABLE}
    with open(log, "wb") as out:
        server = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited ({server.returncode}):\n{_tail(log)}")
            try:
                with urllib.request.urlopen(f"{base}/api/status", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab not up in {SERVER_START_S}s:\n{_tail(log)}")
                time.sleep(0.2)
        the_lab = Lab(base, playwright_browser, log, before, root)
        yield the_lab
        for page in the_lab.pages.values():
            page.close()
    finally:
        server.terminate()  # this server only; it shuts its kernels down
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


# --- Tests --------------------------------------------------------------------------------
def test_widget_notebooks_are_up_to_date():
    """WIDGET_NOTEBOOKS lists exactly the notebooks whose code displays each widget."""
    assert NOTEBOOKS, "no notebooks found in notebooks/"
    for widget, stems in WIDGET_NOTEBOOKS.items():
        shows = [
            stem
            for stem in NOTEBOOKS
            if any(
                f"{widget}(" in "".join(c["source"])
                for c in json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
                if c["cell_type"] == "code"
            )
        ]
        assert shows == stems, f"{widget} is displayed by {shows}; WIDGET_NOTEBOOKS says {stems}"


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_run_all_without_errors(lab, stem):
    """Run > Run All Cells in the browser: every code cell runs, no error shows anywhere."""
    page = lab.run(stem)
    problems = _problems(lab, stem)
    shot = _screenshot(page, stem)
    assert not problems, f"{stem} (screenshot {shot}):\n" + "\n\n".join(problems)
    assert page.locator(f"{PANEL} {CELL}").count() > 0


@pytest.mark.parametrize("stem", WIDGET_NOTEBOOKS["LoopBrowser"])
def test_loop_browser_kind_filter(lab, stem):
    box = _widget(lab, stem, "LoopBrowser")
    what = f"{stem}: LoopBrowser"
    kind = _control(box, f"{DROPDOWN}:has({LABEL}:text-is('{KIND_LABEL}')) select", what)
    options = _texts(kind.locator("option"))
    assert KIND_CHOICE in options, f"{what}: no {KIND_CHOICE!r} among the kinds {options}"
    rows, status = _rows(box), _seen(box.locator(STATUS))
    assert rows, f"{what}: no rows rendered before filtering (status {status!r})"
    assert {r.split(":")[0] for r in rows} != {KIND_CHOICE}, f"{what}: already filtered: {rows}"
    kind.select_option(KIND_CHOICE)
    after = _until_changed(lambda: _rows(box), rows, f"{what}: rows after kind={KIND_CHOICE}")
    _screenshot(lab.pages[stem], f"{stem}-LoopBrowser", box)
    assert after, f"{what}: no rows after kind={KIND_CHOICE} (status {status!r})"
    assert {r.split(":")[0] for r in after} == {KIND_CHOICE}, f"{what}: {after}"
    # the status line is a widget of its own, updated by a message of its own
    _until_changed(lambda: _seen(box.locator(STATUS)), status, f"{what}: status line")
    _no_page_errors(lab, stem)


def test_replay_player_slider(lab):
    stem = WIDGET_NOTEBOOKS["ReplayPlayer"][0]
    box = _widget(lab, stem, "ReplayPlayer")
    what = f"{stem}: ReplayPlayer"
    readout = _control(box, CALL_BOX, what)
    handle = _control(box, SLIDER_HANDLE, what)
    last = int(float(handle.get_attribute("aria-valuemax")))
    assert last > 0, f"{what}: the slider has a single position"
    rows, html = _rows(box), _seen(box.locator(HTML_OUT))
    assert rows, f"{what}: no rows rendered at the first call"
    readout.fill(str(last))
    readout.press("Enter")
    after = _until_changed(lambda: _rows(box), rows, f"{what}: rows after moving to {last}")
    _screenshot(lab.pages[stem], f"{stem}-ReplayPlayer", box)
    assert after, f"{what}: no rows rendered at call {last}"
    assert int(float(handle.get_attribute("aria-valuenow"))) == last, f"{what}: handle not moved"
    assert readout.input_value() == str(last), (
        f"{what}: the call box shows {readout.input_value()!r}"
    )
    assert _seen(box.locator(HTML_OUT)) != html
    _no_page_errors(lab, stem)


def test_audit_explorer_row_choice(lab):
    stem = WIDGET_NOTEBOOKS["AuditExplorer"][0]
    box = _widget(lab, stem, "AuditExplorer")
    what = f"{stem}: AuditExplorer"
    select = _control(box, AUDIT_SELECT, what)
    options = _texts(select.locator("option"))
    assert len(options) > 1, f"{what}: a single audit row to choose from: {options}"
    meta = box.locator(f"{HTML_OUT} {AUDIT_META}")
    rows, shown = _rows(box), _seen(meta)
    select.select_option(index=len(options) - 1)
    after = _until_changed(lambda: _seen(meta), shown, f"{what}: decoded audit row")
    _screenshot(lab.pages[stem], f"{stem}-AuditExplorer", box)
    assert _rows(box) != rows, f"{what}: the rendered rows stayed {rows[:5]}..."
    shown_id = _seen(box.locator(f"{HTML_OUT} {AUDIT_ID}")).strip()
    assert options[-1].startswith(f"#{shown_id} "), f"{what}: chose {options[-1]!r}: {after!r}"
    _no_page_errors(lab, stem)


#: Notebook 05's answers as the sample gives them (tests/test_notebooks.py checks them too).
ANSWER = "details.adf-answer"
ANSWER_TEXT = "fs_read: 8 of 46 calls failed"


def test_teaching_answers_stay_folded_until_opened(lab):
    """After Run All a student sees each exercise's "Answer (click to show)" line, not the
    answer; a click on it shows the answer."""
    stem = "05-teaching-memory"
    page = lab.run(stem)
    answers = page.locator(PANEL).locator(f"{OUTPUT} {ANSWER}")
    assert answers.count() == 5, f"{stem}: {answers.count()} folded answers, expected 5"
    for i in range(answers.count()):  # all a student sees of each answer: the line to open it
        assert _seen(answers.nth(i)).strip() == "Answer (click to show)", f"{stem}: answer {i + 1}"
    _screenshot(page, f"{stem}-answers-folded")
    fourth = answers.nth(3)
    summary = fourth.locator("summary")
    summary.click()
    body = fourth.locator("pre").first
    body.wait_for(state="visible", timeout=CHANGE_S * 1000)
    assert ANSWER_TEXT in _seen(body)
    _screenshot(page, f"{stem}-answer-opened", fourth)
    _no_page_errors(lab, stem)


JS_CHOSEN = "s => s.options[s.selectedIndex] ? s.options[s.selectedIndex].text : ''"


def _chosen(select: Any) -> str:
    """The choice a dropdown shows."""
    select.scroll_into_view_if_needed()
    return select.evaluate(JS_CHOSEN).replace("\xa0", " ").strip()


def _button(box: Any, text: str) -> Any:
    return box.locator(f"button:text-is('{text}')")


def test_loop_browser_shows_all_pages_and_marks_matches(lab):
    """Every filter shows "(all)"; "<" and ">" are off where there is no page to go to; the
    text searched for is highlighted in the rows."""
    stem = WIDGET_NOTEBOOKS["LoopBrowser"][0]
    box = _widget(lab, stem, "LoopBrowser")
    what = f"{stem}: LoopBrowser"
    for label in ("role", "tool"):  # (kind was moved by test_loop_browser_kind_filter)
        select = _control(box, f"{DROPDOWN}:has({LABEL}:text-is('{label}')) select", what)
        assert _chosen(select) == ALL_CHOICE, f"{what}: {label} shows {_chosen(select)!r}"
    kind = _control(box, f"{DROPDOWN}:has({LABEL}:text-is('{KIND_LABEL}')) select", what)
    status = _seen(box.locator(STATUS))
    kind.select_option(ALL_CHOICE)
    if "filtered" in status:
        _until_changed(lambda: _seen(box.locator(STATUS)), status, f"{what}: every kind")
    prev, nxt = _button(box, "<"), _button(box, ">")
    assert prev.is_disabled() and nxt.is_enabled(), f"{what}: on page 1"
    page = _control(box, ".widget-text:has(label:text-is('page')) input", what)
    last = _seen(box.locator(STATUS)).rsplit(" of ", 1)[1]
    page.fill(last)
    page.press("Enter")
    nxt.wait_for(state="attached")
    lab.pages[stem].wait_for_function("b => b.disabled", arg=nxt.element_handle())
    assert prev.is_enabled(), f"{what}: '<' off on the last page"
    search = _control(box, ".widget-text:has(label:text-is('text')) input", what)
    search.fill(SEARCH)
    search.press("Enter")
    mark = box.locator(f"{HTML_OUT} mark").first
    mark.wait_for(state="visible", timeout=CHANGE_S * 1000)
    assert _seen(mark).lower() == SEARCH
    _screenshot(lab.pages[stem], f"{stem}-LoopBrowser-search", box)
    _no_page_errors(lab, stem)


def test_audit_explorer_reaches_every_archived_row(lab):
    stem = WIDGET_NOTEBOOKS["AuditExplorer"][0]
    box = _widget(lab, stem, "AuditExplorer")
    what = f"{stem}: AuditExplorer"
    select = _control(box, AUDIT_SELECT, what)
    options = _texts(select.locator("option"))
    sizes = [int(re.search(r"\((\d+) entries\)", o).group(1)) for o in options]
    big = sizes.index(max(sizes))
    assert sizes[big] > 20, f"{what}: no audit row of more than one page: {options}"
    select.select_option(index=big)
    count = box.locator(f"{HTML_OUT} :text-matches('archived loop rows')").first
    _until_changed(lambda: _seen(count) if count.count() else "", "", f"{what}: row count")
    first = _seen(count)
    assert "rows 1-20 shown" in first, first
    _button(box, ">").click()
    _until_changed(lambda: _seen(count), first, f"{what}: the next page")
    assert "rows 21-40 shown" in _seen(count), _seen(count)
    _screenshot(lab.pages[stem], f"{stem}-AuditExplorer-page2", box)
    _no_page_errors(lab, stem)


def test_replay_player_one_number_and_a_jump_menu_that_follows(lab):
    stem = WIDGET_NOTEBOOKS["ReplayPlayer"][0]
    box = _widget(lab, stem, "ReplayPlayer")
    what = f"{stem}: ReplayPlayer"
    assert not box.locator(SLIDER_READOUT).is_visible(), f"{what}: the call shown twice"
    jump = _control(box, f"{DROPDOWN}:not(:has({LABEL}:text-is('speed'))) select", what)
    jump.select_option(index=1)
    title = box.locator(f"{HTML_OUT} b").first
    before = _seen(title)
    _button(box, "next call").click()
    _until_changed(lambda: _seen(title), before, f"{what}: the call after next call")
    lab.pages[stem].wait_for_function(
        "s => s.selectedIndex === 0", arg=jump.element_handle(), timeout=CHANGE_S * 1000
    )
    assert _chosen(jump).startswith("(jump to"), f"{what}: the jump menu shows {_chosen(jump)!r}"
    _no_page_errors(lab, stem)


def test_a_transcript_reads_as_markdown_and_search_finds_tool_text(lab):
    """What a person sees of a reply written in markdown: a heading, a table and a code block,
    not "###" and "|---|"; its script, image and javascript: link inert (nothing ran, nothing
    was fetched). A search for a file named only in a tool call's input and result shows
    those two rows, the match marked; a search for nothing there says "no rows match"."""
    page = lab.run(TRANSCRIPT)
    box = _widget(lab, TRANSCRIPT, "LoopBrowser")
    html = box.locator(HTML_OUT)
    heading = html.locator("h3", has_text="Plan")
    heading.wait_for(state="visible", timeout=CHANGE_S * 1000)
    seen = _seen(html)
    assert "###" not in seen and "|---|" not in seen, seen
    assert _texts(html.locator("table th")) == ["step", "file"]
    assert 'fmt.Println("<b>not bold</b>")' in _seen(html.locator("pre code"))
    assert "<script>window.pwned = 1</script>" in seen  # shown as text
    assert html.locator("img, script").count() == 0
    assert page.evaluate("() => window.pwned === undefined")
    assert html.locator("a[href^='javascript']").count() == 0
    _screenshot(page, f"{TRANSCRIPT}-markdown", box)
    what = f"{TRANSCRIPT}: LoopBrowser"
    search = _control(box, ".widget-text:has(label:text-is('text')) input", what)
    rows = _rows(box)
    search.fill(mdsession.HIDDEN)
    search.press("Enter")
    found = _until_changed(lambda: _rows(box), rows, f"{what}: rows after the search")
    assert found == ["assistant:2", "tool_result:3"], found
    status = _seen(box.locator(STATUS))
    assert status.startswith("rows 1-2 of 2"), status
    for fold in box.locator(f"{HTML_OUT} details").all():  # the marks are in opened folds
        assert fold.get_attribute("open") is not None
    assert _texts(box.locator(f"{HTML_OUT} mark")) == [mdsession.HIDDEN] * 2
    _screenshot(page, f"{TRANSCRIPT}-search", box)
    search.fill("no such words")
    search.press("Enter")
    _until_changed(lambda: _seen(box.locator(STATUS)), status, f"{what}: status")
    assert _seen(box.locator(STATUS)) == 'no rows match "no such words" (in 4 rows of the history)'
    _no_page_errors(lab, TRANSCRIPT)


def test_replay_player_plays_at_the_speed_chosen(lab):
    """The speed menu: at its fastest, Play runs through every call of the sample in a moment
    (at the 2 calls/s it had, minutes)."""
    stem = WIDGET_NOTEBOOKS["ReplayPlayer"][0]
    box = _widget(lab, stem, "ReplayPlayer")
    what = f"{stem}: ReplayPlayer"
    speed = _control(box, f"{DROPDOWN}:has({LABEL}:text-is('speed')) select", what)
    assert _chosen(speed) == "2 calls/s"
    options = _texts(speed.locator("option"))
    speed.select_option(index=len(options) - 1)
    handle = _control(box, SLIDER_HANDLE, what)
    last = handle.get_attribute("aria-valuemax")
    box.locator(".widget-play button").first.click()
    lab.pages[stem].wait_for_function(
        "h => h.getAttribute('aria-valuenow') === h.getAttribute('aria-valuemax')",
        arg=handle.element_handle(),
        timeout=CHANGE_S * 1000,
    )
    _screenshot(lab.pages[stem], f"{stem}-ReplayPlayer-speed", box)
    assert handle.get_attribute("aria-valuenow") == last
    _no_page_errors(lab, stem)


def _until_seen(locator: Any, wanted: Callable[[str], bool], what: str) -> str:
    """The text a person sees in ``locator`` once ``wanted`` holds of it (a failure, with what
    was seen, if it does not within the generous bound)."""
    deadline = time.monotonic() + CHANGE_S
    while True:
        text = _seen(locator)
        if wanted(text):
            return text
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not seen within {CHANGE_S}s; seen {text!r}", pytrace=False)
        time.sleep(0.1)


def test_live_view_follows_a_growing_session(lab):
    """LiveView on a session the test writes to while JupyterLab shows it: appended calls and a
    compaction change what a person sees (the calls, the context, the compaction count and a
    line for the compaction with what it swept), with no cell run again."""
    path = lab.root / LIVE_SESSION
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(livesession.session(0, 10))
    page = lab.run(LIVE)
    box = _widget(lab, LIVE, "LiveView")
    what = f"{LIVE}: LiveView"
    status = box.locator(LIVE_STATUS)
    first = _until_seen(status, lambda t: " calls " in t, f"{what}: status line")
    assert first == (
        f"{path.name}: context 20,009 of 167,000 tokens (12%) · 10 calls · $0.07 · 0 compactions"
    ), first
    assert "no compaction yet" in _seen(box.locator(HTML_OUT))
    with open(path, "ab") as f:
        f.write(livesession.session(10, 15, parent="a9"))
        f.write(livesession.boundary("b1", 20_009, 900))
    now = _until_seen(status, lambda t: " 15 calls " in t, f"{what}: 15 calls")
    assert now.endswith(" · 1 compactions"), now
    line = box.locator(f"{HTML_OUT} {LIVE_LANDED}")
    assert _texts(line) == [
        "compaction (auto) at 2026-03-01T11:00:00: 20,009 -> 900 tokens, swept 30 records"
    ]
    _screenshot(page, f"{LIVE}-LiveView", box)
    assert box.locator(".widget-toggle-button.mod-active").count() == 1  # "following" pressed
    _no_page_errors(lab, LIVE)
    assert not _problems(lab, LIVE)


def test_the_checks_see_errors(lab):
    """The checks above are not vacuous: on a notebook with a widget that cannot be shown, a
    line on stderr and an exception, each is reported, and Run All stops at the exception."""
    page = lab.run(CANARY)
    page.locator(f"{PANEL} {OUTPUT}", has_text=BAD_OUTPUT_TEXT[0]).first.wait_for()
    found = "\n".join(_problems(lab, CANARY))
    for expected in ("Error displaying widget", "canary on stderr", "ZeroDivisionError"):
        assert expected in found, f"{expected!r} not reported; reported:\n{found}"
    assert f"cell {len(CANARY_CELLS)} ({CANARY_CELLS[-1]!r}): not run" in found, found


def test_repository_untouched(lab):
    """The server ran on copies: no checkpoint, output or sidecar appeared in the repository."""
    for d, seen in lab.before.items():
        assert (fingerprint(ROOT / d), sorted(os.listdir(ROOT / d))) == seen, d
