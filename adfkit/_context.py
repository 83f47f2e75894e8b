"""AgentFile methods: context blocks, system prompt and mind over time (issue 8)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._agent import AgentFile  # noqa: F401


class ContextMixin:
    """Mixed into :class:`adfkit.AgentFile`."""
