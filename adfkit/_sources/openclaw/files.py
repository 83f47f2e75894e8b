"""OpenClaw's files, recognised and found by name and first bytes (light: recognition and
listings use it, no reader is imported).

- **The store** (2026.x): ``~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite``, one SQLite
  database per agent holding all its sessions (table ``transcript_events``). Recognised by its
  name and the SQLite header: the schema lies past the first 256 KiB recognition reads (the
  recorded store's first ``CREATE TABLE`` is on a later page), and no other agent names its
  database so. A copy under another name is an SQLite file of no format's (the ADF format
  claims it and says it holds no ADF tables).
- **Session files** (older releases): ``~/.openclaw/agents/<agent>/sessions/<session>.jsonl``,
  pi's entries as JSON lines, beside the ``sessions.json`` index. Recognised by pi's session
  header on the first line and either that index beside the file or OpenClaw's ``__openclaw``
  mark on an entry of the first 256 KiB: pi writes neither, so a pi session is never taken for
  OpenClaw's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from adfkit._core.registry import Probe
from adfkit._sources.pi.files import is_header

#: The name OpenClaw gives an agent's store.
STORE_NAME = "openclaw-agent.sqlite"
#: The index OpenClaw keeps beside its session files.
INDEX_NAME = "sessions.json"
_SQLITE = b"SQLite format 3\x00"
#: OpenClaw's own key on the entries it writes (``message.__openclaw``).
_MARK = b'"__openclaw"'


def is_store(probe: Probe) -> bool:
    """An ``openclaw-agent.sqlite`` file with the SQLite header."""
    return not probe.is_dir and probe.name == STORE_NAME and probe.head.startswith(_SQLITE)


def is_session_file(probe: Probe) -> bool:
    """A ``.jsonl`` file opening with pi's session header that OpenClaw wrote: the
    ``sessions.json`` index beside it, or ``__openclaw`` on an entry of its head."""
    if probe.is_dir or not probe.name.endswith(".jsonl"):
        return False
    recs = probe.records
    if not recs or not is_header(recs[0]):
        return False
    return _MARK in probe.head or (probe.path.parent / INDEX_NAME).is_file()


def find(folder: Path) -> Iterator[Path]:
    """The store directly in ``folder``, and the session files of a folder holding
    ``sessions.json`` (by name only)."""
    folder = Path(folder)
    store = folder / STORE_NAME
    if store.is_file():
        yield store
    if (folder / INDEX_NAME).is_file():
        yield from sorted(folder.glob("*.jsonl"))
