"""From a path to an :class:`AgentSource`, through the format registry.

The public functions that accept "an agent" (``observe``, ``simulate``, ...) open a path in the
facade (:func:`adfkit._facade.agent.opened`); analyses take a source and open nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from adfkit._base.errors import AdfError
from adfkit._core import registry
from adfkit._core.blobs import DEFAULT_MAX_BLOB_BYTES
from adfkit._core.source import AgentSource


def formats() -> tuple[str, ...]:
    """The names of the formats adfkit reads (:func:`adfkit._core.registry.specs`)."""
    return tuple(s.name for s in registry.specs())


def detect_format(path: str | os.PathLike[str]) -> str:
    """The name of the format that claims ``path`` (:func:`adfkit._core.registry.recognise`).

    Raises
    ------
    AdfError
        the path is missing or unreadable.
    UnknownFormatError
        no format claims it (empty, binary, text, JSON of another kind).

    Examples
    --------
    >>> detect_format("sample_agents/long-runner.adf")
    'adf'
    >>> from pathlib import Path
    >>> detect_format(next(Path("sample_agents/codex").rglob("*.jsonl.zst")))
    'codex'
    """
    return registry.recognise(path).name


def open_any(
    path: str | os.PathLike[str],
    *,
    max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
    timeout: float = 5.0,
    format: str | None = None,  # noqa: A002 - the record kind, as AgentSource.format
) -> AgentSource | Sequence[AgentSource]:
    """Open the agent record at ``path`` read-only with the reader of its format: one source, or
    a list of them when the input holds several agents. ``format``: a name from
    :func:`formats`, or None to recognise it. ``max_blob_bytes`` and ``timeout`` apply to
    readers that use them (ADF files)."""
    got = registry.open_input(path, format, max_blob_bytes=max_blob_bytes, timeout=timeout)
    return got if isinstance(got, AgentSource) else got  # a sequence: items made on access


def member_names(agents: Sequence[AgentSource]) -> list[str]:
    """The names of the agents of a multi-agent input, without reading each one when the
    reader's sequence lists them (a ``names()`` method), else from each source."""
    listed = getattr(agents, "names", None)
    if callable(listed):
        return [str(n) for n in listed()]
    return [src.name for src in agents]


def open_source(
    path: str | os.PathLike[str],
    *,
    max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
    timeout: float = 5.0,
    format: str | None = None,  # noqa: A002 - the record kind, as AgentSource.format
) -> AgentSource:
    """Open the one agent at ``path`` (:func:`open_any`); an input holding several agents is an
    :class:`AdfError` saying how to reach them."""
    got = open_any(path, max_blob_bytes=max_blob_bytes, timeout=timeout, format=format)
    if isinstance(got, AgentSource):
        return got
    names = member_names(got)
    close = getattr(got, "close", None)
    if callable(close):
        close()
    shown = ", ".join(f"#{n}" for n in names[:5]) + (" ..." if len(names) > 5 else "")
    raise AdfError(
        f"holds {len(names)} agents, not one: name one as PATH#NAME ({shown}), or get them "
        "all with adfkit.open(path)",
        path=Path(path),
    )


def list_sessions(
    folder: str | os.PathLike[str] | None = None,
    *,
    format: str | None = None,  # noqa: A002 - the record kind, as AgentSource.format
) -> pd.DataFrame:
    """Sessions under ``folder``, newest first: one row per session, with its ``format``.

    ``format``: one format's listing (:func:`formats`); None: every format that lists
    sessions, on the same folder. ``folder`` None: each format's own folder
    (``~/.claude/projects``, ``~/.codex/sessions``...), those that exist. Columns: ``format``
    then each listing's own (``path``, ``session_id``, ``size_bytes``, ``modified``... ; a
    column one format has and another lacks is NA there).

    Examples
    --------
    >>> df = list_sessions("sample_agents/codex", format="codex")
    >>> df["format"].unique().tolist()
    ['codex']
    """
    chosen = [registry.spec(format)] if format is not None else registry.specs()
    parts = []
    for s in chosen:
        if s.list_sessions is None:
            continue
        root = Path(folder if folder is not None else (s.default_root or "")).expanduser()
        if folder is None and (s.default_root is None or not root.is_dir()):
            continue
        if format is None and not root.is_dir():
            raise AdfError("not a folder", path=root)
        df = s.list_sessions(root)
        df.insert(0, "format", pd.array([s.name] * len(df), dtype="string"))
        parts.append(df)
    if not parts:
        return pd.DataFrame({"format": pd.array([], dtype="string")})
    out = pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
    return out.sort_values("modified", ascending=False, kind="stable").reset_index(drop=True)
