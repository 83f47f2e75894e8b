"""Following a file that grows by appended lines (a running agent's JSONL transcript), reading
only what was appended since the last look.

:class:`Tail` keeps its place in the file: each :meth:`Tail.poll` reads from there to the end,
hands back the complete lines and keeps a half-written last line for the next poll, so an
update costs in proportion to the bytes appended, never to the file (:attr:`Tail.bytes_read`
counts every byte read, for the tests). A file that was rewritten or cut (shorter than the
place, another file under the name, or different bytes where the place's line ended) is read
again from its start, and the poll says so (``rewritten``). The file is opened read-only for
each poll and never written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from adfkit._base.files import open_text_stream

#: Bytes read at a time.
CHUNK = 1 << 20
#: Bytes before the place compared with what was read there: a file rewritten under the same
#: name and at least as long is told apart from one that grew.
CHECK = 64


@dataclass
class Poll:
    """What one :meth:`Tail.poll` found: the complete ``lines`` appended (without their line
    ends), and ``rewritten`` when the file was read again from its start (with ``why``)."""

    lines: list[bytes] = field(default_factory=list)
    rewritten: bool = False
    why: str = ""


class Tail:
    """The appended lines of the file at ``path``, poll after poll (see the module's text).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "s.jsonl")
    >>> _ = open(p, "wb").write(b'{"a":1}\\n{"b"')
    >>> t = Tail(p)
    >>> t.poll().lines
    [b'{"a":1}']
    >>> _ = open(p, "ab").write(b':2}\\n')
    >>> t.poll().lines, t.bytes_read  # 12 bytes, then the 8 before the place again, then 8
    ([b'{"b":2}'], 28)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.offset = 0  # the end of the last complete line handed back
        self.bytes_read = 0
        self._ino: tuple[int, int] | None = None
        self._before = b""  # the CHECK bytes before ``offset`` as last read

    def poll(self) -> Poll:
        """The complete lines appended since the last poll (all of them on the first)."""
        st = os.stat(self.path)
        out = Poll()
        ino = (st.st_dev, st.st_ino)
        why = ""
        if self._ino is not None and ino != self._ino:
            why = "replaced by another file"
        elif st.st_size < self.offset:
            why = f"cut to {st.st_size:,} bytes (it had {self.offset:,})"
        elif self.offset and self._read_at(self.offset - len(self._before), len(self._before)) != (
            self._before
        ):
            why = "rewritten (its bytes changed)"
        if why:
            out.rewritten, out.why = True, why
            self.offset, self._before = 0, b""
        self._ino = ino
        if st.st_size == self.offset:
            return out
        data = self._read_at(self.offset, st.st_size - self.offset)
        end = data.rfind(b"\n") + 1  # a half-written last line waits for the next poll
        if end:
            out.lines = data[: end - 1].split(b"\n")
            self.offset += end
            self._before = (self._before + data[:end])[-CHECK:]
        return out

    def _read_at(self, start: int, n: int) -> bytes:
        with open_text_stream(self.path, buffering=0) as f:
            f.seek(start)
            parts, left = [], n
            while left > 0:
                got = f.read(min(CHUNK, left))
                if not got:
                    break
                parts.append(got)
                left -= len(got)
        data = b"".join(parts)
        self.bytes_read += len(data)
        return data
