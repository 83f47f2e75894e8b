"""Ground truth for the compaction lab: the forgetting session (:mod:`adfsynth.forgetting`)
with what its compaction audit must find and what each built-in compactor must score.

``write_session(folder)`` writes the session as :func:`adfsynth.forgetting.write_session` does
(same bytes) and returns it with the truth:

- ``audit``: per compaction, the tokens before it (the ``preTokens`` the simulator wrote) and
  the findings: Claude Code's threshold is assumed from the model's 200,000-token window less
  20,000 output reserve and 13,000 buffer (167,000) because the session crossed its smaller
  ``preTokens`` without compacting; both compactions fired below 0.8 of it, so both are
  ``early`` and nothing else (8 and 9 calls apart, summaries shrinking, the context shed,
  cache read after each);
- ``lab``: per built-in compactor (default parameters), for the first compaction, the items
  needed again that the new window keeps, by kind, and the new window's estimated tokens,
  from the simulator's own copy of the window (:func:`window_before`) and its own estimator.
  The items needed again (the forgetting truth's ``back``): the rule, the limits path, the
  test command, the test path and the error line.

Independent of adfkit (imports nothing from it).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from . import forgetting as f
from .claude_code import SUMMARY_PREFIX
from .estimator import _block_chars

#: Claude Code's automatic threshold for a 200,000-token model (window - 20,000 - 13,000).
THRESHOLD = 200_000 - 20_000 - 13_000
PLACEHOLDER = "[tool result omitted]"


def _use(name: str, inp: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": inp}]


def _result(text: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "content": text}]


def window_before() -> list[tuple[str, list[dict[str, Any]]]]:
    """The window the first compaction compacted, as (kind, blocks), written from the story
    of :func:`adfsynth.forgetting.write_session`."""
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("Read", {"file_path": f.UPLOAD}, f.LONG),
        ("Read", {"file_path": f.LIMITS}, f.LONG),
        ("Bash", {"command": f.COMMAND}, f.ERROR),
        ("Edit", {"file_path": f.UPLOAD, "old_string": "read", "new_string": "stream"}, f.QUIET),
        ("TodoWrite", {"todos": [{"content": f.TODO, "status": "pending"}]}, "Todos updated"),
        ("Write", {"file_path": f.MEMO, "content": f"{f.RULE}.\n"}, "File created"),
    ]
    first = f"{f.RULE}. The upload limit is 25 MB and the handler is `handle_upload`."
    out: list[tuple[str, list[dict[str, Any]]]] = [("message", [{"type": "text", "text": first}])]
    for name, inp, result in calls:
        out += [("assistant", _use(name, inp)), ("tool_result", _result(result))]
    text = f"Done for now; see {f.DOCS} for the proxy side."
    return [*out, ("assistant", [{"type": "text", "text": text}])]


def _tokens(window: list[tuple[str, list[dict[str, Any]]]]) -> int:
    return math.ceil(sum(16 + sum(_block_chars(b) for b in bl) for _, bl in window) / 3.5)


# The turns of the window: the person's message with the first call and its result, then
# each call with its result, then the closing text: 7 turns.
_TURNS = [[0, 1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12], [13]]


def _masked(window: list[tuple[str, list[dict[str, Any]]]], keep: int) -> list[Any]:
    recent = {i for t in _TURNS[-keep:] for i in t}
    return [
        (k, _result(PLACEHOLDER)) if k == "tool_result" and i not in recent else (k, b)
        for i, (k, b) in enumerate(window)
    ]


def _trimmed(window: list[tuple[str, list[dict[str, Any]]]], chars: int) -> list[Any]:
    out = []
    for k, b in window:
        text = b[0].get("content") if k == "tool_result" else None
        if isinstance(text, str) and len(text) > chars:
            cut = f"{text[:chars]}\n[... {len(text) - chars} characters trimmed]"
            b = _result(cut)
        out.append((k, b))
    return out


#: The items of the window in the order first met (the forgetting truth's), as the
#: extractive compactor lists them.
def _extractive_text() -> str:
    lines = [f"{it['kind']}: {it['value']}" for it in f._items()]
    return "Items of the conversation so far:\n" + "\n".join(lines)


def truth() -> dict[str, Any]:
    """What the lab must find on the session (the module docstring says why)."""
    w = window_before()
    summary = SUMMARY_PREFIX + f.SUMMARY
    # needed again: instruction (rule), path (limits), command, path (test), error
    needed = {"instruction": 1, "path": 2, "command": 1, "error": 1}
    return {
        "threshold": THRESHOLD,
        "audit": [{"findings": ["early"]}, {"findings": ["early"]}],
        "tokens_before": _tokens(w),
        "n_needed": 5,
        "needed": needed,
        "lab": {
            # the summary keeps the rule and the limits path in other words; the rest is lost
            "recorded": {
                "kept": {"instruction": 1, "path": 1},
                "tokens": _tokens([("compaction_summary", [{"type": "text", "text": summary}])]),
            },
            # the last 5 turns: from the test run on; the memory file written holds the rule
            "keep_last": {
                "kept": {"instruction": 1, "path": 1, "command": 1, "error": 1},
                "tokens": _tokens([w[i] for t in _TURNS[-5:] for i in t]),
            },
            # every input stays: the rule, the limits path, the command (and the test path in
            # it); the error line was in a result before the last 3 turns
            "mask": {
                "kept": {"instruction": 1, "path": 2, "command": 1},
                "tokens": _tokens(_masked(w, 3)),
            },
            "trim": {"kept": dict(needed), "tokens": _tokens(_trimmed(w, 500))},
            "extractive": {
                "kept": dict(needed),
                "tokens": _tokens(
                    [("compaction_summary", [{"type": "text", "text": _extractive_text()}])]
                ),
            },
        },
    }


def write_session(folder: str | Path) -> tuple[Path, dict[str, Any]]:
    """The forgetting session under ``folder`` and its lab truth."""
    return f.write_session(folder), truth()
