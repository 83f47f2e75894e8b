"""Items in agent text that a compaction can lose: the extraction rules of the loss ledger.

An *item* is a piece of working knowledge found in one row: ``path`` (a file path), ``url``,
``identifier`` (a code name), ``error`` (an error line), ``command`` (a shell command run),
``instruction`` (a user's instruction or correction), ``todo`` (an open task), ``quantity``
(a number with a unit). Each is a ``(kind, value, key)``: ``value`` as written (at most
:data:`MAX_CHARS` characters), ``key`` its identity (two mentions with the same kind and key
are the same item). Where an item is found is its ``how``: ``tool_input``, ``tool_result``,
``user`` (a person's message), ``assistant`` (the agent's text) or ``summary``.

Rules, by where the text stands:

- tool call inputs: values under a path key (``file_path``, ``path``, ``notebook_path``,
  ``file``, ``filename``, ``filepath``, ``dir``, ``directory``) are paths, under ``url`` URLs,
  under ``command``/``cmd`` commands (a list is joined by spaces; the first line counts);
  ``todos`` (Claude Code ``TodoWrite``) and ``plan`` (Codex ``update_plan``) entries whose
  status is not ``completed`` are todos; other strings are scanned for paths and URLs.
- tool results: paths and URLs; error lines (a result marked as an error gives its first
  non-empty line; any result gives its lines that start, after blanks, with a name ending in
  ``Error``/``Exception``, or ``error:``, ``ERROR``, ``FAILED``, ``fatal:``, ``Traceback``;
  at most :data:`MAX_ERRORS` per result).
- a person's messages: paths, URLs, identifiers, quantities, todos, and instructions: each
  sentence (split at ``.``, ``!``, ``?`` and line ends) holding one of the words of
  :data:`INSTRUCTION_WORDS` (``always``, ``never``, ``don't``, ``instead``, ``must``...).
- the agent's text and summaries: paths, URLs, identifiers, quantities, todos (lines that
  start with ``TODO``, ``- [ ]`` or ``* [ ]``); a summary's sentences with an instruction
  word are instructions too.

Identifiers are backquoted spans (2-80 characters, not a path or URL), ``snake_case`` names
and ``CamelCase`` names with two capitals. Quantities are numbers followed by a unit of
:data:`UNITS` (``ms``, ``s``, ``MB``, ``%``, ``tokens``...). Keys: a path or identifier as
written; a URL without a trailing ``/``; a command with blanks collapsed; a quantity lower
case without blanks; an error, instruction or todo as its lower-case words joined by one
space, with digit runs replaced by ``#`` in errors (line numbers and addresses change).

Every pattern has bounded repetitions and no nested quantifier, and each is run once over a
text, so extraction is linear in the text's size (paths:
:func:`adfkit._analysis.paths.find_paths`). Many texts are scanned together
(:func:`texts_items`, :func:`results_items`, :func:`inputs_items`): joined by line ends, which
no pattern matches across, each pattern runs once over a run of them.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from adfkit import schema
from adfkit._analysis.paths import URL, find_paths

#: Kinds of items, in the order tables list them.
ITEM_KINDS = schema.ITEM_KINDS
#: Longest value kept for an item (longer ones are cut).
MAX_CHARS = 200
#: Error lines taken from one tool result at most.
MAX_ERRORS = 3
#: Words that make a person's sentence an instruction or a correction.
INSTRUCTION_WORDS = (
    "always",
    "never",
    "don't",
    "do not",
    "dont",
    "must",
    "make sure",
    "should",
    "instead",
    "avoid",
    "prefer",
    "remember",
    "stop",
    "please",
    "actually",
)
#: Units a quantity may carry (longest first where one is a prefix of another).
UNITS = (
    "seconds|secs|sec|minutes|mins|min|hours|hrs|days|ms|s|h|"
    "KiB|MiB|GiB|KB|kB|MB|GB|TB|B|%|tokens|px|lines|files|tests|USD"
)

_PATH_KEYS = frozenset(
    ("file_path", "path", "notebook_path", "file", "filename", "filepath", "dir", "directory")
)
_COMMAND_KEYS = frozenset(("command", "cmd"))
# the lookahead on the words' first letters lets the scan skip most word starts at once
_INSTR = re.compile(
    r"\b(?=["
    + "".join(sorted({w[0] for w in INSTRUCTION_WORDS}))
    + r"])(?:"
    + "|".join(re.escape(w) for w in INSTRUCTION_WORDS)
    + r")\b",
    re.I,
)
_SENTENCE_END = re.compile(r"[.!?\n]")
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
# Possessive runs (``{m,n}+``) and an atomic number (``(?>...)``): what follows each run can
# never start inside it (a ``_`` or a capital after letters and digits, a word boundary
# after word characters, a unit or a space after digits), so giving characters back never
# finds a match, and the engine no longer tries; the matches are those of the patterns
# without them. CamelCase and quantities start with the character class, the word boundary
# or lookbehind after it (the same matches as ``\b[A-Z]...`` and ``(?<![\w.])\d...``): the
# engine then skips to the characters that can start a match instead of trying every one.
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]{0,40}+_[A-Za-z0-9_]{1,60}+\b")
_CAMEL = re.compile(r"[A-Z](?<!\w[A-Z])[a-z0-9]{1,30}+[A-Z][A-Za-z0-9]{1,40}+\b")
_QUANTITY = re.compile(r"\d(?<![\w.]\d)(?>\d{0,11}(?:\.\d{1,6})? ?)(?:" + UNITS + r")(?![\w%])")
_ERROR_LINE = re.compile(
    r"[ \t]{0,40}(?:[A-Za-z_.]{0,60}(?:Error|Exception)\b"
    r"|error:|ERROR\b|FAILED\b|fatal:|Traceback\b)"
)
_TODO_LINE = re.compile(r"[ \t]{0,40}(?:TODO\b:?|[-*] \[ \])[ \t]{0,10}(.{1,300})")
_WORDS = re.compile(r"[0-9a-z']{1,80}")
_KEY_WORDS = re.compile(r"[0-9a-z'#]{1,80}")
_DIGITS = re.compile(r"\d{1,40}")
_BLANKS = re.compile(r"\s{1,1000}")

Item = tuple[str, str, str]  # kind, value, key


def key_of(kind: str, value: str) -> str:
    """The identity of an item (see the module docstring)."""
    if kind == "path" or kind == "identifier":  # as written (most items: first)
        return value
    if kind == "url":
        return value.rstrip("/")
    if kind == "command":
        return _BLANKS.sub(" ", value).strip()
    if kind == "quantity":
        return value.replace(" ", "").lower()
    if kind == "error":
        return " ".join(_KEY_WORDS.findall(_DIGITS.sub("#", value.lower())))
    if kind in ("instruction", "todo"):
        return " ".join(_WORDS.findall(value.lower()))
    return value


def words(value: str) -> list[str]:
    """Lower-case words of ``value`` (letters, digits, apostrophes): what a normalised
    match compares."""
    return _WORDS.findall(value.lower())


def _add(out: list[Item], kind: str, value: str) -> None:
    v = value.strip()[:MAX_CHARS]
    if v:
        k = key_of(kind, v)
        if k:
            out.append((kind, v, k))


def _urls(text: str, out: list[Item]) -> str:
    """URLs of ``text``; returns the text with them blanked."""
    if "://" not in text:  # no URL: one fast look instead of a scan with the pattern
        return text
    for m in URL.finditer(text):
        _add(out, "url", m.group(0).rstrip(".,;:"))
    return URL.sub(" ", text)


def _todo_lines(text: str, out: list[Item]) -> None:
    if "TODO" not in text and "[ ]" not in text:
        return
    for line in text.splitlines():
        m = _TODO_LINE.match(line)
        if m:
            _add(out, "todo", m.group(1))


def _sentences(text: str) -> Iterable[str]:
    start = 0
    for m in _SENTENCE_END.finditer(text):
        yield text[start : m.end()]
        start = m.end()
    if start < len(text):
        yield text[start:]


def _instructions(text: str, out: list[Item], *, every: bool = False) -> None:
    if every:
        for s in _sentences(text):
            _add(out, "instruction", s.rstrip(".!?\n"))
        return
    # the sentences holding an instruction word: one scan of the text (no word spans a
    # sentence's end, and the ends are not word characters, so a word found in the text is
    # one found in its sentence)
    end = 0  # the end of the last sentence taken: the next one starts there or later
    for m in _INSTR.finditer(text):
        at = m.start()
        if at < end:  # in the sentence already taken
            continue
        f = text.rfind  # the sentence starts after the last end before the word
        start = max(end, f(".", end, at) + 1, f("!", end, at) + 1, f("?", end, at) + 1)
        start = max(start, f("\n", end, at) + 1)
        stop = _SENTENCE_END.search(text, m.end())
        end = stop.end() if stop else len(text)
        _add(out, "instruction", text[start:end].rstrip(".!?\n"))


def text_items(text: str, how: str, *, every_sentence: bool = False) -> list[Item]:
    """Items of free text: a person's message (``how="user"``), the agent's text
    (``assistant``) or a summary (``summary``). A person's sentences and a summary's are
    instructions when they hold an instruction word, every one with ``every_sentence`` (what
    a summary is checked against: it may restate an instruction in other words)."""
    return texts_items([(text, how)], every_sentence=every_sentence)[0]


def texts_items(
    texts: Sequence[tuple[str, str]], *, every_sentence: bool = False
) -> list[list[Item]]:
    """:func:`text_items` of each ``(text, how)``, each pattern run over many texts at once
    (:func:`_joined`: a short text costs a pattern's set-up, not its own scan)."""
    outs: list[list[Item]] = [[] for _ in texts]
    rests = [_urls(text, out) for (text, _), out in zip(texts, outs, strict=True)]
    for run in _runs(rests):
        joined, at = _joined(rests, run)
        for a, b in find_paths(joined):
            _add(outs[at(a)], "path", joined[a:b])
        tick, at_tick = _joined(rests, [i for i in run if "`" in rests[i]])
        for m in _BACKTICK.finditer(tick):
            v = m.group(1).strip()
            if "/" not in v and "://" not in v and " " not in v:
                _add(outs[at_tick(m.start())], "identifier", v)
        snake, at_snake = _joined(rests, [i for i in run if "_" in rests[i]])  # has a "_"
        for rx, t, where in ((_SNAKE, snake, at_snake), (_CAMEL, joined, at)):
            for m in rx.finditer(t):
                _add(outs[where(m.start())], "identifier", m.group(0))
        for m in _QUANTITY.finditer(joined):
            _add(outs[at(m.start())], "quantity", m.group(0))
    for (text, how), out in zip(texts, outs, strict=True):
        _todo_lines(text, out)
        if how in ("user", "summary"):
            _instructions(text, out, every=every_sentence)
    return outs


#: Characters of text :func:`_runs` puts in one run at most (a bound on the copy
#: :func:`_joined` makes).
RUN_CHARS = 1 << 16


def _runs(texts: list[str]) -> Iterator[list[int]]:
    """The indices of ``texts``, in runs of about :data:`RUN_CHARS` characters at most."""
    run: list[int] = []
    size = 0
    for i, t in enumerate(texts):
        if run and size + len(t) >= RUN_CHARS:
            yield run
            run, size = [], 0
        run.append(i)
        size += len(t) + 1
    if run:
        yield run


def _joined(texts: list[str], run: list[int]) -> tuple[str, Callable[[int], int]]:
    """The texts of ``run`` joined by line ends, and the function that gives the index in
    ``texts`` of the text a position of the joined text is in. No pattern here matches
    across a line end, and none tells a line end before or after a text from the text's
    start or end: each text's matches in the joined text are its own, at its offset."""
    starts = list(itertools.accumulate((len(texts[i]) + 1 for i in run[:-1]), initial=0))

    def at(pos: int) -> int:
        return run[bisect.bisect_right(starts, pos) - 1]

    return "\n".join([texts[i] for i in run]), at


def result_items(text: str, is_error: bool) -> list[Item]:
    """Items of a tool result: paths, URLs and error lines."""
    return results_items([(text, is_error)])[0]


def results_items(results: Sequence[tuple[str, bool]]) -> list[list[Item]]:
    """:func:`result_items` of each ``(text, is_error)``, the paths of many found at once
    (:func:`_joined`)."""
    outs = _paths_urls_of([text for text, _ in results])
    for (text, is_error), out in zip(results, outs, strict=True):
        _errors(text, is_error, out)
    return outs


def _paths_urls_of(texts: list[str]) -> list[list[Item]]:
    """The paths and URLs of each text, the paths of many found at once (:func:`_joined`)."""
    outs: list[list[Item]] = [[] for _ in texts]
    rests = [_urls(text, out) for text, out in zip(texts, outs, strict=True)]
    for run in _runs(rests):
        joined, at = _joined(rests, run)
        for a, b in find_paths(joined):
            _add(outs[at(a)], "path", joined[a:b])
    return outs


def _errors(text: str, is_error: bool, out: list[Item]) -> None:
    """Error lines of a tool result."""
    n = 0
    if is_error:
        for line in text.splitlines():
            if line.strip():
                _add(out, "error", line)
                n += 1
                break
    if n < MAX_ERRORS and _might_hold_errors(text):
        for line in text.splitlines():
            if _ERROR_LINE.match(line):
                _add(out, "error", line)
                n += 1
                if n >= MAX_ERRORS:
                    break


def _might_hold_errors(text: str) -> bool:
    return any(w in text for w in ("Error", "Exception", "error:", "ERROR", "FAILED", "fatal:"))


def input_items(tool_input: Any) -> list[Item]:
    """Items of a tool call's input (a parsed JSON value), in document order."""
    return inputs_items([tool_input])[0]


def inputs_items(values: Sequence[Any]) -> list[list[Item]]:
    """:func:`input_items` of each value, the strings that are scanned for paths and URLs
    (a value under no key of its own) scanned together (:func:`_paths_urls_of`)."""
    texts: list[str] = []
    plans = [_input_plan(v, texts) for v in values]
    found = _paths_urls_of(texts)
    return [[x for p in plan for x in (found[p] if type(p) is int else (p,))] for plan in plans]


def _input_plan(tool_input: Any, texts: list[str]) -> list[Any]:
    """The items of a tool call's input in document order, each string to be scanned for
    paths and URLs as its index in ``texts`` (where it is put). The walk keeps its own
    stack, so however deep the value is nested it cannot exhaust Python's."""
    out: list[Any] = []
    stack: list[tuple[Any, str | None]] = [(tool_input, None)]
    while stack:
        x, key = stack.pop()
        k = (key or "").lower()
        if isinstance(x, dict):
            todo: list[tuple[Any, str | None]] = []
            for kk, v in x.items():
                if str(kk).lower() in ("todos", "plan") and isinstance(v, list):
                    todo.append((_Todos(v), None))
                else:
                    todo.append((v, str(kk)))
            stack.extend(reversed(todo))
        elif isinstance(x, _Todos):
            _todos(x.entries, out)
        elif isinstance(x, list):
            if k in _COMMAND_KEYS and all(isinstance(v, str) for v in x):
                _command(" ".join(x), out)
            else:
                stack.extend((v, key) for v in reversed(x))
        elif isinstance(x, str):
            if k in _PATH_KEYS:
                _add(out, "path", x)
            elif k == "url":
                _add(out, "url", x)
            elif k in _COMMAND_KEYS:
                _command(x, out)
            else:
                out.append(len(texts))
                texts.append(x)
    return out


class _Todos:
    """A todo list met in the walk, handled in its place."""

    __slots__ = ("entries",)

    def __init__(self, entries: list[Any]) -> None:
        self.entries = entries


def _command(cmd: str, out: list[Item]) -> None:
    line = next((ln for ln in cmd.splitlines() if ln.strip()), "")
    _add(out, "command", line)


def _todos(entries: list[Any], out: list[Item]) -> None:
    for e in entries:
        if not isinstance(e, dict) or e.get("status") == "completed":
            continue
        text = e.get("content") or e.get("step") or e.get("text")
        if isinstance(text, str):
            _add(out, "todo", text)
