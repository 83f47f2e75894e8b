"""Qwen Code chats: recognition, opening, listing, compaction rule.

Light on purpose (the registry imports every format's package to recognise a file): the
reader is :mod:`.parser`, imported when a chat is opened; the listing is :mod:`.listing`, the
file tests :mod:`.files`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.model_catalog import maker_of
from adfkit._core.registry import FormatSpec, Probe, Rule
from adfkit._sources.qwen_code.files import NAME, find, is_record

if TYPE_CHECKING:
    import pandas as pd

#: Where Qwen Code keeps its chats (``~/.qwen/projects/<project>/chats/<session id>.jsonl``).
DEFAULT_ROOT = "~/.qwen/projects"
#: chatCompressionService.ts: ``DEFAULT_PCT``, ``SUMMARY_RESERVE`` (COMPACT_MAX_OUTPUT_TOKENS),
#: ``AUTOCOMPACT_BUFFER``; tokenLimits.ts ``DEFAULT_TOKEN_LIMIT``.
DEFAULT_PCT = 0.85
SUMMARY_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
DEFAULT_WINDOW = 200_000


def claims(probe: Probe) -> bool:
    """Positive recognition: a file whose first record is a Qwen Code chat record (a message in
    the Gemini API's ``parts`` shape, or a ``systemPayload``): :func:`.files.is_record`."""
    if probe.is_dir:
        return False
    recs = probe.records
    return bool(recs) and is_record(recs[0])


def open_session(path: str | os.PathLike[str], **options: Any) -> Any:
    """The chat at ``path`` as a :class:`adfkit._sources.transcript.source.TranscriptSource`."""
    from adfkit._sources.qwen_code.parser import parse_qwen
    from adfkit._sources.transcript.source import TranscriptSource

    kw = {k: v for k, v in options.items() if k == "max_line_bytes" and v is not None}
    return TranscriptSource(parse_qwen(Path(path), **kw))


def list_sessions(folder: Path) -> pd.DataFrame:
    """One row per Qwen Code chat under ``folder``, newest first
    (:func:`.listing.list_qwen_sessions`)."""
    from adfkit._sources.qwen_code.listing import list_qwen_sessions

    return list_qwen_sessions(folder)


RULE_TEXT = (
    "Qwen Code auto-compaction: compresses when the prompt reaches min(pct x window, window - "
    "20,000 - 13,000), pct context.autoCompactThreshold (default 0.85) "
    "(chatCompressionService.ts computeThresholds). The window is {src}."
)


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """``(window, threshold, rule text)`` of Qwen Code's automatic compaction. The window each
    reply was given is in the chat (``contextWindowSize``); without it, Qwen Code's default
    (200,000) is assumed. A lowered ``autoCompactThreshold`` is not on disk.

    Examples
    --------
    >>> compaction_rule("qwen3-coder-plus", 64_000)[:2]
    (64000, 31000)
    >>> compaction_rule("qwen3-coder-plus", None)[:2]
    (200000, 167000)
    """
    src = "the one recorded" if window else "Qwen Code's default (200,000), assumed"
    w = window or DEFAULT_WINDOW
    ceiling = w - SUMMARY_RESERVE - AUTOCOMPACT_BUFFER
    proportional = DEFAULT_PCT * w
    threshold = int(min(proportional, ceiling) if ceiling > 0 else proportional)
    return Rule(w, threshold, RULE_TEXT.format(src=src))


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


SPEC = FormatSpec(
    name="qwen_code",
    label="Qwen Code chat",
    looks_for=(
        'a first line {"uuid", "sessionId", "timestamp", "type", "message": {"parts": [...]}} '
        "(a Qwen Code chat record)"
    ),
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.qwen_code.json",
    provider=provider,
)

__all__ = ["NAME", "SPEC", "claims", "compaction_rule", "find", "is_record"]
