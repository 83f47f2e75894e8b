"""pi coding agent sessions: recognition, opening, listing, compaction rule.

Light on purpose (the registry imports every format's package to recognise a file): the
reader is :mod:`.parser`, imported when a session is opened; the listing is :mod:`.listing`,
the file tests :mod:`.files`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.model_catalog import maker_of
from adfkit._core.registry import FormatSpec, Probe, Rule
from adfkit._sources.pi.files import NAME, find, is_header, sessions_under

if TYPE_CHECKING:
    import pandas as pd

#: Where pi keeps its sessions (``PI_CODING_AGENT_DIR`` moves the agent folder).
DEFAULT_ROOT = "~/.pi/agent/sessions"
#: pi's default compaction settings (compaction.ts ``DEFAULT_COMPACTION_SETTINGS``).
RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000
#: Context window of Anthropic Claude models in pi's model table (pi-ai models.generated.ts).
CLAUDE_WINDOW = 200_000


def claims(probe: Probe) -> bool:
    """Positive recognition: a file whose first record is a pi session header (what pi itself
    checks, with ``timestamp`` and ``cwd`` too), unless OpenClaw wrote it
    (:func:`adfkit._sources.openclaw.files.is_session_file`). Later records are not looked at:
    an entry type of a newer pi is a finding of the reader, not another format."""
    if probe.is_dir:
        return False
    recs = probe.records
    if not recs or not is_header(recs[0]):
        return False
    from adfkit._sources.openclaw.files import is_session_file

    return not is_session_file(probe)  # OpenClaw keeps pi's entries: its files are its own


def open_session(path: str | os.PathLike[str], **options: Any) -> Any:
    """The session at ``path`` as a :class:`adfkit._sources.transcript.source.TranscriptSource`."""
    from adfkit._sources.pi.parser import parse_pi
    from adfkit._sources.transcript.source import TranscriptSource

    kw = {k: v for k, v in options.items() if k == "max_line_bytes" and v is not None}
    return TranscriptSource(parse_pi(Path(path), **kw))


def list_sessions(folder: Path) -> pd.DataFrame:
    """One row per pi session under ``folder``, newest first (:func:`.listing.list_pi_sessions`)."""
    from adfkit._sources.pi.listing import list_pi_sessions

    return list_pi_sessions(folder)


def window_of(model: str | None) -> int | None:
    """The context window pi's model table gives ``model`` where adfkit knows it (Claude:
    200,000), else None.

    Examples
    --------
    >>> window_of("claude-sonnet-4-5"), window_of("gpt-5.1-codex")
    (200000, None)
    """
    if model and model.lower().removeprefix("anthropic/").startswith("claude"):
        return CLAUDE_WINDOW
    return None


RULE_TEXT = (
    "pi auto-compaction: compacts when the context (the last reply's input + output + cache "
    "tokens) exceeds the model's context window - reserveTokens 16,384 (compaction.ts "
    "DEFAULT_COMPACTION_SETTINGS and shouldCompact; keepRecentTokens 20,000 kept). pi records "
    "neither the window nor the settings: the window is {src}; a settings.json override is "
    "not on disk."
)


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """``(window, threshold, rule text)`` of pi's automatic compaction for ``model``.

    Examples
    --------
    >>> compaction_rule("claude-sonnet-4-5", None)[:2]
    (200000, 183616)
    >>> compaction_rule("gpt-5.1-codex", None)[:2]
    (None, None)
    """
    if window:
        src = "the one given"
    else:
        window = window_of(model)
        src = (
            "pi's model table for Claude models (200,000)"
            if window
            else "unknown for this model (threshold NA)"
        )
    threshold = window - RESERVE_TOKENS if window else None
    return Rule(window, threshold, RULE_TEXT.format(src=src))


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


def follow() -> Any:
    """A :class:`.live.PiFollower` (imported when a session is watched)."""
    from adfkit._sources.pi.live import PiFollower

    return PiFollower()


SPEC = FormatSpec(
    name="pi",
    label="pi session",
    looks_for='a first line {"type": "session", "id", "timestamp", "cwd"} (pi\'s header)',
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.pi.json",
    provider=provider,
    follow=follow,
)

__all__ = ["NAME", "SPEC", "claims", "compaction_rule", "find", "is_header", "sessions_under"]
