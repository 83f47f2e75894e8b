"""ADF agent files: one SQLite database per agent (``*.adf``, ADF_FORMAT.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.registry import ADF_WORDS, FormatSpec, Probe

if TYPE_CHECKING:
    from adfkit._core.source import AgentSource

_SQLITE = b"SQLite format 3\x00"


def claims(probe: Probe) -> bool:
    """An ``.adf`` name (its reader then says what is wrong with it) or a SQLite header."""
    return probe.name.endswith(".adf") or (not probe.is_dir and probe.head.startswith(_SQLITE))


def open_session(path: Path, **options: Any) -> AgentSource:
    from adfkit._sources.adf.source import AdfSource

    keep = {k: options[k] for k in ("max_blob_bytes", "timeout") if k in options}
    return AdfSource(path, **keep)


def find(folder: Path) -> Iterator[Path]:
    return folder.glob("*.adf")


SPEC = FormatSpec(
    name="adf",
    label="ADF agent file",
    looks_for="a SQLite database, or a name ending .adf",
    claims=claims,
    open=open_session,
    find=find,
    taxonomy="taxonomy.json",
    words=ADF_WORDS,
)
