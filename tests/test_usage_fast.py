"""``adfkit usage`` without pandas (issue 23): the figures a format's ``figures`` fast path gives
(its parser alone) equal the full tables' on every sample, recording and real transcript of
each format that declares one, and a fresh index is read without the files."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES

import adfkit
from adfkit import load_fleet
from adfkit._core.prices import load_prices
from adfkit._core.registry import recognise
from adfkit._facade.usage import reading as uf
from adfkit._facade.usage.days import frame_rows
from adfkit._sources.claude_code.parser import parse_claude_code
from adfkit._sources.codex.parser import parse_codex
from adfkit._sources.transcript import figures
from adfkit.cli import main

REAL = ROOT.parent / "shared" / "fixtures" / "transcripts"


def _transcripts(folder: Path) -> list[Path]:
    out = []
    for p in sorted(folder.rglob("*.jsonl*")):
        if p.parent.name == "subagents" or p.name.startswith("agent-"):
            continue
        try:
            if recognise(p).figures is not None:
                out.append(p)
        except adfkit.AdfError:
            continue
    return out


#: The samples and the recordings (tests/fixtures/recorded) of every format with a fast path.
SAMPLE_FILES = _transcripts(SAMPLES) + _transcripts(ROOT / "tests" / "fixtures" / "recorded")
REAL_FILES = _transcripts(REAL) if REAL.is_dir() else []


def _need_real() -> None:
    if not REAL_FILES:
        pytest.skip(f"real transcripts not present at {REAL} (../shared is absent in a clone)")


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN (exact otherwise: no tolerance)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _parse(path: Path):
    return (parse_claude_code if recognise(path).name == "claude_code" else parse_codex)(
        path, warn=False
    )


def _check_calls(path: Path) -> int:
    """figures.usage_calls of the file and of each subagent == AgentFile.usage(), call by call."""
    parsed = _parse(path)
    prices = load_prices()
    n = 0
    with adfkit.open(path) as agent:
        agents = [agent, *agent.subagents()]
        assert len(agents) == 1 + len(parsed.subagents)
        for a, p in zip(agents, [parsed, *parsed.subagents], strict=True):
            u = a.usage()
            got, _note = figures.usage_calls(p, prices)
            at = u["created_at"].to_numpy(dtype="datetime64[ms]").astype("int64").tolist()
            want = [
                (
                    str(r.call_kind),
                    None if pd_na(r.created_at) else at[i],
                    None if pd_na(r.model) else r.model,
                    *(
                        None if pd_na(v) else int(v)
                        for v in (
                            r.tokens_input,
                            r.tokens_output,
                            r.tokens_cache_read,
                            r.tokens_cache_write,
                            r.tokens_cache_write_1h,
                        )
                    ),
                    float(r.cost_usd),
                )
                for i, r in enumerate(u.itertuples(index=False))
            ]
            assert _same([tuple(c) for c in got], want), (path, a.name)
            n += len(got)
    return n


def pd_na(v: object) -> bool:
    import pandas as pd

    return bool(pd.isna(v))


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_calls_equal_usage_on_samples(path: Path) -> None:
    assert _check_calls(path) > 0


def test_calls_equal_usage_on_real_transcripts() -> None:
    _need_real()
    assert sum(_check_calls(p) for p in REAL_FILES) > 1000


def _check_days(paths: list[Path], prices: object = None) -> list[dict]:
    """usage_fleet's rows (the parsers alone) == the full usage_days table's, exactly."""
    kw = {} if prices is None else {"prices": prices}
    full, errors = load_fleet([str(p) for p in paths], "usage_days", engine="serial", **kw)
    rows, errs = uf.usage_fleet([str(p) for p in paths], prices=prices, engine="serial")
    assert [tuple(e) for e in errors.itertuples(index=False)] == errs
    want = frame_rows(full)
    assert _same(rows, want)
    return rows


def test_days_equal_the_full_table_on_samples() -> None:
    rows = _check_days(SAMPLE_FILES)
    assert {r["agent_path"] for r in rows} == {str(p) for p in SAMPLE_FILES}
    assert sum(r["compactions"] for r in rows) > 0


def test_days_equal_the_full_table_on_a_mixed_folder(tmp_path: Path) -> None:
    """ADF files (the full table) and transcripts (the parsers) in one fleet: labels made
    distinct over all of them, files in input order."""
    adf = sorted(SAMPLES.glob("*.adf"))
    paths = [adf[0], *SAMPLE_FILES[:2], adf[0], *adf[1:3]]
    rows = _check_days(list(dict.fromkeys(paths)))
    assert len({r["label"] for r in rows}) == len({r["agent_path"] for r in rows})


def test_days_equal_the_full_table_on_real_transcripts(tmp_path: Path) -> None:
    _need_real()
    rows = _check_days(REAL_FILES)
    assert sum(r["microcompactions"] for r in rows) > 0
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({"claude-opus-4-5-20251101": {"input": 1, "output": 2}}))
    _check_days(REAL_FILES[:6], prices=str(prices))


def test_a_price_file_that_cannot_be_read_is_each_files_error(tmp_path: Path) -> None:
    _check_days(SAMPLE_FILES[:2], prices=str(tmp_path / "missing.json"))


def test_processes_give_what_serial_gives(monkeypatch) -> None:
    monkeypatch.setattr(uf, "SMALL_USAGE_BYTES", 0)  # a pool even for the samples
    paths = [str(p) for p in SAMPLE_FILES]
    serial = uf.usage_fleet(paths, engine="serial")
    assert _same(list(uf.usage_fleet(paths, engine="processes")), list(serial))


def _copy_sessions(tmp_path: Path) -> Path:
    src = REAL / "claude-code" / "projects" if REAL_FILES else SAMPLES / "claude-code" / "projects"
    dst = tmp_path / "projects"
    shutil.copytree(src, dst)
    return dst


def _blank_keeping_stamps(folder: Path) -> int:
    """Every file overwritten with as many spaces, its modification time put back: a run that
    read one would see no session there."""
    n = 0
    for p in folder.rglob("*.jsonl"):
        st = p.stat()
        p.write_bytes(b" " * st.st_size)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
        n += 1
    return n


def test_second_run_reads_no_session_file(tmp_path: Path, capsys) -> None:
    projects = _copy_sessions(tmp_path)
    ix = tmp_path / "ix"
    assert main(["usage", str(projects), "--json", "--cache", str(ix)]) == 0
    first = capsys.readouterr().out
    assert json.loads(first)
    assert _blank_keeping_stamps(projects) > 1
    assert main(["usage", str(projects), "--json", "--cache", str(ix)]) == 0
    assert capsys.readouterr().out == first
    # without the index the blanked files are read: nothing claims them, so no agent at all
    assert main(["usage", str(projects), "--json"]) == 2
    err = capsys.readouterr().err.splitlines()
    n = len(json.loads(first))
    assert err[0].startswith(f"adfkit: note: skipped {n} files no format adfkit reads: ")
    assert err[1:] == [f"adfkit: error: no agent files: no format adfkit reads the {n} files found"]


def test_an_index_made_by_adfkit_index_serves_usage_without_the_files(
    tmp_path: Path, capsys
) -> None:
    projects = _copy_sessions(tmp_path)
    ix = tmp_path / "ix"
    assert main(["usage", str(projects), "--json"]) == 0
    want = capsys.readouterr().out
    assert main(["index", str(projects), "--to", str(ix), "--table", "usage_days"]) == 0
    capsys.readouterr()
    manifest = json.loads((ix / "usage_days" / "_manifest.json").read_text())
    assert all(isinstance(e.get("rows"), list) for e in manifest.values())
    _blank_keeping_stamps(projects)
    assert main(["usage", str(projects), "--json", "--cache", str(ix)]) == 0
    assert capsys.readouterr().out == want


def test_index_parts_read_back_without_manifest_rows(tmp_path: Path, capsys) -> None:
    """Parts whose manifest entry has no rows (an older index) are read from the Parquet."""
    projects = _copy_sessions(tmp_path)
    ix = tmp_path / "ix"
    assert main(["usage", str(projects), "--json", "--cache", str(ix)]) == 0
    want = capsys.readouterr().out
    mf = ix / "usage_days" / "_manifest.json"
    entries = json.loads(mf.read_text())
    mf.write_text(
        json.dumps({k: {x: v for x, v in e.items() if x != "rows"} for k, e in entries.items()})
    )
    _blank_keeping_stamps(projects)
    assert main(["usage", str(projects), "--json", "--cache", str(ix)]) == 0
    assert capsys.readouterr().out == want
    # and load_fleet reads the parts adfkit usage wrote
    df, err = load_fleet(
        sorted(
            str(p)
            for p in projects.rglob("*.jsonl")
            if p.parent.name != "subagents" and not p.name.startswith("agent-")
        ),
        "usage_days",
        cache=ix,
        engine="serial",
    )
    assert err.empty and len(df) > 0


def _imports(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout.split()
    return out


_RUN = (
    "import sys, contextlib, io\n"
    "from adfkit.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    assert main({argv!r}) == 0\n"
    "print(*[m for m in ('pandas', 'numpy', 'pyarrow') if m in sys.modules])\n"
)


def test_transcripts_and_a_fresh_index_are_read_without_pandas_or_numpy(tmp_path: Path) -> None:
    projects = str(SAMPLES / "claude-code" / "projects")
    argv = ["usage", projects, "--json", "--engine", "serial"]
    assert _imports(_RUN.format(argv=argv)) == []
    argv += ["--cache", str(tmp_path / "ix")]
    # the first run writes the parts with pyarrow (which imports numpy), not pandas
    assert _imports(_RUN.format(argv=argv)) == ["numpy", "pyarrow"]
    assert _imports(_RUN.format(argv=argv)) == []


def _numpy_costs(tin, tout, cr, cw, w1h, rates):
    """The cost rule as the usage frame computed it with numpy before it moved to plain floats
    (an independent statement of the same formula)."""
    w1h = np.minimum(w1h, cw)
    uncached = tin - cr - cw
    uncached[uncached < 0] = np.nan
    cost = (
        uncached * rates[:, 0]
        + tout * rates[:, 1]
        + cr * rates[:, 2]
        + (cw - w1h) * rates[:, 3]
        + w1h * rates[:, 4]
    ) / 1e6
    return np.round(cost, 8)


def test_the_cost_rule_is_numpys_to_the_last_bit() -> None:
    from adfkit._core.prices import costs

    rng = random.Random(5)
    prices = load_prices()
    models = [*list(prices)[:40], None, "no-such-model"]
    n = 20000
    m = [rng.choice(models) for _ in range(n)]
    big = [rng.choice([10, 1000, 200_000, 10**9]) for _ in range(n)]
    cr = [float(rng.randint(0, b)) for b in big]
    cw = [float(rng.randint(0, b)) for b in big]
    w1h = [float(rng.randint(0, b)) for b in big]
    # mostly a known input at least its cache parts; some unknown, some smaller (NaN cost)
    tin = [
        rng.choice([math.nan, float(rng.randint(0, b))] + [r + w + rng.randint(0, b)] * 8)
        for b, r, w in zip(big, cr, cw, strict=True)
    ]
    tout = [rng.choice([math.nan] + [float(rng.randint(0, b))] * 8) for b in big]
    got, rates = costs(m, tin, tout, cr, cw, w1h, prices)
    arr = np.array(rates, dtype="float64")
    want = _numpy_costs(*(np.array(x, dtype="float64") for x in (tin, tout, cr, cw, w1h)), arr)
    assert sum(not math.isnan(c) for c in got) > n // 4
    assert np.array_equal(np.array(got), want, equal_nan=True)


def test_stored_kind_is_the_row_rules_kind() -> None:
    """The kind usage reads from the row rule without the text (every row of every sample and
    real transcript, and hand-made odd rows) is :func:`stored_facts`'s."""
    from adfkit._core.rows import parse_content, stored_facts, stored_kind

    odd = [
        ("user", [], None),
        ("user", "not a list", None),
        ("user", [{"type": "text"}, {"type": "text", "text": "[Loop Compacted x"}], None),
        ("user", [{"type": "image"}, {"type": "tool_result", "content": "x"}], None),
        ("assistant", [{"type": "text", "text": "x"}], "notice"),
        ("system", [{"type": "text", "text": "x"}], "context"),
        ("user", [{"type": "text", "text": "<system-reminder>x"}], "context"),
        ("user", [1, {"type": "text", "text": "A scheduled timer has fired"}], None),
    ]
    rows = list(odd)
    for path in SAMPLE_FILES + REAL_FILES:
        parsed = _parse(path)
        for p in [parsed, *parsed.subagents]:
            rows += [(r.role, r.content, r.kind_hint) for r in p.rows + p.other_branches]
    kinds = set()
    for role, content, hint in rows:
        blocks, bad = parse_content(content)
        want = stored_facts(role, blocks, bad, hint)[:2]
        assert stored_kind(role, blocks, bad, hint) == want
        kinds.add(want[0])
    assert {"assistant", "tool_result", "message", "compaction_summary", "unknown"} <= kinds


def test_a_session_changing_while_read_is_not_indexed(tmp_path: Path, monkeypatch) -> None:
    projects = _copy_sessions(tmp_path)
    paths = sorted(
        str(p)
        for p in projects.rglob("*.jsonl")
        if p.parent.name != "subagents" and not p.name.startswith("agent-")
    )
    real = uf.session_days

    def touching(path, prices=None, tz=None):
        out = real(path, prices, tz)
        if path == paths[0]:
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        return out

    monkeypatch.setattr(uf, "session_days", touching)
    rows, errors = uf.usage_fleet(paths, engine="serial", cache=tmp_path / "ix")
    assert not errors and {r["agent_path"] for r in rows} == set(paths)  # still given
    manifest = json.loads((tmp_path / "ix" / "usage_days" / "_manifest.json").read_text())
    assert sorted(e["path"] for e in manifest.values()) == paths[1:]
    assert len(list((tmp_path / "ix" / "usage_days").glob("*.parquet"))) == len(paths) - 1


def _long_session(path: Path, turns: int) -> Path:
    """A Claude Code session of ``turns`` prompts, each answered by one priced call."""
    lines, parent = [], None
    for i in range(turns):
        for kind in ("user", "assistant"):
            uuid = f"{kind[0]}{i:05d}"
            rec = {
                "parentUuid": parent,
                "type": kind,
                "uuid": uuid,
                "sessionId": "s1",
                "cwd": "/home/u/p",
                "timestamp": f"2026-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            }
            if kind == "user":
                rec["message"] = {"role": "user", "content": f"question {i}"}
            else:
                rec["requestId"] = f"req_{i}"
                rec["message"] = {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [{"type": "text", "text": f"answer {i}"}],
                    "usage": {"input_tokens": 10 + i, "output_tokens": 5},
                }
            lines.append(json.dumps(rec))
            parent = uuid
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_file_is_read_with_the_collector_paused_until_it_is_dropped(tmp_path):
    """``adfkit usage`` reads each file with the cyclic collector paused from the parse until
    the parsed file is dropped: no collection pass while its rows are made (a pause that ended
    with the parse left one pass over every object of the file, a quarter of a generated
    session's time), the collector on again after, and the file's objects gone by then."""
    import gc

    session = _long_session(tmp_path / "s1.jsonl", 1500)
    passes: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            passes.append(info["generation"])

    uf.session_days(str(session))  # imports done
    gc.collect()
    before = gc.get_count()[0]
    gc.callbacks.append(seen)
    try:
        rows = uf.session_days(str(session))
    finally:
        gc.callbacks.remove(seen)
    assert [r["calls"] for r in rows] == [1500] and gc.isenabled()
    assert passes == []
    assert gc.get_count()[0] - before < 700  # what is left for the collector: not the file


def test_an_index_part_is_the_table_pandas_writes_of_its_frame(tmp_path: Path) -> None:
    """``write_rows`` builds a part's Arrow table from the rows, not from a frame: it must be
    the table (schema, pandas metadata, nulls and NaNs) pandas writes of ``days_frame``."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from adfkit._facade.index import write_rows
    from adfkit._facade.usage.days import days_frame

    path = str(SAMPLE_FILES[0])
    days = uf.session_days(path)
    assert days
    base = days[0]
    rows = [
        base,
        {**base, "day": "2026-01-02", "cost_usd": None, "max_context": None, "label": None},
        {**base, "day": "2026-01-03", "cost_usd": float("nan"), "calls": 2**62, "first_at": None},
    ]
    assert write_rows(rows, str(tmp_path / "p.parquet"))
    got = pq.read_table(tmp_path / "p.parquet")
    want = pa.Table.from_pandas(days_frame(rows), preserve_index=False)
    assert got.equals(want, check_metadata=True)
    assert got.column("cost_usd").null_count == 2  # pandas writes a NaN as a null
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "p.parquet"), days_frame(rows))
    # a row a part cannot hold is refused (the file is then read again next time)
    assert not write_rows([{**base, "calls": "many"}], str(tmp_path / "q.parquet"))
    assert not (tmp_path / "q.parquet").exists()


def test_the_fast_path_is_the_one_the_format_spec_declares(monkeypatch):
    """``adfkit usage`` reads a file through its format's ``FormatSpec.figures`` (no list of
    parsers of its own): a spec's ``figures`` is what is called, and a spec without one sends
    the file to the full ``usage_days`` table."""
    import dataclasses

    from adfkit._core import registry

    path = str(SAMPLE_FILES[0])
    spec = recognise(path)
    called = []

    def counting(p, prices):
        called.append(p)
        return spec.figures(p, prices)

    def as_spec(**changes):
        return lambda p, *a, **k: dataclasses.replace(spec, **changes)

    monkeypatch.setattr(registry, "recognise", as_spec(figures=counting))
    assert uf.session_days(path) is not None and called == [path]
    monkeypatch.setattr(registry, "recognise", as_spec(figures=None))
    assert uf.session_days(path) is None


@pytest.mark.parametrize(
    "ms",
    [
        0,
        -1,
        1,
        86_399_999,
        86_400_000,
        -86_400_000,
        -86_400_001,
        1_772_355_612_338,
        -62_135_596_800_000,
        253_402_300_799_999,
    ],
)
def test_a_utc_day_is_the_date_of_the_time(ms: int) -> None:
    """day_of's whole-day shortcut gives the calendar date datetime gives (both ends of the
    calendar, either side of midnight, before the epoch)."""
    from datetime import UTC, datetime, timedelta

    from adfkit._facade.usage.days import day_of

    d = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    assert day_of(ms) == d.date().isoformat() == day_of(ms, UTC)
