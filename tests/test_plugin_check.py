"""The cheap check before the search for installed plug-ins (:func:`may_have_entry_points`):
never False where :mod:`importlib.metadata` would find an entry point of the group, so that a
command that finds no plug-in skips the search (and the import) without missing one."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from adfkit._base.plugins import may_have_entry_points
from tests.test_startup import _modules

GROUP = "adfkit.formats"


@pytest.fixture(autouse=True)
def _path_finders_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's own finders only (a test before may have installed one that finds
    distributions: the check then leaves the search to importlib, whatever the paths)."""
    kept = [
        f
        for f in sys.meta_path
        if getattr(f, "__name__", "") == "PathFinder" or not hasattr(f, "find_distributions")
    ]
    monkeypatch.setattr(sys, "meta_path", kept)


def _dist(root: Path, name: str, entry_points: str | None, suffix: str = ".dist-info") -> Path:
    d = root / f"{name}-1.0{suffix}"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (d / "entry_points.txt").write_text(entry_points)
    return root


#: importlib.metadata's answer and the check's for the same paths, in a fresh interpreter with
#: Python's own finders only: the test process's importlib state is shared with every test
#: before (under xdist, whichever ran on the worker), and once made importlib find nothing here.
_BOTH = """if True:
    import json, sys
    sys.meta_path[:] = [
        f for f in sys.meta_path
        if getattr(f, "__name__", "") == "PathFinder" or not hasattr(f, "find_distributions")
    ]
    from importlib.metadata import distributions
    from adfkit._base.plugins import may_have_entry_points
    paths = json.loads(sys.argv[1])
    found = any(ep.group == GROUP for d in distributions(path=paths) for ep in d.entry_points)
    print(json.dumps([found, may_have_entry_points(GROUP, paths)]))
"""


def _found_and_checked(paths: list[str]) -> tuple[bool, bool]:
    """(an entry point of GROUP found by importlib.metadata, may_have_entry_points) on paths."""
    code = _BOTH.replace("GROUP", repr(GROUP))
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(paths)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    found, checked = json.loads(out.stdout.splitlines()[-1])
    return found, checked


def test_no_entry_point_of_the_group_is_false(tmp_path: Path) -> None:
    root = _dist(tmp_path / "site", "tool", "[console_scripts]\ntool = tool:main\n")
    _dist(root, "bare", None)  # no entry_points.txt at all
    (root / "module.py").write_text("")
    paths = [str(root), str(tmp_path / "missing")]
    assert _found_and_checked(paths) == (False, False)


@pytest.mark.parametrize(
    "text",
    [
        "[adfkit.formats]\ntoy = toyformat:SPEC\n",
        "[console_scripts]\nx = x:m\n\n[adfkit.formats]\ntoy = t:S\n",
    ],
)
@pytest.mark.parametrize("suffix", [".dist-info", ".egg-info"])
def test_a_package_declaring_one_is_true(tmp_path: Path, text: str, suffix: str) -> None:
    root = _dist(tmp_path / "site", "toyformat", text, suffix)
    _dist(root, "other", "[console_scripts]\nx = x:m\n")
    paths = [str(tmp_path / "missing"), str(root)]
    assert _found_and_checked(paths) == (True, True)


def test_what_it_cannot_read_cheaply_is_left_to_importlib(tmp_path: Path) -> None:
    """A zip on the path and an egg are searched by importlib itself (True)."""
    z = tmp_path / "plugins.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("toyformat-1.0.dist-info/METADATA", "Name: toyformat\nVersion: 1.0\n")
        zf.writestr("toyformat-1.0.dist-info/entry_points.txt", "[adfkit.formats]\ntoy = t:S\n")
    assert _found_and_checked([str(z)]) == (True, True)
    egg = tmp_path / "toy-1.0.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "entry_points.txt").write_text("[adfkit.formats]\ntoy = t:S\n")
    assert may_have_entry_points(GROUP, [str(egg)]) is True
    assert may_have_entry_points(GROUP, [str(tmp_path)]) is True  # the egg inside a folder


def test_another_finder_of_distributions_is_left_to_importlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Finder:
        def find_spec(self, *_: object) -> None:
            return None

        def find_distributions(self, *_: object) -> list[object]:
            return []

    assert may_have_entry_points(GROUP, [str(tmp_path)]) is False
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert may_have_entry_points(GROUP, [str(tmp_path)]) is True


def test_a_run_that_finds_no_plug_in_never_imports_importlib_metadata() -> None:
    """This environment declares no adfkit plug-in: looking for them reads a few files only
    (a fresh interpreter: the test process may hold other finders)."""
    mods = _modules("from adfkit._core import registry; registry._load_plugins()")
    assert "importlib.metadata" not in mods
