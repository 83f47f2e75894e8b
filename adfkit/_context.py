"""AgentFile methods: context blocks, system prompt and mind over time (issue 8).

What the model was told at each call: the ``[Context: ...]`` rows (ADF_FORMAT.md §7), the system
prompt in force, the token composition of every call, the versions of the mind files (§11) and
the configuration changes the agent made with ``sys_update_config``.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import difflib
import re
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from ._audit import js_length
from ._content import context_body, estimate_tokens, parse_context_header
from ._errors import AdfError, AdfWarning, BlobError

if TYPE_CHECKING:
    from ._agent import AgentFile  # noqa: F401

#: The runtime wraps every injected file of the base prompt in this tag (ADF_FORMAT.md §11).
_INJECTED_RE = re.compile(r'<injected_file path="mind\.md">\n(.*?)\n</injected_file>', re.S)

#: Conversation parts of a call: the columns of :meth:`AgentFile.replay` (and
#: :meth:`AgentFile.composition`) that sum to its estimate, by kind of row: compaction summary,
#: messages (chat, triggers, notices), assistant turns, tool results, delivered loop_inject.
PARTS = (
    "summary_tokens",
    "message_tokens",
    "assistant_tokens",
    "tool_result_tokens",
    "inject_tokens",
)

CONTEXT_COLUMNS: dict[str, str] = {
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

COMPOSITION_COLUMNS: dict[str, str] = {
    "seq": "Int64",
    "position": "Int64",
    "epoch": "Int64",
    "created_at": "datetime64[ms, UTC]",
    "system_prompt_seq": "Int64",
    "system_prompt_tokens": "float64",
    "dynamic_instructions_seq": "Int64",
    "dynamic_instructions_tokens": "float64",
    "summary_tokens": "float64",
    "message_tokens": "float64",
    "assistant_tokens": "float64",
    "tool_result_tokens": "float64",
    "inject_tokens": "float64",
    "n_messages": "Int64",
    "context_chars": "Int64",
    "context_media_chars": "Int64",
    "est_tokens": "Int64",
    "total_tokens": "float64",
    "tokens_input": "Int64",
}

#: Columns of :meth:`AgentFile.replay` renamed in :meth:`AgentFile.composition`.
_COMPOSITION_FROM_REPLAY = {
    "n_context_rows": "n_messages",
    "est_chars": "context_chars",
    "est_media_chars": "context_media_chars",
}

MIND_COLUMNS: dict[str, str] = {
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

CONFIG_COLUMNS: dict[str, str] = {
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


def _is_mind_path(p: str) -> bool:
    return p == "mind.md" or (p.startswith("mind/") and p.endswith(".md"))


def _norm_path(p: Any) -> str:
    s = str(p or "")
    while s.startswith("./"):
        s = s[2:]
    return s.lstrip("/")


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


def _ms(ts: Any) -> int | None:
    return None if ts is None or pd.isna(ts) else int(pd.Timestamp(ts).value // 1_000_000)


def _typed(records: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    df = pd.DataFrame.from_records(records, columns=list(columns))
    for name, dtype in columns.items():
        s = df[name]
        if dtype.startswith("datetime"):
            df[name] = pd.to_datetime(s, utc=True).astype("datetime64[ms, UTC]")
        elif dtype == "Int64":
            df[name] = pd.array([None if v is None or pd.isna(v) else int(v) for v in s], "Int64")
        elif dtype == "boolean":
            df[name] = pd.array([None if v is None or pd.isna(v) else bool(v) for v in s], dtype)
        elif dtype == "bool":
            df[name] = s.astype(bool)
        elif dtype == "float64":
            df[name] = s.astype("float64")
        else:
            df[name] = s.astype(dtype)
    return df


class ContextMixin:
    """Mixed into :class:`adfkit.AgentFile`: ``context_blocks()``, ``system_prompt_at()``,
    ``composition()``, ``config_changes()``, ``mind_history()``, ``mind_at()``."""

    # -- shared derivations --------------------------------------------------------------------
    def _resets(self: AgentFile) -> list[tuple[int, str, frozenset[int]]]:
        """Points where the loop was emptied: ``(first seq after, kind, preserved tail seqs)``.

        A compaction resets at its summary's seq and keeps the rows of its preserved tail; a
        clear, a compaction whose summary was lost and a history gap reset after their last
        row. Sorted by seq.
        """
        key = "ctx_resets"
        if key in self._cache:
            return self._cache[key]
        h = self.history()
        seqs = h["seq"].to_numpy(dtype="int64")
        ords = dict(zip(h["seq"].tolist(), h["ord"].tolist(), strict=True))
        out: list[tuple[int, str, frozenset[int]]] = []
        for ev, s, b in zip(
            self.events()["event"],
            self.events()["summary_seq"],
            self.events()["boundary_seq"],
            strict=True,
        ):
            if not pd.isna(s):
                o = ords.get(int(s))
                tail = (
                    frozenset(int(q) for q in seqs if int(o) < q < int(s))
                    if o is not None and not pd.isna(o)
                    else frozenset()
                )
                out.append((int(s), str(ev), tail))
            elif not pd.isna(b):
                out.append((int(b) + 1, str(ev), frozenset()))
        for g_end in self.history_gaps()["end_seq"]:
            out.append((int(g_end) + 1, "gap", frozenset()))
        # At one seq, a gap's reset is the same event as the compaction or clear: name that.
        out.sort(key=lambda x: (x[0], x[1] != "gap"))
        self._cache[key] = out
        return out

    def _restarts(self: AgentFile) -> list[int]:
        h = self.history()
        return sorted(
            int(s) for s in h.loc[(h["kind"] == "trigger") & (h["subkind"] == "startup"), "seq"]
        )

    def _config_calls(self: AgentFile) -> list[int]:
        """Seqs of the assistant rows of successful ``sys_update_config`` calls."""
        key = "ctx_config_calls"
        if key not in self._cache:
            c = self.tool_calls(history=True)
            c = c[(c["tool_name"] == "sys_update_config") & ~c["is_error"].fillna(True)]
            self._cache[key] = sorted(int(s) for s in c["call_seq"])
        return self._cache[key]

    def _reset_between(self: AgentFile, lo: int, hi: int, *, config: bool = False) -> str | None:
        """The last event after seq ``lo`` and before ``hi`` that makes the runtime write a
        context block again: ``compaction``, ``clear``, ``gap`` (rows lost: an unaudited reset),
        ``restart`` and, with ``config=True`` (the system prompt hashes the config),
        ``config_change``."""
        found: tuple[int, str] | None = None
        resets = self._resets()
        k = bisect.bisect_right([r[0] for r in resets], hi) - 1  # last reset at or before hi
        if k >= 0 and resets[k][0] > lo:
            found = (resets[k][0], resets[k][1])
        for points, kind in (
            (self._restarts(), "restart"),
            (self._config_calls() if config else [], "config_change"),
        ):
            j = bisect.bisect_left(points, hi) - 1  # last point before hi
            if j >= 0 and points[j] > lo and (found is None or points[j] > found[0]):
                found = (points[j], kind)
        return None if found is None else found[1]

    def _gap_list(self: AgentFile) -> list[tuple[int, int]]:
        key = "ctx_gaps"
        if key not in self._cache:
            g = self.history_gaps()
            self._cache[key] = [
                (int(a), int(b)) for a, b in zip(g["start_seq"], g["end_seq"], strict=True)
            ]
        return self._cache[key]

    def _gap_between(self: AgentFile, lo: int, hi: int) -> tuple[int, int] | None:
        """The first history gap with seqs strictly between ``lo`` and ``hi``, if any."""
        for a, b in self._gap_list():
            if b > lo and a < hi:
                return a, b
        return None

    # -- context blocks --------------------------------------------------------------------
    def context_blocks(self: AgentFile) -> pd.DataFrame:
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
        if "context_blocks" in self._cache:
            return self._cache["context_blocks"].copy(deep=False)
        h = self.history()
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
                "gap_before": self._gap_between(prev[0] if prev else 0, seq) is not None,
                "delivered": None,
                "stored": str(r.origin),
                "audit_id": r.audit_id,
            }
            if prev is not None:
                add, rem, d = _diff(prev[1], body)
                same = prev[1] == body
                reset = self._reset_between(prev[0], seq, config=cat == "system_prompt")
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
        df = _typed(records, CONTEXT_COLUMNS)
        self._cache["context_blocks"] = df
        return df.copy(deep=False)

    # -- system prompt ---------------------------------------------------------------------
    def system_prompt_at(self: AgentFile, seq: int) -> str | None:
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
        found = self._prompt_row(int(seq))
        return None if found is None else found[1]

    def _prompt_row(self: AgentFile, seq: int) -> tuple[int, str] | None:
        h = self.history()
        hit = h.index[h["seq"] == seq]
        if not len(hit):
            gap = self._gap_between(seq - 1, seq + 1)
            if gap is None:
                raise AdfError(
                    f"no loop row with seq {seq} in the history (and it is in no gap)",
                    path=self.path,
                )
            warnings.warn(
                f"{self.path}: seq {seq} was discarded (history gap {gap[0]}..{gap[1]}); "
                "the system prompt at it is unknown",
                AdfWarning,
                stacklevel=3,
            )
            return None
        pos = int(h.at[hit[0], "position"])
        cb = self.context_blocks()
        sp = cb[(cb["category"] == "system_prompt") & ~cb["loop_inject"] & (cb["position"] <= pos)]
        if not len(sp):
            gap = self._gap_between(0, seq)
            why = (
                f"it was lost to the history gap {gap[0]}..{gap[1]}"
                if gap
                else "the history holds none before it"
            )
            warnings.warn(
                f"{self.path}: no system_prompt context row precedes seq {seq}: {why}",
                AdfWarning,
                stacklevel=3,
            )
            return None
        row = sp.iloc[-1]
        gap = self._gap_between(int(row["seq"]), seq)
        if gap is not None:
            warnings.warn(
                f"{self.path}: the last system prompt seen before seq {seq} is at seq "
                f"{int(row['seq'])}, but the history gap {gap[0]}..{gap[1]} lies between: a "
                "newer one may have been lost",
                AdfWarning,
                stacklevel=3,
            )
            return None
        return int(row["seq"]), str(row["text"])

    # -- composition -----------------------------------------------------------------------
    def composition(self: AgentFile) -> pd.DataFrame:
        """What each model call was sent, in estimated tokens. One row per model call.

        A column view of :meth:`replay`, which computes every part once while it rebuilds the
        context windows (see its docstring for the rules). A model call is an assistant row,
        except the copy of one that a fallback-path compaction re-appended after its summary
        (ADF_FORMAT.md §5.5).

        Every part uses the runtime's estimator (ADF_FORMAT.md §9.1) as a float, ``chars /
        3.5`` (plus ``media_chars / 100``), so the parts add up exactly. The conversation at a
        call is the replayed window: every row written before it and not swept by a compaction
        or clear, minus context rows except delivered ``loop_inject`` v2 text (a keyed update
        superseded before the call was never sent, ADF_FORMAT.md §7).

        Columns (dtype):

        - ``seq`` (Int64: the assistant row's seq), ``position``, ``epoch`` (Int64),
          ``created_at`` (datetime64[ms, UTC])
        - ``system_prompt_seq`` (Int64), ``system_prompt_tokens`` (float64: the prompt in force,
          :meth:`system_prompt_at`: the latest ``system_prompt`` row written before the call,
          across compactions, ``chars / 3.5``; NaN when it was lost to a gap)
        - ``dynamic_instructions_seq`` (Int64), ``dynamic_instructions_tokens`` (float64: the
          latest dynamic instructions written since the last reset or restart, sent as a
          trailing user message, ``(chars + 16) / 3.5``; 0 when none. A string that turned
          empty leaves no row, so this can overstate.)
        - ``summary_tokens``, ``message_tokens`` (chat, triggers, notices), ``assistant_tokens``,
          ``tool_result_tokens``, ``inject_tokens`` (float64: ``(chars + 16) / 3.5 +
          media_chars / 100`` summed over the conversation rows of each kind)
        - ``n_messages`` (Int64: conversation rows; ``n_context_rows`` of :meth:`replay`),
          ``context_chars`` (Int64: their characters with the 16-character overhead;
          ``est_chars``), ``context_media_chars`` (Int64; ``est_media_chars``), ``est_tokens``
          (Int64: ``ceil(context_chars / 3.5) + ceil(context_media_chars / 100)``, the
          runtime's estimate of the conversation; the five parts sum to ``context_chars / 3.5
          + context_media_chars / 100``, so ``0 <= est_tokens - parts < 2``, up to float rounding)
        - ``total_tokens`` (float64: every part, system prompt and dynamic instructions
          included), ``tokens_input`` (Int64: what the provider reported, for comparison)

        Examples
        --------
        >>> import adfkit
        >>> comp = adfkit.open_adf("sample_agents/long-runner.adf").composition()
        >>> parts = comp[["summary_tokens", "message_tokens", "assistant_tokens",
        ...               "tool_result_tokens", "inject_tokens"]].sum(axis=1)
        >>> bool(((comp["est_tokens"] - parts) < 2).all())
        True
        """
        if "composition" in self._cache:
            return self._cache["composition"].copy(deep=False)
        rep = self.replay()
        df = rep.rename(columns=_COMPOSITION_FROM_REPLAY)
        parts = df[list(PARTS)].sum(axis=1)
        df["total_tokens"] = (
            parts + df["dynamic_instructions_tokens"] + df["system_prompt_tokens"].fillna(0.0)
        ).astype("float64")
        df = df[list(COMPOSITION_COLUMNS)]
        self._cache["composition"] = df
        return df.copy(deep=False)

    # -- configuration changes ---------------------------------------------------------------
    def config_changes(self: AgentFile) -> pd.DataFrame:
        """Configuration changes the agent made. One row per ``sys_update_config`` call.

        Calls come from the history (the assistant row's seq and time; success from the
        matching ``tool_result``). ``sys_update_config`` is restricted by default, so each
        approved call also leaves an ``adf_tasks`` row (``origin`` ``hil:...``): it is matched
        to its call by arguments and time, and a task whose call was discarded with its loop
        rows (a history gap) still gives a row, with ``source`` ``task`` and no seq.

        Columns (dtype): ``seq`` (Int64: the call's assistant row), ``created_at``
        (datetime64[ms, UTC]), ``epoch`` (Int64), ``path``, ``value`` (string: compact JSON),
        ``action`` (string: ``set``, ``append`` or ``remove``), ``reason`` (string: the
        ``_reason`` argument, if given), ``succeeded`` (boolean: from the tool result or the
        task; NA when neither survives), ``result`` (string), ``result_seq`` (Int64), ``by``
        (string: ``agent`` for a model tool call, else the task's origin), ``approved_by``
        (string: the task's origin, e.g. ``hil:<agent>:<did>`` for a human approval),
        ``task_id`` (string), ``source`` (string: ``tool_call``, ``tool_call+task`` or
        ``task``).

        Examples
        --------
        >>> import adfkit
        >>> ch = adfkit.open_adf("sample_agents/mind-keeper.adf").config_changes()
        >>> "context.audit.loop" in set(ch["path"])
        True
        """
        calls = self.tool_calls(history=True)
        calls = calls[calls["tool_name"] == "sys_update_config"]
        h = self.history()
        epochs = dict(zip(h["seq"].tolist(), h["epoch"].tolist(), strict=True))
        res_text = self._result_texts()
        tasks = self.tasks()
        tasks = tasks[tasks["tool"] == "sys_update_config"].copy()
        used: set[int] = set()
        records: list[dict[str, Any]] = []
        for r in calls.itertuples(index=False):
            inp = _loads(r.tool_input)
            rec = _config_record(inp)
            ok = None if pd.isna(r.is_error) else not bool(r.is_error)
            rec.update(
                seq=int(r.call_seq),
                created_at=r.created_at,
                epoch=epochs.get(int(r.call_seq)),
                succeeded=ok,
                result=res_text.get(str(r.tool_use_id)),
                result_seq=None if pd.isna(r.result_seq) else int(r.result_seq),
                by="agent",
                approved_by=None,
                task_id=None,
                source="tool_call",
            )
            t_ms = _ms(r.created_at)
            best = None
            for i, trow in tasks.iterrows():
                if i in used or _loads(trow["args"]) != inp:
                    continue
                d = abs((_ms(trow["created_at"]) or 0) - (t_ms or 0))
                if best is None or d < best[0]:
                    best = (d, i)
            if best is not None:
                trow = tasks.loc[best[1]]
                used.add(best[1])
                rec.update(approved_by=trow["origin"], task_id=trow["id"], source="tool_call+task")
                if rec["succeeded"] is None:
                    rec["succeeded"] = trow["status"] == "completed"
                    rec["result"] = trow["result"] if not pd.isna(trow["result"]) else None
            records.append(rec)
        for i, trow in tasks.iterrows():
            if i in used:
                continue
            rec = _config_record(_loads(trow["args"]))
            rec.update(
                seq=None,
                created_at=trow["created_at"],
                epoch=None,
                succeeded=(
                    None
                    if trow["status"] in ("pending", "pending_approval", "running")
                    else trow["status"] == "completed"
                ),
                result=(
                    trow["result"]
                    if not pd.isna(trow["result"])
                    else (None if pd.isna(trow["error"]) else trow["error"])
                ),
                result_seq=None,
                by=trow["origin"],
                approved_by=trow["origin"],
                task_id=trow["id"],
                source="task",
            )
            records.append(rec)
        df = _typed(records, CONFIG_COLUMNS)
        return df.sort_values("created_at", kind="stable", na_position="last").reset_index(
            drop=True
        )

    def _result_texts(self: AgentFile) -> dict[str, str]:
        """tool_use_id -> full text of its first tool_result (history)."""
        key = "ctx_results"
        if key not in self._cache:
            b = self.blocks(history=True)
            r = b[b["type"] == "tool_result"].drop_duplicates("tool_use_id", keep="first")
            self._cache[key] = {
                str(u): ("" if pd.isna(t) else str(t))
                for u, t in zip(r["tool_use_id"], r["text"], strict=True)
            }
        return self._cache[key]

    # -- the mind --------------------------------------------------------------------------
    def mind_history(self: AgentFile) -> pd.DataFrame:
        """Every version of ``mind.md`` and of each ``mind/<slug>.md`` page (``mind/log.md``
        included) over the agent's lifetime. One row per version, per path in order.

        Versions are rebuilt from the ``fs_write`` (modes ``write``, ``append``, ``edit``) and
        ``fs_delete`` calls in :meth:`history` whose tool result reports success; whole-file
        ``fs_read`` results, the mind as injected in ``system_prompt`` context rows (the
        runtime's ``<injected_file path="mind.md">`` block), ``file`` audit rows (content of
        deleted pages) and ``adf_files`` (the current content) fill in versions that no write
        shows. An append or edit to a
        version that is not known cannot be rebuilt forward; an append is rebuilt backward
        from a later known version when no history gap lies between. Writes made outside tool
        calls (code execution, the UI) are invisible here: a current file that differs from
        the last rebuilt version gets its own ``adf_files`` row.

        Columns (dtype):

        - ``path`` (string), ``version`` (Int64: 0-based per path), ``seq`` (Int64: the
          assistant row of the tool call, or the context row that showed it; NA for rows from
          ``adf_files`` or a file audit), ``created_at`` (datetime64[ms, UTC])
        - ``op`` (string: ``write``, ``append``, ``edit``, ``delete`` (the tool calls);
          ``read`` (a whole-file ``fs_read`` showed a version not otherwise known),
          ``injected`` (seen only in a system prompt), ``snapshot`` (a file audit's copy at
          deletion), ``current`` (``adf_files`` now, when it is no rebuilt version))
        - ``source`` (string: where the content comes from: ``fs_write``, ``fs_delete``,
          ``fs_read``, ``system_prompt``, ``file_audit``, ``adf_files``, ``reversed_append``
          (an append undone from a later known version)), ``rebuilt`` (bool: the content is
          known exactly), ``content`` (string; NA when not rebuilt, and for a delete),
          ``chars`` (Int64: JS length)
        - ``current`` (bool: this is the content in ``adf_files`` now), ``note`` (string: why
          a version could not be rebuilt, or a mismatch found)

        Examples
        --------
        >>> import adfkit
        >>> mh = adfkit.open_adf("sample_agents/mind-keeper.adf").mind_history()
        >>> bool((mh["path"] == "mind.md").any())
        True
        """
        if "mind_history" in self._cache:
            return self._cache["mind_history"].copy(deep=False)
        df = _rebuild_mind(self)
        self._cache["mind_history"] = df
        return df.copy(deep=False)

    def mind_at(self: AgentFile, seq: int) -> str | None:
        """The ``mind.md`` the agent had in its system prompt at a model call (or loop row).

        The runtime injects ``mind.md`` as a snapshot taken at session start and refreshed
        only after a compaction, a clear or a restart (memory-management guide), so the best
        evidence is the system prompt in force (:meth:`system_prompt_at`): the runtime's
        ``<injected_file path="mind.md">`` block, else the longest rebuilt version of
        ``mind.md`` found in it. When the prompt is lost or holds no known version, the rule is
        applied to :meth:`mind_history`: the version in force at the last reset or restart
        before the row. Returns None (with an :class:`adfkit.AdfWarning`) when that version
        could not be rebuilt.

        Examples
        --------
        >>> import adfkit
        >>> agent = adfkit.open_adf("sample_agents/mind-keeper.adf")
        >>> first_call = int(agent.history().query("kind == 'assistant'")["seq"].iloc[0])
        >>> agent.mind_at(first_call).startswith("# Mind")
        True
        """
        seq = int(seq)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AdfWarning)
            found = self._prompt_row(seq)
        versions = self.mind_history()
        mind = versions[(versions["path"] == "mind.md") & versions["rebuilt"]]
        if found is not None:
            prompt = found[1]
            m = _INJECTED_RE.search(prompt)
            if m:
                return m.group(1)
            best = None
            for content in mind["content"].dropna().unique().tolist():
                if content and content in prompt and (best is None or len(content) > len(best)):
                    best = content
            if best is not None:
                return best
            warnings.warn(
                f"{self.path}: the system prompt in force at seq {seq} (seq {found[0]}) shows no "
                "known version of mind.md; using the session-start snapshot rule instead",
                AdfWarning,
                stacklevel=2,
            )
        # The snapshot rule over the rebuilt versions.
        point = 0
        for r, _, _ in self._resets():
            if r <= seq:
                point = max(point, r)
        for r in self._restarts():
            if r <= seq:
                point = max(point, r)
        allv = versions[(versions["path"] == "mind.md") & versions["seq"].notna()]
        before = allv[allv["seq"] < max(point, 1)]
        if not len(before):
            warnings.warn(
                f"{self.path}: no version of mind.md is known before seq {seq}",
                AdfWarning,
                stacklevel=2,
            )
            return None
        row = before.iloc[-1]
        gap = self._gap_between(int(row["seq"]), max(point, int(row["seq"]) + 1))
        if gap is not None:
            warnings.warn(
                f"{self.path}: the mind.md in force at seq {seq} is unknown: the last version "
                f"seen (seq {int(row['seq'])}) precedes the history gap {gap[0]}..{gap[1]}, "
                "where it may have been rewritten",
                AdfWarning,
                stacklevel=2,
            )
            return None
        if not bool(row["rebuilt"]):
            warnings.warn(
                f"{self.path}: the mind.md in force at seq {seq} (version {int(row['version'])}, "
                f"written at seq {row['seq']}) could not be rebuilt: {row['note']}",
                AdfWarning,
                stacklevel=2,
            )
            return None
        return str(row["content"])


def _loads(s: Any) -> Any:
    if not isinstance(s, str):
        return None
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError:
        return None


def _config_record(inp: Any) -> dict[str, Any]:
    inp = inp if isinstance(inp, dict) else {}
    val = inp.get("value")
    reason = inp.get("_reason")
    return {
        "path": None if inp.get("path") is None else str(inp.get("path")),
        "value": orjson.dumps(val).decode() if "value" in inp else None,
        "action": str(inp.get("action") or "set"),
        "reason": None if reason is None else str(reason),
    }


def decode_file_audit(value: Any) -> tuple[str | None, str | None]:
    """(path, text) of a ``file`` audit object; text None when not UTF-8 or not decodable."""
    if not isinstance(value, dict):
        return None, None
    path = value.get("path")
    b64 = value.get("content_base64")
    if not isinstance(b64, str):
        return (None if path is None else str(path)), None
    try:
        raw = base64.b64decode(b64, validate=False)
        return (None if path is None else str(path)), raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return (None if path is None else str(path)), None


# --- rebuilding the mind ----------------------------------------------------------------------


def _apply_edits(doc: str, edits: list[Any]) -> str | None:
    """fs_write edit mode: each ``{old_text, new_text, replace_all}`` in order; None when one
    would fail (not found, or not unique without ``replace_all``), as the tool's own rule."""
    for e in edits:
        if not isinstance(e, dict) or not isinstance(e.get("old_text"), str):
            return None
        old, new = e["old_text"], str(e.get("new_text") or "")
        first = doc.find(old)
        if not old or first < 0:
            return None
        if e.get("replace_all"):
            doc = doc.replace(old, new)
        elif doc.find(old, first + 1) >= 0:
            return None
        else:
            doc = doc[:first] + new + doc[first + len(old) :]
    return doc


def _write_content(inp: dict[str, Any]) -> tuple[str | None, str | None]:
    """(text written by a ``write``, note when it is not text)."""
    content = inp.get("content")
    if not isinstance(content, str):
        return None, "write without text content"
    if inp.get("encoding") == "base64":
        try:
            return base64.b64decode(content).decode("utf-8"), None
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None, "binary content (base64), not text"
    return content, None


_OBSERVED = ("injected", "read", "snapshot")


def _read_content(inp: dict[str, Any], result: str | None) -> str | None:
    """The whole text an ``fs_read`` returned, or None (partial read, error, not JSON)."""
    if inp.get("start_line") or inp.get("end_line") or not result:
        return None
    val = _loads(result)
    if isinstance(val, dict) and isinstance(val.get("content"), str):
        return val["content"]
    return None


def _rebuild_mind(agent: Any) -> pd.DataFrame:
    """The body of :meth:`ContextMixin.mind_history`."""
    h = agent.history()
    t_by_seq = dict(zip(h["seq"].tolist(), h["created_at"].tolist(), strict=True))
    results = agent._result_texts()
    items: list[dict[str, Any]] = []
    calls = agent.tool_calls(history=True)
    calls = calls[calls["tool_name"].isin(["fs_write", "fs_delete", "fs_read"])]
    deletes: list[dict[str, Any]] = []
    for n, r in enumerate(calls.itertuples(index=False)):
        inp = _loads(r.tool_input)
        if not isinstance(inp, dict):
            continue
        path = _norm_path(inp.get("path"))
        if not _is_mind_path(path) or (not pd.isna(r.is_error) and bool(r.is_error)):
            continue
        base = {"path": path, "seq": int(r.call_seq), "created_at": r.created_at}
        if r.tool_name == "fs_read":
            text = _read_content(inp, results.get(str(r.tool_use_id)))
            if text is not None:
                items.append(
                    dict(base, at=r.call_seq + 0.5, n=n, op="read", source="fs_read", content=text)
                )
            continue
        op = "delete" if r.tool_name == "fs_delete" else str(inp.get("mode") or "write")
        it = dict(
            base,
            at=float(r.call_seq),
            n=n,
            op=op,
            source=str(r.tool_name),
            inp=inp,
            note=None if r.matched else "its tool result is lost; assumed applied",
            result_seq=None if pd.isna(r.result_seq) else int(r.result_seq),
        )
        items.append(it)
        if op == "delete":
            deletes.append(it)
    # The mind as injected in system prompts (a snapshot taken at the last reset).
    cb = agent.context_blocks()
    for r in cb[cb["category"] == "system_prompt"].itertuples(index=False):
        m = _INJECTED_RE.search(str(r.text))
        if m:
            items.append(
                {
                    "path": "mind.md",
                    "seq": int(r.seq),
                    "created_at": r.created_at,
                    "at": float(r.seq),
                    "n": 0,
                    "op": "injected",
                    "source": "system_prompt",
                    "content": m.group(1),
                }
            )
    # Deleted pages kept by file audit rows: the content just before the deletion.
    a = agent.audit()
    hs = h.sort_values("seq")
    h_ms = np.array([(_ms(t) or 0) for t in hs["created_at"]], dtype="int64")
    h_seq = hs["seq"].astype("int64").tolist()
    fa = a[a["source"] == "file"]
    for aid, t in zip(fa["id"], fa["created_at"], strict=True):
        try:
            value = agent.decode_audit(int(aid))
        except BlobError as exc:
            warnings.warn(
                f"{agent.path}: {exc.detail}; skipped in mind_history()", AdfWarning, stacklevel=3
            )
            continue
        path, text = decode_file_audit(value)
        path = _norm_path(path)
        if not _is_mind_path(path):
            continue
        t_ms = _ms(t) or 0
        match = None
        for d in deletes:
            if d["path"] == path and not d.get("audited") and (_ms(d["created_at"]) or 0) <= t_ms:
                match = d
        snap = {
            "path": path,
            "seq": None,
            "created_at": t,
            "n": -1,
            "op": "snapshot",
            "source": "file_audit",
            "content": text,
            "note": "the copy the file audit kept at deletion" if text is not None else None,
        }
        if match is not None:
            match["audited"] = True
            items.append(dict(snap, at=match["at"], n=match["n"] - 0.5))
            continue
        k = int(np.searchsorted(h_ms, t_ms, "right")) - 1
        at = (h_seq[k] if k >= 0 else 0) + 0.5
        items.append(dict(snap, at=at))
        items.append(
            {
                "path": path,
                "seq": None,
                "created_at": t,
                "at": at,
                "n": 0,
                "op": "delete",
                "source": "file_audit",
                "inp": {},
                "note": "deleted outside the loop's tool calls (or its call was lost)",
            }
        )
    items.sort(key=lambda x: (x["at"], x["n"]))

    gaps = agent.history_gaps()
    g = list(zip(gaps["start_seq"].astype("int64"), gaps["end_seq"].astype("int64"), strict=True))

    def gap_between(lo: float, hi: float) -> bool:
        return any(b > lo and a_ < hi for a_, b in g)

    resets = [r for r, _, _ in agent._resets()] + agent._restarts()
    per: dict[str, list[dict[str, Any]]] = {}
    for it in items:
        vs = per.setdefault(it["path"], [])
        v = dict(it)
        if v["op"] in _OBSERVED:
            if v["content"] is None:
                continue
            if v["op"] == "injected":
                # A snapshot older than a write made since the last reset shows nothing new.
                start = max([r for r in resets if r <= v["seq"]], default=0)
                if any(w["op"] not in _OBSERVED and start <= w["at"] < v["at"] for w in vs):
                    continue
            v["rebuilt"] = True
        elif v["op"] == "write":
            v["content"], why = _write_content(v["inp"])
            v["rebuilt"] = v["content"] is not None
            v["note"] = why or v.get("note")
        else:  # append, edit: resolved below; delete: the state is known (no file)
            v["content"] = None
            v["rebuilt"] = v["op"] == "delete"
        vs.append(v)

    def resolve(vs: list[dict[str, Any]]) -> None:
        for _ in range(len(vs) + 1):
            changed = False
            for i, v in enumerate(vs):  # forward through appends and edits
                if v["rebuilt"] or v["op"] not in ("append", "edit"):
                    continue
                prev = vs[i - 1] if i else None
                if prev is None or not prev["rebuilt"]:
                    continue
                base = "" if prev["op"] == "delete" else prev["content"]
                if v["op"] == "append":
                    v["content"] = base + str(v["inp"].get("content") or "")
                else:
                    edits = v["inp"].get("edits") or (
                        [
                            {
                                "old_text": v["inp"].get("old_text"),
                                "new_text": v["inp"].get("new_text", ""),
                                "replace_all": v["inp"].get("replace_all"),
                            }
                        ]
                        if v["inp"].get("old_text")
                        else []
                    )
                    v["content"] = _apply_edits(base, edits)
                    if v["content"] is None:
                        v["note"] = (
                            "the edit does not apply to the rebuilt previous version "
                            "(it was changed outside tool calls)"
                        )
                        continue
                v["rebuilt"], changed = True, True
            for i in range(len(vs) - 1, 0, -1):  # backward
                v, prev = vs[i], vs[i - 1]
                if not v["rebuilt"] or prev["rebuilt"] or v["content"] is None:
                    continue
                if gap_between(prev["at"], v["at"]):
                    continue
                if v["op"] in _OBSERVED:
                    prev.update(
                        content=v["content"],
                        rebuilt=True,
                        source=v["source"],
                        note=f"content seen later ({v['op']}, {v['source']})",
                    )
                    changed = True
                elif v["op"] == "append":
                    tail = str(v["inp"].get("content") or "")
                    if v["content"].endswith(tail):
                        prev.update(
                            content=v["content"][: len(v["content"]) - len(tail)],
                            rebuilt=True,
                            source="reversed_append",
                            note="rebuilt backward from the next version (an append)",
                        )
                        changed = True
            if not changed:
                break

    for vs in per.values():
        resolve(vs)
    # The current content.
    files = agent.files()
    for path, upd in zip(files["path"].tolist(), files["updated_at"].tolist(), strict=True):
        p = _norm_path(path)
        if not _is_mind_path(p):
            continue
        text = agent.read_file(str(path)).decode("utf-8", "replace")
        vs = per.setdefault(p, [])
        last = vs[-1] if vs else None
        if last is not None and last["rebuilt"] and last["op"] != "delete":
            if last["content"] == text:
                last["current"] = True
                continue
        elif (
            last is not None and last["op"] in ("append", "edit") and _wrote_it(last, upd, t_by_seq)
        ):
            last.update(
                content=text,
                rebuilt=True,
                source="adf_files",
                current=True,
                note="content from adf_files: the file was last written by this call",
            )
            resolve(vs)
            continue
        note = None
        if last is None:
            note = "written by no tool call in the history (seeded, written by code, or in a gap)"
        elif last["op"] == "delete":
            note = "re-created outside the loop's tool calls"
        elif last["rebuilt"]:
            note = "differs from the last rebuilt version: written outside tool calls"
        else:
            note = "the content now; the last version could not be rebuilt to compare"
        vs.append(
            {
                "path": p,
                "seq": None,
                "created_at": upd,
                "op": "current",
                "source": "adf_files",
                "content": text,
                "rebuilt": True,
                "current": True,
                "note": note,
            }
        )
    records: list[dict[str, Any]] = []
    for path in sorted(per, key=lambda p: (p != "mind.md", p)):
        kept: list[dict[str, Any]] = []
        for v in per[path]:
            # An observation that shows the version already known adds nothing.
            if v["op"] in _OBSERVED and kept and kept[-1]["rebuilt"]:
                if kept[-1]["content"] == v["content"] and kept[-1]["op"] != "delete":
                    kept[-1]["current"] = kept[-1].get("current") or v.get("current")
                    continue
                if v["op"] == "injected" and any(k["content"] == v["content"] for k in kept):
                    continue
            kept.append(v)
        for n, v in enumerate(kept):
            c = v.get("content") if v["op"] != "delete" else None
            note = v.get("note")
            if not v["rebuilt"] and note is None:
                note = (
                    "its content never passed through a tool call: it builds on a version "
                    "that could not be rebuilt"
                )
            records.append(
                {
                    "path": path,
                    "version": n,
                    "seq": v.get("seq"),
                    "created_at": v.get("created_at"),
                    "op": v["op"],
                    "source": v["source"],
                    "rebuilt": bool(v["rebuilt"]),
                    "content": c,
                    "chars": None if c is None else js_length(c),
                    "current": bool(v.get("current", False)),
                    "note": note,
                }
            )
    return _typed(records, MIND_COLUMNS)


def _wrote_it(v: dict[str, Any], updated: Any, t_by_seq: dict[int, Any]) -> bool:
    """True when ``adf_files.updated_at`` falls between the call and its tool result."""
    lo = _ms(v.get("created_at"))
    hi = _ms(t_by_seq.get(v.get("result_seq"))) if v.get("result_seq") is not None else None
    u = _ms(updated)
    return lo is not None and hi is not None and u is not None and lo <= u <= hi
