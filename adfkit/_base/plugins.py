"""Installed packages' plug-ins: the entry points of a group, loaded once by whoever keeps the
registry (formats in :mod:`adfkit._core.registry`, compactors in
:mod:`adfkit._analysis.compactors`)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any


def entry_point_objects(group: str, what: str) -> Iterator[tuple[str, Any]]:
    """``(name, object)`` of each installed entry point of ``group``. One that cannot be
    loaded is a warning naming it (``what``: ``"format plug-in"``...) and is skipped: a
    broken plug-in must not break adfkit."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        try:
            got = ep.load()
        except Exception as exc:  # noqa: BLE001 - whatever a plug-in raises on import
            warnings.warn(f"adfkit {what} {ep.value!r} cannot be loaded: {exc}", stacklevel=4)
            continue
        yield ep.name, got
