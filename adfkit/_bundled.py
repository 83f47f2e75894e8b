"""Files that ship with adfkit: the notebooks, and the sample agent they open by default.

In a wheel they are installed inside the package (``adfkit/notebooks``,
``adfkit/sample_agents``); in a source checkout they are the repository's own folders.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


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
    return _folder("sample_agents") / "long-runner.adf"
