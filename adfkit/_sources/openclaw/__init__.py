"""OpenClaw sessions: recognition, opening, listing, compaction rule.

OpenClaw (npm ``openclaw``) keeps each agent's sessions in one SQLite store,
``~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite`` (2026.x releases: pi's session
entries as rows of ``transcript_events``), and older releases kept them as
``~/.openclaw/agents/<agent>/sessions/<session>.jsonl`` files beside a ``sessions.json``
index. A store opens as one agent per session (an :class:`adfkit.AgentCollection`,
``store#<session id>`` naming one); a session file as one agent. Light on purpose: the readers
are :mod:`.store` and :mod:`.parser`, imported when a file is opened.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.model_catalog import context_window, maker_of
from adfkit._core.registry import FormatSpec, Probe, Rule
from adfkit._sources.openclaw import files
from adfkit._sources.openclaw.files import STORE_NAME, is_session_file, is_store

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._sources.transcript.source import TranscriptSource

#: Where OpenClaw keeps its agents.
DEFAULT_ROOT = "~/.openclaw/agents"
#: OpenClaw's least reserve for a model's reply, for windows of 80,000 tokens and more
#: (``DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR``: 20,000 in its source; one release raised it
#: to 40,000).
RESERVE_FLOOR = 20_000
#: Below this window OpenClaw reserves a quarter of it (the recorded store's
#: ``contextBudgetStatus``: reserve 8,000 of a 32,000 window, prompt budget 24,000).
SMALL_WINDOW = 80_000


def claims(probe: Probe) -> bool:
    """OpenClaw's store (``openclaw-agent.sqlite``, SQLite) or a session file it wrote (pi's
    header, with ``sessions.json`` beside it or OpenClaw's ``__openclaw`` mark)."""
    return is_store(probe) or is_session_file(probe)


class Store(Sequence["TranscriptSource"]):
    """The sessions of one store, oldest first; ``store[i]`` reads session ``i`` on first use
    (the store is open read-only from construction to :meth:`close`)."""

    def __init__(
        self, path: Path, *, timeout: float = 5.0, max_blob_bytes: int | None = None
    ) -> None:
        from adfkit._sources.openclaw.store import (
            DEFAULT_MAX_SESSION_BYTES,
            open_store,
            sessions,
            store_meta,
        )

        self.path = path
        self.db = open_store(path, timeout)
        try:
            self.windows = sessions(self.db)
            self.meta = store_meta(self.db)
        except BaseException:
            self.db.close()
            raise
        self.max_bytes = max_blob_bytes or DEFAULT_MAX_SESSION_BYTES
        self._cache: dict[int, TranscriptSource] = {}

    def names(self) -> list[str]:
        """The session ids, without reading any session."""
        return [w.session_id for w in self.windows]

    def __len__(self) -> int:
        return len(self.windows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        i = range(len(self))[i]
        if i not in self._cache:
            from adfkit._sources.openclaw.parser import parse_store_session
            from adfkit._sources.transcript.source import TranscriptSource

            parsed = parse_store_session(
                self.db, self.windows[i], max_bytes=self.max_bytes, meta=self.meta
            )
            self._cache[i] = TranscriptSource(parsed)
        return self._cache[i]

    def member(self, name: str) -> TranscriptSource:
        """The session called ``name``."""
        from adfkit._base.errors import AdfError

        names = self.names()
        if name not in names:
            shown = ", ".join(names[:10])
            raise AdfError(f"no session {name!r} in the store (sessions: {shown})", path=self.path)
        got: TranscriptSource = self[names.index(name)]
        return got

    def close(self) -> None:
        self.db.close()


def open_session(
    path: str | os.PathLike[str], member: str | None = None, **options: Any
) -> TranscriptSource | Store:
    """A store's sessions (:class:`Store`), one of them (``member``), or a session file."""
    p = Path(path).expanduser()
    if p.name.lower() != STORE_NAME:
        from adfkit._sources.openclaw.parser import parse_session_file
        from adfkit._sources.transcript.source import TranscriptSource

        kw = {k: v for k, v in options.items() if k == "max_line_bytes" and v is not None}
        return TranscriptSource(parse_session_file(p, **kw))
    keep = {k: options[k] for k in ("timeout", "max_blob_bytes") if options.get(k) is not None}
    store = Store(p, **keep)
    if member is None:
        return store
    try:
        return store.member(member)
    finally:
        store.close()


def list_sessions(folder: Path) -> pd.DataFrame:
    """One row per OpenClaw session under ``folder`` (:func:`.listing.list_openclaw_sessions`)."""
    from adfkit._sources.openclaw.listing import list_openclaw_sessions

    return list_openclaw_sessions(folder)


RULE_TEXT = (
    "OpenClaw auto-compaction: compacts before a request once the prompt would pass the "
    "window less the reserve for the reply: a quarter of windows under 80,000 tokens (the "
    "recorded store's contextBudgetStatus: 8,000 of 32,000), else 20,000 "
    "(DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR; compaction.reserveTokens may raise it, and is "
    "not on disk). The window is {src}."
)


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """``(window, threshold, rule text)`` of OpenClaw's automatic compaction.

    Examples
    --------
    >>> compaction_rule("rec-model", 32_000)[:2]
    (32000, 24000)
    >>> compaction_rule("rec-model", 200_000)[:2]
    (200000, 180000)
    >>> compaction_rule("no-such-model", None)[:2]
    (None, None)
    """
    if window:
        src = "the one the session entry records (contextTokens)"
    else:
        window = context_window(model)
        src = (
            "the model's in genai-prices' table (assumed)"
            if window
            else "unknown for this model (threshold NA)"
        )
    if not window:
        return Rule(None, None, RULE_TEXT.format(src=src))
    reserve = window // 4 if window < SMALL_WINDOW else RESERVE_FLOOR
    return Rule(window, window - reserve, RULE_TEXT.format(src=src))


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


def find(folder: Path) -> Iterator[Path]:
    """OpenClaw's stores and session files directly in ``folder``."""
    return files.find(folder)


SPEC = FormatSpec(
    name="openclaw",
    label="OpenClaw session",
    looks_for=(
        f"an {STORE_NAME} SQLite store, or a .jsonl opening with pi's session header beside "
        "OpenClaw's sessions.json"
    ),
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.openclaw.json",
    provider=provider,
    many=True,
    store_names=frozenset({STORE_NAME}),
)

__all__ = ["SPEC", "STORE_NAME", "Store", "claims", "compaction_rule"]
