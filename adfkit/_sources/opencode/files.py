"""OpenCode's store: its file name, the tests that a SQLite file is one and that a JSON
document is an ``opencode export``, finding stores in folders (light: recognition and
listings use it, no reader is imported).

OpenCode 1.x keeps every session of a machine in one SQLite database,
``~/.local/share/opencode/opencode.db`` (``$XDG_DATA_HOME/opencode``), tables ``session``,
``message`` and ``part`` among others (Drizzle migrations, run when the store is created, so
their ``CREATE TABLE`` text sits in the file's first pages).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

#: The store's name in OpenCode's data folder.
STORE_NAME = "opencode.db"
SQLITE_HEADER = b"SQLite format 3\x00"
#: Schema text only OpenCode's store holds: its message and part tables, as Drizzle writes them.
SCHEMA_MARKERS = (b"CREATE TABLE `message`", b"CREATE TABLE `part`")


def is_store(name: str, is_dir: bool, head: bytes) -> bool:
    """Positive recognition of an OpenCode store: a file named ``opencode.db`` (its reader
    then says what is wrong with one that is not a store), or a SQLite file whose first bytes
    hold OpenCode's ``message`` and ``part`` tables. A name ending ``.adf`` never is.

    Examples
    --------
    >>> is_store("opencode.db", False, b"")
    True
    >>> is_store("x.sqlite", False, SQLITE_HEADER + b"CREATE TABLE `message` CREATE TABLE `part`")
    True
    >>> is_store("x.sqlite", False, SQLITE_HEADER + b"CREATE TABLE adf_loop")
    False
    """
    if is_dir or name.lower().endswith(".adf"):
        return False
    if name.lower() == STORE_NAME:
        return True
    return head.startswith(SQLITE_HEADER) and all(m in head for m in SCHEMA_MARKERS)


#: The start of an export (after an optional ``Exporting session:`` line).
HEAD = re.compile(rb'\A(?:Exporting session: [^\n]*\n)?\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_')


def is_export(head: bytes) -> bool:
    """Whether ``head`` opens an ``opencode export`` document.

    Examples
    --------
    >>> is_export(b'{\\n  "info": {\\n    "id": "ses_1",')
    True
    >>> is_export(b'Exporting session: ses_1\\n{"info": {"id": "ses_1"')
    True
    >>> is_export(b'{"info": {"id": "x"')
    False
    """
    return HEAD.match(head) is not None


def find(folder: Path) -> Iterator[Path]:
    """The store directly in ``folder``, by name only (``opencode.db``)."""
    p = Path(folder) / STORE_NAME
    try:
        if p.is_file():
            yield p
    except OSError:
        return


def stores_under(folder: Path) -> Iterator[Path]:
    """Every ``opencode.db`` under ``folder`` (itself, when it is one)."""
    root = Path(folder)
    if root.is_file():
        yield root
        return
    for f in sorted(root.rglob(STORE_NAME)):
        if f.is_file():
            yield f
