"""OpenTelemetry GenAI export and import (issue: compaction in the tools people already watch
agents with): spans per call with usage, the compacted flag and compaction events, the same
ids on every export, an OTLP/HTTP endpoint, and import giving back the same usage table."""

from __future__ import annotations

import json
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest
from conftest import ROOT, SAMPLES, fingerprint

import adfkit
from adfkit.cli import main

pytest.importorskip("opentelemetry.sdk", reason='needs pip install "adfkit[otel]"')

CLAUDE = (
    SAMPLES
    / "claude-code/projects/-home-user-work-webapp/24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"
)
USAGE = [
    "tokens_input",
    "tokens_output",
    "tokens_cache_read",
    "tokens_cache_write",
    "tokens_cache_write_1h",
    "tokens_reasoning",
    "model",
    "call_kind",
    "cost_usd",
    "created_at",
]


def _agents():
    """Every sample agent of every format (an Inspect log's samples one by one)."""
    paths = [
        SAMPLES / "long-runner.adf",
        CLAUDE,
        *sorted((SAMPLES / "codex/sessions").rglob("rollout-*.jsonl*")),
        *sorted((SAMPLES / "inspect").glob("*summary.eval")),
        *sorted((SAMPLES / "openhands/conversations").iterdir()),
        *sorted((SAMPLES / "pi/sessions").rglob("*.jsonl")),
        *sorted((SAMPLES / "copilot_cli/session-state").iterdir()),
    ]
    return [str(p.relative_to(ROOT)) for p in paths]


def _spans(doc):
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _attrs(span):
    out = {}
    for a in span["attributes"]:
        v = a["value"]
        out[a["key"]] = int(v["intValue"]) if "intValue" in v else next(iter(v.values()))
    return out


def _open(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opened = adfkit.open(path)
    return list(opened) if isinstance(opened, adfkit.AgentCollection) else [opened]


@pytest.mark.parametrize("path", _agents())
def test_one_chat_span_per_call_with_its_usage_and_the_compactions(path):
    for agent in _open(path):
        usage = agent.usage().reset_index(drop=True)
        comp = agent.compactions()
        spans = _spans(agent.to_otlp())
        root = next(s for s in spans if s["name"] == f"invoke_agent {agent.name}")
        chats = [s for s in spans if s.get("parentSpanId") == root["spanId"]]
        chats = [s for s in chats if s["name"].startswith("chat")]
        assert len(chats) == len(usage)
        for span, row in zip(chats, usage.itertuples(index=False), strict=True):
            a = _attrs(span)
            assert a["adfkit.seq"] == row.seq and span["kind"] == 3  # SPAN_KIND_CLIENT
            for attr, col in (
                ("gen_ai.usage.input_tokens", "tokens_input"),
                ("gen_ai.usage.output_tokens", "tokens_output"),
                ("gen_ai.usage.cache_read.input_tokens", "tokens_cache_read"),
                ("gen_ai.usage.cache_write.input_tokens", "tokens_cache_write"),
                ("gen_ai.usage.cache_creation.input_tokens", "tokens_cache_write"),
            ):
                want = getattr(row, col)
                assert (attr not in a) if pd.isna(want) else a[attr] == want, (attr, row.seq)
        # the flag: on the first call after each compaction, nowhere else
        seqs = sorted(int(s) for s in usage["seq"].dropna())
        want = {
            next(s for s in seqs if s > b)
            for b in comp["boundary_seq"].dropna()
            if any(s > b for s in seqs)
        }
        got = {
            _attrs(s)["adfkit.seq"]
            for s in chats
            if _attrs(s).get("gen_ai.conversation.compacted") is True
        }
        assert got == want
        events = [e for e in root.get("events", []) if e["name"] == "adfkit.compaction"]
        assert len(events) == len(comp)
        for e, (_, c) in zip(events, comp.iterrows(), strict=True):
            a = _attrs(e)
            before = c["recorded_tokens_before"]
            before = c["trigger_tokens"] if pd.isna(before) else before
            assert a.get("adfkit.compaction.tokens_before") == (None if pd.isna(before) else before)
            assert a.get("adfkit.compaction.kind") == (None if pd.isna(c["kind"]) else c["kind"])


@pytest.mark.parametrize("path", _agents())
def test_export_then_import_gives_the_same_usage_table(path, tmp_path):
    for agent in _open(path):
        out = tmp_path / "trace.jsonl"
        out.write_text(json.dumps(agent.to_otlp()) + "\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            back = adfkit.open(out)
        assert back.format == "otel"
        pd.testing.assert_frame_equal(
            back.usage()[USAGE].reset_index(drop=True), agent.usage()[USAGE].reset_index(drop=True)
        )
        assert len(back.compactions()) == len(agent.compactions())
        assert sorted(len(s.usage()) for s in back.subagents()) == sorted(
            len(s.usage()) for s in agent.subagents()
        )


def test_the_file_is_the_same_on_every_export_and_never_written_onto_an_input(tmp_path):
    before = fingerprint(SAMPLES / "claude-code")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        assert (
            main(
                ["export", str(CLAUDE), "sample_agents/long-runner.adf", "--otlp", str(out), "-q"]
                if False
                else ["export", str(CLAUDE), "sample_agents/long-runner.adf", "--otlp", str(out)]
            )
            == 0
        )
    assert a.read_bytes() == b.read_bytes() and len(a.read_text().splitlines()) == 2
    assert fingerprint(SAMPLES / "claude-code") == before
    assert main(["export", str(CLAUDE), "--otlp", str(CLAUDE)]) == 2
    assert fingerprint(SAMPLES / "claude-code") == before


def test_messages_only_when_asked_and_redacted_with_redact():
    (agent,) = _open(CLAUDE)
    plain = [_attrs(s) for s in _spans(agent.to_otlp())]
    assert not any("gen_ai.output.messages" in a for a in plain)
    full = [_attrs(s) for s in _spans(agent.to_otlp(with_messages=True))]
    texts = [json.loads(a["gen_ai.output.messages"]) for a in full if "gen_ai.output.messages" in a]
    assert any(p["content"] for m in texts for msg in m for p in [msg["parts"][0]])
    red = [_attrs(s) for s in _spans(agent.to_otlp(with_messages=True, redact=True))]
    secret = [json.loads(a["gen_ai.output.messages"]) for a in red if "gen_ai.output.messages" in a]
    shown = {p["content"] for m in secret for msg in m for p in msg["parts"]}
    assert shown <= {"", "__redacted__"} and "__redacted__" in shown


class _Collector(BaseHTTPRequestHandler):
    got: list[bytes] = []

    def do_POST(self):  # noqa: N802
        _Collector.got.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_the_endpoint_gets_otlp_http_protobuf():
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        assert main(["export", "sample_agents/long-runner.adf", "--otlp-endpoint", url]) == 0
    finally:
        server.shutdown()
    req = ExportTraceServiceRequest()
    req.ParseFromString(_Collector.got[-1])
    spans = [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
    (agent,) = _open("sample_agents/long-runner.adf")
    assert sum(s.name.startswith("chat") for s in spans) == len(agent.usage())


# -- Copilot CLI's own OpenTelemetry file ------------------------------------------------------
COPILOT_OTEL = ROOT / "tests" / "fixtures" / "otel" / "copilot-cli-1.0.102"


def test_copilot_clis_own_otel_file_gives_the_calls_tokens_and_tools_of_its_request_log():
    """Copilot CLI 1.0.102 run against the scripted server with COPILOT_OTEL_FILE_EXPORTER_PATH
    (two runs of one conversation, a task subagent): its file, one JS SDK span object per line
    (not OTLP/JSON), read as the format otel, gives the model calls, tokens and tool calls the
    server's log holds (truth.json, from requests.jsonl only)."""
    truth = json.loads((COPILOT_OTEL / "truth.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(COPILOT_OTEL / "otel.jsonl")
    assert agent.format == "otel"
    agents = [agent, *agent.subagents()]
    usage = pd.concat([a.usage() for a in agents], ignore_index=True)
    assert len(usage) == truth["calls"]["turn"]
    sums = {k: int(usage[f"tokens_{k}"].sum()) for k in ("input", "cache_read", "output")}
    assert sums == truth["tokens"]["turn"]
    tools = pd.concat([a.tool_calls(history=True) for a in agents], ignore_index=True)
    assert tools["tool_name"].value_counts().to_dict() == truth["tool_calls_by_name"]
    assert len(agent.subagents()) == 1  # the task subagent, a child invoke_agent span


def test_a_folder_exports_one_line_per_agent_of_every_format(tmp_path):
    """``adfkit export FOLDER --otlp FILE``: the one discovery rule, every agent of every format
    under the folder (an Inspect log: one line per sample), each a trace of its own."""
    out = tmp_path / "fleet.jsonl"
    assert main(["export", str(SAMPLES), "--otlp", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    listed = adfkit.list_sessions(SAMPLES)
    # a session another session made (an OpenCode subagent: ``parent_id``) is in its parent's
    # trace, as its subagents are
    inputs = listed[listed["parent_id"].isna()]["path"]
    assert len(lines) == sum(len(_open(p)) for p in inputs) >= 19
    convs = {
        a["value"]["stringValue"]
        for doc in lines
        for s in _spans(doc)
        if s["name"].startswith("invoke_agent")
        for a in s["attributes"]
        if a["key"] == "gen_ai.conversation.id"
    }
    assert len(convs) >= len(inputs)
