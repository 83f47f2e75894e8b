"""Text that reads like real work for the simulated ADF agents: a developer's helper fixing a
CSV importer (its date parser, separators, a header test, a footer row), in place of random
words.

The simulator's figures must not move when the words do (the samples' ground truth: counts,
tokens, compactions): :meth:`adfsynth.runtime.Sim.words` still draws its random words from the
scenario's vocabulary, with the same random calls, and :func:`fit` then writes text of exactly
that length (ASCII, so characters, UTF-16 units and bytes agree) from the pools here, drawing
from a random generator of its own. The pools hold no item the loss ledger would find
(adfkit/_analysis/items.py: no path, URL, code name, number, unit, instruction word or todo), as
the random words held none: what a compaction sweeps and a summary keeps is unchanged.
"""

from __future__ import annotations

import random

#: Phrases and sentences by where they stand (``about``); ``sentence`` mode ends them with ".".
POOLS: dict[str, list[str]] = {
    "request": [
        "Fix the header test",
        "Skip blank lines in the importer",
        "Look at the date parser again",
        "Check how the footer row is read",
        "Speed up the large imports",
        "Add a dry run mode",
        "Find the cause of the wrong totals",
        "Support semicolons as separators",
        "Can you make the importer skip blank lines at the end of a file",
        "The nightly export has dates in two formats and the parser chokes on the second one",
        "Add a check that rejects rows with a missing customer id",
        "The header test fails on the laptop of the new colleague, can you look into it",
        "Make the error message name the row that could not be read",
        "The import of large files takes far too long now, see what is slow",
        "Write down what you learned about the date formats in your notes",
        "Find out why the totals in the summary report are off by one",
        "The upload page times out on big exports; check whether the importer is the cause",
        "Add a dry run mode that reports the rows without writing them",
        "Check whether the new client file uses semicolons as separators",
        "Rename the confusing strict flag and keep the old name working",
    ],
    "thinking": [
        "The notes have the answer",
        "This is the same bug as before",
        "The fixture is missing a row",
        "Start with the row reader",
        "The footer row again",
        "The failing case has a trailing separator, so the last column comes back empty",
        "If I read my notes first I will not repeat the search I did before the compaction",
        "The date parser tries the day first format before the other one, which explains the swap",
        "Two of the failures look the same; one fix in the row reader may cover both",
        "The summary lost the list of files I touched, but my notes still have it",
        "The test passes alone and fails in the full run, so some state leaks between tests",
        "Reading the whole file into memory is what makes the large imports slow",
        "The footer row has no customer id, which is why the new check rejects it",
    ],
    "looking": [
        "the notes",
        "the tests",
        "the parser",
        "the fixtures",
        "the error text",
        "the header row",
        "the client file",
        "the date formats",
        "the separators",
        "the last failure",
        "the row counts",
        "my notes",
        "the log",
        "the diff",
        "the totals",
        "the footer",
        "the reader",
        "the locale setting",
        "the nightly export",
        "the manual upload",
        "the new test",
        "the date parser",
        "the failing header test",
        "the row reader",
        "the importer module",
        "my notes on separators",
        "the last traceback",
        "the fixture files",
        "the summary totals",
        "the footer row",
        "the strict flag",
    ],
    "done": [
        "The header test passes",
        "Blank lines are skipped now",
        "The fix is in",
        "Both formats parse",
        "The notes are up to date",
        "All tests pass",
        "The importer now skips blank lines and the header test passes",
        "I added a test for the semicolon case and saw it fail before the fix",
        "The error message now names the row and the column it could not read",
        "Both date formats parse now and the old fixtures still pass",
        "I wrote the findings to my notes so they survive the next compaction",
        "The totals were off because the footer row was counted as data",
        "Nothing else changed and the full test run is green",
        "The dry run prints the rows it would write and leaves the database alone",
        "The reader streams the file in chunks now and memory stays flat",
        "The old flag name still works and prints a warning that names the new one",
    ],
    "update": [
        "The import runs again",
        "Fixed the wrong totals",
        "The header test is green",
        "Dry run mode is in",
        "The date parser fix is in and the nightly import runs again",
        "Found the cause of the wrong totals: the footer row was read as data",
        "The strict flag has a new name and the old one still works",
        "Blank lines at the end of a file no longer end the import early",
        "The header test failed on a different locale; the fixture sets it now",
        "Large imports stream from disk now and finish in a fraction of the time",
        "Rows without a customer id are rejected with a message that names the row",
    ],
    "note": [
        "Semicolons are common",
        "The footer row is not data",
        "Dates come in two formats",
        "Check the locale first",
        "Keep the old flag name working",
        "Client files use a semicolon as separator; the reader detects it from the header line",
        "Dates come day first in the nightly export and year first in the manual upload",
        "The header test depends on the locale of the machine, so the fixture sets it",
        "Blank lines at the end of a file are not errors and are skipped quietly",
        "The footer row starts with the word total and carries no customer id",
        "Large files are read in chunks now and memory stays flat",
        "Open question: whether empty amounts mean zero or missing",
        "The old flag name maps to the new one with a warning",
        "The date parser tries the formats in the order the notes list them",
        "A trailing separator gives an empty last column, which is fine",
        "Checked the client sample again and the column order matches the spec",
    ],
    "file": [
        "Client export",
        "Nightly export",
        "Manual upload",
        "Export with a footer row",
        "Export from the client system with the new column order",
        "Manual upload of last week with semicolons as separators",
        "Nightly export with dates written day first",
        "Sample with a footer row that sums the amounts",
        "Small file with blank lines at the end",
    ],
    "preview": [
        "notes",
        "tests pass",
        "fixed it",
        "reading my notes",
        "fixed the header test",
        "ran the importer tests",
        "the date parser again",
        "looked at the footer row",
        "checked the separators",
        "wrote the findings down",
    ],
    "worked": [
        "tests pass",
        "fixed",
        "notes updated",
        "fixed the separator detection",
        "notes on the date formats",
        "header test passes now",
        "footer row no longer counted",
        "blank lines skipped",
        "error message names the row",
    ],
    "thread": [
        "Empty amounts",
        "The locale of the header test",
        "Column order of the client file",
        "Decide whether empty amounts mean zero or missing",
        "Confirm the date format of the manual uploads",
        "Ask the client about the new column order",
        "Find out why the header test fails only in the full run",
    ],
    "doc": [
        "Quotes inside fields are doubled",
        "The first line holds the header",
        "Each row is a list of fields",
        "The csv module reads each line into a list of fields",
        "A dialect describes the separator, the quote character and the line ending",
        "The sniffer guesses the dialect from a sample of the file",
        "Dates without a time zone are read as local time",
        "Fields that hold the separator are quoted, and quotes inside are doubled",
        "Reading a file in chunks keeps memory flat however large the file is",
        "Locale settings change how numbers and dates are written",
    ],
    "todo": [
        "Two items left",
        "The date formats are next",
        "Nothing new on the list",
        "Two items left: the footer rows and the locale of the header test",
        "The separator item is done; the date formats are next",
        "Nothing new on the list since the last look",
        "The list matches my notes, so I go on with the date parser",
    ],
    "review": [
        "Nothing to change",
        "The notes still hold",
        "Same as before",
        "Went through my notes again and the open questions are the same as before",
        "Read the failing test once more without changing anything",
        "Looked over the importer again and found nothing new to fix",
        "Compared the two date formats once more and the notes already say it all",
    ],
    "focus": ["the date parser", "separator detection", "the footer rows", "the header test"],
    "title": [
        "date formats",
        "separators",
        "header test",
        "footer rows",
        "blank lines",
        "strict flag",
        "large files",
        "totals",
        "row reader",
        "error text",
        "locale",
        "dry run",
    ],
}
POOLS["default"] = [s for k in ("note", "done", "update") for s in POOLS[k]]

#: Words that stretch a text to an exact length, by length (plain words, no item).
FILLER = {
    2: "so",
    3: "too",
    4: "here",
    5: "again",
    6: "anyway",
    7: "as well",
    8: "for once",
    9: "carefully",
    10: "separately",
    11: "immediately",
    12: "step by step",
}

#: Short phrases that close a text at an exact length (plain words, no item).
TAILS = [
    "first",
    "today",
    "by now",
    "for now",
    "as before",
    "so far",
    "in the notes",
    "on the fixtures",
    "after the last run",
    "in the nightly export",
    "before the next compaction",
    "with the new fixture",
    "on the client sample",
    "in the full test run",
    "as the notes say",
    "once more",
    "this time",
    "as expected",
    "for the manual uploads",
    "in the row reader",
    "with a clear message",
    "without a warning",
    "on the second format",
    "for the client",
    "in the importer",
    "on this machine",
    "in the last run",
]


def _phrases(about: str, sentence: bool) -> list[str]:
    pool = POOLS.get(about, POOLS["default"])
    return [p[:1].upper() + p[1:] + "." for p in pool] if sentence else list(pool)


def fit(about: str, length: int, rng: random.Random, *, sentence: bool = False) -> str:
    """Text of exactly ``length`` characters from the pool ``about``: different phrases of it,
    closed where needed by one short phrase or word (:data:`TAILS`, :data:`FILLER`); a
    sentence starts with a capital and ends with a period.

    Examples
    --------
    >>> r = random.Random(1)
    >>> [len(fit("done", n, r, sentence=True)) for n in (5, 17, 60, 200)]
    [5, 17, 60, 200]
    """
    end = 1 if sentence else 0
    body = length - end
    sep = " " if sentence else ", "
    pool = _phrases(about, sentence)
    closers: dict[int, list[str]] = {}
    for w in TAILS + list(FILLER.values()):
        closers.setdefault(len(w), []).append(w)
    pairs: dict[int, list[str]] = {}
    for a, xs in closers.items():
        for b, ys in closers.items():
            pairs.setdefault(a + 1 + b, []).extend(f"{x} {y}" for x in xs for y in ys if x != y)
    for _ in range(200):  # phrases in a random order, until closers make up the rest
        order = pool[:]
        rng.shuffle(order)
        text = _pack(order, body, sep, sentence)
        k = body - len(text) - (1 if text else 0)
        if k == -1:
            return _done(text, sentence, length)
        for options in (closers.get(k), pairs.get(k) if _ >= 100 else None):
            if options:
                w = rng.choice(options)
                return _done(f"{text} {w}" if text else w, sentence, length)
    text = _pack(order, body, sep, sentence)
    closed = _close(text, body - len(text), rng)
    while closed is None and text:
        text = text.rsplit(" ", 1)[0] if " " in text else ""
        closed = _close(text, body - len(text), rng)
    return _done(closed if closed is not None else ("ok " * body)[:body], sentence, length)


def _pack(order: list[str], body: int, sep: str, sentence: bool) -> str:
    """The phrases of ``order`` that fit in ``body`` characters, joined (a sentence's last
    period left off: :func:`_done` adds it)."""
    parts: list[str] = []
    used = 0
    for p in order:
        add = len(p) + (len(sep) if parts else 0)
        if used + add <= body + (1 if sentence else 0):
            parts.append(p)
            used += add
    text = sep.join(parts)
    if sentence and text.endswith("."):
        text = text[:-1]
    return text[:body] if len(text) > body else text


def _done(text: str, sentence: bool, length: int) -> str:
    if sentence:
        text = text[:1].upper() + text[1:] + "."
    assert len(text) == length, (text, length)
    return text


def _close(text: str, r: int, rng: random.Random) -> str | None:
    """``text`` with closing phrases adding exactly ``r`` characters, or None when no word can
    (one or two characters)."""
    words = TAILS + list(FILLER.values())
    while r > 0:
        room = r - (1 if text else 0)
        opts = sorted(
            (w for w in words if len(w) <= room and (room - len(w) == 0 or room - len(w) >= 3)),
            key=len,
        )
        if not opts:
            return None
        w = rng.choice(opts[-3:])
        text = f"{text} {w}" if text else w
        r -= len(w) + (1 if text != w else 0)
    return text
