"""The README stays true: every CLI command is listed, and every public name exists."""

from __future__ import annotations

import inspect

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
    code = re.search(r"## Quick start\n\n```python\n(.*?)```", readme, re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    plt.close("all")
    df, errors = ns["df"], ns["errors"]
    assert errors.empty
    # the fleet table is every sample's compactions(), stacked
    assert len(df) == sum(
        len(adfkit.open_adf(p).compactions())
        for p in sorted((ROOT / "sample_agents").glob("*.adf"))
    )
