"""Letta agent files (``.af``): recognition, opening, listing, compaction rule.

Light on purpose (the registry imports every format's package to recognise a file): the
reader is :mod:`.parser`, the source :mod:`.source`, both imported when a file is opened; the
head test and the file names are :mod:`.files`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._base.errors import AdfError
from adfkit._core.model_catalog import maker_of
from adfkit._core.registry import FormatSpec, Probe, Rule
from adfkit._sources.letta.files import find, is_agent_file_head

if TYPE_CHECKING:
    import pandas as pd

#: Where exported agent files are kept: nowhere in particular (an agent lives on its Letta
#: server; the ADE and the API export ``<agent name>.af`` wherever the user saves it), so
#: ``list_sessions()`` without a folder lists none.
DEFAULT_ROOT = None
#: letta/constants.py ``SUMMARIZATION_TRIGGER_MULTIPLIER`` (letta/services/summarizer/
#: thresholds.py: compaction when the context estimate passes this share of the window).
TRIGGER_MULTIPLIER = 0.9


def claims(probe: Probe) -> bool:
    """Positive recognition: a file whose head opens as a Letta agent file
    (:func:`.files.is_agent_file_head`), whatever its name."""
    return not probe.is_dir and is_agent_file_head(probe.head)


def open_session(path: str | os.PathLike[str], member: str | None = None, **options: Any) -> Any:
    """The agent of the file as a :class:`.source.LettaSource`, or all of them (a
    :class:`.source.LettaFile`) when it holds several; ``member``: the one with that name (or
    in-file id). Option ``max_bytes`` (others are ignored)."""
    from adfkit._sources.letta.parser import parse_letta
    from adfkit._sources.letta.source import LettaFile, LettaSource

    kw = {k: v for k, v in options.items() if k == "max_bytes" and v is not None}
    agents = parse_letta(Path(path), **kw)
    if member is not None:
        for a in agents:
            if member in (a.name, a.parsed.meta.get("letta_agent_id")):
                return LettaSource(a)
        names = [a.name for a in agents]
        raise AdfError(f"no agent named {member!r} in the file (agents: {names})", path=path)
    sources = [LettaSource(a) for a in agents]
    if len(sources) == 1:
        return sources[0]
    return LettaFile(sources)


def list_sessions(folder: Path) -> pd.DataFrame:
    """One row per agent file under ``folder``, newest first
    (:func:`.listing.list_letta_files`)."""
    from adfkit._sources.letta.listing import list_letta_files

    return list_letta_files(folder)


RULE_TEXT = (
    "Letta compacts when its estimate of the context passes 0.9 of the window "
    "(letta/constants.py SUMMARIZATION_TRIGGER_MULTIPLIER; the file does not record it, so "
    "assumed). The window is {src}."
)


def compaction_rule(model: str | None, window: int | None = None) -> Rule:
    """``(window, threshold, rule text)`` of Letta's automatic compaction: 0.9 of the
    agent's ``llm_config.context_window`` (every agent file records it); without it, unknown.

    Examples
    --------
    >>> compaction_rule("gpt-4-0613", 8192)[:2]
    (8192, 7372)
    >>> compaction_rule("gpt-4-0613", None)[:2]
    (None, None)
    """
    if not window:
        return Rule(None, None, RULE_TEXT.format(src="not recorded"))
    return Rule(
        window, int(window * TRIGGER_MULTIPLIER), RULE_TEXT.format(src="the agent's llm_config")
    )


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


SPEC = FormatSpec(
    name="letta",
    label="Letta agent file",
    looks_for=(
        'a JSON document {"agents": [{... "llm_config", "in_context_message_ids" ...}], ...} '
        "(a Letta agent file; older: one agent's object with in_context_message_indices)"
    ),
    claims=claims,
    open=open_session,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=compaction_rule,
    taxonomy="taxonomy.letta.json",
    provider=provider,
    many=True,
)

__all__ = ["SPEC", "claims", "compaction_rule", "find", "is_agent_file_head"]
