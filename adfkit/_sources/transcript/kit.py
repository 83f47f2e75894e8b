"""The transcript kit: format-neutral records of an agent transcript (rows, compaction events,
model calls, integrity findings) and what every JSONL parser shares to make them. A parser
imports them from here; each lives in a module named for what it holds: ``records``,
``drafts``, ``findings``, ``lines`` (reading lines, one line's JSON with surrogates repaired),
``zstd_stream`` (the capped ``.zst`` stream), ``json_lines`` (:class:`JsonLines`),
``timestamps``, ``tokens`` (token maps) and ``content`` (tool arguments, result text); this
module adds the session listing's frame.

The parsers of Claude Code sessions (``_sources/claude_code/``) and Codex CLI rollouts
(``_sources/codex/``) both return a :class:`ParsedTranscript`, and a new JSONL or JSON format
does the same. What a parser takes from here, so that it only says what its records mean:

- **reading**: :class:`JsonLines` yields each line's JSON object with the caps and findings
  every format needs (byte-order mark, a line over ``max_line_bytes``, bad JSON repaired or
  skipped, a half-written last line, non-objects, a capped ``.zst`` stream), and with a
  :class:`Narrow` reads a format's most common lines for the few fields it takes of them;
  :func:`check_head` refuses a file that cannot be a transcript before reading it;
  :class:`TypeCounts` sums the records of a skipped type into one finding;
  :func:`gc_paused` holds the garbage collector off while the many acyclic objects are made.
- **findings**: :class:`Findings` (capped per check), :func:`warn_findings`.
- **drafts**: :class:`RowDraft`, :class:`EventDraft`, :class:`CallDraft` are the rows, events
  and calls while the parser builds them (merged, moved to a branch, before ``seq`` is known);
  :func:`number_rows`, :meth:`EventDraft.final` and :func:`final_calls` make the finished
  records; :func:`own_call` makes a row its own model call; :class:`CallInputs` and
  :func:`event_tokens` give an event the prompt sizes around it. A parser subclasses a draft
  for the state only it keeps.
- **values**: timestamps (:func:`iso_ms`), token usage (:func:`anthropic_tokens`,
  :func:`openai_tokens`, :func:`mapped_tokens`, counts that are not counts), tool-call
  arguments (:func:`tool_input`), tool-result text.

Nothing here knows any one format.

Conventions, the same as ADF loop rows (ADF_FORMAT.md §3):

- ``content`` is a list of Anthropic-style blocks: ``{"type": "text", "text"}``,
  ``{"type": "tool_use", "id", "name", "input"}`` (``input`` an object; arguments that are not
  valid JSON become ``{"_error", "_raw_arguments"}``), ``{"type": "tool_result", "tool_use_id",
  "content", "is_error"}`` (``content`` a string: text parts joined by newlines, other parts as
  ``[image]``-style placeholders), ``{"type": "thinking", "thinking"}`` (signatures and encrypted
  reasoning are dropped), ``{"type": "image_url", "image_url": {"url"}}``. Unknown block types are
  kept as they are.
- ``tokens`` holds only the keys the provider reported among ``input``, ``output``,
  ``cache_read``, ``cache_write`` and ``reasoning``. ``input`` **includes** the cache parts.
  One API call's usage is counted exactly once, on the row of that call.
- ``created_at`` is milliseconds since the epoch (UTC), or None.
- ``seq`` numbers the active conversation 1..N in conversation order; rows of abandoned branches
  (``ParsedTranscript.other_branches``) continue the numbering after N, in file order, so a seq
  is unique within one parsed file. ``line`` is the 1-based line of the row's first record.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._base.collector import gc_paused

if TYPE_CHECKING:
    import pandas as pd

from adfkit._sources.transcript.content import (
    result_text,
    text_of,
    tool_input,
)
from adfkit._sources.transcript.drafts import (
    CallDraft,
    CallInputs,
    EventDraft,
    RowDraft,
    event_tokens,
    final_calls,
    number_rows,
    own_call,
)
from adfkit._sources.transcript.findings import (
    Findings,
    TypeCounts,
    warn_findings,
)
from adfkit._sources.transcript.json_lines import (
    JsonLines,
    Narrow,
)
from adfkit._sources.transcript.lines import (
    DEFAULT_MAX_LINE_BYTES,
    UTF8_BOM,
    ZSTD_MAGIC,
    head_objects,
    iter_lines,
    loads_line,
    skip_bom,
    sniff,
)
from adfkit._sources.transcript.records import (
    EVENT_KINDS,
    KIND_HINTS,
    SEVERITIES,
    Finding,
    ModelCall,
    ParsedTranscript,
    TokenCount,
    TranscriptEvent,
    TranscriptRow,
    event_counts,
)
from adfkit._sources.transcript.timestamps import (
    iso_ms,
)
from adfkit._sources.transcript.tokens import (
    ANTHROPIC_COUNT_KEYS,
    OPENAI_COUNT_KEYS,
    anthropic_bad_counts,
    anthropic_tokens,
    anthropic_usage,
    as_int,
    bad_counts,
    bad_usage,
    mapped_tokens,
    openai_tokens,
    unknown_counts,
)
from adfkit._sources.transcript.zstd_stream import (
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    LINE_CHARGE,
    check_head,
    open_lines,
    zstd_blob,
)

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).


def sessions_frame(recs: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    """A session listing (one record per session file, with ``path`` and ``modified``) as a
    typed frame of ``columns``, newest first (then by path)."""
    recs = sorted(recs, key=lambda r: r["path"])
    from adfkit import schema

    recs.sort(key=lambda r: r["modified"], reverse=True)  # stable: equal times stay by path
    return schema.frame(recs, columns)


def file_size(path: Path) -> int:
    return os.stat(path).st_size


__all__ = [
    "ANTHROPIC_COUNT_KEYS",
    "CallDraft",
    "CallInputs",
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "EVENT_KINDS",
    "EventDraft",
    "Finding",
    "Findings",
    "JsonLines",
    "KIND_HINTS",
    "LINE_CHARGE",
    "ModelCall",
    "Narrow",
    "OPENAI_COUNT_KEYS",
    "ParsedTranscript",
    "RowDraft",
    "SEVERITIES",
    "TokenCount",
    "TranscriptEvent",
    "TranscriptRow",
    "TypeCounts",
    "UTF8_BOM",
    "ZSTD_MAGIC",
    "anthropic_bad_counts",
    "anthropic_tokens",
    "anthropic_usage",
    "as_int",
    "bad_counts",
    "bad_usage",
    "check_head",
    "event_counts",
    "event_tokens",
    "file_size",
    "final_calls",
    "gc_paused",
    "head_objects",
    "iso_ms",
    "iter_lines",
    "loads_line",
    "mapped_tokens",
    "number_rows",
    "open_lines",
    "openai_tokens",
    "own_call",
    "result_text",
    "sessions_frame",
    "skip_bom",
    "sniff",
    "text_of",
    "tool_input",
    "unknown_counts",
    "warn_findings",
    "zstd_blob",
]
