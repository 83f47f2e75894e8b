"""One module per provider API. Each has a ``DIALECT`` with ``name``, ``match(method, path)``
and ``handle(request, model) -> Reply``: parse the body into a neutral ``script.Call``, ask
``model.answer(request, name, call)``, and write the answer as the API does (JSON, or
server-sent events when the request streams). A request that is not a model call (counting
tokens, listing models) is logged with ``model.write(request, name, kind)`` and answered.

Modules: anthropic (Messages), openai_responses (Responses), openai_chat (Chat Completions),
gemini (generateContent). ``ALL`` lists those present, in the order they are tried."""

from __future__ import annotations

import importlib
from typing import Any

NAMES = ("anthropic", "openai_responses", "openai_chat", "gemini")


def _load() -> list[Any]:
    found = []
    for name in NAMES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            continue
        found.append(module.DIALECT)
    return found


ALL = _load()
