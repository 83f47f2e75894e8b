"""CLI commands ``adfkit observe`` and ``adfkit check`` (self-observation and integrity).

Exit status for both: 0 nothing found, 1 findings (a tripped anomaly; an integrity row of
severity warning or error), 2 unreadable input or bad usage.
"""

from __future__ import annotations

import argparse
from typing import Any

from adfkit.cli._common import LazyChoices, add_command, dump_json, for_each_agent, say, single


def cmd_observe(args: argparse.Namespace) -> int:
    """Self-observation metrics: turn mix, tool calls by class, the three anomaly checks.

    Exit status 0 when no check trips, 1 when one does, 2 when the file cannot be read.

    Several paths, folders or quoted globs may be given.

    Example: adfkit observe sample_agents/long-runner.adf --segmentation reference
    """
    docs: list[dict[str, Any]] = []

    def one(path: str) -> int:
        tripped = False
        from adfkit._facade.agent import agents_of, observe
        from adfkit._facade.agent import open as open_agent

        with open_agent(path) as opened:
            for agent in agents_of(opened):
                obs = observe(agent, taxonomy=args.taxonomy, segmentation=args.segmentation)
                docs.append({"path": agent.path, **obs.to_dict()})
                tripped = tripped or bool(obs.anomalies["tripped"].any())
                if not args.json:
                    if len(docs) > 1:
                        say()
                    say(obs.summary())
        return 1 if tripped else 0

    status = for_each_agent(args.paths, one)
    if args.json:
        print(dump_json(docs[0] if docs and single(args.paths) else docs))
    return status


def check_dict(path: str, report: Any) -> dict[str, Any]:
    """The ``--json`` shape of ``adfkit check``."""
    counts = {s: int((report["severity"] == s).sum()) for s in ("error", "warning", "info")}
    return {
        "path": path,
        "clean": counts["error"] == 0 and counts["warning"] == 0,
        "counts": counts,
        "findings": [
            {
                "check": str(r.check),
                "severity": str(r.severity),
                "table": str(r.table),
                # a range (lost seqs past integrity's listing limit): its ends, not every seq
                "rows": (
                    {"first": r.rows.start, "last": r.rows.stop - 1}
                    if isinstance(r.rows, range)
                    else [int(x) for x in r.rows]
                ),
                "detail": str(r.detail),
            }
            for r in report.itertuples(index=False)
        ],
    }


def _no_agent(path: str) -> dict[str, Any]:
    """The check of an input that holds no agent at all, in :func:`check_dict`'s shape."""
    detail = "the input holds no agent (a log cut before its first sample, or still written)"
    return {
        "path": path,
        "clean": False,
        "counts": {"error": 1, "warning": 0, "info": 0},
        "findings": [
            {"check": "no_agent", "severity": "error", "table": "", "rows": [], "detail": detail}
        ],
    }


def cmd_check(args: argparse.Namespace) -> int:
    """Integrity checks: lost or duplicated history, bad audit blobs and counters, orphan
    tool calls, rows out of time order, loop audit switched off.

    Then the compaction audit: each compaction whose findings hold (early, summary_grew,
    back_to_back, did_not_shrink, cache_never_read) and each run of calls past the threshold
    with no compaction (missed); these are listed, not counted in the exit status.

    Exit status 0 when nothing of severity warning or error is found (info rows are listed
    but do not count), 1 when something is, 2 when the file cannot be read.

    Example: adfkit check sample_agents/forgetful.adf --json
    """
    docs: list[dict[str, Any]] = []

    def one(path: str) -> int:
        from adfkit._facade.agent import agents_of
        from adfkit._facade.agent import open as open_agent

        with open_agent(path) as opened:
            found = [
                {**check_dict(a.path, a.integrity()), "compaction_audit": audit_dict(a)}
                for a in agents_of(opened)
            ]
        if not found:  # an input holding no agent (a log cut before its first sample): an error
            found = [_no_agent(path)]
        for d in found:
            docs.append(d)
            if args.json:
                pass
            elif not d["findings"]:
                say(f"{d['path']}: no findings")
            else:
                c = d["counts"]
                counts = f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} info"
                say(f"{d['path']}: {counts}")
                for f in d["findings"]:
                    say(f"  {f['severity']:<7}  {f['check']}: {f['detail']}")
            if not args.json and "compaction_audit" in d:
                for line in audit_lines(d["compaction_audit"]):
                    say(f"  {line}")
        return 0 if all(d["clean"] for d in found) else 1

    status = for_each_agent(args.paths, one)
    if args.json:
        print(dump_json(docs[0] if docs and single(args.paths) else docs))
    return status


def audit_dict(agent: Any) -> dict[str, Any]:
    """The compaction audit of one agent for ``check``: counts per finding, the compactions
    with findings, the missed runs."""
    import pandas as pd

    from adfkit._analysis.compaction_audit import FINDINGS

    audit, missed = agent.compaction_audit(), agent.missed_compactions()
    flagged = audit[audit["findings"].map(len) > 0]
    return {
        "compactions": len(audit),
        "counts": {**{k: int(audit[k].sum()) for k in FINDINGS}, "missed": len(missed)},
        "flagged": [
            {
                "event_id": int(r.event_id),
                "findings": list(r.findings),
                "tokens_before": None if pd.isna(r.tokens_before) else int(r.tokens_before),
                "threshold": None if pd.isna(r.threshold) else int(r.threshold),
                "threshold_source": None if pd.isna(r.threshold_source) else r.threshold_source,
            }
            for r in flagged.itertuples(index=False)
        ],
        "missed": [
            {
                "first_seq": int(r.first_seq),
                "last_seq": int(r.last_seq),
                "n_calls": int(r.n_calls),
                "max_input": int(r.max_input),
                "threshold": int(r.threshold),
            }
            for r in missed.itertuples(index=False)
        ],
    }


def audit_lines(d: dict[str, Any]) -> list[str]:
    """The audit as text lines (nothing when no finding holds)."""
    out = []
    for f in d["flagged"]:
        before = "-" if f["tokens_before"] is None else f"{f['tokens_before']:,}"
        threshold = "-" if f["threshold"] is None else f"{f['threshold']:,}"
        source = f" ({f['threshold_source']})" if f["threshold_source"] else ""
        out.append(
            f"audit    compaction {f['event_id']}: {', '.join(f['findings'])} "
            f"(before {before}, threshold {threshold}{source})"
        )
    for m in d["missed"]:
        out.append(
            f"audit    missed: {m['n_calls']} calls (seq {m['first_seq']}-{m['last_seq']}) "
            f"past the threshold {m['threshold']:,} with no compaction (up to {m['max_input']:,})"
        )
    return out


def _segmentations() -> tuple[str, ...]:
    from adfkit._analysis.observe import SEGMENTATIONS

    return SEGMENTATIONS


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``observe`` and ``check`` to the ``adfkit`` command."""
    p = add_command(
        sub, "observe", cmd_observe, help="self-observation metrics and anomalies", json=True
    )
    p.add_argument(
        "--segmentation",
        choices=LazyChoices(_segmentations),
        metavar="NAME",
        default="smart",
        help="turn segmentation: smart (default) or reference (the reference analyzer's)",
    )
    p.add_argument("--taxonomy", metavar="FILE", help="a taxonomy JSON file (default: shipped)")
    add_command(
        sub, "check", cmd_check, help="integrity checks of an agent file's history", json=True
    )
