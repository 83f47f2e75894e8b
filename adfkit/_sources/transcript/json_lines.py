""":class:`JsonLines`: each line's JSON object with the caps and findings every format needs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import orjson

from adfkit._base.js import MAX_DEPTH, openers, too_deep, too_many_containers

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).

from adfkit._sources.transcript.findings import Findings
from adfkit._sources.transcript.lines import (
    _CHECKED_LINE,
    DEFAULT_MAX_LINE_BYTES,
    loads_line,
    skip_bom,
)
from adfkit._sources.transcript.zstd_stream import LINE_CHARGE, _RawCapped, open_lines

#: Lines longer than this are checked for nesting deeper than :data:`MAX_DEPTH` (a shorter one
#: cannot hold that many brackets).
_DEEP_LINE = 2 * MAX_DEPTH


class Narrow(NamedTuple):
    """A format's most common lines read for the few fields it takes of them, not parsed whole.

    A whole line under 1 MiB, all ASCII, holding ``marker`` is decoded by ``decode`` (a msgspec
    decoder of a Struct naming only those fields, strictly typed: a line of another shape fails
    it) and handed to ``take(line_number, value)``, which keeps what it needs and returns True;
    when decoding fails, or ``take`` returns False, the line is parsed whole as any other.

    The decoder validates the whole line as JSON, skipping what it does not name: such a line is
    read as orjson would read it, except that a number beyond a double's range (valid JSON,
    which orjson refuses) or nesting deeper than :data:`MAX_DEPTH` in a part it skips does not
    make it unreadable (that part is never held nor walked).
    """

    marker: bytes
    decode: Callable[[bytes], Any]
    take: Callable[[int, Any], bool]


#: What a narrow decoder raises on a line it cannot read (msgspec's ``DecodeError`` and
#: ``ValidationError`` are ``ValueError``s; nesting beyond the interpreter's limit a
#: ``RecursionError``): the line is then parsed whole.
_NARROW_FAILS = (ValueError, RecursionError)
#: No narrow reading (an empty marker is never looked for).
_NO_NARROW = Narrow(b"", bytes, lambda _n, _v: False)


class JsonLines:
    """The JSON objects of a JSONL transcript, one per line, with what every format's reader
    does about bad lines: iterating yields ``(line_number, object)``.

    - a UTF-8 byte-order mark before the first line is stepped over; blank lines are skipped;
    - a line over ``max_line_bytes`` is dropped unread (``huge_line``);
    - a line that is not JSON is repaired if it can be (non-UTF-8 bytes, lone surrogates:
      ``encoding``, and :attr:`repaired` maps its number to what was done), else skipped
      (``bad_json``; ``truncated_last_line`` for a last line without its newline, a file still
      being written);
    - a JSON value that is not an object is skipped (``not_an_object``);
    - lines starting with one of ``skip`` (records the format never uses, written with their
      ``type`` first) are counted in :attr:`n_skipped`, not parsed;
    - lines a :class:`Narrow` (``narrow``) takes are not yielded;
    - a ``.zst`` file (when ``max_decompressed_bytes`` is given) is read as a capped zstd
      stream: decompressed bytes and bytes of lines held (each at least :data:`LINE_CHARGE`)
      stop at the cap (``decompressed_size_cap``), a damaged or cut stream is reported
      (``zstd_error``, ``zstd_cut``).

    ``noun`` names the file in findings ("the session is probably still being written").
    :attr:`n_parsed` counts the lines that parsed as JSON (objects or not), :attr:`n_huge` the
    lines dropped unread, :attr:`first_bad_line` is the first complete line that was not JSON
    (a format whose records count lines knows each line's place from these). The file is
    closed when the iteration ends. Iterate once.
    """

    def __init__(
        self,
        path: Path,
        fnd: Findings,
        noun: str,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_decompressed_bytes: int | None = None,
        skip: tuple[bytes, ...] = (),
        narrow: Narrow | None = None,
    ) -> None:
        self.path = path
        self.fnd = fnd
        self.noun = noun
        self.max_line_bytes = max_line_bytes
        self.max_decompressed_bytes = max_decompressed_bytes
        self.skip = skip
        self.narrow = narrow
        self.n_parsed = 0
        self.n_skipped = 0
        self.n_huge = 0
        self.first_bad_line: int | None = None
        self.repaired: dict[int, str] = {}

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        stream, raw, fh = open_lines(self.path, self.max_decompressed_bytes)
        try:
            yield from self._objects(stream, raw)
            if raw is not None:
                self._zst_findings(raw)
        finally:
            fh.close()

    def _objects(
        self, stream: IO[bytes], raw: _RawCapped | None
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        skip_bom(stream)
        readline = stream.readline
        limit = self.max_line_bytes + 1
        cap = self.max_decompressed_bytes or 0
        held = 0  # bytes of lines held, each counted as at least LINE_CHARGE (.zst only)
        skip = self.skip
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        marker, narrow, take = self.narrow or _NO_NARROW
        n = 0
        while True:  # once per line of a large file: the usual case in as few steps as can be
            data = readline(limit)
            if not data:
                return
            n += 1
            whole = data[-1] == 10
            if whole or len(data) < limit:
                if raw is not None and not data.isspace():
                    held += max(LINE_CHARGE, len(data))
                    if held > cap:
                        raw.hit = True
                        return
                if whole and data[0] == 123:  # a whole line opening an object: the usual case
                    if skip and data.startswith(skip):
                        self.n_skipped += 1
                        continue
                    if len(data) >= _CHECKED_LINE:
                        if self._too_many(n, data):
                            continue
                    elif marker and marker in data and data.isascii():
                        try:
                            value = narrow(data)
                        except _NARROW_FAILS:
                            pass
                        else:
                            if take(n, value):
                                self.n_parsed += 1
                                continue
                    try:
                        obj = loads(data)  # a line opening "{" that parses is an object
                    except decode_error:
                        obj = self._rare(n, data, True)
                        if obj is None:
                            continue
                    else:
                        self.n_parsed += 1
                    if (  # _too_deep's own first test, before a call of it
                        len(data) > _DEEP_LINE
                        and openers(data) > MAX_DEPTH
                        and self._too_deep(n, data, obj)
                    ):
                        continue
                    yield n, obj
                    continue
                if not data.isspace():  # a line that does not open an object, or the last one
                    obj = self._rare(n, data, whole)
                    if obj is not None and not (
                        len(data) > _DEEP_LINE and self._too_deep(n, data, obj)
                    ):
                        yield n, obj
                if whole:
                    continue
                return  # the last line, without its newline
            while True:  # longer than the cap: drop the rest of the line
                chunk = readline(1 << 20)
                if not chunk or chunk[-1:] == b"\n":
                    break
            if raw is not None:
                held += LINE_CHARGE
                if held > cap:
                    raw.hit = True
                    return
            self.n_huge += 1
            self.fnd.add(
                "huge_line",
                "warning",
                n,
                f"line longer than max_line_bytes={self.max_line_bytes:,}; skipped",
            )

    def _too_many(self, n: int, data: bytes) -> bool:
        """Whether line ``n`` holds too many lists and objects to parse (then a finding)."""
        many = too_many_containers(data)
        if many is not None:
            self.fnd.add("too_many_containers", "warning", n, f"{many}; line not parsed")
        return many is not None

    def _too_deep(self, n: int, data: bytes, obj: Any) -> bool:
        """Whether line ``n`` nests lists and objects more than :data:`MAX_DEPTH` levels deep
        (then a finding naming the place, and the line is not read: serialising its content
        again, and every recursive walk after, cannot take it). Only walked when the line holds
        enough brackets to be that deep."""
        if openers(data) <= MAX_DEPTH:
            return False
        place = too_deep(obj)
        if place is not None:
            self.fnd.add(
                "too_deep",
                "warning",
                n,
                f"nested more than {MAX_DEPTH} levels deep (at {place}); line not read",
            )
        return place is not None

    def _rare(self, n: int, data: bytes, complete: bool) -> dict[str, Any] | None:
        """A line off the usual path: not valid JSON (repaired if it can be), not an object,
        or the last line without its newline."""
        obj, problem = loads_line(data)
        if obj is None:
            if not complete:
                self.fnd.add(
                    "truncated_last_line",
                    "warning",
                    n,
                    f"last line is incomplete (no newline, not valid JSON): the {self.noun} is "
                    "probably still being written; read up to the line before",
                )
            else:
                self.fnd.add("bad_json", "warning", n, f"{problem}; line skipped")
                if self.first_bad_line is None:
                    self.first_bad_line = n
            return None
        self.n_parsed += 1
        if problem is not None:
            self.fnd.add("encoding", "warning", n, problem)
            self.repaired[n] = problem
        if type(obj) is not dict:
            self._not_an_object(n)
            return None
        return obj

    def _not_an_object(self, n: int) -> None:
        self.fnd.add("not_an_object", "warning", n, "line is JSON but not an object; skipped")

    def _zst_findings(self, raw: _RawCapped) -> None:
        if raw.hit:
            self.fnd.add(
                "decompressed_size_cap",
                "error",
                None,
                f"stopped after max_decompressed_bytes={self.max_decompressed_bytes:,} bytes",
            )
        if raw.error is not None:
            self.fnd.add("zstd_error", "error", None, f"zstd stream is damaged ({raw.error})")
        elif raw.cut and not raw.hit:
            self.fnd.add(
                "zstd_cut",
                "warning",
                None,
                f"the zstd stream ends inside a frame (cut mid-write?): read the lines of the "
                f"{raw.frames} complete frame(s) before it",
            )
