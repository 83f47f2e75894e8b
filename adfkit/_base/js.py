"""JavaScript semantics the ADF runtime's numbers depend on, in one place.

The runtime is written in TypeScript: its sizes are UTF-16 lengths, its tool-call signatures
hash ``JSON.stringify`` output, its previews use ``String(x)``. Everything here is pure and
works on values parsed from JSON:

- :func:`js_length`: ``s.length`` (UTF-16 code units);
- :func:`js_string`: ``String(x ?? '')``;
- :func:`js_stringify`: ``JSON.stringify(x)``;
- :func:`string_hash` and :func:`base36`: the analyzer's 32-bit string hash and its radix-36 text;
- :func:`js_falsy`: JavaScript falsiness of a JSON value;
- :func:`parse_json`: ``JSON.parse`` of what ``JSON.stringify`` wrote, lone surrogates included.
"""

from __future__ import annotations

import contextlib
import decimal
import json
import math
import re
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

import orjson


def js_length(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript counts it."""
    if text.isascii():
        return len(text)
    # One C-level pass: 2 bytes per BMP code unit, 4 per astral character (a surrogate pair).
    # "surrogatepass" counts a lone surrogate as the one unit JavaScript sees.
    return len(text.encode("utf-16-le", "surrogatepass")) >> 1


_END = object()


def _js_scalar(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return str(int(x)) if x.is_integer() else repr(x)
    return "[object Object]"


def js_string(x: Any) -> str:
    """JavaScript ``String(x ?? '')`` for JSON values (iterative over nested arrays)."""
    if not isinstance(x, list):
        return _js_scalar(x)
    out: list[str] = []
    iters = [iter(x)]
    first = [True]
    while iters:
        item = next(iters[-1], _END)
        if item is _END:
            iters.pop()
            first.pop()
            continue
        if not first[-1]:
            out.append(",")
        first[-1] = False
        if isinstance(item, list):
            iters.append(iter(item))
            first.append(True)
        else:
            out.append(_js_scalar(item))
    return "".join(out)


_INDEX_KEY = re.compile(r"^(?:0|[1-9][0-9]*)$")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_number(x: float) -> str:
    """JavaScript's ``Number.prototype.toString`` for a finite float."""
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    sign = "-" if x < 0 else ""
    # repr gives the shortest round-trip digits, as JavaScript does.
    _, dig, exp = decimal.Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, dig)).lstrip("0")
    e = int(exp)
    while len(digits) > 1 and digits.endswith("0"):
        digits, e = digits[:-1], e + 1
    k = len(digits)
    n = k + e  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{'+' if e > 0 else '-'}{abs(e)}"


def _js_string(s: str) -> str:
    out = encode_basestring(s)  # what json.dumps(s, ensure_ascii=False) calls
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` as JavaScript writes it, for values parsed from JSON.

    Compact separators, non-ASCII unescaped, integer-valued floats without ``.0``, JavaScript
    number formatting, integer-like object keys first in ascending order (then the others in
    insertion order), lone surrogates escaped.

    Examples
    --------
    >>> from adfkit._base.js import js_stringify
    >>> js_stringify({"b": 1.0, "2": "é", "1": [True, None, 1e-7]})
    '{"1":[true,null,1e-7],"2":"é","b":1}'
    """
    if _orjson_writes_it(value, 0):
        with contextlib.suppress(TypeError):  # beyond 64-bit integers, a lone surrogate
            return orjson.dumps(value).decode()
    try:
        return _js_stringify_rec(value)
    except RecursionError:  # hostile input nested ~1000 deep: same text, explicit stack
        return _js_stringify_deep(value)


#: Deepest value :func:`js_stringify` hands to orjson (orjson's own limit is 255 levels).
_ORJSON_DEPTH = 200


def _orjson_writes_it(value: Any, depth: int) -> bool:
    """Whether ``orjson.dumps(value)`` is ``JSON.stringify(value)``: no float (JavaScript
    writes ``1.0`` as ``1``), no integer-like object key (JavaScript puts them first), only
    strings, integers, booleans, null, lists and string-keyed objects, not too deep.
    orjson escapes strings as :func:`_js_string` does (quote, backslash and control
    characters only); it refuses lone surrogates and integers beyond 64 bits (TypeError)."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if depth > _ORJSON_DEPTH:
        return False
    if t is list:
        return all(_orjson_writes_it(v, depth + 1) for v in value)
    if t is dict:
        for k, v in value.items():
            if type(k) is not str or (k[:1].isdigit() and _INDEX_KEY.match(k)):
                return False
            if not _orjson_writes_it(v, depth + 1):
                return False
        return True
    return False


def _js_stringify_rec(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_js_stringify_rec(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return (
            "{"
            + ",".join(f"{_js_string(k)}:{_js_stringify_rec(v)}" for k, v in _js_items(value))
            + "}"
        )
    return _js_string(str(value))


def _js_items(value: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    """An object's properties in JavaScript's order: integer-like keys first, ascending, then
    the others in insertion order."""
    items = {str(k): v for k, v in value.items()}
    idx = sorted((k for k in items if _INDEX_KEY.match(k) and int(k) < 2**32 - 1), key=int)
    rest = [k for k in items if not (_INDEX_KEY.match(k) and int(k) < 2**32 - 1)]
    return [(k, items[k]) for k in idx + rest]


_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def base36(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = _B36[r] + out
        if not n:
            return out


def string_hash(s: str) -> int:
    """``h = h * 31 + c (mod 2**32)`` over the UTF-16 code units of ``s`` (unsigned).

    Examples
    --------
    >>> from adfkit._base.js import string_hash
    >>> string_hash("hello")  # Java's "hello".hashCode()
    99162322
    """
    return string_hashes([s])[0]


#: Code units hashed together by :func:`string_hashes`: arrays of a few hundred KB, which
#: stay in the allocator's heap (larger ones are mapped and faulted in afresh, 3x slower).
_HASH_CHUNK = 1 << 16


def string_hashes(texts: Sequence[str]) -> list[int]:
    """:func:`string_hash` of each text, computed over all their code units at once:
    ``sum(c[i] * 31 ** (n - 1 - i)) mod 2**32``, in chunks of about :data:`_HASH_CHUNK`
    units."""
    out: list[int] = []
    i = 0
    while i < len(texts):
        j, size = i + 1, len(texts[i])
        while j < len(texts) and size + len(texts[j]) <= _HASH_CHUNK:
            size += len(texts[j])
            j += 1
        out += _hash_chunk(texts[i:j])
        i = j
    return out


def _hash_chunk(texts: Sequence[str]) -> list[int]:
    import numpy as np  # here: the modules that stringify (adfkit usage's path) need no numpy

    raw = [t.encode("utf-16-le", "surrogatepass") for t in texts]
    lengths = np.array([len(b) // 2 for b in raw], dtype=np.int64)
    units = np.frombuffer(b"".join(raw), dtype="<u2").astype(np.uint32)
    out = np.zeros(len(raw), dtype=np.uint32)
    if not len(units):
        return out.tolist()
    # 31 ** k mod 2**32 for k < the longest text (uint32 products wrap: the modulus)
    powers = np.ones(int(lengths.max()), dtype=np.uint32)
    powers[1:] = np.cumprod(np.full(len(powers) - 1, 31, dtype=np.uint32), dtype=np.uint32)
    ends = np.cumsum(lengths)
    exponent = np.repeat(ends, lengths) - 1 - np.arange(len(units))
    terms = units * powers[exponent]
    some = lengths > 0
    out[some] = np.add.reduceat(terms, (ends - lengths)[some], dtype=np.uint32)
    return out.tolist()


def js_falsy(x: Any) -> bool:
    """JavaScript falsiness for JSON values (``{}`` and ``[]`` are truthy).

    Examples
    --------
    >>> from adfkit._base.js import js_falsy
    >>> js_falsy(0), js_falsy(""), js_falsy({}), js_falsy(None)
    (True, True, False, True)
    """
    if x is None or x is False:
        return True
    if isinstance(x, int | float) and not isinstance(x, bool):
        return x == 0 or (isinstance(x, float) and math.isnan(x))
    return isinstance(x, str) and x == ""


def _js_stringify_deep(value: Any) -> str:
    """:func:`js_stringify` with an explicit stack (for values nested too deep to recurse)."""
    out: list[str] = []
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        literal, x = stack.pop()
        if literal:
            out.append(x)
            continue
        tasks: list[tuple[bool, Any]] = []
        if isinstance(x, list | tuple):
            tasks.append((True, "["))
            for i, v in enumerate(x):
                if i:
                    tasks.append((True, ","))
                tasks.append((False, v))
            tasks.append((True, "]"))
        elif isinstance(x, Mapping):
            tasks.append((True, "{"))
            for i, (k, v) in enumerate(_js_items(x)):
                tasks.append((True, ("," if i else "") + _js_string(k) + ":"))
                tasks.append((False, v))
            tasks.append((True, "}"))
        else:
            out.append(_js_stringify_rec(x))
            continue
        stack.extend(reversed(tasks))
    return "".join(out)


#: What a lone surrogate (half of a UTF-16 pair, e.g. a string cut in an emoji) reads as.
LONE_SURROGATE = "\ufffd"


class JSONError(ValueError):
    """Text that is not JSON (or not UTF-8)."""


def parse_json(raw: str | bytes | bytearray | memoryview) -> Any:
    r"""``JSON.parse(raw)`` as JavaScript reads what ``JSON.stringify`` wrote.

    JavaScript strings may hold lone UTF-16 surrogates (a string cut in the middle of an emoji
    pair), which ``JSON.stringify`` writes as ``"\ud83d"``. orjson rejects them; here they are
    kept visible as U+FFFD, one UTF-16 unit as in JavaScript, so every size stays what the
    runtime counted. Raises :class:`JSONError` for text that is not JSON or bytes that are not
    UTF-8.

    Examples
    --------
    >>> parse_json(b'{"t": "cut \\ud83d", "ok": "\\ud83d\\ude42"}')
    {'t': 'cut �', 'ok': '🙂'}
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        first = exc
    # The slow path, only for text orjson refuses: the stdlib reads lone surrogate escapes.
    try:
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8")
        value = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise JSONError(str(first)) from None
    try:
        return _without_lone_surrogates(value)
    except RecursionError:  # nested nearly as deep as the parser allows: refuse it whole
        raise JSONError(f"{first} (nested too deep to clean)") from None


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return (
            _LONE_SURROGATE.sub(LONE_SURROGATE, value) if _LONE_SURROGATE.search(value) else value
        )
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


def loads_or_none(text: Any) -> Any:
    """``JSON.parse(text)`` of a JSON string, or None when it is not text or not JSON.

    Examples
    --------
    >>> loads_or_none('{"a": [1, 2]}'), loads_or_none("not json"), loads_or_none(None)
    ({'a': [1, 2]}, None, None)
    """
    if not isinstance(text, str):
        return None
    try:
        return parse_json(text)
    except JSONError:
        return None


#: Containers deeper than this in one parsed document are refused by :func:`too_deep`'s
#: callers: agents write tens of levels; the recursive walks after parsing (and orjson's own
#: ``dumps``, which stops at 255) cannot take much more.
MAX_DEPTH = 200


def too_deep(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """Where ``value`` holds a list or object nested more than ``limit`` levels deep (a path
    such as ``messages[1].content[0]``), or None. Iterative: any depth is measured.

    Examples
    --------
    >>> too_deep({"a": [[[1]]]}, limit=3)
    'a[0][0]'
    >>> too_deep({"a": [1]}, limit=3) is None
    True
    """
    level: list[Any] = [value]  # the containers one level down, a level at a time
    depth = 1
    while level:
        if depth > limit:
            return _place_of_depth(value, limit)
        below: list[Any] = []
        for node in level:
            if isinstance(node, dict):
                below += [v for v in node.values() if isinstance(v, _CONTAINERS)]
            elif isinstance(node, list):
                below += [v for v in node if isinstance(v, _CONTAINERS)]
        level = below
        depth += 1
    return None


_CONTAINERS = (dict, list)


def _place_of_depth(value: Any, limit: int) -> str:
    """The path of the first container found more than ``limit`` levels deep (only walked
    when there is one)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, place = stack.pop()
        if depth > limit:
            place = place.lstrip(".")
            return place if len(place) <= 80 else f"{place[:60]}...{place[-16:]}"
        items: Any = ()
        if isinstance(node, dict):
            items = ((f"{place}.{k}", v) for k, v in node.items())
        elif isinstance(node, list):
            items = ((f"{place}[{i}]", v) for i, v in enumerate(node))
        stack.extend((v, depth + 1, p) for p, v in items if isinstance(v, dict | list))
    return ""  # pragma: no cover - only called when too_deep found one


#: A JSON text of ``n`` bytes may hold at most ``n // CONTAINER_BYTES`` lists and objects (and
#: always :data:`MIN_CONTAINERS`): real agent files hold one per 100-800 bytes, while 100 MB of
#: ``{},`` is 33 million dicts, 3.3 GB parsed. So a parsed text costs at most about 3x its size.
CONTAINER_BYTES = 32
MIN_CONTAINERS = 100_000
_STRING = re.compile(rb'"[^"]*"')  # once escaped quotes are gone


def openers(data: bytes) -> int:
    """How many ``{`` and ``[`` bytes ``data`` holds (in strings too): a bound on the lists and
    objects of a JSON text, and on its depth. Counted by deleting each (a ``memchr`` per
    occurrence, and no copy when there is none), about half the instructions of
    ``bytes.count``, which tests every byte, on Claude Code's lines.

    Examples
    --------
    >>> openers(b'{"a":[1,{"b":"[x"}]}')
    4
    """
    n = 2 * len(data)
    return n - len(data.replace(b"{", b"")) - len(data.replace(b"[", b""))


def too_many_containers(data: bytes) -> str | None:
    """Why ``data`` (a JSON text) would hold too many lists and objects to parse (their count
    and the bound), or None. Cheap in the usual case (two byte counts); only a text with more
    brackets than the bound has its strings removed to count the real ones.

    Examples
    --------
    >>> too_many_containers(b"[" + b"{}," * 200_000 + b"{}]")
    'holds 200,002 lists and objects, more than 100,000 for its 600,004 bytes (one per 32 bytes)'
    >>> too_many_containers(b'["' + b"{}" * 200_000 + b'"]') is None
    True
    """
    limit = max(MIN_CONTAINERS, len(data) // CONTAINER_BYTES)
    if openers(data) <= limit:
        return None
    # Outside strings only: escaped backslashes and quotes removed, every other piece between
    # quotes is outside a string (30-100 MB a second, by how many strings there are).
    bare = _STRING.sub(b"", data.replace(b"\\\\", b"").replace(b'\\"', b""))
    n = openers(bare)
    if n <= limit:
        return None
    return (
        f"holds {n:,} lists and objects, more than {limit:,} for its {len(data):,} bytes "
        f"(one per {CONTAINER_BYTES} bytes)"
    )
