"""Every plot of one agent, by kind, and saving them all as PNG files."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from adfkit._base.outputs import check_output, safe_name
from adfkit._core.registry import agent_stem, input_places
from adfkit.plots._composition import composition_at, context_composition
from adfkit.plots._growth import token_growth
from adfkit.plots._matplotlib import AgentLike, _agent, figure_of
from adfkit.plots._ratio import compaction_ratio
from adfkit.plots._sawtooth import context_sawtooth
from adfkit.plots._spend import turn_spend

if TYPE_CHECKING:
    from matplotlib.axes import Axes


#: Plot kinds for the CLI and :func:`save_all`: kind -> function(data, *, ax) -> Axes.
PLOTS: dict[str, Callable[..., Axes]] = {
    "context": context_sawtooth,
    "growth": token_growth,
    "spend": turn_spend,
    "ratio": compaction_ratio,
    "composition": context_composition,
    "window": composition_at,
}


def save_all(
    agent: AgentLike,
    folder: str | os.PathLike[str],
    *,
    kinds: list[str] | None = None,
    dpi: int = 120,
) -> list[Path]:
    """Write every plot of one agent as a PNG file: ``<folder>/<agent file stem>-<kind>.png``.

    Parameters
    ----------
    agent : an AgentFile or the path of an ``.adf`` file (opened read-only).
    folder : output folder, created if needed (the agent file's own folder is fine). No
        path written may be the agent file or a SQLite sidecar of it
        (:func:`adfkit._base.outputs.check_output`; an error before anything is written).
    kinds : a subset of :data:`PLOTS` (default: all).
    dpi : resolution of the PNGs.

    Returns
    -------
    The paths written, in the order of ``kinds``.

    Examples
    --------
    >>> import tempfile
    >>> from adfkit import plots
    >>> with tempfile.TemporaryDirectory() as d:
    ...     names = [p.name for p in plots.save_all("sample_agents/clean.adf", d)]
    >>> names  # doctest: +NORMALIZE_WHITESPACE
    ['clean-context.png', 'clean-growth.png', 'clean-spend.png', 'clean-ratio.png',
     'clean-composition.png', 'clean-window.png']
    """
    import matplotlib.pyplot as plt

    kinds = list(PLOTS) if kinds is None else list(kinds)
    bad = [k for k in kinds if k not in PLOTS]
    if bad:
        raise ValueError(f"kinds must be among {list(PLOTS)}, got {bad}")
    out_dir = Path(folder)
    written: list[Path] = []
    with _agent(agent) as a:
        stem = safe_name(agent_stem(a.path))  # as `adfkit plot` names one plot
        paths = {kind: out_dir / f"{stem}-{kind}.png" for kind in kinds}
        places = input_places([a.path])
        for path in [out_dir, *paths.values()]:
            check_output(path, places)
        out_dir.mkdir(parents=True, exist_ok=True)
        for kind, path in paths.items():
            ax = PLOTS[kind](a)
            try:
                figure_of(ax).savefig(path, dpi=dpi, format="png")
                written.append(path)
            finally:
                plt.close(figure_of(ax))
    return written
