"""The scripted scenarios behind the sample agents, and the turn patterns they share.

Each ``scenario_<name>(seed)`` drives a :class:`~adfsynth.runtime.Sim` through a life with
something to find in it (refetches after compactions, a null-turn streak, gaps from
unaudited compactions, a mind wiki, older schemas...) and records what it planted in
``sim.gt.planted``. :data:`SCENARIOS` maps sample names to them.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .estimator import jdump
from .observation import signature
from .prose import fit
from .runtime import BASE_MS, Sim
from .texts import STARTUP_TEXT, iso

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


#: Names of the importer's parts by length: what notes and fetched URLs are called.
_SLUG_BANK: dict[int, list[str]] = {
    3: ["csv", "api", "cli", "log"],
    4: ["rows", "flag", "sums", "docs", "date", "sort", "keys", "enum"],
    5: [
        "dates",
        "parse",
        "total",
        "quote",
        "chunk",
        "lines",
        "dedup",
        "types",
        "order",
        "audit",
        "empty",
        "split",
    ],
    6: [
        "header",
        "footer",
        "reader",
        "locale",
        "export",
        "totals",
        "parser",
        "quotes",
        "column",
        "commas",
        "schema",
        "decode",
        "upload",
        "errors",
        "widths",
    ],
    7: [
        "columns",
        "decimal",
        "fixture",
        "dry-run",
        "amounts",
        "formats",
        "symbols",
        "strings",
        "streams",
        "retries",
    ],
    8: [
        "importer",
        "encoding",
        "dialects",
        "currency",
        "timezone",
        "rounding",
        "defaults",
        "warnings",
        "customer",
        "bad-rows",
    ],
    9: [
        "separator",
        "date-time",
        "row-count",
        "validator",
        "migration",
        "footnotes",
        "precision",
        "nightlies",
    ],
    10: ["timestamps", "delimiters", "null-bytes", "null-cells", "row-reader"],
    11: ["blank-lines", "date-format", "column-list", "sniff-tests"],
}


def use_slugs(sim: Sim, *, mind: bool = False) -> None:
    """Name the work turns' notes and URLs after the parts of the importer, each word of the
    vocabulary by a name as long (so every figure of the sample stays); with ``mind``, the
    notes are pages of the agent's mind (``mind/``, one character shorter than ``notes/``:
    the names one longer), which it writes and reads back."""
    extra = 1 if mind else 0
    taken: dict[int, int] = {}
    for w in sim.vocab:
        n = len(w) + extra
        i = taken.get(n, 0)
        taken[n] = i + 1
        sim.slug_of[w] = _SLUG_BANK[n][i]
    if mind:
        sim.notes_dir, sim.data_url, sim.missing = "mind/", "https://api.example.org/", "vanished"


def _note_body(sim: Sim, title: str, n: int = 3) -> str:
    return (
        f"# {title}\n\n"
        + "\n".join(f"- {sim.sentence(sim.rng.randint(6, 12), 'note')}" for _ in range(n))
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
            word = rng.choice(sim.vocab)
            slug = f"{sim.notes_dir}{sim.slug_of[word]}-{idx}-{s}.md"
            title = fit("title", len(f"{word}-{idx}-{s}"), sim.prose)
            body = _note_body(sim, title[:1].upper() + title[1:], rng.randint(4, 9))
            calls.append(("fs_write", {"mode": "write", "path": slug, "content": body}))
        elif r < 0.6:
            existing = [
                p
                for p in sim.files
                if p.startswith(sim.notes_dir)
                and p not in ("notes/todo.md", "mind/log.md")
                and sim.sig_counts.get(signature("fs_read", {"path": p}), 0) == 0
            ]
            if existing and rng.random() < 0.85:
                calls.append(("fs_read", {"path": rng.choice(existing)}))
            else:
                calls.append(("fs_read", {"path": f"{sim.notes_dir}{sim.missing}-{idx}-{s}.md"}))
        elif r < 0.75:
            calls.append(
                (
                    "db_query",
                    {"sql": f"SELECT seq, role FROM adf_loop WHERE seq > {idx * 7 + s} LIMIT 3"},
                )
            )
        elif r < 0.85:
            prefix = f"{sim.notes_dir}{sim.slug_of[rng.choice(sim.vocab)]}-{idx}"
            calls.append(("fs_list", {"prefix": prefix}))
        if world and s == n_steps - 1:
            if rng.random() < 0.5:
                calls.append(
                    (
                        "sys_fetch",
                        {"url": f"{sim.data_url}{sim.slug_of[rng.choice(sim.vocab)]}/{idx}"},
                    )
                )
            else:
                calls.append(
                    (
                        "msg_send",
                        {
                            "recipient": sim.owner_did,
                            "content": f"Update {idx}: {sim.sentence(8, 'update')}",
                        },
                    )
                )
        thinking = sim.sentence(10, "thinking") if rng.random() < 0.15 else None
        text = f"Looking at {sim.words(3, 'looking')}." if rng.random() < 0.5 else None
        if calls:
            sim.step(text, calls, thinking=thinking)
    sim.step(
        f"Finished request {idx}. "
        + " ".join(sim.sentence(rng.randint(8, 16), "done") for _ in range(rng.randint(1, 4)))
    )


def _start_turn(sim: Sim, kind: str, idx: int) -> int:
    rng = sim.rng
    if kind == "timer":
        return sim.timer(f"nightly test {idx}")
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
        sim.put_file(p, f"dropped file {idx}: {sim.sentence(6, 'file')}\n", sim.clock)
        return sim.trigger(f"A file has been created: {p}", "file_change")
    if kind == "startup":
        return sim.trigger(STARTUP_TEXT, "startup")
    return sim.chat(f"{sim.sentence(rng.randint(5, 10), 'request')} (request {idx})")


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
        description="Coding helper that fixes the csv importer and keeps its notes.",
        vocab=_SURVEY_VOCAB,
    )
    use_slugs(sim, mind=True)  # its notes are its mind's pages
    _add_timer(sim, "nightly test")
    rng = sim.rng
    t0 = sim.clock
    sim.put_file(
        "notes/todo.md",
        "# Todo\n\n- fix the date parsing errors\n- check the footer row total\n",
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
                "ci-bot",
                sim.owner_did,
                f"build {idx}",
                f"Failures for run {idx}: {rng.randint(3, 90)}.",
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
                            "content": f"Triaged build {idx}. {sim.sentence(5, 'update')}",
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
            sim.step(None, [("sys_fetch", {"url": f"https://data.example.org/build/{idx}"})])
            sim.step(f"Todo reviewed. {sim.sentence(9, 'todo')}")
            continue
        if idx == 40:
            sim.chat("Please compact your loop now; keep the open parser failures.")
            sim.step(
                "Compacting as asked.",
                [
                    (
                        "loop_compact",
                        {"instructions": "Keep the open parser failures and their rows."},
                    )
                ],
            )
            sim.step("Compacted; continuing with the parser.")
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
                sim.step(f"Nothing new. {sim.sentence(6, 'review')}")
                continue
        if rng.random() < 0.25:
            spend_starts.append(_start_turn(sim, kind, idx))
            sim.step(f"Reviewed; {sim.sentence(rng.randint(10, 30), 'review')}")
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
    use_slugs(sim)
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
    use_slugs(sim)
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
    use_slugs(sim)
    rng = sim.rng
    peer = sim.new_did()
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
                        "content": f"Slots {round_} confirmed. {sim.sentence(5, 'update')}",
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


#: The mind pages mind-keeper writes, in flush order: (slug, front-matter type, description).
MIND_PAGES = [
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
    use_slugs(sim)
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
            f"# {slug.replace('-', ' ').title()}\n\n{sim.sentence(12, 'note')}\n\nRevision {rev}. "
            + " ".join(f"[S{c}]" for c in cites)
            + "\n"
        )
        return ("fs_write", {"mode": "write", "path": f"mind/{slug}.md", "content": body})

    def flush() -> list:
        state["rev"] += 1
        i = (state["rev"] - 1) % len(MIND_PAGES)
        slug, typ, desc = MIND_PAGES[i]
        if (slug, typ, desc) not in state["pages"]:
            state["pages"].append((slug, typ, desc))
        state["always"] = [f"Current focus: {sim.words(3, 'focus')} (rev {state['rev']})."]
        idx_text = _mind_index(state["pages"], state["rev"], state["always"])
        return [
            page_write(slug, typ, desc, state["rev"]),
            ("fs_write", {"mode": "write", "path": "mind.md", "content": idx_text}),
            log_entry(
                "ingest" if state["rev"] <= len(MIND_PAGES) else "update",
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
    use_slugs(sim)
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
    use_slugs(sim)
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
