"""One Inspect AI sample (``samples/<id>_epoch_<n>.json`` of an ``.eval`` log) as a
:class:`~adfkit._sources.transcript.kit.ParsedTranscript` (SOURCES-NEXT.md §1).

- **Rows** are ``sample.messages`` in order (Inspect keeps the full history there: compaction
  changes only what the model is sent). ``seq`` = 1-based position, ``line`` = the same
  position, ``uuid`` = the message ``id``. A ``system`` message is a user row with
  ``kind_hint="context"``; a user message with ``metadata.summary`` true is the compaction
  summary (``kind_hint="compaction_summary"``); an assistant message's ``tool_calls`` are
  ``tool_use`` blocks, its reasoning parts ``thinking`` blocks; a ``tool`` message is a user row
  holding one ``tool_result`` (``is_error`` when it has an ``error``). ``attachment://<hash>``
  strings are resolved from ``sample.attachments``. Messages carry no time: an assistant row
  has its call's time (``ModelEvent.completed``, else ``timestamp``), a tool row its
  ``ToolEvent``'s, a summary row its ``CompactionEvent``'s; the others none.
- **Model calls**: every top-level ``ModelEvent``. Its input is ``input`` when written, else
  expanded from ``input_refs`` (``[start, end)`` ranges, in order) into
  ``events_data.messages`` (0.3.206+) or the sample's ``message_pool`` (the experimental
  version-3 layout). Each input message is matched to a row by its content (role, content,
  tool call id, tool calls; the pool deduplicates identical messages under the first one's id,
  so an id alone can name the wrong row), aligned from the end of the input so each message is
  the latest row with that content before the next one's; a message whose content matches no
  row but whose id does is that row *edited* (an ``edit`` compaction). Its usage
  (``output.usage``: ``input_tokens`` full-rate only, plus ``input_tokens_cache_read`` and
  ``_write``) is counted once: ``input`` = the three together, ``output``, ``cache_read``,
  ``cache_write``, ``reasoning``. ``ModelEvent.cache`` is Inspect's own response cache, not
  provider tokens: it is not read. The call is put on the assistant row its output message is
  (by id, else the next assistant row); the summarizer call of a ``summary`` compaction (the
  tool-less call right before the ``CompactionEvent``) on the summary row; calls with no row
  (a scorer's) on none.
- **Compactions**: each ``CompactionEvent``. ``pre_tokens``/``post_tokens`` are its
  ``tokens_before``/``tokens_after``: **Inspect's estimates** (the last reported input plus
  counted new messages; a ``count_tokens`` of the result), not provider usage. What it swept is
  not on the event: it is the rows in the window before it (every row up to the event that no
  earlier event swept) that the next agent call's input no longer holds; kept = those it still
  holds. ``type`` ``summary``/``trim`` is a ``compaction``; ``edit`` (tool results and thinking
  cleared in place, messages kept) is a ``microcompaction`` whose cleared rows are those the next
  input holds edited. ``trigger``: ``metadata.trigger`` ``threshold`` -> ``auto``, ``forced`` ->
  ``manual``; strategy, type, source, ``messages_before``/``_after`` are kept in ``extra``.
  ``tokens_before``/``tokens_after`` = ``input`` of the last agent call before and the first
  after.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from adfkit._sources.inspect_eval.compactions import compactions
from adfkit._sources.inspect_eval.state import Sample
from adfkit._sources.inspect_eval.usage import call_usage
from adfkit._sources.transcript.kit import Findings, ParsedTranscript

FORMAT = "inspect_eval"


@dataclass(frozen=True, slots=True)
class ParsedSample:
    """A parsed sample: the transcript, and the rows each agent call's input held (call seq ->
    input seqs in input order, context rows included; messages that are no row left out)."""

    parsed: ParsedTranscript
    inputs: dict[int, tuple[int, ...]]


def parse_sample(
    sample: Any, *, path: str, member: str, meta: dict[str, str], findings: list | None = None
) -> ParsedSample:
    """Parse one EvalSample object (``member`` of the log at ``path``); ``findings`` are the
    log's own (a missing header...), repeated in every sample's."""
    fnd = Findings()
    for f in findings or []:
        fnd.add(f.check, f.severity, f.line, f.detail)
    if not isinstance(sample, dict):
        fnd.add("not_a_sample", "error", None, f"member {member!r} is JSON but not an object")
        sample = {}
    st = Sample(sample, member, fnd)
    st.match_calls()
    events = compactions(st)
    calls, input_of = call_usage(st, events)
    events = [
        dataclasses.replace(
            e,
            tokens_before=input_of.get(e.extra.pop("_before_call", None)),
            tokens_after=input_of.get(e.extra.pop("_after_call", None)),
        )
        for e in events
    ]
    st.stamp_rows()
    st.final_findings()
    m2 = dict(meta)
    for k, v in (("sample_id", sample.get("id")), ("epoch", sample.get("epoch"))):
        if v is not None:
            m2[k] = str(v)
    uuid = sample.get("uuid") if isinstance(sample.get("uuid"), str) else None
    if uuid:
        m2["sample_uuid"] = uuid
    m2["member"] = member
    parsed = ParsedTranscript(
        path=path,
        format=FORMAT,
        session_id=uuid,
        meta=m2,
        rows=st.rows,
        events=events,
        findings=fnd.done(),
        calls=calls,
    )
    inputs = {
        c.out_seq: tuple(q for q in c.seqs if q is not None)
        for c in st.calls
        if c.out_seq is not None and not c.summarizer
    }
    return ParsedSample(parsed, inputs)
