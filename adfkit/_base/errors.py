"""One error hierarchy. Every message names the file and, where there is one, the table and row."""

from __future__ import annotations

import os


class AdfError(Exception):
    """Base class of every error adfkit raises about an agent file.

    Attributes
    ----------
    path : str or None
        The agent file the problem is in.
    """

    def __init__(self, message: str, *, path: str | os.PathLike[str] | None = None) -> None:
        self.path = None if path is None else os.fspath(path)
        self.detail = message
        super().__init__(f"{self.path}: {message}" if self.path else message)


class NotSQLiteError(AdfError):
    """The file is not a SQLite database (empty, text, truncated header...)."""


class NotAdfError(AdfError):
    """The file is SQLite but has none of the ADF tables (``adf_meta``, ``adf_loop``)."""


class UnsupportedSchemaError(AdfError):
    """The file's layout cannot be read (a required table or column is missing)."""


class BlobError(AdfError):
    """An audit blob is corrupt: not Brotli, not UTF-8 JSON, or of the wrong shape."""


class BlobTooLargeError(BlobError):
    """An audit blob decompresses past ``max_blob_bytes`` (possibly a decompression bomb)."""


class MalformedRowError(AdfError):
    """A row cannot be interpreted (bad JSON in a structured column)."""


class FileBusyError(AdfError):
    """The file is locked by a writer for longer than the busy timeout."""


class OutputPathError(AdfError):
    """An output path adfkit refuses: an input file, or a name SQLite uses beside one."""


class NotTranscriptError(AdfError):
    """The file is not an agent transcript of the expected format (empty, binary, an ``.adf``
    SQLite file, JSON lines of another format...)."""


class UnknownFormatError(NotSQLiteError, NotTranscriptError):
    """The file is none of the records adfkit reads: not an ADF agent file (SQLite), not a
    Claude Code session, not a Codex rollout."""


class AdfWarning(UserWarning):
    """A recoverable problem: the row is kept and flagged, the table is still returned."""


class NewerSchemaWarning(AdfWarning):
    """The file's schema is newer than adfkit knows; known columns are read, the rest kept."""


class CorruptFileError(AdfError):
    """SQLite reports the file as damaged (truncated, malformed pages)."""


class UnsafeSchemaError(UnsupportedSchemaError):
    """A table adfkit reads is not a plain table with storage of its own: a view, a virtual or
    shadow table, a b-tree shared with another table or index (``adf_identity`` above all), or
    a column computed when read. Reading it could reach key material, so the file is refused."""


class SettingsFileError(AdfError, ValueError):
    """A price table or taxonomy file the user named cannot be read or is not JSON."""


class SidecarError(AdfError):
    """A ``-wal``, ``-shm`` or ``-journal`` beside the file is not a regular file (a pipe,
    socket, device, directory or symbolic link): adfkit opens and copies regular files only."""
