"""AgentFile methods: compaction replay, counterfactual simulation (issue 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._agent import AgentFile  # noqa: F401


class ReplayMixin:
    """Mixed into :class:`adfkit.AgentFile`."""
