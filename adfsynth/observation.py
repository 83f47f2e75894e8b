"""Self-observation: the call signature and the default tool taxonomy (ADF_FORMAT §8.2).

``signature`` is the reference analyzer's ``name:hash`` of a tool call (a 31-multiplier
UTF-16 hash in base 36); ``tool_class`` sorts a call into world, bookkeeping or internal.
Scenarios use them to plant repeated calls and world-free stretches, and the ground truth
records the signatures seen three or more times.

Written from ADF_FORMAT.md, independently of adfkit's ``_observe``: the ground truth built on
it cross-checks the reader, so do not replace it with imports from adfkit.
"""

from __future__ import annotations

from typing import Any

from .estimator import jdump

WORLD_TOOLS = {
    "msg_send",
    "msg_update",
    "sys_fetch",
    "compute_exec",
    "sys_update_config",
    "sys_create_adf",
}
BOOKKEEPING_TOOLS = {
    "sys_set_meta",
    "sys_set_state",
    "sys_set_timer",
    "sys_delete_timer",
    "loop_compact",
    "loop_clear",
}


def signature(name: str, tool_input: Any) -> str:
    """Self-observation call signature (ADF_FORMAT §8.2)."""
    if tool_input is None or tool_input is False or tool_input == "" or tool_input == 0:
        tool_input = {}
    s = name + " " + jdump(tool_input)
    h, b = 0, s.encode("utf-16-le")
    for i in range(0, len(b), 2):
        h = (h * 31 + (b[i] | b[i + 1] << 8)) & 0xFFFFFFFF
    digits, out = "0123456789abcdefghijklmnopqrstuvwxyz", ""
    while True:
        h, r = divmod(h, 36)
        out = digits[r] + out
        if not h:
            return f"{name}:{out}"


def tool_class(name: str, tool_input: Any) -> str:
    """Default self-observation taxonomy (ADF_FORMAT §8.2)."""
    if name in ("fs_write", "fs_transfer"):
        p = ""
        if isinstance(tool_input, dict):
            p = tool_input.get("path") or tool_input.get("dest") or ""
        for prefix, cls in (
            ("mind.md", "bookkeeping"),
            ("soul.md", "bookkeeping"),
            ("metrics/", "bookkeeping"),
            ("memories/", "bookkeeping"),
            ("public/", "world"),
        ):
            if p == prefix or p.startswith(prefix):
                return cls
        return "internal"
    if name in WORLD_TOOLS or name.startswith("mcp_"):
        return "world"
    if name in BOOKKEEPING_TOOLS:
        return "bookkeeping"
    return "internal"
