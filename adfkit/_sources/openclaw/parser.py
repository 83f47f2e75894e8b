"""OpenClaw sessions: pi's entries (OpenClaw runs pi's agent and keeps its session format,
header ``version: 4``), from the SQLite store of 2026.x releases or the ``.jsonl`` files of
older ones, read by pi's entry rules (:mod:`adfkit._sources.transcript.pi_entries`: the tree,
the rows, compactions sweeping what their ``firstKeptEntryId`` does not keep, the summary sent
first). What OpenClaw adds, from its files and the recording of 2026.9.6
(``tests/fixtures/recorded/openclaw/``):

- **Places.** A row of the store is placed by its ``seq`` (``line`` in rows, calls, events and
  findings); a session file's entries by their line.
- **Compactions.** ``tokensBefore`` and ``tokensAfter`` are the event's recorded tokens before
  and after. OpenClaw records no trigger (an automatic compaction and ``openclaw sessions
  compact`` write the same entry, ``fromHook: true`` on both): NA. The context window is the
  session entry's ``contextTokens`` (``recorded``), set on each event.
- **Calls.** Each assistant message is one model call with its usage (pi's rule: ``input`` =
  ``input + cacheRead + cacheWrite``). A compaction's summarisation call leaves no usage
  anywhere (NA in ``compactions()``). The pre-compaction memory flush (a silent turn OpenClaw
  runs before an automatic compaction) writes no entry; the session entry's ``memoryFlush``
  keeps the last one (``compactionCount``: how many compactions came before it): it is one
  call of :meth:`calls` on no row, its tokens NA, keyed ``memory-flush-<n>``.
- **Tool-call ids as sent.** OpenClaw rewrites tool-call ids before each request where its
  replay policy says so; for the OpenAI-compatible chat-completions transport (``api``
  ``openai-completions``, the recorded one) every id is made letters and digits only
  (``call_rec00001`` is sent as ``callrec00001``), a collision given a hash suffix. Rows hold
  the ids as sent (the tool calls and their results keep their pairs); for other transports
  the ids are read as written.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._base.files import open_regular
from adfkit._sources.openclaw.files import INDEX_NAME
from adfkit._sources.transcript.kit import (
    DEFAULT_MAX_LINE_BYTES,
    CallDraft,
    Findings,
    ParsedTranscript,
    RowDraft,
    as_int,
    gc_paused,
    loads_line,
    warn_findings,
)
from adfkit._sources.transcript.pi_entries import Built, build, finish
from adfkit._sources.transcript.pi_entry_log import EntryLog, header_meta, read_lines

if TYPE_CHECKING:
    from adfkit._sources.openclaw.store import StoreDb, Window

FORMAT = "openclaw"
WHAT = "OpenClaw session"
#: Transports whose tool-call ids OpenClaw sends letters and digits only.
STRICT_ID_APIS = frozenset({"openai-completions"})
#: The most of ``sessions.json`` read (it holds one small record per session key).
MAX_INDEX_BYTES = 64 * 1024 * 1024


# --- tool-call ids as sent --------------------------------------------------------------------

_KIMI_ID = re.compile(r"functions\.[A-Za-z0-9_-]+:\d+")
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_MAX_ID = 40


def strict_id(raw: str) -> str:
    """A tool-call id with letters and digits only (a Kimi ``functions.x:0`` id kept).

    Examples
    --------
    >>> strict_id("call_rec00001"), strict_id("functions.exec:0"), strict_id("__")
    ('callrec00001', 'functions.exec:0', 'sanitizedtoolid')
    """
    if _KIMI_ID.fullmatch(raw):
        return raw
    return _NOT_ALNUM.sub("", raw) or "sanitizedtoolid"


def _unique(seed: str, used: set[str]) -> str:
    base = strict_id(seed)[:_MAX_ID]
    if base not in used:
        return base
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    candidate = base[: _MAX_ID - len(digest)] + digest
    n = 2
    out = candidate
    while out in used:
        suffix = f"x{n}"
        out = candidate[: _MAX_ID - len(suffix)] + suffix
        n += 1
    return out


class SentIds:
    """Each tool call's id as sent, in conversation order: a call's id allocated once per
    occurrence (a repeated id gets another), its result takes the id of the earliest call of
    that id still waiting for one, a result of no call an id of its own."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.seen: dict[str, int] = {}
        self.waiting: dict[str, list[str]] = {}
        self.orphans: dict[str, int] = {}

    def _take(self, seed: str) -> str:
        out = _unique(seed, self.used)
        self.used.add(out)
        return out

    def call(self, raw: str) -> str:
        raw = re.sub(r"^functions\s+", "functions.", raw)
        n = self.seen[raw] = self.seen.get(raw, 0) + 1
        out = self._take(raw if n == 1 else f"{raw}:{n}")
        self.waiting.setdefault(raw, []).append(out)
        return out

    def result(self, raw: str) -> str:
        raw = re.sub(r"^functions\s+", "functions.", raw)
        queue = self.waiting.get(raw)
        if queue:
            return queue.pop(0)
        n = self.orphans[raw] = self.orphans.get(raw, 0) + 1
        return self._take(f"{raw}:tool_result:{n}")


def send_ids(rows: Iterable[RowDraft]) -> None:
    """Rewrite the rows' tool-use and tool-result ids as OpenClaw sends them (in place)."""
    ids = SentIds()
    for row in rows:
        for b in row.content:
            t = b.get("type")
            if t == "tool_use" and isinstance(b.get("id"), str) and b["id"]:
                b["id"] = ids.call(b["id"])
            elif t == "tool_result" and isinstance(b.get("tool_use_id"), str) and b["tool_use_id"]:
                b["tool_use_id"] = ids.result(b["tool_use_id"])


def model_api(rd: EntryLog) -> str | None:
    """The transport of the session's last reply (``message.api``), else of its last
    ``model-snapshot`` (``data.modelApi``)."""
    for e in reversed(rd.entries):
        o = e.obj
        m = o.get("message")
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("api"), str):
            return str(m["api"])
        d = o.get("data")
        if o.get("customType") == "model-snapshot" and isinstance(d, dict):
            api = d.get("modelApi")
            if isinstance(api, str):
                return api
    return None


# --- the session entry --------------------------------------------------------------------


def entry_meta(entry: dict[str, Any]) -> dict[str, str]:
    """What the session entry says, as text: ``compaction_count``, ``context_tokens``,
    ``memory_flush`` (the last flush's outcome) and ``memory_flush_after`` (compactions before
    it), ``session_model``.

    Examples
    --------
    >>> m = entry_meta({"compactionCount": 2, "contextTokens": 32000,
    ...                 "memoryFlush": {"kind": "succeeded", "compactionCount": 0}})
    >>> m["compaction_count"], m["context_tokens"], m["memory_flush"], m["memory_flush_after"]
    ('2', '32000', 'succeeded', '0')
    """
    out: dict[str, str] = {}
    for src, dst in (("compactionCount", "compaction_count"), ("contextTokens", "context_tokens")):
        v = as_int(entry.get(src))
        if v is not None and v >= 0:
            out[dst] = str(v)
    flush = entry.get("memoryFlush")
    if isinstance(flush, dict) and isinstance(flush.get("kind"), str):
        out["memory_flush"] = flush["kind"][:40]
        n = as_int(flush.get("compactionCount"))
        if n is not None and n >= 0:
            out["memory_flush_after"] = str(n)
    if isinstance(entry.get("model"), str):
        out["session_model"] = entry["model"][:200]
    return out


def _flush_call(meta: dict[str, str], b: Built) -> list[CallDraft]:
    """The recorded memory flush as a call on no row, placed at the compaction it preceded."""
    if "memory_flush" not in meta:
        return []
    after = int(meta.get("memory_flush_after", "0"))
    comps = [ev for ev in b.events if ev.kind == "compaction"]
    line = comps[after].line if after < len(comps) else (comps[-1].line + 1 if comps else 0)
    if after < len(comps):
        comps[after].extra["after_memory_flush"] = True
    call = CallDraft(f"memory-flush-{after}", None, line, None, {}, None)
    call.note = (
        f"the pre-compaction memory flush ({meta['memory_flush']}; the session entry's "
        "memoryFlush): a silent turn whose calls and usage are not recorded"
    )
    return [call]


# --- one session ----------------------------------------------------------------------------


def session_from(
    path: str,
    rd: EntryLog,
    entry: dict[str, Any],
    fnd: Findings,
    extra_meta: dict[str, str] | None = None,
) -> ParsedTranscript:
    """The parsed session of entries ``rd`` with its session entry ``entry``."""
    meta = {**header_meta(rd.header or {}), **(extra_meta or {}), **entry_meta(entry)}
    window = as_int(entry.get("contextTokens"))
    b = build(rd, fnd, meta, window if window and window > 0 else None)
    api = model_api(rd)
    if api is not None:
        meta["model_api"] = api
    if api in STRICT_ID_APIS:
        send_ids(b.rows)
        send_ids(b.branch_rows)
    return finish(path, FORMAT, rd, b, meta, fnd, _flush_call(meta, b))


def _index_entry(path: Path, sid: str | None, fnd: Findings) -> dict[str, Any]:
    """The record of ``sessions.json`` beside a session file whose ``sessionId`` is ``sid``."""
    index = path.parent / INDEX_NAME
    try:
        fd, st = open_regular(index)
    except (OSError, ValueError):
        return {}
    try:
        if st.st_size > MAX_INDEX_BYTES:
            fnd.add("index_too_large", "warning", None, f"{INDEX_NAME} is over 64 MiB; not read")
            return {}
        data = b""
        while chunk := os.read(fd, 1 << 20):
            data += chunk
            if len(data) > MAX_INDEX_BYTES:
                return {}
    finally:
        os.close(fd)
    obj, _problem = loads_line(data)
    if not isinstance(obj, dict):
        fnd.add("bad_index", "warning", None, f"{INDEX_NAME} is not a JSON object; not read")
        return {}
    for key, rec in obj.items():
        if isinstance(rec, dict) and rec.get("sessionId") == sid:
            return {**rec, "_key": key}
    return {}


def parse_session_file(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    warn: bool = True,
) -> ParsedTranscript:
    """Parse an OpenClaw session file (``agents/<agent>/sessions/<session>.jsonl``), with its
    record in ``sessions.json`` beside it.

    :raises NotTranscriptError: empty, binary, or its first record is not a session header.
    """
    p = Path(path).expanduser()
    fnd = Findings()
    with gc_paused():
        rd = read_lines(p, max_line_bytes, fnd, WHAT)
        sid = (rd.header or {}).get("id")
        entry = _index_entry(p, sid if isinstance(sid, str) else None, fnd)
        extra = {"session_key": entry["_key"]} if "_key" in entry else {}
        out = session_from(str(p), rd, entry, fnd, extra)
    if warn:
        warn_findings(str(p), out.findings)
    return out


def parse_store_session(
    store: StoreDb,
    window: Window,
    *,
    max_bytes: int,
    warn: bool = True,
    meta: dict[str, str] | None = None,
) -> ParsedTranscript:
    """Parse one session of an open store (:mod:`.store`)."""
    from adfkit._sources.openclaw.store import read_entries, session_entry, unknown_types

    fnd = Findings()
    name = f"{store.name}#{window.session_id}"
    with gc_paused():
        rd = read_entries(store, window.session_id, max_bytes)
        for t, seq in unknown_types(rd).items():
            fnd.add(
                "unknown_entry_type",
                "warning",
                seq,
                f"entries of unknown type {t!r} not read (not in pi's session format)",
            )
        extra = {**(meta or {})}
        for k, v in (
            ("session_key", window.session_key),
            ("provider", window.provider),
            ("model", window.model),
        ):
            if v:
                extra[k] = v
        out = session_from(name, rd, session_entry(store, window), fnd, extra)
    if warn:
        warn_findings(name, out.findings)
    return out
