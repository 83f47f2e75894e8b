"""The row of each event kind that is a message to or from the model (the format's notes:
:mod:`.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._sources.openhands.content import (
    adf_blocks,
    arguments_of,
    get,
    observation_text,
    str_or_none,
    thinking_of,
)
from adfkit._sources.openhands.files import EventFile
from adfkit._sources.openhands.state import Row, State
from adfkit._sources.transcript.kit import result_text

#: Event kinds that are messages to or from the model (rows).
ROW_KINDS = frozenset(
    {
        "SystemPromptEvent",
        "SystemPromptUpdateEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "AgentErrorEvent",
        "Condensation",
    }
)
#: Event kinds known not to be messages: no row, counted in one ``info`` finding.
OTHER_KINDS = frozenset(
    {
        "CondensationRequest",
        "CondensationSummaryEvent",
        "ConversationStateUpdateEvent",
        "PauseEvent",
        "ConversationErrorEvent",
        "HookExecutionEvent",
        "TokenEvent",
        "LLMCompletionLogEvent",
        "ServerErrorEvent",
        "StreamingDeltaEvent",
    }
)


def branch_row(f: EventFile, ev: dict[str, Any], st: State) -> Row | None:
    """The row of an event off the active branch (no window, no calls: it is not in the
    conversation that went on)."""
    kind = ev.get("kind")
    if kind == "Condensation":
        return summary_row(f, ev)
    if not isinstance(kind, str) or kind not in ROW_KINDS:
        return None
    return row_of_event(f, ev, kind, st, on=False)


def no_row(st: State, ev: dict[str, Any]) -> None:
    eid = str_or_none(ev.get("id"))
    if eid:
        st.no_row_ids.add(eid)


def add_row(st: State, row: Row) -> None:
    st.rows.append(row)
    st.window.append(row)
    for eid in row.event_ids:
        st.row_of.setdefault(eid, row)


def row_of_event(f: EventFile, ev: dict[str, Any], kind: str, st: State, *, on: bool) -> Row | None:
    """The row of one event (None: merged into the open call's row). ``on``: the event is on
    the active branch (it moves the open call)."""
    if kind == "ActionEvent":
        return _action_row(f, ev, st, on=on)
    if on:
        st.open_call = None
    if kind in ("SystemPromptEvent", "SystemPromptUpdateEvent"):
        prompt = ev.get("system_prompt")
        blocks = adf_blocks([prompt] if isinstance(prompt, dict) else prompt)
        dyn = ev.get("dynamic_context")
        if dyn is not None:
            blocks += adf_blocks(dyn if isinstance(dyn, list) else [dyn])
        row = Row(f, "user", blocks)
        row.kind_hint = "context"
        return row
    if kind == "MessageEvent":
        return _message_row(f, ev, st, on=on)
    return _observation_row(f, ev, kind)


def _message_row(f: EventFile, ev: dict[str, Any], st: State, *, on: bool) -> Row:
    raw = ev.get("llm_message")
    msg: dict[str, Any] = raw if isinstance(raw, dict) else {}
    role = msg.get("role")
    blocks = adf_blocks(msg.get("content"))
    ext = ev.get("extended_content")
    if isinstance(ext, list):
        blocks += adf_blocks(ext)
    if role == "assistant":
        rid = str_or_none(ev.get("llm_response_id"))
        return Row(f, "assistant", thinking_of(msg) + thinking_of(ev) + blocks, rid)
    row = Row(f, "user", blocks)
    if role == "system":
        row.kind_hint = "context"
    elif role != "user":
        row.malformed = True
        row.note = f"message role {str(role)[:20]!r}"
    else:
        row.kind_hint = "message"  # the user's chat message: it opens a turn
        if on:
            st.last_user_text = next(
                (b["text"].strip() for b in blocks if b.get("type") == "text"), ""
            )
    return row


def _action_row(f: EventFile, ev: dict[str, Any], st: State, *, on: bool) -> Row | None:
    """An assistant row with the action's tool call; the actions of one response (parallel
    calls, one ``llm_response_id``) are one row."""
    rid = str_or_none(ev.get("llm_response_id"))
    use = {
        "type": "tool_use",
        "id": str_or_none(ev.get("tool_call_id")) or str_or_none(get(ev, "tool_call", "id")),
        "name": str_or_none(ev.get("tool_name")) or str_or_none(get(ev, "tool_call", "name")),
        "input": arguments_of(ev),
    }
    open_row = st.open_call if on else None
    if open_row is not None and rid is not None and open_row.rid == rid:
        open_row.content.extend([*adf_blocks(ev.get("thought")), use])
        open_row.lines.append(f.idx + 1)
        eid = str_or_none(ev.get("id"))
        if eid:
            open_row.event_ids.append(eid)
            st.row_of.setdefault(eid, open_row)
        return None
    row = Row(f, "assistant", [*thinking_of(ev), *adf_blocks(ev.get("thought")), use], rid)
    if on:
        st.open_call = row
    return row


def _observation_row(f: EventFile, ev: dict[str, Any], kind: str) -> Row:
    """A tool result joined by ``tool_call_id`` (an error with no call: a notice)."""
    call_id = str_or_none(ev.get("tool_call_id"))
    if kind == "ObservationEvent":
        text, err = observation_text(ev.get("observation"))
    elif kind == "UserRejectObservation":
        reason = ev.get("rejection_reason")
        text = "rejected by the user" + (f": {reason}" if isinstance(reason, str) else "")
        err = True
    else:  # AgentErrorEvent
        e = ev.get("error")
        text, err = (e if isinstance(e, str) else result_text(e)), True
    if call_id is None:
        row = Row(f, "user", [{"type": "text", "text": text}])
        row.kind_hint = "notice"
        return row
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": err}
    return Row(f, "user", [block])


def summary_row(f: EventFile, ev: dict[str, Any]) -> Row:
    """A condensation's summary row (no text when the condenser writes none)."""
    summary = ev.get("summary")
    row = Row(f, "user", [{"type": "text", "text": summary}] if isinstance(summary, str) else [])
    row.kind_hint = "compaction_summary"
    return row
