"""OpenHands conversations (V1 SDK and CLI): recognition, listing and the condenser's rule.

A conversation is a folder, ``~/.openhands/conversations/<id hex>/``
(``OPENHANDS_CONVERSATIONS_DIR`` overrides the root), holding ``base_state.json`` and
``events/event-<idx>-<event id>.json``. This module is light: it recognises such a folder from
its names alone and lists them; the reader is :mod:`adfkit._sources.openhands.parser`, imported
when a conversation is opened.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adfkit._registry import FormatSpec, Probe, Rule

if TYPE_CHECKING:
    import pandas as pd

    from adfkit._source import AgentSource

NAME = "openhands"
LABEL = "OpenHands conversation"
DEFAULT_ROOT = "~/.openhands/conversations"
ROOT_ENV = "OPENHANDS_CONVERSATIONS_DIR"
TAXONOMY = "taxonomy.openhands.json"

STATE_FILE = "base_state.json"
EVENTS_DIR = "events"
EVENT_NAME = re.compile(r"^event-(\d+)-(.+)\.json$")

#: Defaults of OpenHands' ``LLMSummarizingCondenser`` (openhands-sdk 1.58,
#: ``openhands/sdk/context/condenser/llm_summarizing_condenser.py``; SOURCES-NEXT.md §2.2).
DEFAULT_MAX_SIZE = 240
DEFAULT_KEEP_FIRST = 2

#: Columns of :func:`list_sessions`.
SESSIONS: dict[str, str] = {
    "path": "string",
    "session_id": "string",
    "cwd": "string",
    "model": "string",
    "condenser": "string",
    "execution_status": "string",
    "n_events": "Int64",
    "size_bytes": "Int64",
    "modified": "datetime64[ns, UTC]",
    "error": "string",
}


def is_conversation(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a folder holding ``base_state.json`` or an ``events/`` folder with
    ``event-<idx>-<id>.json`` files (looked at by name only, at most 1,000 entries). A single
    event file, ``base_state.json`` alone, or any other file is not a conversation.

    Examples
    --------
    >>> is_conversation("sample_agents/long-runner.adf"), is_conversation("no/such/folder")
    (False, False)
    """
    p = Path(path)
    try:
        if not p.is_dir():
            return False
        if (p / STATE_FILE).is_file():
            return True
        ev = p / EVENTS_DIR
        if not ev.is_dir():
            return False
        with os.scandir(ev) as it:
            for n, entry in enumerate(it):
                if EVENT_NAME.match(entry.name):
                    return True
                if n >= 1000:
                    break
    except OSError:
        return False
    return False


def claims(probe: Probe) -> bool:
    """Recognition for the format registry: a folder that :func:`is_conversation` accepts (or
    the ``events/`` folder of one). Files are never claimed."""
    if not probe.is_dir:
        return False
    p = Path(probe.path)
    if is_conversation(p):
        return True
    return p.name == EVENTS_DIR and is_conversation(p.parent)


def open_conversation(path: str | os.PathLike[str], **options: Any) -> AgentSource:
    """The conversation at ``path`` as an agent source (options: ``max_event_bytes``,
    ``max_events``; see :func:`adfkit._sources.openhands.parser.parse_openhands`)."""
    from .parser import parse_openhands
    from .source import OpenHandsSource

    known = ("max_event_bytes", "max_events", "max_total_bytes")
    return OpenHandsSource(parse_openhands(path, **{k: options[k] for k in known if k in options}))


def find(root: str | os.PathLike[str]) -> Iterator[Path]:
    """The conversation folders directly in ``root`` (a fleet's folder, ``~/.openhands`` meaning
    its ``conversations/``), in name order, by their names only. A conversation's own
    ``subagents/`` belong to it and are not listed."""
    top = Path(root).expanduser()
    if not top.is_dir():
        return
    if not is_conversation(top / "conversations") and (top / "conversations").is_dir():
        top = top / "conversations"
    try:
        children = sorted(p for p in top.iterdir() if p.is_dir())
    except OSError:
        return
    for p in children:
        if is_conversation(p):
            yield p


def default_root() -> str:
    """``$OPENHANDS_CONVERSATIONS_DIR`` when set, else ``~/.openhands/conversations``."""
    return os.environ.get(ROOT_ENV) or DEFAULT_ROOT


def list_sessions(root: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per conversation under ``root``, newest first (by the latest event file's or
    ``base_state.json``'s modification time), without reading any event.

    Columns: ``path``, ``session_id`` (``base_state.id``, else the folder name), ``cwd``
    (``workspace.working_dir``), ``model`` (``agent.llm.model``), ``condenser`` (its
    ``kind``), ``execution_status`` (string), ``n_events`` (Int64: event files), ``size_bytes``
    (Int64: every file of the folder), ``modified`` (datetime64[ns, UTC]), ``error`` (string:
    why ``base_state.json`` could not be read).
    """
    import pandas as pd

    from adfkit._errors import NotTranscriptError
    from adfkit._transcript import sessions_frame

    from .files import DEFAULT_MAX_STATE_BYTES, read_capped

    top = Path(root).expanduser()
    if not top.is_dir():
        raise NotTranscriptError("not a folder of OpenHands conversations", path=top)
    recs: list[dict[str, Any]] = []
    for conv in find(top):
        n_events = 0
        size = 0
        newest = 0
        for p in (conv / STATE_FILE, *_files(conv / EVENTS_DIR)):
            try:
                st = p.lstat()
            except OSError:
                continue
            size += st.st_size
            newest = max(newest, st.st_mtime_ns)
            if EVENT_NAME.match(p.name):
                n_events += 1
        rec: dict[str, Any] = {
            "path": str(conv),
            "session_id": conv.name,
            "n_events": n_events,
            "size_bytes": size,
            "modified": pd.Timestamp(newest or conv.stat().st_mtime_ns, unit="ns", tz="UTC"),
        }
        if (conv / STATE_FILE).exists():
            data, _n, problem = read_capped(conv / STATE_FILE, DEFAULT_MAX_STATE_BYTES)
            state = _json(data) if data is not None else None
            if not isinstance(state, dict):
                rec["error"] = f"{STATE_FILE} {problem or 'is not a JSON object'}"
            else:
                rec.update(_state_fields(state))
        recs.append(rec)
    return sessions_frame(recs, SESSIONS)


def _files(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return [folder / e.name for e in it if not e.name.startswith(".")]
    except OSError:
        return []


def _json(data: bytes) -> Any:
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _state_fields(state: dict[str, Any]) -> dict[str, Any]:
    def get(*keys: str) -> Any:
        d: Any = state
        for k in keys:
            d = d.get(k) if isinstance(d, dict) else None
        return d if isinstance(d, str) and d else None

    out = {
        "cwd": get("workspace", "working_dir"),
        "model": get("agent", "llm", "model"),
        "condenser": get("agent", "condenser", "kind"),
        "execution_status": get("execution_status"),
    }
    sid = get("id")
    if sid:
        out["session_id"] = sid
    return {k: v for k, v in out.items() if v is not None}


def rule_text(
    window: int | None,
    max_size: int | None = None,
    keep_first: int | None = None,
    max_tokens: int | None = None,
) -> str:
    """How OpenHands decides to condense, and what :func:`compaction_rule`'s token threshold
    stands for. ``max_size``/``keep_first``/``max_tokens``: as ``base_state.json`` records the
    condenser (None: not recorded, the defaults are assumed)."""
    size = (
        f"max_size={max_size} (recorded)" if max_size else f"max_size={DEFAULT_MAX_SIZE} (default)"
    )
    first = (
        f"keep_first={keep_first} (recorded)"
        if keep_first is not None
        else f"keep_first={DEFAULT_KEEP_FIRST} (default)"
    )
    toks = f"max_tokens={max_tokens:,} (recorded)" if max_tokens else "max_tokens unset (default)"
    if max_tokens:
        thr = f"the token threshold is max_tokens={max_tokens:,}"
    elif window:
        thr = (
            f"the token threshold is the context window ({window:,}, recorded in "
            "TokenUsage.context_window): the agent requests a condensation when the LLM reports "
            "the window exceeded"
        )
    else:
        thr = "no token threshold is known (no context window recorded)"
    return (
        "OpenHands LLMSummarizingCondenser (openhands-sdk 1.58 llm_summarizing_condenser.py): "
        f"condenses when the view holds more than {size} events, keeping the first "
        f"{first} and half of max_size, or past {toks}, or on a CondensationRequest; {thr}. "
        "The event-count rule has no token counterpart, so simulate() does not reproduce "
        "event-count condensations (assumed)"
    )


def compaction_rule(
    model: str | None,
    window: int | None,
    *,
    max_size: int | None = None,
    keep_first: int | None = None,
    max_tokens: int | None = None,
) -> tuple[int | None, int | None, str]:
    """``(window, threshold, rule text)``: the window as recorded (None: unknown, OpenHands
    runs any model), the token threshold (``max_tokens`` when the condenser records one, else
    the window) and how it was decided.

    Examples
    --------
    >>> compaction_rule("openai/gpt-4o-mini", 128000)[:2]
    (128000, 128000)
    >>> compaction_rule(None, None, max_tokens=90000)[:2]
    (None, 90000)
    """
    threshold = max_tokens or window or None
    return window, threshold, rule_text(window, max_size, keep_first, max_tokens)


def provider(model: str | None) -> str | None:
    """Who serves a litellm model id: its ``provider/`` prefix (``openai/gpt-4o-mini`` ->
    ``openai``), else the maker a bare OpenAI or Anthropic model name says, else None.

    Examples
    --------
    >>> provider("anthropic/claude-sonnet-4-5"), provider("gpt-4o-mini"), provider("x")
    ('anthropic', 'openai', None)
    """
    if not model:
        return None
    if "/" in model:
        return model.split("/", 1)[0] or None
    if model.startswith(("gpt-", "o1", "o3", "o4")):
        return "openai"
    if model.startswith("claude-"):
        return "anthropic"
    return None


def _rule(model: str | None, window: int | None) -> Rule:
    """The registry's rule: the recorded window as the threshold (the source applies a
    recorded ``max_tokens``, :class:`.source.OpenHandsSource`)."""
    return Rule(*compaction_rule(model, window))


SPEC = FormatSpec(
    name=NAME,
    label=LABEL,
    looks_for="a folder holding base_state.json or events/event-<idx>-<id>.json files",
    claims=claims,
    open=open_conversation,
    find=find,
    list_sessions=list_sessions,
    default_root=DEFAULT_ROOT,
    compaction_rule=_rule,
    taxonomy=TAXONOMY,
    provider=provider,
)
