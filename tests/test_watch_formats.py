"""`adfkit watch` (and LiveView) on pi and Copilot CLI sessions: read from the bytes appended,
with the figures of a full read; a cut file read again with a note."""

from __future__ import annotations

from pathlib import Path

import livesession as L
import pytest
from conftest import ROOT, SAMPLES

from adfkit._base.tail import CHECK
from adfkit._facade.watch import Watched, figures_of

SHARED_PI = ROOT.parent / "shared" / "fixtures" / "pi" / "large-session.jsonl"
RECORDED = ROOT / "tests" / "fixtures" / "recorded"


def _pi(tmp_path: Path, body: bytes) -> Path:
    path = tmp_path / f"2026-03-01T00-00-00-000Z_{L.PI_SID}.jsonl"
    path.write_bytes(L.pi_header() + body)
    return path


def _copilot(tmp_path: Path, body: bytes) -> Path:
    folder = tmp_path / L.COPILOT_SID
    folder.mkdir()
    (folder / "events.jsonl").write_bytes(L.copilot_start() + body)
    return folder


def _append(path: Path, more: bytes) -> None:
    with open(path, "ab") as f:
        f.write(more)


def _same_as_a_full_read(w: Watched, path: Path) -> None:
    full, threshold = figures_of(path)
    f = w.figures
    assert (f.calls, f.context_tokens, f.model) == (full.calls, full.context_tokens, full.model)
    assert f.cost_usd == pytest.approx(full.cost_usd, abs=1e-6)
    assert w.threshold == threshold
    got = [(c.trigger, c.tokens_before, c.tokens_after) for c in f.landed]
    assert got == [(c.trigger, c.tokens_before, c.tokens_after) for c in full.landed]


def test_watch_reads_only_what_was_appended_to_a_pi_session(tmp_path):
    """A pi session of 10,000 calls (20,001 lines, ~9 MB) followed; 1,001 lines appended (500
    calls and a compaction) cost exactly the bytes appended, counted by the reader (not
    timed), and the figures are then those of a full read."""
    path = _pi(tmp_path, L.pi_session(0, 10_000))
    size = path.stat().st_size
    w = Watched(path)
    assert w.incremental and w.update() == [] and w.tail.bytes_read == size
    assert w.figures.calls == 10_000
    more = L.pi_compaction(10_000, 24_999) + L.pi_session(10_000, 10_500, parent="c10000")
    assert more.count(b"\n") == 1_001
    _append(path, more)
    (landed,) = w.update()
    assert w.tail.bytes_read - size == len(more) + CHECK
    assert (landed.trigger, landed.tokens_before, landed.swept, landed.unit) == (
        None,  # pi records no trigger
        24_999,
        20_000,  # every message entry before it
        "records",
    )
    assert w.figures.calls == 10_500
    _same_as_a_full_read(w, path)


def test_watch_reads_only_what_was_appended_to_a_copilot_session(tmp_path):
    """A Copilot CLI session folder (its events.jsonl: 7,000 calls, 21,001 lines) followed;
    1,001 lines appended (a compaction and 333 calls) cost the bytes appended, and the
    figures, the window the compaction states and the threshold from it are a full read's."""
    folder = _copilot(tmp_path, L.copilot_session(0, 7_000))
    events = folder / "events.jsonl"
    size = events.stat().st_size
    w = Watched(folder)
    assert w.incremental and w.tail.path == events
    w.update()
    assert w.tail.bytes_read == size and w.figures.calls == 7_000
    more = L.copilot_compaction(7_000, 24_999, 900, window=200_000)
    more += L.copilot_session(7_000, 7_333)
    assert more.count(b"\n") == 1_001
    _append(events, more)
    (landed,) = w.update()
    assert w.tail.bytes_read - size == len(more) + CHECK
    assert (landed.trigger, landed.tokens_before, landed.tokens_after) == ("threshold", 24_999, 900)
    assert (landed.swept, landed.unit) == (14_000, "records")  # 7,000 user + 7,000 replies
    assert w.figures.calls == 7_333  # this compaction's own call is not recorded
    assert w.threshold == 160_000  # 80% of the 200,000 tokenLimit it states
    _same_as_a_full_read(w, folder)


@pytest.mark.parametrize("fmt", ["pi", "copilot_cli"])
def test_watch_reads_a_cut_pi_or_copilot_file_again_with_a_note(tmp_path, fmt):
    if fmt == "pi":
        path = file = _pi(tmp_path, L.pi_session(0, 10))
        head = L.pi_header()
        body = L.pi_session(0, 3)
    else:
        path = _copilot(tmp_path, L.copilot_session(0, 10))
        file, head, body = path / "events.jsonl", L.copilot_start(), L.copilot_session(0, 3)
    w = Watched(path)
    w.update()
    assert w.figures.calls == 10
    file.write_bytes(head + body)
    assert w.update() == []
    assert w.notes and "cut to" in w.notes[-1] and "read again from its start" in w.notes[-1]
    assert w.figures.calls == 3
    _same_as_a_full_read(w, path)


def _real() -> list:
    pi = sorted(SAMPLES.glob("pi/sessions/*/*.jsonl"))
    pi += sorted(RECORDED.glob("pi/*/home/.pi/agent/sessions/*/*.jsonl"))
    copilot = sorted(RECORDED.glob("copilot-cli/*/home/.copilot/session-state/*"))
    cases = [pytest.param(p, id=f"pi-{p.stem[-8:]}") for p in pi]
    cases += [pytest.param(p, id=f"copilot-{p.name[:8]}") for p in copilot]
    cases.append(pytest.param(SHARED_PI, id="pi-large-session"))
    return cases


@pytest.mark.parametrize("path", _real())
def test_watch_follows_real_pi_and_copilot_sessions_as_a_full_read(path):
    """Record by record, the pi samples and recordings (and pi's own large v1 session, with
    14 aborted replies that reported nothing), and Copilot CLI 1.0.102's recording (a
    sub-agent's calls, a compaction not applied), give a full read's figures."""
    if not path.exists():
        pytest.skip(f"{path} not present (../shared is absent in a user's clone)")
    w = Watched(path)
    assert w.incremental
    w.update()
    _same_as_a_full_read(w, path)


def test_watch_on_the_copilot_sample_shows_the_rules_threshold():
    """The Copilot CLI sample: every figure of a full read but the threshold, which the full
    read learns from the recorded preCompactionTokens (7,843) and a follower does not: it
    shows the rule's for the 128,000-token window the record states (80%)."""
    (folder,) = SAMPLES.glob("copilot_cli/session-state/*")
    w = Watched(folder)
    w.update()
    full, threshold = figures_of(folder)
    assert (threshold, w.threshold) == (7_843, 102_400)
    assert (w.figures.calls, w.figures.context_tokens) == (full.calls, full.context_tokens)
    got = [(c.trigger, c.tokens_before, c.tokens_after) for c in w.figures.landed]
    assert got == [(c.trigger, c.tokens_before, c.tokens_after) for c in full.landed]
    assert [trigger for trigger, _, _ in got] == ["threshold", "manual", "truncation"]
