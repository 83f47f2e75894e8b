"""Plots of an agent's memory: context size against the threshold, token spend, compactions.

Every function takes an :class:`adfkit.AgentFile` (or a path to an ``.adf`` file, or the
DataFrame it needs) and ``ax=None``, draws on ``ax`` (or on a new figure with constrained
layout) and returns the Axes. None calls ``plt.show()`` or changes the global ``rcParams``:
style settings apply only while a plot is drawn. Matplotlib is imported on first use, so
``import adfkit.plots`` is cheap.

================  =====================================================================
kind (CLI)        function
================  =====================================================================
``context``       :func:`context_sawtooth`: context size per model call vs the threshold
``growth``        :func:`token_growth`: cumulative input/output tokens over time
``spend``         :func:`turn_spend`: input and output tokens per turn
``ratio``         :func:`compaction_ratio`: swept vs summary size per compaction
``composition``   :func:`context_composition`: what each call was sent, stacked by part
``window``        :func:`composition_at`: the parts of the context window at one call
================  =====================================================================

:func:`lab_recall_tokens` draws the compaction lab (``adfkit lab --plot``): recall of what was
needed again against tokens kept, one point per compactor.

:func:`save_all` writes every plot of one agent as PNG files.

What the plots promise, whatever the agent:

- Agent text (its name, model ids) is drawn as plain text: a ``$`` or a backslash in it is
  shown as written, never read as matplotlib mathtext or LaTeX.
- An unknown number stays unknown: a missing price, token split or summary size is said to
  be unknown in the labels, never drawn or summed as 0.
- Tick labels on token axes never repeat and never round a tick's value away (``1.25M``, not
  ``1.2M``); time axes read as dates and times of day (UTC).
- The legend lists only what is drawn in view. It sits outside the axes (right) on a figure
  with a layout engine, such as the ones these functions create; on a figure without one it
  goes where it covers the least data.
- A reference line far above the data (a threshold of 200,000 tokens over a context of
  10,000) is not allowed to flatten the data: the axes stop above the data and a note with
  an arrow says where the line is. A threshold that cannot be placed (missing, infinite,
  more than 2**53 tokens) is not drawn, and a note says so.
- A long life (more than :data:`MANY_EVENTS` compactions) is drawn one point per epoch by
  default (``view="auto"``); ``view="calls"`` draws every call.

Examples
--------
>>> import adfkit
>>> from adfkit import plots
>>> with adfkit.open_adf("sample_agents/clean.adf") as agent:
...     ax = plots.context_sawtooth(agent)
>>> ax.get_ylabel()
'tokens'
>>> plots.close(ax)
"""

from __future__ import annotations

from adfkit.plots._composition import COMPOSITION_PARTS, composition_at, context_composition
from adfkit.plots._composition import NOT_IN_FILE as NOT_IN_FILE
from adfkit.plots._growth import token_growth
from adfkit.plots._lab import lab_recall_tokens
from adfkit.plots._matplotlib import C_CACHE as C_CACHE
from adfkit.plots._matplotlib import C_COMPACTION as C_COMPACTION
from adfkit.plots._matplotlib import C_ESTIMATE as C_ESTIMATE
from adfkit.plots._matplotlib import C_INPUT as C_INPUT
from adfkit.plots._matplotlib import C_NOTE as C_NOTE
from adfkit.plots._matplotlib import C_OUTPUT as C_OUTPUT
from adfkit.plots._matplotlib import C_REPORTED as C_REPORTED
from adfkit.plots._matplotlib import C_SUMMARY as C_SUMMARY
from adfkit.plots._matplotlib import C_SWEPT as C_SWEPT
from adfkit.plots._matplotlib import C_THRESHOLD as C_THRESHOLD
from adfkit.plots._matplotlib import C_TOTAL_ONLY as C_TOTAL_ONLY
from adfkit.plots._matplotlib import ESTIMATE_COLS as ESTIMATE_COLS
from adfkit.plots._matplotlib import FIGSIZE as FIGSIZE
from adfkit.plots._matplotlib import MANY_EVENTS as MANY_EVENTS
from adfkit.plots._matplotlib import MAX_TOKENS as MAX_TOKENS
from adfkit.plots._matplotlib import REPORTED_COLS as REPORTED_COLS
from adfkit.plots._matplotlib import STYLE as STYLE
from adfkit.plots._matplotlib import THRESHOLD_CLIP as THRESHOLD_CLIP
from adfkit.plots._matplotlib import VIEWS as VIEWS
from adfkit.plots._matplotlib import X_CALL as X_CALL
from adfkit.plots._matplotlib import X_COMP as X_COMP
from adfkit.plots._matplotlib import X_EPOCH as X_EPOCH
from adfkit.plots._matplotlib import X_TURN as X_TURN
from adfkit.plots._matplotlib import Y_COMP as Y_COMP
from adfkit.plots._matplotlib import Y_TURN as Y_TURN
from adfkit.plots._matplotlib import AgentLike as AgentLike
from adfkit.plots._matplotlib import Data as Data
from adfkit.plots._matplotlib import close
from adfkit.plots._matplotlib import figure_of as figure_of
from adfkit.plots._ratio import SUMMARY_COLS as SUMMARY_COLS
from adfkit.plots._ratio import SWEPT_COLS as SWEPT_COLS
from adfkit.plots._ratio import compaction_ratio
from adfkit.plots._save import PLOTS, save_all
from adfkit.plots._sawtooth import context_sawtooth
from adfkit.plots._spend import MANY_TURNS as MANY_TURNS
from adfkit.plots._spend import turn_spend

__all__ = [
    "COMPOSITION_PARTS",
    "PLOTS",
    "close",
    "compaction_ratio",
    "composition_at",
    "context_composition",
    "context_sawtooth",
    "lab_recall_tokens",
    "save_all",
    "token_growth",
    "turn_spend",
]
