"""A ``.jsonl.zst`` stream capped in decompressed bytes (:func:`open_lines` opens either kind of
file) and :func:`check_head`.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from adfkit._base.errors import NotTranscriptError
from adfkit._base.files import open_text_stream, read_head

if TYPE_CHECKING:
    pass

# pandas, the schema and zstandard load on first use: a parser needs neither pandas nor, for
# a plain ``.jsonl``, zstd (``adfkit usage`` reads transcripts without importing pandas).

from adfkit._sources.transcript.lines import ZSTD_MAGIC, sniff

#: Cap on a ``.jsonl.zst`` file: decompressed bytes read, and bytes of lines held, each line
#: counted as at least ``LINE_CHARGE`` bytes (a parsed line costs Python objects whatever its
#: length), so the cap bounds memory, not only bytes (README "Limits").
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024**2
LINE_CHARGE = 1024
#: Compressed bytes fed to zstd at a time (at most 32 MiB out of one feed).
_ZSTD_FEED = 1024


class _RawCapped(io.RawIOBase):
    """The decompressed bytes of a zstd file, frame after frame, stopping after ``limit`` bytes
    (``hit`` set). The input is fed ``_ZSTD_FEED`` bytes at a time, so one step never holds more
    than zstd's largest expansion of that (32 MiB); ``cut`` is set when the file ends inside a
    frame (a file cut mid-write: the complete frames before it are read), ``error`` when the
    data is damaged."""

    def __init__(self, fh: IO[bytes], limit: int) -> None:
        self.fh = fh
        self.left = limit
        self.hit = False
        self.cut = False
        self.error: str | None = None
        self.frames = 0
        import zstandard

        self._zstd_error = zstandard.ZstdError
        self._dctx = zstandard.ZstdDecompressor()
        self._obj: Any = None
        self._pending = b""
        self._out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._out:
            if not self._fill():
                return 0
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def _fill(self) -> bool:
        if self.left <= 0:
            self.hit = True
            return False
        data = self._pending or self.fh.read(_ZSTD_FEED)
        self._pending = b""
        if not data:
            self.cut = self._obj is not None  # the file ended inside a frame
            return False
        if self._obj is None:
            self._obj = self._dctx.decompressobj()
        try:
            out = self._obj.decompress(data)
        except self._zstd_error as e:
            self.error = str(e)[:120]
            return False
        if self._obj.eof:
            self.frames += 1
            self._pending = self._obj.unused_data
            self._obj = None
        if len(out) > self.left:
            out = out[: self.left]
        self.left -= len(out)
        self._out = memoryview(out)
        return True


def zstd_blob(data: bytes, limit: int) -> tuple[bytes, str | None]:
    """One zstd-compressed value held whole (a database row), decompressed by the capped reader
    of ``.zst`` files (:class:`_RawCapped`): ``(bytes, problem)``, ``problem`` None when the
    blob is whole zstd data of at most ``limit`` bytes, else what is wrong (damaged, cut short
    inside a frame, more than ``limit`` bytes: the bytes then stop at the cap).

    Examples
    --------
    >>> import zstandard
    >>> packed = zstandard.ZstdCompressor().compress(b"x" * 100)
    >>> out, problem = zstd_blob(packed, 100)
    >>> len(out), problem
    (100, None)
    >>> zstd_blob(packed[:-4], 100)[1]
    'cut short inside a zstd frame'
    >>> zstd_blob(packed, 10)[1]
    'more than 10 bytes once decompressed'
    """
    raw = _RawCapped(io.BytesIO(data), limit + 1)
    out = io.BufferedReader(raw).read()
    if raw.error is not None:
        return out, f"damaged zstd data ({raw.error})"
    if len(out) > limit:
        return out[:limit], f"more than {limit:,} bytes once decompressed"
    if raw.cut or (data and not raw.frames):
        return out, "cut short inside a zstd frame"
    return out, None


def open_lines(
    path: Path, max_decompressed_bytes: int | None
) -> tuple[IO[bytes], _RawCapped | None, IO[bytes]]:
    """``(stream, zst, file)``: the bytes to read lines from, the capped zstd reader under them
    (None for a plain file) and the file to close. A name ending ``.zst`` is read as zstd when
    ``max_decompressed_bytes`` is given (the format reads compressed files), else as it is."""
    fh = open_text_stream(path)
    if max_decompressed_bytes is not None and path.name.endswith(".zst"):
        raw = _RawCapped(fh, max_decompressed_bytes)
        return io.BufferedReader(raw, buffer_size=1 << 20), raw, fh
    return fh, None, fh


def check_head(path: Path, what: str, *, zst: bool = False) -> None:
    """Raise :class:`NotTranscriptError` when the first bytes of ``path`` cannot start a
    ``what`` (``zst``: a ``.zst`` file the format reads compressed, whose bytes must be zstd)."""
    head = read_head(path)
    if not zst or not path.name.endswith(".zst"):
        sniff(path, head, what)
    elif not head:
        raise NotTranscriptError(f"empty file (0 bytes), not a {what}", path=path)
    elif not head.startswith(ZSTD_MAGIC):
        raise NotTranscriptError(
            f"named .zst but not zstd-compressed data: not a {what}", path=path
        )
