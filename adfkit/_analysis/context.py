"""What the runtime told the model besides the conversation: context blocks and system prompts.

The ``[Context: ...]`` rows of the history (ADF_FORMAT.md §7): each block with its diff against
the previous one of its category and why it was written again; the system prompt in force at any
model call.
"""

from __future__ import annotations

import difflib
import warnings
from typing import Any

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._analysis.timeline import gap_between, reset_between
from adfkit._base.errors import AdfError, AdfWarning
from adfkit._base.js import js_length
from adfkit._core.rows import context_body, estimate_tokens, parse_context_header
from adfkit._core.source import AgentSource, Key

_CONTEXT_BLOCKS: Key[pd.DataFrame] = Key("context_blocks")


def _diff(prev: str, cur: str) -> tuple[int, int, str]:
    """(lines added, lines removed, the changed lines as ``+``/``-`` text) from ``prev``."""
    added = removed = 0
    out: list[str] = []
    for line in difflib.unified_diff(prev.splitlines(), cur.splitlines(), lineterm="", n=0):
        if line.startswith(("+++", "---", "@@")):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
        out.append(line)
    return added, removed, "\n".join(out)


def superseded_injects(keyed: list[tuple[int, str, str]], calls: np.ndarray) -> set[int]:
    """Seqs of keyed ``loop_inject`` v2 rows that were never sent.

    Keyed updates made before the next model call collapse to the latest one (ADF_FORMAT.md
    §7): a row is superseded when a later row with the same category and key comes before the
    next assistant row.

    Parameters
    ----------
    keyed : ``(seq, category, key)`` of every keyed v2 inject row.
    calls : the seqs of the assistant rows, sorted.

    Examples
    --------
    >>> import numpy as np
    >>> sorted(superseded_injects([(6, "s", "k"), (7, "s", "k"), (9, "s", "k")], np.array([8])))
    [6]
    """
    out: set[int] = set()
    seen: dict[tuple[str, str], int] = {}
    for seq, cat, key in sorted(keyed, reverse=True):
        nxt = int(np.searchsorted(calls, seq, "right"))  # index of the next call
        if seen.get((cat, key)) == nxt:
            out.add(seq)
        seen[(cat, key)] = nxt
    return out


# -- context blocks --------------------------------------------------------------------
def context_blocks(src: AgentSource) -> pd.DataFrame:
    """Context rows over the whole history. One row per ``[Context: ...]`` entry, in order.

    The runtime writes a block only when its content changed (ADF_FORMAT.md §7); the
    system prompt is also written again after every reset (compaction, clear, restart). So
    every row should be a change: ``change`` says where the history shows otherwise.

    Columns (dtype):

    - ``seq``, ``position`` (Int64: display position in :meth:`history`), ``created_at``
      (datetime64[ms, UTC]), ``epoch`` (Int64)
    - ``category`` (string: ``system_prompt``, ``dynamic_instructions``, or a
      ``loop_inject`` category), ``loop_inject`` (bool: a ``loop_inject=v2`` header or the
      old ``[Context: loop_inject]`` form), ``origin`` and ``key`` (string: from a v2 header)
    - ``text`` (string: the block without its header), ``chars`` (Int64: its JS length),
      ``est_tokens`` (Int64: ``ceil(chars / 3.5)``, the runtime's estimator)
    - ``prev_seq`` (Int64: the previous block of the same category, and the same key for
      keyed injects; NA for the first), ``lines_added``, ``lines_removed`` (Int64: line
      diff against it, difflib; NA for the first), ``diff`` (string: the changed lines,
      ``+``/``-`` prefixed)
    - ``identical`` (bool: same text as the previous block of its category),
      ``reset_before`` (string: the last event between the previous block and this one that
      makes the runtime write the block again: ``compaction``, ``clear``, ``restart``,
      ``gap`` (rows lost to an unaudited reset) and, for the system prompt, whose hash
      covers the config, ``config_change`` (a successful ``sys_update_config``); else NA),
      ``change`` (string: ``first``, ``changed``, ``repeat_after_reset`` (identical,
      explained by ``reset_before``), ``repeat`` (identical and unexplained: the runtime
      should not have written it))
    - ``gap_before`` (bool: a history gap lies between the previous block, or the start,
      and this one: an intermediate block may be lost)
    - ``delivered`` (boolean: for v2 injects, False when a later update with the same key
      came before the next model call, so this version was never sent; NA otherwise)
    - ``stored`` (string: ``live`` or ``audit``), ``audit_id`` (Int64)

    Examples
    --------
    >>> import adfkit
    >>> cb = adfkit.open_adf("sample_agents/long-runner.adf").context_blocks()
    >>> bool((cb["category"] == "system_prompt").any())
    True
    """
    return src.memo.get(_CONTEXT_BLOCKS, lambda: _context_blocks(src)).copy(deep=False)


def _context_blocks(src: AgentSource) -> pd.DataFrame:
    h = src.history()
    ctx = h[h["kind"] == "context"]
    assistants = np.sort(h.loc[h["kind"] == "assistant", "seq"].to_numpy(dtype="int64"))
    last: dict[tuple[str, str | None], tuple[int, str]] = {}
    records: list[dict[str, Any]] = []
    for r in ctx.itertuples(index=False):
        full = r.text if isinstance(r.text, str) else ""
        hdr = parse_context_header(full) or {"category": str(r.context_category)}
        cat = hdr["category"]
        v2 = hdr.get("loop_inject") == "v2"
        inject = v2 or cat == "loop_inject"
        key = hdr.get("key") if v2 else None
        body = context_body(full)
        seq = int(r.seq)
        group = (cat, key)
        prev = last.get(group)
        rec: dict[str, Any] = {
            "seq": seq,
            "position": r.position,
            "created_at": r.created_at,
            "epoch": r.epoch,
            "category": cat,
            "loop_inject": inject,
            "origin": hdr.get("origin") if v2 else None,
            "key": key,
            "text": body,
            "chars": js_length(body),
            "est_tokens": estimate_tokens(js_length(body)),
            "prev_seq": None,
            "lines_added": None,
            "lines_removed": None,
            "diff": None,
            "identical": False,
            "reset_before": None,
            "change": "first",
            "gap_before": gap_between(src, prev[0] if prev else 0, seq) is not None,
            "delivered": None,
            "stored": str(r.origin),
            "audit_id": r.audit_id,
        }
        if prev is not None:
            add, rem, d = _diff(prev[1], body)
            same = prev[1] == body
            reset = reset_between(src, prev[0], seq, config=cat == "system_prompt")
            rec.update(
                prev_seq=prev[0],
                lines_added=add,
                lines_removed=rem,
                diff=d,
                identical=same,
                reset_before=reset,
                change=("changed" if not same else "repeat_after_reset" if reset else "repeat"),
            )
        if v2:
            rec["delivered"] = True
        last[group] = (seq, body)
        records.append(rec)
    gone = superseded_injects(
        [
            (r["seq"], r["category"], r["key"])
            for r in records
            if r["delivered"] is not None and r["key"] is not None
        ],
        assistants,
    )
    for r in records:
        if r["seq"] in gone:
            r["delivered"] = False
    df = schema.frame(records, schema.CONTEXT_BLOCKS)
    return df


# -- system prompt ---------------------------------------------------------------------
def system_prompt_at(src: AgentSource, seq: int) -> str | None:
    """The system prompt in force at a model call (or any loop row), without its header.

    It is the latest ``system_prompt`` context row at or before ``seq`` in display order,
    across compactions: the runtime sends the system prompt on every call and writes a new
    row only when it changes or after a reset (ADF_FORMAT.md §7), so the prompt in force is
    the latest one written, even when none was written again after a compaction.
    Returns None, with an :class:`adfkit.AdfWarning` saying why, when that row was lost to
    a history gap (no system prompt precedes the row, or a gap lies between the last one
    seen and the row, so a newer one may have been discarded).

    Raises
    ------
    AdfError
        ``seq`` is neither in the history nor in one of its gaps.

    Examples
    --------
    >>> import adfkit
    >>> agent = adfkit.open_adf("sample_agents/long-runner.adf")
    >>> first_call = int(agent.history().query("kind == 'assistant'")["seq"].iloc[0])
    >>> agent.system_prompt_at(first_call) is not None
    True
    """
    found = prompt_row(src, int(seq))
    return None if found is None else found[1]


def prompt_row(src: AgentSource, seq: int) -> tuple[int, str] | None:
    h = src.history()
    hit = h.index[h["seq"] == seq]
    if not len(hit):
        gap = gap_between(src, seq - 1, seq + 1)
        if gap is None:
            raise AdfError(
                f"no loop row with seq {seq} in the history (and it is in no gap)",
                path=src.path,
            )
        warnings.warn(
            f"{src.path}: seq {seq} was discarded (history gap {gap[0]}..{gap[1]}); "
            "the system prompt at it is unknown",
            AdfWarning,
            stacklevel=3,
        )
        return None
    pos = int(h.at[hit[0], "position"])
    cb = context_blocks(src)
    sp = cb[(cb["category"] == "system_prompt") & ~cb["loop_inject"] & (cb["position"] <= pos)]
    if not len(sp):
        gap = gap_between(src, 0, seq)
        why = (
            f"it was lost to the history gap {gap[0]}..{gap[1]}"
            if gap
            else "the history holds none before it"
        )
        warnings.warn(
            f"{src.path}: no system_prompt context row precedes seq {seq}: {why}",
            AdfWarning,
            stacklevel=3,
        )
        return None
    row = sp.iloc[-1]
    gap = gap_between(src, int(row["seq"]), seq)
    if gap is not None:
        warnings.warn(
            f"{src.path}: the last system prompt seen before seq {seq} is at seq "
            f"{int(row['seq'])}, but the history gap {gap[0]}..{gap[1]} lies between: a "
            "newer one may have been lost",
            AdfWarning,
            stacklevel=3,
        )
        return None
    return int(row["seq"]), str(row["text"])
