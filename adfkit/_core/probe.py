"""What format recognition sees of one input (:class:`Probe`): its path, whether it is a
folder, and a file's first bytes and records, read once and only when a format's ``claims``
asks (the formats: :mod:`adfkit._core.registry`)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from adfkit._base.errors import AdfError
from adfkit._base.files import open_text_stream

#: Bytes of a file recognition reads (a folder: none).
HEAD_BYTES = 256 * 1024
UTF8_BOM = b"\xef\xbb\xbf"


class Probe:
    """What recognition sees of one input: its path, whether it is a folder, and (for a file)
    its first :data:`HEAD_BYTES` bytes, read on first use (a spec that decides by name reads
    nothing, so an ``.adf`` file's own reader reports what is wrong with it)."""

    def __init__(self, path: Path, head: bytes | None = None) -> None:
        self.path = path
        self.is_dir = path.is_dir()
        #: Why the head could not be read (None: it could, or was not needed).
        self.error: AdfError | None = None
        if head is not None or self.is_dir:
            self.__dict__["head"] = head or b""

    @property
    def name(self) -> str:
        """The file or folder name, lower case."""
        return self.path.name.lower()

    @cached_property
    def head(self) -> bytes:
        """The first :data:`HEAD_BYTES` bytes of the file (b"" for a folder, and for a file that
        cannot be read: :attr:`error` then says why, and is raised when no format claims it
        by name)."""
        try:
            with open_text_stream(self.path, buffering=0) as f:  # a FIFO never blocks
                return f.read(HEAD_BYTES)
        except AdfError as exc:
            self.error = exc
        except OSError as exc:
            self.error = AdfError(f"cannot read the file: {exc.strerror}", path=self.path)
        return b""

    @cached_property
    def records(self) -> list[dict[str, Any]]:
        """The JSON objects on the first 50 complete lines of the head (lines that are not
        JSON objects are skipped; a byte-order mark is no content)."""
        out: list[dict[str, Any]] = []
        for line in _first_lines(self.head, 50):
            line = line.removeprefix(UTF8_BOM).strip()
            if not line.startswith(b"{"):
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
        return out

    @cached_property
    def first_line(self) -> bytes:
        """The opening bytes (at most 4 KiB) of the first line, without a byte-order mark: what a
        spec can look at when that line is longer than the head."""
        return self.head.removeprefix(UTF8_BOM).lstrip(b" \t\r\n")[:4096]


def _first_lines(data: bytes, n: int) -> list[bytes]:
    """The first ``n`` complete lines of ``data`` (without their newline): what
    ``data.split(b"\\n", n)[:-1]`` gives, without copying the rest of ``data`` (most of a head).

    Examples
    --------
    >>> _first_lines(b"a\\nb\\nc", 5), _first_lines(b"a\\nb\\nc\\n", 2)
    ([b'a', b'b'], [b'a', b'b'])
    """
    out = []
    find, start = data.find, 0
    for _ in range(n):
        end = find(b"\n", start)
        if end < 0:
            break
        out.append(data[start:end])
        start = end + 1
    return out
