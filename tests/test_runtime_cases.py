"""Runtime situations the fixtures do not cover, each on a file built for it.

Lone UTF-16 surrogates written by ``JSON.stringify``; a threshold change known only from
``adf_tasks``; a compaction whose triggering call was discarded; the provider-compatibility
repair (ADF_FORMAT.md §5).
"""

from __future__ import annotations

import json
import warnings

import brotli
import pandas as pd
import pytest
from adfbuild import BASE_MS, build, result, row, text, use

import adfkit

CUT = "emoji cut here \ud83d"  # a JS string cut between the two halves of 🙂


def js_json(value: object) -> str:
    """JSON as JavaScript writes it for these values: lone surrogates as \\u escapes."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def js_units(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


@pytest.fixture
def surrogate_file(tmp_path):
    """A lone surrogate in an archived row, a live tool call's input and the config."""
    archived = [
        row(1, "user", text("Agent started")),
        row(2, "assistant", text(CUT), tokens={"input": 100, "output": 5}),
        row(3, "user", text("[Loop Compacted, audited] earlier work")),
    ]
    elements = []
    for r in archived[:2]:
        el = {k: r[k] for k in ("seq", "role", "model", "created_at") if r[k] is not None}
        el["content_json"] = r["content"]
        if r["tokens"]:
            el["tokens"] = r["tokens"]
        elements.append(el)
    blob_text = js_json(elements)
    live = [
        row(3, "user", js_json(text("[Loop Compacted, audited] earlier work"))),
        row(
            4,
            "assistant",
            js_json([use("t1", "fs_write", {"path": "notes.md", "content": CUT})]),
            tokens={"input": 120, "output": 9},
        ),
        row(5, "user", js_json([result("t1", "ok")])),
    ]
    config = js_json(
        {"name": "cut \ud83d", "context": {"compact_threshold": 30000, "audit": {"loop": True}}}
    )
    return build(
        tmp_path / "surrogates.adf",
        loop=live,
        audit=[
            {
                "source": "loop",
                "data": brotli.compress(blob_text.encode()),
                "entry_count": 2,
                "size_bytes": len(blob_text),
                "start_seq": 1,
                "end_seq": 2,
            }
        ],
        config=config,
    )


def test_h52_lone_surrogates_keep_every_row(surrogate_file):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no row is dropped or flagged, so nothing to warn about
        with adfkit.open_adf(surrogate_file) as agent:
            h = agent.history()
            calls = agent.tool_calls()
            cfg = agent.config()
            rep = agent.integrity()
    assert h["seq"].tolist() == [1, 2, 3, 4, 5]
    assert not h["malformed"].any()
    by_seq = h.set_index("seq")
    # Kept visible as U+FFFD, counted as the one UTF-16 unit JavaScript counts.
    assert by_seq.loc[2, "text"] == "emoji cut here \ufffd"
    assert by_seq.loc[2, "chars"] == js_units(CUT) == 16
    assert calls["tool_name"].tolist() == ["fs_write"] and bool(calls["matched"].iloc[0])
    assert json.loads(calls["tool_input"].iloc[0])["content"] == "emoji cut here \ufffd"
    assert cfg["context"]["compact_threshold"] == 30000 and cfg["name"] == "cut \ufffd"
    assert agent.compact_threshold() == 30000 and agent.audit_settings()["loop"] is True
    assert not (rep["check"] == "blob_undecodable").any()
    assert not (rep["check"] == "size_bytes_mismatch").any()


def test_h52_a_cut_emoji_in_a_copy_of_a_sample_loses_nothing(tmp_path):
    """The class on real-shaped data: one string of one archived row of long-runner cut."""
    import shutil
    import sqlite3

    from conftest import sample

    p = tmp_path / "long-runner.adf"
    shutil.copy(sample("long-runner"), p)
    with adfkit.open_adf(sample("long-runner")) as agent:
        want = agent.history()
    con = sqlite3.connect(p)
    aid, data = con.execute("SELECT id, data FROM adf_audit WHERE source='loop' LIMIT 1").fetchone()
    rows = json.loads(brotli.decompress(data))
    for el in rows:
        for b in el["content_json"]:
            if b.get("type") == "text":
                b["text"] = b["text"][:5] + "\ud83d"
                break
        else:
            continue
        break
    raw = js_json(rows).encode()
    con.execute(
        "UPDATE adf_audit SET data = ?, size_bytes = ? WHERE id = ?",
        (brotli.compress(raw), len(raw), aid),
    )
    con.commit()
    con.close()
    with adfkit.open_adf(p) as agent:
        got = agent.history()
    assert got["seq"].tolist() == want["seq"].tolist()
    changed = got["text"] != want["text"]
    assert int(changed.sum()) == 1
    assert got.loc[changed, "text"].iloc[0].endswith("\ufffd")


# --- the threshold in force -----------------------------------------------------------------

CHANGE = "sys_update_config"


def task(tid: str, value: int, at: int) -> tuple[str, tuple]:
    args = json.dumps({"path": "context.compact_threshold", "value": value})
    return (
        "INSERT INTO adf_tasks (id, tool, args, status, result, created_at, completed_at, origin, "
        "requires_authorization) VALUES (?, ?, ?, 'completed', 'ok', ?, ?, 'hil:owner', 1)",
        (tid, CHANGE, args, at, at + 500),
    )


@pytest.fixture
def threshold_file(tmp_path):
    """50k (warning text) -> 20k (a call in history) -> 12k (known only from adf_tasks: its
    call and result, seqs 5..8, were discarded by an unaudited compaction)."""
    t = {"input": 1000, "output": 50}
    loop = [
        row(1, "user", text("[Context: dynamic_instructions] Compaction threshold: 50,000 tokens")),
        row(
            2,
            "assistant",
            [use("c1", CHANGE, {"path": "context.compact_threshold", "value": 20000})],
            tokens=t,
        ),
        row(3, "user", [result("c1", "updated")]),
        row(4, "assistant", text("done"), tokens={"input": 1500, "output": 60}),
        # 5..8 discarded; the 12k change happened at seq 6's time
        row(9, "user", text("[Loop Compacted] what came before")),
        row(10, "user", text("hello")),
        row(11, "assistant", text("hi"), tokens={"input": 2000, "output": 70}),
        row(12, "user", text("[Loop Compacted] second summary")),
        row(13, "user", text("again")),
        row(14, "assistant", text("yes"), tokens={"input": 900, "output": 30}),
    ]
    return build(
        tmp_path / "threshold.adf",
        loop=loop,
        config={"context": {"compact_threshold": 12000, "audit": {"loop": False}}},
        sql=[task("a1", 20000, BASE_MS + 2000), task("a2", 12000, BASE_MS + 6000)],
        highest_seq=14,
    )


def test_h53_threshold_known_only_from_tasks_is_in_force_everywhere(threshold_file):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(threshold_file) as agent:
            ch = agent.config_changes()
            rep = agent.replay().set_index("seq")
            comp = agent.compactions()
            sim = adfkit.simulate(agent, adfkit.ThresholdPolicy()).calls.set_index("seq")
    assert ch["value"].tolist() == ["20000", "12000"]
    assert ch["source"].tolist() == ["tool_call+task", "task"]
    assert rep.loc[4, "threshold"] == 20000
    assert rep.loc[11, "threshold"] == 12000 and rep.loc[14, "threshold"] == 12000
    # The first compaction (summary 9, at 9 s) came after the 12k change (at 6 s): both lie
    # in the gap 5..8, so time decides (issue 18 item 10); by seq it would say 20k.
    assert comp["threshold"].tolist() == [12000, 12000]
    assert sim.loc[14, "threshold"] == 12000


def test_h54_trigger_tokens_of_a_compaction_whose_trigger_was_discarded_is_na(threshold_file):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = adfkit.open_adf(threshold_file).compactions()
    # The first compaction's triggering call (in 5..8) is gone: unknown, not seq 4's 1560.
    assert pd.isna(comp["trigger_tokens"].iloc[0])
    # The second one's is seq 11: 2000 + 70.
    assert comp["trigger_tokens"].iloc[1] == 2070


def _gap_file(path, change_at: int):
    """50k (warning text), then 12k known only from adf_tasks at ``change_at`` ms after BASE_MS.

    Rows 1..4 (at 1..4 s) are in an archive written at 4.5 s: a compaction whose summary (5)
    was lost; 6..8 were discarded by a second, unaudited compaction, whose summary is 9 (at
    9 s). So both compactions lie in the gap 5..8, the first known at 4.5 s, the second at 9 s.
    """
    t = {"input": 1000, "output": 50}
    archived = [
        row(1, "user", text("[Context: dynamic_instructions] Compaction threshold: 50,000 tokens")),
        row(2, "assistant", text("a"), tokens=t),
        row(3, "user", text("more")),
        row(4, "assistant", text("b"), tokens=t),
    ]
    loop = [
        row(9, "user", text("[Loop Compacted] what came before")),
        row(10, "user", text("hello")),
        row(11, "assistant", text("hi"), tokens=t),
    ]
    return build(
        path,
        loop=loop,
        audit=[{"source": "loop", "rows": archived, "created_at": BASE_MS + 4500}],
        config={"context": {"compact_threshold": 12000, "audit": {"loop": False}}},
        sql=[task("a1", 12000, BASE_MS + change_at)],
        highest_seq=11,
    )


@pytest.mark.parametrize(
    ("change_at", "want"),
    [
        # between the two compactions: the first (4.5 s) keeps 50k, the second (9 s) has 12k
        (6000, [50000, 12000]),
        # after row 4 (4 s), before the archive (4.5 s): both compactions came after it
        (4200, [12000, 12000]),
        # after the summary (9 s): the change's place is known (after seq 9), before neither
        (9500, [50000, 50000]),
    ],
)
def test_threshold_of_a_compaction_in_a_gap_is_decided_by_time(tmp_path, change_at, want):
    """Issue 18 item 10: the change and the compactions lost their seqs to one gap."""
    f = _gap_file(tmp_path / "gap.adf", change_at)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(f) as agent:
            comp = agent.compactions()
            rep = agent.replay().set_index("seq")
    assert comp["boundary_seq"].tolist() == [4, 8]
    assert comp["summary_lost"].tolist() == [True, False]
    assert comp["threshold"].tolist() == want
    # model calls are rows with seqs: placed by seq, as before
    assert rep.loc[4, "threshold"] == (12000 if change_at < 4000 else 50000)
    assert rep.loc[11, "threshold"] == 12000


# --- the provider-compatibility repair ------------------------------------------------------


@pytest.fixture
def repaired(tmp_path):
    """ADF_FORMAT.md §4.3/§5: the runtime archived the whole loop (1..6), stripped its tool
    blocks and wrote the survivors back under their old seqs; 3 and 4 (tool-only) are gone;
    the agent then went on (7, 8)."""
    t = {"input": 100, "output": 10}
    original = [
        row(1, "user", text("please list the files")),
        row(
            2,
            "assistant",
            [{"type": "text", "text": "looking"}, use("c1", "fs_list", {})],
            tokens=t,
        ),
        row(3, "user", [result("c1", "a.md b.md")]),
        row(4, "assistant", [use("c2", "fs_read", {"path": "a.md"})], tokens=t),
        row(5, "user", [result("c2", "# A")]),
        row(6, "assistant", text("a.md says A"), tokens=t),
    ]
    live = [
        row(1, "user", text("please list the files")),
        row(2, "assistant", text("looking"), tokens=t),
        row(6, "assistant", text("a.md says A"), tokens=t),
        row(7, "user", text("thanks")),
        row(8, "assistant", text("welcome"), tokens=t),
    ]
    return build(tmp_path / "repaired.adf", loop=live, audit=[{"source": "loop", "rows": original}])


def test_h55_a_repair_is_its_own_event_and_sweeps_nothing(repaired):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with adfkit.open_adf(repaired) as agent:
            ev = agent.events()
            h = agent.history().set_index("seq")
            comp = agent.compactions()
            rep = agent.replay().set_index("seq")
            integ = agent.integrity()
    assert ev["event"].tolist() == ["repair"]
    assert list(ev["audit_ids"].iloc[0]) == [1]
    # history keeps the original copies (the oldest blob), all of them, and no epoch starts.
    assert h.index.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert h.loc[2, "tool_names"] == "fs_list" and h.loc[2, "copies"] == 2
    assert (h["epoch"] == 0).all()
    assert comp["kind"].tolist() == ["repair"] and comp["n_swept"].tolist() == [0]
    # The model kept seeing the survivors: at call 8 the window still holds 1, 2 and 6.
    assert {1, 2, 6, 7}.issubset(set(rep.loc[8, "context_seqs"]))
    dup = integ[integ["check"] == "duplicate_seqs"]
    assert len(dup) == 1 and "repair" in dup["detail"].iloc[0]
    assert dup["severity"].iloc[0] == "info"
