"""Reading JSON lines: recognising what cannot be a transcript (:func:`sniff`), the byte-order mark,
lines cut at ``max_line_bytes``, the head's objects, and one line's JSON with lone surrogates
repaired (:func:`loads_line`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from adfkit._base.errors import NotTranscriptError
from adfkit._base.js import too_many_containers

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).


#: Default cap on one line; longer lines are skipped with a finding (real lines reach ~1 MB).
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024


#: A UTF-8 byte-order mark: some tools write one before the first record.
UTF8_BOM = b"\xef\xbb\xbf"
_SQLITE_MAGIC = b"SQLite format 3\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def sniff(path: Path, head: bytes, what: str) -> None:
    """Raise :class:`NotTranscriptError` when ``head`` (the first bytes) cannot start a JSONL
    transcript."""
    if not head:
        raise NotTranscriptError(f"empty file (0 bytes), not a {what}", path=path)
    if head.startswith(_SQLITE_MAGIC):
        raise NotTranscriptError(
            f"a SQLite database (an .adf agent file?), not a {what}; open it with adfkit.open_adf",
            path=path,
        )
    if head.startswith(ZSTD_MAGIC):
        raise NotTranscriptError(
            f"zstd-compressed data, not a {what}; name it *.jsonl.zst to read it", path=path
        )
    stripped = head.removeprefix(UTF8_BOM).lstrip(b" \t\r\n")
    if not stripped and len(head) < 4096:
        raise NotTranscriptError(f"only whitespace, not a {what}", path=path)
    if stripped and stripped[:1] != b"{":
        kind = (
            "binary data" if b"\x00" in head[:512] or head[:8] == b"\x89PNG\r\n\x1a\n" else "text"
        )
        raise NotTranscriptError(
            f"the first bytes are {kind}, not a JSON object: not a {what}", path=path
        )


def skip_bom(stream: IO[bytes]) -> None:
    """Step over a UTF-8 byte-order mark at the start of ``stream`` (an editor or a Windows tool
    may write one): it is not part of the first record, whose line would else not parse."""
    peek = getattr(stream, "peek", None)
    head = peek(3)[:3] if peek is not None else b""
    if head == UTF8_BOM:
        stream.read(3)


def iter_lines(stream: IO[bytes], max_line_bytes: int) -> Iterator[tuple[int, bytes | None, bool]]:
    """Yield ``(line_number, data, complete)`` for each non-blank line of ``stream``.

    ``data`` is None for a line longer than ``max_line_bytes`` (its bytes are read and dropped a
    MiB at a time, never held whole). ``complete`` is False only for a final line without its
    newline (a line still being written).
    """
    skip_bom(stream)
    n = 0
    limit = max_line_bytes + 1
    readline = stream.readline
    while True:
        data = readline(limit)
        if not data:
            return
        n += 1
        if data[-1:] == b"\n":
            if len(data) > 1 and not data.isspace():
                yield n, data, True
            continue
        if len(data) < limit:  # EOF without a newline
            if not data.isspace():
                yield n, data, False
            return
        # longer than the cap: drop the rest of the line
        while True:
            chunk = readline(1 << 20)
            if not chunk or chunk[-1:] == b"\n":
                break
        yield n, None, bool(chunk)


def head_objects(stream: IO[bytes], max_lines: int) -> Iterator[dict[str, Any]]:
    """The JSON objects among the first ``max_lines`` non-blank lines of ``stream``, for a
    quick look at a file (a listing, a link to its session): a line too long (over 8 MiB),
    not JSON or not an object is passed over, with no finding."""
    for _, data, _c in iter_lines(stream, 8 << 20):
        if max_lines <= 0:
            return
        max_lines -= 1
        obj = loads_line(data)[0] if data is not None else None
        if type(obj) is dict:
            yield obj


_LONE_SURROGATE = re.compile(
    r"(?<!\\)(\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)(\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _fix_surrogate(m: re.Match[str]) -> str:
    prefix = m.group(1) or m.group(2) or ""
    return prefix + "\\ufffd"


#: Lines at least this long are checked for too many lists and objects before parsing (a
#: shorter one holds at most 500,000: about 35 MB parsed).
_CHECKED_LINE = 1 << 20


def loads_line(data: bytes) -> tuple[Any, str | None]:
    """Parse one JSON line. Returns ``(value, problem)``.

    The common case is one ``orjson.loads``. When that fails, the line is decoded as UTF-8 with
    replacement and lone surrogate escapes are replaced by U+FFFD; if that parses, ``problem``
    names what was repaired (``"non-UTF-8 bytes replaced"``...), else ``value`` is None and
    ``problem`` says why (never echoing the line's content). A line of 1 MiB or more holding
    more lists and objects than :func:`adfkit._base.js.too_many_containers` allows is not
    parsed (its memory would be many times its size).
    """
    if len(data) >= _CHECKED_LINE and (many := too_many_containers(data)) is not None:
        return None, f"not parsed: {many}"
    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError as e:
        msg = str(e)
    if "depth limit" in msg or "recursion" in msg.lower():
        return None, "JSON nested too deeply (over 1024 levels)"
    text = data.decode("utf-8", errors="replace")
    repaired = []
    if "\ufffd" in text and b"\xef\xbf\xbd" not in data:
        repaired.append("non-UTF-8 bytes replaced")
    if "surrogate" in msg:
        text2 = _LONE_SURROGATE.sub(_fix_surrogate, text)
        if text2 != text:
            repaired.append("lone surrogate escapes replaced")
            text = text2
    if repaired:
        try:
            return orjson.loads(text), "; ".join(repaired)
        except orjson.JSONDecodeError:
            pass
    return None, "not valid JSON"
