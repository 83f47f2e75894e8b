"""ADF agent files: one SQLite database per agent (``*.adf``, ADF_FORMAT.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.registry import ADF_WORDS, BUILTIN, FormatSpec, Probe, spec

if TYPE_CHECKING:
    from adfkit._core.source import AgentSource

_SQLITE = b"SQLite format 3\x00"


def _claims(probe: Probe) -> bool:
    """An ``.adf`` name (its reader then says what is wrong with it) or a SQLite header, but
    for the stores other built-in formats name as theirs (:attr:`FormatSpec.store_names`; the
    installed plug-ins are not looked up for it)."""
    if probe.name.endswith(".adf"):
        return True
    if probe.is_dir or not probe.head.startswith(_SQLITE):
        return False
    return not any(probe.name in spec(n).store_names for n in BUILTIN if n != "adf")


def _open(path: Path, **options: Any) -> AgentSource:
    from adfkit._sources.adf.source import AdfSource

    keep = {k: options[k] for k in ("max_blob_bytes", "timeout") if k in options}
    return AdfSource(path, **keep)


def _find(folder: Path) -> Iterator[Path]:
    return folder.glob("*.adf")


SPEC = FormatSpec(
    name="adf",
    label="ADF agent file",
    looks_for="a SQLite database (not another format's store), or a name ending .adf",
    claims=_claims,
    open=_open,
    find=_find,
    taxonomy="taxonomy.json",
    words=ADF_WORDS,
)
