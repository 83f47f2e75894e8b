"""What every CLI command shares: how a subcommand is declared, which agents it reads, and how
its human output reaches the terminal."""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from adfkit._base.errors import AdfError
from adfkit._base.terminal import printable
from adfkit._core.registry import Discovered
from adfkit._facade.fleet import resolve_inputs, settle


def cleandoc(doc: str) -> str:
    """``inspect.cleandoc`` (the same rule; importing inspect costs more than the rest of a run
    that reads an index): tabs expanded, the common indent of the lines after the first
    removed, leading and trailing blank lines dropped."""
    lines = doc.expandtabs().split("\n")
    margin = sys.maxsize
    for line in lines[1:]:
        content = len(line.lstrip())
        if content:
            margin = min(margin, len(line) - content)
    if lines:
        lines[0] = lines[0].lstrip()
    if margin < sys.maxsize:
        lines[1:] = [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


Handler = Callable[[argparse.Namespace], int]


class LazyChoices:
    """An option's ``choices`` read on first use (a ``--help`` or a value checked), so that
    registering a command imports nothing heavy: ``adfkit usage`` never loads the plots or
    the analyses whose names another command offers. Give the option a ``metavar`` too
    (argparse formats the choices into one when it has none, as the option is added)."""

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        self._load = load
        self._items: list[str] | None = None

    def _all(self) -> list[str]:
        if self._items is None:
            self._items = list(self._load())
        return self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __contains__(self, value: object) -> bool:
        return value in self._all()

    def __len__(self) -> int:
        return len(self._all())


def add_command(
    sub: Any,
    name: str,
    handler: Handler,
    *,
    help: str,  # noqa: A002 - argparse's own name
    json: bool = False,
    prices: bool = False,
) -> argparse.ArgumentParser:
    """Add subcommand ``name``: its ``--help`` text is the handler's docstring (ending with an
    ``Example:`` line); it reads one or more agents (paths, folders or quoted globs: see
    :func:`agent_paths`), with ``json`` a ``--json`` flag, with ``prices`` a ``--prices FILE``
    option. Every command module registers through here, so all commands share one shape."""
    p: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=cleandoc(handler.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="agent files: several paths, a folder (its agent files) or a quoted glob",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="list each file a folder search skipped (no format reads it), with what it is",
    )
    if json:
        p.add_argument("--json", action="store_true", help="machine-readable output")
    if prices:
        p.add_argument(
            "--prices",
            metavar="FILE",
            help="a JSON price table (USD per million tokens, shaped like adfkit's "
            "data/prices.json) for models the shipped table lacks",
        )
    p.set_defaults(func=handler)
    return p


def agent_inputs(specs: Iterable[str] | Discovered) -> Discovered:
    """Every agent input the user named (:func:`adfkit._core.registry.discover`'s rule: paths
    as given, folders searched through their subfolders, quoted globs expanded) and one
    :class:`AdfError` per folder or pattern that could not be read or holds nothing; which of
    them a folder search found (``searched``: :func:`for_each_agent` and the fleet functions
    skip one no format claims, with one note). Nothing found at all raises the first problem.
    What was found already is passed on as it is."""
    return resolve_inputs(specs if isinstance(specs, Discovered) else list(specs))


def agent_paths(specs: Iterable[str]) -> Discovered:
    """:func:`agent_inputs`, each problem printed as an error line."""
    found = agent_inputs(specs)
    for p in found.problems:
        error(p)
    return found


def each_agent(found: Discovered) -> Discovered:
    """``found`` with each input given as its agents (``log.eval#<name>`` for each agent of an
    input that holds several): the commands that write one output per agent (``plot``,
    ``report``) write one for each, and count only them. Only such an input is opened here
    (its agents are listed, not read); a file a folder search found that no format claims is
    skipped here, with the one note (:func:`adfkit._facade.fleet.settle`)."""
    from adfkit._core import registry

    paths: list[str] = []
    unclaimed: list[tuple[str, str, str]] = []
    for path in found.inputs:
        try:
            many = registry.recognise(path).many
        except AdfError as exc:
            if found.skips(path, type(exc).__name__):
                unclaimed.append((path, type(exc).__name__, exc.detail))
            else:
                paths.append(path)  # the command reports it for this path, as for any other
            continue
        paths += _members(path) if many else [path]
    settle(found, unclaimed)
    return found._replace(inputs=paths, problems=[])


def _members(path: str) -> list[str]:
    from adfkit._facade.agent import AgentCollection
    from adfkit._facade.agent import open as open_agent

    with open_agent(path) as opened:
        return opened.paths if isinstance(opened, AgentCollection) else [path]


def single(specs: list[str]) -> bool:
    """Whether the user named exactly one file (not a glob or folder): ``--json`` then prints
    one object, else a list."""
    return len(specs) == 1 and not glob.has_magic(specs[0]) and not os.path.isdir(specs[0])


def say(text: str = "", *, err: bool = False) -> None:
    """Print human output with every control character made visible (:func:`printable`)."""
    print(printable(text), file=sys.stderr if err else sys.stdout)


def error(exc: AdfError | str) -> None:
    """The one form of an error line: ``adfkit: error: <file>: <problem>``."""
    say(f"adfkit: error: {exc}", err=True)


def dump_json(value: Any) -> str:
    """JSON for ``--json``: controls are escaped by JSON; C1 controls too, which JSON allows raw
    but a terminal would obey."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return re.sub(
        "[\x80-\x9f\u202a-\u202e\u2066-\u2069]", lambda m: f"\\u{ord(m.group()):04x}", text
    )


def for_each_agent(specs: Iterable[str] | Discovered, run: Callable[[str], int]) -> int:
    """``run(path)`` for every agent named; an unreadable one prints its error line and the
    others still run; a file a folder search found that no format claims is skipped, with one
    note at the end (:func:`adfkit._facade.fleet.settle`). Returns the worst exit status (2
    when any agent could not be read)."""
    found = agent_inputs(specs)
    for p in found.problems:
        error(p)
    status = 2 if found.problems else 0
    unclaimed: list[tuple[str, str, str]] = []
    for path in found.inputs:
        try:
            status = max(status, run(path))
        except AdfError as exc:
            if found.skips(path, type(exc).__name__):
                unclaimed.append((path, type(exc).__name__, exc.detail))
                continue
            error(exc)
            status = 2
    settle(found, unclaimed)
    return status
