"""From what a user hands in (a path, an open handle, a source) to an :class:`AgentSource`.

The public functions that accept "an agent" (``observe``, ``simulate``, the plots, ...) take any
:data:`SourceLike` and go through :func:`opened`, which opens a path for the duration of the
call only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

import orjson

from ._adf import AdfSource
from ._blobs import DEFAULT_MAX_BLOB_BYTES
from ._errors import AdfError, UnknownFormatError
from ._source import AgentSource
from ._transcript import UTF8_BOM, open_text_stream
from ._transcript_source import open_transcript


@runtime_checkable
class HasSource(Protocol):
    """An object that wraps a source (``AgentFile``)."""

    @property
    def source(self) -> AgentSource: ...


SourceLike = AgentSource | HasSource | str | os.PathLike[str]

#: Kinds of record :func:`open_source` reads.
FORMATS = ("adf", "claude_code", "codex")

_SQLITE = b"SQLite format 3\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"
_HEAD = 256 * 1024
#: Top-level ``type`` of a Codex ``RolloutLine`` (TRANSCRIPTS.md §2.2).
_CODEX_LINE_TYPES = {b"session_meta", b"response_item", b"event_msg", b"turn_context", b"compacted"}
#: Bare ``ResponseItem`` types of the earliest Codex rollouts (no envelope).
_CODEX_BARE_TYPES = {b"message", b"reasoning", b"function_call", b"function_call_output"}


def detect_format(path: str | os.PathLike[str]) -> str:
    """Which record ``path`` holds: ``adf``, ``claude_code`` or ``codex``.

    An ``.adf`` name or the SQLite header means an ADF agent file (its reader then says what is
    wrong with it); ``.zst`` or zstd data a Codex rollout; JSON lines are told apart by their
    records (a Codex line is ``{"timestamp", "type", "payload"}``, a Claude Code record has a
    ``uuid``/``sessionId``/``parentUuid``), then by the name (``rollout-*.jsonl``). Only the
    first 256 KiB are read.

    Raises
    ------
    AdfError
        the path is missing, a directory, or unreadable.
    UnknownFormatError
        the file is none of these (empty, binary, text, other JSON).

    Examples
    --------
    >>> detect_format("sample_agents/long-runner.adf")
    'adf'
    >>> from pathlib import Path
    >>> detect_format(next(Path("sample_agents/codex").rglob("*.jsonl.zst")))
    'codex'
    """
    p = Path(path).expanduser()
    name = p.name.lower()
    if name.endswith(".adf"):
        return "adf"
    with open_text_stream(p, buffering=0) as f:  # only a regular file: a FIFO never blocks
        try:
            head = f.read(_HEAD)
        except OSError as exc:
            raise AdfError(f"cannot read the file: {exc.strerror}", path=p) from None
    if head.startswith(_SQLITE):
        return "adf"
    if name.endswith(".zst") or head.startswith(_ZSTD):
        return "codex"
    what = _sniff_lines(head)
    if what is not None:
        return what
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return "codex"
    if not head:
        why = "empty file (0 bytes)"
    elif head.removeprefix(UTF8_BOM).lstrip(b" \t\r\n")[:1] == b"{":
        why = "JSON lines, but neither Claude Code nor Codex records"
    elif b"\x00" in head[:512]:
        why = "binary data"
    else:
        why = "text that is not JSON lines"
    raise UnknownFormatError(
        f"{why}: not an ADF agent file (SQLite), a Claude Code session or a Codex rollout",
        path=p,
    )


def _sniff_lines(head: bytes) -> str | None:
    """``claude_code``/``codex`` from the first records of ``head``, else None."""
    lines = head.split(b"\n")
    complete = lines[:-1] if len(lines) > 1 else []
    for line in complete[:50]:
        line = line.removeprefix(UTF8_BOM).strip()  # a byte-order mark is no content
        if not line.startswith(b"{"):
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        t = obj.get("type")
        tb = t.encode() if isinstance(t, str) else b""
        if "payload" in obj and tb in _CODEX_LINE_TYPES:
            return "codex"
        if any(k in obj for k in ("uuid", "parentUuid", "sessionId", "leafUuid")):
            return "claude_code"
        if tb in _CODEX_BARE_TYPES or ("cli_version" in obj and "id" in obj):
            return "codex"
    # a first line longer than the head (a huge record): look at its opening keys
    first = head[:4096]
    if b'"parentUuid"' in first or b'"sessionId"' in first:
        return "claude_code"
    if b'"payload"' in first and any(b'"' + t + b'"' in first for t in _CODEX_LINE_TYPES):
        return "codex"
    return None


def open_source(
    path: str | os.PathLike[str],
    *,
    max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
    timeout: float = 5.0,
    format: str | None = None,  # noqa: A002 - the record kind, as AgentSource.format
) -> AgentSource:
    """Open the agent record at ``path`` read-only with the reader for its kind.

    ``format``: ``adf``, ``claude_code``, ``codex``, or None to recognise it
    (:func:`detect_format`). ``max_blob_bytes`` and ``timeout`` apply to ADF files.
    """
    fmt = detect_format(path) if format is None else format
    if fmt == "adf":
        return AdfSource(path, max_blob_bytes=max_blob_bytes, timeout=timeout)
    if fmt in ("claude_code", "codex"):
        return open_transcript(path, fmt)
    raise ValueError(f"format must be one of {list(FORMATS)} or None, got {format!r}")


@contextmanager
def opened(agent: SourceLike) -> Iterator[AgentSource]:
    """The source behind ``agent``; a path is opened here and closed on exit."""
    if isinstance(agent, AgentSource):
        yield agent
    elif isinstance(agent, HasSource):
        yield agent.source
    elif isinstance(agent, str | os.PathLike):
        src = open_source(agent)
        try:
            yield src
        finally:
            src.close()
    else:
        raise TypeError(
            f"expected an AgentFile, an agent source or a path, got {type(agent).__name__}"
        )
