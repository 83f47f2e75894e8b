"""Usage per agent and UTC day: the fleet table behind ``adfkit usage`` (``usage_days``).

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
from adfkit._facade.usage_table import USAGE_DAYS as _USAGE_DAYS
from adfkit._facade.usage_table import day_rows, days_frame

#: Columns of :func:`usage_days` (after the ``agent`` and ``agent_path`` that fleets add).
USAGE_DAYS = _USAGE_DAYS

_SUMS = ("input", "output", "cache_write", "cache_read")


def _calls(agent: AgentFile, prices: Any) -> pd.DataFrame:
    """Every call of the agent and of its subagents: day, token parts, cost, context size."""
    frames = [u for a in [agent, *agent.subagents()] if len(u := a.usage(prices=prices))]
    if not frames:
        return pd.DataFrame(columns=["day", "at", *_SUMS, "cost_usd", "context"])
    u = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    u = u[u["call_kind"].astype("string") != "compaction"] if "call_kind" in u else u
    read = u["tokens_cache_read"].fillna(0).astype("int64")
    write = u["tokens_cache_write"].fillna(0).astype("int64")
    tin = u["tokens_input"].fillna(0).astype("int64")
    at = u["created_at"]
    return pd.DataFrame(
        {
            "day": at.dt.strftime("%Y-%m-%d").astype("string").fillna("unknown"),
            "at": at,
            "input": tin - read - write,
            "output": u["tokens_output"].fillna(0).astype("int64"),
            "cache_write": write,
            "cache_read": read,
            "cost_usd": u["cost_usd"].to_numpy(dtype="float64", na_value=np.nan),
            "context": u["tokens_input"],
        }
    )


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


def usage_days(agent: AgentFile, *, prices: Any = None) -> pd.DataFrame:
    """Usage of ``agent`` (with its subagents) per UTC day: the columns of :data:`USAGE_DAYS`
    (the rule: :func:`adfkit._facade.usage_table.day_rows`): ``day`` (string, UTC),
    ``calls``, ``input``, ``output``, ``cache_write``, ``cache_read`` (Int64), ``cost_usd``
    (float64, NaN when a model has no price), ``compactions``, ``microcompactions``,
    ``max_context`` (Int64), ``first_at``, ``last_at`` (string: ISO times)."""
    calls = _calls(agent, prices)
    at = calls["at"]
    ms = at.to_numpy(dtype="datetime64[ms]").astype("int64").tolist()
    ctx = calls["context"]
    rows = day_rows(
        zip(
            [None if n else m for m, n in zip(ms, at.isna().tolist(), strict=True)],
            *(calls[k].to_numpy(dtype="int64").tolist() for k in _SUMS),
            calls["cost_usd"].to_numpy(dtype="float64").tolist(),
            [None if n else int(v) for v, n in zip(ctx.fillna(0), ctx.isna(), strict=True)],
            strict=True,
        ),
        _compaction_times(agent),
    )
    return days_frame(rows, fleet=False)
