"""Reading an agent's configuration (``adf_config.config_json``): the settings the runtime uses.

Pure functions over the parsed config dict (ADF_FORMAT.md §10); the config at one moment, not
its changes over time (those are in :mod:`adfkit._analysis.settings`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

#: The runtime's compaction threshold when the config sets none.
DEFAULT_THRESHOLD = 100_000
#: The largest threshold a JavaScript number holds exactly (``Number.MAX_SAFE_INTEGER``).
MAX_THRESHOLD = 2**53 - 1


def threshold_value(v: Any) -> int | None:
    """A compaction threshold as the integer it stands for, or None when it is no usable one:
    not a number, not finite, not above 0, or past :data:`MAX_THRESHOLD` (1e300 or 2**64-1: a
    limit the runtime never reaches, so it never compacts automatically).

    Examples
    --------
    >>> threshold_value(9000), threshold_value(9000.0), threshold_value(1e300), threshold_value(-1)
    (9000, 9000, None, None)
    """
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return None
    x = float(v)
    if not math.isfinite(x) or not 0 < x <= MAX_THRESHOLD:
        return None
    return int(x)


def _threshold_setting(cfg: dict[str, Any]) -> tuple[str | None, Any]:
    """``(path, number)`` of the threshold the config sets (``context`` first, then the
    deprecated ``model``); ``(None, None)`` when it sets none."""
    for sect in ("context", "model"):
        v = (
            (cfg.get(sect) or {}).get("compact_threshold")
            if isinstance(cfg.get(sect), dict)
            else None
        )
        if isinstance(v, int | float) and not isinstance(v, bool):
            return f"{sect}.compact_threshold", v
    return None, None


def compact_threshold(cfg: dict[str, Any]) -> int | None:
    """``context.compact_threshold``, else the deprecated ``model.compact_threshold``, else
    :data:`DEFAULT_THRESHOLD`; None when the number set is out of range (see
    :func:`threshold_value`).

    Examples
    --------
    >>> compact_threshold({"context": {"compact_threshold": 9000}})
    9000
    >>> compact_threshold({})
    100000
    >>> compact_threshold({"context": {"compact_threshold": 1e300}}) is None
    True
    """
    path, v = _threshold_setting(cfg)
    return DEFAULT_THRESHOLD if path is None else threshold_value(v)


def threshold_rule(cfg: dict[str, Any]) -> str:
    """Where :func:`compact_threshold` takes the threshold from, in words.

    Examples
    --------
    >>> threshold_rule({"model": {"compact_threshold": 9000}})
    'model.compact_threshold in the config (deprecated)'
    >>> threshold_rule({})
    "the runtime's default, 100,000 (the config sets none)"
    """
    path, v = _threshold_setting(cfg)
    if path is None:
        return f"the runtime's default, {DEFAULT_THRESHOLD:,} (the config sets none)"
    where = f"{path} in the config" + (" (deprecated)" if path.startswith("model.") else "")
    if threshold_value(v) is None:
        return f"{where} is out of range (not above 0 and at most 2**53-1): no automatic compaction"
    return where


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
