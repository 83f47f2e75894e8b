"""``python -m tools.record [AGENT ...]`` (``make record``, ``make record AGENT=codex``):
record every agent named (all of ``drivers/`` by default), each into
``tests/fixtures/recorded/<agent>/<version>/``. An agent that cannot be recorded here says why
and the others go on; the exit status is 1 when any failed."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
import traceback

from . import drivers
from .drive import BUILD, Context, finish


def main(argv: list[str]) -> int:
    names = argv or sorted(m.name for m in pkgutil.iter_modules(drivers.__path__))
    failed = []
    for name in names:
        start = time.monotonic()
        try:
            driver = importlib.import_module(f"{drivers.__name__}.{name}")
            ctx = Context(driver.AGENT, BUILD / driver.AGENT)
            ctx.build.mkdir(parents=True, exist_ok=True)
            out = finish(ctx, driver.AGENT, driver.record(ctx))
            print(f"{name}: {out} ({time.monotonic() - start:.0f} s)")
        except Exception as e:
            failed.append(name)
            print(f"{name}: not recorded: {e!r}", file=sys.stderr)
            traceback.print_exc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
