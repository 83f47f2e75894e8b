"""Fleets at scale (issue 23): the Parquet index behind ``load_fleet(cache=...)`` and
``adfkit index``, the process engine's choice of serial for small fleets, and ``adfkit usage``
(its token columns equal ccusage 20's on the real Claude Code sessions)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from adfbuild import build, row, text, use
from conftest import SAMPLES, sample

import adfkit
import adfkit._facade.fleet as fleet_mod
from adfkit import load_fleet
from adfkit._base import digest, engines
from adfkit._base.errors import OutputPathError
from adfkit.cli import main

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "transcripts"
PROJECTS = FIXTURES / "claude-code" / "projects"


def _agents(tmp_path: Path, n: int) -> list[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        live = [
            row(1, "user", text(f"agent {i}")),
            row(
                2,
                "assistant",
                [use("t", "fs_read", {"p": "a"})],
                tokens={"input": 10 + i, "output": 3},
            ),
        ]
        paths.append(str(build(tmp_path / f"a{i}.adf", loop=live)))
    return paths


def test_second_run_reads_only_what_changed(tmp_path, monkeypatch):
    paths = _agents(tmp_path / "in", 3)
    cache = tmp_path / "index"
    first, err = load_fleet(paths, "usage", engine="serial", cache=cache)
    assert err.empty and sorted(first["tokens_output"].tolist()) == [3, 3, 3]
    parts = sorted((cache / "usage").glob("*.parquet"))
    assert len(parts) == 3
    manifest = json.loads((cache / "usage" / "_manifest.json").read_text())
    assert sorted(e["path"] for e in manifest.values()) == sorted(map(os.path.abspath, paths))

    opened: list[str] = []
    real = fleet_mod.load_one

    def counting(path, *a):
        opened.append(path)
        return real(path, *a)

    monkeypatch.setattr(fleet_mod, "load_one", counting)
    again, _ = load_fleet(paths, "usage", engine="serial", cache=cache)
    assert opened == []  # nothing read: every part fresh
    pd.testing.assert_frame_equal(first, again)

    # one file rewritten (other size and mtime): only it is read again
    live = [
        row(1, "user", text("x")),
        row(2, "assistant", [use("t", "f", {})], tokens={"input": 5, "output": 99}),
    ]
    os.unlink(paths[1])
    build(Path(paths[1]), loop=live)
    third, _ = load_fleet(paths, "usage", engine="serial", cache=cache)
    assert opened == [paths[1]]
    assert third["tokens_output"].tolist() == [3, 99, 3]


def test_a_file_changing_while_read_is_not_cached(tmp_path, monkeypatch):
    paths = _agents(tmp_path, 2)
    real = fleet_mod.load_one

    def touching(path, *a):
        out = real(path, *a)
        if path == paths[0]:
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        return out

    monkeypatch.setattr(fleet_mod, "load_one", touching)
    df, _ = load_fleet(paths, "usage", engine="serial", cache=tmp_path / "ix")
    assert len(df) == 2  # the result is still given
    manifest = json.loads((tmp_path / "ix" / "usage" / "_manifest.json").read_text())
    assert [e["path"] for e in manifest.values()] == [os.path.abspath(paths[1])]


def test_index_is_a_plain_parquet_dataset_and_never_an_input(tmp_path):
    paths = _agents(tmp_path, 2)
    load_fleet(paths, "usage", engine="serial", cache=tmp_path / "ix")
    import pyarrow.dataset as ds

    table = ds.dataset(tmp_path / "ix" / "usage", format="parquet").to_table()
    assert table.num_rows == 2 and {"agent", "agent_path", "tokens_input"} <= set(
        table.schema.names
    )
    with pytest.raises(OutputPathError):
        load_fleet(paths, "usage", engine="serial", cache=paths[0])


def test_version_change_invalidates(tmp_path, monkeypatch):
    paths = _agents(tmp_path, 1)
    load_fleet(paths, "usage", engine="serial", cache=tmp_path / "ix")
    monkeypatch.setattr("adfkit._facade.index._version", lambda: "999")
    opened = []
    real = fleet_mod.load_one
    monkeypatch.setattr(fleet_mod, "load_one", lambda p, *a: (opened.append(p), real(p, *a))[1])
    load_fleet(paths, "usage", engine="serial", cache=tmp_path / "ix")
    assert opened == paths


def test_code_change_invalidates(tmp_path, monkeypatch):
    """A part made by other code (another digest of adfkit's files, same version number) is
    made again."""
    paths = _agents(tmp_path, 1)
    load_fleet(paths, "usage", engine="serial", cache=tmp_path / "ix")
    opened = []
    real = fleet_mod.load_one
    monkeypatch.setattr(fleet_mod, "load_one", lambda p, *a: (opened.append(p), real(p, *a))[1])
    load_fleet(paths, "usage", engine="serial", cache=tmp_path / "ix")
    assert opened == []
    monkeypatch.setattr(digest, "code_digest", lambda: "0123456789abcdef")
    load_fleet(paths, "usage", engine="serial", cache=tmp_path / "ix")
    assert opened == paths


def test_code_digest_follows_code_and_data_only(tmp_path, monkeypatch):
    pkg = tmp_path / "adfkit"
    for rel, body in (
        ("__init__.py", "x = 1\n"),
        ("_sources/reader.py", "y = 2\n"),
        ("data/prices.json", "{}"),
        ("notes.txt", "not code"),
        ("__pycache__/reader.cpython-311.pyc", "bytecode"),
    ):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(body)
    monkeypatch.setattr(digest, "_HERE", str(pkg))
    assert digest.package_files() == ["__init__.py", "_sources/reader.py", "data/prices.json"]

    def fresh() -> str:
        digest.code_digest.cache_clear()
        return digest.code_digest()

    first = fresh()
    (pkg / "notes.txt").write_text("changed")
    (pkg / "__pycache__" / "reader.cpython-311.pyc").write_text("changed")
    assert fresh() == first
    (pkg / "_sources" / "reader.py").write_text("y = 3\n")
    second = fresh()
    assert second != first
    (pkg / "data" / "prices.json").write_text('{"m": 1}')
    assert fresh() not in (first, second)
    digest.code_digest.cache_clear()


def test_small_fleets_run_serially(tmp_path, monkeypatch):
    paths = _agents(tmp_path, 3)
    assert fleet_mod.small_fleet(paths)
    assert not fleet_mod.small_fleet(paths + [str(tmp_path / "missing.adf")])
    monkeypatch.setattr(fleet_mod, "SMALL_FLEET_BYTES", 1)
    assert not fleet_mod.small_fleet(paths)
    assert fleet_mod.small_fleet(paths[:1])

    def no_pool(*a, **k):
        raise AssertionError("a pool for a small fleet")

    monkeypatch.setattr(fleet_mod, "SMALL_FLEET_BYTES", 48 << 20)
    monkeypatch.setattr(engines, "_processes", no_pool)
    df, err = load_fleet(paths, "usage", engine="processes")
    assert err.empty and len(df) == 3


def test_usage_command_on_a_sample_agent(capsys):
    path = str(sample("long-runner"))
    with adfkit_open(path) as agent:
        u = agent.usage()
        n_comp = int((agent.compactions()["event"] != "microcompaction").sum())
    assert main(["usage", path, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1
    r = rows[0]
    assert r["calls"] == len(u) - int((u["call_kind"] == "compaction").sum())
    assert r["output"] == int(u.loc[u["call_kind"] != "compaction", "tokens_output"].sum())
    assert r["cache_read"] + r["cache_write"] + r["input"] <= int(u["tokens_input"].sum())
    assert r["compactions"] == n_comp and n_comp > 0
    assert main(["usage", path, "--by", "day"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["day", "calls"] and out[-1].startswith("total")


def adfkit_open(path):
    import adfkit

    return adfkit.open(path)


def test_usage_text_escapes_control_characters(tmp_path, capsys):
    loop = [row(1, "assistant", [use("t", "f", {})], tokens={"input": 1, "output": 1})]
    p = build(tmp_path / "evil\x1b]0;x\x07.adf", loop=loop)
    main(["usage", str(p)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b" in out


#: ``ccusage session --json --offline`` of ccusage 20.0.24 (``npm install ccusage@20.0.24``;
#: 20.0.26 ships no linux-x64 binary), run by hand on 2026-12-01 with CLAUDE_CONFIG_DIR a
#: folder whose ``projects`` links to ../shared/fixtures/transcripts/claude-code/projects:
#: session id -> (inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens). ccusage's
#: session report leaves out the Task subagents older Claude Code wrote only as
#: ``agent_progress`` records, which its daily report counts (issue 33 item 5): for the three
#: sessions that have them (each alone on its day) the figures are ``ccusage daily --json
#: --offline``'s for that day (2026-02-07, 2026-01-30, 2026-02-11), run by hand on 2026-12-03.
CCUSAGE_20_SESSIONS = {
    "6113e919-67d3-417b-b525-c63700228d19": (13818, 70618, 1618146, 24013662),
    "0442a060-edc3-4307-bddb-11a2951fd1a1": (17148, 19874, 732319, 22577493),
    "70d782f7-b303-4e48-9512-6bec16c37abd": (1416, 410, 638459, 15838092),
    "03a1382e-ecd5-42c4-b3d4-5c659e165904": (302, 9081, 412776, 17764111),
    "847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1": (8211, 19174, 877567, 9730072),
    "c010174c-a7cd-4bcc-b7d4-61258d6c463f": (109, 9985, 536714, 9599581),
    "67d765b5-4286-4ec5-b051-950466e186f0": (6992, 449, 712249, 7246724),
    "ca8cc13b-d3df-4615-8f3f-f48a96b1a6f9": (137, 20001, 276609, 11698986),
    "0cd9edf7-459c-4900-af40-cf2c64dea525": (478, 107, 338089, 5118558),
    "cde341db-b80a-44f5-b0f2-94db2ef7a164": (70, 12098, 99805, 2995725),
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b": (818, 51933, 137976, 3647854),
    "5e231473-1e70-45c5-9c18-6510ac844c99": (256, 78, 62114, 2088652),
    "c26d2153-23c8-42ed-ab6c-808579b64e5b": (9570, 66, 91508, 1707375),
    "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68": (88, 51, 71257, 278912),
}


def test_usage_tokens_equal_ccusage_20_on_real_sessions(tmp_path, capsys):
    if not PROJECTS.is_dir():
        pytest.skip(f"real transcripts not present at {PROJECTS} (../shared is absent in a clone)")
    status = main(["usage", str(PROJECTS), "--json", "--cache", str(tmp_path / "ix")])
    assert status == 0
    rows = json.loads(capsys.readouterr().out)
    got = {r["agent"]: (r["input"], r["output"], r["cache_write"], r["cache_read"]) for r in rows}
    assert got == CCUSAGE_20_SESSIONS
    import adfkit

    for r in rows:  # compactions and microcompactions apart, as each session's info() counts
        with adfkit.open(r["agent_path"]) as agent:
            info = agent.info(sizes=False)
        assert (r["compactions"], r["microcompactions"]) == (
            info["compactions"],
            info["microcompactions"],
        )
    assert sum(r["compactions"] for r in rows) > 0 and sum(r["microcompactions"] for r in rows) > 0
    # the second run, from the index, says the same
    assert main(["usage", str(PROJECTS), "--json", "--cache", str(tmp_path / "ix")]) == 0
    assert json.loads(capsys.readouterr().out) == rows


def test_index_command(tmp_path, capsys):
    paths = _agents(tmp_path / "in", 2)
    assert main(["index", str(tmp_path / "in"), "--to", str(tmp_path / "ix")]) == 0
    out = capsys.readouterr().out
    assert "usage_days: 2 file(s)" in out
    for t in ("usage_days", "usage", "compactions"):
        assert len(list((tmp_path / "ix" / t).glob("*.parquet"))) == 2
    assert len(paths) == 2


@pytest.mark.parametrize("name", ["forgetful", "long-runner", "mind-keeper"])
def test_usage_days_dates_each_compaction_as_the_analysis_does(name: str) -> None:
    """Compactions per day come from events() with no format named: dated by the row before
    the summary, or by the summary where that row is lost (forgetful discarded it), they fall
    on the days of compactions()["created_at"]."""
    path = sample(name)
    with adfkit.open(path) as agent:
        c = agent.compactions()
        want = c[c["event"] == "compaction"]["created_at"].dt.strftime("%Y-%m-%d").value_counts()
    days = load_fleet([path], table="usage_days").df.set_index("day")["compactions"]
    got = days[days > 0]
    assert want.sum() > 0
    assert got.sort_index().to_dict() == want.sort_index().to_dict()


def _cell_types(df: pd.DataFrame) -> dict[str, list[str]]:
    return {c: [type(v).__name__ for v in df[c].tolist()] for c in df.columns}


#: Tables whose cells are tuples (``audit_ids``, ``swept_seqs``, ``context_seqs``, ``rows``...)
#: or whose category columns are empty in some files (``audit``'s ``source``, ``integrity``'s
#: ``severity``, ``branches``' ``role``): what Parquet alone gives back otherwise.
ROUND_TRIP = ("compactions", "events", "audit", "integrity", "replay", "branches", "anomalies")


@pytest.mark.parametrize("table", ROUND_TRIP)
def test_the_index_gives_back_the_frame_of_a_fresh_read(tmp_path, table):
    """Issue 38: a second run from the index returned arrays where a fresh read has tuples,
    and category columns as object where files' categories differ or a table is empty. Both
    runs with an index equal the fresh read, dtypes and the type of every cell included."""
    paths = [
        str(sample("forgetful")),
        str(sample("long-runner")),
        str(SAMPLES / "claude-code"),
        str(SAMPLES / "codex"),
    ]
    fresh, errors = load_fleet(paths, table, engine="serial")
    assert errors.empty and len(fresh)
    for _ in range(2):  # the run that writes the index, then the one that reads it
        got, errors = load_fleet(paths, table, engine="serial", cache=tmp_path / "ix")
        assert errors.empty
        pd.testing.assert_frame_equal(fresh, got, check_exact=True)
        assert _cell_types(got) == _cell_types(fresh)


def _exported_tables() -> list[str]:
    from adfkit._facade.catalog import exported

    return [t.name for t in exported() if t.name not in ROUND_TRIP]


@pytest.mark.parametrize("table", _exported_tables())
def test_every_table_of_the_catalog_comes_back_from_the_index(tmp_path, table):
    """Issue 37/38: every table the index keeps (the catalog's, beyond :data:`ROUND_TRIP`),
    read back from its Parquet parts, equals a fresh read: values, dtypes and the type of every
    cell (an ADF agent with compactions, a Claude Code folder, a Codex folder)."""
    paths = [str(sample("forgetful")), str(SAMPLES / "claude-code"), str(SAMPLES / "codex")]
    fresh, errors = load_fleet(paths, table, engine="serial", progress=False)
    assert errors.empty
    for _ in range(2):  # the run that writes the index, then the one that reads it
        got, errors = load_fleet(paths, table, engine="serial", cache=tmp_path / "ix")
        assert errors.empty
        pd.testing.assert_frame_equal(fresh, got, check_exact=True)
        assert _cell_types(got) == _cell_types(fresh)


def test_an_export_reads_back_with_its_tuples(tmp_path):
    """export's Parquet files, read with the index's reader, give the table back exactly."""
    from adfkit._facade.index import read_parquet

    written, errors = adfkit.export(str(sample("forgetful")), tmp_path)
    assert errors.empty
    with adfkit.open(str(sample("forgetful"))) as agent:
        want = agent.compactions()
    got = read_parquet(str(tmp_path / "forgetful" / "compactions.parquet"))
    pd.testing.assert_frame_equal(want, got, check_exact=True)
    assert _cell_types(got) == _cell_types(want)


def test_parts_are_read_with_the_system_allocator_and_the_default_put_back(tmp_path, monkeypatch):
    """Reading a part allocates nothing from pyarrow's default allocator (mimalloc on Linux,
    which faulted fresh pages in for every part: the index's second run cost more than a
    fresh read); the default is the default again after a read, and after a failed one."""
    import pyarrow as pa

    from adfkit._facade.index import read_parquet, to_parquet

    pool = pa.default_memory_pool()
    if pool.backend_name == pa.system_memory_pool().backend_name:
        pytest.skip("pyarrow's default allocator is already the system's here")
    df = pd.DataFrame({"text": pd.array([f"row {i} " * 200 for i in range(2000)], dtype="string")})
    part = str(tmp_path / "part.parquet")
    to_parquet(df, part)
    import pyarrow.parquet as pq

    seen = []
    real = pq.read_table

    def read_table(*a, **k):  # the allocator in force while the part is read
        seen.append(pa.default_memory_pool().backend_name)
        return real(*a, **k)

    # not pool.bytes_allocated(): the default pool is the process's, and another thread of the
    # worker (a notebook run in the background) may allocate from it meanwhile
    monkeypatch.setattr(pq, "read_table", read_table)
    got = read_parquet(part)
    assert seen == [pa.system_memory_pool().backend_name]
    assert pa.default_memory_pool().backend_name == pool.backend_name
    pd.testing.assert_frame_equal(got, df, check_exact=True)
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(pa.ArrowInvalid):
        read_parquet(str(tmp_path / "bad.parquet"))
    assert pa.default_memory_pool().backend_name == pool.backend_name


def test_part_schema_is_pandas_own_and_written_without_pandas(tmp_path):
    """An index part of ``usage_days`` is written without importing pandas (pandas 3: its
    schema written out), with the schema and pandas metadata pandas itself makes: read back
    with pandas, the part is the typed frame of its rows."""
    import subprocess
    import sys

    import pyarrow as pa

    from adfkit._facade.usage import days

    if int(pd.__version__.split(".")[0]) < 3:
        pytest.skip("the part schema is written out for pandas 3 only")
    want = pa.Schema.from_pandas(days.days_frame([]), preserve_index=False)
    assert days.pandas3_schema(pd.__version__).equals(want, check_metadata=True)
    part = tmp_path / "part.parquet"
    code = (
        "import sys\n"
        "from adfkit._facade.index import write_rows\n"
        "from adfkit._facade.usage.days import Call, day_rows\n"
        "calls = [Call(86_400_000, 5, 7, 2, 3, float('nan'), 10, 'm'),"
        " Call(90_000_000, None, 1, None, None, 0.25, None, None)]\n"
        "rows = [{'label': 'l', 'agent': 'a', 'agent_path': 'p', **r}"
        " for r in day_rows(calls, [('compaction', 86_400_000)])]\n"
        f"assert write_rows(rows, {str(part)!r})\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    got = pd.read_parquet(part)
    expect = pd.DataFrame(
        {
            "label": ["l"],
            "agent": ["a"],
            "agent_path": ["p"],
            "day": ["1970-01-02"],
            "calls": [2],
            "input": [5],
            "output": [8],
            "cache_write": [2],
            "cache_read": [3],
            "cost_usd": [float("nan")],
            "cost_known_usd": [0.25],
            "unpriced_calls": [1],
            "models": ["m"],
            "compactions": [1],
            "microcompactions": [0],
            "max_context": [10],
            "first_at": ["1970-01-02T00:00:00+00:00"],
            "last_at": ["1970-01-02T01:00:00+00:00"],
        }
    ).astype({**dict.fromkeys(fleet_mod.FLEET_COLUMNS, "string"), **days.USAGE_DAYS})
    pd.testing.assert_frame_equal(got, expect)
