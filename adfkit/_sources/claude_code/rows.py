"""Rows from records in conversation order, the block records of one API call merged into
one row, and each call's usage counted once (TRANSCRIPTS.md §1.5, §0 3)."""

from __future__ import annotations

from typing import Any

from adfkit._sources.claude_code.content import (
    _attachment_row,
    _blocks,
    _call_key,
    _paid_by,
    _user_hint,
)
from adfkit._sources.claude_code.records import _Rec
from adfkit._sources.transcript.kit import (
    CallDraft,
    Findings,
    RowDraft,
    iso_ms,
)


class _RowB(RowDraft):
    """A row being built from one record (then merged with the block records of its call):
    ``uuids`` of every record merged."""

    __slots__ = ("uuids",)

    def __init__(self, r: _Rec, role: str, content: list[dict[str, Any]]) -> None:
        obj = r.obj or {}
        RowDraft.__init__(self, role, content, r.line, iso_ms(obj.get("timestamp")))
        self.uuid = r.uuid
        self.uuids = [r.uuid]
        self.parent_uuid = r.parent
        self.sidechain = r.side
        a = obj.get("agentId")
        self.agent_id = a if isinstance(a, str) else None


class _Call(CallDraft):
    """A model call over one or more block records: ``usage`` as the record chosen wrote it
    (the last one, ``uline``), turned into ``tokens`` (and ``unknown``: counts that are not
    counts, as written) once, by :func:`_finish`."""

    __slots__ = ("usage", "uline", "unknown")

    def __init__(self, key: str, row: _RowB, line: int, usage: dict[str, Any], side: bool) -> None:
        super().__init__(key, row, line, row.model, {}, row.created_at, side)
        self.row: _RowB = row
        self.usage = usage
        self.uline = line  # the line of the fragment whose usage is kept
        self.unknown: dict[str, Any] = {}


_USAGE_INPUT_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class _Builder:
    """Turns records (in chain order) into rows, merging the fragments of one call."""

    def __init__(self, fnd: Findings, calls: dict[str, _Call], repaired: dict[int, str]) -> None:
        self.fnd = fnd
        self.calls = calls
        self.repaired = repaired
        self.rows: list[_RowB] = []
        self.last_assistant: _RowB | None = None
        self.only_results_since = False
        self.agent_results: dict[str, str] = {}

    def add(self, r: _Rec) -> _RowB | None:
        """Append the row for ``r`` (or merge it); returns the row touched, None if no row."""
        obj = r.obj
        if obj is None:
            return None
        t = r.type
        if t == "assistant":
            return self._assistant(r, obj)
        if t == "user":
            msg = obj.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            blocks, bad = _blocks(content)
            row = _RowB(r, "user", blocks)
            row.kind_hint = _user_hint(obj, blocks)
            if bad or not isinstance(msg, dict):
                row.malformed = True
                row.note = "message content of an unexpected shape"
            tur = obj.get("toolUseResult")
            if isinstance(tur, dict):
                aid = tur.get("agentId")
                if isinstance(aid, str):
                    for b in blocks:
                        if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                            self.agent_results[aid] = b["tool_use_id"]
                            break
            self._push(row, r)
            if not (blocks and all(b.get("type") == "tool_result" for b in blocks)):
                self.only_results_since = False
            return row
        if t == "attachment":
            blocks, hint = _attachment_row(obj)
            row = _RowB(r, "user", blocks)
            row.kind_hint = hint
            self._push(row, r)
            self.only_results_since = False
            return row
        return None

    def _push(self, row: _RowB, r: _Rec) -> None:
        if r.line in self.repaired:
            row.malformed = True
            row.note = self.repaired[r.line]
        self.rows.append(row)

    def _assistant(self, r: _Rec, obj: dict[str, Any]) -> _RowB:
        msg = obj.get("message")
        if not isinstance(msg, dict):
            msg = {}
        blocks, bad = _blocks(msg.get("content"))
        key = _call_key(obj, msg)
        paid_by = _paid_by(obj)
        la = self.last_assistant
        if key is not None and la is not None and la.call_key == key and self.only_results_since:
            la.content.extend(_new_blocks(la.content, blocks))
            la.lines.append(r.line)
            la.uuids.append(r.uuid)
            if bad:
                la.malformed = True
            self._usage(la, r, msg, key, paid_by)
            return la
        model = msg.get("model")
        synthetic = model == "<synthetic>"
        api_error = obj.get("isApiErrorMessage") is True
        row = _RowB(r, "assistant", blocks)
        row.call_key = key
        row.model = model if isinstance(model, str) and not synthetic else None
        if synthetic:  # Claude Code's own text in the assistant's place: not a model call
            row.kind_hint = "notice"
            row.note = "model <synthetic>: no API call"
        if api_error:
            row.kind_hint = "notice"
            row.note = "isApiErrorMessage: an error shown as a message, no usage"
        if bad:
            row.malformed = True
            row.note = "message content of an unexpected shape"
        if paid_by is not None and row.note is None:
            row.note = f"a copy of session {paid_by}'s call (requestSessionId): its usage is there"
        self._push(row, r)
        self.last_assistant = row
        self.only_results_since = True
        if not synthetic and not api_error:
            self._usage(row, r, msg, key, paid_by)
        return row

    def _usage(
        self, row: _RowB, r: _Rec, msg: dict[str, Any], key: str | None, paid_by: str | None
    ) -> None:
        """Count the usage of block record ``r`` of the call on ``row``, unless another session
        made the call (``paid_by``: :func:`_paid_by` of the record, a copy: not paid here)."""
        usage = msg.get("usage")
        if not isinstance(usage, dict) or paid_by is not None:
            return
        if row.kind_hint == "notice" or row.note == "model <synthetic>: no API call":
            return
        k = key if key is not None else f"line:{r.line}"
        c = self.calls.get(k)
        if c is None:
            c = _Call(k, row, r.line, usage, r.side)
            self.calls[k] = c
            row.call = c
            return
        if c.row is not row:
            self.fnd.add(
                "duplicate_usage",
                "info" if _same_input(c.usage, usage) else "warning",
                r.line,
                f"usage of call {k[:40]} seen again (first on line {c.line}); counted once",
            )
            return
        c.n_records += 1
        if not _same_input(c.usage, usage):
            self.fnd.add(
                "usage_conflict",
                "warning",
                r.line,
                f"fragments of call {k[:40]} report different input/cache counts than line "
                f"{c.line}; the last fragment's is used",
            )
        if r.line >= c.uline:  # the last block record carries the final count (§0 3)
            c.usage = usage
            c.uline = r.line


def _new_blocks(have: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks of a call's next block record that its row does not hold yet (a block record
    written twice, on the chain and off it, is one block)."""
    if not have:
        return blocks
    return [b for b in blocks if b not in have]


def _same_input(a: dict[str, Any], b: dict[str, Any]) -> bool:
    ga, gb = a.get, b.get
    i, r, w = _USAGE_INPUT_KEYS
    return ga(i) == gb(i) and ga(r) == gb(r) and ga(w) == gb(w)
