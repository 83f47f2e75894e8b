"""``adfkit usage`` on one folder holding files of every format counts each session once, in
its own format.

The folder is built in a temporary directory from the recorded homes
(tests/fixtures/recorded/<agent>/<version>/home, as each agent's release wrote them) and the
committed samples. How many sessions each format should have is counted here from the files'
layout alone (names, folders, a zip's members, a JSON document's agents), not by adfkit. A
format whose reader lands later with recorded files but no counting rule here is still held
to "each session once".
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from adfkit._core import registry

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests" / "fixtures" / "recorded"
SAMPLES = ROOT / "sample_agents"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _files(root: Path, pattern: str, name: str) -> list[Path]:
    return [p for p in root.rglob(pattern) if p.is_file() and re.fullmatch(name, p.name)]


def _expected(root: Path) -> dict[str, int]:
    """Sessions per format, from the layout each agent writes (its docs, TRANSCRIPTS.md)."""
    letta = 0
    for p in root.rglob("*.af"):
        d = json.loads(p.read_text(encoding="utf-8"))
        d = json.loads(d) if isinstance(d, str) else d
        letta += len(d["agents"]) if "agents" in d else 1
    inspect = 0
    for p in root.rglob("*.eval"):
        with zipfile.ZipFile(p) as z:
            inspect += sum(
                re.fullmatch(r"samples/[^/]+\.json", n) is not None for n in z.namelist()
            )
    return {
        "adf": len(list(root.rglob("*.adf"))),
        # <project>/<uuid>.jsonl under projects/ (a session's subagents are inside it)
        "claude_code": sum(
            p.parent.parent.name == "projects" for p in _files(root, "*.jsonl", _UUID + r"\.jsonl")
        ),
        "codex": len(_files(root, "rollout-*", r"rollout-.*\.jsonl(\.zst)?")),
        "inspect_eval": inspect,
        "openhands": sum(
            p.parent.name == "conversations"
            for p in root.rglob("*")
            if p.is_dir() and re.fullmatch(r"[0-9a-f]{32}", p.name)
        ),
        "pi": sum(
            p.parent.parent.name == "sessions"
            for p in _files(root, "*.jsonl", r".*_" + _UUID + r"\.jsonl")
        ),
        "copilot_cli": sum(p.is_dir() for p in root.rglob("session-state/*")),
        "qwen_code": len(
            [p for p in root.rglob("chats/*.jsonl") if re.fullmatch(_UUID + r"\.jsonl", p.name)]
        ),
        "letta": letta,
    }


@pytest.fixture(scope="module")
def every_format(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("all-formats")
    for home in sorted(RECORDED.glob("*/*/home")):
        dest = root / "recorded" / home.parent.parent.name / home.parent.name
        shutil.copytree(home, dest, symlinks=True)
    shutil.copytree(SAMPLES, root / "samples", symlinks=True)
    return root


def test_usage_counts_each_session_once_in_its_own_format(every_format, capsys):
    from adfkit.cli import main

    expected = _expected(every_format)
    assert all(expected.values()), expected  # every format has files here
    status = main(["usage", str(every_format), "--json"])
    out = capsys.readouterr().out
    assert status in (0, 1), out
    rows = json.loads(out)
    keys = [(r["agent_path"], r["agent"]) for r in rows]  # an Inspect log: one per sample
    assert len(keys) == len(set(keys)), "a session counted twice"
    got = Counter(registry.recognise(Path(p.split(registry.MEMBER)[0])).name for p, _ in keys)
    known = {f for f in got if f in expected}
    assert {f: got[f] for f in known} == {f: expected[f] for f in known}
    assert set(expected) <= set(got), f"formats with no session counted: {set(expected) - set(got)}"
    # the Letta sample: its calls counted, their tokens unknown, never 0
    (fern,) = [r for r in rows if r["agent_path"].endswith("fern.af")]
    assert fern["calls"] == 22 and fern["input"] is None and fern["cost_usd"] is None


def test_make_demo_shows_one_agent_of_each_format_in_the_samples():
    """``make demo``'s list (tools/one_per_format.py): one input per format that has a sample,
    each recognised as that format, in the registry's order; an Inspect log by its first
    sample."""
    from tools.one_per_format import one_per_format

    got = one_per_format(str(SAMPLES))
    layout = {f for f, n in _expected(SAMPLES).items() if n}
    assert layout <= set(got)  # a format landing later with a sample shows too
    assert list(got) == [f for f in registry.BUILTIN if f in got]
    for fmt, path in got.items():
        assert registry.recognise(Path(path.split(registry.MEMBER)[0])).name == fmt
    assert got["letta"].endswith("letta/fern.af")
    assert registry.MEMBER in got["inspect_eval"]
