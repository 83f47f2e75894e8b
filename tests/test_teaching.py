"""notebook 05's exercises checked by a function the student calls (adfkit.teaching)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sample

import adfkit
from adfkit.teaching import Lesson

# The long-runner sample's answers, read off its tables by hand (tests/test_notebooks.py
# checks the folded answers print the same): the live loop's est_tokens by kind are
# compaction_summary 375, assistant 247, tool_result 169, context 166, trigger 114 (of 1,071);
# compaction 4 has the highest compression_ratio (26.3x) and recall 0.30; 8 re-fetches (3
# after compaction 0, one after each of 1-5); fs_read failed 8 of its 46 calls; chat starts
# 52 turns, 1.87 tool calls each.
RIGHT = {
    1: ["compaction_summary", ("compaction_summary", 0.35), ("Compaction_Summary", 35)],
    2: [4, np.int64(4), (4, 0.30), (4, "30%")],
    3: [8, {0: 3, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}],
    4: ["fs_read", ("fs_read", 8), ("fs_read", 8 / 46), ("fs_read", "17%")],
    5: ["chat", ("chat", 1.87), ("chat", 1.9)],
}
#: Wrong answers and the place each verdict must point to.
WRONG = {
    1: [
        ("assistant", "sum est_tokens by kind over agent.loop()"),
        (("compaction_summary", 0.5), "its share is its tokens over the sum"),
    ],
    2: [(1, "highest compression_ratio"), ((4, 0.9), "its recall column")],
    3: [(7, "count them"), ({0: 3}, "for each event_id")],
    4: [("sys_fetch", "sum is_error per tool_name"), (("fs_read", 46), "is_error true")],
    5: [("timer", "per trigger_kind"), (("chat", 3.0), "average n_calls")],
}


@pytest.fixture(scope="module")
def check():
    return Lesson(adfkit.open(sample("long-runner"))).check


@pytest.mark.parametrize("exercise", sorted(RIGHT))
def test_right_answers_are_right(check, exercise):
    for answer in RIGHT[exercise]:
        verdict = check(exercise, answer)
        assert verdict.right and repr(verdict).startswith("right: "), (answer, verdict)


@pytest.mark.parametrize("exercise", sorted(WRONG))
def test_wrong_answers_say_what_to_look_at_without_the_answer(check, exercise):
    answer = RIGHT[exercise][0]
    for given, pointer in WRONG[exercise]:
        verdict = check(exercise, given)
        assert not verdict and repr(verdict).startswith("not yet: "), (given, verdict)
        assert pointer in verdict.message, verdict.message
        if not isinstance(given, tuple):  # a wrong main answer: the right one is not told
            assert str(answer) not in verdict.message


def test_no_answer_or_no_such_exercise(check):
    assert check(1, None).message == "not yet: put your answer in place of None"
    assert check(6, "x").message == "not yet: there are exercises 1 to 5, not 6"


def test_the_checks_follow_the_agent():
    """On another agent the same exercise has another answer, worked out from its tables: the
    mind-keeper sample's loop is mostly tool results (2,974 of 7,084 estimated tokens), and
    its fs_read failed 16 of 54 times."""
    other = Lesson(adfkit.open(sample("mind-keeper"))).check
    assert not other(1, "compaction_summary") and other(1, ("tool_result", 0.42))
    assert other(4, ("fs_read", 16)) and not other(4, ("fs_read", 8))


def test_notebook_05_says_how_to_check_each_exercise():
    """Notebook 05 makes `check` from the agent it opened, and each exercise says how to call
    it with that exercise's number (the answers stay folded: tests/test_notebooks.py)."""
    import nbformat
    from conftest import ROOT

    nb = nbformat.read(ROOT / "notebooks" / "05-teaching-memory.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert any("check = Lesson(agent).check" in c for c in code)
    exercises = [c.source for c in nb.cells if "**Exercise" in c.source]
    assert len(exercises) == 5
    for n, text in enumerate(exercises, 1):
        assert f"`check({n}, " in text, text
