"""export / ``adfkit export``: Parquet folders that round-trip dtypes; never adf_identity."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest
from adfbuild import SECRET, build, result, row, text, use
from conftest import fingerprint, runtime_fixture, sample

import adfkit
from adfkit._facade.catalog import exported
from adfkit._facade.fleet import export, get_table
from adfkit.cli import main

CONFIG = {
    "name": "exp",
    "context": {"compact_threshold": 1000, "audit": {"loop": True}},
    "providers": [{"id": "anthropic", "api_key": "sk-live-123"}],
}


@pytest.fixture
def agent_file(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    return build(
        src / "exp.adf",
        loop=[
            row(4, "user", text("live message body")),
            row(5, "assistant", text("reply"), tokens={"input": 9, "output": 3}),
        ],
        audit=[
            {
                "source": "loop",
                "rows": [
                    row(1, "user", text("archived secret plan")),
                    row(
                        2,
                        "assistant",
                        [use("t1", "fs_read", {"path": "notes.md"})],
                        tokens={"input": 50, "output": 5},
                    ),
                    row(3, "user", [result("t1", "file contents here")]),
                ],
            }
        ],
        config=CONFIG,
        files={"mind.md": "# Mind\nprivate notes"},
    )


def _tables(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(path) as agent:
            out = {}
            for table in exported():
                out[table.name] = get_table(agent, table.name, **(table.export or {}))
            return out, agent.meta(), agent.config()


def _assert_round_trip(path, folder):
    frames, meta, _ = _tables(path)
    assert frames, "nothing to compare"
    for stem, df in frames.items():
        back = pd.read_parquet(folder / f"{stem}.parquet")
        for c in [c for c in back.columns if back[c].dtype == object]:
            # Documented: tuple cells (e.g. events.audit_ids) are Arrow lists, read as arrays.
            if df[c].map(lambda v: isinstance(v, tuple)).any():
                back[c] = back[c].map(lambda v: tuple(v.tolist()) if v is not None else v)
        if df.empty:  # Documented: Parquet keeps no categories for an empty column.
            for c in df.columns[df.dtypes == "category"]:
                assert back[c].dtype == "category" and back[c].dtype.ordered == df[c].dtype.ordered
                back[c] = back[c].astype(df[c].dtype)
        pd.testing.assert_frame_equal(back, df.reset_index(drop=True), check_exact=True)
    assert json.loads((folder / "meta.json").read_text()) == meta


def test_round_trip_hand_built(agent_file, tmp_path):
    """Every table read back with pandas equals the frame, dtypes included."""
    before = fingerprint(agent_file.parent)
    written, errors = export(agent_file, tmp_path / "out", progress=False)
    assert errors.empty
    assert fingerprint(agent_file.parent) == before  # nothing written or created beside it
    folder = tmp_path / "out" / "exp"
    _assert_round_trip(agent_file, folder)
    h = pd.read_parquet(folder / "history.parquet")
    assert h["seq"].tolist() == [1, 2, 3, 4, 5]
    assert str(h["created_at"].dtype) == "datetime64[ms, UTC]"
    assert h["tokens_input"].dtype == "Int64" and h["kind"].dtype == "category"
    assert set(written["table"]) >= {"history", "loop", "audit", "meta", "config", "info"}
    assert (written.loc[written["table"] == "history", "rows"] == 5).all()


@pytest.mark.parametrize("name", ["long-runner", "messenger", "legacy-v27"])
def test_round_trip_sample_agents(name, tmp_path):
    """Sample agents (inbox/outbox/file audit rows, older layout) round-trip too."""
    p = sample(name)
    written, errors = export(p, tmp_path, progress=False)
    assert errors.empty, errors.to_dict("records")
    _assert_round_trip(p, tmp_path / name)


def test_round_trip_runtime_fixture(tmp_path):
    """A real runtime file."""
    p = runtime_fixture("audited-messenger")
    _, errors = export(p, tmp_path, progress=False)
    assert errors.empty
    _assert_round_trip(p, tmp_path / "audited-messenger")


def test_never_exports_identity_and_redacts(agent_file, tmp_path):
    """No byte of adf_identity anywhere; --redact blanks bodies; config secrets redacted."""
    written, errors = export(agent_file, tmp_path / "r", redact=True, progress=False)
    assert errors.empty
    folder = tmp_path / "r" / "exp"
    for f in folder.iterdir():
        data = f.read_bytes()
        assert SECRET not in data, f
        assert b"sk-live-123" not in data, f
        assert b"archived secret plan" not in data, f
    h = pd.read_parquet(folder / "history.parquet")
    blank = "__redacted__"  # what the runtime writes in place of a secret (ADF_FORMAT.md §10)
    assert h["text"].tolist() == [blank] * 5 and h["content"].tolist() == [blank] * 5
    assert h["tokens_input"].dropna().tolist() == [50, 9]  # numbers are kept
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["providers"][0]["api_key"] != "sk-live-123"
    assert cfg["context"]["compact_threshold"] == 1000
    plain, _ = export(agent_file, tmp_path / "p", progress=False)
    hp = pd.read_parquet(tmp_path / "p" / "exp" / "history.parquet")
    assert hp["text"].iloc[0] == "archived secret plan"


def test_cli_export_and_broken_file(agent_file, tmp_path, capsys):
    """Exit 0 on success; a broken file is reported and the others exported (exit 1)."""
    out = tmp_path / "cli"
    assert main(["export", str(agent_file), "--to", str(out), "--quiet"]) == 0
    assert "exported 1 agent(s)" in capsys.readouterr().out
    broken = agent_file.parent / "broken.adf"
    broken.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)
    code = main(["export", str(agent_file.parent), "--to", str(tmp_path / "cli2"), "--quiet"])
    captured = capsys.readouterr()
    assert code == 1
    assert "broken.adf" in captured.err and (tmp_path / "cli2" / "exp" / "history.parquet").exists()
    assert not (tmp_path / "cli2" / "broken").exists()
    assert main(["export", str(broken), "--to", str(tmp_path / "cli3"), "--quiet"]) == 2


def test_name_clashes_get_separate_folders(agent_file, tmp_path):
    """Two inputs with the same file name go to exp/ and exp-2/."""
    other = tmp_path / "other"
    other.mkdir()
    copy = other / "exp.adf"
    copy.write_bytes(agent_file.read_bytes())
    written, errors = export([agent_file, copy], tmp_path / "o", progress=False)
    assert errors.empty
    assert (tmp_path / "o" / "exp").is_dir() and (tmp_path / "o" / "exp-2").is_dir()


def test_h64_export_never_writes_an_input_or_its_sidecar_names(tmp_path):
    """One rule: not onto an input nor a name SQLite takes beside it; anywhere else is fine,
    the input's own folder included."""
    f = build(tmp_path / "a.adf", loop=[row(1, "user", text("hi"))])
    for target in (f, tmp_path / "a.adf-wal", tmp_path / "a.adf-shm", tmp_path / "a.adf-journal"):
        with pytest.raises(adfkit.AdfError, match="refusing to write .*a.adf"):
            adfkit.export(str(f), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.adf"]
    written, errors = adfkit.export(str(f), tmp_path / "out")
    assert errors.empty and "history" in set(written["table"])
    assert (tmp_path / "out" / "a" / "history.parquet").is_file()


def test_h62_export_names_stay_inside_and_never_collide(tmp_path):
    """``...adf`` has the stem ``..``; two ``a.adf`` from different folders, and an ``a-2.adf``,
    each get their own folder inside ``--to``."""
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    loop = [row(1, "user", text("hi"))]
    paths = [
        build(tmp_path / "x" / "...adf", loop=loop),
        build(tmp_path / "x" / "a.adf", loop=loop),
        build(tmp_path / "y" / "a.adf", loop=loop),
        build(tmp_path / "y" / "a-2.adf", loop=loop),
    ]
    out = tmp_path / "out"
    written, errors = adfkit.export([str(p) for p in paths], out)
    assert errors.empty
    assert sorted(p.name for p in out.iterdir()) == ["a", "a-2", "a-3", "agent"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "x", "y"]  # nothing outside
    assert written.groupby("file").size().max() == 1  # no file written twice


def test_export_of_nothing_creates_nothing(tmp_path, capsys):
    from adfkit.cli import main

    readme = tmp_path / "README.md"
    readme.write_text("# not an agent")
    assert main(["export", str(readme), "--to", str(tmp_path / "e4")]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    assert got.err.splitlines() == [
        f"adfkit: error: {readme}: not an SQLite database (the file starts with text)"
    ] or got.err.startswith(f"adfkit: error: {readme}: ")
    assert len(got.err.splitlines()) == 1
    assert not (tmp_path / "e4").exists()
