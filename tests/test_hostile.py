"""Hostile and broken input: nothing crashes, nothing is written, nothing leaks.

One case per class of damage, each with an id (``H01`` ...) listed in ``tests/ROBUSTNESS.md``.
Every file-based case is built in its own folder and checked three ways:

* ``test_case_outcome``: opening and using every public method either works or raises exactly
  the expected :class:`adfkit.AdfError` subclass, naming the file;
* ``test_case_touches_nothing``: the folder is byte-identical afterwards, with no new file;
* ``test_case_cli_info``: ``adfkit info`` exits 2 with one ``adfkit: error: ...`` line for the
  cases that raise, 0 with only ``adfkit: warning: ...`` lines for the others.

``test_hNN_...`` functions then check the values each case must produce.
"""

from __future__ import annotations

import inspect
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import brotli
import pandas as pd
import pytest
from adfbuild import BASE_MS, build, result, row, text, use
from conftest import fingerprint

import adfkit
from adfkit import AgentFile, UnsafeSchemaError, cli
from adfkit.cli import _info as _cli_info

# -- using everything ------------------------------------------------------------------------

#: Public methods that need an argument, and where the argument comes from.
_NEEDS_ARG = {"decode_audit", "read_file", "read_text", "mind_at", "system_prompt_at"}
#: Public methods that are not reads.
_SKIP = {"close"}


def public_methods() -> list[str]:
    """Every public method of AgentFile callable without arguments."""
    out = []
    for name, fn in inspect.getmembers(AgentFile, inspect.isfunction):
        if name.startswith("_") or name in _SKIP or name in _NEEDS_ARG:
            continue
        params = list(inspect.signature(fn).parameters.values())[1:]
        if all(p.default is not p.empty or p.kind is p.VAR_KEYWORD for p in params):
            out.append(name)
    return sorted(out)


def exercise(agent: AgentFile) -> dict[str, Any]:
    """Call every public read of ``agent``; return what each produced.

    ``decode_audit`` is called for every audit row; its :class:`adfkit.BlobError` (a damaged
    blob) is collected under ``"blob_errors"`` rather than raised. Anything else propagates.
    """
    out: dict[str, Any] = {"name": agent.name}
    for name in public_methods():
        out[name] = getattr(agent, name)()
    out["blocks_h"] = agent.blocks(history=True)
    out["tool_calls_h"] = agent.tool_calls(history=True)
    blobs: dict[int, Any] = {}
    errors: dict[int, adfkit.BlobError] = {}
    for aid in agent.audit()["id"].tolist():
        try:
            blobs[aid] = agent.decode_audit(int(aid))
        except adfkit.BlobError as exc:
            errors[aid] = exc
    out["decoded"], out["blob_errors"] = blobs, errors
    out["files_content"] = {p: agent.read_file(p) for p in agent.files()["path"].tolist()}
    out["files_text"] = {p: agent.read_text(p) for p in agent.files()["path"].tolist()}
    h = agent.history()
    seqs = h["seq"].dropna().astype("int64").tolist()
    if seqs:
        for name in ("mind_at", "system_prompt_at"):
            fn = getattr(agent, name)
            out[name] = [fn(seqs[0]), fn(seqs[-1])]
    return out


def use_quietly(path: Path, **kw: Any) -> tuple[dict[str, Any], list[warnings.WarningMessage]]:
    """Open ``path``, exercise it, close it; return the results and every warning given.

    The blob cap defaults to 32 MiB here (no case needs more; the bomb then fails fast)."""
    kw.setdefault("max_blob_bytes", 32 << 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with adfkit.open_adf(path, **kw) as agent:
            res = exercise(agent)
    return res, list(caught)


# -- the cases -------------------------------------------------------------------------------

LOOP = [
    row(1, "user", text("hello")),
    row(
        2,
        "assistant",
        [text("hi")[0], use("t1", "fs_read", {"path": "a"})],
        tokens={"input": 10, "output": 3},
    ),
    row(3, "user", [result("t1", "file body")]),
]


@dataclass
class Case:
    """A hostile file: how to build it and what opening + using it must give."""

    cid: str
    title: str
    make: Callable[[Path], Path]
    error: type[adfkit.AdfError] | None = None
    match: str = ""


CASES: dict[str, Case] = {}


def case(cid: str, title: str, error: type[adfkit.AdfError] | None = None, match: str = ""):
    def deco(fn: Callable[[Path], Path]) -> Callable[[Path], Path]:
        CASES[cid] = Case(cid, title, fn, error, match)
        return fn

    return deco


def _raw_sql(path: Path, *stmts: str | tuple[str, tuple]) -> Path:
    """Run statements on a file the test just built (test code; never on an input)."""
    con = sqlite3.connect(path)
    for s in stmts:
        con.execute(*s) if isinstance(s, tuple) else con.execute(s)
    con.commit()
    con.close()
    return path


@case("H01", "empty file (0 bytes)", adfkit.NotSQLiteError, "empty file")
def make_empty(d: Path) -> Path:
    (d / "agent.adf").write_bytes(b"")
    return d / "agent.adf"


@case("H02", "text file named .adf", adfkit.NotSQLiteError, "not a SQLite database")
def make_text(d: Path) -> Path:
    (d / "agent.adf").write_text("# my notes\n" * 40)
    return d / "agent.adf"


@case("H03", "SQLite file with no ADF tables", adfkit.NotAdfError, "without ADF tables")
def make_plain_sqlite(d: Path) -> Path:
    return _raw_sql(
        d / "agent.adf", "CREATE TABLE notes (x TEXT)", "INSERT INTO notes VALUES ('a')"
    )


@case("H04", "schema newer than known (31), unknown column and table")
def make_newer(d: Path) -> Path:
    return build(
        d / "agent.adf",
        loop=LOOP,
        meta={"adf_schema_version": "31"},
        sql=[
            "ALTER TABLE adf_loop ADD COLUMN mood TEXT",
            "UPDATE adf_loop SET mood = 'curious'",
            "CREATE TABLE adf_future (x BLOB)",
        ],
    )


@case("H05", "schema 27 layout: no ord, audit start_at/end_at")
def make_v27(d: Path) -> Path:
    return build(
        d / "agent.adf",
        schema=27,
        loop=[row(3, "user", text("c")), row(4, "assistant", text("d"), tokens=55)],
        audit=[
            {
                "source": "loop",
                "rows": LOOP[:2],
                "start_at": BASE_MS + 1000,
                "end_at": BASE_MS + 2000,
            }
        ],
    )


@case("H06", "pre-v14: schema_version key, integer tokens, no model/created_at")
def make_v12(d: Path) -> Path:
    return build(
        d / "agent.adf",
        schema=12,
        loop_columns=("tokens",),
        loop=[row(1, "user", text("old")), row(2, "assistant", text("reply"), tokens=55)],
    )


@case("H07", "truncated file (first 40% of the pages)", adfkit.CorruptFileError, "malformed")
def make_truncated(d: Path) -> Path:
    big = [row(i, "user", text(f"row {i} " + "x" * 900)) for i in range(1, 400)]
    f = build(d / "agent.adf", loop=big)
    data = f.read_bytes()
    f.write_bytes(data[: int(len(data) * 0.4)])
    return f


@case(
    "H08",
    "truncated inside the 100-byte header",
    adfkit.CorruptFileError,
    "truncated SQLite header",
)
def make_short(d: Path) -> Path:
    f = build(d / "agent.adf", loop=LOOP)
    f.write_bytes(f.read_bytes()[:60])
    return f


@case("H14", "invalid JSON in content_json")
def make_bad_content(d: Path) -> Path:
    return build(d / "agent.adf", loop=[row(1, "user", "[{not json"), *LOOP[1:]])


@case("H15", "invalid JSON in tokens")
def make_bad_tokens(d: Path) -> Path:
    return build(
        d / "agent.adf", loop=[LOOP[0], row(2, "assistant", text("x"), tokens="{input: 5")]
    )


@case("H16", "invalid JSON in config_json")
def make_bad_config(d: Path) -> Path:
    return build(d / "agent.adf", loop=LOOP, config='{"name": "x", "context": ')


UNKNOWN_BLOCKS = [
    {"type": "hologram", "payload": {"x": 1}},
    {"type": "text", "text": "seen"},
    {"no_type": True},
    {"type": 7},
]


@case("H17", "blocks of unknown type")
def make_unknown_blocks(d: Path) -> Path:
    return build(d / "agent.adf", loop=[row(1, "user", UNKNOWN_BLOCKS)])


@case("H18", "NULLs in NOT NULL columns (loop, meta, config, audit, files)")
def make_nulls(d: Path) -> Path:
    return build(
        d / "agent.adf",
        loop=LOOP,
        audit=[{"source": "loop", "rows": [row(0, "user", text("zero"))]}],
        files={"mind.md": "# Mind"},
        not_null=False,
        sql=[
            "UPDATE adf_loop SET role = NULL, created_at = NULL WHERE seq = 1",
            "UPDATE adf_loop SET content_json = NULL WHERE seq = 2",
            "UPDATE adf_meta SET value = NULL WHERE key = 'adf_name'",
            "UPDATE adf_config SET config_json = NULL",
            "UPDATE adf_audit SET data = NULL, entry_count = NULL, created_at = NULL",
            "UPDATE adf_files SET content = NULL, size = NULL",
        ],
    )


@case("H19", "audit blob that is not Brotli")
def make_not_brotli(d: Path) -> Path:
    return build(d / "agent.adf", loop=LOOP, audit=[{"source": "loop", "data": b"PK\x03\x04 zip?"}])


@case("H20", "audit blob that is Brotli but not JSON / not UTF-8")
def make_not_json(d: Path) -> Path:
    return build(
        d / "agent.adf",
        loop=LOOP,
        audit=[
            {"source": "loop", "data": brotli.compress(b"[{'seq': 1}]")},
            {"source": "loop", "data": brotli.compress(b'[{"seq":1,"role":"\xff"}]')},
        ],
    )


@case("H21", "audit blobs of the wrong shape for their source")
def make_wrong_shape(d: Path) -> Path:
    return build(
        d / "agent.adf",
        loop=LOOP,
        audit=[
            {"source": "loop", "data": brotli.compress(b'{"seq": 1}')},
            {"source": "file", "data": brotli.compress(b'["not", "an", "object"]')},
            {"source": "loop", "data": brotli.compress(b'[{"seq": true}, {"seq": "2"}]')},
            {"source": "loop", "data": brotli.compress(b'[{"seq": 99999999999999999999}]')},
        ],
    )


def bomb(expanded_gib: float = 1.25) -> bytes:
    """A Brotli stream of ~1 KB that expands to ``expanded_gib`` GiB of zeros."""
    c = brotli.Compressor(quality=5, lgwin=24)
    chunk = b"\0" * (16 << 20)
    parts = [c.process(chunk) for _ in range(int(expanded_gib * 64))]
    return b"".join([*parts, c.finish()])


@case("H22", "decompression bomb: ~1 KB expanding to 1.25 GiB")
def make_bomb(d: Path) -> Path:
    b = bomb()
    return build(
        d / "agent.adf",
        loop=LOOP,
        audit=[{"source": "loop", "data": b}, {"source": "file", "data": b}],
    )


@case("H23", "duplicate seqs across audit rows and the live loop")
def make_dup_seqs(d: Path) -> Path:
    return build(
        d / "agent.adf",
        loop=[row(3, "user", text("c-live")), row(4, "user", text("d"))],
        audit=[
            {"source": "loop", "rows": [row(1, "user", text("a")), row(2, "user", text("b"))]},
            {
                "source": "loop",
                "rows": [row(2, "user", text("b-rewritten")), row(3, "user", text("c"))],
            },
        ],
    )


HUGE = 24_000_000


@case("H24", "a huge single row (24 MB of text)")
def make_huge(d: Path) -> Path:
    return build(d / "agent.adf", loop=[row(1, "user", text("é" + "x" * (HUGE - 1)))])


@case("H25", "non-UTF-8 bytes in TEXT columns")
def make_non_utf8(d: Path) -> Path:
    f = build(d / "agent.adf", loop=LOOP)
    bad_content = b'[{"type":"text","text":"caf' + b"\xe9" + b' ok"}]'
    return _raw_sql(
        f,
        ("UPDATE adf_loop SET content_json = CAST(? AS TEXT) WHERE seq = 1", (bad_content,)),
        ("UPDATE adf_meta SET value = CAST(? AS TEXT) WHERE key = 'adf_name'", (b"ag\xffent",)),
        ("UPDATE adf_loop SET model = CAST(? AS TEXT) WHERE seq = 2", (b"m\xfe",)),
    )


@case("H26", "numbers out of range: huge tokens, far-future times, text in integer columns")
def make_out_of_range(d: Path) -> Path:
    return build(
        d / "agent.adf",
        loop=[
            row(1, "user", text("a"), created_at=10**18),
            row(2, "assistant", text("b"), tokens={"input": 10**19, "output": 2}),
            row(3, "assistant", text("c"), tokens=str(10**30)),
        ],
        audit=[{"source": "loop", "rows": [row(0, "user", text("z"))], "end_seq": 1}],
        not_null=False,
        sql=[
            "UPDATE adf_audit SET entry_count = 'many', size_bytes = 1.5, created_at = 1e300",
            'INSERT INTO adf_inbox (id, "from", content, received_at, sent_at) '
            "VALUES (5, NULL, X'FF00', 'yesterday', 1e300)",
            'INSERT INTO adf_outbox (id, "from", "to", content, created_at, status_code) '
            "VALUES ('o', 'a', 'b', 'c', 10000000000000000000, 'teapot')",
            "INSERT INTO adf_timers (schedule_json, next_wake_at, created_at, run_count, expired)"
            " VALUES ('{}', 1, 1, 'many', 7)",
        ],
    )


def nested(depth: int) -> str:
    """JSON text of ``"core"`` inside ``depth`` arrays (written by hand: json.dumps recurses)."""
    return "[" * depth + '"core"' + "]" * depth


@case("H27", "content nested 1000 levels deep (live rows and an audit blob)")
def make_deep(d: Path) -> Path:
    use_row = '[{"type":"tool_use","id":"t1","name":"fs_write","input":{"x":' + nested(1000) + "}}]"
    result_row = '[{"type":"tool_result","tool_use_id":"t1","content":' + nested(1000) + "}]"
    blob = '[{"seq":1,"role":"user","content_json":' + nested(1000) + "}]"
    return build(
        d / "agent.adf",
        loop=[row(2, "assistant", use_row), row(3, "user", result_row)],
        audit=[{"source": "loop", "data": brotli.compress(blob.encode())}],
    )


@case(
    "H28",
    "adf_loop is a view over adf_identity",
    UnsafeSchemaError,
    "adf_loop is a view",
)
def make_identity_view(d: Path) -> Path:
    return build(
        d / "agent.adf",
        sql=[
            "DROP TABLE adf_loop",
            "CREATE VIEW adf_loop AS SELECT 1 AS seq, 'user' AS role, "
            "json_array(json_object('type', 'text', 'text', CAST(value AS TEXT))) AS content_json, "
            "0 AS created_at FROM adf_identity",
        ],
    )


@case("H32", "a directory named .adf", adfkit.AdfError, "is a directory")
def make_dir(d: Path) -> Path:
    (d / "agent.adf").mkdir()
    return d / "agent.adf"


@case(
    "H33",
    "seq that is not an integer (hostile schema)",
    adfkit.MalformedRowError,
    r"adf_loop seq='abc'",
)
def make_text_seq(d: Path) -> Path:
    return build(
        d / "agent.adf",
        sql=[
            "DROP TABLE adf_loop",
            "CREATE TABLE adf_loop (seq TEXT, role TEXT, content_json TEXT, created_at INTEGER)",
            "INSERT INTO adf_loop VALUES ('abc', 'user', '[]', 1)",
        ],
    )


@case("H34", "missing file", adfkit.AdfError, "no such file")
def make_missing(d: Path) -> Path:
    return d / "agent.adf"


@case("H35", "valid header followed by garbage pages", adfkit.CorruptFileError, "malformed")
def make_garbage(d: Path) -> Path:
    f = build(d / "agent.adf", loop=LOOP)
    data = bytearray(f.read_bytes())
    rnd = __import__("random").Random(7)
    for i in range(100, len(data)):
        data[i] = rnd.randrange(256)
    f.write_bytes(bytes(data))
    return f


@case(
    "H36",
    "adf_audit a virtual table (FTS5 over adf_identity)",
    UnsafeSchemaError,
    "virtual table",
)
def make_virtual(d: Path) -> Path:
    return build(
        d / "agent.adf",
        loop=LOOP,
        sql=[
            "DROP TABLE adf_audit",
            "CREATE VIRTUAL TABLE adf_audit USING fts5(source, data, content='adf_identity', "
            "content_rowid='rowid')",
        ],
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """Every case built once, each in its own folder."""
    root = tmp_path_factory.mktemp("hostile")
    out = {}
    for cid, c in CASES.items():
        d = root / cid
        d.mkdir()
        out[cid] = c.make(d)
    return out


@dataclass(frozen=True)
class Used:
    """One case's file after every public read of it (:func:`use_quietly`): what the reads
    gave, and the file's folder before and after."""

    loop_is_frame: bool  # the reads worked: loop() gave a frame
    error: adfkit.AdfError | None  # or the AdfError they raised
    before: tuple[dict[str, Any], list[str]]  # fingerprint and names of the folder
    after: tuple[dict[str, Any], list[str]]


@pytest.fixture(scope="module")
def used(built) -> Callable[[str], Used]:
    """Each case's file exercised once, on first need, for the generic checks that look at
    the outcome and at the folder (an exception other than AdfError propagates)."""
    cache: dict[str, Used] = {}

    def get(cid: str) -> Used:
        if cid not in cache:
            f = built[cid]
            before = (fingerprint(f.parent), sorted(os.listdir(f.parent)))
            try:
                res, _ = use_quietly(f)
                ok, error = isinstance(res["loop"], pd.DataFrame), None
            except adfkit.AdfError as exc:
                ok, error = False, exc
            after = (fingerprint(f.parent), sorted(os.listdir(f.parent)))
            cache[cid] = Used(ok, error, before, after)
        return cache[cid]

    return get


def _fresh(tmp_path: Path, cid: str) -> Path:
    d = tmp_path / cid
    d.mkdir()
    return CASES[cid].make(d)


# -- generic checks over every case ----------------------------------------------------------


@pytest.mark.parametrize("cid", sorted(CASES))
def test_case_outcome(cid, built, used):
    """Either every public read works, or the expected AdfError subclass names the file."""
    c, f, u = CASES[cid], built[cid], used(cid)
    if c.error is None:
        if u.error is not None:
            raise u.error
        assert u.loop_is_frame
        return
    assert u.error is not None, f"{cid}: every read worked; expected {c.error.__name__}"
    assert type(u.error) is c.error or (c.error is adfkit.AdfError and isinstance(u.error, c.error))
    assert str(f) in str(u.error)
    assert re.search(c.match, str(u.error)), str(u.error)


@pytest.mark.parametrize("cid", sorted(CASES))
def test_case_touches_nothing(cid, used):
    """The case's folder is byte-identical afterwards and gains no file (not even -shm)."""
    u = used(cid)
    assert u.after[0] == u.before[0]
    assert u.after[1] == u.before[1]


@pytest.mark.parametrize("cid", sorted(CASES))
def test_case_cli_info(cid, built, capsys):
    """``adfkit info``: exit 2 and exactly one ``adfkit: error: <file>: ...`` line for the
    cases that raise; otherwise exit 0 and no traceback (warnings are one line each)."""
    c, f = CASES[cid], built[cid]
    rc = cli.main(["info", str(f)])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert "Traceback" not in err
    if c.error is not None and (rc == 2 or cid not in _INFO_SURVIVES):
        assert rc == 2
        assert len(lines) == 1 and lines[0].startswith(f"adfkit: error: {f}: "), err
        assert out == ""
    else:
        assert rc == 0, err
        assert all(line.startswith("adfkit: warning: ") for line in lines), err
        assert "agent" in out


#: Cases whose damage ``info`` (COUNT queries only) never touches.
_INFO_SURVIVES = {"H33"}


def test_every_case_has_a_value_test():
    """Each case id has its own ``test_hNN_...`` function below (the table checks the rest)."""
    names = {n for n, _ in inspect.getmembers(sys.modules[__name__], inspect.isfunction)}
    for cid in CASES:
        assert any(n.startswith(f"test_{cid.lower()}_") for n in names), cid


# -- values each case must produce -----------------------------------------------------------


def test_h01_empty_file(built):
    with pytest.raises(adfkit.NotSQLiteError, match=r"agent.adf: empty file \(0 bytes\)"):
        adfkit.open_adf(built["H01"])


def test_h02_text_file(built):
    with pytest.raises(adfkit.NotSQLiteError, match="first bytes are not the SQLite header"):
        adfkit.open_adf(built["H02"])


def test_h03_sqlite_without_adf_tables(built):
    with pytest.raises(adfkit.NotAdfError, match="no adf_meta, no adf_loop"):
        adfkit.open_adf(built["H03"])


def test_h04_newer_schema_warns_once_and_reads_known_columns(built):
    res, caught = use_quietly(built["H04"])
    newer = [w for w in caught if issubclass(w.category, adfkit.NewerSchemaWarning)]
    assert len(newer) == 1 and "schema version 31 is newer" in str(newer[0].message)
    assert res["info"]["schema_version"] == 31
    loop = res["loop"]
    assert loop["seq"].tolist() == [1, 2, 3] and "mood" not in loop.columns
    assert loop["tokens_total"].tolist()[1] == 13
    assert res["tool_calls"]["result_preview"].tolist() == ["file body"]


def test_h05_schema_27_layout(built):
    res, caught = use_quietly(built["H05"])
    assert not [w for w in caught if re.search(r"adf_(loop|audit|meta)|schema", str(w.message))]
    assert res["loop"]["ord"].isna().all()
    a = res["audit"]
    assert a["start_seq"].isna().all() and a["end_seq"].isna().all()
    assert a["start_at"].iloc[0] == pd.Timestamp(BASE_MS + 1000, unit="ms", tz="UTC")
    assert res["history"]["seq"].tolist() == [1, 2, 3, 4]
    assert res["history"]["tokens_total"].fillna(-1).tolist() == [-1, 13, -1, 55]


def test_h06_pre_v14_layout(built):
    with adfkit.open_adf(built["H06"]) as agent:
        assert agent.schema_version == 12 and "schema_version" in agent.meta()
        loop = agent.loop()
        assert loop["text"].tolist() == ["old", "reply"]
        assert loop["tokens_total"].fillna(-1).tolist() == [-1, 55]
        assert loop["model"].isna().all() and loop["created_at"].isna().all()
        assert agent.info()["first_live_at"] is None


def test_h07_truncated_file_names_table(built):
    with (
        pytest.raises(
            adfkit.CorruptFileError,
            match=r"agent.adf: damaged SQLite file \(reading (the schema|adf_loop)\)",
        ),
        adfkit.open_adf(built["H07"]) as agent,
    ):
        agent.loop()


def test_h08_truncated_header(built):
    with pytest.raises(adfkit.CorruptFileError, match="truncated SQLite header"):
        adfkit.open_adf(built["H08"])


def test_h14_bad_content_json_is_kept_and_flagged(built):
    with (
        pytest.warns(
            adfkit.AdfWarning, match=r"adf_loop: 1 row\(s\) with unreadable content_json \(seq 1\)"
        ),
        adfkit.open_adf(built["H14"]) as agent,
    ):
        loop = agent.loop()
    assert loop["malformed"].tolist() == [True, False, False]
    assert loop["kind"].tolist()[0] == "unknown" and loop["content"].tolist()[0] == "[{not json"
    assert loop["n_blocks"].tolist() == [0, 2, 1]


def test_h15_bad_tokens_is_kept_and_flagged(built):
    with (
        pytest.warns(adfkit.AdfWarning, match=r"unreadable tokens \(seq 2\)"),
        adfkit.open_adf(built["H15"]) as agent,
    ):
        loop = agent.loop()
    assert loop["malformed"].tolist() == [False, True]
    assert loop["tokens_total"].isna().all() and loop["text"].tolist() == ["hello", "x"]


def test_h16_bad_config_gives_defaults(built):
    with (
        pytest.warns(adfkit.AdfWarning, match=r"adf_config id=1: config_json is not a JSON object"),
        adfkit.open_adf(built["H16"]) as agent,
    ):
        assert agent.config() == {}
        assert agent.compact_threshold() == 100_000
        assert agent.audit_settings() == dict.fromkeys(("loop", "inbox", "outbox", "files"), False)


def test_h17_unknown_blocks(built):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with adfkit.open_adf(built["H17"]) as agent:
            loop = agent.loop()
            blocks = agent.blocks()
    # Every element is an object, so the row is readable; unknown types are listed as they are.
    assert loop["malformed"].tolist() == [False] and not caught
    assert loop["block_types"].tolist() == ["hologram,text,None,7"]
    assert loop["text"].tolist() == ["seen"] and loop["n_blocks"].tolist() == [4]
    assert blocks["type"].fillna("NA").tolist() == ["hologram", "text", "NA", "7"]


def test_h18_nulls(built):
    res, caught = use_quietly(built["H18"])
    loop = res["loop"]
    assert loop["seq"].tolist() == [1, 2, 3]
    assert pd.isna(loop["role"].iloc[0]) and loop["kind"].iloc[0] == "unknown"
    assert pd.isna(loop["created_at"].iloc[0])
    # A NULL role (or created_at) is damage: flagged and warned about, like other row damage.
    assert loop["malformed"].tolist() == [True, True, False]
    assert res["config"] == {} and res["name"] == "agent"
    assert set(res["blob_errors"]) == {1}
    assert "data is NoneType" in str(res["blob_errors"][1])
    assert res["files_content"] == {"mind.md": b""}
    msgs = [str(w.message) for w in caught]
    assert any("adf_audit id=1" in m and "missing from history()" in m for m in msgs)
    assert any("with a NULL role or created_at (seq 1" in m for m in msgs)


def _check_bad_blobs(path: Path, expected: dict[int, str]) -> None:
    """decode_audit raises BlobError naming file and audit row; history() warns and goes on,
    or raises with errors="raise"."""
    res, caught = use_quietly(path)
    assert res["blob_errors"].keys() == expected.keys()
    for aid, text_ in expected.items():
        e = res["blob_errors"][aid]
        assert type(e) is adfkit.BlobError
        assert str(e).startswith(f"{path}: adf_audit id={aid}: ") and text_ in str(e), str(e)
    assert res["history"]["seq"].tolist() == [1, 2, 3]  # the live rows
    msgs = [str(w.message) for w in caught if issubclass(w.category, adfkit.AdfWarning)]
    for aid, text_ in expected.items():
        if "'file'" not in text_:
            assert any(f"adf_audit id={aid}:" in m and "missing from history()" in m for m in msgs)
    with adfkit.open_adf(path) as agent, pytest.raises(adfkit.BlobError, match="adf_audit id="):
        agent.history(errors="raise")


def test_h19_blob_not_brotli(built):
    _check_bad_blobs(built["H19"], {1: "not valid Brotli"})


def test_h20_blob_not_json(built):
    _check_bad_blobs(built["H20"], {1: "not valid JSON", 2: "not valid UTF-8"})


def test_h21_blob_wrong_shape(built):
    _check_bad_blobs(
        built["H21"],
        {
            1: "source 'loop' should decode to a JSON array, got dict",
            2: "source 'file' should decode to a JSON object, got list",
            3: "element 0 of the loop blob is not a row with an integer seq",
            4: "element 0 of the loop blob is not a row with an integer seq",
        },
    )


def test_h22_decompression_bomb_is_capped(built):
    with adfkit.open_adf(built["H22"], max_blob_bytes=8 << 20) as agent:
        for aid in (1, 2):
            with pytest.raises(
                adfkit.BlobTooLargeError,
                match=rf"adf_audit id={aid}: blob decompresses past the cap of 8,388,608 bytes",
            ):
                agent.decode_audit(aid)
        with pytest.warns(adfkit.AdfWarning, match="id=1"):
            assert agent.history()["seq"].tolist() == [1, 2, 3]


BOMB_PROBE = textwrap.dedent(
    """
    import resource, sys, warnings
    import adfkit
    cap = int(sys.argv[2])
    with adfkit.open_adf(sys.argv[1], max_blob_bytes=cap) as agent:
        agent.loop()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for aid in (1, 2):
            try:
                agent.decode_audit(aid)
                raise SystemExit("the bomb was decoded")
            except adfkit.BlobTooLargeError:
                pass
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent.history()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print((peak - base) * 1024)
    """
)


def test_h22_bomb_memory_stays_bounded(built):
    """The bomb expands to 1.25 GiB; decoding it (twice, plus history()) raises
    BlobTooLargeError and the process's peak RSS grows by less than cap + 64 MiB. Brotli's C
    allocations are invisible to tracemalloc, so the peak RSS of a fresh process is measured."""
    cap = 64 << 20
    out = subprocess.run(
        [sys.executable, "-c", BOMB_PROBE, str(built["H22"]), str(cap)],
        capture_output=True,
        text=True,
        check=True,
    )
    grew = int(out.stdout.split()[-1])
    assert grew < cap + (64 << 20), f"peak RSS grew by {grew / 2**20:.0f} MiB"


def test_h23_duplicate_seqs_prefer_oldest_blob(built):
    res, _ = use_quietly(built["H23"])
    h = res["history"]
    assert h["seq"].tolist() == [1, 2, 3, 4]
    assert h["text"].tolist() == ["a", "b", "c", "d"]
    assert h["copies"].tolist() == [1, 2, 2, 1]
    assert h["origin"].tolist() == ["audit", "audit", "audit", "live"]
    assert h["audit_id"].fillna(0).tolist() == [1, 1, 2, 0]


def test_h24_huge_row(built):
    with adfkit.open_adf(built["H24"]) as agent:
        loop = agent.loop()
        assert loop["chars"].tolist() == [HUGE]
        assert loop["est_tokens"].tolist() == [-(-(HUGE + 16) * 2 // 7)]
        assert len(loop["text"].iloc[0]) == HUGE
        assert agent.info()["loop_rows"] == 1


def test_h25_non_utf8_text_is_replaced_with_a_warning(built):
    res, caught = use_quietly(built["H25"])
    msgs = [str(w.message) for w in caught]
    assert any("adf_meta holds text that is not valid UTF-8" in m for m in msgs)
    assert any("adf_loop holds text that is not valid UTF-8" in m for m in msgs)
    assert res["loop"]["text"].tolist()[0] == "caf\ufffd ok"
    assert res["loop"]["model"].tolist()[1] == "m\ufffd"
    assert res["meta"]["adf_name"] == "ag\ufffdent"


def test_h26_out_of_range_numbers(built):
    res, caught = use_quietly(built["H26"])
    loop = res["loop"]
    assert pd.isna(loop["created_at"].iloc[0])  # 10**18 ms is beyond year 2262
    assert loop["malformed"].tolist() == [False, True, True]
    assert pd.isna(loop["tokens_input"].iloc[1]) and loop["tokens_output"].iloc[1] == 2
    # A row with a count out of range gets no total: a damaged count is flagged, not summed.
    assert loop["tokens_total"].isna().tolist() == [True, True, True]
    a = res["audit"]
    assert pd.isna(a["entry_count"].iloc[0]) and pd.isna(a["size_bytes"].iloc[0])
    assert pd.isna(a["created_at"].iloc[0])
    inbox, outbox, timers = res["inbox"], res["outbox"], res["timers"]
    assert inbox["content"].tolist() == ["\ufffd\x00"] and inbox["id"].tolist() == ["5"]
    assert inbox["received_at"].isna().all() and inbox["sent_at"].isna().all()
    assert outbox["status_code"].isna().all() and outbox["created_at"].isna().all()
    assert timers["run_count"].isna().all() and timers["expired"].tolist() == [True]
    # info() takes the first and last stamped rows by seq: row 1's 10**18 ms is out of range.
    assert res["info"]["first_live_at"] is None
    last = pd.Timestamp(BASE_MS + 3 * 1000, unit="ms", tz="UTC").isoformat()
    assert res["info"]["last_live_at"] == last


def test_h27_deep_nesting(built):
    res, _ = use_quietly(built["H27"])
    loop = res["loop"]
    assert loop["seq"].tolist() == [2, 3]
    assert loop["tool_names"].tolist() == ["fs_write", ""]
    assert loop["kind"].tolist() == ["assistant", "tool_result"]
    assert res["blocks"]["type"].tolist() == ["tool_use", "tool_result"]
    assert res["blocks"]["text"].tolist()[1] == "core"  # String([[...["core"]...]]) in JS
    assert 1 in res["history"]["seq"].tolist()


def test_h28_identity_view_is_refused(built):
    with pytest.raises(UnsafeSchemaError, match="can select other tables, including adf_identity"):
        adfkit.open_adf(built["H28"])


def test_h32_not_a_regular_file(tmp_path):
    with pytest.raises(adfkit.AdfError, match="is a directory"):
        adfkit.open_adf(_fresh(tmp_path, "H32"))
    fifo = tmp_path / "pipe.adf"
    os.mkfifo(fifo)
    with pytest.raises(adfkit.AdfError, match=r"pipe.adf: not a regular file"):
        adfkit.open_adf(fifo)  # would block forever if it were opened for reading


def test_h33_non_integer_seq(built):
    with (
        pytest.raises(
            adfkit.MalformedRowError, match=r"agent.adf: adf_loop seq='abc': seq is not an integer"
        ),
        adfkit.open_adf(built["H33"]) as agent,
    ):
        agent.loop()


def test_h34_missing_file(tmp_path):
    with pytest.raises(adfkit.AdfError, match=r"agent.adf: no such file"):
        adfkit.open_adf(tmp_path / "agent.adf")
    assert list(tmp_path.iterdir()) == []


def test_h35_garbage_pages(built):
    with (
        pytest.raises(adfkit.CorruptFileError, match="agent.adf: damaged SQLite file"),
        adfkit.open_adf(built["H35"]) as agent,
    ):
        exercise(agent)


def test_h36_virtual_table_is_refused(built):
    with pytest.raises(UnsafeSchemaError, match="adf_audit is a virtual table"):
        adfkit.open_adf(built["H36"])


# -- the table in ROBUSTNESS.md is kept in step ----------------------------------------------

ROBUSTNESS = Path(__file__).with_name("ROBUSTNESS.md")
_TEST_FILES = (
    "test_hostile.py",
    "test_readonly.py",
    "test_secrets.py",
    "test_properties.py",
    "test_open_hardening.py",
    "test_runtime_cases.py",
    "test_crafted.py",
    "test_cli.py",
    "test_transcript_hostile.py",
    "test_widgets.py",
    "test_export.py",
    "test_crafted_formats.py",
    "test_report.py",
    "test_claude_code_chains.py",
    "test_well_formed.py",
    "test_unknown_summary.py",
    "test_openclaw.py",
)


def robustness_rows() -> list[dict[str, str]]:
    """Rows of the case table: ``| id | case | outcome | test file |``."""
    rows = []
    for line in ROBUSTNESS.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"H\d{2,3}", cells[0]):
            rows.append({"id": cells[0], "case": cells[1], "outcome": cells[2], "file": cells[3]})
    return rows


def test_robustness_table_matches_the_tests():
    """Every id in ROBUSTNESS.md has a ``test_hNN_`` function in the file it names, every such
    function is in the table, and the outcome of each matrix case names its error class."""
    rows = robustness_rows()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids in ROBUSTNESS.md"
    functions: dict[str, set[str]] = {}
    for name in _TEST_FILES:
        src = Path(__file__).with_name(name).read_text()
        for cid in re.findall(r"^def test_(h\d{2,3})_", src, flags=re.M):
            functions.setdefault(cid.upper(), set()).add(name)
    for r in rows:
        assert r["file"].strip("`") in functions.get(r["id"], set()), r
    assert set(functions) == set(ids)
    by_id = {r["id"]: r for r in rows}
    for cid, c in CASES.items():
        outcome = by_id[cid]["outcome"]
        if c.error is None:
            assert outcome.startswith("reads"), (cid, outcome)
        else:
            assert outcome.startswith(f"`{c.error.__name__}`"), (cid, outcome)


def test_cli_unexpected_exception_is_one_line_too(built, monkeypatch, capsys):
    """A bug (not bad input) still gives one ``adfkit: error:`` line and exit 2, no traceback;
    ADFKIT_TRACEBACK=1 re-raises for debugging."""

    def boom(*a: Any, **k: Any) -> Any:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(_cli_info, "open_agent", boom)
    assert cli.main(["info", str(built["H04"])]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("adfkit: error: internal error (ZeroDivisionError")
    monkeypatch.setenv("ADFKIT_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["info", str(built["H04"])])


def test_h27_an_archived_row_too_deep_to_write_again_is_named(tmp_path):
    """An audit blob element whose blocks nest a tool input 1,000 levels deep: parsed (under
    orjson's 1,024), but too deep to serialise again. On main its ``content`` became NA without
    a finding (its tool call gone from ``tool_calls()``); now ``unreadable content_json`` names
    its seq, and the row next to it keeps its content."""
    deep = '[{"type":"tool_use","id":"t1","name":"fs_write","input":{"x":' + nested(1000) + "}}]"
    at = f',"created_at":{BASE_MS}'
    blob = (
        f'[{{"seq":1,"role":"assistant"{at},"content_json":' + deep + "},"
        f'{{"seq":2,"role":"user"{at},"content_json":[{{"type":"text","text":"kept"}}]}}]'
    )
    path = build(
        tmp_path / "agent.adf",
        loop=LOOP,
        audit=[{"source": "loop", "data": brotli.compress(blob.encode())}],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)
        a = adfkit.open(path)
        h = a.history().set_index("seq")
        found = a.integrity()
    assert pd.isna(h.loc[1, "content"]) and h.loc[2, "text"] == "kept"
    bad = found[found["detail"].str.contains("unreadable content_json")]
    assert len(bad) == 1 and tuple(bad["rows"].iloc[0]) == (1,), found
