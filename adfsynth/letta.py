"""Seeded simulator of a Letta agent, written as the agent file Letta exports, with truth.

Writes ``<out>/letta/<name>.af`` (the current layout, ``letta/schemas/agent_file.py``
``AgentFileSchema``: ``agents``, ``groups``, ``blocks``, ``files``, ``sources``, ``tools``,
``mcp_servers``, ``metadata``, ``created_at``) and ``<name>.truth.json`` beside it. The agent
talks with a user over several turns: each user message packaged as Letta packages it
(``{"type": "user_message", "message", "time"}``), each reply an assistant message with
reasoning and one tool call (``send_message``, ``archival_memory_search``, ``web_search``, or
a memory edit, after which Letta writes the system prompt again with the block's new value and
puts it first in context), the tool's answer a ``tool`` message with ``tool_returns``. When
the messages in context pass a budget, Letta's summarizer keeps the newest messages and
writes a summary: a user message whose content is a ``system_alert`` ("prior messages (h of t
total messages) have been hidden from view ... The following is a summary of the previous n
messages", ``letta/system.py`` ``package_summarize_message``); the first two are written as
the newest releases write them (``package_summarize_message_no_counts`` with
``compaction_stats``), the last as older releases do. The file keeps every message (as an
export of a self-hosted server with its history) and ``in_context_message_ids`` in the order
the model is sent them.

The truth is the simulator's own state: per message its role and kind; per compaction the
summary's position, the messages it took out of the context, the system prompts replaced
before it (out of context too, by no compaction), the messages it kept; the messages in
context at the end; the tool calls by name; the memory blocks' final values. Independent of
adfkit. Same seed, same bytes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

TOPICS = ["tomatoes", "frost", "compost", "seed trays", "grafting", "aphids", "mulch", "rain"]
#: The (toy) context window; Letta summarizes when its estimate of the context passes 90% of
#: it (letta/constants.py SUMMARIZATION_TRIGGER_MULTIPLIER).
WINDOW = 800
TRIGGER = int(WINDOW * 0.9)
#: Messages the summarizer keeps (the newest).
KEEP = 6


@dataclass
class Agent:
    rng: random.Random
    t: datetime
    blocks: dict[str, str] = field(
        default_factory=lambda: {
            "persona": "I am Fern, a patient gardening companion.",
            "human": "Name: unknown.",
        }
    )
    msgs: list[dict[str, Any]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    ctx: list[int] = field(default_factory=list)  # positions in context, system first
    superseded: list[int] = field(default_factory=list)  # system prompts replaced
    compactions: list[dict[str, Any]] = field(default_factory=list)
    #: position of each assistant message -> the messages the model was sent for it, in order
    #: (the system prompt left out)
    contexts: dict[int, list[int]] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)
    n_tool: int = 0

    def tick(self) -> str:
        self.t += timedelta(seconds=self.rng.randint(2, 40))
        return self.t.isoformat()

    def add(self, kind: str, **m: Any) -> int:
        i = len(self.msgs)
        base = {
            "type": "message",
            "content": [],
            "name": None,
            "otid": None,
            "sender_id": None,
            "batch_item_id": None,
            "group_id": None,
            "id": f"message-{i}",
            "model": "claude-sonnet-4-5-20250929",
            "agent_id": "agent-0",
            "tool_calls": None,
            "tool_call_id": None,
            "tool_returns": [],
            "created_at": self.tick(),
            "approve": None,
            "approval_request_id": None,
            "denial_reason": None,
            "approvals": [],
        }
        base.update(m)
        self.msgs.append(base)
        self.kinds.append(kind)
        return i

    def system(self) -> None:
        rendered = "\n".join(f"<{k}>\n{v}\n</{k}>" for k, v in self.blocks.items())
        text = f"You are Fern, a Letta agent.\n<memory_blocks>\n{rendered}\n</memory_blocks>"
        i = self.add("system", role="system", content=[{"type": "text", "text": text}])
        if self.ctx:
            self.superseded.append(self.ctx[0])
            self.ctx[0] = i
        else:
            self.ctx.append(i)

    def packed(self, kind: str, message: str, **extra: Any) -> str:
        return json.dumps({"type": kind, "message": message, "time": self.t.isoformat(), **extra})

    def turn(self, n: int) -> None:
        topic = self.rng.choice(TOPICS)
        u = self.add(
            "message",
            role="user",
            content=[{"type": "text", "text": self.packed("user_message", f"what about {topic}?")}],
        )
        self.ctx.append(u)
        tool = self.rng.choice(
            ["send_message", "archival_memory_search", "web_search", "memory_replace"]
        )
        if n % 5 == 2:
            tool = "memory_replace"
        args: dict[str, Any] = {"message": f"Here is what I know about {topic}."}
        if tool == "memory_replace":
            args = {"label": "human", "old_str": self.blocks["human"], "new_str": f"Likes {topic}."}
        elif tool != "send_message":
            args = {"query": topic}
        self.n_tool += 1
        cid = f"call_{self.n_tool:04d}"
        self.contexts[len(self.msgs)] = list(self.ctx[1:])
        a = self.add(
            "assistant",
            role="assistant",
            content=[
                {"type": "reasoning", "is_native": True, "reasoning": f"Think about {topic}."}
            ],
            tool_calls=[
                {
                    "id": cid,
                    "function": {"name": tool, "arguments": json.dumps(args)},
                    "type": "function",
                }
            ],
        )
        self.ctx.append(a)
        self.tools[tool] = self.tools.get(tool, 0) + 1
        ret = json.dumps({"status": "OK", "message": "None", "time": self.t.isoformat()})
        r = self.add(
            "tool_result",
            role="tool",
            name=tool,
            tool_call_id=cid,
            content=[{"type": "text", "text": ret}],
            tool_returns=[
                {
                    "tool_call_id": cid,
                    "status": "success",
                    "stdout": None,
                    "stderr": None,
                    "func_response": ret,
                }
            ],
        )
        self.ctx.append(r)
        if tool == "memory_replace":
            self.blocks["human"] = args["new_str"]
            self.system()

    def estimate(self, ids: list[int]) -> int:
        """The simulator's count of the context: a quarter of its messages' JSON."""
        return sum(len(json.dumps(self.msgs[i]["content"])) for i in ids) // 4

    def compact(self, newer: bool) -> None:
        before = len(self.ctx)
        tokens_before = self.estimate(self.ctx)
        body = self.ctx[1:]
        kept, gone = body[-KEEP:], body[:-KEEP]
        summary = f"We talked about {len(gone)} messages of gardening."
        if newer:
            stats = {
                "trigger": "post_step_context_check",
                "context_tokens_before": tokens_before,
                "context_tokens_after": self.estimate([self.ctx[0], *kept]),
                "context_window": WINDOW,
                "messages_count_before": before,
                "messages_count_after": len(kept) + 2,
            }
            n = stats["messages_count_before"] - stats["messages_count_after"]
            text = (
                f"Note: {n} messages from the beginning of the conversation have been hidden "
                f"from view due to memory constraints.\nThe following is a summary of the "
                f"previous messages:\n {summary}"
            )
            content = self.packed("system_alert", text, compaction_stats=stats)
        else:
            text = (
                f"Note: prior messages ({len(gone)} of {before} total messages) have been hidden "
                f"from view due to conversation memory constraints.\nThe following is a summary "
                f"of the previous {len(gone)} messages:\n {summary}"
            )
            content = self.packed("system_alert", text)
        s = self.add("summary", role="user", content=[{"type": "text", "text": content}])
        superseded = [q for q in self.superseded if q < s and not self._taken(q)]
        self.compactions.append(
            {
                "summary": s,
                "swept": gone,
                "superseded_system": superseded,
                "kept": kept,
                "trigger": "auto" if newer else None,
                "tokens_before": tokens_before if newer else None,
            }
        )
        self.ctx = [self.ctx[0], s, *kept]

    def _taken(self, q: int) -> bool:
        return any(q in c["swept"] or q in c["superseded_system"] for c in self.compactions)


def _document(ag: Agent, name: str) -> dict[str, Any]:
    labels = list(ag.blocks)
    return {
        "agents": [
            {
                "name": name,
                "memory_blocks": [],
                "tools": [],
                "tool_ids": [f"tool-{i}" for i in range(len(ag.tools))],
                "block_ids": [f"block-{i}" for i in range(len(labels))],
                "system": "You are Fern, a Letta agent.",
                "agent_type": "letta_v1_agent",
                "llm_config": {
                    "model": "claude-sonnet-4-5-20250929",
                    "model_endpoint_type": "anthropic",
                    "context_window": WINDOW,
                    "handle": "anthropic/claude-sonnet-4-5-20250929",
                },
                "compaction_settings": {"mode": "sliding_window", "clip_chars": 50_000},
                "message_buffer_autoclear": False,
                "description": "a synthetic gardening companion (adfsynth)",
                "id": "agent-0",
                "in_context_message_ids": [f"message-{i}" for i in ag.ctx],
                "messages": ag.msgs,
                "files_agents": [],
                "group_ids": [],
            }
        ],
        "groups": [],
        "blocks": [
            {
                "label": k,
                "value": ag.blocks[k],
                "limit": 5_000,
                "description": f"the {k} block",
                "read_only": False,
                "id": f"block-{i}",
            }
            for i, k in enumerate(labels)
        ],
        "files": [],
        "sources": [],
        "tools": [
            {"name": t, "id": f"tool-{i}", "tool_type": "letta_core"}
            for i, t in enumerate(sorted(ag.tools))
        ],
        "mcp_servers": [],
        "metadata": {"revision_id": "adfsynth"},
        "created_at": "2026-05-02T09:00:00+00:00",
    }


def simulate(seed: int = 34, turns: int = 22) -> Agent:
    ag = Agent(random.Random(seed), datetime(2026, 5, 2, 9, 0, tzinfo=UTC))
    ag.system()
    for n in range(turns):
        ag.turn(n)
        if ag.estimate(ag.ctx) > TRIGGER:
            ag.compact(newer=len(ag.compactions) < 2)
    return ag


def truth(ag: Agent, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "n_messages": len(ag.msgs),
        "kinds": ag.kinds,
        "n_calls": ag.kinds.count("assistant"),
        "tool_calls": dict(sorted(ag.tools.items())),
        "compactions": ag.compactions,
        "in_context": ag.ctx,
        "contexts": {str(k): v for k, v in ag.contexts.items()},
        "blocks": ag.blocks,
        "context_window": WINDOW,
    }


def write_samples(out: str | Path, name: str = "fern") -> list[Path]:
    """Write ``<out>/letta/<name>.af`` and its truth; return the paths written."""
    folder = Path(out) / "letta"
    folder.mkdir(parents=True, exist_ok=True)
    ag = simulate()
    path = folder / f"{name}.af"
    path.write_text(json.dumps(_document(ag, name), indent=2) + "\n", encoding="utf-8")
    tp = folder / f"{name}.truth.json"
    tp.write_text(json.dumps(truth(ag, name), indent=1) + "\n", encoding="utf-8")
    return [path, tp]


if __name__ == "__main__":
    import sys

    print(*write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"), sep="\n")
