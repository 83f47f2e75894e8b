"""Self-observation metrics: turns, tool calls by class, signatures, streaks and anomalies.

:func:`observe` re-implements the runtime's self-observation analyzer
(``skills/self-observation/scripts/self-observe.js``, ADF_FORMAT.md §8.2-§8.4) over a whole
agent file at once, and returns an :class:`Observation` of DataFrames. The tool-call taxonomy
ships as ``adfkit/data/taxonomy.json`` (the skill's default); :func:`load_taxonomy` reads a
user's taxonomy of the same shape.

Two segmentations
-----------------
``segmentation="reference"`` reproduces the reference analyzer's turn boundaries exactly,
quirks included, as if one run covered the whole history (the reference is incremental:
it reads at most 20 audit rows and 400 live rows per run, §8.4; a batch re-implementation
matches it when the history fits in one run). ``segmentation="smart"`` (the default) fixes
the quirks. Every deliberate difference:

==========================  ==================================  ==================================
situation                   ``reference``                       ``smart`` (default)
==========================  ==================================  ==================================
row order                   ``seq``: a summary with ``ord``     display order ``COALESCE(ord,
                            lands after its preserved tail      seq), seq`` (the runtime's rule)
a seq held twice (repair    counted once per copy               one copy per seq, as in
snapshots, overlapping                                          :meth:`AgentFile.history`
blobs, blob + live)
tail re-appended under new  counted again                       skipped: the copies that
seqs by a fallback                                              ``_history.reappended_copies``
compaction (§5.5)                                               finds (shared with ``usage``)
``[Context: ...]`` rows     open a ``chat`` turn: a trigger     not turn boundaries (UI/SQL rows
(system prompt, dynamic     plus a context row becomes an       or mid-turn injections)
instructions, warnings,     empty turn and a ``chat`` turn
``loop_inject``)
runtime notices (continue,  open a ``chat`` turn                part of the running turn (§3.4)
memory-flush nudge, user
interrupt, provider error)
compaction summary          opens a ``compaction`` turn,        part of the running turn; the
                            skipped with all its calls          calls after it are counted
``[Inbox notification]``    ``chat``                            ``inbox``
``A batch of N events``     ``inbox``                           ``batch``
outbox, tool-call, log,     ``chat``                            ``outbox``, ``tool_call``,
LLM-call, fallback trigger                                      ``log``, ``llm_call``, ``fallback``
owner or chat message       ``chat``                            ``chat``
==========================  ==================================  ==================================

Both modes open an ``unknown`` turn at an assistant row when no turn is open, add the
assistant rows' provider-reported ``tokens.input`` / ``tokens.output`` (a bare legacy number
counts 0), classify each ``tool_use`` with the taxonomy, and apply the same three anomaly checks
with the same thresholds (§8.3). Neither counts the compaction call's own tokens (they are on
the summary row, a ``user`` row), and neither ends a turn at ``sys_set_state`` (the skill's
``SKILL.md`` says turns break there; its code does not, §8.4).
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from adfkit import schema
from adfkit._analysis.replay import reappended_of
from adfkit._analysis.timeline import turn_starts
from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfError, AdfWarning, BlobError
from adfkit._base.js import base36, js_falsy, js_stringify, string_hashes
from adfkit._base.user_files import read_json_file
from adfkit._core import registry
from adfkit._core.history import reappended_copies
from adfkit._core.loopframe import sort_display
from adfkit._core.rows import parse_content
from adfkit._core.source import AgentSource

TaxonomyArg = Mapping[str, Any] | str | os.PathLike[str] | None

#: The analyzer's default thresholds (§8.2); a missing or 0 value falls back to these.
DEFAULT_THRESHOLDS: dict[str, int] = {"null_streak": 5, "repeat_signature": 3, "window_turns": 50}
#: "Spend without external change" needs at least this many turns in the window (hard-coded).
SPEND_MIN_TURNS = 20
#: The repeated-action check reports this many signatures (highest counts first).
TOP_SIGNATURES = 5
#: Call classes the analyzer counts.
CLASSES = ("world", "internal", "bookkeeping")
SEGMENTATIONS = ("smart", "reference")
CHECKS = ("null_streak", "repeated_signature", "spend_without_change")

#: The reference analyzer's ``triggerKind`` table (§8.2): prefix -> kind, first match wins.
REFERENCE_TRIGGER_PREFIXES: tuple[tuple[str, str], ...] = (
    ("A scheduled timer has fired", "timer"),
    ("Agent started", "startup"),
    ("You received a message", "inbox"),
    ("A batch of", "inbox"),
    ("A task has completed", "task"),
    ("A task has been created", "task"),
    ("A file has been", "file_change"),
    ("[Loop Compacted", "compaction"),
)


# --- taxonomy -------------------------------------------------------------------------------


def load_taxonomy(taxonomy: TaxonomyArg = None) -> dict[str, Any]:
    """The tool-call taxonomy: the shipped default, a mapping, or a JSON file.

    The shape is the self-observation skill's ``metrics/taxonomy.json``: ``tools`` (exact
    tool name -> class), ``prefixes`` (name prefix -> class, first match in file order),
    ``fs_write_paths`` (path prefix -> class for ``fs_write``/``fs_transfer``, first match in
    file order), ``fs_write_default`` and ``thresholds`` (``null_streak``,
    ``repeat_signature``, ``window_turns``). As in the reference, a user taxonomy replaces the
    default as a whole (missing sections mean "no entries"); a missing or 0 threshold takes
    its default.

    Parameters
    ----------
    taxonomy : None (``adfkit/data/taxonomy.json``), a mapping, or the path of a JSON file.
        An agent's own taxonomy can be passed as
        ``json.loads(agent.read_text("metrics/taxonomy.json"))``.

    Raises
    ------
    AdfError
        the file cannot be read or is not a JSON object.
    TypeError
        ``taxonomy`` or one of its sections has the wrong type.

    Examples
    --------
    >>> from adfkit._analysis.observe import load_taxonomy
    >>> t = load_taxonomy()
    >>> t["tools"]["msg_send"], t["prefixes"], t["thresholds"]["null_streak"]
    ('world', {'mcp_': 'world'}, 5)
    """
    if taxonomy is None:
        text = resources.files("adfkit").joinpath("data/taxonomy.json").read_text("utf-8")
        default: dict[str, Any] = json.loads(text)
        return default
    if isinstance(taxonomy, str | os.PathLike):
        where = os.fspath(taxonomy)
        obj = read_json_file(where, "taxonomy file")
        if not isinstance(obj, dict):
            raise AdfError(
                f"the taxonomy file must hold a JSON object, got {type(obj).__name__}", path=where
            )
    elif isinstance(taxonomy, Mapping):
        obj = copy.deepcopy(dict(taxonomy))
    else:
        raise TypeError(
            "taxonomy must be None, a mapping or the path of a JSON file, "
            f"got {type(taxonomy).__name__}"
        )
    for key in ("tools", "prefixes", "fs_write_paths", "thresholds"):
        if obj.get(key) is not None and not isinstance(obj[key], Mapping):
            raise TypeError(f"taxonomy[{key!r}] must be an object, got {type(obj[key]).__name__}")
    return dict(obj)


def default_taxonomy(fmt: str = "adf") -> dict[str, Any]:
    """The shipped taxonomy of one format's agent: the file its spec names in ``adfkit/data``
    (:attr:`adfkit._core.registry.FormatSpec.taxonomy`: Claude Code's and Codex's own tools), the
    ADF default (``adfkit/data/taxonomy.json``, the skill's) for ADF agents, and no tool classes at
    all for a format that names none (its tools are unknown, not ADF's).

    Examples
    --------
    >>> from adfkit._analysis.observe import default_taxonomy
    >>> default_taxonomy("claude_code")["tools"]["Bash"]
    'world'
    >>> default_taxonomy("codex")["tools"]["update_plan"]
    'bookkeeping'
    >>> default_taxonomy("adf") == load_taxonomy()
    True
    """
    name = registry.spec(fmt).taxonomy
    if name is None:
        return {"tools": {}, "prefixes": {}}
    res = resources.files("adfkit").joinpath(f"data/{name}")
    obj: dict[str, Any] = json.loads(res.read_text("utf-8"))
    return obj


def thresholds_of(taxonomy: Mapping[str, Any]) -> dict[str, int]:
    """The three thresholds, with the reference's ``value || default`` fallback."""
    t = taxonomy.get("thresholds") or {}
    out = {}
    for k, default in DEFAULT_THRESHOLDS.items():
        v = t.get(k)
        try:
            v = int(v) if v is not None and not isinstance(v, bool) else 0
        except (TypeError, ValueError):
            v = 0
        out[k] = v or default
    return out


def classify_call(name: str, tool_input: Any, taxonomy: Mapping[str, Any]) -> str:
    """Class of one tool call (``world``, ``internal``, ``bookkeeping``, or a user class).

    ``fs_write``/``fs_transfer`` go by ``input.path or input.dest``: the first
    ``fs_write_paths`` prefix it equals or starts with, else ``fs_write_default``, else
    ``internal``. Other tools: exact name in ``tools``, else the first matching ``prefixes``
    entry, else ``internal`` (ADF_FORMAT.md §8.2).

    Examples
    --------
    >>> from adfkit._analysis.observe import classify_call, load_taxonomy
    >>> t = load_taxonomy()
    >>> classify_call("fs_write", {"path": "mind.md"}, t), classify_call("mcp_x_y", {}, t)
    ('bookkeeping', 'world')
    >>> classify_call("fs_write", {"path": "mind/log.md"}, t), classify_call("respond", {}, t)
    ('internal', 'internal')
    """
    if name in ("fs_write", "fs_transfer"):
        p = None
        if isinstance(tool_input, Mapping):
            p = tool_input.get("path") or tool_input.get("dest")
        if isinstance(p, str):
            for prefix, cls in (taxonomy.get("fs_write_paths") or {}).items():
                if p == prefix or p.startswith(prefix):
                    return str(cls)
        return str(taxonomy.get("fs_write_default") or "internal")
    tools = taxonomy.get("tools") or {}
    if name in tools:
        return str(tools[name])
    for prefix, cls in (taxonomy.get("prefixes") or {}).items():
        if name.startswith(prefix):
            return str(cls)
    return "internal"


# --- signatures -----------------------------------------------------------------------------


def signature(name: str, tool_input: Any) -> str:
    """The analyzer's call signature: ``name + ":" + base36(hash)`` (ADF_FORMAT.md §8.2).

    The hash runs over the UTF-16 code units of ``name + " " + JSON.stringify(input || {})``.

    Examples
    --------
    >>> from adfkit._analysis.observe import signature
    >>> signature("fs_read", {"path": "notes/todo.md"})
    'fs_read:1f1udza'
    """
    return _signatures_of([name], [_call_input(tool_input)])[0]


def _call_input(tool_input: Any) -> str:
    """The text a call's signature hashes: ``JSON.stringify(input || {})``."""
    return js_stringify({} if js_falsy(tool_input) else tool_input)


def _signatures_of(names: list[str], texts: list[str]) -> list[str]:
    """:func:`signature` of calls whose inputs' texts (:func:`_call_input`) are ``texts``,
    hashed together."""
    hashes = string_hashes([f"{n} {t}" for n, t in zip(names, texts, strict=True)])
    return [f"{n}:{base36(h)}" for n, h in zip(names, hashes, strict=True)]


def reference_trigger_kind(text: str) -> str:
    """The reference analyzer's ``triggerKind`` of a turn-opening row's first text block.

    Examples
    --------
    >>> from adfkit._analysis.observe import reference_trigger_kind
    >>> reference_trigger_kind("[Inbox notification] You have new messages")
    'chat'
    """
    for prefix, kind in REFERENCE_TRIGGER_PREFIXES:
        if text.startswith(prefix):
            return kind
    return "chat"


# --- the observation ------------------------------------------------------------------------


@dataclass(repr=False)
class Observation:
    """The result of :func:`observe`: self-observation metrics as DataFrames.

    Attributes
    ----------
    turns : one row per counted turn, in segment order. Columns: ``turn`` (Int64, 0-based),
        ``start_seq`` (Int64: the row that opened it), ``end_seq`` (Int64: its last row in
        walk order), ``n_rows`` (Int64), ``start_at`` (datetime64[ms, UTC]; NaT when the file
        holds 0), ``trigger_kind`` (string), ``n_calls``, ``n_world``, ``n_internal``,
        ``n_bookkeeping`` (Int64), ``is_null_turn`` (bool: calls, all of them bookkeeping or
        another non-world, non-internal class), ``tokens_in``, ``tokens_out`` (Int64: summed
        over the turn's assistant rows; each call re-sends the context, so these are not
        unique tokens), ``epoch`` (Int64: compactions and clears before the opening row; NA
        for a DataFrame input without ``epoch``).
    calls : one row per tool call of a counted turn. Columns: ``turn``, ``seq``,
        ``block_index`` (Int64), ``created_at`` (datetime64[ms, UTC]), ``tool``, ``class``,
        ``signature``, ``input`` (string: the ``JSON.stringify`` text hashed), ``tool_use_id``
        (string).
    signatures : one row per distinct signature, highest count first. Columns:
        ``signature``, ``tool`` (string), ``count``, ``n_turns``, ``first_seq``, ``last_seq``
        (Int64), ``first_seen``, ``last_seen`` (datetime64[ms, UTC]).
    streaks : one row per run of consecutive null turns. Columns: ``first_turn``,
        ``last_turn``, ``length``, ``start_seq``, ``end_seq`` (Int64: first and last row of the
        run), ``start_at`` (datetime64[ms, UTC]), ``current`` (bool: the run ends at the newest
        turn).
    anomalies : one row per check (``null_streak``, ``repeated_signature``,
        ``spend_without_change``), tripped or not. Columns: ``check`` (string), ``tripped``
        (bool), ``value`` (Int64: streak length / highest signature count / output tokens of
        the window), ``threshold`` (Int64), ``window_turns`` (Int64: turns examined),
        ``detail`` (string), and the evidence: ``turns`` (tuple of turn numbers), ``seqs``
        (tuple: opening seqs of those turns, or the seqs of the repeated calls),
        ``signatures`` (tuple of the reported signatures). :meth:`evidence` returns the rows.
    segmentation : ``"smart"`` or ``"reference"``.
    thresholds : the thresholds in force.
    taxonomy : the taxonomy used.
    name : the agent's name (or ``""`` for a DataFrame input).
    """

    turns: pd.DataFrame
    calls: pd.DataFrame
    signatures: pd.DataFrame
    streaks: pd.DataFrame
    anomalies: pd.DataFrame
    segmentation: str
    thresholds: dict[str, int]
    taxonomy: dict[str, Any] = field(default_factory=dict)
    name: str = ""

    @property
    def flagged(self) -> pd.DataFrame:
        """The anomaly rows that tripped."""
        return self.anomalies[self.anomalies["tripped"]].reset_index(drop=True)

    def evidence(self, check: str) -> pd.DataFrame:
        """The rows behind one check: ``turns`` rows for ``null_streak`` and
        ``spend_without_change``, ``calls`` rows for ``repeated_signature``.

        Empty when the check did not trip.

        Examples
        --------
        >>> import adfkit
        >>> obs = adfkit.observe("sample_agents/long-runner.adf")
        >>> obs.evidence("null_streak")["start_seq"].tolist()
        [702, 706, 710, 714, 718, 722]
        """
        if check not in CHECKS:
            raise ValueError(f"check must be one of {list(CHECKS)}, got {check!r}")
        row = self.anomalies.loc[self.anomalies["check"] == check].iloc[0]
        if not row["tripped"]:
            frame = self.calls if check == "repeated_signature" else self.turns
            return frame.iloc[:0].copy()
        if check == "repeated_signature":
            c = self.calls
            return c[c["signature"].isin(list(row["signatures"]))].reset_index(drop=True)
        t = self.turns
        return t[t["turn"].isin(list(row["turns"]))].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``adfkit observe --json`` prints)."""
        t, c = self.turns, self.calls
        kinds = t["trigger_kind"].value_counts(sort=False)
        classes = c["class"].value_counts(sort=False)
        return {
            "name": self.name,
            "segmentation": self.segmentation,
            "thresholds": dict(self.thresholds),
            "turns": len(t),
            "turns_by_trigger": {str(k): int(v) for k, v in sorted(kinds.items())},
            "calls": len(c),
            "calls_by_class": {str(k): int(v) for k, v in sorted(classes.items())},
            "null_turns": int(t["is_null_turn"].sum()),
            "tokens_in": int(t["tokens_in"].sum()),
            "tokens_out": int(t["tokens_out"].sum()),
            "top_signatures": [
                {"signature": str(s), "tool": str(tool), "count": int(n)}
                for s, tool, n in self.signatures[["signature", "tool", "count"]]
                .head(TOP_SIGNATURES)
                .itertuples(index=False)
            ],
            "anomalies": [
                {
                    "check": str(r["check"]),
                    "tripped": bool(r["tripped"]),
                    "value": int(r["value"]),
                    "threshold": int(r["threshold"]),
                    "window_turns": int(r["window_turns"]),
                    "detail": str(r["detail"]),
                    "turns": [int(x) for x in r["turns"]],
                    "seqs": [int(x) for x in r["seqs"]],
                    "signatures": [str(x) for x in r["signatures"]],
                }
                for _, r in self.anomalies.iterrows()
            ],
        }

    def summary(self) -> str:
        """A few readable lines: turn mix, call classes, tokens and each anomaly check.

        Examples
        --------
        >>> import adfkit
        >>> print(adfkit.observe("sample_agents/clean.adf").summary())
        ... # doctest: +ELLIPSIS
        Observation of clean (smart segmentation): 35 turns, ...
        """
        d = self.to_dict()
        kinds = ", ".join(f"{k} {v}" for k, v in d["turns_by_trigger"].items()) or "none"
        classes = ", ".join(f"{k} {v}" for k, v in d["calls_by_class"].items()) or "none"
        who = self.name or "a loop frame"
        lines = [
            f"Observation of {who} ({self.segmentation} segmentation): "
            f"{d['turns']} turns, {d['calls']} tool calls",
            f"  turns by trigger: {kinds}",
            f"  calls by class:   {classes}",
            f"  null turns: {d['null_turns']}; tokens in {d['tokens_in']:,}, "
            f"out {d['tokens_out']:,}",
            "  anomalies:",
        ]
        for a in d["anomalies"]:
            mark = "!" if a["tripped"] else "-"
            lines.append(f"    {mark} {a['check']}: {a['detail']}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()


# --- segmentation ---------------------------------------------------------------------------


def _segment(
    rows: pd.DataFrame, mode: str, copies: Mapping[int, int] | None = None
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Walk the rows: turn number per row (-1 = outside any turn) and the turn headers.
    ``copies``: the rows' :func:`reappended_copies` when already known."""
    n = len(rows)
    role = _texts(rows["role"])
    sub = _texts(rows["subkind"])
    reference = mode == "reference"
    # the block types and text only the reference segmentation reads (every row's text)
    types = _texts(rows["block_types"]) if reference else []
    text = _texts(rows["text"]) if reference else []
    seqs = rows["seq"].to_numpy(dtype="int64").tolist()
    skip = [False] * n
    if mode == "smart":  # a fallback compaction's re-appended tail (§5.5): one rule for all
        copies = reappended_copies(rows) if copies is None else copies
        skip = rows["seq"].isin(list(copies)).to_numpy(dtype=bool).tolist()
    opens = turn_starts(rows).tolist()  # the one rule for where a turn opens (smart mode)
    turn_of = [-1] * n
    heads: list[dict[str, Any]] = []
    cur = -1
    for i in range(n):
        if skip[i]:
            continue
        start_kind = None
        if role[i] == "user":
            if reference:
                ts = types[i].split(",")
                if "text" in ts and "tool_result" not in ts:
                    start_kind = reference_trigger_kind(text[i])
            elif opens[i]:
                start_kind = sub[i] or "chat"
        elif role[i] == "assistant" and cur < 0:
            start_kind = "unknown"
        if start_kind is not None:
            cur = len(heads)
            heads.append({"row": i, "seq": seqs[i], "kind": start_kind})
        if cur >= 0:
            turn_of[i] = cur
    return np.array(turn_of, dtype="int64"), heads


def _texts(col: pd.Series) -> list[str]:
    """A column's values as text, "" where NA (a category column's labels shared, not one
    string made per row)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        labels = [str(c) for c in col.cat.categories] + [""]  # code -1 (NA): the last
        return [labels[k] for k in col.cat.codes.to_numpy().tolist()]
    out: list[str] = col.astype("string").fillna("").to_numpy(dtype=object).tolist()
    return out


def _ms_list(col: pd.Series) -> list[int | None]:
    """:func:`schema.to_ms` of every value of a column; at once for a column of milliseconds
    (the history's ``created_at``)."""
    if getattr(col.dtype, "kind", "") != "M" or col.dt.unit != "ms":
        return [schema.to_ms(x) for x in col]
    na = col.isna().to_numpy(dtype=bool).tolist()
    ms = col.array.asi8.tolist()
    return [None if m else v for v, m in zip(ms, na, strict=True)]


def _frame_rows(frame: pd.DataFrame, mode: str) -> tuple[pd.DataFrame, pd.DataFrame | None, str]:
    """(rows in walk order, history for epochs or None, name) for a loop or history frame."""
    if mode == "reference":
        rows = frame.sort_values("seq", kind="stable")
    else:
        rows = sort_display(frame.drop_duplicates("seq", keep="first"))
    return rows.reset_index(drop=True), frame if "epoch" in frame else None, ""


def _source_rows(src: AgentSource, mode: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(rows in walk order, history, name) of a source: the history in display order, or, for
    the reference segmentation, every archived and live row in seq order (copies kept)."""
    hist = src.history()
    if mode == "smart":
        return hist, hist, src.name
    frames = []
    a = src.audit()
    for aid in a.loc[a["source"] == "loop", "id"]:
        try:
            frames.append(src.archive(int(aid)))
        except BlobError as exc:
            warnings.warn(
                f"{src.path}: {exc.detail}; its rows are missing from the observation",
                AdfWarning,
                stacklevel=4,
            )
    live = src.loop()
    parts = [f for f in [*frames, live] if len(f)]
    rows = pd.concat(parts, ignore_index=True) if parts else live
    rows = rows.sort_values("seq", kind="stable").reset_index(drop=True)
    return rows, hist, src.name


def check_segmentation(segmentation: str) -> None:
    """Raise ValueError unless ``segmentation`` is one of :data:`SEGMENTATIONS`."""
    if segmentation not in SEGMENTATIONS:
        raise ValueError(f"segmentation must be one of {list(SEGMENTATIONS)}, got {segmentation!r}")


def observe(
    src: AgentSource | pd.DataFrame,
    *,
    taxonomy: TaxonomyArg = None,
    segmentation: str = "smart",
) -> Observation:
    """Self-observation metrics of one agent's source, or of a loop/history frame (the
    analysis behind :func:`adfkit.observe`, which documents the parameters and opens paths).

    Raises
    ------
    ValueError
        unknown ``segmentation``.
    TypeError
        ``src`` is neither a source nor a frame.

    Examples
    --------
    >>> import adfkit
    >>> from adfkit._analysis.observe import observe
    >>> observe(adfkit.open_adf("sample_agents/long-runner.adf").source).signatures.iloc[0, 0]
    'fs_read:1f1udza'
    """
    check_segmentation(segmentation)
    tax = load_taxonomy(taxonomy)
    if isinstance(src, pd.DataFrame):
        rows, hist, name = _frame_rows(src, segmentation)
        return _observe_rows(rows, hist, tax, segmentation, name)
    if not isinstance(src, AgentSource):
        raise TypeError(f"expected an agent source or a frame, got {type(src).__name__}")
    if taxonomy is None:  # the tools of the agent that wrote the record
        tax = default_taxonomy(src.format)
    rows, hist, name = _source_rows(src, segmentation)
    copies = reappended_of(src) if segmentation == "smart" else None  # rows is the history
    return _observe_rows(rows, hist, tax, segmentation, name, copies)


def _observe_rows(
    rows: pd.DataFrame,
    hist: pd.DataFrame | None,
    tax: dict[str, Any],
    mode: str,
    name: str,
    copies: Mapping[int, int] | None = None,
) -> Observation:
    """The observation of rows in walk order: turns (:func:`_segment`), each row's calls
    classified and counted into its turn (:func:`_tally`), then signatures, streaks and the
    anomaly checks."""
    with gc_paused():  # a few objects per row and per call, none in a cycle
        return _observation(rows, hist, tax, mode, name, copies)


def _observation(
    rows: pd.DataFrame,
    hist: pd.DataFrame | None,
    tax: dict[str, Any],
    mode: str,
    name: str,
    copies: Mapping[int, int] | None,
) -> Observation:
    thr = thresholds_of(tax)
    turn_of, heads = _segment(rows, mode, copies)
    counted = [h["kind"] != "compaction" for h in heads]
    created = _ms_list(rows["created_at"])
    tally = _tally(rows, turn_of, counted, created, tax)
    turns = _turns_frame(heads, counted, tally, created, _epochs_of(hist))
    calls_df = _typed_frame(tally.calls, schema.OBSERVE_CALLS)
    sigs = _signatures(calls_df)
    streaks = _streaks(turns)
    anomalies = _anomalies(turns, calls_df, sigs, thr)
    return Observation(
        turns=turns,
        calls=calls_df,
        signatures=sigs,
        streaks=streaks,
        anomalies=anomalies,
        segmentation=mode,
        thresholds=thr,
        taxonomy=tax,
        name=name,
    )


def _epochs_of(hist: pd.DataFrame | None) -> dict[int, int]:
    """Seq -> epoch (-1 when unknown) of a history frame; empty without one."""
    if hist is None or "epoch" not in hist:
        return {}
    return dict(
        zip(
            hist["seq"].to_numpy(dtype="int64").tolist(),
            hist["epoch"].fillna(-1).to_numpy(dtype="int64").tolist(),
            strict=True,
        )
    )


@dataclass
class _Tally:
    """Per counted turn (0..k-1): the sums of :data:`schema.OBSERVE_TURNS` (``agg``), rows and
    last seq; and the columns of :data:`schema.OBSERVE_CALLS`, one entry per tool call."""

    agg: dict[str, list[int]]
    n_rows: list[int]
    end_seq: list[int]
    calls: dict[str, list[Any]]


def _tally(
    rows: pd.DataFrame,
    turn_of: np.ndarray,
    counted: list[bool],
    created: list[int | None],
    tax: dict[str, Any],
) -> _Tally:
    """Each row counted into its turn, each assistant row's tool calls classified. The
    counted turns are renumbered 0..k-1 (compaction turns of the reference mode dropped)."""
    new_id = (np.cumsum(counted) - 1).tolist()
    role = _texts(rows["role"])
    seqs = rows["seq"].to_numpy(dtype="int64").tolist()
    tin = rows["tokens_input"].fillna(0).to_numpy(dtype="int64").tolist()
    tout = rows["tokens_output"].fillna(0).to_numpy(dtype="int64").tolist()
    tools = _texts(rows["tool_names"])
    # the content of the rows that call tools, the only rows whose blocks are read (a mask:
    # Arrow's first take from a column of many chunks costs 20x its filter)
    mask = np.array(
        [r == "assistant" and t != "" for r, t in zip(role, tools, strict=True)], dtype=bool
    )
    calling = np.flatnonzero(mask).tolist()
    content = dict(zip(calling, _texts(rows["content"][mask]), strict=True))
    turns = turn_of.tolist()
    nt = int(sum(counted))
    keys = ("n_calls", "n_world", "n_internal", "n_bookkeeping", "tokens_in", "tokens_out")
    tally = _Tally(
        agg={k: [0] * nt for k in keys},
        n_rows=[0] * nt,
        end_seq=[0] * nt,
        calls={c: [] for c in schema.OBSERVE_CALLS},
    )
    agg = tally.agg
    for i in range(len(rows)):
        t = turns[i]
        if t < 0 or not counted[t]:
            continue
        k = new_id[t]
        tally.n_rows[k] += 1
        tally.end_seq[k] = seqs[i]
        if role[i] != "assistant":
            continue
        agg["tokens_in"][k] += tin[i]
        agg["tokens_out"][k] += tout[i]
        if tools[i]:
            _tally_calls(tally, k, seqs[i], created[i], content[i], tax)
    calls = tally.calls
    calls["signature"] = _signatures_of(calls["tool"], calls["input"])
    return tally


def _tally_calls(
    tally: _Tally, k: int, seq: int, created: int | None, content: str, tax: dict[str, Any]
) -> None:
    """The ``tool_use`` blocks of one assistant row (turn ``k``): classified, counted, listed."""
    agg, calls = tally.agg, tally.calls
    blocks, _ = parse_content(content)
    for bi, b in enumerate(blocks):
        if b.get("type") != "tool_use":
            continue
        nm = b.get("name", "undefined")
        nm = nm if isinstance(nm, str) else ("null" if nm is None else js_stringify(nm))
        inp = b.get("input")
        cls = classify_call(nm, inp, tax)
        agg["n_calls"][k] += 1
        if cls in CLASSES:
            agg[f"n_{cls}"][k] += 1
        calls["turn"].append(k)
        calls["seq"].append(seq)
        calls["block_index"].append(bi)
        calls["created_at"].append(created)
        calls["tool"].append(nm)
        calls["class"].append(cls)
        calls["input"].append(_call_input(inp))
        uid = b.get("id")
        calls["tool_use_id"].append(None if uid is None else str(uid))


def _turns_frame(
    heads: list[dict[str, Any]],
    counted: list[bool],
    tally: _Tally,
    created: list[int | None],
    epochs: dict[int, int],
) -> pd.DataFrame:
    """One row of :data:`schema.OBSERVE_TURNS` per counted turn."""
    agg = tally.agg
    turns_d: dict[str, list[Any]] = {c: [] for c in schema.OBSERVE_TURNS}
    for h, ok in zip(heads, counted, strict=True):
        if not ok:
            continue
        k = len(turns_d["turn"])
        turns_d["turn"].append(k)
        turns_d["start_seq"].append(h["seq"])
        turns_d["end_seq"].append(tally.end_seq[k])
        turns_d["n_rows"].append(tally.n_rows[k])
        turns_d["start_at"].append(created[h["row"]])
        turns_d["trigger_kind"].append(h["kind"])
        for c in agg:
            turns_d[c].append(agg[c][k])
        turns_d["is_null_turn"].append(
            agg["n_calls"][k] > 0 and agg["n_world"][k] == 0 and agg["n_internal"][k] == 0
        )
        e = epochs.get(h["seq"], -1)
        turns_d["epoch"].append(None if e < 0 else e)
    return _typed_frame(turns_d, schema.OBSERVE_TURNS)


def _typed_frame(cols: dict[str, list[Any]], columns: Mapping[str, str]) -> pd.DataFrame:
    """:func:`schema.frame` of column lists whose values already have their column's type
    (``int``, ``bool``, ``str``, None where NA; datetimes as epoch milliseconds), as the
    turns and calls are built: each column converted at once, not value by value."""
    if not len(cols["turn"]):
        return schema.frame(cols, columns)
    out: dict[str, Any] = {}
    for c, dtype in columns.items():
        v = cols[c]
        if dtype == "Int64":
            out[c] = pd.array(v, dtype="Int64")
        elif dtype == "bool":
            out[c] = np.array(v, dtype=bool)
        elif dtype == "string":
            out[c] = pd.Series(v, dtype=object).astype("string")
        else:  # epoch milliseconds, as schema.frame converts them
            ms = pd.Series(pd.array(v, dtype="Int64")).astype("float64")
            out[c] = pd.to_datetime(ms, unit="ms", utc=True).astype(dtype)
    return pd.DataFrame(out, columns=list(columns))


def _signatures(calls: pd.DataFrame) -> pd.DataFrame:
    if not len(calls):
        return schema.frame({c: [] for c in schema.OBSERVE_SIGNATURES}, schema.OBSERVE_SIGNATURES)
    g = calls.groupby("signature", sort=False)
    df = pd.DataFrame(
        {
            "signature": g["signature"].first(),
            "tool": g["tool"].first(),
            "count": g.size(),
            "n_turns": g["turn"].nunique(),
            "first_seq": g["seq"].min(),
            "last_seq": g["seq"].max(),
            "first_seen": g["created_at"].min(),
            "last_seen": g["created_at"].max(),
        }
    ).reset_index(drop=True)
    df = df.sort_values(["count", "first_seq"], ascending=[False, True], kind="stable")
    df = df.reset_index(drop=True)
    for c, dt in schema.OBSERVE_SIGNATURES.items():
        df[c] = df[c].astype(dt)
    return df


def _streaks(turns: pd.DataFrame) -> pd.DataFrame:
    d: dict[str, list[Any]] = {c: [] for c in schema.OBSERVE_STREAKS}
    null = turns["is_null_turn"].to_numpy(dtype=bool)
    n = len(null)
    i = 0
    while i < n:
        if not null[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and null[j + 1]:
            j += 1
        d["first_turn"].append(i)
        d["last_turn"].append(j)
        d["length"].append(j - i + 1)
        d["start_seq"].append(int(turns["start_seq"].iloc[i]))
        d["end_seq"].append(int(turns["end_seq"].iloc[j]))
        d["start_at"].append(schema.to_ms(turns["start_at"].iloc[i]))
        d["current"].append(j == n - 1)
        i = j + 1
    return schema.frame(d, schema.OBSERVE_STREAKS)


#: Longest call input shown in an anomaly's detail.
INPUT_CHARS = 60


def _call_text(calls: pd.DataFrame, sig: str) -> str:
    """A signature as a reader knows the call: ``name {input}`` (cut at INPUT_CHARS), not its
    hash."""
    hit = calls[calls["signature"] == sig]
    if not len(hit):
        return sig
    name, inp = sig.split(":", 1)[0], str(hit["input"].iloc[0])
    inp = inp if len(inp) <= INPUT_CHARS else inp[: INPUT_CHARS - 3] + "..."
    return f"{name} {inp}"


def _quiet_stretch(turns: pd.DataFrame) -> int:
    """How many turns at the end made no world call (the whole stretch, not the window)."""
    quiet = (turns["n_world"].to_numpy() == 0)[::-1]
    return int(len(quiet) if quiet.all() else quiet.argmin())


def _anomalies(
    turns: pd.DataFrame, calls: pd.DataFrame, sigs: pd.DataFrame, thr: dict[str, int]
) -> pd.DataFrame:
    """The three checks of the analyzer (§8.3), one row each: null-turn streak, repeated
    action, spend without external change."""
    window = turns.tail(thr["window_turns"])
    rows = [
        _null_streak(window, thr),
        _repeated_signature(turns, calls, sigs, thr),
        _spend_without_change(turns, window),
    ]
    d = {c: [r[i] for r in rows] for i, c in enumerate(schema.OBSERVE_ANOMALIES)}
    return schema.frame(d, schema.OBSERVE_ANOMALIES)


def _anomaly(
    check: str,
    tripped: bool,
    value: int,
    threshold: int,
    window: int,
    detail: str,
    t: Any = (),
    s: Any = (),
    g: Any = (),
) -> tuple[Any, ...]:
    """One row of :data:`schema.OBSERVE_ANOMALIES`: the check, whether it tripped, its value
    and threshold, the turns it looked at, the detail, and the turns, seqs and signatures
    behind it."""
    return (check, tripped, value, threshold, window, detail, tuple(t), tuple(s), tuple(g))


def _null_streak(window: pd.DataFrame, thr: dict[str, int]) -> tuple[Any, ...]:
    """Consecutive null turns back from the newest, inside the window."""
    null = window["is_null_turn"].to_numpy(dtype=bool)
    streak = 0
    for v in null[::-1]:
        if not v:
            break
        streak += 1
    hit = streak >= thr["null_streak"]
    st = window.tail(streak) if streak else window.iloc[:0]
    return _anomaly(
        "null_streak",
        hit,
        streak,
        thr["null_streak"],
        len(window),
        f"{streak} consecutive null turn(s) at the end (trips at {thr['null_streak']})"
        + (f", from seq {int(st['start_seq'].iloc[0])}" if hit else ""),
        st["turn"].astype(int).tolist() if hit else (),
        st["start_seq"].astype(int).tolist() if hit else (),
    )


def _repeated_signature(
    turns: pd.DataFrame, calls: pd.DataFrame, sigs: pd.DataFrame, thr: dict[str, int]
) -> tuple[Any, ...]:
    """Signatures repeated ``repeat_signature`` times or more, over all the history."""
    rep = sigs[sigs["count"] >= thr["repeat_signature"]].head(TOP_SIGNATURES)
    top = int(sigs["count"].iloc[0]) if len(sigs) else 0
    if len(rep):
        shown = ", ".join(
            f"{_call_text(calls, s)} x{int(n)}"
            for s, n in zip(rep["signature"], rep["count"], strict=True)
        )
        detail = f"{len(rep)} signature(s) repeated {thr['repeat_signature']}+ times: {shown}"
        rc = calls[calls["signature"].isin(rep["signature"].tolist())]
        t, s = sorted(set(rc["turn"].astype(int))), rc["seq"].astype(int).tolist()
    else:
        detail = f"no signature repeated {thr['repeat_signature']}+ times (highest count {top})"
        t, s = [], []
    return _anomaly(
        "repeated_signature",
        bool(len(rep)),
        top,
        thr["repeat_signature"],
        len(turns),
        detail,
        t,
        s,
        rep["signature"].tolist(),
    )


def _spend_without_change(turns: pd.DataFrame, window: pd.DataFrame) -> tuple[Any, ...]:
    """At least :data:`SPEND_MIN_TURNS` turns in the window, no world call, output spent."""
    nw = len(window)
    world = int(window["n_world"].sum())
    out = int(window["tokens_out"].sum())
    hit = nw >= SPEND_MIN_TURNS and world == 0 and out > 0
    if hit:
        stretch = _quiet_stretch(turns)
        detail = f"{stretch} turns without a world call (the last {nw} spent {out:,} output tokens)"
    elif nw < SPEND_MIN_TURNS:
        detail = f"only {nw} turn(s) in the window (needs {SPEND_MIN_TURNS})"
    else:
        detail = f"{world} world call(s) in the last {nw} turns"
    return _anomaly(
        "spend_without_change",
        hit,
        out if world == 0 else 0,
        SPEND_MIN_TURNS,
        nw,
        detail,
        window["turn"].astype(int).tolist() if hit else (),
        window["start_seq"].astype(int).tolist() if hit else (),
    )


# --- AgentFile methods ----------------------------------------------------------------------
