"""ADF agent files: one SQLite database per agent (``*.adf``, ADF_FORMAT.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.registry import ADF_WORDS, FormatSpec, Probe
from adfkit._sources.opencode.files import is_store as is_opencode_store

if TYPE_CHECKING:
    from adfkit._core.source import AgentSource

_SQLITE = b"SQLite format 3\x00"


def _claims(probe: Probe) -> bool:
    """An ``.adf`` name (its reader then says what is wrong with it) or a SQLite header, but
    not an OpenCode store (:func:`adfkit._sources.opencode.files.is_store`: its own format)."""
    if probe.name.endswith(".adf"):
        return True
    if probe.is_dir or not probe.head.startswith(_SQLITE):
        return False
    return not is_opencode_store(probe.name, probe.is_dir, probe.head)


def _open(path: Path, **options: Any) -> AgentSource:
    from adfkit._sources.adf.source import AdfSource

    keep = {k: options[k] for k in ("max_blob_bytes", "timeout") if k in options}
    return AdfSource(path, **keep)


def _find(folder: Path) -> Iterator[Path]:
    return folder.glob("*.adf")


SPEC = FormatSpec(
    name="adf",
    label="ADF agent file",
    looks_for="a SQLite database, or a name ending .adf",
    claims=_claims,
    open=_open,
    find=_find,
    taxonomy="taxonomy.json",
    words=ADF_WORDS,
)
