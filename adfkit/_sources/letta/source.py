"""A Letta agent behind the :class:`AgentSource` boundary: the transcript reader's source, with
the agent's memory blocks as its files (``mind.md``, ``mind/<label>.md``), so
:meth:`AgentFile.mind` reads them as it reads an ADF agent's mind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from adfkit import schema
from adfkit._base.errors import AdfError
from adfkit._sources.letta.parser import Block, LettaAgent
from adfkit._sources.transcript.source import TranscriptSource

#: Where the blocks are, as files of the agent.
INDEX = "mind.md"
PAGES = "mind/"


def page_text(b: Block) -> str:
    """One block as a mind page: front matter (``type: memory_block``, the block's
    ``description``, ``limit``, ``read_only``), then its value as the body.

    Examples
    --------
    >>> print(page_text(Block("human", "Name: Sam", limit=5000)))
    ---
    type: memory_block
    label: "human"
    limit: 5000
    ---
    Name: Sam
    """
    fm = ["---", "type: memory_block", f"label: {_yaml(b.label)}"]
    if b.description:
        fm.append(f"description: {_yaml(b.description)}")
    if b.limit is not None:
        fm.append(f"limit: {b.limit}")
    if b.read_only is not None:
        fm.append(f"read_only: {'true' if b.read_only else 'false'}")
    return "\n".join([*fm, "---", b.value])


def _yaml(s: str) -> str:
    """A one-line scalar the mind's front-matter reader takes back as it was."""
    flat = " ".join(s.split())
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _slug(label: str, seen: set[str]) -> str:
    base = "".join(c if c.isalnum() or c in "-_." else "-" for c in label).strip(".") or "block"
    slug, n = base, 1
    while slug in seen:
        n += 1
        slug = f"{base}-{n}"
    seen.add(slug)
    return slug


def _ts(ms: int | None) -> pd.Timestamp | None:
    return None if ms is None else pd.Timestamp(ms, unit="ms", tz="UTC")


class LettaSource(TranscriptSource):
    """One agent of a Letta agent file (see :mod:`adfkit._sources.letta.parser`)."""

    #: No message of an agent file records tokens (a step's usage is not exported).
    usage_recorded = False

    def __init__(self, agent: LettaAgent) -> None:
        super().__init__(agent.parsed)
        self._name = agent.name
        self._recorded_window = agent.context_window
        self.compaction_settings = agent.compaction
        seen: set[str] = set()
        self._blocks = {f"{PAGES}{_slug(b.label, seen)}.md": b for b in agent.blocks}

    @property
    def name(self) -> str:
        """The agent's name in the file (its ``name``; see :func:`.parser.member_names`)."""
        return self._name

    def context_window(self) -> int | None:
        """The agent's ``llm_config.context_window``, else a summary's stated one."""
        return self._recorded_window or super().context_window()

    def config(self) -> dict[str, Any]:
        """:meth:`TranscriptSource.config`, with the agent's ``compaction_settings`` as the
        file records them (empty when it records none)."""
        out = super().config()
        out["compaction_settings"] = dict(self.compaction_settings)
        return out

    # -- the memory blocks as files --------------------------------------------------------
    def _index_text(self) -> str:
        lines = ["# Memory blocks", "", "## Pages"]
        lines += [f"- {p}: {b.label}" for p, b in self._blocks.items()]
        return "\n".join(lines) + "\n"

    def files(self) -> pd.DataFrame:
        """``mind.md`` (an index of the blocks) and one ``mind/<label>.md`` per memory block
        (:func:`page_text`); ``size`` in UTF-8 bytes, times the block's own (NA for the index
        and where the file records none). Empty for an agent without blocks."""
        if not self._blocks:
            return schema.frame([], schema.FILES)
        recs = [{"path": INDEX, "size": len(self._index_text().encode())}]
        for p, b in self._blocks.items():
            recs.append(
                {
                    "path": p,
                    "size": len(page_text(b).encode()),
                    "created_at": _ts(b.created_at),
                    "updated_at": _ts(b.updated_at),
                }
            )
        for r in recs:
            r["mime_type"] = "text/markdown"
        return schema.frame(recs, schema.FILES)

    def read_file(self, path: str) -> bytes:
        """The text of ``mind.md`` or of one block's page (:meth:`files`)."""
        if path == INDEX and self._blocks:
            return self._index_text().encode()
        b = self._blocks.get(path)
        if b is None:
            raise AdfError(f"no memory block at path {path!r}", path=self.path)
        return page_text(b).encode()


class LettaFile(Sequence[LettaSource]):
    """The agents of an agent file that holds several (a sleeptime group), in the file's
    order, each named by its name in the file."""

    def __init__(self, agents: list[LettaSource]) -> None:
        self._agents = agents

    def names(self) -> list[str]:
        return [a.name for a in self._agents]

    def __getitem__(self, i: Any) -> Any:
        return self._agents[i]

    def __len__(self) -> int:
        return len(self._agents)
