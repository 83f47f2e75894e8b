"""The README stays true: every CLI command is listed, and every public name exists."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from conftest import ROOT

import adfkit
from adfkit.cli import build_parser


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)


def test_every_command_is_in_the_readme_with_help():
    readme = (ROOT / "README.md").read_text()
    cmds = _commands()
    assert {"info", "plot", "observe", "check", "export", "report"} <= set(cmds)
    for name in cmds:
        assert f"`adfkit {name} " in readme, f"README does not list `adfkit {name}`"
        sub = next(a for a in build_parser()._actions if a.dest == "command").choices[name]
        assert sub.description and "Example" in sub.description, name


def test_public_names_exist_and_are_documented():
    for name in adfkit.__all__:
        obj = getattr(adfkit, name)
        if name == "__version__":
            continue
        assert inspect.getdoc(obj), f"adfkit.{name} has no docstring"


def test_import_adfkit_loads_no_plotting_or_widgets():
    import subprocess
    import sys

    code = (
        "import sys, adfkit; "
        "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'nbclient') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_readme_quick_start_runs(tmp_path):
    """The README's quick-start block runs as written on the bundled sample agents (it names
    methods, a model-call seq and keyword arguments that must all exist)."""
    import re

    import matplotlib.pyplot as plt

    readme = (ROOT / "README.md").read_text()
    code = re.search(r"## Quick start\n.*?```python\n(.*?)```", readme, re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    plt.close("all")
    df, errors = ns["df"], ns["errors"]
    assert errors.empty
    # the fleet table is the compactions() of every sample agent of every format, stacked
    import warnings

    from adfkit._facade.agent import agents_of

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = adfkit.list_sessions(adfkit.sample_path())["path"]
        want = sum(len(a.compactions()) for p in inputs for a in agents_of(adfkit.open(p)))
    assert len(inputs) >= 19 and len(df) == want


def test_every_doctest_example_compiles_without_a_warning():
    """A docstring example that Python warns about (an invalid escape such as ``\\u`` in a
    non-raw docstring) would print a DeprecationWarning in every test run, hiding real ones."""
    import doctest
    import importlib
    import pkgutil
    import warnings

    finder = doctest.DocTestFinder()
    for info in pkgutil.walk_packages(adfkit.__path__, "adfkit."):
        if info.name == "adfkit.__main__":  # runs the CLI when imported
            continue
        module = importlib.import_module(info.name)
        for test in finder.find(module):
            for example in test.examples:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    compile(example.source, f"<doctest {test.name}>", "single")


def test_dir_adfkit_shows_only_adfkit():
    """``dir(adfkit)`` lists adfkit's names and its modules, not the tools it was built with
    (``PackageNotFoundError``, ``annotations``)."""
    public = {n for n in dir(adfkit) if not n.startswith("_")}
    modules = {n for n in public if inspect.ismodule(getattr(adfkit, n))}
    assert public - modules <= set(adfkit.__all__), sorted(public - modules - set(adfkit.__all__))


def test_every_analysis_method_is_in_the_readme():
    """A newcomer learns the methods from README: each public ``AgentFile`` method is named."""
    readme = (ROOT / "README.md").read_text()
    methods = [
        n
        for n, v in vars(adfkit.AgentFile).items()
        if not n.startswith("_") and inspect.isfunction(v) and n not in ("close",)
    ]
    missing = [n for n in methods if f"{n}(" not in readme]
    assert not missing, f"README does not name: {missing}"


def test_the_docs_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: every page, snippet and API reference resolves (a docstring
    mkdocstrings cannot read, a moved module, a README section marker lost fail it)."""
    import shutil
    import subprocess
    import sys

    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip('mkdocs is not installed (pip install "adfkit[docs]")')
    out = subprocess.run(
        [mkdocs, "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    page = (tmp_path / "site" / "api" / "agentfile.html").read_text()
    assert "compaction_ledger" in page and "Examples" in page
    assert ":func:" not in page  # Sphinx roles shown as the code they name
    assert '<span class="gp">&gt;&gt;&gt; </span>' in page  # doctests as highlighted code
