"""Synthetic ADF agent files with known ground truth.

This module writes brand-new ``.adf`` files (SQLite, storage schema 28 by default, plus
older layouts) from seeded, scripted scenarios.  A small simulator imitates what the ADF
runtime does while an agent works: trigger rows, assistant rows with tool calls, one
tool-result row per batch, context rows, the runtime's token estimator, automatic
compaction with the memory-flush nudge and grace call, manual ``loop_compact``,
model-initiated ``loop_clear`` (two audit blobs), inbox/outbox/file audit rows and the
mind files.  Everything it did is recorded in a :class:`GroundTruth` that tests of the
reader compare against.

Independent on purpose: this module does not import the reader. It keeps its own
implementations of what the reader also computes (UTF-16 string length :func:`js_len`, the
runtime's token estimator :func:`estimate_tokens`, the self-observation call
:func:`signature`, context headers, trigger texts, compaction markers), written from
ADF_FORMAT.md, so the ground truth it records cross-checks the reader rather than repeating
it. Do not replace them with imports from ``adfkit._content``/``_observe``/``_replay``.

Output is deterministic for a given ``seed``: time comes from a fixed base timestamp and
all randomness from ``random.Random(seed)``.  The generated files use journal mode
DELETE (no sidecars) and are VACUUMed.

Usage::

    python -m adfkit.synth sample_agents/          # regenerate every committed sample
    python -m adfkit.synth out/ long-runner clean  # just some scenarios
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import pathlib
import random
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import brotli

__all__ = [
    "BASE_MS",
    "GroundTruth",
    "SCENARIOS",
    "Sim",
    "estimate_tokens",
    "js_len",
    "main",
    "signature",
    "write_all",
    "write_scenario",
]

#: Fixed base timestamp (ms) for every scenario: 2026-06-01T08:00:00Z.
BASE_MS = 1_780_300_800_000

SUMMARY_FOOTER = (
    "\n\n---\nYour loop was compacted. The briefing above is what survived — including any "
    "open questions; they are still yours. Continue. Reach out for help if needed."
)
NUDGE_TEXT = (
    "Context is about to be compacted. Before that happens: note anything worth keeping "
    "in your mind pages (refresh the mind.md index and add a mind/log.md entry), cite the "
    "source messages as [S<seq>], and park unfinished work on an open-threads page. "
    "Compaction runs right after this."
)
STARTUP_TEXT = "Agent started. Review your mind for context and take any startup actions."
INBOX_TRIGGER = "[Inbox notification] You have new messages in your inbox."

WORLD_TOOLS = {
    "msg_send",
    "msg_update",
    "sys_fetch",
    "compute_exec",
    "sys_update_config",
    "sys_create_adf",
}
BOOKKEEPING_TOOLS = {
    "sys_set_meta",
    "sys_set_state",
    "sys_set_timer",
    "sys_delete_timer",
    "loop_compact",
    "loop_clear",
}

TOOL_NAMES = [
    "fs_read",
    "fs_write",
    "fs_list",
    "fs_delete",
    "msg_send",
    "agent_discover",
    "msg_list",
    "msg_read",
    "msg_update",
    "sys_code",
    "sys_set_timer",
    "sys_list_timers",
    "sys_delete_timer",
    "sys_get_config",
    "sys_update_config",
    "db_query",
    "loop_compact",
    "loop_clear",
    "say",
    "ask",
    "sys_set_state",
    "sys_get_meta",
    "sys_set_meta",
    "sys_fetch",
]


# ---------------------------------------------------------------------------
# helpers: JS lengths, JSON, estimator, signatures, time
# ---------------------------------------------------------------------------


def js_len(s: str) -> int:
    """Length of ``s`` in UTF-16 code units (JavaScript ``String.length``)."""
    return len(s.encode("utf-16-le")) // 2


def jdump(x: Any) -> str:
    """Compact JSON like ``JSON.stringify`` (key order kept, non-ASCII unescaped)."""
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def _obj(x: Any) -> int:
    if x is None:
        return 4
    if isinstance(x, (bool, int | float)):
        return 5
    if isinstance(x, str):
        return js_len(x) + 2
    if isinstance(x, list):
        return 2 + sum(_obj(i) + 1 for i in x)
    if isinstance(x, dict):
        return 2 + sum(js_len(str(k)) + _obj(v) + 2 for k, v in x.items())
    return 10


def _block_chars(b: dict) -> int:
    t = b.get("type")
    if t == "text":
        return js_len(b.get("text") or "")
    if t == "tool_use":
        return js_len(b.get("name") or "") + _obj(b.get("input"))
    if t == "tool_result":
        c = b.get("content")
        return js_len("" if c is None else str(c))
    if t == "thinking":
        n = js_len(b.get("thinking") or "")
        if b.get("reasoning_details") is not None:
            n += _obj(b["reasoning_details"])
        return n
    return 0


def _row_chars(content: list[dict]) -> int:
    return 16 + sum(_block_chars(b) for b in content)


def estimate_tokens(messages: list[list[dict]]) -> int:
    """The runtime's fast estimator (ADF_FORMAT §9.1) over message contents (text only)."""
    return math.ceil(sum(_row_chars(m) for m in messages) / 3.5)


def injected_file(path: str, text: str) -> str:
    """A file as the runtime injects it into the system prompt (the text kept verbatim)."""
    return f'<injected_file path="{path}">\n{text}\n</injected_file>'


def context_category(content: list[dict]) -> str | None:
    """Category of a ``[Context: <category>]`` row, else None."""
    if len(content) != 1 or content[0].get("type") != "text":
        return None
    t = content[0].get("text") or ""
    if not t.startswith("[Context: "):
        return None
    end = t.find("]")
    if end < 0:
        return None
    return t[len("[Context: ") : end].split(" | ")[0]


def signature(name: str, tool_input: Any) -> str:
    """Self-observation call signature (ADF_FORMAT §8.2)."""
    if tool_input is None or tool_input is False or tool_input == "" or tool_input == 0:
        tool_input = {}
    s = name + " " + jdump(tool_input)
    h, b = 0, s.encode("utf-16-le")
    for i in range(0, len(b), 2):
        h = (h * 31 + (b[i] | b[i + 1] << 8)) & 0xFFFFFFFF
    digits, out = "0123456789abcdefghijklmnopqrstuvwxyz", ""
    while True:
        h, r = divmod(h, 36)
        out = digits[r] + out
        if not h:
            return f"{name}:{out}"


def iso(ms: int) -> str:
    d = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def sha1(s: str | bytes) -> str:
    return hashlib.sha1(s.encode("utf-8") if isinstance(s, str) else s).hexdigest()


def tool_class(name: str, tool_input: Any) -> str:
    """Default self-observation taxonomy (ADF_FORMAT §8.2)."""
    if name in ("fs_write", "fs_transfer"):
        p = ""
        if isinstance(tool_input, dict):
            p = tool_input.get("path") or tool_input.get("dest") or ""
        for prefix, cls in (
            ("mind.md", "bookkeeping"),
            ("soul.md", "bookkeeping"),
            ("metrics/", "bookkeeping"),
            ("memories/", "bookkeeping"),
            ("public/", "world"),
        ):
            if p == prefix or p.startswith(prefix):
                return cls
        return "internal"
    if name in WORLD_TOOLS or name.startswith("mcp_"):
        return "world"
    if name in BOOKKEEPING_TOOLS:
        return "bookkeeping"
    return "internal"


# ---------------------------------------------------------------------------
# ground truth
# ---------------------------------------------------------------------------


@dataclass
class GroundTruth:
    """What a scenario really did.  ``to_json()`` gives the ``.truth.json`` text."""

    scenario: str
    seed: int
    schema_version: int
    threshold: int
    model_id: str
    live_seqs: list[int] = field(default_factory=list)
    history_seqs: list[int] = field(default_factory=list)
    lost_seqs: list[int] = field(default_factory=list)
    max_seq: int = 0
    n_live: int = 0
    n_history: int = 0
    compactions: list[dict] = field(default_factory=list)
    clears: list[dict] = field(default_factory=list)
    nudges: list[dict] = field(default_factory=list)
    context_blocks: dict[str, int] = field(default_factory=dict)
    context_rows: list[dict] = field(default_factory=list)
    turns: list[dict] = field(default_factory=list)
    planted: dict[str, Any] = field(default_factory=dict)
    signatures_ge3: dict[str, int] = field(default_factory=dict)
    mind_versions: list[dict] = field(default_factory=list)
    config_changes: list[dict] = field(default_factory=list)
    audit_rows: list[dict] = field(default_factory=list)
    inbox_ids: list[str] = field(default_factory=list)
    outbox_ids: list[str] = field(default_factory=list)
    deleted_files: list[str] = field(default_factory=list)
    reappended: list[dict] = field(default_factory=list)
    tokens_total: dict[str, int] = field(default_factory=dict)
    n_tool_calls: int = 0
    n_tool_errors: int = 0
    final_files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, d: dict) -> GroundTruth:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


# ---------------------------------------------------------------------------
# the simulator
# ---------------------------------------------------------------------------

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class Sim:
    """Scripted agent runtime.  Scenarios drive it with :meth:`trigger` and :meth:`step`."""

    def __init__(
        self,
        name: str,
        seed: int,
        *,
        threshold: int,
        audit: dict[str, bool],
        schema: int = 28,
        model_id: str = "claude-sonnet-4-5-20250929",
        provider: str = "anthropic",
        description: str = "",
        mind_in_prompt: bool = False,
        vocab: list[str] | None = None,
        sys_overhead: int = 1400,
        enable_compact_tools: bool = True,
    ) -> None:
        self.name = name
        self.seed = seed
        self.rng = random.Random(f"{name}:{seed}")
        self.schema = schema
        self.clock = BASE_MS
        self.model_id = model_id
        self.mind_in_prompt = mind_in_prompt
        self.vocab = vocab or ["alpha", "beta", "gamma"]
        self.sys_overhead = sys_overhead
        self.did = self._did()
        self.owner_did = self._did()
        self.config: dict[str, Any] = self._base_config(
            name, description, provider, model_id, threshold, audit, enable_compact_tools
        )
        self.rows: list[dict] = []  # live rows
        self.history: dict[int, dict] = {}  # every row ever appended, by seq
        self.next_seq = 1
        self.audits: list[dict] = []
        self.files: dict[str, dict] = {}
        self.inbox: list[dict] = []
        self.outbox: list[dict] = []
        self.logs: list[dict] = []
        self.meta: dict[str, tuple[str, str]] = {}
        self.timers: list[dict] = []
        self.tasks: list[dict] = []
        self.call_no = 0
        # runtime counters
        self.chat_tokens = 0
        self.flushed = False
        self.grace = False
        self.need_sp = True
        self.sp_dirty = False
        self.last_dyn: str | None = None
        self.warning: str | None = None
        self.soft_fired = False
        self.imminent_fired = False
        self.mind_snapshot = ""
        self.soul_snapshot: str | None = None
        self.turn_start: int | None = None
        self.pending_post: list[tuple[str, dict]] = []
        # ground truth accumulators
        self.gt = GroundTruth(
            scenario=name,
            seed=seed,
            schema_version=schema,
            threshold=threshold,
            model_id=model_id,
        )
        self.calls: list[dict] = []  # every tool call: seq, tool, input, sig, id
        self.sig_counts: dict[str, int] = {}
        self.last_swept_calls: list[dict] = []
        self._seed_files()

    # -- ids ----------------------------------------------------------------
    def _did(self) -> str:
        return "did:key:z6Mk" + "".join(self.rng.choice(_B58) for _ in range(44))

    def nanoid(self, n: int = 10) -> str:
        return "".join(self.rng.choice(_ALNUM + "_-") for _ in range(n))

    def tick(self, lo: int, hi: int) -> int:
        self.clock += self.rng.randint(lo, hi)
        return self.clock

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(self.vocab) for _ in range(n))

    def sentence(self, n: int = 8) -> str:
        s = self.words(n)
        return s[:1].upper() + s[1:] + "."

    # -- config -------------------------------------------------------------
    def _base_config(self, name, description, provider, model_id, threshold, audit, compact):
        tools = []
        for t in TOOL_NAMES:
            on = True
            if t in ("loop_compact", "loop_clear"):
                on = compact
            entry: dict[str, Any] = {"name": t, "enabled": on, "visible": on}
            if t == "sys_update_config":
                entry["restricted"] = True
            tools.append(entry)
        created = iso(self.clock - 86_400_000)
        cfg: dict[str, Any] = {
            "adf_version": "0.2",
            "id": self.nanoid(12),
            "name": name,
            "description": description,
            "icon": "🧭",
            "handle": name,
            "state": "active",
            "autonomous": False,
            "autostart": False,
            "model": {
                "provider": provider,
                "model_id": model_id,
                "temperature": 0.7,
                "max_tokens": 4096,
            },
            "instructions": f"You are {name}. {description}",
            "context": {
                "audit": {
                    k: bool(audit.get(k, False)) for k in ("loop", "inbox", "outbox", "files")
                },
                "dynamic_instructions": {
                    "inbox_hints": True,
                    "context_warning": True,
                    "idle_reminder": True,
                    "mesh_updates": True,
                },
                "compact_threshold": threshold,
            },
            "tools": tools,
            "triggers": {
                "on_inbox": {"enabled": True, "targets": [{"scope": "agent"}]},
                "on_chat": {"enabled": True, "targets": [{"scope": "agent"}]},
                "on_timer": {"enabled": True, "targets": [{"scope": "agent"}]},
                "on_startup": {"enabled": True, "targets": [{"scope": "agent"}]},
                "on_task_complete": {"enabled": True, "targets": [{"scope": "agent"}]},
                "on_file_change": {
                    "enabled": True,
                    "targets": [{"scope": "agent", "filter": {"watch": "inbox/*"}}],
                },
            },
            "messaging": {
                "receive": True,
                "mode": "proactive",
                "visibility": "localhost",
                "inbox_mode": True,
            },
            "limits": {"execution_timeout_ms": 60000, "max_tool_result_tokens": 16000},
            "logging": {"default_level": "info", "max_rows": 10000},
            "metadata": {"created_at": created, "updated_at": created},
        }
        return cfg

    @property
    def threshold(self) -> int:
        return int(self.config["context"]["compact_threshold"])

    def audit_on(self, kind: str) -> bool:
        a = self.config.get("context", {}).get("audit")
        if a is None:
            a = self.config.get("audit") or {}
        return bool(a.get(kind, False))

    def marker(self) -> str:
        ctx = self.config.get("context", {}).get("audit") or {}
        top = self.config.get("audit") or {}
        return (
            "[Loop Compacted, audited]"
            if ctx.get("loop") or top.get("loop")
            else "[Loop Compacted]"
        )

    def tool_enabled(self, name: str) -> bool:
        return any(
            t["name"] == name and t["enabled"] and t["visible"] for t in self.config["tools"]
        )

    # -- files --------------------------------------------------------------
    def _seed_files(self) -> None:
        t = self.clock - 86_400_000
        readme = "README.md" if self.schema >= 22 else "document.md"
        self.put_file(readme, f"# {self.name}\n\n{self.config['description']}\n", t, "no_delete")
        mind = (
            "# Mind\n\nWorking index. Kept short; details live in pages under `mind/`.\n\n"
            "## Always\n\n- Nothing pinned yet.\n\n## Pages\n\n- (none yet)\n\n"
            "## Rules\n\n- Cite sources as [S<seq>].\n"
        )
        self.put_file("mind.md", mind, t, "no_delete", record=False)
        if self.schema >= 28:
            log = (
                "# Mind Log\n\n<!-- newest first; one heading per change: "
                "## [YYYY-MM-DD] ingest|update|lint | title -->\n"
            )
            self.put_file("mind/log.md", log, t, "no_delete", record=False)
        if self.schema >= 25:
            self.put_file("soul.md", "# Soul\n\nSteady, brief, exact.\n", t, "no_delete")
        self.mind_snapshot = mind
        self.soul_snapshot = self.file_text("soul.md")

    def put_file(self, path, text, ms, protection="none", record=True, seq=None):
        data = text.encode("utf-8") if isinstance(text, str) else text
        old = self.files.get(path)
        mime = "text/markdown" if path.endswith(".md") else None
        if path.endswith(".json"):
            mime = "application/json"
        elif path.endswith(".txt"):
            mime = "text/plain"
        self.files[path] = {
            "content": data,
            "mime_type": mime,
            "size": len(data),
            "protection": old["protection"] if old else protection,
            "created_at": old["created_at"] if old else iso(ms),
            "updated_at": iso(ms),
        }
        if record and (path == "mind.md" or path.startswith("mind/")):
            self.gt.mind_versions.append({"path": path, "seq": seq, "content_sha1": sha1(data)})

    def file_text(self, path: str) -> str | None:
        f = self.files.get(path)
        return None if f is None else f["content"].decode("utf-8")

    # -- loop primitives ----------------------------------------------------
    def display(self) -> list[dict]:
        return sorted(
            self.rows, key=lambda r: (r["ord"] if r["ord"] is not None else r["seq"], r["seq"])
        )

    def conversation(self) -> list[dict]:
        return [r for r in self.display() if context_category(r["content"]) is None]

    def estimate(self) -> int:
        return estimate_tokens([r["content"] for r in self.conversation()])

    def append(self, role, content, *, model=None, tokens=None, ord_=None, at=None) -> dict:
        row = {
            "seq": self.next_seq,
            "role": role,
            "content": content,
            "model": model,
            "tokens": tokens,
            "created_at": self.clock if at is None else at,
            "ord": ord_,
        }
        self.next_seq += 1
        self.rows.append(row)
        self.history[row["seq"]] = row
        cat = context_category(content)
        if cat is not None:
            self.gt.context_blocks[cat] = self.gt.context_blocks.get(cat, 0) + 1
            entry = {"seq": row["seq"], "category": cat}
            if cat == "system_prompt" and self.mind_in_prompt:
                entry["mind_sha1"] = sha1(self.mind_snapshot)
            self.gt.context_rows.append(entry)
        return row

    def text_row(self, text: str) -> dict:
        return self.append("user", [{"type": "text", "text": text}])

    # -- turns --------------------------------------------------------------
    def trigger(self, text: str, kind: str, *, gap: tuple[int, int] = (60_000, 1_800_000)) -> int:
        """Append a trigger row that starts a turn; returns its seq."""
        self.tick(*gap)
        row = self.text_row(text)
        self.turn_start = row["seq"]
        self.gt.turns.append({"start_seq": row["seq"], "kind": kind, "at": row["created_at"]})
        return row["seq"]

    def chat(self, text: str, **kw) -> int:
        return self.trigger(text, "chat", **kw)

    def timer(self, payload: str | None = None, **kw) -> int:
        if self.timers:
            self.timers[0]["run_count"] += 1
            self.timers[0]["last_fired_at"] = self.clock
        body = (
            f"\nPayload: {payload}"
            if payload
            else "\nCheck your mind for context on what to do next."
        )
        return self.trigger("A scheduled timer has fired." + body, "timer", **kw)

    def _dynamic_text(self) -> str:
        parts = []
        unread = sum(1 for m in self.inbox if m["status"] == "unread")
        if unread and self.config["messaging"].get("inbox_mode"):
            parts.append(
                f"[Inbox: {unread} unread] Use msg_read to open them and reply where useful."
            )
        if self.warning:
            parts.append(self.warning)
        return "\n\n".join(parts)

    def _update_warning(self) -> None:
        dyn = self.config["context"]["dynamic_instructions"]
        if not dyn.get("context_warning", True) or not self.tool_enabled("loop_compact"):
            return
        t = self.threshold
        remaining = t - self.chat_tokens
        if 0 < remaining <= 5000 and not self.imminent_fired:
            self.imminent_fired = True
            self.warning = (
                f"🚨 COMPACTION IMMINENT: history is at {self.chat_tokens:,} tokens, "
                f"{remaining:,} short of the {t:,}-token compaction threshold. Save what matters "
                "to your mind pages now (cite [S<seq>]) and call 'loop_compact' at a clean break."
            )
        elif 5000 < remaining <= 15000 and not self.soft_fired:
            self.soft_fired = True
            self.warning = (
                f"⚠️ APPROACHING CONTEXT LIMIT: history is at {self.chat_tokens:,} tokens "
                f"(threshold: {t:,}). Compaction will run automatically at the threshold; keep "
                "durable notes in your mind pages (cite [S<seq>]) and consider 'loop_compact' "
                "at a natural pause."
            )

    def system_prompt_text(self) -> str:
        if not self.mind_in_prompt:
            return (
                f'[Context: system_prompt] ## Identity\n\nYou are "{self.name}" ({self.did}). '
                f"{self.config['description']}\n\n## Operating notes\n\nWork in short turns, "
                "keep notes in files, and write durable learnings to your mind."
            )
        # The runtime's layout: sections split by rules, the injected files (snapshots taken at
        # session start and after every reset) each verbatim between an
        # ``<injected_file path="...">`` line and an ``</injected_file>`` line.
        parts = [
            "[Context: system_prompt] You are an agent living in one ADF file; between turns "
            "you keep only what you wrote down.\n\n## Operating notes\n\nWork in short turns, "
            "keep notes in files, and write durable learnings to your mind."
        ]
        mind = ""
        if self.soul_snapshot is not None:
            mind += (
                "## Your Soul\n\nHow you sound (`soul.md`); revise it when your voice "
                "changes:\n\n" + injected_file("soul.md", self.soul_snapshot) + "\n\n"
            )
        mind += (
            "## Your Mind\n\n`mind.md` is your index, a copy taken when this session began "
            "(refreshed after a compaction, a clear or a restart); details live in pages under "
            "`mind/`:\n\n" + injected_file("mind.md", self.mind_snapshot)
        )
        parts.append(mind)
        parts.append(f"## Agent-Specific Instructions\n\n{self.config['description']}")
        parts.append(f'## Your Identity\n\nYour name is "{self.name}". DID: {self.did}.')
        return "\n\n---\n\n".join(parts)

    def _pre_call(self, flush_hook: Callable[[], list] | None) -> list | None:
        """Top of a model-call iteration. Returns replacement calls for a grace call, if any."""
        t = self.threshold
        replacement = None
        if self.chat_tokens >= t and self.flushed:
            self.compact("auto")
        elif self.chat_tokens >= t:
            self.tick(5, 40)
            row = self.text_row(NUDGE_TEXT)
            self.flushed = True
            self.grace = True
            self.gt.nudges.append({"seq": row["seq"], "chat_tokens": self.chat_tokens})
            if flush_hook is not None:
                replacement = flush_hook()
        self._update_warning()
        # As the runtime: the context rows are written before the pre-flight guard, so a
        # pre-flight compaction sweeps them; the call then goes out with no context row in the
        # new epoch, and the rows follow at the next iteration.
        if self.need_sp or self.sp_dirty:
            self.tick(1, 5)
            self.text_row(self.system_prompt_text())
            self.need_sp = False
            self.sp_dirty = False
        dyn = self._dynamic_text()
        if dyn and dyn != self.last_dyn:
            self.text_row("[Context: dynamic_instructions] " + dyn)
            self.last_dyn = dyn
        bound = min(t + 30000, math.floor(t * 1.3)) if self.grace else t
        if max(self.chat_tokens, self.estimate()) >= bound:
            self.compact("preflight")
        return replacement

    def _usage(self, content: list[dict]) -> dict:
        sys_tokens = self.sys_overhead + math.ceil(js_len(self.system_prompt_text()) / 3.5)
        dyn = self._dynamic_text()
        inp = self.estimate() + sys_tokens + (math.ceil(js_len(dyn) / 3.5) if dyn else 0)
        inp += self.rng.randint(0, 60)
        out = max(1, math.ceil(_row_chars(content) / 3.5) + self.rng.randint(-4, 18))
        tok: dict[str, int] = {"input": inp, "output": out}
        r = self.rng.random()
        if r < 0.45:
            tok["cache_read"] = int(inp * self.rng.uniform(0.55, 0.9))
            if r < 0.15:
                tok["cache_write"] = self.rng.randint(40, 400)
        return tok

    def step(
        self,
        text: str | None = None,
        calls: list | tuple = (),
        *,
        thinking: str | None = None,
        flush_hook: Callable[[], list] | None = None,
    ) -> dict:
        """One model call: assistant row, then (if calls) one tool-result row.

        ``calls`` items are ``(name, input)`` or ``(name, input, content, is_error)``.
        Returns the assistant row.
        """
        replacement = self._pre_call(flush_hook)
        if replacement is not None:
            # the grace call becomes the memory flush; the planned step follows it
            self._model_call(None, replacement, None)
            self._pre_call(None)
        return self._model_call(text, calls, thinking)

    def _model_call(self, text, calls, thinking) -> dict:
        self.call_no += 1
        content: list[dict] = []
        if thinking:
            content.append({"type": "thinking", "thinking": thinking})
        if text:
            content.append({"type": "text", "text": text})
        uses = []
        for c in calls:
            name, inp = c[0], c[1]
            tid = f"toolu_{self.call_no}_{name}_{self.rng.randint(1000, 999999)}"
            block = {"type": "tool_use", "id": tid, "name": name, "input": inp}
            content.append(block)
            uses.append((block, c))
        tokens = self._usage(content)
        self.tick(700, 9000)
        arow = self.append("assistant", content, model=self.model_id, tokens=tokens)
        self.chat_tokens = tokens["input"] + tokens["output"]
        if self.grace:
            self.grace = False
            self.gt.nudges[-1]["grace_seq"] = arow["seq"]
            self.gt.nudges[-1]["grace_chat_tokens"] = self.chat_tokens
        if not uses:
            return arow
        results = []
        self.pending_post = []
        for block, c in uses:
            sig = signature(block["name"], block["input"])
            self.sig_counts[sig] = self.sig_counts.get(sig, 0) + 1
            self.calls.append(
                {
                    "seq": arow["seq"],
                    "tool": block["name"],
                    "input": block["input"],
                    "sig": sig,
                    "id": block["id"],
                }
            )
            if len(c) >= 4:
                res, err = c[2], bool(c[3])
            else:
                res, err = self.execute(block["name"], block["input"], arow["seq"])
            self.gt.n_tool_calls += 1
            self.gt.n_tool_errors += int(err)
            results.append(
                {"type": "tool_result", "tool_use_id": block["id"], "content": res, "is_error": err}
            )
        self.tick(15, 600)
        self.append("user", results)
        for action, args in self.pending_post:
            if action == "compact":
                self.compact("manual", tail=2, instructions=args.get("instructions"))
            elif action == "clear":
                self.model_clear_rest(args)
        self.pending_post = []
        return arow

    # -- tools --------------------------------------------------------------
    def execute(self, name: str, inp: dict, seq: int) -> tuple[str, bool]:
        if name == "fs_read":
            p = inp.get("path", "")
            txt = self.file_text(p)
            if txt is None:
                return f"File not found: {p}", True
            return jdump({"path": p, "content": txt}), False
        if name == "fs_write":
            p = inp["path"]
            content = inp.get("content", "")
            self.put_file(p, content, self.clock, seq=seq)
            if p == "mind.md" and self.mind_in_prompt:
                self.sp_dirty = True
            return f'Wrote "{p}" ({js_len(content)} characters).', False
        if name == "fs_delete":
            p = inp["path"]
            f = self.files.get(p)
            if f is None:
                return f"File not found: {p}", True
            if f["protection"] != "none":
                return f'File "{p}" is protected ({f["protection"]}).', True
            if self.audit_on("files"):
                obj = {"path": p, "content_base64": base64.b64encode(f["content"]).decode()}
                if f["mime_type"]:
                    obj["mime_type"] = f["mime_type"]
                obj["size"] = f["size"]
                self.add_audit("file", obj, ref=p)
            del self.files[p]
            self.gt.deleted_files.append(p)
            return f'Deleted "{p}".', False
        if name == "fs_list":
            prefix = inp.get("prefix", "")
            items = [
                {"path": k, "size": v["size"]}
                for k, v in sorted(self.files.items())
                if k.startswith(prefix)
            ]
            return jdump(items), False
        if name == "sys_set_meta":
            self.meta[inp["key"]] = (str(inp["value"]), "none")
            return f'Meta "{inp["key"]}" set.', False
        if name == "sys_get_meta":
            v = self.meta.get(inp["key"])
            return (v[0] if v else f'Key "{inp["key"]}" not found.'), False
        if name == "db_query":
            n = self.rng.randint(3, 8)
            rows = [
                {
                    "seq": seq - i,
                    "role": "assistant" if i % 2 == 0 else "user",
                    "created_at": self.clock - 40_000 * i,
                    "preview": self.words(self.rng.randint(4, 9)),
                }
                for i in range(n)
            ]
            return json.dumps(rows, indent=2, ensure_ascii=False), False
        if name == "sys_fetch":
            url = inp.get("url", "")
            if self.rng.random() < 0.12:
                return f"Fetch failed: 503 Service Unavailable ({url})", True
            body = " ".join(
                self.sentence(self.rng.randint(8, 16)) for _ in range(self.rng.randint(4, 9))
            )
            return jdump({"status": 200, "url": url, "body": body}), False
        if name == "msg_send":
            return self.send_message(inp), False
        if name == "msg_read":
            unread = [m for m in self.inbox if m["status"] == "unread"]
            for m in unread:
                m["status"] = "read"
            out = [
                {
                    "id": m["message_id"],
                    "from": m["sender_alias"],
                    "subject": m["subject"],
                    "content": m["content"],
                }
                for m in unread
            ]
            return jdump(out), False
        if name == "sys_update_config":
            return self.update_config(inp["path"], inp["value"], seq), False
        if name == "loop_compact":
            n = len(self.rows)
            self.pending_post.append(("compact", inp))
            return (
                f"Compaction initiated for {n} loop entries. The conversation will be "
                "replaced by a briefing.",
                False,
            )
        if name == "loop_clear":
            n = self.model_clear_slice(inp)
            self.pending_post.append(("clear", inp))
            if n == 0:
                return "No entries matched the specified range.", False
            tail = " Entries saved to audit log before deletion." if self.audit_on("loop") else ""
            return f"Deleted {n} loop entries.{tail}", False
        if name == "sys_get_config":
            return jdump({"compact_threshold": self.threshold}), False
        return "ok", False

    def update_config(self, path: str, value: Any, seq: int | None) -> str:
        node = self.config
        keys = path.split(".")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        old = node.get(keys[-1])
        node[keys[-1]] = value
        self.config["metadata"]["updated_at"] = iso(self.clock)
        self.sp_dirty = True
        self.gt.config_changes.append(
            {"seq": seq, "path": path, "old": old, "value": value, "at": self.clock}
        )
        self.log("info", "config", "config_updated", path, f"{path} set to {jdump(value)}")
        return f"Updated {path} = {jdump(value)}."

    def log(self, level, origin, event, target, message, data=None) -> None:
        self.logs.append(
            {
                "level": level,
                "origin": origin,
                "event": event,
                "target": target,
                "message": message,
                "data": None if data is None else jdump(data),
                "created_at": self.clock,
            }
        )

    # -- messages -----------------------------------------------------------
    def _alf(self, mid, frm, to, reply_to, subject, content, ms, alias) -> dict:
        return {
            "version": "1.0",
            "network": "devnet",
            "id": mid,
            "timestamp": iso(ms),
            "from": frm,
            "to": to,
            "reply_to": reply_to,
            "meta": {"card": reply_to.replace("/inbox", "/card")},
            "payload": {
                "sender_alias": alias,
                "subject": subject,
                "content": content,
                "attachments": [],
                "sent_at": iso(ms),
                "signature": "ed25519:" + base64.b64encode(self.rng.randbytes(64)).decode(),
            },
            "signature": "ed25519:" + base64.b64encode(self.rng.randbytes(64)).decode(),
        }

    def receive_message(self, alias: str, did: str, subject: str, content: str) -> dict:
        self.tick(2_000, 120_000)
        mid = self.nanoid(20)
        reply_to = f"http://127.0.0.1:7295/agents/{alias}/inbox"
        alf = self._alf(mid, did, self.did, reply_to, subject, content, self.clock, alias)
        flat = json.loads(jdump(alf))
        flat["payload"]["content"] = "[flattened]"
        flat["payload"]["attachments"] = "[flattened]"
        msg = {
            "id": self.nanoid(10),
            "message_id": mid,
            "from": did,
            "to": self.did,
            "reply_to": reply_to,
            "subject": subject,
            "content": content,
            "attachments": "[]",
            "meta": jdump({"message_verified": True, "payload_verified": True}),
            "sender_alias": alias,
            "card": reply_to.replace("/inbox", "/card"),
            "source": "mesh",
            "sent_at": self.clock,
            "received_at": self.clock,
            "status": "unread",
            "original_message": jdump(flat),
        }
        self.inbox.append(msg)
        self.gt.inbox_ids.append(mid)
        if self.audit_on("inbox"):
            alf["meta"]["message_verified"] = True
            self.add_audit("inbox_message", alf, ref=mid)
        return msg

    def inbox_trigger(self) -> int:
        unread = [m for m in self.inbox if m["status"] == "unread"]
        summary = {
            "unread": len(unread),
            "messages": [
                {"id": m["message_id"], "from": m["sender_alias"], "subject": m["subject"]}
                for m in unread
            ],
        }
        return self.trigger(INBOX_TRIGGER + "\n" + jdump(summary), "inbox")

    def send_message(self, inp: dict) -> str:
        mid = self.nanoid(20)
        to = inp["recipient"]
        address = inp.get("address", "")
        reply_to = f"http://127.0.0.1:7295/agents/{self.name}/inbox"
        alf = self._alf(
            mid, self.did, to, reply_to, inp.get("subject"), inp["content"], self.clock, self.name
        )
        flat = json.loads(jdump(alf))
        flat["payload"]["content"] = "[flattened]"
        flat["payload"]["attachments"] = "[flattened]"
        self.outbox.append(
            {
                "id": self.nanoid(10),
                "message_id": mid,
                "from": self.did,
                "to": to,
                "address": address,
                "reply_to": reply_to,
                "subject": inp.get("subject"),
                "content": inp["content"],
                "sender_alias": self.name,
                "card": reply_to.replace("/inbox", "/card"),
                "return_path": reply_to,
                "status_code": 200,
                "created_at": self.clock,
                "delivered_at": self.clock + self.rng.randint(3, 40),
                "status": "delivered",
                "original_message": jdump(flat),
            }
        )
        self.gt.outbox_ids.append(mid)
        if self.audit_on("outbox"):
            self.add_audit("outbox_message", alf, ref=mid)
        return f"Message delivered to {to}."

    # -- audit --------------------------------------------------------------
    @staticmethod
    def blob_element(row: dict, schema: int) -> dict:
        el: dict[str, Any] = {
            "seq": row["seq"],
            "role": row["role"],
            "content_json": row["content"],
        }
        if row["model"] is not None:
            el["model"] = row["model"]
        if row["tokens"] is not None:
            el["tokens"] = row["tokens"]
        el["created_at"] = row["created_at"]
        if schema >= 28 and row["ord"] is not None:
            el["ord"] = row["ord"]
        return el

    def add_audit(self, source: str, payload: Any, *, ref: str | None = None, rows=None) -> int:
        text = jdump(payload)
        aid = len(self.audits) + 1
        rec: dict[str, Any] = {
            "id": aid,
            "source": source,
            "start_seq": None,
            "end_seq": None,
            "ref": ref,
            "entry_count": len(payload) if isinstance(payload, list) else 1,
            "size_bytes": js_len(text),
            "data": brotli.compress(text.encode("utf-8")),
            "created_at": self.clock,
        }
        if rows is not None:
            seqs = [r["seq"] for r in rows]
            rec["start_seq"], rec["end_seq"] = min(seqs), max(seqs)
            rec["start_at"] = rows[0]["created_at"]
            rec["end_at"] = rows[-1]["created_at"]
            rec["seqs"] = seqs
        else:
            rec["start_at"] = rec["end_at"] = self.clock
        self.audits.append(rec)
        return aid

    def archive_rows(self, rows: list[dict]) -> int | None:
        """Archive ``rows`` (display order) as one ``loop`` audit row if loop audit is on."""
        if not rows or not self.audit_on("loop"):
            return None
        payload = [self.blob_element(r, self.schema) for r in rows]
        return self.add_audit("loop", payload, rows=rows)

    def delete_rows(self, rows: list[dict]) -> None:
        gone = {r["seq"] for r in rows}
        self.rows = [r for r in self.rows if r["seq"] not in gone]

    # -- compaction ---------------------------------------------------------
    def _summary(self, swept: list[dict], instructions: str | None) -> tuple[str, dict]:
        tools: list[str] = []
        paths: list[str] = []
        cites: list[int] = []
        for r in swept:
            for b in r["content"]:
                if b.get("type") == "tool_use":
                    if b["name"] not in tools:
                        tools.append(b["name"])
                    inp = b.get("input") or {}
                    for k in ("path", "url"):
                        v = inp.get(k) if isinstance(inp, dict) else None
                        if isinstance(v, str) and v not in paths:
                            paths.append(v)
                    if len(cites) < 12:
                        cites.append(r["seq"])
        rng = self.rng
        mentioned_paths = [p for p in paths if rng.random() < 0.5]
        if paths and not mentioned_paths:
            mentioned_paths = [paths[0]]
        if len(paths) >= 2 and len(mentioned_paths) == len(paths):
            mentioned_paths = mentioned_paths[:-1]
        mentioned_tools = [t for t in tools if rng.random() < 0.6]
        if tools and not mentioned_tools:
            mentioned_tools = [tools[0]]
        picked = sorted(rng.sample(cites, min(3, len(cites)))) if cites else []
        lines = ["## Briefing", f"- Covers {len(swept)} earlier loop entries."]
        if mentioned_tools:
            lines.append("- Tools in play: " + ", ".join(mentioned_tools) + ".")
        for p in mentioned_paths:
            lines.append(f"- Worked with `{p}`; {self.words(5)}.")
        if instructions:
            lines.append(f"- As asked: {instructions}")
        cite = " ".join(f"[S{s}]" for s in picked)
        lines.append(f"- Open thread: {self.sentence(6)} {cite}".rstrip())
        info = {
            "mentioned_paths": mentioned_paths,
            "omitted_paths": [p for p in paths if p not in mentioned_paths],
            "mentioned_tools": mentioned_tools,
            "cited_seqs": picked,
        }
        return "\n".join(lines), info

    def compact(self, kind: str, *, tail: int = 0, instructions: str | None = None) -> int:
        """Compact the loop; returns the summary seq. ``kind``: auto|preflight|manual."""
        display = self.display()
        tail_rows = display[-tail:] if tail else []
        swept = display[: len(display) - len(tail_rows)]
        trigger_tokens = self.chat_tokens
        summary_text, info = self._summary(swept, instructions)
        transcript_chars = sum(_row_chars(r["content"]) for r in swept)
        self.tick(2_000, 15_000)
        text = f"{self.marker()} {summary_text}{SUMMARY_FOOTER}"
        content = [{"type": "text", "text": text}]
        rec: dict[str, Any] = {
            "kind": kind,
            "instructions": instructions,
            "trigger_chat_tokens": trigger_tokens,
            "marker": self.marker(),
            "tail_seqs": [r["seq"] for r in tail_rows],
            **info,
        }
        if self.schema >= 28:
            audit_id = self.archive_rows(swept)
            self.delete_rows(swept)
            tokens = {
                "input": math.ceil(transcript_chars / 3.5) + 420 + self.rng.randint(0, 40),
                "output": math.ceil(js_len(summary_text) / 3.5) + self.rng.randint(0, 12),
            }
            ord_ = None
            if tail_rows:
                ord_ = min(r["ord"] if r["ord"] is not None else r["seq"] for r in tail_rows) - 1
            srow = self.append("user", content, model=self.model_id, tokens=tokens, ord_=ord_)
            rec["swept_seqs"] = [r["seq"] for r in swept]
        else:
            # fallback / pre-v28: archive the whole loop, then re-append the tail
            audit_id = self.archive_rows(display)
            self.delete_rows(display)
            ord_ = None
            srow = self.append("user", content)
            rec["swept_seqs"] = [r["seq"] for r in display]
            for i, r in enumerate(tail_rows):
                self.tick(1, 5)
                new = self.append(
                    r["role"],
                    r["content"],
                    model=r["model"] if i == 0 else None,
                    tokens=r["tokens"] if i == 0 else None,
                )
                self.gt.reappended.append({"orig_seq": r["seq"], "new_seq": new["seq"]})
        rec["summary_seq"] = srow["seq"]
        rec["ord"] = ord_
        rec["audited"] = audit_id is not None
        rec["audit_id"] = audit_id
        self.gt.compactions.append(rec)
        self.last_swept_calls = [
            c for c in self.calls if c["seq"] in set(rec["swept_seqs"]) - set(rec["tail_seqs"])
        ]
        reason = f"{kind}: {trigger_tokens} >= {self.threshold}" if kind != "manual" else "manual"
        self.log("info", "executor", "loop_compacted", None, f"Loop compacted ({reason})")
        self._reset_after_reload()
        return srow["seq"]

    def _reset_after_reload(self) -> None:
        self.chat_tokens = self.estimate()
        self.flushed = False
        self.grace = False
        self.soft_fired = self.imminent_fired = False
        self.warning = None
        self.last_dyn = None
        self.need_sp = True
        f = self.file_text("mind.md")
        self.mind_snapshot = f if f is not None else ""
        self.soul_snapshot = self.file_text("soul.md")

    # -- loop_clear (model initiated) ----------------------------------------
    def model_clear_slice(self, inp: dict) -> int:
        display = self.display()
        n = len(display)

        def norm(v, default):
            if v is None:
                return default
            v = int(v)
            if v < 0:
                v = max(0, n + v)
            return min(v, n)

        start, end = norm(inp.get("start"), 0), norm(inp.get("end"), n)
        rec: dict[str, Any] = {"start": inp.get("start"), "end": inp.get("end"), "audit_ids": []}
        self.gt.clears.append(rec)
        if start >= end:
            rec["slice_seqs"] = []
            return 0

        def key(r):
            return r["ord"] if r["ord"] is not None else r["seq"]

        lo, hi = key(display[start]), key(display[end - 1])
        sel = [r for r in display if lo <= key(r) <= hi]
        aid = self.archive_rows(sel)
        if aid is not None:
            rec["audit_ids"].append(aid)
        self.delete_rows(sel)
        rec["slice_seqs"] = [r["seq"] for r in sel]
        return len(sel)

    def model_clear_rest(self, inp: dict) -> None:
        rec = self.gt.clears[-1]
        rest = self.display()
        self.tick(5, 50)
        aid = self.archive_rows(rest)
        if aid is not None:
            rec["audit_ids"].append(aid)
        self.delete_rows(rest)
        rec["rest_seqs"] = [r["seq"] for r in rest]
        self.log("info", "executor", "loop_cleared", None, f"Loop cleared ({len(rest)} entries)")
        self._reset_after_reload()

    # -- finishing ----------------------------------------------------------
    def finish(self) -> GroundTruth:
        gt = self.gt
        live = sorted(r["seq"] for r in self.rows)
        audited: set[int] = set()
        for a in self.audits:
            if a["source"] == "loop":
                audited.update(a["seqs"])
        assigned = set(self.history)
        gt.live_seqs = live
        gt.history_seqs = sorted(set(live) | audited)
        gt.lost_seqs = sorted(assigned - set(live) - audited)
        gt.max_seq = self.next_seq - 1
        gt.n_live = len(live)
        gt.n_history = len(gt.history_seqs)
        gt.audit_rows = [
            {
                "id": a["id"],
                "source": a["source"],
                "start_seq": a["start_seq"],
                "end_seq": a["end_seq"],
                "ref": a["ref"],
                "entry_count": a["entry_count"],
                "seqs": a.get("seqs"),
            }
            for a in self.audits
        ]
        gt.signatures_ge3 = {s: n for s, n in sorted(self.sig_counts.items()) if n >= 3}
        tin = tout = tint = 0
        for r in self.history.values():
            t = r["tokens"]
            if isinstance(t, dict):
                tin += t.get("input", 0)
                tout += t.get("output", 0)
            elif isinstance(t, int):
                tint += t
        gt.tokens_total = {"input": tin, "output": tout}
        if tint:
            gt.tokens_total["integer_totals"] = tint
        gt.final_files = {p: sha1(f["content"]) for p, f in sorted(self.files.items())}
        self.meta.setdefault("status", ("idle", "none"))
        return gt


# ---------------------------------------------------------------------------
# writing the SQLite file
# ---------------------------------------------------------------------------

_DDL_COMMON_28 = """
CREATE TABLE adf_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  protection TEXT NOT NULL DEFAULT 'none' CHECK(protection IN ('none','readonly','increment'))
);
CREATE TABLE adf_config (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  config_json TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE adf_loop (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  role TEXT NOT NULL,
  content_json TEXT NOT NULL,
  model TEXT,
  tokens TEXT,
  created_at INTEGER NOT NULL{ord_col}
);
CREATE TABLE adf_inbox (
  id TEXT PRIMARY KEY,
  message_id TEXT,
  "from" TEXT NOT NULL,
  "to" TEXT,
  reply_to TEXT,
  network TEXT DEFAULT 'devnet',
  thread_id TEXT,
  parent_id TEXT,
  subject TEXT,
  content TEXT NOT NULL,
  content_type TEXT,
  attachments TEXT,
  meta TEXT,
  sender_alias TEXT,
  recipient_alias TEXT,
  owner TEXT,
  card TEXT,
  return_path TEXT,
  source TEXT DEFAULT 'mesh',
  source_context TEXT,
  sent_at INTEGER,
  received_at INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'unread',
  original_message TEXT
);
CREATE INDEX idx_adf_inbox_status ON adf_inbox(status);
CREATE INDEX idx_adf_inbox_received ON adf_inbox(received_at);
CREATE INDEX idx_adf_inbox_message_id ON adf_inbox(message_id);
CREATE TABLE adf_outbox (
  id TEXT PRIMARY KEY,
  message_id TEXT,
  "from" TEXT NOT NULL,
  "to" TEXT NOT NULL,
  address TEXT DEFAULT '',
  reply_to TEXT,
  network TEXT DEFAULT 'devnet',
  thread_id TEXT,
  parent_id TEXT,
  subject TEXT,
  content TEXT NOT NULL,
  content_type TEXT,
  attachments TEXT,
  meta TEXT,
  sender_alias TEXT,
  recipient_alias TEXT,
  owner TEXT,
  card TEXT,
  return_path TEXT,
  status_code INTEGER,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER,
  status TEXT NOT NULL DEFAULT 'pending',
  original_message TEXT
);
CREATE INDEX idx_adf_outbox_status ON adf_outbox(status);
CREATE INDEX idx_adf_outbox_message_id ON adf_outbox(message_id);
CREATE TABLE adf_timers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  schedule_json TEXT NOT NULL,
  next_wake_at INTEGER NOT NULL,
  payload TEXT,
  scope TEXT NOT NULL DEFAULT '["system"]',
  lambda TEXT,
  warm INTEGER NOT NULL DEFAULT 0,
  run_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  last_fired_at INTEGER,
  locked INTEGER NOT NULL DEFAULT 0,
  expired INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_adf_timers_wake ON adf_timers(next_wake_at);
CREATE TABLE adf_files (
  path TEXT PRIMARY KEY,
  content BLOB NOT NULL,
  mime_type TEXT,
  size INTEGER NOT NULL,
  protection TEXT NOT NULL DEFAULT 'none' CHECK(protection IN ('read_only','no_delete','none')),
  authorized INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
{audit_ddl}
CREATE TABLE adf_identity (
  purpose TEXT PRIMARY KEY,
  value BLOB NOT NULL,
  encryption_algo TEXT DEFAULT 'plain',
  salt BLOB,
  kdf_params TEXT,
  code_access INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE adf_attestations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  role TEXT NOT NULL,
  issued_at TEXT NOT NULL,
  expires_at TEXT,
  scope TEXT,
  signature TEXT NOT NULL,
  raw_json TEXT NOT NULL
);
CREATE INDEX idx_adf_attestations_subject ON adf_attestations(subject);
CREATE TABLE adf_tasks (
  id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  args TEXT NOT NULL DEFAULT '{{}}',
  status TEXT NOT NULL DEFAULT 'pending',
  result TEXT,
  error TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  origin TEXT,
  requires_authorization INTEGER NOT NULL DEFAULT 0,
  executor_managed INTEGER NOT NULL DEFAULT 0,
  approval_meta TEXT
);
CREATE INDEX idx_adf_tasks_status ON adf_tasks(status);
CREATE TABLE adf_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  level TEXT NOT NULL DEFAULT 'info',
  origin TEXT,
  event TEXT,
  target TEXT,
  message TEXT NOT NULL,
  data TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX idx_adf_logs_level ON adf_logs(level);
CREATE INDEX idx_adf_logs_origin ON adf_logs(origin);
"""

_AUDIT_28 = """CREATE TABLE adf_audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,
  start_seq INTEGER,
  end_seq INTEGER,
  ref TEXT,
  entry_count INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  data BLOB NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX idx_adf_audit_source_start ON adf_audit(source, start_seq);"""

_AUDIT_27 = """CREATE TABLE adf_audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,
  start_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL,
  entry_count INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  data BLOB NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX idx_adf_audit_source ON adf_audit(source);"""

# Pre-public layout (schema 12): `schema_version` meta key, no protection/authorized/locked
# columns, legacy `protected` flag on files, `adf_peers`, integer token totals, and an
# adf_loop that predates the `model` column.
_DDL_12 = """
CREATE TABLE adf_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE adf_config (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  config_json TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE adf_loop (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  role TEXT NOT NULL,
  content_json TEXT NOT NULL,
  tokens INTEGER,
  created_at INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE adf_inbox (
  id TEXT PRIMARY KEY,
  message_id TEXT,
  "from" TEXT NOT NULL,
  "to" TEXT,
  reply_to TEXT,
  network TEXT DEFAULT 'devnet',
  thread_id TEXT,
  parent_id TEXT,
  subject TEXT,
  content TEXT NOT NULL,
  content_type TEXT,
  attachments TEXT,
  meta TEXT,
  sender_alias TEXT,
  recipient_alias TEXT,
  owner TEXT,
  card TEXT,
  return_path TEXT,
  source TEXT DEFAULT 'mesh',
  source_context TEXT,
  sent_at INTEGER,
  received_at INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'unread',
  original_message TEXT
);
CREATE TABLE adf_outbox (
  id TEXT PRIMARY KEY,
  message_id TEXT,
  "from" TEXT NOT NULL,
  "to" TEXT NOT NULL,
  address TEXT DEFAULT '',
  reply_to TEXT,
  network TEXT DEFAULT 'devnet',
  thread_id TEXT,
  parent_id TEXT,
  subject TEXT,
  content TEXT NOT NULL,
  content_type TEXT,
  attachments TEXT,
  meta TEXT,
  sender_alias TEXT,
  recipient_alias TEXT,
  owner TEXT,
  card TEXT,
  return_path TEXT,
  status_code INTEGER,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER,
  status TEXT NOT NULL DEFAULT 'pending',
  original_message TEXT
);
CREATE TABLE adf_timers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  schedule_json TEXT NOT NULL,
  next_wake_at INTEGER NOT NULL,
  payload TEXT,
  scope TEXT NOT NULL DEFAULT '["system"]',
  lambda TEXT,
  warm INTEGER NOT NULL DEFAULT 0,
  run_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  last_fired_at INTEGER
);
CREATE TABLE adf_files (
  path TEXT PRIMARY KEY,
  content BLOB NOT NULL,
  mime_type TEXT,
  size INTEGER NOT NULL,
  protected INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE adf_identity (
  purpose TEXT PRIMARY KEY,
  value BLOB NOT NULL,
  encryption_algo TEXT DEFAULT 'plain',
  salt BLOB,
  kdf_params TEXT,
  code_access INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE adf_tasks (
  id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  args TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'pending',
  result TEXT,
  error TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  origin TEXT
);
CREATE TABLE adf_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  level TEXT NOT NULL DEFAULT 'info',
  origin TEXT,
  event TEXT,
  target TEXT,
  message TEXT NOT NULL,
  data TEXT,
  created_at INTEGER NOT NULL
);
CREATE TABLE adf_peers (
  did TEXT PRIMARY KEY,
  alias TEXT,
  address TEXT,
  last_seen INTEGER
);
"""

FAKE_SECRET = b"FAKE-SECRET-DO-NOT-READ"


def _write_db(sim: Sim, path: pathlib.Path) -> None:
    path = pathlib.Path(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = path.with_name(path.name + suffix)
        if p.exists():
            p.unlink()
    con = sqlite3.connect(str(path))
    con.execute("PRAGMA journal_mode=DELETE")
    schema = sim.schema
    if schema >= 21:
        ddl = _DDL_COMMON_28.format(
            ord_col=",\n  ord INTEGER" if schema >= 28 else "",
            audit_ddl=_AUDIT_28 if schema >= 28 else _AUDIT_27,
        )
    else:
        ddl = _DDL_12
    con.executescript(ddl)
    end = sim.clock + 500
    # meta
    meta_rows: list[tuple[str, str, str]] = [("adf_version", "0.2", "readonly")]
    if schema >= 14:
        meta_rows.append(("adf_schema_version", str(schema), "readonly"))
        meta_rows += [
            ("adf_name", sim.name, "none"),
            ("adf_handle", sim.name, "none"),
            ("adf_created_at", sim.config["metadata"]["created_at"], "readonly"),
            ("adf_updated_at", iso(end), "none"),
            ("adf_parent_did", "", "readonly"),
            ("adf_did", sim.did, "readonly"),
            ("adf_owner_did", sim.owner_did, "readonly"),
        ]
    else:
        meta_rows.append(("schema_version", str(schema), "readonly"))
        meta_rows += [("name", sim.name, "none"), ("did", sim.did, "readonly")]
    for k, (v, prot) in sorted(sim.meta.items()):
        meta_rows.append((k, v, prot))
    checkpoint = {
        "id": sim.nanoid(10),
        "status": "completed",
        "started_at": sim.clock - 4000,
        "updated_at": sim.clock,
        "completed_at": sim.clock,
        "event_type": "chat",
        "scope": "agent",
        "replay": "not_attempted",
    }
    meta_rows.append(("adf_runtime_turn_checkpoint", jdump(checkpoint), "readonly"))
    meta_rows.append(("adf_clean_close", iso(end), "readonly"))
    if schema >= 15:
        con.executemany("INSERT INTO adf_meta(key, value, protection) VALUES (?,?,?)", meta_rows)
    else:
        con.executemany("INSERT INTO adf_meta(key, value) VALUES (?,?)", [r[:2] for r in meta_rows])
    con.execute(
        "INSERT INTO adf_config(id, config_json, updated_at) VALUES (1, ?, ?)",
        (jdump(sim.config), sim.config["metadata"]["updated_at"]),
    )
    # loop
    for r in sorted(sim.rows, key=lambda r: r["seq"]):
        tok = r["tokens"]
        if schema >= 21:
            cols = "seq, role, content_json, model, tokens, created_at"
            vals = [r["seq"], r["role"], jdump(r["content"]), r["model"]]
            vals.append(None if tok is None else jdump(tok))
            vals.append(r["created_at"])
            if schema >= 28:
                cols += ", ord"
                vals.append(r["ord"])
        else:
            cols = "seq, role, content_json, tokens, created_at"
            vals = [r["seq"], r["role"], jdump(r["content"]), tok, r["created_at"]]
        q = ",".join("?" * len(vals))
        con.execute(f"INSERT INTO adf_loop({cols}) VALUES ({q})", vals)
    con.execute("DELETE FROM sqlite_sequence WHERE name='adf_loop'")
    con.execute(
        "INSERT INTO sqlite_sequence(name, seq) VALUES ('adf_loop', ?)", (sim.next_seq - 1,)
    )
    # inbox / outbox
    for m in sim.inbox:
        cols = list(m)
        _insert(con, "adf_inbox", m)
    for m in sim.outbox:
        cols = list(m)
        _insert(con, "adf_outbox", m)
    # timers / tasks
    for t in sim.timers:
        cols = ["schedule_json", "next_wake_at", "payload", "scope", "run_count", "created_at"]
        cols.append("last_fired_at")
        vals = [t[c] for c in cols]
        con.execute(
            f"INSERT INTO adf_timers({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", vals
        )
    for t in sim.tasks:
        cols = ["id", "tool", "args", "status", "result", "created_at", "completed_at", "origin"]
        con.execute(
            f"INSERT INTO adf_tasks({','.join(cols)}) VALUES ({','.join('?' * len(cols))})",
            [t[c] for c in cols],
        )
    # files
    for p, f in sorted(sim.files.items()):
        if schema >= 21:
            con.execute(
                "INSERT INTO adf_files(path, content, mime_type, size, protection, authorized, "
                "created_at, updated_at) VALUES (?,?,?,?,?,0,?,?)",
                (
                    p,
                    f["content"],
                    f["mime_type"],
                    f["size"],
                    f["protection"],
                    f["created_at"],
                    f["updated_at"],
                ),
            )
        else:
            con.execute(
                "INSERT INTO adf_files(path, content, mime_type, size, protected, created_at, "
                "updated_at) "
                "VALUES (?,?,?,?,?,?,?)",
                (
                    p,
                    f["content"],
                    f["mime_type"],
                    f["size"],
                    int(f["protection"] != "none"),
                    f["created_at"],
                    f["updated_at"],
                ),
            )
    # audit
    if schema >= 28:
        for a in sim.audits:
            con.execute(
                "INSERT INTO adf_audit(id, source, start_seq, end_seq, ref, entry_count, "
                "size_bytes, "
                "data, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    a["id"],
                    a["source"],
                    a["start_seq"],
                    a["end_seq"],
                    a["ref"],
                    a["entry_count"],
                    a["size_bytes"],
                    a["data"],
                    a["created_at"],
                ),
            )
    elif schema >= 21:
        for a in sim.audits:
            con.execute(
                "INSERT INTO adf_audit(id, source, start_at, end_at, entry_count, size_bytes, "
                "data, "
                "created_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    a["id"],
                    a["source"],
                    a["start_at"],
                    a["end_at"],
                    a["entry_count"],
                    a["size_bytes"],
                    a["data"],
                    a["created_at"],
                ),
            )
    # identity: one obviously fake row so tests can prove nobody reads it
    con.execute(
        "INSERT INTO adf_identity(purpose, value, encryption_algo, code_access) VALUES (?,?,?,0)",
        ("signing_key", FAKE_SECRET, "plain"),
    )
    for lg in sim.logs:
        con.execute(
            "INSERT INTO adf_logs(level, origin, event, target, message, data, created_at) "
            "VALUES (?,?,?,?,?,?,?)",
            (
                lg["level"],
                lg["origin"],
                lg["event"],
                lg["target"],
                lg["message"],
                lg["data"],
                lg["created_at"],
            ),
        )
    if schema < 21:
        con.execute(
            "INSERT INTO adf_peers(did, alias, address, last_seen) VALUES (?,?,?,?)",
            (sim.owner_did, "owner", "http://127.0.0.1:7295/agents/owner/inbox", sim.clock),
        )
    con.commit()
    con.execute("VACUUM")
    con.close()


def _q(c: str) -> str:
    return f'"{c}"' if c in ("from", "to") else c


def _insert(con: sqlite3.Connection, table: str, row: dict) -> None:
    cols = list(row)
    names = ",".join(_q(c) for c in cols)
    marks = ",".join("?" * len(cols))
    con.execute(f"INSERT INTO {table}({names}) VALUES ({marks})", [row[c] for c in cols])


# ---------------------------------------------------------------------------
# scenario building blocks
# ---------------------------------------------------------------------------

_SURVEY_VOCAB = [
    "heron",
    "plover",
    "estuary",
    "mudflat",
    "transect",
    "tally",
    "roost",
    "banding",
    "census",
    "tide",
    "marsh",
    "reed",
    "curlew",
    "godwit",
    "sandbar",
    "lagoon",
    "sighting",
    "flock",
    "wader",
    "dune",
    "spit",
    "count",
    "observer",
    "drizzle",
    "ebb",
    "flood",
    "egret",
    "sedge",
    "inlet",
    "causeway",
    "shingle",
]

_ORCHARD_VOCAB = [
    "orchard",
    "graft",
    "rootstock",
    "blossom",
    "frost",
    "pruning",
    "cider",
    "pollinator",
    "hive",
    "ladder",
    "crate",
    "russet",
    "bramley",
    "harvest",
    "ledger",
    "spray",
    "canker",
    "mulch",
    "espalier",
    "scion",
    "bud",
    "row",
    "picker",
    "storehouse",
    "cellar",
    "press",
    "pallet",
]

_HARBOUR_VOCAB = [
    "harbour",
    "berth",
    "pilot",
    "manifest",
    "crane",
    "tug",
    "ferry",
    "quay",
    "swell",
    "mooring",
    "buoy",
    "chandler",
    "tonnage",
    "draught",
    "slipway",
    "bollard",
    "lighter",
    "barge",
    "charter",
    "gangway",
    "hawser",
]


def _note_body(sim: Sim, title: str, n: int = 3) -> str:
    return (
        f"# {title}\n\n"
        + "\n".join(f"- {sim.sentence(sim.rng.randint(6, 12))}" for _ in range(n))
        + "\n"
    )


def _work_turn(
    sim: Sim, kind: str, *, world: bool, allow_refetch: bool = True, idx: int = 0
) -> None:
    """A productive turn of the given trigger kind; ``world`` adds an external call."""
    rng = sim.rng
    _start_turn(sim, kind, idx)
    n_steps = rng.randint(1, 3)
    for s in range(n_steps):
        calls: list[tuple] = []
        r = rng.random()
        if r < 0.35:
            slug = f"notes/{rng.choice(sim.vocab)}-{idx}-{s}.md"
            body = _note_body(sim, slug[6:-3], rng.randint(4, 9))
            calls.append(("fs_write", {"mode": "write", "path": slug, "content": body}))
        elif r < 0.6:
            existing = [
                p
                for p in sim.files
                if p.startswith("notes/")
                and p != "notes/todo.md"
                and sim.sig_counts.get(signature("fs_read", {"path": p}), 0) == 0
            ]
            if existing and rng.random() < 0.85:
                calls.append(("fs_read", {"path": rng.choice(existing)}))
            else:
                calls.append(("fs_read", {"path": f"notes/missing-{idx}-{s}.md"}))
        elif r < 0.75:
            calls.append(
                (
                    "db_query",
                    {"sql": f"SELECT seq, role FROM adf_loop WHERE seq > {idx * 7 + s} LIMIT 3"},
                )
            )
        elif r < 0.85:
            calls.append(("fs_list", {"prefix": f"notes/{rng.choice(sim.vocab)}-{idx}"}))
        if world and s == n_steps - 1:
            if rng.random() < 0.5:
                calls.append(
                    (
                        "sys_fetch",
                        {"url": f"https://data.example.org/{rng.choice(sim.vocab)}/{idx}"},
                    )
                )
            else:
                calls.append(
                    (
                        "msg_send",
                        {"recipient": sim.owner_did, "content": f"Update {idx}: {sim.sentence(8)}"},
                    )
                )
        thinking = sim.sentence(10) if rng.random() < 0.15 else None
        text = f"Looking at {sim.words(3)}." if rng.random() < 0.5 else None
        if calls:
            sim.step(text, calls, thinking=thinking)
    sim.step(
        f"Finished request {idx}. "
        + " ".join(sim.sentence(rng.randint(8, 16)) for _ in range(rng.randint(1, 4)))
    )


def _start_turn(sim: Sim, kind: str, idx: int) -> int:
    rng = sim.rng
    if kind == "timer":
        return sim.timer(f"survey round {idx}")
    if kind == "task":
        tid = sim.nanoid(10)
        sim.tasks.append(
            {
                "id": tid,
                "tool": "sys_fetch",
                "args": jdump({"url": f"https://data.example.org/batch/{idx}"}),
                "status": "completed",
                "result": jdump({"status": 200}),
                "created_at": sim.clock,
                "completed_at": sim.clock + 900,
                "origin": "agent",
            }
        )
        return sim.trigger(f"A task has completed.\nTask {tid} (sys_fetch) finished.", "task")
    if kind == "file_change":
        p = f"inbox/drop-{idx}.txt"
        sim.put_file(p, f"dropped file {idx}: {sim.sentence(6)}\n", sim.clock)
        return sim.trigger(f"A file has been created: {p}", "file_change")
    if kind == "startup":
        return sim.trigger(STARTUP_TEXT, "startup")
    return sim.chat(f"{sim.sentence(rng.randint(5, 10))} (request {idx})")


def _add_timer(sim: Sim, payload: str, every_ms: int = 3_600_000) -> None:
    sim.timers.append(
        {
            "schedule_json": jdump({"mode": "interval", "every_ms": every_ms}),
            "next_wake_at": BASE_MS + 400 * every_ms,
            "payload": payload,
            "scope": '["agent"]',
            "run_count": 0,
            "created_at": BASE_MS - 3_600_000,
            "last_fired_at": None,
        }
    )


def _refetch(sim: Sim, idx: int) -> tuple | None:
    """A call that repeats one swept by the last compaction (same tool, same input)."""
    cands = [
        c
        for c in sim.last_swept_calls
        if c["tool"] in ("fs_read", "sys_fetch")
        and sim.sig_counts.get(c["sig"], 0) == 1
        and c["input"].get("path") != "notes/todo.md"
    ]
    if not cands:
        return None
    c = cands[sim.rng.randrange(len(cands))]
    return c


def unread_ids(sim: Sim) -> list[str]:
    return [m["message_id"] for m in sim.inbox if m["status"] == "unread"]


def _mix(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.45:
        return "chat"
    if r < 0.7:
        return "timer"
    if r < 0.82:
        return "task"
    return "file_change"


# ---------------------------------------------------------------------------
# scenarios
# ---------------------------------------------------------------------------


def scenario_long_runner(seed: int = 0) -> Sim:
    sim = Sim(
        "long-runner",
        seed,
        threshold=9000,
        audit={"loop": True},
        description="Shorebird survey assistant that keeps tallies and field notes.",
        vocab=_SURVEY_VOCAB,
    )
    _add_timer(sim, "survey round")
    rng = sim.rng
    t0 = sim.clock
    sim.put_file(
        "notes/todo.md",
        "# Todo\n\n- reconcile the estuary tallies\n- chase the banding sheets\n",
        t0,
    )
    planted_refetches: list[dict] = []
    todo_seqs: list[int] = []
    todo_turns = {6, 19, 33, 47}
    idx = 0
    sim.trigger(STARTUP_TEXT, "startup")
    sim.step("Starting up; reading my todo list.", [("fs_read", {"path": "notes/todo.md"})])
    todo_seqs.append(sim.calls[-1]["seq"])
    sim.step("Ready.")
    n_comp = 0
    # phase A: mixed productive work with world calls
    for idx in range(1, 62):
        kind = "inbox" if idx % 9 == 0 else _mix(rng)
        if kind == "inbox":
            m = sim.receive_message(
                "warden",
                sim.owner_did,
                f"count {idx}",
                f"Tally for sector {idx}: {rng.randint(3, 90)}.",
            )
            sim.inbox_trigger()
            sim.step(None, [("msg_read", {"ids": [m["message_id"]]})])
            sim.step(
                None,
                [
                    (
                        "msg_send",
                        {
                            "recipient": m["from"],
                            "content": f"Logged sector {idx}. {sim.sentence(5)}",
                        },
                    )
                ],
            )
            sim.step("Logged.")
            continue
        if idx in todo_turns:
            _start_turn(sim, kind, idx)
            sim.step("Re-reading the todo list.", [("fs_read", {"path": "notes/todo.md"})])
            todo_seqs.append(sim.calls[-1]["seq"])
            sim.step(None, [("sys_fetch", {"url": f"https://data.example.org/tides/{idx}"})])
            sim.step(f"Todo reviewed. {sim.sentence(9)}")
            continue
        if idx == 40:
            sim.chat("Please compact your loop now; keep the open tally questions.")
            sim.step(
                "Compacting as asked.",
                [
                    (
                        "loop_compact",
                        {"instructions": "Keep open tally questions and sector numbers."},
                    )
                ],
            )
            sim.step("Compacted; continuing with the survey.")
            continue
        if len(sim.gt.compactions) > n_comp:
            n_comp = len(sim.gt.compactions)
            c = _refetch(sim, idx)
            if c is not None:
                _start_turn(sim, kind, idx)
                sim.step(
                    "Re-checking something from before the compaction.", [(c["tool"], c["input"])]
                )
                planted_refetches.append(
                    {
                        "tool": c["tool"],
                        "input": c["input"],
                        "original_seq": c["seq"],
                        "refetch_seq": sim.calls[-1]["seq"],
                        "after_summary_seq": sim.gt.compactions[-1]["summary_seq"],
                    }
                )
                sim.step(
                    None,
                    [
                        (
                            "msg_send",
                            {"recipient": sim.owner_did, "content": f"Rechecked item {idx}."},
                        )
                    ],
                )
                sim.step("Done.")
                continue
        _work_turn(sim, kind, world=True, idx=idx)
    # phase B: no world calls at all, still spending tokens
    spend_starts: list[int] = []
    for _j in range(55):
        idx += 1
        kind = _mix(rng)
        if len(sim.gt.compactions) > n_comp:
            n_comp = len(sim.gt.compactions)
            c = _refetch(sim, idx)
            if c is not None and c["tool"] == "fs_read":
                spend_starts.append(_start_turn(sim, kind, idx))
                sim.step("Looking this up again.", [(c["tool"], c["input"])])
                planted_refetches.append(
                    {
                        "tool": c["tool"],
                        "input": c["input"],
                        "original_seq": c["seq"],
                        "refetch_seq": sim.calls[-1]["seq"],
                        "after_summary_seq": sim.gt.compactions[-1]["summary_seq"],
                    }
                )
                sim.step(f"Nothing new. {sim.sentence(6)}")
                continue
        if rng.random() < 0.25:
            spend_starts.append(_start_turn(sim, kind, idx))
            sim.step(f"Reviewed; {sim.sentence(rng.randint(10, 30))}")
            continue
        before = len(sim.gt.turns)
        _work_turn(sim, kind, world=False, idx=idx)
        spend_starts.append(sim.gt.turns[before]["start_seq"])
    # continue quietly until the next automatic compaction, then a null streak
    target = len(sim.gt.compactions) + 1
    guard = 0
    while len(sim.gt.compactions) < target and guard < 60:
        idx += 1
        guard += 1
        before = len(sim.gt.turns)
        _work_turn(sim, "timer", world=False, idx=idx)
        spend_starts.append(sim.gt.turns[before]["start_seq"])
    # the turn in which the compaction happened has finished; now the null streak
    null_starts: list[int] = []
    for k in range(6):
        idx += 1
        s = sim.timer(f"heartbeat {k}", gap=(600_000, 900_000))
        sim.step(None, [("sys_set_meta", {"key": "heartbeat", "value": f"beat {idx}"})])
        sim.step("Heartbeat recorded.")
        null_starts.append(s)
    spend_starts += null_starts
    sim.gt.planted = {
        "null_streak": null_starts,
        "repeated_signature": {
            "tool": "fs_read",
            "input": {"path": "notes/todo.md"},
            "signature": signature("fs_read", {"path": "notes/todo.md"}),
            "count": len(todo_seqs),
            "seqs": todo_seqs,
        },
        "spend_without_change": spend_starts,
        "refetches": planted_refetches,
    }
    return sim


def scenario_clean(seed: int = 0) -> Sim:
    sim = Sim(
        "clean",
        seed,
        threshold=8000,
        audit={"loop": True},
        description="Orchard logistics agent that confirms every harvest step with the grower.",
        vocab=_ORCHARD_VOCAB,
    )
    rng = sim.rng
    sim.trigger(STARTUP_TEXT, "startup")
    sim.step(None, [("sys_fetch", {"url": "https://orchard.example.net/status/boot"})])
    sim.step("Online.")
    for idx in range(1, 34):
        kind = _mix(rng)
        _work_turn(sim, kind, world=True, idx=idx)
    # make sure the last turn ends with a world call
    sim.chat("Final check for today, please.")
    sim.step(
        None, [("msg_send", {"recipient": sim.owner_did, "content": "All rows picked and logged."})]
    )
    sim.step("Sent the day's wrap-up.")
    sim.gt.planted = {
        "null_streak": [],
        "repeated_signature": None,
        "spend_without_change": [],
        "refetches": [],
    }
    return sim


def scenario_forgetful(seed: int = 0) -> Sim:
    sim = Sim(
        "forgetful",
        seed,
        threshold=7000,
        audit={},
        description="Harbour scheduling helper with auditing switched off.",
        vocab=_HARBOUR_VOCAB,
    )
    rng = sim.rng
    _add_timer(sim, "berth sweep")
    sim.trigger(STARTUP_TEXT, "startup")
    sim.step("Up.")
    for idx in range(1, 47):
        _work_turn(sim, _mix(rng), world=rng.random() < 0.7, idx=idx)
    sim.gt.planted = {
        "null_streak": [],
        "repeated_signature": None,
        "spend_without_change": [],
        "refetches": [],
    }
    return sim


def scenario_messenger(seed: int = 0) -> Sim:
    sim = Sim(
        "messenger",
        seed,
        threshold=40000,
        audit={"loop": True, "inbox": True, "outbox": True, "files": True},
        description="Relay agent that answers peers and keeps scratch files tidy.",
        vocab=_HARBOUR_VOCAB,
    )
    rng = sim.rng
    peer = sim._did()
    peer_addr = "http://127.0.0.1:7295/agents/pilot-desk/inbox"
    sim.trigger(STARTUP_TEXT, "startup")
    sim.step(
        None, [("msg_send", {"recipient": peer, "address": peer_addr, "content": "Relay online."})]
    )
    sim.step("Announced myself.")
    scratch = ["scratch/berths.txt", "scratch/manifest.json", "scratch/tugs.md"]
    for _i, p in enumerate(scratch):
        sim.chat(f"Draft {p} for me.")
        body = (
            jdump({"berths": [rng.randint(1, 30) for _ in range(4)]})
            if p.endswith(".json")
            else _note_body(sim, p, 2)
        )
        sim.step(None, [("fs_write", {"mode": "write", "path": p, "content": body})])
        sim.step(f"Drafted {p}.")
    for round_ in range(4):
        for k in range(2):
            sim.receive_message(
                "pilot-desk",
                peer,
                f"slot {round_}-{k}",
                f"Need a berth at {rng.randint(6, 22)}:00. {sim.sentence(6)}",
            )
        sim.inbox_trigger()
        sim.step(None, [("msg_read", {"ids": unread_ids(sim)})])
        sim.step(
            None,
            [
                (
                    "msg_send",
                    {
                        "recipient": peer,
                        "address": peer_addr,
                        "content": f"Slots {round_} confirmed. {sim.sentence(5)}",
                    },
                )
            ],
        )
        sim.step("Replied.")
        if round_ == 1:
            sim.chat("Compact your loop but keep the peer address.")
            sim.step(
                None,
                [
                    (
                        "loop_compact",
                        {"instructions": "Keep the pilot-desk address and the open slots."},
                    )
                ],
            )
            sim.step("Loop compacted, picking the thread back up.")
    sim.chat("Clean up the scratch files.")
    sim.step(None, [("fs_delete", {"path": p}) for p in scratch])
    sim.step("Removed the three scratch files.")
    for idx in range(3):
        _work_turn(sim, "chat", world=True, idx=100 + idx)
    sim.chat("Trim your history: drop everything except the latest few entries.")
    sim.step(None, [("loop_clear", {"start": 0, "end": -4})])
    sim.step("History trimmed.")
    sim.receive_message("pilot-desk", peer, "late slot", "One more berth request for tonight.")
    sim.inbox_trigger()
    sim.step(None, [("msg_read", {"ids": unread_ids(sim)})])
    sim.step(
        None,
        [
            (
                "msg_send",
                {"recipient": peer, "address": peer_addr, "content": "Tonight's berth is booked."},
            )
        ],
    )
    sim.step("All answered.")
    sim.gt.planted = {
        "null_streak": [],
        "repeated_signature": None,
        "spend_without_change": [],
        "refetches": [],
    }
    return sim


_MIND_PAGES = [
    ("grafting", "procedure", "how we graft scions onto rootstock"),
    ("frost-watch", "reference", "frost thresholds and who to call"),
    ("open-threads", "open-thread", "unfinished work carried across compactions"),
    ("growers", "person", "the growers and how they like updates"),
]


def _mind_index(pages: list[tuple[str, str, str]], rev: int, always: list[str]) -> str:
    lines = [
        "# Mind",
        "",
        "Working index. Kept short; details live in pages under `mind/`.",
        "",
        "## Always",
        "",
    ]
    lines += [f"- {a}" for a in always] or ["- Nothing pinned yet."]
    lines += ["", "## Pages", ""]
    lines += [
        f"- [{s.replace('-', ' ').title()}](adf-file://mind/{s}.md) — {d}" for s, _t, d in pages
    ] or ["- (none yet)"]
    lines += [
        "",
        "## Rules",
        "",
        "- Cite sources as [S<seq>].",
        "",
        f"<!-- index revision {rev} -->",
        "",
    ]
    return "\n".join(lines)


def scenario_mind_keeper(seed: int = 0) -> Sim:
    sim = Sim(
        "mind-keeper",
        seed,
        threshold=12000,
        audit={"loop": True},
        description="Orchard advisor that keeps a tidy mind wiki.",
        vocab=_ORCHARD_VOCAB,
        mind_in_prompt=True,
        sys_overhead=1100,
    )
    rng = sim.rng
    state = {"rev": 0, "pages": [], "always": [], "log": sim.file_text("mind/log.md") or ""}
    day = iso(sim.clock)[:10]

    def log_entry(op: str, title: str, note: str) -> tuple:
        head, sep, rest = state["log"].partition("-->\n")
        entry = f"\n## [{day}] {op} | {title}\n- {note}\n"
        state["log"] = head + sep + entry + rest
        return ("fs_write", {"mode": "write", "path": "mind/log.md", "content": state["log"]})

    def page_write(slug: str, typ: str, desc: str, rev: int) -> tuple:
        cites = sorted({c["seq"] for c in sim.calls[-6:]})[:2]
        body = (
            f"---\ntype: {typ}\ndescription: {desc}\nstatus: active\nstale_after: 2026-09-01\n"
            f"sources: [{', '.join(f'adf-audit://seq/{c}' for c in cites)}]\n---\n"
            f"# {slug.replace('-', ' ').title()}\n\n{sim.sentence(12)}\n\nRevision {rev}. "
            + " ".join(f"[S{c}]" for c in cites)
            + "\n"
        )
        return ("fs_write", {"mode": "write", "path": f"mind/{slug}.md", "content": body})

    def flush() -> list:
        state["rev"] += 1
        i = (state["rev"] - 1) % len(_MIND_PAGES)
        slug, typ, desc = _MIND_PAGES[i]
        if (slug, typ, desc) not in state["pages"]:
            state["pages"].append((slug, typ, desc))
        state["always"] = [f"Current focus: {sim.words(3)} (rev {state['rev']})."]
        idx_text = _mind_index(state["pages"], state["rev"], state["always"])
        return [
            page_write(slug, typ, desc, state["rev"]),
            ("fs_write", {"mode": "write", "path": "mind.md", "content": idx_text}),
            log_entry(
                "ingest" if state["rev"] <= len(_MIND_PAGES) else "update",
                f"mind/{slug}.md",
                f"memory flush {state['rev']}",
            ),
        ]

    orig_step = sim.step

    def step(text=None, calls=(), *, thinking=None, flush_hook=None):
        return orig_step(text, calls, thinking=thinking, flush_hook=flush)

    sim.step = step  # type: ignore[method-assign]
    sim.trigger(STARTUP_TEXT, "startup")
    sim.step("Reading my mind index.", [("fs_read", {"path": "mind.md"})])
    sim.step("Ready.")
    for idx in range(1, 110):
        if idx == 12:
            # mid-session edit of a page and the log (between compactions)
            sim.chat("Note that the cellar press is booked on Thursdays.")
            sim.step(
                None, [log_entry("update", "mid-session note", "cellar press booked Thursdays")]
            )
            sim.step("Noted in the log.")
            continue
        if idx == 30:
            sim.chat("Stop archiving loop history for a while, please.")
            sim.step(None, [("sys_update_config", {"path": "context.audit.loop", "value": False})])
            sim.step("Loop audit is off.")
            continue
        if (
            idx > 30
            and sim.audit_on("loop") is False
            and any(
                not c["audited"]
                for c in sim.gt.compactions
                if c["summary_seq"] > sim.gt.config_changes[0]["seq"]
            )
        ):
            sim.chat("You can turn loop archiving back on.")
            sim.step(None, [("sys_update_config", {"path": "context.audit.loop", "value": True})])
            sim.step("Loop audit is on again.")
            continue
        if idx == 50:
            sim.chat("Tidy the grafting page.")
            sim.step(
                None,
                [page_write("grafting", "procedure", "how we graft scions onto rootstock", 99)],
            )
            sim.step(None, [log_entry("lint", "mind/grafting.md", "tidied wording")])
            sim.step("Tidied.")
            continue
        _work_turn(sim, _mix(rng), world=rng.random() < 0.6, idx=idx)
    sim.gt.planted = {
        "null_streak": [],
        "repeated_signature": None,
        "spend_without_change": [],
        "refetches": [],
    }
    return sim


def scenario_legacy_v27(seed: int = 0) -> Sim:
    sim = Sim(
        "legacy-v27",
        seed,
        threshold=7000,
        audit={"loop": True},
        schema=27,
        description="Older-schema survey agent (pre-v28 compaction).",
        vocab=_SURVEY_VOCAB,
    )
    rng = sim.rng
    sim.trigger(STARTUP_TEXT, "startup")
    sim.step("Up.")
    for idx in range(1, 36):
        if idx == 20:
            sim.chat("Compact now and keep the sector list.")
            sim.step(None, [("loop_compact", {"instructions": "Keep the sector list."})])
            sim.step("Compacted.")
            continue
        _work_turn(sim, _mix(rng), world=True, idx=idx)
    sim.gt.planted = {
        "null_streak": [],
        "repeated_signature": None,
        "spend_without_change": [],
        "refetches": [],
    }
    return sim


def scenario_legacy_v12(seed: int = 0) -> Sim:
    """Pre-public layout: integer token totals, no model column, created_at 0 early on."""
    sim = Sim(
        "legacy-v12",
        seed,
        threshold=100000,
        audit={},
        schema=12,
        description="Pre-public agent file.",
        vocab=_HARBOUR_VOCAB,
        enable_compact_tools=False,
    )
    rng = sim.rng
    sim.trigger(STARTUP_TEXT, "startup")
    sim.step("Up.")
    for idx in range(1, 12):
        _work_turn(sim, _mix(rng), world=True, idx=idx)
    zeroed = []
    for r in sim.rows:
        if isinstance(r["tokens"], dict):
            r["tokens"] = r["tokens"]["input"] + r["tokens"]["output"]
        if r["seq"] <= 15:
            r["created_at"] = 0
            zeroed.append(r["seq"])
    sim.gt.notes.append("tokens stored as INTEGER totals; no model column")
    sim.gt.notes.append(f"created_at = 0 on seqs {zeroed[0]}..{zeroed[-1]}")
    sim.gt.planted = {
        "null_streak": [],
        "repeated_signature": None,
        "spend_without_change": [],
        "refetches": [],
    }
    return sim


SCENARIOS: dict[str, Callable[[int], Sim]] = {
    "long-runner": scenario_long_runner,
    "messenger": scenario_messenger,
    "forgetful": scenario_forgetful,
    "legacy-v27": scenario_legacy_v27,
    "clean": scenario_clean,
    "mind-keeper": scenario_mind_keeper,
    "legacy-v12": scenario_legacy_v12,
}


def write_scenario(name: str, path: str | pathlib.Path, *, seed: int = 0) -> GroundTruth:
    """Run scenario ``name`` and write it to ``path`` (an ``.adf`` file). Returns its truth."""
    sim = SCENARIOS[name](seed)
    gt = sim.finish()
    _write_db(sim, pathlib.Path(path))
    return gt


def write_all(folder: str | pathlib.Path, *, seed: int = 0, names: list[str] | None = None) -> dict:
    """Write ``<name>.adf`` and ``<name>.truth.json`` for every scenario into ``folder``."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in names or list(SCENARIOS):
        gt = write_scenario(name, folder / f"{name}.adf", seed=seed)
        (folder / f"{name}.truth.json").write_text(gt.to_json(), encoding="utf-8")
        out[name] = gt
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m adfkit.synth FOLDER [SCENARIO ...]", file=sys.stderr)
        return 2
    folder, names = argv[0], argv[1:] or None
    for name, gt in write_all(folder, names=names).items():
        size = (pathlib.Path(folder) / f"{name}.adf").stat().st_size
        print(
            f"{name}: {size} bytes, live={gt.n_live} history={gt.n_history} "
            f"lost={len(gt.lost_seqs)} "
            f"compactions={len(gt.compactions)} audit_rows={len(gt.audit_rows)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
