"""Reading a Codex rollout: its lines as items (``RolloutLine`` types, bare items of the earliest
rollouts), the types it skips, the session metadata (TRANSCRIPTS.md §2.2)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from adfkit._base.errors import NotTranscriptError
from adfkit._sources.codex.state import _Item
from adfkit._sources.transcript.kit import (
    Findings,
    JsonLines,
    TypeCounts,
    check_head,
    iso_ms,
)

_WHAT = "Codex rollout"


TOP_TYPES = frozenset(
    {
        "session_meta",
        "turn_context",
        "response_item",
        "event_msg",
        "compacted",
        "token_usage_record",
    }
)


#: Newer top-level types seen in protocol code (TRANSCRIPTS.md §2.2): skipped, info only.
NEWER_TOP_TYPES = frozenset(
    {
        "inter_agent_communication",
        "world_state",
        "security_risk_score",
        "realtime_item",
    }
)


ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "context_compaction",
        "tool_search_call",
        "tool_search_output",
        "additional_tools",
    }
)


_UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def _read(
    path: Path, max_line_bytes: int, max_decompressed_bytes: int, fnd: Findings
) -> tuple[list[_Item], set[int]]:
    """The rollout's records as items, in line order, and the lines whose bytes were repaired."""
    check_head(path, _WHAT, zst=True)
    items: list[_Item] = []
    unknown = TypeCounts()
    newer = TypeCounts()
    lines = JsonLines(
        path,
        fnd,
        "rollout",
        max_line_bytes=max_line_bytes,
        max_decompressed_bytes=max_decompressed_bytes,
    )
    first = True
    for n, obj in lines:
        t = obj.get("type")
        payload = obj.get("payload")
        if t in TOP_TYPES and type(payload) is dict:
            items.append(_Item(n, iso_ms(obj.get("timestamp")), t, payload))
        elif first and "id" in obj and "timestamp" in obj and t is None:
            items.append(_Item(n, iso_ms(obj.get("timestamp")), "session_meta", obj))  # bare
        elif payload is None and t in ITEM_TYPES:
            items.append(_Item(n, iso_ms(obj.get("timestamp")), "response_item", obj))  # bare
        elif t in NEWER_TOP_TYPES:
            newer.add(t, n)
        else:
            unknown.add(t, n)
        first = False
    if not items and lines.n_parsed:
        raise NotTranscriptError(
            f"JSON lines, but no Codex rollout record (session_meta, response_item, "
            f"event_msg...): not a {_WHAT}",
            path=path,
        )
    unknown.report(
        fnd, "unknown_record_type", "warning", "{n} record(s) of unknown type {t!r} skipped"
    )
    newer.report(
        fnd, "newer_record_type", "info", "{n} record(s) of type {t!r} skipped", at_line=False
    )
    return items, set(lines.repaired)


def _session_meta(p: dict[str, Any], meta: dict[str, str], line: int, fnd: Findings) -> None:
    if "session_id" in meta:
        fnd.add("extra_session_meta", "info", line, "another session_meta line (fork or replay)")
        return
    for src, dst in (
        ("id", "session_id"),
        ("cwd", "cwd"),
        ("originator", "originator"),
        ("cli_version", "cli_version"),
        ("model_provider", "model_provider"),
        ("timestamp", "started"),
        ("forked_from_id", "forked_from_id"),
    ):
        v = p.get(src)
        if isinstance(v, str):
            meta[dst] = v
    source = p.get("source")
    if isinstance(source, str):
        meta["source"] = source
    elif isinstance(source, dict):
        meta["source"] = str(next(iter(source), "unknown"))
    git = p.get("git")
    if isinstance(git, dict):
        for k, dst in (("branch", "git_branch"), ("commit_hash", "git_commit")):
            v = git.get(k)
            if isinstance(v, str):
                meta[dst] = v
