"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]`` (TRANSCRIPTS.md
§2)."""

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

#: Codex compacts automatically at 90% of the model's context window (``auto_compact_token_limit``
#: defaults to ``context_window * 9 / 10``); the window is recorded in the rollout.
AUTO_COMPACT_FRACTION = 0.9
#: Codex's context window for its GPT-5 family models when the rollout records none.
WINDOW = 272_000

#: Top-level ``type`` of a ``RolloutLine`` (TRANSCRIPTS.md §2.2), each with a ``payload``.
LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: The earliest rollouts: bare ``ResponseItem`` lines, each with the key that marks its type.
_BARE = {
    "message": "role",
    "reasoning": "summary",
    "function_call": "call_id",
    "function_call_output": "call_id",
}
_ZSTD = b"\x28\xb5\x2f\xfd"
_PAYLOAD = re.compile(rb'"type":"(session_meta|response_item|event_msg|turn_context|compacted)"')


def _is_codex_record(rec: dict[str, Any]) -> bool:
    t = rec.get("type")
    if isinstance(rec.get("payload"), dict) and t in LINE_TYPES:
        return True
    if isinstance(t, str) and t in _BARE and _BARE[t] in rec:
        return True
    return "cli_version" in rec and "id" in rec  # the earliest session meta line


def claims(probe: Probe) -> bool:
    """A ``*.jsonl.zst`` name; Codex rollout lines among the first lines (of zstd data: of
    what its first bytes decompress to); a first line longer than the head, by its opening
    keys; a ``rollout-*.jsonl`` none of whose first lines reads as JSON."""
    if probe.is_dir:
        return False
    if probe.name.endswith(".jsonl.zst"):
        return True  # by its name: the reader says what is wrong with the data
    head = probe.head
    if head.startswith(_ZSTD):
        return any(_is_codex_record(r) for r in Probe(probe.path, _unzstd(head)).records)
    if any(_is_codex_record(r) for r in probe.records):
        return True
    if probe.records:
        return False
    if probe.name.startswith("rollout-") and probe.name.endswith(".jsonl"):
        return True  # no line reads as JSON: by its name, the reader reports the lines
    first = probe.first_line
    return b'"payload"' in first and bool(_PAYLOAD.search(first))


def _unzstd(head: bytes) -> bytes:
    """What the first bytes of a zstd stream decompress to (at most 256 KiB; b"" if damaged)."""
    import io

    import zstandard

    try:  # a stream reader stops at the size asked for: a bomb in the head decompresses no further
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(head)) as r:
            return r.read(256 * 1024)
    except zstandard.ZstdError:
        return b""


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """Codex records ``model_context_window`` (``token_count``, ``task_started``); it compacts
    automatically at ``auto_compact_token_limit``, by default 90% of that window (codex-rs
    ``openai_model_info.rs``; a ``model_auto_compact_token_limit`` in ``config.toml``
    overrides it and is not recorded). Without a recorded window: 272,000 (Codex's GPT-5
    window).

    Examples
    --------
    >>> compaction_rule("gpt-5-codex", 272000)[:2]
    (272000, 244800)
    """
    w = window or WINDOW
    src = "recorded model_context_window" if window else "assumed 272,000 window"
    return Rule(
        w,
        int(w * AUTO_COMPACT_FRACTION),
        f"Codex auto_compact_token_limit default: 90% of the context window ({src})",
    )


def open_session(path: Path, **options: Any) -> AgentSource:
    from adfkit._sources.codex.parser import parse_codex
    from adfkit._sources.transcript.source import TranscriptSource

    return TranscriptSource(parse_codex(path))


def find(folder: Path) -> Iterator[Path]:
    """Rollouts in ``folder``: ``rollout-*.jsonl`` and ``*.jsonl.zst`` (a rollout under
    another ``.jsonl`` name is found by the Claude Code spec's glob and recognised on opening)."""
    yield from folder.glob("rollout-*.jsonl")
    yield from folder.glob("*.jsonl.zst")


def list_sessions(folder: Path) -> pd.DataFrame:
    from adfkit._sources.codex.listing import list_codex_sessions

    return list_codex_sessions(folder)


def follow() -> Any:
    """A :class:`.live.CodexFollower` (imported when a rollout is watched)."""
    from adfkit._sources.codex.live import CodexFollower

    return CodexFollower()


def figures(path: str, prices: PriceTable) -> SessionFigures:
    """``adfkit usage``'s figures of one file, from the parser alone."""
    from adfkit._sources.codex.parser import parse_codex
    from adfkit._sources.transcript.figures import reader

    return reader(parse_codex)(path, prices)


SPEC = FormatSpec(
    name="codex",
    label="Codex rollout",
    looks_for="JSON lines of Codex RolloutLines {timestamp, type, payload}, or rollout-*.jsonl.zst",
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root="~/.codex/sessions",
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.codex.json",
    provider=lambda model: "openai",
    provider_tools=frozenset({"web_search"}),  # web_search_call: run inside the response
    follow=follow,
    figures=figures,
)
