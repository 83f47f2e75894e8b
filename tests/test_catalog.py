"""The one list of tables: export, load_fleet, the index and the docs take every table from
the catalog, so a table added there (here: a toy one, inside the test) reaches all of them."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from conftest import sample

import adfkit
from adfkit._facade import catalog as cat
from adfkit._facade.fleet import load_fleet


def _toy(agent, **kwargs):
    return pd.DataFrame({"rows": pd.array([len(agent.loop())], dtype="Int64")})


@pytest.fixture
def toy():
    cat.register_table(
        cat.Table("toy", "one row per agent: its loop's length", {"rows": "Int64"}, _toy)
    )
    yield
    cat.unregister_table("toy")


def test_export_writes_every_table_that_takes_no_argument(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written, errors = adfkit.export(sample("long-runner"), tmp_path, progress=False)
    assert errors.empty, errors.to_dict("records")
    want = {t.name for t in cat.exported()}
    assert {"replay", "integrity", "forgetting", "compaction_ledger", "usage_days"} <= want
    assert want <= set(written["table"])
    for name in want:
        assert (tmp_path / "long-runner" / f"{name}.parquet").is_file(), name


def test_a_table_added_to_the_catalog_reaches_every_surface(toy, tmp_path):
    path = sample("long-runner")
    with adfkit.open(path) as agent:
        rows = len(agent.loop())
    df, errors = load_fleet([path], "toy", engine="serial", progress=False)
    assert errors.empty and df["rows"].tolist() == [rows]
    written, errors = adfkit.export(path, tmp_path / "out", progress=False)
    assert "toy" in set(written["table"])
    back = pd.read_parquet(tmp_path / "out" / "long-runner" / "toy.parquet")
    assert back["rows"].tolist() == [rows]
    indexed, errors = load_fleet(
        [path], "toy", engine="serial", progress=False, cache=tmp_path / "index"
    )
    assert errors.empty and list((tmp_path / "index" / "toy").glob("*.parquet"))
    assert "| `toy` | one row per agent: its loop's length | yes |" in cat.grains_markdown()


def test_an_unknown_table_names_the_catalog():
    with pytest.raises(ValueError, match="usage_days"):
        load_fleet([sample("long-runner")], "no_such_table", engine="serial", progress=False)
