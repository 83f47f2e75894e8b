"""One schema module: every table's columns and dtypes in ``adfkit.schema``; each table's
docstring names every column, and each table method returns exactly those columns."""

from __future__ import annotations

import re
import warnings

import pytest
from conftest import ROOT, sample

import adfkit
from adfkit import schema

#: Where each table is documented (the object whose docstring lists its columns), the schema
#: entry, and how to get the frame from an open agent.
TABLES = {
    "loop": (adfkit.AgentFile.loop, schema.LOOP, lambda a: a.loop()),
    "blocks": (adfkit.AgentFile.blocks, schema.BLOCKS, lambda a: a.blocks()),
    "tool_calls": (adfkit.AgentFile.tool_calls, schema.TOOL_CALLS, lambda a: a.tool_calls()),
    "audit": (adfkit.AgentFile.audit, schema.AUDIT, lambda a: a.audit()),
    "events": (adfkit.AgentFile.events, schema.EVENTS, lambda a: a.events()),
    "history_gaps": (adfkit.AgentFile.history_gaps, schema.GAPS, lambda a: a.history_gaps()),
    "inbox": (adfkit.AgentFile.inbox, schema.INBOX, lambda a: a.inbox()),
    "outbox": (adfkit.AgentFile.outbox, schema.OUTBOX, lambda a: a.outbox()),
    "files": (adfkit.AgentFile.files, schema.FILES, lambda a: a.files()),
    "logs": (adfkit.AgentFile.logs, schema.LOGS, lambda a: a.logs()),
    "tasks": (adfkit.AgentFile.tasks, schema.TASKS, lambda a: a.tasks()),
    "timers": (adfkit.AgentFile.timers, schema.TIMERS, lambda a: a.timers()),
    "replay": (adfkit.AgentFile.replay, schema.REPLAY, lambda a: a.replay()),
    "compactions": (adfkit.AgentFile.compactions, schema.COMPACTIONS, lambda a: a.compactions()),
    "refetches": (adfkit.AgentFile.refetches, schema.REFETCHES, lambda a: a.refetches()),
    "summary_recall": (
        adfkit.AgentFile.summary_recall,
        schema.SUMMARY_RECALL,
        lambda a: a.summary_recall(int(a.compactions()["recall"].first_valid_index())),
    ),
    "usage": (adfkit.AgentFile.usage, schema.USAGE, lambda a: a.usage()),
    "context_blocks": (
        adfkit.AgentFile.context_blocks,
        schema.CONTEXT_BLOCKS,
        lambda a: a.context_blocks(),
    ),
    "composition": (adfkit.AgentFile.composition, schema.COMPOSITION, lambda a: a.composition()),
    "config_changes": (
        adfkit.AgentFile.config_changes,
        schema.CONFIG_CHANGES,
        lambda a: a.config_changes(),
    ),
    "mind_history": (
        adfkit.AgentFile.mind_history,
        schema.MIND_HISTORY,
        lambda a: a.mind_history(),
    ),
    "integrity": (adfkit.AgentFile.integrity, schema.INTEGRITY, lambda a: a.integrity()),
    "compaction_ledger": (
        adfkit.AgentFile.compaction_ledger,
        schema.COMPACTION_LEDGER,
        lambda a: a.compaction_ledger(),
    ),
    "forgetting": (adfkit.AgentFile.forgetting, schema.FORGETTING, lambda a: a.forgetting()),
    "item_survival": (
        adfkit.AgentFile.item_survival,
        schema.ITEM_SURVIVAL,
        lambda a: a.item_survival(),
    ),
    "survival_curve": (
        adfkit.AgentFile.survival_curve,
        schema.SURVIVAL_CURVE,
        lambda a: a.survival_curve(),
    ),
    "compaction_cache": (
        adfkit.AgentFile.compaction_cache,
        schema.COMPACTION_CACHE,
        lambda a: a.compaction_cache(),
    ),
    "recovery": (adfkit.AgentFile.recovery, schema.RECOVERY, lambda a: a.recovery()),
}


def _named(doc: str) -> set[str]:
    """Column names a docstring mentions as ``name`` (also inside ``a``/``b`` lists)."""
    return set(re.findall(r"``([A-Za-z_][A-Za-z0-9_<>]*)``", doc))


@pytest.mark.parametrize("table", sorted(TABLES))
def test_docstring_names_every_column(table):
    owner, columns, _ = TABLES[table]
    doc = owner.__doc__ or ""
    named = _named(doc)
    # ``recall_<kind>`` (``loss_rate_<kind>``) stands for one column per kind.
    missing = [
        c
        for c in columns
        if c not in named
        and not any(n.endswith("_<kind>") and c.startswith(n[: -len("<kind>")]) for n in named)
    ]
    assert missing == [], f"{table}: the docstring does not name {missing}"


@pytest.mark.parametrize("table", sorted(TABLES))
def test_frames_have_exactly_the_schema(table):
    _, columns, get = TABLES[table]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(sample("mind-keeper")) as agent:
            df = get(agent)
    assert list(df.columns) == list(columns)
    got = {c: str(t) for c, t in df.dtypes.items()}
    want = {c: ("category" if t == "category" else t) for c, t in columns.items()}
    assert got == want


def test_history_is_loop_plus_two_columns():
    assert list(schema.HISTORY) == [*schema.LOOP, "epoch", "copies"]
    doc = adfkit.AgentFile.history.__doc__ or ""
    assert {"epoch", "copies"} <= _named(doc) and "loop" in doc


#: The session listings: the function (its docstring lists the columns), the schema entry and
#: a folder with sessions.
LISTINGS = {
    "claude_code": (
        adfkit.list_claude_code_sessions,
        schema.CLAUDE_CODE_SESSIONS,
        "sample_agents/claude-code/projects",
    ),
    "codex": (adfkit.list_codex_sessions, schema.CODEX_SESSIONS, "sample_agents/codex"),
}


@pytest.mark.parametrize("kind", sorted(LISTINGS))
def test_session_listings_have_exactly_the_schema_even_when_empty(kind, tmp_path):
    """Found sessions or none, the same columns and dtypes (an empty listing had seconds, not
    nanoseconds, and object text before the listings were built from the schema)."""
    fn, columns, folder = LISTINGS[kind]
    want = {c: str(t) for c, t in columns.items()}
    assert not (set(columns) - _named(fn.__doc__ or ""))
    for df, n in ((fn(ROOT / folder), 2), (fn(tmp_path), 0)):
        assert len(df) == n and list(df.columns) == list(columns)
        assert {c: str(t) for c, t in df.dtypes.items()} == want
