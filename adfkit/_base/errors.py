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


class SkippedFilesWarning(AdfWarning):
    """Files a folder search found that no format claims (a recorder's ``requests.jsonl``
    beside a session, an empty or binary ``.jsonl``) were skipped: no error, no figure.
    ``skipped``: ``(path, what it is)`` for each, in the order found; the message names how
    many and the first two.

    Examples
    --------
    >>> str(SkippedFilesWarning([("a/x.jsonl", "binary data")]))
    'skipped 1 file no format adfkit reads: a/x.jsonl'
    >>> str(SkippedFilesWarning([(f"{c}.jsonl", "empty file (0 bytes)") for c in "abcd"]))
    'skipped 4 files no format adfkit reads: a.jsonl, b.jsonl and 2 more'
    """

    #: How many of the files the message names.
    EXAMPLES = 2

    def __init__(self, skipped: list[tuple[str, str]]) -> None:
        self.skipped = list(skipped)
        n = len(self.skipped)
        names = [path for path, _ in self.skipped[: self.EXAMPLES]]
        more = n - len(names)
        listed = ", ".join(names) if not more else f"{', '.join(names)} and {more} more"
        files = "file" if n == 1 else "files"
        super().__init__(f"skipped {n} {files} no format adfkit reads: {listed}")


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
