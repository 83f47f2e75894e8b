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

#: Columns of :func:`usage_days` (after the ``agent`` and ``agent_path`` that fleets add).
USAGE_DAYS: dict[str, str] = {
    "day": "string",
    "calls": "Int64",
    "input": "Int64",
    "output": "Int64",
    "cache_write": "Int64",
    "cache_read": "Int64",
    "cost_usd": "float64",
    "compactions": "Int64",
    "microcompactions": "Int64",
    "max_context": "Int64",
    "first_at": "string",
    "last_at": "string",
}

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


def _compaction_days(agent: AgentFile) -> pd.DataFrame:
    """``day``, ``event`` of each compaction (``microcompaction`` and ``clear`` apart), from
    :meth:`AgentFile.events` (what ``info()`` counts), without the compactions analysis: dated
    by the row where it starts (the row before its summary), or by its summary when the file
    no longer holds that row (rows discarded without audit)."""
    ev = agent.events()
    h = agent.history()
    when = pd.Series(h["created_at"].to_numpy(), index=h["seq"].to_numpy())
    when = when[~when.index.duplicated()]

    def at_row(col: str) -> pd.Series:
        return pd.Series(when.reindex(ev[col].to_numpy()).to_numpy(), dtype="datetime64[ms, UTC]")

    at = at_row("boundary_seq").fillna(at_row("summary_seq"))
    event = ev["event"]
    day = at.dt.strftime("%Y-%m-%d").astype("string").fillna("unknown")
    return pd.DataFrame({"day": day.to_numpy(), "event": event.astype("string").to_numpy()})


def usage_days(agent: AgentFile, *, prices: Any = None) -> pd.DataFrame:
    """Usage of ``agent`` (with its subagents) per UTC day: the columns of :data:`USAGE_DAYS`."""
    calls = _calls(agent, prices)
    comp = _compaction_days(agent)
    cday = calls["day"].to_numpy(dtype=object)
    eday = comp["day"].to_numpy(dtype=object)
    event = comp["event"].to_numpy(dtype=object)
    days = sorted(set(cday.tolist()) | set(eday.tolist()))
    # numpy on each day's calls (a pandas group per day cost more than the sums)
    sums = {k: calls[k].to_numpy(dtype="int64") for k in _SUMS}
    cost = calls["cost_usd"].to_numpy(dtype="float64")
    ctx_na = calls["context"].isna().to_numpy(dtype=bool)
    ctx = calls["context"].to_numpy(dtype="int64", na_value=0)
    at = calls["at"]
    at_na = at.isna().to_numpy(dtype=bool)
    at_ms = at.to_numpy(dtype="datetime64[ms]").astype("int64")
    rows = []
    for day in days:
        on = cday == day
        n = int(on.sum())
        ev = event[eday == day]
        known = np.flatnonzero(on & ~ctx_na)
        dated = np.flatnonzero(on & ~at_na)
        rows.append(
            {
                "day": day,
                "calls": n,
                **{k: int(v[on].sum()) for k, v in sums.items()},
                "cost_usd": _cost_of(cost[on]) if n else 0.0,
                "compactions": int((ev == "compaction").sum()),
                "microcompactions": int((ev == "microcompaction").sum()),
                "max_context": int(ctx[known].max()) if len(known) else None,
                "first_at": _iso(at.iloc[dated[at_ms[dated].argmin()]]) if len(dated) else None,
                "last_at": _iso(at.iloc[dated[at_ms[dated].argmax()]]) if len(dated) else None,
            }
        )
    # typed column by column (an astype of the whole object frame costs more than the rest)
    return pd.DataFrame(
        {
            c: (
                np.array([r[c] for r in rows], dtype="float64")
                if t == "float64"
                else pd.array([r[c] for r in rows], dtype=t)
            )
            for c, t in USAGE_DAYS.items()
        }
    )


def _cost_of(costs: np.ndarray) -> float:
    """The sum, or NaN when any call is unpriced (unknown stays unknown)."""
    return float("nan") if np.isnan(costs).any() else float(costs.sum())


def _iso(ts: Any) -> str | None:
    return None if pd.isna(ts) else pd.Timestamp(ts).isoformat()
