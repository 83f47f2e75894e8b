"""Compactors as plug-ins: what another compactor would have made of the window a real
compaction compacted.

A *compactor* is a callable from a :class:`CompactionInput` (the window before the
compaction as format-neutral :class:`Message` s, the tools the session calls, a token budget,
the agent's compaction prompt where the record holds one, and what the agent's own compaction
left) to the new window: a sequence of :class:`Message` s, or None when it cannot say (the
recorded compactor of a compaction whose summary the record does not hold). Nothing here
names a format.

The built-in ones (:data:`BUILTIN`), each made by a factory taking its parameters as keyword
arguments (``make_compactor("keep_last:n=3")``):

- ``recorded``: what the agent did (its summary and the rows it kept).
- ``keep_last`` (``n=5``): the last ``n`` turns as they were, the rest dropped. A *turn*
  (:func:`turns`) is a person's message (or a summary) with the model calls and tool results
  that follow it, or a model call with its tool results: a new turn starts at a person's
  message, and at a model call that follows a tool result.
- ``mask`` (``keep=3``): observation masking: every tool result before the last ``keep``
  turns replaced by :data:`PLACEHOLDER`; everything else kept.
- ``trim`` (``chars=500``): every tool result cut to its first ``chars`` characters (and a
  note of how many went).
- ``extractive``: one summary message listing every item of the window
  (:mod:`adfkit._analysis.items`: the kinds of the loss ledger), ``kind: value`` a line, in
  the order first met; the rows themselves dropped.

A compactor of your own: :func:`register_compactor` (``register_compactor("mine",
factory)``), or the ``adfkit.compactors`` entry point group of an installed package::

    [project.entry-points."adfkit.compactors"]
    mine = "mypackage:make_mine"

The LLM compactor (``llm``, :mod:`adfkit._analysis.llm_compactor`) ships with adfkit and is
not in :data:`DEFAULT` (it calls a model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from adfkit._analysis import llm_compactor
from adfkit._analysis.kept import message_items
from adfkit._analysis.windows import (
    Compacted,
    CompactionInput,
    Compactor,
    Factory,
    Message,
)
from adfkit._base.errors import AdfError
from adfkit._base.plugins import entry_point_objects
from adfkit._core.rows import block_text

#: Kinds of message a person (or the compaction) wrote: each starts a turn.
_PERSON = frozenset(("message", "compaction_summary"))
#: What observation masking puts in place of a tool result.
PLACEHOLDER = "[tool result omitted]"
#: The entry point group of compactor plug-ins.
ENTRY_POINTS = "adfkit.compactors"


# -- turns ---------------------------------------------------------------------------------
def turns(messages: Sequence[Message]) -> list[list[int]]:
    """The turns of a window as lists of message indices (see the module docstring)."""
    out: list[list[int]] = []
    prev: str | None = None
    for i, m in enumerate(messages):
        new = (
            not out
            or m.kind in _PERSON
            or (m.kind == "assistant" and prev not in (*_PERSON, "assistant"))
        )
        if new:
            out.append([i])
        else:
            out[-1].append(i)
        prev = m.kind
    return out


def _last_turns(messages: Sequence[Message], n: int) -> set[int]:
    """Indices of the messages in the last ``n`` turns."""
    return {i for t in (turns(messages)[-n:] if n > 0 else []) for i in t}


# -- the built-in compactors ---------------------------------------------------------------
def recorded() -> Compactor:
    """What the agent's own compaction left (None where the record does not say)."""

    def compact(inp: CompactionInput) -> Compacted | None:
        if inp.recorded is None:
            return None
        return Compacted(inp.recorded, inp.recorded_cost_usd)

    return compact


def keep_last(n: int = 5) -> Compactor:
    """The last ``n`` turns, the rest dropped."""
    n = _count(n, "n")

    def compact(inp: CompactionInput) -> Sequence[Message]:
        keep = _last_turns(inp.messages, n)
        return [m for i, m in enumerate(inp.messages) if i in keep]

    return compact


def mask(keep: int = 3, placeholder: str = PLACEHOLDER) -> Compactor:
    """Observation masking: tool results before the last ``keep`` turns become
    ``placeholder``."""
    keep = _count(keep, "keep")

    def compact(inp: CompactionInput) -> Sequence[Message]:
        recent = _last_turns(inp.messages, keep)
        return [
            m if i in recent else _map_results(m, lambda _text: placeholder)
            for i, m in enumerate(inp.messages)
        ]

    return compact


def trim(chars: int = 500) -> Compactor:
    """Every tool result cut to its first ``chars`` characters."""
    chars = _count(chars, "chars")

    def cut(text: str) -> str:
        if len(text) <= chars:
            return text
        return f"{text[:chars]}\n[... {len(text) - chars} characters trimmed]"

    def compact(inp: CompactionInput) -> Sequence[Message]:
        return [_map_results(m, cut) for m in inp.messages]

    return compact


def extractive() -> Compactor:
    """One summary message listing every item of the window, ``kind: value`` a line."""

    def compact(inp: CompactionInput) -> Sequence[Message]:
        tools = frozenset(inp.tools)
        seen: dict[tuple[str, str], str] = {}
        for m in inp.messages:
            for kind, value, key, _how in message_items(m.kind, m.role, list(m.blocks), tools):
                seen.setdefault((kind, key), f"{kind}: {value}")
        text = "Items of the conversation so far:\n" + "\n".join(seen.values())
        return [Message("compaction_summary", "user", ({"type": "text", "text": text},))]

    return compact


def _map_results(m: Message, f: Callable[[str], str]) -> Message:
    """``m`` with the text of each of its tool results replaced by ``f(text)``."""
    if not any(b.get("type") == "tool_result" for b in m.blocks):
        return m
    blocks = tuple(
        {**b, "content": f(block_text(b))} if b.get("type") == "tool_result" else b
        for b in m.blocks
    )
    return Message(m.kind, m.role, blocks, m.seq)


def _count(v: Any, name: str) -> int:
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise AdfError(f"compactor parameter {name} must be a whole number, not {v!r}") from None
    if n < 0:
        raise AdfError(f"compactor parameter {name} must be 0 or more, not {n}")
    return n


# -- the registry --------------------------------------------------------------------------
BUILTIN: dict[str, Factory] = {
    "recorded": recorded,
    "keep_last": keep_last,
    "mask": mask,
    "trim": trim,
    "extractive": extractive,
    "llm": llm_compactor.llm,
}
_REGISTERED: dict[str, Factory] = {}
_PLUGINS_LOADED = False
#: What ``adfkit lab`` and :func:`compaction_lab` run when not told.
DEFAULT = ("recorded", "keep_last", "mask", "trim", "extractive")


def register_compactor(name: str, factory: Factory) -> Factory:
    """Add a compactor: ``factory(**params)`` returns the callable (see the module
    docstring). A built-in name is refused (``ValueError``). Returns ``factory``."""
    if name in BUILTIN:
        raise ValueError(f"{name!r} is a built-in compactor; give yours another name")
    _REGISTERED[name] = factory
    return factory


def unregister_compactor(name: str) -> None:
    """Remove a compactor :func:`register_compactor` added."""
    _REGISTERED.pop(name, None)


def _load_plugins() -> None:
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    for name, got in entry_point_objects(ENTRY_POINTS, "compactor"):
        if callable(got) and name not in BUILTIN:
            _REGISTERED.setdefault(name, got)


def compactor_names() -> list[str]:
    """Every compactor's name: the built-in ones, then the registered ones."""
    _load_plugins()

    return [*BUILTIN, *(n for n in _REGISTERED if n not in BUILTIN)]


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"name:key=value,key=value"`` -> ``(name, {key: value})``."""
    name, _, rest = spec.partition(":")
    params: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise AdfError(f"compactor {spec!r}: parameters are key=value, not {part!r}")
        params[key.strip()] = value.strip()
    return name.strip(), params


def make_compactor(spec: str | tuple[str, Compactor]) -> tuple[str, Compactor]:
    """A compactor by its spec (``"keep_last:n=3"``), as ``(label, callable)``; a
    ``(label, callable)`` pair is returned as given. An unknown name is an ``AdfError``
    naming the known ones."""
    if not isinstance(spec, str):
        return spec
    name, params = parse_spec(spec)
    names = compactor_names()
    factory = BUILTIN.get(name) or _REGISTERED.get(name)
    if factory is None:
        raise AdfError(f"no compactor {name!r}; known: {', '.join(names)}")
    try:
        return spec, factory(**params)
    except TypeError as exc:
        raise AdfError(f"compactor {spec!r}: {exc}") from None
