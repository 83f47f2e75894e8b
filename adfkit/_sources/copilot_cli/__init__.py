"""GitHub Copilot CLI sessions: recognition, opening, listing, compaction rule.

Light on purpose (the registry imports every format's package to recognise an input): the
reader is :mod:`.parser`, imported when a session is opened. Built from the writer's published
schema, then checked on a session Copilot CLI 1.0.102 wrote against the scripted model server
(``tests/fixtures/recorded/copilot-cli/1.0.102``; see :mod:`.events`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.registry import FormatSpec, Probe, Rule
from adfkit._sources.copilot_cli.files import EVENTS, find, first_record, is_start, sessions_under

if TYPE_CHECKING:
    import pandas as pd

#: Where Copilot CLI keeps its sessions (one folder per session, ``events.jsonl`` inside).
DEFAULT_ROOT = "~/.copilot/session-state"
#: Background compaction starts at about 80% of the context window (GitHub docs, "Managing
#: context in Copilot CLI": ~80% in the background, blocking at ~95%).
AUTO_COMPACT_FRACTION = 0.8


def claims(probe: Probe) -> bool:
    """Positive recognition: an ``events.jsonl`` (or a folder holding one) whose first record
    is a ``session.start`` event. For a folder the probe's head is empty, so its
    ``events.jsonl`` first line is read here."""
    if probe.is_dir:
        f = Path(probe.path) / EVENTS
        return f.is_file() and is_start(first_record(f))
    recs = probe.records
    return bool(recs) and is_start(recs[0])


def open_session(path: str | os.PathLike[str], **options: Any) -> Any:
    """The session at ``path`` (folder or ``events.jsonl``) as a
    :class:`adfkit._sources.transcript.source.TranscriptSource`."""
    from adfkit._sources.copilot_cli.parser import parse_copilot_cli
    from adfkit._sources.transcript.source import TranscriptSource

    kw = {k: v for k, v in options.items() if k == "max_line_bytes" and v is not None}
    return TranscriptSource(parse_copilot_cli(Path(path), **kw))


def list_sessions(folder: Path) -> pd.DataFrame:
    """One row per session under ``folder``, newest first
    (:func:`.listing.list_copilot_sessions`)."""
    from adfkit._sources.copilot_cli.listing import list_copilot_sessions

    return list_copilot_sessions(folder)


RULE_TEXT = (
    "Copilot CLI auto-compaction: starts in the background at about 80% of the context window "
    "(GitHub docs, 'Managing context in Copilot CLI'; blocking at about 95%). The window is "
    "{src}."
)


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """``(window, threshold, rule text)``: 80% of the context window the session recorded
    (``tokenLimit`` of its compaction and truncation events); NA without one.

    Examples
    --------
    >>> compaction_rule("claude-sonnet-4.5", 128000)[:2]
    (128000, 102400)
    >>> compaction_rule("claude-sonnet-4.5", None)[:2]
    (None, None)
    """
    if not window:
        return Rule(None, None, RULE_TEXT.format(src="not recorded in this session (threshold NA)"))
    src = "the tokenLimit the session recorded"
    return Rule(window, int(window * AUTO_COMPACT_FRACTION), RULE_TEXT.format(src=src))


def provider(model: str | None) -> str | None:
    """Copilot CLI calls every model through GitHub's Copilot API.

    Examples
    --------
    >>> provider("gpt-5")
    'github-copilot'
    """
    return "github-copilot"


def stem(path: Path) -> str:
    """A session's name for the files made from it: its folder's (every session's file is
    ``events.jsonl``).

    Examples
    --------
    >>> stem(Path("session-state/6df5dfb8/events.jsonl")), stem(Path("session-state/6df5dfb8"))
    ('6df5dfb8', '6df5dfb8')
    """
    return path.parent.name if path.name == EVENTS else path.name


def session_folder(path: Path) -> Path | None:
    """The session folder of an ``events.jsonl`` (by name: the output rule keeps writes out of
    the whole session)."""
    return path.parent if path.name == EVENTS else None


def follow() -> Any:
    """A :class:`.live.CopilotFollower` (imported when a session is watched)."""
    from adfkit._sources.copilot_cli.live import CopilotFollower

    return CopilotFollower()


SPEC = FormatSpec(
    name="copilot_cli",
    label="Copilot CLI session",
    looks_for="a folder with events.jsonl (or the file) opening with a session.start event",
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.copilot_cli.json",
    provider=provider,
    stem=stem,
    session_folder=session_folder,
    follow=follow,
)

__all__ = ["EVENTS", "SPEC", "claims", "compaction_rule", "find", "is_start", "sessions_under"]
