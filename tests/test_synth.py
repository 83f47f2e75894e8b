"""Tests for adfsynth, checked with plain sqlite3 + brotli + json (not adfkit's reader)."""

from __future__ import annotations

import ast
import json
import math
import pathlib
import sqlite3

import brotli
import pytest

from adfsynth.estimator import estimate_tokens, js_len
from adfsynth.observation import signature, tool_class
from adfsynth.runtime import Sim
from adfsynth.scenarios import SCENARIOS
from adfsynth.texts import STARTUP_TEXT, context_category
from adfsynth.truth import GroundTruth, sha1
from adfsynth.writer import write_all, write_scenario

ROOT = pathlib.Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_agents"
NAMES = list(SCENARIOS)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synth")
    truths = write_all(folder)
    return folder, truths


def _open(path: pathlib.Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?immutable=1", uri=True)


def _cols(con, table):
    return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]


def _load(path: pathlib.Path):
    """Live rows, decoded audit rows, and the merged history (by seq)."""
    con = _open(path)
    lcols = _cols(con, "adf_loop")
    live = []
    for r in con.execute(f"SELECT {', '.join(lcols)} FROM adf_loop"):
        d = dict(zip(lcols, r, strict=True))
        d["content_json"] = json.loads(d["content_json"])
        if isinstance(d.get("tokens"), str):
            d["tokens"] = json.loads(d["tokens"])
        live.append(d)
    acols = _cols(con, "adf_audit")
    audits = []
    query = f"SELECT {', '.join(acols)} FROM adf_audit ORDER BY id" if acols else "SELECT 1 WHERE 0"
    for r in con.execute(query):
        a = dict(zip(acols, r, strict=True))
        text = brotli.decompress(a["data"]).decode("utf-8")
        a["text"] = text
        a["decoded"] = json.loads(text)
        audits.append(a)
    history = {}
    for a in audits:
        if a["source"] == "loop":
            for el in a["decoded"]:
                history.setdefault(el["seq"], el)
    for r in live:
        history.setdefault(r["seq"], r)
    con.close()
    return live, audits, history


def _text(row) -> str:
    for b in row["content_json"]:
        if b.get("type") == "text":
            return b.get("text") or ""
    return ""


def _is_context(row) -> bool:
    c = row["content_json"]
    return len(c) == 1 and c[0].get("type") == "text" and c[0]["text"].startswith("[Context: ")


# ---------------------------------------------------------------------------


def test_never_imports_adfkit():
    """No adfsynth module imports adfkit: its ground truth must check the reader, not repeat it."""
    for path in sorted((ROOT / "adfsynth").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            assert not [n for n in names if n.split(".")[0] == "adfkit"], path.name


def test_determinism(tmp_path):
    for name in ("long-runner", "messenger", "legacy-v27"):
        a = write_scenario(name, tmp_path / f"a-{name}.adf", seed=3)
        b = write_scenario(name, tmp_path / f"b-{name}.adf", seed=3)
        assert a.to_json() == b.to_json()
        assert (tmp_path / f"a-{name}.adf").read_bytes() == (
            tmp_path / f"b-{name}.adf"
        ).read_bytes()


def test_seeds_differ(tmp_path):
    a = write_scenario("forgetful", tmp_path / "a.adf", seed=1)
    b = write_scenario("forgetful", tmp_path / "b.adf", seed=2)
    assert a.to_json() != b.to_json()


def test_truth_roundtrip(generated):
    _, truths = generated
    for gt in truths.values():
        again = GroundTruth.from_dict(json.loads(gt.to_json()))
        assert again.to_json() == gt.to_json()


@pytest.mark.parametrize("name", NAMES)
def test_file_basics(generated, name):
    folder, truths = generated
    path = folder / f"{name}.adf"
    assert path.stat().st_size < 2 * 1024 * 1024
    for suffix in ("-wal", "-shm", "-journal"):
        assert not path.with_name(path.name + suffix).exists()
    con = _open(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal"
    meta = dict(con.execute("SELECT key, value FROM adf_meta"))
    gt = truths[name]
    key = "adf_schema_version" if gt.schema_version >= 14 else "schema_version"
    assert meta[key] == str(gt.schema_version)
    assert "adf_clean_close" in meta
    (n,) = con.execute("SELECT count(*) FROM adf_identity").fetchone()
    assert n == 1
    (seqmax,) = con.execute("SELECT seq FROM sqlite_sequence WHERE name='adf_loop'").fetchone()
    assert seqmax == gt.max_seq
    cfg = json.loads(con.execute("SELECT config_json FROM adf_config").fetchone()[0])
    assert cfg["context"]["compact_threshold"] == gt.threshold
    con.close()


@pytest.mark.parametrize("name", NAMES)
def test_seqs_and_history(generated, name):
    folder, truths = generated
    gt = truths[name]
    live, audits, history = _load(folder / f"{name}.adf")
    assert sorted(r["seq"] for r in live) == gt.live_seqs
    assert sorted(history) == gt.history_seqs
    assert set(gt.history_seqs) | set(gt.lost_seqs) == set(range(1, gt.max_seq + 1))
    assert not set(gt.history_seqs) & set(gt.lost_seqs)
    # creation order: created_at never decreases along seq (legacy zeros excepted)
    last = 0
    for s in sorted(history):
        at = history[s].get("created_at", 0)
        if at:
            assert at >= last, s
            last = at
    # every seq is archived in at most one loop blob, and never both archived and live
    seen = set()
    for a in audits:
        if a["source"] == "loop":
            for el in a["decoded"]:
                assert el["seq"] not in seen
                seen.add(el["seq"])
    assert not seen & {r["seq"] for r in live}


@pytest.mark.parametrize("name", NAMES)
def test_audit_rows(generated, name):
    folder, truths = generated
    gt = truths[name]
    _, audits, _ = _load(folder / f"{name}.adf")
    assert [a["id"] for a in audits] == [a["id"] for a in gt.audit_rows]
    for a, t in zip(audits, gt.audit_rows, strict=True):
        assert a["size_bytes"] == len(a["text"].encode("utf-16-le")) // 2
        assert a["source"] == t["source"]
        if a["source"] == "loop":
            arr = a["decoded"]
            assert isinstance(arr, list) and a["entry_count"] == len(arr)
            seqs = [el["seq"] for el in arr]
            assert seqs == t["seqs"]
            for el in arr:
                assert isinstance(el["content_json"], list)
                assert None not in el.values()
                if "tokens" in el and gt.schema_version >= 21:
                    assert isinstance(el["tokens"], dict)
            if "start_seq" in a:
                assert (a["start_seq"], a["end_seq"]) == (min(seqs), max(seqs))
                assert a["ref"] is None
            else:
                assert a["start_at"] == arr[0]["created_at"]
                assert a["end_at"] == arr[-1]["created_at"]
            # display order inside the blob
            keys = [(el.get("ord", el["seq"]), el["seq"]) for el in arr]
            assert keys == sorted(keys)
        else:
            assert a["entry_count"] == 1 and isinstance(a["decoded"], dict)
            if a["source"] == "file":
                assert a["ref"] == a["decoded"]["path"]
                assert set(a["decoded"]) >= {"path", "content_base64", "size"}
            else:
                assert a["ref"] == a["decoded"]["id"]


@pytest.mark.parametrize("name", NAMES)
def test_compactions_match_truth(generated, name):
    folder, truths = generated
    gt = truths[name]
    live, audits, history = _load(folder / f"{name}.adf")
    by_id = {a["id"]: a for a in audits}
    for c in gt.compactions:
        s = history.get(c["summary_seq"])
        if s is None:  # summary itself swept by a later unaudited compaction
            assert c["summary_seq"] in gt.lost_seqs
            continue
        text = _text(s)
        assert text.startswith(c["marker"] + " ")
        assert "\n\n---\nYour loop was compacted." in text
        assert s.get("ord") == c["ord"]
        if c["tail_seqs"] and gt.schema_version >= 28:
            assert c["ord"] == min(c["tail_seqs"]) - 1
        else:
            assert c["ord"] is None
        if gt.schema_version >= 28:
            assert s.get("model") == gt.model_id and isinstance(s.get("tokens"), dict)
        else:
            assert s.get("model") is None and s.get("tokens") is None
        if c["audited"]:
            blob = by_id[c["audit_id"]]
            assert [el["seq"] for el in blob["decoded"]] == c["swept_seqs"]
        else:
            assert c["audit_id"] is None
            assert set(c["swept_seqs"]) <= set(gt.lost_seqs)
        assert not set(c["tail_seqs"]) & (
            set(c["swept_seqs"]) if gt.schema_version >= 28 else set()
        )
        for p in c["mentioned_paths"]:
            assert p in text
        for p in c["omitted_paths"]:
            assert f"`{p}`" not in text


def test_tool_pairs(generated):
    folder, truths = generated
    for name in NAMES:
        _, _, history = _load(folder / f"{name}.adf")
        uses, results = {}, {}
        seqs = sorted(history)
        for _i, s in enumerate(seqs):
            for b in history[s]["content_json"]:
                if b.get("type") == "tool_use":
                    uses[b["id"]] = s
                elif b.get("type") == "tool_result":
                    results[b["tool_use_id"]] = s
        assert set(uses) == set(results), name
        for tid, s in uses.items():
            assert results[tid] > s
            assert tid.startswith("toolu_")


def _estimate(rows):
    return estimate_tokens([r["content_json"] for r in rows])


@pytest.mark.parametrize("name", NAMES)
def test_threshold_rule(generated, name):
    """Walk history in creation order and replay the runtime's compaction rule."""
    folder, truths = generated
    gt = truths[name]
    t = gt.threshold
    _, _, history = _load(folder / f"{name}.adf")
    comp = {c["summary_seq"]: c for c in gt.compactions}
    clear_rest_end = {max(c["rest_seqs"]) for c in gt.clears if c.get("rest_seqs")}
    chat, flushed, grace_done = 0, False, False
    n_auto = 0
    for s in range(1, gt.max_seq + 1):
        row = history.get(s)
        if row is None:
            continue  # lost (unaudited) rows: the truth's nudge records stand in for them
        text = _text(row)
        if row["role"] == "user" and text.startswith("Context is about to be compacted."):
            assert chat >= t and not flushed, s
            flushed, grace_done = True, False
        elif row["role"] == "assistant":
            if chat >= t:
                assert flushed and not grace_done, (
                    f"{name}: call at S{s} crossed {t} without compacting"
                )
                grace_done = True
            tok = row["tokens"]
            chat = tok["input"] + tok["output"] if isinstance(tok, dict) else 0
        elif s in comp:
            c = comp[s]
            if c["kind"] == "auto":
                n_auto += 1
                if c["audited"]:
                    assert flushed and grace_done and chat >= t, s
                    assert c["trigger_chat_tokens"] == chat
                else:
                    (nudge,) = [n for n in gt.nudges if n.get("grace_seq", 0) < s][-1:]
                    assert nudge["chat_tokens"] >= t
                    assert nudge["grace_chat_tokens"] == c["trigger_chat_tokens"] >= t
            assert c["kind"] != "preflight"
            tail = [history[x] for x in c["tail_seqs"] if x in history]
            chat = _estimate([row] + tail)
            flushed = grace_done = False
        if s in clear_rest_end:
            chat, flushed, grace_done = 0, False, False
    assert n_auto == sum(
        1 for c in gt.compactions if c["kind"] == "auto" and c["summary_seq"] in history
    )


# --- the self-observation reference analyser, reduced (ADF_FORMAT §8.2/8.3) ---------

_PREFIX_KIND = [
    ("A scheduled timer has fired", "timer"),
    ("Agent started", "startup"),
    ("You received a message", "inbox"),
    ("A batch of", "inbox"),
    ("A task has completed", "task"),
    ("A task has been created", "task"),
    ("A file has been", "file_change"),
    ("[Loop Compacted", "compaction"),
]


def _ref_turns(history):
    turns, cur = [], None
    for s in sorted(history):
        row = history[s]
        blocks = row["content_json"]
        if row["role"] == "user":
            texts = [b for b in blocks if b.get("type") == "text"]
            if texts and not any(b.get("type") == "tool_result" for b in blocks):
                kind = next((k for p, k in _PREFIX_KIND if texts[0]["text"].startswith(p)), "chat")
                cur = {"start": s, "kind": kind, "calls": [], "out": 0}
                turns.append(cur)
            continue
        if cur is None:
            cur = {"start": s, "kind": "unknown", "calls": [], "out": 0}
            turns.append(cur)
        tok = row.get("tokens")
        if isinstance(tok, dict):
            cur["out"] += tok.get("output", 0)
        for b in blocks:
            if b.get("type") == "tool_use":
                cur["calls"].append((b["name"], b["input"]))
    rolled = []
    for tr in turns:
        if tr["kind"] == "compaction":
            continue
        cls = [tool_class(n, i) for n, i in tr["calls"]]
        n_world, n_int = cls.count("world"), cls.count("internal")
        tr["null"] = bool(cls) and n_world == 0 and n_int == 0
        tr["world"] = n_world
        rolled.append(tr)
    return rolled


def _anomalies(history):
    rolled = _ref_turns(history)
    window = rolled[-50:]
    streak = 0
    for tr in reversed(window):
        if not tr["null"]:
            break
        streak += 1
    sigs = {}
    for tr in rolled:
        for n, i in tr["calls"]:
            k = signature(n, i)
            sigs[k] = sigs.get(k, 0) + 1
    spend = (
        len(window) >= 20
        and sum(t["world"] for t in window) == 0
        and sum(t["out"] for t in window) > 0
    )
    return streak, {k: v for k, v in sigs.items() if v >= 3}, spend


def test_long_runner_planted(generated):
    folder, truths = generated
    gt = truths["long-runner"]
    live, audits, history = _load(folder / "long-runner.adf")
    assert sum(1 for c in gt.compactions if c["kind"] == "auto") >= 4
    assert any(c["kind"] == "manual" and c["instructions"] for c in gt.compactions)
    assert len(gt.history_seqs) >= 300
    streak, sigs, spend = _anomalies(history)
    p = gt.planted
    assert streak >= 5 and len(p["null_streak"]) >= 5
    assert streak == len(p["null_streak"])
    assert sigs.get(p["repeated_signature"]["signature"]) == p["repeated_signature"]["count"] >= 3
    assert sigs == gt.signatures_ge3
    assert spend and len(p["spend_without_change"]) >= 20
    assert p["refetches"]
    swept = {s for c in gt.compactions for s in c["swept_seqs"]}
    for r in p["refetches"]:
        assert r["original_seq"] in swept and r["refetch_seq"] > r["after_summary_seq"]


def test_clean_flags_nothing(generated):
    folder, truths = generated
    gt = truths["clean"]
    _, _, history = _load(folder / "clean.adf")
    streak, sigs, spend = _anomalies(history)
    assert streak < 5 and not sigs and not spend
    assert len(gt.compactions) >= 1 and all(c["audited"] for c in gt.compactions)


def test_forgetful_gaps(generated):
    folder, truths = generated
    gt = truths["forgetful"]
    _, audits, _ = _load(folder / "forgetful.adf")
    assert not audits
    assert len(gt.compactions) >= 2 and gt.lost_seqs
    assert all(c["marker"] == "[Loop Compacted]" and not c["audited"] for c in gt.compactions)


def test_messenger(generated):
    folder, truths = generated
    gt = truths["messenger"]
    live, audits, history = _load(folder / "messenger.adf")
    by_src = {}
    for a in audits:
        by_src.setdefault(a["source"], []).append(a)
    assert sorted(a["ref"] for a in by_src["inbox_message"]) == sorted(gt.inbox_ids)
    assert sorted(a["ref"] for a in by_src["outbox_message"]) == sorted(gt.outbox_ids)
    assert (
        sorted(a["ref"] for a in by_src["file"]) == sorted(gt.deleted_files)
        and len(gt.deleted_files) == 3
    )
    con = _open(folder / "messenger.adf")
    paths = {r[0] for r in con.execute("SELECT path FROM adf_files")}
    assert not paths & set(gt.deleted_files)
    mids = {r[0] for r in con.execute("SELECT message_id FROM adf_inbox")}
    assert mids == set(gt.inbox_ids)
    con.close()
    (clear,) = gt.clears
    a1, a2 = clear["audit_ids"]
    assert a2 == a1 + 1
    ids = {a["id"]: a for a in audits}
    assert [el["seq"] for el in ids[a1]["decoded"]] == clear["slice_seqs"]
    assert [el["seq"] for el in ids[a2]["decoded"]] == clear["rest_seqs"]
    # after the clear only newer rows remain, starting with re-injected context
    after = sorted(r["seq"] for r in live)
    assert min(after) > max(clear["rest_seqs"])
    assert _is_context(next(r for r in live if r["seq"] == min(after)))
    manual = [c for c in gt.compactions if c["kind"] == "manual"]
    assert manual and manual[0]["ord"] is not None


def test_mind_keeper(generated):
    folder, truths = generated
    gt = truths["mind-keeper"]
    _, _, history = _load(folder / "mind-keeper.adf")
    assert [c["value"] for c in gt.config_changes] == [False, True]
    off, on = gt.config_changes[0]["seq"], gt.config_changes[1]["seq"]
    between = [c for c in gt.compactions if off < c["summary_seq"] < on]
    assert between and all(not c["audited"] for c in between)
    assert any(c["audited"] for c in gt.compactions)
    # snapshot rule: system_prompt rows carry mind.md as of the last reset, verbatim in the
    # runtime's injected-file block (soul.md in its own block before it)
    n_prompts = 0
    for ctx in gt.context_rows:
        if ctx["category"] != "system_prompt" or ctx["seq"] not in history:
            continue
        text = _text(history[ctx["seq"]])
        head, sep, rest = text.partition('\n<injected_file path="mind.md">\n')
        mind, end, _ = rest.partition("\n</injected_file>\n")
        assert sep and end and text.count("<injected_file ") == 2, ctx["seq"]
        assert '<injected_file path="soul.md">\n# Soul\n' in head
        assert sha1(mind) == ctx["mind_sha1"]
        n_prompts += 1
    # 7 prompts (session start, after each of the 4 compactions, after each config change);
    # the 2 written while loop audit was off are lost with their span
    assert n_prompts == 5
    # the index rewritten inside the unaudited (lost) span is shown only by the prompt after
    lost = set(gt.lost_seqs)
    hidden = [m for m in gt.mind_versions if m["path"] == "mind.md" and m["seq"] in lost]
    assert hidden and any(
        c.get("mind_sha1") == hidden[-1]["content_sha1"] and c["seq"] in history
        for c in gt.context_rows
    )
    written = {m["path"] for m in gt.mind_versions}
    assert {"mind.md", "mind/log.md"} <= written and any(
        p.startswith("mind/") for p in written - {"mind/log.md"}
    )
    # every mind write in history carries the full content
    for m in gt.mind_versions:
        row = history.get(m["seq"])
        if row is None:
            continue
        contents = [
            b["input"]["content"]
            for b in row["content_json"]
            if b.get("type") == "tool_use"
            and b["name"] == "fs_write"
            and b["input"]["path"] == m["path"]
        ]
        assert any(sha1(c) == m["content_sha1"] for c in contents)


def test_preflight_sweeps_the_context_rows():
    """As the runtime (seen in the real big-runner): the context rows of an iteration are
    written before the pre-flight guard, so a pre-flight compaction sweeps them; the call goes
    out right after the summary and the rows follow at the next iteration."""
    sim = Sim("preflight", 0, threshold=30000, audit={"loop": True}, description="Probe.")
    sim.trigger(STARTUP_TEXT, "startup")  # seq 1
    # seq 2 prompt, seq 3 call, seq 4 results: the config change re-arms the prompt row, and a
    # 120000-char result lifts the estimate (34286 tokens) over the threshold while chat tokens
    # (the last call's input + output) stay far below it
    sim.step(
        None,
        [
            ("sys_update_config", {"path": "context.audit.files", "value": True}),
            ("fs_read", {"path": "big.txt"}, "x" * 120000, False),
        ],
    )
    assert sim.chat_tokens < 30000 <= sim.estimate()
    sim.step("Read it.")
    sim.step("Again.")
    kinds = {s: context_category(r["content"]) or r["role"] for s, r in sim.history.items()}
    (comp,) = sim.gt.compactions
    assert comp["kind"] == "preflight" and comp["swept_seqs"] == [1, 2, 3, 4, 5]
    assert kinds[5] == "system_prompt" and comp["summary_seq"] == 6
    assert [kinds[7], kinds[8], kinds[9]] == ["assistant", "system_prompt", "assistant"]
    assert [r["seq"] for r in sim.rows] == [6, 7, 8, 9]


def test_legacy_layouts(generated):
    folder, truths = generated
    con = _open(folder / "legacy-v27.adf")
    assert "ord" not in _cols(con, "adf_loop")
    assert _cols(con, "adf_audit") == [
        "id",
        "source",
        "start_at",
        "end_at",
        "entry_count",
        "size_bytes",
        "data",
        "created_at",
    ]
    con.close()
    gt = truths["legacy-v27"]
    assert gt.reappended and any(c["kind"] == "manual" for c in gt.compactions)
    con = _open(folder / "legacy-v12.adf")
    assert "model" not in _cols(con, "adf_loop")
    meta = dict(con.execute("SELECT key, value FROM adf_meta"))
    assert meta["schema_version"] == "12" and "adf_schema_version" not in meta
    toks = [r[0] for r in con.execute("SELECT tokens FROM adf_loop WHERE tokens IS NOT NULL")]
    assert toks and all(isinstance(x, int) for x in toks)
    (zeros,) = con.execute("SELECT count(*) FROM adf_loop WHERE created_at = 0").fetchone()
    assert zeros > 0
    con.close()


def test_estimator_basics():
    rows = [
        [{"type": "text", "text": "abc"}],
        [{"type": "tool_use", "name": "x", "input": {"a": 1}}],
    ]
    # 16+3 + 16 + 1 + (2 + 1 + 5 + 2) = 46 -> ceil(46/3.5) = 14
    assert estimate_tokens(rows) == math.ceil(46 / 3.5)
    assert js_len("😀") == 2


def test_input_tokens_cover_conversation(generated):
    """Each assistant call's input is at least the estimate of the live conversation it saw."""
    folder, truths = generated
    gt = truths["long-runner"]
    _, _, history = _load(folder / "long-runner.adf")
    comp_at = {c["summary_seq"]: c for c in gt.compactions}
    convo: list[dict] = []
    for s in sorted(history):
        row = history[s]
        if s in comp_at:
            c = comp_at[s]
            tail = [history[x] for x in c["tail_seqs"]]
            convo = [row] + tail
            continue
        if row["role"] == "assistant":
            assert row["tokens"]["input"] >= _estimate(convo)
        if not _is_context(row):
            convo.append(row)


def test_committed_samples_are_current(generated):
    _, truths = generated
    for name, gt in truths.items():
        p = SAMPLES / f"{name}.truth.json"
        assert p.exists(), name
        assert json.loads(p.read_text(encoding="utf-8")) == json.loads(gt.to_json()), name
        assert (SAMPLES / f"{name}.adf").exists()
