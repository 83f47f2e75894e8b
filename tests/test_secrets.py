"""Secrets never leave the file: ``adf_identity`` is never selected, no output holds its values,
exports can redact bodies and config secrets, and rendered HTML escapes agent text (cases
H37-H40 of ROBUSTNESS.md).

``tests/adfbuild.py`` stores the fake key ``SECRET`` in ``adf_identity``; the sample agents
store ``adfsynth.writer.FAKE_SECRET``. Both are known to the test, so their absence can be
checked in every value the public API produces without the test reading the table either.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from adfbuild import SECRET, build, result, row, text, use
from conftest import fingerprint, runtime_fixture, sample
from test_hostile import LOOP, exercise

import adfkit
from adfkit import cli, export, widgets
from adfkit._base.html import clip, escape, safe_frame_html
from adfkit._base.redact import REDACTED, redact_config, redact_frame
from adfkit.report import write_report
from adfsynth.writer import FAKE_SECRET

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"


def forms(secret: bytes) -> list[str]:
    """The secret as text, hex (either case) and base64: how it could leak."""
    return [
        secret.decode(),
        secret.hex(),
        secret.hex().upper(),
        base64.b64encode(secret).decode(),
    ]


def texts(value: Any, depth: int = 0) -> list[str]:
    """Every piece of text reachable from a result of the public API."""
    if depth > 6:
        return []
    if isinstance(value, pd.DataFrame):
        out = [str(c) for c in value.columns]
        for c in value.columns:
            out += [str(v) for v in value[c].tolist()]
            if value[c].dtype == object:
                for v in value[c].tolist():
                    if isinstance(v, dict | list | tuple | bytes):
                        out += texts(v, depth + 1)
        return out
    if isinstance(value, pd.Series):
        return [str(v) for v in value.tolist()]
    if isinstance(value, bytes | bytearray):
        return [bytes(value).decode("utf-8", "replace"), bytes(value).hex()]
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in [str(k), *texts(v, depth + 1)]]
    if isinstance(value, list | tuple | set):
        return [t for v in value for t in texts(v, depth + 1)]
    out = [repr(value)]
    for attr, v in vars(value).items() if hasattr(value, "__dict__") else []:
        if not attr.startswith("_") or isinstance(v, pd.DataFrame):
            out += texts(v, depth + 1)
    return out


def assert_no_secret(value: Any, secret: bytes) -> None:
    blob = "\n".join(texts(value))
    for form in forms(secret):
        assert form not in blob, f"the identity secret leaked as {form!r}"


@pytest.fixture
def agent_file(tmp_path) -> Path:
    d = tmp_path / "agents"
    d.mkdir()
    return build(
        d / "agent.adf",
        loop=LOOP,
        audit=[{"source": "loop", "rows": [row(0, "user", text("archived"))]}],
        files={"mind.md": "# Mind\n"},
    )


# -- adf_identity is never selected ----------------------------------------------------------


def traced(monkeypatch) -> list[str]:
    """Every SQL statement run on any connection adfkit opens, from the first one on."""
    statements: list[str] = []
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        con = real(*args, **kwargs)
        con.set_trace_callback(statements.append)
        return con

    monkeypatch.setattr(sqlite3, "connect", connect)
    return statements


def test_h37_identity_is_never_selected(agent_file, monkeypatch, capsys):
    """A trace of every statement (open, every public method, ``adfkit info``) never names
    adf_identity, and the reader's own connection (``agent.source.sqlite.con``) is traced too."""
    statements = traced(monkeypatch)
    with adfkit.open_adf(agent_file) as agent:
        own: list[str] = []
        agent.source.sqlite.con.set_trace_callback(lambda s: (own.append(s), statements.append(s)))
        res = exercise(agent)
    assert cli.main(["info", str(agent_file)]) == 0
    assert cli.main(["info", "--json", str(agent_file)]) == 0
    out = capsys.readouterr().out
    assert own and any("adf_loop" in s for s in own) and any("adf_audit" in s for s in own)
    assert any("sqlite_master" in s for s in statements)  # tracing from the first statement
    assert not [s for s in statements if "adf_identity" in s.lower()]
    assert_no_secret(res, SECRET)
    assert SECRET.decode() not in out


def test_h37_identity_never_selected_on_samples_and_fixtures(monkeypatch):
    statements = traced(monkeypatch)
    paths = [sample(n) for n in ("long-runner", "messenger", "legacy-v27")]
    paths.append(runtime_fixture("audited-messenger"))
    for p in paths:
        with adfkit.open_adf(p) as agent:
            res = exercise(agent)
        if "sample_agents" in str(p):
            assert_no_secret(res, FAKE_SECRET)
    assert len(statements) > 20
    assert not [s for s in statements if "adf_identity" in s.lower()]


# -- exports, reports and widgets never hold the secret ---------------------------------------


@pytest.mark.parametrize("redact", [False, True])
def test_h38_export_holds_no_secret(agent_file, tmp_path, redact):
    """Every file ``export`` writes (Parquet read back, JSON as bytes) is free of the secret;
    with ``redact=True`` no message body survives either, and the input is untouched."""
    before = fingerprint(agent_file.parent)
    out = tmp_path / "export"
    export([agent_file], out, redact=redact)
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert any(p.suffix == ".parquet" for p in files)
    for p in files:
        if p.suffix == ".parquet":
            df = pd.read_parquet(p)
            assert_no_secret(df, SECRET)
            if redact:
                for col in set(df.columns) & {"text", "content", "tool_input", "result_preview"}:
                    present = df[col].dropna().astype(str)
                    assert present.isin([REDACTED, ""]).all(), (p.name, col, present.tolist())
        else:
            data = p.read_bytes()
            for form in forms(SECRET):
                assert form.encode() not in data
    assert fingerprint(agent_file.parent) == before


@pytest.mark.parametrize("notebook", [None, "01"])
def test_h38_report_holds_no_secret(tmp_path, notebook):
    """The HTML report of a sample agent (the plain one, and a notebook run by a kernel) never
    shows the identity secret."""
    p = sample("clean")
    html = write_report(p, tmp_path / "r.html", notebook=notebook).read_text()
    for form in forms(FAKE_SECRET):
        assert form not in html


def test_h38_widgets_hold_no_secret_and_escape_text(tmp_path):
    """Widgets' HTML of a file whose text is hostile markup: no secret, no raw tag."""
    d = tmp_path / "w"
    d.mkdir()
    f = build(
        d / "hostile.adf",
        loop=[
            row(1, "user", text(f"hello {SCRIPT} {IMG}")),
            row(2, "assistant", [use("x1", "fs_read", {"path": SCRIPT})], tokens={"input": 5}),
            row(3, "user", [result("x1", IMG)]),
        ],
        audit=[
            {
                "source": "file",
                "value": {
                    "path": SCRIPT,
                    "content_base64": base64.b64encode(IMG.encode()).decode(),
                },
            }
        ],
    )
    with adfkit.open_adf(f) as agent:
        pages = [widgets.rows_html(agent.history())]
        for aid in agent.audit()["id"].tolist():
            pages.append(widgets.audit_html({"id": aid, "source": "file"}, agent.decode_audit(aid)))
        pages.append(widgets.LoopBrowser(agent).html.value)
        pages.append(widgets.AuditExplorer(agent).html.value)
    for page in pages:
        low = page.lower()
        assert "<script>alert" not in low and "<img src=x" not in low
        for form in forms(SECRET):
            assert form not in page
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in p for p in pages)


# -- redaction -------------------------------------------------------------------------------

CONFIG = {
    "name": "agent",
    "model": {
        "provider": "openai",
        "model_id": "gpt-5",
        "max_tokens": 4096,
        "params": [{"key": "api_key", "value": "sk-param-0123456789"}, {"key": "seed", "value": 7}],
        "provider_params": {"session_id": "abc123", "region": "eu"},
    },
    "providers": [
        {
            "id": "p1",
            "baseUrl": "https://api.example.com",
            "apiKey": "sk-prov-0123456789",
            "params": [{"key": "Authorization", "value": "Bearer abcdefghijkl"}],
        }
    ],
    "mcp": {
        "servers": [
            {
                "name": "github",
                "command": "npx",
                "env": {"GITHUB_PAT": "ghp_0123456789abcdef", "DEBUG": "1"},
                "headers": {"X-Custom": "anything"},
            }
        ]
    },
    "context": {"compact_threshold": 50000, "audit": {"loop": True}},
    "limits": {"max_file_read_tokens": 30000},
    "notes": "uses key sk-hidden-0123456789 somewhere",
    "webhook": "Bearer zyxwvutsrqpo",
}


def test_h39_redact_config_follows_section_10():
    out = redact_config(CONFIG)
    assert out["model"]["params"] == [
        {"key": "api_key", "value": REDACTED},
        {"key": "seed", "value": 7},
    ]
    assert out["model"]["provider_params"] == {"session_id": REDACTED, "region": "eu"}
    assert out["providers"][0]["apiKey"] == REDACTED
    assert out["providers"][0]["baseUrl"] == "https://api.example.com"
    assert out["providers"][0]["params"][0]["value"] == REDACTED
    assert out["mcp"]["servers"][0]["env"] == {"GITHUB_PAT": REDACTED, "DEBUG": REDACTED}
    assert out["mcp"]["servers"][0]["headers"] == {"X-Custom": REDACTED}
    assert out["mcp"]["servers"][0]["command"] == "npx"
    # Numbers under token-ish keys are settings, not secrets.
    assert out["model"]["max_tokens"] == 4096 and out["limits"]["max_file_read_tokens"] == 30000
    assert out["context"] == CONFIG["context"] and out["model"]["model_id"] == "gpt-5"
    assert out["webhook"] == REDACTED
    assert CONFIG["providers"][0]["apiKey"] == "sk-prov-0123456789"  # input unchanged
    dumped = json.dumps(out)
    for needle in ("sk-param", "sk-prov", "ghp_", "Bearer abc", "abc123", "anything"):
        assert needle not in dumped
    assert redact_config("not a dict") == "not a dict"


def test_h39_redact_frame_bodies_and_files(agent_file):
    with adfkit.open_adf(agent_file) as agent:
        loop, files, blocks, calls = agent.loop(), agent.files(), agent.blocks(), agent.tool_calls()
    files = files.assign(content=["# Mind\n"])
    red = redact_frame(loop)
    assert red["text"].tolist() == [REDACTED] * 3 and red["content"].tolist() == [REDACTED] * 3
    assert red["seq"].tolist() == [1, 2, 3] and red["chars"].tolist() == loop["chars"].tolist()
    assert red["kind"].tolist() == loop["kind"].tolist() and red["model"].equals(loop["model"])
    assert loop["text"].tolist()[0] == "hello"  # the input frame is unchanged
    assert redact_frame(loop, bodies=False)["text"].tolist() == loop["text"].tolist()
    assert redact_frame(files)["content"].tolist() == [REDACTED]
    assert redact_frame(files, files=False)["content"].tolist() == ["# Mind\n"]
    assert redact_frame(files)["path"].tolist() == ["mind.md"]
    b = redact_frame(blocks)
    assert set(b["text"].dropna()) == {REDACTED} and set(b["tool_input"].dropna()) == {REDACTED}
    assert b["tool_name"].dropna().tolist() == ["fs_read"]
    c = redact_frame(calls)
    assert c["result_preview"].tolist() == [REDACTED] and c["tool_name"].tolist() == ["fs_read"]
    assert c["result_chars"].tolist() == [9]


# -- HTML escaping -----------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [SCRIPT, IMG, '"><svg onload=alert(1)>', "&lt;b&gt;"])
def test_h40_html_helpers_escape_everything(payload):
    assert "<" not in escape(payload) and ">" not in escape(payload)
    assert escape(payload).count("&") >= payload.count("&")
    df = pd.DataFrame(
        {
            payload: pd.array([payload, None], dtype="string"),
            "n": [1, 2],
            "b": [payload.encode(), b"\xff"],
        },
        index=[payload, "x"],
    )
    for page in (
        safe_frame_html(df),
        safe_frame_html(df, index=True, classes=payload),
        safe_frame_html(df, max_chars=5),
    ):
        tags = {t.lower() for t in __import__("re").findall(r"<\s*([a-zA-Z]+)", page)}
        assert tags <= {"table", "thead", "tbody", "tr", "th", "td", "span"}, tags
    assert escape(payload) in safe_frame_html(df)
    assert "\ufffd" in safe_frame_html(df)  # undecodable bytes shown, not raised
    assert (
        clip(SCRIPT, 8)
        == "&lt;script&gt; " + '<span class="adf-more">... (17 more characters)</span>'
    )


def test_h40_safe_frame_html_rows_and_cut():
    df = pd.DataFrame({"x": range(5)})
    page = safe_frame_html(df, max_rows=2)
    assert page.count("<tr>") == 1 + 2 + 1 and "... 3 more rows" in page
    assert safe_frame_html(df.iloc[:0]).endswith("<tbody></tbody></table>")


def test_h422_a_clip_scans_a_bounded_window_past_its_cut(monkeypatch):
    """``safe_cut`` looks for a secret crossing the cut at most ``SECRET_SPAN`` characters past
    it, never the whole text: clipping a 60 MB tool output in LoopBrowser's history took 25 s
    on main (both secret rules run over all of it); the window is what makes it constant. A key
    still running at the window's end is taken to cross the cut (cut before it), and a key that
    ends inside the window is recognised as before."""
    import adfkit._base.redact as r

    seen: list[int] = []

    class Spy:
        def __init__(self, rx: Any) -> None:
            self.rx = rx

        def finditer(self, text: str, pos: int, endpos: int) -> Any:
            seen.append(endpos)
            return self.rx.finditer(text, pos, endpos)

    monkeypatch.setattr(r, "_KEYED_IN_TEXT", Spy(r._KEYED_IN_TEXT))
    monkeypatch.setattr(r, "SECRET_IN_TEXT", Spy(r.SECRET_IN_TEXT))
    huge = "x" * 50 + " plain output\n" * 1_000_000
    assert r.safe_cut(huge, 100) == 100
    assert seen and max(seen) == 100 + r.SECRET_SPAN < len(huge)
    pem = "-----BEGIN RSA PRIVATE KEY-----\n"
    assert r.safe_cut("a" * 10 + pem + "A" * (2 * r.SECRET_SPAN), 100) == 10
    short = "a" * 10 + pem + "B" * 200 + "\n-----END RSA PRIVATE KEY----- done " + "z" * 500
    assert r.safe_cut(short, 100) == 10
    assert r.safe_cut("a" * 500 + pem + "C" * 100, 100) == 100
