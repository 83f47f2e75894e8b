"""The plain HTML report: one agent file rendered straight to one HTML page, with no kernel.

What a reader needs of one agent, for every format: which agent and file (the lines of
``adfkit info``), tokens and cost per kind of call, each compaction with what it swept and the
summary that replaced it, the forgetting ledger in short, and the plots (PNG drawn with
matplotlib's Agg renderer, inline as ``data:`` URIs). The page loads nothing from the network
and runs no script; every piece of agent text is escaped (:mod:`adfkit._base.html`), its
control characters shown as escapes, credentials in it redacted, and the whole body is marked
for MathJax to leave alone (``$$x$$`` in a message is shown as written). No local folder is
named: the file appears by its name.

:func:`adfkit._facade.report.write_report` writes it (``adfkit report FILE``); the executed
notebook (``adfkit report FILE --notebook NAME``) is for what needs a kernel.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit._base.html import INERT, escape, markdown, safe_frame_html
from adfkit._base.terminal import printable
from adfkit._base.totals import cost_total
from adfkit._facade.report import adfkit_version as version
from adfkit._facade.report import scrub

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from adfkit._facade.agent import AgentFile

#: Plots of the report, in order: (plot kind of :data:`adfkit.plots.PLOTS`, what it shows).
PLOTS = (
    ("context", "Context size per model call against the compaction threshold"),
    ("growth", "Tokens over time"),
    ("spend", "Tokens per turn"),
    ("ratio", "What each compaction swept against the summary that replaced it"),
)

#: Resolution of the plots (dots per inch of their 9 x 4.5 inch figures).
DPI = 100

#: zlib level of the plots' PNGs: 3 writes them in about 70% of the CPU of PIL's default 6,
#: a few percent larger (and smaller than an RGBA PNG at 6, which is what savefig writes).
PNG_LEVEL = 3

#: At most this many compactions are shown one by one (the table lists every one).
MAX_DETAILED = 60
#: Longest summary text shown per compaction (the rest is cut with a note).
SUMMARY_CHARS = 6000

_STYLE = """<style>
body{font-family:system-ui,sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;
  color:#1a202c;line-height:1.45}
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #e2e8f0}
pre.adf-info{background:#f7fafc;border:1px solid #e2e8f0;padding:8px;overflow-x:auto}
table.adf-table{border-collapse:collapse;font-size:13px;margin:8px 0}
.adf-table td,.adf-table th{border:1px solid #e2e8f0;padding:2px 8px;text-align:right}
.adf-table th{background:#f7fafc}
details.adf-event{margin:6px 0;border:1px solid #e2e8f0;border-radius:4px;padding:4px 8px}
details.adf-event summary{cursor:pointer;font-weight:600}
img.adf-plot{max-width:100%;height:auto;display:block;margin:8px 0}
.adf-note{color:#4a5568;font-style:italic}
.adf-md{background:#fefcbf33;border-left:4px solid #d69e2e;padding:2px 10px;word-break:break-word}
.adf-md pre{background:#f6f8fa;padding:4px 6px;overflow-x:auto}
.adf-more{color:#718096}
</style>"""


def render(
    agent: AgentFile, *, prices: Any = None, source_name: str | None = None, plots: bool = True
) -> str:
    """The plain report of an open agent as one HTML page.

    ``prices`` is :meth:`AgentFile.usage`'s (a JSON price table for models the shipped table
    lacks); ``source_name`` is the name the file is shown by (default: the agent path's);
    ``plots=False`` leaves the plots out (matplotlib is then never imported: the page of a
    renderer, tables and text only, in about half the CPU).

    Examples
    --------
    >>> import adfkit
    >>> with adfkit.open("sample_agents/long-runner.adf") as agent:
    ...     page = render(agent)
    >>> page.startswith("<!DOCTYPE html>"), "<script" in page
    (True, False)
    """
    from adfkit._facade.fleet import agent_label

    adfkit_version = version()
    name = source_name or Path(agent.path).name
    title = agent_label(agent)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    ident = "" if agent.name == title else f" ({escape(agent.name)})"
    images: list[str] = []
    sections = [
        f"<h1>adfkit report: {escape(title)}</h1>",
        f"<p>Agent file <strong>{escape(name)}</strong>{ident} · plain report · made {when} "
        f"with adfkit {escape(adfkit_version)}. The agent file was read, never written.</p>",
        *_sections(agent, prices, name, plots, images),
    ]
    body = f'<div class="{INERT}">' + "\n".join(sections) + "</div>"
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>adfkit report: {escape(title)} ({escape(name)})</title>{_STYLE}</head>"
        f"<body>{body}</body></html>\n"
    )
    page = _inert(scrub(page, agent.path))
    for i, data in enumerate(images):  # the plots' bytes are no agent text: not scrubbed
        page = page.replace(_image_src(i), f'src="data:image/png;base64,{data}"', 1)
    return page


def preload(plots: bool = True, *, docstrings: bool = True) -> None:
    """Import what the plain report is made with, which it otherwise imports on first use:
    markdown-it (the summaries) and, with ``plots``, matplotlib's Figure and Agg canvas,
    PIL's PNG writer and :mod:`adfkit.plots`. ``adfkit report`` calls it before reading its
    files, inside :class:`~adfkit._base.collector.imports_frozen`.

    ``docstrings=False`` is for a process nobody reads help in (``adfkit report`` run as the
    program): matplotlib, as it defines each artist class, writes the docstring of its
    ``set()`` by inspecting every setter of the class (:func:`matplotlib.artist.kwdoc`), 70-90
    ms of the ~0.25 s its import costs; while its modules are imported here ``kwdoc`` gives
    ``""`` (those docstrings stay short), and it is put back afterwards. Nothing drawn
    depends on a docstring. A matplotlib imported already is left as it is."""
    import markdown_it  # noqa: F401

    if not plots:
        return
    import matplotlib.artist

    kwdoc = matplotlib.artist.kwdoc
    if not docstrings:
        setattr(matplotlib.artist, "kwdoc", _no_kwdoc)  # noqa: B010 - mypy: a function
    try:
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401
    finally:
        setattr(matplotlib.artist, "kwdoc", kwdoc)  # noqa: B010
    from PIL import Image

    import adfkit.plots  # noqa: F401

    Image.preinit()  # the plugins Image.save imports on its first call


def _no_kwdoc(artist: Any) -> str:
    """:func:`matplotlib.artist.kwdoc` while :func:`preload` imports matplotlib bare."""
    return ""


#: The plots section of a report made without them.
NO_PLOTS = (
    '<p class="adf-note">Left out (<code>--no-plots</code>): <code>adfkit plot FILE</code> '
    "draws them.</p>"
)


def _sections(
    agent: AgentFile, prices: Any, name: str, plots: bool, images: list[str]
) -> Iterable[str]:
    """The report's sections, each an HTML string in a ``<section>`` with an id (a link to
    ``#compactions`` opens there); each plot's PNG (base64) is appended to ``images``, its
    ``<img>`` given :func:`_image_src` of its index."""
    builders: list[tuple[str, str, Callable[[], str]]] = [
        ("info", "What is in the file", lambda: _info(agent, name)),
        ("usage", "Tokens and cost", lambda: _usage(agent, prices)),
        ("plots", "Plots", lambda: _plots(agent, images) if plots else NO_PLOTS),
        ("compactions", "Compactions", lambda: _compactions(agent)),
        ("forgetting", "What forgetting cost", lambda: _forgetting(agent, prices)),
    ]
    for anchor, heading, build in builders:
        yield f'<section id="{anchor}"><h2>{escape(heading)}</h2>\n{build()}</section>'
    yield (
        '<p class="adf-note">More, with a kernel: <code>adfkit report FILE --notebook 02</code> '
        "(each compaction up close, the context at any call, other thresholds), "
        "<code>--notebook 07</code> (what forgetting cost).</p>"
    )


def _info(agent: AgentFile, name: str) -> str:
    """``adfkit info``'s lines (the file by its name, not its folder)."""
    from adfkit._facade.info_lines import format_info

    info = dict(agent.info())
    info["path"] = name
    return f'<pre class="adf-info">{escape(format_info(info))}</pre>'


def _usage(agent: AgentFile, prices: Any) -> str:
    """Tokens and cost per kind of call, and in all; an unknown cost stays unknown."""
    usage = agent.usage(prices=prices)
    if usage.empty:
        return '<p class="adf-note">No model call records tokens in this file.</p>'
    cols = ["tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write"]
    cols = [c for c in cols if c in usage.columns] + ["tokens_total", "cost_usd"]
    codes = usage["call_kind"].cat.codes.to_numpy()
    rows = []
    for code, kind in enumerate(usage["call_kind"].cat.categories):  # the kinds' order
        calls = codes == code
        if calls.any():
            part = usage[calls]
            rows.append([kind, int(calls.sum()), *(_total(part[c]) for c in cols)])
    rows.append(["all", len(usage), *(_total(usage[c]) for c in cols)])
    frame = pd.DataFrame(rows, columns=["calls of kind", "calls", *cols], dtype=object)
    known = usage["cost_usd"].notna()
    priced = cost_total(usage["cost_usd"][known].tolist())
    cost = (
        f"Total cost: ${priced:,.4f}."
        if known.all()
        else f"Total cost: unknown ({int((~known).sum()):,} call(s) have no price"
        + (f"; the {int(known.sum()):,} priced cost ${priced:,.4f})." if known.any() else ").")
    )
    unknown = '<p class="adf-note">"-": unknown (not recorded for some of the calls counted).</p>'
    return f"<p>{escape(cost)}</p>" + _table(frame) + (unknown if frame.isna().any().any() else "")


def _plots(agent: AgentFile, images: list[str]) -> str:
    """Each plot of :data:`PLOTS` as an inline PNG (its base64 appended to ``images``, its
    ``<img>`` pointing at it by :func:`_image_src`); one this file cannot draw is a line."""
    from matplotlib.figure import Figure

    from adfkit import plots

    out = []
    for kind, what in PLOTS:
        fig = Figure(figsize=plots.FIGSIZE, dpi=DPI, layout="constrained")
        try:
            plots.PLOTS[kind](agent, ax=fig.subplots())
        except ValueError as exc:
            out.append(f'<p class="adf-note">{escape(what)}: {escape(printable(str(exc)))}</p>')
            continue
        images.append(base64.b64encode(_png(fig)).decode("ascii"))
        out.append(f'<img class="adf-plot" alt="{escape(what)}" {_image_src(len(images) - 1)}>')
    return "\n".join(out)


def _image_src(i: int) -> str:
    """The ``src`` of the i-th plot until the page's text is scrubbed: with its quotes, a
    string no escaped agent text can be."""
    return f'src="adfkit-plot:{i}"'


def _png(fig: Figure) -> bytes:
    """The figure as a PNG, drawn once: the pixels ``fig.savefig(buf, format="png")`` writes
    (with matplotlib's default savefig settings). ``savefig`` draws a figure with a layout
    engine twice (a pass with drawing disabled to run the layout, then the pixels); the Agg
    canvas draws it once, the layout engine running at the start of that draw as in
    savefig's first pass. An opaque figure (the report's are) is written without its alpha
    channel, at zlib level :data:`PNG_LEVEL`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    opaque = bool((rgba[..., 3] == 255).all())
    buf = io.BytesIO()
    Image.fromarray(rgba[..., :3] if opaque else rgba).save(
        buf, format="png", compress_level=PNG_LEVEL, dpi=(fig.dpi, fig.dpi)
    )
    return buf.getvalue()


def _compactions(agent: AgentFile) -> str:
    """Every compaction (and clear) in a table; then each, one by one, with what it swept (rows
    by kind, estimated tokens) and the summary that replaced it."""
    events = agent.compactions()
    if events.empty:
        return '<p class="adf-note">No compaction or clear in this file.</p>'
    counts = events["event"].value_counts()
    said = ", ".join(f"{n:,} {kind}(s)" for kind, n in counts.items())
    cols = [
        "event_id",
        "event",
        "kind",
        "created_at",
        "n_swept",
        "swept_tokens",
        "summary_tokens",
        "compression_ratio",
        "recall",
        "n_refetches",
        "threshold",
    ]
    parts = [f"<p>{escape(said)}.</p>", _table(events[[c for c in cols if c in events]])]
    history = agent.history()
    shown = events.head(MAX_DETAILED)
    swept = _swept_by_kind(shown, history)
    summaries = history.set_index("seq", drop=False)
    for ev in shown.to_dict("records"):
        parts.append(_one_event(ev, swept.get(ev["event_id"]), summaries))
    if len(events) > len(shown):
        parts.append(
            f'<p class="adf-note">The first {len(shown):,} of {len(events):,} are shown one by '
            f"one; the table above lists every one, and the file's compactions() has them all."
            "</p>"
        )
    return "\n".join(parts)


def _swept_by_kind(events: pd.DataFrame, history: pd.DataFrame) -> dict[Any, pd.DataFrame]:
    """Per event id, the rows it swept (those in the history) by kind of row, in the kinds'
    order: rows and estimated tokens (unknown when no row of the kind has an estimate)."""
    kind = history["kind"]
    names = list(kind.cat.categories)
    row_of = dict(
        zip(
            history["seq"].tolist(),
            zip(kind.cat.codes.tolist(), history["est_tokens"].tolist(), strict=True),
            strict=True,
        )
    )
    out: dict[Any, pd.DataFrame] = {}
    for eid, seqs in zip(events["event_id"].tolist(), events["swept_seqs"].tolist(), strict=True):
        by_code: dict[int, list[Any]] = {}  # kind code -> [rows, known tokens, any known]
        for seq in () if _missing(seqs) else seqs:
            code, est = row_of.get(seq, (-1, None))
            if code < 0:  # not in the history, or a row of no kind
                continue
            tally = by_code.setdefault(code, [0, 0, False])
            tally[0] += 1
            if not _missing(est):
                tally[1] += est
                tally[2] = True
        if by_code:
            out[eid] = pd.DataFrame(
                [
                    [names[c], n, tok if known else pd.NA]
                    for c, (n, tok, known) in sorted(by_code.items())
                ],
                columns=["kind", "rows", "est_tokens"],
                dtype=object,
            )
    return out


def _missing(value: Any) -> bool:
    """Whether a value is unknown (None, NA, NaN); a tuple of seqs is not."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _one_event(ev: dict[str, Any], swept: pd.DataFrame | None, history: pd.DataFrame) -> str:
    """One compaction, folded: its figures, what it swept and its summary (markdown, safely:
    :func:`adfkit._base.html.markdown`)."""
    head = (
        f"{ev['event']} {ev['event_id']} ({_text(ev['kind'])}, {_text(ev['created_at'])}): "
        f"swept {_text(ev['n_swept'])} rows, {_text(ev['swept_tokens'])} est. tokens"
    )
    if ev["event"] == "compaction":
        head += f", into a summary of {_text(ev['summary_tokens'])} tokens"
    parts = [f'<details class="adf-event"><summary>{escape(head)}</summary>']
    if swept is not None and len(swept):
        parts.append("<p>What it swept, by kind of row:</p>" + _table(swept))
    else:
        parts.append('<p class="adf-note">The rows it swept are not in the file.</p>')
    seq = ev["summary_seq"]
    if ev["event"] != "compaction":  # a clear, a microcompaction: no summary is written
        parts.append(f'<p class="adf-note">A {escape(ev["event"])} writes no summary.</p>')
    elif ev.get("summary_encrypted"):
        parts.append('<p class="adf-note">Its summary is encrypted in the file.</p>')
    elif ev.get("summary_lost") or pd.isna(seq) or seq not in history.index:
        parts.append('<p class="adf-note">Its summary is not in the file.</p>')
    else:
        summary = history.loc[[seq], "text"].iloc[0]
        chars = "-" if pd.isna(summary) else f"{len(summary):,}"
        parts.append(f"<p>The summary that replaced it (S{seq}, {chars} characters):</p>")
        parts.append(f'<div class="adf-md">{markdown(summary, SUMMARY_CHARS)}</div>')
    parts.append("</details>")
    return "".join(parts)


def _forgetting(agent: AgentFile, prices: Any) -> str:
    """The forgetting ledger in short: items swept, kept, lost, saved first, needed again and
    forgotten, in all and by kind of item, and what forgetting cost."""
    per = agent.forgetting(prices=prices)
    if per.empty:
        return '<p class="adf-note">No compaction swept an item the ledger counts.</p>'
    cols = ["n_items", "n_kept_exact", "n_kept_normalised", "n_lost", "n_saved"]
    cols += ["n_needed_again", "n_forgotten", "forgetting_tokens", "forgetting_cost_usd"]
    cols = [c for c in cols if c in per]
    totals = pd.DataFrame(
        [[len(per), *(_total(per[c]) for c in cols)]], columns=["compactions", *cols], dtype=object
    )
    ledger = agent.compaction_ledger(prices=prices)
    parts = [_table(totals)]
    if not ledger.empty:
        parts.append("<p>By kind of item:</p>" + _table(_ledger_by_kind(ledger)))
    return "\n".join(parts)


def _ledger_by_kind(ledger: pd.DataFrame) -> pd.DataFrame:
    """Per kind of item (in name order): items, how many were lost and needed again, and the
    share lost (to 3 places, as numpy rounds)."""
    tally: dict[str, list[int]] = {}  # kind -> [items, lost, needed again]
    rows = zip(
        ledger["kind"].tolist(),
        ledger["kept"].tolist(),
        ledger["needed_again"].tolist(),
        strict=True,
    )
    for kind, kept, needed in rows:
        if _missing(kind):
            continue
        t = tally.setdefault(kind, [0, 0, 0])
        t[0] += 1
        t[1] += kept == "lost" if isinstance(kept, str) else 0
        t[2] += bool(needed)
    kinds = sorted(tally)
    items, lost, needed = (np.array([tally[k][i] for k in kinds]) for i in range(3))
    rate = np.round(lost / np.where(items > 0, items, 1), 3)
    return pd.DataFrame(
        {"kind": kinds, "items": items, "lost": lost, "needed_again": needed, "loss_rate": rate},
        dtype=object,
    )


def _total(values: pd.Series) -> Any:
    """The sum of a column, unknown (NA) when any value in it is: a total with an unknown part
    is unknown, never the sum of the known ones shown as if whole. Costs (``cost_usd``) are
    summed by the one rule of every cost total (:func:`adfkit._base.totals.cost_total`).

    Examples
    --------
    >>> int(_total(pd.Series([1, 2], dtype="Int64"))), _total(pd.Series([1, None], dtype="Int64"))
    (3, <NA>)
    >>> _total(pd.Series([0.1] * 3, name="cost_usd")), float(pd.Series([0.1] * 3).sum())
    (0.3, 0.30000000000000004)
    """
    if values.isna().any():
        return pd.NA
    return cost_total(values.tolist()) if values.name == "cost_usd" else values.sum()


def _text(value: Any) -> str:
    """A value as a reader reads it: ``-`` when unknown, thousands separated, floats to 3
    places, times to the second (UTC).

    Examples
    --------
    >>> _text(None), _text(12345), _text(0.12345), _text(pd.NA)
    ('-', '12,345', '0.123', '-')
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return "-"
    if isinstance(value, float) and value != value:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"
    if isinstance(value, pd.Timestamp):
        utc = value.tzinfo is not None
        when: str = (value.tz_convert("UTC") if utc else value).strftime("%Y-%m-%d %H:%M:%S")
        return when + (" UTC" if utc else "")
    if hasattr(value, "item"):  # numpy scalars
        return _text(value.item())
    return str(value)


def _dollars(value: Any) -> str:
    """A cost in dollars to four places; ``-`` when unknown.

    Examples
    --------
    >>> _dollars(4.24876), _dollars(None)
    ('$4.2488', '-')
    """
    text = _text(value)
    return text if text == "-" else f"${float(value):,.4f}"


def _table(frame: pd.DataFrame) -> str:
    """A frame as an escaped HTML table, every value through :func:`_text` (dollars to four
    places in a ``_usd`` column)."""
    shown = frame.astype(object)
    for col in shown.columns:
        money = str(col).endswith("_usd")
        shown[col] = [_dollars(v) if money else _text(v) for v in shown[col]]
    return safe_frame_html(shown, max_rows=500, max_chars=200)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _inert(page: str) -> str:
    """The page with every control character of agent text shown as an escape (``\\x1b``, a
    bidi override ``\\u202e``) and lone surrogates as U+FFFD, so the file is valid UTF-8 and
    nothing in it reorders or hides text. The page's own markup has none of them."""
    return _SURROGATE.sub("\ufffd", printable(page))
