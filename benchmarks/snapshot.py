"""Every table of every sample and fixture, saved once and compared after a redesign.

A refactor that moves readers and analyses must leave every frame identical. ``save`` writes
each table of each agent (the samples in ``sample_agents/`` and, when ``../shared`` is there,
the real fixtures) as a pickle under DIR; ``compare`` reads them back and reports every table
that differs (``pandas.testing.assert_frame_equal``, exact). Run ``save`` on the old revision
(``git worktree add``), ``compare`` on the new one.

Usage: ``python benchmarks/snapshot.py save DIR`` / ``python benchmarks/snapshot.py compare DIR``
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

import adfkit
from adfkit._core import registry
from adfkit._facade import catalog
from adfkit._sources.pi.files import NAME as PI_NAME

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "fixtures"

#: Tables that are not in the catalog, and how to get them from an open agent.
EXTRA: dict[str, Callable[[Any], Any]] = {
    "config": lambda a: a.config(),
    "info": lambda a: a.info(),
    "meta": lambda a: a.meta(),
    "simulate": lambda a: adfkit.simulate(a, adfkit.ThresholdPolicy()).events,
    "simulate_calls": lambda a: adfkit.simulate(a, adfkit.SlidingWindowPolicy(20_000)).calls,
}


def tables() -> dict[str, Callable[[Any], Any]]:
    """Table name -> how to get it: every table of the catalog that ``export()`` writes (the
    one list of tables, built with the arguments export builds it with), then :data:`EXTRA`."""

    def build(table: catalog.Table) -> Callable[[Any], Any]:
        return lambda a: table.build(a, **dict(table.export or {}))

    return {t.name: build(t) for t in catalog.exported()} | EXTRA


#: The formats whose files the globs below list (as the first snapshots did); every other
#: format's inputs are found by its own ``find``, and an input holding several agents gives each.
GLOBBED = ("adf", "claude_code", "codex")


def agents() -> Iterator[str]:
    """Each agent of :func:`listed` once, in its order."""
    yield from dict.fromkeys(listed())


def listed() -> Iterator[str]:
    """The sample agents, then the fixtures when ``../shared`` is present (``PATH#MEMBER`` for
    one agent of an input that holds several)."""
    roots = [ROOT / "sample_agents", ROOT / "tests" / "fixtures"]
    yield from map(str, sorted(roots[0].glob("*.adf")))
    yield from map(str, sorted((roots[0] / "claude-code").rglob("*.jsonl")))
    yield from map(str, sorted((roots[0] / "codex").rglob("rollout-*.jsonl*")))
    if SHARED.is_dir():
        roots.append(SHARED)
        yield from map(str, sorted((SHARED / "adf-runtime").glob("*.adf")))
        for sub in ("claude-code", "codex"):
            yield from sorted(
                str(p)
                for p in (SHARED / "transcripts" / sub).rglob("*")
                if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zst"))
            )
    folders = [Path(d) for root in roots for d, _, _ in os.walk(root)]
    fixtures = [Path(d) for d, _, _ in os.walk(roots[1])]  # the test's own (recordings)
    for spec in registry.specs():
        where = fixtures if spec.name in GLOBBED else folders
        for path in sorted({p for folder in where for p in spec.find(folder)}):
            if not spec.many:
                yield str(path)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                names = getattr(adfkit.open(path), "names", None)
            yield from (f"{path}#{member}" for member in names) if names else [str(path)]
    if SHARED.is_dir():  # a real pi session under a name of its own, not pi's
        yield from sorted(str(p) for p in (SHARED / "pi").glob("*.jsonl") if not pi_named(p))


def pi_named(path: Path) -> bool:
    return PI_NAME.fullmatch(path.name) is not None


def _key(agent: str) -> str:
    path = Path(agent)
    rel = path.relative_to(SHARED.parent if SHARED in path.parents else ROOT)
    return str(rel).replace("/", "__")


def tables_of(path: str) -> dict[str, Any]:
    """Each table of the agent at ``path`` (or the error it raised, as text)."""
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:  # a path relative to the checkout: the same text in both revisions' tables
            agent = adfkit.open(os.path.relpath(path, ROOT))
        except Exception as exc:  # noqa: BLE001 - the error is part of the snapshot
            return {"open": f"{type(exc).__name__}: {exc}"}
        with agent:
            for name, get in tables().items():
                try:
                    value = get(agent)
                except Exception as exc:  # noqa: BLE001
                    value = f"{type(exc).__name__}: {exc}"
                out[name] = value
    return out


def _same(a: Any, b: Any) -> str | None:
    if isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame):
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        except AssertionError as exc:
            return str(exc).splitlines()[0] + " ..." if str(exc) else "frames differ"
        return None
    if isinstance(a, pd.DataFrame) or isinstance(b, pd.DataFrame):
        return f"{type(a).__name__} vs {type(b).__name__}"
    return None if repr(a) == repr(b) else f"{a!r:.200} != {b!r:.200}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["save", "compare"])
    ap.add_argument("dir", type=Path)
    args = ap.parse_args(argv)
    args.dir = args.dir.resolve()
    args.dir.mkdir(parents=True, exist_ok=True)
    os.chdir(ROOT)
    bad = 0
    for path in agents():
        target = args.dir / (_key(path) + ".pkl")
        now = tables_of(path)
        if args.action == "save":
            target.write_bytes(pickle.dumps(now))
            continue
        if not target.exists():
            print(f"NEW   {_key(path)}")
            continue
        before = pickle.loads(target.read_bytes())
        for name in sorted(set(before) | set(now)):
            why = _same(before.get(name), now.get(name))
            if why:
                bad += 1
                print(f"DIFF  {_key(path)} {name}: {why}")
    if args.action == "compare":
        print("identical" if not bad else f"{bad} table(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
