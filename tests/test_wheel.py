"""What the wheel holds, and that nobody keeps its list of packages by hand.

setup.py finds every package under ``adfkit/`` and adds the two pyproject.toml maps in from the
repository's root (``notebooks/``, ``sample_agents/``). A copy of this checkout with a new
format package in it is built as pip builds it for a user, and the wheel must hold exactly the
files stated here from the tree: every module of ``adfkit/`` (the new package's among them),
``py.typed``, the JSON of ``adfkit/data``, the notebooks and the samples they open
(``sample_files()``), and nothing else (no adfsynth, no tests, no ``notebooks/src``, no
``*.truth.json``). tests/test_cli.py installs the checkout's own wheel and runs its commands.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest
import wheelenv

from adfkit._base.bundled import sample_files

ROOT = Path(__file__).resolve().parent.parent

#: What every wheel's metadata folder holds (``adfkit-<version>.dist-info/``).
DIST_INFO = {"METADATA", "RECORD", "WHEEL", "entry_points.txt", "top_level.txt"}

#: A format package that no build file names: ``adfkit/_sources/toyformat/``.
TOY = {
    "adfkit/_sources/toyformat/__init__.py": '"""A format no build file names."""\n',
    "adfkit/_sources/toyformat/parser.py": '"""Its parser."""\n',
}


def _known_files(root: Path) -> list[str]:
    """Every file git knows of in ``root`` (tracked, or new and not ignored), relative."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return [f for f in out.decode().split("\0") if f and (root / f).is_file()]


def _expected(files: list[str]) -> set[str]:
    """The wheel's files, but for its metadata, from the files of the source tree."""
    modules = {f for f in files if f.startswith("adfkit/") and f.endswith(".py")}
    data = {f for f in files if f.startswith("adfkit/data/") and f.endswith(".json")}
    notebooks = {f"adfkit/{f}" for f in files if f.startswith("notebooks/") and f.count("/") == 1}
    samples = {f"adfkit/sample_agents/{p.as_posix()}" for p in sample_files()}
    notebooks = {f for f in notebooks if f.endswith(".ipynb")}
    return modules | data | notebooks | samples | {"adfkit/py.typed"}


def test_pyproject_lists_no_package():
    """A ``packages`` list in pyproject.toml would override setup.py's discovery: a package
    added later would be missing from the wheel until someone remembered the list."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "packages" not in config["tool"]["setuptools"]
    assert "find_namespace_packages" in (ROOT / "setup.py").read_text()


def test_a_new_format_package_ships_and_the_wheel_holds_exactly_the_stated_files(tmp_path):
    if not wheelenv.wanted():
        pytest.skip(wheelenv.SKIP_REASON)
    source = tmp_path / "src"
    files = _known_files(ROOT)
    for rel in files:
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, source / rel)
    for rel, text in TOY.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text)
    assert not any("toyformat" in f for f in files)
    assert "toyformat" not in (source / "pyproject.toml").read_text()

    whl = wheelenv.build(tmp_path / "wheels", source)

    names = set(zipfile.ZipFile(whl).namelist())
    meta = {n for n in names if n.split("/")[0].endswith(".dist-info")}
    assert {n.split("/", 1)[1] for n in meta} == DIST_INFO
    expected = _expected(files) | set(TOY)
    assert sorted(names - meta - expected) == [], "in the wheel, not stated"
    assert sorted(expected - names) == [], "stated, not in the wheel"
    # the stated list is not empty by accident: every layer, every format, the mapped folders
    assert "adfkit/_sources/openhands/__init__.py" in names
    assert "adfkit/notebooks/01-quickstart.ipynb" in names
    assert "adfkit/sample_agents/long-runner.adf" in names
    assert len([n for n in names if n.startswith("adfkit/sample_agents/")]) > 50
