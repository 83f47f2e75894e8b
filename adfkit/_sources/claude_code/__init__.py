"""Claude Code sessions: ``~/.claude/projects/<project>/<session>.jsonl`` (TRANSCRIPTS.md §1)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.registry import FormatSpec, Probe, Rule

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._core.figures import SessionFigures
    from adfkit._core.prices import PriceTable
    from adfkit._core.source import AgentSource

#: Claude Code's automatic compaction: the threshold is the model's context window minus the
#: output reserved for the reply (20,000) minus a fixed buffer (13,000)
#: (see :func:`compaction_rule`).
OUTPUT_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
#: Context window of Claude models; a ``[1m]`` model id (the 1M-token beta) has 1,000,000.
WINDOW = 200_000
WINDOW_1M = 1_000_000

#: Every record type Claude Code writes (TRANSCRIPTS.md §0, §1.3): conversation and metadata.
RECORD_TYPES = frozenset(
    {"user", "assistant", "system", "progress", "attachment", "summary"}
    | {"file-history-snapshot", "file-history-delta", "queue-operation", "last-prompt"}
    | {"custom-title", "agent-name", "ai-title", "mode", "permission-mode", "pr-link"}
    | {"agent-setting", "tag"}
    | {"api-request", "api-request-shape", "api-request-blob", "atis-latch", "tools-used"}
    | {"cost-state"}
)
#: Keys only Claude Code's records carry next to their ``type``.
_ID_KEYS = ("uuid", "parentUuid", "sessionId", "leafUuid", "messageId")
#: A first line longer than the head: Claude Code writes ``parentUuid`` first in a conversation
#: record, and ``type`` before the message.
_OPENING = re.compile(rb'^\{"(parentUuid|type)":')
_TYPE = re.compile(rb'"type":"(user|assistant|system|summary|progress|attachment)"')


def claims(probe: Probe) -> bool:
    """A record of Claude Code's own among the first lines (:func:`is_claude_record`); or, when
    the first line is longer than the head, its opening keys."""
    if probe.is_dir or probe.name.endswith(".zst"):
        return False
    for rec in probe.records:
        if is_claude_record(rec):
            return True
    if probe.records:
        return False
    first = probe.first_line
    return bool(_OPENING.match(first) and b'"sessionId":' in first and _TYPE.search(first))


def is_claude_record(rec: dict[str, Any]) -> bool:
    """A record of a Claude Code type that carries one of its id keys, in Claude Code's own
    shape: a ``user``/``assistant`` record's ``message`` is an Anthropic message (``content``),
    a ``system`` record has no ``systemPayload``. Qwen Code writes records with the same type
    names and id keys (``uuid``, ``parentUuid``, ``sessionId``) but a Gemini message
    (``parts``) and ``systemPayload``: never Claude Code's.

    Examples
    --------
    >>> is_claude_record({"type": "user", "uuid": "u", "message": {"content": "hi"}})
    True
    >>> is_claude_record({"type": "user", "uuid": "u", "message": {"parts": [{"text": "hi"}]}})
    False
    """
    t = rec.get("type")
    if t not in RECORD_TYPES or not any(k in rec for k in _ID_KEYS):
        return False
    if t == "user" or t == "assistant":
        msg = rec.get("message")
        return isinstance(msg, dict) and "content" in msg and "parts" not in msg
    if t == "system":
        return "systemPayload" not in rec
    return True


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """Claude Code records no window and no threshold. The window comes from the model (200,000;
    1,000,000 for a ``[1m]`` model id), or from ``window``, the most tokens the file shows in
    context (none is recorded): above 200,000 the session ran with the 1M-token window. The
    threshold is ``window - 20,000 - 13,000`` (the output reserved for the reply, then Claude
    Code's auto-compact buffer): 167,000 on a 200k model. Source: Claude Code's bundled
    ``cli.js`` as quoted in anthropics/claude-code issue #12004 (``available input - 13000``,
    output reserve 20,000). Real files compact earlier than that (``preTokens`` about 155,300
    in 2.0.76-2.1.7): where a file records them, the threshold is taken from them
    (:func:`adfkit._core.thresholds.learned_settings`). ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` and
    ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` move it too; no file records them.

    Examples
    --------
    >>> compaction_rule("claude-sonnet-4-5-20250929")[:2]
    (200000, 167000)
    >>> compaction_rule("claude-opus-5", 297_190)[:2]
    (1000000, 967000)
    """
    big = bool(model and "[1m]" in model.lower()) or bool(window and window > WINDOW)
    w = max(WINDOW_1M if big else WINDOW, window or 0)
    why = "the 1M window: model id or tokens in context" if big else "window from the model id"
    return Rule(
        w,
        w - OUTPUT_RESERVE - AUTOCOMPACT_BUFFER,
        f"Claude Code auto-compact: context window - 20,000 output reserve - 13,000 buffer ({why})",
    )


def open_session(path: Path, **options: Any) -> AgentSource:
    from adfkit._sources.claude_code.parser import parse_claude_code
    from adfkit._sources.transcript.source import TranscriptSource

    return TranscriptSource(parse_claude_code(path))


def find(folder: Path) -> Iterator[Path]:
    """Session files in ``folder`` (a subagent's ``agent-*.jsonl`` goes with its session)."""
    return (p for p in folder.glob("*.jsonl") if not p.name.startswith("agent-"))


def list_sessions(folder: Path) -> pd.DataFrame:
    from adfkit._sources.claude_code.listing import list_claude_code_sessions

    return list_claude_code_sessions(folder)


def follow() -> Any:
    """A :class:`.live.ClaudeCodeFollower` (imported when a session is watched)."""
    from adfkit._sources.claude_code.live import ClaudeCodeFollower

    return ClaudeCodeFollower()


def figures(path: str, prices: PriceTable) -> SessionFigures:
    """``adfkit usage``'s figures of one file, from the parser alone."""
    from adfkit._sources.claude_code.parser import parse_claude_code
    from adfkit._sources.transcript.figures import reader

    return reader(parse_claude_code)(path, prices)


SPEC = FormatSpec(
    name="claude_code",
    label="Claude Code session",
    looks_for="JSON lines with Claude Code records: user, assistant, summary... with a uuid",
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root="~/.claude/projects",
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.claude_code.json",
    provider=lambda model: "anthropic",
    # a record is stamped with its event's time and some are written after later ones
    stamped_on_append=False,
    # attachments and command records are sent as system reminders in the user's message
    context_in_messages=True,
    follow=follow,
    figures=figures,
)
