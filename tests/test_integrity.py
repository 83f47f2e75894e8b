"""AgentFile.integrity(): each planted defect is found in a file built to contain it, nothing
is reported on a clean file, and the real fixtures show their documented history."""

from __future__ import annotations

import json

import brotli
import pandas as pd
import pytest
from adfbuild import BASE_MS, blob_element, build, result, row, text, use
from conftest import runtime_fixture, sample

import adfkit
from adfkit import schema
from adfkit._core import blobs as _blobs
from adfkit._core.history import ranges

LOOP = [
    row(1, "user", text("hello")),
    row(2, "assistant", [use("a", "fs_read", {"path": "x"})], tokens={"input": 10, "output": 1}),
    row(3, "user", [result("a", "ok")]),
    row(4, "assistant", text("done"), tokens={"input": 12, "output": 2}),
]
AUDIT_OFF = {"context": {"audit": {"loop": False}}}


def _report(path) -> pd.DataFrame:
    return adfkit.open_adf(path).integrity()


def _found(rep: pd.DataFrame) -> list[tuple[str, str, tuple]]:
    return [
        (c, str(s), r) for c, s, r in zip(rep["check"], rep["severity"], rep["rows"], strict=True)
    ]


def test_clean_file_gives_empty_frame_with_columns(tmp_path):
    f = build(tmp_path / "ok.adf", loop=LOOP[2:], audit=[{"source": "loop", "rows": LOOP[:2]}])
    rep = _report(f)
    assert rep.empty
    assert list(rep.columns) == list(schema.INTEGRITY)
    assert str(rep["severity"].dtype) == "category"
    assert list(rep["severity"].cat.categories) == ["info", "warning", "error"]


def test_clean_sample_reports_nothing():
    assert _report(sample("clean")).empty


def test_overlapping_audit_ranges_sharing_rows(tmp_path):
    f = build(
        tmp_path / "o.adf",
        loop=[row(5, "user", text("more"))],
        audit=[{"source": "loop", "rows": LOOP[:3]}, {"source": "loop", "rows": LOOP[1:]}],
    )
    rep = _report(f)
    assert ("audit_range_overlap", "warning", (1, 2)) in _found(rep)
    assert ("duplicate_seqs", "warning", (2, 3)) in _found(rep)
    detail = rep.loc[rep["check"] == "audit_range_overlap", "detail"].iloc[0]
    assert "audit rows 1 (1..3) and 2 (2..4)" in detail and "2..3" in detail


def test_duplicated_audit_range(tmp_path):
    f = build(tmp_path / "d.adf", audit=[{"source": "loop", "rows": LOOP}] * 2)
    assert ("audit_range_duplicate", "warning", (1, 2)) in _found(_report(f))


def test_interleaved_clear_pair_is_info(tmp_path):
    """loop_clear(start=1, end=-1) over seqs 1..4: slice 2..3, then the rest (1 and 4)."""
    t = BASE_MS + 50_000
    f = build(
        tmp_path / "c.adf",
        loop=[row(6, "user", text("[Context: system_prompt] again"))],
        audit=[
            {"source": "loop", "rows": LOOP[1:3], "created_at": t},
            {"source": "loop", "rows": [LOOP[0], LOOP[3]], "created_at": t + 40},
        ],
        highest_seq=6,
    )
    rep = _report(f)
    assert ("audit_range_overlap", "info", (1, 2)) in _found(rep)
    assert "loop_clear" in rep.loc[rep["check"] == "audit_range_overlap", "detail"].iloc[0]
    # seq 5 (never in a blob or live) is lost; nothing else is wrong.
    assert [c for c, s, _ in _found(rep) if s != "info"] == ["lost_seqs"]


def test_bad_blobs(tmp_path):
    not_brotli = b"this is not brotli at all"
    not_json = brotli.compress(b"{nope")
    object_for_loop = brotli.compress(b'{"seq": 1}')
    array_for_message = brotli.compress(b"[1, 2]")
    no_seq = brotli.compress(b'[{"role": "user"}]')
    f = build(
        tmp_path / "b.adf",
        loop=LOOP,
        audit=[
            {"source": "loop", "data": not_brotli, "entry_count": 1, "size_bytes": 1},
            {"source": "loop", "data": not_json, "entry_count": 1, "size_bytes": 5},
            {"source": "loop", "data": object_for_loop, "entry_count": 1, "size_bytes": 11},
            {
                "source": "inbox_message",
                "data": array_for_message,
                "entry_count": 1,
                "size_bytes": 6,
            },
            {"source": "loop", "data": no_seq, "entry_count": 1, "size_bytes": 18},
        ],
    )
    found = _found(_report(f))
    assert ("blob_undecodable", "error", (1,)) in found
    assert ("blob_undecodable", "error", (2,)) in found
    assert ("blob_wrong_shape", "error", (3,)) in found
    assert ("blob_wrong_shape", "error", (4,)) in found
    assert ("blob_wrong_shape", "error", (5,)) in found
    assert all(s == "error" for c, s, _ in found if c.startswith("blob"))


def _blob_of(value) -> tuple[bytes, str]:
    txt = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return brotli.compress(txt.encode("utf-8")), txt


def test_wrong_entry_count_and_size_bytes(tmp_path):
    els = [blob_element(r) for r in LOOP[:2]]
    els[0]["content_json"] = [{"type": "text", "text": "héllo 😀"}]
    data, txt = _blob_of(els)
    # JS length by hand: every character is one UTF-16 unit except the emoji (two).
    js_len = len(txt) + 1
    utf8_len = len(txt.encode("utf-8"))
    assert utf8_len != js_len
    good = {
        "source": "loop",
        "data": data,
        "entry_count": 2,
        "size_bytes": js_len,
        "start_seq": 1,
        "end_seq": 2,
    }
    f = build(
        tmp_path / "n.adf",
        loop=LOOP[2:],
        audit=[
            good,
            {**good, "entry_count": 3},
            {**good, "size_bytes": utf8_len},
            {
                "source": "file",
                "data": _blob_of({"path": "a", "content_base64": ""})[0],
                "entry_count": 2,
                "size_bytes": 33,
                "ref": "a",
            },
        ],
    )
    found = _found(_report(f))
    assert ("entry_count_mismatch", "error", (2,)) in found
    assert ("size_bytes_mismatch", "error", (3,)) in found
    assert ("entry_count_mismatch", "error", (4,)) in found
    assert not [x for x in found if x[2] == (1,) and x[0].endswith("mismatch")]
    # audit rows 1..3 hold the same two seqs: duplicated, which is reported as such.
    assert ("audit_range_duplicate", "warning", (1, 2)) in found


def test_recorded_range_disagrees_with_blob(tmp_path):
    f = build(
        tmp_path / "r.adf",
        loop=LOOP[2:],
        audit=[{"source": "loop", "rows": LOOP[:2], "end_seq": 7}],
    )
    assert _found(_report(f)) == [("audit_range_mismatch", "warning", (1,))]


def test_lost_range_and_audited_marker_without_audit(tmp_path):
    live = [
        row(5, "user", text("[Loop Compacted, audited] - said hello [S1]")),
        row(6, "assistant", text("hi again"), tokens={"input": 3, "output": 1}),
    ]
    f = build(tmp_path / "l.adf", loop=live)
    assert _found(_report(f)) == [
        ("lost_seqs", "warning", (1, 2, 3, 4)),
        ("audited_marker_unmatched", "warning", (5,)),
    ]


def test_tool_calls_without_results(tmp_path):
    rows = [
        row(1, "user", text("go")),
        row(
            2,
            "assistant",
            [use("a", "fs_read", {}), use("b", "fs_list", {})],
            tokens={"input": 1, "output": 1},
        ),
        row(3, "user", [result("a", "ok")]),  # b never answered
        row(
            4, "assistant", [use("c", "sys_fetch", {"url": "u"})], tokens={"input": 1, "output": 1}
        ),
    ]
    rep = _report(build(tmp_path / "t.adf", loop=rows))
    assert _found(rep) == [
        ("tool_use_without_result", "warning", (2,)),
        ("tool_use_without_result", "info", (4,)),  # the latest row: may still be running
    ]


def test_tool_result_without_call(tmp_path):
    rows = [row(1, "user", text("go")), row(2, "user", [result("zz", "orphan")])]
    assert _found(_report(build(tmp_path / "r.adf", loop=rows))) == [
        ("tool_result_without_call", "warning", (2,))
    ]
    # Right after lost rows, the call was most likely among them: info.
    after_gap = [row(5, "user", [result("zz", "orphan")])]
    found = _found(_report(build(tmp_path / "g.adf", loop=after_gap)))
    assert ("tool_result_without_call", "info", (5,)) in found


def test_rows_out_of_time_order(tmp_path):
    rows = [
        row(1, "user", text("a"), created_at=BASE_MS + 5000),
        row(2, "assistant", text("b"), created_at=BASE_MS + 9000),
        row(3, "user", text("c"), created_at=BASE_MS + 7000),
        row(4, "assistant", text("d"), created_at=BASE_MS + 9500),
    ]
    assert _found(_report(build(tmp_path / "t.adf", loop=rows))) == [
        ("created_at_out_of_order", "warning", (3,))
    ]


def test_loop_audit_off(tmp_path):
    rep = _report(build(tmp_path / "a.adf", loop=LOOP, config=AUDIT_OFF))
    assert _found(rep) == [("loop_audit_off", "warning", ())]
    assert rep["table"].tolist() == ["adf_config"]


def test_each_blob_is_decompressed_once(tmp_path, monkeypatch):
    f = build(
        tmp_path / "once.adf",
        loop=[row(9, "user", text("later"))],
        audit=[{"source": "loop", "rows": LOOP[:2]}, {"source": "loop", "rows": LOOP[2:]}],
        highest_seq=9,
    )
    calls = []
    real = _blobs.decompress

    def counting(data, **kw):
        calls.append(kw.get("audit_id"))
        return real(data, **kw)

    agent = adfkit.open_adf(f)
    agent.history()
    monkeypatch.setattr(_blobs, "decompress", counting)
    agent.integrity()
    assert sorted(calls) == [1, 2]
    agent.integrity()  # cached on the handle
    assert sorted(calls) == [1, 2]


def test_ranges_helper():
    assert ranges([]) == ""
    assert ranges([3, 1, 2, 2, 10]) == "1..3, 10"


# --- real-runtime fixtures ---------------------------------------------------------------


def test_runtime_forgetful_lost_range_and_audit_off():
    rep = _report(runtime_fixture("forgetful"))
    assert _found(rep) == [
        ("lost_seqs", "warning", tuple(range(1, 193))),
        ("loop_audit_off", "warning", ()),
    ]
    assert "1..192" in rep["detail"].iloc[0]


def test_runtime_audited_messenger_clear_pair_is_expected():
    rep = _report(runtime_fixture("audited-messenger"))
    assert len(rep) == 1
    r = rep.iloc[0]
    assert (r["check"], r["severity"], r["table"]) == ("audit_range_overlap", "info", "adf_audit")
    assert "(2..56)" in r["detail"] and "(1..61)" in r["detail"]


@pytest.mark.parametrize("name", ["long-runner", "manual-compact"])
def test_runtime_complete_histories_are_clean(name):
    """README: 1..N with no gaps, all audited."""
    assert _report(runtime_fixture(name)).empty


def test_runtime_mind_keeper_lost_range():
    """README: history 1..378 except 166..218 (loop audit off around one compaction)."""
    rep = _report(runtime_fixture("mind-keeper"))
    lost = rep[rep["check"] == "lost_seqs"]
    assert lost["rows"].tolist() == [tuple(range(166, 219))]
    assert "error" not in set(rep["severity"].astype(str))


def test_sample_forgetful_lost_seqs_match_truth():
    truth = json.loads(sample("forgetful").with_suffix(".truth.json").read_text())
    rep = _report(sample("forgetful"))
    lost = [s for r in rep.loc[rep["check"] == "lost_seqs", "rows"] for s in r]
    assert lost == truth["lost_seqs"]


# --- CLI: adfkit check ------------------------------------------------------------------------


def test_cli_check_clean_and_findings(tmp_path, capsys):
    from adfkit.cli import main

    assert main(["check", str(sample("clean"))]) == 0
    assert capsys.readouterr().out.endswith(": no findings\n")
    f = build(tmp_path / "off.adf", loop=LOOP, config=AUDIT_OFF)
    assert main(["check", str(f)]) == 1
    out = capsys.readouterr().out
    assert "0 error(s), 1 warning(s), 0 info" in out and "loop_audit_off" in out


def test_cli_check_json_shape(tmp_path, capsys):
    from adfkit.cli import main

    f = build(tmp_path / "l.adf", loop=[row(3, "user", text("late"))])
    assert main(["check", str(f), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d == {
        "path": str(f),
        "clean": False,
        "counts": {"error": 0, "warning": 1, "info": 0},
        "findings": [
            {
                "check": "lost_seqs",
                "severity": "warning",
                "table": "adf_loop",
                "rows": [1, 2],
                "detail": d["findings"][0]["detail"],
            }
        ],
        "compaction_audit": {
            "compactions": 0,
            "counts": {
                "early": 0,
                "summary_grew": 0,
                "back_to_back": 0,
                "did_not_shrink": 0,
                "cache_never_read": 0,
                "missed": 0,
            },
            "flagged": [],
            "missed": [],
        },
    }
    assert "seq 1..2 (2 row(s))" in d["findings"][0]["detail"]


def test_cli_check_info_only_is_clean(capsys):
    from adfkit.cli import main

    assert main(["check", str(runtime_fixture("audited-messenger")), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["clean"] and d["counts"] == {"error": 0, "warning": 0, "info": 1}


def test_cli_check_unreadable(tmp_path, capsys):
    from adfkit.cli import main

    bad = tmp_path / "x.adf"
    bad.write_bytes(b"\x00" * 10)
    assert main(["check", str(bad)]) == 2
    assert main(["check", str(tmp_path / "missing.adf")]) == 2
    err = capsys.readouterr().err
    assert err.count("adfkit: error:") == 2
