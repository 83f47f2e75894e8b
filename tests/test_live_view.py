"""LiveView: a running session followed in a notebook, as `adfkit watch` follows it (its
browser test: tests/test_browser.py::test_live_view_follows_a_growing_session)."""

from __future__ import annotations

import time

import livesession
import pytest

pytest.importorskip("ipywidgets")

from adfkit._base.tail import CHECK  # noqa: E402
from adfkit._facade.watch import figures_of  # noqa: E402
from adfkit.widgets import LiveView  # noqa: E402

SID = "5e551011-0000-4000-8000-0000000000cc"
#: What the view shows of the boundary livesession.boundary("b1", 20_009, 900) writes.
LANDED = "compaction (auto) at 2026-03-01T11:00:00: 20,009 -> 900 tokens, swept 30 records"


def _grow(path, first: int, last: int) -> bytes:
    more = livesession.session(first, last, parent=f"a{first - 1}")
    with open(path, "ab") as f:
        f.write(more)
    return more


def test_live_view_shows_calls_and_each_compaction_as_it_lands(tmp_path):
    """The status line and the compaction list change with what is appended, from the bytes
    appended alone (the reader's count), to the figures of a full read of the file."""
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(livesession.session(0, 10))
    v = LiveView(path, follow=False)
    assert v.watched.incremental
    assert v.status.value == (
        f"{path.name}: context 20,009 of 167,000 tokens (12%) · 10 calls · "
        f"${figures_of(path)[0].cost_usd:,.2f} · 0 compactions"
    )
    assert "no compaction yet" in v.html.value and LANDED not in v.html.value
    size = path.stat().st_size
    line = livesession.boundary("b1", 20_009, 900)
    more = _grow(path, 10, 15) + line
    with open(path, "ab") as f:
        f.write(line)
    (landed,) = v.update()
    assert v.watched.tail.bytes_read - size == len(more) + CHECK
    assert " · 15 calls · " in v.status.value and v.status.value.endswith(" · 1 compactions")
    assert "context 20,014 of 167,000 tokens (12%)" in v.status.value
    assert f"<li>{LANDED.replace('>', '&gt;')}</li>" in v.html.value
    assert 'style="width:12.0%"' in v.html.value  # the bar: 20,014 of 167,000
    html = v.html.value
    assert v.update() == [] and v.html.value == html  # nothing appended: nothing redrawn


def test_live_view_says_when_the_file_was_cut(tmp_path):
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(livesession.session(0, 10))
    v = LiveView(path, follow=False)
    path.write_bytes(livesession.session(0, 3))
    v.update()
    assert " · 3 calls · " in v.status.value
    assert "cut to" in v.html.value and "read again from its start" in v.html.value


def test_live_view_follows_in_the_background_and_pauses(tmp_path):
    """With following on, the view changes by itself once lines are appended (waited for as a
    condition, with a generous bound); paused, it reads nothing."""
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(livesession.session(0, 10))
    v = LiveView(path, interval=0.05)
    try:
        assert v.following.value
        _grow(path, 10, 12)
        deadline = time.monotonic() + 60
        while " · 12 calls · " not in v.status.value:
            assert time.monotonic() < deadline, v.status.value
            time.sleep(0.05)
        v.stop()
        v._thread.join(timeout=60)
        assert not v._thread.is_alive()
        _grow(path, 12, 13)
        assert " · 12 calls · " in v.status.value  # paused: the thread has ended
    finally:
        v.close()


def test_live_view_says_when_the_file_is_gone(tmp_path):
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(livesession.session(0, 2))
    v = LiveView(path, follow=False)
    path.unlink()
    assert v.update() == []
    assert "cannot read it now" in v.html.value and " · 2 calls · " in v.status.value
