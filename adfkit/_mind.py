"""The mind as data: ``mind.md`` sections, ``mind/<slug>.md`` pages, ``mind/log.md`` (§11).

The YAML front matter of the pages is read by a small parser for the simple subset the
runtime's guide uses (``key: value`` scalars, quoted strings, ``[a, b]`` flow lists and
``- item`` block lists, ``#`` comments); anything fancier is kept as the raw text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from ._errors import AdfError

if TYPE_CHECKING:
    from ._agent import AgentFile

#: Sections of ``mind.md`` that are always present in :attr:`Mind.index`.
INDEX_SECTIONS = ("Always", "Pages", "Rules")
#: Front matter fields that are always columns of :attr:`Mind.pages`, in this order.
PAGE_FIELDS = ("type", "description", "status", "stale_after", "sources")
PAGE_COLUMNS: dict[str, str] = {
    "path": "string",
    "slug": "string",
    "type": "string",
    "description": "string",
    "status": "string",
    "stale_after": "string",
    "sources": "object",
    "title": "string",
    "linked": "bool",
    "problems": "string",
    "body": "string",
    "size": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "updated_at": "datetime64[ms, UTC]",
}
LOG_COLUMNS: dict[str, str] = {
    "position": "Int64",
    "date": "datetime64[ms, UTC]",
    "action": "string",
    "title": "string",
    "page": "string",
    "body": "string",
}

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
    >>> from adfkit._mind import split_sections
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
    >>> from adfkit._mind import parse_front_matter
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
    >>> from adfkit._mind import parse_log
    >>> log = parse_log("# Mind Log\\n\\n## [2026-06-01] ingest | mind/a.md\\n- first\\n")
    >>> log[["action", "page", "body"]].values.tolist()
    [['ingest', 'mind/a.md', '- first']]
    """
    d: dict[str, list[Any]] = {c: [] for c in LOG_COLUMNS}
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
    df = pd.DataFrame({c: d[c] for c in LOG_COLUMNS})
    for c, dt in LOG_COLUMNS.items():
        if dt.startswith("datetime"):
            df[c] = pd.to_datetime(df[c], utc=True).astype(dt)
        else:
            df[c] = df[c].astype(dt)
    return df


def _text_or_none(agent: AgentFile, path: str) -> str | None:
    try:
        return agent.read_text(path)
    except AdfError:
        return None


def read_mind(agent: AgentFile) -> Mind:
    """The body of :meth:`AgentFile.mind`."""
    index_text = _text_or_none(agent, "mind.md") or ""
    index = split_sections(index_text)
    files = agent.files()
    paths = files["path"].astype("string").fillna("")
    is_page = paths.str.startswith("mind/") & paths.str.endswith(".md") & (paths != "mind/log.md")
    meta = files[is_page.to_numpy(dtype=bool)].reset_index(drop=True)
    records: list[dict[str, Any]] = []
    extra: list[str] = []
    for p in meta["path"]:
        text = agent.read_text(str(p))
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
        columns=[c for c in PAGE_COLUMNS if c not in ("size", "created_at", "updated_at")] + extra,
    )
    pages["size"] = meta["size"].astype("Int64").to_numpy()
    pages["created_at"] = meta["created_at"].to_numpy()
    pages["updated_at"] = meta["updated_at"].to_numpy()
    pages = pages[list(PAGE_COLUMNS) + extra]
    for c, dt in PAGE_COLUMNS.items():
        if dt == "object":
            pages[c] = pages[c].astype(object)
        elif dt.startswith("datetime"):
            pages[c] = pd.to_datetime(pages[c], utc=True).astype(dt)
        else:
            pages[c] = pages[c].astype(dt)
    for c in extra:
        pages[c] = pages[c].astype("string")
    log_text = _text_or_none(agent, "mind/log.md")
    log = parse_log(log_text or "")
    return Mind(index=index, pages=pages, log=log)
