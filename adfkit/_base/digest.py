"""A digest of adfkit's own code and data: what the fleet index keys its parts by, beside the
version number (which an edited checkout or a development build keeps while its readers
change)."""

from __future__ import annotations

import functools
import hashlib
import os

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the adfkit folder


@functools.cache
def code_digest() -> str:
    """A digest (16 hex digits) of the path and bytes of every ``.py`` file of the adfkit
    package and of every file in its ``data`` folder (the price tables, the taxonomies): it
    changes when any code or data a table is made with changes. Made once per process (about
    2 MB read: a few ms)."""
    h = hashlib.sha1(usedforsecurity=False)
    for rel in package_files():
        with open(os.path.join(_HERE, rel), "rb") as fh:
            data = fh.read()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:16]


def package_files() -> list[str]:
    """The files :func:`code_digest` reads: paths relative to the adfkit folder (``/``-separated),
    sorted; caches (``__pycache__``) left out."""
    out = []
    for folder, dirs, names in os.walk(_HERE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, _HERE).replace(os.sep, "/")
        in_data = rel == "data" or rel.startswith("data/")
        for name in names:
            if name.endswith(".py") or in_data:
                out.append(name if rel == "." else f"{rel}/{name}")
    return sorted(out)
