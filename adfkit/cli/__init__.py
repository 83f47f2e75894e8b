"""Command-line interface: ``adfkit <command> PATH``. Each command is a thin layer over the API.

Exit status: 0 success, 1 findings (for checks), 2 unreadable input or bad usage.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from adfkit._base.errors import AdfError, SkippedFilesWarning
from adfkit.cli import _fleet as _cli_fleet
from adfkit.cli import _info as _cli_info
from adfkit.cli import _lab as _cli_lab
from adfkit.cli import _observe as _cli_observe
from adfkit.cli import _plot as _cli_plot
from adfkit.cli import _report as _cli_report
from adfkit.cli import _usage as _cli_usage
from adfkit.cli import _watch as _cli_watch
from adfkit.cli._common import error, say

#: The modules that add subcommands, in the order ``--help`` lists them.
COMMANDS = (
    _cli_info,
    _cli_plot,
    _cli_observe,
    _cli_fleet,
    _cli_lab,
    _cli_usage,
    _cli_report,
    _cli_watch,
)


class _Version(argparse.Action):
    """``--version``, the version looked up only when asked (it costs an import)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings,
            dest=dest,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from adfkit import __version__

        sys.stdout.write(f"adfkit {__version__}\n")
        parser.exit()


def _description() -> str:
    """What adfkit reads, each built-in format by its own name (the registry's labels)."""
    from adfkit._core import registry

    kinds = ", ".join(f"{registry.spec(name).label}s" for name in registry.BUILTIN)
    return f"Look inside the memory of LLM agents, read-only: {kinds}."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adfkit",
        description=_description(),
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    _SHOWN.clear()  # once per run, not once per process (a test, a notebook runs many)
    _UNPRICED_CALLS.clear()
    _SKIPPED.clear()
    _SKIPPED.update(verbose=bool(getattr(args, "verbose", False)), shown=set())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            # Python's own default: a file some other code left open is no news for the user
            # (seen in the test process: "adfkit: warning: unclosed file" from an earlier test).
            warnings.simplefilter("ignore", ResourceWarning)
            warnings.showwarning = _show_warning
            try:
                return int(args.func(args))
            finally:
                _warn_unpriced()
    except AdfError as exc:
        error(exc)
        return 2
    except BrokenPipeError:  # pragma: no cover - `adfkit ... | head`
        return 0
    except (KeyboardInterrupt, SystemExit):  # pragma: no cover
        raise
    except Exception as exc:  # a bug, not bad input: still one line, no traceback
        if os.environ.get("ADFKIT_TRACEBACK"):
            raise
        error(
            f"internal error ({type(exc).__name__}: {exc}); "
            "please report it (set ADFKIT_TRACEBACK=1 for details)"
        )
        return 2


_SHOWN: set[str] = set()
_UNPRICED = re.compile(r"no price for model\(s\) (.*?): their cost_usd is NaN")
_MODEL_CALLS = re.compile(r"'((?:[^'\\]|\\.)*)' \((\d+) calls\)")
#: Model -> calls without a price, summed over every file of the run (one warning at the end).
_UNPRICED_CALLS: dict[str, int] = {}


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Warnings as one ``adfkit: warning: ...`` line each (no source line, no traceback); the
    missing-price warnings of all files summed into one at the end of the run
    (:func:`_warn_unpriced`)."""
    if isinstance(message, SkippedFilesWarning):
        _note_skipped(message)
        return
    text = str(message)
    m = _UNPRICED.search(text)
    if m:
        for model, n in _MODEL_CALLS.findall(m.group(1)):
            _UNPRICED_CALLS[model] = _UNPRICED_CALLS.get(model, 0) + int(n)
        return
    say(f"adfkit: warning: {text}", err=True)


#: This run's ``--verbose`` and the files already named in a note.
_SKIPPED: dict[str, Any] = {}


def _note_skipped(warning: SkippedFilesWarning) -> None:
    """The one note on the files a folder search skipped: how many and the first two (each
    with what it is, under ``--verbose``); a file named once per run, however many passes
    over the inputs the command makes."""
    shown: set[str] = _SKIPPED.setdefault("shown", set())
    new = [(path, what) for path, what in warning.skipped if path not in shown]
    if not new:
        return
    shown.update(path for path, _ in new)
    if not _SKIPPED.get("verbose"):
        more = len(new) > SkippedFilesWarning.EXAMPLES
        hint = "lists them" if more else "says what it is" if len(new) == 1 else "says what each is"
        say(f"adfkit: note: {SkippedFilesWarning(new)} (--verbose {hint})", err=True)
        return
    files = "file" if len(new) == 1 else "files"
    say(f"adfkit: note: skipped {len(new)} {files} no format adfkit reads:", err=True)
    for path, what in new:
        say(f"  {path}: {what}", err=True)


def _warn_unpriced() -> None:
    """The one missing-price warning of a run: each model with the calls of every file."""
    if not _UNPRICED_CALLS:
        return
    names = ", ".join(f"{m!r} ({n:,} calls)" for m, n in sorted(_UNPRICED_CALLS.items()))
    _UNPRICED_CALLS.clear()
    say(
        f"adfkit: warning: no price for model(s) {names}: their cost is shown as unknown; "
        "pass --prices FILE (a JSON price table) to price them",
        err=True,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
