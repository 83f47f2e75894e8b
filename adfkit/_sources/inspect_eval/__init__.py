"""Inspect AI evaluation logs (``.eval``: a zip of one JSON member per sample and epoch).

One file holds many agents: :func:`open_session` returns an :class:`~.source.EvalLog`, a
sequence of one source per sample and epoch, each parsed on first use (SOURCES-NEXT.md §1; how
each table maps: :mod:`.parser`). The zip is read in place (:mod:`.zipread`: zstd members, caps).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._core.registry import FormatSpec, Probe, Rule
from adfkit._sources.inspect_eval.rules import provider_of as provider

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._sources.inspect_eval.source import EvalLog, InspectSampleSource

NAME = "inspect_eval"
LABEL = "Inspect AI eval log"
LOOKS_FOR = "a zip named *.eval holding header.json, _journal/ or samples/ members"
TAXONOMY = "taxonomy.inspect_eval.json"
DEFAULT_ROOT = "./logs"
_ZIP = b"PK\x03\x04"
_MEMBERS = (b"header.json", b"_journal/start.json", b"samples/")


def claims_file(path: Path, is_dir: bool, head: bytes) -> bool:
    """A file named ``*.eval`` that starts as a zip whose first local headers name an Inspect
    member (``_journal/start.json`` is written first); a ``*.eval`` file that is not a zip is
    claimed too, so its reader says what is wrong with it.

    Examples
    --------
    >>> claims_file(Path("x.eval"), False, b"PK\\x03\\x04....._journal/start.json")
    True
    >>> claims_file(Path("x.zip"), False, b"PK\\x03\\x04....._journal/start.json")
    False
    """
    if is_dir or not path.name.lower().endswith(".eval"):
        return False
    if not head.startswith(_ZIP):
        return True  # by its name: the reader reports what it is instead
    return any(m in head for m in _MEMBERS)


def open_session(
    path: str | Path, member: str | None = None, **options: Any
) -> EvalLog | InspectSampleSource:
    """The log's samples (see :class:`~.source.EvalLog`), or the one named ``member``
    (``<sample id>_epoch_<n>``, or a sample id: its first epoch); options:
    ``max_member_bytes``, ``warn`` (others are ignored)."""
    from adfkit._sources.inspect_eval.source import open_eval, open_member

    if member is not None:
        return open_member(path, member, **options)
    return open_eval(path, **options)


def find(folder: Path) -> Iterator[Path]:
    """``*.eval`` files directly in ``folder``."""
    try:
        yield from sorted(p for p in folder.glob("*.eval") if p.is_file())
    except OSError:
        return


def claims(probe: Probe) -> bool:
    return claims_file(probe.path, probe.is_dir, b"" if probe.is_dir else probe.head)


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """Inspect's compaction default for a solver that enables it without a threshold: 0.9 of
    the model's context window (``CompactionStrategy.threshold``), which the log does not
    record; a log whose plan records a threshold says so itself (its sources' ``config()``).

    Examples
    --------
    >>> compaction_rule("openai/gpt-4o", 128_000).threshold
    115200
    >>> compaction_rule("openai/gpt-4o").threshold is None
    True
    """
    if window:
        return Rule(window, int(window * 0.9), "Inspect compaction default: 0.9 of the window")
    return Rule(
        None,
        None,
        "Inspect compaction default: 0.9 of the model's context window, which the log does not "
        "record",
    )


def list_sessions(folder: Path) -> pd.DataFrame:
    from adfkit._sources.inspect_eval.source import list_eval_logs

    return list_eval_logs(folder)


SPEC = FormatSpec(
    name=NAME,
    label=LABEL,
    looks_for=LOOKS_FOR,
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy=TAXONOMY,
    provider=provider,
    many=True,
)
