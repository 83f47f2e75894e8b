"""The ReplayPlayer: a slider over model calls showing what the context window held."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit._base.parts import NOT_IN_FILE, PARTS
from adfkit.widgets._html import _STYLE, _na, _tokens_txt, composition_html, rows_html
from adfkit.widgets._shown import _Shown, _w

if TYPE_CHECKING:
    from adfkit._facade.agent import AgentFile


#: Part of the context window -> column of :meth:`AgentFile.replay` (and of
#: :meth:`AgentFile.composition`, a view of it), as the plots stack them.
COMPOSITION_PARTS = tuple((p.name, p.column) for p in PARTS)

#: The speeds of play: (label, milliseconds between ticks, calls per tick). Past 10 calls a
#: second the player strides over calls instead of ticking faster: each call shown is drawn by
#: the kernel (0.02-0.4 s on a large agent), so a faster tick would only queue them up.
SPEEDS: tuple[tuple[str, int, int], ...] = (
    ("1 call/s", 1000, 1),
    ("2 calls/s", 500, 1),
    ("5 calls/s", 200, 1),
    ("10 calls/s", 100, 1),
    ("50 calls/s", 200, 10),
    ("200 calls/s", 250, 50),
    ("1,000 calls/s", 250, 250),
)


class ReplayPlayer(_Shown):
    """A slider over model calls showing the context window at each call and its make-up.

    Parameters
    ----------
    agent : an :class:`adfkit.AgentFile`.
    rows : how many of the window's last rows to render below the composition.

    Attributes
    ----------
    call : an IntSlider over the model calls, numbered from 1 as the readout and the title say
        (call ``k`` is ``calls.iloc[k - 1]``); it spans the widget's width, and a text box beside
        it takes a number typed in.
    prev_call, next_call : buttons stepping one call back or forward.
    compaction : a Dropdown of the compactions (and clears): choosing one jumps to the first
        call after it; ``prev_compaction``/``next_compaction`` step between them.
    play : a Play control linked to the slider in the browser.
    speed : a Dropdown of :data:`SPEEDS` (default 2 calls/s): a 4,571-call agent plays in
        under 5 s at 1,000 calls/s instead of 38 minutes.
    html : the ``ipywidgets.HTML`` (composition bar and table, then the rows).
    calls : the model calls (:meth:`AgentFile.replay`), with the columns of ``history()``.

    Examples
    --------
    >>> import adfkit
    >>> p = ReplayPlayer(adfkit.open_adf("sample_agents/long-runner.adf"))
    >>> p.call.value = 3
    >>> p.call_seq == int(p.calls["seq"].iloc[2])
    True
    >>> p.next_compaction.click(); p.call.value > 3
    True
    """

    def __init__(self, agent: AgentFile, *, rows: int = 30) -> None:
        w = _w()
        self._agent = agent
        self.rows = int(rows)
        self._history = agent.history().reset_index(drop=True)
        rep = agent.replay()  # the model calls, with the token parts of each window
        seqs = rep["seq"].astype("int64").tolist()
        self.calls = self._history.set_index("seq").loc[seqs].reset_index()
        self._composition = rep
        self._add_call_controls(w, max(1, len(self.calls)))
        self._after, labels = _jump_targets(np.asarray(seqs, dtype="int64"), agent.events())
        self._add_compaction_controls(w, labels)
        self.html = w.HTML()
        self.call.observe(lambda _: self._render(), names="value")
        self.call.observe(lambda _: self._sync_jump(), names="value")
        self.widget = w.VBox(
            [
                w.HBox([self.call, self.typed], layout=w.Layout(width="100%")),
                w.HBox(
                    [
                        self.play,
                        self.speed,
                        self.prev_call,
                        self.next_call,
                        self.prev_compaction,
                        self.next_compaction,
                        self.compaction,
                    ]
                ),
                self.html,
            ]
        )
        self._render()

    def _add_call_controls(self, w: Any, n: int) -> None:
        """The slider over the ``n`` calls, the box to type one in, play and its speed, and
        the buttons stepping one call."""
        self.call = w.IntSlider(
            value=1,
            min=1,
            max=n,
            description="model call",
            continuous_update=False,
            readout=False,  # the number is in the box beside it, once
            layout=w.Layout(width="100%", flex="1 1 auto"),
        )
        self.typed = w.BoundedIntText(value=1, min=1, max=n, layout=w.Layout(width="7em"))
        w.jslink((self.typed, "value"), (self.call, "value"))
        self.play = w.Play(value=1, min=1, max=n, interval=500)
        w.jslink((self.play, "value"), (self.call, "value"))
        self.speed = w.Dropdown(
            options=[(label, i) for i, (label, _, _) in enumerate(SPEEDS)],
            value=1,
            description="speed",
            layout=w.Layout(width="auto"),
        )
        self.speed.observe(lambda _: self._set_speed(), names="value")
        self.play.observe(lambda ch: self._finish_play(ch["new"]), names="playing")
        self.prev_call = w.Button(description="prev call", layout=w.Layout(width="auto"))
        self.next_call = w.Button(description="next call", layout=w.Layout(width="auto"))
        self.prev_call.on_click(lambda _: self._go(int(self.call.value) - 1))
        self.next_call.on_click(lambda _: self._go(int(self.call.value) + 1))

    def _add_compaction_controls(self, w: Any, labels: list[tuple[str, int]]) -> None:
        """The menu of compactions to jump to (``labels``) and the buttons stepping between
        them."""
        self.compaction = w.Dropdown(options=labels, value=0, layout=w.Layout(width="auto"))
        self.compaction.observe(
            lambda ch: self._go(ch["new"]) if ch["new"] else None, names="value"
        )
        self.prev_compaction = w.Button(
            description="prev compaction", layout=w.Layout(width="auto")
        )
        self.next_compaction = w.Button(
            description="next compaction", layout=w.Layout(width="auto")
        )
        self.prev_compaction.on_click(lambda _: self._jump(-1))
        self.next_compaction.on_click(lambda _: self._jump(1))

    def _set_speed(self) -> None:
        """The Play control's tick and stride for the chosen :data:`SPEEDS` entry."""
        _, interval, step = SPEEDS[int(self.speed.value)]
        self.play.interval, self.play.step = interval, step

    def _finish_play(self, playing: bool) -> None:
        """Play stops when a stride would pass the last call (the browser's Play steps only to
        ``value + step <= max``): then show the last call, so every speed ends there."""
        if not playing and int(self.play.max) - int(self.play.value) < int(self.play.step):
            self.play.value = int(self.play.max)
            self._go(int(self.play.max))

    def _go(self, k: int) -> None:
        self.call.value = min(max(1, int(k)), int(self.call.max))

    def _sync_jump(self) -> None:
        """The jump menu names the compaction the slider is at, else its "(jump ...)" entry:
        never a choice left from before the slider moved."""
        now = int(self.call.value)
        self.compaction.value = now if now in self._after else 0

    def _jump(self, d: int) -> None:
        """To the first call after the next (``d=1``) or previous compaction."""
        now = int(self.call.value)
        if d > 0:
            nxt = [k for k in self._after if k > now]
            if nxt:
                self._go(nxt[0])
        else:
            prv = [k for k in self._after if k < now]
            if prv:
                self._go(prv[-1])

    @property
    def call_seq(self) -> int | None:
        """The seq of the assistant row the slider is on."""
        if not len(self.calls):
            return None
        return int(self.calls["seq"].iloc[int(self.call.value) - 1])

    @property
    def window(self) -> pd.DataFrame:
        """The rows the model received at the chosen call (:meth:`AgentFile.context_at`): the
        system prompt in force, the conversation, the dynamic instructions; column ``part``."""
        seq = self.call_seq
        if seq is None:
            return self._history.iloc[:0]
        return self._agent.context_at(seq)

    @property
    def composition(self) -> pd.Series:
        """Estimated tokens sent at the chosen call, by part (:meth:`AgentFile.replay`).

        Index: ``system_prompt``, ``dynamic_instructions``, ``compaction_summary``,
        ``message``, ``assistant``, ``tool_result``, ``loop_inject``, and ``not_in_file``
        (the reported input less those parts, when the provider reported it); float64 tokens.
        """
        seq = self.call_seq
        comp = self._composition
        hit = comp[comp["seq"] == seq] if seq is not None else comp.iloc[:0]
        if not len(hit):
            return pd.Series(dtype="float64")
        r = hit.iloc[0]
        parts = {part: float(r[col]) if not _na(r[col]) else 0.0 for part, col in COMPOSITION_PARTS}
        reported = r.get("tokens_input")
        if reported is not None and not _na(reported):  # what the file does not hold
            parts[NOT_IN_FILE.name] = max(0.0, float(reported) - sum(parts.values()))
        return pd.Series(parts, dtype="float64")

    def _render(self) -> None:
        seq = self.call_seq
        if seq is None:
            self.html.value = _STYLE + '<div class="adf-empty">This file has no model calls.</div>'
            return
        win = self.window
        call = self.calls.iloc[int(self.call.value) - 1]
        tok = _tokens_txt(call.to_dict())
        title = (
            f"call {int(self.call.value)} of {len(self.calls)} (seq {seq}): "
            f"{len(win):,} rows in the window"
            + (f"; provider reported {tok} tokens" if tok else "")
        )
        shown = win.iloc[-self.rows :] if self.rows else win.iloc[:0]
        note = (
            f'<div class="adf-empty">last {len(shown)} of {len(win):,} rows</div>'
            if len(shown) < len(win)
            else ""
        )
        self.html.value = (
            _STYLE
            + composition_html(self.composition, title=title)
            + note
            + rows_html(shown, style=False)
        )


def _jump_targets(
    seqs: np.ndarray, events: pd.DataFrame
) -> tuple[list[int], list[tuple[str, int]]]:
    """Compactions and clears: the first call after each (1-based), and the jump menu's
    entries, ``(label, call)``, the first ``0``: "no jump" (calls are numbered from 1; a None
    value would leave the dropdown blank in the browser)."""
    after: list[int] = []
    labels: list[tuple[str, int]] = [("(jump to a compaction)", 0)]
    for j, (kind, b) in enumerate(zip(events["event"], events["boundary_seq"], strict=True)):
        if _na(b):
            continue
        k = int(np.searchsorted(seqs, int(b), side="right"))
        if k < len(seqs):
            after.append(k + 1)
            labels.append((f"{kind} {j + 1} (before call {k + 1})", k + 1))
    return after, labels
