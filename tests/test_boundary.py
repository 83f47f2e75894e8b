"""The typed reader boundary: ``settings()`` and ``info()`` give the same record for every kind of
agent (NA where the record does not say), ``branches()`` and ``calls()`` have empty defaults with
the right columns, and analyses take a source: the facade opens paths.

Expected values are read from the sample files here, independently of adfkit: the ADF config
through SQLite (read-only, immutable), the transcripts' lines as JSON.
"""

from __future__ import annotations

import json
import re
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from adfbuild import build, row, text
from conftest import SAMPLES

import adfkit
from adfkit import schema
from adfkit._analysis.observe import observe as observe_source
from adfkit._core.source import INFO_KEYS, Settings
from adfkit._sources.adf.source import AdfSource

CC_WEBAPP = (
    SAMPLES
    / "claude-code"
    / "projects"
    / "-home-user-work-webapp"
    / "24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"
)
CX_PLAIN = (
    SAMPLES
    / "codex"
    / "sessions"
    / "2026"
    / "03"
    / "14"
    / "rollout-2026-03-14T09-12-33-51ea40b0-7088-4482-8231-74d06cde3e3a.jsonl"
)
ADF = SAMPLES / "long-runner.adf"


def _open(path: Path) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adfkit.AdfWarning)  # the webapp session's cut last line
        return adfkit.open(path)


def _truth(path: Path) -> dict[str, Any]:
    name = path.name.removesuffix(".jsonl").removesuffix(".adf") + ".truth.json"
    return dict(json.loads((path.parent / name).read_text()))


def _adf_config(path: Path) -> dict[str, Any]:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        (cfg,) = con.execute("SELECT config_json FROM adf_config LIMIT 1").fetchone()
    finally:
        con.close()
    return dict(json.loads(cfg))


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # the half-written last line
            continue
    return out


def test_adf_settings_are_the_configs() -> None:
    cfg = _adf_config(ADF)
    audit = cfg["context"]["audit"]
    want = Settings(
        compact_threshold=cfg["context"]["compact_threshold"],
        threshold_source="configured",
        threshold_rule="context.compact_threshold in the config",
        context_window=None,  # an ADF config names no window
        window_source=None,
        audit={k: audit.get(k) is True for k in ("loop", "inbox", "outbox", "files")},
        model=cfg["model"]["model_id"],
        provider=cfg["model"]["provider"],
    )
    assert adfkit.open(ADF).settings() == want
    assert want.compact_threshold == _truth(ADF)["threshold"] == 9000


def test_claude_code_settings_follow_its_rule() -> None:
    calls = [
        r["message"]["model"]
        for r in _lines(CC_WEBAPP)
        if r.get("type") == "assistant" and not r.get("isSidechain")
    ]
    window = 200_000  # a Claude model without [1m]
    st = _open(CC_WEBAPP).settings()
    assert "[1m]" not in calls[-1]
    assert (st.model, st.provider) == (calls[-1], "anthropic")
    assert (st.context_window, st.window_source) == (window, "assumed")
    assert (st.compact_threshold, st.threshold_source) == (window - 20_000 - 13_000, "assumed")
    assert st.threshold_rule is not None and "13,000" in st.threshold_rule
    # the generated sample records preTokens that no one threshold explains: not taken
    assert "is not the threshold" in st.threshold_rule
    assert dict(st.audit) == {"loop": True, "inbox": None, "outbox": None, "files": None}


def test_codex_settings_use_the_recorded_window() -> None:
    raw = CX_PLAIN.read_text()
    window = int(re.findall(r'"model_context_window":(\d+)', raw)[-1])
    model = re.findall(r'"model":"([^"]+)"', raw)[-1]
    st = _open(CX_PLAIN).settings()
    assert (st.context_window, st.window_source) == (window, "recorded") == (272_000, "recorded")
    assert (st.compact_threshold, st.threshold_source) == (window * 9 // 10, "assumed")
    assert (st.model, st.provider) == (model, "openai")


def test_adf_settings_provenance_on_hand_built_configs(tmp_path: Path) -> None:
    loop = [row(1, "user", text("hi"))]
    default = build(tmp_path / "d.adf", loop=loop, config={"name": "d"})
    old = build(tmp_path / "o.adf", loop=loop, config={"model": {"compact_threshold": 4321}})
    huge = build(tmp_path / "h.adf", loop=loop, config={"context": {"compact_threshold": 1e300}})
    st = adfkit.open_adf(default).settings()
    assert (st.compact_threshold, st.threshold_source) == (100_000, "configured")
    assert st.threshold_rule is not None and "default" in st.threshold_rule
    assert (st.model, st.provider) == (None, None)
    assert dict(st.audit) == dict.fromkeys(("loop", "inbox", "outbox", "files"), False)
    st = adfkit.open_adf(old).settings()
    assert (st.compact_threshold, st.threshold_rule) == (
        4321,
        "model.compact_threshold in the config (deprecated)",
    )
    st = adfkit.open_adf(huge).settings()
    assert st.compact_threshold is None and "out of range" in str(st.threshold_rule)
    # the schedule names the provenance as before: a configured threshold is "config"
    assert set(adfkit.open_adf(default).replay()["threshold_source"]) <= {"config"}


@pytest.mark.parametrize("path", [ADF, CC_WEBAPP, CX_PLAIN], ids=["adf", "claude_code", "codex"])
def test_info_has_the_same_keys_for_every_format(path: Path) -> None:
    agent = _open(path)
    for sizes in (True, False):
        info = agent.info(sizes=sizes)
        assert list(info) == list(INFO_KEYS)
    st = agent.settings()
    info = agent.info()
    assert info["format"] == agent.format
    assert (info["compact_threshold"], info["threshold_source"], info["context_window"]) == (
        st.compact_threshold,
        st.threshold_source,
        st.context_window,
    )
    assert info["audit_settings"] == {k: v for k, v in st.audit.items() if v is not None}
    assert None not in info["audit_settings"].values()


def test_info_is_na_where_the_record_has_nothing() -> None:
    adf = adfkit.open(ADF).info()
    truth = _truth(ADF)
    assert adf["schema_version"] == truth["schema_version"] == 28
    assert adf["highest_seq"] == truth["max_seq"]
    for key in ("session_id", "tool_version", "context_window", "history_rows", "subagents"):
        assert adf[key] is None, key
    assert adf["compactions"] is None  # an ADF info() decodes no blob: events are not counted
    cc = _open(CC_WEBAPP).info()
    truth = _truth(CC_WEBAPP)
    for key in ("handle", "schema_version", "adf_version", "inbox_rows", "files", "timers"):
        assert cc[key] is None, key
    assert cc["audit_compressed_bytes"] is None  # the archives are the file's own lines
    assert cc["history_rows"] == len(truth["rows"])
    assert cc["compactions"] == truth["n_compactions"]
    assert cc["microcompactions"] == len(truth["microcompactions"])
    assert (cc["rewinds"], cc["branches"]) == (len(truth["rewinds"]), len(truth["rewinds"]))
    assert cc["subagents"] == len(truth["subagents"])
    assert cc["live"] is ("truncated_last_line" in truth["finding_checks"])
    cx = _open(CX_PLAIN).info()
    truth = _truth(CX_PLAIN)
    assert cx["session_id"] == truth["session_id"]
    assert cx["compactions"] == truth["n_compactions"]
    assert cx["tool_version"] == _lines(CX_PLAIN)[0]["payload"]["cli_version"]


def test_cli_info_prints_no_none_and_leaves_na_lines_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from adfkit.cli import main

    for path in (ADF, CC_WEBAPP, CX_PLAIN):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", adfkit.AdfWarning)
            assert main(["info", str(path)]) == 0
        out = capsys.readouterr().out
        keys = [line.split("  ")[0] for line in out.splitlines()]
        assert "None" not in out, out
        assert keys[:2] == ["agent", "format"]
        info = _open(path).info()
        assert ("schema" in keys) == (info["schema_version"] is not None)
        assert ("messages" in keys) == (info["inbox_rows"] is not None)
        assert ("subagents" in keys) == (info["subagents"] is not None)


def test_branches_and_calls_default_to_empty_frames_with_their_columns() -> None:
    src = AdfSource(ADF)
    try:
        for got, columns in ((src.branches(), schema.BRANCHES), (src.calls(), schema.CALLS)):
            assert got.empty
            assert {c: str(t) for c, t in got.dtypes.items()} == {
                c: ("category" if t == "category" else t) for c, t in columns.items()
            }
    finally:
        src.close()
    agent = adfkit.open(ADF)
    assert list(agent.branches().columns) == [*schema.LOOP, "branch"]
    assert agent.calls().empty
    cc = _open(CC_WEBAPP)
    assert list(cc.calls().columns) == list(schema.CALLS)
    assert len(cc.calls()) > 0 and len(cc.branches()) > 0


def test_analyses_take_a_source_not_a_path() -> None:
    """The facade opens a path; the analysis behind it refuses one (it opens nothing)."""
    with pytest.raises(TypeError, match="expected an agent source or a frame"):
        observe_source(str(SAMPLES / "clean.adf"))  # type: ignore[arg-type]
    by_path = adfkit.observe(SAMPLES / "clean.adf")
    with adfkit.open_adf(SAMPLES / "clean.adf") as agent:
        by_source = observe_source(agent.source)
    pd.testing.assert_frame_equal(by_path.turns, by_source.turns)
    with pytest.raises(TypeError, match="expected an AgentFile, an agent source or a path"):
        adfkit.simulate(42, adfkit.ThresholdPolicy())  # type: ignore[arg-type]


def test_public_names_are_listed_once_and_all_import() -> None:
    """``adfkit.__all__``: no name twice, every name importable, the errors README promises."""
    names = adfkit.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(adfkit, name) is not None, name
    readme = (SAMPLES.parent / "README.md").read_text()
    for err in re.findall(r"`(?:adfkit\.)?([A-Z][A-Za-z]+Error)`", readme):
        assert err in names, err
