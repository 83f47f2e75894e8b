"""Identifiers in agent text, and whether a compaction summary kept them.

:func:`identifiers` finds file paths, URLs, tool names, message ids, long numbers and seq
citations in swept rows; :func:`recalled` says whether a summary mentions one. Used by
:mod:`adfkit._analysis.compactions` (the recall columns of ``compactions()``, ``summary_recall()``).
"""

from __future__ import annotations

import re
from typing import Any

from adfkit._analysis.replay import ReplayRow
from adfkit._core.rows import parse_content, strip_summary

_URL = re.compile(r"https?://[^\s\"'<>)\]`]+")


#: Path-like text, as the pattern
#: ``(?<![\w/.:-])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b`` (A: a path with a directory and an
#: extension) ``|\b[\w-]+\.(?:md|json|txt|csv|py|js|ts|ya?ml|html|log)\b`` (B: a bare file
#: name with a known extension) finds it, leftmost first; :func:`_paths` gives the same
#: matches in linear time (that pattern, run by a backtracking engine, rescans a word's rest
#: from every ``-`` in it: quadratic on ``a-a-a-...`` or base64url text).
_EXT = "md|json|txt|csv|py|js|ts|ya?ml|html|log"
#: Where A may start: a run of ``[\w.-]`` (not after ``[\w/.:-]``) followed by ``/``. The
#: lookbehind pins every try to the start of a run, so each run is scanned once.
_A_START = re.compile(r"(?<![\w/.:-])[\w.-]+/")
#: Where B may end: a whole run of ``[\w-]`` followed by ``.ext`` and a word boundary.
_B_RUN = re.compile(rf"(?<![\w-])[\w-]+(?=\.(?:{_EXT})\b)")
_B_EXT = re.compile(rf"\.(?:{_EXT})\b")
_PIECE = re.compile(r"[\w.-]*")
_ALNUM = re.compile(r"[A-Za-z0-9]{1,9}")
_WORD = re.compile(r"\w")
_DASHES = re.compile(r"-*")


def _match_a(t: str, p: int) -> int:
    r"""End of the A match starting at ``p`` (a start of ``_A_START``), or -1.

    The slash-separated pieces of ``[\w.-]`` from ``p``: with as many directories as possible,
    then fewer, the last piece's last dot followed by 1 to 8 ASCII letters or digits and a word
    boundary (the choices the backtracking engine tries first)."""
    n = len(t)
    pieces: list[tuple[int, int]] = []  # every piece from p, each but the last before a "/"
    i = p
    while True:
        e = _PIECE.match(t, i).end()  # type: ignore[union-attr]
        pieces.append((i, e))
        if e == i or e >= n or t[e] != "/":
            break
        i = e + 1
    for c in range(len(pieces) - 1, 0, -1):  # c directories, then the file part
        start, end = pieces[c]
        d = t.rfind(".", start + 1, end)
        while d >= 0:
            m = _ALNUM.match(t, d + 1)
            if m is not None:
                k = m.end()
                if k - d - 1 <= 8 and (k >= n or not _WORD.match(t, k)):
                    return k
            d = t.rfind(".", start + 1, d)
    return -1


def _b_start(t: str, r0: int, r1: int, pos: int) -> int:
    r"""The first word boundary in ``t[max(r0, pos):r1]`` (a run of ``[\w-]``), or -1."""
    q = max(r0, pos)
    if q >= r1:
        return -1
    word = _WORD.match(t, q) is not None
    if q > r0 and word != (_WORD.match(t, q - 1) is not None):
        return q  # a boundary between the previous character and this one
    if word:
        if q == r0:
            return q  # the run starts after a character that is not a word character
        d = t.find("-", q, r1)  # inside a word: the boundary before the next "-"
        return d
    q = _DASHES.match(t, q).end()  # type: ignore[union-attr]
    return q if q < r1 else -1  # after dashes: the boundary before the next word character


def _paths(t: str) -> list[tuple[int, int]]:
    """Spans of the path-like text in ``t``: the matches of the pattern described at
    :data:`_EXT`, in linear time."""
    # A needs a "/", B a known extension: most texts skip one scan or both
    starts = [(m.start(), 0, 0) for m in _A_START.finditer(t)] if "/" in t else []
    runs = [(m.start(), 1, m.end()) for m in _B_RUN.finditer(t)] if _B_EXT.search(t) else []
    out: list[tuple[int, int]] = []
    pos = 0
    for at, kind, r1 in sorted(starts + runs):
        if kind == 0:
            if at < pos:
                continue
            end = _match_a(t, at)
            if end >= 0:
                out.append((at, end))
                pos = end
        else:
            p = _b_start(t, at, r1, pos)
            if p >= 0:
                end = _B_EXT.match(t, r1).end()  # type: ignore[union-attr]
                out.append((p, end))
                pos = end
    return out


_NUMBER = re.compile(r"(?<![\w.#/-])\d{3,}(?![\w/-])")


_CITE = re.compile(r"\[S(\d+)\]")


_MSG_ID = re.compile(r'"(?:id|message_id|thread_id|parent_id)"\s*:\s*"([A-Za-z0-9_-]{8,64})"')


_PATH_KEYS = ("path", "file", "filename", "filepath", "prefix", "dir", "directory")


_ID_KEYS = ("id", "message_id", "msg_id", "thread_id", "parent_id", "reply_to_id")


def _walk_input(x: Any, key: str | None, out: list[tuple[str, str]]) -> None:
    if isinstance(x, dict):
        for k, v in x.items():
            _walk_input(v, str(k), out)
    elif isinstance(x, list):
        for v in x:
            _walk_input(v, key, out)
    elif isinstance(x, str):
        k = (key or "").lower()
        if _URL.fullmatch(x):
            out.append(("url", x))
        elif k in _PATH_KEYS or k == "url":
            out.append(("url" if k == "url" else "path", x))
        elif k in _ID_KEYS:
            out.append(("message_id", x))
        else:
            _scan_text(x, out, numbers=False)
    elif isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 100:
        out.append(("number", str(x)))


def _scan_text(t: str, out: list[tuple[str, str]], *, numbers: bool) -> None:
    for m in _URL.finditer(t):
        out.append(("url", m.group(0).rstrip(".,;:")))
    rest = _URL.sub(" ", t)
    spans = _paths(rest)
    for a, b in spans:
        out.append(("path", rest[a:b]))
    for m in _MSG_ID.finditer(t):
        out.append(("message_id", m.group(1)))
    for m in _CITE.finditer(t):
        out.append(("seq", m.group(1)))
    if numbers:
        for m in _NUMBER.finditer(_without(rest, spans)):
            out.append(("number", m.group(0)))


def _without(t: str, spans: list[tuple[int, int]]) -> str:
    """``t`` with every span replaced by one space."""
    if not spans:
        return t
    parts: list[str] = []
    pos = 0
    for a, b in spans:
        parts += (t[pos:a], " ")
        pos = b
    parts.append(t[pos:])
    return "".join(parts)


def identifiers(rows: list[ReplayRow]) -> list[tuple[str, str, int]]:
    """``(kind, value, first_seq)`` of every identifier in the given rows (deduplicated).

    Kinds: ``path`` (tool-input paths and path-like text), ``url``, ``tool`` (names of tools
    called), ``message_id`` (ids in tool inputs and message JSON), ``number`` (3+ digit numbers
    in message and assistant text, numeric tool inputs >= 100), ``seq`` (the seqs of rows that
    made tool calls, the provenance a summary should cite as ``[S<seq>]``, plus ``[S<n>]``
    citations found in the swept text).
    """
    found: list[tuple[str, str, int]] = []
    seen: set[tuple[str, str]] = set()
    for r in rows:
        if not r.conv:
            continue
        blocks, _ = parse_content(r.content)
        items: list[tuple[str, str]] = []
        for b in blocks:
            t = b.get("type")
            if t == "tool_use":
                items.append(("tool", str(b.get("name"))))
                _walk_input(b.get("input"), None, items)
                items.append(("seq", str(r.seq)))
            elif t == "tool_result":
                c = b.get("content")
                if isinstance(c, str):
                    _scan_text(c, items, numbers=False)
            elif t == "text" and isinstance(b.get("text"), str):
                txt = b["text"]
                if r.kind == "compaction_summary":
                    txt = strip_summary(txt)
                _scan_text(txt, items, numbers=r.kind in ("message", "assistant", "trigger"))
        for k, v in items:
            if (k, v) not in seen:
                seen.add((k, v))
                found.append((k, v, r.seq))
    return found


def recalled(kind: str, value: str, summary: str) -> bool:
    """Whether ``summary`` mentions the identifier: ``S<seq>`` as a whole word for a seq,
    the number not inside a longer number, any other value as a substring."""
    return recalled_all([(kind, value)], summary)[0]


_DIGITS = re.compile(r"\d+")
_SIGNED = re.compile(r"-?\d+")
#: Numbers in a summary, each not inside a longer one: (?<!\d)-?\d+(?!\d) as maximal runs.
_NUMBERS = re.compile(r"(?<!\d)-?\d+")
#: ``S<digits>`` as a whole word.
_SEQ_CITES = re.compile(r"(?<!\w)S(\d+)(?!\w)")


def recalled_all(ids: list[tuple[str, str]], summary: str) -> list[bool]:
    """:func:`recalled` of every ``(kind, value)`` against one summary.

    Numbers and seqs are looked up in the sets of the summary's numbers and ``S<n>`` words,
    found in one scan (not one regular-expression search per identifier)."""
    numbers: set[str] | None = None
    seqs: set[str] | None = None
    out: list[bool] = []
    for kind, value in ids:
        if kind == "seq" and _DIGITS.fullmatch(value):
            if seqs is None:
                seqs = {m.group(1) for m in _SEQ_CITES.finditer(summary)}
            out.append(value in seqs)
        elif kind == "number" and _SIGNED.fullmatch(value):
            if numbers is None:
                numbers = set()
                for m in _NUMBERS.finditer(summary):
                    numbers.add(m.group(0))
                    if m.group(0).startswith("-"):
                        numbers.add(m.group(0)[1:])
            out.append(value in numbers)
        elif kind == "seq":
            out.append(re.search(rf"\bS{re.escape(value)}\b", summary) is not None)
        elif kind == "number":
            out.append(re.search(rf"(?<!\d){re.escape(value)}(?!\d)", summary) is not None)
        else:
            out.append(value in summary)
    return out


#: URLs in text (the pattern :func:`identifiers` uses), for other extractors.
URL = _URL
#: Spans of path-like text (:func:`_paths`), for other extractors.
find_paths = _paths
