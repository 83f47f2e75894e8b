"""Start-up: ``import adfkit`` and ``adfkit --version`` import only what they need (issue 23).

Each check runs a fresh interpreter and looks at ``sys.modules``: what a module imports is a
fact, not a timing (times are in ``make bench``'s fleet-real section).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _modules(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


HEAVY = ("matplotlib", "ipywidgets", "pyarrow.parquet", "dask", "zstandard", "brotli", "pandas")


def test_import_adfkit_imports_nothing_heavy():
    mods = _modules("import adfkit")
    assert sorted(m for m in HEAVY if m in mods) == []
    # pyarrow itself is only there when pandas brings it (it does not: pandas is not imported)
    assert "pyarrow" not in mods
    assert sorted(m for m in mods if m.startswith("adfkit.")) == [
        "adfkit._base",
        "adfkit._base.errors",
    ]


def test_public_names_load_on_first_use():
    mods = _modules(
        "import adfkit\n"
        "assert callable(adfkit.open) and callable(adfkit.load_fleet)\n"
        "assert set(adfkit.__all__) <= set(dir(adfkit))\n"
        "assert all(getattr(adfkit, n) is not None for n in adfkit.__all__)\n"
        "from adfkit import AgentFile, FleetResult, schema, simulate, __version__\n"
        "assert adfkit.schema is schema and __version__ == adfkit.__version__\n"
    )
    assert {"adfkit._facade.agent", "adfkit._facade.fleet", "adfkit.schema"} <= mods
    assert not {"matplotlib", "ipywidgets", "dask"} & mods


def test_unknown_name_is_an_attribute_error():
    import adfkit

    with pytest.raises(AttributeError, match="no_such_name"):
        adfkit.no_such_name  # noqa: B018


@pytest.mark.parametrize("argv", [["--version"]])
def test_version_imports_no_pandas(argv):
    mods = _modules(f"from adfkit._entry import main\nmain({argv!r})")
    assert "pandas" not in mods and "numpy" not in mods


def test_version_says_the_version(capsys):
    from importlib.metadata import version

    from adfkit._entry import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"adfkit {version('adfkit')}\n"


@pytest.mark.parametrize("dist", ["adfkit", "pandas", "pyarrow", "orjson"])
def test_installed_version_is_importlib_metadatas(dist):
    """The version read from the metadata file is the one importlib.metadata finds (the same
    first entry of sys.path), read in a fresh interpreter that never imports importlib.metadata."""
    from importlib.metadata import version

    code = (
        "import sys\n"
        "from adfkit._base.installed import installed_version\n"
        f"print(installed_version({dist!r}), 'importlib.metadata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [version(dist), "False"]


def test_installed_version_of_what_is_not_installed_is_none():
    from adfkit._base.installed import installed_version

    assert installed_version("no_such_distribution_here") is None


def test_other_commands_reach_the_cli(capsys):
    from adfkit._entry import main

    assert main([]) == 2  # no command: the full parser's help
    assert "usage: adfkit" in capsys.readouterr().out


def _blas_threads(env_extra: dict[str, str], call: str) -> tuple[str, str]:
    """OPENBLAS_NUM_THREADS and OMP_NUM_THREADS in a fresh interpreter after ``call`` (an
    ``adfkit info`` run: numpy imported), from an environment without any BLAS thread setting
    but ``env_extra`` (``-``: unset)."""
    import os

    from conftest import sample

    from adfkit._entry import BLAS_THREADS

    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS} | env_extra
    code = (
        "import os, sys\n"
        f"sys.argv = ['adfkit', 'info', {str(sample('clean'))!r}]\n"
        "from adfkit._entry import main\n"
        f"{call}\n"
        "assert 'numpy' in sys.modules\n"
        "print(*(os.environ.get(k, '-') for k in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    return out[-2], out[-1]


def test_the_console_script_runs_blas_on_one_thread_unless_told_otherwise():
    """The program (argv from sys.argv) sets OPENBLAS_NUM_THREADS=1 before numpy is imported;
    a user's own OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is left as it is, and a caller's
    main([...]) sets nothing."""
    assert _blas_threads({}, "main()") == ("1", "-")
    assert _blas_threads({"OMP_NUM_THREADS": "2"}, "main()") == ("-", "2")
    assert _blas_threads({"OPENBLAS_NUM_THREADS": "2"}, "main()") == ("2", "-")
    assert _blas_threads({}, "main(sys.argv[1:])") == ("-", "-")
