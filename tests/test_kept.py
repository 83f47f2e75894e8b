"""One rule for "what the summary kept" (adfkit._analysis.kept): summary_recall(), the
recall columns of compactions() and the loss ledger (compaction_ledger(), forgetting())
agree for every compaction of every file adfkit opens, and adfkit's own identifiers (seqs,
row numbers, tool names) are never items.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import adfkit
from adfkit._base.errors import AdfError
from tests.adfbuild import build, result, row, text, use
from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "fixtures"
SAMPLES = ROOT / "sample_agents"


def _candidates(root: Path) -> Iterator[Path]:
    """Every file and folder under ``root``: what ``adfkit.open`` may be given."""
    yield from sorted(p for p in root.rglob("*") if not p.name.startswith("."))


def _agents(root: Path) -> Iterator[tuple[str, adfkit.AgentFile]]:
    """Every agent adfkit opens under ``root`` (each member of a collection), by name."""
    for p in _candidates(root):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opened = adfkit.open(p)
        except (AdfError, OSError, ValueError):
            continue  # not an agent file (README, a truth file, an event of a folder...)
        members = list(opened) if isinstance(opened, adfkit.AgentCollection) else [opened]
        for a in members:
            yield f"{p.relative_to(root)}:{a.name}", a
        opened.close()


def _check_agent(a: adfkit.AgentFile) -> int:
    """Assert the three agree for every compaction of ``a``; returns how many compactions
    had items and a known summary."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = a.compactions()
        led = a.compaction_ledger()
        fg = a.forgetting().set_index("event_id")
    checked = 0
    for r in comp.itertuples(index=False):
        j = int(r.event_id)
        rows = led[led["event_id"] == j]
        if r.event != "compaction":
            assert len(rows) == 0
            continue
        f = fg.loc[j]
        if pd.isna(r.n_identifiers):  # swept rows not in the record: no item known
            assert len(rows) == 0 and pd.isna(f["n_items"]) and pd.isna(r.recall)
            continue
        assert len(rows) == r.n_identifiers == f["n_items"]
        if pd.isna(r.n_recalled):  # the summary is not in the record
            assert rows["kept"].isna().all() and pd.isna(f["loss_rate"]) and pd.isna(r.recall)
            with pytest.raises(AdfError):
                a.summary_recall(j)
            continue
        rec = a.summary_recall(j)
        assert rec["kind"].tolist() == rows["kind"].tolist()
        assert rec["item_key"].tolist() == rows["item_key"].tolist()
        assert rec["kept"].tolist() == rows["kept"].tolist()
        n_kept = int(rec["recalled"].sum())
        assert n_kept == r.n_recalled == r.n_identifiers - f["n_lost"]
        if len(rows):
            assert r.recall == n_kept / len(rows)
            assert r.recall == pytest.approx(1 - f["loss_rate"], abs=1e-12)
            checked += 1
        else:
            assert pd.isna(r.recall) and pd.isna(f["loss_rate"])
        tools = set(a.tool_calls(history=True)["tool_name"].dropna().astype(str))
        assert not set(rec["value"]) & tools, "a tool's name counted as an item"
    return checked


def test_recall_and_ledger_agree_on_every_fixture_and_sample():
    roots = [SAMPLES] + ([SHARED] if SHARED.is_dir() else [])
    seen: dict[str, int] = {}
    for root in roots:
        for name, a in _agents(root):
            seen[f"{root.name}/{name}"] = _check_agent(a)
            a.close()
    assert sum(seen.values()) >= 10, seen  # compactions measured, not a vacuous pass
    if SHARED.is_dir():
        cc = [n for n in seen if "6113e919" in n]
        assert cc and seen[cc[0]] == 3  # the three compactions of D1


def test_6113e919_compaction_2_one_figure():
    """Issue 33: compaction 2 of D1 had recall 0.114 (seqs and tool names counted) against a
    loss rate of 0.29; both are one figure now."""
    p = next(iter(SHARED.glob("transcripts/claude-code/projects/*/6113e919-*.jsonl")), None)
    if p is None:
        pytest.skip("real fixture 6113e919 not present (../shared is absent in a user's clone)")
    with adfkit.open(p) as a:
        c = a.compactions().iloc[2]
        f = a.forgetting().iloc[2]
        r = a.summary_recall(2)
    assert c["recall"] == pytest.approx(1 - f["loss_rate"], abs=1e-12)
    assert c["recall"] == pytest.approx(r["recalled"].mean(), abs=1e-12)
    assert c["recall"] > 0.5
    assert not {"seq", "tool", "number", "message_id"} & set(r["kind"])


FOOT = "\n\n---\nYour loop was compacted. Continue."


def _write_compacted(tmp_path: Path, reply: str) -> Path:
    """An ADF file with one audited compaction that swept a ``Bash`` call (seq 3) and the
    agent's ``reply`` (seq 5); its summary names ``src/app.py`` and cites ``[S3]``."""
    swept = [
        row(1, "user", text("fix src/app.py")),
        row(2, "assistant", text("looking"), tokens={"input": 500, "output": 10}),
        row(
            3,
            "assistant",
            [use("u1", "Bash", {"command": "pytest -q"})],
            tokens={"input": 600, "output": 10},
        ),
        row(4, "user", [result("u1", "1 passed")]),
        row(5, "assistant", text(reply), tokens={"input": 900, "output": 10}),
    ]
    summary = "[Loop Compacted, audited] Edited src/app.py with Bash at [S3]; 3 tests pass." + FOOT
    return build(
        tmp_path / "bash.adf",
        loop=[row(6, "user", text(summary), tokens={"input": 300, "output": 40})],
        audit=[{"source": "loop", "rows": swept}],
    )


def test_seqs_and_tool_names_are_never_items(tmp_path):
    """On main, summary_recall(0) counted the tool name ``Bash`` and the seq 3 of its call as
    identifiers (recall 3 of 5); adfkit's own identifiers are not items now, nor a tool's
    name in the agent's text (``Bash`` called here, ``loop_compact`` one of ADF's tools)."""
    f = _write_compacted(tmp_path, "Ran `Bash`; next `loop_compact`, then check run_tests.")
    with adfkit.open_adf(f) as a:
        r = a.summary_recall(0)
        c = a.compactions().iloc[0]
        fg = a.forgetting().iloc[0]
    assert not {"Bash", "loop_compact", "3"} & set(r["value"])
    items = dict(zip(r["value"], r["kept"], strict=True))
    # the items: the path (kept), the command and the identifier run_tests (lost)
    assert items == {"src/app.py": "exact", "pytest -q": "lost", "run_tests": "lost"}
    assert set(r["kind"]) == {"path", "command", "identifier"}
    assert c["n_identifiers"] == 3 and c["n_recalled"] == 1
    assert c["recall"] == pytest.approx(1 / 3) and c["recall_path"] == 1.0
    assert fg["n_items"] == 3 and fg["n_lost"] == 2
