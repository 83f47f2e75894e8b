"""The neutral view of a model call, the scripted answers, and the usage the server reports.

A scenario is stateless: the answer depends on the request alone, so retries, subagents and
resumed sessions get the same answer for the same context. The request's last user message
that holds a task marker (``task-<id>``, written by the driver into its prompts, and into a
subagent's prompt by the script itself) picks the task's script; the number of assistant turns
after that message picks the step. Past the last step the answer is a plain final text.

Neutral messages: ``{"role": "user"|"assistant"|"tool", "content": [block, ...]}`` with blocks
``{"type": "text", "text"}``, ``{"type": "thinking", "text"}``,
``{"type": "tool_use", "id", "name", "input"}``,
``{"type": "tool_result", "tool_use_id", "content": str, "is_error": bool}``, and any other
``{"type": ...}`` a dialect meets (an image, a document), kept by type. The system prompt is
apart (``Call.system``), as every API keeps it apart.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MARKER = re.compile(r"\btask-([a-z0-9]+)\b")
#: What a summary says of the task it interrupted: ``task-<id> steps-done-<n>``. An agent that
#: compacts in the middle of a task and keeps the task's prompt (or the summary) as the last
#: marked message goes on from step ``n`` instead of starting the task over.
PROGRESS = re.compile(r"\btask-([a-z0-9]+) steps-done-(\d+)\b")


@dataclass
class Call:
    """One model request, as the model saw it."""

    dialect: str
    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]  # {"name", "description", "parameters": JSON schema}
    stream: bool
    body_bytes: int

    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m["role"] == "user":
                texts = [b.get("text", "") for b in m["content"] if b["type"] == "text"]
                if texts:
                    return "\n".join(texts)
        return ""

    def canonical(self) -> str:
        """The request as one string, in the order a prompt cache sees it."""
        return json.dumps([self.system, self.tools, self.messages], sort_keys=True)

    def as_json(self) -> dict[str, Any]:
        return {
            "dialect": self.dialect,
            "model": self.model,
            "system": self.system,
            "messages": self.messages,
            "tools": [t["name"] for t in self.tools],
            "stream": self.stream,
        }


@dataclass
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass
class Usage:
    """Tokens of one call. ``input`` is the whole prompt, cached part included; a dialect
    splits it the way its API reports (Anthropic: uncached, cache read, cache write apart)."""

    input: int
    cache_read: int
    output: int


@dataclass
class Answer:
    kind: str  # "turn", "compaction" or "side"
    text: str = ""
    tool_uses: list[ToolUse] = field(default_factory=list)
    usage: Usage = field(default_factory=lambda: Usage(0, 0, 0))
    task: str | None = None
    step: int | None = None
    n: int = 0  # the log line's number: unique per server, for message ids

    @property
    def stop(self) -> str:
        return "tool_use" if self.tool_uses else "end"

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "task": self.task,
            "step": self.step,
            "text": self.text,
            "tool_uses": [{"id": t.id, "name": t.name, "input": t.input} for t in self.tool_uses],
            "usage": {
                "input": self.usage.input,
                "cache_read": self.usage.cache_read,
                "output": self.usage.output,
            },
        }


@dataclass
class Want:
    """A tool call the script wants: a kind (``shell``, ``read``, ``write``, ``list``,
    ``task``) or an exact tool name (``=Name``), with arguments by meaning (``command``,
    ``path``, ``content``, ``prompt``, ``description``) or by the tool's own names."""

    kind: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Step:
    """One model answer within a task: tool calls (several: parallel), else text."""

    text: str = ""
    tools: list[Want] = field(default_factory=list)


TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "shell": ("bash", "shell", "run_shell_command", "exec_command", "shell_command", "exec"),
    "read": ("read", "read_file", "view", "readfile", "read_text_file"),
    "write": ("write", "write_file", "create", "writefile", "create_file"),
    "list": ("ls", "list_directory", "list", "glob", "list_dir"),
    "task": ("task", "agent", "spawn_agent", "subagent", "delegate"),
}
ARG_NAMES: dict[str, tuple[str, ...]] = {
    "command": ("command", "cmd"),
    "path": ("file_path", "absolute_path", "path", "filePath", "dir_path", "directory", "filename"),
    "content": ("content", "file_text", "text", "contents"),
    "prompt": ("prompt", "message", "task", "instructions"),
    "description": ("description", "title", "summary"),
}


def resolve_tool(tools: list[dict[str, Any]], want: Want) -> tuple[str, dict[str, Any]] | None:
    """The tool of the request that does what ``want`` asks, and its input from its schema."""
    by_name = {t["name"].lower(): t for t in tools}
    if want.kind.startswith("="):
        tool = by_name.get(want.kind[1:].lower())
    else:
        tool = next((by_name[n] for n in TOOL_NAMES[want.kind] if n in by_name), None)
    if tool is None:
        return None
    return tool["name"], fill_input(tool.get("parameters") or {}, want.args)


def fill_input(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for key, value in args.items():
        if key in props:
            out[key] = value
            continue
        name = next((n for n in ARG_NAMES.get(key, ()) if n in props), None)
        if name is not None:
            kind = props[name].get("type")
            out[name] = ["bash", "-lc", value] if kind == "array" and key == "command" else value
    for name in schema.get("required") or ():
        if name not in out:
            out[name] = _default(props.get(name) or {})
    return out


def _default(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if "enum" in prop:
        return prop["enum"][0]
    return {"boolean": False, "integer": 1, "number": 1, "array": [], "object": {}}.get(
        kind if isinstance(kind, str) else "", "step"
    )


@dataclass
class Scenario:
    """What the model answers. ``compaction_markers`` are phrases of the agent's own
    summarisation prompt (looked for in the system prompt and the last user message);
    ``side_markers`` map a phrase of a side request (a title, a check) to its answer."""

    tasks: dict[str, list[Step]]
    compaction_markers: tuple[str, ...] = ()
    side_markers: dict[str, str] = field(default_factory=dict)
    summary: Callable[[Call], str] | None = None
    resolver: Callable[[Call, Want], tuple[str, dict[str, Any]] | None] | None = None

    def kind_of(self, call: Call) -> str:
        probe = call.system + "\n" + call.last_user_text()
        if any(m in probe for m in self.compaction_markers):
            return "compaction"
        if any(m in probe for m in self.side_markers):
            return "side"
        return "turn"

    def decide(self, call: Call, ids: Callable[[], str]) -> Answer:
        kind = self.kind_of(call)
        if kind == "compaction":
            return Answer(kind, text=(self.summary or default_summary)(call))
        if kind == "side":
            probe = call.system + "\n" + call.last_user_text()
            return Answer(kind, text=next(v for k, v in self.side_markers.items() if k in probe))
        task, step = locate(call)
        steps = self.tasks.get(task or "", [])
        if task is None or step >= len(steps):
            return Answer(kind, text=f"Done: job {task or 'none'} finished.", task=task, step=step)
        return self._step(call, steps[step], task, step, ids)

    def _step(self, call: Call, step: Step, task: str, k: int, ids: Callable[[], str]) -> Answer:
        uses = []
        for want in step.tools:
            hit = self.resolver(call, want) if self.resolver else resolve_tool(call.tools, want)
            if hit is not None:
                uses.append(ToolUse(ids(), hit[0], hit[1]))
        text = step.text if step.text or uses else f"(no tool for {step.tools!r})"
        return Answer("turn", text=text, tool_uses=uses, task=task, step=k)


def locate(call: Call) -> tuple[str | None, int]:
    """The task of the last user message holding a marker, and the assistant turns since."""
    for i in range(len(call.messages) - 1, -1, -1):
        m = call.messages[i]
        if m["role"] != "user":
            continue
        texts = " ".join(b.get("text", "") for b in m["content"] if b["type"] == "text")
        done = PROGRESS.findall(texts)
        if done:
            task, n = done[-1]
            return task, int(n) + _assistant_turns(call.messages[i + 1 :])
        found = MARKER.findall(texts)
        if found:
            return found[-1], _assistant_turns(call.messages[i + 1 :])
    return None, 0


def _assistant_turns(messages: list[dict[str, Any]]) -> int:
    turns, previous = 0, ""
    for m in messages:
        if m["role"] == "assistant" and previous != "assistant":
            turns += 1
        previous = m["role"]
    return turns


def default_summary(call: Call) -> str:
    """A summary that names what the conversation touched and how far the task it
    interrupted went (``task-<id> steps-done-<n>``, :data:`PROGRESS`)."""
    words = sorted(set(re.findall(r"[\w./-]+\.(?:py|md|txt|json|toml)", call.canonical())))
    named = ", ".join(words[:12]) or "nothing in particular"
    task, step = locate(call)
    pending = f"task-{task} steps-done-{step}" if task else "none"
    return (
        "<summary>\n1. Primary request: keep the demo project tidy.\n"
        f"2. Files touched: {named}.\n3. Next: continue with the pending job ({pending}).\n"
        "</summary>"
    )


class Meter:
    """Usage that grows with the request and reads a cache for the prefix already seen:
    input is the body's bytes / 4, the cache read the longest common prefix (in canonical
    form) with any of the last requests / 4."""

    def __init__(self, keep: int = 16) -> None:
        self._seen: list[str] = []
        self._keep = keep
        self._lock = threading.Lock()

    def measure(self, call: Call, answer: Answer) -> Usage:
        raw = call.canonical()
        text = VOLATILE.sub(_placeholder, raw)
        with self._lock:
            prefix = max((_common_prefix(text, s) for s in self._seen), default=0)
            self._seen = ([text] + self._seen)[: self._keep]
        total = math.ceil((call.body_bytes - len(raw) + len(text)) / 4)
        cached = min(total, prefix // 4) // 64 * 64
        written = json.dumps([answer.text, [t.input for t in answer.tool_uses]])
        return Usage(input=total, cache_read=cached, output=math.ceil(len(written) / 4) + 5)


#: Values of varying length an agent puts into what it sends and that differ from run to run:
#: the nickname Codex gives a subagent (``"nickname":"Faraday"``), the process group id in
#: Gemini CLI's shell results (``PGID: 21997``). The meter counts each as a fixed-width value,
#: so a re-recording reports the same usage (times and ids have a fixed width already).
VOLATILE = re.compile(r'(nickname\\*"\s*:\s*\\*")([A-Za-z][A-Za-z -]*)|(PGID: )(\d+)')


def _placeholder(m: re.Match[str]) -> str:
    return (m.group(1) or m.group(3)) + "v" * 8


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on equal prefixes: fast for long strings
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def stable_id(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:24]
