"""The compactions of many agents as a dataset others can evaluate their compactors on: one
record per real compaction (:func:`adfkit._analysis.lab.compaction_records`), redacted, as
Parquet and JSON lines, with a datasheet of its fields."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from adfkit import schema
from adfkit._base.outputs import check_output
from adfkit._base.redact import redact_text
from adfkit._core.registry import input_places
from adfkit._facade.fleet import FleetResult, load_fleet, resolve_inputs

#: What each field holds (the datasheet's table); one entry per column of the dataset.
FIELDS: dict[str, str] = {
    "label": "the session's readable name (project and title or first prompt), redacted",
    "agent": "the agent's name or the session id",
    "event_id": "the compaction's number in its session (as `compactions()`)",
    "boundary_seq": "the last row the compaction applies to",
    "kind": "`auto` or `manual` (null where the record states none)",
    "created_at": "when the compaction happened (UTC)",
    "model": "the session's model at the compaction",
    "threshold": "the automatic compaction threshold in force (tokens)",
    "tokens_before": "tokens before the compaction, as the record states them "
    "(else the last call's)",
    "tokens_after": "tokens after it, as the record states them (else the next call's prompt)",
    "messages_before": "messages in the window before the compaction",
    "est_tokens_before": "that window's tokens by the runtime's estimator (characters / 3.5)",
    "window_before": "the window before the compaction: JSON, a list of `{kind, role, blocks}` "
    "(kind: message, assistant, tool_result, compaction_summary, context...; blocks: "
    "`text`, `tool_use` (name, input), `tool_result` (content), `thinking`)",
    "prompt": "the compaction instructions the record holds (a `/compact` focus), else null",
    "summary": "the summary the agent wrote (null when the record does not hold it: "
    "encrypted, lost)",
    "n_items": "items the compaction swept (paths, identifiers, URLs, errors, commands, "
    "instructions, todos, quantities); null when the swept rows are not in the record",
    "n_needed": "of those, the items the agent needed again after the compaction",
    "swept_items": "JSON, a list of `{kind, value, key, kept, needed_again, needed_how}`: each "
    "swept item, whether the recorded summary kept it (`exact`, `normalised`, `lost`; null "
    "when the summary is unknown), whether it was needed again and how it came back "
    "(`tool_input`, `tool_result`, `user`)",
    "cost_before_usd": "cost of the last model call before the compaction (USD; null unpriced)",
    "cost_after_usd": "cost of the first model call after it (USD; null unpriced)",
    "compaction_cost_usd": "cost of the compaction call itself, where the record keeps its usage",
}
#: The JSON-text columns, written as nested JSON in the JSON lines file.
_NESTED = ("window_before", "swept_items")


def datasheet(n_records: int, n_sessions: int) -> str:
    """The datasheet: what the dataset is, how it was made, and its fields."""
    lines = [
        "# Compactions dataset",
        "",
        f"{n_records} real compactions from {n_sessions} agent session(s), written by "
        "`adfkit lab --dataset` (`adfkit.export_compaction_dataset`). One record per "
        "compaction: the window the agent compacted, the summary it wrote, the items the "
        "compaction swept and which of them the agent needed again afterwards (the labels "
        "to score another compactor on), and what the calls around it cost.",
        "",
        "Files: `compactions.parquet` and `compactions.jsonl` hold the same records (in the "
        "Parquet file `window_before` and `swept_items` are JSON text; in the JSON lines file "
        "they are nested JSON).",
        "",
        "Redaction: every text (messages, tool inputs and results, summaries, instructions, "
        "labels) went through adfkit's redaction rules: credentials (provider keys, tokens, "
        "JWTs, private keys, `NAME=value` with a secret-looking name) are replaced by "
        "`__redacted__`. Paths and other text are kept as written: review before sharing.",
        "",
        "Unknown values are null, never 0.",
        "",
        "| field | type | meaning |",
        "|---|---|---|",
    ]
    types = {"label": "string", "agent": "string", **schema.COMPACTION_DATASET}
    lines += [f"| `{k}` | {types[k]} | {v} |" for k, v in FIELDS.items()]
    return "\n".join(lines) + "\n"


def _redacted(df: pd.DataFrame) -> pd.DataFrame:
    out = df.drop(columns=[c for c in ("agent_path",) if c in df.columns])
    for c in ("label", "agent"):
        if c in out.columns:
            out[c] = out[c].map(lambda v: redact_text(v) if isinstance(v, str) else v)
    return out[[c for c in FIELDS if c in out.columns]]


def _jsonl(df: pd.DataFrame, path: str) -> None:
    with open(path, "wb") as fh:
        for rec in df.astype(object).where(df.notna(), None).to_dict("records"):
            for c in _NESTED:
                if isinstance(rec.get(c), str):
                    rec[c] = orjson.loads(rec[c])
            fh.write(orjson.dumps(rec, default=str) + b"\n")


def export_compaction_dataset(
    paths_or_glob: str | os.PathLike[str] | Iterable[Any],
    to: str | os.PathLike[str],
    *,
    prices: Any = None,
) -> FleetResult:
    """Write every compaction of the agents as a dataset under ``to``:
    ``compactions.parquet``, ``compactions.jsonl`` (the same records) and ``DATASHEET.md``
    (:data:`FIELDS`: what each field holds). Redacted by adfkit's rules (the datasheet says
    which). Returns ``(written, errors)``: ``written`` one row per file (``file``,
    ``records``), ``errors`` one per agent that could not be read.

    Examples
    --------
    >>> import adfkit, tempfile
    >>> written, errors = adfkit.export_compaction_dataset(
    ...     "sample_agents/long-runner.adf", tempfile.mkdtemp())
    >>> sorted(Path(f).name for f in written["file"])
    ['DATASHEET.md', 'compactions.jsonl', 'compactions.parquet']
    """
    from adfkit._facade.index import to_parquet

    found = resolve_inputs(paths_or_glob)
    places = input_places(found.inputs)
    got = load_fleet(found, "compaction_dataset", engine="serial", progress=False, prices=prices)
    df, errors = got
    df = _redacted(df.reset_index(drop=True))
    out = Path(to)
    check_output(out, places)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    fn = str(check_output(out / "compactions.parquet", places))
    to_parquet(df, fn)
    files.append((fn, len(df)))
    fn = str(check_output(out / "compactions.jsonl", places))
    _jsonl(df, fn)
    files.append((fn, len(df)))
    fn = str(check_output(out / "DATASHEET.md", places))
    n_sessions = df["agent"].nunique() if "agent" in df.columns else 0
    Path(fn).write_text(datasheet(len(df), n_sessions), encoding="utf-8")
    files.append((fn, len(df)))
    return FleetResult(pd.DataFrame(files, columns=["file", "records"]), errors, got.skipped)
