"""AgentFile methods: token usage and cost (issue 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._agent import AgentFile  # noqa: F401


class UsageMixin:
    """Mixed into :class:`adfkit.AgentFile`."""
