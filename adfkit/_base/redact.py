"""Redaction before export: secrets in the config (ADF_FORMAT.md §10), and on request the
message bodies and file contents of any frame adfkit returns.

Nothing here reads a file: both functions take values already loaded and return redacted copies.
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: What the runtime itself writes in place of a secret (§10).
REDACTED = "__redacted__"

#: A key "looks secret" if it matches one of the words of §10 (api key, token, secret,
#: password, authorization, private key, credential, bearer, session id, cookie).
SECRET_KEY = re.compile(
    r"api[\s_-]?key|apikey|token|secret|passw(or)?d|authori[sz]ation|private[\s_-]?key"
    r"|credential|bearer|session[\s_-]?id|cookie",
    re.IGNORECASE,
)

#: String values that are credentials whatever their key is called (provider key prefixes,
#: HTTP auth headers, PEM blocks).
SECRET_VALUE = re.compile(
    r"^\s*(sk-[A-Za-z0-9_-]{8,}|sk-ant-|ghp_[A-Za-z0-9]{8,}|github_pat_|xox[abpr]-|AKIA[0-9A-Z]{12,}"
    r"|AIza[0-9A-Za-z_-]{20,}|(Bearer|Basic)\s+\S{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
)

#: Credentials inside free text (a tool's output, a command line): provider key prefixes, auth
#: headers, PEM private keys, and ``NAME=value`` / ``"name": "value"`` with a secret-looking
#: name. Linear patterns: every quantifier runs over a class the next token cannot start.
#: A PEM body: base64 and blanks, also as JSON writes them inside a string (``\n``, ``\/``).
_PEM_BODY = r"(?:[A-Za-z0-9+/=\s]|\\[nrt/])*"
SECRET_IN_TEXT = re.compile(
    r"(?:sk-ant-[A-Za-z0-9_-]{8,}|sk-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{30,}|(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # a JWT
    # a private key; without its END line (cut off) the body up to where base64 stops
    rf"|-----BEGIN [A-Z ]{{0,40}}PRIVATE KEY-----(?:{_PEM_BODY}?"
    rf"-----END [A-Z ]{{0,40}}PRIVATE KEY-----|{_PEM_BODY}))"
)
#: ``NAME=value``, ``name: value``, ``"name": "value"`` (also JSON inside a JSON string,
#: ``\"name\": \"value\"``) with a secret-looking name.
_KEYED_IN_TEXT = re.compile(
    r"(\b[A-Za-z_]{0,40}(?:API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD)[A-Za-z_]{0,20}"
    r"(?:\\?[\"'])?\s{0,3}[=:]\s{0,3}(?:\\?[\"'])?)"
    r"([^\s\"'\\]{6,})",
    re.IGNORECASE,
)


def redact_text(text: str) -> str:
    """``text`` with credential-looking pieces replaced by ``"__redacted__"`` (the rest kept).

    The same kinds of secrets :func:`redact_config` removes from a config, found inside free
    text: what a tool printed, a command an agent ran.

    Examples
    --------
    >>> redact_text("export ANTHROPIC_API_KEY=sk-ant-api03-abcdefgh123 && run")
    'export ANTHROPIC_API_KEY=__redacted__ && run'
    >>> redact_text("curl -H 'Authorization: Bearer abc.def.ghi123' x")
    "curl -H 'Authorization: Bearer __redacted__' x"
    >>> redact_text("nothing secret here")
    'nothing secret here'
    """
    text = _KEYED_IN_TEXT.sub(lambda m: m.group(1) + REDACTED, text)
    return SECRET_IN_TEXT.sub(REDACTED, text)


#: How far past a cut :func:`safe_cut` looks for the end of a secret that starts before it:
#: longer than any key (a 16,384-bit RSA key in PEM is about 12,000 characters); a match still
#: running at this distance is taken to cross the cut. The text past it is never scanned, so a
#: clip costs the same on a 60 MB tool output as on a short one (it took 25 s on main).
SECRET_SPAN = 1 << 16


def safe_cut(text: str, max_chars: int) -> int:
    """Where to cut ``text`` to at most ``max_chars`` characters without cutting a secret in
    two: before any secret the cut would split (the secret rule runs on the whole text, before
    any clip, so a key whose END line falls past the cut is still recognised and never shown in
    part).

    Examples
    --------
    >>> safe_cut("key: -----BEGIN RSA PRIVATE KEY----- MIIE -----END RSA PRIVATE KEY-----", 30)
    5
    >>> safe_cut("plain text", 4)
    4
    """
    if len(text) <= max_chars:
        return len(text)
    cut = max_chars
    end = min(len(text), max_chars + SECRET_SPAN)  # a secret is never longer than this
    for rx in (_KEYED_IN_TEXT, SECRET_IN_TEXT):
        for m in rx.finditer(text, 0, end):
            if m.start() >= cut:
                break
            start = m.start(2) if rx is _KEYED_IN_TEXT else m.start()
            if start < cut < m.end() or (start < cut and m.end() >= end):
                cut = start
    return cut


#: Columns holding what agents and people wrote: messages, tool inputs and results, summaries,
#: log and task payloads. ``redact_frame(bodies=True)`` replaces their values.
BODY_COLUMNS = frozenset(
    {
        "text",
        "content",
        "content_json",
        "tool_input",
        "input",
        "result",
        "result_preview",
        "subject",
        "summary",
        "summary_text",
        "message",
        "data",
        "args",
        "error",
        "payload",
        "original_message",
        "attachments",
        "thinking",
        "body",
        "preview",
        "lambda",
        "instructions",
    }
)

#: Columns holding stored file bytes or their text. ``content`` counts as a file column in a
#: frame of files (one that has ``path`` and ``mime_type``).
FILE_COLUMNS = frozenset({"content_base64", "file_content", "file_text", "bytes", "mind"})


def _looks_secret(key: Any) -> bool:
    return isinstance(key, str) and SECRET_KEY.search(key) is not None


def _scrub(value: Any, *, everything: bool = False) -> Any:
    """Redact inside a JSON value: every scalar when ``everything``; otherwise string values
    under secret-looking keys, ``{key, value}`` pairs with a secret-looking key, and values that
    look like credentials."""
    if isinstance(value, dict):
        pair_secret = _looks_secret(value.get("key")) or _looks_secret(value.get("name"))
        out = {}
        for k, v in value.items():
            keyed = _looks_secret(k) and not isinstance(v, bool | int | float | type(None))
            if everything or keyed or (k == "value" and pair_secret):
                out[k] = _scrub(v, everything=True)
            else:
                out[k] = _scrub(v)
        return out
    if isinstance(value, list):
        return [_scrub(v, everything=everything) for v in value]
    if isinstance(value, str) and (everything or SECRET_VALUE.search(value)):
        return REDACTED
    if everything and value is not None and not isinstance(value, bool):
        return REDACTED
    return value


#: Keys that name counts and identifiers, not secrets, though a word of :data:`SECRET_KEY` is in
#: them (``total_input_tokens``, ``session_id``): their values are kept.
_COUNT_OR_ID_KEY = re.compile(r"(?:^|_)(?:session_?id|\w*_tokens|tokens_\w*)$", re.IGNORECASE)


def _secret_field(key: Any, value: Any) -> bool:
    """A string under a secret-looking key that is no count or identifier."""
    return isinstance(value, str) and _looks_secret(key) and not _COUNT_OR_ID_KEY.search(key)


def redact_value(value: Any) -> Any:
    """A copy of any JSON-like value (an agent's ``meta()``, ``info()``, a cell holding a list
    or a mapping) with every string passed through :func:`redact_text` and every string under
    a secret-looking key replaced whole; keys, numbers, booleans and None are kept. The one
    walk for metadata of every format, whatever fields it has.

    Examples
    --------
    >>> redact_value({"title": "fix ghp_abcdefghijklmnopqrstuvwxyz012345 leak",
    ...               "git_branch": "AKIAIOSFODNN7EXAMPLE", "api_token": "x",
    ...               "total_input_tokens": "12", "session_id": "abc"})
    {'title': 'fix __redacted__ leak', 'git_branch': '__redacted__', 'api_token': '__redacted__', \
'total_input_tokens': '12', 'session_id': 'abc'}
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: REDACTED if _secret_field(k, v) else redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v) for v in value)
    return value


def redact_config(cfg: Any) -> Any:
    """A copy of an agent config with its secrets replaced by ``"__redacted__"``.

    Follows ADF_FORMAT.md §10: every value of ``mcp.servers[].env`` and ``.headers``;
    credential-like keys in ``providers[]``; secret-looking ``{key, value}`` pairs in
    ``model.params`` and ``providers[].params``; secret-looking keys in
    ``model.provider_params``. Beyond that, any string under a secret-looking key anywhere,
    and any string that looks like a credential (``sk-...``, ``Bearer ...``, a PEM private key),
    is redacted too. Numbers and booleans under such keys (``max_tokens: 4096``) are kept.

    Examples
    --------
    >>> cfg = {"model": {"max_tokens": 4096, "provider_params": {"api_key": "sk-live-123456789"}},
    ...        "mcp": {"servers": [{"name": "gh", "env": {"GH": "x"}, "headers": {"A": "b"}}]}}
    >>> out = redact_config(cfg)
    >>> out["model"]["provider_params"]["api_key"], out["model"]["max_tokens"]
    ('__redacted__', 4096)
    >>> out["mcp"]["servers"][0]["env"], out["mcp"]["servers"][0]["name"]
    ({'GH': '__redacted__'}, 'gh')
    >>> cfg["model"]["provider_params"]["api_key"]  # the input is not changed
    'sk-live-123456789'
    """
    out = _scrub(copy.deepcopy(cfg))
    if not isinstance(out, dict):
        return out
    mcp = out.get("mcp")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    for server in servers if isinstance(servers, list) else []:
        if isinstance(server, dict):
            for part in ("env", "headers"):
                if part in server:
                    server[part] = _scrub(server[part], everything=True)
    return out


def _redact_series(s: pd.Series) -> pd.Series:
    import pandas as pd

    keep = s.isna()
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype("string")
    if isinstance(s.dtype, pd.StringDtype) or s.dtype == object:
        return s.where(keep, REDACTED)
    return s


def _redact_text_series(s: pd.Series) -> pd.Series:
    """Every string of ``s`` through :func:`redact_text` (other values kept)."""
    import pandas as pd

    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype("string")
    if not (isinstance(s.dtype, pd.StringDtype) or s.dtype == object):
        return s
    vals = s.tolist()
    if not any(isinstance(v, str | list | tuple | dict) for v in vals):
        return s
    out = [redact_value(v) for v in vals]  # strings, and strings inside lists and mappings
    return pd.Series(out, index=s.index, dtype=s.dtype, name=s.name)


def redact_frame(df: pd.DataFrame, *, bodies: bool = True, files: bool = True) -> pd.DataFrame:
    """A copy of ``df`` with message bodies and/or file contents replaced by ``"__redacted__"``,
    and credentials in every other text column replaced by the one secret rule
    (:func:`redact_text`).

    Works on any frame adfkit returns (loop, history, blocks, tool_calls, inbox, outbox, logs,
    tasks, compactions ...): text columns named in :data:`BODY_COLUMNS` (``bodies``) and
    :data:`FILE_COLUMNS` (``files``) are replaced; missing values stay missing, so counts of
    present values survive. ``content`` is a file column in a frame of files (``path`` and
    ``mime_type`` present) and a body column elsewhere. Identifiers, kinds, models, counts,
    sizes and timestamps are kept, so the redacted export still supports every metric.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"seq": [1, 2], "text": ["hello", None], "model": ["m", "m"]})
    >>> out = redact_frame(df)
    >>> out.loc[0, "text"], bool(out["text"].isna().iloc[1]), out.loc[0, "model"]
    ('__redacted__', True, 'm')
    >>> redact_frame(df, bodies=False).loc[0, "text"]
    'hello'
    """
    is_files = {"path", "mime_type"} <= set(df.columns)
    out = df.copy()
    for col in df.columns:
        name = str(col)
        if (name == "content" and is_files) or name in FILE_COLUMNS:
            hit = files
        else:
            hit = bodies and name in BODY_COLUMNS
        if hit:
            out[col] = _redact_series(out[col])
        else:
            out[col] = _redact_text_series(out[col])
    return out
