"""The LiveView: a running agent followed in a notebook, as ``adfkit watch`` follows it."""

from __future__ import annotations

import os
import threading
from typing import Any

from adfkit._base.errors import AdfError
from adfkit._facade.watch import Watched, landed_text, status_text
from adfkit.widgets._html import INERT, escape
from adfkit.widgets._shown import _Shown, _w

_LIVE_STYLE = """<style>
.adf-live{font-family:system-ui,sans-serif;font-size:13px;line-height:1.4}
.adf-live-bar{height:10px;background:#edf2f7;border:1px solid #cbd5e0;border-radius:3px;
 margin:4px 0;max-width:40em}
.adf-live-fill{height:100%;background:#3182ce;border-radius:2px}
.adf-live-fill.adf-live-near{background:#dd6b20}
.adf-live-landed{margin:4px 0;padding-left:2.2em}
.adf-live-landed li{margin:1px 0;font-family:monospace;font-size:12px}
.adf-live-note{color:#c05621;font-size:12px}
.adf-live-none{color:#718096;font-size:12px}
</style>"""
#: The share of the threshold past which the bar turns orange: the next compaction is near.
NEAR = 0.85


class LiveView(_Shown):
    """A running agent's figures, kept up to date while it writes: the context size against
    the compaction threshold (a bar), the model calls, the cost so far, and each compaction as
    it lands with what it swept, the newest last. It reads the file as ``adfkit watch`` does
    (:class:`adfkit._facade.watch.Watched`: a Claude Code, pi or Copilot CLI session or a
    Codex rollout incrementally, from the bytes appended; any other record again in full
    when it changes; a rewritten or cut file again from its start, with a note).

    Parameters
    ----------
    path : the agent's file (or folder) as :func:`adfkit.open` takes it.
    interval : seconds between looks at the file, in a background thread.
    follow : start following at once (the ``following`` button pauses and resumes); with
        False, nothing is read until :meth:`update` is called.

    Attributes
    ----------
    status : a Label with the status line of ``adfkit watch`` (context of threshold, calls,
        cost, compactions).
    html : the ``ipywidgets.HTML``: the context bar, the compactions that landed, the notes.
    following : a ToggleButton: pressed while the file is followed.
    watched : the :class:`~adfkit._facade.watch.Watched` (its ``figures``, ``threshold``).
    landed : every compaction seen, in the order it landed.

    Examples
    --------
    >>> import adfkit
    >>> from adfkit.widgets import LiveView
    >>> v = LiveView(adfkit.sample_path("long-runner.adf"), follow=False)
    >>> _ = v.update(); "· 346 calls ·" in v.status.value
    True
    """

    def __init__(
        self, path: str | os.PathLike[str], *, interval: float = 2.0, follow: bool = True
    ) -> None:
        w = _w()
        self.watched = Watched(path)
        self.interval = float(interval)
        self.landed: list[Any] = []
        self.notes: list[str] = []
        self.status = w.Label()
        self.html = w.HTML()
        self.following = w.ToggleButton(
            value=False, description="following", tooltip="pause or resume following the file"
        )
        self.widget = w.VBox([w.HBox([self.following, self.status]), self.html])
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.following.observe(self._on_follow, names="value")
        self.update()
        self.following.value = follow

    def update(self) -> list[Any]:
        """Look at the file now: read what changed, redraw when something did; the
        compactions that landed since the last look."""
        with self._lock:
            try:
                new = self.watched.update()
            except (AdfError, OSError) as exc:
                new = []
                self.watched.notes.append(f"{self.watched.path.name}: cannot read it now: {exc}")
            self.landed += new
            self.notes += self.watched.notes
            self.watched.notes.clear()
            status = status_text(
                self.watched.path.name, self.watched.figures, self.watched.threshold
            )
            html = self._html()
            if status != self.status.value:
                self.status.value = status
            if html != self.html.value:
                self.html.value = html
            return new

    def stop(self) -> None:
        """Stop following (the ``following`` button shows it)."""
        self.following.value = False

    def close(self) -> None:
        """Stop following and close the widget."""
        self.stop()
        self.widget.close()

    def _on_follow(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self._stop.clear()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True)
                self._thread.start()
        else:
            self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.update()

    def _html(self) -> str:
        f, threshold = self.watched.figures, self.watched.threshold
        bar = ""
        if threshold and f.context_tokens is not None:
            share = f.context_tokens / threshold
            near = " adf-live-near" if share >= NEAR else ""
            width = f"{min(share, 1.0):.1%}"
            bar = (
                f'<div class="adf-live-bar" title="context {share:.0%} of the threshold">'
                f'<div class="adf-live-fill{near}" style="width:{width}"></div></div>'
            )
        if self.landed:
            items = "".join(f"<li>{escape(landed_text(c))}</li>" for c in self.landed)
            landed = f'<ol class="adf-live-landed">{items}</ol>'
        else:
            landed = '<div class="adf-live-none">no compaction yet</div>'
        notes = "".join(f'<div class="adf-live-note">{escape(n)}</div>' for n in self.notes)
        return f'{_LIVE_STYLE}<div class="adf-live {INERT}">{bar}{landed}{notes}</div>'
