"""The ``parentUuid`` graph of a session: links through ``progress`` records, duplicate
uuids (replays dropped, re-parented copies kept), parents never written."""

from __future__ import annotations

from collections.abc import Container

from adfkit._sources.claude_code.records import _Rec
from adfkit._sources.transcript.kit import (
    Findings,
)


class _Links:
    """``progress`` records (and records of an unknown type that carry a uuid) are links, not
    nodes: a parent uuid that names one is followed through them to the first uuid that is not
    a link. Memoised, so each link is walked once however many records point through it."""

    def __init__(self, prog: dict[str, tuple[str | None, int]], fnd: Findings) -> None:
        self.prog = prog
        self.fnd = fnd
        self.memo: dict[str, tuple[str | None, int | None]] = {}

    def resolve(self, pu: str | None) -> tuple[str | None, int | None]:
        """(the first uuid reached that is not a link, None at a root; the line of the last
        link passed, None when ``pu`` is not a link)."""
        prog = self.prog
        if pu is None or pu not in prog:
            return pu, None
        memo = self.memo
        hit = memo.get(pu)
        if hit is not None:
            return hit
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = pu
        res: tuple[str | None, int | None] | None = None
        while cur is not None and cur in prog:
            res = memo.get(cur)
            if res is not None:
                break
            if cur in seen:
                line = prog[cur][1]
                self.fnd.add("parent_cycle", "warning", line, "parentUuid chain loops; cut here")
                res = (None, line)
                break
            seen.add(cur)
            chain.append(cur)
            cur = prog[cur][0]
        if res is None:
            res = (cur, prog[chain[-1]][1])
        for c in chain:
            memo[c] = res
        return res


class _Graph:
    """uuid index and parent links. A duplicate uuid whose parent resolves to the same node as
    an earlier copy's is a replay (dropped); otherwise it is a node of its own. A parent link
    through ``progress`` records (:class:`_Links`) reaches the first record that is a node (a
    root if the links end, a missing parent if they dangle). ``missing`` maps a record whose
    parent was never written to (that uuid, the line of the record or link that names it).
    ``copied``: the lines of boundaries a fork copied from its parent
    (:class:`.content._CopiedBoundaries`), each a root: its ``logicalParentUuid`` names the
    parent's record the compaction kept, which the fork writes after the summary, under it (a
    loop if followed)."""

    def __init__(
        self, recs: list[_Rec], fnd: Findings, links: _Links, copied: Container[int] = ()
    ) -> None:
        latest: dict[str, _Rec] = {}
        copies: dict[str, list[_Rec]] = {}
        nodes: list[_Rec] = []
        later: list[_Rec] = []
        replays = 0
        append = nodes.append
        resolve, prog = links.resolve, links.prog
        for r in recs:
            pu = r.parent
            if pu is None and r.type == "system" and r.line not in copied:
                pu = _parent_uuid(r)
            if pu in prog:  # through progress links (None is never a key)
                pu = resolve(pu)[0]
            pn = latest.get(pu) if pu is not None else None
            if pu is not None and pn is None:
                later.append(r)
            u = r.uuid
            f = latest.get(u)
            if f is not None:
                cs = copies.setdefault(u, [f])
                if any(c.pnode is pn for c in cs):
                    replays += 1
                    continue
                cs.append(r)
            latest[u] = r
            r.pnode = pn
            append(r)
        self.missing: dict[int, tuple[str, int]] = {}
        first = _first_copies(latest, copies) if later else latest
        for r in later:  # parents written after their child (or never)
            pu, link_line = resolve(_parent_uuid(r))
            if pu is None:
                continue
            p = first.get(pu)
            if p is None:
                self.missing[id(r)] = (pu, link_line if link_line is not None else r.line)
            r.pnode = p
        if replays:
            fnd.add(
                "duplicate_uuid",
                "info",
                None,
                f"{replays} record(s) repeat an earlier uuid and parent (replays); first kept",
            )
        self.nodes = nodes
        bounds = [r for r in nodes if r.type == "system" and _segment_tail(r) is not None]
        if bounds:
            _rehang_referenced_segments(nodes, bounds, fnd)

    def parent_of(self, r: _Rec) -> tuple[_Rec | None, tuple[str, int] | None]:
        """The record's parent and, when the parent uuid is not in the file, (that uuid, the
        line of the record or progress link that names it)."""
        return r.pnode, self.missing.get(id(r)) if self.missing else None


def _first_copies(latest: dict[str, _Rec], copies: dict[str, list[_Rec]]) -> dict[str, _Rec]:
    """uuid -> its first copy written (``latest`` holds the last)."""
    first = dict(latest)
    for u, cs in copies.items():
        first[u] = cs[0]
    return first


def _parent_uuid(r: _Rec) -> str | None:
    if r.parent is None and r.type == "system" and r.obj is not None:
        lp = r.obj.get("logicalParentUuid")
        if isinstance(lp, str) and r.obj.get("subtype") == "compact_boundary":
            return lp
    return r.parent


def _segment_tail(r: _Rec) -> str | None:
    """The uuid of the last record a ``compact_boundary`` preserves (``preservedSegment``
    ``tailUuid``, else the last of ``preservedMessages`` uuids), None for any other record."""
    obj = r.obj or {}
    if obj.get("subtype") != "compact_boundary":
        return None
    md = obj.get("compactMetadata")
    if not isinstance(md, dict):
        return None
    seg = md.get("preservedSegment")
    if isinstance(seg, dict) and isinstance(seg.get("tailUuid"), str):
        return str(seg["tailUuid"])
    pm = md.get("preservedMessages")
    u = pm.get("uuids") or pm.get("allUuids") if isinstance(pm, dict) else None
    if isinstance(u, list) and u and isinstance(u[-1], str):
        return u[-1]
    return None


def _rehang_referenced_segments(nodes: list[_Rec], bounds: list[_Rec], fnd: Findings) -> None:
    """Claude Code 2.1.217 keeps a compaction's preserved segment by reference: it is not
    written again after the summary, and the record written after the summary hangs off the
    segment's last record (written before the boundary), so the walk back from the end would go
    through the segment and never meet the boundary or the summary. Such a record is hung off
    the last record written under the boundary before it (the summary, or what followed it):
    the conversation then reads segment, boundary, summary, what came after (and the summary is
    displayed before the segment, as it was sent)."""
    at = {id(r): i for i, r in enumerate(nodes)}
    for b in bounds:
        tail = _segment_tail(b)
        tail_rec = b.pnode if b.pnode is not None and b.pnode.uuid == tail else None
        start = at[id(b)]
        for i in range(start + 1, len(nodes)):
            r = nodes[i]
            p = r.pnode
            if p is None or p.uuid != tail or p.line > b.line or r.type == "system":
                continue
            if tail_rec is not None and p is not tail_rec:
                continue
            under = _last_under(nodes, start, i, b)
            if under is None:
                continue
            r.pnode = under
            fnd.add(
                "preserved_segment_referenced",
                "info",
                r.line,
                f"parentUuid names the last record of the segment the compaction at line {b.line} "
                f"preserved; read as following its summary (line {under.line})",
            )


def _last_under(nodes: list[_Rec], start: int, end: int, b: _Rec) -> _Rec | None:
    """The last record written between ``nodes[start]`` (the boundary ``b``) and ``nodes[end]``
    that descends from ``b``: the summary or a record after it."""
    for j in range(end - 1, start, -1):
        cur: _Rec | None = nodes[j]
        steps = 0
        while cur is not None and cur.line > b.line and steps < 10_000:
            cur = cur.pnode
            steps += 1
        if cur is b:
            return nodes[j]
    return None
