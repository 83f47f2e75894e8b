"""The item scan of the loss ledger and of summary recall, made cheaper (issue 38) with the
same answers: each distinct text of a history is scanned once, and the scans that were
rewritten find exactly what the expressions they replace find (checked against those
expressions, written out here, on generated texts).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

import adfkit
from adfkit._analysis import items, kept, paths
from tests.adfbuild import build, result, row, text, use

#: The expressions as they were written before (the reference).
INSTR = re.compile(
    r"\b(?:" + "|".join(re.escape(w) for w in items.INSTRUCTION_WORDS) + r")\b", re.I
)
SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]{0,40}_[A-Za-z0-9_]{1,60}\b")
CAMEL = re.compile(r"\b[A-Z][a-z0-9]{1,30}[A-Z][A-Za-z0-9]{1,40}\b")
QUANTITY = re.compile(r"(?<![\w.])\d{1,12}(?:\.\d{1,6})? ?(?:" + items.UNITS + r")(?![\w%])")

#: Pieces of text that meet the edges of every pattern: word and non-word characters,
#: digits and units, capitals, dots, dashes, sentence ends, instruction words, extensions.
PIECES = [
    "a", "Ab", "FooBar", "x_y", "_", "-", ".", "/", " ", "\n", "!", "?", "'", "`", "%",
    "1", "42", "3.5", "ms", "MB", " s", "tokens", "é", "Ünï", "٣", "always", "Never",
    "don't", "do not", "please", ".md", ".json", ".py", ".yml", "x.txt", "README", "v2",
    ":", "src/", "//", "a-b", "1.2.3", "ſtop", "İnstead", "STOP", "Must", "\u212a",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def _spans(rx: re.Pattern[str], t: str) -> list[tuple[int, int]]:
    return [m.span() for m in rx.finditer(t)]


@settings(max_examples=400, deadline=None)
@given(texts)
def test_names_quantities_instructions_found_as_the_written_expressions_find(t):
    assert _spans(items._SNAKE, t) == _spans(SNAKE, t)
    assert _spans(items._CAMEL, t) == _spans(CAMEL, t)
    assert _spans(items._QUANTITY, t) == _spans(QUANTITY, t)
    assert _spans(items._INSTR, t) == _spans(INSTR, t)


def _instructions_by_sentence(t: str) -> list[items.Item]:
    """The rule as first written: each sentence searched for an instruction word."""
    out: list[items.Item] = []
    for s in items._sentences(t):
        if INSTR.search(s):
            items._add(out, "instruction", s.rstrip(".!?\n"))
    return out


@settings(max_examples=400, deadline=None)
@given(texts)
def test_instructions_found_in_one_scan_are_the_sentences_searched_one_by_one(t):
    found: list[items.Item] = []
    items._instructions(t, found)
    assert found == _instructions_by_sentence(t)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_path_starts_found_from_slashes_and_extensions(t):
    """``_a_starts`` and ``_b_runs`` give the matches of ``_A_START`` (a whole run of
    ``[\\w.-]`` before a ``/``) and of ``_B_RUN`` (a whole run of ``[\\w-]`` before a known
    extension), found from the slashes and the extensions instead of every position."""
    rev = t[::-1]
    assert paths._a_starts(t, rev) == [m.start() for m in paths._A_START.finditer(t)]
    assert paths._b_runs(t, rev) == [m.span() for m in paths._B_RUN.finditer(t)]


PLEASE = "please never edit config main again"


def test_a_text_the_history_repeats_is_scanned_once(tmp_path, monkeypatch):
    """The same tool result read 40 times, the same reply written 40 times, the same call
    made 40 times: one scan of each (before: one per row), the same items on every row."""
    out = "error: cannot open src/app/main.py (see https://example.com/help)"
    loop = []
    for i in range(40):
        s = 4 * i + 1
        loop += [
            row(s, "user", text("Please never edit `config_main` again.")),
            row(s + 1, "assistant", [use(f"t{i}", "Read", {"file_path": "src/app/main.py"})]),
            row(s + 2, "user", [result(f"t{i}", out, is_error=True)]),
            row(s + 3, "assistant", text("Read `load_config` in src/app/main.py: 12 ms.")),
        ]
    f = build(tmp_path / "repeats.adf", loop=loop)
    calls = {"text": 0, "result": 0, "input": 0}
    texts_items, results_items = kept.texts_items, kept.results_items
    inputs_items = kept.inputs_items

    def counted_texts(texts, **k):
        calls["text"] += len(texts)
        return texts_items(texts, **k)

    def counted_results(results):
        calls["result"] += len(results)
        return results_items(results)

    def counted_inputs(values):
        calls["input"] += len(values)
        return inputs_items(values)

    monkeypatch.setattr(kept, "texts_items", counted_texts)
    monkeypatch.setattr(kept, "results_items", counted_results)
    monkeypatch.setattr(kept, "inputs_items", counted_inputs)
    with adfkit.open_adf(f) as agent:
        found = kept.row_items(agent.source)
    assert calls == {"text": 2, "result": 1, "input": 1}
    assert len(found) == 160
    assert {tuple(found[4 * i + q]) for i in range(40) for q in (1, 2, 3, 4)} == {
        tuple(found[q]) for q in (1, 2, 3, 4)
    }
    error = ("error", out, "error cannot open src app main py see https example com help")
    assert found[3] == [  # the error line twice: marked an error, and a line saying error:
        ("url", "https://example.com/help", "https://example.com/help", "tool_result"),
        ("path", "src/app/main.py", "src/app/main.py", "tool_result"),
        (*error, "tool_result"),
        (*error, "tool_result"),
    ]
    assert found[2] == [("path", "src/app/main.py", "src/app/main.py", "tool_input")]
    assert found[1] == [  # backquoted and snake_case: the same identifier twice
        ("identifier", "config_main", "config_main", "user"),
        ("identifier", "config_main", "config_main", "user"),
        ("instruction", "Please never edit `config_main` again", PLEASE, "user"),
    ]


def test_each_summary_is_read_once_for_every_table(monkeypatch):
    """compactions() knows whether a compaction's summary is readable from the summaries the
    recall and the ledger read (before: each summary parsed again for compactions())."""
    from adfkit._analysis import compactions as comp

    reads = [0]
    summary_text = kept.summary_text

    def counted(*a, **k):
        reads[0] += 1
        return summary_text(*a, **k)

    monkeypatch.setattr(kept, "summary_text", counted)
    monkeypatch.setattr(comp, "summary_text", counted)
    with adfkit.open_adf("sample_agents/long-runner.adf") as agent:
        c = agent.compactions()
        agent.compaction_ledger()
    n = int((c["event"] == "compaction").sum())
    assert n > 3 and reads[0] == n
    # every compaction of the sample keeps its summary: size and tokens known, recall too
    done = c[c["event"] == "compaction"]
    assert done["summary_chars"].notna().all() and done["recall"].notna().all()


def test_a_short_summary_is_scanned_a_long_one_indexed():
    """A summary shorter than ``kept.LONG`` is looked through at once (the index of its
    8-character runs cost more than the scans it saves on big-runner's 300-character
    summaries); a long one keeps the index. ``holds`` is ``in`` either way."""
    short = kept.summary_of("Fixed `load_config` in src/app/main.py; 12 tests pass.")
    long = kept.summary_of("Read src/app/main.py and fixed `load_config`. " * 60)
    assert short is not None and long is not None
    assert short.grams is None and long.grams is not None and len(long.text) >= kept.LONG
    for s in (short, long):
        for value in ("src/app/main.py", "load_config", "src/app/other.py", "12 tests", "x"):
            assert s.holds(value) == (value in s.text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(texts, st.sampled_from(["user", "assistant", "summary"]))))
def test_texts_scanned_together_give_each_text_its_own_items(batch):
    """Texts joined by line ends for one run of each pattern (issue 38: the per-text set-up
    cost more than the scan): each text's items are those it has scanned alone, whatever
    its neighbours end or start with (no pattern matches across a line end)."""
    assert items.texts_items(batch) == [items.text_items(t, how) for t, how in batch]
    assert items.texts_items(batch, every_sentence=True) == [
        items.text_items(t, how, every_sentence=True) for t, how in batch
    ]
    results = [(t, how == "user") for t, how in batch]
    assert items.results_items(results) == [items.result_items(t, e) for t, e in results]
    inputs = [{"path": t, "note": t, "cmd": [t, t], "todos": [{"content": t}]} for t, _ in batch]
    assert items.inputs_items(inputs) == [items.input_items(v) for v in inputs]


def test_texts_past_one_run_are_scanned_in_several(monkeypatch):
    """A run joins about ``RUN_CHARS`` characters at most (a bound on the copy): more texts
    than one run holds give the same items, in as many runs as they fill."""
    monkeypatch.setattr(items, "RUN_CHARS", 64)
    batch = [(f"Read src/a{i}.py and `x_{i}`: {i} ms. Please stop.", "user") for i in range(9)]
    runs = list(items._runs([t for t, _ in batch]))
    assert len(runs) == 9 and sum(runs, []) == list(range(9))  # one text a run here
    found = items.texts_items(batch)
    assert found[3][:3] == [
        ("path", "src/a3.py", "src/a3.py"),
        ("identifier", "x_3", "x_3"),
        ("identifier", "x_3", "x_3"),
    ]
    assert ("quantity", "3 ms", "3ms") in found[3] and len(found) == 9
    monkeypatch.setattr(items, "RUN_CHARS", 1 << 16)
    assert items.texts_items(batch) == found


def test_a_message_built_in_python_has_each_call_walked_on_its_own():
    """Calls with the same JSON are walked once in a history (its blocks are parsed JSON);
    a message a compactor builds may hold a tuple, which writes the JSON of a list but
    holds no item: each of its calls is walked on its own."""
    listed = {"type": "tool_use", "name": "Bash", "input": {"command": ["ls", "src/a.py"]}}
    tupled = {"type": "tool_use", "name": "Bash", "input": {"command": ("ls", "src/a.py")}}
    assert kept.message_items("assistant", "assistant", [tupled, listed]) == [
        ("command", "ls src/a.py", "ls src/a.py", "tool_input")
    ]
    assert kept.message_items("assistant", "assistant", [listed, tupled]) == [
        ("command", "ls src/a.py", "ls src/a.py", "tool_input")
    ]
