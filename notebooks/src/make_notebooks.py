"""Write the bundled notebooks (outputs stripped) from the cell lists below.

Run from anywhere: ``python notebooks/make_notebooks.py``. Edit the cells here, not in the
.ipynb files, so the notebooks stay reviewable as plain Python. Cells call only the public API
(``adfkit``, ``adfkit.plots``, ``adfkit.plots_forgetting``, ``adfkit.plots_fleet``,
``adfkit.widgets`` and
AgentFile methods): no logic lives only in
a notebook. ``tests/test_notebooks.py`` runs every notebook on several sample agents.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent.parent
DEFAULT_AGENT = "../sample_agents/long-runner.adf"

PARAMS = f'''# Parameters: the agent file to look at (a path relative to this notebook, or absolute),
# and a JSON price table for models adfkit's own table lacks (None: unknown costs stay unknown).
# `adfkit report PATH [--prices FILE]` replaces these values; everything below works on any file.
AGENT = "{DEFAULT_AGENT}"
PRICES = None'''

SETUP = """import adfkit
import adfkit.plots
import adfkit.widgets
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import HTML, Markdown, display

pd.set_option("display.max_colwidth", 80)
agent = adfkit.open(AGENT)
agent"""


def md(text: str, *, hidden: bool = False) -> nbformat.NotebookNode:
    meta = {"jupyter": {"source_hidden": True}} if hidden else {}
    return nbformat.v4.new_markdown_cell(text.strip("\n"), metadata=meta)


def code(
    text: str, *, hidden: bool = False, answer: bool = False, tags: list[str] | None = None
):
    meta: dict = {}
    if hidden:
        meta["jupyter"] = {"source_hidden": True}
    if answer:
        # An exercise's answer: its code folded, its result shown folded too (a closed
        # <details>: JupyterLab shows a cell's outputs after Run All whatever the metadata says).
        meta["jupyter"] = {"source_hidden": True}
        meta["tags"] = ["answer"]
        text = "with adfkit.widgets.answer():\n" + "\n".join(
            f"    {line}" if line else "" for line in text.strip("\n").splitlines()
        )
    if tags:
        meta["tags"] = tags
    return nbformat.v4.new_code_cell(text.strip("\n"), metadata=meta)


def notebook(
    title: str, intro: str, cells: list, params: str = PARAMS
) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    nb.cells = [
        code(params, tags=["parameters"]),
        md(f"# {title}\n\n{intro.strip()}"),
        code(SETUP),
        *cells,
    ]
    return nb


QUICKSTART = notebook(
    "Quickstart: open an agent file",
    """
An agent's memory, whichever agent wrote it: an ADF agent keeps it in one SQLite file (`.adf`:
its **loop**, the **audit** archive of what compaction swept away, its files, messages and
settings); Claude Code and Codex keep a JSONL transcript (the conversation, each compaction and
its summary). `adfkit.open` reads any of them read-only and hands you the same pandas
DataFrames; the cell above says which kind this file is (`format=`).
""",
    [
        md(
            "## What is in the file\n`info()` is cheap: it counts rows and reads settings. "
            "Only the fields this kind of file holds are shown; the others are named below it."
        ),
        code(
            """info = pd.Series(agent.info(), name=agent.name)
held = info.dropna()
print("not in this kind of file:", ", ".join(info.index.difference(held.index)) or "nothing")
held.to_frame()"""
        ),
        md(
            """
## The loop and the whole history
`loop()` is what is live now; `history()` adds every row archived by compactions, in display
order, with an `epoch` column counting the compactions before each row.
"""
        ),
        code(
            """history = agent.history()
cols = ["seq", "role", "kind", "subkind", "tool_names", "est_tokens", "tokens_total", "epoch"]
print(f"{len(agent.loop())} live rows, {len(history)} rows over the agent's lifetime")
history[cols].tail(10)"""
        ),
        code(
            """history.groupby(["kind", "origin"], observed=True).size().unstack(fill_value=0)"""
        ),
        md("## Compactions and the audit archive"),
        code(
            """display(agent.events())
agent.audit()[["id", "source", "start_seq", "end_seq", "ref", "entry_count", "size_bytes"]]"""
        ),
        md(
            """
## The context sawtooth
Each model call's prompt grows turn by turn until compaction cuts it back: the sawtooth. The
dashed line is the compaction threshold.
"""
        ),
        code(
            """ax = adfkit.plots.context_sawtooth(agent)
plt.show()"""
        ),
        md("## Tools and tokens"),
        code(
            """calls = agent.tool_calls(history=True)
calls.groupby("tool_name").agg(calls=("tool_use_id", "size"), errors=("is_error", "sum"))"""
        ),
        code(
            """usage = agent.usage(prices=PRICES)
# min_count=1: a total of unknown costs is unknown (NaN), never $0.
totals = usage.groupby("call_kind", observed=True)[
    ["tokens_input", "tokens_output", "tokens_total", "cost_usd"]
].sum(min_count=1)
known = usage["cost_usd"].notna()
print(f"total cost: ${usage['cost_usd'].sum():,.4f}" if known.all() else
      f"total cost: unknown ({int((~known).sum())} call(s) have no price)")
totals"""
        ),
        md(
            """
## The last rows, as the runtime's Loop tab shows them
`adfkit.widgets.rows_html` renders any rows of `loop()` or `history()`; here are the last
few.
"""
        ),
        code("HTML(adfkit.widgets.rows_html(history.tail(8)))"),
        md(
            """
## Browse everything
Filter by kind, role, tool or text and page through the whole history (in a static report, the
first page is shown).
"""
        ),
        code("adfkit.widgets.LoopBrowser(agent, history=True, page_size=10)"),
        md(
            """
## In the tools you already watch agents with
The agent as an OpenTelemetry GenAI trace: a `chat` span per model call with its tokens,
`gen_ai.conversation.compacted` on the first call after each compaction and an
`adfkit.compaction` event for each (tokens before and after, trigger, what it swept).
Phoenix, Langfuse or any OpenTelemetry backend shows it; to send it to a local Arize Phoenix
(`pip install arize-phoenix`, then `phoenix serve`), give `PHOENIX` its address,
`"http://127.0.0.1:6006/v1/traces"`.
"""
        ),
        code(
            """PHOENIX = None  # "http://127.0.0.1:6006/v1/traces" with Phoenix running
doc = agent.to_otlp()
spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
print(f"{len(spans)} spans:", sum(s["name"].startswith("chat") for s in spans), "model calls,",
      sum(len(s.get("events", [])) for s in spans), "compaction events")
if PHOENIX:
    n, failed = adfkit.export_otlp(AGENT, endpoint=PHOENIX)
    print(f"sent {n} spans to {PHOENIX}", failed or "")"""
        ),
        md(
            """
## What to look at next
- **02-compaction-replay**: what each compaction swept, what its summary dropped, the context
  at any call, and what another threshold would have done.
- **03-self-observation-audit**: turns, tool classes, anomalies with evidence, integrity.
- **04-fleet**: many agents side by side.
- **05-teaching-memory**: a lesson on loop, mind, compaction and audit.
- Interactive: `adfkit.widgets.LoopBrowser(agent)`, `AuditExplorer(agent)`,
  `ReplayPlayer(agent)`.
- Headless: `adfkit report agent.adf -o report.html` runs this notebook on any file.
"""
        ),
    ],
)

REPLAY = notebook(
    "Compaction replay",
    """
When the prompt reaches the threshold, the agent **compacts**: it sweeps the older rows out of
the context, asks the model for a summary, and goes on from that summary. Where the swept rows
are kept depends on the agent: a transcript (Claude Code, Codex, pi...) keeps them in the file,
an ADF agent archives them to its audit table when its audit is on. This notebook
replays each compaction: what it swept, what the summary kept and dropped, the context window
at a chosen call, and what a different threshold would have done.
""",
    [
        md("## Each compaction (and clear)"),
        code(
            """compactions = agent.compactions()
threshold, source = agent.compact_threshold(), agent.settings().threshold_source
print(f"{len(compactions)} event(s); threshold now "
      + (f"{threshold:,} tokens ({source})" if threshold is not None else "not set (out of range)"))
compactions[["event_id", "event", "kind", "summary_seq", "audited", "n_swept", "swept_tokens",
             "summary_tokens", "compression_ratio", "recall", "n_refetches", "threshold"]]"""
        ),
        md("## The sawtooth, and what each compaction swept against what it kept"),
        code(
            """fig, (left, right) = plt.subplots(1, 2, figsize=(14, 4.5), layout="constrained")
adfkit.plots.context_sawtooth(agent, ax=left)
adfkit.plots.compaction_ratio(agent, ax=right)
plt.show()"""
        ),
        md(
            """
## One compaction up close
`EVENT` picks one (an `event_id`; -1 is the last one whose swept rows and summary are both in
the file, the summary readable: a Codex remote compaction keeps it encrypted).
"""
        ),
        code(
            """EVENT = -1
readable = compactions[(compactions["event"] == "compaction") & compactions["audited"].fillna(False)
                       & compactions["summary_seq"].notna() & ~compactions["summary_encrypted"]]
event = readable.iloc[EVENT] if EVENT < 0 and len(readable) else (
    compactions.set_index("event_id").loc[EVENT] if EVENT >= 0 else None)
if event is None:
    print("no compaction here has both its swept rows and its summary in the file")
else:
    print(f"event {event.name if EVENT >= 0 else event['event_id']}: {event['kind']}, "
          f"swept {event['n_swept']} rows ({event['swept_tokens']} est. tokens) into a "
          f"{event['summary_tokens']}-token summary")"""
        ),
        md("### What it swept"),
        code(
            """history = agent.history()
if event is not None:
    swept = history[history["seq"].isin(list(event["swept_seqs"]))]
    display(swept.groupby("kind", observed=True)["est_tokens"].agg(rows="size", est_tokens="sum"))
    display(HTML(adfkit.widgets.rows_html(swept.tail(6))))"""
        ),
        md("### The summary that replaced it"),
        code(
            """if event is not None:
    display(HTML(adfkit.widgets.rows_html(history[history["seq"] == event["summary_seq"]])))"""
        ),
        md(
            """
### What the summary dropped
The items of the swept rows (paths, URLs, code names, commands, error lines, instructions,
todos, numbers with a unit: the loss ledger's, by the one rule of `adfkit/_analysis/kept.py`)
and whether the summary kept them, exactly or in other words. adfkit's own seq numbers and
tool names are never items. The ones it lost were forgotten, unless the agent wrote them to
its mind.
"""
        ),
        code(
            """if event is not None:
    recall = agent.summary_recall(int(event["event_id"]))
    display(recall.groupby("kind")["recalled"].agg(items="size", kept="sum"))
    display(recall[~recall["recalled"]].head(15))"""
        ),
        md("### Re-fetches: calls after a compaction that repeat a call it swept"),
        code("agent.refetches().head(10)"),
        md(
            """
## The context window at a chosen call
`context_at(seq)` rebuilds what the model received at one call: the system prompt in force,
the conversation since the last compaction, the dynamic instructions. `CALL` indexes the model
calls (-1 is the last).
"""
        ),
        code(
            """CALL = -1
calls = agent.replay()
seq = int(calls["seq"].iloc[CALL])
window = agent.context_at(seq)
print(f"call S{seq}: {len(window)} rows; reported input {calls['tokens_input'].iloc[CALL]}")
adfkit.plots.composition_at(agent, seq)
plt.show()
window[["part", "seq", "kind", "subkind", "est_tokens"]].tail(12)"""
        ),
        md(
            """
## Counterfactual: other thresholds
`adfkit.simulate_sweep` replays the recorded conversation under other thresholds with the
runtime's rules (no model call): how many compactions there would have been, and how many
tokens would have been sent. The threshold in force says where it comes from (`configured`,
`recorded` from the tokens the file states before each automatic compaction, or `assumed`
from the tool's documented rule); thresholds above the context window are left out (no agent
could run them; `past_window` marks any you add).
"""
        ),
        code(
            """settings = agent.settings()
threshold = settings.compact_threshold or 100_000
source = settings.threshold_source or "none set: 100,000 for the sweep"
window = settings.context_window
thresholds = sorted({max(1000, int(threshold * f)) for f in (0.5, 0.75, 1, 1.5, 2, 4)})
if window:  # past the window the context can never reach the threshold
    thresholds = [t for t in thresholds if t <= window]
print(f"threshold in force: {threshold:,} tokens ({source}); window: "
      + (f"{window:,} tokens ({settings.window_source})" if window else "unknown"))
sweep = adfkit.simulate_sweep(agent, thresholds)
sweep"""
        ),
        code(
            """fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
ax.plot(sweep["threshold"], sweep["n_compactions"], marker="o", label="compactions")
ax.set_xlabel("compaction threshold (tokens)")
ax.set_ylabel("compactions")
ax.axvline(threshold, color="grey", linestyle=":", label=f"threshold in force ({source})")
ax2 = ax.twinx()
ax2.plot(sweep["threshold"], sweep["tokens_sent_ratio"], color="tab:red", marker="s",
         label="tokens sent / actual")
ax2.set_ylabel("tokens sent / actual")
# One legend for both axes, below the plot, so it hides no point.
fig.legend(loc="outside lower center", ncols=3, frameon=False)
plt.show()"""
        ),
        md(
            """
## Replay it yourself
Slide over every model call: the window's composition and its last rows (in a static report,
the first call is shown).
"""
        ),
        code("adfkit.widgets.ReplayPlayer(agent, rows=8)"),
    ],
)

AUDIT = notebook(
    "Self-observation audit",
    """
What did the agent do with its turns? `agent.observe()` (also `adfkit.observe(agent)`) splits the
whole history into turns, classifies every tool call (world, internal, bookkeeping) and runs the
runtime's self-observation checks, keeping the rows that show each finding. Then the file itself
is checked for integrity, and the *mind* (the agent's own notes) is read.
""",
    [
        code(
            """obs = agent.observe()
print(obs.summary())"""
        ),
        md("## Turns\nOne row per turn: what started it, how many calls of each class, tokens."),
        code(
            """display(obs.turns.groupby("trigger_kind").agg(
    turns=("turn", "size"), calls=("n_calls", "sum"), null_turns=("is_null_turn", "sum")))
obs.turns.tail(8)"""
        ),
        md("## Tool calls by class"),
        code(
            """obs.calls.groupby(["class", "tool"]).size().rename("calls").reset_index().sort_values(
    ["class", "calls"], ascending=[True, False])"""
        ),
        code("obs.signatures.head(5)"),
        md(
            """
## Anomalies, with evidence
Every check is listed, tripped or not; for each tripped one, `obs.evidence(check)` gives the
turns or calls behind it.
"""
        ),
        code("""obs.anomalies[["check", "tripped", "value", "threshold", "detail"]]"""),
        code(
            """for check in obs.flagged["check"]:
    print(f"--- {check}")
    display(obs.evidence(check).head(8))
if obs.flagged.empty:
    print("no check tripped")"""
        ),
        md(
            """
## Integrity of the file
Does the file agree with itself? Counters against blobs, audit ranges, lost or duplicated seqs,
calls without results. One row per finding, worst first.
"""
        ),
        code(
            """findings = agent.integrity()
if findings.empty:
    print("no integrity findings")
else:
    display(findings[["check", "severity", "table", "detail"]])"""
        ),
        md("## The mind\n`mind.md` is the index; `mind/<slug>.md` pages hold the rest; `mind/log.md` is the log."),
        code(
            """mind = agent.mind()
print(mind)
for heading, section in mind.index.items():
    if section:
        print(f"## {heading or '(before the first heading)'}\\n{section[:400]}\\n")"""
        ),
        code("""mind.pages[["path", "type", "status", "linked", "problems", "updated_at"]]"""),
        code(
            """history = agent.mind_history()
print(f"{len(history)} recorded change(s) to mind files")
history.tail(8)"""
        ),
        md(
            """
## The archive, decoded
`AuditExplorer` decodes the audit row you pick: archived loop rows, messages, deleted files.
"""
        ),
        code("""agent.audit()[["id", "source", "start_seq", "end_seq", "ref", "entry_count", "size_bytes"]]"""),
        code("adfkit.widgets.AuditExplorer(agent, max_rows=20)"),
    ],
)

FLEET = notebook(
    "A fleet of agents",
    """
Many agents side by side: every agent file in the folder of `AGENT` (the sample agents by
default), loaded with `adfkit.load_fleet`. Which agents compact most, what their compactions
lose, what each one costs, which ones behave oddly. Each table gets `label` (a readable name:
an ADF agent's name, a session's project folder and title or first prompt), `agent` (the name or
session id) and `agent_path` columns; the tables below name agents by `label`. Files that cannot
be read land in the error table instead of stopping the load.
""",
    [
        code(
            """import warnings
from pathlib import Path

import adfkit.plots_fleet

# The folder of AGENT: load_fleet takes a folder (every agent input in it and its subfolders,
# of every format), a glob pattern or a list of paths.
folder = Path(AGENT).resolve().parent
paths = str(folder)
# The sample transcripts end mid-line, as a running agent leaves its file: each would warn
# once while the fleet loads. This overview keeps those warnings out; each agent's
# integrity() lists them.
warnings.filterwarnings("ignore", category=adfkit.AdfWarning)
print(f"agents in {folder.name}/")"""
        ),
        md("## Who is who: one summary row per agent"),
        code(
            """info, errors = adfkit.load_fleet(paths, "info", engine="serial")
display(errors)
info[["label", "agent", "schema_version", "model", "loop_rows", "audited_loop_entries",
      "compact_threshold", "threshold_source", "context_window", "window_source"]]"""
        ),
        md(
            """
## Which agents compact most, and what do they lose?
One row per event of every agent (the `event` column: `compaction`, `clear`, and Claude
Code's `microcompaction`, which clears old tool results but summarises nothing, counted apart):
how much each compaction swept, how small its summary was, and the share of the swept items
(paths, URLs, code names, commands, errors, instructions, todos, numbers with a unit) the
summary kept (`recall`: `1 - loss_rate` of notebook 07's ledger, the same items). Compactions
with audit off have no swept rows to measure: their sizes are unknown (NaN).
"""
        ),
        code(
            """events, errors = adfkit.load_fleet(paths, "compactions", engine="serial")
comp = events[events["event"] == "compaction"]
lost = comp.groupby("label").agg(
    compactions=("event_id", "size"),
    audited=("audited", "sum"),
    swept_tokens=("swept_tokens", lambda s: s.sum(min_count=1)),
    median_ratio=("compression_ratio", "median"),
    recall=("recall", "mean"),
)
others = events[events["event"] != "compaction"].groupby(["label", "event"]).size()
lost = lost.join(others.unstack(fill_value=0)).sort_values("compactions", ascending=False)
lost"""
        ),
        code(
            """adfkit.plots_fleet.fleet_recall(events)  # one point per agent, sized by its compactions
plt.show()"""
        ),
        md(
            """
## What each agent costs
Tokens and cost per agent from `usage()` (every model call, compaction calls included). Older
layouts record only a total per call: those calls count in `tokens_total` but not in the
input/output split, and their cost is unknown. A model the shipped price table lacks also makes
the cost unknown: set `PRICES` to a JSON price table to fill it in. Unknown stays unknown
(NaN), never $0.
"""
        ),
        code(
            """import warnings

with warnings.catch_warnings(record=True) as notes:  # shown below as one line per agent
    warnings.simplefilter("always")
    usage, errors = adfkit.load_fleet(paths, "usage", engine="serial", prices=PRICES)
for w in notes:
    print("note:", str(w.message).split(": their cost_usd")[0])
spend = usage.groupby("label").agg(
    calls=("seq", "size"),
    tokens_total=("tokens_total", lambda s: s.sum(min_count=1)),
    tokens_input=("tokens_input", lambda s: s.sum(min_count=1)),
    tokens_output=("tokens_output", lambda s: s.sum(min_count=1)),
    cost_usd=("cost_usd", lambda s: s.sum() if s.notna().all() else float("nan")),
    unpriced_calls=("cost_usd", lambda s: int(s.isna().sum())),
)
spend.sort_values("tokens_total", ascending=False)"""
        ),
        code(
            """adfkit.plots_fleet.fleet_tokens(usage)
plt.show()"""
        ),
        md("## Anomalies side by side\nThe self-observation checks of every agent, one column per check."),
        code(
            """anomalies, errors = adfkit.load_fleet(paths, "anomalies", engine="serial")
anomalies.pivot_table(index="label", columns="check", values="tripped", aggfunc="any")"""
        ),
        md(
            """
## Past one machine: Dask
`load_fleet` runs the same per-file work on a process pool (`engine="processes"`) or on a Dask
cluster (`engine="dask"`, with your own `client=` or a local one), so the code above scales from
this folder to thousands of agents on many machines. Frames come back in input order and equal
the serial ones. Set `RUN_DASK = True` to try it here (it starts a local cluster).
"""
        ),
        code(
            """RUN_DASK = False
if RUN_DASK:
    # On a cluster: from dask.distributed import Client; client = Client("scheduler:8786")
    # and pass client=client.
    dask_usage, dask_errors = adfkit.load_fleet(paths, "usage", engine="dask", prices=PRICES)
    pd.testing.assert_frame_equal(dask_usage, usage)
    print("dask gave the same", len(dask_usage), "rows")"""
        ),
    ],
)

TEACHING = notebook(
    "How an agent remembers: loop, mind, compaction, audit",
    """
A lesson for students. An LLM agent has no memory between calls: every call sends the
**loop** (the conversation so far) again. The loop cannot grow forever, so the runtime
**compacts** it into a summary when it gets too big. What the agent wants to keep for sure, it
writes to its **mind** (files it re-reads). And when audit is on, everything compaction swept is
kept in the **audit** archive, so we can check what was forgotten.

Each section ends with an exercise. Try it in a new cell first and check your answer with
`check(N, answer)`: it says *right*, or what to look at. The answer sits in a folded cell below
it (click the bar to unfold it, in JupyterLab).
""",
    [
        code(
            """from adfkit.teaching import Lesson

check = Lesson(agent).check  # check(exercise, answer): right, or what to look at"""
        ),
        md(
            """
## 1. The loop
Every row has a `role` (`user` or `assistant`) and a `kind`: messages, the model's replies,
tool results, *triggers* that start a turn (a timer, an inbox message), *context* blocks
(teal: the system prompt and instructions, shown to the UI), and compaction summaries.
"""
        ),
        code(
            """loop = agent.loop()
HTML(adfkit.widgets.rows_html(loop.head(6)))"""
        ),
        md("Try the browser: set *kind* to `context` to see only the teal blocks."),
        code("adfkit.widgets.LoopBrowser(agent, page_size=5)"),
        md(
            """
**Exercise 1.** The live loop is what the model will be sent next. Which kind of row takes the
most estimated tokens in it, and what share of the whole?

*Hint:* `loop` has a `kind` and an `est_tokens` column. *Check:* `check(1, kind)` or
`check(1, (kind, share))`.
"""
        ),
        code(
            """by_kind = loop.groupby("kind", observed=True)["est_tokens"].sum().sort_values()
print(f"{by_kind.index[-1]}: {by_kind.iloc[-1]} of {by_kind.sum()} estimated tokens "
      f"({by_kind.iloc[-1] / by_kind.sum():.0%})")""",
            answer=True,
        ),
        md(
            """
## 2. Compaction
The model's prompt grows with every call until it reaches the threshold; then the loop is
replaced by a summary. Plotting the prompt size per call shows a sawtooth.
"""
        ),
        code(
            """threshold, source = agent.compact_threshold(), agent.settings().threshold_source
print("threshold:", f"{threshold:,} tokens ({source})" if threshold is not None else "not set")
ax = adfkit.plots.context_sawtooth(agent)
plt.show()"""
        ),
        md(
            """
**Exercise 2.** Summaries are short, so they lose things. Which compaction squeezed hardest
(the highest `compression_ratio`), and what share of the items it swept (paths, URLs, code
names, commands, numbers with a unit...) did its summary keep?

*Hint:* `agent.compactions()`; the columns `compression_ratio` and `recall`. *Check:*
`check(2, event_id)` or `check(2, (event_id, recall))`.
"""
        ),
        code(
            """comp = agent.compactions().dropna(subset=["compression_ratio"])
if len(comp):
    hardest = comp.loc[comp["compression_ratio"].idxmax()]
    print(f"compaction {hardest['event_id']} ({hardest['kind']}): "
          f"{hardest['compression_ratio']:.1f}x smaller; its summary kept "
          f"{hardest['recall']:.0%} of the {hardest['n_identifiers']} items it swept")
else:
    print("no compaction here has its swept rows in the file")""",
            answer=True,
        ),
        md(
            """
## 3. The audit archive
With audit on, compaction first writes the rows it removes to `adf_audit`, Brotli-compressed.
`decode_audit(id)` opens one; with audit off, swept rows are gone for good
(`history_gaps()` lists them).
"""
        ),
        code(
            """audit = agent.audit()
display(audit[["id", "source", "start_seq", "end_seq", "entry_count", "size_bytes"]])
print("seqs lost forever:", int(agent.history_gaps()["n_seqs"].sum()))"""
        ),
        md(
            """
**Exercise 3.** After a compaction, does the agent go and fetch again what it had just
forgotten? Count, per compaction, the calls afterwards that repeat a call the compaction swept.

*Hint:* `agent.refetches()` has one row per such call, with `event_id`. *Check:*
`check(3, how_many)` or `check(3, {event_id: count, ...})`.
"""
        ),
        code(
            """ref = agent.refetches()
print(f"{len(ref)} re-fetch(es) after {len(agent.compactions())} compaction(s)")
display(ref.groupby("event_id").size().rename("refetches").to_frame())""",
            answer=True,
        ),
        md(
            """
## 4. The mind
Files the agent wrote for itself. `mind.md` is its index; it re-reads it after a compaction,
so what is written there survives when the loop is summarised. The pages under `mind/` are
its notes: it writes them as it works and reads them back later.
"""
        ),
        code(
            """files = agent.files()
mind = files[(files["path"] == "mind.md") | files["path"].str.startswith("mind/")]
mind = mind.sort_values("updated_at")
print(f"{len(mind)} mind files; the five written last:")
display(mind[["path", "size", "updated_at"]].tail(5))
newest = mind["path"].iloc[-1] if len(mind) else None
print(agent.read_text(newest)[:800] if newest else "this agent keeps no mind file")"""
        ),
        md(
            """
**Exercise 4.** Tools fail too. Which tool failed most often, and what share of its calls
failed?

*Hint:* `agent.tool_calls(history=True)` has `tool_name` and `is_error`. *Check:*
`check(4, tool)` or `check(4, (tool, failures))`.
"""
        ),
        code(
            """calls = agent.tool_calls(history=True)
stats = calls.groupby("tool_name").agg(calls=("tool_use_id", "size"),
                                       failed=("is_error", "sum"))
worst = stats.sort_values("failed").iloc[-1]
print(f"{worst.name}: {worst['failed']} of {worst['calls']} calls failed "
      f"({worst['failed'] / worst['calls']:.0%})")""",
            answer=True,
        ),
        md(
            """
## 5. Audit: what did the agent actually do?
`agent.observe()` splits the history into turns and flags anomalies such as repeated identical
calls, or turns that spend tokens without changing anything in the world.
"""
        ),
        code(
            """obs = agent.observe()
obs.anomalies[["check", "tripped", "detail"]]"""
        ),
        md(
            """
**Exercise 5.** Which kind of trigger starts the most turns, and how many tool calls does such
a turn make on average?

*Hint:* `obs.turns` has `trigger_kind` and `n_calls`. *Check:* `check(5, kind)` or
`check(5, (kind, mean_calls))`.
"""
        ),
        code(
            """per = obs.turns.groupby("trigger_kind")["n_calls"].agg(["size", "mean"])
top = per.sort_values("size").iloc[-1]
print(f"{top.name}: {int(top['size'])} turns, {top['mean']:.1f} tool calls each on average")""",
            answer=True,
        ),
    ],
)

COMPARE = notebook(
    "Agents of every format side by side",
    """
The same memory analysis for agents of different kinds: an ADF agent (`AGENT`) and the agents
in `OTHERS`, by default one agent of each other format adfkit reads that has a file in
`SAMPLES` (in a clone: a Claude Code session, a Codex rollout, a sample of an Inspect AI
evaluation log, an OpenHands conversation, pi and Copilot CLI sessions, a Letta agent file...;
a format adfkit learns to read shows here as soon as its sample is in that folder). Each
compacts its context and each keeps some record of what a compaction swept (the ADF audit
archive; the transcript itself; the model inputs around Inspect's compaction event; the events
OpenHands' condenser names as forgotten; the messages a Letta summary hid), so for each we can
ask: how often did it compact, what did each compaction keep, what did its summary forget, and
what did it cost? Where a record has no counterpart (Inspect writes no summary text, a Letta
agent file no token counts) the cell says so instead of a number. Put any agents in `OTHERS`:
every cell takes any number of agents.
""",
    [
        code(
            """import warnings

if OTHERS is None:  # one agent of each other format adfkit finds in SAMPLES, first by path
    found = adfkit.list_sessions(SAMPLES)
    found = found[found["format"] != agent.format].sort_values("path")
    found["format"] = pd.Categorical(found["format"], categories=adfkit.formats())
    OTHERS = found.sort_values(["format", "path"]).groupby("format", observed=True).head(1)
    OTHERS = OTHERS["path"].tolist()
with warnings.catch_warnings(record=True) as notes:  # e.g. a session still being written
    warnings.simplefilter("always")
    others = [adfkit.open(path) for path in OTHERS]
    # an input of several agents (an Inspect log, a Letta group): its first
    others = [o[0] if isinstance(o, adfkit.AgentCollection) else o for o in others]
for w in notes:
    print("note:", w.message)
agents = {}  # one column per agent, named by its format (and its name, if two share one)
for a in [agent, *others]:
    agents[a.format_label if a.format_label not in agents else f"{a.format_label} {a.name}"] = a
for label, a in agents.items():
    print(f"{label}: {a!r}")"""
        ),
        md("## The lives at a glance"),
        code(
            """def glance(a):
    h, c = a.history(), a.compactions()
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always")
        u = a.usage(prices=PRICES)
    for w in notes:
        print("note:", str(w.message).split("; pass")[0])
    return {
        "rows over the life": len(h),
        "rows in the context now": len(a.loop()),
        "model calls": int((h["kind"] == "assistant").sum()),
        "compactions": int((c["event"] == "compaction").sum()),
        "microcompactions": int((c["event"] == "microcompaction").sum()),
        "clears": int((c["event"] == "clear").sum()),
        "threshold in force": a.compact_threshold(),
        "threshold from": a.settings().threshold_source,
        "tokens (input + output)": u["tokens_total"].sum(min_count=1),
        "cache writes": u["tokens_cache_write"].sum(min_count=1),
        "cost (USD)": u["cost_usd"].sum() if u["cost_usd"].notna().all() else float("nan"),
    }

# object dtype from the start: each cell keeps its own type (counts stay integers, the cost a
# float); a frame built first and cast after has turned the counts to floats already
pd.DataFrame({label: pd.Series(glance(a), dtype=object) for label, a in agents.items()})"""
        ),
        md(
            """
## What each compaction kept, and what it forgot
One row per compaction of each agent: the rows it swept, the summary that replaced them, how
much smaller the summary is, and the share of the swept items (paths, URLs, code names,
commands, numbers with a unit...) the summary kept (`recall`, the loss ledger's items).
"""
        ),
        code(
            """cols = ["event_id", "event", "kind", "n_swept", "swept_tokens", "summary_tokens",
        "compression_ratio", "recall", "n_tail", "trigger_tokens", "recorded_tokens_before"]
both = pd.concat(
    {label: a.compactions()[cols] for label, a in agents.items()}, names=["agent", "row"]
)
both"""
        ),
        code(
            """rows = (len(agents) + 1) // 2
fig, axes = plt.subplots(rows, 2, figsize=(14, 4.5 * rows), layout="constrained", squeeze=False)
for ax, (label, a) in zip(axes.flat, agents.items()):
    adfkit.plots.context_sawtooth(a, ax=ax)
    ax.set_title(label)
for ax in axes.flat[len(agents):]:
    ax.set_visible(False)
plt.show()"""
        ),
        md(
            """
## What a summary dropped, in detail
The items of the first compaction with a summary to compare, per agent, that the summary
lost: what the agent can no longer see unless it wrote it down elsewhere.
"""
        ),
        code(
            """for label, a in agents.items():
    c = a.compactions()
    known = c[c["recall"].notna()]
    if not len(known):
        print(f"{label}: no compaction with both its swept rows and its summary")
        continue
    recall = a.summary_recall(int(known["event_id"].iloc[0]))
    print(f"{label}: {int(recall['recalled'].sum())} of {len(recall)} items kept")
    display(recall[~recall["recalled"]].head(8))"""
        ),
        md(
            """
## What compaction cost
Cache writes after a compaction: the summary and what follows it are new text, so the
provider cannot serve them from its prompt cache. `cache_write_before` / `_after` sum the
cache-write tokens over the calls around each compaction.
"""
        ),
        code(
            """cost_cols = ["event_id", "compaction_input", "compaction_output", "cache_write_before",
             "cache_write_after", "cache_read_before", "cache_read_after"]
pd.concat({label: a.compactions()[cost_cols] for label, a in agents.items()},
          names=["agent", "row"])"""
        ),
        md(
            """
## The agents they started
Some records also hold the agents a session started (a Claude Code session's, an OpenHands
conversation's, a Qwen Code chat's subagents: their own transcripts, opened as agents of their
own, with their own compactions); the others have none.
"""
        ),
        code(
            """for label, a in agents.items():
    subs = a.subagents()
    print(f"{label}: {len(subs)} subagent(s)")
    for sub in subs:
        print(f"  {sub.name}: {len(sub.history())} rows, "
              f"{len(sub.compactions())} compaction(s)")"""
        ),
    ],
    params=PARAMS
    + "\n# The agents to compare it with: a list of any paths adfkit opens (a session file or\n"
    + "# folder, an .adf, one sample of an Inspect log as LOG.eval#SAMPLE); None: one agent of\n"
    + "# each other format adfkit reads that has a file in SAMPLES (the first by path).\n"
    + "OTHERS = None\n"
    + 'SAMPLES = "../sample_agents"',
)

FORGETTING = notebook(
    "What forgetting costs",
    """
A compaction replaces the conversation with a summary. What did the summary drop, did the agent
need it again, and what did that cost in calls, tokens and money? What did the compaction do to
the prompt cache, and how long did the agent take to get going again? Every table here is a
function of the record, so the same cells work on an ADF file, a Claude Code session or a Codex
rollout; published figures are drawn as reference lines where they apply.
""",
    [
        code("import adfkit.plots_forgetting"),
        md(
            """
## The loss ledger
One row per item of what each compaction swept: file paths, identifiers, URLs, error lines,
commands, user instructions, todos, numbers with a unit. `kept` says whether the summary holds
it exactly, in other words (`normalised`) or not (`lost`); `saved` whether the agent wrote it
to memory first; `needed_again` whether it came back after (read again, run again, the same
error hit again, the user repeating it), with what that took.
"""
        ),
        code(
            """ledger = agent.compaction_ledger(prices=PRICES)
cols = ["event_id", "kind", "value", "kept", "saved", "needed_again", "needed_how",
        "calls_until", "refetch_tokens"]
print(f"{len(ledger)} items over {ledger['event_id'].nunique()} compaction(s)")
ledger[cols].head(15)"""
        ),
        code(
            """ledger.groupby(["kind", "kept"]).size().unstack(fill_value=0) if len(ledger) else ledger"""
        ),
        md("Per compaction: the loss rate, by kind, and what forgetting cost."),
        code(
            """forgot = agent.forgetting(prices=PRICES)
forgot[["event_id", "n_items", "n_kept_exact", "n_kept_normalised", "n_lost", "n_saved",
        "loss_rate", "n_needed_again", "n_forgotten", "forgetting_tokens",
        "forgetting_cost_usd", "calls_until_last"]]"""
        ),
        code(
            """ax = adfkit.plots_forgetting.ledger_by_kind(ledger)
plt.show()"""
        ),
        md(
            """
## Summary of a summary
An item kept by one summary meets the next compaction only through that summary. How many
summaries in a row kept it, and where did it go (`kept_chain`: exact, then normalised, then
lost is drift)?
"""
        ),
        code(
            """survival = agent.item_survival()
display(survival["kept_chain"].value_counts().head(10).to_frame())
agent.survival_curve()"""
        ),
        code(
            """ax = adfkit.plots_forgetting.survival_plot(survival)
plt.show()"""
        ),
        md(
            """
## Through the prompt cache
The last call before each compaction and the first after it, as the provider reported them;
the cached prefix the compaction invalidated; the next calls' cost against two
counterfactuals: no compaction (until the window would have overflowed) and a stable prefix
(the summary placed after the system prompt and tools). NA where the record has no cache
fields or the model no price.
"""
        ),
        code(
            """cache = agent.compaction_cache(prices=PRICES)
cache[["event_id", "input_before", "cache_read_before", "cache_write_before", "input_after",
       "cache_read_after", "cache_write_after", "invalidated_tokens", "shed_tokens",
       "compaction_cost_usd", "cost_after_usd", "cost_no_compaction_usd",
       "cost_stable_prefix_usd", "net_saving_usd", "break_even_calls", "overflow_call"]]"""
        ),
        code(
            """ax = adfkit.plots_forgetting.cache_cost(cache)
plt.show()"""
        ),
        md(
            """
## Getting going again
Tool calls from the start to the first productive action (an edit, a write, a command: the
format's taxonomy), at the cold start and after each compaction; files read again that were
read before (re-orientation).
"""
        ),
        code(
            """recovery = agent.recovery()
recovery[["start", "event_id", "actions_to_productive", "calls_to_productive",
          "productive_tool", "seconds_to_productive", "n_reads", "reorientation_reads"]]"""
        ),
        code(
            """ax = adfkit.plots_forgetting.recovery_plot(recovery)
plt.show()"""
        ),
        md(
            """
## On a fleet
`load_fleet(table=...)` gives each table for many agents, with an `agent` column; the plots
take those frames too. Put more paths in `paths`.
"""
        ),
        code(
            """paths = [AGENT]
fleet_recovery = adfkit.load_fleet(paths, table="recovery", progress=False).df
fleet_ledger = adfkit.load_fleet(paths, table="compaction_ledger", progress=False).df
# one above the other: each plot's legend stands to its right, clear of the other plot
fig, axes = plt.subplots(2, 1, figsize=(12, 9), layout="constrained")
adfkit.plots_forgetting.ledger_by_kind(fleet_ledger, ax=axes[0])
adfkit.plots_forgetting.recovery_plot(fleet_recovery, ax=axes[1])
plt.show()"""
        ),
        md(
            """
## Next to the published figures
This agent's figures beside ones measured on other agents and published: how much smaller the
prompt is right after a compaction than right before it (the median ratio over 142 Claude Code
compactions), the share of items a summary keeps (the mean over its compactions of `recall`,
the figure notebook 04 shows per agent; a benchmark of pi's compaction, and a text summary held
to the same budget), and how many tool calls an agent makes before its first productive one,
from a cold start and after a compaction (86 compactions of coding agents).
"""
        ),
        code(
            """def median(s):
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.median()) if len(s) else float("nan")

def mean(s):
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.mean()) if len(s) else float("nan")

rows = [
    ("median post/pre prompt ratio", median(cache["input_after"] / cache["input_before"]),
     "0.203 over 142 Claude Code compactions"),
    ("share of items a summary keeps (mean recall)", 1 - mean(forgot["loss_rate"]),
     "6.2/10 facts (pi benchmark); 35.6% (text summary)"),
    ("actions to first productive, cold", median(
        recovery.loc[recovery["start"] == "cold", "actions_to_productive"]), "median 10"),
    ("actions to first productive, after", median(
        recovery.loc[recovery["start"] == "compaction", "actions_to_productive"]),
     "median 28, p75 61 over 86 compactions"),
]
pd.DataFrame(rows, columns=["figure", "this agent", "published"])"""
        ),
    ],
)


LAB = notebook(
    "The compaction lab: why each compaction fired, and what another compactor would keep",
    """
For every compaction the file records, adfkit knows the window before it, the summary, the
items it swept and which of them the agent needed again afterwards. This notebook asks two
questions of them: **why did the agent compact there** (the compaction audit), and **would
another compactor have kept what was needed** (the lab: each compaction replayed with other
compactors, scored offline, deterministically).
""",
    [
        md(
            """
## Why it compacted there
Per compaction: the threshold and window in force (and where they come from), the tokens
before and after, the fill at which it fired, the summary against the previous one. The
findings (`early`, `summary_grew`, `back_to_back`, `did_not_shrink`, `cache_never_read`) are
named with their thresholds in `help(adfkit.AgentFile.compaction_audit)`; `missed` runs of
calls past the threshold with no compaction are in `missed_compactions()`.
"""
        ),
        code(
            """audit = agent.compaction_audit()
missed = agent.missed_compactions()
print(f"{len(audit)} compaction(s), {len(missed)} missed run(s)")
audit[["event_id", "kind", "threshold", "threshold_source", "tokens_before", "tokens_after",
       "fill", "shrink", "summary_tokens", "calls_since_previous", "findings"]]"""
        ),
        md(
            """
## Replayed with other compactors
Each compactor gets the window before the compaction and makes a new one: `recorded` (what the
agent did), `keep_last` (the last turns), `mask` (old tool results replaced by a placeholder),
`trim` (tool results cut), `extractive` (the items of the window, listed). `recall` is the share
of the items needed again after the compaction that the new window keeps (NA when none was
needed again); `tokens_after` the new window's size; `cost_usd` the compaction call and the cache
rewrite at the model's prices. `adfkit lab PATH` prints the same table.
"""
        ),
        code(
            """lab = agent.compaction_lab(prices=PRICES)
lab[["event_id", "compactor", "tokens_before", "tokens_after", "ratio", "n_needed",
     "n_needed_kept", "recall", "cost_usd"]]"""
        ),
        md("Per compactor, over every compaction: tokens kept, and recall of what was needed."),
        code(
            """per = lab.groupby("compactor", sort=False).agg(
    compactions=("event_id", "size"),
    mean_tokens_after=("tokens_after", "mean"),
    needed=("n_needed", "sum"),
    kept=("n_needed_kept", "sum"),
    cost_usd=("cost_usd", "sum"),
)
per["recall"] = (per["kept"] / per["needed"]).where(per["needed"] > 0)
per"""
        ),
        code(
            """ax = adfkit.plots.lab_recall_tokens(lab)
plt.show()"""
        ),
        md(
            """
## A compactor of your own
A compactor is any callable from the window before a compaction (`inp.messages`, each with its
`kind`, `role` and content `blocks`; `inp.tools`; `inp.budget` in tokens) to the new window (a
list of messages). Give it as a `(label, callable)` pair, or register it by name with
`adfkit.register_compactor` (an installed package: the `adfkit.compactors` entry point group).
Here: keep what people wrote and the agent's own words, drop every tool call and result.
"""
        ),
        code(
            """def words_only(inp):
    return [m for m in inp.messages if m.kind in ("message", "compaction_summary")
            or (m.kind == "assistant" and all(b.get("type") == "text" for b in m.blocks))]

mine = agent.compaction_lab(["recorded", ("words_only", words_only)], prices=PRICES)
mine[["event_id", "compactor", "tokens_after", "n_needed", "n_needed_kept", "recall"]]"""
        ),
        md(
            """
## The compactions as a dataset
One record per real compaction (the window before, the recorded summary, the swept items and
which were needed again, what the calls around it cost), redacted by adfkit's rules, as Parquet
and JSON lines with a datasheet: `adfkit lab PATH --dataset DIR` does the same.
"""
        ),
        code(
            """import tempfile
from pathlib import Path

out = Path(tempfile.mkdtemp()) / "compactions"
written, errors = adfkit.export_compaction_dataset(AGENT, out, prices=PRICES)
dataset = pd.read_parquet(out / "compactions.parquet")
print(written["file"].map(lambda f: Path(f).name).tolist())
dataset[["event_id", "kind", "messages_before", "est_tokens_before", "n_items", "n_needed",
         "cost_before_usd", "cost_after_usd"]]"""
        ),
        md(
            """
## Next to the published figures
How much smaller the context is right after a compaction than right before it: the median of
`shrink` (tokens after / tokens before, as the record states them) against two public
analyses, of 1,041 Codex compactions and of 142 Claude Code compactions.
"""
        ),
        code(
            """shrink = pd.to_numeric(audit["shrink"], errors="coerce").dropna()
pd.DataFrame(
    [("median post/pre token ratio", float(shrink.median()) if len(shrink) else float("nan"),
      "Codex 0.11 (1,041 compactions); Claude Code 0.203 (142 compactions)")],
    columns=["figure", "this agent", "published"],
)"""
        ),
    ],
)


NOTEBOOKS = {
    "01-quickstart": QUICKSTART,
    "02-compaction-replay": REPLAY,
    "03-self-observation-audit": AUDIT,
    "04-fleet": FLEET,
    "05-teaching-memory": TEACHING,
    "06-compare-agents": COMPARE,
    "07-what-forgetting-costs": FORGETTING,
    "08-compaction-lab": LAB,
}


def main() -> None:
    for name, nb in NOTEBOOKS.items():
        for i, cell in enumerate(nb.cells):  # stable ids: reviewable diffs
            cell.id = f"{name[:2]}-{i:02d}"
        nbformat.validate(nb)
        nbformat.write(nb, HERE / f"{name}.ipynb")
        print(HERE / f"{name}.ipynb")


if __name__ == "__main__":
    main()
