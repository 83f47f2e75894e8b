"""One schema module: every table's columns and dtypes in ``adfkit.schema``; each table's
docstring names every column, and each table method returns exactly those columns."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, sample

import adfkit
from adfkit import schema
from adfkit._facade.catalog import catalog

#: Tables that take an argument: how to get one frame of each from an open agent.
ARGUMENTS = {
    "summary_recall": lambda a: a.summary_recall(
        int(a.compactions()["recall"].first_valid_index())
    ),
    # not exported (message bodies): read by export_compaction_dataset
    "compaction_dataset": lambda a: catalog()["compaction_dataset"].build(a),
}


def _getter(table):
    if table.name in ARGUMENTS:
        return ARGUMENTS[table.name]
    return lambda a: table.build(a, **(table.export or {}))


#: Every table of the catalog with a schema: where it is documented (the object whose
#: docstring lists its columns), the schema entry, and how to get the frame.
TABLES = {
    t.name: (t.doc, t.columns, _getter(t))
    for t in catalog().values()
    if t.columns is not None and (t.export is not None or t.name in ARGUMENTS)
}


def test_every_table_with_an_argument_is_known_here():
    """A new table that takes an argument gets a getter above (or it would go untested)."""
    needing = {t.name for t in catalog().values() if t.export is None and t.columns is not None}
    assert needing == set(ARGUMENTS)


def _named(doc: str) -> set[str]:
    """Column names a docstring mentions as ``name`` (also inside ``a``/``b`` lists)."""
    return set(re.findall(r"``([A-Za-z_][A-Za-z0-9_<>]*)``", doc))


@pytest.mark.parametrize("table", sorted(TABLES))
def test_docstring_names_every_column(table):
    owner, columns, _ = TABLES[table]
    doc = owner.__doc__ or ""
    named = _named(doc)
    if ":meth:`loop`" in doc:  # "Columns: those of loop(), then ..."
        named |= set(schema.LOOP)
    if ":meth:`AgentFile.usage`" in doc:  # a fleet's usage: AgentFile.usage's, then ...
        named |= set(schema.USAGE)
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


# --- schema.frame builds text, number and time columns directly ----------------------------


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        ("string", ["a", None, "é", float("nan"), pd.NA, ""]),
        ("string", ["a", 3, None]),  # not all text: through astype, as before
        ("Float64", [1.5, 2, None, float("nan"), np.float64(0.25), np.int64(7), pd.NA]),
        ("Float64", [True, 1.5, None]),  # a bool: through astype, as before
        ("Float64", [np.float32(0.1), None]),
        ("string", []),
        ("Float64", [None, None]),
        ("datetime64[ms, UTC]", [pd.Timestamp("2026-01-01 10:00:00.123456", tz="UTC"), None]),
        ("datetime64[ms, UTC]", [pd.Timestamp("2026-01-01 10:00", tz="Europe/Paris"), None]),
        ("datetime64[ms, UTC]", [pd.Timestamp("2026-01-01").as_unit("ms").tz_localize("UTC")]),
        ("datetime64[ms, UTC]", [pd.Timestamp("2500-01-01", tz="UTC").as_unit("ms"), None]),
        ("datetime64[ms, UTC]", [pd.Timestamp("2026-01-01 10:00"), pd.NaT]),  # naive: as before
        ("datetime64[ms, UTC]", [None, None]),
        ("Int64", [1, None, -(2**63), 2**63 - 1, 0]),
        ("Int64", [True, 2, 3.0, np.int64(4), None]),  # not all plain ints: as before
        ("Int64", []),
        ("category", ["loop", None, "a", float("nan"), "loop", "é"]),
        ("category", [str(i) for i in range(300)]),  # wider codes than int8
        ("category", [None, pd.NA]),  # no text: object categories, as before
        ("category", ["a", 3, None]),  # not all text: through astype, as before
        ("category", []),
        ("object", [(1, 2), None, (3, 4), [5], {"a": 1}]),  # cells: a plain array
        ("object", [None, None]),
        ("object", ["a", None]),  # text: a Series, not inferred as strings
        ("object", [pd.Timestamp("2026-01-01", tz="UTC"), (1,)]),  # a time: not inferred
    ],
)
def test_frame_columns_equal_the_astype_construction(dtype, values):
    """A column ``schema.frame`` builds straight from the values is the very array the
    general path (objects, then ``astype``; timestamps through ``to_datetime``) makes: values,
    dtype and array type."""
    got = schema.frame({"c": values}, {"c": dtype})["c"]
    if dtype == "Int64":
        want = pd.Series(pd.array([None if schema._na(x) else int(x) for x in values], "Int64"))
        assert (got.array._data == want.array._data).all()  # under the mask too
    elif dtype.startswith("datetime"):
        objs = [pd.NaT if schema._na(x) else x for x in values]
        want = pd.to_datetime(pd.Series(objs, dtype=object), utc=True).astype(dtype)
    else:
        objs = [None if schema._na(x) else x for x in values]
        want = pd.Series(objs, dtype=object).astype(dtype)
    pd.testing.assert_series_equal(got, want, check_names=False)
    assert type(got.array) is type(want.array)
