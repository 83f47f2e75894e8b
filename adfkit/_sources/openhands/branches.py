"""The active branch (``leaf_event_id`` to the root through ``parent_id``) and the
branches off it (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from adfkit._sources.openhands.content import str_or_none
from adfkit._sources.openhands.files import EventFile
from adfkit._sources.openhands.names import EVENT_NAME
from adfkit._sources.openhands.state import Row
from adfkit._sources.transcript.kit import EventDraft, Findings


def active_events(files: list[EventFile], leaf: str | None, fnd: Findings) -> set[int] | None:
    """Indexes (into ``files``) of the events on the active branch; None: all of them.

    A leaf whose own file could not be read (the half-written last event) is replaced by the
    last readable event before it."""
    ids: dict[str, int] = {}
    named: dict[str, int] = {}  # event id in the file name -> index
    parent: dict[int, str | None] = {}
    prev: str | None = None
    tree = False
    for i, f in enumerate(files):
        m = EVENT_NAME.match(f.name)
        if m:
            named.setdefault(m.group(2), i)
        ev = f.obj
        if ev is None:
            continue
        eid = str_or_none(ev.get("id"))
        if "parent_id" in ev:
            tree = True
            parent[i] = str_or_none(ev.get("parent_id"))
        else:
            parent[i] = prev
        if eid:
            ids.setdefault(eid, i)
            prev = eid
    if not tree or leaf is None:
        return None
    start = ids.get(leaf)
    if start is None and leaf in named:
        start = next((j for j in range(named[leaf] - 1, -1, -1) if files[j].obj is not None), None)
        if start is None:
            return None
    elif start is None:
        fnd.add(
            "leaf_not_found",
            "warning",
            None,
            f"base_state leaf_event_id {leaf[:40]!r} names no event: every event read as one "
            "branch",
        )
        return None
    on: set[int] = set()
    at: int | None = start
    while at is not None and at not in on:
        on.add(at)
        p = parent.get(at)
        nxt = ids.get(p) if p else None
        if p and nxt is None:  # a parent lost with its file: go on from the event before
            nxt = next((j for j in range(at - 1, -1, -1) if files[j].obj is not None), None)
        at = nxt
    return on


def branch_rewinds(rows: list[Row]) -> list[EventDraft]:
    """Branch ids for the rows off the active branch (one per fork) and one rewind each."""
    by_id = {eid: r for r in rows for eid in r.event_ids}
    swept: dict[str, list[Row]] = {}
    for r in rows:  # in idx order: a branch's root comes before its children
        parent = by_id.get(r.parent_uuid) if r.parent_uuid else None
        if parent is not None and parent.branch is not None:
            r.branch = parent.branch
        else:
            r.branch = f"branch-{len(swept) + 1}"
        swept.setdefault(r.branch, []).append(r)
    return [
        EventDraft("rewind", g[0].lines[0], swept=g, extra={"branch": b}) for b, g in swept.items()
    ]
