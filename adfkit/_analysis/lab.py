"""The compaction lab: every real compaction replayed with other compactors, and scored.

For each compaction the record holds (:func:`lab_inputs`), the window before it (the window of
the last model call at or before its boundary, with the rows written after that call up to the
boundary) becomes a :class:`~adfkit._analysis.compactors.CompactionInput`; each compactor
(:mod:`adfkit._analysis.compactors`) makes a new window from it, and :func:`compaction_lab`
scores the new window, deterministically:

- **recall**: of the items the compaction swept that the agent needed again after it (the loss
  ledger's ``needed_again``, :func:`adfkit._analysis.forgetting.compaction_ledger`), the share
  the new window keeps, by the one rule of :mod:`adfkit._analysis.kept` (the new window's text,
  :func:`~adfkit._analysis.kept.window_text`, judged as a summary's is); per item kind too;
- **tokens** of the new window (the runtime's estimator, the same for every compactor and for
  the window before);
- **cost**: of the compaction call (the recorded one: what the record's summary call cost, as
  :meth:`compaction_cache` has it; a compactor that makes no call: 0; the LLM compactor: its
  call at its model's prices) and of the cache rewrite (the new window written to the prompt
  cache at the session model's cache-write price), USD; NA when unpriced.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
import pandas as pd

from adfkit import schema
from adfkit._analysis.compactors import DEFAULT, make_compactor, parse_spec
from adfkit._analysis.forgetting import compaction_cache, compaction_ledger
from adfkit._analysis.items import ITEM_KINDS
from adfkit._analysis.kept import (
    compaction_ids,
    kept_by,
    summary_of,
    summary_text,
    swept_items,
    tool_names,
    window_text,
)
from adfkit._analysis.llm_compactor import Judge, llm_judge
from adfkit._analysis.replay import ReplayState, replay_state
from adfkit._analysis.usage import PricesArg, history_usage, load_prices
from adfkit._analysis.windows import (
    Compacted,
    CompactionInput,
    Compactor,
    CompactorError,
    Message,
    window_tokens,
)
from adfkit._base.errors import AdfError
from adfkit._base.redact import redact_text, redact_value
from adfkit._core.prices import price_for
from adfkit._core.rows import parse_content
from adfkit._core.source import AgentSource

CompactorArg = str | tuple[str, Compactor]


# -- the windows ---------------------------------------------------------------------------
def _message(st: ReplayState, roles: dict[int, str], q: int) -> Message:
    r = st.rows[q]
    blocks, _ = parse_content(r.content)
    return Message(r.kind, roles.get(q, ""), tuple(blocks), q)


def _before(st: ReplayState, j: int) -> list[int]:
    """The conversation seqs of the window event ``j`` compacted, in display order."""
    b = int(st.events["boundary_seq"].iloc[j])
    i = bisect.bisect_right(st.calls, b) - 1
    if i < 0:  # no model call before it: what it swept and kept
        seqs = sorted(set(st.swept[j]) | set(st.tails[j]), key=lambda q: (st.rows[q].key, q))
        return [q for q in seqs if st.rows[q].conv]
    c = st.calls[i]
    gone: set[int] = set()  # swept by another event between the call and this one
    for k, bound in enumerate(st.events["boundary_seq"].tolist()):
        if k != j and c <= int(bound) < b:
            gone.update(st.swept[k])
    span = st.order[bisect.bisect_left(st.order, c) : bisect.bisect_right(st.order, b)]
    later = [q for q in span if st.rows[q].conv and q not in gone]
    return [q for q in st.window(c) if q not in gone] + later


def _after(st: ReplayState, j: int) -> list[int] | None:
    """The conversation seqs the agent's compaction left (its summary and the rows it kept),
    or None when the summary's text is not in the record (lost, encrypted, an empty
    transcript row). A compaction that writes no summary by design (it only drops rows: an
    Inspect AI trim) left the rows it kept."""
    no_summary = st.summaries[j] is None and not bool(st.events["summary_lost"].iloc[j])
    if not no_summary and summary_text(st, j) is None:
        return None
    if no_summary and st.encrypted and st.encrypted[j]:
        return None
    b = int(st.events["boundary_seq"].iloc[j])
    s = st.summaries[j]
    i = bisect.bisect_right(st.calls, b)
    if i < len(st.calls):
        return [q for q in st.window(st.calls[i]) if q <= b or q == s]
    kept = [q for q in st.tails[j] if st.rows[q].conv]
    return ([s] if s is not None else []) + kept


def lab_inputs(src: AgentSource, *, prices: PricesArg = None) -> list[CompactionInput]:
    """One :class:`CompactionInput` per compaction (clears and microcompactions left out),
    in event order."""
    st = replay_state(src)
    cache = compaction_cache(src, prices=prices)
    call_cost = dict(
        zip(cache["event_id"].tolist(), cache["compaction_cost_usd"].tolist(), strict=True)
    )
    h = src.history()
    seqs = h["seq"].astype("int64").tolist()
    roles = {q: r for q, r in zip(seqs, h["role"].astype("string").fillna(""), strict=True)}
    models = h["model"].astype("string") if "model" in h else pd.Series([pd.NA] * len(h))
    model_at = {q: m for q, m in zip(seqs, models, strict=True) if isinstance(m, str)}
    tools = tuple(sorted(tool_names(src)))
    out = []
    for j in compaction_ids(st):
        b = int(st.events["boundary_seq"].iloc[j])
        after = _after(st, j)
        recorded = None if after is None else tuple(_message(st, roles, q) for q in after)
        i = bisect.bisect_right(st.calls, b) - 1
        model = model_at.get(st.calls[i]) if i >= 0 else None
        out.append(
            CompactionInput(
                messages=tuple(_message(st, roles, q) for q in _before(st, j)),
                tools=tools,
                budget=None if recorded is None else window_tokens(recorded),
                prompt=st.instructions[j],
                recorded=recorded,
                model=model,
                event_id=j,
                recorded_cost_usd=None if _unknown(call_cost.get(j)) else call_cost[j],
            )
        )
    return out


# -- scoring -------------------------------------------------------------------------------
def _needed(led: pd.DataFrame) -> dict[int, list[tuple[str, str, str, bool]]]:
    """Event id -> its swept items as (kind, value, key, needed again)."""
    out: dict[int, list[tuple[str, str, str, bool]]] = {}
    for j, k, v, key, need in zip(
        led["event_id"].tolist(),
        led["kind"].tolist(),
        led["value"].tolist(),
        led["item_key"].tolist(),
        led["needed_again"].tolist(),
        strict=True,
    ):
        out.setdefault(int(j), []).append((str(k), str(v), str(key), bool(need)))
    return out


def _share(n: int, d: int) -> float | None:
    return n / d if d else None


def score_window(
    items: list[tuple[str, str, str, bool]] | None, messages: Sequence[Message]
) -> dict[str, Any]:
    """The recall columns of one new window: ``items`` are the compaction's swept items
    (kind, value, key, needed again), None when the record does not hold them."""
    if items is None:
        return {}
    s = summary_of(window_text([(m.kind, list(m.blocks)) for m in messages]))
    assert s is not None
    kept = [kept_by(k, v, key, s) != "lost" for k, v, key, _ in items]
    need = [i for i, it in enumerate(items) if it[3]]
    rec: dict[str, Any] = {
        "n_items": len(items),
        "n_items_kept": sum(kept),
        "recall_all": _share(sum(kept), len(items)),
        "n_needed": len(need),
        "n_needed_kept": sum(kept[i] for i in need),
        "recall": _share(sum(kept[i] for i in need), len(need)),
    }
    for kind in ITEM_KINDS:
        mine = [i for i in need if items[i][0] == kind]
        rec[f"recall_{kind}"] = _share(sum(kept[i] for i in mine), len(mine))
    return rec


def _as_compacted(got: Any) -> Compacted | None:
    if got is None or isinstance(got, Compacted):
        return got
    return Compacted(tuple(got))


JudgeArg = str | Judge | None


def judge_of(judge: JudgeArg) -> Judge | None:
    """A judge from its spec (``"model=NAME,api=openai"``: :func:`llm_judge`'s settings)."""
    if judge is None or callable(judge):
        return judge
    _, params = parse_spec(f"judge:{judge}")
    try:
        return llm_judge(**params)
    except TypeError as exc:
        raise AdfError(f"judge {judge!r}: {exc}") from None


def _judged(
    judge: Judge, items: list[tuple[str, str, str, bool]], got: Compacted
) -> dict[str, Any]:
    """The ``judge_*`` columns: the judge's answers on the items needed again."""
    needed = [(k, v) for k, v, _key, need in items if need]
    try:
        verdicts = judge(needed, got.messages)
    except CompactorError as exc:
        return {"judge_note": str(exc)}
    n = sum(1 for v in verdicts if v is not None)
    yes = sum(1 for v in verdicts if v is True)
    return {"judge_n": n, "judge_yes": yes, "judge_recall": _share(yes, n)}


def compaction_lab(
    src: AgentSource,
    compactors: Iterable[CompactorArg] = DEFAULT,
    *,
    prices: PricesArg = None,
    judge: JudgeArg = None,
) -> pd.DataFrame:
    """Each compaction replayed with each compactor, scored. One row per compaction and
    compactor (the module docstring says how each figure is made).

    Columns (dtype):

    - ``event_id``, ``boundary_seq`` (Int64: as :meth:`compactions`), ``compactor`` (string:
      its spec, ``recorded``, ``keep_last:n=3``...)
    - ``messages_before``, ``tokens_before`` (Int64: the window before, estimated),
      ``messages_after``, ``tokens_after`` (Int64: the new window; NA when the compactor
      cannot say, such as ``recorded`` when the summary is not in the record), ``ratio``
      (Float64: tokens_after / tokens_before)
    - ``n_items``, ``n_items_kept``, ``recall_all`` (the swept items, as the loss ledger
      has them, and the share the new window keeps), ``n_needed``, ``n_needed_kept``,
      ``recall`` (Int64, Int64, Float64: the same of the items needed again after the
      compaction), ``recall_<kind>`` (Float64: per item kind, of those needed again; NA for a
      kind with none); NA when the record does not hold the swept rows
    - ``model`` (string: the session's model at the compaction), ``compaction_cost_usd``
      (Float64: the compaction call), ``cache_rewrite_usd`` (Float64: the new window written
      to the cache at the model's cache-write price), ``cost_usd`` (their sum); NA unpriced
    - ``note`` (string: why a figure is NA, or what the compactor said)
    - with ``judge`` (an LLM judge: ``"model=NAME[,api=openai,base_url=URL...]"``, the
      settings of :func:`adfkit._analysis.llm_compactor.llm_judge`, or a callable from the
      ``(kind, value)`` items needed again and the new window to a yes/no/None per item),
      reported apart, never mixed into ``recall``: ``judge_n`` (Int64: probes answered),
      ``judge_yes`` (Int64: answered yes, the window tells it), ``judge_recall`` (Float64),
      ``judge_note`` (string: why the judge gave nothing); NA without a judge

    Examples
    --------
    >>> import adfkit
    >>> lab = adfkit.open("sample_agents/long-runner.adf").compaction_lab(["recorded"])
    >>> set(lab["compactor"]) <= {"recorded"}
    True
    """
    made = [make_compactor(c) for c in compactors]
    judging = judge_of(judge)
    table = load_prices(prices)
    items = _needed(compaction_ledger(src, prices=prices))
    swept = swept_items(src)
    rows = []
    for inp in lab_inputs(src, prices=prices):
        j = inp.event_id
        assert j is not None
        known = items.get(j, []) if j in swept else None
        price = price_for(table, inp.model)
        write_rate = price.rates()[3] / 1e6 if price is not None else None
        base = _window_before(src, inp)
        for label, compactor in made:
            rec = {**base, "compactor": label}
            rows.append(_lab_row(rec, compactor, inp, known, write_rate, judging))
    return schema.frame(rows, schema.COMPACTION_LAB)


def _window_before(src: AgentSource, inp: CompactionInput) -> dict[str, Any]:
    """The columns of a lab row that every compactor shares: the compaction and the window
    before it."""
    j = inp.event_id
    assert j is not None
    return {
        "event_id": j,
        "boundary_seq": int(src.events()["boundary_seq"].iloc[j]),
        "messages_before": len(inp.messages),
        "tokens_before": window_tokens(inp.messages),
        "model": inp.model,
    }


def _lab_row(
    rec: dict[str, Any],
    compactor: Compactor,
    inp: CompactionInput,
    known: list[tuple[str, str, str, bool]] | None,
    write_rate: float | None,
    judging: Judge | None,
) -> dict[str, Any]:
    """``rec`` with the figures of the window ``compactor`` makes from ``inp``: its size and
    cost (the cache rewrite at ``write_rate`` USD a token), its recall of the swept items
    ``known`` (None: not in the record), the judge's answers; or a note saying why not."""
    try:
        got = _as_compacted(compactor(inp))
    except CompactorError as exc:
        rec["note"] = str(exc)
        return rec
    if got is None:
        rec["note"] = "the compactor cannot say (the summary is not in the record)"
        return rec
    cost = got.cost_usd
    tokens = window_tokens(got.messages)
    rewrite = None if write_rate is None else round(tokens * write_rate, 8)
    rec["messages_after"] = len(got.messages)
    rec["tokens_after"] = tokens
    rec["ratio"] = _share(tokens, rec["tokens_before"])
    rec["compaction_cost_usd"] = cost
    rec["cache_rewrite_usd"] = rewrite
    rec["cost_usd"] = None if cost is None or rewrite is None else cost + rewrite
    rec["note"] = got.note if known is not None else "the swept rows are not in the record"
    rec.update(score_window(known, got.messages))
    if judging is not None and known is not None:
        rec.update(_judged(judging, known, got))
    return rec


def _unknown(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


# -- the dataset ---------------------------------------------------------------------------
def _message_doc(m: Message) -> dict[str, Any]:
    return {"kind": m.kind, "role": m.role, "blocks": list(m.blocks)}


def _json(value: Any) -> str:
    return orjson.dumps(redact_value(value), default=str).decode()


def compaction_records(src: AgentSource, *, prices: PricesArg = None) -> pd.DataFrame:
    """The compactions as a dataset, redacted: one row per compaction the record holds, with
    the window before it, the recorded summary, the items it swept with their needed-again
    labels, and what the calls around it cost. Every text goes through the redaction rules of
    :func:`adfkit._base.redact.redact_value` (credentials in any string replaced by
    ``__redacted__``).

    Columns (dtype):

    - ``event_id``, ``boundary_seq`` (Int64), ``kind`` (string: ``auto``, ``manual``; NA where
      the record states none), ``created_at`` (datetime64[ms, UTC]), ``model`` (string)
    - ``threshold`` (Int64: the automatic threshold in force), ``tokens_before``,
      ``tokens_after`` (Int64: as :meth:`compaction_audit` has them: what the record states,
      else the calls around it)
    - ``messages_before``, ``est_tokens_before`` (Int64: the window before, estimated),
      ``window_before`` (string: JSON, a list of ``{kind, role, blocks}``, the blocks in
      adfkit's neutral form), ``prompt`` (string: the compaction instructions the record
      holds), ``summary`` (string: the recorded summary's text; NA when not in the record)
    - ``n_items``, ``n_needed`` (Int64: swept items, and those needed again; NA when the swept
      rows are not in the record), ``swept_items`` (string: JSON, a list of ``{kind, value,
      key, kept, needed_again, needed_how}`` as the loss ledger has them; NA likewise)
    - ``cost_before_usd``, ``cost_after_usd`` (Float64: the last model call before the
      compaction and the first after it), ``compaction_cost_usd`` (Float64: the compaction
      call, where the record keeps its usage); NA when unknown or unpriced
    """
    from adfkit._analysis.compaction_audit import compaction_audit

    st = replay_state(src)
    audit = compaction_audit(src).set_index("event_id")
    led = compaction_ledger(src, prices=prices)
    swept = swept_items(src)
    u = history_usage(src, load_prices(prices))
    u = u[u["call_kind"] == "assistant"]
    cost = dict(zip(u["seq"].astype("int64").tolist(), u["cost_usd"].tolist(), strict=True))
    rows = []
    for inp in lab_inputs(src, prices=prices):
        j = inp.event_id
        assert j is not None
        rec = _record(st, inp, audit.loc[j] if j in audit.index else None, cost)
        if j in swept:
            items = _swept_docs(led[led["event_id"] == j])
            rec.update(
                n_items=len(items),
                n_needed=sum(bool(x["needed_again"]) for x in items),
                swept_items=_json(items),
            )
        rows.append(rec)
    return schema.frame(rows, schema.COMPACTION_DATASET)


def _record(
    st: ReplayState, inp: CompactionInput, a: pd.Series | None, cost: dict[int, Any]
) -> dict[str, Any]:
    """A dataset record's columns but the swept items: the compaction (its audit row ``a``,
    None when it has none), the window before it and the summary (redacted), and the cost of
    the model calls around it (``cost``: seq of an assistant call -> its cost)."""
    j = inp.event_id
    assert j is not None
    b = int(st.events["boundary_seq"].iloc[j])
    i = bisect.bisect_right(st.calls, b)
    text = summary_text(st, j)
    return {
        "event_id": j,
        "boundary_seq": b,
        "kind": None if a is None else a["kind"],
        "created_at": None if a is None else a["created_at"],
        "model": inp.model,
        "threshold": None if a is None else a["threshold"],
        "tokens_before": None if a is None else a["tokens_before"],
        "tokens_after": None if a is None else a["tokens_after"],
        "messages_before": len(inp.messages),
        "est_tokens_before": window_tokens(inp.messages),
        "window_before": _json([_message_doc(m) for m in inp.messages]),
        "prompt": None if inp.prompt is None else redact_text(inp.prompt),
        "summary": None if text is None else redact_text(text),
        "cost_before_usd": cost.get(st.calls[i - 1]) if i > 0 else None,
        "cost_after_usd": cost.get(st.calls[i]) if i < len(st.calls) else None,
        "compaction_cost_usd": inp.recorded_cost_usd,
    }


def _swept_docs(g: pd.DataFrame) -> list[dict[str, Any]]:
    """The loss ledger's rows of one compaction as ``{kind, value, key, kept, needed_again,
    needed_how}`` (None where unknown)."""
    cols = ("kind", "value", "item_key", "kept", "needed_again", "needed_how")
    keys = ("kind", "value", "key", "kept", "needed_again", "needed_how")
    return [
        dict(zip(keys, r, strict=True))
        for r in zip(*(g[c].astype(object).where(g[c].notna(), None) for c in cols), strict=True)
    ]
