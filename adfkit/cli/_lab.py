"""``adfkit lab``: every compaction replayed with other compactors, scored."""

from __future__ import annotations

import argparse
import math
from typing import Any

from adfkit.cli._common import add_command, agent_inputs, dump_json, error, say

#: The columns the text table shows, with their headings.
_SHOWN = (
    ("compactor", "compactor"),
    ("tokens_after", "tokens"),
    ("ratio", "ratio"),
    ("needed", "needed kept"),
    ("recall", "recall"),
    ("recall_all", "all kept"),
    ("cost_usd", "cost USD"),
)


def _known(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v)) and str(v) != "<NA>"


def _cell(col: str, r: dict[str, Any]) -> str:
    if col == "needed":
        a, b = r.get("n_needed_kept"), r.get("n_needed")
        return f"{a}/{b}" if _known(a) and _known(b) else "-"
    v: Any = r.get(col)
    if not _known(v):
        return "-"
    if col in ("ratio", "recall", "recall_all"):
        return f"{float(v):.3f}"
    if col == "cost_usd":
        return f"{float(v):.6f}"
    if col == "tokens_after":
        return f"{int(v):,}"
    return str(v)


def format_lab(records: list[dict[str, Any]]) -> list[str]:
    """The text tables of ``adfkit lab``: per agent and compaction, a row per compactor
    (``-`` where a figure is unknown)."""
    lines: list[str] = []
    key = None
    for r in records:
        k = (r.get("agent_path"), r.get("event_id"))
        if k != key:
            key = k
            before: Any = r.get("tokens_before")
            size = f"{int(before):,} tokens before" if _known(before) else "size unknown"
            if lines:
                lines.append("")
            lines.append(
                f"{r.get('label', r.get('agent_path'))}: compaction {r['event_id']} "
                f"(seq {r['boundary_seq']}), {size}"
            )
            lines.append("  " + "  ".join(f"{h:>12}" for _, h in _SHOWN))
        lines.append("  " + "  ".join(f"{_cell(c, r):>12}" for c, _ in _SHOWN))
    return lines


def cmd_lab(args: argparse.Namespace) -> int:
    """Replay every compaction of each agent with other compactors and score them.

    For each compaction the record holds, the window before it is given to each compactor
    (--compactor, repeatable: recorded, keep_last[:n=5], mask[:keep=3], trim[:chars=500],
    extractive, llm:model=NAME[,api=openai,base_url=URL,budget_usd=X...] (the key from
    ADFKIT_LLM_API_KEY, ANTHROPIC_API_KEY or OPENAI_API_KEY), or a registered one; default:
    the five built-in deterministic ones) and the new window is scored: recall of the items
    needed again after the compaction that it keeps (the loss ledger's rule), its tokens, and
    what the compaction call and the cache rewrite cost. --plot FILE draws recall against
    tokens kept, one point per compactor (the recorded one a star); --dataset DIR writes every
    compaction as a dataset record (the window before, the summary, the swept items and which
    were needed again, costs), redacted, as Parquet and JSON lines with a datasheet.

    Example: adfkit lab ~/.claude/projects --compactor recorded --compactor mask:keep=5
    """
    from adfkit._analysis.compactors import DEFAULT, make_compactor
    from adfkit._facade.fleet import load_fleet

    specs = args.compactor or list(DEFAULT)
    for spec in specs:  # a wrong name or parameter: one error line, before any file is read
        make_compactor(spec)
    if args.judge:
        from adfkit._analysis.lab import judge_of

        judge_of(args.judge)  # no key: one error line, no call
    df, errors = load_fleet(
        args.paths,
        "compaction_lab",
        engine="serial",
        progress=False,
        compactors=specs,
        prices=args.prices,
        judge=args.judge,
    )
    for path, _err, msg in errors.itertuples(index=False):
        error(f"{path}: {msg}")
    records = df.astype(object).where(df.notna(), None).to_dict("records") if len(df) else []
    if args.json:
        print(dump_json(records))
    elif records:
        for line in format_lab(records):
            say(line)
    else:
        say("no compaction found")
    if args.plot:
        _write_plot(args, df)
    if args.dataset:
        _write_dataset(args)
    return 2 if len(errors) and not len(df) else (1 if len(errors) else 0)


def _write_plot(args: argparse.Namespace, df: Any) -> None:
    """--plot FILE: recall against tokens kept, never over an input."""
    from adfkit import plots
    from adfkit._base.outputs import check_output
    from adfkit._core.registry import input_places
    from adfkit.plots import close, lab_recall_tokens

    check_output(args.plot, input_places(agent_inputs(args.paths).inputs))
    ax = lab_recall_tokens(df)
    plots.figure_of(ax).savefig(args.plot)
    close(ax)
    say(f"wrote {args.plot}", err=True)


def _write_dataset(args: argparse.Namespace) -> None:
    """--dataset DIR: every compaction as a dataset record, redacted."""
    from adfkit._facade.lab_dataset import export_compaction_dataset

    written, _ = export_compaction_dataset(args.paths, args.dataset, prices=args.prices)
    n = int(written["records"].iloc[0]) if len(written) else 0
    say(
        f"wrote {n} compaction(s) to {args.dataset} (Parquet, JSON lines, DATASHEET.md)",
        err=True,
    )


def register(sub: Any) -> None:
    """Add ``lab``."""
    p = add_command(
        sub,
        "lab",
        cmd_lab,
        help="replay each compaction with other compactors and score them",
        json=True,
        prices=True,
    )
    p.add_argument(
        "--compactor",
        action="append",
        metavar="SPEC",
        help="a compactor, NAME or NAME:key=value,... (repeatable; default the built-in ones)",
    )
    p.add_argument(
        "--judge",
        metavar="SETTINGS",
        help="an LLM judge answering a probe per needed item, reported apart "
        "(model=NAME[,api=openai,base_url=URL,budget_usd=X]); --json shows its columns",
    )
    p.add_argument("--plot", metavar="FILE", help="draw recall against tokens kept to FILE")
    p.add_argument(
        "--dataset", metavar="DIR", help="write the compactions as a dataset (redacted) to DIR"
    )
