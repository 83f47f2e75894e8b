"""Files the agents' current releases wrote against the scripted model server (``make record``,
``tools/record``), checked against what the server logged: ``truth.json`` (figures from the log
alone) and ``requests.jsonl`` (the exact request of every call).

One parametrization over every ``tests/fixtures/recorded/<agent>/<version>/truth.json``. What
adfkit reads from a recording is turned into neutral figures by the agent's adapter in
:data:`ADAPTERS` (agent folder name -> function), one function per format, so each recording
engineer adds theirs without touching the others'. An agent with no adapter (no adfkit reader
yet) is skipped with the reason.

Figures, each its own test: model calls by kind, tokens by kind (the server's usage: ``input``
is the whole prompt, cached part included), tool calls (in all and by name), compactions by
trigger. Where a format cannot hold a figure (Claude Code writes no usage for its compaction
calls) the adapter gives None for it and a test of its own asserts that adfkit's table shows NA.

Replay: at every model call the adapter can place (its ``windows``, keyed by the log line's
``n``), the messages adfkit rebuilds equal the messages the agent sent, compared as
:func:`skeleton` sees them: the same messages in the same order, each with its role, tool-use
ids, tool-result ids, the assistant's texts, the user's prompts (texts holding a task marker),
and a compaction's summary where the request put it. Texts the agent adds around the
conversation (Claude Code's system reminders, rendered from attachments the file keeps as data)
are not compared: the file does not hold them as sent. The estimate of each placed call's window
(``replay().est_chars``) is within the adapter's stated tolerance of the characters sent.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import adfkit

RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded"
#: A driver's prompt starts with its task marker (``script.MARKER``).
MARKER = re.compile(r"task-[a-z0-9]+\b")
MODEL_KINDS = ("turn", "compaction", "side")


def recordings() -> Iterator[tuple[str, str, Path]]:
    """(agent, version, folder) of every recording committed."""
    for truth in sorted(RECORDED.glob("*/*/truth.json")):
        yield truth.parent.parent.name, truth.parent.name, truth.parent


RECORDINGS = list(recordings())
IDS = [f"{a}-{v}" for a, v, _ in RECORDINGS]


# -- the neutral view of a request's messages ----------------------------------------------
Item = tuple[str, ...]
Message = tuple[str, tuple[Item, ...]]


def skeleton(messages: list[dict[str, Any]], summaries: list[str]) -> list[Message]:
    """Neutral messages (``script.Call`` form) as compared: consecutive messages of one role
    merged (an API message may be several records of a file), each block an item: a tool use
    by id, a tool result by id, an assistant text by its hash, a user text starting with a task
    marker (a prompt) by its hash, a text holding a compaction's summary as ``summary``.
    Other user texts (reminders, attachments) are left out; a message left empty stays."""
    out: list[tuple[str, list[Item]]] = []
    for m in messages:
        role = "user" if m["role"] == "tool" else m["role"]
        items = [i for b in m["content"] if (i := _item(role, b, summaries)) is not None]
        if out and out[-1][0] == role:
            out[-1][1].extend(items)
        else:
            out.append((role, items))
    return [(role, tuple(items)) for role, items in out]


def _item(role: str, b: dict[str, Any], summaries: list[str]) -> Item | None:
    kind = b.get("type")
    if kind == "tool_use":
        return ("tool_use", b["id"])
    if kind == "tool_result":
        return ("tool_result", b["tool_use_id"])
    if kind != "text":
        return None
    text = b.get("text") or ""
    if any(s in text for s in summaries):
        return ("summary",)
    if role == "assistant" or MARKER.match(text.strip()):
        return ("text", hashlib.sha256(text.strip().encode()).hexdigest()[:12])
    return None


def summary_lines(log: list[dict[str, Any]]) -> list[str]:
    """What identifies each compaction's summary in a later request: the longest line of the
    text the server answered the compaction call with (agents reformat the tags around it)."""
    out = []
    for line in log:
        if line["kind"] == "compaction" and line["answer"]["text"].strip():
            lines = [x.strip() for x in line["answer"]["text"].splitlines()]
            out.append(max(lines, key=len))
    return out


# -- what an adapter gives -------------------------------------------------------------------
@dataclass
class Observed:
    """What adfkit read from a recording, as neutral figures.

    ``tokens``: by call kind, ``input`` (the whole prompt), ``cache_read``, ``output``; None
    where the format holds none (then ``na_shown`` says whether adfkit's table shows NA for
    it). ``windows``: log line ``n`` -> the skeleton of the messages adfkit rebuilt for that
    call; calls it cannot place are absent, and ``unplaced`` says why."""

    calls: dict[str, int]
    tokens: dict[str, dict[str, int] | None]
    tool_calls: Counter[str]
    compactions: dict[str, int]
    windows: dict[int, list[Message]] = field(default_factory=dict)
    unplaced: dict[str, str] = field(default_factory=dict)  # call kind -> why not placed
    na_shown: dict[str, bool] = field(default_factory=dict)  # call kind -> NA in the table
    #: log line ``n`` -> adfkit's estimate of the conversation it sent (``replay().est_tokens``)
    estimates: dict[int, int] = field(default_factory=dict)
    #: log line ``n`` -> the characters of the window adfkit estimates (``replay().est_chars``)
    est_chars: dict[int, int] = field(default_factory=dict)
    #: how far (a fraction of the characters sent) an estimate may be, and why
    est_tolerance: tuple[float, str] = (0.0, "")
    #: compactions of a trigger the format does not tell apart: adfkit shows them as NA
    na_triggers: dict[str, int] = field(default_factory=dict)
    #: call kinds the format keeps no record of at all (no row, no usage: nothing to show
    #: NA in), and why; their calls and tokens are left out of the comparison
    unrecorded: dict[str, str] = field(default_factory=dict)


Adapter = Callable[[Path, list[dict[str, Any]]], Observed]


def _quiet_open(path: Path) -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return adfkit.open(path)


def _rows_as_messages(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """History rows (``context_at``) as neutral messages: one per row, its content blocks."""
    out = []
    for role, kind, content in zip(rows["role"], rows["kind"], rows["content"], strict=True):
        blocks = json.loads(content) if isinstance(content, str) else []
        if kind == "compaction_summary":  # the summary, whatever wraps it
            blocks = [{"type": "text", "text": "\0summary"}]
        out.append({"role": str(role), "content": blocks})
    return out


def _sums(usage: pd.DataFrame) -> dict[str, int]:
    return {
        "input": int(usage["tokens_input"].sum()),
        "cache_read": int(usage["tokens_cache_read"].fillna(0).sum()),
        "output": int(usage["tokens_output"].sum()),
    }


# -- Claude Code -------------------------------------------------------------------------------
def claude_code(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The sessions under ``home/.claude/projects/<project>/`` with their subagents. A call is
    placed by its message id: the server names a message ``msg_rec<n>``. Claude Code writes no
    record of a compaction call (no usage, no message): each compaction event stands for one
    call, its tokens are None and adfkit's compactions table must show NA for them."""
    mains = [
        p for p in sorted((folder / "home").rglob("*.jsonl")) if not p.name.startswith("agent-")
    ]
    agents = []
    for main in mains:  # a fork is a session file of its own (2.1.332-fork)
        session = _quiet_open(main)
        agents += [session, *session.subagents()]
    usage = pd.concat([a.usage() for a in agents], ignore_index=True)
    comp = pd.concat([a.compactions() for a in agents], ignore_index=True)
    comp = comp[comp["event"] == "compaction"]
    tools = pd.concat([a.tool_calls(history=True) for a in agents], ignore_index=True)
    tools = tools.drop_duplicates("tool_use_id")  # a fork's history holds the parent's calls
    summaries = ["\0summary"]
    windows: dict[int, list[Message]] = {}
    est: dict[int, int] = {}
    for a in agents:
        chars = a.replay().set_index("seq")["est_chars"]
        for key, seq in zip(a.calls()["key"], a.calls()["seq"], strict=True):
            m = re.fullmatch(r"msg_rec(\d+)(?::.*)?", str(key))
            if m is None:
                continue
            rows = a.context_at(int(seq), context=False)
            windows[int(m.group(1))] = skeleton(_rows_as_messages(rows), summaries)
            est[int(m.group(1))] = int(chars.loc[int(seq)])
    na = bool(comp["compaction_input"].isna().all() and comp["compaction_output"].isna().all())
    return Observed(
        calls={"turn": len(usage), **({"compaction": len(comp)} if len(comp) else {})},
        tokens={"turn": _sums(usage), "compaction": None},
        tool_calls=Counter(tools["tool_name"]),
        compactions=dict(Counter(comp["kind"])),
        windows=windows,
        unplaced={
            "compaction": "Claude Code writes no record of a compaction call, and what one is "
            "sent is no window of the file's: the 2.1.332 automatic one held the segment it "
            "preserved, the manual one did not"
        },
        na_shown={"compaction": na},
        est_chars=est,
        est_tolerance=(
            0.40,
            "the file holds attachments as data, not the system-reminder text rendered from "
            "them (adfkit counts its own rendering), and some reminders not at all (the "
            "session context, attribution): 63-89% of the characters sent in 2.1.332",
        ),
    )


#: agent folder name -> its adapter. Add yours here (a function of its own, above).


# -- Copilot CLI -----------------------------------------------------------------------------
def _copilot_api_ids(events: Path) -> dict[str, int]:
    """Event id of each reply -> the log line of its call (the server names a completion
    ``chatcmpl-rec<n>``, Copilot writes it as the reply's ``apiCallId``)."""
    out = {}
    for line in events.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        m = re.fullmatch(r"chatcmpl-rec(\d+)", str(rec["data"].get("apiCallId")))
        if rec["type"] == "assistant.message" and m:
            out[rec["id"]] = int(m.group(1))
    return out


def copilot_cli(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The session folder under ``home/.copilot/session-state/`` and its subagent. A reply is
    placed by its ``apiCallId``. A compaction call is placed by order: the n-th compaction
    call of the log is the n-th ``session.compaction_complete`` of the file; the one whose
    compaction was cancelled has no row (its usage is a call of ``calls()`` on no row) and no
    window to compare. Compactions are counted as calls (``truth.json`` counts the compaction
    calls): the applied ones by their recorded trigger (``threshold`` is automatic), the
    cancelled one as an automatic call that compacted nothing."""
    (sess,) = (folder / "home" / ".copilot" / "session-state").iterdir()
    session = _quiet_open(sess)
    agents = [session, *session.subagents()]
    usage = pd.concat([a.usage() for a in agents], ignore_index=True)
    turns = usage[usage["call_kind"] == "assistant"]
    comp_rows = usage[usage["call_kind"] == "compaction"]
    loose = session.calls()[session.calls()["seq"].isna()]
    comp_tokens = _sums(comp_rows)
    for k, col in (("input", "tokens_input"), ("cache_read", "tokens_cache_read")):
        comp_tokens[k] += int(loose[col].sum())
    comp_tokens["output"] += int(loose["tokens_output"].sum())
    comp = session.compactions()
    kinds = Counter("manual" if k == "manual" else "auto" for k in comp["kind"])
    kinds["auto"] += len(loose)  # the cancelled one: threshold-triggered
    tools = pd.concat([a.tool_calls(history=True) for a in agents], ignore_index=True)
    summaries = ["\0summary"]
    ids = _copilot_api_ids(sess / "events.jsonl")
    windows: dict[int, list[Message]] = {}
    estimates: dict[int, int] = {}
    for a in agents:
        calls = a.calls()
        est = dict(zip(a.replay()["seq"], a.replay()["est_tokens"], strict=True))
        for key, seq in zip(calls["key"], calls["seq"], strict=True):
            if str(key) in ids and not pd.isna(seq):
                rows = a.context_at(int(seq), context=False)
                windows[ids[str(key)]] = skeleton(_rows_as_messages(rows), summaries)
                estimates[ids[str(key)]] = int(est[seq]) - _system_tokens(a, int(seq))
    return Observed(
        calls={"turn": len(turns), "compaction": len(comp_rows) + len(loose)},
        tokens={"turn": _sums(turns), "compaction": comp_tokens},
        tool_calls=Counter(tools["tool_name"]),
        compactions=dict(kinds),
        windows=windows,
        estimates=estimates,
        unplaced={"compaction": "the file holds a compaction call's summary, not its request"},
    )


def _system_tokens(a: adfkit.AgentFile, seq: int) -> int:
    """The part of a call's estimate that is the system prompt (Copilot's system.message
    rows, sent apart as the request's system message, not among its messages)."""
    r = a.replay().set_index("seq").loc[seq]
    return int(r["system_prompt_tokens"]) if not pd.isna(r["system_prompt_tokens"]) else 0


# -- pi ----------------------------------------------------------------------------------------
def pi(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The session file under ``home/.pi/agent/sessions/``. pi writes each reply's usage on
    its message and nothing of a compaction call (tokens None, NA in the table). A compaction
    that splits a turn makes two calls (the summary and the turn prefix's), one entry: the
    compactions of ``truth.json`` (calls) are grouped into runs of consecutive compaction
    calls in one phase. Replies are placed by order: the n-th reply of the file is the n-th
    turn call of the log (one process at a time, no subagent)."""
    (path,) = sorted((folder / "home").rglob("*.jsonl"))
    a = _quiet_open(path)
    usage = a.usage()
    turns = usage[usage["call_kind"] == "assistant"]
    comp = a.compactions()
    comp = comp[comp["event"] == "compaction"]
    calls_in_log = [x for x in log if x["kind"] in MODEL_KINDS]
    runs = _compaction_runs(calls_in_log)
    tools = a.tool_calls(history=True)
    summaries = ["\0summary"]
    windows: dict[int, list[Message]] = {}
    turn_lines = [x["n"] for x in calls_in_log if x["kind"] == "turn"]
    est = dict(zip(a.replay()["seq"], a.replay()["est_tokens"], strict=True))
    estimates: dict[int, int] = {}
    for n, seq in zip(turn_lines, turns["seq"], strict=False):
        rows = a.context_at(int(seq), context=False)
        windows[n] = skeleton(_rows_as_messages(rows), summaries)
        estimates[n] = int(est[seq])
    na = bool(comp["compaction_input"].isna().all() and comp["compaction_output"].isna().all())
    # pi 0.73 records no trigger: adfkit must show NA for every one, and the compactions are
    # then counted by the phase of the calls each stands for (their number must match)
    assert comp["kind"].isna().all(), "pi records no trigger: the kind must be NA"
    return Observed(
        calls={"turn": len(turns), "compaction": sum(len(r) for r in runs[: len(comp)])},
        tokens={"turn": _sums(turns), "compaction": None},
        tool_calls=Counter(tools["tool_name"]),
        compactions=_calls_by_phase(runs[: len(comp)]),
        windows=windows,
        estimates=estimates,
        unplaced={"compaction": "pi writes no record of a compaction call"},
        na_shown={"compaction": na},
    )


def _compaction_runs(calls: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Consecutive compaction calls of one phase: one compaction each."""
    runs: list[list[dict[str, Any]]] = []
    previous: dict[str, Any] | None = None
    for c in calls:
        if c["kind"] == "compaction":
            if (
                previous is not None
                and previous["kind"] == "compaction"
                and (previous["phase"] == c["phase"])
            ):
                runs[-1].append(c)
            else:
                runs.append([c])
        previous = c
    return runs


def _calls_by_phase(runs: list[list[dict[str, Any]]]) -> dict[str, int]:
    """Compaction calls by the trigger their phase names (``truth.trigger``'s rule)."""
    out: Counter[str] = Counter()
    for run in runs:
        out["manual" if run[0]["phase"].startswith("manual") else "auto"] += len(run)
    return dict(out)


# -- Codex -------------------------------------------------------------------------------------
CODEX_KINDS = {"assistant": "turn", "compaction": "compaction"}


def codex(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The rollouts under ``home/.codex/sessions/`` (``exec resume`` and the app-server append
    to a session's). A call is placed by its key, the ``response_id`` of its
    ``token_usage_record`` (the server names a response ``resp_rec<n>``). Codex does not tell
    a manual compaction from an automatic one on disk: one that runs in a turn with a user
    message is automatic, the app-server's ``thread/compact/start`` (a turn of its own) shows NA
    (``na_triggers``). No ``estimates``: adfkit's estimate of a call leaves out what Codex sends
    ahead of the conversation, its base instructions (``session_meta.base_instructions``, no
    row: ~5,200 tokens at 4 characters) and the developer and environment context rows (~750),
    so it reads 0.2-40% of what was sent on this recording (the conversation alone: within a
    few tokens)."""
    rollouts = sorted((folder / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    sessions = [_quiet_open(p) for p in rollouts]
    usage = pd.concat([s.usage() for s in sessions], ignore_index=True)
    kinds = usage["call_kind"].astype("string").map(CODEX_KINDS)
    comp = pd.concat([s.compactions() for s in sessions], ignore_index=True)
    comp = comp[comp["event"] == "compaction"]
    tools = pd.concat([s.tool_calls(history=True) for s in sessions], ignore_index=True)
    windows: dict[int, list[Message]] = {}
    for session in sessions:
        u = session.usage()
        turns = set(u.loc[u["call_kind"].astype("string") == "assistant", "seq"])
        calls = session.calls()
        for key, seq in zip(calls["key"], calls["seq"], strict=True):
            m = re.fullmatch(r"resp_rec(\d+)", str(key))
            if m is None or seq not in turns:
                continue
            rows = session.context_at(int(seq), context=False)
            windows[int(m.group(1))] = skeleton(_rows_as_messages(rows), ["\0summary"])
    manual = [x for x in log if x["kind"] == "compaction" and x["phase"].startswith("manual")]
    return Observed(
        calls=dict(Counter(kinds)),
        tokens={k: _sums(usage[kinds == k]) for k in sorted(set(kinds))},
        tool_calls=Counter(tools["tool_name"]),
        compactions=dict(Counter(comp["kind"].astype("string").fillna("NA"))),
        windows=windows,
        unplaced={
            "compaction": "a compaction call's usage sits on its summary row, whose "
            "replay is the history after the compaction, not the request before it"
        },
        # the driver's manual compactions (phase "manual ..."): not told apart on disk, NA
        na_triggers={"manual": len(manual)},
    )


# -- Qwen Code -----------------------------------------------------------------------------------
def qwen_code(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The chat under ``home/.qwen/projects/<project>/chats/`` with its subagent. Every call
    has a record:
    a reply its assistant record, a compaction call its telemetry event (its usage on the
    summary row). The main agent's replies are placed by order: the n-th reply of the chat is
    the n-th turn call of the log that is not the subagent's (the subagent's first message is
    its task prompt); the subagent's, the same way in its own file."""
    (chat,) = sorted((folder / "home").rglob("chats/*.jsonl"))
    session = _quiet_open(chat)
    agents = [session, *session.subagents()]
    usage = pd.concat([a.usage() for a in agents], ignore_index=True)
    turns = usage[usage["call_kind"] == "assistant"]
    comp_rows = usage[usage["call_kind"] == "compaction"]
    comp = session.compactions()
    tools = pd.concat([a.tool_calls(history=True) for a in agents], ignore_index=True)
    summaries = ["\0summary"]
    calls_in_log = [x for x in log if x["kind"] in MODEL_KINDS]

    def sub(x: dict[str, Any]) -> bool:
        first = x["call"]["messages"][0]["content"] if x["call"]["messages"] else []
        return any(MARKER.match(b.get("text", "").strip()) for b in first if b["type"] == "text")

    windows: dict[int, list[Message]] = {}
    for a, mine in ((session, False), *((s, True) for s in session.subagents())):
        lines = [x["n"] for x in calls_in_log if x["kind"] == "turn" and sub(x) == mine]
        u = a.usage()
        for n, seq in zip(lines, u[u["call_kind"] == "assistant"]["seq"], strict=False):
            rows = a.context_at(int(seq), context=False)
            windows[n] = skeleton(_rows_as_messages(rows), summaries)
    return Observed(
        calls={"turn": len(turns), "compaction": len(comp_rows)},
        tokens={"turn": _sums(turns), "compaction": _sums(comp_rows)},
        tool_calls=Counter(tools["tool_name"]),
        compactions=dict(Counter(comp["kind"])),
        windows=windows,
        unplaced={"compaction": "the file holds a compaction call's summary, not its request"},
    )


# -- OpenClaw ----------------------------------------------------------------------------------
def openclaw(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The session of the store under ``home/.openclaw/agents/main/agent/``. OpenClaw writes each
    reply's usage on its message (pi's entries) and nothing of a compaction call (tokens None,
    NA in the table: one call per compaction entry). It records no trigger (an automatic
    compaction and ``sessions compact`` write the same entry): both show NA. The memory flush
    before the automatic compaction (a silent turn, the log's side call) writes no entry; the
    session entry's ``memoryFlush`` keeps the last one, which adfkit shows as a call on no row
    with NA tokens (``memory-flush-<n>``). Replies are placed by order: the n-th reply of the
    session is the n-th turn call of the log."""
    (store,) = sorted((folder / "home").rglob("openclaw-agent.sqlite"))
    collection = _quiet_open(store)
    assert isinstance(collection, adfkit.AgentCollection) and collection.names == ["demo-1"]
    a = collection[0]
    usage = a.usage()
    turns = usage[usage["call_kind"] == "assistant"]
    comp = a.compactions()
    comp = comp[comp["event"] == "compaction"]
    calls = a.calls()
    flushes = calls[calls["key"].str.startswith("memory-flush-")]
    tools = a.tool_calls(history=True)
    windows: dict[int, list[Message]] = {}
    estimates: dict[int, int] = {}
    est = dict(zip(a.replay()["seq"], a.replay()["est_tokens"], strict=True))
    turn_lines = [x["n"] for x in log if x["kind"] == "turn"]
    for n, seq in zip(turn_lines, turns["seq"], strict=True):
        rows = a.context_at(int(seq), context=False)
        windows[n] = skeleton(_rows_as_messages(rows), ["\0summary"])
        estimates[n] = int(est[seq])
    token_cols = ["tokens_input", "tokens_output", "tokens_cache_read"]
    na = {
        "compaction": bool(comp[["compaction_input", "compaction_output"]].isna().all().all()),
        "side": bool(len(flushes) and flushes[token_cols].isna().all().all()),
    }
    manual = [x for x in log if x["kind"] == "compaction" and x["phase"].startswith("manual")]
    return Observed(
        calls={"turn": len(turns), "compaction": len(comp), "side": len(flushes)},
        tokens={"turn": _sums(turns), "compaction": None, "side": None},
        tool_calls=Counter(tools["tool_name"]),
        compactions=dict(Counter(comp["kind"].astype("string").fillna("NA"))),
        windows=windows,
        estimates=estimates,
        unplaced={
            "compaction": "OpenClaw writes no record of a compaction call",
            "side": "the memory flush turn writes no entry (the session entry keeps its outcome)",
        },
        na_shown=na,
        na_triggers={"manual": len(manual), "auto": len(comp) - len(manual)},
    )


# -- OpenCode ------------------------------------------------------------------------------------
def opencode(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The one session of ``home/.local/share/opencode/opencode.db`` with its subagent (the
    ``task`` tool's child session). Every turn and compaction call has a message: a reply its
    assistant message, a compaction call its summary message (its usage on the summary row).
    Replies are placed by order: the n-th reply of a session (by time) is the n-th turn call of
    the log that is that session's (the subagent's first message is its task prompt, which
    starts with the task marker; the main session's prompts are quoted). OpenCode's title call
    writes nothing (the session's title is its answer): no row, no usage, ``unrecorded``."""
    (store,) = sorted((folder / "home").rglob("opencode.db"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opened = adfkit.open(store)
    assert isinstance(opened, adfkit.AgentCollection)  # one agent per top-level session
    (session,) = opened
    agents = [session, *session.subagents()]
    usage = pd.concat([a.usage() for a in agents], ignore_index=True)
    turns = usage[usage["call_kind"] == "assistant"]
    comp_rows = usage[usage["call_kind"] == "compaction"]
    comp = session.compactions()
    tools = pd.concat([a.tool_calls(history=True) for a in agents], ignore_index=True)
    calls_in_log = [x for x in log if x["kind"] in MODEL_KINDS]

    def sub(x: dict[str, Any]) -> bool:
        first = x["call"]["messages"][0]["content"] if x["call"]["messages"] else []
        return any(MARKER.match(b.get("text", "").strip()) for b in first if b["type"] == "text")

    windows: dict[int, list[Message]] = {}
    estimates: dict[int, int] = {}
    for a, mine in ((session, False), *((s, True) for s in session.subagents())):
        lines = [x["n"] for x in calls_in_log if x["kind"] == "turn" and sub(x) == mine]
        u = a.usage()
        replies = u[u["call_kind"] == "assistant"].sort_values("created_at", kind="stable")
        est = dict(zip(a.replay()["seq"], a.replay()["est_tokens"], strict=True))
        for n, seq in zip(lines, replies["seq"], strict=True):
            rows = a.context_at(int(seq), context=False)
            windows[n] = skeleton(_rows_as_messages(rows), ["\0summary"])
            estimates[n] = int(est[seq])
    return Observed(
        calls={"turn": len(turns), "compaction": len(comp_rows)},
        tokens={"turn": _sums(turns), "compaction": _sums(comp_rows)},
        tool_calls=Counter(tools["tool_name"]),
        compactions=dict(Counter(comp["kind"])),
        windows=windows,
        estimates=estimates,
        unplaced={
            "compaction": "a compaction call is sent the rows it sweeps rendered as one text "
            "(OpenCode's serialize), which the store does not keep; its summary row's replay "
            "is the window after it"
        },
        unrecorded={
            "side": "OpenCode's title call writes no message: the session's title is its "
            "answer, and its usage is in no table (the session's totals are its messages')"
        },
    )


#: agent folder name -> its adapter. Add yours here (a function of its own, above).
# -- Gemini CLI ----------------------------------------------------------------------------------
#: Calls of one Gemini CLI compression (chatCompressionService.ts ``compress``: the summary, then
#: "Critically evaluate the <state_snapshot> ..." with the same system prompt).
GEMINI_COMPRESSION_CALLS = 2


def gemini_cli(folder: Path, log: list[dict[str, Any]]) -> Observed:
    """The session under ``home/.gemini/tmp/<project>/chats/`` (its first file; a resume's
    further file is read with it) and its subagent. A reply is placed by order, as for Qwen
    Code: the n-th reply of the main chat is the n-th turn call of the log that is not the
    subagent's (whose first message is its task prompt); the subagent's the same way in its
    own chat. A compression leaves no record of its two calls (no usage, no request): each
    compaction of adfkit's table stands for :data:`GEMINI_COMPRESSION_CALLS` calls, their tokens
    None (NA in the table), their trigger as adfkit reads it (mid-turn: automatic)."""
    chat = sorted((folder / "home").rglob("chats/session-*.jsonl"))[0]
    session = _quiet_open(chat)
    agents = [session, *session.subagents()]
    usage = pd.concat([a.usage() for a in agents], ignore_index=True)
    turns = usage[usage["call_kind"] == "assistant"]
    comp = session.compactions()
    comp = comp[comp["event"] == "compaction"]
    tools = pd.concat([a.tool_calls(history=True) for a in agents], ignore_index=True)
    calls_in_log = [x for x in log if x["kind"] in MODEL_KINDS]

    def sub(x: dict[str, Any]) -> bool:
        first = x["call"]["messages"][0]["content"] if x["call"]["messages"] else []
        return any(MARKER.match(b.get("text", "").strip()) for b in first[:1])

    windows: dict[int, list[Message]] = {}
    est: dict[int, int] = {}
    for a, mine in ((session, False), *((s, True) for s in session.subagents())):
        lines = [x["n"] for x in calls_in_log if x["kind"] == "turn" and sub(x) == mine]
        u = a.usage()
        tokens = a.replay().set_index("seq")["est_tokens"]
        for n, seq in zip(lines, u[u["call_kind"] == "assistant"]["seq"], strict=True):
            rows = a.context_at(int(seq), context=False)
            windows[n] = skeleton(_rows_as_messages(rows), ["\0summary"])
            est[n] = int(tokens.loc[int(seq)])
    na = bool(comp["compaction_input"].isna().all() and comp["compaction_output"].isna().all())
    kinds = Counter(comp["kind"].astype("string").fillna("NA"))
    return Observed(
        calls={"turn": len(turns), "compaction": GEMINI_COMPRESSION_CALLS * len(comp)},
        tokens={"turn": _sums(turns), "compaction": None},
        tool_calls=Counter(tools["tool_name"]),
        compactions={k: GEMINI_COMPRESSION_CALLS * n for k, n in kinds.items()},
        windows=windows,
        unplaced={
            "compaction": "Gemini CLI writes no record of a compression call: neither its "
            "request (the history, then the compression prompt) nor its usage"
        },
        na_shown={"compaction": na},
        estimates=est,
    )


#: agent folder name -> its adapter. Add yours here (a function of its own, above).
ADAPTERS: dict[str, Adapter] = {
    "claude-code": claude_code,
    "codex": codex,
    "copilot-cli": copilot_cli,
    "gemini-cli": gemini_cli,
    "openclaw": openclaw,
    "opencode": opencode,
    "pi": pi,
    "qwen-code": qwen_code,
}


# -- the tests -----------------------------------------------------------------------------------
@cache
def _truth(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "truth.json").read_text())


@cache
def _log(folder: Path) -> list[dict[str, Any]]:
    with (folder / "requests.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@cache
def _observed(agent: str, folder: Path) -> Observed:
    adapter = ADAPTERS.get(agent)
    if adapter is None:
        pytest.skip(f"{agent}: adfkit has no reader for this agent's files yet")
    return adapter(folder, _log(folder))


def _model_calls(folder: Path) -> list[dict[str, Any]]:
    """The calls the agent was answered: one whose client hung up before its held answer
    (``hangup``, the recorder's ``phase(hold=...)``) reached no agent, as ``truth.json`` says."""
    log = _log(folder)
    gone = {line["of"] for line in log if line["kind"] == "hangup"}
    return [line for line in log if line["kind"] in MODEL_KINDS and line["n"] not in gone]


PARAMS = pytest.mark.parametrize(("agent", "version", "folder"), RECORDINGS, ids=IDS)


@PARAMS
def test_model_calls_by_kind(agent: str, version: str, folder: Path) -> None:
    obs = _observed(agent, folder)
    want = {k: n for k, n in _truth(folder)["calls"].items() if k not in obs.unrecorded}
    assert obs.calls == want


@PARAMS
def test_tokens_by_kind(agent: str, version: str, folder: Path) -> None:
    obs, truth = _observed(agent, folder), _truth(folder)
    for kind, want in truth["tokens"].items():
        got = obs.tokens.get(kind)
        if got is None:
            continue  # the format holds none: test_unrecorded_tokens_show_na
        assert got == want, kind


@PARAMS
def test_unrecorded_tokens_show_na(agent: str, version: str, folder: Path) -> None:
    obs = _observed(agent, folder)
    missing = [
        k for k in _truth(folder)["tokens"] if obs.tokens.get(k) is None and k not in obs.unrecorded
    ]
    if not missing:
        kinds = ", ".join(obs.unrecorded)
        also = f" (its {kinds} calls it keeps no record of at all)" if obs.unrecorded else ""
        pytest.skip(f"{agent} records the tokens of every kind of call{also}")
    assert {k: obs.na_shown.get(k) for k in missing} == dict.fromkeys(missing, True)


@PARAMS
def test_tool_calls(agent: str, version: str, folder: Path) -> None:
    obs, truth = _observed(agent, folder), _truth(folder)
    assert sum(obs.tool_calls.values()) == truth["tool_calls"]
    assert dict(obs.tool_calls) == truth["tool_calls_by_name"]


@PARAMS
def test_compactions_by_trigger(agent: str, version: str, folder: Path) -> None:
    """Each trigger as truth.json counts it, but those the format cannot tell apart
    (``na_triggers``), which adfkit must count as NA."""
    obs = _observed(agent, folder)
    want = Counter(_truth(folder)["compactions"])
    want.subtract(obs.na_triggers)
    want["NA"] += sum(obs.na_triggers.values())
    assert obs.compactions == {k: n for k, n in want.items() if n}


@PARAMS
def test_replay_equals_the_request_at_every_call(agent: str, version: str, folder: Path) -> None:
    obs = _observed(agent, folder)
    summaries = summary_lines(_log(folder))
    checked, wrong = 0, []
    for line in _model_calls(folder):
        if line["kind"] in obs.unplaced or line["kind"] in obs.unrecorded:
            continue
        assert line["n"] in obs.windows, f"call {line['n']} ({line['kind']}) not found"
        # the request holds the model's answer to it only in later calls: compare the context
        want = skeleton(line["call"]["messages"], summaries)
        if obs.windows[line["n"]] != want:
            wrong.append(line["n"])
        checked += 1
    assert checked
    assert wrong == [], f"calls whose replay differs from the request: {wrong}"


def _sent_tokens(messages: list[dict[str, Any]]) -> int:
    """The size of the messages a call was sent, counted as adfkit's estimator counts a row:
    the characters of its texts, tool inputs (JSON) and results, 16 per message, / 4."""
    n = 0
    for m in messages:
        n += 16
        for b in m["content"]:
            if b["type"] in ("text", "thinking"):
                n += len(b.get("text", ""))
            elif b["type"] == "tool_use":
                n += len(b["name"]) + len(json.dumps(b["input"]))
            elif b["type"] == "tool_result":
                n += len(b.get("content", ""))
    return -(-n // 4)


#: How far adfkit's estimate of a call's conversation may be from what was sent: 20% (its
#: estimator is not the model's tokenizer; on the recordings it reads 6-15% high) plus 150
#: tokens (text an agent adds when it sends a row: Copilot CLI wraps a summary in a preamble
#: that lists the user's earlier prompts, about 100 tokens on the recording, not in the file).
EST_TOLERANCE = (0.2, 150)


def sent_chars(messages: list[dict[str, Any]]) -> int:
    """Characters of a request's messages: texts, tool inputs as JSON, tool results."""
    n = 0
    for m in messages:
        for b in m["content"]:
            if b["type"] in ("text", "thinking"):
                n += len(b.get("text", ""))
            elif b["type"] == "tool_use":
                n += len(json.dumps(b["input"]))
            elif b["type"] == "tool_result":
                n += len(b["content"])
    return n


@PARAMS
def test_the_estimate_of_every_call_is_near_what_was_sent(
    agent: str, version: str, folder: Path
) -> None:
    """adfkit's estimate of each placed call against what was sent: in characters where the
    adapter gives them (``est_chars``, within its stated share), else in tokens
    (``estimates``, within :data:`EST_TOLERANCE`); an adapter that gives neither says why."""
    obs = _observed(agent, folder)
    if obs.est_chars:
        got, size = obs.est_chars, sent_chars
        (share, why), slack = obs.est_tolerance, 0
    elif obs.estimates:
        got, size, why = obs.estimates, _sent_tokens, "tokens"
        share, slack = EST_TOLERANCE
    else:
        pytest.skip(f"{agent}: the adapter gives no estimates")
    far = {}
    for line in _model_calls(folder):
        if line["n"] in got:
            sent = size(line["call"]["messages"])
            if abs(got[line["n"]] - sent) > share * sent + slack:
                far[line["n"]] = (got[line["n"]], sent)
    assert far == {}, f"estimates beyond {share:.0%} of what was sent ({why}): {far}"
