"""Work that grows with the file, not faster (issue 38: growth at most 4.4 per 4x of big-runner).
Each test counts or bounds the work itself (no timing): the rows a rule reads, the frames a
source builds, the lookups of each compaction, checked against a plain scan of the same data.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import orjson
import pandas as pd
import pytest
from adfbuild import build, row, text
from conftest import sample

import adfkit
from adfkit._analysis import usage as _usage
from adfkit._analysis.tables import result_texts
from adfkit._core.calls import reappended_pairs


class _Reads(list):
    """A column that records which rows were read."""

    def __init__(self, values: list) -> None:
        super().__init__(values)
        self.read: set[int] = set()

    def __getitem__(self, i):
        self.read.add(i)
        return super().__getitem__(i)

    def __iter__(self):
        self.read.update(range(len(self)))
        return super().__iter__()


def test_reappended_copies_read_content_and_tokens_of_the_compared_rows_only():
    """A fallback compaction's copies are found by comparing a few rows per summary: the
    content and tokens of no other row are read (before, every row's tokens were made into a
    tuple first: per-row work for a per-summary rule)."""
    n = 1_000  # 1..999: ordinary rows; 1000: the summary; 1001, 1002: copies of 998, 999
    seq = [*range(1, n + 3)]
    ordv = [None] * len(seq)
    kind = ["assistant" if q % 2 else "tool_result" for q in seq]
    kind[n - 1] = "compaction_summary"
    role = ["assistant" if k == "assistant" else "user" for k in kind]
    content = _Reads([f'[{{"type":"text","text":"row {q}"}}]' for q in seq])
    tok = _Reads(
        [[float(q), 1.0, 0.0, 0.0, 0.0, float(q) + 1] if q % 2 else [None] * 6 for q in seq]
    )
    for copy, original in ((n + 1, n - 2), (n + 2, n - 1)):
        content[copy - 1], tok[copy - 1] = content[original - 1], list(tok[original - 1])
        role[copy - 1], kind[copy - 1] = role[original - 1], kind[original - 1]
    content.read.clear()
    tok.read.clear()
    assert reappended_pairs(seq, ordv, kind, role, content, tok) == {n + 1: n - 2, n + 2: n - 1}
    compared = {n, n + 1, n - 3, n - 2}  # rows 1001, 1002 and 998, 999 (0-based)
    assert content.read <= compared and tok.read <= compared


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built: list[int] = []
    real = _usage.usage_frame

    def counted(*a, **k):
        built.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_usage, "usage_frame", counted)
    return built


def test_the_usage_frame_is_built_once_per_source(monkeypatch):
    """usage(), the compaction audit and the missed compactions share one usage frame at the
    shipped prices (each built its own before); a price table of the caller's is used afresh."""
    built = _counted(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(sample("long-runner"))
    first = agent.usage()
    agent.usage()
    agent.compaction_audit()
    agent.missed_compactions()
    assert len(built) == 1
    model = first["model"].iloc[0]
    mine = agent.usage(prices={model: {"input": 1.0, "output": 1.0}})
    assert len(built) == 2
    assert mine["price_input"].iloc[0] == 1.0 and first["price_input"].iloc[0] != 1.0


def test_a_shared_usage_frame_is_each_callers_own_and_warns_each_time(tmp_path):
    """The frame handed out is a copy (a caller's change does not reach the next caller), and
    each usage() call warns about the unpriced model, as before it was shared."""
    path = build(
        tmp_path / "unpriced.adf",
        loop=[
            row(1, "user", text("hello")),
            row(
                2, "assistant", text("hi"), model="mystery-model", tokens={"input": 10, "output": 2}
            ),
        ],
    )
    agent = adfkit.open(path)
    with pytest.warns(adfkit.AdfWarning, match="mystery-model"):
        u = agent.usage()
    u["tokens_input"] = pd.array([99], dtype="Int64")
    u.loc[0, "cost_usd"] = 1.0
    with pytest.warns(adfkit.AdfWarning, match="mystery-model"):
        again = agent.usage()
    assert again["tokens_input"].tolist() == [10] and np.isnan(again["cost_usd"].iloc[0])


def test_each_compactions_call_lookups_match_a_scan():
    """The audit's per-compaction look-ups (calls in a seq range, the first call past a seq in
    display order) by bisection equal a scan of every call, seqs out of order included."""
    from adfkit._analysis.compaction_audit import _CallSeqs

    rng = random.Random(38)
    for _ in range(200):
        seqs = np.array([rng.randint(0, 60) for _ in range(rng.randint(1, 40))], dtype="float64")
        look = _CallSeqs(seqs)
        for _ in range(20):
            lo, hi = sorted(rng.choice([-np.inf, np.inf, *range(-2, 63)]) for _ in range(2))
            assert look.count_in(lo, hi) == int(((seqs > lo) & (seqs <= hi)).sum())
            past = np.flatnonzero(seqs > lo)
            assert look.first_after(lo) == (int(past[0]) if len(past) else None)


def test_result_texts_by_hand():
    """tool_use_id -> the text of its first result; a result without an id (or with an empty
    one) is left out; a result without text is ""."""
    rows = [
        {"type": "tool_use", "id": "a", "name": "x", "input": {}},
        {"type": "tool_result", "tool_use_id": "a", "content": "first"},
        {"type": "tool_result", "tool_use_id": "a", "content": "second"},
        {"type": "tool_result", "content": "no id"},
        {"type": "tool_result", "tool_use_id": "", "content": "empty id"},
        {"type": "text", "text": "a", "tool_use_id": "b"},
        {"type": "tool_result", "tool_use_id": "c"},
    ]
    history = pd.DataFrame(
        {
            "seq": pd.array(range(1, 8), dtype="Int64"),
            "content": pd.array([orjson.dumps([r]).decode() for r in rows], dtype="string"),
            "created_at": pd.to_datetime(range(7), unit="ms", utc=True).as_unit("ms"),
        }
    )

    class _Src:
        memo = adfkit._core.source.Memo()

        def history(self) -> pd.DataFrame:
            return history

        history_view = history  # the boundary's read-only frame: the same here

    src = _Src()
    assert result_texts(src) == {"a": "first", "c": ""}
