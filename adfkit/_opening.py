"""From what a user hands in (a path, an open handle, a source) to an :class:`AgentSource`.

The public functions that accept "an agent" (``observe``, ``simulate``, the plots, ...) take any
:data:`SourceLike` and go through :func:`opened`, which opens a path for the duration of the
call only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

from ._adf import AdfSource
from ._blobs import DEFAULT_MAX_BLOB_BYTES
from ._source import AgentSource


@runtime_checkable
class HasSource(Protocol):
    """An object that wraps a source (``AgentFile``)."""

    @property
    def source(self) -> AgentSource: ...


SourceLike = AgentSource | HasSource | str | os.PathLike[str]


def open_source(
    path: str | os.PathLike[str],
    *,
    max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
    timeout: float = 5.0,
) -> AgentSource:
    """Open the agent record at ``path`` read-only with the reader for its kind."""
    return AdfSource(path, max_blob_bytes=max_blob_bytes, timeout=timeout)


@contextmanager
def opened(agent: SourceLike) -> Iterator[AgentSource]:
    """The source behind ``agent``; a path is opened here and closed on exit."""
    if isinstance(agent, AgentSource):
        yield agent
    elif isinstance(agent, HasSource):
        yield agent.source
    elif isinstance(agent, str | os.PathLike):
        src = open_source(agent)
        try:
            yield src
        finally:
            src.close()
    else:
        raise TypeError(
            f"expected an AgentFile, an agent source or a path, got {type(agent).__name__}"
        )
