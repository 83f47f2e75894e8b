"""Opening an input file: one rule for every reader and for recognition.

Read-only, never creating anything, never blocking: only a regular file is opened (a FIFO
would block a plain ``open`` until a writer comes, ``/dev/zero`` never ends), and what the file
is is decided by ``fstat`` of the very descriptor that was opened.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from adfkit._base.errors import NotTranscriptError

__all__ = [
    "O_CLOEXEC",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "kind",
    "open_regular",
    "open_text_stream",
    "read_head",
]

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def kind(mode: int) -> str:
    """What a non-regular file is, for messages.

    >>> kind(stat.S_IFIFO)
    'a named pipe (FIFO)'
    """
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def open_regular(
    path: str | os.PathLike[str], *, follow: bool = True
) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``path`` and its ``fstat``, only when it is a regular file.

    Opened without blocking (a FIFO cannot hang the open) and, unless ``follow``, without
    following a symbolic link; what it is is decided by ``fstat`` of that very descriptor, so a
    name swapped for a FIFO or a device after an earlier ``stat`` is caught. Raises ``OSError``
    (with ``errno``) or ``ValueError`` whose text says what it is instead ("a named pipe
    (FIFO)", "a device", "a directory"...). The one rule for every reader that opens a file.
    """
    fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | (0 if follow else O_NOFOLLOW))
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ValueError(kind(st.st_mode))
    return fd, st


def open_text_stream(path: Path, buffering: int = 1 << 20) -> IO[bytes]:
    """Open ``path`` for reading bytes, read-only, never creating anything and never blocking:
    only a regular file is opened (:func:`open_regular`; a FIFO would
    block a plain ``open`` until a writer comes, ``/dev/zero`` never ends). Raises
    :class:`NotTranscriptError` naming the file and what it is."""
    try:
        fd, _st = open_regular(path)
    except ValueError as e:
        what = f"is {e}, not a regular file" if str(e).startswith("a ") else "not a regular file"
        raise NotTranscriptError(f"{what}; adfkit reads only regular files", path=path) from None
    except FileNotFoundError:
        raise NotTranscriptError(
            "no such file (transcripts can be deleted by their tool's cleanup)", path=path
        ) from None
    except OSError as e:
        raise NotTranscriptError(f"cannot read the file ({e.strerror})", path=path) from None
    return open(fd, "rb", buffering=buffering)  # noqa: SIM115 - caller closes


def read_head(path: Path, n: int = 4096) -> bytes:
    """The first ``n`` bytes of ``path`` (raises :class:`NotTranscriptError` if unreadable)."""
    with open_text_stream(path, buffering=0) as f:
        try:
            return f.read(n)
        except IsADirectoryError:  # pragma: no cover - open_regular refuses folders first
            raise NotTranscriptError("a directory, not a transcript file", path=path) from None
        except OSError as e:
            raise NotTranscriptError(f"cannot read the file ({e.strerror})", path=path) from None


def expand_glob(pattern: str) -> list[str]:
    """The paths a glob pattern matches, sorted, as :func:`glob.glob` with ``recursive=True``
    gives them, except that ``**`` never descends through a symbolic link to a folder: a link
    cycle (``a/up -> ..``) would make that walk exponential (``a/up/a/up/...``, never ending).

    Examples
    --------
    >>> expand_glob("sample_agents/**/long-runner.adf")
    ['sample_agents/long-runner.adf']
    """
    import glob

    pattern = os.path.expanduser(pattern)
    if "**" not in pattern:
        return sorted(glob.glob(pattern))
    parts = Path(pattern).parts
    first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base = Path(*parts[:first]) if first else Path(".")
    rest = parts[first:]
    hidden = any(part.startswith(".") for part in rest)
    found = set(base.glob(str(Path(*rest))))  # pathlib: ``**`` follows no link to a folder
    if rest[-1] == "**":  # pathlib's trailing ``**`` gives folders only; glob's, files too
        found.update(base.glob(str(Path(*rest, "*"))))
    out = []
    for p in found:
        tail = p.parts[len(base.parts) if first else 0 :]
        if not hidden and any(t.startswith(".") for t in tail):
            continue  # as glob.glob: wildcards match no hidden name
        out.append(os.fspath(p))
    return sorted(out)
