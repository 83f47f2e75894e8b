"""Many agents at once: ``load_fleet`` (one table from many files) and ``export`` (to Parquet).

Engines (:func:`adfkit._base.engines.run`, public as ``adfkit.run``): ``serial``;
``processes`` (a ``concurrent.futures`` process pool, all cores, results in input order);
``dask`` (a ``dask.distributed`` client the caller passes, which is how a load scales past one
machine, or a ``LocalCluster`` started and closed for the call). A file that fails lands in the
error table; it never stops the run.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from adfkit._base import engines
from adfkit._base.errors import AdfError, AdfWarning
from adfkit._base.outputs import check_output, unique_names
from adfkit._base.terminal import printable
from adfkit._facade.index import Index, part_key, stamp, to_parquet, write_part
from adfkit._facade.usage.days import FLEET_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._core.registry import Discovered
    from adfkit._facade.agent import AgentFile

# The readers and analyses (``_agent`` and what it imports) load on first use: a run whose
# files are all fresh in the index reads Parquet only and never needs them. pandas too: the
# engine and the labels serve ``adfkit usage``, which reads transcripts without it; and the
# process pool's modules (a run that reads an index needs none of them).

ENGINES = engines.ENGINES


class _Pair(NamedTuple):
    df: pd.DataFrame
    errors: pd.DataFrame


class FleetResult(_Pair):
    """What :func:`load_fleet` and :func:`export` return: ``(df, errors)``.

    ``errors`` has one row per file that failed: ``path``, ``error`` (the exception type),
    ``message`` (string). ``skipped`` (an attribute, not unpacked): one ``(path, what it
    is)`` per file a folder search found that no format claims, left out of both (and
    warned about once: :class:`adfkit.SkippedFilesWarning`).
    """

    skipped: list[tuple[str, str]]

    def __new__(
        cls,
        df: pd.DataFrame,
        errors: pd.DataFrame,
        skipped: list[tuple[str, str]] | None = None,
    ) -> FleetResult:
        self = super().__new__(cls, df, errors)
        self.skipped = list(skipped or [])
        return self


def resolve_paths(paths_or_glob: str | os.PathLike[str] | Iterable[Any]) -> list[str]:
    """Agent inputs from a glob pattern, a folder (every agent file in it and its subfolders),
    a path, or a list of them: :func:`adfkit._core.registry.discover`'s rule.

    A folder or pattern that holds nothing raises :class:`AdfError` when nothing at all was
    found; otherwise each folder or file that could not be read is an :class:`AdfWarning`
    (:func:`resolve_inputs` returns them).
    """
    found = resolve_inputs(paths_or_glob)
    for p in found.problems:
        warnings.warn(str(p), AdfWarning, stacklevel=2)
    return found.inputs


def problem_rows(problems: list[AdfError]) -> list[tuple[str, str, str]]:
    """Discovery problems as error rows ``(path, error, message)``."""
    return [(p.path or "", type(p).__name__, p.detail) for p in problems]


def resolve_inputs(paths_or_glob: str | os.PathLike[str] | Iterable[Any]) -> Discovered:
    """:func:`adfkit._core.registry.discover` of ``paths_or_glob`` (a :class:`Discovered` is
    taken as found: a command passes on what it found); nothing found at all raises the first
    problem (a fleet of no file is an error, as a single missing path is)."""
    from adfkit._core import registry

    if isinstance(paths_or_glob, registry.Discovered):
        found = paths_or_glob
    else:
        if not isinstance(paths_or_glob, str | os.PathLike):
            paths_or_glob = list(paths_or_glob)
        found = registry.discover(paths_or_glob)
    if not found.inputs and found.problems:
        raise found.problems[0]
    return found


Row = tuple[str, str, str]


def settle(found: Discovered, rows: list[Row]) -> tuple[list[Row], list[tuple[str, str]]]:
    """``rows`` (one ``(path, error, message)`` per input of ``found`` that failed) as
    ``(errors, skipped)``: the rows of errors, and apart the inputs
    :meth:`~adfkit._core.registry.Discovered.skips` skips (``(path, what it is)``: a file a
    folder search found that no format claims), warned about in one
    :class:`adfkit.SkippedFilesWarning`. When every input was skipped (and nothing else went
    wrong) there was no agent at all: :class:`AdfError`, as for a folder with no input."""
    from adfkit._base.errors import SkippedFilesWarning
    from adfkit._core.registry import unclaimed_what

    errors: list[Row] = []
    skipped: list[tuple[str, str]] = []
    for row in rows:
        if found.skips(row[0], row[1]):
            skipped.append((row[0], unclaimed_what(row[2])))
        else:
            errors.append(row)
    if skipped:
        warnings.warn(SkippedFilesWarning(skipped), stacklevel=3)
    if skipped and len(skipped) == len(found.inputs) and not found.problems:
        files = "file" if len(skipped) == 1 else f"{len(skipped)} files"
        raise AdfError(f"no agent files: no format adfkit reads the {files} found")
    return errors, skipped


def _check_table(table: str) -> None:
    from adfkit._facade.catalog import catalog  # (it loads the schema: pandas)

    if table in catalog():
        return
    from adfkit._facade.agent import AgentFile

    attr = getattr(AgentFile, table, None)
    if table.startswith("_") or not callable(attr) or table in ("close", "read_file", "read_text"):
        names = sorted(
            n
            for n in dir(AgentFile)
            if not n.startswith("_") and callable(getattr(AgentFile, n))
            if n not in ("close", "read_file", "read_text", "decode_audit")
        )
        raise ValueError(
            f"table must be one of {sorted(catalog())} or an AgentFile method; got {table!r} "
            f"(methods: {names})"
        )


def get_table(agent: AgentFile, table: str, **kwargs: Any) -> pd.DataFrame:
    """One table of one open agent as a DataFrame (a dict result becomes a one-row frame)."""
    import pandas as pd

    from adfkit._facade.catalog import catalog

    known = catalog().get(table)
    value = known.build(agent, **kwargs) if known else getattr(agent, table)(**kwargs)
    if isinstance(value, dict):
        return pd.DataFrame([value])
    if not isinstance(value, pd.DataFrame):
        raise TypeError(f"{table}() returned {type(value).__name__}, not a DataFrame")
    return value


#: Longest :func:`agent_label` (characters, the ``…`` included).
LABEL_CHARS = 60


_SPACES = re.compile(r"[ \t\r\n\f\v]+")


def _one_line(text: str) -> str:
    """``text`` on one line: runs of white space (newlines, tabs) made one space, every other
    control character written as a visible escape (``\\x1b``)."""
    return printable(_SPACES.sub(" ", text).strip())


def _clip(text: str, n: int = LABEL_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def first_prompt(messages: Iterable[tuple[str | None, Any]]) -> str | None:
    """The text of the first message a person wrote, from ``(subkind, text)`` of the ``user``
    rows of kind ``message`` in seq order: one typed in the chat (subkind ``chat``) first where
    the format tells them apart; the first text that is not blank."""
    first: str | None = None  # the first text that is not blank, of any subkind
    chat = False
    for sub, text in messages:  # read lazily: a first chat message ends the search
        said = isinstance(text, str) and bool(text.strip())
        if sub == "chat":
            if said:
                return str(text)
            chat = True
        elif said and first is None:
            first = text
    return None if chat else first


def _first_prompt(agent: AgentFile) -> str | None:
    """:func:`first_prompt` of the agent's history."""
    h = agent.history()
    if not {"role", "kind", "text"} <= set(h.columns):
        return None
    asked = h[(h["role"] == "user") & (h["kind"] == "message")]
    if "seq" in asked:
        asked = asked.sort_values("seq")
    subs = asked["subkind"].astype(object).tolist() if "subkind" in asked else [None] * len(asked)
    return first_prompt(zip(subs, asked["text"].tolist(), strict=True))


def agent_label(agent: AgentFile) -> str:
    """A short readable name for tables and plots of many agents (one line, at most
    :data:`LABEL_CHARS` characters, control characters escaped).

    An agent with a name of its own (an ADF agent: ``long-runner``) is labelled by it. A
    session named by its id (Claude Code, Codex: a UUID) is labelled ``<project> · <what it
    was about>``: the project is the last folder of the session's working directory, what it
    was about its title (``custom-title``, ``ai-title``), else its summary, else the first
    prompt a person typed. The id stays in the fleet's ``agent`` column.

    Examples
    --------
    >>> import adfkit
    >>> with adfkit.open("sample_agents/long-runner.adf") as agent:
    ...     agent_label(agent)
    'long-runner'
    """
    return label_of(agent.name, agent.meta(), lambda: _first_prompt(agent))


def label_of(name: str, meta: dict[str, str], prompt: Callable[[], str | None]) -> str:
    """:func:`agent_label` of an agent named ``name`` with ``meta``; ``prompt`` gives its first
    prompt (:func:`first_prompt`), called only when the label needs it."""
    ids = {meta.get("session_id"), f"agent-{meta.get('agent_id')}"} - {None, "agent-None"}
    if name not in ids:
        return _clip(_one_line(name))
    cwd = (meta.get("cwd") or "").replace("\\", "/").rstrip("/")
    project = cwd.rsplit("/", 1)[-1] if cwd else ""
    about = meta.get("title") or meta.get("summary") or prompt()
    about = _one_line(about) if about else ""
    if "agent_id" in meta:  # a subagent: its own id, then its task
        about = f"{name}: {about}" if about else name
    parts = [x for x in (_one_line(project), about) if x]
    return _clip(" · ".join(parts)) if parts else _clip(_one_line(name))


def distinct_labels(agents: list[tuple[Any, Any, Any]]) -> dict[tuple[Any, Any], str]:
    """``(path, agent) -> label`` made distinct between agents (a file may hold several), from
    ``(path, agent, label)`` of each agent once, in order: a label two agents share gets the
    start of the agent's id after it in brackets where that differs from the label, and a
    number where it still clashes (``clean (2)``). A missing label is the ``agent``."""
    labels = [lab if isinstance(lab, str) else ident for _, ident, lab in agents]
    counts: dict[Any, int] = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1
    new: dict[tuple[Any, Any], str] = {}
    taken: set[str] = set()
    for (path, ident, _), label in zip(agents, labels, strict=True):
        want = label
        if counts[label] > 1 and isinstance(ident, str) and ident != label:
            want = f"{label} [{ident[:8]}]"
        cand, k = want, 2
        while cand in taken:
            cand, k = f"{want} ({k})", k + 1
        taken.add(cand)
        new[(path, ident)] = cand
    return new


def _distinct_labels(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`distinct_labels` of a fleet frame's agents."""
    import pandas as pd

    if "label" not in df.columns or not len(df):
        return df
    keys = ["agent_path", "agent"]
    # the three columns only: taking a row of every column of a large fleet frame gathers
    # every chunk of its text columns (1.4-2.6 s of system time at 200 agents' history)
    agents = df[[*keys, "label"]].drop_duplicates(keys)
    trio = list(
        zip(
            agents["agent_path"].tolist(),
            agents["agent"].tolist(),
            agents["label"].astype(object).tolist(),
            strict=True,
        )
    )
    new = distinct_labels(trio)
    if all(new[(p, a)] == lab for p, a, lab in trio):
        return df
    df = df.copy()
    df["label"] = pd.array(
        [new[k] for k in zip(df["agent_path"], df["agent"], strict=True)], dtype="string"
    )
    return df


def load_one(
    path: str, table: str, kwargs: dict[str, Any], open_kwargs: dict[str, Any]
) -> tuple[pd.DataFrame | None, tuple[str, str, str] | None]:
    """Load one file's table with its ``label``, ``agent`` and ``agent_path`` columns, or the
    error row."""
    import pandas as pd

    from adfkit._facade.agent import agents_of
    from adfkit._facade.agent import open as open_agent

    try:
        with open_agent(path, **open_kwargs) as opened:
            parts = [_table_of(agent, path, table, kwargs) for agent in agents_of(opened)]
        df = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        return df, None
    except Exception as exc:  # noqa: BLE001 - any failure is recorded, never fatal
        msg = exc.detail if isinstance(exc, AdfError) else str(exc)
        return None, (path, type(exc).__name__, msg)


def _table_of(agent: AgentFile, path: str, table: str, kwargs: dict[str, Any]) -> pd.DataFrame:
    """One agent's table with its ``label``, ``agent`` and ``agent_path`` columns first."""
    import pandas as pd

    if engines.IN_WORKER:
        agent.source.prefetch = False  # every core runs a loader: no decoding thread
    df = get_table(agent, table, **kwargs).reset_index(drop=True)
    df = df.drop(columns=list(FLEET_COLUMNS), errors="ignore")
    df.insert(0, "agent_path", pd.array([path] * len(df), dtype="string"))
    df.insert(0, "agent", pd.array([agent.name] * len(df), dtype="string"))
    df.insert(0, "label", pd.array([agent_label(agent)] * len(df), dtype="string"))
    return df


def _apply(func: Callable[..., Any], args: tuple[Any, ...], job: Any) -> Any:
    return func(job, *args)


def run_jobs(
    func: Callable[..., Any],
    jobs: list[Any],
    args: tuple[Any, ...],
    *,
    engine: str,
    workers: int | None = None,
    client: Any = None,
    progress: bool | None = None,
    desc: str = "",
    small_bytes: int | None = None,
) -> list[Any]:
    """``[func(job, *args) for job in jobs]`` on :func:`adfkit._base.engines.run`, in input
    order; the process engine runs serially when the fleet is too small to pay for a pool
    (:func:`small_fleet`, below ``small_bytes``)."""
    if engine == "processes" and small_fleet(jobs, small_bytes):
        engine = "serial"
    return engines.run(
        functools.partial(_apply, func, args),
        jobs,
        engine=engine,
        workers=workers,
        client=client,
        progress=progress,
        desc=desc,
    )


#: Below this many bytes of input in all, the process engine runs serially: starting a pool
#: and pickling frames back costs more than it saves (measured: 16 sessions, 30 MB).
SMALL_FLEET_BYTES = 48 << 20


def small_fleet(jobs: list[str], limit: int | None = None) -> bool:
    """Whether a fleet is too small for processes to pay: one job, or less than ``limit``
    bytes of input in all (default :data:`SMALL_FLEET_BYTES`).

    A job is a path or a JSON list whose first item is one; a job whose file cannot be sized
    counts as large."""
    import orjson

    if len(jobs) <= 1:
        return True
    limit = SMALL_FLEET_BYTES if limit is None else limit
    total = 0
    for job in jobs:
        path = orjson.loads(job)[0] if job.startswith("[") else job
        try:
            total += os.path.getsize(path)
        except (OSError, TypeError):
            return False
        if total >= limit:
            return False
    return True


def _errors_frame(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    import pandas as pd

    from adfkit import schema

    df = pd.DataFrame(rows, columns=list(schema.FLEET_ERRORS))
    return df.astype(schema.FLEET_ERRORS)


def load_fleet(
    paths_or_glob: str | os.PathLike[str] | Iterable[Any],
    table: str = "history",
    *,
    engine: str = "processes",
    client: Any = None,
    workers: int | None = None,
    progress: bool | None = None,
    max_blob_bytes: int | None = None,
    cache: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> FleetResult:
    """One table from many agent files. One row per row of each file's table.

    Parameters
    ----------
    paths_or_glob : a glob pattern (``"agents/**/*.adf"``), a folder (every agent input in it
        and its subfolders, :func:`adfkit._core.registry.discover`), a path, or a list of any
        of those. A folder that cannot be read is a row of ``errors``.
    table : an :class:`AgentFile` method returning a DataFrame (``history``, ``loop``,
        ``audit``, ``events``, ``compactions``, ``usage``, ...; a dict result such as
        ``info`` becomes one row) or a name in the catalog (:mod:`adfkit._facade.catalog`:
        ``turns``, ``signatures``, ``streaks``, ``anomalies``, ``observe_calls``: frames of
        ``adfkit.observe``; ``usage``: the agent's calls and its subagents', a ``subagent``
        column naming them, the calls ``adfkit usage`` and ``usage_days`` count;
        ``usage_days``).
    engine : ``"processes"`` (default: a process pool over all cores), ``"serial"``, or
        ``"dask"`` (on ``client``, a ``dask.distributed.Client``; with none, a
        ``LocalCluster`` is started and closed for the call).
    client : a ``dask.distributed.Client`` for ``engine="dask"``.
    workers : number of processes (default: all cores) or LocalCluster workers.
    progress : show a ``tqdm.auto`` progress bar (default: when there are 20 files or more).
    max_blob_bytes : passed to :func:`adfkit.open_adf`.
    cache : an index folder (see :mod:`adfkit._facade.index`; ``adfkit index`` fills one): each
        file's table is kept there as Parquet, keyed by the file's path, size, modification
        time and adfkit's version, and read back instead of the file while those are the same.
        It is a plain Parquet dataset (``DIR/<table>/*.parquet``) that DuckDB and Dask read.
    **kwargs : passed to the table method (e.g. ``errors="raise"`` for ``history``).

    Returns
    -------
    FleetResult
        ``(df, errors)``. ``df`` has ``label`` (string: a readable name, distinct between
        files; see :func:`agent_label`), ``agent`` (string: the agent's name, a session's id)
        and ``agent_path`` (string: the file it came from) first, then the table's columns;
        files in input order, each file's rows in its table's order. ``errors`` has one row
        per file that failed: ``path``, ``error`` (exception type), ``message`` (string); a
        failure never stops the run.

    Examples
    --------
    >>> import adfkit
    >>> df, errors = adfkit.load_fleet("sample_agents/*.adf", "info", engine="serial")
    >>> len(df) == 7 and errors.empty
    True
    """
    import pandas as pd

    _check_table(table)
    found = resolve_inputs(paths_or_glob)
    paths = found.inputs
    open_kwargs = {} if max_blob_bytes is None else {"max_blob_bytes": max_blob_bytes}
    run = functools.partial(
        run_jobs,
        engine=engine,
        workers=workers,
        client=client,
        progress=progress,
        desc=f"load_fleet {table}",
    )
    if cache is None:
        results = run(load_one, paths, (table, kwargs, open_kwargs))
    else:
        results = load_cached(run, paths, table, kwargs, open_kwargs, cache)
    frames = [df for df, _ in results if df is not None]
    errors, skipped = settle(found, [err for _, err in results if err is not None])
    errors = problem_rows(found.problems) + errors
    if frames:
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        df = _distinct_labels(df)
    else:
        df = pd.DataFrame({c: pd.array([], "string") for c in FLEET_COLUMNS})
    return FleetResult(df, _errors_frame(errors), skipped)


def _index_one(
    job: str, table: str, kwargs: dict[str, Any], open_kwargs: dict[str, Any]
) -> tuple[pd.DataFrame | None, tuple[str, str, str] | None, list[int] | None]:
    """:func:`load_one`, and the part written to ``target`` when the file did not change
    while it was read (its ``[size, mtime_ns]`` returned, else None: not cached)."""
    import orjson

    path, target = orjson.loads(job)
    before = stamp(path)
    df, err = load_one(path, table, kwargs, open_kwargs)
    if df is None or before is None or stamp(path) != before:
        return df, err, None
    try:
        write_part(df, target)
    except (OSError, ValueError, TypeError):  # an index that cannot be written: still a result
        return df, err, None
    return df, err, before


def load_cached(
    run: Callable[..., list[Any]],
    paths: list[str],
    table: str,
    kwargs: dict[str, Any],
    open_kwargs: dict[str, Any],
    cache: str | os.PathLike[str],
) -> list[Any]:
    """Results of :func:`load_one` for ``paths``: fresh parts of the index read back (in one
    read), the other files read (on the engine) and their parts written; the manifest saved
    once. The rows come back as one frame in input order, then the error rows."""
    import orjson
    import pandas as pd

    index = Index(cache, table, paths)
    # "columns": parts written before fleet frames had a ``label`` are not read back
    options = {"kwargs": kwargs, "open": open_kwargs, "columns": list(FLEET_COLUMNS)}
    keys = [part_key(p, table, options) for p in paths]
    fresh = [i for i, (p, k) in enumerate(zip(paths, keys, strict=True)) if index.fresh(k, p)]
    stale = sorted(set(range(len(paths))) - set(fresh))
    frames = [index.read_many([keys[i] for i in fresh])] if fresh else []
    errors = []
    jobs = [orjson.dumps([paths[i], index.part(keys[i])]).decode() for i in stale]
    for i, (df, err, st) in zip(
        stale, run(_index_one, jobs, (table, kwargs, open_kwargs)), strict=True
    ):
        if df is not None:
            frames.append(df)
        errors.append((None, err))
        if st is not None:
            index.record(keys[i], paths[i], st, options, rows=_manifest_rows(table, df))
    if stale:
        index.save()
    frames = [f for f in frames if len(f.columns)]
    if not frames:
        return errors
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if len(frames) > 1 or len(fresh) > 1:  # input order (each file's rows in their order)
        where = {p: i for i, p in enumerate(paths)}
        order = df["agent_path"].map(where).to_numpy()
        df = df.iloc[order.argsort(kind="stable")].reset_index(drop=True)
    return [(df, None), *errors]


def _manifest_rows(table: str, df: pd.DataFrame | None) -> list[dict[str, Any]] | None:
    """A ``usage_days`` part's rows as plain values, kept in the manifest too: ``adfkit usage``
    reads them there, with no Parquet reader (see :mod:`adfkit._facade.usage.days`)."""
    if table != "usage_days" or df is None:
        return None
    from adfkit._facade.usage.days import frame_rows

    return frame_rows(df)


# -- export ------------------------------------------------------------------------------------


def _export_one(
    path: str, out_dir: str, redact: bool, open_kwargs: dict[str, Any], prices: Any = None
) -> Any:
    """Write one agent's folder; returns (manifest rows, error row or None)."""
    from adfkit._core.registry import input_places
    from adfkit._facade.agent import agents_of
    from adfkit._facade.agent import open as open_agent

    written: list[tuple[str, str, str, int]] = []
    try:
        places = input_places([path])
        with open_agent(path, **open_kwargs) as opened:
            agents = agents_of(opened)
            problems: list[str] = []
            subs = unique_names(a.name for a in agents)
            for agent, sub in zip(agents, subs, strict=True):  # several agents: a folder each
                where = out_dir if len(agents) == 1 else os.path.join(out_dir, sub)
                problems += _export_agent(agent, where, redact, prices, written, places)
        if problems:
            return written, (path, "ExportError", "; ".join(problems))
        return written, None
    except Exception as exc:  # noqa: BLE001
        msg = exc.detail if isinstance(exc, AdfError) else str(exc)
        return written, (path, type(exc).__name__, msg)


def _export_agent(
    agent: AgentFile,
    out_dir: str,
    redact: bool,
    prices: Any,
    written: list[tuple[str, str, str, int]],
    places: list[Path],
) -> list[str]:
    """Write one agent's documents and tables into ``out_dir``; the problems of tables that
    failed (the rest are written). No file is written onto an input (``places``, by
    :func:`adfkit._base.outputs.check_output`: a file left in the folder may link to one)."""
    import orjson

    from adfkit._base.redact import redact_config, redact_frame, redact_value

    os.makedirs(check_output(out_dir, places), exist_ok=True)
    name = agent.name
    docs = {
        "meta": agent.meta(),
        "config": redact_config(agent.config()),
        "info": agent.info(sizes=True),
    }
    if redact:  # every field of every format, whatever it is called (a title, a branch name)
        docs = {stem: redact_value(doc) for stem, doc in docs.items()}
    for stem, doc in docs.items():
        fn = str(check_output(os.path.join(out_dir, f"{stem}.json"), places))
        with open(fn, "wb") as fh:
            fh.write(orjson.dumps(doc, default=str, option=orjson.OPT_INDENT_2))
        written.append((name, stem, fn, 1))
    problems = []
    from adfkit._facade.catalog import exported

    for table in exported():
        stem, kw = table.name, dict(table.export or {})
        try:
            if prices is not None and table.takes("prices"):
                kw["prices"] = prices
            df = table.build(agent, **kw)
            if redact:
                df = redact_frame(df)
            fn = str(check_output(os.path.join(out_dir, f"{stem}.parquet"), places))
            to_parquet(df, fn)
            written.append((name, stem, fn, len(df)))
        except Exception as exc:  # noqa: BLE001 - one table failing keeps the rest
            problems.append(f"{stem}: {type(exc).__name__}: {exc}")
    return problems


def export(
    paths_or_glob: str | os.PathLike[str] | Iterable[Any],
    to: str | os.PathLike[str],
    *,
    redact: bool = False,
    engine: str = "serial",
    client: Any = None,
    workers: int | None = None,
    progress: bool | None = None,
    max_blob_bytes: int | None = None,
    prices: Any = None,
) -> FleetResult:
    """Write every table of each agent to Parquet, one folder per agent under ``to``.

    Each folder (named after the file, made a safe name, ``-2``, ``-3`` ... on clashes) holds
    ``<table>.parquet`` for every table of the catalog that takes no argument
    (:func:`adfkit._facade.catalog.exported`: ``history``, ``loop``, ``blocks`` and
    ``tool_calls`` of the history, the side tables, ``compactions``, ``replay``, ``usage``,
    ``integrity``, the forgetting tables, the observation tables, ``usage_days``...) and
    ``meta.json``, ``config.json`` (secrets redacted) and ``info.json``.
    Parquet files carry pandas metadata, so ``pd.read_parquet`` gives back the same dtypes
    (Int64, string, category, bool, boolean, datetime64[ms, UTC]; an empty table's category
    columns come back with no categories, as Parquet keeps none); tuple cells come back as
    arrays there. :func:`adfkit._facade.index.read_parquet` gives the table back exactly (the
    categories and which columns held tuples are in the schema metadata, ``adfkit.cells``).
    ``adf_identity`` is never read. The input files are only read.

    Parameters
    ----------
    paths_or_glob : as for :func:`load_fleet`.
    to : output folder (created when the first agent is written). It may be anywhere but an
        input file or the name of an input's SQLite sidecar.
    redact : blank message bodies, tool inputs and results, and file contents.
    engine, client, workers, progress, max_blob_bytes : as for :func:`load_fleet`
        (default engine: ``serial``).
    prices : extra prices for ``usage`` (as ``AgentFile.usage(prices=...)``).

    Returns
    -------
    FleetResult
        ``df``: one row per file written: ``agent``, ``table``, ``file`` (string), ``rows``
        (Int64). ``errors``: one row per agent that failed or had a table fail.

    Examples
    --------
    >>> import adfkit, tempfile
    >>> out = tempfile.mkdtemp()
    >>> written, errors = adfkit.export("sample_agents/clean.adf", out)
    >>> "history" in set(written["table"]) and errors.empty
    True
    """
    import orjson
    import pandas as pd

    from adfkit._core.registry import input_places

    found = resolve_inputs(paths_or_glob)
    paths = found.inputs
    places = input_places(paths)
    root_s = str(check_output(to, places))
    # One folder per agent, named after its file: made safe (``...adf`` has the stem ``..``)
    # and distinct (two ``a.adf`` from different folders give ``a`` and ``a-2``). Folders are
    # created only for agents that open, so nothing is left behind when nothing is exported.
    names = unique_names(Path(p).stem for p in paths)
    dirs = [str(check_output(os.path.join(root_s, n), places)) for n in names]
    open_kwargs = {} if max_blob_bytes is None else {"max_blob_bytes": max_blob_bytes}
    results = run_jobs(
        _export_one_star,
        [orjson.dumps([p, d]).decode() for p, d in zip(paths, dirs, strict=True)],
        (redact, open_kwargs, prices),
        engine=engine,
        workers=workers,
        client=client,
        progress=progress,
        desc="export",
    )
    rows = [r for written, _ in results for r in written]
    manifest = pd.DataFrame(rows, columns=["agent", "table", "file", "rows"]).astype(
        {"agent": "string", "table": "string", "file": "string", "rows": "Int64"}
    )
    errors, skipped = settle(found, [e for _, e in results if e is not None])
    errors = problem_rows(found.problems) + errors
    return FleetResult(manifest, _errors_frame(errors), skipped)


def _export_one_star(
    job: str, redact: bool, open_kwargs: dict[str, Any], prices: Any = None
) -> Any:
    import orjson

    path, out_dir = orjson.loads(job)
    return _export_one(path, out_dir, redact, open_kwargs, prices)


# -- OpenTelemetry -------------------------------------------------------------------------------


def export_otlp(
    paths_or_glob: Any,
    *,
    to: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    with_messages: bool = False,
    redact: bool = False,
) -> tuple[int, list[tuple[str, str, str]]]:
    """Every agent of the paths (files, folders, globs, as :func:`load_fleet` takes them) as
    OTLP: one JSON line per agent into the file ``to``, and/or sent to ``endpoint``. Returns
    the number of spans and one ``(path, error type, message)`` per input that failed (the
    others are still exported). ``to`` may be anywhere but onto an input."""
    import json

    from adfkit._facade.agent import agents_of
    from adfkit._facade.agent import open as open_agent
    from adfkit._facade.otlp import send, spans, to_json

    found = resolve_inputs(paths_or_glob)
    for p in found.problems:
        warnings.warn(str(p), AdfWarning, stacklevel=2)
    paths = found.inputs
    from adfkit._core.registry import input_places

    target = check_output(to, input_places(paths)) if to is not None else None
    kw = {"with_messages": with_messages, "redact": redact}
    errors: list[tuple[str, str, str]] = []
    lines: list[str] = []
    n = 0
    for path in paths:
        try:
            with open_agent(path) as opened:
                for agent in agents_of(opened):
                    span_list = spans(agent, **kw)
                    if endpoint is not None:
                        send(span_list, endpoint)
                    lines.append(json.dumps(to_json(span_list), sort_keys=True))
                    n += len(span_list)
        except AdfError as e:
            errors.append((path, type(e).__name__, e.detail))
    if target is not None:
        target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return n, settle(found, errors)[0]
