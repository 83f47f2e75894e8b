"""The mind as data: ``mind.md`` sections, ``mind/<slug>.md`` pages, ``mind/log.md`` (§11).

The YAML front matter of the pages is read by a small parser for the simple subset the
runtime's guide uses (``key: value`` scalars, quoted strings, ``[a, b]`` flow lists and
``- item`` block lists, ``#`` comments); anything fancier is kept as the raw text.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._analysis.context import context_blocks, prompt_row
from adfkit._analysis.tables import result_texts, tool_calls
from adfkit._analysis.timeline import gap_between, resets, restarts
from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfError, AdfWarning, BlobError
from adfkit._base.js import js_length, loads_or_none
from adfkit._core.source import AgentSource, Key

_MIND_HISTORY: Key[pd.DataFrame] = Key("mind.history")

#: Sections of ``mind.md`` that are always present in :attr:`Mind.index`.
INDEX_SECTIONS = ("Always", "Pages", "Rules")
#: Front matter fields that are always columns of :attr:`Mind.pages`, in this order.
PAGE_FIELDS = ("type", "description", "status", "stale_after", "sources")

_HEADING = re.compile(r"^##(?!#)\s*(.*?)\s*#*\s*$")
_LOG_HEADING = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\]\s*([A-Za-z_-]+)\s*(?:\|\s*(.*))?$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:\s*(.*)$")


@dataclass(repr=False)
class Mind:
    """An agent's mind as data.

    Attributes
    ----------
    index : ``mind.md`` split at its ``## `` headings: heading -> section text (stripped).
        ``Always``, ``Pages`` and ``Rules`` are always keys (``""`` when absent); the text
        before the first heading is under ``""``. An empty or missing ``mind.md`` gives the
        three keys with empty text.
    pages : one row per ``mind/<slug>.md`` page (``mind/log.md`` excluded), by path. Columns:
        ``path``, ``slug`` (string), ``type``, ``description``, ``status``, ``stale_after``
        (string, from the YAML front matter; NA when absent), ``sources`` (object: tuple of
        strings), ``title`` (string: the first ``# `` heading of the body), ``linked`` (bool:
        ``mind.md`` mentions the page's path), ``problems`` (string: ``no front matter``,
        ``no type``; NA when none), ``body`` (string: the text after the front matter),
        ``size`` (Int64 bytes), ``created_at``, ``updated_at`` (datetime64[ms, UTC]), then one
        string column per other front matter key.
    log : one row per ``## `` heading of ``mind/log.md``, in file order (the convention is
        newest first; agents do not always keep it). Columns: ``position`` (Int64, 0 = top),
        ``date`` (datetime64[ms, UTC], NaT when the heading is not ``[YYYY-MM-DD]``),
        ``action`` (string: ``ingest``, ``update``, ``lint``...), ``title`` (string),
        ``page`` (string: the title when it is a ``mind/...`` path), ``body`` (string).
    """

    index: dict[str, str]
    pages: pd.DataFrame
    log: pd.DataFrame

    def __repr__(self) -> str:
        filled = [k for k in INDEX_SECTIONS if self.index.get(k)]
        last = ""
        if len(self.log) and self.log["date"].notna().any():
            last = f", latest log date {self.log['date'].max():%Y-%m-%d}"
        return (
            f"<Mind: index sections {', '.join(filled) or 'none'}; "
            f"{len(self.pages)} page(s); {len(self.log)} log entr"
            f"{'y' if len(self.log) == 1 else 'ies'}{last}>"
        )


def split_sections(text: str) -> dict[str, str]:
    """Markdown text -> {``## `` heading: section text}; text before the first under ``""``.

    Headings inside fenced code blocks do not split. ``Always``/``Pages``/``Rules`` match
    case-insensitively and are always present.

    Examples
    --------
    >>> from adfkit._analysis.mind import split_sections
    >>> split_sections("# Mind\\n\\n## Always\\n- be brief\\n## Pages\\n")
    {'': '# Mind', 'Always': '- be brief', 'Pages': '', 'Rules': ''}
    """
    out: dict[str, list[str]] = {"": []}
    cur = ""
    fenced = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            cur = m.group(1)
            for canon in INDEX_SECTIONS:
                if cur.lower() == canon.lower():
                    cur = canon
            out.setdefault(cur, [])
            continue
        out[cur].append(line)
    sections = {k: "\n".join(v).strip() for k, v in out.items()}
    if not sections[""]:
        del sections[""]
    for canon in INDEX_SECTIONS:
        sections.setdefault(canon, "")
    return sections


def _scalar(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] == '"':
        try:
            return str(json.loads(v))
        except json.JSONDecodeError:
            return v[1:-1]
    if len(v) >= 2 and v[0] == v[-1] == "'":
        return v[1:-1].replace("''", "'")
    return v


def _flow_list(v: str) -> tuple[str, ...]:
    inner = v.strip()[1:-1]
    items, buf, quote = [], "", None
    for ch in inner:
        if quote:
            buf += ch
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            buf += ch
        elif ch == ",":
            items.append(buf)
            buf = ""
        else:
            buf += ch
    items.append(buf)
    return tuple(_scalar(i) for i in items if i.strip())


def _strip_comment(v: str) -> str:
    # A " #" outside quotes starts a comment.
    quote = None
    for i, ch in enumerate(v):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or v[i - 1] in " \t"):
            return v[:i].rstrip()
    return v


def parse_front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """``---``-fenced YAML front matter at the very top -> (fields, body); (None, text) if none.

    Values are strings, lists become tuples of strings.

    Examples
    --------
    >>> from adfkit._analysis.mind import parse_front_matter
    >>> fm, body = parse_front_matter("---\\ntype: note\\nsources: [a, 'b']\\n---\\n# T\\n")
    >>> fm, body
    ({'type': 'note', 'sources': ('a', 'b')}, '# T\\n')
    """
    t = text.lstrip("\ufeff").replace("\r\n", "\n")
    lines = t.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return None, text
    fields: dict[str, Any] = {}
    key: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s*-\s+(.*)$", line) or re.match(r"^\s*-$", line)
        if item and key is not None:
            val = _scalar(_strip_comment(item.group(1))) if item.groups() else ""
            prev = fields.get(key)
            fields[key] = (*prev, val) if isinstance(prev, tuple) else (val,)
            continue
        m = _KEY.match(line)
        if not m:
            continue
        key, raw = m.group(1), _strip_comment(m.group(2)).strip()
        if raw.startswith("[") and raw.endswith("]"):
            fields[key] = _flow_list(raw)
        elif raw == "":
            fields[key] = ()
        else:
            fields[key] = _scalar(raw)
    # An empty value not followed by list items is an empty string, not a list.
    for k, v in fields.items():
        if v == () and k != "sources":
            fields[k] = ""
    return fields, "\n".join(lines[end + 1 :])


def parse_log(text: str) -> pd.DataFrame:
    """``mind/log.md`` -> one row per ``## `` heading (see :attr:`Mind.log`).

    Examples
    --------
    >>> from adfkit._analysis.mind import parse_log
    >>> log = parse_log("# Mind Log\\n\\n## [2026-06-01] ingest | mind/a.md\\n- first\\n")
    >>> log[["action", "page", "body"]].values.tolist()
    [['ingest', 'mind/a.md', '- first']]
    """
    d: dict[str, list[Any]] = {c: [] for c in schema.MIND_LOG}
    cur: list[str] | None = None
    bodies: list[list[str]] = []
    fenced = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            head = m.group(1)
            lm = _LOG_HEADING.match(head)
            d["position"].append(len(d["position"]))
            if lm:
                date, action, title = lm.group(1), lm.group(2), (lm.group(3) or "").strip()
                d["date"].append(pd.to_datetime(date, utc=True, errors="coerce"))
                d["action"].append(action)
            else:
                title = head
                d["date"].append(pd.NaT)
                d["action"].append(None)
            d["title"].append(title)
            d["page"].append(title if title.startswith("mind/") and " " not in title else None)
            cur = []
            bodies.append(cur)
        elif cur is not None:
            cur.append(line)
    d["body"] = ["\n".join(b).strip() for b in bodies]
    df = pd.DataFrame({c: d[c] for c in schema.MIND_LOG})
    for c, dt in schema.MIND_LOG.items():
        if dt.startswith("datetime"):
            df[c] = pd.to_datetime(df[c], utc=True).astype(dt)
        else:
            df[c] = df[c].astype(dt)
    return df


def _text_or_none(src: AgentSource, path: str) -> str | None:
    try:
        return src.read_file(path).decode("utf-8", "replace")
    except AdfError:
        return None


def read_mind(src: AgentSource) -> Mind:
    """The body of :meth:`AgentFile.mind`."""
    index_text = _text_or_none(src, "mind.md") or ""
    index = split_sections(index_text)
    files = src.files()
    paths = files["path"].astype("string").fillna("")
    is_page = paths.str.startswith("mind/") & paths.str.endswith(".md") & (paths != "mind/log.md")
    meta = files[is_page.to_numpy(dtype=bool)].reset_index(drop=True)
    records: list[dict[str, Any]] = []
    extra: list[str] = []
    for p in meta["path"]:
        text = src.read_file(str(p)).decode("utf-8", "replace")
        fm, body = parse_front_matter(text)
        problems = []
        if fm is None:
            problems.append("no front matter")
            fm = {}
        elif not fm.get("type"):
            problems.append("no type")
        rec: dict[str, Any] = {"path": str(p), "slug": str(p)[len("mind/") : -len(".md")]}
        for f in PAGE_FIELDS:
            v = fm.get(f)
            if f == "sources":
                rec[f] = v if isinstance(v, tuple) else (() if v in (None, "") else (str(v),))
            else:
                rec[f] = ", ".join(v) if isinstance(v, tuple) else (v or None)
        for k, v in fm.items():
            if k not in PAGE_FIELDS:
                if k not in extra:
                    extra.append(k)
                rec[k] = ", ".join(v) if isinstance(v, tuple) else v
        title = next((ln[2:].strip() for ln in body.split("\n") if ln.startswith("# ")), None)
        rec["title"] = title
        rec["linked"] = str(p) in index_text
        rec["problems"] = "; ".join(problems) or None
        rec["body"] = body
        records.append(rec)
    pages = pd.DataFrame(
        records,
        columns=[c for c in schema.MIND_PAGES if c not in ("size", "created_at", "updated_at")]
        + extra,
    )
    pages["size"] = meta["size"].astype("Int64").to_numpy()
    pages["created_at"] = meta["created_at"].to_numpy()
    pages["updated_at"] = meta["updated_at"].to_numpy()
    pages = pages[list(schema.MIND_PAGES) + extra]
    for c, dt in schema.MIND_PAGES.items():
        if dt == "object":
            pages[c] = pages[c].astype(object)
        elif dt.startswith("datetime"):
            pages[c] = pd.to_datetime(pages[c], utc=True).astype(dt)
        else:
            pages[c] = pages[c].astype(dt)
    for c in extra:
        pages[c] = pages[c].astype("string")
    log_text = _text_or_none(src, "mind/log.md")
    log = parse_log(log_text or "")
    return Mind(index=index, pages=pages, log=log)


# --- the mind over time -------------------------------------------------------------------


# -- the mind --------------------------------------------------------------------------
def mind_history(src: AgentSource) -> pd.DataFrame:
    """Every version of ``mind.md`` and of each ``mind/<slug>.md`` page (``mind/log.md``
    included) over the agent's lifetime. One row per version, per path in order.

    Versions are rebuilt from the ``fs_write`` (modes ``write``, ``append``, ``edit``) and
    ``fs_delete`` calls in :meth:`history` whose tool result reports success; whole-file
    ``fs_read`` results, the mind as injected in ``system_prompt`` context rows (the
    runtime's ``<injected_file path="mind.md">`` block), ``file`` audit rows (content of
    deleted pages) and ``adf_files`` (the current content) fill in versions that no write
    shows. An append or edit to a
    version that is not known cannot be rebuilt forward; an append is rebuilt backward
    from a later known version when no history gap lies between. Writes made outside tool
    calls (code execution, the UI) are invisible here: a current file that differs from
    the last rebuilt version gets its own ``adf_files`` row.

    Columns (dtype):

    - ``path`` (string), ``version`` (Int64: 0-based per path), ``seq`` (Int64: the
      assistant row of the tool call, or the context row that showed it; NA for rows from
      ``adf_files`` or a file audit), ``created_at`` (datetime64[ms, UTC])
    - ``op`` (string: ``write``, ``append``, ``edit``, ``delete`` (the tool calls);
      ``read`` (a whole-file ``fs_read`` showed a version not otherwise known),
      ``injected`` (seen only in a system prompt), ``snapshot`` (a file audit's copy at
      deletion), ``current`` (``adf_files`` now, when it is no rebuilt version))
    - ``source`` (string: where the content comes from: ``fs_write``, ``fs_delete``,
      ``fs_read``, ``system_prompt``, ``file_audit``, ``adf_files``, ``reversed_append``
      (an append undone from a later known version)), ``rebuilt`` (bool: the content is
      known exactly), ``content`` (string; NA when not rebuilt, and for a delete),
      ``chars`` (Int64: JS length)
    - ``current`` (bool: this is the content in ``adf_files`` now), ``note`` (string: why
      a version could not be rebuilt, or a mismatch found)

    Examples
    --------
    >>> import adfkit
    >>> mh = adfkit.open_adf("sample_agents/mind-keeper.adf").mind_history()
    >>> bool((mh["path"] == "mind.md").any())
    True
    """
    return src.memo.get(_MIND_HISTORY, lambda: _rebuild_paused(src)).copy(deep=False)


def mind_at(src: AgentSource, seq: int) -> str | None:
    """The ``mind.md`` the agent had in its system prompt at a model call (or loop row).

    The runtime injects ``mind.md`` as a snapshot taken at session start and refreshed
    only after a compaction, a clear or a restart (memory-management guide), so the best
    evidence is the system prompt in force (:meth:`system_prompt_at`): the runtime's
    ``<injected_file path="mind.md">`` block, else the longest rebuilt version of
    ``mind.md`` found in it. When the prompt is lost or holds no known version, the rule is
    applied to :meth:`mind_history`: the version in force at the last reset or restart
    before the row. Returns None (with an :class:`adfkit.AdfWarning`) when that version
    could not be rebuilt.

    Examples
    --------
    >>> import adfkit
    >>> agent = adfkit.open_adf("sample_agents/mind-keeper.adf")
    >>> first_call = int(agent.history().query("kind == 'assistant'")["seq"].iloc[0])
    >>> agent.mind_at(first_call).startswith("# Mind")
    True
    """
    seq = int(seq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AdfWarning)
        found = prompt_row(src, seq)
    versions = mind_history(src)
    mind = versions[(versions["path"] == "mind.md") & versions["rebuilt"]]
    if found is not None:
        prompt = found[1]
        m = _INJECTED_RE.search(prompt)
        if m:
            return m.group(1)
        best = None
        for content in mind["content"].dropna().unique().tolist():
            if content and content in prompt and (best is None or len(content) > len(best)):
                best = content
        if best is not None:
            return str(best)
        warnings.warn(
            f"{src.path}: the system prompt in force at seq {seq} (seq {found[0]}) shows no "
            "known version of mind.md; using the session-start snapshot rule instead",
            AdfWarning,
            stacklevel=2,
        )
    # The snapshot rule over the rebuilt versions.
    point = 0
    for r, _, _ in resets(src):
        if r <= seq:
            point = max(point, r)
    for r in restarts(src):
        if r <= seq:
            point = max(point, r)
    allv = versions[(versions["path"] == "mind.md") & versions["seq"].notna()]
    before = allv[allv["seq"] < max(point, 1)]
    if not len(before):
        warnings.warn(
            f"{src.path}: no version of mind.md is known before seq {seq}",
            AdfWarning,
            stacklevel=2,
        )
        return None
    row = before.iloc[-1]
    gap = gap_between(src, int(row["seq"]), max(point, int(row["seq"]) + 1))
    if gap is not None:
        warnings.warn(
            f"{src.path}: the mind.md in force at seq {seq} is unknown: the last version "
            f"seen (seq {int(row['seq'])}) precedes the history gap {gap[0]}..{gap[1]}, "
            "where it may have been rewritten",
            AdfWarning,
            stacklevel=2,
        )
        return None
    if not bool(row["rebuilt"]):
        warnings.warn(
            f"{src.path}: the mind.md in force at seq {seq} (version {int(row['version'])}, "
            f"written at seq {row['seq']}) could not be rebuilt: {row['note']}",
            AdfWarning,
            stacklevel=2,
        )
        return None
    return str(row["content"])


#: The runtime wraps every injected file of the base prompt in this tag (ADF_FORMAT.md §11).
_INJECTED_MARK = '<injected_file path="mind.md">'
_INJECTED_RE = re.compile(r'<injected_file path="mind\.md">\n(.*?)\n</injected_file>', re.S)


def _is_mind_path(p: str) -> bool:
    return p == "mind.md" or (p.startswith("mind/") and p.endswith(".md"))


def _norm_path(p: Any) -> str:
    s = str(p or "")
    while s.startswith("./"):
        s = s[2:]
    return s.lstrip("/")


def decode_file_audit(value: Any) -> tuple[str | None, str | None]:
    """(path, text) of a ``file`` audit object; text None when not UTF-8 or not decodable."""
    if not isinstance(value, dict):
        return None, None
    path = value.get("path")
    b64 = value.get("content_base64")
    if not isinstance(b64, str):
        return (None if path is None else str(path)), None
    try:
        raw = base64.b64decode(b64, validate=False)
        return (None if path is None else str(path)), raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return (None if path is None else str(path)), None


def _apply_edits(doc: str, edits: list[Any]) -> str | None:
    """fs_write edit mode: each ``{old_text, new_text, replace_all}`` in order; None when one
    would fail (not found, or not unique without ``replace_all``), as the tool's own rule."""
    for e in edits:
        if not isinstance(e, dict) or not isinstance(e.get("old_text"), str):
            return None
        old, new = e["old_text"], str(e.get("new_text") or "")
        first = doc.find(old)
        if not old or first < 0:
            return None
        if e.get("replace_all"):
            doc = doc.replace(old, new)
        elif doc.find(old, first + 1) >= 0:
            return None
        else:
            doc = doc[:first] + new + doc[first + len(old) :]
    return doc


def _write_content(inp: dict[str, Any]) -> tuple[str | None, str | None]:
    """(text written by a ``write``, note when it is not text)."""
    content = inp.get("content")
    if not isinstance(content, str):
        return None, "write without text content"
    if inp.get("encoding") == "base64":
        try:
            return base64.b64decode(content).decode("utf-8"), None
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None, "binary content (base64), not text"
    return content, None


_OBSERVED = ("injected", "read", "snapshot")


def _read_content(inp: dict[str, Any], result: str | None) -> str | None:
    """The whole text an ``fs_read`` returned, or None (partial read, error, not JSON)."""
    if inp.get("start_line") or inp.get("end_line") or not result:
        return None
    val = loads_or_none(result)
    if isinstance(val, dict) and isinstance(content := val.get("content"), str):
        return content
    return None


#: A version of one file as the rebuild goes: ``path``, ``seq``, ``created_at``, ``at`` (its
#: place: a call's seq, an observation half a seq after), ``n`` (order at one place), ``op``,
#: ``source``, ``content``, ``rebuilt``, ``note``, and for a tool call ``inp`` and
#: ``result_seq``; ``current`` once matched to ``adf_files``.
_Version = dict[str, Any]
#: Seq ranges lost without a trace: ``(start_seq, end_seq)``.
_Gaps = list[tuple[int, int]]


def _rebuild_paused(src: AgentSource) -> pd.DataFrame:
    with gc_paused():  # a parsed input per file call: many small acyclic objects
        return _rebuild_mind(src)


def _rebuild_mind(src: AgentSource) -> pd.DataFrame:
    """The body of :func:`mind_history`: every write, read, deletion and snapshot of a mind
    file in order (:func:`_mind_events`), each file's versions rebuilt forward and backward
    (:func:`_resolve`), matched to the content now (:func:`_add_current`), then one row per
    version that adds something (:func:`_version_rows`)."""
    t_by_seq = _TimeBySeq(src.history())
    gaps_df = src.history_gaps()
    gaps: _Gaps = list(
        zip(gaps_df["start_seq"].astype("int64"), gaps_df["end_seq"].astype("int64"), strict=True)
    )
    reset_points = [r for r, _, _ in resets(src)] + restarts(src)
    per = _versions_by_path(_mind_events(src), reset_points)
    for vs in per.values():
        _resolve(vs, gaps)
    _add_current(src, per, t_by_seq, gaps)
    return schema.frame(_version_rows(per), schema.MIND_HISTORY)


class _TimeBySeq:
    """Each history row's ``created_at`` by seq, made only for the seqs asked (a few result
    rows), not a Timestamp for every row."""

    def __init__(self, h: pd.DataFrame) -> None:
        self._h = h

    @functools.cached_property
    def _at(self) -> dict[int, int]:
        return dict(zip(self._h["seq"].tolist(), range(len(self._h)), strict=True))

    def get(self, seq: int) -> Any:
        i = self._at.get(seq)
        return None if i is None else self._h["created_at"].array[i]


def _mind_events(src: AgentSource) -> list[_Version]:
    """What happened to mind files, in order (by place, then order at a place): tool calls,
    the mind injected in system prompts, and the file audit's copies of deleted pages."""
    items, deletes = _tool_events(src)
    items += _injected_events(src)
    items += _file_audit_events(src, deletes)
    items.sort(key=lambda x: (x["at"], x["n"]))
    return items


def _tool_events(src: AgentSource) -> tuple[list[_Version], list[_Version]]:
    """``(events, deletions)`` of the ``fs_write``/``fs_delete``/``fs_read`` calls on mind
    files that did not fail; a read gives the whole text it returned, if any."""
    items: list[_Version] = []
    calls = tool_calls(src, history=True)
    on_files = calls["tool_name"].isin(["fs_write", "fs_delete", "fs_read"]).to_numpy(bool)
    may = on_files & _may_name_mind(calls["tool_input"])
    # n: a call's place among the file calls (the order of events at one place); only the
    # calls that may name a mind file are taken out of the table (a copy of a few rows)
    places = (np.cumsum(on_files) - 1)[may]
    calls = calls.iloc[np.flatnonzero(may)]
    results = result_texts(src) if len(calls) else {}
    deletes: list[_Version] = []
    times = calls["created_at"].array  # a Timestamp made for the calls on mind files only
    raws = calls["tool_input"].tolist()
    rows = zip(places.tolist(), raws, _call_rows(calls), strict=True)
    for i, (n, raw, r) in enumerate(rows):
        inp = loads_or_none(raw)
        if not isinstance(inp, dict):
            continue
        path = _norm_path(inp.get("path"))
        if not _is_mind_path(path) or (not pd.isna(r.is_error) and bool(r.is_error)):
            continue
        base = {"path": path, "seq": int(r.call_seq), "created_at": times[i]}
        if r.tool_name == "fs_read":
            text = _read_content(inp, results.get(str(r.tool_use_id)))
            if text is not None:
                items.append(
                    dict(base, at=r.call_seq + 0.5, n=n, op="read", source="fs_read", content=text)
                )
            continue
        op = "delete" if r.tool_name == "fs_delete" else str(inp.get("mode") or "write")
        it = dict(
            base,
            at=float(r.call_seq),
            n=n,
            op=op,
            source=str(r.tool_name),
            inp=inp,
            note=None if r.matched else "its tool result is lost; assumed applied",
            result_seq=None if pd.isna(r.result_seq) else int(r.result_seq),
        )
        items.append(it)
        if op == "delete":
            deletes.append(it)
    return items, deletes


def _may_name_mind(raws: pd.Series) -> np.ndarray:
    """The tool inputs (JSON text) that can name a mind file: those holding ``mind``, or a
    ``\\u`` escape (the only way a decoded string holds letters its JSON text does not);
    the rest are not parsed (a file's calls are mostly on other paths)."""
    text = raws if isinstance(raws.dtype, pd.StringDtype) else raws.astype("string")
    found = text.str.contains("mind", regex=False) | text.str.contains("\\u", regex=False)
    out: np.ndarray = found.to_numpy(dtype=bool, na_value=False)
    return out


class _CallRow(NamedTuple):
    call_seq: Any
    tool_use_id: Any
    tool_name: Any
    result_seq: Any
    is_error: Any
    matched: Any


def _call_rows(calls: pd.DataFrame) -> Iterator[_CallRow]:
    """The columns of ``calls`` that :func:`_tool_events` reads, row by row, as plain values."""
    cols = (calls[c].tolist() for c in _CallRow._fields)
    return map(_CallRow._make, zip(*cols, strict=True))


def _injected_events(src: AgentSource) -> list[_Version]:
    """The mind as injected in system prompts (a snapshot taken at the last reset)."""
    items: list[_Version] = []
    h = src.history()
    # searched in place: taking the context rows' text out first copied it (big-runner x16:
    # 0.09 s after the other tables, most of it kernel time for the copy's fresh memory)
    marked = h["text"].str.contains(_INJECTED_MARK, regex=False).to_numpy(bool, na_value=False)
    if not (marked & (h["kind"] == "context").to_numpy(bool)).any():
        return items  # no context row injects the mind: its blocks need not be built
    cb = context_blocks(src)
    for r in cb[cb["category"] == "system_prompt"].itertuples(index=False):
        m = _INJECTED_RE.search(str(r.text))
        if m:
            items.append(
                {
                    "path": "mind.md",
                    "seq": int(r.seq),
                    "created_at": r.created_at,
                    "at": float(r.seq),
                    "n": 0,
                    "op": "injected",
                    "source": "system_prompt",
                    "content": m.group(1),
                }
            )
    return items


def _file_audit_events(src: AgentSource, deletes: list[_Version]) -> list[_Version]:
    """Deleted pages kept by file audit rows: the content just before the deletion, placed at
    the ``fs_delete`` call it matches (same path, not later), else after the last row written
    before the audit row, with a deletion no call made."""
    items: list[_Version] = []
    a = src.audit()
    fa = a[a["source"] == "file"]
    if fa.empty:  # no file audit row: the history's times are not needed
        return items
    hs = src.history().sort_values("seq")
    h_ms = np.array([(schema.to_ms(t) or 0) for t in hs["created_at"]], dtype="int64")
    h_seq = hs["seq"].astype("int64").tolist()
    for aid, t in zip(fa["id"], fa["created_at"], strict=True):
        try:
            value = src.decode_audit(int(aid))
        except BlobError as exc:
            warnings.warn(
                f"{src.path}: {exc.detail}; skipped in mind_history()", AdfWarning, stacklevel=5
            )
            continue
        raw_path, text = decode_file_audit(value)
        path = _norm_path(raw_path)
        if not _is_mind_path(path):
            continue
        t_ms = schema.to_ms(t) or 0
        match = None
        for d in deletes:
            if (
                d["path"] == path
                and not d.get("audited")
                and (schema.to_ms(d["created_at"]) or 0) <= t_ms
            ):
                match = d
        snap = {
            "path": path,
            "seq": None,
            "created_at": t,
            "n": -1,
            "op": "snapshot",
            "source": "file_audit",
            "content": text,
            "note": "the copy the file audit kept at deletion" if text is not None else None,
        }
        if match is not None:
            match["audited"] = True
            items.append(dict(snap, at=match["at"], n=match["n"] - 0.5))
            continue
        k = int(np.searchsorted(h_ms, t_ms, "right")) - 1
        at = (h_seq[k] if k >= 0 else 0) + 0.5
        items.append(dict(snap, at=at))
        items.append(
            {
                "path": path,
                "seq": None,
                "created_at": t,
                "at": at,
                "n": 0,
                "op": "delete",
                "source": "file_audit",
                "inp": {},
                "note": "deleted outside the loop's tool calls (or its call was lost)",
            }
        )
    return items


def _versions_by_path(items: list[_Version], reset_points: list[int]) -> dict[str, list[_Version]]:
    """Each file's versions, in order, with what is known of each now: an observation's
    content, a write's text; appends and edits are resolved later (:func:`_resolve`). An
    injected snapshot older than a write made since the last reset is left out (it shows
    nothing new)."""
    per: dict[str, list[_Version]] = {}
    for it in items:
        vs = per.setdefault(it["path"], [])
        v = dict(it)
        if v["op"] in _OBSERVED:
            if v["content"] is None:
                continue
            if v["op"] == "injected":
                start = max([r for r in reset_points if r <= v["seq"]], default=0)
                if any(w["op"] not in _OBSERVED and start <= w["at"] < v["at"] for w in vs):
                    continue
            v["rebuilt"] = True
        elif v["op"] == "write":
            v["content"], why = _write_content(v["inp"])
            v["rebuilt"] = v["content"] is not None
            v["note"] = why or v.get("note")
        else:  # append, edit: resolved below; delete: the state is known (no file)
            v["content"] = None
            v["rebuilt"] = v["op"] == "delete"
        vs.append(v)
    return per


def _resolve(vs: list[_Version], gaps: _Gaps) -> None:
    """Rebuild what can be rebuilt of one file's versions, in place: forward through appends
    and edits from a known version, backward from a known version to the one before it (no
    history gap between them), until nothing changes."""
    for _ in range(len(vs) + 1):
        changed = _resolve_forward(vs)
        changed = _resolve_backward(vs, gaps) or changed
        if not changed:
            break


def _edits_of(inp: dict[str, Any]) -> list[Any]:
    """The edits of an ``fs_write`` ``edit`` call: ``edits``, else its one ``old_text``."""
    edits: list[Any] = inp.get("edits") or (
        [
            {
                "old_text": inp.get("old_text"),
                "new_text": inp.get("new_text", ""),
                "replace_all": inp.get("replace_all"),
            }
        ]
        if inp.get("old_text")
        else []
    )
    return edits


def _resolve_forward(vs: list[_Version]) -> bool:
    """Appends and edits applied to the rebuilt version before them; whether any was."""
    changed = False
    for i, v in enumerate(vs):
        if v["rebuilt"] or v["op"] not in ("append", "edit"):
            continue
        prev = vs[i - 1] if i else None
        if prev is None or not prev["rebuilt"]:
            continue
        base = "" if prev["op"] == "delete" else prev["content"]
        if v["op"] == "append":
            v["content"] = base + str(v["inp"].get("content") or "")
        else:
            v["content"] = _apply_edits(base, _edits_of(v["inp"]))
            if v["content"] is None:
                v["note"] = (
                    "the edit does not apply to the rebuilt previous version "
                    "(it was changed outside tool calls)"
                )
                continue
        v["rebuilt"], changed = True, True
    return changed


def _resolve_backward(vs: list[_Version], gaps: _Gaps) -> bool:
    """A version not rebuilt takes the content of the rebuilt one after it, when nothing was
    lost between them: an observation's content, or an append's minus what it appended;
    whether any did."""
    changed = False
    for i in range(len(vs) - 1, 0, -1):
        v, prev = vs[i], vs[i - 1]
        if not v["rebuilt"] or prev["rebuilt"] or v["content"] is None:
            continue
        if any(b > prev["at"] and a < v["at"] for a, b in gaps):
            continue
        if v["op"] in _OBSERVED:
            prev.update(
                content=v["content"],
                rebuilt=True,
                source=v["source"],
                note=f"content seen later ({v['op']}, {v['source']})",
            )
            changed = True
        elif v["op"] == "append":
            tail = str(v["inp"].get("content") or "")
            if v["content"].endswith(tail):
                prev.update(
                    content=v["content"][: len(v["content"]) - len(tail)],
                    rebuilt=True,
                    source="reversed_append",
                    note="rebuilt backward from the next version (an append)",
                )
                changed = True
    return changed


def _add_current(
    src: AgentSource, per: dict[str, list[_Version]], t_by_seq: _TimeBySeq, gaps: _Gaps
) -> None:
    """Match each mind file's content now (``adf_files``) to its last version: the same text
    marks it current; an append or edit whose call wrote the file last takes it (and the
    versions before it are resolved again); otherwise a ``current`` version is added, with a
    note saying why it differs."""
    files = src.files()
    for path, upd in zip(files["path"].tolist(), files["updated_at"].tolist(), strict=True):
        p = _norm_path(path)
        if not _is_mind_path(p):
            continue
        text = src.read_file(str(path)).decode("utf-8", "replace")
        vs = per.setdefault(p, [])
        last = vs[-1] if vs else None
        if last is not None and last["rebuilt"] and last["op"] != "delete":
            if last["content"] == text:
                last["current"] = True
                continue
        elif (
            last is not None and last["op"] in ("append", "edit") and _wrote_it(last, upd, t_by_seq)
        ):
            last.update(
                content=text,
                rebuilt=True,
                source="adf_files",
                current=True,
                note="content from adf_files: the file was last written by this call",
            )
            _resolve(vs, gaps)
            continue
        vs.append(
            {
                "path": p,
                "seq": None,
                "created_at": upd,
                "op": "current",
                "source": "adf_files",
                "content": text,
                "rebuilt": True,
                "current": True,
                "note": _why_current_differs(last),
            }
        )


def _why_current_differs(last: _Version | None) -> str:
    """The note of a ``current`` version added after ``last`` (the last version known)."""
    if last is None:
        return "written by no tool call in the history (seeded, written by code, or in a gap)"
    if last["op"] == "delete":
        return "re-created outside the loop's tool calls"
    if last["rebuilt"]:
        return "differs from the last rebuilt version: written outside tool calls"
    return "the content now; the last version could not be rebuilt to compare"


def _version_rows(per: dict[str, list[_Version]]) -> list[dict[str, Any]]:
    """One record of :data:`schema.MIND_HISTORY` per version, ``mind.md`` first, then by path;
    an observation that shows the version already known is folded into it."""
    records: list[dict[str, Any]] = []
    for path in sorted(per, key=lambda p: (p != "mind.md", p)):
        kept: list[_Version] = []
        for v in per[path]:
            if v["op"] in _OBSERVED and kept and kept[-1]["rebuilt"]:
                if kept[-1]["content"] == v["content"] and kept[-1]["op"] != "delete":
                    kept[-1]["current"] = kept[-1].get("current") or v.get("current")
                    continue
                if v["op"] == "injected" and any(k["content"] == v["content"] for k in kept):
                    continue
            kept.append(v)
        for n, v in enumerate(kept):
            c = v.get("content") if v["op"] != "delete" else None
            note = v.get("note")
            if not v["rebuilt"] and note is None:
                note = (
                    "its content never passed through a tool call: it builds on a version "
                    "that could not be rebuilt"
                )
            records.append(
                {
                    "path": path,
                    "version": n,
                    "seq": v.get("seq"),
                    "created_at": v.get("created_at"),
                    "op": v["op"],
                    "source": v["source"],
                    "rebuilt": bool(v["rebuilt"]),
                    "content": c,
                    "chars": None if c is None else js_length(c),
                    "current": bool(v.get("current", False)),
                    "note": note,
                }
            )
    return records


def _wrote_it(v: dict[str, Any], updated: Any, t_by_seq: _TimeBySeq) -> bool:
    """True when ``adf_files.updated_at`` falls between the call and its tool result."""
    lo = schema.to_ms(v.get("created_at"))
    rs = v.get("result_seq")
    hi = schema.to_ms(t_by_seq.get(rs)) if rs is not None else None
    u = schema.to_ms(updated)
    return lo is not None and hi is not None and u is not None and lo <= u <= hi
