"""Shared fixtures: hand-built tiny files, the committed sample agents, the runtime fixtures."""

from __future__ import annotations

import compileall
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
import pytest
import wheelenv

from adfkit._base.bundled import skip_iri_grammar

matplotlib.use("Agg")
skip_iri_grammar()  # before a test module imports nbformat: 2.3 s less in each worker

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_agents"
RUNTIME_FIXTURES = ROOT.parent / "shared" / "fixtures" / "adf-runtime"


@pytest.fixture(autouse=True)
def _run_from_root(monkeypatch):
    """Doctests and examples use paths relative to the repository root."""
    monkeypatch.chdir(ROOT)


def sample(name: str) -> Path:
    """Path of a committed sample agent (``sample_agents/<name>.adf``)."""
    p = SAMPLES / f"{name}.adf"
    if not p.exists():
        pytest.fail(f"sample agent {p} is missing: run `make samples`")
    return p


@pytest.fixture(scope="session")
def playwright_browser() -> Iterator[Any]:
    """Chromium for the session, one per worker, for every module that opens a page (two
    Playwrights in one process fail; tests/test_browser.py ``start_chromium``)."""
    import test_browser

    yield from test_browser.start_chromium()


def runtime_fixture(name: str) -> Path:
    """Path of a real-runtime fixture; skips the test when ../shared is not there."""
    p = RUNTIME_FIXTURES / f"{name}.adf"
    if not p.exists():
        pytest.skip(f"real-runtime fixture {p} not present (../shared is absent in a user's clone)")
    return p


def fingerprint(folder: Path) -> dict[str, tuple[int, str, int]]:
    """Relative path -> (size, sha256, mtime in ns) of every file under a folder, subfolders
    included: proves nothing was written, touched or created."""
    out = {}
    for f in sorted(Path(folder).rglob("*")):
        if f.is_file():
            st = f.stat()
            key = str(f.relative_to(folder))
            out[key] = (st.st_size, hashlib.sha256(f.read_bytes()).hexdigest(), st.st_mtime_ns)
    return out


def pytest_configure(config: pytest.Config) -> None:
    """adfkit's and adfsynth's bytecode, written once before the tests start, as a pip install
    writes it: with PYTHONDONTWRITEBYTECODE=1 set (this machine's shell sets it) every worker,
    notebook kernel and command the tests start would otherwise compile them from source
    again (0.3 s of each process that imports adfkit). Only the main process compiles."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        for package in ("adfkit", "adfsynth"):
            compileall.compile_dir(ROOT / package, quiet=1)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start making the wheel's venvs now when a selected test needs one: the installs (mostly
    waiting on downloads) then overlap the tests that run before it (tests/wheelenv.py). A
    worker of ``pytest -n`` does not know yet whether it will run those tests: there the first
    test of tests/test_cli.py starts them (its module fixture)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if any(
        name in getattr(item, "fixturenames", ())
        for item in session.items
        for name in wheelenv.FIXTURES
    ):
        # pytest's temporary folder of the session, as tmp_path_factory gives (kept for three
        # sessions, then removed by pytest)
        factory = getattr(session.config, "_tmp_path_factory", None)
        wheelenv.start(factory.mktemp("wheel") if factory is not None else None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    wheelenv.stop()
