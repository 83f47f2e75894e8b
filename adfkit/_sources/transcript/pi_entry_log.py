"""pi's entries as a reader gives them: an :class:`EntryLog` (the header and the entries in the
order written, each with its place: a line of a file, a row's ``seq`` in a store);
:func:`read_lines` reads a ``.jsonl`` file of entries the way pi reads it, and
:func:`header_meta` says what a header holds (the rules:
:mod:`adfkit._sources.transcript.pi_entries`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.transcript.kit import Findings, JsonLines, TypeCounts, check_head

#: Entry types of pi's session file (session-manager.ts ``SessionEntry``; ``hookMessage`` of v2
#: is a message role, not an entry type).
ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
MESSAGE_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage"}
)


@dataclass(slots=True)
class Entry:
    """One parsed, non-header line."""

    line: int
    obj: dict[str, Any]
    key: str
    parent: str | None = None
    #: Index in pi's array of parsed lines (header 0), for v1 ``firstKeptEntryIndex``.
    index: int = 0


@dataclass
class EntryLog:
    header: dict[str, Any] | None = None
    header_line: int = 0
    entries: list[Entry] = field(default_factory=list)
    #: pi's array of parsed lines: index -> entry (absent: the header, a skipped huge line, a
    #: value that is no object).
    by_index: dict[int, Entry] = field(default_factory=dict)
    #: Lines pi would have parsed that this reader could not (bad JSON is skipped by pi too).
    first_bad_line: int | None = None
    repaired: set[int] = field(default_factory=set)


def read_lines(path: Path, max_line_bytes: int, fnd: Findings, what: str) -> EntryLog:
    """The entries of a ``.jsonl`` file of them, each with its place among the lines pi parses
    (a v1 compaction's ``firstKeptEntryIndex`` counts them all: the huge and non-object ones
    ``JsonLines`` drops, and the header, included). ``what`` names the file in errors
    (``"pi session"``)."""
    check_head(path, what)
    rd = EntryLog()
    unknown = TypeCounts()
    lines = JsonLines(path, fnd, "session", max_line_bytes=max_line_bytes)
    for n, obj in lines:
        index = lines.n_parsed + lines.n_huge - 1
        t = obj.get("type")
        if index == 0:
            rd.header, rd.header_line = header_of(path, obj, what), n
        elif t == "session":
            fnd.add("extra_header", "warning", n, "a second session header; skipped")
        else:
            if t not in ENTRY_TYPES:  # no row, but a node of the tree (pi indexes it too)
                unknown.add(t, n)
            i = obj.get("id")
            e = Entry(n, obj, i if isinstance(i, str) and i else f"@{n}", index=index)
            rd.entries.append(e)
            rd.by_index[index] = e
    if rd.header is None:
        raise NotTranscriptError(
            f"no complete JSON record: not a {what} (or its header is still being written)",
            path=path,
        )
    rd.first_bad_line, rd.repaired = lines.first_bad_line, set(lines.repaired)
    unknown.report(fnd, "unknown_entry_type", "warning", _unknown_entries)
    return rd


def header_of(path: Path | str, obj: Any, what: str) -> dict[str, Any]:
    """The first entry pi parses: its session header, else not a ``what`` (pi's own test,
    loadEntriesFromFile)."""
    if type(obj) is not dict or obj.get("type") != "session" or not isinstance(obj.get("id"), str):
        raise NotTranscriptError(
            "the first record is not a pi session header "
            f'({{"type": "session", "id", "timestamp", "cwd"}}): not a {what}',
            path=path,
        )
    return obj


def _unknown_entries(n: int, t: str) -> str:
    return (
        f"{n} entr{'y' if n == 1 else 'ies'} of unknown type {t!r} not read (not in pi's "
        "session format; its place in the tree is kept)"
    )


def header_meta(h: dict[str, Any]) -> dict[str, str]:
    """What a session header says, as text: ``session_version`` (1 when absent), ``cwd``,
    ``started``, ``parent_session`` (v2+ ``parentSession``, v1 ``branchedFrom``), and the v1
    header's ``provider``, ``model`` and ``thinking_level``.

    Examples
    --------
    >>> header_meta({"type": "session", "id": "x", "cwd": "/w", "modelId": "m"})
    {'session_version': '1', 'cwd': '/w', 'model': 'm'}
    """
    v = h.get("version")
    out = {"session_version": str(v if type(v) is int else 1)}
    for src, dst in (
        ("cwd", "cwd"),
        ("timestamp", "started"),
        ("parentSession", "parent_session"),
        ("branchedFrom", "parent_session"),
        ("provider", "provider"),
        ("modelId", "model"),
        ("thinkingLevel", "thinking_level"),
    ):
        val = h.get(src)
        if isinstance(val, str) and val:
            out.setdefault(dst, val)
    return out
