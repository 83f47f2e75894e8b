"""OpenCode sessions: recognition, opening, listing, compaction rule.

One store, ``~/.local/share/opencode/opencode.db``, holds every session of a machine: it opens
as a collection of agents, one per session (``opencode.db#<session id>`` names one). Light on
purpose (the registry imports every format's package to recognise a file): the reader is
:mod:`.parser` behind :mod:`.source`, imported when a store is opened; the listing is
:mod:`.listing`, the file tests :mod:`.files`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._base.files import read_head
from adfkit._core.model_catalog import context_window, maker_of
from adfkit._core.registry import FormatSpec, Probe, Rule
from adfkit._sources.opencode.files import STORE_NAME, find, is_export, is_store

if TYPE_CHECKING:
    import pandas as pd

#: Where OpenCode keeps its store (``$XDG_DATA_HOME/opencode``).
DEFAULT_ROOT = "~/.local/share/opencode"
#: provider/transform.ts ``OUTPUT_TOKEN_MAX``: the most output a call is given.
OUTPUT_TOKEN_MAX = 32_000


def claims(probe: Probe) -> bool:
    """Positive recognition (:func:`.files.is_store`): ``opencode.db``, or a SQLite file whose
    first pages hold OpenCode's ``message`` and ``part`` tables; or the JSON document
    ``opencode export`` writes (:func:`.export.is_export`)."""
    if probe.is_dir:
        return False
    return is_store(probe.name, False, probe.head) or is_export(probe.head)


def open_session(path: str | os.PathLike[str], member: str | None = None, **options: Any) -> Any:
    """The store's sessions (:class:`.source.OpenCodeSessions`), or the one named ``member``;
    an export document's one session. Options: ``timeout``, ``warn`` (others are ignored)."""
    from adfkit._sources.opencode.source import open_export, open_member, open_sessions

    if member is not None:
        return open_member(path, member, **options)
    p = Path(path)
    if p.name.lower() != STORE_NAME and is_export(read_head(p, 4096)):
        return open_export(p, **options)
    return open_sessions(path, **options)


def list_sessions(folder: Path) -> pd.DataFrame:
    """One row per OpenCode session in the stores under ``folder``, newest first
    (:func:`.listing.list_opencode_sessions`)."""
    from adfkit._sources.opencode.listing import list_opencode_sessions

    return list_opencode_sessions(folder)


RULE_TEXT = (
    "OpenCode auto-compaction: compacts when a call's tokens (input + output + cache) reach "
    "the model's limit.context less its output limit (at most 32,000) (session/overflow.ts "
    "usable, isOverflow); neither limit is in the store: the window is {src}, the output "
    "limit assumed 32,000"
)


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """``(window, threshold, rule text)`` of OpenCode's automatic compaction, assumed: the
    store records neither the model's ``limit.context`` nor its output limit, so the window is
    the model catalog's (or the least the record shows) and the output limit OpenCode's cap,
    32,000. No window known: no threshold.

    Examples
    --------
    >>> compaction_rule("claude-sonnet-4-5", 200_000)[:2]
    (200000, 168000)
    >>> compaction_rule("no-such-model")[:2]
    (None, None)
    """
    w = window or context_window(model)
    if not w:
        return Rule(
            None,
            None,
            "OpenCode auto-compaction: at the model's limit.context less its output limit, "
            "neither of which the store records, and the catalog does not know the model",
        )
    src = "the catalog's" if not window else "the least the record shows"
    threshold = w - OUTPUT_TOKEN_MAX if w > OUTPUT_TOKEN_MAX else None
    return Rule(w, threshold, RULE_TEXT.format(src=src))


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


SPEC = FormatSpec(
    name="opencode",
    label="OpenCode store",
    looks_for=(
        "a file named opencode.db, or a SQLite database holding OpenCode's message and part tables"
    ),
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.opencode.json",
    provider=provider,
    many=True,
)

__all__ = ["SPEC", "claims", "compaction_rule", "find", "is_store"]
