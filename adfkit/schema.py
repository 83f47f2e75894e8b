"""Every table adfkit returns: its columns and their dtypes, and the one typed-frame builder.

Each constant maps column name -> pandas dtype, in column order; the method or function that
returns the table documents the meaning of each column (a test checks that every column here is
named in that docstring). :func:`frame` is the one place where records become a typed frame.

Examples
--------
>>> from adfkit import schema
>>> list(schema.GAPS)
['start_seq', 'end_seq', 'n_seqs']
>>> schema.frame([{"start_seq": 3, "end_seq": 5, "n_seqs": 3}], schema.GAPS).dtypes.tolist()
[Int64Dtype(), Int64Dtype(), Int64Dtype()]
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Column -> dtype of the loop/history frames (documented in AgentFile.loop()).
LOOP: dict[str, str] = {
    "seq": "Int64",
    "ord": "Int64",
    "position": "Int64",
    "role": "category",
    "kind": "category",
    "subkind": "string",
    "context_category": "string",
    "model": "string",
    "created_at": "datetime64[ms, UTC]",
    "tokens_input": "Int64",
    "tokens_output": "Int64",
    "tokens_cache_read": "Int64",
    "tokens_cache_write": "Int64",
    "tokens_reasoning": "Int64",
    "tokens_total": "Int64",
    "n_blocks": "Int64",
    "block_types": "string",
    "tool_names": "string",
    "text": "string",
    "chars": "Int64",
    "media_chars": "Int64",
    "est_tokens": "Int64",
    "content": "string",
    "origin": "category",
    "audit_id": "Int64",
    "malformed": "bool",
}

#: The loop columns plus ``epoch`` (events before the row) and ``copies`` (stored copies of it).
HISTORY: dict[str, str] = {**LOOP, "epoch": "Int64", "copies": "Int64"}

#: One row per ``adf_audit`` row (metadata; ``source`` is a category of the sources present).
AUDIT: dict[str, str] = {
    "id": "Int64",
    "source": "category",
    "start_seq": "Int64",
    "end_seq": "Int64",
    "ref": "string",
    "entry_count": "Int64",
    "size_bytes": "Int64",
    "compressed_bytes": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "start_at": "datetime64[ms, UTC]",
    "end_at": "datetime64[ms, UTC]",
}

#: One row per compaction, clear or repair found in the history.
EVENTS: dict[str, str] = {
    "event": "string",
    "summary_seq": "Int64",
    "boundary_seq": "Int64",
    "audit_ids": "object",
    "summary_lost": "bool",
}

#: One row per seq range lost without audit.
GAPS: dict[str, str] = {"start_seq": "Int64", "end_seq": "Int64", "n_seqs": "Int64"}

_S = "string"
_T = "datetime64[ms, UTC]"
INBOX: dict[str, str] = {
    **dict.fromkeys(
        ("id", "message_id", "from", "to", "thread_id", "subject", "content", "content_type"), _S
    ),
    "source": _S,
    "status": _S,
    "sent_at": _T,
    "received_at": _T,
}
OUTBOX: dict[str, str] = {
    **dict.fromkeys(
        ("id", "message_id", "from", "to", "address", "thread_id", "subject", "content"), _S
    ),
    "content_type": _S,
    "status": _S,
    "status_code": "Int64",
    "created_at": _T,
    "delivered_at": _T,
}
FILES: dict[str, str] = {
    "path": _S,
    "mime_type": _S,
    "protection": _S,
    "size": "Int64",
    "authorized": "boolean",
    "created_at": _T,
    "updated_at": _T,
}
LOGS: dict[str, str] = {
    "id": "Int64",
    **dict.fromkeys(("level", "origin", "event", "target", "message", "data"), _S),
    "created_at": _T,
}
TASKS: dict[str, str] = {
    **dict.fromkeys(("id", "tool", "args", "status", "result", "error", "origin"), _S),
    "requires_authorization": "boolean",
    "created_at": _T,
    "completed_at": _T,
}
TIMERS: dict[str, str] = {
    "id": "Int64",
    **dict.fromkeys(("schedule_json", "payload", "scope", "lambda"), _S),
    "run_count": "Int64",
    "expired": "boolean",
    "next_wake_at": _T,
    "created_at": _T,
    "last_fired_at": _T,
}

BLOCKS: dict[str, str] = {
    "seq": "Int64",
    "block_index": "Int64",
    "type": "string",
    "text": "string",
    "tool_use_id": "string",
    "tool_name": "string",
    "tool_input": "string",
    "is_error": "boolean",
    "chars": "Int64",
}

#: One row per ``tool_use`` block joined to its ``tool_result``.
TOOL_CALLS: dict[str, str] = {
    "call_seq": "Int64",
    "tool_use_id": "string",
    "tool_name": "string",
    "tool_input": "string",
    "result_seq": "Int64",
    "result_preview": "string",
    "result_chars": "Int64",
    "is_error": "boolean",
    "matched": "bool",
    "created_at": "datetime64[ms, UTC]",
}

#: What a model call was sent, by part (estimated tokens): the columns ``replay()`` and
#: ``composition()`` share.
_PARTS: dict[str, str] = {
    "system_prompt_seq": "Int64",
    "system_prompt_tokens": "float64",
    "dynamic_instructions_seq": "Int64",
    "dynamic_instructions_tokens": "float64",
    "summary_tokens": "float64",
    "message_tokens": "float64",
    "assistant_tokens": "float64",
    "tool_result_tokens": "float64",
    "inject_tokens": "float64",
}

REPLAY: dict[str, str] = {
    "seq": "Int64",
    "position": "Int64",
    "epoch": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "model": "string",
    "context_seqs": "object",
    "n_context_rows": "Int64",
    **_PARTS,
    "est_chars": "Int64",
    "est_media_chars": "Int64",
    "est_tokens": "Int64",
    "tokens_input": "Int64",
    "tokens_output": "Int64",
    "tokens_cache_read": "Int64",
    "tokens_cache_write": "Int64",
    "tokens_total": "Int64",
    "report_minus_est": "Int64",
    "chat_tokens_before": "Int64",
    "threshold": "Int64",
    "threshold_source": "string",
    "over_threshold": "boolean",
}

#: Rows of abandoned branches (a rewind, a rollback): the loop columns plus the branch name
#: (:meth:`AgentFile.branches`).
BRANCHES: dict[str, str] = {**LOOP, "branch": "string"}

#: One row per model call the record states, its usage counted once (:meth:`AgentFile.calls`).
CALLS: dict[str, str] = {
    "key": "string",
    "seq": "Int64",
    "line": "Int64",
    "model": "string",
    "created_at": "datetime64[ms, UTC]",
    "n_records": "Int64",
    "sidechain": "bool",
    **{
        f"tokens_{k}": "Int64"
        for k in ("input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning")
    },
}

#: Kinds of items the loss ledger finds (:mod:`adfkit._analysis.items`); ``compactions()``
#: has a recall column for each.
ITEM_KINDS = ("path", "identifier", "url", "error", "command", "instruction", "todo", "quantity")

COMPACTIONS: dict[str, str] = {
    "event_id": "Int64",
    "event": "string",
    "kind": "string",
    "instructions": "string",
    "summary_seq": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "boundary_seq": "Int64",
    "audited": "boolean",
    "audit_ids": "object",
    "summary_lost": "bool",
    "summary_encrypted": "bool",
    "swept_start": "Int64",
    "swept_end": "Int64",
    "n_swept": "Int64",
    "swept_seqs": "object",
    "swept_chars": "Int64",
    "swept_tokens": "Int64",
    "summary_chars": "Int64",
    "summary_tokens": "Int64",
    "compression_ratio": "Float64",
    "compaction_input": "Int64",
    "compaction_output": "Int64",
    "compaction_model": "string",
    "tail_seqs": "object",
    "n_tail": "Int64",
    "trigger_tokens": "Int64",
    "recorded_tokens_before": "Int64",
    "recorded_tokens_after": "Int64",
    "recorded_duration_ms": "Int64",
    "threshold": "Int64",
    "n_identifiers": "Int64",
    "n_recalled": "Int64",
    "recall": "Float64",
    **{f"recall_{k}": "Float64" for k in ITEM_KINDS},
    "n_refetches": "Int64",
    "refetch_tokens": "Int64",
    "cache_write_before": "Int64",
    "cache_write_after": "Int64",
    "cache_read_before": "Int64",
    "cache_read_after": "Int64",
}

COMPACTION_AUDIT: dict[str, str] = {
    "event_id": "Int64",
    "kind": "string",
    "created_at": "datetime64[ms, UTC]",
    "boundary_seq": "Int64",
    "threshold": "Int64",
    "threshold_source": "string",
    "context_window": "Int64",
    "window_source": "string",
    "tokens_before": "Int64",
    "tokens_after": "Int64",
    "fill": "Float64",
    "of_threshold": "Float64",
    "shrink": "Float64",
    "summary_tokens": "Int64",
    "previous_summary_tokens": "Int64",
    "calls_since_previous": "Int64",
    "cache_write_after": "Int64",
    "cache_read_after": "Int64",
    "findings": "object",
    "early": "bool",
    "summary_grew": "bool",
    "back_to_back": "bool",
    "did_not_shrink": "bool",
    "cache_never_read": "bool",
}

COMPACTION_LAB: dict[str, str] = {
    "event_id": "Int64",
    "boundary_seq": "Int64",
    "compactor": "string",
    "messages_before": "Int64",
    "tokens_before": "Int64",
    "messages_after": "Int64",
    "tokens_after": "Int64",
    "ratio": "Float64",
    "n_items": "Int64",
    "n_items_kept": "Int64",
    "recall_all": "Float64",
    "n_needed": "Int64",
    "n_needed_kept": "Int64",
    "recall": "Float64",
    **{f"recall_{k}": "Float64" for k in ITEM_KINDS},
    "model": "string",
    "compaction_cost_usd": "Float64",
    "cache_rewrite_usd": "Float64",
    "cost_usd": "Float64",
    "note": "string",
    "judge_n": "Int64",
    "judge_yes": "Int64",
    "judge_recall": "Float64",
    "judge_note": "string",
}

COMPACTION_DATASET: dict[str, str] = {
    "event_id": "Int64",
    "boundary_seq": "Int64",
    "kind": "string",
    "created_at": "datetime64[ms, UTC]",
    "model": "string",
    "threshold": "Int64",
    "tokens_before": "Int64",
    "tokens_after": "Int64",
    "messages_before": "Int64",
    "est_tokens_before": "Int64",
    "window_before": "string",
    "prompt": "string",
    "summary": "string",
    "n_items": "Int64",
    "n_needed": "Int64",
    "swept_items": "string",
    "cost_before_usd": "Float64",
    "cost_after_usd": "Float64",
    "compaction_cost_usd": "Float64",
}

MISSED_COMPACTIONS: dict[str, str] = {
    "first_seq": "Int64",
    "last_seq": "Int64",
    "n_calls": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "threshold": "Int64",
    "threshold_source": "string",
    "max_input": "Int64",
    "over_by": "Int64",
}

REFETCHES: dict[str, str] = {
    "event_id": "Int64",
    "summary_seq": "Int64",
    "seq": "Int64",
    "tool_name": "string",
    "tool_input": "string",
    "swept_seq": "Int64",
    "result_seq": "Int64",
    "result_tokens": "Int64",
    "call_tokens_input": "Int64",
}

#: One row per item a compaction swept: did its summary keep it? (the ledger's items)
SUMMARY_RECALL: dict[str, str] = {
    "kind": "string",
    "value": "string",
    "item_key": "string",
    "first_seq": "Int64",
    "kept": "string",
    "recalled": "bool",
}

#: ``compaction_ledger()``: one row per item in a compaction's swept span.
COMPACTION_LEDGER: dict[str, str] = {
    "event_id": "Int64",
    "summary_seq": "Int64",
    "boundary_seq": "Int64",
    "kind": "string",
    "value": "string",
    "item_key": "string",
    "first_seq": "Int64",
    "last_seq": "Int64",
    "n_seen": "Int64",
    "seqs": "object",
    "carried": "bool",
    "kept": "string",
    "saved": "bool",
    "saved_seq": "Int64",
    "saved_to": "string",
    "needed_again": "bool",
    "needed_seq": "Int64",
    "needed_how": "string",
    "calls_until": "Int64",
    "tokens_until": "Int64",
    "cost_until_usd": "Float64",
    "seconds_until": "Float64",
    "refetch_tokens": "Int64",
}

#: ``forgetting()``: one row per compaction, the ledger summed.
FORGETTING: dict[str, str] = {
    "event_id": "Int64",
    "summary_seq": "Int64",
    "boundary_seq": "Int64",
    "n_items": "Int64",
    "n_kept_exact": "Int64",
    "n_kept_normalised": "Int64",
    "n_lost": "Int64",
    "n_saved": "Int64",
    "loss_rate": "Float64",
    **{f"loss_rate_{k}": "Float64" for k in ITEM_KINDS},
    "n_needed_again": "Int64",
    "n_forgotten": "Int64",
    "forgetting_rows": "Int64",
    "forgetting_tokens": "Int64",
    "forgetting_cost_usd": "Float64",
    "calls_until_last": "Int64",
}

#: ``item_survival()``: one row per item first swept by a compaction, followed through the
#: summaries after it.
ITEM_SURVIVAL: dict[str, str] = {
    "kind": "string",
    "value": "string",
    "item_key": "string",
    "first_event": "Int64",
    "n_checked": "Int64",
    "n_survived": "Int64",
    "lost_at": "Int64",
    "refreshed_at": "Int64",
    "censored": "bool",
    "kept_chain": "string",
}

#: ``survival_curve()``: one row per number of compactions.
SURVIVAL_CURVE: dict[str, str] = {
    "compactions": "Int64",
    "n_at_risk": "Int64",
    "n_lost": "Int64",
    "n_censored": "Int64",
    "survival": "Float64",
}

#: ``compaction_cache()``: one row per compaction.
COMPACTION_CACHE: dict[str, str] = {
    "event_id": "Int64",
    "boundary_seq": "Int64",
    "provider": "string",
    "model": "string",
    "before_seq": "Int64",
    "after_seq": "Int64",
    "input_before": "Int64",
    "output_before": "Int64",
    "cache_read_before": "Int64",
    "cache_write_before": "Int64",
    "input_after": "Int64",
    "cache_read_after": "Int64",
    "cache_write_after": "Int64",
    "cached_prefix_before": "Int64",
    "invalidated_tokens": "Int64",
    "shed_tokens": "Int64",
    "compaction_cost_usd": "Float64",
    "k": "Int64",
    "n_after": "Int64",
    "n_compared": "Int64",
    "cost_after_usd": "Float64",
    "cost_no_compaction_usd": "Float64",
    "cost_stable_prefix_usd": "Float64",
    "net_saving_usd": "Float64",
    "stable_prefix_tokens": "Int64",
    "overflow_call": "Int64",
    "window_tokens": "Int64",
    "break_even_calls": "Int64",
}

#: ``recovery()``: one row per start (the session's cold start, then each compaction).
RECOVERY: dict[str, str] = {
    "start": "string",
    "event_id": "Int64",
    "start_seq": "Int64",
    "end_seq": "Int64",
    "actions_to_productive": "Int64",
    "calls_to_productive": "Int64",
    "productive_seq": "Int64",
    "productive_tool": "string",
    "seconds_to_productive": "Float64",
    "n_reads": "Int64",
    "reorientation_reads": "Int64",
    "reorientation_paths": "object",
}

SIM_EVENTS: dict[str, str] = {
    "event_id": "Int64",
    "kind": "string",
    "simulated": "bool",
    "before_call": "Int64",
    "boundary_seq": "Int64",
    "summary_seq": "Int64",
    "matches_real": "bool",
    "dropped_seqs": "object",
    "n_dropped": "Int64",
    "dropped_tokens": "Int64",
    "kept_seqs": "object",
    "summary_tokens": "Int64",
    "chat_tokens": "Int64",
    "threshold": "Int64",
    "compaction_input": "Int64",
    "compaction_output": "Int64",
}

SIM_CALLS: dict[str, str] = {
    "seq": "Int64",
    "epoch": "Int64",
    "est_tokens_real": "Int64",
    "est_tokens_sim": "Int64",
    "tokens_input_real": "Int64",
    "tokens_input_sim": "Int64",
    "tokens_output": "Int64",
    "tokens_total_real": "Int64",
    "tokens_total_sim": "Int64",
    "threshold": "Int64",
    "n_rows_sim": "Int64",
}

#: Columns of :meth:`AgentFile.usage` and their dtypes.
USAGE: dict[str, str] = {
    "seq": "Int64",
    "position": "Int64",
    "epoch": "Int64",
    "call_kind": "category",
    "created_at": "datetime64[ms, UTC]",
    "model": "string",
    "branch": "string",
    "tokens_input": "Int64",
    "tokens_output": "Int64",
    "tokens_cache_read": "Int64",
    "tokens_cache_write": "Int64",
    "tokens_cache_write_1h": "Int64",
    "tokens_reasoning": "Int64",
    "tokens_total": "Int64",
    "cum_input": "Int64",
    "cum_output": "Int64",
    "cum_total": "Int64",
    "price_input": "float64",
    "price_output": "float64",
    "price_cache_read": "float64",
    "price_cache_write": "float64",
    "price_cache_write_1h": "float64",
    "cost_usd": "float64",
    "cum_cost_usd": "float64",
}

CONTEXT_BLOCKS: dict[str, str] = {
    "seq": "Int64",
    "position": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "epoch": "Int64",
    "category": "string",
    "loop_inject": "bool",
    "origin": "string",
    "key": "string",
    "text": "string",
    "chars": "Int64",
    "est_tokens": "Int64",
    "prev_seq": "Int64",
    "lines_added": "Int64",
    "lines_removed": "Int64",
    "diff": "string",
    "identical": "bool",
    "reset_before": "string",
    "change": "string",
    "gap_before": "bool",
    "delivered": "boolean",
    "stored": "string",
    "audit_id": "Int64",
}

COMPOSITION: dict[str, str] = {
    "seq": "Int64",
    "position": "Int64",
    "epoch": "Int64",
    "created_at": "datetime64[ms, UTC]",
    **_PARTS,
    "n_messages": "Int64",
    "context_chars": "Int64",
    "context_media_chars": "Int64",
    "est_tokens": "Int64",
    "total_tokens": "float64",
    "tokens_input": "Int64",
}

CONFIG_CHANGES: dict[str, str] = {
    "seq": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "epoch": "Int64",
    "path": "string",
    "value": "string",
    "action": "string",
    "reason": "string",
    "succeeded": "boolean",
    "result": "string",
    "result_seq": "Int64",
    "by": "string",
    "approved_by": "string",
    "task_id": "string",
    "source": "string",
}

MIND_HISTORY: dict[str, str] = {
    "path": "string",
    "version": "Int64",
    "seq": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "op": "string",
    "source": "string",
    "rebuilt": "bool",
    "content": "string",
    "chars": "Int64",
    "current": "bool",
    "note": "string",
}

MIND_PAGES: dict[str, str] = {
    "path": "string",
    "slug": "string",
    "type": "string",
    "description": "string",
    "status": "string",
    "stale_after": "string",
    "sources": "object",
    "title": "string",
    "linked": "bool",
    "problems": "string",
    "body": "string",
    "size": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "updated_at": "datetime64[ms, UTC]",
}

MIND_LOG: dict[str, str] = {
    "position": "Int64",
    "date": "datetime64[ms, UTC]",
    "action": "string",
    "title": "string",
    "page": "string",
    "body": "string",
}

OBSERVE_TURNS: dict[str, str] = {
    "turn": "Int64",
    "start_seq": "Int64",
    "end_seq": "Int64",
    "n_rows": "Int64",
    "start_at": "datetime64[ms, UTC]",
    "trigger_kind": "string",
    "n_calls": "Int64",
    "n_world": "Int64",
    "n_internal": "Int64",
    "n_bookkeeping": "Int64",
    "is_null_turn": "bool",
    "tokens_in": "Int64",
    "tokens_out": "Int64",
    "epoch": "Int64",
}

OBSERVE_CALLS: dict[str, str] = {
    "turn": "Int64",
    "seq": "Int64",
    "block_index": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "tool": "string",
    "class": "string",
    "signature": "string",
    "input": "string",
    "tool_use_id": "string",
}

OBSERVE_SIGNATURES: dict[str, str] = {
    "signature": "string",
    "tool": "string",
    "count": "Int64",
    "n_turns": "Int64",
    "first_seq": "Int64",
    "last_seq": "Int64",
    "first_seen": "datetime64[ms, UTC]",
    "last_seen": "datetime64[ms, UTC]",
}

OBSERVE_STREAKS: dict[str, str] = {
    "first_turn": "Int64",
    "last_turn": "Int64",
    "length": "Int64",
    "start_seq": "Int64",
    "end_seq": "Int64",
    "start_at": "datetime64[ms, UTC]",
    "current": "bool",
}

OBSERVE_ANOMALIES: dict[str, str] = {
    "check": "string",
    "tripped": "bool",
    "value": "Int64",
    "threshold": "Int64",
    "window_turns": "Int64",
    "detail": "string",
    "turns": "object",
    "seqs": "object",
    "signatures": "object",
}

#: Columns of the report and their dtypes.
INTEGRITY: dict[str, str] = {
    "check": "string",
    "severity": "category",
    "table": "string",
    "rows": "object",
    "detail": "string",
}

#: Error table columns (one row per file that could not be loaded).
FLEET_ERRORS: dict[str, str] = {"path": "string", "error": "string", "message": "string"}

#: ``list_claude_code_sessions()``: one row per main session file, newest first.
CLAUDE_CODE_SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "cwd": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "n_subagents": "Int64",
    "error": "string",
}

#: ``list_codex_sessions()``: one row per rollout, newest first.
CODEX_SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "cwd": "string",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "model": "string",
    "cli_version": "string",
    "originator": "string",
    "compressed": "bool",
    "error": "string",
}


def frame(
    data: Sequence[Mapping[str, Any]] | Mapping[str, Sequence[Any]], columns: Mapping[str, str]
) -> pd.DataFrame:
    """A frame with exactly ``columns`` (name -> dtype), from records or from column lists.

    ``data`` is a list of dicts (a missing key is NA) or a dict of equal-length lists. Values
    are converted per dtype: ``Int64`` takes ints and whole floats (NA for None, NaN, pd.NA),
    ``boolean`` takes truthy values or NA, ``bool`` plain truth values, datetime columns take
    timestamps or NaT/None, ``object`` keeps values as they are (tuples, lists, dicts); any
    other dtype goes through ``astype``.
    """
    if isinstance(data, Mapping):
        cols = {c: list(data.get(c, ())) for c in columns}
        n = max((len(v) for v in cols.values()), default=0)
        cols = {c: v if v or not n else [None] * n for c, v in cols.items()}
    else:
        n = len(data)
        cols = {c: [r.get(c) for r in data] for c in columns}
    if not n:  # built once per set of columns, a copy each time (many empty tables per file)
        return _empty(tuple(columns.items())).copy()
    out: dict[str, Any] = {}
    for name, dtype in columns.items():
        out[name] = _column(cols[name], dtype)
    # every column is a fresh array made here: no copy (a small frame's cost is its columns')
    return pd.DataFrame(out, copy=False)


@functools.lru_cache(maxsize=256)
def _empty(columns: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """The frame of no rows with ``columns`` (name, dtype): never handed out, only copied."""
    return pd.DataFrame(
        {c: _column([], dtype) for c, dtype in columns}, columns=[c for c, _ in columns]
    )


def plain(col: Any) -> list[Any]:
    """A column's (a Series' or an array's) values as a list, None where NA: converted at
    once (``tolist()`` of an Arrow string column makes each value on its own, ~5 us a value).

    Examples
    --------
    >>> plain(pd.Series(["a", None], dtype="string"))
    ['a', None]
    """
    values: list[Any] = col.to_numpy(dtype=object, na_value=None).tolist()
    return values


def to_ms(ts: Any) -> int | None:
    """A timestamp as milliseconds since the epoch (None for a missing one)."""
    return None if ts is None or pd.isna(ts) else int(pd.Timestamp(ts).value // 1_000_000)


def _na(v: Any) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _column(v: list[Any], dtype: str) -> Any:
    if dtype == "object":
        # element by element: tuples of equal length must stay cells, not become a 2-D array
        arr = np.empty(len(v), dtype=object)
        for i, x in enumerate(v):
            arr[i] = x
        if all(x is None or type(x) in _CELLS for x in v):
            return arr  # no text or time the frame would infer a dtype for: the array itself
        return pd.Series(arr, dtype=object)
    if dtype.startswith("datetime"):
        # Integers are epoch milliseconds; anything else a timestamp (or NaT/None).
        if all(_na(x) or (isinstance(x, int | np.integer) and not isinstance(x, bool)) for x in v):
            ms = pd.Series(pd.array([None if _na(x) else int(x) for x in v], dtype="Int64"))
            return pd.to_datetime(ms.astype("float64"), unit="ms", utc=True).astype(dtype)
        if dtype.endswith(", UTC]") and all(
            x is None or (type(x) is pd.Timestamp and x.tzinfo is not None) for x in v
        ):  # aware timestamps (the common case) built directly, as test_schema.py checks
            with contextlib.suppress(ValueError, OverflowError):  # out of range: below
                return pd.array(v, dtype="datetime64[ns, UTC]").astype(dtype)
        return pd.to_datetime(
            pd.Series([pd.NaT if _na(x) else x for x in v], dtype=object), utc=True
        ).astype(dtype)
    if dtype == "Int64":
        if all(type(x) is int or x is None for x in v):  # the common case, built directly
            with contextlib.suppress(OverflowError):  # past int64: below, as before
                data = np.array([_MASKED if x is None else x for x in v], dtype="int64")
                return pd.arrays.IntegerArray(data, np.array([x is None for x in v], dtype=bool))
        return pd.array([None if _na(x) else int(x) for x in v], dtype="Int64")
    if dtype == "boolean":
        return pd.array([None if _na(x) else bool(x) for x in v], dtype="boolean")
    if dtype == "bool":
        return np.array([bool(x) for x in v], dtype=bool)
    if dtype == "category":
        # text (the common case) built directly; no text at all: object categories, as before
        if any(type(x) is str for x in v) and all(type(x) is str or _na(x) for x in v):
            return _text_categorical(v)
        return pd.Series(v, dtype=object).astype("category")
    vals = [None if _na(x) else x for x in v]
    # the common cases built directly (``astype`` from objects costs 4x as much per column):
    # the same arrays, as tests/test_schema_frame.py checks
    if dtype == "string" and all(type(x) is str or x is None for x in vals):
        return pd.array(vals, dtype="string")
    if dtype == "Float64" and all(type(x) in _REAL or x is None for x in vals):
        data = np.array([0.0 if x is None else x for x in vals], dtype="float64")
        return pd.arrays.FloatingArray(data, np.array([x is None for x in vals], dtype=bool))
    return pd.Series(vals, dtype=object).astype(dtype)


def _text_categorical(v: list[Any]) -> pd.Categorical:
    """A category column of text or NA values: the categories sorted, as ``astype("category")``
    infers them (the dtype made once per set of categories: inferring it costs a frame's
    worth of time)."""
    cats = sorted({x for x in v if not _na(x)})
    code = {c: i for i, c in enumerate(cats)}
    codes: np.ndarray = np.array(
        [-1 if _na(x) else code[x] for x in v], dtype=_codes_type(len(cats))
    )
    return pd.Categorical.from_codes(codes, dtype=text_categories(tuple(cats)))


def _codes_type(n: int) -> type:
    return np.int8 if n < 127 else np.int16 if n < 32_767 else np.int32


@functools.lru_cache(maxsize=256)
def text_categories(cats: tuple[str, ...], ordered: bool = False) -> pd.CategoricalDtype:
    """The category dtype of these text categories (in this order), made once: a new one
    validates its categories each time (a third of a millisecond)."""
    return pd.CategoricalDtype(pd.Index(list(cats), dtype="str"), ordered=ordered)


#: The cell types an ``object`` column hands to the frame as a plain array (a Series costs
#: an index and its alignment; text or timestamps in a plain array would be inferred).
_CELLS = (tuple, list, dict)

#: What ``pd.array(..., dtype="Int64")`` stores under a masked (NA) value.
_MASKED = 1

#: The number types a ``Float64`` column takes as they are (anything else goes through
#: ``astype``, as before).
_REAL = (int, float, np.float64, np.int64)
