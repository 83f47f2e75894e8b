"""Installed packages' plug-ins: the entry points of a group, loaded once by whoever keeps the
registry (formats in :mod:`adfkit._core.registry`, compactors in
:mod:`adfkit._analysis.compactors`)."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any


def entry_point_objects(group: str, what: str) -> Iterator[tuple[str, Any]]:
    """``(name, object)`` of each installed entry point of ``group``. One that cannot be
    loaded is a warning naming it (``what``: ``"format plug-in"``...) and is skipped: a
    broken plug-in must not break adfkit."""
    if not may_have_entry_points(group):
        return
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        try:
            got = ep.load()
        except Exception as exc:  # noqa: BLE001 - whatever a plug-in raises on import
            warnings.warn(f"adfkit {what} {ep.value!r} cannot be loaded: {exc}", stacklevel=4)
            continue
        yield ep.name, got


def may_have_entry_points(group: str, paths: Sequence[str] | None = None) -> bool:
    """False only when no installed package can declare an entry point of ``group``: no
    ``entry_points.txt`` of a ``*.dist-info`` or ``*.egg-info`` folder on ``paths`` (default
    ``sys.path``) names it, and nothing else there could hold one (an egg, a zip, a folder that
    cannot be listed, a finder of distributions other than the path's). Reading those files
    takes about 1 ms where :mod:`importlib.metadata` takes 15-20 ms to import and search, on
    every run of a command that finds no plug-in; when this says True, it does the search."""
    for finder in sys.meta_path:
        if getattr(finder, "__name__", "") != "PathFinder" and hasattr(
            finder, "find_distributions"
        ):
            return True
    for entry in sys.path if paths is None else paths:
        if _names_group(entry or ".", group.encode()):
            return True
    return False


def _names_group(folder: str, group: bytes) -> bool:
    """Whether the path entry ``folder`` may hold a package declaring entry points of
    ``group`` (:func:`may_have_entry_points`)."""
    if folder.lower().endswith(".egg"):
        return True
    try:
        entries = os.scandir(folder)
    except FileNotFoundError:
        return False
    except OSError:  # a zip or a file, a folder that cannot be listed: let importlib look
        return True
    with entries:
        for e in entries:
            name = e.name.lower()
            if name.endswith(".egg"):
                return True
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(e.path, "entry_points.txt"), "rb") as fh:
                    if group in fh.read():
                        return True
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                return True
    return False
