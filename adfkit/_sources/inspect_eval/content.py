"""A sample's messages as rows: ``attachment://`` references resolved, content as ADF blocks,
and what identifies a message's content (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from typing import Any

import orjson

from adfkit._sources.transcript.kit import TranscriptRow, result_text

#: Attachment references: ``attachment://<hash>`` (``tc://<hash>`` in logs before ~0.3.50).
_ATTACH = ("attachment://", "tc://")


class Resolver:
    """``attachment://<hash>`` strings -> the attachment's text (missing ones are kept, and
    counted for one finding)."""

    def __init__(self, attachments: Any) -> None:
        self.att = attachments if isinstance(attachments, dict) else {}
        self.missing: set[str] = set()

    def __call__(self, x: Any) -> Any:
        if isinstance(x, str):
            for pre in _ATTACH:
                if x.startswith(pre):
                    h = x[len(pre) :]
                    v = self.att.get(h)
                    if isinstance(v, str):
                        return v
                    self.missing.add(h)
            return x
        if isinstance(x, list):
            return [self(v) for v in x]
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        return x


def message_key(m: dict[str, Any]) -> bytes:
    """What identifies a message's content (not its id, source, metadata or model)."""
    calls = m.get("tool_calls")
    tc = (
        [[c.get("id"), c.get("function"), c.get("arguments")] for c in calls if isinstance(c, dict)]
        if isinstance(calls, list)
        else None
    )
    return orjson.dumps(
        [m.get("role"), m.get("content"), m.get("tool_call_id"), tc], option=orjson.OPT_SORT_KEYS
    )


def text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    if not isinstance(content, list):
        return out
    for p in content:
        if not isinstance(p, dict):
            continue
        t = p.get("type")
        if t == "text" and isinstance(p.get("text"), str):
            out.append({"type": "text", "text": p["text"]})
        elif t == "reasoning":
            r = p.get("reasoning")
            if p.get("redacted") or not isinstance(r, str):
                out.append({"type": "thinking", "thinking": ""})
            else:
                out.append({"type": "thinking", "thinking": r})
        elif t == "image" and isinstance(p.get("image"), str):
            url = p["image"]
            url = url if not url.startswith("data:") else url[:64]  # never the whole base64
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append({"type": str(t) if isinstance(t, str) else "part"})
    return out


def message_blocks(m: dict[str, Any]) -> list[dict[str, Any]]:
    role = m.get("role")
    if role == "tool":
        err = m.get("error")
        text = result_text(m.get("content"))
        if isinstance(err, dict) and isinstance(err.get("message"), str) and not text:
            text = err["message"]
        return [
            {
                "type": "tool_result",
                "tool_use_id": m.get("tool_call_id"),
                "content": text,
                "is_error": err is not None,
            }
        ]
    blocks = text_parts(m.get("content"))
    calls = m.get("tool_calls")
    if role == "assistant" and isinstance(calls, list):
        for c in calls:
            if not isinstance(c, dict):
                continue
            args = c.get("arguments")
            if not isinstance(args, dict):
                args = {"_error": c.get("parse_error") or "not an object", "_raw_arguments": args}
            blocks.append(
                {"type": "tool_use", "id": c.get("id"), "name": c.get("function"), "input": args}
            )
    return blocks


def message_row(seq: int, m: dict[str, Any]) -> TranscriptRow:
    role = m.get("role")
    hint: str | None = None
    note = None
    meta = m.get("metadata")
    if role == "assistant":
        out_role = "assistant"
    else:
        out_role = "user"
        if role == "system":
            hint = "context"
        elif role == "user" and isinstance(meta, dict) and meta.get("summary") is True:
            hint = "compaction_summary"
        elif role not in ("user", "tool"):
            note = f"message role {str(role)[:20]!r}"
    mid = m.get("id")
    model = m.get("model") if role == "assistant" else None
    return TranscriptRow(
        seq=seq,
        role=out_role,
        content=message_blocks(m),
        model=model if isinstance(model, str) else None,
        kind_hint=hint,
        line=seq,
        lines=(seq,),
        uuid=mid if isinstance(mid, str) else None,
        note=note,
    )
