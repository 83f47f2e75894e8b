"""``make bench`` section ``otlp``: the OpenTelemetry export as a session's calls grow.

Two generated Claude Code sessions, the second four times the first (``gen_transcript``),
each exported to OTLP JSON (``AgentFile.to_otlp``) in this process: the time per call of the
larger against the smaller (1.0: linear; the goal 1.1, the growth per 4x at most 4.4), the
calls of the larger (about 10,000), and the two exports of the same file byte-equal."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import gen_transcript

import adfkit

GOAL_PER_CALL = 1.1


def _export(path: Path) -> tuple[float, int, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = adfkit.open(path)
        agent.usage()  # the tables once: the export's own cost is what is timed
        agent.compactions()
        agent.history()
        start = time.perf_counter()
        text = json.dumps(agent.to_otlp(), sort_keys=True)
        took = time.perf_counter() - start
        calls = len(agent.usage())
        agent.close()
    return took, calls, text


def bench(root: Path, quick: bool) -> None:
    mb = 2.5 if quick else 50.0  # 200 MB: about 10,000 calls (the transcripts section's file)
    small = gen_transcript.ensure(root / "otlp", mb)
    large = gen_transcript.ensure(root / "otlp", mb * 4)
    t_small, n_small, _ = min(_export(small) for _ in range(2))
    t_large, n_large, text = min(_export(large) for _ in range(2))
    again = _export(large)[2]
    per_call = (t_large / n_large) / (t_small / n_small)
    verdict = "met" if per_call <= GOAL_PER_CALL else "MISSED"
    print("OpenTelemetry export (to_otlp) as calls grow")
    print(f"  {n_small:7,} calls   {t_small:6.2f} s   {t_small / n_small * 1e3:.3f} ms per call")
    print(f"  {n_large:7,} calls   {t_large:6.2f} s   {t_large / n_large * 1e3:.3f} ms per call")
    print(f"  time per call, larger / smaller: {per_call:.2f} (goal <= {GOAL_PER_CALL}: {verdict})")
    print(f"  second export byte-equal: {text == again}")
    print()
