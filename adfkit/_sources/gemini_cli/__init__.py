"""Gemini CLI chats: recognition, opening, listing, compaction rule.

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
from adfkit._sources.gemini_cli.files import NAME, companions, find, is_header, is_message

if TYPE_CHECKING:
    import pandas as pd

#: Where Gemini CLI keeps its chats (``~/.gemini/tmp/<project>/chats/session-*.jsonl``).
DEFAULT_ROOT = "~/.gemini/tmp"
#: chatCompressionService.ts ``DEFAULT_COMPRESSION_TOKEN_THRESHOLD`` (the fraction of the
#: model's token limit; settings ``model.compressionThreshold`` overrides it, not on disk).
DEFAULT_FRACTION = 0.5
#: tokenLimits.ts: ``DEFAULT_TOKEN_LIMIT`` (every Gemini model), ``GEMMA_4_TOKEN_LIMIT``.
DEFAULT_TOKEN_LIMIT = 1_048_576
GEMMA_4_TOKEN_LIMIT = 256_000


def claims(probe: Probe) -> bool:
    """Positive recognition: a file whose first record is a Gemini CLI session header
    (``sessionId`` and a sha256 ``projectHash``, :func:`.files.is_header`) and whose other
    first records are Gemini CLI lines (messages, ``$set``/``$rewindTo`` patches, headers)."""
    if probe.is_dir:
        return False
    recs = probe.records
    if not recs or not is_header(recs[0]):
        return False
    return all(is_header(r) or is_message(r) or "$set" in r or "$rewindTo" in r for r in recs)


def open_session(path: str | os.PathLike[str], **options: Any) -> Any:
    """The session of the chat at ``path`` as a
    :class:`adfkit._sources.transcript.source.TranscriptSource`."""
    from adfkit._sources.gemini_cli.parser import parse_gemini
    from adfkit._sources.transcript.source import TranscriptSource

    kw = {k: v for k, v in options.items() if k == "max_line_bytes" and v is not None}
    return TranscriptSource(parse_gemini(Path(path), **kw))


def list_sessions(folder: Path) -> pd.DataFrame:
    """One row per Gemini CLI session under ``folder``, newest first
    (:func:`.listing.list_gemini_sessions`)."""
    from adfkit._sources.gemini_cli.listing import list_gemini_sessions

    return list_gemini_sessions(folder)


RULE_TEXT = (
    "Gemini CLI compression: compresses when the last call's prompt reaches "
    "model.compressionThreshold (default 0.5; a remote experiment can set it) of the model's "
    "token limit {limit:,} (chatCompressionService.ts, tokenLimits.ts); the setting is not in "
    "the chat, so the default is assumed."
)


def token_limit(model: str | None) -> int:
    """Gemini CLI's token limit of ``model`` (tokenLimits.ts ``tokenLimit``).

    Examples
    --------
    >>> token_limit("gemini-2.5-flash"), token_limit("gemma-4-31b-it")
    (1048576, 256000)
    """
    return GEMMA_4_TOKEN_LIMIT if (model or "").startswith("gemma-4") else DEFAULT_TOKEN_LIMIT


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """``(window, threshold, rule text)`` of Gemini CLI's automatic compression: half the
    model's token limit unless ``model.compressionThreshold`` says otherwise (not on disk).

    Examples
    --------
    >>> compaction_rule("gemini-2.5-flash")[:2]
    (1048576, 524288)
    """
    w = window or token_limit(model)
    return Rule(w, int(DEFAULT_FRACTION * w), RULE_TEXT.format(limit=w))


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


SPEC = FormatSpec(
    name="gemini_cli",
    label="Gemini CLI chat",
    looks_for=(
        'a first line {"sessionId", "projectHash": <sha256>, "startTime", "kind"} (a Gemini '
        'CLI session header), then message records and {"$set": ...} patches'
    ),
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.gemini_cli.json",
    provider=provider,
    context_in_messages=True,
    companions=companions,
    # chatCompressionService.ts compares getLastPromptTokenCount() (the last response's
    # promptTokenCount; a new GeminiChat's estimate of the history it resumes) with the threshold
    compaction_count="prompt",
)

__all__ = ["NAME", "SPEC", "claims", "compaction_rule", "find", "is_header"]
