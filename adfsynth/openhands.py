"""Seeded simulator of OpenHands V1 conversations (SDK/CLI persistence), with ground truth.

Writes ``<out>/openhands/conversations/<id hex>/`` folders laid out as openhands-sdk 1.58 writes
them (``base_state.json``, ``events/event-<idx:05d>-<event id>.json`` one compact JSON object
each, an empty ``events/.eventlog.lock``) and ``<out>/openhands/<id hex>.truth.json`` beside
the conversations folder: every event's kind, the rows in order (the event indexes each row
holds), per condensation its trigger, the indexes it forgot, the summary's index and the
condenser call's usage, and the usage sums per usage id. The condenser is OpenHands'
``LLMSummarizingCondenser`` as its source states it: before each agent step, when the view (the
events not forgotten, the last summary at ``keep_first``) holds more than ``max_size`` events, or
a ``CondensationRequest`` is pending, it forgets ``view[keep_first:-tail]`` with ``tail =
target // 2 - keep_first - 1`` (target: ``max_size``, or the view's length after a request) and
writes a ``Condensation`` whose ``forgotten_event_ids`` come from a set (shuffled). Event times
are local times without a zone (UTC+02:00 here), the cost records' times epoch seconds, as the
SDK writes them. The truth is the simulator's own state, not a re-read. Independent of adfkit.
Same seed, same bytes.

Run: ``python adfsynth/openhands.py sample_agents/``
"""

from __future__ import annotations

import json
import random
import sys
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ZONE = timedelta(hours=2)  # the machine's local time: what OpenHands writes, without the zone
BASE_TOKENS = 6_200  # system prompt + tool schemas
CACHED_BASE = 6_000
WORDS = ["parser", "module", "test", "fixture", "config", "patch", "branch", "cache", "index"]
CONDENSE_REQUEST_TEXT = "/condense"


def _compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass
class _Ev:
    idx: int
    id: str
    kind: str
    obj: dict[str, Any]
    size: int = 0  # tokens it adds to the prompt
    in_view: bool = False


@dataclass
class Conversation:
    rng: random.Random
    model: str
    t0: int  # epoch ms
    max_size: int = 14
    keep_first: int = 2
    usage_id: str = "agent"
    anthropic: bool = False
    events: list[_Ev] = field(default_factory=list)
    view: list[str] = field(default_factory=list)  # event ids (and summary ids) the LLM sees
    sizes: dict[str, int] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)  # event id -> its tool-call batch
    usages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    costs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rows: list[list[int]] = field(default_factory=list)
    row_kinds: list[str] = field(default_factory=list)
    condensations: list[dict[str, Any]] = field(default_factory=list)
    request: bool = False
    request_manual: bool = False
    last_prompt: int = 0
    last_total: int = 0
    n_resp: int = 0
    n_calls: int = 0

    def __post_init__(self) -> None:
        self.id = uuidlib.UUID(int=self.rng.getrandbits(128), version=4)
        self.t = self.t0

    # -- writing ------------------------------------------------------------------------------
    def uid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def local(self) -> str:
        d = datetime.fromtimestamp(self.t / 1000, tz=UTC) + ZONE
        return d.replace(tzinfo=None).isoformat()

    def emit(self, kind: str, source: str, body: dict[str, Any], size: int = 0) -> _Ev:
        self.t += self.rng.randint(5, 900)
        eid = self.uid()
        parent = self.events[-1].id if self.events else None
        obj = {"id": eid, "timestamp": self.local(), "source": source}
        if parent is not None:
            obj["parent_id"] = parent
        obj.update(body)
        obj["kind"] = kind
        ev = _Ev(len(self.events), eid, kind, obj, size)
        self.events.append(ev)
        if size:
            self.view.append(eid)
            self.sizes[eid] = size
        return ev

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def call(self, usage_id: str, prompt: int, cache_read: int) -> str:
        """One model call's usage record (and cost record) under ``usage_id``."""
        self.n_resp += 1
        rid = f"chatcmpl-synth-{self.id.hex[:6]}-{self.n_resp:04d}"
        out = self.rng.randint(20, 400)
        uncached = min(self.rng.randint(3, 60), prompt - cache_read)  # the newest turn's tail
        cache_write = (prompt - cache_read - uncached) if self.anthropic else 0
        self.usages.setdefault(usage_id, []).append(
            {
                "model": self.model,
                "prompt_tokens": prompt,
                "completion_tokens": out,
                "cache_read_tokens": cache_read,
                "cache_write_tokens": cache_write,
                "reasoning_tokens": 0,
                "context_window": 200000 if self.anthropic else 128000,
                "per_turn_token": prompt + out,
                "response_id": rid,
            }
        )
        self.t += self.rng.randint(400, 3000)
        self.costs.setdefault(usage_id, []).append(
            {"model": self.model, "cost": round(prompt * 1e-6, 8), "timestamp": self.t / 1000}
        )
        return rid

    # -- the conversation ---------------------------------------------------------------------
    def system_prompt(self) -> None:
        text = "You are OpenHands agent, a helpful AI assistant. " + self.words(60)
        ev = self.emit(
            "SystemPromptEvent",
            "agent",
            {
                "system_prompt": {"cache_prompt": False, "type": "text", "text": text},
                "tools": [{"title": "terminal", "kind": "TerminalTool"}],
            },
            size=len(text) // 4,
        )
        self.rows.append([ev.idx])
        self.row_kinds.append("context")

    def user(self, text: str) -> None:
        ev = self.emit(
            "MessageEvent",
            "user",
            {
                "llm_message": {
                    "role": "user",
                    "content": [{"cache_prompt": False, "type": "text", "text": text}],
                    "thinking_blocks": [],
                },
                "activated_skills": [],
                "extended_content": [],
            },
            size=len(text) // 4 + 4,
        )
        self.rows.append([ev.idx])
        self.row_kinds.append("message")
        if text.startswith(CONDENSE_REQUEST_TEXT):
            self.request_manual = True

    def prompt_tokens(self) -> int:
        return BASE_TOKENS + sum(self.sizes[x] for x in self.view)

    def agent_call(self) -> str:
        self.maybe_condense()
        prompt = self.prompt_tokens()
        cache_read = min(self.last_prompt, prompt) if self.last_prompt else 0
        self.last_prompt = prompt
        self.n_calls += 1
        rid = self.call(self.usage_id, prompt, cache_read)
        u = self.usages[self.usage_id][-1]
        self.last_total = u["prompt_tokens"] + u["completion_tokens"]
        return rid

    def tool_step(self, tools: list[tuple[str, dict[str, Any], str]]) -> None:
        """One model response calling ``tools`` (several: parallel calls, one response)."""
        rid = self.agent_call()
        idxs = []
        acts = []
        for i, (name, args, _out) in enumerate(tools):
            cid = f"call_{self.rng.getrandbits(40):010x}"
            thought = (
                [{"cache_prompt": False, "type": "text", "text": self.words(8)}] if i == 0 else []
            )
            ev = self.emit(
                "ActionEvent",
                "agent",
                {
                    "thought": thought,
                    "thinking_blocks": [],
                    "action": {**args, "kind": name.title().replace("_", "") + "Action"},
                    "tool_name": name,
                    "tool_call_id": cid,
                    "tool_call": {
                        "id": cid,
                        "name": name,
                        "arguments": _compact(args),
                        "origin": "completion",
                    },
                    "llm_response_id": rid,
                    "security_risk": "LOW",
                    "summary": f"{name}: {self.words(3)}",
                },
                size=40 + len(_compact(args)) // 4,
            )
            idxs.append(ev.idx)
            acts.append((ev, cid, name))
            self.units[ev.id] = rid
        self.rows.append(idxs)
        self.row_kinds.append("assistant")
        for (ev, cid, name), (_n, _a, out) in zip(acts, tools, strict=True):
            obs = self.emit(
                "ObservationEvent",
                "environment",
                {
                    "tool_name": name,
                    "tool_call_id": cid,
                    "observation": {
                        "content": [{"cache_prompt": False, "type": "text", "text": out}],
                        "is_error": out.startswith("ERROR"),
                        "kind": name.title().replace("_", "") + "Observation",
                    },
                    "action_id": ev.id,
                    "extended_content": [],
                },
                size=len(out) // 4 + 8,
            )
            self.units[obs.id] = rid
            self.rows.append([obs.idx])
            self.row_kinds.append("tool_result")

    def reply(self, text: str) -> None:
        rid = self.agent_call()
        ev = self.emit(
            "MessageEvent",
            "agent",
            {
                "llm_message": {
                    "role": "assistant",
                    "content": [{"cache_prompt": False, "type": "text", "text": text}],
                    "thinking_blocks": [],
                },
                "llm_response_id": rid,
                "activated_skills": [],
                "extended_content": [],
            },
            size=len(text) // 4 + 4,
        )
        self.rows.append([ev.idx])
        self.row_kinds.append("assistant")

    def condensation_request(self) -> None:
        """What the agent emits on a context-window error (or a user's ``/condense``)."""
        self.emit("CondensationRequest", "environment", {})
        self.request = True

    def maybe_condense(self) -> None:
        if not self.request and len(self.view) <= self.max_size:
            return
        target = len(self.view) // 2 if self.request else self.max_size // 2
        tail = target - self.keep_first - 1
        cut = len(self.view) - max(tail, 0)
        unit = self.units.get
        while cut > self.keep_first and cut < len(self.view):  # never split a call from its results
            a, b = self.view[cut - 1], self.view[cut]
            if unit(a) is None or unit(a) != unit(b):
                break
            cut -= 1
        forgotten = self.view[self.keep_first : cut]
        kept_head = self.view[: self.keep_first]
        kept_tail = self.view[cut:]
        prompt = 300 + sum(self.sizes[x] for x in forgotten)
        rid = self.call("condenser", prompt, 0)
        summary = (
            f"USER_CONTEXT: {self.words(6)}. COMPLETED: {self.words(10)}. PENDING: {self.words(4)}."
        )
        ids = list(forgotten)
        self.rng.shuffle(ids)  # written from a set
        ev = self.emit(
            "Condensation",
            "environment",
            {
                "forgotten_event_ids": ids,
                "summary": summary,
                "summary_offset": self.keep_first,
                "llm_response_id": rid,
            },
        )
        sid = f"{ev.id}-summary"
        self.sizes[sid] = len(summary) // 4 + 4
        self.view = [*kept_head, sid, *kept_tail]
        by_id = {e.id: e.idx for e in self.events}
        trig = "manual" if self.request and self.request_manual else "auto"
        self.condensations.append(
            {
                "idx": ev.idx,
                "trigger": trig,
                "requested": self.request,
                "forgotten": sorted(by_id[x] for x in forgotten if x in by_id),
                "forgotten_summaries": sorted(
                    by_id[x[: -len("-summary")]] for x in forgotten if x.endswith("-summary")
                ),
                "summary": summary,
                "usage": self.usages["condenser"][-1],
                "agent_input_before": self.last_prompt or None,
                "agent_total_before": self.last_total or None,
            }
        )
        self.rows.append([ev.idx])
        self.row_kinds.append("compaction_summary")
        self.request = False
        self.request_manual = False
        self.last_total = 0
        self.last_prompt = 0  # the prompt changed: the next call reads only the base from cache

    # -- files --------------------------------------------------------------------------------
    def state(self, cwd: str, extra_usage: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        llm = {"model": self.model, "api_key": "**********", "usage_id": self.usage_id}
        metrics = {}
        usages = {**self.usages, **extra_usage}
        for uid, tus in usages.items():
            acc = {
                k: sum(u[k] for u in tus)
                for k in (
                    "prompt_tokens",
                    "completion_tokens",
                    "cache_read_tokens",
                    "cache_write_tokens",
                    "reasoning_tokens",
                )
            }
            metrics[uid] = {
                "model_name": self.model,
                "accumulated_cost": round(sum(c["cost"] for c in self.costs.get(uid, [])), 8),
                "accumulated_token_usage": {"model": self.model, **acc, "response_id": ""},
                "costs": self.costs.get(uid, []),
                "response_latencies": [
                    {"model": self.model, "latency": 0.5, "response_id": u["response_id"]}
                    for u in tus
                ],
                "token_usages": tus,
            }
        return {
            "id": str(self.id),
            "agent": {
                "llm": llm,
                "tools": [{"name": "terminal", "params": {}}],
                "condenser": {
                    "llm": {**llm, "usage_id": "condenser"},
                    "max_size": self.max_size,
                    "keep_first": self.keep_first,
                    "minimum_progress": 0.1,
                    "kind": "LLMSummarizingCondenser",
                },
                "kind": "Agent",
            },
            "workspace": {"working_dir": cwd, "kind": "LocalWorkspace"},
            "persistence_dir": f"/home/user/.openhands/conversations/{self.id.hex}",
            "max_iterations": 500,
            "execution_status": "finished",
            "leaf_event_id": self.events[-1].id,
            "head_is_empty": False,
            "stats": {"usage_to_metrics": metrics},
            "secret_registry": {"secret_sources": {}},
        }

    def write(
        self,
        folder: Path,
        cwd: str,
        *,
        half_written_last: bool = False,
        extra_usage: dict[str, list[dict[str, Any]]] | None = None,
    ) -> dict[str, Any]:
        ev_dir = folder / "events"
        ev_dir.mkdir(parents=True, exist_ok=True)
        (ev_dir / ".eventlog.lock").write_bytes(b"")
        last = self.events[-1]
        for e in self.events:
            data = _compact(e.obj)
            if half_written_last and e is last:
                data = data[: len(data) // 2]
            (ev_dir / f"event-{e.idx:05d}-{e.id}.json").write_text(data, encoding="utf-8")
        extra = extra_usage or {}
        (folder / "base_state.json").write_text(
            json.dumps(self.state(cwd, extra), indent=2) + "\n", encoding="utf-8"
        )
        sums = {
            uid: {
                k: sum(u[k] for u in tus)
                for k in (
                    "prompt_tokens",
                    "completion_tokens",
                    "cache_read_tokens",
                    "cache_write_tokens",
                )
            }
            for uid, tus in {**self.usages, **extra}.items()
        }
        n_rows = len(self.rows) - (1 if half_written_last else 0)
        return {
            "folder": folder.name,
            "session_id": str(self.id),
            "kinds": [e.kind for e in self.events],
            "half_written_last": half_written_last,
            "rows": self.rows[:n_rows],
            "row_kinds": self.row_kinds[:n_rows],
            "condensations": self.condensations,
            "usage_sums": sums,
            "n_agent_calls": self.n_calls,
            "zone_offset_hours": ZONE.total_seconds() / 3600,
        }


def _task(c: Conversation, n_steps: int) -> None:
    for _ in range(n_steps):
        r = c.rng.random()
        if r < 0.15:
            c.tool_step(
                [
                    ("terminal", {"command": "ls " + c.words(1)}, c.words(30)),
                    ("file_editor", {"command": "view", "path": "/w/" + c.words(1)}, c.words(50)),
                ]
            )
        elif r < 0.55:
            c.tool_step(
                [
                    (
                        "terminal",
                        {"command": "pytest -q " + c.words(2)},
                        c.words(c.rng.randint(20, 120)),
                    )
                ]
            )
        elif r < 0.75:
            c.tool_step(
                [("file_editor", {"command": "str_replace", "path": "/w/a.py"}, "ERROR: no match")]
                if r < 0.6
                else [("file_editor", {"command": "create", "path": "/w/b.py"}, "File created.")]
            )
        elif r < 0.9:
            c.tool_step([("think", {"thought": c.words(25)}, "Your thought has been logged.")])
        else:
            c.tool_step([("task_tracker", {"command": "plan"}, "Task list updated.")])


def _main(out: Path, rng: random.Random) -> dict[str, Any]:
    c = Conversation(rng, "anthropic/claude-sonnet-4-5-20250929", 1796200000000, anthropic=True)
    c.system_prompt()
    c.user("Fix the failing tests in the parser module, then summarise what you changed.")
    _task(c, 16)  # condenses twice on its own (view > max_size)
    c.condensation_request()  # the agent's, on a context-window error
    _task(c, 3)
    c.user(CONDENSE_REQUEST_TEXT)
    c.condensation_request()  # the user's /condense
    _task(c, 4)
    c.reply("All tests pass now. " + c.words(20))
    c.tool_step([("finish", {"message": "done"}, "done")])
    folder = out / "conversations" / c.id.hex
    # a call of another LLM (a title generator) that no event names
    title = [
        {
            "model": c.model,
            "prompt_tokens": 412,
            "completion_tokens": 9,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
            "context_window": 200000,
            "per_turn_token": 421,
            "response_id": "chatcmpl-synth-title-0001",
        }
    ]
    truth = c.write(
        folder, "/home/user/src/parser", half_written_last=True, extra_usage={"title": title}
    )
    sub = Conversation(rng, "anthropic/claude-sonnet-4-5-20250929", 1796200500000, anthropic=True)
    sub.system_prompt()
    sub.user("Look for every caller of parse_rows and list them.")
    _task(sub, 3)
    sub.reply("Three callers: " + sub.words(6))
    truth["subagent"] = sub.write(folder / "subagents" / sub.id.hex, "/home/user/src/parser")
    return truth


def _small(out: Path, rng: random.Random) -> dict[str, Any]:
    c = Conversation(rng, "openai/gpt-4o-mini", 1796100000000, max_size=240)
    c.system_prompt()
    c.user("What does this repository do?")
    _task(c, 3)
    c.reply("It parses agent memory files. " + c.words(10))
    return c.write(out / "conversations" / c.id.hex, "/home/user/src/small")


def write_samples(outdir: str | Path, seed: int = 20261202) -> Path:
    """Write the sample conversations under ``<outdir>/openhands``; returns that folder."""
    out = Path(outdir) / "openhands"
    rng = random.Random(seed)
    for truth in (_main(out, rng), _small(out, rng)):
        (out / f"{truth['folder']}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return out


if __name__ == "__main__":
    print(write_samples(sys.argv[1] if len(sys.argv) > 1 else "sample_agents"))
