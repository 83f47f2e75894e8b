"""The floor of ``adfkit usage`` on a folder, as a whole process (``fleet-real``'s floor row).

Every line of every session read and parsed with orjson, as adfkit's readers parse them (each
line once, whole), in one process per core (forked, as adfkit's process engine forks), the
largest files first; nothing else: no record is looked at, every object is dropped. No reader
of these files in Python that parses each line can take less, so ``adfkit usage`` against this
shows the cost of adfkit's own rules, and this against ccusage the cost of the interpreter.

Usage: ``python benchmarks/fleet_floor.py FOLDER`` (prints the lines parsed).
"""

from __future__ import annotations

import os
import sys
from multiprocessing import get_context
from pathlib import Path

import orjson


def parse_all(path: str) -> int:
    """Lines of ``path`` parsed (a line that is not JSON counts too: it was read)."""
    n = 0
    loads = orjson.loads
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                try:  # noqa: SIM105 - a with block per line costs more than a short line's parse
                    loads(line)
                except orjson.JSONDecodeError:
                    pass
                n += 1
    return n


def main(folder: str) -> int:
    files = sorted(
        (str(p) for p in Path(folder).rglob("*.jsonl")), key=os.path.getsize, reverse=True
    )
    workers = os.cpu_count() or 1
    if workers == 1:
        total = sum(map(parse_all, files))
    else:
        with get_context("fork").Pool(workers) as pool:
            total = sum(pool.imap_unordered(parse_all, files))
    print(total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
