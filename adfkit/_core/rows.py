"""The row rule: what one loop row is, whatever stored it.

Every row, live (``adf_loop``) or archived (a decoded ``loop`` audit blob) or imported from
another agent's transcript, goes through the same functions here: :func:`parse_content` and
:func:`parse_tokens` read the stored values (and say whether they were malformed),
:func:`row_facts` classifies the row (ADF_FORMAT.md §3.4, §7, §8.1) and counts the characters
the runtime's estimator counts (§9.1). Pure functions over already-parsed values; no SQL, no
pandas.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any

import orjson

from adfkit._base.js import JSONError, js_length, js_string, parse_json

# --- kinds of rows (ADF_FORMAT.md §3.4, §7, §8.1) -------------------------------------------

KINDS = (
    "message",
    "assistant",
    "tool_result",
    "context",
    "compaction_summary",
    "trigger",
    "notice",
    "unknown",
)

#: Start of a trigger row's text -> trigger kind (§8.1). First match wins.
TRIGGER_PREFIXES: tuple[tuple[str, str], ...] = (
    ("A scheduled timer has fired", "timer"),
    ("Agent started", "startup"),
    ("[Inbox notification]", "inbox"),
    ("You received a message from agent", "inbox"),
    ("A batch of ", "batch"),
    ("A task has been created", "task"),
    ("A task has completed", "task"),
    ("A file has been ", "file_change"),
    ("An outbound message was sent", "outbox"),
    ("A tool call has been intercepted", "tool_call"),
    ("A log entry has been recorded", "log"),
    ("An LLM call completed", "llm_call"),
    ("You have been triggered.", "fallback"),
)

#: Start of a runtime notice's text -> notice kind (§3.4).
NOTICE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("[Continue working autonomously", "continue"),
    ("[You have responded ", "no_tools_escalation"),
    ("[USER INTERRUPT", "user_interrupt"),
    ("Context is about to be compacted.", "memory_flush"),
    ("[System notice:", "system_notice"),
    ("[System] Turn ended by owner", "turn_ended"),
    ("[Provider error (", "provider_error"),
    ("[Provider unavailable (", "provider_unavailable"),
)

_TRIGGER_OR_NOTICE = tuple(p for p, _ in TRIGGER_PREFIXES + NOTICE_PREFIXES)

COMPACTION_MARKERS = ("[Loop Compacted, audited]", "[Loop Compacted]")
SUMMARY_FOOTER = "\n\n---\nYour loop was compacted."
_CONTEXT_RE = re.compile(r"^\[Context: ([^\]]+)\] ?")


def parse_context_header(text: str) -> dict[str, str] | None:
    """``[Context: cat | loop_inject=v2 | origin=o | key=k] ...`` -> its parts, else None.

    Examples
    --------
    >>> parse_context_header("[Context: skills | loop_inject=v2 | key=reg] body")
    {'category': 'skills', 'loop_inject': 'v2', 'key': 'reg'}
    """
    m = _CONTEXT_RE.match(text)
    if not m:
        return None
    parts = [p.strip() for p in m.group(1).split(" | ")]
    out = {"category": parts[0]}
    for p in parts[1:]:
        k, sep, v = p.partition("=")
        if sep:
            out[k] = v
    return out


def context_body(text: str) -> str:
    """The text of a context row without its ``[Context: ...]`` header (and the one space
    after it); other text unchanged.

    Examples
    --------
    >>> context_body("[Context: system_prompt] You are helpful.")
    'You are helpful.'
    """
    m = _CONTEXT_RE.match(text)
    return text[m.end() :] if m else text


def classify_user(first_text: Any, has_blocks: bool) -> tuple[str, str | None]:
    """``(kind, subkind)`` of a user row without tool results, from the ``text`` of its first
    text block (None when it has none) and whether it has any block."""
    if not isinstance(first_text, str):
        return ("message", None) if has_blocks else ("unknown", None)
    if first_text.startswith("[Context: "):
        hdr = parse_context_header(first_text)
        if hdr:
            return "context", hdr["category"]
    if first_text.startswith("[Loop Compacted"):
        return "compaction_summary", "audited" if first_text.startswith(
            COMPACTION_MARKERS[0]
        ) else "unaudited"
    if not first_text.startswith(_TRIGGER_OR_NOTICE):  # one call for most messages
        return "message", "chat"
    for prefix, kind in TRIGGER_PREFIXES:
        if first_text.startswith(prefix):
            return "trigger", kind
    for prefix, kind in NOTICE_PREFIXES:
        if first_text.startswith(prefix):
            return "notice", kind
    return "message", "chat"


def classify(role: str | None, blocks: list[dict[str, Any]]) -> tuple[str, str | None]:
    """Return ``(kind, subkind)`` of one loop row from its role and blocks.

    ``subkind`` is the context category, trigger kind or notice kind, else None.

    Examples
    --------
    >>> classify("user", [{"type": "text", "text": "[Context: skills] ..."}])
    ('context', 'skills')
    >>> classify("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}])
    ('tool_result', None)
    """
    kind, sub = row_facts(role, blocks)[:2]
    return kind, sub


# --- the runtime's fast estimator (§9.1) -------------------------------------------------


def obj_chars(x: Any) -> int:
    """The estimator's size of a JSON value: ``obj(x)`` in ADF_FORMAT.md §9.1.

    Iterative, so a hostile value nested a thousand levels deep cannot exhaust the stack.
    """
    total = 0
    stack = [x]
    while stack:
        v = stack.pop()
        if v is None:
            total += 4
        elif isinstance(v, str):
            total += js_length(v) + 2
        elif isinstance(v, bool | int | float):
            total += 5
        elif isinstance(v, list):
            total += 2 + len(v)
            stack.extend(v)
        elif isinstance(v, dict):
            total += 2 + sum(js_length(str(k)) + 2 for k in v)
            stack.extend(v.values())
        else:
            total += 10
    return total


def block_chars(b: dict[str, Any]) -> tuple[int, int]:
    """``(text_chars, media_chars)`` the estimator counts for one block (no role overhead)."""
    t = b.get("type")
    if t == "text":
        v = b.get("text")
        return (js_length(v) if isinstance(v, str) else 0), 0
    if t == "tool_use":
        name = b.get("name") or ""
        return js_length(str(name)) + obj_chars(b.get("input")), 0
    if t == "tool_result":
        return js_length(js_string(b.get("content"))), 0
    if t == "thinking":
        v = b.get("thinking")
        n = js_length(v) if isinstance(v, str) else 0
        if b.get("reasoning_details") is not None:
            n += obj_chars(b.get("reasoning_details"))
        return n, 0
    if t in ("image_url", "video_url"):
        u = b.get(t) if isinstance(b.get(t), dict) else b
        url = u.get("url") if isinstance(u, dict) else None
        return 0, (js_length(url) if isinstance(url, str) else 0)
    if t == "input_audio":
        a = b.get("input_audio")
        a = a if isinstance(a, dict) else b
        data, fmt = a.get("data"), a.get("format")
        return (
            js_length(fmt) if isinstance(fmt, str) else 0,
            js_length(data) if isinstance(data, str) else 0,
        )
    return 0, 0


#: Characters the estimator adds per message (role overhead).
MESSAGE_OVERHEAD = 16


def estimate_tokens(text_chars: int, media_chars: int = 0) -> int:
    """``ceil(text_chars / 3.5) + ceil(media_chars / 100)``, the runtime's estimate."""
    return math.ceil(text_chars / 3.5) + math.ceil(media_chars / 100)


def block_text(b: dict[str, Any]) -> str:
    """A readable one-string rendering of a block (for search and previews)."""
    t = b.get("type")
    if t == "text":
        v = b.get("text")
        return v if isinstance(v, str) else ""
    if t == "thinking":
        v = b.get("thinking")
        return v if isinstance(v, str) else ""
    if t == "tool_result":
        return js_string(b.get("content"))
    return ""


def strip_summary(text: str) -> str:
    """The summary text of a compaction row, without its marker and footer."""
    for m in COMPACTION_MARKERS:
        if text.startswith(m):
            text = text[len(m) :].lstrip(" ")
            break
    i = text.rfind(SUMMARY_FOOTER)
    return text[:i] if i >= 0 else text


# --- stored values -----------------------------------------------------------------------

TOKEN_KEYS = ("input", "output", "cache_read", "cache_write", "reasoning")
#: The token columns of loop/history frames, ``tokens_total`` last.
TOKEN_COLUMNS = (*(f"tokens_{k}" for k in TOKEN_KEYS), "tokens_total")


def parse_tokens(raw: Any) -> tuple[dict[str, int | None], bool]:
    """``tokens`` column or blob field -> ({key: value}, malformed).

    JSON object (only present keys), bare integer (legacy total), NULL or unparseable text.
    """
    out: dict[str, int | None] = dict.fromkeys(TOKEN_KEYS)
    out["total"] = None
    if raw is None:
        return out, False
    val = raw
    if isinstance(raw, str | bytes):
        try:
            val = parse_json(raw)
        except JSONError:
            return out, True
    if isinstance(val, bool):
        return out, True
    if isinstance(val, int | float):
        out["total"] = as_count(val)
        return out, out["total"] is None
    if val is None:
        return out, False
    if not isinstance(val, dict):
        return out, True
    bad = False
    for k in TOKEN_KEYS:
        v = val.get(k)
        if isinstance(v, int | float) and not isinstance(v, bool):
            out[k] = as_count(v)
            bad = bad or out[k] is None
        elif v is not None:
            bad = True
    if not bad and (out["input"] is not None or out["output"] is not None):
        out["total"] = as_count((out["input"] or 0) + (out["output"] or 0))
    return out, bad


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def token_counts(raw: Any, na: Any = None) -> tuple[Any, Any, Any, Any, Any, Any, bool]:
    """:func:`parse_tokens` as a tuple: ``(input, output, cache_read, cache_write, reasoning,
    total, malformed)``, with ``na`` for every count that is absent.

    Examples
    --------
    >>> token_counts({"input": 10, "output": 2})
    (10, 2, None, None, None, 12, False)
    >>> token_counts('{"input": "x", "output": 1}', na=-1)
    (-1, 1, -1, -1, -1, -1, True)
    """
    if type(raw) is dict:
        get = raw.get
        i, o = get("input"), get("output")
        cr, cw, r = get("cache_read"), get("cache_write"), get("reasoning")
        # The common case, decided without a call: every count absent or a modest integer.
        if (
            (i is None or (type(i) is int and 0 <= i < _SAFE))
            and (o is None or (type(o) is int and 0 <= o < _SAFE))
            and (cr is None or (type(cr) is int and 0 <= cr < _SAFE))
            and (cw is None or (type(cw) is int and 0 <= cw < _SAFE))
            and (r is None or (type(r) is int and 0 <= r < _SAFE))
        ):
            if i is None:
                total = na if o is None else o
                i = na
            else:
                total = i if o is None else i + o
            return (
                i,
                na if o is None else o,
                na if cr is None else cr,
                na if cw is None else cw,
                na if r is None else r,
                total,
                False,
            )
    if raw is None:
        return na, na, na, na, na, na, False
    out, bad = parse_tokens(raw)
    vals = [na if (v := out[k]) is None else v for k in (*TOKEN_KEYS, "total")]
    return vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], bad


#: The largest token count :func:`as_count` takes: no model call reports a trillion tokens, and
#: sums of millions of such counts (a call's parts, a session's cumulative totals) still fit
#: Int64, so no sum of counts can overflow (2**62 in each of four parts did).
MAX_COUNT = 10**12
#: :func:`token_counts`' fast path takes a plain int below this as a count, :func:`as_count`'s
#: rule (it took counts up to 2**62, which the bound then made NA on the slow path only).
_SAFE = MAX_COUNT + 1


def as_count(v: Any) -> int | None:
    """A token count: a whole number from 0 to :data:`MAX_COUNT` (``5.0`` counts as 5), else
    None (malformed: negative, fractional, NaN, huge, text or bool counts are flagged, never
    summed). The one rule for every reader (ADF rows, Claude Code and Codex usage).

    Examples
    --------
    >>> [as_count(v) for v in (5, 5.0, -1, 1.5, 1e300, 2**62, 2**63, "5", True)]
    [5, 5, None, None, None, None, None, None, None]
    """
    if type(v) is not int and type(v) is not float:
        return None
    if not (0 <= v <= MAX_COUNT):  # also NaN
        return None
    if isinstance(v, float) and not v.is_integer():
        return None
    return int(v)


def parse_content(raw: Any) -> tuple[list[dict[str, Any]], bool]:
    """``content_json`` (text or parsed) -> (list of block dicts, malformed)."""
    val = raw
    if isinstance(raw, (str, bytes)):  # a tuple: ``str | bytes`` is made anew at each call
        try:
            val = parse_json(raw)
        except JSONError:
            return [], True
    if isinstance(val, str):  # a plain-string message: one text block
        return [{"type": "text", "text": val}], False
    if isinstance(val, dict):
        val = [val]
    if not isinstance(val, list):
        return [], True
    blocks = [b for b in val if isinstance(b, dict)]
    return blocks, len(blocks) != len(val)


def row_text(raw: Any) -> str:
    r"""Every piece of text a row holds, one per line: its text and thinking, each tool call's
    name and the strings (and numbers) of its input, each tool result's text; what a person
    searching a transcript means by "the row contains it". Keys of the JSON are not text.

    Examples
    --------
    >>> row_text('[{"type":"text","text":"hi"},'
    ...          '{"type":"tool_use","name":"Read","input":{"path":"a/explain.go","n":2}}]')
    'hi\nRead\na/explain.go\n2'
    >>> row_text('[{"type":"tool_result","content":[{"type":"text","text":"ok: explain.go"}]}]')
    'ok: explain.go'
    """
    out: list[str] = []
    for b in parse_content(raw)[0]:
        t = b.get("type")
        if t == "tool_use":
            out.append(str(b.get("name") or ""))
            _strings(b.get("input"), out)
        elif t == "tool_result":
            _strings(b.get("content"), out)
        else:
            _strings(b.get("text") if t == "text" else b.get("thinking", b.get("text")), out)
    return "\n".join(x for x in out if x)


def _strings(value: Any, out: list[str]) -> None:
    """The strings and numbers inside a JSON value, in order (a content block's ``type`` is
    not text: a result's ``[{"type": "text", "text": ...}]`` gives its text only)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        out.append(str(value))
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in ("type", "id", "tool_use_id", "cache_control"):
                _strings(v, out)


def blob_content(value: Any) -> Any:
    """A loop blob element's ``content_json`` as :meth:`RowBuilder.add` takes it.

    Blobs hold it parsed (ADF_FORMAT.md §4.2). A string there is either a stringified array
    (accepted defensively) or a plain-string message, which the live table stores as JSON text.
    """
    if isinstance(value, str):
        try:
            if isinstance(parse_json(value), list | dict):
                return value
        except JSONError:
            pass
        return orjson.dumps(value).decode()
    return value


#: The size :func:`sys.getsizeof` gives a one-character string of 4-byte characters, less its
#: characters and terminator: every string holding a character beyond U+FFFF (stored with 4
#: bytes per character) measures at least this plus 4 bytes per character and terminator.
_UCS4_BASE = sys.getsizeof("\U0001f600") - 8
_sizeof = sys.getsizeof


def _wide_length(s: str) -> int:
    """:func:`js_length` of a non-ASCII string, without encoding it when it cannot hold a
    character beyond U+FFFF (a UTF-16 pair in JavaScript): then its length is ``len(s)``."""
    if _sizeof(s) < _UCS4_BASE + 4 * (len(s) + 1):
        return len(s)
    return js_length(s)


def _obj(x: Any) -> int:
    """:func:`obj_chars` for parsed JSON, dispatching on exact types."""
    try:
        return _obj_fast(x)
    except RecursionError:  # a hostile value nested ~1000 deep: the iterative version
        return obj_chars(x)


def _obj_fast(x: Any) -> int:
    # Scalar members are counted inline (most tool inputs are flat): one call per container.
    t = type(x)
    if t is dict:
        n = 2
        for k, v in x.items():
            n += (len(k) if type(k) is str and k.isascii() else js_length(str(k))) + 2
            t = type(v)
            if t is str:
                n += (len(v) if v.isascii() else _wide_length(v)) + 2
            elif t is int or t is float or t is bool:
                n += 5
            elif v is None:
                n += 4
            else:
                n += _obj_fast(v)
        return n
    if t is list:
        n = 2 + len(x)
        for v in x:
            t = type(v)
            if t is str:
                n += (len(v) if v.isascii() else _wide_length(v)) + 2
            elif t is int or t is float or t is bool:
                n += 5
            elif v is None:
                n += 4
            else:
                n += _obj_fast(v)
        return n
    if t is str:
        return (len(x) if x.isascii() else _wide_length(x)) + 2
    if t is int or t is float or t is bool:
        return 5
    if x is None:
        return 4
    return obj_chars(x)


def _blocks_facts(
    blocks: list[dict[str, Any]],
) -> tuple[str, str, str, int, int, Any, bool]:
    """:func:`row_facts` of a row of several blocks (or none): ``(block_types, tool_names, text,
    chars, media_chars, first text block's text, whether a block is a tool result)``."""
    first_text: Any = None
    saw_result = False
    parts: list[str] = []
    tlist: list[str] = []
    tool_list: list[str] = []
    chars = media = 0
    for b in blocks:
        t = b.get("type")
        if t == "text":
            tlist.append("text")
            v = b.get("text")
            if first_text is None:
                first_text = v
            if type(v) is str:
                parts.append(v)
                chars += len(v) if v.isascii() else _wide_length(v)
        elif t == "tool_use":
            tlist.append("tool_use")
            name = b.get("name")
            tool_list.append(str(name))
            s = str(name or "")
            chars += (len(s) if s.isascii() else _wide_length(s)) + _obj(b.get("input"))
        elif t == "tool_result":
            tlist.append("tool_result")
            saw_result = True
            v = b.get("content")
            if type(v) is str:
                chars += len(v) if v.isascii() else _wide_length(v)
            else:
                chars += js_length(js_string(v))
        elif t == "thinking" and b.get("reasoning_details") is None:
            tlist.append("thinking")
            v = b.get("thinking")
            if type(v) is str:
                chars += len(v) if v.isascii() else _wide_length(v)
        else:
            tlist.append(t if type(t) is str else str(t))
            tc, mc = block_chars(b)
            chars += tc
            media += mc
    types = ",".join(tlist)
    tools = ",".join(tool_list)
    text = parts[0] if len(parts) == 1 else "\n".join(parts)
    return types, tools, text, chars, media, first_text, saw_result


def row_facts(
    role: Any, blocks: list[dict[str, Any]], hint: str | None = None
) -> tuple[str, str | None, str, str, str, int, int]:
    """The derived facts of one row: ``(kind, subkind, block_types, tool_names, text, chars,
    media_chars)``.

    ``blocks`` are the row's block objects (:func:`parse_content`); ``block_types`` and
    ``tool_names`` are comma-joined, ``text`` joins the text blocks with newlines, ``chars`` and
    ``media_chars`` are the estimator's counts without the per-message overhead.

    ``hint`` is the kind the record itself states, when its format says so (a transcript's
    compaction summary, injected context, steering message, error notice: one of
    :data:`KIND_HINTS`); it replaces the classification of a ``user`` or ``assistant`` row (see
    :func:`hinted_kind`). ADF rows carry none: their kind comes from their content alone.

    Examples
    --------
    >>> row_facts("assistant", [{"type": "text", "text": "hi"},
    ...                         {"type": "tool_use", "id": "t", "name": "fs_read", "input": {}}])
    ('assistant', None, 'text,tool_use', 'fs_read', 'hi', 11, 0)
    """
    first_text: Any = None
    saw_result = False
    if len(blocks) == 1:
        # One block (a message, trigger, context row or single tool result): the common case.
        b = blocks[0]
        t = b.get("type")
        tools = ""
        media = 0
        if t == "text":
            types = "text"
            first_text = v = b.get("text")
            if type(v) is str:
                text = v
                chars = len(v) if v.isascii() else _wide_length(v)
            else:
                text, chars = "", 0
        elif t == "tool_result":
            types, text = "tool_result", ""
            saw_result = True
            v = b.get("content")
            if type(v) is str:
                chars = len(v) if v.isascii() else _wide_length(v)
            else:
                chars = js_length(js_string(v))
        elif t == "tool_use":
            name = b.get("name")
            s = str(name or "")
            types, tools, text = "tool_use", str(name), ""
            chars = (len(s) if s.isascii() else _wide_length(s)) + _obj(b.get("input"))
        elif t == "thinking" and b.get("reasoning_details") is None:
            v = b.get("thinking")
            types, text = "thinking", ""
            chars = (len(v) if v.isascii() else _wide_length(v)) if type(v) is str else 0
        else:
            types, text = (t if type(t) is str else str(t)), ""
            chars, media = block_chars(b)
    else:
        types, tools, text, chars, media, first_text, saw_result = _blocks_facts(blocks)
    if role == "assistant" and hint is None:  # the common case, decided without a call
        return "assistant", None, types, tools, text, chars, media
    kind, sub = _kind(role, hint, first_text, saw_result, bool(blocks))
    return kind, sub, types, tools, text, chars, media


def _kind(
    role: Any, hint: str | None, first_text: Any, saw_result: bool, has_blocks: bool
) -> tuple[str, str | None]:
    """``(kind, subkind)`` of a row from its role, the kind its record states, the text of its
    first text block, whether a block is a tool result and whether it has any block."""
    if hint is not None and role in ("user", "assistant"):
        return hinted_kind(hint, first_text)
    if role == "assistant":
        return "assistant", None
    if role != "user":
        return "unknown", None
    if saw_result:
        return "tool_result", None
    return classify_user(first_text, has_blocks)


def stored_kind(
    role: Any, blocks: list[dict[str, Any]], bad_content: bool, hint: str | None = None
) -> tuple[str, str | None]:
    """``(kind, subkind)`` of :func:`stored_facts`, without the text and the counts."""
    if bad_content and not blocks:
        return "unknown", row_facts(role, blocks, hint)[1]
    if role == "assistant" and hint is None:  # :func:`_kind`'s answer, its blocks unread
        return "assistant", None
    first_text: Any = None
    saw_result = False
    for b in blocks:
        t = b.get("type")
        if t == "text":
            if first_text is None:
                first_text = b.get("text")
        elif t == "tool_result":
            saw_result = True
    return _kind(role, hint, first_text, saw_result, bool(blocks))


def stored_facts(
    role: Any, blocks: list[dict[str, Any]], bad_content: bool, hint: str | None = None
) -> tuple[str, str | None, str, str, str, int, int]:
    """:func:`row_facts` of a stored row whose content :func:`parse_content` gave as ``blocks``
    (``bad_content``: malformed): a malformed content with no block left is ``unknown``."""
    facts = row_facts(role, blocks, hint)
    if bad_content and not blocks:
        return ("unknown", *facts[1:])
    return facts


#: ``created_at`` values (ms) outside this range (about years 1677-2262) are unknown.
MS_LIMIT = (2**63 - 1) // 1_000_000


def created_ms(v: Any, na: Any = None) -> Any:
    """A row's ``created_at`` (ms since the epoch) as stored, or ``na`` when it is not a
    usable time: not an int, 0, or outside :data:`MS_LIMIT`."""
    if isinstance(v, int) and not isinstance(v, bool) and v and -MS_LIMIT < v < MS_LIMIT:
        return v
    return na


#: Kinds a record may state for its row (``row_facts(hint=...)``).
KIND_HINTS = ("compaction_summary", "context", "message", "notice")

_LABEL_RE = re.compile(r"\s*(?:<([A-Za-z][\w.:-]*)|\[([A-Za-z][\w .-]*?)[:\]]|#+\s+(\S+))")


def hinted_kind(hint: str, first_text: Any) -> tuple[str, str | None]:
    """``(kind, subkind)`` of a row whose record states its kind (``hint``).

    ``context``: the subkind (and context category) is the ``[Context: ...]`` category if the
    text has that header, else the label the text opens with: an XML-style tag
    (``<system-reminder>`` -> ``system-reminder``), a bracketed label (``[attachment: x]`` ->
    ``attachment``) or a Markdown heading's first word; else ``injected``. ``message``: a chat
    message (subkind ``chat``). ``compaction_summary`` and ``notice``: no subkind (no ADF marker
    text). An unknown hint gives ``unknown``.

    Examples
    --------
    >>> hinted_kind("context", "<system-reminder>As you answer...")
    ('context', 'system-reminder')
    >>> hinted_kind("compaction_summary", "This session is being continued...")
    ('compaction_summary', None)
    """
    if hint == "context":
        if isinstance(first_text, str):
            hdr = parse_context_header(first_text)
            if hdr:
                return "context", hdr["category"]
            m = _LABEL_RE.match(first_text)
            if m:
                return "context", next(g for g in m.groups() if g)
        return "context", "injected"
    if hint == "message":
        return "message", "chat"
    if hint in ("compaction_summary", "notice"):
        return hint, None
    return "unknown", None
