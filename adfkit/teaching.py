"""Exercises that check themselves: notebook 05's questions, answered from the agent at hand.

:class:`Lesson` works each exercise out from the agent (the same tables the folded answers
use, so it holds for any agent the notebook is pointed at) and :meth:`Lesson.check` compares a
student's answer with it: it says *right*, or what to look at, without giving the answer away.

Each exercise takes its main answer alone, or with its figure as a pair:

1. the kind of row with the most estimated tokens in the live loop: ``"tool_result"``, or
   ``("tool_result", 0.43)`` (its share; ``43`` reads as 43%);
2. the compaction that squeezed hardest: its ``event_id``, or ``(event_id, recall)``;
3. the re-fetches after compactions: their number, or ``{event_id: count}``;
4. the tool that failed most often: its name, or ``(name, failures)`` or ``(name, share)``;
5. the trigger kind that starts the most turns: its name, or ``(kind, mean tool calls)``.

Examples
--------
>>> import adfkit
>>> from adfkit.teaching import Lesson
>>> check = Lesson(adfkit.open(adfkit.sample_path("long-runner.adf"))).check
>>> check(4, "fs_read")
right: fs_read failed 8 times, more than any other tool
>>> check(4, "sys_fetch").right
False
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

#: How far a share, recall or mean may be from the figure and still be right (rounding).
SHARE_TOLERANCE = 0.015
MEAN_TOLERANCE = 0.05


@dataclass(frozen=True)
class Verdict:
    """What :meth:`Lesson.check` says: ``right`` or not, and the ``message`` shown."""

    right: bool
    message: str

    def __repr__(self) -> str:
        return self.message

    def __bool__(self) -> bool:
        return self.right


def _right(text: str) -> Verdict:
    return Verdict(True, f"right: {text}")


def _wrong(text: str) -> Verdict:
    return Verdict(False, f"not yet: {text}")


def _share(v: Any) -> float | None:
    """A share given as a fraction or a percentage (43 or "43%" reads as 0.43)."""
    if isinstance(v, str):
        v = v.strip().rstrip("%")
        try:
            v = float(v) / 100
        except ValueError:
            return None
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or math.isnan(float(v)):
        return None
    f = float(v)
    return f / 100 if f > 1 else f


def _pair(answer: Any) -> tuple[Any, Any]:
    """``(main, figure)`` of an answer given alone or as a pair (figure None)."""
    if isinstance(answer, tuple | list) and len(answer) == 2:
        return answer[0], answer[1]
    return answer, None


def _same_name(a: Any, b: str) -> bool:
    return isinstance(a, str) and a.strip().lower() == b.lower()


class Lesson:
    """Notebook 05's exercises on ``agent`` (any format :func:`adfkit.open` reads): call
    :meth:`check` with the exercise number and an answer."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self._checks: dict[int, Callable[[Any], Verdict]] = {
            1: self._loop_tokens,
            2: self._hardest,
            3: self._refetches,
            4: self._failures,
            5: self._turns,
        }

    def check(self, exercise: int, answer: Any) -> Verdict:
        """Whether ``answer`` is right for ``exercise`` (1-5): ``right: ...``, or ``not yet:``
        and what to look at. The verdict is true when right."""
        if exercise not in self._checks:
            return _wrong(f"there are exercises 1 to {len(self._checks)}, not {exercise!r}")
        if answer is None or answer is ...:
            return _wrong("put your answer in place of None")
        return self._checks[exercise](answer)

    # -- the exercises ----------------------------------------------------------------------
    def _loop_tokens(self, answer: Any) -> Verdict:
        by_kind = self.agent.loop().groupby("kind", observed=True)["est_tokens"].sum()
        top, total = by_kind.idxmax(), by_kind.sum()
        share = by_kind.max() / total
        kind, figure = _pair(answer)
        if not _same_name(kind, str(top)):
            return _wrong(
                "sum est_tokens by kind over agent.loop() (the live loop, not the history) "
                "and take the largest"
            )
        if figure is not None:
            got = _share(figure)
            if got is None or abs(got - share) > SHARE_TOLERANCE:
                return _wrong(
                    f"{top} is the right kind; its share is its tokens over the sum of "
                    "est_tokens of every row of the loop"
                )
        return _right(f"{top} holds {share:.0%} of the loop's {total:,} estimated tokens")

    def _hardest(self, answer: Any) -> Verdict:
        comp = self.agent.compactions().dropna(subset=["compression_ratio"])
        event, figure = _pair(answer)
        if comp.empty:
            if event is False or (isinstance(event, str) and event.strip().lower() == "none"):
                return _right("no compaction here has its swept rows in the file")
            return _wrong("agent.compactions() has no compression_ratio here: answer 'none'")
        hardest = comp.loc[comp["compression_ratio"].idxmax()]
        if not _is_int(event) or int(event) != int(hardest["event_id"]):
            return _wrong(
                "take the row of agent.compactions() with the highest compression_ratio and "
                "give its event_id"
            )
        recall = hardest["recall"]
        if figure is not None and not pd.isna(recall):
            got = _share(figure)
            if got is None or abs(got - float(recall)) > SHARE_TOLERANCE:
                return _wrong("the right compaction; what it kept is its recall column")
        kept = "-" if pd.isna(recall) else f"{float(recall):.0%}"
        return _right(
            f"compaction {int(hardest['event_id'])} is {hardest['compression_ratio']:.1f}x "
            f"smaller; its summary kept {kept} of the items it swept"
        )

    def _refetches(self, answer: Any) -> Verdict:
        ref = self.agent.refetches()
        per = ref.groupby("event_id").size()
        if isinstance(answer, Mapping):
            got = {int(k): int(v) for k, v in answer.items() if _is_int(k) and _is_int(v)}
            want = {int(k): int(v) for k, v in per.items()}
            if {k: v for k, v in got.items() if v} == want:
                return _right(f"{len(ref)} re-fetch(es), after {len(want)} compaction(s)")
            return _wrong("count the rows of agent.refetches() for each event_id")
        if not _is_int(answer) or int(answer) != len(ref):
            return _wrong("each row of agent.refetches() is one re-fetch: count them")
        return _right(f"{len(ref)} re-fetch(es) after {len(self.agent.compactions())} compactions")

    def _failures(self, answer: Any) -> Verdict:
        calls = self.agent.tool_calls(history=True)
        stats = calls.groupby("tool_name").agg(
            calls=("tool_use_id", "size"), failed=("is_error", "sum")
        )
        most = stats["failed"].max()
        worst = [str(t) for t in stats.index[stats["failed"] == most]]
        tool, figure = _pair(answer)
        name = next((t for t in worst if _same_name(tool, t)), None)
        if name is None:
            return _wrong(
                "in agent.tool_calls(history=True), sum is_error per tool_name and take the largest"
            )
        n, failed = int(stats.loc[name, "calls"]), int(stats.loc[name, "failed"])
        if figure is not None:
            share = _share(figure) if not _is_int(figure) else None
            ok = (_is_int(figure) and int(figure) == failed) or (
                share is not None and abs(share - failed / n) <= SHARE_TOLERANCE
            )
            if not ok:
                return _wrong(
                    f"{name} is the right tool; count its calls with is_error true (or divide "
                    "them by all its calls for a share)"
                )
        return _right(f"{name} failed {failed} times, more than any other tool")

    def _turns(self, answer: Any) -> Verdict:
        turns = self.agent.observe().turns
        per = turns.groupby("trigger_kind")["n_calls"].agg(["size", "mean"])
        most = per["size"].max()
        tops = [str(k) for k in per.index[per["size"] == most]]
        kind, figure = _pair(answer)
        name = next((k for k in tops if _same_name(kind, k)), None)
        if name is None:
            return _wrong("count the rows of agent.observe().turns per trigger_kind")
        mean = float(per.loc[name, "mean"])
        off = not isinstance(figure, numbers.Real) or abs(float(figure) - mean) > MEAN_TOLERANCE
        if figure is not None and off:
            return _wrong(f"{name} is right; average n_calls over its turns")
        return _right(f"{name} starts {int(most)} turns, {mean:.1f} tool calls each on average")


def _is_int(v: Any) -> bool:
    """A whole number (numpy's too), not a bool."""
    if isinstance(v, bool):
        return False
    if isinstance(v, numbers.Integral):
        return True
    return isinstance(v, numbers.Real) and float(v).is_integer()
