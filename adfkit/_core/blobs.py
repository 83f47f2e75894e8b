"""Audit blobs: capped Brotli decompression, then JSON, checked for the shape of their source.

No SQL and no pandas here; the ADF reader hands in the stored bytes."""

from __future__ import annotations

from typing import Any

import brotli

from adfkit._base.errors import BlobError, BlobTooLargeError
from adfkit._base.js import JSONError, parse_json

#: Default cap on one decompressed audit blob (``open_adf(max_blob_bytes=...)``).
DEFAULT_MAX_BLOB_BYTES = 256 * 1024 * 1024

#: Sources whose blob is a JSON array of rows; the others decode to one object.
ARRAY_SOURCES = frozenset({"loop", "inbox", "outbox"})
OBJECT_SOURCES = frozenset({"inbox_message", "outbox_message", "file"})


#: Output produced per Brotli call. Small enough that a decompression bomb overshoots the cap by
#: at most a few MiB; large enough that a typical blob decodes in one call.
_STEP = 4 * 1024 * 1024


def decompress(
    data: bytes | memoryview, *, limit: int, path: str | None = None, audit_id: int | None = None
) -> bytes:
    """Brotli-decompress ``data``, raising :class:`BlobTooLargeError` past ``limit`` bytes.

    Output is produced :data:`_STEP` bytes at a time and the decoder is abandoned as soon as the
    total passes ``limit``, so a decompression bomb costs about ``limit`` plus a few MiB of
    memory, however far it would expand.
    """
    where = f"adf_audit id={audit_id}"
    if not isinstance(data, bytes | bytearray | memoryview):
        raise BlobError(
            f"{where}: data is {type(data).__name__}, expected a Brotli-compressed BLOB",
            path=path,
        )
    step = max(1, min(limit + 1, _STEP))
    d = brotli.Decompressor()
    try:
        out: bytes = d.process(bytes(data), output_buffer_limit=step)
        if d.is_finished() and len(out) <= limit:
            return out  # the common case: one call
        parts = [out]
        total = len(out)
        while total <= limit and not d.is_finished() and not d.can_accept_more_data():
            out = d.process(b"", output_buffer_limit=step)
            parts.append(out)
            total += len(out)
    except brotli.error:
        raise BlobError(
            f"{where}: data is not valid Brotli (expected Brotli-compressed JSON)", path=path
        ) from None
    if total > limit:
        del parts, out
        raise BlobTooLargeError(
            f"{where}: blob decompresses past the cap of {limit:,} bytes "
            f"({len(data):,} compressed); raise max_blob_bytes to read it",
            path=path,
        )
    if not d.is_finished():
        raise BlobError(f"{where}: Brotli stream is truncated", path=path)
    return b"".join(parts)


def parse(raw: bytes, *, path: str | None = None, audit_id: int | None = None) -> Any:
    """Parse decompressed blob bytes as UTF-8 JSON."""
    try:
        return parse_json(raw)
    except JSONError as exc:
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
    raw = decompress(data, limit=limit, path=path, audit_id=audit_id)
    return unpack(raw, source, path=path, audit_id=audit_id)


def unpack(raw: bytes, source: str, *, path: str | None = None, audit_id: int | None = None) -> Any:
    """Parse decompressed blob bytes and check their shape for ``source`` (:func:`decode`
    after :func:`decompress`)."""
    value = parse(raw, path=path, audit_id=audit_id)
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
            seq = el.get("seq") if isinstance(el, dict) else None
            if type(seq) is not int or not (-(2**63) < seq < 2**63):
                raise BlobError(
                    f"adf_audit id={audit_id}: element {i} of the loop blob is not a row "
                    "with an integer seq",
                    path=path,
                )
    return value
