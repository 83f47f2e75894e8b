"""Crafted files for the newer formats (Inspect, OpenHands, pi, Copilot CLI) and for the surfaces
every format shares (plots, reports, export, index, listings, plug-ins): issue 40.

Each ``test_hNNN_`` function is a row of ``tests/ROBUSTNESS.md``. Heavy cases run in a child
process that reports its own time and peak RSS (``ru_maxrss``), as ``test_hostile.py`` does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES, fingerprint

import adfkit
from adfkit._base.errors import OutputPathError
from adfkit.cli import main

INSPECT = SAMPLES / "inspect" / "2026-06-01T08-00-00+00-00_tide-drift-edit.eval"
COPILOT = SAMPLES / "copilot_cli" / "session-state" / "6df5dfb8-76b8-47ef-add4-3e771030055d"
OPENHANDS = SAMPLES / "openhands" / "conversations" / "02ff349d4f874aa39c2b9d9f2ae75e2e"


def _copy(src: Path, dest: Path) -> Path:
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    return dest


def _one_error_line(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("adfkit: error:"), err
    assert "internal error" not in err[0]
    for w in words:
        assert w in err[0], err
    return err[0]


# -- class 1: writes onto an input -------------------------------------------------------------


def test_h400_plot_and_report_never_write_the_log_behind_a_member(tmp_path, capsys):
    """``LOG.eval#SAMPLE -o links/ev.png`` where ``links/ev.png`` is a symbolic link (or
    ``hard/ev.png`` a hard link) to the log: refused, the log byte-identical."""
    log = _copy(INSPECT, tmp_path / "logs" / "run.eval")
    member = adfkit.open(log).paths[0]
    (tmp_path / "links").mkdir()
    (tmp_path / "hard").mkdir()
    os.symlink(log, tmp_path / "links" / "ev.png")
    os.link(log, tmp_path / "hard" / "ev.png")
    os.symlink(log, tmp_path / "links" / "r.html")
    before = fingerprint(tmp_path)
    for out in (tmp_path / "links" / "ev.png", tmp_path / "hard" / "ev.png"):
        assert main(["plot", member, "--kind", "growth", "-o", str(out)]) == 2
        _one_error_line(capsys, "refusing to write", "run.eval")
    from adfkit._facade.report import write_report

    with pytest.raises(OutputPathError, match="refusing to write .*run.eval"):
        write_report(member, tmp_path / "links" / "r.html")
    assert fingerprint(tmp_path) == before
    # anywhere else is fine, the log's own folder included
    assert main(["plot", member, "--kind", "growth", "-o", str(tmp_path / "logs" / "g.png")]) == 0
    assert (tmp_path / "logs" / "g.png").stat().st_size > 0


@pytest.mark.parametrize("fmt", ["copilot_cli", "openhands"])
def test_h401_export_and_index_never_write_inside_an_input_folder(tmp_path, capsys, fmt):
    """``export``/``index --to`` a folder that is, or is inside, an input folder (a Copilot CLI
    ``session-state/<id>/``, named by its folder or its ``events.jsonl``; an OpenHands
    conversation, named by its folder or its ``events/``), directly or through a link to it:
    refused, no file made; the same next to it is written."""
    src = COPILOT if fmt == "copilot_cli" else OPENHANDS
    session = _copy(src, tmp_path / "state" / src.name)
    os.symlink(session, tmp_path / "alias")
    names = [session, session / ("events.jsonl" if fmt == "copilot_cli" else "events")]
    before = fingerprint(tmp_path)
    for given in names:
        for to in (session, session / "out", tmp_path / "alias" / "x"):
            with pytest.raises(OutputPathError, match="inside the input folder"):
                adfkit.export(str(given), to)
            assert main(["index", str(given), "--to", str(to), "--engine", "serial"]) == 2
            _one_error_line(capsys, "refusing to write", "inside the input folder")
    # --to the folder holding the session: export's per-agent folder would be the session
    with pytest.raises(OutputPathError, match="inside the input folder"):
        adfkit.export(str(session), session.parent)
    assert fingerprint(tmp_path) == before
    written, errors = adfkit.export(str(session), tmp_path / "out")
    assert errors.empty and len(written) > 0


def test_h402_export_never_follows_a_link_left_in_its_folder_onto_an_input(tmp_path):
    """A ``meta.json`` left in the export folder as a symbolic link to the input: refused as
    that agent's error, the input unchanged."""
    log = _copy(INSPECT, tmp_path / "run.eval")
    member = adfkit.open(log).paths[0]
    (tmp_path / "out" / "run").mkdir(parents=True)
    os.symlink(log, tmp_path / "out" / "run" / "meta.json")
    before = log.read_bytes()
    _, errors = adfkit.export(member, tmp_path / "out")
    assert len(errors) == 1 and "refusing to write" in errors["message"].iloc[0]
    assert log.read_bytes() == before
