"""A running agent followed as it writes (``adfkit watch``): its figures after each change, and
the compactions that landed since the last look.

A format with a follower (:attr:`adfkit.FormatSpec.follow`: Claude Code, Codex, pi, Copilot
CLI) whose input is one plain JSONL file (or a session folder holding the one its follower
names: Copilot CLI's ``events.jsonl``) is read incrementally: each update reads only the
bytes appended (:class:`adfkit._base.tail.Tail`); a file that was rewritten or cut is read
again from its start with a note. Any other input (an ADF file, opened read-only with its WAL
as every reader opens it; a compressed Codex rollout, an OpenHands, Inspect, Qwen Code or
OpenTelemetry record) is read in full whenever its size or modification time changes. A last
line without its newline is taken as still being written, and waits for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from adfkit._base.tail import Tail
from adfkit._core import registry
from adfkit._core.live import Landed, LiveFigures


class Watched:
    """One agent followed: :meth:`update` reads what changed and returns the compactions that
    landed; :attr:`figures` and :attr:`threshold` are the figures after it; :attr:`notes`
    collects what a person should be told (a file read again from its start, and why)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.spec = registry.recognise(self.path)
        self._follower = self.spec.follow() if self.spec.follow is not None else None
        appended = _appended_file(self.path, self._follower)
        self.incremental = appended is not None
        self.figures = LiveFigures()
        self.threshold: int | None = None
        self.notes: list[str] = []
        self.tail = Tail(appended) if appended is not None else None
        self._signature: tuple[int, ...] | None = None

    def update(self) -> list[Landed]:
        """Read what changed since the last update; the compactions that landed meanwhile."""
        if self.tail is None:
            return self._reread()
        poll = self.tail.poll()
        if poll.rewritten:
            self.notes.append(f"{self.path.name}: {poll.why}: read again from its start")
            assert self.spec.follow is not None
            self._follower = self.spec.follow()
        assert self._follower is not None
        landed: list[Landed] = []
        for line in poll.lines:
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a bad line: adfkit check names it; the view goes on
            if isinstance(obj, dict):
                landed += self._follower.feed(obj)
        self.figures = self._follower.figures
        self._set_threshold()
        return landed

    def _set_threshold(self) -> None:
        rule = self.spec.compaction_rule
        if rule is not None and self.figures.model is not None:
            self.threshold = rule(self.figures.model, self.figures.window).threshold

    def _reread(self) -> list[Landed]:
        sig = _signature(self.path)
        if sig == self._signature:
            return []
        self._signature = sig
        before = self.figures.landed
        self.figures, self.threshold = figures_of(self.path)
        now = self.figures.landed
        if len(now) < len(before):
            self.notes.append(
                f"{self.path.name}: {len(before)} compaction(s) before, {len(now)} now: "
                "the record was rewritten"
            )
            return []
        return now[len(before) :]


def _appended_file(path: Path, follower: Any) -> Path | None:
    """The plain JSONL file a follower reads as it grows: the session's file, or the file a
    session folder holds (:attr:`adfkit._core.live.Follower.folder_file`); None when the
    input is read in full (no follower, a compressed file, an ADF file)."""
    if follower is None:
        return None
    if path.is_dir():
        name = getattr(follower, "folder_file", None)
        path = path / name if name else path
    return path if path.is_file() and path.suffix.lower() == ".jsonl" else None


def _signature(path: Path) -> tuple[int, ...]:
    """Size and modification time of the input (and of its WAL; of every file of a folder):
    what changes when an agent writes."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    files += [Path(f"{path}-wal")] if Path(f"{path}-wal").exists() else []
    out: list[int] = []
    for f in files:
        st = os.stat(f)
        out += [st.st_size, st.st_mtime_ns]
    return tuple(out)


def figures_of(path: str | os.PathLike[str]) -> tuple[LiveFigures, int | None]:
    """The figures of the agent at ``path`` from a full read (any format), and the compaction
    threshold in force (None when unknown)."""
    import warnings

    import pandas as pd

    from adfkit._facade.agent import open_one

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a half-written last line is what a live file has
        with open_one(path) as agent:
            usage, events, threshold = agent.usage(), agent.compactions(), agent.compact_threshold()
    f = LiveFigures(calls=len(usage))
    if len(usage):
        last = usage.iloc[-1]
        f.context_tokens = None if pd.isna(last["tokens_input"]) else int(last["tokens_input"])
        f.model = None if pd.isna(last["model"]) else str(last["model"])
    cost = usage["cost_usd"]
    f.cost_usd = round(float(cost.sum()), 8) if cost.notna().all() else None
    f.microcompactions = int((events["event"] == "microcompaction").sum())
    for _, e in events[events["event"] == "compaction"].iterrows():
        f.landed.append(
            Landed(
                when=None
                if pd.isna(e["created_at"])
                else pd.Timestamp(e["created_at"]).isoformat(),
                trigger=_text(e["kind"]),
                tokens_before=_int(e["recorded_tokens_before"]),
                tokens_after=_int(e["recorded_tokens_after"]),
                swept=_int(e["n_swept"]),
            )
        )
    return f, threshold


def _int(v: Any) -> int | None:
    import pandas as pd

    return None if v is None or pd.isna(v) else int(v)


def _text(v: Any) -> str | None:
    import pandas as pd

    return None if v is None or pd.isna(v) else str(v)


def status_text(name: str, f: Any, threshold: int | None) -> str:
    """``s.jsonl: context 41,200 of 167,000 tokens (25%) · 212 calls · $3.41 · 2 compactions``;
    what is unknown is ``-``.

    Examples
    --------
    >>> from adfkit._core.live import LiveFigures
    >>> status_text("s.jsonl", LiveFigures(calls=3, context_tokens=1200, cost_usd=None), 4000)
    's.jsonl: context 1,200 of 4,000 tokens (30%) · 3 calls · $- · 0 compactions'
    """
    ctx = "-" if f.context_tokens is None else f"{f.context_tokens:,}"
    of = ""
    if threshold:
        of = f" of {threshold:,}"
        if f.context_tokens is not None:
            of += f" tokens ({f.context_tokens / threshold:.0%})"
        else:
            of += " tokens"
    else:
        of = " tokens (threshold -)"
    cost = "-" if f.cost_usd is None else f"{f.cost_usd:,.2f}"
    micro = f", {f.microcompactions} microcompactions" if f.microcompactions else ""
    return (
        f"{name}: context {ctx}{of} · {f.calls:,} calls · ${cost} · "
        f"{len(f.landed)} compactions{micro}"
    )


def landed_text(c: Any) -> str:
    """``compaction (auto) at 2026-03-01T08:11:20: 59,794 -> - tokens, swept 41 rows``.

    Examples
    --------
    >>> from adfkit._core.live import Landed
    >>> landed_text(Landed("2026-03-01T08:11:20.255Z", "auto", 59794, None, 41))
    'compaction (auto) at 2026-03-01T08:11:20: 59,794 -> - tokens, swept 41 rows'
    """

    def n(v: int | None) -> str:
        return "-" if v is None else f"{v:,}"

    when = f" at {c.when[:19]}" if c.when else ""
    trigger = f" ({c.trigger})" if c.trigger else ""
    return (
        f"compaction{trigger}{when}: {n(c.tokens_before)} -> {n(c.tokens_after)} tokens, "
        f"swept {n(c.swept)} {c.unit}"
    )
