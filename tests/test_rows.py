"""The one row rule: a row gives the same columns whether it is live or archived.

Live rows (``adf_loop``, JSON text) and archived rows (a decoded ``loop`` blob, parsed JSON) go
through the same functions (:mod:`adfkit._core.rows`); these tests store the same rows both ways and
compare every derived column, and check the values against hand-computed ones.
"""

from __future__ import annotations

import json
import warnings

import brotli
import pandas as pd
import pytest
from adfbuild import BASE_MS, build, result, row, text, use
from hypothesis import given, settings
from hypothesis import strategies as st

import adfkit
import adfkit._core.blobs
from adfkit._base.js import js_length
from adfkit._core import rows as _rows

#: Columns that say where a row is stored, not what it is.
WHERE = ["position", "origin", "audit_id", "epoch", "copies"]


def assert_live_equals_archived(tmp_path, rows) -> None:
    """``rows`` stored live in one file and archived in another give the same row columns."""
    live = build(tmp_path / "live.adf", loop=rows)
    archived = build(tmp_path / "archived.adf", loop=[], audit=[{"source": "loop", "rows": rows}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(live) as a, adfkit.open_adf(archived) as b:
            ha = a.history().drop(columns=WHERE)
            hb = b.history().drop(columns=WHERE)
    # ``content`` is the stored JSON text, which may be spelled differently; it parses the same.
    assert [json.loads(c) for c in ha.pop("content")] == [json.loads(c) for c in hb.pop("content")]
    pd.testing.assert_frame_equal(ha, hb, check_exact=True)


def test_edge_cases_live_and_archived(tmp_path):
    """Malformed content and tokens, legacy tokens, ord, astral text, duplicates, bad blobs."""
    emoji = "naïve 🙂 — 日本"
    a1 = [
        row(1, "user", text("A scheduled timer has fired. " + emoji)),
        row(
            2,
            "assistant",
            [use("t1", "fs_read", {"p": ["x", None, 1.5, True, {"k": emoji}]})],
            tokens={"input": 10, "output": 2, "cache_read": 4},
        ),
        row(3, "user", [result("t1", "ok " + emoji)]),
        row(4, "assistant", 42, tokens={"input": "x", "output": 1}),
        row(5, "assistant", text("legacy"), tokens=123),
        row(5, "assistant", text("same seq twice in one blob")),
        row(6, "user", [{"type": "image_url", "image_url": {"url": "data:x" * 30}}, 7]),
        row(7, "user", [{"type": "thinking", "thinking": "hm", "reasoning_details": [{"a": 1}]}]),
        row(8, "user", text("[Context: dynamic_instructions | origin=x] hello")),
        row(9, "weird", text("odd role"), created_at=0),
        row(10, "user", [{"type": "tool_result", "tool_use_id": "t", "content": [1, None, "a"]}]),
    ]
    a2 = [
        row(4, "assistant", text("later copy of 4")),
        row(
            11,
            "user",
            text("[Loop Compacted, audited] summary"),
            ord=3,
            tokens={"input": 5, "output": 1, "reasoning": 7},
        ),
        row(12, "user", text("[USER INTERRUPT — stop]")),
    ]
    live = [
        row(11, "user", text("[Loop Compacted, audited] summary"), ord=3),
        row(12, "user", text("live copy of 12")),
        row(13, "assistant", [{"type": "text", "text": 5}, {"type": None}], tokens="{bad"),
        row(14, "user", {"type": "text", "text": "object content"}),
        row(15, "user", '"a plain string"'),
    ]
    unique = {r["seq"]: r for r in [*a1, *a2]}  # the rows a blob can hold
    assert_live_equals_archived(tmp_path, [unique[k] for k in sorted(unique)])
    p = build(
        tmp_path / "edge.adf",
        loop=live,
        audit=[
            {"source": "loop", "rows": a1},
            {"source": "loop", "rows": a2},
            {"source": "loop", "data": b"not brotli", "start_seq": 20, "end_seq": 22},
            {"source": "loop", "data": brotli.compress(b"[]"), "entry_count": 0},
            {"source": "loop", "data": brotli.compress(b'{"not": "an array"}')},
        ],
        highest_seq=30,
    )
    with adfkit.open_adf(p) as agent, warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        h = agent.history()
    msgs = [str(w.message) for w in got]
    assert any("adf_audit id=3" in m and "missing from history()" in m for m in msgs)
    assert any("adf_audit id=1" in m and "unreadable content_json" in m for m in msgs)
    # Independent facts: seq 4 keeps the oldest blob's (malformed) copy, held twice;
    # seq 12 keeps the archived copy over the live one; the summary sorts by its ord.
    by_seq = h.set_index("seq")
    assert by_seq.loc[4, "malformed"] and by_seq.loc[4, "copies"] == 2
    assert by_seq.loc[12, "text"] == "[USER INTERRUPT — stop]"
    assert by_seq.loc[11, "position"] == by_seq.loc[3, "position"] + 1
    # Estimator chars of the tool_use (§9.1): name 7 + obj(input). The emoji string is 13 UTF-16
    # units: {"k": s} = 2 + (1 + 15 + 2) = 20; the list = 2 + 4 + 5 + 6 + 6 + 21 = 44;
    # {"p": list} = 2 + (1 + 44 + 2) = 49.
    assert by_seq.loc[2, "chars"] == 7 + 49
    assert by_seq.loc[1, "created_at"] == pd.Timestamp(BASE_MS + 1000, unit="ms", tz="UTC")
    assert pd.isna(by_seq.loc[9, "created_at"])


def test_history_decodes_each_blob_once(tmp_path, monkeypatch):
    """history() and the frames built on it decode every loop blob exactly once per handle."""
    p = build(
        tmp_path / "a.adf",
        loop=[row(5, "user", text("live"))],
        audit=[{"source": "loop", "rows": [row(i, "user", text(f"r{i}"))]} for i in (1, 2, 3)],
    )
    calls: list[int] = []
    real = adfkit._core.blobs.unpack  # the parsing step of every decode (decode() calls it too)

    def counting(raw, source, **kw):
        calls.append(kw.get("audit_id"))
        return real(raw, source, **kw)

    monkeypatch.setattr(adfkit._core.blobs, "unpack", counting)
    with adfkit.open_adf(p) as agent:
        agent.history()
        agent.events()
        agent.blocks(history=True)
        agent.history_gaps()
        agent.history()
    assert sorted(calls) == [1, 2, 3]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_js_length_counts_utf16_units(s):
    """The C-level js_length equals counting UTF-16 code units one character at a time."""
    assert js_length(s) == sum(2 if ord(ch) > 0xFFFF else 1 for ch in s)


@pytest.mark.parametrize("shuffle", ["runs", "swaps", "random"])
def test_gather_equals_take(shuffle):
    """Zero-copy slicing by runs (or the take fallback) gives the values a plain take gives."""
    import numpy as np
    import pyarrow as pa

    from adfkit._core.loopframe import _gather

    rng = np.random.default_rng(0)
    chunks = [
        pa.array([f"c{i}r{j}" for j in range(n)], pa.large_string())
        for i, n in enumerate([5, 0, 7, 1, 12])
    ]
    n = sum(len(c) for c in chunks)
    rows = np.arange(n)
    if shuffle == "runs":
        rows = rows[rng.random(n) < 0.7]  # drop some rows, keep storage order
    elif shuffle == "swaps":
        rows[[3, 10]] = rows[[10, 3]]
    else:
        rng.shuffle(rows)
    got = _gather(chunks, rows, pa.array(rows))
    want = pa.chunked_array(chunks, pa.large_string()).take(pa.array(rows))
    assert got.to_pylist() == want.to_pylist()
    assert _gather(chunks, rows[:0], pa.array(rows[:0], pa.int64())).to_pylist() == []


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)))
    | st.sampled_from(["", "é", "🙂", "a\U0001f600b", "\u00ff" * 3]),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES)
def test_the_fast_estimator_size_is_obj_chars(value):
    """The unrolled hot path of the estimator counts exactly what the rule (§9.1) counts."""
    assert _rows._obj(value) == _rows.obj_chars(value)


def test_the_estimator_size_by_hand():
    # {"a":"é🙂",  "b":[1,null,true]}: 2 + (1+2) + (1+2) + ("é🙂": 3 units + 2) + (2+3) + 5 + 4 + 5
    value = {"a": "é🙂", "b": [1, None, True]}
    assert _rows.obj_chars(value) == 2 + 3 + 3 + 5 + 5 + 5 + 4 + 5
    assert _rows._obj(value) == _rows.obj_chars(value)
