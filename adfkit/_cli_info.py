"""``adfkit info``: a cheap summary of an agent file."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._agent import open as open_agent
from ._cli_common import add_command


def _fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def format_info(info: dict[str, Any]) -> str:
    """Render ``AgentFile.info()`` as aligned ``key: value`` lines."""
    audit = info["audit_rows"]
    audit_txt = ", ".join(f"{k} {v}" for k, v in sorted(audit.items())) or "none"
    switches = info["audit_settings"]
    on = [k for k, v in switches.items() if v]
    lo, hi = info["loop_seq_range"]
    lines = [
        ("agent", f"{info['name']}" + (f" (@{info['handle']})" if info.get("handle") else "")),
        ("file", f"{info['path']} ({_fmt_bytes(info['file_bytes'])})"),
        ("schema", f"{info['schema_version']} (adf {info['adf_version']})"),
        (
            "state",
            ("live or crashed" if info["live"] else "closed cleanly")
            + (f"; sidecars {', '.join(info['sidecars'])}" if info["sidecars"] else "")
            + (f"; last turn {info['turn_checkpoint']}" if info["turn_checkpoint"] else ""),
        ),
        (
            "model",
            f"{info['model'] or '-'}" + (f" via {info['provider']}" if info["provider"] else ""),
        ),
        (
            "live loop",
            f"{info['loop_rows']:,} rows"
            + (f", seq {lo}..{hi}" if lo is not None else "")
            + (f", highest seq ever {info['highest_seq']}" if info["highest_seq"] else ""),
        ),
        (
            "audit",
            audit_txt
            if info.get("audited_loop_entries") is None  # info() without sizes=True
            else f"{audit_txt}; {info['audited_loop_entries']:,} archived loop entries, "
            f"{_fmt_bytes(info['audit_compressed_bytes'])} compressed",
        ),
        ("audit on", ", ".join(on) or "nothing (compacted history is discarded)"),
        ("threshold", f"{info['compact_threshold']:,} tokens"),
        ("messages", f"inbox {info['inbox_rows']}, outbox {info['outbox_rows']}"),
        ("files", f"{info['files']}"),
        ("active", f"{info['first_live_at'] or '-'} .. {info['last_live_at'] or '-'}"),
    ]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in lines)


def cmd_info(args: argparse.Namespace) -> int:
    """Print a summary of an agent file (cheap: no blob is decoded; audit sizes included).

    Example: adfkit info sample_agents/long-runner.adf
    """
    with open_agent(args.path) as agent:
        info = agent.info(sizes=True)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        print(format_info(info))
    return 0


def register(sub: Any) -> None:
    """Add ``info``."""
    add_command(sub, "info", cmd_info, help="summary of an agent file", json=True)
