"""What a compaction's summary kept: the one rule behind every "kept", "recall" and "loss"
figure adfkit shows.

``summary_recall()``, the recall columns of ``compactions()``, the loss ledger
(``compaction_ledger()``), ``forgetting()``'s loss rates, ``item_survival()`` and every
notebook, plot and widget built on them count the same things, decided here:

- **The items** of a compaction are the items (:mod:`adfkit._analysis.items`: paths, URLs,
  identifiers, error lines, commands, instructions, todos, numbers with a unit) of the rows it
  swept, its preserved tail excluded, deduplicated by ``(kind, item_key)``. They are known
  when the record holds the swept rows (an audit archive, or a transcript's stated sweep);
  otherwise the count is NA, not 0.
- **adfkit's own identifiers are never items**: seq numbers and row numbers are not
  extracted at all, and a tool's name (``Bash``, ``Edit``, ``loop_compact``...: any tool the
  history calls or the format's taxonomy names) is not an item even when the agent's text
  spells it as a code name. No
  summary can be asked to name them.
- **Kept**: each item is ``exact`` (the summary holds its value, or an item of the same kind
  and key), ``normalised`` (it holds the item's words: for a name (a path's last part, a
  URL, an identifier, a command, a quantity) all of them in order; for prose (an
  instruction, a todo, an error line) :data:`WORD_SHARE` of them) or ``lost``
  (:func:`kept_by`). Known only when the record holds the summary's text
  (:func:`summary_text`): not when it is lost, encrypted (a Codex remote compaction) or an
  empty transcript row; then every verdict is NA.
- **Recall** of a compaction is the share of its items kept (exact or normalised):
  ``n_recalled / n_identifiers`` in ``compactions()``, ``1 - loss_rate`` in ``forgetting()``,
  the mean of ``recalled`` in ``summary_recall()``; NA when there is no item or the summary
  is not known.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Any

import orjson
import pandas as pd

from adfkit import schema
from adfkit._analysis.items import (
    Item,
    inputs_items,
    results_items,
    texts_items,
    words,
)
from adfkit._analysis.observe import default_taxonomy
from adfkit._analysis.replay import ReplayState, replay_state
from adfkit._analysis.tables import history_blocks
from adfkit._core.rows import parse_content, strip_summary
from adfkit._core.source import AgentSource, Key

#: What a normalised match of a multi-word item needs: this share of its words in the summary.
WORD_SHARE = 0.8
#: Verdicts of :func:`kept_by`; the first two count as kept.
VERDICTS = ("exact", "normalised", "lost")

Found = tuple[str, str, str, str]  # kind, value, key, how
_ROW_ITEMS: Key[dict[int, list[Found]]] = Key("kept.row_items")
_SWEPT: Key[dict[int, SweptItems]] = Key("kept.swept_items")
_TOOLS: Key[frozenset[str]] = Key("kept.tool_names")
_SUMMARIES: Key[dict[int, Summary | None]] = Key("kept.summaries")


# -- items per row -------------------------------------------------------------------------
def _result_text(c: Any) -> str:
    """A tool result's text; a JSON object with an ``output`` string (how Codex stores a
    command's result) is read as that string."""
    if isinstance(c, str):
        if c.startswith('{"output"'):
            try:
                v = orjson.loads(c)
            except orjson.JSONDecodeError:
                return c
            if isinstance(v, dict) and isinstance(v.get("output"), str):
                return str(v["output"])
        return c
    if isinstance(c, list):
        return "\n".join(
            str(b.get("text")) for b in c if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


#: A piece of a message that items are found in, scanned once however often the history
#: repeats it: ``(how, is_error, text)`` (``how``: ``tool_result``, ``user``, ``assistant``,
#: ``summary``), or ``("tool_input", False, key)`` with the input's compact JSON as ``key``.
Piece = tuple[str, bool, Any]


def _pieces(
    kind: str,
    role: str,
    blocks: list[dict[str, Any]],
    inputs: dict[Piece, Any],
    tools: set[str] | None = None,
    *,
    parsed: bool = False,
) -> list[Piece]:
    """The pieces of one message's blocks, in order (each tool call's input put in
    ``inputs`` under its piece); the name of each tool called is added to ``tools``. Two
    inputs with the same JSON are one piece when the blocks were ``parsed`` from JSON (a
    tuple and a list write the same JSON, and only the list holds items)."""
    out: list[Piece] = []
    for b in blocks:
        t = b.get("type")
        if t == "tool_use":
            if tools is not None:
                tools.add(str(b.get("name")))
            inp = b.get("input")
            piece: Piece = ("tool_input", False, len(inputs))  # a piece of its own
            try:  # the same arguments give the same items: walked once
                if parsed:
                    piece = ("tool_input", False, orjson.dumps(inp))
            except TypeError:  # an integer past 64 bits, nested past 255 levels: its own
                pass
            inputs.setdefault(piece, inp)
            out.append(piece)
        elif t == "tool_result":
            out.append(("tool_result", bool(b.get("is_error")), _result_text(b.get("content"))))
        elif t == "text" and isinstance(b.get("text"), str):
            if kind == "compaction_summary":
                out.append(("summary", False, strip_summary(b["text"])))
            elif kind == "assistant":
                out.append(("assistant", False, b["text"]))
            elif kind == "message" and role == "user":
                out.append(("user", False, b["text"]))
    return out


def _pieces_items(pieces: list[Piece], inputs: dict[Piece, Any]) -> list[tuple[Found, ...]]:
    """The items of each piece (a tuple: no container the garbage collector keeps
    watching), the texts, the tool results and the tool inputs each scanned together
    (:func:`texts_items`, :func:`results_items`, :func:`inputs_items`)."""
    found: list[tuple[Found, ...]] = [()] * len(pieces)
    by_how: dict[str, list[int]] = {"tool_input": [], "tool_result": [], "text": []}
    for i, p in enumerate(pieces):
        by_how.get(p[0], by_how["text"]).append(i)
    texts, results, calls = by_how["text"], by_how["tool_result"], by_how["tool_input"]
    scans = (
        (texts, texts_items([(pieces[i][2], pieces[i][0]) for i in texts])),
        (results, results_items([(pieces[i][2], pieces[i][1]) for i in results])),
        (calls, inputs_items([inputs[pieces[i]] for i in calls])),
    )
    for at, of in scans:
        for i, items in zip(at, of, strict=True):
            if items:  # else () as it is (half the pieces of big-runner)
                how = pieces[i][0]
                found[i] = tuple([(k, v, key, how) for k, v, key in items])
    return found


def _items_of(kind: str, role: str, blocks: list[dict[str, Any]]) -> list[Found]:
    """Items of one message's blocks."""
    inputs: dict[Piece, Any] = {}
    pieces = _pieces(kind, role, blocks, inputs)
    return [f for found in _pieces_items(pieces, inputs) for f in found]


def row_items(src: AgentSource) -> dict[int, list[Found]]:
    """Items of every row of the history, by seq (cached on the source). An identifier that
    is a tool's name (a tool the history calls, or one the format's taxonomy names) is not
    an item."""

    def build() -> dict[int, list[Found]]:
        h = src.history_view()  # read only
        tools: set[str] = set(default_taxonomy(src.format).get("tools") or ())
        # first the walk: each row's pieces (a text the history repeats, a file read again or
        # a call made again, is one piece); the blocks of each row parsed once for the tool
        # calls too, and let go before the next row
        number: dict[Piece, int] = {}  # each distinct piece's number
        # the numbers of each row's pieces, one row after another; each row's seq and the
        # end of its pieces in ids (arrays: no object a number, 8 bytes each)
        ids, ends, seqs = array("q"), array("q"), []
        inputs: dict[Piece, Any] = {}
        for (q, blocks), kind, role in zip(
            history_blocks(src), _strings(h["kind"]), _strings(h["role"]), strict=True
        ):
            if kind in ("context", "unknown") or not blocks:
                continue
            for p in _pieces(kind, role, blocks, inputs, tools, parsed=True):
                i = number.get(p)
                if i is None:
                    i = number[p] = len(number)
                ids.append(i)
            seqs.append(q)
            ends.append(len(ids))
        src.memo.get(_TOOLS, lambda: frozenset(tools))
        # then each piece scanned once, together (not between the parses of the walk)
        found = _without_tools(_pieces_items(list(number), inputs), tools)
        out: dict[int, list[Found]] = {}
        start = 0
        for q, end in zip(seqs, ends, strict=True):
            if end == start + 1:  # one piece (most rows): its items as they are
                items = list(found[ids[start]])
            else:
                items = [f for i in ids[start:end] for f in found[i]]
            start = end
            if items:
                out[int(q)] = items
        return out

    return src.memo.get(_ROW_ITEMS, build)


def _without_tools(found: list[tuple[Found, ...]], tools: set[str]) -> list[tuple[Found, ...]]:
    """The items of each piece without the identifiers that are tools' names (looked for
    in the pieces that hold one only)."""
    named = tools.intersection([f[2] for fs in found for f in fs if f[0] == "identifier"])
    if not named:
        return found
    return [
        tuple([f for f in fs if not (f[0] == "identifier" and f[2] in named)])
        if any(f[0] == "identifier" and f[2] in named for f in fs)
        else fs
        for fs in found
    ]


def _strings(col: pd.Series) -> list[str]:
    """A column's values as plain strings, NA as ``""`` (it matches no kind or role)."""
    return [x if isinstance(x, str) else "" for x in schema.plain(col)]


def message_items(
    kind: str, role: str, blocks: list[dict[str, Any]], tools: frozenset[str] = frozenset()
) -> list[Found]:
    """Items of one message (its history ``kind`` and ``role``, its content blocks), by the
    rule of :func:`row_items`: an identifier that is one of ``tools`` is not an item. What
    the compaction lab's extractive compactor keeps."""
    found = _items_of(kind, role, blocks)
    return [f for f in found if not (f[0] == "identifier" and f[2] in tools)]


def window_text(messages: list[tuple[str, list[dict[str, Any]]]]) -> str:
    """The text a window holds, for :func:`kept_by` (through :func:`summary_of`): of each
    ``(kind, blocks)`` message, its text blocks (a summary's without marker and footer),
    each tool call's name and input as JSON, each tool result's text. A window a compactor
    made is judged by this, as a summary is by its text."""
    out: list[str] = []
    for kind, blocks in messages:
        for b in blocks:
            t = b.get("type")
            if t == "text" and isinstance(b.get("text"), str):
                text = b["text"]
                out.append(strip_summary(text) if kind == "compaction_summary" else text)
            elif t == "tool_use":
                try:
                    inp = orjson.dumps(b.get("input"), option=orjson.OPT_NON_STR_KEYS).decode()
                except (orjson.JSONEncodeError, TypeError):  # an integer past 64 bits
                    inp = str(b.get("input"))
                out.append(f"{b.get('name')} {inp}")
            elif t == "tool_result":
                out.append(_result_text(b.get("content")))
    return "\n".join(out)


def tool_names(src: AgentSource) -> frozenset[str]:
    """The names that are tools, never items (:func:`row_items`' rule): every tool the
    history calls, and every tool the format's taxonomy names."""
    row_items(src)
    return src.memo.get(_TOOLS, frozenset)


# -- the summary ---------------------------------------------------------------------------
@dataclass
class Summary:
    """A summary's text, its items' ``(kind, key)`` and its words: what :func:`kept_by`
    compares an item with."""

    text: str
    keys: set[tuple[str, str]]
    words: set[str]
    #: the summary's words in order, one space between, padded with one at each end
    run: str
    #: every :data:`GRAM` characters of ``text`` when it is :data:`LONG` or longer: a value
    #: none of whose first ones are there is not in it, found without a scan of the text
    #: (many items against a long summary); None for a shorter text, scanned at once
    grams: set[str] | None

    def holds(self, value: str) -> bool:
        """Whether ``text`` contains ``value`` (``value in text``, most misses in O(1))."""
        if self.grams is None or len(value) < GRAM:
            return value in self.text
        return value[:GRAM] in self.grams and value in self.text


#: Length of the character runs :attr:`Summary.grams` holds.
GRAM = 8
#: Length from which a summary's text gets :attr:`Summary.grams` (shorter, a scan costs less
#: than the set).
LONG = 2000


def summary_of(text: str | None) -> Summary | None:
    """The :class:`Summary` of a summary text (None for None)."""
    return summaries_of([text])[0]


def summaries_of(texts: list[str | None]) -> list[Summary | None]:
    """:func:`summary_of` of each text, their items found together (:func:`texts_items`)."""
    known = [t for t in texts if t is not None]
    found = iter(texts_items([(t, "summary") for t in known], every_sentence=True))
    return [None if t is None else _summary(t, next(found)) for t in texts]


def _summary(text: str, found: list[Item]) -> Summary:
    ws = words(text)
    grams = {text[i : i + GRAM] for i in range(len(text) - GRAM + 1)} if len(text) >= LONG else None
    return Summary(text, {(k, key) for k, _, key in found}, set(ws), f" {' '.join(ws)} ", grams)


def summary_text(st: ReplayState, j: int) -> str | None:
    """The text of event ``j``'s summary (marker and footer stripped), or None when the
    record does not hold it: no summary row, a summary held encrypted, or a transcript's
    empty summary row (the format wrote no text: what it kept is unknown, not nothing; an
    ADF summary row is what the model wrote, even empty)."""
    if st.encrypted and st.encrypted[j]:
        return None
    s = st.summaries[j]
    row = st.rows.get(s) if s is not None else None
    if row is None or (st.stated and row.chars == 0):
        return None
    blocks, _ = parse_content(row.content)
    return strip_summary("\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str)))


def summaries(src: AgentSource) -> dict[int, Summary | None]:
    """Compaction id -> the :class:`Summary` of its summary text (None when the record does
    not hold it), each built once per source: every table that checks items reads these."""

    def build() -> dict[int, Summary | None]:
        st = replay_state(src)
        ids = compaction_ids(st)
        return dict(zip(ids, summaries_of([summary_text(st, j) for j in ids]), strict=True))

    return src.memo.get(_SUMMARIES, build)


#: Kinds of items that are prose: kept in other words when most of their words are there.
PROSE = frozenset(("instruction", "todo", "error"))


def item_words(kind: str, value: str) -> list[str]:
    """The words of an item a normalised match looks for: of a path's last part, of the
    whole value for every other kind."""
    return words(value.rsplit("/", 1)[-1] if kind == "path" else value)


def kept_by(kind: str, value: str, key: str, s: Summary) -> str:
    """``exact`` (the summary holds the value, or an item of the same kind and key),
    ``normalised`` (it holds the item's words: for prose (an instruction, a todo, an error
    line) :data:`WORD_SHARE` of them when there are three or more, else all, in any order;
    for a name (a path: the words of its last part; a URL, identifier, command, quantity:
    all its words) all of them in order and next to each other, so ``harvest-70-1.md`` is
    not kept by ``harvest-70-2.md`` and ``1 test``) or ``lost``."""
    if _exact((kind, key), value, s):
        return "exact"
    return _by_words(kind, item_words(kind, value), s)


def _exact(kind_key: tuple[str, str], value: str, s: Summary) -> bool:
    return kind_key in s.keys or s.holds(value)


def _by_words(kind: str, ws: list[str], s: Summary) -> str:
    """:func:`kept_by` of an item not kept exactly, from its :func:`item_words`."""
    if not ws:
        return "lost"
    if kind not in PROSE:  # every word there (set look-ups) before the run is scanned
        run = s.words.issuperset(ws) and f" {' '.join(ws)} " in s.run
        return "normalised" if run else "lost"
    hit = sum(map(s.words.__contains__, ws))
    need = len(ws) if len(ws) < 3 else math.ceil(WORD_SHARE * len(ws))
    return "normalised" if hit >= need else "lost"


# -- one compaction's items ----------------------------------------------------------------
@dataclass
class SweptItems:
    """The items one compaction swept, in the order first met (by seq), and the verdicts.

    ``seqs[i]`` are the swept rows holding item ``i``; ``carried[i]`` says it was seen only
    in an earlier summary this compaction swept; ``kept[i]`` is its verdict, None when the
    summary is not known."""

    kinds: list[str]
    values: list[str]
    keys: list[str]
    seqs: list[tuple[int, ...]]
    carried: list[bool]
    kept: list[str | None]
    summary: Summary | None

    def __len__(self) -> int:
        return len(self.kinds)

    @property
    def n_kept(self) -> int | None:
        """Items kept (exact or normalised); None when the summary is not known."""
        if self.summary is None:
            return None
        return len(self.kept) - self.kept.count("lost")


def compaction_ids(st: ReplayState) -> list[int]:
    """The events that are compactions (not clears, repairs or microcompactions)."""
    return [j for j in range(len(st.events)) if st.kinds[j] == "compaction"]


def swept_items(src: AgentSource) -> dict[int, SweptItems]:
    """Event id -> the items each compaction swept whose swept rows the record holds (see
    the module docstring); a compaction whose swept rows were discarded is absent."""
    return src.memo.get(_SWEPT, lambda: _swept_items(src))


def _swept_items(src: AgentSource) -> dict[int, SweptItems]:
    st = replay_state(src)
    items = row_items(src)
    summary_rows = {s for s in st.summaries if s is not None}
    summs = summaries(src)
    words_of: dict[tuple[str, str], list[str]] = {}  # an item's words, found once per file
    out: dict[int, SweptItems] = {}
    for j in compaction_ids(st):
        if not st.audit_ids[j]:  # the swept rows were discarded: what went is unknown
            continue
        tail = set(st.tails[j])
        # (kind, key) -> [value, the rows holding it, seen in earlier summaries only]
        found: dict[tuple[str, str], list[Any]] = {}
        for q in sorted(q for q in st.swept[j] if q not in tail):
            carried = q in summary_rows
            for k, v, key, _how in items.get(q, ()):
                e = found.get((k, key))
                if e is None:
                    found[(k, key)] = [v, [q], carried]
                    continue
                if e[1][-1] != q:
                    e[1].append(q)
                if not carried:
                    e[2] = False
        summ = summs[j]
        entries = list(found.values())
        out[j] = SweptItems(
            kinds=[k for k, _ in found],
            values=[e[0] for e in entries],
            keys=[key for _, key in found],
            seqs=[tuple(e[1]) for e in entries],
            carried=[e[2] for e in entries],
            kept=[None] * len(entries)
            if summ is None
            else [_verdict(kk, e[0], summ, words_of) for kk, e in zip(found, entries, strict=True)],
            summary=summ,
        )
    return out


def _verdict(
    kind_key: tuple[str, str], value: str, s: Summary, words_of: dict[tuple[str, str], list[str]]
) -> str:
    """:func:`kept_by` of the item of ``(kind, key)`` and ``value``, its words found once per
    file (in ``words_of``)."""
    if _exact(kind_key, value, s):
        return "exact"
    kind = kind_key[0]
    ws = words_of.get((kind, value))
    if ws is None:
        ws = words_of[(kind, value)] = item_words(kind, value)
    return _by_words(kind, ws, s)
