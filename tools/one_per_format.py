"""``python -m tools.one_per_format FOLDER [--skip NAME,...]``: one agent input of each format
found under FOLDER, one path a line, in the registry's order (what ``make demo`` shows; a
format added to the registry and given a sample appears without naming it). An input holding
several agents is named with its first one (``log.eval#NAME``)."""

from __future__ import annotations

import sys

from adfkit._core import registry


def one_per_format(folder: str) -> dict[str, str]:
    """Format name -> the first input of that format the one discovery rule finds under
    ``folder`` (sorted), for every format present."""
    from adfkit._core.opening import member_names
    from adfkit._core.source import AgentSource

    found: dict[str, str] = {}
    for p in sorted(registry.discover(folder).inputs):
        try:
            spec = registry.recognise(p)
        except Exception:  # noqa: BLE001 - an unreadable input is not shown
            continue
        if spec.name in found:
            continue
        if spec.many:
            got = spec.open(p)
            if not isinstance(got, AgentSource):  # several agents: the first by name
                p = f"{p}{registry.MEMBER}{member_names(got)[0]}"
        found[spec.name] = p
    order = [s.name for s in registry.specs()]
    return {k: found[k] for k in order if k in found}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    skip: set[str] = set()
    if "--skip" in args:
        i = args.index("--skip")
        skip = set(args[i + 1].split(","))
        del args[i : i + 2]
    for name, p in one_per_format(args[0] if args else "sample_agents").items():
        if name not in skip:
            print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
