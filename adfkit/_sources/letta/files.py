"""Letta agent files (``.af``): the head test recognition uses and finding files in folders
(light: no reader is imported, no file parsed).

Two layouts are published (letta-ai/agent-file, Letta's own tests/test_agent_files): the
current one (Letta 0.10 on, ``letta/schemas/agent_file.py`` ``AgentFileSchema``) is one object
``{"agents": [...], "groups", "blocks", "files", "sources", "tools", "mcp_servers", "metadata",
"created_at"}`` holding one or more agents; the older one (Letta 0.6 to 0.9) is one agent's
object, its keys sorted (``{"agent_type", "core_memory", ..., "in_context_message_indices",
"llm_config", "messages", ...}``). Some published files hold either as one JSON *string* (the
document encoded twice).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

#: The suffix Letta gives the files it exports.
SUFFIX = ".af"

#: The opening of a current agent file (its first key, pydantic's field order), of an older
#: one (its keys sorted), and both encoded twice (a JSON string holding the document).
_OPENINGS = (
    re.compile(rb'^\{\s*"agents"\s*:\s*\[\s*\{'),
    re.compile(rb'^\{\s*"agent_type"\s*:\s*"'),
    re.compile(
        rb'^"\{(?:\s|\\[nrt])*\\"agents\\"(?:\s|\\[nrt])*:(?:\s|\\[nrt])*\[(?:\s|\\[nrt])*\{'
    ),
    re.compile(rb'^"\{(?:\s|\\[nrt])*\\"agent_type\\"(?:\s|\\[nrt])*:(?:\s|\\[nrt])*\\"'),
)
#: What every Letta agent holds (its model settings) and what only an agent file's agent holds
#: (the ids or positions of the messages in context), as keys, plain or escaped.
_MARKS = (
    (b'"llm_config"', b'\\"llm_config\\"'),
    (
        b'"in_context_message_ids"',
        b'"in_context_message_indices"',
        b'\\"in_context_message_ids\\"',
        b'\\"in_context_message_indices\\"',
    ),
)


def is_agent_file_head(head: bytes) -> bool:
    """True for the first bytes of a Letta agent file: the document opens as one (a current
    file's ``"agents"`` list of objects, an older file's ``"agent_type"``, either also encoded
    as a JSON string) and its head names ``llm_config`` and the messages in context
    (``in_context_message_ids``, older ``in_context_message_indices``). Any other JSON document
    is not claimed (``{"agents": []}``, a list, a Gemini or OpenAI export).

    Examples
    --------
    >>> is_agent_file_head(b'{"agents": [{"name": "a", "llm_config": {}, '
    ...                    b'"in_context_message_ids": []}]}')
    True
    >>> is_agent_file_head(b'{"agents": [{"name": "a"}]}')
    False
    >>> is_agent_file_head(b'{"agent_type": "memgpt_agent", "core_memory": [], '
    ...                    b'"in_context_message_indices": [0], "llm_config": {}}')
    True
    """
    h = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    if not any(o.match(h) for o in _OPENINGS):
        return False
    return all(any(k in h for k in keys) for keys in _MARKS)


def find(folder: Path) -> Iterator[Path]:
    """Agent files directly in ``folder``, by name only (``*.af``)."""
    try:
        yield from sorted(p for p in Path(folder).glob(f"*{SUFFIX}") if p.is_file())
    except OSError:
        return


def files_under(folder: Path) -> Iterator[Path]:
    """Every ``*.af`` file under ``folder``, its subfolders searched."""
    try:
        yield from sorted(p for p in Path(folder).rglob(f"*{SUFFIX}") if p.is_file())
    except OSError:
        return
