"""Property tests (hypothesis): random valid loops, random damage (case H41 of ROBUSTNESS.md).

For any generated agent file, damaged or not, the reader either raises an
:class:`adfkit.AdfError` or returns consistent tables: ``loop()`` and ``audit()`` have as many
rows as SQL counts, ``history()`` has unique seqs in ``(COALESCE(ord, seq), seq)`` order and
holds every live seq, and the file's folder is unchanged.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import warnings
from pathlib import Path
from typing import Any

import brotli
import pandas as pd
from adfbuild import build, result, row, text, use
from conftest import fingerprint
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import adfkit

SETTINGS = settings(
    max_examples=int(os.environ.get("ADFKIT_HYPOTHESIS_EXAMPLES", "50")),
    # The same examples every run, so `make test` passes or fails the same way each time; set
    # ADFKIT_HYPOTHESIS_RANDOM=1 to explore new ones (a failure found so becomes an @example).
    derandomize=os.environ.get("ADFKIT_HYPOTHESIS_RANDOM") != "1",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
contents = st.one_of(
    words.map(text),
    words.map(json.dumps),  # a plain-string message (content_json is a JSON string)
    st.tuples(words, words).map(lambda t: [use("u1", t[0] or "tool", {"q": t[1]})]),
    words.map(lambda t: [result("u1", t)]),
    words.map(lambda t: text(f"[Context: system_prompt] {t}")),
    words.map(lambda t: text(f"[Loop Compacted, audited] {t}")),
    st.just([{"type": "mystery", "x": [1, {"y": None}]}]),
)
tokens = st.one_of(
    st.none(),
    st.integers(0, 10**6),
    st.fixed_dictionaries(
        {"input": st.integers(0, 10**6), "output": st.integers(0, 10**5)},
        optional={"cache_read": st.integers(0, 10**6), "reasoning": st.integers(0, 10**4)},
    ),
)


@st.composite
def agents(draw: Any) -> dict[str, Any]:
    """A valid loop of 0-14 rows: the first ``k`` archived in 0-3 (possibly overlapping) loop
    blobs, the rest live; some rows carry an ``ord``."""
    n = draw(st.integers(0, 14))
    rows = []
    for seq in range(1, n + 1):
        role = draw(st.sampled_from(["user", "assistant"]))
        ord_ = draw(st.one_of(st.none(), st.integers(0, seq - 1))) if seq > 1 else None
        rows.append(row(seq, role, draw(contents), tokens=draw(tokens), ord=ord_))
    k = draw(st.integers(0, n))
    blobs = []
    for _ in range(draw(st.integers(0, 3)) if k else 0):
        lo = draw(st.integers(0, k - 1))
        hi = draw(st.integers(lo + 1, k))
        blobs.append({"source": "loop", "rows": rows[lo:hi]})
    return {"loop": rows[k:], "audit": blobs}


damages = st.one_of(
    st.just(("none",)),
    st.tuples(st.just("truncate"), st.floats(0.0, 1.0)),
    st.tuples(
        st.just("flip"),
        st.lists(st.tuples(st.floats(0, 1), st.integers(1, 255)), min_size=1, max_size=8),
    ),
    st.tuples(st.just("bad_json"), st.sampled_from(["content_json", "tokens", "config"])),
    st.tuples(
        st.just("bad_blob"),
        st.sampled_from([b"", b"junk", brotli.compress(b"{"), brotli.compress(b'{"a":1}')]),
    ),
    st.tuples(st.just("null"), st.sampled_from(["role", "content_json", "created_at", "data"])),
)


def damage(path: Path, how: tuple) -> None:
    """Apply one kind of damage to a freshly built file (test code; never on an input)."""
    kind = how[0]
    if kind == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * how[1])])
    elif kind == "flip":
        data = bytearray(path.read_bytes())
        for frac, x in how[1]:
            i = min(int(len(data) * frac), len(data) - 1)
            data[i] ^= x
        path.write_bytes(bytes(data))
    elif kind in ("bad_json", "bad_blob", "null"):
        con = sqlite3.connect(path)
        if kind == "bad_json" and how[1] == "config":
            con.execute("UPDATE adf_config SET config_json = '{oops'")
        elif kind == "bad_json":
            con.execute(
                f"UPDATE adf_loop SET {how[1]} = '[{{oops' "
                "WHERE seq = (SELECT MIN(seq) FROM adf_loop)"
            )
        elif kind == "bad_blob":
            con.execute(
                "UPDATE adf_audit SET data = ? WHERE id = (SELECT MIN(id) FROM adf_audit)",
                (how[1],),
            )
        else:
            table = "adf_audit" if how[1] == "data" else "adf_loop"
            con.execute(f"UPDATE {table} SET {how[1]} = NULL")
        con.commit()
        con.close()


def sql_count(path: Path, table: str) -> int | None:
    """``COUNT(*)`` through a private copy (the test never opens the file it hands the reader)."""
    with tempfile.TemporaryDirectory() as d:
        copy = Path(d) / "copy.adf"
        copy.write_bytes(path.read_bytes())
        try:
            con = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
            try:
                return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            finally:
                con.close()
        except sqlite3.Error:
            return None


def core_tables(agent: adfkit.AgentFile) -> dict[str, Any]:
    """The reader's own tables (the full public API is exercised in test_hostile.py; here the
    examples must stay fast)."""
    res = {n: getattr(agent, n)() for n in ("loop", "audit", "history", "events", "info")}
    res["blocks"] = agent.blocks(history=True)
    res["tool_calls"] = agent.tool_calls(history=True)
    res["gaps"] = agent.history_gaps()
    for aid in res["audit"]["id"].tolist():
        try:
            agent.decode_audit(int(aid))
        except adfkit.BlobError as exc:
            assert f"adf_audit id={aid}:" in str(exc)
    return res


def check_consistent(path: Path) -> None:
    before = fingerprint(path.parent)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with adfkit.open_adf(path) as agent:
                res = core_tables(agent)
    except adfkit.AdfError as exc:
        assert str(path) in str(exc)
        assert fingerprint(path.parent) == before
        return
    assert fingerprint(path.parent) == before
    loop, audit, h = res["loop"], res["audit"], res["history"]
    assert len(loop) == sql_count(path, "adf_loop")
    assert len(audit) == sql_count(path, "adf_audit")
    seqs = h["seq"].astype("int64")
    assert seqs.is_unique
    key = h["ord"].fillna(h["seq"]).astype("int64")
    order = pd.DataFrame({"k": key, "s": seqs}).sort_values(["k", "s"], kind="stable").index
    assert list(order) == list(range(len(h))), "history() is not in (COALESCE(ord, seq), seq) order"
    assert set(loop["seq"].astype("int64")) <= set(seqs)
    assert h["position"].tolist() == list(range(len(h)))
    assert (h["copies"] >= 1).all()


@SETTINGS
@given(agent=agents())
def test_h41_random_valid_agents_read_back_exactly(agent):
    """Undamaged: no error, and history() is exactly the union of live and archived seqs."""
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d) / "a"
        folder.mkdir()
        f = build(folder / "agent.adf", **agent)
        check_consistent(f)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with adfkit.open_adf(f) as a:
                h = a.history()
        expected = {r["seq"] for r in agent["loop"]} | {
            r["seq"] for b in agent["audit"] for r in b["rows"]
        }
        assert sorted(h["seq"].astype("int64")) == sorted(expected)


@SETTINGS
@given(agent=agents(), how=damages)
# a byte of sqlite_master's names flipped to invalid UTF-8: sqlite3 raised UnicodeDecodeError
@example(agent={"loop": [], "audit": []}, how=("flip", [(0.734375, 128)]))
def test_h41_random_damage_is_an_error_or_consistent(agent, how):
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d) / "a"
        folder.mkdir()
        f = build(folder / "agent.adf", not_null=how[0] != "null", **agent)
        damage(f, how)
        check_consistent(f)


def test_h41_json_payloads_survive_round_trip():
    """A sanity check of the generator: a blob of generated rows decodes to the same seqs."""
    rows = [row(1, "user", json.dumps("plain")), row(2, "assistant", text("x"), tokens=5)]
    with tempfile.TemporaryDirectory() as d:
        f = build(Path(d) / "a.adf", audit=[{"source": "loop", "rows": rows}])
        with adfkit.open_adf(f) as a:
            assert a.decode_audit(1)["seq"].tolist() == [1, 2]
            assert a.history()["text"].tolist() == ["plain", "x"]
