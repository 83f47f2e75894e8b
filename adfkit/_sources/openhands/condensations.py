"""A ``Condensation``: its summary row, and the compaction it is (swept exactly what
``forgotten_event_ids`` names; the trigger inferred). The format's notes: :mod:`.parser`."""

from __future__ import annotations

from typing import Any

from adfkit._sources.openhands.content import str_or_none
from adfkit._sources.openhands.files import EventFile
from adfkit._sources.openhands.rows import summary_row
from adfkit._sources.openhands.state import Ctx, Row, State, response_call
from adfkit._sources.openhands.usage import Usage
from adfkit._sources.transcript.kit import EventDraft, Findings


def _forgotten(
    st: State, f: EventFile, ids: list[Any], fnd: Findings
) -> tuple[list[Row], list[Row], int]:
    """``(swept, preserved, unknown)``: the window's rows the ids name, the window's other
    rows, and how many ids name no event before the condensation."""
    line = f.idx + 1
    named: list[Row] = []
    unknown = 0
    seen: set[int] = set()
    for x in ids:
        r = (st.row_of.get(x) or st.summary_of.get(x)) if isinstance(x, str) else None
        if r is None:
            unknown += 0 if isinstance(x, str) and x in st.no_row_ids else 1
        elif id(r) not in seen:
            seen.add(id(r))
            named.append(r)
    if unknown:
        fnd.add(
            "forgotten_id_unknown",
            "warning",
            line,
            f"{f.name}: {unknown} of {len(ids)} forgotten_event_ids name no event before it",
        )
    in_window = {id(r) for r in st.window}
    swept = [r for r in named if id(r) in in_window]
    if len(swept) < len(named):
        fnd.add(
            "forgotten_twice",
            "info",
            line,
            f"{f.name}: {len(named) - len(swept)} forgotten event(s) had already left the context",
        )
    gone = {id(r) for r in swept}
    return swept, [r for r in st.window if id(r) not in gone], unknown


def _trigger(req: dict[str, Any] | None) -> tuple[str, str]:
    """``(trigger, basis)``: OpenHands writes no trigger; it is inferred."""
    if req is None:
        return "auto", (
            "inferred: no CondensationRequest before it, so the condenser's own rule (more "
            "than max_size events, or max_tokens tokens)"
        )
    if req["manual"]:
        return "manual", "inferred: a CondensationRequest after a user message /condense"
    return "auto", (
        "inferred: a CondensationRequest before it (the agent's on a context-window error, "
        "or a request made through the API)"
    )


def condensation(st: State, ctx: Ctx, f: EventFile, ev: dict[str, Any], ts: int | None) -> None:
    """A summary row, and the compaction: swept exactly what ``forgotten_event_ids`` names."""
    st.open_call = None
    eid = str_or_none(ev.get("id")) or f"event-{f.idx}"
    swept, preserved, unknown = _forgotten(st, f, _forgotten_ids(f, ev, ctx.fnd), ctx.fnd)
    srow = summary_row(f, ev)
    srow.created_at = ts
    srow.model = ctx.cond_model
    if not srow.content:
        srow.note = "this condensation holds no summary (a forgetting condenser)"
    rid = str_or_none(ev.get("llm_response_id"))
    u = _condenser_call(st, ctx, srow, rid)
    pos = len(st.rows)
    st.rows.append(srow)
    st.summary_of[f"{eid}-summary"] = srow
    st.row_of.setdefault(eid, srow)
    st.window = [*preserved, srow]
    req, st.request = st.request, None
    trigger, basis = _trigger(req)
    extra = _condensation_extra(ev, ctx, rid, req, unknown)
    st.events.append(
        EventDraft(
            "compaction",
            f.idx + 1,
            ts,
            eid,
            trigger=trigger,
            context_window=u.window if u is not None else None,
            swept=swept,
            preserved=preserved,
            summary=srow,
            extra={"trigger_basis": basis, **extra},
            pos=pos,
        )
    )


def _forgotten_ids(f: EventFile, ev: dict[str, Any], fnd: Findings) -> list[Any]:
    ids = ev.get("forgotten_event_ids")
    if isinstance(ids, list):
        return ids
    fnd.add(
        "bad_condensation", "warning", f.idx + 1, f"{f.name}: forgotten_event_ids is not a list"
    )
    return []


def _condenser_call(st: State, ctx: Ctx, srow: Row, rid: str | None) -> Usage | None:
    """The condenser's call, on the summary row: its usage there (a compaction call), counted
    once."""
    u = ctx.by_rid.get(rid) if rid else None
    if u is not None and u.used:
        u = None
    if u is not None:
        u.used = True
        srow.tokens = dict(u.tokens)
        srow.model = u.model or ctx.cond_model
    if rid is not None:
        st.calls.append(response_call(f"response:{rid}", srow, u))
    return u


def _condensation_extra(
    ev: dict[str, Any], ctx: Ctx, rid: str | None, req: dict[str, Any] | None, unknown: int
) -> dict[str, Any]:
    """What a condensation records beyond the event's own fields."""
    off = ev.get("summary_offset")
    extra: dict[str, Any] = {}
    for key, val in (
        ("summary_offset", off if type(off) is int else None),
        ("condenser", ctx.condenser),
        ("llm_response_id", rid),
        ("request_line", req["idx"] + 1 if req is not None else None),
        ("unknown_forgotten_ids", unknown or None),
    ):
        if val is not None:
            extra[key] = val
    return extra
