"""The active conversation: the walk back from the last-written record over gaps and new roots,
and where the records off the chain go (the call they belong to, or an abandoned branch)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from adfkit._sources.claude_code.content import _call_key
from adfkit._sources.claude_code.graph import _Graph
from adfkit._sources.claude_code.records import _Rec
from adfkit._sources.transcript.kit import (
    Findings,
)


def _tool_use_ids(r: _Rec) -> list[str]:
    obj = r.obj
    msg = obj.get("message") if obj else None
    return _use_ids(msg.get("content")) if isinstance(msg, dict) else []


def _use_ids(c: object) -> list[str]:
    """The ids of the ``tool_use`` blocks of a message content."""
    if not isinstance(c, list):
        return []
    return [
        b["id"]
        for b in c
        if type(b) is dict and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _result_ids(r: _Rec) -> list[str] | None:
    """tool_use ids answered by a user record made only of tool_result blocks, else None."""
    obj = r.obj
    msg = obj.get("message") if obj else None
    c = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(c, list) or not c:
        return None
    out = []
    for b in c:
        if type(b) is not dict or b.get("type") != "tool_result":
            return None
        i = b.get("tool_use_id")
        if isinstance(i, str):
            out.append(i)
    return out


def _rec_key(r: _Rec) -> str | None:
    o = r.obj or {}
    m = o.get("message")
    return _call_key(o, m) if isinstance(m, dict) else None


def _anchor(frags: list[_Rec], line: int) -> _Rec:
    """The block record on the chain an off-chain block record of the same call follows: the
    last one written before it (the first one if none was)."""
    best = frags[0]
    for f in frags:
        if f.line < line:
            best = f
    return best


@dataclass
class _Path:
    """The active conversation, root first, and what the walk met on the way."""

    recs: list[_Rec]
    on_path: set[int]
    #: a record -> the boundary records of a bridged gap, placed right after it
    after: dict[int, list[_Rec]]
    #: a root met mid-file -> the event it starts: ``compaction`` (an old-form summary) or
    #: ``clear`` (a new conversation in the same file)
    roots: dict[int, str]


class _Back:
    """The records a walk back can step to over a gap: the previous user/assistant record in
    file order not walked yet, and the boundary records between two lines."""

    def __init__(self, g: _Graph, seen: set[int]) -> None:
        self.ua = [r for r in g.nodes if r.type == "user" or r.type == "assistant"]
        self.ua_lines = [r.line for r in self.ua]
        self.bounds = [r for r in g.nodes if r.type == "system" and _is_boundary(r)]
        self.bound_lines = [r.line for r in self.bounds]
        self.seen = seen
        self.skips = 2 * len(self.ua) + 8  # a budget: skipping visited records never goes quadratic

    def last(self) -> _Rec | None:
        """The last-written user/assistant record, where the walk starts."""
        return self.ua[-1] if self.ua else None

    def previous(self, line: int) -> _Rec | None:
        ua, seen = self.ua, self.seen
        i = bisect.bisect_left(self.ua_lines, line) - 1
        while i >= 0 and id(ua[i]) in seen and self.skips > 0:
            i -= 1
            self.skips -= 1
        return ua[i] if i >= 0 and id(ua[i]) not in seen else None

    def bounds_between(self, after_line: int, before_line: int) -> list[_Rec]:
        """The boundary records written between two lines, not walked yet."""
        lo = bisect.bisect_right(self.bound_lines, after_line)
        hi = bisect.bisect_left(self.bound_lines, before_line)
        return [r for r in self.bounds[lo:hi] if id(r) not in self.seen]


def _active_path(g: _Graph, fnd: Findings, side_group: bool) -> _Path:
    """Walk ``parentUuid`` back from the last-written user/assistant record (a boundary's
    ``logicalParentUuid`` stands for its parent). Where a link names a record never written, or
    the walk meets a root with conversation before it, it goes on from the previous
    user/assistant record in file order (TRANSCRIPTS.md §0 1-3): a gap is bridged and flagged,
    never the start of the session."""
    seen: set[int] = set()
    recs: list[_Rec] = []
    after: dict[int, list[_Rec]] = {}
    roots: dict[int, str] = {}
    back = _Back(g, seen)
    cur = back.last()
    while cur is not None:
        if id(cur) in seen:
            fnd.add("parent_cycle", "warning", cur.line, "parentUuid chain loops; cut here")
            break
        seen.add(id(cur))
        recs.append(cur)
        if cur.pnode is not None:  # the usual step: the parent is in the file
            cur = cur.pnode
            continue
        missing = g.parent_of(cur)[1]
        nxt = _bridge(cur, missing, back, fnd, side_group, roots)
        if nxt is None:
            break
        extra = back.bounds_between(nxt.line, missing[1] if missing is not None else cur.line)
        if extra:
            after[id(nxt)] = extra
            seen.update(map(id, extra))
        cur = nxt
    recs.reverse()
    return _Path(recs, seen, after, roots)


def _bridge(
    cur: _Rec,
    missing: tuple[str, int] | None,
    back: _Back,
    fnd: Findings,
    side_group: bool,
    roots: dict[int, str],
) -> _Rec | None:
    """Where the walk goes on from ``cur``, a record without a parent in the file: past a
    parent never written (``missing``: its uuid and the line naming it), the previous
    user/assistant record (``chain_gap``); past a root with conversation before it, that
    conversation's last record (``new_root``, and ``roots`` says which event the root starts).
    None: the walk ends here."""
    quiet = cur.side and not side_group
    if missing is not None:
        at = missing[1]
        nxt = back.previous(at)
        what = "logicalParentUuid" if cur.parent is None and cur.type == "system" else "parentUuid"
        if nxt is None:
            if not quiet:
                fnd.add(
                    "broken_parent_chain",
                    "info",
                    at,
                    f"{what} not in the file and no conversation before it: the file "
                    "starts mid-session",
                )
            return None
        if not quiet:
            fnd.add(
                "chain_gap", "info", at, f"{what} not in the file; continued from line {nxt.line}"
            )
        return nxt
    nxt = back.previous(cur.line) if cur.type != "system" else None
    if nxt is None:
        return None
    summary = cur.type == "user" and (cur.obj or {}).get("isCompactSummary") is True
    roots[id(cur)] = "compaction" if summary else "clear"
    fnd.add(
        "new_root",
        "info",
        cur.line,
        (
            "a compaction summary without a boundary (Claude Code 1.0.x)"
            if summary
            else "a new conversation starts in the same file (a cleared context)"
        )
        + f"; the one before it ends at line {nxt.line}",
    )
    return nxt


def _is_boundary(r: _Rec) -> bool:
    st = (r.obj or {}).get("subtype")
    return st == "compact_boundary" or st == "microcompact_boundary"


def _place_off_path(g: _Graph, ap: _Path, side_group: bool) -> tuple[list[_Rec], list[_Rec]]:
    """The records in the order their rows are built (the active path, each record followed
    by what joins it from off the chain: block records of a call on it, parallel tool calls
    (§0 3), their results, attachments; and the boundaries of a bridged gap), and the records
    left on abandoned branches."""
    path, on_path = ap.recs, ap.on_path
    off_path = [
        r
        for r in g.nodes
        if id(r) not in on_path
        and r.type in ("user", "assistant", "attachment")
        and not (r.side and not side_group)
    ]
    use_rec, answered, key_recs = _path_calls(path if off_path else [])
    stitched: dict[int, list[_Rec]] = {}
    branch_recs: list[_Rec] = []
    reach = _Reach(g, on_path)
    for r in off_path:  # file order
        if r.type == "assistant":
            k = _rec_key(r)
            if k is not None and k in key_recs:
                anchor = _anchor(key_recs[k], r.line)
                stitched.setdefault(id(anchor), []).append(r)
                for i in _tool_use_ids(r):
                    use_rec.setdefault(i, anchor)
                continue
        elif r.type == "user":
            ids = _result_ids(r)
            if ids and all(i in use_rec and i not in answered for i in ids):
                stitched.setdefault(id(_last_block(use_rec[ids[0]], key_recs)), []).append(r)
                answered.update(ids)
                continue
        else:  # attachment: stitch after the point where its parents reach the chain
            a = reach.point(r)
            if a is not None:
                stitched.setdefault(id(a), []).append(r)
                continue
        branch_recs.append(r)
    order: list[_Rec] = []
    for r in path:
        order.append(r)
        extra = stitched.get(id(r))
        if extra:
            order.extend(sorted(extra, key=lambda x: x.line))
        order.extend(ap.after.get(id(r), ()))
    return order, branch_recs


def _last_block(use: _Rec, key_recs: dict[str, list[_Rec]]) -> _Rec:
    """Where an off-chain tool result follows: after the last block record on the chain of the
    call that made it (all of its parallel tool_use records), so the results of one call keep
    the order they were written in, the order Claude Code sends them (2.1.332 wrote and sent
    the results of three parallel reads as 2, 1, 3)."""
    k = _rec_key(use)
    frags = key_recs.get(k) if k is not None else None
    return frags[-1] if frags else use


def _path_calls(path: list[_Rec]) -> tuple[dict[str, _Rec], set[str], dict[str, list[_Rec]]]:
    """What the records off the chain are placed by: tool_use id -> the record on the chain
    that made the call, the ids its results answered, call key -> its block records."""
    use_rec: dict[str, _Rec] = {}
    answered: set[str] = set()
    key_recs: dict[str, list[_Rec]] = {}
    for r in path:
        t, obj = r.type, r.obj
        if not obj or (t != "assistant" and t != "user"):
            continue
        msg = obj.get("message")
        if not isinstance(msg, dict):
            continue
        if t == "assistant":
            for i in _use_ids(msg.get("content")):
                use_rec.setdefault(i, r)
            k = _call_key(obj, msg)
            if k is not None:
                key_recs.setdefault(k, []).append(r)
        else:
            ids = _result_ids(r)
            if ids:
                answered.update(ids)
    return use_rec, answered, key_recs


class _Reach:
    """Where an off-chain attachment joins the chain: the first record on it that its parents
    (through other attachments only) reach. Memoised: each record is walked once."""

    def __init__(self, g: _Graph, on_path: set[int]) -> None:
        self.g = g
        self.on_path = on_path
        self.memo: dict[int, _Rec | None] = {}

    def point(self, r: _Rec) -> _Rec | None:
        memo, on_path = self.memo, self.on_path
        chain: list[_Rec] = []
        seen: set[int] = set()
        cur = r
        res: _Rec | None = None
        while True:
            if id(cur) in memo:
                res = memo[id(cur)]
                break
            if id(cur) in seen:
                break
            seen.add(id(cur))
            chain.append(cur)
            p = cur.pnode
            if p is None:
                break
            if id(p) in on_path:
                res = p
                break
            if p.type != "attachment":
                break
            cur = p
        for c in chain:
            memo[id(c)] = res
        return res


class _Tops:
    """The topmost record of the abandoned branch a record is on, and the record on the chain
    it forks from (None for a branch with no parent). Memoised: each record is walked once."""

    def __init__(self, on_path: set[int]) -> None:
        self.on_path = on_path
        self.memo: dict[int, tuple[_Rec, _Rec | None]] = {}

    def of(self, r: _Rec) -> tuple[_Rec, _Rec | None]:
        memo, on_path = self.memo, self.on_path
        chain: list[_Rec] = []
        seen: set[int] = set()
        top = r
        while True:
            if id(top) in memo:
                res = memo[id(top)]
                break
            seen.add(id(top))
            chain.append(top)
            p = top.pnode
            if p is None:
                res = (top, None)
                break
            if id(p) in on_path:
                res = (top, p)
                break
            if id(p) in seen:  # a cycle: its earliest record stands for it
                res = (min(chain, key=lambda x: x.line), None)
                break
            top = p
        for c in chain:
            memo[id(c)] = res
        return res
