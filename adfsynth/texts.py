"""Texts the runtime writes into an agent file, and how a context row is recognised.

Trigger texts (startup, inbox notification), the memory-flush nudge, the footer of every
compaction summary, the ``<injected_file>`` blocks of a system prompt, the ``[Context: ...]``
header of context rows, and ISO timestamps as JavaScript's ``toISOString`` writes them.

Written from ADF_FORMAT.md, independently of adfkit's ``_content``/``_replay``: the ground
truth built on them cross-checks the reader, so do not replace them with imports from adfkit.
"""

from __future__ import annotations

import datetime as _dt

SUMMARY_FOOTER = (
    "\n\n---\nYour loop was compacted. The briefing above is what survived — including any "
    "open questions; they are still yours. Continue. Reach out for help if needed."
)
NUDGE_TEXT = (
    "Context is about to be compacted. Before that happens: note anything worth keeping "
    "in your mind pages (refresh the mind.md index and add a mind/log.md entry), cite the "
    "source messages as [S<seq>], and park unfinished work on an open-threads page. "
    "Compaction runs right after this."
)
STARTUP_TEXT = "Agent started. Review your mind for context and take any startup actions."
INBOX_TRIGGER = "[Inbox notification] You have new messages in your inbox."


def injected_file(path: str, text: str) -> str:
    """A file as the runtime injects it into the system prompt (the text kept verbatim)."""
    return f'<injected_file path="{path}">\n{text}\n</injected_file>'


def context_category(content: list[dict]) -> str | None:
    """Category of a ``[Context: <category>]`` row, else None."""
    if len(content) != 1 or content[0].get("type") != "text":
        return None
    t = content[0].get("text") or ""
    if not t.startswith("[Context: "):
        return None
    end = t.find("]")
    if end < 0:
        return None
    return t[len("[Context: ") : end].split(" | ")[0]


def iso(ms: int) -> str:
    d = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
