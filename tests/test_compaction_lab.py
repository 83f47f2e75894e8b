"""The compaction lab: compactors as plug-ins, scored on a planted session.

Ground truth: ``adfsynth.lab`` (the forgetting session, with what the audit must find and
what each built-in compactor must keep and weigh, from the simulator's own copy of the window
and its own estimator)."""

from __future__ import annotations

import json
import math
import warnings

import pandas as pd
import pytest

import adfkit
from adfkit._analysis import compactors as comp
from adfkit._base.errors import AdfError
from adfkit._facade import lab_dataset
from adfsynth.claude_code import SUMMARY_PREFIX
from adfsynth.forgetting import SUMMARY_2
from adfsynth.lab import write_session


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    path, truth = write_session(tmp_path_factory.mktemp("lab"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(path)
        lab = agent.compaction_lab()
        audit = agent.compaction_audit()
    return agent, lab, audit, truth


def test_audit_findings_are_the_planted_ones(planted):
    _, _, audit, truth = planted
    assert audit["threshold"].tolist() == [truth["threshold"]] * 2
    assert [list(f) for f in audit["findings"]] == [a["findings"] for a in truth["audit"]]


def test_each_builtin_compactor_scores_what_was_planted(planted):
    _, lab, _, truth = planted
    first = lab[lab["event_id"] == 0].set_index("compactor")
    assert list(first.index) == list(comp.DEFAULT)
    assert set(first["tokens_before"]) == {truth["tokens_before"]}
    assert set(first["n_needed"]) == {truth["n_needed"]}
    for name, want in truth["lab"].items():
        row = first.loc[name]
        kept = want["kept"]
        assert row["n_needed_kept"] == sum(kept.values()), name
        assert row["recall"] == pytest.approx(sum(kept.values()) / truth["n_needed"]), name
        for kind, n in truth["needed"].items():
            assert row[f"recall_{kind}"] == pytest.approx(kept.get(kind, 0) / n), (name, kind)
        assert pd.isna(row["recall_url"]) and pd.isna(row["recall_todo"])  # none needed
        assert row["tokens_after"] == want["tokens"], name
    # no call for a deterministic compactor; the recorded one's call is not in the file
    assert (first.drop(index="recorded")["compaction_cost_usd"] == 0).all()
    assert pd.isna(first.loc["recorded", "compaction_cost_usd"])


def test_nothing_needed_again_is_no_recall_not_zero(planted):
    _, lab, _, _ = planted
    second = lab[lab["event_id"] == 1]
    assert (second["n_needed"] == 0).all()
    assert second["recall"].isna().all()


def test_cache_rewrite_is_the_new_window_at_the_cache_write_price(planted):
    _, lab, _, _ = planted
    # claude-sonnet-4-5: cache writes at 3.75 USD per million tokens (1.25 x 3.0)
    want = (lab["tokens_after"] * 3.75 / 1e6).round(8)
    assert lab["cache_rewrite_usd"].tolist() == pytest.approx(want.tolist())


def test_a_registered_compactor_runs_by_its_name(planted):
    agent, _, _, _ = planted

    def make(word="kept"):
        def compact(inp):
            return [comp.Message("compaction_summary", "user", ({"type": "text", "text": word},))]

        return compact

    comp.register_compactor("one_word", make)
    try:
        lab = agent.compaction_lab(["one_word:word=/w/app/src/limits.py"])
    finally:
        comp.unregister_compactor("one_word")
    assert lab["compactor"].tolist() == ["one_word:word=/w/app/src/limits.py"] * 2
    assert lab["n_needed_kept"].tolist()[0] == 1  # the limits path, and nothing else
    with pytest.raises(ValueError, match="built-in"):
        comp.register_compactor("mask", make)


def test_an_unknown_compactor_or_parameter_is_a_clear_error(planted):
    agent, _, _, _ = planted
    with pytest.raises(AdfError, match="no compactor 'nope'; known: recorded"):
        agent.compaction_lab(["nope"])
    with pytest.raises(AdfError, match="whole number"):
        agent.compaction_lab(["keep_last:n=many"])
    with pytest.raises(AdfError, match="key=value"):
        agent.compaction_lab(["keep_last:3"])


def test_turns_split_at_a_person_and_at_a_call_after_a_result():
    m = comp.Message
    kinds = ["message", "assistant", "tool_result", "assistant", "assistant", "tool_result"]
    msgs = [m(k, "", ()) for k in [*kinds, "message", "assistant"]]
    assert comp.turns(msgs) == [[0, 1, 2], [3, 4, 5], [6, 7]]


def test_the_lab_is_a_fleet_table(planted, tmp_path):
    agent, lab, _, _ = planted
    df, errors = adfkit.load_fleet([agent.path], "compaction_lab", engine="serial", progress=False)
    assert errors.empty
    assert df["recall"].fillna(-1).tolist() == lab["recall"].fillna(-1).tolist()
    assert df["compactor"].tolist() == lab["compactor"].tolist()


def test_every_real_claude_code_compaction_is_replayed_by_every_compactor():
    from conftest import ROOT

    folder = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude-code"
    if not folder.is_dir():
        pytest.skip(f"real fixtures {folder} not present (../shared is absent in a user's clone)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lab, errors = adfkit.load_fleet(folder, "compaction_lab", engine="serial", progress=False)
        audit, _ = adfkit.load_fleet(folder, "compaction_audit", engine="serial", progress=False)
    assert errors.empty
    assert len(lab) == len(comp.DEFAULT) * len(audit) == 5 * 12
    assert lab["recall"].dropna().between(0, 1).all()
    rec = lab[lab["compactor"] == "recorded"]
    assert (rec["tokens_after"] < rec["tokens_before"]).all()
    # the extractive baseline keeps every item it lists: nothing needed again is lost
    ext = lab[lab["compactor"] == "extractive"]
    assert (ext["n_needed_kept"] == ext["n_needed"]).all()


def test_lab_command_prints_a_table_per_compaction(planted, capsys, tmp_path):
    from adfkit.cli import main

    agent, lab, _, truth = planted
    plot = tmp_path / "lab.png"
    assert main(["lab", str(agent.path), "--plot", str(plot)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(f"compaction 0 (seq 14), {truth['tokens_before']:,} tokens before")
    rows = {line.split()[0]: line.split() for line in out[2:7]}
    assert list(rows) == list(comp.DEFAULT)
    assert rows["recorded"][3:5] == ["2/5", "0.400"]
    assert rows["trim"][3:5] == ["5/5", "1.000"]
    assert rows["recorded"][6] == "-"  # the recorded call's cost is not in the file
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["lab", str(agent.path), "--json", "--compactor", "mask:keep=1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["compactor"] for d in doc] == ["mask:keep=1"] * 2
    assert doc[1]["recall"] is None  # nothing needed again: null, not 0


def test_lab_command_refuses_an_unknown_compactor_before_reading(planted, capsys):
    from adfkit.cli import main

    agent = planted[0]
    assert main(["lab", str(agent.path), "--compactor", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("adfkit: error: no compactor 'nope'") and err.count("\n") == 1


def test_lab_plot_marks_the_recorded_compactor_and_keeps_labels_plain(planted):
    from adfkit import plots

    lab, truth = planted[1].copy(), planted[3]
    second = math.ceil((len(SUMMARY_PREFIX + SUMMARY_2) + 16) / 3.5)  # its text, as written
    x = (truth["lab"]["recorded"]["tokens"] + second) / 2
    lab["compactor"] = lab["compactor"].replace({"mask": "$x^2$ mask"})
    ax = plots.lab_recall_tokens(lab)
    try:
        star = next(c for c in ax.collections if c.get_gid() == "recorded")
        # mean tokens over both compactions; recall of the first (the second needed nothing)
        assert star.get_offsets().tolist() == [[x, 0.4]]
        labels = [t for t in ax.texts if t.get_gid() == "label"]
        shown = {t.get_text(): t for t in labels}
        assert "$x^2$ mask" in shown and not shown["$x^2$ mask"].get_parse_math()
    finally:
        plots.close(ax)


# -- the dataset ---------------------------------------------------------------------------
def _read_back(folder):
    import duckdb
    import pyarrow.parquet as pq

    table = pq.read_table(folder / "compactions.parquet")
    con = duckdb.connect()
    rows = con.execute(
        "select event_id, n_needed, swept_items, window_before, summary from "
        f"read_parquet('{folder / 'compactions.parquet'}') order by agent, event_id"
    ).fetchall()
    lines = con.execute(
        f"select count(*) from read_json_auto('{folder / 'compactions.jsonl'}')"
    ).fetchone()
    return table, rows, lines[0]


def test_dataset_of_the_planted_session_holds_the_planted_labels(planted, tmp_path):
    from adfsynth.forgetting import SUMMARY, _items

    agent = planted[0]
    written, errors = adfkit.export_compaction_dataset(agent.path, tmp_path / "ds")
    assert errors.empty and written["records"].tolist() == [2, 2, 2]
    table, rows, n_lines = _read_back(tmp_path / "ds")
    assert table.num_rows == n_lines == 2
    assert set(table.column_names) == set(lab_dataset.FIELDS)
    first = rows[0]
    assert first[:2] == (0, 5)
    items = json.loads(first[2])
    want = {(it["kind"], it["value"]) for it in _items() if it["back"] is not None}
    assert {(x["kind"], x["value"]) for x in items if x["needed_again"]} == want
    window = json.loads(first[3])
    assert len(window) == 14 and window[0]["kind"] == "message"
    assert first[4] == SUMMARY_PREFIX + SUMMARY  # the summary as the agent wrote it
    sheet = (tmp_path / "ds" / "DATASHEET.md").read_text()
    for field in lab_dataset.FIELDS:
        assert f"| `{field}` |" in sheet


def test_dataset_of_the_real_fixtures_reads_back_and_holds_no_planted_secret(tmp_path):
    from conftest import ROOT
    from test_transcript_hostile import SECRETS, _secret_session

    shared = ROOT.parent / "shared" / "fixtures"
    if not shared.is_dir():
        pytest.skip(f"real fixtures {shared} not present (../shared is absent in a user's clone)")
    secret_cc, _ = _secret_session(tmp_path)
    inputs = [str(shared / "transcripts"), str(shared / "adf-runtime" / "long-runner.adf")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written, errors = adfkit.export_compaction_dataset(
            [*inputs, str(secret_cc)], tmp_path / "ds"
        )
        audit, _ = adfkit.load_fleet(inputs, "compaction_audit", engine="serial", progress=False)
    assert errors.empty
    table, rows, n_lines = _read_back(tmp_path / "ds")
    # every real compaction, and the secret session's one
    assert table.num_rows == n_lines == len(audit) + 1 == 12 + 8 + 1
    blob = b"".join(p.read_bytes() for p in (tmp_path / "ds").iterdir())
    for secret in SECRETS:
        assert secret.encode() not in blob, secret[:12]
    assert b"__redacted__" in blob  # the secrets were there, and were replaced


def test_lab_command_writes_the_dataset(planted, tmp_path, capsys):
    from adfkit.cli import main

    agent = planted[0]
    assert main(["lab", str(agent.path), "--dataset", str(tmp_path / "ds")]) == 0
    assert "wrote 2 compaction(s)" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "ds").iterdir()) == [
        "DATASHEET.md",
        "compactions.jsonl",
        "compactions.parquet",
    ]


def test_lab_plot_of_an_agent_without_compactions_says_so():
    from adfkit import plots

    empty = pd.DataFrame(columns=["compactor", "tokens_after", "n_needed", "n_needed_kept"])
    ax = plots.lab_recall_tokens(empty)
    try:
        assert [t.get_text() for t in ax.texts] == ["no compaction had an item needed again"]
    finally:
        plots.close(ax)


def _claude_code_shrinks(folder) -> list[float]:
    """Tokens after / tokens before of every compaction of the real Claude Code sessions,
    read from the JSONL without adfkit: before, the boundary's ``preTokens``; after, the
    prompt of the first API call after it (uncached input + cache read + cache write of the
    last record of its ``message.id``)."""
    out = []
    for path in sorted(folder.rglob("*.jsonl")):
        recs = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                recs.append(json.loads(line))
            except ValueError:
                continue
        last: dict[str, dict] = {}
        for r in recs:
            m = r.get("message") if r.get("type") == "assistant" else None
            if isinstance(m, dict) and m.get("id") and m.get("usage"):
                last[m["id"]] = m["usage"]
        for i, r in enumerate(recs):
            if r.get("subtype") != "compact_boundary":
                continue
            pre = r["compactMetadata"]["preTokens"]
            for later in recs[i + 1 :]:
                m = later.get("message") if later.get("type") == "assistant" else None
                if isinstance(m, dict) and m.get("id") in last and m.get("model") != "<synthetic>":
                    u = last[m["id"]]
                    post = (
                        u["input_tokens"]
                        + u.get("cache_read_input_tokens", 0)
                        + u.get("cache_creation_input_tokens", 0)
                    )
                    out.append(post / pre)
                    break
    return out


def test_median_post_pre_ratio_of_the_real_claude_code_compactions():
    """The figure published analyses give (0.203 over 142 Claude Code compactions): here,
    over the 12 real ones, equal to the one read from the files directly."""
    from conftest import ROOT

    folder = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude-code"
    if not folder.is_dir():
        pytest.skip(f"real fixtures {folder} not present (../shared is absent in a user's clone)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit, errors = adfkit.load_fleet(
            folder, "compaction_audit", engine="serial", progress=False
        )
    want = _claude_code_shrinks(folder)
    assert errors.empty and len(want) == len(audit) == 12
    assert sorted(audit["shrink"].astype(float)) == pytest.approx(sorted(want))
    assert float(audit["shrink"].median()) == pytest.approx(float(pd.Series(want).median()))
    assert round(float(audit["shrink"].median()), 3) == 0.34


def test_an_installed_compactor_plugin_is_found_by_its_entry_point(planted, tmp_path, monkeypatch):
    """A package naming a factory in the ``adfkit.compactors`` entry point group: its
    compactor runs by name, with its parameters."""
    plug = tmp_path / "plugin"
    plug.mkdir()
    (plug / "toycompactor.py").write_text(
        "def make(keep='1'):\n"
        "    def compact(inp):\n"
        "        return list(inp.messages[: int(keep)])\n"
        "    return compact\n"
    )
    dist = plug / "toycompactor-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toycompactor\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[adfkit.compactors]\nfirst = toycompactor:make\n")
    monkeypatch.syspath_prepend(str(plug))
    monkeypatch.setattr(comp, "_PLUGINS_LOADED", False)
    try:
        assert "first" in comp.compactor_names()
        lab = planted[0].compaction_lab(["first:keep=1"])
    finally:
        comp.unregister_compactor("first")
    # the person's first message alone: the rule it states, nothing else needed again
    assert lab["messages_after"].tolist() == [1, 1]
    assert lab["n_needed_kept"].tolist()[0] == 1


def test_a_compaction_without_summary_by_design_left_its_kept_rows():
    """An Inspect AI trim writes no summary: what the agent's compaction left is the rows it
    kept, known (not NA); a compaction whose summary was lost stays unknown."""
    from conftest import ROOT

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = adfkit.open(
            ROOT / "sample_agents/inspect/2026-06-01T08-00-00+00-00_tide-drift-trim.eval"
        )
        sample = next(iter(log))
        lab = sample.compaction_lab(["recorded"])
        swept = sample.compactions()["n_swept"]
        lost = adfkit.open(ROOT / "sample_agents/mind-keeper.adf")
        lost_lab = lost.compaction_lab(["recorded"])
        lost_events = lost.events()
    assert (lab["messages_after"] == lab["messages_before"] - swept.to_numpy()).all()
    assert lab["tokens_after"].notna().all()
    gone = lost_events["summary_lost"].to_numpy(bool)
    assert gone.any() and lost_lab["tokens_after"][gone].isna().all()
