"""A griffe extension for the docs build: doctest examples in docstrings (``>>>`` lines and
the output under them) shown as fenced ``pycon`` code, not as Markdown prose, and Sphinx roles
(``:func:`open```) shown as the code they name."""

from __future__ import annotations

import re
from typing import Any

import griffe


class DoctestFences(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence(ROLE.sub(r"\1", obj.docstring.value))


ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|exc|obj):(`[^`]+`)")


def fence(text: str) -> str:
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>") and not inside:
            out.append("```pycon")
            inside = True
        elif inside and not stripped:
            out.append("```")
            inside = False
        out.append(line.strip() if inside else line)
    if inside:
        out.append("```")
    return "\n".join(out)
