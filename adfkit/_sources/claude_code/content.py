"""A Claude Code record's message content as ADF blocks, and the kind of row it makes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adfkit._sources.transcript.kit import (
    result_text,
)

_CONTEXT_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<system-reminder>",
    "Caveat: The messages below were generated",
)


def _blocks(content: Any) -> tuple[list[dict[str, Any]], bool]:
    """Message content -> ADF blocks, and whether something had to be dropped."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}], False
    if not isinstance(content, list):
        return [], content is not None
    out: list[dict[str, Any]] = []
    bad = False
    for b in content:
        if type(b) is not dict:
            if isinstance(b, str):
                out.append({"type": "text", "text": b})
            else:
                bad = True
            continue
        t = b.get("type")
        if t == "text":  # the most frequent block: no call
            txt = b.get("text")
            out.append(
                b
                if isinstance(txt, str) and len(b) == 2
                else {"type": "text", "text": txt if isinstance(txt, str) else ""}
            )
            continue
        convert = _CONVERT.get(t) if isinstance(t, str) else None  # a list is unhashable
        out.append(b if convert is None else convert(b))
    return out, bad


def _tool_use(b: dict[str, Any]) -> dict[str, Any]:
    inp = b.get("input")
    if len(b) == 4 and type(inp) is dict and "id" in b and "name" in b:
        return b  # already the ADF shape: no copy
    return {
        "type": "tool_use",
        "id": b.get("id"),
        "name": b.get("name"),
        "input": inp if isinstance(inp, dict) else {"_raw_arguments": inp},
    }


def _tool_result(b: dict[str, Any]) -> dict[str, Any]:
    c = b.get("content")
    if len(b) == 4 and type(c) is str and type(b.get("is_error")) is bool:
        return b  # tool_use_id, content, is_error: already the ADF shape
    return {
        "type": "tool_result",
        "tool_use_id": b.get("tool_use_id"),
        "content": result_text(c),
        "is_error": b.get("is_error") is True,
    }


def _thinking(b: dict[str, Any]) -> dict[str, Any]:
    th = b.get("thinking")
    return {"type": "thinking", "thinking": th if isinstance(th, str) else ""}


def _redacted_thinking(b: dict[str, Any]) -> dict[str, Any]:
    return {"type": "thinking", "thinking": "", "redacted": True}


def _image(b: dict[str, Any]) -> dict[str, Any]:
    """An image as ADF's ``image_url``: its URL, or its base64 data as a ``data:`` URL."""
    src = b.get("source")
    url = ""
    if isinstance(src, dict):
        if src.get("type") == "base64":
            url = f"data:{src.get('media_type', '')};base64,{src.get('data', '')}"
        elif isinstance(src.get("url"), str):
            url = src["url"]
    return {"type": "image_url", "image_url": {"url": url}}


#: Block type -> its ADF shape (any other type is kept as it is).
_CONVERT: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "thinking": _thinking,
    "redacted_thinking": _redacted_thinking,
    "image": _image,
}


def _user_hint(obj: dict[str, Any], blocks: list[dict[str, Any]]) -> str | None:
    if obj.get("isCompactSummary") is True:
        return "compaction_summary"
    if obj.get("isMeta") is True:
        return "context"
    for b in blocks:
        if b.get("type") == "text":
            txt = b.get("text")
            if isinstance(txt, str):
                s = txt.lstrip()
                if s.startswith(_CONTEXT_PREFIXES):
                    return "context"
                if s.startswith("<task-notification>"):
                    return "message"
            return None
        if b.get("type") == "tool_result":
            return None
    return None


def _attachment_row(obj: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    att = obj.get("attachment")
    atype = att.get("type") if isinstance(att, dict) else None
    text = ""
    if isinstance(att, dict):
        for k in ("prompt", "content", "text", "message"):
            v = att.get(k)
            if isinstance(v, str):
                text = v
                break
            if isinstance(v, list):
                text = result_text(v)
                break
    hint = "message" if atype == "queued_command" else "context"
    label = atype if isinstance(atype, str) else "attachment"
    if hint == "message" and text:
        return [{"type": "text", "text": text}], hint
    return [{"type": "text", "text": f"[attachment: {label}]" + (f" {text}" if text else "")}], hint


def _call_key(obj: dict[str, Any], msg: dict[str, Any]) -> str | None:
    mid = msg.get("id")
    if not isinstance(mid, str):
        return None
    rid = obj.get("requestId")
    return f"{mid}:{rid}" if isinstance(rid, str) else mid


def _paid_by(obj: dict[str, Any]) -> str | None:
    """The other session that made (and paid for) the call of this assistant record, when the
    record says so: Claude Code 2.1.332 copies the parent's records into a session started
    with ``--resume ID --fork-session`` under the fork's ``sessionId`` and writes the parent's
    as ``requestSessionId`` on the copied assistant records (its own calls have none). Such a
    call was in the fork's context, but its usage is the parent's."""
    paid = obj.get("requestSessionId")
    if isinstance(paid, str) and paid and paid != obj.get("sessionId"):
        return paid
    return None


class _CopiedBoundaries:
    """Which ``compact_boundary`` records of a forked session are copies of its parent's
    compactions, record by record in file order. ``--fork-session`` after the parent compacted
    copies the parent's conversation from its last boundary on (boundary, summary, what
    followed) before the fork's own records; only the copied assistant records say they are
    copies (:func:`_paid_by`). So a boundary met before the file's first call of its own is
    held (:meth:`boundary`) until the next call record decides (:meth:`call`): a copied call
    makes every held boundary a copy of that session's compaction; a call of the file's own
    makes them its own. Once the file has made a call of its own, no boundary is held (copies
    come first): a compaction of the session's own lands at once."""

    __slots__ = ("held", "own")

    def __init__(self) -> None:
        self.held: list[Any] = []
        self.own = False  # a call of the file's own was met

    def boundary(self, item: Any) -> bool:
        """A boundary met (``item`` stands for it); True: held until the next call."""
        if self.own:
            return False
        self.held.append(item)
        return True

    def call(self, obj: dict[str, Any]) -> tuple[str | None, list[Any]]:
        """An assistant record met: the session it copies (None: the file's own call) and
        the boundaries held until now, which that decides."""
        held, self.held = self.held, []
        paid = _paid_by(obj)
        if paid is None:
            self.own = True
        return paid, held
