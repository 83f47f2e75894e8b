"""Reading an Inspect AI ``.eval`` log (a zip) in place: never extracted, every member capped.

The central directory is read with :mod:`zipfile` (it only reads names, sizes and offsets).
Members are decompressed here, as a stream with a limit:

- ``stored`` (0) and ``deflate`` (8) members through :meth:`zipfile.ZipFile.open` (which
  checks the CRC at the end);
- ``zstd`` (93) members, which Inspect writes by default since 0.3.206 and which
  :mod:`zipfile` cannot decompress before Python 3.14, by reading the member's compressed bytes
  after its local header and streaming them through :mod:`zstandard`; the CRC-32 is checked
  here.

A member whose declared size or whose actual decompressed size passes ``max_member_bytes``
(a zip bomb) is refused with :class:`MemberTooLargeError` before or while it is decompressed;
at most ``max_member_bytes + 64 KiB`` is ever held. Nothing is written anywhere.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
import zstandard

from adfkit._errors import AdfError, NotTranscriptError
from adfkit._transcript import open_text_stream

#: Default cap on one member's decompressed bytes (a sample of a long agent run is tens of MB).
DEFAULT_MAX_MEMBER_BYTES = 256 * 1024**2
#: Default cap on the number of members (the central directory is read whole).
DEFAULT_MAX_MEMBERS = 1_000_000
#: Bytes decompressed per step.
_CHUNK = 64 * 1024
_ZSTD = 93
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", _ZSTD: "zstd"}
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # zipfile.structFileHeader
_LOCAL_MAGIC = b"PK\x03\x04"
ZIP_MAGIC = _LOCAL_MAGIC


class EvalLogError(AdfError):
    """An Inspect ``.eval`` log, or one of its members, cannot be read (damaged zip, a member
    that is not JSON, a compression method adfkit does not read)."""


class MemberTooLargeError(EvalLogError):
    """A member of an ``.eval`` log decompresses (or declares it would) past
    ``max_member_bytes``: possibly a zip bomb."""


@dataclass(frozen=True, slots=True)
class Member:
    """One member of the zip as its central directory states it."""

    name: str
    method: int
    compressed: int
    size: int
    crc: int
    offset: int
    flags: int

    @property
    def method_name(self) -> str:
        return _METHODS.get(self.method, f"method {self.method}")


class _Slice(io.RawIOBase):
    """``n`` bytes of ``fh`` from its current position, then end of file."""

    def __init__(self, fh: IO[bytes], n: int) -> None:
        self.fh = fh
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self.left <= 0:
            return 0
        data = self.fh.read(min(len(b), self.left))
        self.left -= len(data)
        b[: len(data)] = data
        return len(data)


class EvalZip:
    """The members of one ``.eval`` file, read from its central directory (the file is closed
    again at once); :meth:`read` and :meth:`json` open it again for each member.

    Raises :class:`NotTranscriptError` when the file is not a zip (or is one without a central
    directory: a truncated zip), :class:`EvalLogError` when the central directory is damaged.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES,
        max_members: int = DEFAULT_MAX_MEMBERS,
    ) -> None:
        self.path = Path(path)
        self.max_member_bytes = int(max_member_bytes)
        with open_text_stream(self.path, buffering=0) as fh:
            st = os.fstat(fh.fileno())
            self.size = st.st_size
            self._stamp = (st.st_size, st.st_mtime_ns)
            head = fh.read(4)
            if head != _LOCAL_MAGIC:
                what = "an empty file" if not head else "not a zip file"
                raise NotTranscriptError(
                    f"{what} (no zip header): not an Inspect .eval log", path=self.path
                )
            fh.seek(0)
            try:
                with zipfile.ZipFile(fh) as zf:
                    infos = zf.infolist()
            except zipfile.BadZipFile as e:
                raise NotTranscriptError(
                    f"a zip without a readable central directory (truncated or still being "
                    f"written? {str(e)[:80]}): not a readable Inspect .eval log",
                    path=self.path,
                ) from None
            except (OSError, ValueError, EOFError) as e:
                raise EvalLogError(
                    f"the zip's central directory is damaged ({str(e)[:80]})", path=self.path
                ) from None
        if len(infos) > max_members:
            raise EvalLogError(
                f"{len(infos):,} members, more than max_members={max_members:,}", path=self.path
            )
        self.members: dict[str, Member] = {}
        for i in infos:
            if i.is_dir():
                continue
            self.members[i.filename] = Member(
                i.filename, i.compress_type, i.compress_size, i.file_size, i.CRC,
                i.header_offset, i.flag_bits,
            )  # fmt: skip

    def names(self) -> list[str]:
        """Member names in central-directory order."""
        return list(self.members)

    def __contains__(self, name: str) -> bool:
        return name in self.members

    def _fail(self, m: Member, what: str) -> EvalLogError:
        return EvalLogError(f"member {m.name!r}: {what}", path=self.path)

    def read(self, name: str) -> bytes:
        """The decompressed bytes of member ``name``, capped at ``max_member_bytes``.

        Raises :class:`EvalLogError` (missing member, damaged data, CRC mismatch, the file
        changed since the central directory was read, encrypted or unknown method) or
        :class:`MemberTooLargeError`.
        """
        m = self.members.get(name)
        if m is None:
            raise EvalLogError(f"no member {name!r} in the zip", path=self.path)
        cap = self.max_member_bytes
        if m.size > cap:
            raise MemberTooLargeError(
                f"member {m.name!r} declares {m.size:,} bytes uncompressed, more than "
                f"max_member_bytes={cap:,} (a zip bomb?); not read",
                path=self.path,
            )
        if m.flags & 0x1:
            raise self._fail(m, "encrypted; adfkit does not read encrypted members")
        if m.method not in _METHODS:
            raise self._fail(m, f"compression {m.method_name} is not one adfkit reads")
        with open_text_stream(self.path, buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if (st.st_size, st.st_mtime_ns) != self._stamp:
                raise self._fail(m, "the file changed since it was opened; open it again")
            try:
                if m.method == _ZSTD:
                    return self._zstd(m, fh, cap)
                return self._zipfile(m, fh, cap)
            except (zipfile.BadZipFile, zlib.error, zstandard.ZstdError, EOFError) as e:
                raise self._fail(m, f"damaged data ({str(e)[:100]})") from None

    def _zipfile(self, m: Member, fh: IO[bytes], cap: int) -> bytes:
        with zipfile.ZipFile(fh) as zf, zf.open(m.name) as f:
            return _capped(f, cap, lambda: self._too_large(m))

    def _zstd(self, m: Member, fh: IO[bytes], cap: int) -> bytes:
        fh.seek(m.offset)
        hdr = fh.read(_LOCAL.size)
        if len(hdr) != _LOCAL.size or hdr[:4] != _LOCAL_MAGIC:
            raise self._fail(m, "no local file header at the offset the central directory states")
        f = _LOCAL.unpack(hdr)
        fh.seek(m.offset + _LOCAL.size + f[10] + f[11])
        src = io.BufferedReader(_Slice(fh, m.compressed), buffer_size=_CHUNK)
        reader = zstandard.ZstdDecompressor().stream_reader(src, read_across_frames=True)
        data = _capped(reader, cap, lambda: self._too_large(m))
        if len(data) != m.size:
            raise self._fail(
                m, f"decompressed to {len(data):,} bytes, the zip states {m.size:,} (damaged)"
            )
        if zlib.crc32(data) != m.crc:
            raise self._fail(m, "CRC-32 mismatch (damaged data)")
        return data

    def _too_large(self, m: Member) -> MemberTooLargeError:
        return MemberTooLargeError(
            f"member {m.name!r} decompresses past max_member_bytes={self.max_member_bytes:,} "
            f"bytes (it declares {m.size:,}; a zip bomb?); not read",
            path=self.path,
        )

    def json(self, name: str) -> Any:
        """Member ``name`` parsed as JSON (raises :class:`EvalLogError` naming the member when
        it is not valid JSON)."""
        data = self.read(name)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as e:
            raise EvalLogError(
                f"member {name!r} is not valid JSON ({str(e)[:80]})", path=self.path
            ) from None


def _capped(f: Any, cap: int, too_large: Any) -> bytes:
    """Everything ``f.read`` gives, ``_CHUNK`` bytes at a time, or ``too_large()`` raised as
    soon as more than ``cap`` bytes came out."""
    parts: list[bytes] = []
    n = 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        n += len(chunk)
        if n > cap:
            raise too_large()
        parts.append(chunk)
    return b"".join(parts)
