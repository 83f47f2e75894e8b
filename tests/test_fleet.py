"""load_fleet: one table from many files, identical across engines, failures collected."""

from __future__ import annotations

import functools
import json
import os
import tempfile
import warnings
from pathlib import Path, PurePosixPath

import pandas as pd
import pytest
from adfbuild import build, result, row, text, use
from conftest import SAMPLES, sample
from test_claude_code import Log
from test_claude_code import text as block

import adfkit
from adfkit._base import engines
from adfkit._facade.catalog import catalog
from adfkit._facade.fleet import load_fleet, resolve_paths


@pytest.fixture(autouse=True)
def _pool_even_for_tiny_fleets(monkeypatch):
    """These files are tiny: without this the process engine would run them serially."""
    monkeypatch.setattr("adfkit._facade.fleet.SMALL_FLEET_BYTES", 0)


@pytest.fixture
def fleet(tmp_path):
    """Three tiny agents with known row counts, plus one file that is not SQLite."""
    paths = []
    for i, n_live in enumerate((2, 3, 1)):
        live = [row(10 + k, "user", text(f"agent {i} live {k}")) for k in range(n_live)]
        audit = [
            {
                "source": "loop",
                "rows": [
                    row(1, "user", text("A scheduled timer has fired.")),
                    row(
                        2,
                        "assistant",
                        [use("t1", "fs_read", {"path": "a"})],
                        tokens={"input": 100 + i, "output": 7},
                    ),
                    row(3, "user", [result("t1", "ok")]),
                ],
            }
        ]
        paths.append(build(tmp_path / f"agent{i}.adf", loop=live, audit=audit))
    bad = tmp_path / "broken.adf"
    bad.write_text("this is not a database")
    return [str(p) for p in paths[:2]] + [str(bad)] + [str(paths[2])]


def test_serial_gives_known_rows_and_collects_the_broken_file(fleet):
    """Rows per agent are the file's history; the broken file is an error row, not fatal."""
    df, errors = load_fleet(fleet, "history", engine="serial", progress=False)
    assert df["agent"].tolist() == ["agent0"] * 5 + ["agent1"] * 6 + ["agent2"] * 4
    assert df["agent_path"].tolist()[0] == fleet[0]
    assert list(df.columns[:5]) == ["label", "agent", "agent_path", "seq", "ord"]
    assert df["label"].tolist() == df["agent"].tolist()  # an ADF agent's name is readable
    assert df["tokens_input"].dropna().tolist() == [100, 101, 102]
    assert df["agent"].dtype == "string"
    assert errors["path"].tolist() == [fleet[2]]
    assert errors["error"].tolist() == ["NotSQLiteError"]
    assert "not a SQLite database" in errors["message"].iloc[0]
    assert list(errors.dtypes) == ["string", "string", "string"]


def test_processes_equal_serial(fleet):
    """The process pool puts results back in input order: frames are identical."""
    a, ea = load_fleet(fleet, "history", engine="serial", progress=False)
    b, eb = load_fleet(fleet, "history", engine="processes", workers=2, progress=False)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    pd.testing.assert_frame_equal(ea, eb)


def test_dask_equals_serial(fleet):
    """On a LocalCluster started for the call, and on a client the caller passes."""
    distributed = pytest.importorskip("dask.distributed")
    a, ea = load_fleet(fleet, "loop", engine="serial", progress=False)
    b, eb = load_fleet(fleet, "loop", engine="dask", workers=1, progress=False)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    pd.testing.assert_frame_equal(ea, eb)
    with (
        distributed.LocalCluster(
            n_workers=1, processes=False, threads_per_worker=2, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        c, ec = load_fleet(fleet, "history", engine="dask", client=client, progress=False)
        assert client.status == "running"  # the caller's client is left open
    h, _ = load_fleet(fleet, "history", engine="serial", progress=False)
    pd.testing.assert_frame_equal(h, c, check_exact=True)
    pd.testing.assert_frame_equal(ea, ec)


def test_sample_agents_history_matches_each_file():
    """The fleet frame is each agent's own history() with the agent columns in front."""
    paths = [str(sample(n)) for n in ("clean", "forgetful", "long-runner")]
    df, errors = load_fleet(paths, "history", engine="processes", workers=2, progress=False)
    assert errors.empty
    parts = []
    for p in paths:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with adfkit.open_adf(p) as agent:
                parts.append(agent.history())
    want = pd.concat(parts, ignore_index=True)
    pd.testing.assert_frame_equal(df.drop(columns=["label", "agent", "agent_path"]), want)
    assert df.groupby("agent", sort=False).size().tolist() == [len(x) for x in parts]


def test_registry_dict_tables_and_bad_names(fleet):
    """Non-method tables come from the registry; dict results become one row; names checked."""
    assert "turns" in catalog()
    good = [fleet[0], fleet[1]]
    turns, errors = load_fleet(good, "turns", engine="serial", progress=False)
    assert errors.empty and set(turns["agent"]) == {"agent0", "agent1"}
    info, _ = load_fleet(good, "info", engine="serial", progress=False)
    assert info["loop_rows"].tolist() == [2, 3]
    with pytest.raises(ValueError, match="table must be"):
        load_fleet(good, "_blob")
    with pytest.raises(ValueError, match="engine must be one of"):
        load_fleet(good, "loop", engine="threads")


def test_paths_from_glob_folder_and_list(fleet, tmp_path):
    """A glob, a folder and a list resolve to the same sorted files; no match is an error."""
    want = sorted(str(p) for p in tmp_path.glob("*.adf"))
    assert resolve_paths(str(tmp_path / "*.adf")) == want
    assert resolve_paths(tmp_path) == want
    assert resolve_paths([fleet[1], fleet[0]]) == [fleet[1], fleet[0]]
    with pytest.raises(adfkit.AdfError, match="no file matches"):
        resolve_paths(str(tmp_path / "*.nothing"))


def test_all_files_failing_gives_empty_frame(tmp_path):
    """Nothing loaded: an empty frame with the agent columns, every file in errors."""
    df, errors = load_fleet([str(tmp_path / "missing.adf")], "loop", engine="serial")
    assert df.empty and list(df.columns) == ["label", "agent", "agent_path"]
    assert errors["message"].tolist() == ["no such file"]


def test_chunks_are_small_enough_to_share_the_work_and_stream_back():
    """About four chunks per process, never more than 8 jobs, never none."""
    assert [engines.chunk_size(n, 2) for n in (0, 1, 7, 8, 16, 40, 64, 200)] == [
        1, 1, 1, 1, 2, 5, 8, 8
    ]  # fmt: skip
    assert engines.chunk_size(1000, 16) == 8 and engines.chunk_size(100, 16) == 1


def test_processes_with_many_files_equal_serial(tmp_path):
    """40 files, two processes: the frames of a process pool equal the serial run's, input
    order kept, the file that fails an error row at its place."""
    paths = []
    for i in range(40):
        live = [row(1 + k, "user", text(f"agent {i} row {k}")) for k in range(1 + i % 3)]
        paths.append(str(build(tmp_path / f"a{i:02d}.adf", loop=live)))
    paths.insert(7, str(tmp_path / "missing.adf"))
    a, ea = load_fleet(paths, "history", engine="serial", progress=False)
    b, eb = load_fleet(paths, "history", engine="processes", workers=2, progress=False)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    pd.testing.assert_frame_equal(ea, eb)
    assert a["agent"].unique().tolist() == [f"a{i:02d}" for i in range(40)]
    assert len(a) == sum(1 + i % 3 for i in range(40))
    assert eb["path"].tolist() == [paths[7]]


def _worker_facts(job: int, k: int) -> tuple[int, bool, int]:
    return job * k, engines.IN_WORKER, os.getpid()


def test_run_keeps_input_order_on_every_local_engine():
    """The public shape: ``run(func, jobs, engine=...)``, results in input order; the pool's
    jobs run in other processes, which know they are workers (no decoding thread there)."""
    func = functools.partial(_worker_facts, k=3)
    jobs = list(range(25))
    serial = adfkit.run(func, jobs, engine="serial", progress=False)
    pooled = adfkit.run(func, jobs, engine="processes", workers=2, progress=False)
    assert [x for x, _, _ in serial] == [x for x, _, _ in pooled] == [3 * j for j in jobs]
    assert {(w, p) for _, w, p in serial} == {(False, os.getpid())}
    assert all(w for _, w, _ in pooled) and os.getpid() not in {p for _, _, p in pooled}
    with pytest.raises(ValueError, match="engine must be one of"):
        adfkit.run(func, jobs, engine="threads")


def test_pool_results_come_back_through_files_that_are_then_removed(monkeypatch, tmp_path):
    """Each result of the process pool comes back pickled in a file (not through the pool's
    one result pipe), read once and removed; no file or folder of them is left behind."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[bool] = []
    unspill = engines._unspill

    def reading(res):
        seen.append(res[0] and os.path.isfile(res[1]))
        out = unspill(res)
        assert not res[0] or not os.path.exists(res[1])
        return out

    monkeypatch.setattr(engines, "_unspill", reading)
    func = functools.partial(_worker_facts, k=2)
    got = adfkit.run(func, list(range(12)), engine="processes", workers=2, progress=False)
    assert [x for x, _, _ in got] == [2 * j for j in range(12)]
    assert seen == [True] * 12
    assert list(tmp_path.iterdir()) == []


def test_a_result_that_cannot_be_written_comes_back_through_the_pipe(tmp_path):
    """No room for the file (here: no folder): the result itself is returned."""
    res = engines._spill(abs, str(tmp_path / "gone"), -4)
    assert res == (False, 4) and engines._unspill(res) == 4
    res = engines._spill(abs, str(tmp_path), -5)
    assert res[0] and engines._unspill(res) == 5 and list(tmp_path.iterdir()) == []


def test_the_dask_engine_without_dask_says_what_to_install(monkeypatch):
    """A plain install has no dask: the error says which extra to install."""
    import sys

    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails as if absent
    with pytest.raises(adfkit.AdfError, match=r'pip install "adfkit\[dask\]"'):
        adfkit.load_fleet([str(sample("clean"))], table="loop", engine="dask")


# -- labels: a readable name per file, the id in its own column ---------------------------------


def _session_facts(path: Path) -> tuple[str, str, str | None, str | None]:
    """(sessionId, cwd, title or summary, first typed prompt) of a Claude Code session, read
    here with json alone."""
    sid = cwd = about = prompt = None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:  # the half-written last line of a session still being written
            continue
        sid = sid or rec.get("sessionId")
        cwd = cwd or rec.get("cwd")
        if rec.get("type") in ("custom-title", "ai-title", "summary") and about is None:
            about = rec.get("customTitle") or rec.get("aiTitle") or rec.get("summary")
        if rec.get("type") == "user" and prompt is None and not rec.get("isMeta"):
            c = rec["message"]["content"]
            if isinstance(c, str) and not c.startswith("<"):
                prompt = c
    assert sid and cwd
    return sid, cwd, about, prompt


def test_claude_code_sessions_are_labelled_by_project_and_title():
    """Each sample session's label is its working folder's name and its summary, as the
    file's own records say; the session id stays in ``agent``."""
    paths = sorted(
        p
        for p in (SAMPLES / "claude-code" / "projects").glob("*/*.jsonl")
        if not p.name.startswith("agent-")
    )
    assert len(paths) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one sample ends in a half-written line
        info, errors = load_fleet(paths, "info", engine="serial", progress=False)
    assert errors.empty
    rows = info[["label", "agent"]].itertuples(index=False)
    for path, (label, agent) in zip(paths, rows, strict=True):
        sid, cwd, about, _prompt = _session_facts(path)
        assert about, f"{path.name}: the sample was expected to have a summary"
        assert label == f"{PurePosixPath(cwd).name} · {about}"
        assert agent == sid
    assert info["label"].str.contains("webapp · ").sum() == 1


def test_a_session_without_a_title_is_labelled_by_its_first_prompt_on_one_line(tmp_path):
    """No title or summary: the first prompt typed (not a slash command), on one line,
    control characters escaped, clipped to 60 characters with an ellipsis."""
    log = Log()
    log.user("u1", None, "<command-name>/clear</command-name>")
    ask = "Fix the\nlogin\t\tbug \x1b[31mnow\x1b[0m and then " + "tidy up " * 10
    log.user("u2", "u1", ask)
    log.asst("a1", "u2", "m1", [block("ok")])
    path = log.write(tmp_path / "-home-u-proj" / "s.jsonl")
    df, errors = load_fleet([path], "info", engine="serial", progress=False)
    assert errors.empty
    sid, cwd, about, prompt = _session_facts(path)
    assert about is None and prompt == ask
    want = "proj · Fix the login bug \\x1b[31mnow\\x1b[0m and then tidy u…"
    assert len(want) == 60
    assert df["label"].tolist() == [want]
    assert df["agent"].tolist() == [sid]


def test_a_title_wins_over_the_first_prompt(tmp_path):
    log = Log()
    log.user("u1", None, "do the thing")
    log.asst("a1", "u1", "m1", [block("ok")])
    log.raw({"type": "custom-title", "customTitle": "Release\nnotes", "sessionId": log.session})
    path = log.write(tmp_path / "p" / "s.jsonl")
    df, _ = load_fleet([path], "info", engine="serial", progress=False)
    assert df["label"].tolist() == ["proj · Release notes"]


def test_labels_are_distinct_between_files(tmp_path):
    """Two sessions that would read the same get the start of their id; two agents of the
    same name a number; each file keeps one label on all its rows."""
    paths = []
    for sid in ("11111111-aaaa-4000-8000-000000000000", "22222222-bbbb-4000-8000-000000000000"):
        log = Log(session=sid)
        log.user("u1", None, "same words")
        log.asst("a1", "u1", "m1", [block("ok")])
        paths.append(log.write(tmp_path / sid[:2] / "s.jsonl"))
    loop = [row(1, "user", text("hello"))]
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        paths.append(build(tmp_path / d / "twin.adf", loop=loop))
    df, errors = load_fleet(paths, "history", engine="serial", progress=False)
    assert errors.empty
    labels = df.drop_duplicates("agent_path")["label"].tolist()
    assert labels == [
        "proj · same words [11111111]",
        "proj · same words [22222222]",
        "twin",
        "twin (2)",
    ]
    assert df.groupby("agent_path")["label"].nunique().eq(1).all()


def test_usage_table_names_sessions_by_label_with_the_id_apart(capsys):
    from adfkit.cli import main

    path = next(
        p
        for p in (SAMPLES / "claude-code" / "projects").glob("*/*.jsonl")
        if not p.name.startswith("agent-")
    )
    sid, cwd, about, _ = _session_facts(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["usage", str(path)]) == 0
    head, line, total = capsys.readouterr().out.splitlines()
    assert head.split()[0] == "session" and head.split()[-1] == "id"
    assert line.startswith(f"{PurePosixPath(cwd).name} · {about}  ")
    assert line.split()[-1] == sid
    assert total.split()[-1] != sid


@pytest.mark.parametrize(
    ("messages", "want"),
    [
        ([(None, "  "), (None, "fix it"), (None, "later")], "fix it"),
        ([(None, "context"), ("chat", " "), ("chat", "typed"), ("chat", "again")], "typed"),
        ([(None, "context"), ("chat", "  ")], None),  # a chat message, none said anything
        ([(None, None), ("queued", "queued one"), (None, "plain")], "queued one"),
        ([], None),
    ],
)
def test_first_prompt_prefers_chat_and_reads_no_further(messages, want):
    from adfkit._facade.fleet import first_prompt

    def no_further():  # the first chat message that says something ends the read
        for m in messages:
            yield m
            if m[0] == "chat" and m[1].strip():
                raise AssertionError("first_prompt read past the first chat prompt")

    assert first_prompt(messages) == want
    assert first_prompt(no_further()) == want
