"""``adfkit usage``'s fast path (a format's ``figures``: the parser alone, no frames) against the
full tables on a hand-built Claude Code session holding the hard cases of the usage rules at
once: one call over two block records, a chain through a ``progress`` record, a malformed line
mid-file that looks like a call, the same message id answered on an abandoned branch and again
on the active path (a day apart), an inline sidechain's call, a compaction, and a last line cut
inside its usage. Every expected figure is worked out here from the records written. Then 12
sessions a seeded generator strings together from the same cases (the fast path must give the
full tables' calls and days on each: dropping the abandoned branches' paid calls from it fails
five of them)."""

from __future__ import annotations

import random
import time
import warnings
from pathlib import Path

import pytest
from test_claude_code import Log, text, tool, usage
from test_usage_fast import _check_calls, _check_days

from adfkit._sources.claude_code.parser import parse_claude_code

SID = "5e55e55e-0000-4000-8000-000000000001"


def _ts(day: int, hms: str) -> str:
    return f"2026-03-{day:02d}T{hms}.000Z"


def _hard_session(folder: Path) -> Path:
    log = Log(SID)
    log.user("u1", None, "count my tokens", timestamp=_ts(1, "10:00:00"))
    # one call written as two block records (same message and request id): counted once, with
    # the last record's usage (its final output count)
    log.asst("a1", "u1", "m1", [text("looking")], usage(100, 0, 0, 5), req="r1")
    log.asst("a1b", "a1", "m1", [tool("t1")], usage(100, 0, 0, 30), req="r1")
    log.result("u2", "a1b", "t1", "the file")
    log.progress("p1", "u2")  # the next call hangs off a progress record: a link, no row
    # a line that is not JSON, though it opens like a call with usage: skipped, never counted
    log.raw(b'{"type":"assistant","uuid":"bad","message":{"id":"m9","usage":{"input_tokens":9')
    log.asst("a2", "p1", "m2", [text("done")], usage(200, 50, 1000, 40), req="r2")
    # the user went back: the abandoned branch's answer (day 1) and the active path's (day 2)
    # carry the same message and request id: one call, whose record off the chain joins the
    # active path's row (dated by it, day 2); the branch keeps only its prompt
    log.user("u3", "a2", "try this", timestamp=_ts(1, "23:59:00"))
    log.asst(
        "a3", "u3", "m3", [text("a")], usage(300, 0, 0, 7), req="r3", timestamp=_ts(1, "23:59:30")
    )
    log.user("u4", "a2", "no, this", timestamp=_ts(2, "00:10:00"))
    log.asst(
        "a4", "u4", "m3", [text("a")], usage(300, 0, 0, 7), req="r3", timestamp=_ts(2, "00:10:30")
    )
    # the same call again on a separate row later on the chain: not counted again
    log.user("u4b", "a4", "again", timestamp=_ts(2, "00:11:00"))
    log.asst(
        "a5",
        "u4b",
        "m2",
        [text("done")],
        usage(200, 50, 1000, 40),
        req="r2",
        timestamp=_ts(2, "00:11:30"),
    )
    side = Log(SID, side=True, agent="side1")  # an inline sidechain (older versions): a subagent
    side.user("s1", None, "look around", timestamp=_ts(1, "10:05:00"))
    side.asst(
        "s2", "s1", "m5", [text("ok")], usage(10, 0, 0, 1), req="r5", timestamp=_ts(1, "10:05:10")
    )
    for r in side.recs:
        log.raw(r)
    log.system(
        "cb",
        None,
        "compact_boundary",
        logicalParentUuid="a5",
        compactMetadata={"trigger": "auto", "preTokens": 1357},
        timestamp=_ts(2, "00:20:00"),
    )
    log.user(
        "cs",
        "cb",
        "Summary of the conversation",
        isCompactSummary=True,
        timestamp=_ts(2, "00:20:01"),
    )
    log.user("u5", "cs", "go on", timestamp=_ts(2, "00:21:00"))
    log.asst(
        "a6", "u5", "m6", [text("on")], usage(50, 0, 0, 3), req="r6", timestamp=_ts(2, "00:21:30")
    )
    # the session still being written: its last line is cut inside the usage of a new call
    cut = b'{"parentUuid":"a6","isSidechain":false,"type":"assistant","uuid":"a7","message":'
    cut += b'{"id":"m7","model":"claude-sonnet-4-5","usage":{"input_tokens":70'
    return log.write(folder / f"{SID}.jsonl", tail=cut)


def test_the_fast_path_gives_the_full_tables_figures_on_the_hard_cases(tmp_path: Path) -> None:
    path = _hard_session(tmp_path / "proj")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checks = {f.check for f in parse_claude_code(path, warn=False).findings}
        assert {"bad_json", "truncated_last_line", "duplicate_usage", "aside_records"} <= checks
        assert _check_calls(path) == 5  # m1, m2, m3 once, m6; the sidechain's m5
        rows = _check_days([path])
    got = {
        (r["agent"], r["day"]): (
            r["calls"],
            r["input"],
            r["output"],
            r["cache_write"],
            r["cache_read"],
            r["compactions"],
        )
        for r in rows
    }
    # the session's row holds its subagents' calls too (the sidechain's m5: 10 in, 1 out)
    assert got == {
        # m1 (100 in, 30 out: the last block record's), m2 (200 + 50 written + 1000 read), m5
        (SID, "2026-03-01"): (3, 310, 71, 50, 1000, 0),
        # m3 once (the active path's record, day 2), m6 after the compaction (dated by the row
        # before its summary, day 2)
        (SID, "2026-03-02"): (2, 350, 10, 0, 0, 1),
    }


def _random_session(folder: Path, seed: int) -> Path:
    """A session whose records a seeded generator strings together from the hard cases: calls
    over one to three block records, message ids used again (on the chain, on a branch),
    rewinds to an earlier record, progress links, malformed lines, compactions, inline
    sidechains, days crossed, and a last line cut or not."""
    rng = random.Random(seed)
    sid = f"5e55e55e-0000-4000-8000-{seed:012d}"
    log = Log(sid)
    clock = [1_772_359_200]  # 2026-03-01T10:00:00Z

    def ts() -> str:
        clock[0] += rng.choice((7, 60, 3_600, 30_000))
        return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(clock[0]))

    n = 0
    last: str | None = None
    written: list[str] = []
    mids: list[tuple[str, str]] = []

    def new_id(prefix: str) -> str:
        nonlocal n
        n += 1
        return f"{prefix}{n}"

    for _ in range(rng.randint(8, 30)):
        step = rng.choice(
            ("call", "call", "call", "prompt", "progress", "bad", "rewind", "compact")
        )
        if step == "prompt" or last is None:
            u = new_id("u")
            log.user(u, last, f"prompt {n}", timestamp=ts())
            last = u
        elif step == "call":
            if mids and rng.random() < 0.25:
                mid, req = rng.choice(mids)  # the same call written again
            else:
                mid, req = new_id("m"), new_id("r")
                mids.append((mid, req))
            inp, out = rng.randint(1, 900), rng.randint(1, 90)
            for k in range(rng.randint(1, 3)):
                a = new_id("a")
                blocks = [tool(f"t{n}")] if k else [text(f"part {n}")]
                u = usage(inp, rng.choice((0, 50)), rng.choice((0, 1000)), out + k)
                log.asst(a, last, mid, blocks, u, req=req, timestamp=ts())
                written.append(a)
                last = a
            if rng.random() < 0.5:
                r = new_id("u")
                log.result(r, last, f"t{n}", "output", timestamp=ts())
                last = r
        elif step == "progress":
            p = new_id("p")
            log.progress(p, last)
            last = p
        elif step == "bad":
            log.raw(b'{"type":"assistant","uuid":"x","message":{"usage":{"input_tokens":5')
        elif step == "rewind" and written:
            last = rng.choice(written)  # the next prompt answers again from an earlier call
        elif step == "compact":
            b, s = new_id("b"), new_id("s")
            log.system(b, None, "compact_boundary", logicalParentUuid=last, timestamp=ts())
            log.user(s, b, "Summary of the conversation", isCompactSummary=True, timestamp=ts())
            last = s
        if rng.random() < 0.1:  # an inline sidechain's call (older versions)
            side = Log(sid, side=True, agent=f"side{seed}")
            s1, s2 = new_id("q"), new_id("q")
            side.user(s1, None, "look", timestamp=ts())
            side.asst(s2, s1, new_id("m"), [text("ok")], usage(3, 0, 0, 1), timestamp=ts())
            for r in side.recs:
                log.raw(r)
    tail = (
        b'{"type":"assistant","uuid":"cut","message":{"usage":{"input_tokens":1'
        if seed % 2
        else b""
    )
    return log.write(folder / f"{sid}.jsonl", tail=tail)


@pytest.mark.parametrize("seed", range(12))
def test_the_fast_path_gives_the_full_tables_figures_on_random_hard_sessions(
    tmp_path: Path, seed: int
) -> None:
    path = _random_session(tmp_path / "proj", seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _check_calls(path) > 0
        _check_days([path])
