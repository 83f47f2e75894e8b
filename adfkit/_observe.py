"""AgentFile methods: integrity report and the mind as data (issue 4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._agent import AgentFile  # noqa: F401


class ObserveMixin:
    """Mixed into :class:`adfkit.AgentFile`."""
