"""A small Claude Code session with planted facts, a compaction that drops some of them, the
agent fetching them again, and the cache figures and recovery lengths that follow.

``write_session(folder)`` writes ``<folder>/forgetting/<session>.jsonl`` and
``<session>.truth.json``. The truth is what the simulator planted and did:

- ``items``: every item of the swept span, as the rules of the loss ledger define them
  (kind, value, whether the summary keeps it exactly, in other words, or not, whether the
  agent saved it before, and how it came back after);
- ``cache``: the usage of the last call before and the first calls after the compaction,
  the tokens shed, and the counterfactual without the compaction under the Anthropic cache
  rules (writes 1.25x, reads 0.1x of base input) at ``PRICE`` (USD per million), computed by
  the simulator from its own window (what the prompt would have held);
- ``recovery``: tool calls and model calls before the first productive action (an edit, a
  write, a command) at the cold start and after the compaction, and the files read again.

Independent of adfkit (imports nothing from it). Same seed, same bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from .claude_code import SUMMARY_PREFIX, Session
from .codex import SUMMARY_PREFIX as SUMMARY_PREFIX_CODEX
from .codex import Rollout

#: USD per million tokens of the model the session uses (input, output).
PRICE = (3.0, 15.0)
#: Anthropic cache rules: cache write and cache read as multiples of base input.
WRITE, READ = 1.25, 0.1
CWD = "/w/app"
UPLOAD = f"{CWD}/src/upload.py"
LIMITS = f"{CWD}/src/limits.py"
MEMO = f"{CWD}/CLAUDE.md"
TEST = "tests/test_upload.py"
COMMAND = f"pytest -q {TEST}"
ERROR = f"FAILED {TEST}::test_big - AssertionError: 413"
RULE = "Always run make check before committing"
DOCS = "https://docs.example.org/limits"
TODO = "Raise the proxy body limit"
#: The summary: keeps the upload path and the handler name as written, the limits file and
#: the rule in other words, and drops the rest.
SUMMARY = (
    f"Summary:\n1. Edited {UPLOAD} so that handle_upload streams the body.\n"
    "2. The limits py module was read.\n"
    "3. The user wants make check run before committing.\n"
)
SUMMARY_2 = f"Summary:\n1. Edited {UPLOAD} earlier; the limit is raised.\n"
QUIET = "the body is streamed in chunks and the handler returns early"
#: What a Read returns: long enough that the compaction sheds most of the window.
LONG = "\n".join([QUIET] * 400)


class _Recording(Session):
    """A session that records the usage of every call it makes."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.calls: list[dict[str, int]] = []

    def call(self, blocks: list[dict[str, Any]], **kw: Any) -> Any:
        before = dict(self.usage)
        row = super().call(blocks, **kw)
        d = {k: self.usage[k] - before[k] for k in self.usage}
        self.calls.append(
            {
                "prompt": d["input"],
                "output": d["output"],
                "cache_read": d["cache_read"],
                "cache_write": d["cache_write"],
                "uncached": d["input"] - d["cache_read"] - d["cache_write"],
            }
        )
        return row

    def tool(self, name: str, inp: dict[str, Any], result: str, *, error: bool = False) -> None:
        tid = f"toolu_{self.uuid().replace('-', '')[:22]}"
        self.call([{"type": "tool_use", "id": tid, "name": name, "input": inp}])
        self.results([(tid, result, error)], through_progress=False)

    def say(self, text: str) -> None:
        self.call([{"type": "text", "text": text}])


def _cost(uncached: int, write: int, read: int, out: int) -> float:
    base, o = PRICE[0] / 1e6, PRICE[1] / 1e6
    return uncached * base + write * base * WRITE + read * base * READ + out * o


def write_session(folder: str | Path, seed: int = 20261201) -> Path:
    """Write the session and its truth under ``<folder>/forgetting``; returns the session."""
    rng = random.Random(seed)
    out = Path(folder) / "forgetting"
    sid = "f0e1d2c3-b4a5-4697-8899-aabbccddeeff"
    s = _Recording(rng, sid, CWD, "2.1.90", 1772352000000)
    # -- before the compaction: the planted facts ------------------------------------------
    s.user(f"{RULE}. The upload limit is 25 MB and the handler is `handle_upload`.")
    s.tool("Read", {"file_path": UPLOAD}, LONG)
    s.tool("Read", {"file_path": LIMITS}, LONG)
    s.tool("Bash", {"command": COMMAND}, ERROR, error=True)  # the first productive action
    s.tool("Edit", {"file_path": UPLOAD, "old_string": "read", "new_string": "stream"}, QUIET)
    s.tool("TodoWrite", {"todos": [{"content": TODO, "status": "pending"}]}, "Todos updated")
    s.tool("Write", {"file_path": MEMO, "content": f"{RULE}.\n"}, "File created")
    s.say(f"Done for now; see {DOCS} for the proxy side.")
    before = dict(s.calls[-1])
    n_before = len(s.calls)
    # -- the compaction, with the summary above ----------------------------------------------
    s.compact("auto")
    _set_summary(s, SUMMARY_PREFIX + SUMMARY)
    # -- after: re-orientation, the same error again, the user repeats the rule --------------
    s.tool("Read", {"file_path": LIMITS}, LONG)
    s.tool("Bash", {"command": COMMAND}, ERROR, error=True)
    s.user(f"{RULE}.")
    s.tool("Edit", {"file_path": LIMITS, "old_string": "25", "new_string": "50"}, QUIET)
    for n in range(5):
        s.say(f"Step {n} is done.")
    after = s.calls[n_before:]
    # -- a second compaction: a summary of the summary, which keeps only the upload path ----
    s.compact("auto")
    _set_summary(s, SUMMARY_PREFIX + SUMMARY_2)
    s.tool("Bash", {"command": "make check"}, "ok")
    s.say("Checked.")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{sid}.jsonl"
    path.write_text(s.text(), encoding="utf-8")
    truth = {
        "file": path.name,
        "items": _items(),
        "cache": _cache(before, after, window=None),
        # a window the third call after would overflow without the compaction
        "cache_window": _cache(before, after, window=_shed(before, after) + after[1]["prompt"]),
        "recovery": {
            "cold": {"actions": 2, "calls": 3, "tool": "Bash", "reads": 2, "again": 0},
            "compaction": {"actions": 1, "calls": 2, "tool": "Bash", "reads": 1, "again": 1},
            "compaction_2": {"actions": 0, "calls": 1, "tool": "Bash", "reads": 0, "again": 0},
            "reread": [LIMITS],
        },
        # through both summaries: (kind, value) -> verdicts in order, and how it ended
        "survival": {
            f"path {UPLOAD}": ["exact", "exact"],  # censored: kept to the end
            "identifier handle_upload": ["exact", "lost"],  # drift: lost in the second
            f"path {LIMITS}": ["normalised"],  # refreshed: read again, swept again
            f"instruction {RULE}": ["normalised"],  # refreshed: the user repeated it
        },
        "calls": s.calls,
    }
    (out / f"{sid}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return path


def _set_summary(s: Session, text: str) -> None:
    """Replace the text of the summary the last compaction wrote (and its size)."""
    for i in range(len(s.lines) - 1, -1, -1):
        rec = json.loads(s.lines[i])
        if rec.get("isCompactSummary"):
            rec["message"]["content"] = text
            s.lines[i] = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
            s.window[0].size = len(text) // 4
            return
    raise AssertionError("no summary written")


def _items() -> list[dict[str, Any]]:
    """Every item of the swept span: kind, value, kept, saved, how it came back (None: not).

    Calls after the compaction, counted to the one that brought the item back: the Read of
    the limits file is call 1, the Bash run call 2 (its result the same error), and the
    user's repeat comes after call 2."""
    return [
        {"kind": "instruction", "value": RULE, "kept": "normalised", "saved": MEMO,
         "back": ("user", 2)},
        {"kind": "quantity", "value": "25 MB", "kept": "lost", "saved": None, "back": None},
        {"kind": "identifier", "value": "handle_upload", "kept": "exact", "saved": None,
         "back": None},
        {"kind": "path", "value": UPLOAD, "kept": "exact", "saved": None, "back": None},
        {"kind": "path", "value": LIMITS, "kept": "normalised", "saved": None,
         "back": ("tool_input", 1)},
        {"kind": "command", "value": COMMAND, "kept": "lost", "saved": None,
         "back": ("tool_input", 2)},
        {"kind": "path", "value": TEST, "kept": "lost", "saved": None,
         "back": ("tool_result", 2)},
        {"kind": "error", "value": ERROR, "kept": "lost", "saved": None,
         "back": ("tool_result", 2)},
        {"kind": "todo", "value": TODO, "kept": "lost", "saved": "todos", "back": None},
        {"kind": "path", "value": MEMO, "kept": "lost", "saved": None, "back": None},
        {"kind": "url", "value": DOCS, "kept": "lost", "saved": None, "back": None},
    ]  # fmt: skip


def _shed(before: dict[str, int], after: list[dict[str, int]]) -> int:
    """What the compaction took out of the prompt (only the summary came between)."""
    return before["prompt"] + before["output"] - after[0]["prompt"]


def _cache(
    before: dict[str, int], after: list[dict[str, int]], window: int | None
) -> dict[str, Any]:
    """The cache figures and the counterfactual without the compaction, from the simulator's
    own prompts: without it, every later prompt would hold what was shed. Sums stop before
    the first call that would overflow ``window``."""
    shed = _shed(before, after)
    actual, without = [], []
    cached = before["prompt"] + before["output"]  # what the before call left in the cache
    overflow = None
    for n, c in enumerate(after, start=1):
        actual.append(_cost(c["uncached"], c["cache_write"], c["cache_read"], c["output"]))
        p = c["prompt"] + shed
        if overflow is None and window is not None and p > window:
            overflow = n
        read = min(cached, p - c["uncached"])
        without.append(_cost(c["uncached"], p - c["uncached"] - read, read, c["output"]))
        cached = p + c["output"]
    m = len(actual) if overflow is None else overflow - 1
    spent = got = 0.0
    even = None
    for n, (x, y) in enumerate(zip(actual[:m], without[:m], strict=True), start=1):
        spent, got = spent + x, got + y
        if even is None and spent <= got + 1e-12:
            even = n
    return {
        "before": before,
        "after": after[0],
        "shed": shed,
        "invalidated": before["cache_read"] + before["cache_write"] - after[0]["cache_read"],
        "cost_after": sum(actual),
        "cost_without": sum(without[:m]),
        "net": sum(without[:m]) - sum(actual[:m]),
        "break_even": even,
        "window": window,
        "overflow": overflow,
        "n_after": len(after),
    }


# -- the same story in a Codex rollout ------------------------------------------------------
class _CodexRecording(Rollout):
    """A rollout that records the usage of every model call (the summarising one apart)."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.calls: list[dict[str, int]] = []
        self.summarising = False
        self.summary_usage: dict[str, int] | None = None

    def _usage(self, out: int, reasoning: int) -> dict[str, int]:
        u = super()._usage(out, reasoning)
        if self.summarising:
            self.summary_usage = dict(u)
        else:
            self.calls.append(dict(u))
        return u

    def _summarize_call(self) -> dict[str, int]:
        self.summarising = True
        try:
            return super()._summarize_call()
        finally:
            self.summarising = False

    def step(self, name: str, args: dict[str, Any] | str, result: str) -> None:
        cid = f"call_{self.rng.getrandbits(64):016x}"
        self.call([(cid, name, args)], None)
        self.output(cid, name, result)


def _patch(path: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-read\n+stream\n*** End Patch\n"


CODEX_CWD = "/w/svc"
CODEX_LIMITS = "src/limits.rs"
CODEX_UPLOAD = "src/upload.rs"
CODEX_COMMAND = "cargo test -q upload"
CODEX_ERROR = "error: test failed, to rerun pass `--lib upload::big`"
CODEX_SUMMARY = f"Summary:\n1. Patched {CODEX_UPLOAD} so handle_upload streams.\n"


def write_rollout(folder: str | Path, seed: int = 20261202) -> Path:
    """A Codex rollout with planted facts and a local compaction; returns the rollout."""
    rng = random.Random(seed)
    r = _CodexRecording(rng, CODEX_CWD, 1772438400000, "gpt-5.3-codex")
    r.start("0.104.0")
    r.task_started()
    r.turn_context()
    r.prompt(f"{RULE}.")  # Codex keeps the user's messages: not swept
    r.step("read_file", {"path": CODEX_LIMITS}, LONG)
    r.step("shell", {"command": ["bash", "-lc", CODEX_COMMAND]}, CODEX_ERROR)
    r.step("apply_patch", _patch(CODEX_UPLOAD), "Success.")
    r.step("update_plan", {"plan": [{"step": TODO, "status": "pending"}]}, "Plan updated")
    r.call([], f"Done; handle_upload streams now, see {DOCS}.")
    r.task_complete("done")
    before = dict(r.calls[-1])
    n_before = len(r.calls)
    r.compact_local(replacement=False)
    _set_codex_summary(r, SUMMARY_PREFIX_CODEX + "\n" + CODEX_SUMMARY)
    r.task_started()
    r.turn_context()
    r.prompt("Go on.")
    r.step("read_file", {"path": CODEX_LIMITS}, LONG)
    r.step("shell", {"command": ["bash", "-lc", CODEX_COMMAND]}, CODEX_ERROR)
    r.step("apply_patch", _patch(CODEX_LIMITS), "Success.")
    r.call([], "Raised.")
    r.task_complete("Raised.")
    after = r.calls[n_before:]
    folder_ = r.folder(Path(folder) / "forgetting-codex")
    folder_.mkdir(parents=True, exist_ok=True)
    path = folder_ / r.name()
    path.write_text("\n".join(r.lines) + "\n", encoding="utf-8")
    su = r.summary_usage or {}
    truth = {
        "file": path.name,
        "items": [
            {"kind": "path", "value": CODEX_LIMITS, "kept": "lost", "back": ("tool_input", 1)},
            {
                "kind": "command",
                "value": f"bash -lc {CODEX_COMMAND}",
                "kept": "lost",
                "back": ("tool_input", 2),
            },
            {"kind": "error", "value": CODEX_ERROR, "kept": "lost", "back": ("tool_result", 2)},
            {"kind": "path", "value": CODEX_UPLOAD, "kept": "exact", "back": None},
            {"kind": "todo", "value": TODO, "kept": "lost", "back": None},
            {"kind": "identifier", "value": "handle_upload", "kept": "exact", "back": None},
            {"kind": "url", "value": DOCS, "kept": "lost", "back": None},
        ],  # fmt: skip
        "cache": {
            "before": before,
            "after": after[0],
            # OpenAI caches the whole prompt: the before call's prompt, none of it read again
            "invalidated": before["input"] - after[0]["cached"],
            "compaction_cost": su.get("input", 0) * CODEX_PRICE[0] / 1e6
            + su.get("output", 0) * CODEX_PRICE[1] / 1e6,
        },
        # a command is a productive action in Codex's taxonomy: the first shell run
        "recovery": {
            "cold": {"actions": 1, "calls": 2, "tool": "shell", "again": 0},
            "compaction": {"actions": 1, "calls": 2, "tool": "shell", "again": 1},
        },
        "reread": [CODEX_LIMITS],  # fmt: skip
    }
    path.with_suffix(".truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return path


#: USD per million tokens of gpt-5.3-codex (input, output), as adfkit's price table has them.
CODEX_PRICE = (1.75, 14.0)


def _set_codex_summary(r: Rollout, text: str) -> None:
    for i in range(len(r.lines) - 1, -1, -1):
        rec = json.loads(r.lines[i])
        if rec.get("type") == "compacted":
            rec["payload"]["message"] = text
            r.lines[i] = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
            r.window[-1].size = len(text) // 4 + 40
            return
    raise AssertionError("no compaction written")
