"""Files that ship with adfkit: the notebooks, and the sample agents they open by default.

In a wheel they are installed inside the package (``adfkit/notebooks``,
``adfkit/sample_agents``); in a source checkout they are the repository's own folders.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parents[1]  # the adfkit folder (this is adfkit/_base/)


def _folder(name: str) -> Path:
    installed = _HERE / name
    return installed if installed.is_dir() else _HERE.parent / name


def notebooks_dir() -> Path:
    """The folder of the bundled notebooks (``*.ipynb``)."""
    return _folder("notebooks")


def sample_agent() -> Path:
    """The sample agent the notebooks open by default (``long-runner.adf``).

    Examples
    --------
    >>> sample_agent().name
    'long-runner.adf'
    """
    return sample_folder() / "long-runner.adf"


#: The agents notebook 06 compares with ``AGENT`` (its ``OTHERS`` parameter), relative to
#: ``sample_agents/``: a Claude Code session (its subagents live in the folder of the same
#: stem), one sample of an Inspect AI log (``LOG.eval#SAMPLE``) and an OpenHands conversation
#: (a folder).
COMPARED_SAMPLES = (
    "claude-code/projects/-home-user-work-webapp/24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl",
    "inspect/2026-06-01T08-00-00+00-00_tide-drift-summary.eval#1_epoch_1",
    "openhands/conversations/02ff349d4f874aa39c2b9d9f2ae75e2e",
)


def sample_files() -> list[Path]:
    """Every sample file the bundled notebooks open (what the wheel ships and ``adfkit
    notebooks`` copies), relative to :func:`sample_folder`: the sample agent, the other ADF
    sample agents beside it (notebook 04's fleet is the folder of ``AGENT``: seven agents, as
    in a clone), then each of :data:`COMPARED_SAMPLES` with what belongs to it (a session's
    subagents, a folder's files; hidden files such as lock files are not the agent's).

    Examples
    --------
    >>> [str(p) for p in sample_files()][:3]  # doctest: +NORMALIZE_WHITESPACE
    ['long-runner.adf', 'clean.adf', 'forgetful.adf']
    """
    root = sample_folder()
    first = Path("long-runner.adf")
    files = [
        first,
        *sorted(p.relative_to(root) for p in root.glob("*.adf") if p.name != first.name),
    ]
    for name in COMPARED_SAMPLES:
        path = root / name.split("#")[0]
        own = [path] if path.is_file() else []
        folder = path if path.is_dir() else path.with_suffix("")
        own += sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
        files += [p.relative_to(root) for p in own]
    return files


def sample_folder() -> Path:
    """The folder of the bundled sample agents."""
    return _folder("sample_agents")


def sample_path(name: str | None = None) -> Path:
    """A sample agent shipped with adfkit (after ``pip install`` as in a clone), to try
    adfkit on before pointing it at your own files: ``name`` relative to the samples' folder
    (``"long-runner.adf"``; a session of another format by its path below it, as
    ``adfkit notebooks DIR`` copies them to ``DIR/sample_agents``), or the folder itself (a
    fleet: its ADF agents). A name that is not there is an :class:`AdfError` naming the ones
    that are.

    Examples
    --------
    >>> import adfkit
    >>> adfkit.sample_path("long-runner.adf").name
    'long-runner.adf'
    >>> sorted(p.name for p in adfkit.sample_path().glob("*.adf"))[:2]
    ['clean.adf', 'forgetful.adf']
    """
    root = sample_folder()
    if name is None:
        return root
    path = root / name
    if ".." in Path(name).parts or not path.exists():
        from adfkit._base.errors import AdfError

        shipped = ", ".join(str(f) for f in sample_files() if f.suffix == ".adf")
        raise AdfError(f"no sample agent {name!r}; adfkit ships {shipped} and others", path=path)
    return path


#: What ``pip install "adfkit[notebooks]"`` adds: notebooks run headless (``adfkit report``,
#: a kernel for them) and JupyterLab to open them in.
NOTEBOOKS_EXTRA = 'pip install "adfkit[notebooks]"'
_RUN_NOTEBOOKS = ("nbformat", "nbclient", "nbconvert", "ipykernel")


def missing(modules: tuple[str, ...] = _RUN_NOTEBOOKS) -> list[str]:
    """The ``modules`` that are not installed (looked up, not imported)."""
    from importlib.util import find_spec

    return [m for m in modules if find_spec(m) is None]


def has_jupyterlab() -> bool:
    """Whether JupyterLab is installed here, so ``jupyter lab`` can open the notebooks."""
    return not missing(("jupyterlab",))


def skip_iri_grammar() -> None:
    """Keep jsonschema from importing ``rfc3987_syntax`` in this process: it builds a grammar
    for 2.3 s on import (python-jsonschema/jsonschema#1392, #1521) only to check the ``iri``
    format, which nbformat's schema never uses. nbformat imports jsonschema; JupyterLab's
    dependencies install rfc3987-syntax. For processes adfkit owns (the ``adfkit`` command, the
    tests): a library call leaves its caller's jsonschema as it is."""
    import sys

    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
