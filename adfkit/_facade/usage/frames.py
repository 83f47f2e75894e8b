"""Usage per agent and day: the fleet table behind ``adfkit usage`` (``usage_days``).

One row per day an agent made calls or compacted, with its subagents' calls counted in (a Claude
Code session's ``subagents/agent-*.jsonl`` and in-file sidechains, as ccusage counts them).
Token columns follow ccusage: ``input`` is the uncached part (``tokens_input`` less both cache
parts). Unknown stays unknown: a day with an unpriced call has cost NA.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from adfkit._facade.agent import AgentFile
from adfkit._facade.usage.days import USAGE_DAYS as _USAGE_DAYS
from adfkit._facade.usage.days import Call, day_rows, days_frame, time_zone, uncached

#: Columns of :func:`usage_days` (after the ``agent`` and ``agent_path`` that fleets add).
USAGE_DAYS = _USAGE_DAYS


def usage_with_subagents(agent: AgentFile, **kwargs: Any) -> pd.DataFrame:
    """The calls that count for ``agent`` (THE rule of ``adfkit usage``, ``usage_days`` and a
    fleet's or index's ``usage`` table): its :meth:`AgentFile.usage` and each subagent's (a
    Claude Code session's subagent files, in-file sidechains and Task subagents seen only in
    progress records), in that order, with a column ``subagent`` (the subagent's name, NA
    for the agent's own calls) after ``seq``."""
    frames = []
    for sub in [None, *agent.subagents()]:
        u = (agent if sub is None else sub).usage(**kwargs)
        name = None if sub is None else sub.name
        u.insert(min(1, len(u.columns)), "subagent", pd.array([name] * len(u), dtype="string"))
        frames.append(u)
    nonempty = [f for f in frames if len(f)]
    if len(nonempty) > 1:
        return pd.concat(nonempty, ignore_index=True)
    return nonempty[0] if nonempty else frames[0]


def _calls(agent: AgentFile, prices: Any) -> list[Call]:
    """Every call of the agent and of its subagents (compaction calls left out)."""
    u = usage_with_subagents(agent, prices=prices)
    if not len(u):
        return []
    u = u[u["call_kind"].astype("string") != "compaction"] if "call_kind" in u else u
    at = u["created_at"]
    ms = at.to_numpy(dtype="datetime64[ms]").astype("int64").tolist()
    cols = {
        k: [None if pd.isna(v) else int(v) for v in u[c].astype(object).tolist()]
        for k, c in (
            ("in", "tokens_input"),
            ("out", "tokens_output"),
            ("cw", "tokens_cache_write"),
            ("cr", "tokens_cache_read"),
        )
    }
    models = u["model"].astype(object).tolist() if "model" in u else [None] * len(u)
    return [
        Call(
            None if na else m,
            uncached(tin, cr, cw),
            out,
            cw,
            cr,
            cost,
            tin,
            None if model is None or pd.isna(model) else str(model),
        )
        for m, na, tin, out, cw, cr, cost, model in zip(
            ms,
            at.isna().tolist(),
            cols["in"],
            cols["out"],
            cols["cw"],
            cols["cr"],
            u["cost_usd"].to_numpy(dtype="float64", na_value=np.nan).tolist(),
            models,
            strict=True,
        )
    ]


def _compaction_times(agent: AgentFile) -> list[tuple[str, int | None]]:
    """``(event, ms)`` of each event of :meth:`AgentFile.events` (what ``info()`` counts:
    ``microcompaction`` and ``clear`` apart), without the compactions analysis: dated by the
    row where it starts (the row before its summary), or by its summary when the file no
    longer holds that row (rows discarded without audit); None when neither is dated."""
    ev = agent.events()
    h = agent.history()
    when = pd.Series(h["created_at"].to_numpy(), index=h["seq"].to_numpy())
    when = when[~when.index.duplicated()]

    def at_row(col: str) -> pd.Series:
        return pd.Series(when.reindex(ev[col].to_numpy()).to_numpy(), dtype="datetime64[ms, UTC]")

    at = at_row("boundary_seq").fillna(at_row("summary_seq"))
    ms = at.to_numpy(dtype="datetime64[ms]").astype("int64").tolist()
    na = at.isna().tolist()
    return [
        (str(e), None if n else int(m))
        for e, m, n in zip(ev["event"].astype(str).tolist(), ms, na, strict=True)
    ]


def usage_days(agent: AgentFile, *, prices: Any = None, tz: str | None = None) -> pd.DataFrame:
    """Usage of ``agent`` (with its subagents) per day, in the time zone ``tz`` (None: UTC):
    the columns of :data:`USAGE_DAYS` (the rule: :func:`adfkit._facade.usage.days.day_rows`):
    ``day`` (string), ``calls``, ``input``, ``output``, ``cache_write``, ``cache_read``
    (Int64: NA when no call of the day recorded it), ``cost_usd`` (float64, NaN when a model
    has no price), ``cost_known_usd`` (float64: the priced calls' cost), ``unpriced_calls``
    (Int64), ``models`` (string), ``compactions``, ``microcompactions``, ``max_context``
    (Int64), ``first_at``, ``last_at`` (string: ISO times)."""
    rows = day_rows(_calls(agent, prices), _compaction_times(agent), time_zone(tz))
    return days_frame(rows, fleet=False)
