"""File paths and URLs in agent text, found in linear time: :data:`URL` and
:func:`find_paths`, used by the item rules of :mod:`adfkit._analysis.items`.
"""

from __future__ import annotations

import re

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
_SLASH = re.compile("/")
_BEFORE_A = re.compile(r"[\w/.:-]")
_RUN = re.compile(r"[\w-]*")
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


def _a_starts(t: str, rev: str) -> list[int]:
    r"""The starts of :data:`_A_START`'s matches, found from the slashes (fewer than the
    positions the pattern tries): each whole run of ``[\w.-]`` right before a ``/`` that
    follows no ``[\w/.:-]``. ``rev`` is ``t`` reversed: a run ending at ``k`` is one match
    in it, from ``len(t) - k``."""
    n, out = len(t), []
    for m in _SLASH.finditer(t):
        k = m.start()
        p = n - _PIECE.match(rev, n - k).end()  # type: ignore[union-attr]
        if p < k and (p == 0 or not _BEFORE_A.match(t, p - 1)):
            out.append(p)
    return out


def _b_runs(t: str, rev: str) -> list[tuple[int, int]]:
    r"""The spans of :data:`_B_RUN`'s matches, found from the extensions (few): each whole
    run of ``[\w-]`` right before a ``.ext`` (:data:`_B_EXT`). ``rev`` as in
    :func:`_a_starts`."""
    n, out = len(t), []
    for m in _B_EXT.finditer(t):
        d = m.start()
        p = n - _RUN.match(rev, n - d).end()  # type: ignore[union-attr]
        if p < d:
            out.append((p, d))
    return out


def _paths(t: str) -> list[tuple[int, int]]:
    """Spans of the path-like text in ``t``: the matches of the pattern described at
    :data:`_EXT`, in linear time."""
    # A needs a "/", B a known extension: most texts skip one scan or both
    slash, ext = "/" in t, _B_EXT.search(t) is not None
    rev = t[::-1] if slash or ext else ""
    starts = [(p, 0, 0) for p in _a_starts(t, rev)] if slash else []
    runs = [(p, 1, d) for p, d in _b_runs(t, rev)] if ext else []
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


#: URLs in text.
URL = _URL
#: Spans of path-like text (:func:`_paths`).
find_paths = _paths
