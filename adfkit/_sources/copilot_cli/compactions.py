"""Compactions (``session.compaction_start``/``_complete``), truncations and ``/clear``: what
each sweeps from the window, estimated where the file names no row (the format's notes:
:mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.copilot_cli.content import text_of
from adfkit._sources.copilot_cli.records import Record
from adfkit._sources.copilot_cli.state import Agent, Row
from adfkit._sources.copilot_cli.usage import billed
from adfkit._sources.transcript.kit import CallDraft, EventDraft, Findings, own_call


def clear(e: Record, a: Agent) -> None:
    """``/clear``: every row but the system prompt leaves the window."""
    swept = [r for r in a.window if r.kind_hint != "context"]
    a.events.append(EventDraft("clear", e.line, e.ts, e.id, swept=swept))
    a.window = [r for r in a.window if r.kind_hint == "context"]


def _compaction_extra(d: dict[str, Any], start: tuple[Record, int] | None) -> dict[str, Any]:
    """What a compaction_complete records beyond the event's own fields."""
    # Copilot sends the summary first, then the rows written while it was made
    extra: dict[str, Any] = {"swept_estimated": True, "summary_first": True}
    for k in (
        "messagesRemoved",
        "tokensRemoved",
        "preCompactionMessagesLength",
        "checkpointNumber",
        "checkpointPath",
        "tokenLimit",
        "requestId",
    ):
        v = d.get(k)
        if isinstance(v, str | int) and not isinstance(v, bool):
            extra[k] = v
    pre = as_count(d.get("preCompactionTokens"))
    if pre is not None:  # Copilot's own count, the one it compacts on (not a call's usage)
        extra["trigger_tokens"] = pre
    ci = d.get("customInstructions")
    if isinstance(ci, str) and ci:
        extra["user_context"] = ci
    if start is not None:
        extra["start_line"] = start[0].line
    return extra


def compaction(e: Record, a: Agent, fnd: Findings) -> None:
    d = e.data
    start, a.comp_start = a.comp_start, None
    outcome = d.get("outcome")  # 1.0.102: applied, cancelled (absent before)
    if d.get("success") is not True or outcome not in (None, "applied"):
        err = text_of(d.get("error"))[:120] or (f"outcome {outcome}" if outcome else "")
        fnd.add(
            "compaction_failed",
            "info",
            e.line,
            f"a compaction that was not applied{': ' + err if err else ''}; the window is "
            "unchanged",
        )
        _loose_call(e, a, fnd)
        return
    swept, kept = _estimate(e, a, start, fnd)
    srow = _summary_row(e, fnd)
    a.rows.append(srow)
    a.window = [*kept, srow]
    started = start[0].data if start is not None else {}
    trigger = d.get("trigger")
    if trigger is None:
        trigger = started.get("trigger")
    window = as_count(d.get("tokenLimit"))
    x = EventDraft(
        "compaction",
        e.line,
        e.ts,
        e.id,
        trigger=trigger if isinstance(trigger, str) else None,
        pre_tokens=as_count(d.get("preCompactionTokens")),
        post_tokens=as_count(d.get("postCompactionTokens")),
        context_window=window if window is not None else as_count(started.get("tokenLimit")),
        swept=swept,
        preserved=kept,
        summary=srow,
        extra=_compaction_extra(d, start),
    )
    a.events.append(x)
    a.inputs.event(x)


def _loose_call(e: Record, a: Agent, fnd: Findings) -> None:
    """The call of a compaction that was not applied, when its usage is recorded: it was made
    (and paid) though no row holds it."""
    used = e.data.get("compactionTokensUsed")
    if type(used) is not dict:
        return
    tokens = billed(used, fnd, e.line)
    m = used.get("model")
    model = m if isinstance(m, str) else None
    a.loose.append(CallDraft(e.id or f"line-{e.line}", None, e.line, model, tokens, e.ts))


def _estimate(
    e: Record, a: Agent, start: tuple[Record, int] | None, fnd: Findings
) -> tuple[list[Row], list[Row]]:
    """``(swept, kept)``, estimated (the file names no removed message): the window's rows
    before the start but its context rows leave, the rows written during the compaction stay."""
    if start is None:
        fnd.add(
            "compaction_incomplete",
            "warning",
            e.line,
            "compaction_complete without a compaction_start: every earlier row counts as swept",
        )
    cut = start[1] if start is not None else len(a.window)
    before, during = a.window[:cut], a.window[cut:]
    kept = [r for r in before if r.kind_hint == "context"] + during
    swept = [r for r in before if r.kind_hint != "context"]
    removed = as_count(e.data.get("messagesRemoved"))
    if removed is not None and removed != len(swept):
        fnd.add(
            "compaction_count_mismatch",
            "info",
            e.line,
            f"messagesRemoved is {removed}, the estimate sweeps {len(swept)} row(s) (which "
            "messages were removed is not recorded)",
        )
    return swept, kept


def _summary_row(e: Record, fnd: Findings) -> Row:
    """A compaction's summary row, with the compaction call's usage when recorded."""
    d = e.data
    summary = d.get("summaryContent")
    srow = Row(e, "user", [{"type": "text", "text": summary}] if isinstance(summary, str) else [])
    srow.kind_hint = "compaction_summary"
    if not isinstance(summary, str):
        srow.note = "compaction without a summaryContent"
    used = d.get("compactionTokensUsed")
    if type(used) is dict:
        tokens = billed(used, fnd, e.line)
        srow.tokens = dict(tokens)
        m = used.get("model")
        srow.model = m if isinstance(m, str) else None
        own_call(srow, tokens, srow.model)
    return srow


def truncation(e: Record, a: Agent) -> None:
    d = e.data
    n = as_count(d.get("messagesRemovedDuringTruncation")) or 0
    movable = [r for r in a.window if r.kind_hint != "context"]
    swept = movable[:n]
    gone = set(map(id, swept))
    a.window = [r for r in a.window if id(r) not in gone]
    x = EventDraft(
        "compaction",
        e.line,
        e.ts,
        e.id,
        trigger="truncation",
        summarises=False,
        pre_tokens=as_count(d.get("preTruncationTokensInMessages")),
        post_tokens=as_count(d.get("postTruncationTokensInMessages")),
        context_window=as_count(d.get("tokenLimit")),
        swept=swept,
        extra={
            "mechanism": "truncation (no summary by design)",
            "swept_estimated": True,
            "messages_removed": n,
            "performed_by": text_of(d.get("performedBy")) or None,
        },
    )
    a.events.append(x)
    a.inputs.event(x)
