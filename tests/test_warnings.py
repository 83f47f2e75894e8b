"""adfkit's warnings as a user meets them: at the line of the user's own call."""

from __future__ import annotations

import warnings

from conftest import ROOT, sample

import adfkit

#: A sample session whose last line is half-written: opening it warns.
SESSION = (
    ROOT
    / "sample_agents/claude-code/projects/-home-user-work-webapp"
    / "24422850-abc3-4525-9567-e2fd4bd0adcb.jsonl"
)


def _caught(call):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        call()
    return [w for w in got if issubclass(w.category, adfkit.AdfWarning)]


def test_a_warning_when_opening_points_at_the_users_call():
    """Not at ``return TranscriptSource(parse_claude_code(...))`` inside adfkit."""
    for opener in (adfkit.open, adfkit.open_claude_code):
        got = _caught(lambda opener=opener: opener(SESSION))
        assert got, f"{opener.__name__}: no warning"
        assert {w.filename for w in got} == {__file__}, [(w.filename, w.lineno) for w in got]


def test_a_method_warning_points_at_the_users_call():
    agent = adfkit.open_adf(sample("legacy-v12"))  # no model recorded: no price for its calls
    got = _caught(lambda: agent.usage(prices={"nothing": {"input": 1, "output": 1}}))
    assert got and {w.filename for w in got} == {__file__}, [w.filename for w in got]
    assert "no price" in str(got[0].message)
