"""Work that grows with the input, checked by its answers (timings live in ``benchmarks/``).

Seqs far beyond the rows (a row at seq 10**12, or ``sqlite_sequence`` saying so) are ranges,
never one object per missing seq: exact answers, and a memory bound measured in a fresh process.
The path scanner of summary recall, rewritten to run in linear time, finds exactly what the
regular expression it replaces finds (checked against that expression on short texts, where
backtracking costs nothing); summary recall of many items stays fast. Many one-row archives give
the events, windows and compactions they should.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import warnings

import pandas as pd
import pytest
from adfbuild import BASE_MS, build, result, row, text, use
from hypothesis import given, settings
from hypothesis import strategies as st

import adfkit
import adfkit._sources.adf.source
from adfkit._analysis import paths as _path_scan
from adfkit._analysis.integrity import LISTED_LOST
from adfkit._analysis.items import text_items
from adfkit._base.js import js_length
from adfkit._core import rows as _rows
from adfkit._core.loopframe import side_frame
from adfkit.cli import main

BIG = 10**12
TOK = {"input": 5, "output": 1}


def _rows_1_2_3() -> list[dict]:
    return [
        row(1, "user", text("hi"), created_at=BASE_MS + 1000),
        row(2, "assistant", text("a"), tokens=TOK, created_at=BASE_MS + 2000),
    ]


@pytest.fixture
def far_row(tmp_path):
    """Seqs 1, 2, 3 and 10**12; 3 and 10**12 are unaudited compaction summaries."""
    return build(
        tmp_path / "far-row.adf",
        loop=[
            *_rows_1_2_3(),
            row(3, "user", text("[Loop Compacted] first"), created_at=BASE_MS + 3000),
            row(BIG, "user", text("[Loop Compacted] second"), created_at=BASE_MS + 4000),
        ],
    )


@pytest.fixture
def far_counter(tmp_path):
    """Seqs 1, 2, 3 and sqlite_sequence at 10**12."""
    return build(
        tmp_path / "far-counter.adf",
        loop=[*_rows_1_2_3(), row(3, "user", text("bye"), created_at=BASE_MS + 3000)],
        highest_seq=BIG,
    )


def test_far_row_gaps_integrity_compactions_replay(far_row):
    with adfkit.open_adf(far_row) as agent:
        g = agent.history_gaps()
        assert g.to_dict("records") == [{"start_seq": 4, "end_seq": BIG - 1, "n_seqs": BIG - 4}]
        rep = agent.integrity()
        assert rep["check"].tolist() == ["lost_seqs"]
        assert rep["rows"].iloc[0] == range(4, BIG)  # past LISTED_LOST: a range, not a tuple
        assert (
            rep["detail"]
            .iloc[0]
            .startswith(f"seq 4..{BIG - 1} ({BIG - 4} row(s)) deleted and archived nowhere")
        )
        c = agent.compactions()
        assert c["summary_seq"].tolist() == [3, BIG]
        assert c["boundary_seq"].tolist() == [2, BIG - 1]
        assert c["swept_seqs"].tolist() == [(1, 2), (3,)]
        # the second event swept 3..BIG-1: seq 3 is in the history, the rest were discarded
        assert (
            c["swept_start"].isna().iloc[0]
            and int(c["swept_start"].iloc[1]) == 3
            and int(c["swept_end"].iloc[1]) == BIG - 1
        )
        assert int(c["n_swept"].iloc[1]) == BIG - 3
        assert c["n_swept"].isna().iloc[0] and c["swept_tokens"].isna().all()
        assert int(c["trigger_tokens"].iloc[0]) == 6 and c["trigger_tokens"].isna().iloc[1]
        r = agent.replay()
        assert r["seq"].tolist() == [2] and r["context_seqs"].tolist() == [(1,)]


def test_far_counter_gaps_integrity_compactions_replay(far_counter):
    with adfkit.open_adf(far_counter) as agent:
        g = agent.history_gaps()
        assert g.to_dict("records") == [{"start_seq": 4, "end_seq": BIG, "n_seqs": BIG - 3}]
        rep = agent.integrity()
        assert rep["check"].tolist() == ["lost_seqs"]
        assert rep["rows"].iloc[0] == range(4, BIG + 1)
        assert agent.compactions().empty
        assert agent.replay()["seq"].tolist() == [2]


def test_check_json_gives_the_ends_of_a_far_range(far_counter, capsys):
    assert main(["check", str(far_counter), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["check"], f["rows"]) for f in found] == [("lost_seqs", {"first": 4, "last": BIG})]


def test_lost_seqs_listed_up_to_the_limit(tmp_path):
    """Up to LISTED_LOST lost seqs in all, every lost_seqs row holds them as a tuple."""
    f = build(tmp_path / "a.adf", loop=_rows_1_2_3(), highest_seq=2 + LISTED_LOST)
    rep = adfkit.open_adf(f).integrity()
    rows = rep.loc[rep["check"] == "lost_seqs", "rows"].iloc[0]
    assert isinstance(rows, tuple) and rows == tuple(range(3, 3 + LISTED_LOST))
    f = build(tmp_path / "b.adf", loop=_rows_1_2_3(), highest_seq=3 + LISTED_LOST)
    rep = adfkit.open_adf(f).integrity()
    assert rep.loc[rep["check"] == "lost_seqs", "rows"].iloc[0] == range(3, 4 + LISTED_LOST)


def test_far_seqs_take_little_memory(far_row, far_counter):
    """Every analysis of both files, and ``adfkit check``, in a fresh process: peak RSS.

    The peak is the process image's own (VmHWM): ``getrusage``'s ``ru_maxrss`` would include
    this test process's, which the child inherits across fork and exec."""
    code = textwrap.dedent(
        """
        import resource, sys, warnings
        import adfkit
        from adfkit.cli import main
        warnings.simplefilter("ignore")
        for p in sys.argv[1:]:
            with adfkit.open_adf(p) as a:
                a.history_gaps(); a.integrity(); a.compactions(); a.replay(); a.events()
                a.composition(); a.usage(); a.context_blocks(); a.mind_history()
            main(["check", p, "--json"])
        try:
            with open("/proc/self/status") as fh:
                print(next(int(x.split()[1]) for x in fh if x.startswith("VmHWM:")))
        except OSError:  # no /proc: the inherited figure, an upper bound
            print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(far_row), str(far_counter)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    peak_kb = int(out.stdout.strip().splitlines()[-1])
    assert peak_kb < 300 * 1024, f"peak RSS {peak_kb / 1024:.0f} MB"


# -- history(): blobs read in batches ---------------------------------------------------------


@pytest.mark.parametrize("prefetch", [True, False])
def test_batches_of_blobs_give_the_same_history(tmp_path, monkeypatch, prefetch):
    """Batches of one blob, batches of small blobs sent to the thread (the default keeps them
    on the reader), or whose thread leaves every blob to the reader, give the history and the
    warnings (an undecodable blob in the middle, in its place) of the default batches."""
    audit: list[dict] = []
    for i in range(6):
        rows = [row(2 * i + 1, "user", text(f"q{i}")), row(2 * i + 2, "assistant", text("a"))]
        audit.append({"source": "loop", "rows": rows})
    audit.insert(3, {"source": "loop", "data": b"not brotli", "start_seq": 13, "end_seq": 13})
    f = build(tmp_path / "b.adf", loop=[row(20, "user", text("live"))], audit=audit)
    monkeypatch.setattr(adfkit._sources.adf.source.AdfSource, "prefetch", prefetch)

    def read() -> tuple[pd.DataFrame, list[str]]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with adfkit.open_adf(f) as agent:
                h = agent.history()
        return h, [str(x.message) for x in w]

    want, want_warnings = read()
    assert len(want) == 13 and any("adf_audit id=4" in m for m in want_warnings)
    variants: list[dict[str, int]] = [
        {"_BATCH_BLOBS": 1},
        {"_BATCH_RAW": -1},
        {"_FLUSH_BYTES": 1},
        {"_THREAD_BLOB_BYTES": 0},
        {"_THREAD_BLOB_BYTES": 0, "_BATCH_BLOBS": 1},
        {"_THREAD_BLOB_BYTES": 0, "_BATCH_RAW": -1},
    ]
    for variant in variants:
        with monkeypatch.context() as m:
            for name, value in variant.items():
                m.setattr(adfkit._sources.adf.source, name, value)
            got, got_warnings = read()
        pd.testing.assert_frame_equal(got, want)
        assert got_warnings == want_warnings


# -- fast paths of the row rule and the side tables -----------------------------------------


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40))
def test_wide_length_is_js_length(s):
    """The size test that skips encoding gives the JavaScript length, UTF-8 cached or not."""
    if not s.isascii():
        assert _rows._wide_length(s) == js_length(s)
        s.encode("utf-8", "surrogatepass")
        assert _rows._wide_length(s) == js_length(s)


def test_wide_length_exact():
    for s in ["é", "ā", "日本語", "🙂", "a🙂b", "\ud83d", "x\ud83dy" * 50, "café" * 100]:
        assert (
            _rows._wide_length(s)
            == js_length(s)
            == len(s.encode("utf-16-le", "surrogatepass")) // 2
        )


_COUNT = st.one_of(
    st.none(),
    st.integers(min_value=-5, max_value=2**64),
    st.floats(allow_nan=True),
    st.booleans(),
    st.text(max_size=2),
)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.dictionaries(
            st.sampled_from(["input", "output", "cache_read", "cache_write", "reasoning", "x"]),
            _COUNT,
        ),
        _COUNT,
        st.lists(st.integers(), max_size=2),
    )
)
def test_token_counts_is_parse_tokens(raw):
    """token_counts (a fast path for small integer objects) agrees with parse_tokens."""
    out, bad = _rows.parse_tokens(raw)
    want = (*(out[k] for k in (*_rows.TOKEN_KEYS, "total")), bad)
    assert _rows.token_counts(raw) == want


_CELL = st.one_of(
    st.none(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([-(2**63), 2**63 - 1, 0, 1_790_000_000_000]),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.binary(max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_CELL, _CELL, _CELL), max_size=6))
def test_side_frame_fast_path_is_the_cell_rule(rows):
    """Columns of plain integers take a vectorised path; the frame is the one the cell-by-cell
    cleaning gives (every int wrapped in a subclass takes that path)."""
    cols = {"a": "Int64", "b": "datetime64[ms, UTC]", "c": "boolean"}
    fast = side_frame(rows, cols)
    tagged = [tuple(_Tag(v) if isinstance(v, int) else v for v in r) for r in rows]
    pd.testing.assert_frame_equal(fast, side_frame(tagged, cols))


class _Tag(int):
    """An int the fast path does not take (its type is not exactly int)."""


# -- summary recall: the path scanner and many items ------------------------------------------

#: The expression the scanner replaces (quadratic on "a-a-a-..."; harmless on short texts).
OLD_PATH = re.compile(
    r"(?<![\w/.:-])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b"
    r"|\b[\w-]+\.(?:md|json|txt|csv|py|js|ts|ya?ml|html|log)\b"
)


def _old_paths(t: str) -> list[str]:
    return [m.group(0) for m in OLD_PATH.finditer(t)]


def _paths(t: str) -> list[str]:
    return [t[a:b] for a, b in _path_scan._paths(t)]


@pytest.mark.parametrize(
    ("t", "want"),
    [
        ("see notes/a.md and b.json", ["notes/a.md", "b.json"]),
        ("src/pkg/mod.py:12 and ./x/y.tar.gz", ["src/pkg/mod.py", "./x/y.tar.gz"]),
        ("a/b.toolongextension c/d.ok", ["c/d.ok"]),
        ("--draft-v2.md x.mdx my_notes.yml", ["draft-v2.md", "my_notes.yml"]),
        ("x/a.md-foo.toolongextension", ["x/a.md"]),
        ("http:x/a.md //b/c.md a//b.md", ["a.md", "c.md", "b.md"]),
        ("a-" * 20 + ".md", ["a-" * 20 + ".md"]),
        ("a-" * 20 + "b", []),
        ("é/ü.md 日本/x.json", ["é/ü.md", "日本/x.json"]),
    ],
)
def test_path_scanner_exact(t, want):
    assert _paths(t) == want == _old_paths(t)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(list("ab-./:_ é1Z") + ["md", "json", "yml", "txt", "x9", "٣"])))
def test_path_scanner_matches_the_expression(parts):
    t = "".join(parts)
    assert _paths(t) == _old_paths(t)


def test_path_scanner_on_pathological_text():
    """``a-`` repeated, and base64url text: the right answer, found in one pass."""
    t = "a-" * 50_000
    assert _paths(t) == []
    assert _paths(t + "x.md") == [t + "x.md"]
    b64 = "Zm9v-YmFy_YmF6-" * 5000
    assert _paths("k/" + b64 + ".json") == ["k/" + b64 + ".json"]
    found = text_items("see " + "a-" * 10_000 + " 12345 ms and x/1234.md", "assistant")
    assert ("quantity", "12345 ms", "12345ms") in found and (
        "path",
        "x/1234.md",
        "x/1234.md",
    ) in found


def test_recall_of_many_quantities(tmp_path):
    """A compaction that swept 3,000 numbers with a unit; the summary names every third one."""
    nums = [f"{100_000 + 7 * i} ms" for i in range(3000)]
    summary = "[Loop Compacted, audited] kept " + " ".join(nums[::3])
    swept = [
        row(1, "user", text("numbers: " + " ".join(nums))),
        row(2, "assistant", text("ok"), tokens=TOK),
    ]
    f = build(
        tmp_path / "n.adf",
        loop=[row(3, "user", text(summary)), row(4, "assistant", text("done"), tokens=TOK)],
        audit=[{"source": "loop", "rows": swept}],
    )
    r = adfkit.open_adf(f).summary_recall(0)
    got = dict(zip(r.loc[r["kind"] == "quantity", "value"], r["recalled"], strict=False))
    assert len(got) == 3000
    assert [n for n in nums if got[n]] == nums[::3]


# -- many archives ---------------------------------------------------------------------------


def _one_row_archives(n: int, *, summaries: bool) -> tuple[list[dict], list[dict]]:
    """``n`` turns (message, call, result); each archived alone, followed by a summary (or,
    without summaries, archived by a clear)."""
    loop: list[dict] = []
    audit: list[dict] = []
    seq = 0
    for i in range(n):
        rows = []
        if summaries and i:
            rows.append(loop.pop())  # the previous summary opens the next archive
        for r in (
            row(seq + 1, "user", text(f"task {i}")),
            row(seq + 2, "assistant", [use(f"t{i}", "fs_read", {"path": f"n/{i}.md"})], tokens=TOK),
            row(seq + 3, "user", [result(f"t{i}", f"content {i}")]),
        ):
            rows.append(r)
        seq += 3
        audit.append({"source": "loop", "rows": rows, "created_at": BASE_MS + 10**7 + i * 60_000})
        if summaries:
            seq += 1
            loop.append(row(seq, "user", text(f"[Loop Compacted, audited] did task {i}")))
    loop.append(row(seq + 1, "assistant", text("end"), tokens=TOK))
    return loop, audit


@pytest.mark.parametrize("summaries", [True, False])
def test_many_archives(tmp_path, summaries):
    n = 300
    loop, audit = _one_row_archives(n, summaries=summaries)
    f = build(tmp_path / "many.adf", loop=loop, audit=audit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = adfkit.open_adf(f)
        ev = agent.events()
        c = agent.compactions()
        r = agent.replay()
    assert len(ev) == n
    assert ev["audit_ids"].tolist() == [(i + 1,) for i in range(n)]
    if summaries:
        assert ev["event"].tolist() == ["compaction"] * n
        assert ev["summary_seq"].tolist() == [4 * (i + 1) for i in range(n)]
        # event i swept the previous summary (none for the first) and its turn
        assert c["swept_seqs"].tolist() == [
            tuple(range(max(1, 4 * i), 4 * i + 4)) for i in range(n)
        ]
        # a call sees the summary before it and its task; the last one, the last summary
        assert r["context_seqs"].iloc[1] == (4, 5) and r["context_seqs"].iloc[-1] == (4 * n,)
    else:
        assert ev["event"].tolist() == ["clear"] * n
        assert ev["boundary_seq"].tolist() == [3 * (i + 1) for i in range(n)]
        assert c["swept_seqs"].tolist() == [tuple(range(3 * i + 1, 3 * i + 4)) for i in range(n)]
        assert r["context_seqs"].iloc[1] == (4,) and r["context_seqs"].iloc[-1] == ()
    assert len(r) == n + 1
    assert c["n_refetches"].sum() == 0


# -- the walk behind replay() and compactions() ----------------------------------------------


def _long_window(n: int, *, archived: bool) -> tuple[list[dict], list[dict]]:
    """``n`` turns (message, call) and no compaction: in the live loop, or each row archived
    alone within a second of the last (archives without summaries that chain into one
    clear, whose window holds every row before it)."""
    rows = []
    for i in range(n):
        rows.append(row(2 * i + 1, "user", text(f"task {i}")))
        rows.append(row(2 * i + 2, "assistant", text(f"done {i}"), tokens=TOK))
    if not archived:
        return rows, []
    audit = [
        {"source": "loop", "rows": [r], "created_at": BASE_MS + 10**7 + k * 1000}
        for k, r in enumerate(rows)
    ]
    return [row(2 * n + 1, "user", text("again"))], audit


@pytest.mark.parametrize("archived", [False, True])
def test_the_walk_sorts_each_row_once_not_each_window(tmp_path, monkeypatch, archived):
    """Issues 18 item 9 and 24 item 2: the window is kept in display order as rows come, not
    sorted again at every model call. Counted, not timed: the elements the walk sorts (every
    window at every call, n**2 / 2 of them, before)."""
    n = 300
    loop, audit = _long_window(n, archived=archived)
    f = build(tmp_path / "long.adf", loop=loop, audit=audit)
    sorted_ = sorted
    count = [0]

    def counting(values, *args, **kwargs):
        out = sorted_(values, *args, **kwargs)
        count[0] += len(out)
        return out

    monkeypatch.setattr(adfkit._analysis.replay, "sorted", counting, raising=False)
    with adfkit.open_adf(f) as agent:
        c = agent.compactions()
        r = agent.replay()
    assert c["event"].tolist() == (["clear"] if archived else [])
    assert len(r) == n
    # call i sees every row before it: 2i + 1 rows
    assert r["context_seqs"].iloc[-1] == tuple(range(1, 2 * n))
    assert r["n_context_rows"].tolist() == [2 * i + 1 for i in range(n)]
    assert count[0] <= 4 * 2 * n
