"""Audit blob decoding: capped Brotli stream, then JSON. No SQL, no pandas here."""

from __future__ import annotations

from typing import Any

import brotli
import orjson

from ._errors import BlobError, BlobTooLargeError

#: Default cap on one decompressed audit blob (``open_adf(max_blob_bytes=...)``).
DEFAULT_MAX_BLOB_BYTES = 256 * 1024 * 1024

#: Sources whose blob is a JSON array of rows; the others decode to one object.
ARRAY_SOURCES = frozenset({"loop", "inbox", "outbox"})
OBJECT_SOURCES = frozenset({"inbox_message", "outbox_message", "file"})


def decompress(
    data: bytes | memoryview, *, limit: int, path: str | None = None, audit_id: int | None = None
) -> bytes:
    """Brotli-decompress ``data``, raising :class:`BlobTooLargeError` past ``limit`` bytes.

    The output buffer never grows past ``limit + 1`` bytes, so a decompression bomb costs at
    most that much memory.
    """
    where = f"adf_audit id={audit_id}"
    if not isinstance(data, bytes | bytearray | memoryview):
        raise BlobError(
            f"{where}: data is {type(data).__name__}, expected a Brotli-compressed BLOB",
            path=path,
        )
    d = brotli.Decompressor()
    try:
        out = d.process(bytes(data), output_buffer_limit=limit + 1)
    except brotli.error:
        raise BlobError(
            f"{where}: data is not valid Brotli (expected Brotli-compressed JSON)", path=path
        ) from None
    if len(out) > limit or (not d.is_finished() and not d.can_accept_more_data()):
        raise BlobTooLargeError(
            f"{where}: blob decompresses past the cap of {limit:,} bytes "
            f"({len(data):,} compressed); raise max_blob_bytes to read it",
            path=path,
        )
    if not d.is_finished():
        raise BlobError(f"{where}: Brotli stream is truncated", path=path)
    return out


def parse(raw: bytes, *, path: str | None = None, audit_id: int | None = None) -> Any:
    """Parse decompressed blob bytes as UTF-8 JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        kind = "UTF-8" if "utf-8" in str(exc).lower() else "JSON"
        raise BlobError(
            f"adf_audit id={audit_id}: decompressed data is not valid {kind} ({exc})", path=path
        ) from None


def decode(
    data: bytes | memoryview,
    source: str,
    *,
    limit: int = DEFAULT_MAX_BLOB_BYTES,
    path: str | None = None,
    audit_id: int | None = None,
) -> Any:
    """Decompress, parse and check the shape of one audit blob for its ``source``."""
    value = parse(
        decompress(data, limit=limit, path=path, audit_id=audit_id), path=path, audit_id=audit_id
    )
    if source in ARRAY_SOURCES and not isinstance(value, list):
        raise BlobError(
            f"adf_audit id={audit_id}: source {source!r} should decode to a JSON array, "
            f"got {type(value).__name__}",
            path=path,
        )
    if source in OBJECT_SOURCES and not isinstance(value, dict):
        raise BlobError(
            f"adf_audit id={audit_id}: source {source!r} should decode to a JSON object, "
            f"got {type(value).__name__}",
            path=path,
        )
    if source == "loop":
        for i, el in enumerate(value):
            if not isinstance(el, dict) or not isinstance(el.get("seq"), int):
                raise BlobError(
                    f"adf_audit id={audit_id}: element {i} of the loop blob is not a row "
                    "with an integer seq",
                    path=path,
                )
    return value


def js_length(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript counts it."""
    n = len(text)
    if text.isascii():
        return n
    return n + sum(1 for ch in text if ord(ch) > 0xFFFF)
