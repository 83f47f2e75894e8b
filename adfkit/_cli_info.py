"""``adfkit info``: a cheap summary of one or more agent files."""

from __future__ import annotations

import argparse
from typing import Any

from . import _registry as registry
from ._agent import agents_of
from ._agent import open as open_agent
from ._cli_common import add_command, dump_json, for_each_agent, say, single


def _fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _when(value: Any) -> str:
    """A time as a reader writes it: ``2026-06-02 18:16:35 UTC`` (to the second)."""
    import pandas as pd

    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        return str(value)
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC")
    text: str = ts.strftime("%Y-%m-%d %H:%M:%S")
    return text + (" UTC" if ts.tzinfo is not None else "")


def _span(info: dict[str, Any]) -> str:
    return (
        f", {_when(info['first_live_at'])} .. {_when(info['last_live_at'])}"
        if info["first_live_at"]
        else ""
    )


def format_info(info: dict[str, Any]) -> str:
    """Render ``AgentFile.info()`` as aligned ``key: value`` lines (the fields it documents);
    ``lost_seqs`` (when there) is how many seqs were discarded without audit."""
    if info.get("format") not in (None, "adf"):
        return _format_transcript(info)
    audit = info["audit_rows"]
    audit_txt = (
        ", ".join(f"{v:,} archive(s) of {k} rows" for k, v in sorted(audit.items())) or "none"
    )
    switches = info["audit_settings"]
    on = [k for k, v in switches.items() if v]
    lo, hi = info["loop_seq_range"]
    model = info["model"] or "- (not recorded)"
    if info.get("model_source") == "loop":
        model += " (latest call; the config names none)"
    if info["provider"]:
        model += f" via {info['provider']}"
    live = f"{info['loop_rows']:,} rows" + (f", seq {lo}..{hi}" if lo is not None else "")
    live += _span(info)
    lost = info.get("lost_seqs")
    history = (
        (f"seq 1..{info['highest_seq']:,}" if info["highest_seq"] else "as the live loop")
        + (f", {lost:,} of them lost (discarded without audit)" if lost else "")
        + (
            f"; first archive written {_when(info['first_archived_at'])} (older rows are archived)"
            if info.get("first_archived_at")
            else ""
        )
    )
    threshold = (
        f"{info['compact_threshold']:,} tokens"
        if info["compact_threshold"] is not None
        else "NA (the config's number is out of range: no automatic compaction)"
    )
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
        ("model", model),
        ("live loop", live),
        ("history", history),
        (
            "audit",
            audit_txt
            if info.get("audited_loop_entries") is None or not audit  # info(sizes=False)
            else f"{audit_txt}, holding {info['audited_loop_entries']:,} loop rows, "
            f"{_fmt_bytes(info['audit_compressed_bytes'])} compressed",
        ),
        ("audit on", ", ".join(on) or "nothing (compacted history is discarded)"),
        ("threshold", threshold),
        ("messages", f"inbox {info['inbox_rows']}, outbox {info['outbox_rows']}"),
        ("files", f"{info['files']}"),
    ]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in lines)


def _format_transcript(info: dict[str, Any]) -> str:
    """The summary of another agent's transcript (a Claude Code session, a Codex rollout)."""
    kind = registry.label(str(info["format"]))
    lo, hi = info["loop_seq_range"]
    threshold = info.get("compact_threshold")
    window = info.get("context_window")
    lines = [
        (
            "session",
            f"{info.get('session_id') or info['name']} ({kind}"
            + (f" {info['tool_version']})" if info.get("tool_version") else ")"),
        ),
        ("file", f"{info['path']} ({_fmt_bytes(info['file_bytes'])})"),
        (
            "model",
            f"{info['model'] or '-'}" + (f" via {info['provider']}" if info["provider"] else ""),
        ),
        (
            "context",
            (f"window {window:,} tokens" if window else "window not recorded")
            + (f"; auto-compacts near {threshold:,}" if threshold else ""),
        ),
        (
            "in context",
            f"{info['loop_rows']:,} rows the model sees now"
            + (f" (seq {lo}..{hi})" if lo is not None else "")
            + _span(info),
        ),
        ("history", _transcript_history(info)),
        ("subagents", f"{info.get('subagents', 0)}; abandoned branches {info.get('branches', 0)}"),
        (
            "state",
            ("being written or cut off" if info["live"] else "complete")
            + (
                f"; adfkit check lists {info['findings']} finding(s)"
                if info.get("findings")
                else ""
            ),
        ),
    ]
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in lines)


def _transcript_history(info: dict[str, Any]) -> str:
    """Rows, then each kind of event counted apart (a microcompaction is not a compaction)."""
    n = info.get("compactions", info["audit_rows"].get("loop", 0))
    out = f"{info.get('history_rows', 0):,} rows; {n} compaction(s)"
    for key, word in (("clears", "clear(s)"), ("microcompactions", "microcompaction(s)")):
        if info.get(key):
            out += f", {info[key]} {word}"
    swept = info.get("audited_loop_entries") or 0
    return out + (f"; {swept:,} rows swept" if swept else "")


def cmd_info(args: argparse.Namespace) -> int:
    """Print a summary of each agent file (cheap: no blob is decoded; audit sizes included).

    Several paths, folders or quoted globs may be given; each file gets its summary (a JSON
    list with --json and more than one file).

    Example: adfkit info sample_agents/*.adf
    """
    docs: list[dict[str, Any]] = []

    def one(path: str) -> int:
        with open_agent(path) as opened:
            for agent in agents_of(opened):
                doc = agent.info()
                if doc.get("format") in (None, "adf"):
                    doc["lost_seqs"] = int(agent.history_gaps()["n_seqs"].sum())
                docs.append(doc)
                if not args.json:
                    if len(docs) > 1:
                        say()
                    say(format_info(docs[-1]))
        return 0

    status = for_each_agent(args.paths, one)
    if args.json:
        print(dump_json(docs[0] if docs and single(args.paths) else docs))
    return status


def register(sub: Any) -> None:
    """Add ``info``."""
    add_command(sub, "info", cmd_info, help="summary of agent files", json=True)
