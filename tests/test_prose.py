"""The ADF samples read like real work (adfsynth/prose.py) and keep every figure they had: the
text is written in place of the random words, as long, drawn from a generator of its own."""

from __future__ import annotations

import dataclasses
import random

import pytest
from conftest import sample

import adfkit
from adfkit._analysis.items import text_items
from adfsynth import prose, scenarios
from adfsynth.runtime import Sim

#: The vocabulary the long-runner's words came from before (shorebird survey word salad).
SURVEY = set(scenarios._SURVEY_VOCAB)


@pytest.mark.parametrize("about", sorted(prose.POOLS))
def test_fit_writes_exactly_the_length_asked_with_no_item(about):
    """Every length a scenario asks for, in both modes: exactly that many ASCII characters,
    and nothing the loss ledger counts as an item (as the random words had none)."""
    rng = random.Random(about)
    for n in range(3, 300):
        for sentence in (False, True):
            text = prose.fit(about, n, rng, sentence=sentence)
            assert len(text) == n and text.isascii(), (n, text)
            assert not text_items(text, "user"), text
            assert not text_items(text, "summary", every_sentence=False), text
            if sentence:
                assert text[0].isupper() and text.endswith("."), text


def _salad_words(self: Sim, n: int, about: str = "default") -> str:
    return " ".join(self.rng.choice(self.vocab) for _ in range(n))


def _salad_sentence(self: Sim, n: int = 8, about: str = "default") -> str:
    s = _salad_words(self, n)
    return s[:1].upper() + s[1:] + "."


@pytest.mark.parametrize("name", ["long-runner", "mind-keeper", "messenger"])
def test_prose_keeps_every_figure_of_the_random_words(monkeypatch, name):
    """The scenario run with the random words (what the samples held before) and with the
    prose: the same ground truth, but for what is text (paths named after the importer, the
    long-runner's notes kept as mind pages, content hashes)."""
    prosed = scenarios.SCENARIOS[name](0).gt
    monkeypatch.setattr(Sim, "words", _salad_words)
    monkeypatch.setattr(Sim, "sentence", _salad_sentence)
    monkeypatch.setattr(scenarios, "use_slugs", lambda sim, mind=False: None)
    salad = scenarios.SCENARIOS[name](0).gt
    textual = {"final_files", "mind_versions", "context_rows", "planted", "compactions"}
    a, b = dataclasses.asdict(prosed), dataclasses.asdict(salad)
    assert {k: v for k, v in a.items() if k not in textual} == {
        k: v for k, v in b.items() if k not in textual
    }
    for k in ("kind", "trigger_chat_tokens", "summary_seq", "swept_seqs", "cited_seqs", "ord"):
        assert [c.get(k) for c in a["compactions"]] == [c.get(k) for c in b["compactions"]], k
    assert [len(c["mentioned_paths"]) for c in a["compactions"]] == [
        len(c["mentioned_paths"]) for c in b["compactions"]
    ]
    assert len(a["final_files"]) == len(b["final_files"])
    assert [r["seq"] for r in a["context_rows"]] == [r["seq"] for r in b["context_rows"]]


def test_the_long_runner_reads_like_work_and_uses_its_mind():
    """The teaching sample: no word of the old survey salad in what the agent and its user
    say; it writes pages under mind/ and reads them back (fs_read of a page it wrote)."""
    with adfkit.open_adf(sample("long-runner")) as agent:
        history = agent.history()
        text = " ".join(history["text"].dropna().astype(str))
        assert "importer" in text and "date parser" in text
        said = history[history["kind"].isin(["message", "assistant"])]["text"].dropna()
        salad = [w for t in said for w in str(t).lower().replace(".", " ").split() if w in SURVEY]
        assert not salad, salad[:10]
        pages = agent.mind_history()
        written = set(pages["path"]) - {"mind.md", "mind/log.md"}
        assert len(written) >= 40, sorted(written)[:5]
        calls = agent.tool_calls(history=True)
        reads = calls[calls["tool_name"] == "fs_read"]["tool_input"].astype(str)
        read_back = [p for p in written if any(p in r for r in reads)]
        assert len(read_back) >= 10, read_back
