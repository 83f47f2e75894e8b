"""The reader against the ground truth that adfsynth recorded while writing each sample."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLES, sample

import adfkit

NAMES = sorted(p.name.removesuffix(".truth.json") for p in SAMPLES.glob("*.truth.json"))


def truth(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.truth.json").read_text())


def test_every_sample_has_ground_truth():
    assert {"long-runner", "messenger", "forgetful", "clean", "mind-keeper", "legacy-v27"} <= set(
        NAMES
    )


@pytest.mark.parametrize("name", NAMES)
def test_live_history_and_lost_seqs(name):
    """loop(), history() and history_gaps() give exactly the seqs the scenario wrote."""
    t = truth(name)
    agent = adfkit.open_adf(sample(name))
    assert agent.schema_version == t["schema_version"]
    assert sorted(agent.loop()["seq"]) == t["live_seqs"]
    h = agent.history()
    assert sorted(h["seq"]) == t["history_seqs"]
    lost = []
    for start, end in agent.history_gaps()[["start_seq", "end_seq"]].itertuples(index=False):
        lost.extend(range(start, end + 1))
    assert lost == t["lost_seqs"]


@pytest.mark.parametrize("name", NAMES)
def test_audit_rows_and_blob_contents(name):
    """audit() metadata and each decoded loop blob hold exactly the recorded seqs."""
    t = truth(name)
    agent = adfkit.open_adf(sample(name))
    a = agent.audit().set_index("id")
    assert sorted(a.index) == sorted(r["id"] for r in t["audit_rows"])
    for r in t["audit_rows"]:
        assert a.loc[r["id"], "source"] == r["source"]
        assert a.loc[r["id"], "entry_count"] == r["entry_count"]
        if r["source"] == "loop":
            assert sorted(agent.decode_audit(r["id"])["seq"]) == sorted(r["seqs"])
        elif r.get("ref") is not None:
            assert a.loc[r["id"], "ref"] == r["ref"]


@pytest.mark.parametrize("name", NAMES)
def test_events_match_compactions_and_clears(name):
    """events(): one compaction per recorded compaction (same summary seqs, same audit rows)
    whose summary survives, and one clear per model-initiated loop_clear."""
    t = truth(name)
    ev = adfkit.open_adf(sample(name)).events()
    history = set(t["history_seqs"])
    kept = [c for c in t["compactions"] if c["summary_seq"] in history]
    comp = ev[(ev["event"] == "compaction") & ~ev["summary_lost"]]
    assert comp["summary_seq"].tolist() == [c["summary_seq"] for c in kept]
    for (_, e), c in zip(comp.iterrows(), kept, strict=True):
        assert list(e["audit_ids"]) == ([c["audit_id"]] if c["audit_id"] else [])
    clears = ev[ev["event"] == "clear"]
    assert [list(x) for x in clears["audit_ids"]] == [c["audit_ids"] for c in t["clears"]]


@pytest.mark.parametrize("name", NAMES)
def test_inbox_outbox_and_files(name):
    t = truth(name)
    agent = adfkit.open_adf(sample(name))
    assert sorted(agent.inbox()["message_id"].dropna()) == sorted(t["inbox_ids"])
    assert sorted(agent.outbox()["message_id"].dropna()) == sorted(t["outbox_ids"])
    assert sorted(agent.files()["path"]) == sorted(t["final_files"])


@pytest.mark.parametrize("name", [n for n in NAMES if not truth(n)["lost_seqs"]])
def test_token_totals(name):
    """Summed provider tokens over the history equal the totals the scenario recorded
    (for samples that lost no history: the recorded totals include discarded calls)."""
    t = truth(name)
    h = adfkit.open_adf(sample(name)).history()
    if h["tokens_input"].notna().any():
        assert int(h["tokens_input"].sum()) == t["tokens_total"]["input"]
        assert int(h["tokens_output"].sum()) == t["tokens_total"]["output"]
    else:  # legacy bare-integer totals
        assert int(h["tokens_total"].sum()) == sum(t["tokens_total"].values())
