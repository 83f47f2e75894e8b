"""Notebook widgets: browse the loop, decode audit rows, replay the context window.

Four ipywidgets-based views, each built on a handle from :func:`adfkit.open_adf`:

- :class:`LoopBrowser` -- the loop (or the whole history) as the runtime's Loop tab shows it,
  filtered by kind, role, tool and text, one page at a time;
- :class:`AuditExplorer` -- pick an ``adf_audit`` row and see it decoded;
- :class:`ReplayPlayer` -- a slider over model calls showing what the context window held;
- :class:`LiveView` -- a running agent followed as it writes, as ``adfkit watch`` follows it.

The HTML is made by pure functions (:func:`rows_html`, :func:`audit_html`,
:func:`composition_html`) that take frames and return strings, so they run without a kernel
and can be shown with ``IPython.display.HTML`` in static reports. Every piece of agent text is
HTML-escaped: a file can contain ``<script>`` in a message and it stays inert.

This module imports ipywidgets; ``import adfkit`` does not import it.

Examples
--------
>>> import adfkit
>>> from adfkit.widgets import LoopBrowser
>>> browser = LoopBrowser(adfkit.open_adf("sample_agents/long-runner.adf"))
>>> browser.kind.value = "compaction_summary"
>>> browser.n_matches == int((browser.frame["kind"] == "compaction_summary").sum())
True
"""

from __future__ import annotations

from adfkit.widgets._audit_explorer import AuditExplorer
from adfkit.widgets._html import INERT as INERT
from adfkit.widgets._html import KIND_COLORS as KIND_COLORS
from adfkit.widgets._html import PART_COLORS as PART_COLORS
from adfkit.widgets._html import answer, audit_html, composition_html, escape, rows_html
from adfkit.widgets._live_view import LiveView
from adfkit.widgets._loop_browser import ALL as ALL
from adfkit.widgets._loop_browser import LoopBrowser
from adfkit.widgets._replay_player import COMPOSITION_PARTS as COMPOSITION_PARTS
from adfkit.widgets._replay_player import ReplayPlayer

__all__ = [
    "AuditExplorer",
    "LiveView",
    "LoopBrowser",
    "ReplayPlayer",
    "answer",
    "audit_html",
    "composition_html",
    "escape",
    "rows_html",
]
