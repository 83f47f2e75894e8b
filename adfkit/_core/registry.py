"""The formats adfkit reads: one :class:`FormatSpec` per format, and recognition of an input.

A format is a plug-in: a package under ``adfkit/_sources/<name>/`` whose ``__init__`` holds a
``SPEC`` (how to recognise its input from a :class:`Probe`, how to open it, where its sessions
live, its compaction rule, its tool taxonomy, its label), found there by
:func:`with_discovered` (a line in :data:`BUILTIN` only sets its place in the order). The
spec modules are light (no reader is imported until a file is opened), so recognising a file
costs its first 256 KiB and a few dict lookups. :func:`register_format` adds a format at run time
(a test's toy format, a user's own reader).

Recognition is positive: each spec says yes only to its own input, and exactly one must. An
input no spec claims raises :class:`UnknownFormatError` naming what was looked for; two specs
claiming one input is a bug in a spec (``tests/test_registry.py`` checks every sample and
fixture). Formats of installed packages (the ``adfkit.formats`` entry points) are looked up
only for an input no built-in format claims, and by name.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from adfkit._base.errors import AdfError, UnknownFormatError
from adfkit._base.files import expand_glob
from adfkit._base.plugins import entry_point_objects
from adfkit._core.probe import HEAD_BYTES as HEAD_BYTES  # still importable from here
from adfkit._core.probe import UTF8_BOM, Probe

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._core.figures import SessionFigures
    from adfkit._core.live import Follower
    from adfkit._core.prices import PriceTable
    from adfkit._core.source import AgentSource

#: The built-in formats, in the order recognition asks them: name -> module holding ``SPEC``
#: (every other package of ``adfkit/_sources`` with a ``SPEC`` is added after them:
#: :func:`with_discovered`).
BUILTIN: dict[str, str] = {
    "adf": "adfkit._sources.adf",
    "claude_code": "adfkit._sources.claude_code",
    "codex": "adfkit._sources.codex",
    "inspect_eval": "adfkit._sources.inspect_eval",
    "openhands": "adfkit._sources.openhands",
    "pi": "adfkit._sources.pi",
    "copilot_cli": "adfkit._sources.copilot_cli",
    "otel": "adfkit._sources.otel",
    "qwen_code": "adfkit._sources.qwen_code",
    "openclaw": "adfkit._sources.openclaw",
    "opencode": "adfkit._sources.opencode",
    "gemini_cli": "adfkit._sources.gemini_cli",
    "letta": "adfkit._sources.letta",
}


def with_discovered(known: dict[str, str], root: Path) -> dict[str, str]:
    """``known`` (name -> module, in its order), then every other format package under
    ``root`` (``adfkit/_sources``), by name: a folder whose ``__init__.py`` assigns a ``SPEC``
    is the format of that name (``transcript``, the shared kit, has none). So a new built-in
    format is its folder: a line in :data:`BUILTIN` only places it in the order recognition
    asks (which the specs' positive recognition makes matter only for speed and listings)."""
    found = {}
    for init in sorted(root.glob("*/__init__.py")):
        name = init.parent.name
        if name not in known and _SPEC_LINE.search(init.read_text(encoding="utf-8")):
            found[name] = f"adfkit._sources.{name}"
    return {**known, **found}


_SPEC_LINE = re.compile(r"^SPEC\b[^=\n]*=", re.MULTILINE)
#: The format packages under ``adfkit/_sources`` that the list above leaves out, after it.
BUILTIN = with_discovered(BUILTIN, Path(__file__).resolve().parent.parent / "_sources")

#: Between an input and the name of one of its agents: ``log.eval#sample-3``.
MEMBER = "#"


class Rule(NamedTuple):
    """A format's automatic-compaction rule for one model: ``window`` and ``threshold`` in
    tokens (None where unknown) and ``text``, where the figures come from."""

    window: int | None
    threshold: int | None
    text: str


def _no_sessions(folder: Path) -> Iterator[Path]:
    return iter(())


def _file_stem(path: Path) -> str:
    return path.stem


@dataclass(frozen=True)
class Words:
    """How a format names its own parts, for the text a person reads (``adfkit info``,
    integrity findings, reports). The defaults are a transcript's; the ADF format names its
    tables. ``live``: the rows the model sees now (after the last compaction). ``swept``: the
    rows compactions took out of the context, and where they are kept. ``history_table`` and
    ``archive_table``: what an integrity finding about a row, or about a swept segment, names.
    ``audit_switches``: the format has settings that decide whether swept rows are kept (ADF's
    audit), shown by ``adfkit info``; elsewhere the file keeps them all and there is nothing to
    show."""

    live: str = "in context"
    swept: str = "swept"
    history_table: str = "transcript"
    archive_table: str = "transcript"
    audit_switches: bool = False

    def swept_text(self, archives: int, rows: int | None) -> str:
        """What compactions swept, in these words: ``216 rows by 3 compaction(s)``;
        ADF: ``7 archive(s) of loop rows, holding 695 loop rows``.

        Examples
        --------
        >>> Words().swept_text(3, 216)
        '216 rows by 3 compaction(s), kept in the file'
        >>> ADF_WORDS.swept_text(7, 695)
        '7 archive(s) of loop rows, holding 695 loop rows'
        """
        if self.audit_switches:
            held = "" if rows is None else f", holding {rows:,} loop rows"
            return f"{archives:,} archive(s) of loop rows{held}"
        n = "" if rows is None else f"{rows:,} rows "
        return f"{n}by {archives:,} compaction(s), kept in the file"


#: The ADF format's words: its tables, its audit switches.
ADF_WORDS = Words(
    live="live loop",
    swept="audit",
    history_table="adf_loop",
    archive_table="adf_audit",
    audit_switches=True,
)


@dataclass(frozen=True)
class FormatSpec:
    """One format adfkit reads.

    ``claims(probe)``: True only for this format's input (positive recognition).
    ``open(path, **options)``: an :class:`AgentSource`, or a sequence of them when one input
    holds several agents (``options``: ``max_blob_bytes``, ``timeout``; a reader ignores the
    ones it has no use for). ``find(folder)``: the inputs of this format directly in ``folder``
    (a fleet's folder), by name only (no file is read), never another format's files where the
    names tell them apart (a Claude Code subagent's ``agent-*.jsonl`` is no input of its own).
    ``list_sessions(folder)``: one row per session under a folder,
    newest first. ``default_root``: where the agent keeps its sessions. ``compaction_rule(model,
    window)``: its automatic-compaction threshold. ``taxonomy``: the file in ``adfkit/data``
    with its tools' classes for :func:`adfkit.observe` (None: the ADF default).
    ``provider(model)``: who serves the model. ``looks_for``: what recognition looks for, for
    the error an unclaimed input raises. ``session_folder(path)``: by name only, the folder of
    the session an input path inside it names (a Copilot CLI ``events.jsonl``: its session
    folder), else None; adfkit writes nothing inside it. ``stamped_on_append``,
    ``provider_tools`` and ``context_in_messages``: as the :class:`AgentSource` attributes of
    those names, for the sources its reader makes.
    ``many``: one input may hold several agents; ``open`` then returns a sequence of sources
    (each named by its ``name``) and takes ``member=NAME`` to open just that one.
    ``stem(path)``: the name output files made from the input start with (default: the
    file's stem; a format whose file has the same name in every session names it by its
    folder). ``words``: how text for a person names its parts (:class:`Words`).
    ``follow()``: a new :class:`adfkit._core.live.Follower` of the format's appended JSON lines,
    for ``adfkit watch`` to read a running session incrementally (None: it is read in full
    each time it changes).
    ``store_names``: the file names of the SQLite stores the format keeps its sessions in
    (OpenClaw's ``openclaw-agent.sqlite``): the ADF format claims every other SQLite file.
    ``companions(folder)``: by name only, the files and folders directly in ``folder`` that
    are read with an input ``find`` names there (a Gemini CLI resume's further file, a
    session's subagents' folder): no input of their own for any format, not searched.
    ``compaction_count``: what the tool compares with its threshold before a call, for
    ``simulate()`` (:attr:`AgentSource.compaction_count`: ``context`` or ``prompt``).
    ``figures(path, prices)``: the fast path of ``adfkit usage`` (:mod:`adfkit._core.figures`):
    one input's calls, events and name as plain values, equal to its tables' (None: the
    ``usage_days`` table is made).
    """

    name: str
    label: str
    looks_for: str
    claims: Callable[[Probe], bool]
    open: Callable[..., AgentSource | Sequence[AgentSource]]
    find: Callable[[Path], Iterator[Path]] = _no_sessions
    list_sessions: Callable[[Path], pd.DataFrame] | None = None
    default_root: str | None = None
    compaction_rule: Callable[[str | None, int | None], Rule] | None = None
    taxonomy: str | None = None
    provider: Callable[[str | None], str | None] = field(default=lambda model: None)
    session_folder: Callable[[Path], Path | None] = field(default=lambda path: None)
    stamped_on_append: bool = True
    provider_tools: frozenset[str] = frozenset()
    context_in_messages: bool = False
    many: bool = False
    stem: Callable[[Path], str] = _file_stem
    words: Words = Words()
    follow: Callable[[], Follower] | None = None
    store_names: frozenset[str] = frozenset()
    companions: Callable[[Path], Iterator[Path]] = _no_sessions
    compaction_count: str = "context"
    figures: Callable[[str, PriceTable], SessionFigures] | None = None


#: The entry-point group through which an installed package adds formats (``name = module:SPEC``).
ENTRY_POINTS = "adfkit.formats"

_REGISTERED: dict[str, FormatSpec] = {}
_LOADED: dict[str, FormatSpec] = {}
_PLUGINS_LOADED = False


def register_format(spec: FormatSpec) -> FormatSpec:
    """Add a format (or replace one added before); it is asked after the built-in ones.
    Returns ``spec``. A built-in format's name is refused (``ValueError``).

    An installed package adds one the same way through the ``adfkit.formats`` entry point
    group, so it is known in every process (a report's kernel, a fleet's workers)::

        [project.entry-points."adfkit.formats"]
        toy = "toyformat:SPEC"
    """
    if spec.name in BUILTIN:
        raise ValueError(f"{spec.name!r} is a built-in format; give yours another name")
    _REGISTERED[spec.name] = spec
    return spec


def unregister_format(name: str) -> None:
    """Remove a format added with :func:`register_format` (a test's toy format)."""
    _REGISTERED.pop(name, None)


def _load_plugins() -> None:
    """Register the formats of installed packages (:data:`ENTRY_POINTS`), once."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    for _, got in entry_point_objects(ENTRY_POINTS, "format plug-in"):
        if isinstance(got, FormatSpec) and got.name not in BUILTIN:
            _REGISTERED.setdefault(got.name, got)


def specs() -> list[FormatSpec]:
    """Every format, built-in first (in :data:`BUILTIN` order), then the registered ones."""
    _load_plugins()
    out = [spec(name) for name in BUILTIN]
    return out + [s for n, s in _REGISTERED.items() if n not in BUILTIN]


def spec(name: str) -> FormatSpec:
    """The spec of the format called ``name``.

    Examples
    --------
    >>> spec("codex").label
    'Codex rollout'
    """
    if name not in BUILTIN and name not in _REGISTERED:
        _load_plugins()
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in _LOADED:
        if name not in BUILTIN:
            known = ", ".join(list(BUILTIN) + [n for n in _REGISTERED if n not in BUILTIN])
            raise ValueError(f"unknown format {name!r}; adfkit reads: {known}")
        got: FormatSpec = importlib.import_module(BUILTIN[name]).SPEC
        _LOADED[name] = got
    return _LOADED[name]


def words(name: str) -> Words:
    """How the format called ``name`` names its parts (the default :class:`Words` when the
    format is unknown).

    Examples
    --------
    >>> words("adf").live, words("claude_code").live
    ('live loop', 'in context')
    """
    try:
        return spec(name).words
    except ValueError:
        return Words()


def label(name: str) -> str:
    """The human name of a format (``"Claude Code session"``), or ``name`` when unknown."""
    try:
        return spec(name).label
    except ValueError:
        return name


def recognise(path: str | os.PathLike[str]) -> FormatSpec:
    """The one format that claims ``path``.

    Raises
    ------
    AdfError
        the path is missing or unreadable.
    UnknownFormatError
        no format claims it (the message says what each one looks for).

    Examples
    --------
    >>> recognise("sample_agents/long-runner.adf").name
    'adf'
    """
    pr = Probe(Path(path).expanduser())
    claimed = claimants(pr, plugins=False)
    if not claimed:  # installed plug-ins are only looked up for what no built-in format claims
        claimed = claimants(pr)
    if len(claimed) > 1:
        names = " and ".join(s.name for s in claimed)
        why = f"claimed by two formats ({names}): a format's recognition is wrong"
        raise AdfError(why, path=pr.path)
    if claimed:
        return claimed[0]
    if pr.error is not None:
        raise pr.error
    looked = "; ".join(f"{s.label} ({s.looks_for})" for s in specs())
    why = f"{_what(pr)}: {UNCLAIMED} (looked for: {looked})"
    raise UnknownFormatError(why, path=pr.path)


#: What :func:`recognise` says of an input no format claims, after what the input is.
UNCLAIMED = "no format adfkit reads claims it"


def claimants(pr: Probe, *, plugins: bool = True) -> list[FormatSpec]:
    """Every format that claims the input ``pr`` (one, for a well-made set of specs); without
    ``plugins``, the built-in ones and those registered in this process only (finding
    installed plug-ins scans every installed package: ~0.1 s)."""
    if plugins:
        _load_plugins()
    chosen = [spec(name) for name in BUILTIN] + [
        s for n, s in _REGISTERED.items() if n not in BUILTIN
    ]
    return [s for s in chosen if _claims(s, pr)]


def _claims(s: FormatSpec, pr: Probe) -> bool:
    """``s.claims(pr)``; a format whose recognition raises is reported by name (one warning per
    format and process) and skipped, so one broken plug-in never makes every file an error."""
    try:
        return bool(s.claims(pr))
    except Exception as exc:  # noqa: BLE001 - a plug-in's bug, not the input's
        if s.name not in _BROKEN:
            _BROKEN.add(s.name)
            import warnings

            from adfkit._base.errors import AdfWarning

            warnings.warn(
                f"adfkit format {s.name!r}: its claims() raised {type(exc).__name__}: "
                f"{str(exc)[:200]}; that format is skipped",
                AdfWarning,
                stacklevel=3,
            )
        return False


#: Formats whose ``claims`` raised in this process (warned about once).
_BROKEN: set[str] = set()


def _what(pr: Probe) -> str:
    """A few words on what an unclaimed input is."""
    if pr.is_dir:
        return "is a directory, and not one a format keeps its sessions in"
    head = pr.head
    if not head:
        return "empty file (0 bytes)"
    text = head.removeprefix(UTF8_BOM).lstrip(b" \t\r\n")
    if b"\x00" in head[:512]:
        return "binary data"
    if text[:1] == b"{" and pr.records:
        return "JSON lines of a kind adfkit does not read"
    if text[:1] in (b"{", b"["):
        return "a JSON document of a kind adfkit does not read"
    return "text that is not JSON lines"


def split_member(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """``(input, member)``: ``log.eval#sample-3`` names one agent of an input that holds several
    (:data:`MEMBER`), when no file has that whole name and ``log.eval`` exists; else
    ``(path, None)``.

    Examples
    --------
    >>> split_member("sample_agents/long-runner.adf#x")
    (PosixPath('sample_agents/long-runner.adf'), 'x')
    >>> split_member("sample_agents/long-runner.adf")
    (PosixPath('sample_agents/long-runner.adf'), None)
    """
    p = Path(path).expanduser()
    text = os.fspath(path)
    if MEMBER not in text or p.exists():
        return p, None
    # The first '#' after an input file (a member's name may hold '/', '..' or '#': an Inspect
    # sample id), else the last after an input folder.
    cuts = [i for i, c in enumerate(text) if c == MEMBER]
    for at in cuts:
        if Path(text[:at]).expanduser().is_file():
            return Path(text[:at]).expanduser(), text[at + 1 :]
    for at in reversed(cuts):
        if Path(text[:at]).expanduser().is_dir():
            return Path(text[:at]).expanduser(), text[at + 1 :]
    return p, None


def agent_stem(path: str | os.PathLike[str]) -> str:
    """The name an agent's output files start with: its input's stem, and for one agent of a
    multi-agent input its member name (``log-1_epoch_1``), so no two agents share one.

    Examples
    --------
    >>> agent_stem("sample_agents/long-runner.adf")
    'long-runner'
    >>> agent_stem("sample_agents/long-runner.adf#a")
    'long-runner-a'
    >>> agent_stem("sample_agents/copilot_cli/session-state/6df5dfb8-76b8-47ef-add4-3e771030055d/"
    ...            "events.jsonl")  # every session's file is events.jsonl: named by its folder
    '6df5dfb8-76b8-47ef-add4-3e771030055d'
    """
    base, member = split_member(path)
    try:
        stem = recognise(base).stem(base)
    except AdfError:  # unreadable: the command reports it; its name is still the file's
        stem = base.stem
    return stem + (f"-{member}" if member else "")


def input_places(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """What the inputs ``paths`` are on disk, for the output rule
    (:func:`adfkit._base.outputs.check_output`): each one's container (``log.eval`` for
    ``log.eval#sample``) and, where a format says so by name, the session folder an input file
    or folder lies in (a Copilot CLI session's folder for its ``events.jsonl``).

    Examples
    --------
    >>> [p.name for p in input_places(["sample_agents/long-runner.adf#x"])]
    ['long-runner.adf']
    """
    out: list[Path] = []
    for item in paths:
        base, _ = split_member(item)
        out.append(base)
        for s in specs():
            try:
                folder = s.session_folder(base)
            except Exception:  # noqa: BLE001, S112 - a plug-in's mistake widens nothing
                continue
            if folder is not None:
                out.append(Path(folder))
    return out


def open_input(
    path: str | os.PathLike[str],
    format: str | None = None,  # noqa: A002 - the record kind, as AgentSource.format
    **options: Any,
) -> AgentSource | Sequence[AgentSource]:
    """Open ``path`` with the reader of ``format`` (None: the one that claims it). A
    ``path#member`` opens that one agent of an input holding several (the reader gets
    ``member=``)."""
    p, member = split_member(path)
    chosen = recognise(p) if format is None else spec(format)
    if member is None:
        return chosen.open(p, **options)
    if not chosen.many:
        raise AdfError(f"a {chosen.label} holds one agent: there is no member {member!r}", path=p)
    return chosen.open(p, member=member, **options)


def find_inputs(folder: Path) -> list[Path]:
    """Every input any format finds directly in ``folder``, sorted, each once."""
    found: set[Path] = set()
    for s in specs():
        found.update(s.find(folder))
    return sorted(found)


class Discovered(NamedTuple):
    """What :func:`discover` found: ``inputs`` (paths, in the order named, each once),
    ``problems`` (one :class:`AdfError` per folder or file it could not read or that holds no
    input, naming it) and ``searched``: the inputs found by searching a folder, not named."""

    inputs: list[str]
    problems: list[AdfError]
    searched: frozenset[str] = frozenset()

    def skips(self, path: str, error: str) -> bool:
        """Whether the input ``path``, which failed to open with the exception named
        ``error``, is skipped rather than an error: THE rule for a file no format claims
        (:class:`UnknownFormatError`). A folder holds other files too (a recorder's
        ``requests.jsonl`` beside a session, notes, an empty file a format's name matches),
        so one found by searching a folder is skipped (and counted, never a figure); one the
        user named is an error, as is a file a format claims but cannot read.

        Examples
        --------
        >>> found = Discovered(["a/x.jsonl", "b.jsonl"], [], frozenset({"a/x.jsonl"}))
        >>> [found.skips(p, "UnknownFormatError") for p in found.inputs]
        [True, False]
        >>> found.skips("a/x.jsonl", "AdfError")  # claimed, or unreadable: an error
        False
        """
        return error == UnknownFormatError.__name__ and path in self.searched


def unclaimed_what(message: str) -> str:
    """What an input no format claims is, from :func:`recognise`'s message (``binary data``,
    ``empty file (0 bytes)``...), without the list of what each format looks for.

    Examples
    --------
    >>> unclaimed_what(f"binary data: {UNCLAIMED} (looked for: ...)")
    'binary data'
    """
    return message.split(f": {UNCLAIMED}", 1)[0]


def discover(specs: str | os.PathLike[str] | Sequence[Any]) -> Discovered:
    """The inputs named by ``specs`` (a path, a folder, a glob, or a sequence of them): THE rule
    every command and function that takes folders follows (``info``, ``usage``, ``index``,
    ``plot``, ``export``, ``report``, :func:`list_sessions`, ``load_fleet``).

    A file is itself (its format is recognised when it is opened: a file no format claims is
    an error there). A folder a format keeps one session in (an OpenHands conversation, a
    Copilot CLI session) is itself. Any other folder is searched through all its subfolders:
    in each, every format's :attr:`FormatSpec.find` names its inputs by name (a folder only
    named like one, ``x.jsonl/``, is searched as a folder); the folder a session keeps beside
    its file (a Claude Code ``<uuid>/`` with its subagents) and a found session folder are not
    searched again. What a search found is in ``searched``: one of those that no format
    claims when it is opened is skipped, not an error (:meth:`Discovered.skips`: no file is
    read here, so finding costs nothing per file). A glob is expanded and each match taken as
    above (a file it matches is named). A path named twice is given twice, as named; a folder's
    inputs once each. A folder that cannot be listed, or a named folder or glob with no input
    under it, is a problem (the others are still searched).

    Examples
    --------
    >>> found = discover("sample_agents")
    >>> "sample_agents/long-runner.adf" in found.inputs, found.problems
    (True, [])
    """
    import glob as _glob

    items = [specs] if isinstance(specs, str | os.PathLike) else list(specs)
    out: list[str] = []
    problems: list[AdfError] = []
    searched: set[str] = set()
    named: set[str] = set()
    for item in items:
        p = os.fspath(item)
        if _glob.has_magic(p):
            matches = expand_glob(p)  # ``**`` through no link to a folder (a cycle)
            if not matches:
                problems.append(AdfError(f"no file matches the pattern {p!r}"))
            for m in matches:
                _take_path(m, out, problems, searched, named)
        else:
            _take_path(p, out, problems, searched, named)
    return Discovered(out, problems, frozenset(searched - named))


def _is_one_input(path: Path) -> bool:
    """Whether the folder ``path`` is itself one input (a format keeping a session as a folder
    claims it), not a folder of inputs."""
    try:
        recognise(path)
    except AdfError:
        return False
    return True


def _take_path(
    p: str, out: list[str], problems: list[AdfError], searched: set[str], named: set[str]
) -> None:
    """``p`` itself (a file, one input: as named, even twice), or the inputs of the folder
    (added to ``searched`` too)."""
    path = Path(p).expanduser()
    if not path.is_dir() or _is_one_input(path):
        out.append(p)
        named.add(p)
        return
    found: dict[str, None] = {}
    _walk(path, found, problems, set())
    out.extend(found)
    searched.update(found)
    if not found:
        looked = ", ".join(s.label for s in specs())
        problems.append(AdfError(f"no agent files in the folder (looked for: {looked})", path=p))


def _walk(folder: Path, out: dict[str, None], problems: list[AdfError], seen: set[str]) -> None:
    real = os.path.realpath(folder)
    if real in seen:  # a symbolic link back up the tree
        return
    seen.add(real)
    try:
        subdirs = sorted(e.path for e in os.scandir(folder) if e.is_dir())
        found = find_inputs(folder)
        folders = set(subdirs)
    except OSError as exc:
        problems.append(AdfError(f"cannot read the folder: {exc.strerror}", path=folder))
        return
    read_with = {str(p) for s in specs() for p in s.companions(folder)}
    # a folder only named like an input (``x.jsonl/``) is searched as any folder
    inputs = [str(f) for f in found if str(f) not in folders or _is_one_input(f)]
    for f in inputs:
        if f not in read_with:
            out[f] = None
    taken = set(inputs)
    for d in subdirs:
        sub = Path(d)
        if d in taken or f"{d}.jsonl" in taken or sub.name == "subagents" or d in read_with:
            continue
        if _is_one_input(sub):
            out[d] = None
        else:
            _walk(sub, out, problems, seen)
