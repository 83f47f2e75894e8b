"""The session's metadata: ``session.start`` (version, model, repository) and
``session.shutdown`` (totals per model) (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

import json
from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.copilot_cli.usage import USAGE_KEYS


def session_start(d: dict[str, Any], meta: dict[str, str]) -> None:
    for src, dst in (
        ("sessionId", "session_id"),
        ("copilotVersion", "version"),
        ("producer", "producer"),
        ("selectedModel", "model"),
        ("startTime", "started"),
    ):
        v = d.get(src)
        if isinstance(v, str):
            meta.setdefault(dst, v)
    v = d.get("version")
    if type(v) is int:
        meta["schema_version"] = str(v)
    ctx = d.get("context")
    if type(ctx) is dict:
        for src, dst in (
            ("cwd", "cwd"),
            ("branch", "git_branch"),
            ("headCommit", "git_commit"),
            ("repository", "repository"),
        ):
            v = ctx.get(src)
            if isinstance(v, str):
                meta.setdefault(dst, v)


def session_shutdown(d: dict[str, Any], meta: dict[str, str]) -> None:
    mm = d.get("modelMetrics")
    if type(mm) is not dict:
        return
    # A total is known only when every model's part of it is: one model's missing or unreadable
    # count makes the sum unknown (NA: no total_* key), never a sum of the rest as if it were 0.
    totals: dict[str, int | None] = {}
    requests: int | None = 0
    clean: dict[str, Any] = {}
    for model, m in mm.items():
        if type(m) is not dict:
            continue
        raw = m.get("usage")
        u: dict[str, Any] = raw if type(raw) is dict else {}
        counts = {dst: as_count(u.get(src)) for src, dst in USAGE_KEYS.items()}
        req = m.get("requests")
        n = as_count(req.get("count")) if type(req) is dict else None
        clean[str(model)] = {"requests": n, **counts}
        requests = None if n is None or requests is None else requests + n
        for k, v in counts.items():
            before = totals.get(k, 0)
            totals[k] = None if v is None or before is None else before + v
    meta["model_metrics"] = json.dumps(clean, sort_keys=True)
    if requests is not None:
        meta["total_requests"] = str(requests)
    for k, total in totals.items():
        if total is not None:
            meta[f"total_{k}_tokens"] = str(total)
    for src, dst in (("shutdownType", "shutdown_type"), ("currentModel", "current_model")):
        v = d.get(src)
        if isinstance(v, str):
            meta[dst] = v
