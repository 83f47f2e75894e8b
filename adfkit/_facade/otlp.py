"""Agents as OpenTelemetry GenAI traces: what OTel backends (Phoenix, Langfuse, Opik...) show,
with the compactions none of them knows about.

One trace per agent file. Spans (built with the OpenTelemetry SDK, encoded with its OTLP
encoder, sent with its OTLP/HTTP exporter):

- ``invoke_agent <name>``: one per agent (a subagent's is a child of its parent's), from its
  first to its last record, with ``gen_ai.operation.name``, ``gen_ai.agent.name``,
  ``gen_ai.conversation.id``, ``gen_ai.provider.name`` (and the older ``gen_ai.system``).
- ``chat <model>``: one per model call (``usage()``'s rows), child of its agent's span:
  ``gen_ai.request.model``/``gen_ai.response.model``, ``gen_ai.usage.input_tokens`` (the whole
  prompt, cached parts included), ``gen_ai.usage.output_tokens``,
  ``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.cache_write.input_tokens`` and its
  older name ``gen_ai.usage.cache_creation.input_tokens``, ``gen_ai.usage.reasoning_tokens``;
  ``gen_ai.conversation.compacted`` = true on the first call after each compaction;
  ``adfkit.call.kind`` (``assistant``, ``compaction``...) and ``adfkit.seq``. A figure the
  file does not record is left out, never sent as 0.
- A span event ``adfkit.compaction`` per compaction on its agent's span, at the compaction's
  time: ``adfkit.compaction.`` ``id``, ``kind`` (trigger: ``auto``, ``manual``...),
  ``tokens_before``, ``tokens_after`` (as the file records them, else from the calls'
  usage), ``swept_rows``, ``swept_tokens``, ``summary_tokens``, ``recall``, ``compression_ratio``.

Ids are derived from the file (its format, session id and name) and the span's place, so two
exports of the same file are equal. Messages are sent only when asked (``with_messages``):
``gen_ai.input.messages`` holds the messages the call added to the conversation since the
previous call (the whole context would grow with the square of the session), and
``gen_ai.output.messages`` what the call answered, as GenAI's JSON message parts; ``redact``
replaces their text by ``__redacted__`` as ``export --redact`` does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

#: An ``AgentFile`` (not imported: ``AgentFile.to_otlp`` imports this module).
AgentFile = Any

#: Where adfkit's own attributes live.
NS = "adfkit"
SCOPE = "adfkit"


def _ids(seed: str) -> Any:
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class Ids(IdGenerator):
        """Ids from ``seed`` and a counter: the same file gives the same ids."""

        def __init__(self) -> None:
            self.n = 0

        def _next(self, bits: int) -> int:
            self.n += 1
            digest = hashlib.sha256(f"{seed}\0{self.n}".encode()).digest()
            return int.from_bytes(digest[: bits // 8], "big") or 1

        def generate_span_id(self) -> int:
            return self._next(64)

        def generate_trace_id(self) -> int:
            return self._next(128)

    return Ids()


class _Collect:
    """A span exporter that keeps the spans (the SDK hands each one over when it ends)."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def _need_otel() -> None:
    import importlib.util

    from adfkit._base.errors import AdfError

    if importlib.util.find_spec("opentelemetry.sdk") is None:
        raise AdfError('OpenTelemetry export needs its packages: pip install "adfkit[otel]"')


def spans(agent: AgentFile, *, with_messages: bool = False, redact: bool = False) -> list[Any]:
    """The agent's spans (and its subagents'), ended, in the order they were built."""
    _need_otel()
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    import adfkit

    seed = f"{agent.format}\0{_session_id(agent)}\0{agent.name}"
    resource = Resource.create({"service.name": "adfkit", "service.version": adfkit.__version__})
    provider = TracerProvider(resource=resource, id_generator=_ids(seed))
    out = _Collect()
    provider.add_span_processor(SimpleSpanProcessor(out))  # type: ignore[arg-type]
    tracer = provider.get_tracer(SCOPE, adfkit.__version__)
    _agent_span(tracer, agent, None, with_messages, redact, trace)
    provider.shutdown()
    return out.spans


def _session_id(agent: AgentFile) -> str:
    meta = agent.meta()
    return str(meta.get("session_id") or meta.get("id") or agent.name)


def _agent_span(
    tracer: Any, agent: AgentFile, parent: Any, with_messages: bool, redact: bool, trace: Any
) -> None:
    usage = agent.usage()
    history = agent.history()
    comp = agent.compactions()
    times = _times(history)
    start, end = (times[0], times[-1]) if times else (0, 0)
    settings = agent.settings()
    attrs = _clean(
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent.name,
            "gen_ai.conversation.id": _session_id(agent),
            "gen_ai.provider.name": settings.provider,
            "gen_ai.system": settings.provider,
            "gen_ai.request.model": settings.model,
            f"{NS}.format": agent.format,
            f"{NS}.compactions": len(comp),
        }
    )
    ctx = trace.set_span_in_context(parent) if parent is not None else None
    span = tracer.start_span(f"invoke_agent {agent.name}", ctx, attributes=attrs, start_time=start)
    for ev in _compaction_events(comp):
        span.add_event(f"{NS}.compaction", ev["attributes"], timestamp=ev["time"] or start)
    inner = trace.set_span_in_context(span)
    compacted = _first_calls_after(usage, comp)
    added = _added_messages(history, usage) if with_messages else {}
    previous = start
    for row in usage.itertuples(index=False):
        at = _ns(row.created_at) or previous
        call = _chat_attributes(row, settings.provider, row.seq in compacted)
        if with_messages:
            call.update(_messages(added.get(row.seq, ([], [])), redact))
        name = f"chat {row.model}" if isinstance(row.model, str) else "chat"
        client = trace.SpanKind.CLIENT
        child = tracer.start_span(
            name, inner, kind=client, attributes=call, start_time=min(previous, at)
        )
        child.end(end_time=at)
        previous = at
    for sub in agent.subagents():
        _agent_span(tracer, sub, span, with_messages, redact, trace)
    span.end(end_time=max(end, previous))


def _times(history: pd.DataFrame) -> list[int]:
    at = history["created_at"].dropna()
    return sorted(int(t.value) for t in at) if len(at) else []


def _ns(ts: Any) -> int | None:
    return None if ts is None or pd.isna(ts) else int(pd.Timestamp(ts).value)


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes without the unknown ones (OTel has no null): NA is left out, never 0."""
    out = {}
    for k, v in attrs.items():
        if v is None or (not isinstance(v, str | bool) and pd.isna(v)):
            continue
        is_int = not isinstance(v, bool) and (isinstance(v, int) or hasattr(v, "__index__"))
        out[k] = int(v) if is_int else (bool(v) if isinstance(v, bool) else v)
    return out


def _chat_attributes(row: Any, provider: str | None, compacted: bool) -> dict[str, Any]:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gen_ai.request.model": row.model,
        "gen_ai.response.model": row.model,
        "gen_ai.usage.input_tokens": row.tokens_input,
        "gen_ai.usage.output_tokens": row.tokens_output,
        "gen_ai.usage.cache_read.input_tokens": row.tokens_cache_read,
        "gen_ai.usage.cache_write.input_tokens": row.tokens_cache_write,
        "gen_ai.usage.cache_creation.input_tokens": row.tokens_cache_write,
        "gen_ai.usage.reasoning_tokens": row.tokens_reasoning,
        f"{NS}.usage.cache_write_1h": row.tokens_cache_write_1h,
        f"{NS}.call.kind": str(row.call_kind),
        f"{NS}.seq": row.seq,
        f"{NS}.epoch": row.epoch,
        f"{NS}.cost_usd": row.cost_usd,
    }
    if compacted:
        attrs["gen_ai.conversation.compacted"] = True
    return _clean(attrs)


def _first_calls_after(usage: pd.DataFrame, comp: pd.DataFrame) -> set[int]:
    """Seqs of the first call after each compaction (the first of the next epoch)."""
    if comp.empty or usage.empty:
        return set()
    seqs = usage["seq"].dropna().astype("int64").sort_values().to_numpy()
    out = set()
    for boundary in comp["boundary_seq"].dropna().astype("int64"):
        later = seqs[seqs > boundary]
        if len(later):
            out.add(int(later[0]))
    return out


_EVENT_COLUMNS = {
    "id": "event_id",
    "kind": "kind",
    "swept_rows": "n_swept",
    "swept_tokens": "swept_tokens",
    "summary_tokens": "summary_tokens",
    "recall": "recall",
    "compression_ratio": "compression_ratio",
}


def _compaction_events(comp: pd.DataFrame) -> Iterator[dict[str, Any]]:
    for _, row in comp.iterrows():
        attrs = {f"{NS}.compaction.{k}": row[c] for k, c in _EVENT_COLUMNS.items()}
        before = row["recorded_tokens_before"]
        attrs[f"{NS}.compaction.tokens_before"] = (
            before if not pd.isna(before) else row["trigger_tokens"]
        )
        attrs[f"{NS}.compaction.tokens_after"] = row["recorded_tokens_after"]
        attrs[f"{NS}.compaction.event"] = row["event"]
        yield {"time": _ns(row["created_at"]), "attributes": _clean(attrs)}


def _added_messages(history: pd.DataFrame, usage: pd.DataFrame) -> dict[int, tuple[list, list]]:
    """Per call seq: the rows added since the previous call (input), and the call's row."""
    rows = history.sort_values("seq")
    calls = sorted(int(s) for s in usage["seq"].dropna())
    out: dict[int, tuple[list, list]] = {}
    previous = 0
    by_seq = {int(r.seq): r for r in rows.itertuples(index=False)}
    for seq in calls:
        added = [by_seq[s] for s in range(previous + 1, seq) if s in by_seq]
        out[seq] = (added, [by_seq[seq]] if seq in by_seq else [])
        previous = seq
    return out


def _messages(pair: tuple[list, list], redact: bool) -> dict[str, str]:
    added, answer = pair
    return {
        "gen_ai.input.messages": json.dumps([_message(r, redact) for r in added]),
        "gen_ai.output.messages": json.dumps([_message(r, redact) for r in answer]),
    }


def _message(row: Any, redact: bool) -> dict[str, Any]:
    from adfkit._base.redact import REDACTED

    text = row.text if isinstance(row.text, str) else ""
    return {
        "role": str(row.role),
        "parts": [{"type": "text", "content": REDACTED if redact and text else text}],
    }


# -- encodings -------------------------------------------------------------------------------


def request(span_list: Sequence[Any]) -> Any:
    """The OTLP ``ExportTraceServiceRequest`` of the spans (the SDK's own encoder)."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(span_list)


def to_json(span_list: Sequence[Any]) -> dict[str, Any]:
    """OTLP/JSON of the spans, as the OpenTelemetry file exporter writes a line: the protobuf
    message's JSON mapping with ids as hex strings, as OTLP/JSON asks (protobuf's own JSON
    mapping writes bytes as base64)."""
    from google.protobuf.json_format import MessageToDict

    doc: dict[str, Any] = MessageToDict(request(span_list), use_integers_for_enums=True)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        link[key] = _hex(link[key])
    return doc


def _hex(b64: str) -> str:
    import base64

    return base64.b64decode(b64).hex()


def send(span_list: Sequence[Any], endpoint: str) -> None:
    """Send spans to an OTLP/HTTP endpoint (``.../v1/traces``, protobuf, the SDK's exporter);
    an :class:`adfkit.AdfError` when the endpoint does not take them."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from adfkit._base.errors import AdfError

    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=30)
    try:
        if exporter.export(span_list) is not SpanExportResult.SUCCESS:
            raise AdfError(f"{endpoint}: the OTLP endpoint did not take the spans")
    finally:
        exporter.shutdown()
