"""A session's ``events.jsonl`` read into records: the envelope checked against the schema
(:mod:`.events`), every field outside it a finding (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.copilot_cli import events as ev
from adfkit._sources.transcript.kit import Findings, JsonLines, TypeCounts, check_head, iso_ms

WHAT = "Copilot CLI session"
#: Types read for rows, events or metadata; the others of the schema are counted only.
_READ = frozenset(ev.DATA_FIELDS) | {"session.context_cleared"}


@dataclass(slots=True)
class Record:
    line: int
    type: str
    data: dict[str, Any]
    ts: int | None
    id: str | None
    agent: str | None


def read_records(path: Path, max_line_bytes: int, fnd: Findings) -> list[Record]:
    check_head(path, WHAT)
    out: list[Record] = []
    unknown_types = TypeCounts()
    unknown_env: dict[str, list[int]] = {}
    seen_ids: set[str] = set()
    for n, obj in JsonLines(path, fnd, "session", max_line_bytes=max_line_bytes):
        if not out and not _is_start(obj):
            raise NotTranscriptError(
                "the first record is not a Copilot CLI session.start event "
                '({"type": "session.start", "id", "timestamp", "data"}): '
                f"not a {WHAT}",
                path=path,
            )
        eid = obj.get("id")
        eid = eid if isinstance(eid, str) else None
        pid = obj.get("parentId")
        if isinstance(pid, str) and pid not in seen_ids:
            fnd.add(
                "dangling_parent",
                "warning",
                n,
                f"parentId {pid[:40]!r} names no earlier event (a lost line?)",
            )
        if eid is not None:
            if eid in seen_ids:
                fnd.add("duplicate_id", "warning", n, f"event id {eid[:40]!r} used twice")
            seen_ids.add(eid)
        t = obj.get("type")
        if not isinstance(t, str) or t not in ev.EVENT_TYPES:
            unknown_types.add(t, n)
            continue
        for k in obj:
            if k not in ev.ENVELOPE:
                unknown_env.setdefault(str(k)[:40], []).append(n)
        d = obj.get("data")
        if type(d) is not dict:
            fnd.add("bad_event", "warning", n, f"{t} event without a data object; skipped")
            continue
        a = obj.get("agentId")
        if obj.get("ephemeral") is True or t in ev.EPHEMERAL:
            fnd.add(
                "ephemeral_on_disk",
                "info",
                n,
                f"{t} is documented as ephemeral (never written to events.jsonl) but is "
                "in the file",
            )
        out.append(
            Record(n, t, d, iso_ms(obj.get("timestamp")), eid, a if isinstance(a, str) else None)
        )
    if not out:
        raise NotTranscriptError(
            f"no complete session.start event: not a {WHAT} (or it is still being written)",
            path=path,
        )
    unknown_types.report(
        fnd,
        "unknown_event_type",
        "warning",
        "{n} event(s) of type {t!r}, not in the Copilot CLI schema this reader knows; skipped",
    )
    for k, lines in unknown_env.items():
        fnd.add(
            "unknown_field",
            "warning",
            lines[0],
            f"{len(lines)} event(s) with envelope field {k!r}, not in the schema; ignored",
        )
    return out


def _is_start(obj: dict[str, Any]) -> bool:
    d = obj.get("data")
    return (
        obj.get("type") == "session.start"
        and isinstance(obj.get("id"), str)
        and isinstance(obj.get("timestamp"), str)
        and type(d) is dict
        and isinstance(d.get("sessionId"), str)
    )


def check_fields(events: list[Record], fnd: Findings) -> None:
    """Fields of the read types (and their nested records) outside the schema; types of the
    schema not read, counted."""
    odd: dict[tuple[str, str], list[int]] = {}
    not_read: dict[str, int] = {}

    def note(t: str, k: Any, line: int) -> None:
        odd.setdefault((t, str(k)[:40]), []).append(line)

    for e in events:
        known = ev.DATA_FIELDS.get(e.type)
        if known is None:
            if e.type not in _READ:
                not_read[e.type] = not_read.get(e.type, 0) + 1
            elif e.data:  # session.context_cleared: its fields are not known
                for k in e.data:
                    note(e.type, k, e.line)
            continue
        for k in e.data:
            if k not in known:
                note(e.type, k, e.line)
        if e.type == "assistant.message":
            for r in e.data.get("toolRequests") or []:
                for k in r if type(r) is dict else ():
                    if k not in ev.TOOL_REQUEST_FIELDS:
                        note("assistant.message.toolRequests[]", k, e.line)
        elif e.type == "session.compaction_complete":
            u = e.data.get("compactionTokensUsed")
            for k in u if type(u) is dict else ():
                if k not in ev.COMPACTION_USAGE_FIELDS:
                    note("compactionTokensUsed", k, e.line)
        elif e.type == "session.shutdown":
            mm = e.data.get("modelMetrics")
            for m in mm.values() if type(mm) is dict else ():
                for k in m if type(m) is dict else ():
                    if k not in ev.MODEL_METRIC_FIELDS:
                        note("modelMetrics[model]", k, e.line)
                u = m.get("usage") if type(m) is dict else None
                for k in u if type(u) is dict else ():
                    if k not in ev.METRIC_USAGE_FIELDS:
                        note("modelMetrics[model].usage", k, e.line)
    for (t, k), lines in odd.items():
        fnd.add(
            "unknown_field",
            "warning",
            lines[0],
            f"{len(lines)} {t} event(s) with field {k!r}, not in the schema; not read",
        )
    for t, n in sorted(not_read.items()):
        fnd.add("event_not_read", "info", None, f"{n} {t} event(s): no row or event in adfkit")
