"""Claude Code ``progress`` records read narrowly (``JsonLines`` with a ``Narrow``): msgspec
decodes their link fields and skips the rest; anything of another shape is parsed whole.

Each case is read twice, narrowly and with the narrow reading off (every line through
orjson, as before it existed), and the two readings must agree: the links, the subagent
records of ``agent_progress``, the rows, the findings. The only documented differences are
in a part of a progress record that is never held: a number beyond a double's range and
nesting deeper than ``MAX_DEPTH``.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from adfkit._base.js import MAX_DEPTH
from adfkit._sources.claude_code import records
from adfkit._sources.claude_code.parser import parse_claude_code
from adfkit._sources.claude_code.records import _read
from adfkit._sources.transcript import json_lines
from adfkit._sources.transcript.findings import Findings
from adfkit._sources.transcript.lines import DEFAULT_MAX_LINE_BYTES

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude-code"

_HEAD = b'{"parentUuid":"u0","isSidechain":false,"type":"user","uuid":"u1","sessionId":"s",'
_USER = _HEAD + b'"timestamp":"2026-03-01T08:00:00.000Z","message":{"role":"user","content":"hi"}}'


def _progress(uuid: str = "p1", parent: str = "u1", data: bytes | None = None) -> bytes:
    body = data if data is not None else b'{"type":"bash_progress","output":"ok"}'
    return (
        b'{"parentUuid":"%s","isSidechain":false,"type":"progress","uuid":"%s",'
        b'"timestamp":"2026-03-01T08:00:01.000Z","data":%s,"toolUseID":"t1",'
        b'"parentToolUseID":"t1"}' % (parent.encode(), uuid.encode(), body)
    )


def _write(tmp_path: Path, *lines: bytes) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join(lines) + b"\n")
    return p


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The narrow reading off: every line parsed whole."""
    monkeypatch.setattr(records, "Narrow", lambda *_a: None)


def _reading(path: Path) -> tuple[object, ...]:
    fnd = Findings()
    d = _read(path, DEFAULT_MAX_LINE_BYTES, fnd)
    recs = [(r.line, r.uuid, r.parent, r.type, r.obj) for r in d.recs]
    return d.progress, d.agent_progress, recs, d.n_records, fnd.done()


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    narrow = _reading(path)
    with monkeypatch.context() as m:
        _whole(m)
        whole = _reading(path)
    return narrow, whole


#: Progress lines the two readings must read alike: the usual ones, and every shape the narrow
#: decoder must hand back to the whole parse (it then reads them as before).
SAME = {
    "bash": _progress(),
    "hook": _progress(data=b'{"type":"hook_progress","hookEvent":"PostToolUse"}'),
    "no data": _progress().replace(b',"data":{"type":"bash_progress","output":"ok"}', b""),
    "null data": _progress(data=b"null"),
    "data a list": _progress(data=b"[1,2]"),
    "data a text": _progress(data=b'"x"'),
    "data without type": _progress(data=b'{"output":"x"}'),
    "root": _progress().replace(b'"parentUuid":"u1"', b'"parentUuid":null'),
    "parent a number": _progress().replace(b'"parentUuid":"u1"', b'"parentUuid":7'),
    "uuid a number": _progress().replace(b'"uuid":"p1"', b'"uuid":7'),
    "no uuid": _progress().replace(b'"uuid":"p1",', b""),
    "non-ASCII output": _progress(data='{"type":"bash_progress","output":"é ✓"}'.encode()),
    "invalid UTF-8": _progress(data=b'{"type":"bash_progress","output":"\xff\xfe"}'),
    "encoded surrogate": _progress(data=b'{"type":"bash_progress","output":"\xed\xa0\x80"}'),
    "lone surrogate escape": _progress(data=b'{"type":"bash_progress","output":"\\ud800"}'),
    "control character": _progress(data=b'{"type":"bash_progress","output":"a\x01"}'),
    "cut": _progress()[:-20],
    "trailing text": _progress() + b" x",
    "NaN": _progress(data=b'{"type":"bash_progress","n":NaN}'),
    "leading zero": _progress(data=b'{"type":"bash_progress","n":01}'),
    "large integer": _progress(data=b'{"type":"bash_progress","n":99999999999999999999999}'),
    "nested 150": _progress(data=b'{"type":"x","o":' + b"[" * 150 + b"]" * 150 + b"}"),
    "type twice, progress last": _progress().replace(
        b'"type":"progress"', b'"type":"user","type":"progress"'
    ),
    "type twice, progress first": _progress().replace(
        b'"type":"progress"', b'"type":"progress","type":"mode"'
    ),
    "uuid twice": _progress().replace(b'"uuid":"p1"', b'"uuid":"p1","uuid":"p2"'),
    "data type twice": _progress(data=b'{"type":"bash_progress","type":"agent_progress"}'),
    "spaced": _progress().replace(b'"type":"progress"', b'"type": "progress"'),
    "marker inside a text": _USER.replace(b'"hi"', b'"say \\"type\\":\\"progress\\""'),
    "marker in a nested object": _USER.replace(b'"hi"', b'[{"type":"text","text":"x"}]').replace(
        b'"role":"user"', b'"role":"user","meta":{"type":"progress"}'
    ),
    "agent_progress": _progress(
        data=b'{"type":"agent_progress","agentId":"a1","message":{"type":"assistant",'
        b'"uuid":"m1","message":{"id":"x","model":"claude-haiku-4-5","usage":'
        b'{"input_tokens":3,"output_tokens":4}}}}'
    ),
}


@pytest.mark.parametrize("case", list(SAME))
def test_narrow_reads_as_whole(case, tmp_path, monkeypatch):
    path = _write(tmp_path, _USER, SAME[case], _progress(uuid="p9", parent="p1"))
    narrow, whole = _both(path, monkeypatch)
    assert narrow == whole


def test_first_copy_of_a_link_wins(tmp_path, monkeypatch):
    path = _write(tmp_path, _USER, _progress(parent="u1"), _progress(parent="p0"))
    narrow, whole = _both(path, monkeypatch)
    assert narrow == whole
    assert narrow[0] == {"p1": ("u1", 2)}


def test_agent_progress_keeps_its_record(tmp_path, monkeypatch):
    path = _write(tmp_path, _USER, SAME["agent_progress"])
    (_progress_links, carried, *_rest), _whole_reading = _both(path, monkeypatch)
    assert [(n, aid, inner["uuid"]) for n, aid, _t, inner in carried] == [(2, "a1", "m1")]


def test_bash_progress_is_not_parsed_whole(tmp_path, monkeypatch):
    """The point of it: 100 bash progress records and a user record cost one orjson parse
    (fails without the narrow reading: 101)."""
    path = _write(tmp_path, _USER, *(_progress(uuid=f"p{i}") for i in range(100)))
    calls = []
    loads = orjson.loads

    def counting(data):
        calls.append(data)
        return loads(data)

    monkeypatch.setattr(json_lines.orjson, "loads", counting)
    d = _read(path, DEFAULT_MAX_LINE_BYTES, Findings())
    assert len(d.progress) == 100 and len(calls) == 1


@pytest.mark.parametrize(
    "data",
    [
        b'{"type":"bash_progress","n":1e400}',
        b'{"type":"x","o":' + b"[" * (MAX_DEPTH + 50) + b"]" * (MAX_DEPTH + 50) + b"}",
    ],
    ids=["number beyond a double", "nested deeper than MAX_DEPTH"],
)
def test_a_part_never_held_does_not_make_a_link_unreadable(data, tmp_path, monkeypatch):
    """The documented difference: orjson refuses 1e400 (valid JSON), and the depth rule keeps a
    line whose content is walked from being read; a progress record's data is neither held
    nor walked, so its link is read, with no finding."""
    path = _write(tmp_path, _USER, _progress(data=data))
    narrow, whole = _both(path, monkeypatch)
    assert narrow[0] == {"p1": ("u1", 2)} and narrow[4] == []
    assert whole[0] == {} and [f.check for f in whole[4]] in (["bad_json"], ["too_deep"])


def test_nesting_past_the_interpreter_limit_is_read_whole(tmp_path, monkeypatch):
    """msgspec stops at the recursion limit; the line then goes the whole way (orjson's own
    depth limit: a finding, no link)."""
    deep = b'{"type":"x","o":' + b"[" * 5000 + b"]" * 5000 + b"}"
    path = _write(tmp_path, _USER, _progress(data=deep))
    narrow, whole = _both(path, monkeypatch)
    assert narrow == whole and narrow[0] == {}


def _parsed_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    narrow = parse_claude_code(path, warn=False)
    with monkeypatch.context() as m:
        _whole(m)
        whole = parse_claude_code(path, warn=False)
    return narrow, whole


def _sessions(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl") if p.name != "requests.jsonl")


@pytest.mark.parametrize(
    "folder",
    [ROOT / "sample_agents" / "claude-code", ROOT / "tests/fixtures/recorded/claude-code"],
    ids=["samples", "recorded"],
)
def test_every_sample_and_recording_parses_alike(folder, monkeypatch):
    paths = _sessions(folder)
    assert paths
    for p in paths:
        narrow, whole = _parsed_both(p, monkeypatch)
        assert narrow == whole, p


def test_every_real_session_parses_alike(monkeypatch):
    if not REAL.is_dir():
        pytest.skip(f"real Claude Code sessions not present ({REAL}: ../shared is absent)")
    paths = _sessions(REAL)
    with_progress = [p for p in paths if b'"type":"progress"' in p.read_bytes()]
    assert len(with_progress) >= 5
    for p in paths:
        narrow, whole = _parsed_both(p, monkeypatch)
        assert narrow == whole, p
