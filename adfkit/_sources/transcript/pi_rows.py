"""The row each pi entry gives: its content as ADF blocks, its usage as ADF tokens, an
assistant message's model call (the rules: :mod:`adfkit._sources.pi.parser`)."""

from __future__ import annotations

from typing import Any

from adfkit._core.rows import as_count
from adfkit._sources.transcript.kit import (
    Findings,
    RowDraft,
    anthropic_usage,
    bad_usage,
    iso_ms,
    own_call,
    result_text,
    tool_input,
)
from adfkit._sources.transcript.pi_entry_log import ENTRY_TYPES, Entry

#: Entry types that never reach the model (settings, bookmarks, extension state).
_NO_ROW = frozenset({"model_change", "thinking_level_change", "label", "session_info", "custom"})
#: pi usage keys -> the Anthropic keys they are (pi's ``input`` is the uncached part, too).
_AS_ANTHROPIC = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cacheRead": "cache_read_input_tokens",
    "cacheWrite": "cache_creation_input_tokens",
}


def _blocks(content: Any) -> list[dict[str, Any]]:
    """pi content (a string or a list of text/thinking/toolCall/image parts) -> ADF blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for b in content if isinstance(content, list) else []:
        if type(b) is not dict:
            continue
        t = b.get("type")
        if t == "text":
            v = b.get("text")
            out.append({"type": "text", "text": v if isinstance(v, str) else ""})
        elif t == "thinking":
            v = b.get("thinking")
            out.append({"type": "thinking", "thinking": v if isinstance(v, str) else ""})
        elif t == "toolCall":
            out.append(
                {
                    "type": "tool_use",
                    "id": b.get("id"),
                    "name": b.get("name"),
                    "input": tool_input(b.get("arguments")),
                }
            )
        elif t == "image":
            mime, data = b.get("mimeType"), b.get("data")
            url = f"data:{mime if isinstance(mime, str) else ''};base64,"
            url += data if isinstance(data, str) else ""
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append(b)
    return out


def bash_text(m: dict[str, Any]) -> str:
    """A ``bashExecution`` message as pi sends it to the model (messages.ts
    ``bashExecutionToText``).

    Examples
    --------
    >>> bash_text({"command": "ls", "output": "a", "exitCode": 2})
    'Ran `ls`\\n```\\na\\n```\\n\\nCommand exited with code 2'
    """
    cmd, out = m.get("command"), m.get("output")
    text = f"Ran `{cmd if isinstance(cmd, str) else ''}`\n"
    text += f"```\n{out}\n```" if isinstance(out, str) and out else "(no output)"
    code = m.get("exitCode")
    if m.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif type(code) is int and code != 0:
        text += f"\n\nCommand exited with code {code}"
    full = m.get("fullOutputPath")
    if m.get("truncated") is True and isinstance(full, str) and full:
        text += f"\n\n[Output truncated. Full output: {full}]"
    return text


def pi_tokens(usage: Any) -> tuple[dict[str, int], dict[str, Any]]:
    """pi ``usage`` -> ``(ADF tokens, unknown)``: ``input`` = ``input + cacheRead +
    cacheWrite`` (pi's ``input`` is the uncached part), ``output``, ``cache_read``,
    ``cache_write``, and ``reasoning`` where a newer pi-ai writes ``reasoningTokens`` (a part
    of ``output``; OpenClaw 2026.9.6 installed on 2026-12-03 writes it, 0 without reasoning);
    ``unknown`` maps each ADF key whose source is not a count to the value as written (the row
    rule flags it).

    Examples
    --------
    >>> pi_tokens({"input": 3, "output": 7, "cacheRead": 100, "cacheWrite": 20})
    ({'input': 123, 'output': 7, 'cache_read': 100, 'cache_write': 20}, {})
    >>> pi_tokens({"input": -1, "output": 7})
    ({'output': 7}, {'input': -1})
    >>> pi_tokens({"input": 3, "output": 7, "reasoningTokens": 5})[0]
    {'input': 3, 'output': 7, 'reasoning': 5}
    """
    if not isinstance(usage, dict):
        return {}, {}
    same = {_AS_ANTHROPIC[k]: v for k, v in usage.items() if k in _AS_ANTHROPIC}
    tokens, unknown = anthropic_usage(same)
    if "reasoningTokens" in usage:
        r = as_count(usage["reasoningTokens"])
        if r is None:
            unknown["reasoning"] = usage["reasoningTokens"]
        else:
            tokens["reasoning"] = r
    return tokens, unknown


class PiRow(RowDraft):
    """A row being built from one entry (its ``id`` and ``parentId``); an assistant row is a
    model call of its own (:func:`own_call`)."""

    __slots__ = ()

    def __init__(self, e: Entry, role: str, content: list[dict[str, Any]]) -> None:
        super().__init__(role, content, e.line, _time(e.obj))
        i, p = e.obj.get("id"), e.obj.get("parentId")
        self.uuid = i if isinstance(i, str) else None
        self.parent_uuid = p if isinstance(p, str) else None


def _time(o: dict[str, Any]) -> int | None:
    m = o.get("message")
    if isinstance(m, dict):
        ts = m.get("timestamp")
        if type(ts) is int and ts > 0:
            return ts
    return iso_ms(o.get("timestamp"))


def _assistant_row(e: Entry, m: dict[str, Any], fnd: Findings, meta: dict[str, str]) -> PiRow:
    """An assistant message: one model call, its usage counted on its row (NA when an aborted
    or failed reply reported all zeros)."""
    row = PiRow(e, "assistant", _blocks(m.get("content")))
    model = m.get("model")
    row.model = model if isinstance(model, str) else None
    prov = m.get("provider")
    if isinstance(prov, str):
        meta["provider"] = prov
    stop = m.get("stopReason")
    tokens, unknown = pi_tokens(m.get("usage"))
    if unknown:
        bad_usage(fnd, e.line, sorted(unknown))
        row.malformed = True
        row.note = "usage holds values that are not token counts"
    if stop in ("aborted", "error") and not unknown and not any(tokens.values()):
        tokens = {}  # an aborted/failed reply reported nothing: unknown, not 0
        row.note = f"{stop} reply: its usage is all zeros (not reported); tokens NA"
    elif stop in ("aborted", "error"):
        row.note = f"{stop} reply"
    err = m.get("errorMessage")
    if isinstance(err, str) and err:
        row.note = f"{row.note or stop}: {err[:120]}"
    row.tokens = {**tokens, **unknown}
    own_call(row, tokens, row.model)
    return row


def row_of(e: Entry, fnd: Findings, meta: dict[str, str]) -> PiRow | None:
    """The row an entry gives (None: no row: settings, extension state, excluded output)."""
    o = e.obj
    t = o.get("type")
    if t in _NO_ROW or t not in ENTRY_TYPES:
        return None
    if t != "message":
        return _entry_row(e, t)
    m = o.get("message")
    if type(m) is not dict:
        fnd.add("bad_entry", "warning", e.line, "message entry without a message object; skipped")
        return None
    return _message_row(e, m, fnd, meta)


def _entry_row(e: Entry, t: str) -> PiRow:
    """The row of an entry that is no message: a compaction's summary, an abandoned branch's
    summary, an extension's message."""
    o = e.obj
    if t == "compaction":
        s = o.get("summary")
        row = PiRow(e, "user", [{"type": "text", "text": s}] if isinstance(s, str) else [])
        row.kind_hint = "compaction_summary"
        if not isinstance(s, str):
            row.note = "compaction without a summary text"
        return row
    if t == "branch_summary":
        s = o.get("summary")
        row = PiRow(e, "user", [{"type": "text", "text": s if isinstance(s, str) else ""}])
        row.kind_hint = "message"
        row.note = "summary of an abandoned branch"
        return row
    row = PiRow(e, "user", _blocks(o.get("content")))  # custom_message
    row.kind_hint = "message"
    return row


def _message_row(e: Entry, m: dict[str, Any], fnd: Findings, meta: dict[str, str]) -> PiRow | None:
    """The row of a message entry, by its role (None: a command's output kept out of the
    context, a role that is not pi's)."""
    role = m.get("role")
    if role == "assistant":
        return _assistant_row(e, m, fnd, meta)
    if role == "toolResult":
        row = PiRow(
            e,
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": m.get("toolCallId"),
                    "content": result_text(m.get("content")),
                    "is_error": m.get("isError") is True,
                }
            ],
        )
        return row
    if role == "user":
        return PiRow(e, "user", _blocks(m.get("content")))
    if role == "bashExecution":
        if m.get("excludeFromContext") is True:
            return None
        row = PiRow(e, "user", [{"type": "text", "text": bash_text(m)}])
        row.kind_hint = "message"
        row.note = "a command the user ran (!)"
        return row
    if role in ("custom", "hookMessage"):
        row = PiRow(e, "user", _blocks(m.get("content")))
        row.kind_hint = "message"
        return row
    fnd.add(
        "unknown_role",
        "warning",
        e.line,
        f"message role {str(role)[:30]!r} is not one of pi's; skipped",
    )
    return None
