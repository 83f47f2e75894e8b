"""ADF agent files: one SQLite database per agent (``*.adf``, ADF_FORMAT.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.registry import ADF_WORDS, BUILTIN, FormatSpec, Probe, spec

if TYPE_CHECKING:
    from adfkit._core.source import AgentSource

_SQLITE = b"SQLite format 3\x00"


def claims(probe: Probe) -> bool:
    """An ``.adf`` name (its reader then says what is wrong with it) or a SQLite header, but
    for the stores other built-in formats claim (OpenClaw's by its name, OpenCode's by its name
    or its tables; the installed plug-ins are not asked)."""
    if probe.name.endswith(".adf"):
        return True
    if probe.is_dir or not probe.head.startswith(_SQLITE):
        return False
    return not any(spec(n).claims(probe) for n in BUILTIN if n != "adf")


def open_session(path: Path, **options: Any) -> AgentSource:
    from adfkit._sources.adf.source import AdfSource

    keep = {k: options[k] for k in ("max_blob_bytes", "timeout") if k in options}
    return AdfSource(path, **keep)


def find(folder: Path) -> Iterator[Path]:
    return folder.glob("*.adf")


SPEC = FormatSpec(
    name="adf",
    label="ADF agent file",
    looks_for="a SQLite database (not another format's store), or a name ending .adf",
    claims=claims,
    open=open_session,
    find=find,
    taxonomy="taxonomy.json",
    words=ADF_WORDS,
)
