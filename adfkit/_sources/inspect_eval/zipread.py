"""Reading an Inspect AI ``.eval`` log (a zip) in place: never extracted, every member capped.

The central directory is read with :mod:`zipfile` (it only reads names, sizes and offsets).
Members are decompressed here, as a stream with a limit:

- each member's compressed bytes are read after its local header and streamed through
  :mod:`zlib` (``deflate``, 8), :mod:`zstandard` (``zstd``, 93: Inspect's default since
  0.3.206, which :mod:`zipfile` cannot decompress before Python 3.14) or copied (``stored``,
  0); the size and the CRC-32 the zip states are checked.

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

from adfkit._base.errors import AdfError, NotTranscriptError
from adfkit._base.files import open_text_stream
from adfkit._base.js import MAX_DEPTH, too_deep, too_many_containers

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

    A zip without its central directory (a cut file) is read from its local headers: the
    complete members before the cut, ``recovered`` saying so. Raises
    :class:`NotTranscriptError` when the file is not a zip (or a cut one with no complete
    member), :class:`EvalLogError` when the central directory is damaged.
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
        try:
            self._read_directory(max_members)
        except OSError as e:  # a read that fails (a link to /proc/self/mem, a failing disk)
            raise EvalLogError(f"cannot read the file: {e.strerror or e}", path=self.path) from None

    def _read_directory(self, max_members: int) -> None:
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
            #: Set when the central directory is missing (a cut file): the members were
            #: found by walking the local headers, and this says how far that got.
            self.recovered: str | None = None
            self.members: dict[str, Member] = {}
            #: Names the central directory holds more than once (the last entry is read).
            self.duplicates: list[str] = []
            try:
                with zipfile.ZipFile(fh) as zf:
                    infos = zf.infolist()
            except zipfile.BadZipFile as e:
                why = str(e)[:80]
                self._walk_local(fh, max_members)
                if not self.members:
                    raise NotTranscriptError(
                        f"a zip without a readable central directory and no complete member "
                        f"(truncated or still being written? {why}): not a readable Inspect "
                        ".eval log",
                        path=self.path,
                    ) from None
                return
            except (OSError, ValueError, EOFError) as e:
                raise EvalLogError(
                    f"the zip's central directory is damaged ({str(e)[:80]})", path=self.path
                ) from None
        if len(infos) > max_members:
            raise EvalLogError(
                f"{len(infos):,} members, more than max_members={max_members:,}", path=self.path
            )
        for i in infos:
            if i.is_dir():
                continue
            if i.filename in self.members:
                self.duplicates.append(i.filename)
            self.members[i.filename] = Member(
                i.filename, i.compress_type, i.compress_size, i.file_size, i.CRC,
                i.header_offset, i.flag_bits,
            )  # fmt: skip
        self._refuse_overlaps(infos)

    def _refuse_overlaps(self, infos: list[zipfile.ZipInfo]) -> None:
        """:class:`EvalLogError` when two members' bytes overlap (each entry's local header
        and compressed data, in offset order): a zip no writer makes, whose members would each
        decompress the same bytes again (24 of 250 MB took 41 s)."""
        spans = sorted(
            (i.header_offset, i.header_offset + _LOCAL.size + len(i.orig_filename.encode())
             + i.compress_size, i.filename)
            for i in infos
        )  # fmt: skip
        for (_, end, a), (start, _, b) in zip(spans, spans[1:], strict=False):
            if start < end:
                raise EvalLogError(
                    f"members {a!r} and {b!r} overlap (bytes {start:,}-{end:,} belong to both): "
                    "a crafted zip; not read",
                    path=self.path,
                )

    def _walk_local(self, fh: IO[bytes], max_members: int) -> None:
        """The members of a zip whose central directory is gone (the file was cut): walk the
        local headers from the start, keeping each member whose data is complete. A header
        that defers its sizes to a data descriptor (flag bit 3) ends the walk (its size is
        unknown without the central directory)."""
        off = 0
        while len(self.members) < max_members:
            fh.seek(off)
            hdr = fh.read(_LOCAL.size)
            if len(hdr) < _LOCAL.size or hdr[:4] != _LOCAL_MAGIC:
                break
            f = _LOCAL.unpack(hdr)
            flags, method, crc, csize, size, nlen, xlen = f[3], f[4], f[7], f[8], f[9], f[10], f[11]
            if flags & 0x8 or csize == 0xFFFFFFFF:
                break  # sizes in a data descriptor or zip64: not known here
            name = fh.read(nlen).decode("utf-8" if flags & 0x800 else "cp437", "replace")
            end = off + _LOCAL.size + nlen + xlen + csize
            if end > self.size:
                break  # this member's data was cut
            if name in self.members:
                self.duplicates.append(name)
            self.members[name] = Member(name, method, csize, size, crc, off, flags)
            off = end
        self.recovered = (
            f"the zip has no central directory (the file was cut, or is still being written): "
            f"{len(self.members)} complete member(s) read from the local headers, up to byte "
            f"{off:,} of {self.size:,}"
        )

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
                return self._member(m, fh, cap)
            except (zlib.error, zstandard.ZstdError, EOFError) as e:
                raise self._fail(m, f"damaged data ({str(e)[:100]})") from None
            except OSError as e:
                raise self._fail(m, f"cannot be read ({e.strerror or e})") from None

    def _member(self, m: Member, fh: IO[bytes], cap: int) -> bytes:
        fh.seek(m.offset)
        hdr = fh.read(_LOCAL.size)
        if len(hdr) != _LOCAL.size or hdr[:4] != _LOCAL_MAGIC:
            raise self._fail(m, "no local file header at the offset the central directory states")
        f = _LOCAL.unpack(hdr)
        fh.seek(m.offset + _LOCAL.size + f[10] + f[11])
        src = io.BufferedReader(_Slice(fh, m.compressed), buffer_size=_CHUNK)
        reader: Any
        if m.method == _ZSTD:
            reader = zstandard.ZstdDecompressor().stream_reader(src, read_across_frames=True)
        elif m.method == zipfile.ZIP_DEFLATED:
            reader = _Inflate(src)
        else:
            reader = src
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
        many = too_many_containers(data)
        if many is not None:
            raise EvalLogError(f"member {name!r} {many}; adfkit does not read it", path=self.path)
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as e:
            raise EvalLogError(
                f"member {name!r} is not valid JSON ({str(e)[:80]})", path=self.path
            ) from None
        place = too_deep(value)
        if place is not None:
            raise EvalLogError(
                f"member {name!r} is nested more than {MAX_DEPTH} levels deep (at {place}); "
                "adfkit does not read it",
                path=self.path,
            )
        return value


class _Inflate:
    """Raw deflate data decompressed ``n`` bytes at a time at most (``read(n)``)."""

    def __init__(self, src: IO[bytes]) -> None:
        self.src = src
        self.d = zlib.decompressobj(-15)
        self.done = False

    def read(self, n: int) -> bytes:
        while not self.done:
            if self.d.unconsumed_tail:
                out = self.d.decompress(self.d.unconsumed_tail, n)
            else:
                chunk = self.src.read(_CHUNK)
                if not chunk:
                    self.done = True
                    return self.d.flush()
                out = self.d.decompress(chunk, n)
            if self.d.eof:
                self.done = True
            if out:
                return out
        return b""


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
