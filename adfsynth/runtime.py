"""The simulated ADF runtime: :class:`Sim`, driven turn by turn by the scenarios.

It imitates what the runtime does while an agent works: trigger rows, assistant rows with
tool calls and one tool-result row per batch, context rows (system prompt, dynamic
instructions), token counts from the runtime's estimator, automatic compaction with the
memory-flush nudge and grace call, the pre-flight guard, manual ``loop_compact`` (schema 28:
swept rows archived and the summary placed by ``ord`` before the kept tail; older schemas:
the whole loop archived and the tail re-appended under new seqs), model-initiated
``loop_clear`` (two audit blobs), inbox/outbox/file audit rows, config changes and the mind
files. Each
action is recorded in ``Sim.gt`` (a :class:`~adfsynth.truth.GroundTruth`); :meth:`Sim.finish`
completes it. Time comes from a fixed base timestamp and randomness from one seeded
``random.Random``, so a run is deterministic.
"""

from __future__ import annotations

import base64
import json
import math
import random
from collections.abc import Callable
from typing import Any

import brotli

from .estimator import estimate_tokens, jdump, js_len, row_chars
from .observation import signature
from .prose import fit
from .texts import INBOX_TRIGGER, NUDGE_TEXT, SUMMARY_FOOTER, context_category, injected_file, iso
from .truth import GroundTruth, sha1

#: Fixed base timestamp (ms) for every scenario: 2026-06-01T08:00:00Z.
BASE_MS = 1_780_300_800_000

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
        self.prose = random.Random(f"{name}:{seed}:prose")  # the text only (.prose)
        self.schema = schema
        self.clock = BASE_MS
        self.model_id = model_id
        self.mind_in_prompt = mind_in_prompt
        self.vocab = vocab or ["alpha", "beta", "gamma"]
        # Where the work turns keep notes, and the names of notes and fetched URLs, one for
        # each word of the vocabulary and as long: scenarios.use_slugs sets them.
        self.notes_dir = "notes/"
        self.slug_of = {w: w for w in self.vocab}
        self.data_url = "https://data.example.org/"
        self.missing = "missing"
        self.sys_overhead = sys_overhead
        self.did = self.new_did()
        self.owner_did = self.new_did()
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
    def new_did(self) -> str:
        return "did:key:z6Mk" + "".join(self.rng.choice(_B58) for _ in range(44))

    def nanoid(self, n: int = 10) -> str:
        return "".join(self.rng.choice(_ALNUM + "_-") for _ in range(n))

    def tick(self, lo: int, hi: int) -> int:
        self.clock += self.rng.randint(lo, hi)
        return self.clock

    def words(self, n: int, about: str = "default") -> str:
        """A phrase about ``about`` (:mod:`.prose`) as long as ``n`` random words of the
        vocabulary: the words are drawn as they always were (the same random calls, so every
        other figure of the sample stays), and the text in their place reads like real work."""
        salad = " ".join(self.rng.choice(self.vocab) for _ in range(n))
        return fit(about, len(salad), self.prose)

    def sentence(self, n: int = 8, about: str = "default") -> str:
        """A sentence about ``about`` as long as ``n`` random words, capitalised, and a period."""
        salad = " ".join(self.rng.choice(self.vocab) for _ in range(n))
        return fit(about, len(salad) + 1, self.prose, sentence=True)

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
            "## Always\n\n- Nothing pinned yet.\n\n## Pages\n\n- by module.\n\n"
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
        out = max(1, math.ceil(row_chars(content) / 3.5) + self.rng.randint(-4, 18))
        # Anthropic reports its cache parts on every call (0 when nothing was read or written),
        # and the runtime stores what the provider reported: so every call has both keys (a
        # missing key is "not reported", unknown, and leaves compaction_cache's costs NA)
        tok: dict[str, int] = {"input": inp, "output": out, "cache_read": 0, "cache_write": 0}
        r = self.rng.random()
        if r < 0.45:
            tok["cache_read"] = int(inp * self.rng.uniform(0.55, 0.9))
            if r < 0.15:  # never more than the input holds (it includes the cache parts)
                tok["cache_write"] = min(self.rng.randint(40, 400), inp - tok["cache_read"])
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
                    "preview": self.words(self.rng.randint(4, 9), "preview"),
                }
                for i in range(n)
            ]
            return json.dumps(rows, indent=2, ensure_ascii=False), False
        if name == "sys_fetch":
            url = inp.get("url", "")
            if self.rng.random() < 0.12:
                return f"Fetch failed: 503 Service Unavailable ({url})", True
            body = " ".join(
                self.sentence(self.rng.randint(8, 16), "doc") for _ in range(self.rng.randint(4, 9))
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
            lines.append(f"- Worked with `{p}`; {self.words(5, 'worked')}.")
        if instructions:
            lines.append(f"- As asked: {instructions}")
        cite = " ".join(f"[S{s}]" for s in picked)
        lines.append(f"- Open thread: {self.sentence(6, 'thread')} {cite}".rstrip())
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
        transcript_chars = sum(row_chars(r["content"]) for r in swept)
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
