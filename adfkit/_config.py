"""Reading an agent's configuration (``adf_config.config_json``): the settings the runtime uses.

Pure functions over the parsed config dict (ADF_FORMAT.md §10); the config at one moment, not
its changes over time (those are in :mod:`adfkit._settings`).
"""

from __future__ import annotations

from typing import Any

#: The runtime's compaction threshold when the config sets none.
DEFAULT_THRESHOLD = 100_000


def compact_threshold(cfg: dict[str, Any]) -> int:
    """``context.compact_threshold``, else the deprecated ``model.compact_threshold``, else
    :data:`DEFAULT_THRESHOLD`.

    Examples
    --------
    >>> compact_threshold({"context": {"compact_threshold": 9000}})
    9000
    >>> compact_threshold({})
    100000
    """
    for sect in ("context", "model"):
        v = (
            (cfg.get(sect) or {}).get("compact_threshold")
            if isinstance(cfg.get(sect), dict)
            else None
        )
        if isinstance(v, int | float) and not isinstance(v, bool):
            return int(v)
    return DEFAULT_THRESHOLD


def audit_settings(cfg: dict[str, Any]) -> dict[str, bool]:
    """Effective audit switches: ``context.audit`` if present, else ``audit``, else all off.

    Examples
    --------
    >>> audit_settings({"context": {"audit": {"loop": True}}})
    {'loop': True, 'inbox': False, 'outbox': False, 'files': False}
    """
    ctx = cfg.get("context")
    ctx = ctx if isinstance(ctx, dict) else {}
    obj = ctx.get("audit") if isinstance(ctx.get("audit"), dict) else cfg.get("audit")
    obj = obj if isinstance(obj, dict) else {}
    return {k: obj.get(k) is True for k in ("loop", "inbox", "outbox", "files")}
