"""The ``adfkit`` console script: answers ``--version`` before anything heavy is imported,
and hands every other command line to :func:`adfkit.cli.main` (which imports pandas)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

#: What OpenBLAS (numpy's BLAS) reads for its thread count, its own name first.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from adfkit import __version__

        sys.stdout.write(f"adfkit {__version__}\n")
        return 0
    from adfkit._base.collector import imports_frozen

    if argv is None:
        single_threaded_blas()

    # pandas and the CLI imported frozen (not walked by every collection), when this is the
    # program itself (its command line from sys.argv), not a caller's main([...])
    with imports_frozen(entry=argv is None):
        from adfkit.cli import main as cli_main

    return cli_main(args)


def single_threaded_blas() -> None:
    """numpy's OpenBLAS with one thread in the console script's process (and the processes it
    starts), unless the user chose a count (:data:`BLAS_THREADS`); called before numpy is
    imported, when OpenBLAS reads it.

    adfkit's commands multiply no matrix large enough for a second BLAS thread, but OpenBLAS
    starts one per core as numpy is imported, and they spin while idle: on this 2-core
    machine 25-30 ms more CPU for ``import numpy`` alone, 40-60 ms more over ``adfkit report``
    on a Claude Code session (~0.93 s -> ~0.88 s).
    """
    if not any(name in os.environ for name in BLAS_THREADS):
        os.environ[BLAS_THREADS[0]] = "1"
