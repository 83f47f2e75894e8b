"""adfkit's wheel installed in a fresh venv, made in the background from the start of the session.

Building the wheel, making a venv and ``pip install`` into it take minutes of mostly waiting
(downloads, unpacking), not of computing. ``tests/conftest.py`` calls :func:`start` once the
tests are collected, when some selected test uses the ``wheel`` or ``wheel_with_notebooks``
fixture (tests/test_cli.py), so the install runs while the tests before those run; the
fixtures wait for it (:func:`plain`, :func:`with_notebooks`) and fail with the install's own
error. One venv, in two states: first as a plain ``pip install`` of the wheel leaves it, then
with ``pip install "adfkit[notebooks]"`` run in it (what adfkit tells a user who lacks the
extra to do). The plain state's tests come first in tests/test_cli.py; a plain venv asked for
after the extra went in is made afresh (a second install, slower, never a wrong one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import venv
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The fixtures that need a venv (tests/test_cli.py).
FIXTURES = ("wheel", "wheel_with_notebooks")

#: Left out of the environment of the wheel's commands and installs: the caller's plot backend;
#: PYTHONPATH (a checkout on it would be imported instead of the installed wheel); and
#: PYTHONDONTWRITEBYTECODE, which (with the ``--no-compile`` install) would make every command
#: and every kernel compile pandas, matplotlib, IPython and Jupyter from source again (a report
#: took 55 s instead of 19 s here); as on a user's machine, the first run writes the bytecode.
NOT_PASSED = ("MPLBACKEND", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")


def environment() -> dict[str, str]:
    """This process's environment without :data:`NOT_PASSED`."""
    return {k: v for k, v in os.environ.items() if k not in NOT_PASSED}


SKIP_REASON = "builds and installs a wheel (set ADFKIT_SKIP_WHEEL=1 to skip)"


def wanted() -> bool:
    """Whether wheels may be built here: git is there and ADFKIT_SKIP_WHEEL is not 1."""
    return bool(shutil.which("git")) and os.environ.get("ADFKIT_SKIP_WHEEL") != "1"


class Wheel:
    """adfkit's wheel installed in a fresh venv, run from a folder outside the source tree."""

    def __init__(self, whl: Path, env: Path, run: Path) -> None:
        self.whl, self.env, self.run = whl, env, run

    def adfkit(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.env / "bin" / "adfkit"), *args],
            capture_output=True,
            text=True,
            cwd=self.run,
            env=environment(),
        )

    def pip_install(self, spec: str) -> None:
        # --no-compile: no .pyc for JupyterLab's thousands of files (a third of the time)
        _run([str(self.env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", spec])

    def has(self, module: str) -> bool:
        code = f"import importlib.util as u; print(u.find_spec({module!r}) is not None)"
        py = self.env / "bin" / "python"
        return subprocess.run([str(py), "-c", code], capture_output=True, text=True).stdout == (
            "True\n"
        )


_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_root: Path | None = None
_plain: Future[Wheel] | None = None
#: the plain venv with the notebooks extra installed in it (set once that is done)
_notebooks: Wheel | None = None
_running: set[subprocess.Popen[bytes]] = set()
_stopping = threading.Event()


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    """``cmd`` to its end (its output shown in the error if it fails); stopped by :func:`stop`."""
    if _stopping.is_set():
        raise RuntimeError("the session is ending")
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    _running.add(proc)
    try:
        out, _ = proc.communicate()
    finally:
        _running.discard(proc)
    if proc.returncode:
        text = out.decode(errors="replace")[-3000:]
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{text}")


def _venv(root: Path, name: str, whl: Path) -> Wheel:
    venv.create(root / name, with_pip=True)
    (root / f"{name}-run").mkdir()
    w = Wheel(whl, root / name, root / f"{name}-run")
    w.pip_install(str(whl))
    return w


def build(wheels: Path, source: Path = ROOT) -> Path:
    """adfkit's wheel built from ``source`` (default: this checkout) into the folder ``wheels``,
    as pip builds it for a user (``pip wheel``: an isolated build with pyproject's backend)."""
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(wheels)]
    _run(cmd)
    (whl,) = wheels.glob("adfkit-*.whl")
    return whl


def _make_plain(root: Path) -> Wheel:
    return _venv(root, "plain", build(root / "wheels"))


def _add_notebooks(w: Wheel) -> Wheel:
    w.pip_install(f"adfkit[notebooks] @ {w.whl.as_uri()}")
    return w


def start(folder: Path | None = None) -> None:
    """Start making the venv in ``folder`` (default: a new temporary folder), once; nothing
    when wheels are not :func:`wanted`."""
    global _pool, _root, _plain
    with _lock:
        if _pool is not None or not wanted():
            return
        _root = Path(tempfile.mkdtemp(prefix="adfkit-wheel-")) if folder is None else folder
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wheel")
        _plain = _pool.submit(_make_plain, _root)


def plain() -> Wheel:
    """The venv with a plain install of the wheel (made now if :func:`start` was not called;
    made afresh if the notebooks extra went into the first one already)."""
    global _plain
    start()
    assert _plain is not None and _root is not None
    with _lock:
        w = _plain.result()
        if w is _notebooks:
            w = _venv(_root, "plain-again", w.whl)
            _plain = Future()
            _plain.set_result(w)
    return w


def with_notebooks() -> Wheel:
    """The plain venv after ``pip install "adfkit[notebooks]"`` in it (installed on first use)."""
    global _notebooks
    start()
    assert _plain is not None
    with _lock:
        if _notebooks is None:
            _notebooks = _add_notebooks(_plain.result())
    return _notebooks


def stop() -> None:
    """End the installs still running (the end of the session). The venvs stay: pytest's
    temporary folders are removed by pytest, three sessions later."""
    global _pool
    with _lock:
        if _pool is None:
            return
        _stopping.set()
        for proc in list(_running):
            proc.terminate()
        _pool.shutdown(wait=True, cancel_futures=True)
        _pool = None
