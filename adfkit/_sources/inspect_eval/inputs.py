"""A model call's input: its messages expanded from the sample's message pool
(``input_refs``), and matched to the rows of the sample's history (the format's notes:
:mod:`.parser`)."""

from __future__ import annotations

import bisect
from typing import Any

from adfkit._sources.inspect_eval.content import Resolver, message_key
from adfkit._sources.transcript.kit import Findings

#: Pool messages all the calls of one sample may name through ``input_refs`` together: a real
#: sample's inputs hold ~500,000 (500 calls of 1,000 messages); a crafted one can name the whole
#: pool from every call, or one range many times in one call.
MAX_EXPANDED_REFS = 5_000_000


class Pool:
    def __init__(self, msgs: Any, resolve: Resolver) -> None:
        self.raw = msgs if isinstance(msgs, list) else []
        self.resolve = resolve
        self._done: dict[int, dict[str, Any]] = {}
        #: Messages the calls named so far (against :data:`MAX_EXPANDED_REFS`); None once past.
        self.named: int | None = 0

    def __len__(self) -> int:
        return len(self.raw)

    def get(self, i: int) -> dict[str, Any]:
        m = self._done.get(i)
        if m is None:
            x = self.raw[i]
            m = self.resolve(x) if isinstance(x, dict) else {}
            self._done[i] = m
        return m


def expand(ev: dict[str, Any], pool: Pool, resolve: Resolver, fnd: Findings, line: int) -> list:
    inp = ev.get("input")
    if isinstance(inp, list) and inp:
        return [resolve(m) for m in inp if isinstance(m, dict)]
    refs = ev.get("input_refs")
    if not isinstance(refs, list):
        return []
    out: list[dict[str, Any]] = []
    again = named_again(refs)
    for k, r in enumerate(refs):
        ok = (
            isinstance(r, list)
            and len(r) == 2
            and all(type(x) is int for x in r)
            and 0 <= r[0] <= r[1] <= len(pool)
        )
        if not ok or k in again:
            why = (
                "names messages another range of this call named (each is expanded once)"
                if ok
                else f"names no messages of the pool ({len(pool)} messages)"
            )
            fnd.add(
                "bad_ref",
                "error",
                line,
                f"event {line}: input_refs range {str(r)[:40]} {why}; the call's input is "
                "incomplete",
            )
            continue
        if pool.named is None or pool.named + (r[1] - r[0]) > MAX_EXPANDED_REFS:
            if pool.named is not None:
                fnd.add(
                    "input_refs_cap",
                    "error",
                    line,
                    f"event {line}: the calls' input_refs name more than {MAX_EXPANDED_REFS:,} "
                    "pool messages in all; this call's input and the later ones are incomplete",
                )
            pool.named = None
            break
        pool.named += r[1] - r[0]
        out.extend(pool.get(i) for i in range(r[0], r[1]))
    return out


def named_again(refs: list[Any]) -> set[int]:
    """Positions in ``refs`` of the ``[start, end)`` ranges that name a pool message a range
    before them (by start) named already; ranges that are not ranges are left to the caller."""
    good = sorted(
        (r[0], r[1], k)
        for k, r in enumerate(refs)
        if isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r) and r[0] < r[1]
    )
    out: set[int] = set()
    end = 0
    for start, stop, k in good:
        if start < end:
            out.add(k)
        else:
            end = stop
    return out


class Matcher:
    """Input messages -> row seqs (see the module docstring)."""

    def __init__(self, msgs: list[dict[str, Any]]) -> None:
        self.by_key: dict[bytes, list[int]] = {}
        self.by_id: dict[str, int] = {}
        # id(message) -> (message, key): a pooled message is one object however many inputs
        # hold it, so its key is computed once (the message is kept, so its id stays its own)
        self._keys: dict[int, tuple[dict[str, Any], bytes]] = {}
        for i, m in enumerate(msgs, start=1):
            self.by_key.setdefault(self.key(m), []).append(i)
            mid = m.get("id")
            if isinstance(mid, str):
                self.by_id.setdefault(mid, i)

    def key(self, m: dict[str, Any]) -> bytes:
        got = self._keys.get(id(m))
        if got is None:
            got = self._keys[id(m)] = (m, message_key(m))
        return got[1]

    def match(self, inputs: list[dict[str, Any]], bound: int) -> tuple[list[int | None], list[int]]:
        """Seqs of ``inputs`` (None: no row), all below ``bound``, and the seqs found edited."""
        out: list[int | None] = [None] * len(inputs)
        edited: list[int] = []
        hi = bound
        for j in range(len(inputs) - 1, -1, -1):
            m = inputs[j]
            cands = self.by_key.get(self.key(m))
            q = None
            if cands:
                k = bisect.bisect_left(cands, hi) - 1
                if k >= 0:
                    q = cands[k]
            if q is None:
                mid = m.get("id")
                i = self.by_id.get(mid) if isinstance(mid, str) else None
                if i is not None and i < hi:
                    q = i
                    edited.append(i)
            if q is not None:
                out[j] = q
                hi = q
        return out, edited
