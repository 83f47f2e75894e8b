"""The rows of a chat's message records, each reply's model call, and a ``$rewindTo`` (the
format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._base.errors import CorruptFileError
from adfkit._sources.gemini_cli.state import Row, State
from adfkit._sources.transcript.kit import mapped_tokens, own_call

#: ``tokens`` keys (chatRecordingTypes.ts ``TokensSummary``) -> ADF token keys.
TOKEN_KEYS = {
    "input": "input",
    "output": "output",
    "cached": "cache_read",
    "thoughts": "reasoning",
    "tool": "tool_prompt",
    "total": "total",
}


def message_record(msg: dict[str, Any], line: int, st: State) -> None:
    t = msg.get("type")
    if t not in ("user", "gemini"):
        st.notices += 1  # info, error, warning: shown to the user, never sent to the model
        return
    row = st.last_with(msg["id"], t)
    if row is None:
        row = Row(msg, line)
        st.rows.append(row)
        st.window.append(row)
    else:  # the message written again (its tool calls, its tokens)
        row.set_content(msg)
        row.lines.append(line)
    if t == "gemini":
        _reply(msg, row, st)
        st.in_turn = bool(msg.get("toolCalls"))
    else:
        st.in_turn = True


def _reply(msg: dict[str, Any], row: Row, st: State) -> None:
    model = msg.get("model")
    if isinstance(model, str):
        row.model = model
    tokens = mapped_tokens(msg.get("tokens"), TOKEN_KEYS)
    if not tokens:
        return
    first = row.call is None
    row.tokens = dict(tokens)
    if first:
        own_call(row, tokens, row.model)
        if st.new_process:
            st.first_calls.append(row)
            st.new_process = False
        if "input" in tokens:
            st.inputs.call(tokens["input"])
    elif row.call is not None:
        row.call.tokens, row.call.model = tokens, row.model


def rewind(target: Any, line: int, st: State) -> None:
    """``$rewindTo``: the messages from ``target`` on leave the conversation (an abandoned
    branch, as Gemini CLI's loader drops them)."""
    i = next((i for i, r in enumerate(st.window) if r.mid == target), None)
    if not isinstance(target, str) or i is None:
        raise CorruptFileError(
            f"line {line}: $rewindTo {target!r} names no message of the chat: the message "
            "list after it is unknown",
            path=st.path,
        )
    gone = st.window[i:]
    st.branch += 1
    for r in gone:
        r.branch = f"branch-{st.branch}"
    ids = set(map(id, gone))
    st.rows = [r for r in st.rows if id(r) not in ids]
    st.abandoned += gone
    st.window = st.window[:i]
