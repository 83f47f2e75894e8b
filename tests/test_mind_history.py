"""The mind over time: every version of mind.md and its pages, and the mind at each call."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import warnings

import pandas as pd
import pytest
from adfbuild import BASE_MS, build, result, row, text, use
from conftest import runtime_fixture, sample

from adfkit import AdfWarning, open_adf, schema
from adfkit._analysis import mind as _mind

TOK = {"input": 100, "output": 5}
STARTUP = "Agent started. Review your mind for context and take any startup actions."
SEED = "# Mind\nseed"
V1 = "# Mind\nv1\n"
V2 = "# Mind\nv2\n"
LOG_SEED = "# Log\n"  # never passes through a tool call


def _prompt(mind: str) -> list[dict]:
    return text(
        '[Context: system_prompt] Base.\n\n<injected_file path="mind.md">\n'
        + mind
        + "\n</injected_file>\n\nEnd."
    )


def _w(uid: str, path: str, content: str, mode: str = "write") -> dict:
    return use(uid, "fs_write", {"mode": mode, "path": path, "content": content})


def _rows() -> tuple[list[dict], list[dict]]:
    old = [
        row(1, "user", text(STARTUP)),
        row(2, "user", _prompt(SEED)),
        row(3, "assistant", [_w("a", "mind/log.md", "\n- a", "append")], tokens=TOK),
        row(4, "user", [result("a", 'Appended 4 characters to "mind/log.md"')]),
        row(5, "assistant", [_w("b", "mind.md", V1), _w("c", "./mind/gone.md", "G1")], tokens=TOK),
        row(6, "user", [result("b", "Successfully wrote"), result("c", "Successfully wrote")]),
        row(
            7,
            "assistant",
            [
                use(
                    "d",
                    "fs_write",
                    {
                        "mode": "edit",
                        "path": "mind.md",
                        "edits": [{"old_text": "v1", "new_text": "v2"}],
                    },
                )
            ],
            tokens=TOK,
        ),
        row(8, "user", [result("d", "Edited mind.md (1 replacement(s)).")]),
        row(9, "assistant", [_w("e", "mind.md", "refused")], tokens=TOK),
        row(10, "user", [result("e", "Cannot write to mind.md", is_error=True)]),
        row(11, "assistant", [use("f", "fs_delete", {"path": "mind/gone.md"})], tokens=TOK),
        row(12, "user", [result("f", 'Deleted "mind/gone.md".')]),
    ]
    live = [
        row(13, "user", text("[Loop Compacted, audited] S\n\n---\nYour loop was compacted.")),
        row(14, "user", _prompt(V2)),
        row(15, "assistant", text("ok"), tokens=TOK),
        row(16, "assistant", [_w("g", "mind/log.md", "\n- b", "append")], tokens=TOK),
        row(17, "user", [result("g", 'Appended 4 characters to "mind/log.md"')]),
        row(18, "assistant", text("done"), tokens=TOK),
    ]
    return old, live


@pytest.fixture
def mind_file(tmp_path):
    old, live = _rows()
    gone = {
        "path": "mind/gone.md",
        "content_base64": base64.b64encode(b"G1 (edited by code)").decode(),
        "mime_type": "text/markdown",
        "size": 19,
    }
    p = build(
        tmp_path / "mind.adf",
        loop=live,
        audit=[
            {
                "source": "file",
                "value": gone,
                "ref": "mind/gone.md",
                "created_at": BASE_MS + 11_500,
            },
            {"source": "loop", "rows": old, "created_at": BASE_MS + 12_500},
        ],
        files={"mind.md": V2, "mind/log.md": LOG_SEED + "\n- a\n- b", "notes/x.md": "not mind"},
    )
    # The log was last written by the call at seq 16 (between it and its result at seq 17).
    con = sqlite3.connect(p)
    iso = pd.Timestamp(BASE_MS + 16_500, unit="ms", tz="UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    con.execute("UPDATE adf_files SET updated_at = ? WHERE path = 'mind/log.md'", (iso[:-4] + "Z",))
    con.commit()
    con.close()
    return p


def _versions(mh: pd.DataFrame, path: str) -> list[tuple]:
    v = mh[mh["path"] == path]
    return [
        (None if pd.isna(s) else int(s), op, src, bool(rb), None if pd.isna(c) else c)
        for s, op, src, rb, c in zip(
            v["seq"], v["op"], v["source"], v["rebuilt"], v["content"], strict=True
        )
    ]


def test_mind_history_columns(mind_file):
    """The frame has the documented columns and dtypes; notes/ files are not part of the mind."""
    mh = open_adf(mind_file).mind_history()
    assert {c: str(mh[c].dtype) for c in mh.columns} == schema.MIND_HISTORY
    assert set(mh["path"]) == {"mind.md", "mind/log.md", "mind/gone.md"}


def test_mind_md_versions(mind_file):
    """Seed seen in the first prompt, a write, an edit; the refused write is no version; the
    prompt after the compaction shows v2 again, which adds nothing."""
    mh = open_adf(mind_file).mind_history()
    assert _versions(mh, "mind.md") == [
        (2, "injected", "system_prompt", True, SEED),
        (5, "write", "fs_write", True, V1),
        (7, "edit", "fs_write", True, V2),
    ]
    cur = mh[(mh["path"] == "mind.md") & mh["current"]]
    assert cur["seq"].tolist() == [7]


def test_log_rebuilt_backward_from_current(mind_file):
    """The log's seed never passed through a tool call; the current content, written by the
    call at seq 16, undoes the appends back to the first one."""
    mh = open_adf(mind_file).mind_history()
    assert _versions(mh, "mind/log.md") == [
        (3, "append", "reversed_append", True, "# Log\n\n- a"),
        (16, "append", "adf_files", True, "# Log\n\n- a\n- b"),
    ]


def test_log_not_rebuilt_without_evidence(tmp_path):
    """Without a verifiable current copy, appends to an unknown seed stay unknown, and say so."""
    old, live = _rows()
    p = build(tmp_path / "m2.adf", loop=old + live, files={"mind/log.md": "# Log\nother"})
    mh = open_adf(p).mind_history()
    log = mh[mh["path"] == "mind/log.md"]
    assert log["rebuilt"].tolist() == [False, False, True]
    assert log["op"].tolist() == ["append", "append", "current"]
    assert log["content"].isna().tolist() == [True, True, False]
    assert log["note"].iloc[0].startswith("its content never passed through a tool call")
    assert bool(log["current"].iloc[-1])


def test_deleted_page_from_file_audit(mind_file):
    """The page was written, changed by code, and deleted: the file audit keeps the last copy."""
    mh = open_adf(mind_file).mind_history()
    assert _versions(mh, "mind/gone.md") == [
        (5, "write", "fs_write", True, "G1"),
        (None, "snapshot", "file_audit", True, "G1 (edited by code)"),
        (11, "delete", "fs_delete", True, None),
    ]
    assert not mh.loc[mh["path"] == "mind/gone.md", "current"].any()


def test_mind_at_each_call(mind_file):
    """The mind injected at each call: the session-start snapshot, refreshed by the compaction
    (seq 13) though mind.md changed at seq 5 and 7 in between."""
    agent = open_adf(mind_file)
    expect = {3: SEED, 5: SEED, 7: SEED, 9: SEED, 11: SEED, 15: V2, 16: V2, 18: V2}
    for seq, mind in expect.items():
        assert agent.mind_at(seq) == mind, seq


def test_mind_at_by_snapshot_rule(tmp_path):
    """With no mind in the prompt, the rule applies to the rebuilt versions: the version in
    force when the session began; before any known version, None and a warning."""
    old, live = _rows()
    old[1] = row(2, "user", text("[Context: system_prompt] Base only."))
    live[1] = row(14, "user", text("[Context: system_prompt] Base only."))
    p = build(tmp_path / "nomind.adf", loop=live, audit=[{"source": "loop", "rows": old}])
    agent = open_adf(p)
    with pytest.warns(AdfWarning, match="shows no known version of mind.md"):
        assert agent.mind_at(15) == V2
    with pytest.warns(AdfWarning) as got:
        assert agent.mind_at(9) is None
    assert any("no version of mind.md is known before seq 9" in str(w.message) for w in got)


def _sha(s: str) -> str:
    return hashlib.sha1(s.encode("utf-8")).hexdigest()


def test_sample_mind_keeper_versions():
    """Every mind version the synth scenario wrote through a tool call still in the history is
    rebuilt exactly (truth: path, seq, sha1 of the content)."""
    truth = json.loads(sample("mind-keeper").with_suffix(".truth.json").read_text())
    kept = set(truth["history_seqs"])
    mh = open_adf(sample("mind-keeper")).mind_history()
    got = {
        (p, int(s), _sha(c))
        for p, s, c in zip(mh["path"], mh["seq"], mh["content"], strict=True)
        if not pd.isna(s) and not pd.isna(c)
    }
    want = {
        (v["path"], v["seq"], v["content_sha1"]) for v in truth["mind_versions"] if v["seq"] in kept
    }
    assert want and want <= got
    # and the current files are flagged as such, with their exact content
    for path, content in truth["final_files"].items():
        if path == "mind.md" or path.startswith("mind/"):
            cur = mh[(mh["path"] == path) & mh["current"]]
            assert [_sha(c) for c in cur["content"]] == [content], path


def test_sample_mind_keeper_mind_at_each_call():
    """The mind injected at every call (truth: sha1 of the snapshot in each system prompt),
    exactly and without a warning. The sample's prompts embed the mind as the runtime does
    (an ``<injected_file path="mind.md">`` block), so the index rewritten inside the lost
    (unaudited) span, which no surviving tool call shows, is recovered from the prompts written
    after that compaction, as on the real fixture."""
    agent = open_adf(sample("mind-keeper"))
    truth = json.loads(sample("mind-keeper").with_suffix(".truth.json").read_text())
    prompts = [r for r in truth["context_rows"] if r["category"] == "system_prompt"]
    lost = set(truth["lost_seqs"])
    kept = set(truth["history_seqs"])
    # the mind.md versions a surviving fs_write shows
    written = {
        v["content_sha1"]
        for v in truth["mind_versions"]
        if v["path"] == "mind.md" and v["seq"] in kept
    }
    hidden = {
        v["content_sha1"]
        for v in truth["mind_versions"]
        if v["path"] == "mind.md" and v["seq"] in lost
    }
    h = agent.history()
    calls = h.loc[h["kind"] == "assistant", "seq"].astype(int).tolist()
    n_match = n_prompt_only = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", AdfWarning)
        for c in calls:
            expect = [p for p in prompts if p["seq"] < c][-1]["mind_sha1"]
            got = agent.mind_at(c)
            assert got is not None and _sha(got) == expect, c
            n_match += 1
            if expect in hidden and expect not in written:
                n_prompt_only += 1
    # 239 model calls survive in the history (the rest were lost with the unaudited span);
    # 68 of them (after the prompts at seqs 295 and 305) ran with the index written at seq 292
    # inside that span, which before the runtime-style prompt layout came back None
    assert n_match == len(calls) == 239
    assert n_prompt_only == 68


def test_runtime_mind_keeper_history():
    """The real runtime's mind-keeper: 7 index revisions plus the seed; revision 4 was written
    in the discarded seqs 166..218 and is known only from the prompt at seq 220; revision 3
    was an in-place edit."""
    agent = open_adf(runtime_fixture("mind-keeper"))
    mh = agent.mind_history()
    mind = mh[mh["path"] == "mind.md"]
    assert mind["seq"].astype(int).tolist() == [2, 60, 117, 164, 220, 258, 315, 360]
    assert mind["op"].tolist() == [
        "injected",
        "write",
        "write",
        "edit",
        "injected",
        "write",
        "write",
        "write",
    ]
    assert mind["rebuilt"].all()
    revisions = [f"index revision {n}" for n in range(1, 8)]
    for content, rev in zip(mind["content"].iloc[1:], revisions, strict=True):
        assert rev in content
    assert "revision 3 (edited in place)" in mind["content"].iloc[3]
    assert mind["content"].iloc[-1] == agent.read_text("mind.md")
    assert bool(mind["current"].iloc[-1])
    # pages with YAML front matter; every current page is the adf_files content
    for path in agent.files()["path"]:
        if path.startswith("mind/") and path != "mind/log.md":
            cur = mh[(mh["path"] == path) & mh["current"]]
            assert cur["content"].tolist() == [agent.read_text(path)], path
            assert cur["content"].iloc[0].startswith("---\ntype: ")
    # the log: appends after the gap rebuilt backward from the file; before it, unknown
    log = mh[mh["path"] == "mind/log.md"]
    after = log[log["seq"] > 218]
    before = log[log["seq"] < 166]
    assert after["rebuilt"].all() and not before["rebuilt"].any()
    assert after["content"].iloc[-1] == agent.read_text("mind/log.md")


def test_runtime_mind_keeper_mind_at():
    """At every call the mind is the one injected in the system prompt in force."""
    agent = open_adf(runtime_fixture("mind-keeper"))
    h = agent.history()
    calls = h.loc[h["kind"] == "assistant", "seq"].astype(int).tolist()
    sp = agent.context_blocks().query("category == 'system_prompt'")
    for c in calls:
        body = sp[sp["seq"] < c]["text"].iloc[-1]
        mind = agent.mind_at(c)
        assert mind is not None and f'<injected_file path="mind.md">\n{mind}\n</injected_file>' in (
            body
        ), c
    # the seed index was in force at the first call, revision 7 at the last
    assert "index revision" not in agent.mind_at(calls[0])
    assert "index revision 7" in agent.mind_at(calls[-1])


def test_calls_on_other_files_are_not_read(tmp_path, monkeypatch):
    """File calls whose input names no mind file (here: notes/) are left unparsed, and with
    no call on a mind file no tool result is read (issue 38: big-runner x16 parsed 25,712
    inputs and every result for this); the mind's versions are what they were."""
    old, live = _rows()
    notes = [
        row(20, "assistant", [_w("n1", "notes/x.md", "the garden")], tokens=TOK),
        row(21, "user", [result("n1", "Successfully wrote")]),
        row(22, "assistant", [use("n2", "fs_read", {"path": "notes/x.md"})], tokens=TOK),
        row(23, "user", [result("n2", json.dumps({"content": "the garden"}))]),
    ]
    p = build(tmp_path / "m.adf", loop=old + live + notes, files={"mind.md": V2})
    with_notes = open_adf(p).mind_history()
    q = build(tmp_path / "m0.adf", loop=old + live, files={"mind.md": V2})
    pd.testing.assert_frame_equal(with_notes, open_adf(q).mind_history())
    parsed: list[str] = []
    real = _mind.loads_or_none

    def counted(raw):
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(_mind, "loads_or_none", counted)
    open_adf(p).mind_history()
    assert parsed and not any("notes/" in r for r in parsed)

    def forbidden(*_a, **_k):
        raise AssertionError("result_texts was read")

    monkeypatch.setattr(_mind, "result_texts", forbidden)
    only_notes = build(tmp_path / "n.adf", loop=notes, files={"mind.md": V2})
    mh = open_adf(only_notes).mind_history()
    assert mh["op"].tolist() == ["current"]


def test_an_escaped_mind_path_is_still_read():
    """The input filter keeps any JSON text with a \\u escape: ``"\\u006dind.md"`` is
    mind.md once decoded, though its text holds no ``mind``."""
    raws = pd.Series(
        ['{"path": "\\u006dind.md"}', '{"path": "mi\\/nd"}', '{"path": "mind/a.md"}', None],
        dtype="string",
    )
    assert _mind._may_name_mind(raws).tolist() == [True, False, True, False]
    assert _mind.loads_or_none(raws[0]) == {"path": "mind.md"}
