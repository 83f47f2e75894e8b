"""The one list of tables: each table's name, grain, columns and how to build it from an
open agent. ``load_fleet``, ``export``, the index (``adfkit index --table``), the schema test
and the docs' table of grains iterate it; ``AgentFile`` keeps an explicit method per table
(for ``help()``, IDEs and mypy), and a table that is a method is built by calling it.

Adding a table is one entry here (and its method, or a builder): :func:`register_table` adds
one at run time.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from adfkit import schema
from adfkit._facade.usage.days import USAGE_DAYS

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._facade.agent import AgentFile

Builder = Callable[..., "pd.DataFrame"]


@dataclass(frozen=True)
class Table:
    """One table. ``build(agent, **kwargs)`` gives the frame; ``export`` holds the keyword
    arguments ``export()`` and the index build it with, or None for a table that needs an
    argument (``context_at(seq)``), which they leave out; ``columns`` the schema (None where
    the columns are the caller's); ``doc`` the object whose docstring lists the columns."""

    name: str
    grain: str
    columns: Mapping[str, str] | None
    build: Builder
    export: Mapping[str, Any] | None = field(default_factory=dict)
    doc: Any = None

    def takes(self, parameter: str) -> bool:
        """Whether the table takes the keyword argument ``parameter`` (``prices``...): its
        builder names it, or the method a builder calls does."""
        return any(
            parameter in inspect.signature(f).parameters
            for f in (self.build, self.doc)
            if f is not None and callable(f) and not isinstance(f, type)
        )


def method(name: str) -> Builder:
    """The builder of a table that is an ``AgentFile`` method of the same name."""

    def build(agent: AgentFile, **kwargs: Any) -> pd.DataFrame:
        frame: pd.DataFrame = getattr(agent, name)(**kwargs)
        return frame

    build.__name__ = name
    return build


#: One observation per open agent for the five tables made from it (export writes them all).
_OBSERVED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _observation(attr: str) -> Builder:
    def build(agent: AgentFile, **kwargs: Any) -> pd.DataFrame:
        from adfkit._facade.agent import observe

        if kwargs:
            observed = observe(agent, **kwargs)
        elif agent in _OBSERVED:
            observed = _OBSERVED[agent]
        else:
            observed = _OBSERVED[agent] = observe(agent)
        frame: pd.DataFrame = getattr(observed, attr)
        return frame

    build.__name__ = f"observe_{attr}"
    return build


def _usage_days(agent: AgentFile, *, prices: Any = None) -> pd.DataFrame:
    from adfkit._facade.usage.frames import usage_days

    return usage_days(agent, prices=prices)


def _usage(agent: AgentFile, *, prices: Any = None) -> pd.DataFrame:
    """A fleet's, an index's and an export's ``usage``: the agent's calls and its subagents'
    (the rule of ``adfkit usage``)."""
    from adfkit._facade.usage.frames import usage_with_subagents

    return usage_with_subagents(agent, prices=prices)


def _compaction_dataset(agent: AgentFile, *, prices: Any = None) -> pd.DataFrame:
    """The compactions dataset's records of one agent (redacted)."""
    from adfkit._analysis.lab import compaction_records

    return compaction_records(agent.source, prices=prices)


#: ``usage`` as fleets read it: ``AgentFile.usage``'s columns with ``subagent`` after ``seq``.
_FLEET_USAGE = {"seq": "Int64", "subagent": "string", **schema.USAGE}


#: (name, grain, columns, export keyword arguments or None) of the tables that are
#: ``AgentFile`` methods, in the order they are exported.
_METHODS: tuple[tuple[str, str, Mapping[str, str] | None, Mapping[str, Any] | None], ...] = (
    ("history", "one row per seq over the agent's lifetime", schema.HISTORY, {}),
    ("loop", "one row per row of the live context, in position order", schema.LOOP, {}),
    ("events", "one row per compaction or clear found in the history", schema.EVENTS, {}),
    ("history_gaps", "one row per seq range lost without audit", schema.GAPS, {}),
    ("audit", "one row per audit archive (metadata only)", schema.AUDIT, {}),
    ("blocks", "one row per content block of the history", schema.BLOCKS, {"history": True}),
    (
        "tool_calls",
        "one row per tool use, joined to its result",
        schema.TOOL_CALLS,
        {"history": True},
    ),
    ("branches", "one row per row of an abandoned branch", schema.BRANCHES, {}),
    ("calls", "one row per model call a transcript records apart from its rows", schema.CALLS, {}),
    ("inbox", "one row per inbox message", schema.INBOX, {}),
    ("outbox", "one row per outbox message", schema.OUTBOX, {}),
    ("files", "one row per file the agent keeps", schema.FILES, {}),
    ("logs", "one row per log line", schema.LOGS, {}),
    ("tasks", "one row per task", schema.TASKS, {}),
    ("timers", "one row per timer", schema.TIMERS, {}),
    (
        "compactions",
        "one row per compaction or clear: what it swept, sizes, recall",
        schema.COMPACTIONS,
        {},
    ),
    (
        "compaction_audit",
        "one row per compaction: why it fired there, findings (early, summary_grew...)",
        schema.COMPACTION_AUDIT,
        {},
    ),
    (
        "missed_compactions",
        "one row per run of calls past the threshold with no compaction",
        schema.MISSED_COMPACTIONS,
        {},
    ),
    (
        "compaction_lab",
        "one row per compaction and compactor: what another compactor keeps, tokens, cost",
        schema.COMPACTION_LAB,
        {},
    ),
    (
        "refetches",
        "one row per call after a compaction that fetches again what it swept",
        schema.REFETCHES,
        {},
    ),
    (
        "summary_recall",
        "one row per item a compaction swept: does its summary name it",
        schema.SUMMARY_RECALL,
        None,
    ),
    (
        "replay",
        "one row per model call: the context window, estimate against report",
        schema.REPLAY,
        {},
    ),
    ("context_at", "one row per row the model saw at one call", None, None),
    (
        "composition",
        "one row per model call: estimated tokens of each part of the window",
        schema.COMPOSITION,
        {},
    ),
    ("usage", "one row per model call: tokens, cache reads and writes, cost", schema.USAGE, {}),
    (
        "context_blocks",
        "one row per system prompt or dynamic instruction version",
        schema.CONTEXT_BLOCKS,
        {},
    ),
    ("config_changes", "one row per settings change over the life", schema.CONFIG_CHANGES, {}),
    ("mind_history", "one row per version of a mind file", schema.MIND_HISTORY, {}),
    (
        "integrity",
        "one row per finding: what history is missing or inconsistent",
        schema.INTEGRITY,
        {},
    ),
    (
        "compaction_ledger",
        "one row per item a compaction swept: kept, reworded or lost; needed again",
        schema.COMPACTION_LEDGER,
        {},
    ),
    (
        "forgetting",
        "one row per compaction: loss rate by kind, what forgetting cost",
        schema.FORGETTING,
        {},
    ),
    (
        "item_survival",
        "one row per swept item and later compaction it met",
        schema.ITEM_SURVIVAL,
        {},
    ),
    (
        "survival_curve",
        "one row per number of compactions: the share of items surviving",
        schema.SURVIVAL_CURVE,
        {},
    ),
    (
        "compaction_cache",
        "one row per compaction: cache read, written and invalidated around it",
        schema.COMPACTION_CACHE,
        {},
    ),
    (
        "recovery",
        "one row per compaction: actions to the first productive one",
        schema.RECOVERY,
        {},
    ),
)

#: The tables that are not ``AgentFile`` methods: (name, grain, columns, builder).
_DERIVED: tuple[tuple[str, str, Mapping[str, str] | None, Builder], ...] = (
    ("turns", "one row per turn (observe)", schema.OBSERVE_TURNS, _observation("turns")),
    (
        "observe_calls",
        "one row per model call (observe)",
        schema.OBSERVE_CALLS,
        _observation("calls"),
    ),
    (
        "signatures",
        "one row per action signature (observe)",
        schema.OBSERVE_SIGNATURES,
        _observation("signatures"),
    ),
    (
        "streaks",
        "one row per streak of null turns or repeats (observe)",
        schema.OBSERVE_STREAKS,
        _observation("streaks"),
    ),
    (
        "anomalies",
        "one row per anomaly that tripped (observe)",
        schema.OBSERVE_ANOMALIES,
        _observation("anomalies"),
    ),
    (
        "usage_days",
        "one row per UTC day: tokens, cost, compactions (with subagents)",
        USAGE_DAYS,
        _usage_days,
    ),
)


def _build() -> dict[str, Table]:
    from adfkit._analysis.observe import Observation
    from adfkit._facade.agent import AgentFile
    from adfkit._facade.usage.frames import usage_days, usage_with_subagents

    _DOCS.update(
        dict.fromkeys(["turns", "observe_calls", "signatures", "streaks", "anomalies"], Observation)
    )
    _DOCS["usage_days"] = usage_days

    out = {
        name: Table(name, grain, cols, method(name), kw, getattr(AgentFile, name))
        for name, grain, cols, kw in _METHODS
    }
    for name, grain, cols, build in _DERIVED:
        out[name] = Table(name, grain, cols, build, {}, _DOCS.get(name, build))
    from adfkit._analysis.lab import compaction_records

    # bodies of messages (redacted): read by export_compaction_dataset, not by export()
    out["compaction_dataset"] = Table(
        "compaction_dataset",
        "one row per compaction: the window before, summary, swept items (a dataset record)",
        schema.COMPACTION_DATASET,
        _compaction_dataset,
        None,
        compaction_records,
    )
    grain = out["usage"].grain + " (with the subagents' calls, a subagent column)"
    out["usage"] = Table("usage", grain, _FLEET_USAGE, _usage, {}, usage_with_subagents)
    return out


_CATALOG: dict[str, Table] = {}
#: The object whose docstring lists a derived table's columns.
_DOCS: dict[str, Any] = {}


def catalog() -> dict[str, Table]:
    """Every table by name, in export order (built on first use: it names ``AgentFile``)."""
    if not _CATALOG:
        _CATALOG.update(_build())
    return _CATALOG


def register_table(table: Table) -> None:
    """Add a table (or replace one of the same name): ``load_fleet``, ``export``, the index
    and the docs' list of grains take it from then on, in this process."""
    catalog()[table.name] = table


def unregister_table(name: str) -> None:
    """Remove a table :func:`register_table` added."""
    catalog().pop(name, None)


def exported() -> Iterator[Table]:
    """The tables ``export()`` writes: every one that takes no argument."""
    return (t for t in catalog().values() if t.export is not None)


def grains_markdown() -> str:
    """The catalog as a Markdown table (the docs' page of grains)."""
    lines = ["| table | grain | exported |", "|---|---|---|"]
    for t in catalog().values():
        lines.append(f"| `{t.name}` | {t.grain} | {'yes' if t.export is not None else 'no'} |")
    return "\n".join(lines)
