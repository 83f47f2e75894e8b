"""A ``$set`` of the message list: each message matched to a row of the window, new rows
placed, the rows it swept (a compression) or masked (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._sources.gemini_cli.content import (
    SNAPSHOT,
    is_masked,
    message_blocks,
    signature,
    text_of,
)
from adfkit._sources.gemini_cli.files import is_message
from adfkit._sources.gemini_cli.state import Row, State
from adfkit._sources.transcript.kit import EventDraft, Findings


def set_messages(msgs: list[Any], written: int | None, line: int, st: State, fnd: Findings) -> None:
    """A ``$set`` of the message list: the window becomes the list (module docstring)."""
    good = [m for m in msgs if is_message(m) and m.get("type") in ("user", "gemini")]
    if len(good) != len(msgs):
        fnd.add(
            "bad_record",
            "warning",
            line,
            f"{len(msgs) - len(good)} item(s) of the $set message list are not messages; skipped",
        )
    matched, rewritten = _match(good, st.window)
    masked = _rewrite(good, matched, rewritten, written, line, st)
    kept = {id(r) for r in matched if r is not None}
    swept = [r for r in st.window if id(r) not in kept]
    window, new_rows = _place(good, matched, written, line)
    st.rows += new_rows
    if swept:
        _compaction(line, st, swept, [r for r in window if id(r) in kept], new_rows)
    # the list set anew at a process's first call (a start, a resume): not a compaction
    st.new_process = st.new_process or not (swept or masked)
    st.window = window


def _match(msgs: list[dict[str, Any]], window: list[Row]) -> tuple[list[Row | None], list[Row]]:
    """Each message of a ``$set`` list -> the window row it is (None: a new message), and the
    rows it rewrote (matched by id alone, their content replaced)."""
    free: dict[str, list[Row]] = {}
    for r in window:
        free.setdefault(r.sig, []).append(r)
    used: set[int] = set()
    out: list[Row | None] = [None] * len(msgs)
    sigs = [signature(m.get("type"), message_blocks(m)) for m in msgs]
    # the same id and content first, then the same content (a copy under a new id)
    for same_id in (True, False):
        for i, m in enumerate(msgs):
            if out[i] is not None:
                continue
            for r in free.get(sigs[i], ()):
                # a summary or notice is the same message by its id only (the next
                # compression may write the same text again: a new summary)
                copy = not same_id and r.kind_hint not in ("compaction_summary", "notice")
                if id(r) not in used and (r.mid == m["id"] or copy):
                    out[i] = r
                    used.add(id(r))
                    break
    rewritten = []
    for i, m in enumerate(msgs):  # then the same id: the content rewritten
        if out[i] is None:
            same = (
                w
                for w in window
                if id(w) not in used and w.mid == m["id"] and w.mtype == m.get("type")
            )
            if (found := next(same, None)) is not None:
                used.add(id(found))
                out[i] = found
                rewritten.append(found)
    return out, rewritten


def _rewrite(
    msgs: list[dict[str, Any]],
    matched: list[Row | None],
    rewritten: list[Row],
    written: int | None,
    line: int,
    st: State,
) -> bool:
    """Rows the list holds under their id with other content: the row takes the new content
    (the session context, regenerated), but a tool output masked is a microcompaction that
    clears the row (which keeps its output). Returns whether one was masked."""
    ids = set(map(id, rewritten))
    masked = []
    for m, r in zip(msgs, matched, strict=True):
        if r is None or id(r) not in ids:
            continue
        new = message_blocks(m)
        if is_masked(new) and not is_masked(r.content):
            masked.append(r)
            r.sig = signature(r.mtype, new)  # the window's version: the next list matches it
        else:
            r.set_content(m)
            r.lines.append(line)
    if masked:
        ev = EventDraft("microcompaction", line, written, trigger="auto", swept=masked)
        ev.summarises = False
        st.events.append(ev)
    return bool(masked)


def _place(
    msgs: list[dict[str, Any]], matched: list[Row | None], written: int | None, line: int
) -> tuple[list[Row], list[Row]]:
    """The new window in the list's order, and its new rows: each placed after the row it
    follows in the list (or, first in it, before the first kept row), stamped with the
    list's time (``lastUpdated``, written with it; a repeated message holds its original's
    stamp)."""
    window: list[Row] = []
    new_rows: list[Row] = []
    for m, r in zip(msgs, matched, strict=True):
        if r is None:
            r = Row(m, line)
            r.anchor = window[-1] if window else None
            if written is not None:
                r.created_at = written
            new_rows.append(r)
        window.append(r)
    first_kept = next((r for r, m in zip(window, matched, strict=True) if m is not None), None)
    for r in new_rows:
        if r.anchor is None:
            r.before = first_kept
    return window, new_rows


def _compaction(
    line: int, st: State, swept: list[Row], kept: list[Row], new_rows: list[Row]
) -> None:
    summary = next(
        (r for r in new_rows if r.mtype == "user" and SNAPSHOT in text_of(r.content)), None
    )
    if summary is not None:
        summary.kind_hint = "compaction_summary"
        summary.note = "the compression calls' usage is not in the file"
    for r in new_rows:
        if r.mtype == "gemini" and r is not summary:
            r.kind_hint = "notice"  # Gemini CLI's own "Got it": sent, no model call
    ev = EventDraft(
        "compaction",
        line,
        summary.created_at if summary is not None else None,
        summary.mid if summary is not None else None,
        trigger="auto" if st.in_turn else None,
        swept=swept,
        preserved=kept,
        summary=summary,
        summarises=summary is not None,
    )
    st.inputs.event(ev)
    st.events.append(ev)
