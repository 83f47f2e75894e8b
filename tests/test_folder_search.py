"""A folder search skips the files no format claims, with one note, and still says what is
wrong with a file a format claims: the recordings' tree (a recorder's ``requests.jsonl`` beside
each recorded session) and hand-built folders (an unrelated, an empty and a binary ``.jsonl``,
a folder named ``x.jsonl``, truncated real files, a file that cannot be read)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import adfkit
from adfkit._core import registry
from adfkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
RECORDED_CC = FIXTURES / "recorded" / "claude-code" / "2.1.332"
CC_PROJECT = RECORDED_CC / "home" / ".claude" / "projects" / "-home-user-proj-demo"
CC_SESSION = "8d237ce7-6e83-457b-a27b-445778543287"
SAMPLE_CC = (
    ROOT
    / "sample_agents"
    / "claude-code"
    / "projects"
    / "-home-user-src-cli-tool"
    / "424b1fee-9709-4315-85d9-5954058b4714.jsonl"
)
SAMPLE_CODEX = next((ROOT / "sample_agents" / "codex").rglob("rollout-*.jsonl"))


def note(paths: list[str], hint: str) -> str:
    """The note, written out here: how many, the first two, the hint."""
    files = "file" if len(paths) == 1 else "files"
    named = ", ".join(paths[:2]) + (f" and {len(paths) - 2} more" if len(paths) > 2 else "")
    return f"adfkit: note: skipped {len(paths)} {files} no format adfkit reads: {named} ({hint})"


def usage_rows(capsys, *args: str) -> tuple[int, list[dict], list[str]]:
    status = main(["usage", *args, "--json"])
    got = capsys.readouterr()
    return status, json.loads(got.out), got.err.splitlines()


# -- the recordings ------------------------------------------------------------------------------


def test_usage_of_the_recordings_tree_skips_each_request_log_in_one_note(capsys) -> None:
    """``adfkit usage tests/fixtures``: every recorder's ``requests.jsonl`` is skipped, counted
    in one note naming the first two (no error line, exit 0), and every recorded session's
    figures are those of the same files named one by one."""
    logs = sorted(str(p.relative_to(ROOT)) for p in FIXTURES.rglob("requests.jsonl"))
    assert len(logs) >= 10  # one per recording
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        status, rows, err = usage_rows(capsys, "tests/fixtures")
        found = registry.discover("tests/fixtures")
        claimed = [p for p in found.inputs if p not in logs]
        _, alone, _ = usage_rows(capsys, *claimed)
    finally:
        os.chdir(cwd)
    assert status == 0
    logs = [p for p in found.inputs if p in logs]  # in the order found
    assert [line for line in err if line.startswith("adfkit: note:")] == [
        note(logs, "--verbose lists them")
    ]
    assert not [line for line in err if line.startswith("adfkit: error:")]
    assert sorted(set(found.inputs) - set(claimed)) == sorted(logs)  # found, then skipped
    assert not {r["agent_path"] for r in rows} & set(logs)  # a skipped file has no row
    assert rows == alone  # the figures of the claimed files, unchanged
    cc = [r for r in rows if r["agent"] == CC_SESSION]
    truth = json.loads((RECORDED_CC / "truth.json").read_text())
    assert [r["calls"] for r in cc] == [truth["calls"]["turn"]]  # the recorder's own count


def test_verbose_lists_each_skipped_file_with_what_it_is(capsys) -> None:
    folder = FIXTURES / "recorded"
    logs = {str(p) for p in folder.rglob("requests.jsonl")}
    logs = [p for p in registry.discover(folder).inputs if p in logs]  # in the order found
    assert main(["usage", str(folder), "--json", "--verbose"]) == 0
    err = capsys.readouterr().err.splitlines()
    start = err.index(f"adfkit: note: skipped {len(logs)} files no format adfkit reads:")
    listed = err[start + 1 : start + 1 + len(logs)]
    assert listed == [f"  {p}: JSON lines of a kind adfkit does not read" for p in logs]


def test_load_fleet_and_export_leave_the_request_logs_out_of_errors(tmp_path) -> None:
    """The library: no error row, one :class:`adfkit.SkippedFilesWarning` (the files and what
    each is also in ``FleetResult.skipped``), no row of any table from a skipped file."""
    folder = RECORDED_CC
    log = str(folder / "requests.jsonl")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = adfkit.load_fleet(folder, "usage", engine="serial", progress=False)
        written, errors = adfkit.export(folder, tmp_path / "out")
    df, fleet_errors = got
    assert fleet_errors.empty and errors.empty
    assert got.skipped == [(log, "JSON lines of a kind adfkit does not read")]
    assert set(df["agent_path"]) == {str(CC_PROJECT / f"{CC_SESSION}.jsonl")}
    assert set(written["agent"]) == {CC_SESSION}
    skipped = [w.message for w in caught if isinstance(w.message, adfkit.SkippedFilesWarning)]
    assert [str(w) for w in skipped] == [f"skipped 1 file no format adfkit reads: {log}"] * 2


def test_a_file_named_or_matched_by_a_pattern_is_still_an_error(capsys) -> None:
    """Only a folder search skips: a request log named, or matched by a glob, is an error."""
    log = RECORDED_CC / "requests.jsonl"
    assert main(["usage", str(log)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"adfkit: error: {log}: JSON lines of a kind adfkit does not read: ")
    assert main(["info", str(RECORDED_CC / "*.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"adfkit: error: {log}: JSON lines of a kind adfkit does not read: ")
    assert "adfkit: note:" not in err


# -- hand-built folders --------------------------------------------------------------------------


@pytest.fixture
def mixed(tmp_path) -> Iterator[Path]:
    """A folder of agent files and others: a recorded Claude Code session (with its
    subagent), a Codex rollout inside a folder named ``x.jsonl``, a Claude Code session cut
    mid-line, an ADF file cut short, and, found by the same names, an unrelated, an empty and a
    binary ``.jsonl``."""
    top = tmp_path / "agents"
    proj = top / "proj"
    proj.mkdir(parents=True)
    shutil.copy(CC_PROJECT / f"{CC_SESSION}.jsonl", proj)
    shutil.copytree(CC_PROJECT / CC_SESSION, proj / CC_SESSION)
    data = SAMPLE_CC.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 40  # inside a line
    (proj / SAMPLE_CC.name).write_bytes(data[:cut])
    (proj / "notes.jsonl").write_text('{"todo": "write the report"}\n')
    (proj / "empty.jsonl").write_bytes(b"")
    (proj / "blob.jsonl").write_bytes(b"\x00\x01\x02\x03" * 64)
    (top / "x.jsonl").mkdir()
    shutil.copy(SAMPLE_CODEX, top / "x.jsonl")
    adf = (ROOT / "sample_agents" / "clean.adf").read_bytes()
    (top / "broken.adf").write_bytes(adf[:5000])
    yield top


def test_usage_of_a_mixed_folder(capsys, mixed) -> None:
    """One note for the three files no format claims; the file a format claims but cannot read
    (an ADF file cut short) an error line naming it; a session cut mid-line read up to its last
    whole line, with a warning naming it; the rollout inside ``x.jsonl/`` found; the figures of
    every claimed file those of the file read alone."""
    proj = mixed / "proj"
    status, rows, err = usage_rows(capsys, str(mixed))
    assert status == 1  # an error line: the broken ADF file
    skipped = [str(proj / n) for n in ("blob.jsonl", "empty.jsonl", "notes.jsonl")]
    assert [line for line in err if "note:" in line] == [note(skipped, "--verbose lists them")]
    errors = [line for line in err if line.startswith("adfkit: error:")]
    assert len(errors) == 1
    assert errors[0].startswith(f"adfkit: error: {mixed / 'broken.adf'}: damaged SQLite file")
    cut = proj / SAMPLE_CC.name
    assert [line for line in err if line.startswith(f"adfkit: warning: {cut}:")]
    claimed = [
        str(cut),
        str(proj / f"{CC_SESSION}.jsonl"),
        str(mixed / "x.jsonl" / SAMPLE_CODEX.name),
    ]
    assert sorted(r["agent_path"] for r in rows) == sorted(claimed)
    for path in claimed:
        _, alone, _ = usage_rows(capsys, path)
        assert [r for r in rows if r["agent_path"] == path] == alone, path
    truth = json.loads((RECORDED_CC / "truth.json").read_text())
    cc = [r for r in rows if r["agent"] == CC_SESSION]
    assert [r["calls"] for r in cc] == [truth["calls"]["turn"]]

    assert main(["usage", str(mixed), "--verbose"]) == 1
    err = capsys.readouterr().err.splitlines()
    at = err.index("adfkit: note: skipped 3 files no format adfkit reads:")
    assert err[at + 1 : at + 4] == [
        f"  {proj / 'blob.jsonl'}: binary data",
        f"  {proj / 'empty.jsonl'}: empty file (0 bytes)",
        f"  {proj / 'notes.jsonl'}: JSON lines of a kind adfkit does not read",
    ]


def test_info_index_and_report_count_only_what_a_format_claims(capsys, mixed, tmp_path) -> None:
    """Every command: ``info`` one note, no line for a skipped file; ``index`` counts the files
    it read; ``report -o FILE.html`` on a folder with one agent among other files writes it."""
    (mixed / "broken.adf").unlink()
    shutil.rmtree(mixed / "x.jsonl")
    (mixed / "proj" / SAMPLE_CC.name).unlink()
    proj = mixed / "proj"
    skipped = [str(proj / n) for n in ("blob.jsonl", "empty.jsonl", "notes.jsonl")]
    assert main(["info", str(mixed)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [note(skipped, "--verbose lists them")]
    assert main(["index", str(mixed), "--to", str(tmp_path / "ix"), "--table", "usage_days"]) == 0
    got = capsys.readouterr()
    assert got.out.startswith("usage_days: 1 file(s), ")
    assert got.err.splitlines() == [note(skipped, "--verbose lists them")]
    out = tmp_path / "one.html"
    assert main(["report", str(mixed), "-o", str(out), "--no-plots"]) == 0
    assert out.is_file() and capsys.readouterr().out.splitlines() == [str(out)]


def test_a_file_that_cannot_be_read_is_an_error_not_a_skip(tmp_path) -> None:
    """An unreadable ``.jsonl`` may be a session: it is an error line naming it and why, never
    skipped. (As root, the command runs without the capabilities that let root read any file,
    so the file's mode 000 holds for it too.)"""
    shutil.copy(CC_PROJECT / f"{CC_SESSION}.jsonl", tmp_path)
    locked = tmp_path / "locked.jsonl"
    locked.write_text('{"todo": "x"}\n')
    locked.chmod(0)
    cmd = [sys.executable, "-m", "adfkit", "usage", str(tmp_path)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv (util-linux): no file is unreadable")
        cmd = [setpriv, "--bounding-set=-dac_override,-dac_read_search", *cmd]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    assert run.returncode == 1, run.stderr
    assert run.stderr.splitlines() == [
        f"adfkit: error: {locked}: cannot read the file (Permission denied)"
    ]
    assert CC_SESSION in run.stdout


def test_a_folder_of_no_agent_file_is_an_error(capsys, tmp_path) -> None:
    """Files found, none of them an agent's: the note, then one error line and exit 2 (as for
    a folder where no name matches), in every command; ``load_fleet`` raises."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "notes.jsonl").write_text('{"todo": "x"}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    skipped = [str(tmp_path / "empty.jsonl"), str(tmp_path / "a" / "notes.jsonl")]
    want = [
        note(skipped, "--verbose says what each is"),
        "adfkit: error: no agent files: no format adfkit reads the 2 files found",
    ]
    for command in (["usage"], ["info"], ["report", "-o", str(tmp_path / "r.html")]):
        assert main([*command, str(tmp_path)]) == 2, command
        assert capsys.readouterr().err.splitlines() == want, command
    with pytest.raises(adfkit.AdfError, match="no agent files"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adfkit.load_fleet(tmp_path, "usage", engine="serial")
