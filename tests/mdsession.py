"""A hand-built Claude Code session whose text is markdown (a heading, a list, a table, a code
block) with hostile pieces in it (raw HTML, a script, an image, a javascript: link, TeX), a
tool call whose input and result name a file the text never does, and a title: what a
transcript viewer must show readably and safely (tests/test_what_users_see.py,
tests/test_browser.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "5e551011-0000-4000-8000-00000000a11d"
TITLE = "Fix the flaky upload test"
#: A file named only in a tool call's input and in its result, never in any message text.
HIDDEN = "cmd/explain.go"
REPLY = """### Plan

| step | file |
|---|---|
| read | the command |
| fix | the parser |

```go
func main() { fmt.Println("<b>not bold</b>") }
```

- <script>window.pwned = 1</script>
- <img src=x onerror="window.pwned = 2">
- ![remote](http://198.51.100.7/pixel.png)
- [click](javascript:window.pwned=3)
- $$x^2$$ stays as written
"""


def _record(kind: str, uuid: str, parent: str | None, t: int, **kw: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/u/webapp",
        "sessionId": SID,
        "version": "2.1.90",
        "type": kind,
        "uuid": uuid,
        "timestamp": f"2026-03-01T10:00:{t:02d}.000Z",
        **kw,
    }


def _assistant(uuid: str, parent: str, t: int, mid: str, blocks: list[dict]) -> dict[str, Any]:
    usage = {
        "input_tokens": 5,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
        "output_tokens": 40,
    }
    message = {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    message |= {"content": blocks, "stop_reason": None, "usage": usage}
    return _record("assistant", uuid, parent, t, message=message, requestId=f"req_{mid}")


def write(folder: Path) -> Path:
    """The session as ``folder/<SID>.jsonl``."""
    recs = [
        {"type": "custom-title", "customTitle": TITLE, "sessionId": SID},
        _record("user", "u1", None, 1, message={"role": "user", "content": "Fix the upload test"}),
        _assistant(
            "a1",
            "u1",
            2,
            "msg_1",
            [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": HIDDEN}}],
        ),
        _record(
            "user",
            "u2",
            "a1",
            3,
            message={
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": f"package main // {HIDDEN}",
                    }
                ],
            },
        ),
        _assistant("a2", "u2", 4, "msg_2", [{"type": "text", "text": REPLY}]),
    ]
    path = folder / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path
