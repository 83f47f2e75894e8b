"""OpenHands conversations: the real fixtures with figures read here from their JSON (plain
``json``, no adfkit), the simulator's samples against its ground truth, and hostile folders
built in ``tmp_path`` (the fixtures are only read)."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import fingerprint

from adfkit._base.errors import AdfError, AdfWarning, NotTranscriptError, UnknownFormatError
from adfkit._core.registry import Probe, recognise
from adfkit._facade.agent import AgentFile
from adfkit._sources import openhands as oh
from adfkit._sources.openhands.parser import parse_openhands
from adfsynth import openhands as synth

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "openhands"
REAL = ("cd94562403b9487ebdd4018e3f531dfd", "a3f2edad6f594a2f820cbabb09f93b3d")
GENERATED = "d1111eab899d427f90bccded25f0b1a0"
ROW_KINDS = {
    "SystemPromptEvent",
    "SystemPromptUpdateEvent",
    "MessageEvent",
    "ActionEvent",
    "ObservationEvent",
    "Condensation",
}


def fixture(name: str) -> Path:
    p = FIXTURES / name
    if not p.is_dir():
        pytest.skip(f"OpenHands fixture {p} not present (../shared is absent in a user's clone)")
    return p


def plain_events(folder: Path) -> list[dict[str, Any]]:
    """The event files by index, read with ``json`` only."""
    files = sorted(
        (f for f in (folder / "events").iterdir() if f.name.startswith("event-")),
        key=lambda f: int(f.name.split("-")[1]),
    )
    return [json.loads(f.read_text()) for f in files]


def plain_usage(folder: Path) -> dict[str, dict[str, int]]:
    """Per usage id, the sums of its per-call TokenUsage records, read with ``json`` only."""
    state = json.loads((folder / "base_state.json").read_text())
    out = {}
    for uid, m in state["stats"]["usage_to_metrics"].items():
        tus = m["token_usages"]
        out[uid] = {
            k: sum(u[k] for u in tus)
            for k in (
                "prompt_tokens",
                "completion_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
            )
        }
        out[uid]["n"] = len(tus)
    return out


def opened(folder: Path, **kw: Any) -> AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AdfWarning)
        return AgentFile(oh.open_session(folder, **kw))


def quiet(f: Any, *a: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AdfWarning)
        return f(*a, **kw)


# --- recognition ------------------------------------------------------------------------------


def test_claims_the_folder_not_its_files(tmp_path: Path) -> None:
    d = fixture(GENERATED)
    assert oh.claims(Probe(d))
    assert oh.claims(Probe(d / "events"))  # its events folder names the conversation
    one_event = next((d / "events").glob("event-00000-*.json"))
    assert not oh.claims(Probe(one_event))
    assert not oh.claims(Probe(d / "base_state.json"))
    assert not oh.claims(Probe(FIXTURES))  # a folder of conversations is not one
    assert not oh.claims(Probe(tmp_path))  # an empty folder
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "notes.json").write_text("{}")
    assert not oh.claims(Probe(tmp_path))  # an events/ folder of other files
    assert not oh.claims(Probe(ROOT / "sample_agents"))
    # through the registry: exactly one format claims the folder; none claims one event file
    assert recognise(d).name == "openhands"
    with pytest.raises(UnknownFormatError):
        recognise(one_event)
    with pytest.raises(UnknownFormatError):
        recognise(d / "base_state.json")


def test_every_conversation_is_claimed_by_openhands_alone(samples: Path) -> None:
    from adfkit._core import registry

    real = [p for p in FIXTURES.iterdir() if p.is_dir()] if FIXTURES.is_dir() else []
    folders = [*oh.find(samples), *real]
    assert len(folders) >= 2
    for p in folders:
        assert [s.name for s in registry.claimants(Probe(p))] == ["openhands"], p
        for f in (p / "events").iterdir():  # no format takes one event file for an input
            assert [s.name for s in registry.claimants(Probe(f))] == [], f


def test_adfkit_open_reads_a_conversation_folder() -> None:
    import adfkit

    d = fixture(GENERATED)
    a = quiet(adfkit.open, d)
    assert a.source.format == "openhands"
    assert len(a.compactions()) == 3
    assert a.info()["provider"] == "openai"


def test_not_a_conversation_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(NotTranscriptError, match="not an OpenHands conversation"):
        parse_openhands(tmp_path)
    f = tmp_path / "x.json"
    f.write_text("{}")
    with pytest.raises(NotTranscriptError, match="not a folder"):
        parse_openhands(f)
    with pytest.raises(NotTranscriptError, match="no such folder"):
        parse_openhands(tmp_path / "missing")


# --- the real fixtures ------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*REAL, GENERATED])
def test_fixture_rows_and_calls_match_the_files(name: str) -> None:
    d = fixture(name)
    evs = plain_events(d)
    a = opened(d)
    h = a.history()
    n_actions = sum(e["kind"] == "ActionEvent" for e in evs)
    responses = {e["llm_response_id"] for e in evs if e["kind"] == "ActionEvent"}
    expected_rows = sum(e["kind"] in ROW_KINDS for e in evs) - (n_actions - len(responses))
    assert len(h) == expected_rows
    assert (h["kind"] == "compaction_summary").sum() == sum(
        e["kind"] == "Condensation" for e in evs
    )
    # every tool call joined to its observation by tool_call_id
    calls = a.source.history()
    uses = [b["id"] for c in calls["content"] for b in json.loads(c) if b["type"] == "tool_use"]
    results = [
        b["tool_use_id"]
        for c in calls["content"]
        for b in json.loads(c)
        if b["type"] == "tool_result"
    ]
    assert sorted(uses) == sorted(e["tool_call_id"] for e in evs if e["kind"] == "ActionEvent")
    assert sorted(results) == sorted(uses)
    # usage: one call per TokenUsage, joined by response id; agent and condenser apart
    sums = plain_usage(d)
    u = quiet(a.usage)
    agent = u[u["call_kind"] == "assistant"]
    comp = u[u["call_kind"] == "compaction"]
    agent_uid = next(k for k in sums if k != "condenser")
    assert int(agent["tokens_input"].sum()) == sums[agent_uid]["prompt_tokens"]
    assert int(agent["tokens_output"].sum()) == sums[agent_uid]["completion_tokens"]
    assert int(agent["tokens_cache_read"].sum()) == sums[agent_uid]["cache_read_tokens"]
    assert len(agent) == sums[agent_uid]["n"]
    if "condenser" in sums:
        assert len(comp) == sums["condenser"]["n"]
        assert int(comp["tokens_input"].sum()) == sums["condenser"]["prompt_tokens"]
    else:
        assert len(comp) == 0
    assert a.info()["file_bytes"] == sum(f.stat().st_size for f in d.rglob("*") if f.is_file())


def test_real_fixture_values() -> None:
    d = fixture(REAL[0])
    a = opened(d)
    u = quiet(a.usage)
    # README: prompt 3778/3869/3936, cache_read 0/3712/3840
    assert u["tokens_input"].tolist() == [3778, 3869, 3936]
    assert u["tokens_cache_read"].tolist() == [0, 3712, 3840]
    assert a.info()["model"] == "openai/gpt-4o-mini"
    assert a.info()["context_window"] == 128000
    assert a.integrity().empty
    # local times with no zone; the cost timestamps (epoch) put this machine at UTC
    first = json.loads(next((d / "events").glob("event-00000-*.json")).read_text())
    want = pd.Timestamp(first["timestamp"][:23], tz="UTC")
    assert a.history()["created_at"].iloc[0] == want
    # the stubbed run: three responses, one TokenUsage
    b = opened(fixture(REAL[1]))
    assert len(quiet(b.usage)) == 1
    checks = b.integrity()["check"].tolist()
    assert checks == ["call_without_usage"]
    assert b.source.calls()["tokens_input"].isna().sum() == 2


def test_generated_fixture_condensations_are_exactly_the_forgotten_ids() -> None:
    d = fixture(GENERATED)
    evs = plain_events(d)
    conds = [e for e in evs if e["kind"] == "Condensation"]
    a = opened(d)
    c = a.compactions()
    assert len(c) == len(conds) == 3
    uuid = dict(zip(a.source.row_index()["seq"], a.source.row_index()["uuid"], strict=True))
    kind = dict(zip(a.history()["seq"], a.history()["kind"], strict=True))
    for (_, row), cond in zip(c.iterrows(), conds, strict=True):
        named = {
            uuid[q] + "-summary" if kind[q] == "compaction_summary" else uuid[q]
            for q in row["swept_seqs"]
        }
        assert named == set(cond["forgotten_event_ids"])
        assert row["n_swept"] == len(cond["forgotten_event_ids"])
        assert uuid[row["summary_seq"]] == cond["id"]
        assert row["kind"] == "auto"  # no CondensationRequest in this file: inferred
        assert row["summary_chars"] == len(cond["summary"])
    # the condenser calls are the summaries' usage, joined by the condensation's response id
    state = json.loads((d / "base_state.json").read_text())
    cu = {
        u["response_id"]: u for u in state["stats"]["usage_to_metrics"]["condenser"]["token_usages"]
    }
    assert c["compaction_input"].tolist() == [
        cu[x["llm_response_id"]]["prompt_tokens"] for x in conds
    ]
    # the first keep_first events (system prompt, first message) are never forgotten
    assert all({1, 2} <= set(t) for t in c["tail_seqs"])
    cfg = a.config()
    assert cfg["context"]["compact_threshold"] == 128000  # no max_tokens: the window
    assert "max_size=10 (recorded)" in cfg["compact_rule"]
    assert "keep_first=2 (recorded)" in cfg["compact_rule"]
    assert a.source.meta()["compaction_trigger"].startswith("inferred")


def test_fixtures_are_not_touched() -> None:
    d = fixture(GENERATED)
    before = fingerprint(d)
    a = opened(d)
    a.history(), a.compactions(), quiet(a.usage), a.integrity(), a.replay()
    assert fingerprint(d) == before


# --- the simulator's samples ------------------------------------------------------------------


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synth.write_samples(tmp_path_factory.mktemp("synth"))


def _truths(root: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(root.glob("*.truth.json"))]


def test_synth_rows_kinds_and_usage(samples: Path) -> None:
    for t in _truths(samples):
        a = opened(samples / "conversations" / t["folder"])
        h = a.history()
        idx = a.source.row_index()
        assert (idx["line"] - 1).tolist() == [r[0] for r in t["rows"]]
        assert h["kind"].tolist() == t["row_kinds"]
        u = quiet(a.usage)
        agent = u[u["call_kind"] == "assistant"]
        assert int(agent["tokens_input"].sum()) == t["usage_sums"]["agent"]["prompt_tokens"]
        assert (
            int(agent["tokens_cache_write"].sum()) == t["usage_sums"]["agent"]["cache_write_tokens"]
        )
        assert len(agent) == t["n_agent_calls"]
        comp = u[u["call_kind"] == "compaction"]
        assert len(comp) == len(t["condensations"])
        if t["condensations"]:
            cs = t["usage_sums"]["condenser"]
            assert int(comp["tokens_input"].sum()) == cs["prompt_tokens"]
            assert int(comp["tokens_output"].sum()) == cs["completion_tokens"]


def test_synth_condensations(samples: Path) -> None:
    t = next(x for x in _truths(samples) if x["condensations"])
    a = opened(samples / "conversations" / t["folder"])
    c = a.compactions()
    line = dict(zip(a.source.row_index()["seq"], a.source.row_index()["line"], strict=True))
    assert len(c) == len(t["condensations"]) >= 3
    firsts = {r[0] for r in t["rows"]}  # a row is named by its first event (parallel calls: many)
    for (_, row), truth in zip(c.iterrows(), t["condensations"], strict=True):
        gone = set(truth["forgotten"] + truth["forgotten_summaries"])
        assert all(set(r) <= gone or not set(r) & gone for r in t["rows"])  # whole rows
        swept = sorted(line[q] - 1 for q in row["swept_seqs"])
        assert swept == sorted(gone & firsts)
        assert line[row["summary_seq"]] - 1 == truth["idx"]
        assert row["kind"] == truth["trigger"]
        assert row["trigger_tokens"] == truth["agent_total_before"]
        assert row["compaction_input"] == truth["usage"]["prompt_tokens"]
        assert row["compaction_output"] == truth["usage"]["completion_tokens"]
    assert c["kind"].tolist().count("manual") == 1  # the user's /condense


def test_synth_half_written_last_event_and_stray_usage(samples: Path) -> None:
    t = next(x for x in _truths(samples) if x["half_written_last"])
    a = opened(samples / "conversations" / t["folder"])
    found = a.integrity()
    checks = set(found["check"])
    assert {"truncated_last_event", "usage_without_event"} <= checks
    last = len(t["kinds"]) - 1
    assert found.loc[found["check"] == "truncated_last_event", "rows"].tolist() == [(last,)]
    assert a.info()["live"] is True
    calls = a.source.calls()
    stray = calls[calls["seq"].isna()]
    assert stray["tokens_input"].tolist() == [t["usage_sums"]["title"]["prompt_tokens"]]
    # the leaf is the half-written event: the branch is walked from the event before it
    assert a.info()["branches"] == 0
    assert "leaf_not_found" not in checks


def test_synth_local_times_and_subagent(samples: Path) -> None:
    t = next(x for x in _truths(samples) if x["half_written_last"])
    d = samples / "conversations" / t["folder"]
    a = opened(d)
    first = json.loads(next((d / "events").glob("event-00000-*.json")).read_text())
    local = pd.Timestamp(first["timestamp"], tz="UTC")
    assert a.history()["created_at"].iloc[0] == local - pd.Timedelta(hours=t["zone_offset_hours"])
    assert "UTC+02:00 inferred" in a.source.meta()["timestamps"]
    subs = a.source.subagents()
    assert [s.name for s in subs] == [f"agent-{t['subagent']['folder']}"]
    assert subs[0].history()["kind"].tolist() == t["subagent"]["row_kinds"]


def test_synth_listing_newest_first(samples: Path) -> None:
    df = oh.list_sessions(samples / "conversations")
    assert len(df) == 2
    assert df["modified"].is_monotonic_decreasing
    for _, row in df.iterrows():
        folder = Path(row["path"])
        assert row["n_events"] == len(list((folder / "events").glob("event-*.json")))
        assert row["session_id"] == json.loads((folder / "base_state.json").read_text())["id"]
    assert sorted(p.name for p in oh.find(samples)) == sorted(
        x["folder"] for x in _truths(samples)
    )  # subagents belong to their conversation
    with pytest.raises(NotTranscriptError):
        oh.list_sessions(samples / "no-such-folder")


def test_observe_uses_the_openhands_taxonomy() -> None:
    import adfkit

    a = opened(fixture(GENERATED))
    calls = adfkit.observe(a).calls
    cls = dict(zip(calls["tool"], calls["class"], strict=False))
    assert cls == {"think": "bookkeeping", "finish": "world"}


# --- hostile folders --------------------------------------------------------------------------


def _copy(tmp_path: Path, name: str = GENERATED) -> Path:
    dst = tmp_path / name
    shutil.copytree(fixture(name), dst)
    return dst


def _event(d: Path, idx: int) -> Path:
    return next((d / "events").glob(f"event-{idx:05d}-*.json"))


def _checks(d: Path, **kw: Any) -> dict[str, list[tuple[str, tuple[int, ...]]]]:
    a = opened(d, **kw)
    f = a.integrity()
    out: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for check, sev, rows in zip(f["check"], f["severity"], f["rows"], strict=True):
        out.setdefault(check, []).append((sev, tuple(rows)))
    return out


def test_missing_event_file(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    _event(d, 5).unlink()
    assert _checks(d)["missing_event_files"] == [("error", (5,))]
    a = opened(d)
    assert len(a.history()) == 30


def test_marker_states_more_events_than_files(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    _event(d, 30).unlink()
    assert _checks(d)["missing_event_files"] == [("error", ())]  # .eventlog-len-31.marker


def test_half_written_and_bad_events(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    last = _event(d, 30)
    last.write_bytes(last.read_bytes()[:40])
    _event(d, 3).write_bytes(b"\x00\x01binary")
    _event(d, 5).write_text("[1, 2]")
    found = _checks(d)
    assert found["truncated_last_event"] == [("warning", (30,))]
    assert found["bad_json"] == [("warning", (3,))]
    assert found["not_an_object"] == [("warning", (5,))]


def test_forgotten_ids_that_name_no_event(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    p = _event(d, 12)
    ev = json.loads(p.read_text())
    ev["forgotten_event_ids"] += ["no-such-event", 7]
    p.write_text(json.dumps(ev))
    found = _checks(d)
    assert found["forgotten_id_unknown"] == [("warning", (12,))]
    c = opened(d).compactions()
    assert c["n_swept"].tolist() == [8, 7, 7]  # the named ones still swept, exactly


def test_caps_on_event_size_and_count(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    assert _checks(d, max_event_bytes=2000)["huge_event_file"][0][0] == "warning"
    big = [r for s, r in _checks(d, max_event_bytes=2000)["huge_event_file"]]
    sizes = {i: _event(d, i).stat().st_size for i in range(31)}
    assert sorted(r[0] for r in big) == sorted(i for i, n in sizes.items() if n > 2000)
    found = _checks(d, max_events=5)
    assert found["event_count_cap"] == [("error", ())]
    assert len(opened(d, max_events=5).history()) == 5
    # a cap on all the bytes read: the files up to it are read, the rest not
    cum = 0
    n_fit = 0
    for i in range(31):
        cum += sizes[i]
        if cum > 20_000:
            break
        n_fit += 1
    found = _checks(d, max_total_bytes=20_000)
    assert found["total_size_cap"] == [("error", (n_fit,))]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_event_file_does_not_block(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    f = _event(d, 4)
    f.unlink()
    os.mkfifo(f)
    assert _checks(d)["unreadable_event"] == [("warning", (4,))]


def test_damaged_base_state(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    (d / "base_state.json").write_text("{not json")
    found = _checks(d)
    assert found["bad_base_state"] == [("error", ())]
    a = opened(d)
    assert len(a.history()) == 31
    assert quiet(a.usage).empty  # no usage known: none, not zeros
    assert a.source.calls()["tokens_input"].isna().all()


def test_bad_token_counts_are_na(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    state = json.loads((d / "base_state.json").read_text())
    state["stats"]["usage_to_metrics"]["agent"]["token_usages"][0]["prompt_tokens"] = -5
    (d / "base_state.json").write_text(json.dumps(state))
    assert _checks(d)["bad_token_count"] == [("warning", ())]
    u = quiet(opened(d).usage)
    assert u["tokens_input"].isna().sum() == 1


def test_unknown_kinds_and_leaf(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    p = _event(d, 8)
    ev = json.loads(p.read_text())
    ev["kind"] = "SomeNewEvent"
    p.write_text(json.dumps(ev))
    state = json.loads((d / "base_state.json").read_text())
    state["leaf_event_id"] = "nowhere"
    (d / "base_state.json").write_text(json.dumps(state))
    found = _checks(d)
    assert found["unknown_event_kind"] == [("warning", ())]
    assert found["leaf_not_found"] == [("warning", ())]


def test_abandoned_branch(tmp_path: Path) -> None:
    """A fork: event 29 (finish) and 30 re-parented under event 26's summary branch... built by
    pointing the leaf at event 28: 29 and 30 are off the active path."""
    d = _copy(tmp_path)
    state = json.loads((d / "base_state.json").read_text())
    state["leaf_event_id"] = json.loads(_event(d, 28).read_text())["id"]
    (d / "base_state.json").write_text(json.dumps(state))
    a = opened(d)
    assert len(a.history()) == 29
    br = a.source.branches()
    assert br["branch"].tolist() == ["branch-1", "branch-1"]
    assert a.info()["rewinds"] == 1


def test_errors_are_adf_errors(tmp_path: Path) -> None:
    with pytest.raises(AdfError):
        oh.open_session(tmp_path / "nothing")


def test_synth_parallel_calls_are_one_row_one_call(samples: Path) -> None:
    t = next(x for x in _truths(samples) if x["half_written_last"])
    a = opened(samples / "conversations" / t["folder"])
    h = a.history()
    multi = [i for i, r in enumerate(t["rows"]) if len(r) > 1]
    assert multi  # the simulator wrote parallel tool calls
    for i in multi:
        blocks = json.loads(h["content"].iloc[i])
        assert [b["type"] for b in blocks].count("tool_use") == len(t["rows"][i])
        assert not pd.isna(h["tokens_input"].iloc[i])  # the one response's usage, once


def test_replay_is_the_view_openhands_rebuilds() -> None:
    """At each agent call the context is every earlier conversation event minus the forgotten
    ones, with the summaries not yet forgotten: computed here from the event files alone."""
    d = fixture(GENERATED)
    evs = plain_events(d)
    a = opened(d)
    uuid = dict(zip(a.source.row_index()["seq"], a.source.row_index()["uuid"], strict=True))
    kind = dict(zip(a.history()["seq"], a.history()["kind"], strict=True))
    r = a.replay()
    calls = [e for e in evs if e["kind"] == "ActionEvent"]
    assert len(r) == len(calls)
    forgotten: set[str] = set()
    view: list[str] = []
    at_call: dict[str, set[str]] = {}
    for e in evs:
        if e["kind"] == "ActionEvent":
            at_call[e["id"]] = set(view) - forgotten
        if e["kind"] == "Condensation":
            forgotten |= set(e["forgotten_event_ids"])
            view.append(e["id"] + "-summary")
        elif e["kind"] != "SystemPromptEvent":  # the prompt is context, not conversation
            view.append(e["id"])
    for _, row in r.iterrows():
        got = {
            uuid[q] + "-summary" if kind[q] == "compaction_summary" else uuid[q]
            for q in row["context_seqs"]
        }
        assert got == at_call[uuid[row["seq"]]]


def test_simulate_says_what_it_assumes() -> None:
    import adfkit
    from adfkit._analysis.simulate import ThresholdPolicy

    a = opened(fixture(GENERATED))
    res = adfkit.simulate(a, ThresholdPolicy())
    assert res.summary["n_real_compactions"] == 3
    assert res.summary["n_compactions"] == 0  # 4.4k-token prompts never reach the 128k window
    rule = a.config()["compact_rule"]
    assert "does not reproduce event-count condensations" in rule


def test_encoding_and_nesting(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    p = _event(d, 1)
    p.write_bytes(p.read_bytes().replace(b"numbered", b"numb\xffred"))
    _event(d, 3).write_bytes(b"[" * 5000 + b"]" * 5000)
    found = _checks(d)
    assert found["encoding"] == [("warning", (1,))]
    assert found["bad_json"] == [("warning", (3,))]
    assert "numb\ufffdred" in opened(d).history()["text"].iloc[1]


def test_committed_samples_are_the_writers(samples: Path) -> None:
    committed = ROOT / "sample_agents" / "openhands"
    if not committed.is_dir():
        pytest.fail(f"{committed} is missing: run `make samples`")
    mine = {p.relative_to(samples): p.read_bytes() for p in samples.rglob("*") if p.is_file()}
    theirs = {p.relative_to(committed): p.read_bytes() for p in committed.rglob("*") if p.is_file()}
    assert mine == theirs


def test_an_event_linked_to_a_device_and_a_state_that_is_a_folder(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    f = _event(d, 6)
    f.unlink()
    f.symlink_to("/dev/zero")  # never read: not a regular file
    (d / "base_state.json").unlink()
    (d / "base_state.json").mkdir()
    found = _checks(d)
    assert found["unreadable_event"] == [("warning", (6,))]
    assert found["unreadable_base_state"] == [("error", ())]


def test_a_recorded_max_tokens_is_the_threshold(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    state = json.loads((d / "base_state.json").read_text())
    state["agent"]["condenser"]["max_tokens"] = 90_000
    (d / "base_state.json").write_text(json.dumps(state))
    st = opened(d).source.settings()
    assert (st.compact_threshold, st.threshold_source) == (90_000, "configured")
    assert "max_tokens=90,000 (recorded)" in (st.threshold_rule or "")
    assert st.context_window == 128_000
