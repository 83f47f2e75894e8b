"""A real Arize Phoenix (pip package arize-phoenix, in a venv of its own under build/) on
127.0.0.1 receives adfkit's OTLP export of a real Claude Code session and an ADF file; what
Phoenix's own client reads back holds every call's tokens, the compacted flag on the calls
after each compaction, and the compaction events with the figures the files record."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT

import adfkit

pytest.importorskip("opentelemetry.sdk", reason='needs pip install "adfkit[otel]"')

TRANSCRIPTS = ROOT.parent / "shared" / "fixtures" / "transcripts"
SESSION = (
    "claude-code/projects/-Users-alex-workspace-cli--worktrees-1/"
    "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"
)
VENV = ROOT / "build" / "phoenix-venv"
#: Phoenix's start (migrations, UI assets) takes 20-90 s on this 2-core machine under load.
START_S = 600

READ_BACK = """
import json, sys
from phoenix.client import Client
df = Client(base_url=sys.argv[1]).spans.get_spans_dataframe(project_identifier="default",
                                                           limit=100000)
out = []
for r in df.to_dict("records"):
    gen = r.get("attributes.gen_ai") or {}
    out.append({"name": r["name"], "id": r["context.span_id"], "parent": r["parent_id"],
                "gen_ai": gen, "adfkit": r.get("attributes.adfkit") or {},
                "events": [{"name": e.get("name"), "attributes": e.get("attributes")}
                           for e in (r.get("events") or [])]})
print(json.dumps(out, default=str))
"""


def _phoenix_python() -> Path:
    """The venv's python, made on first use (uv from adfkit's own venv, else pip); skip with
    the reason when Phoenix cannot be installed here."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".installed"
    if stamp.exists():
        return python
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    uv = Path(sys.executable).parent / "uv"
    pkgs = ["arize-phoenix", "arize-phoenix-client"]
    cmd = (
        [str(uv), "pip", "install", "-q", "--python", str(python), *pkgs]
        if uv.exists()
        else [str(python), "-m", "pip", "install", "-q", *pkgs]
    )
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"arize-phoenix could not be installed here: {done.stderr[-500:]}")
    stamp.touch()
    return python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    if not (TRANSCRIPTS / SESSION).exists():
        pytest.skip(f"{TRANSCRIPTS / SESSION} not present (../shared is absent in a user's clone)")
    python = _phoenix_python()
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = _free_port(), _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (work / "phoenix.log").open("wb")
    proc = subprocess.Popen(
        [str(python), "-m", "phoenix.server.main", "serve"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=5)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        f"Phoenix did not start: {(work / 'phoenix.log').read_text()[-2000:]}"
                    )
                time.sleep(1)
        yield url, python
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def _flat(d: dict, prefix: str = "") -> dict:
    """Attributes as dotted keys, however the client nests them."""
    out = {}
    for k, v in (d or {}).items():
        key = f"{prefix}{k}"
        out.update(_flat(v, key + ".") if isinstance(v, dict) else {key: v})
    return out


def _read_back(url: str, python: Path, want: int) -> list[dict]:
    """Phoenix's spans through its own client, once it has stored all it was sent."""
    for _ in range(120):
        done = subprocess.run([str(python), "-c", READ_BACK, url], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        spans = json.loads(done.stdout)
        if len(spans) >= want:
            return spans
        time.sleep(1)
    raise AssertionError(f"Phoenix holds {len(spans)} spans, {want} were sent")


def test_phoenix_shows_every_call_and_every_compaction(phoenix):
    url, python = phoenix
    session = TRANSCRIPTS / SESSION
    reference = json.loads((TRANSCRIPTS / "reference.json").read_text())[SESSION]
    adf = ROOT / "sample_agents" / "long-runner.adf"
    expected = {}
    for path in (session, adf):
        with adfkit.open(path) as agent:
            usage, comp = agent.usage(), agent.compactions()
            doc = agent.to_otlp()
            n = sum(len(ss["spans"]) for rs in doc["resourceSpans"] for ss in rs["scopeSpans"])
            expected[agent.name] = (usage, comp, n)
    args = ["export", str(session), str(adf), "--otlp-endpoint", f"{url}/v1/traces"]
    from adfkit.cli import main

    assert main(args) == 0
    spans = _read_back(url, python, sum(n for *_, n in expected.values()))
    by_id = {s["id"]: s for s in spans}
    for name, (usage, comp, _) in expected.items():
        root = next(s for s in spans if s["name"] == f"invoke_agent {name}")
        calls = sorted(
            (s for s in spans if s["parent"] == root["id"] and s["name"].startswith("chat")),
            key=lambda s: s["adfkit"]["seq"],
        )
        assert len(calls) == len(usage)
        for span, row in zip(calls, usage.sort_values("seq").itertuples(), strict=True):
            assert span["gen_ai"]["usage"]["input_tokens"] == row.tokens_input
            assert span["gen_ai"]["usage"]["output_tokens"] == row.tokens_output
        flagged = [
            s["adfkit"]["seq"]
            for s in calls
            if (s["gen_ai"].get("conversation") or {}).get("compacted") is True
        ]
        seqs = sorted(int(x) for x in usage["seq"])
        after = sorted(
            {
                next(x for x in seqs if x > b)
                for b in comp["boundary_seq"].dropna()
                if any(x > b for x in seqs)
            }
        )
        assert flagged == after and len(flagged) >= 1
        events = [e for e in root["events"] if e["name"] == "adfkit.compaction"]
        assert len(events) == len(comp)
        assert by_id[calls[0]["parent"]]["name"] == f"invoke_agent {name}"
    # the real session against its published reference figures
    with adfkit.open(session) as agent:
        name = agent.name
    root = next(s for s in spans if s["name"] == f"invoke_agent {name}")
    calls = [s for s in spans if s["parent"] == root["id"] and s["name"].startswith("chat")]
    assert len(calls) == reference["main_calls_on_active_chain"]
    events = [e for e in root["events"] if e["name"] == "adfkit.compaction"]
    got = [_flat(e["attributes"])["adfkit.compaction.tokens_before"] for e in events]
    assert got == [e["pre_tokens"] for e in reference["compaction_events"]]
