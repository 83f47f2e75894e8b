"""Plots of what forgetting costs: the loss ledger by kind, survival across compactions,
cache cost with its counterfactuals, recovery against the cold start.

Each function takes an :class:`adfkit.AgentFile` (or a path), or the frame it needs (one
agent's table, or a fleet's from ``load_fleet(table=...)``, whose agents are named by its
``label`` column), and ``ax=None``; it draws on ``ax`` (or a new figure) and returns the Axes,
with the style and plain-text rules of :mod:`adfkit.plots`. Published figures are drawn as
reference lines where they apply (:data:`ANCHORS`), labelled with their source.

Examples
--------
>>> import adfkit
>>> from adfkit import plots_forgetting as pf
>>> with adfkit.open("sample_agents/long-runner.adf") as agent:
...     ax = pf.recovery_plot(agent)
>>> ax.get_ylabel()
'tool calls before the first productive action'
>>> pf.close(ax)
"""

from __future__ import annotations

from adfkit.plots._forgetting import (
    ANCHORS,
    cache_cost,
    close,
    ledger_by_kind,
    recovery_plot,
    survival_plot,
)
from adfkit.plots._forgetting import C_ANCHOR as C_ANCHOR
from adfkit.plots._forgetting import KIND_COLOURS as KIND_COLOURS

__all__ = ["ANCHORS", "cache_cost", "close", "ledger_by_kind", "recovery_plot", "survival_plot"]
