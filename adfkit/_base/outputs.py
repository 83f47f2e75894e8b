"""Where adfkit may write: one rule for every output (reports, plots, exports, notebooks).

adfkit never writes to an input file, nor to any name SQLite would take for an input's
sidecar (``-wal``, ``-shm``, ``-journal``), nor to anything inside an input folder (an OpenHands
conversation, a Copilot CLI session folder), whether the input is named directly, through a
symbolic link or by a hard link (the same device and inode); everywhere else it writes where the
user says. The inputs given here are files and folders on disk: a member's container (an Inspect
log behind ``LOG.eval#SAMPLE``) is found by :func:`adfkit._core.registry.input_places`. Names
made from agent file names are cleaned so that they stay inside the folder asked for and never
collide.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from adfkit._base.errors import OutputPathError

#: Suffixes SQLite appends to a database's name for the files it keeps beside it.
SIDECARS = ("-wal", "-shm", "-journal")


def _forms(path: str | os.PathLike[str]) -> set[Path]:
    """A path as given (absolute) and as resolved through symbolic links."""
    p = Path(path).expanduser()
    return {Path(os.path.abspath(p)), p.resolve()}


def forbidden(inputs: Iterable[str | os.PathLike[str]]) -> set[Path]:
    """Every name adfkit must not write to for these inputs: each input and its sidecars."""
    out: set[Path] = set()
    for item in inputs:
        for p in _forms(item):
            out.add(p)
            out.update(p.with_name(p.name + s) for s in SIDECARS)
    return out


def _inode(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``(device, inode)`` of what ``path`` names (links followed), None when it does not exist."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _ancestors(path: Path) -> list[Path]:
    """``path`` and every folder above it, as written (absolute) and as resolved."""
    forms = [Path(os.path.abspath(path))]
    with contextlib.suppress(OSError, RuntimeError):  # a link cycle: the written form counts
        forms.append(path.resolve())
    out: list[Path] = []
    for form in forms:
        out += [form, *form.parents]
    return out


def _inside_input(output: str | os.PathLike[str], inputs: list[str | os.PathLike[str]]) -> None:
    """:class:`OutputPathError` when ``output``, or a folder it would be written in, is an input
    folder (by device and inode: a link or a bind mount to it is the same folder)."""
    folders: dict[tuple[int, int], str | os.PathLike[str]] = {}
    for item in inputs:
        p = Path(item).expanduser()
        if p.is_dir() and (key := _inode(p)) is not None:
            folders[key] = item
    if not folders:
        return
    for place in _ancestors(Path(output).expanduser()):
        hit = folders.get(_inode(place) or (-1, -1))
        if hit is not None:
            raise OutputPathError(
                f"refusing to write {os.fspath(output)}: it is inside the input folder "
                f"{os.fspath(hit)}; adfkit never writes to an input"
            )


def check_output(output: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> Path:
    """The absolute output path, or :class:`OutputPathError` if it is an input, the name of
    an input's SQLite sidecar, or inside an input folder (directly, through a link, or a hard
    link to the same inode).

    Examples
    --------
    >>> check_output("report.html", ["agents/a.adf"]).name
    'report.html'
    >>> check_output("agents/a.adf-wal", ["agents/a.adf"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    adfkit._base.errors.OutputPathError: refusing to write agents/a.adf-wal: it is the name ...
    """
    inputs = list(inputs)
    out = Path(output).expanduser()
    _inside_input(output, inputs)
    for item in inputs:  # the same file under another name (a hard link)
        src = Path(item).expanduser()
        if _inode(out) is not None and _inode(out) == _inode(src):
            other = os.path.abspath(out) != os.path.abspath(src)
            raise OutputPathError(
                f"refusing to write {os.fspath(output)}: it is the input file {os.fspath(item)}"
                + (" under another name" if other else "")
                + "; adfkit never writes to an input"
            )
    bad = forbidden(inputs)
    for form in _forms(output):
        if form in bad:
            for item in inputs:
                for p in _forms(item):
                    if form == p:
                        raise OutputPathError(
                            f"refusing to write {os.fspath(output)}: it is the input file "
                            f"{os.fspath(item)}; adfkit never writes to an input"
                        )
                    for s in SIDECARS:
                        if form == p.with_name(p.name + s):
                            raise OutputPathError(
                                f"refusing to write {os.fspath(output)}: it is the name SQLite "
                                f"uses beside the input {os.fspath(item)} ({s}); adfkit never "
                                "writes to an input or its sidecars"
                            )
    return Path(os.path.abspath(Path(output).expanduser()))


_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]+")


def safe_name(name: str, default: str = "agent") -> str:
    """A file name made from agent data that stays one name inside its folder.

    Examples
    --------
    >>> safe_name(".."), safe_name("a/b"), safe_name("long-runner"), safe_name("")
    ('agent', 'a_b', 'long-runner', 'agent')
    """
    cleaned = _UNSAFE.sub("_", name).strip(" .")
    return cleaned or default


def unique_names(names: Iterable[str]) -> list[str]:
    """``names`` made safe and distinct: a repeat gets ``-2``, ``-3``... (never an existing one).

    Examples
    --------
    >>> unique_names(["a", "a", "a-2", "..", ""])
    ['a', 'a-3', 'a-2', 'agent', 'agent-2']
    """
    wanted = [safe_name(n) for n in names]
    taken: set[str] = set()
    firsts = {w for w in wanted}
    out: list[str] = []
    for w in wanted:
        if w not in taken:
            taken.add(w)
            out.append(w)
            continue
        k = 2
        while f"{w}-{k}" in taken or f"{w}-{k}" in firsts:
            k += 1
        taken.add(f"{w}-{k}")
        out.append(f"{w}-{k}")
    return out
