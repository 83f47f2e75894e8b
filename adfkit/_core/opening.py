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

    ``format``: one format's listing (:func:`formats`) of ``folder``; None: every input under
    ``folder`` that :func:`adfkit._core.registry.discover` finds (the rule of every command:
    searched through its subfolders, each input in its own format, with its format's listing
    columns; a folder it cannot read is an :class:`AdfWarning`, a file no format claims a row
    with its ``error``). ``folder`` None: each format's own folder
    (``~/.claude/projects``, ``~/.codex/sessions``...); a format whose folder does not exist
    lists no session, with its listing's columns all the same. Columns: ``format``
    then each listing's own (``path``, ``session_id``, ``size_bytes``, ``modified``... ; a
    column one format has and another lacks is NA there).

    Examples
    --------
    >>> df = list_sessions("sample_agents/codex", format="codex")
    >>> df["format"].unique().tolist()
    ['codex']
    """
    if folder is not None and format is None:
        return _discovered_sessions(Path(folder).expanduser())
    chosen = [registry.spec(format)] if format is not None else registry.specs()
    parts = []
    for s in chosen:
        if s.list_sessions is None:
            continue
        root = Path(folder if folder is not None else (s.default_root or "")).expanduser()
        if folder is None and (s.default_root is None or not root.is_dir()):
            df = _no_sessions(s)  # the agent's folder is not there: no session, same columns
        else:
            df = s.list_sessions(root)
        df.insert(0, "format", pd.array([s.name] * len(df), dtype="string"))
        parts.append(df)
    return _newest_first(parts)


def _no_sessions(s: registry.FormatSpec) -> pd.DataFrame:
    """The format's listing with no row: what it lists of an empty folder (a temporary one:
    the listing's columns and types, whatever the format)."""
    import tempfile

    assert s.list_sessions is not None
    with tempfile.TemporaryDirectory(prefix="adfkit-") as empty:
        return s.list_sessions(Path(empty)).iloc[0:0]


def _newest_first(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The listings' rows, newest first, with every column any of them has (an empty listing's
    too)."""
    if not parts:
        return pd.DataFrame({"format": pd.array([], dtype="string")})
    columns = list(dict.fromkeys(c for p in parts for c in p.columns))
    out = pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
    out = out.reindex(columns=columns)
    return out.sort_values("modified", ascending=False, kind="stable").reset_index(drop=True)


def _discovered_sessions(root: Path) -> pd.DataFrame:
    """Every input :func:`registry.discover` finds under ``root`` (the rule of every command),
    with its format's listing columns where it has a listing (asked of the folder each input
    is in); a folder or file that cannot be read is an :class:`AdfWarning`, an input of no
    format a row with its ``error``."""
    import warnings

    from adfkit._base.errors import AdfWarning

    if not root.is_dir():
        raise AdfError("not a folder", path=root)
    found = registry.discover(str(root))
    for problem in found.problems:
        warnings.warn(str(problem), AdfWarning, stacklevel=3)
    by_format: dict[str, list[str]] = {}
    plain: list[dict[str, object]] = []
    for p in found.inputs:
        try:
            by_format.setdefault(registry.recognise(p).name, []).append(p)
        except AdfError as exc:
            plain.append({**_file_row(p), "error": exc.detail})
    parts = [_format_rows(name, paths) for name, paths in by_format.items()]
    if plain:
        df = pd.DataFrame(plain)
        df.insert(0, "format", pd.array([None] * len(df), dtype="string"))
        parts.append(df)
    return _newest_first(parts)


def _input_of(path: str) -> str:
    """The input a listing's ``input#name`` path names one agent of (``path`` itself when it
    names no member)."""
    head, sep, _name = path.rpartition(registry.MEMBER)
    return head if sep else path


def _file_row(p: str) -> dict[str, object]:
    st = os.stat(p)
    return {
        "path": p,
        "size_bytes": int(st.st_size),
        "modified": pd.Timestamp(st.st_mtime_ns, unit="ns", tz="UTC"),
    }


def _format_rows(name: str, paths: list[str]) -> pd.DataFrame:
    """The listing rows of one format's ``paths`` (its listing of each folder they are in,
    kept to them); a path its listing leaves out, or of a format without one, gets its path,
    size and time."""
    s = registry.spec(name)
    rows: list[pd.DataFrame] = []
    done: set[str] = set()
    wanted = set(paths)
    if s.list_sessions is not None:
        for parent in dict.fromkeys(str(Path(p).parent) for p in paths):
            try:
                df = s.list_sessions(Path(parent))
            except AdfError:
                continue
            # a row of one agent of an input holding several (``store#session``) is its input's
            base = df["path"].astype(str).map(lambda x: x if x in wanted else _input_of(x))
            df = df[base.isin(paths) & ~base.isin(done)]
            done.update(base[df.index])
            rows.append(df)
    rest = [_file_row(p) for p in paths if p not in done]
    if rest:
        rows.append(pd.DataFrame(rest))
    df = pd.concat([r for r in rows if len(r)] or rows[:1], ignore_index=True)
    df.insert(0, "format", pd.array([name] * len(df), dtype="string"))
    return df
