"""Notebook widgets: browse the loop, decode audit rows, replay the context window.

Three ipywidgets-based browsers, each built on a handle from :func:`adfkit.open_adf`:

- :class:`LoopBrowser` -- the loop (or the whole history) as the runtime's Loop tab shows it,
  filtered by kind, role, tool and text, one page at a time;
- :class:`AuditExplorer` -- pick an ``adf_audit`` row and see it decoded;
- :class:`ReplayPlayer` -- a slider over model calls showing what the context window held.

The HTML is made by pure functions (:func:`rows_html`, :func:`audit_html`,
:func:`composition_html`) that take frames and return strings, so they run without a kernel
and can be shown with ``IPython.display.HTML`` in static reports. Every piece of agent text is
HTML-escaped: a file can contain ``<script>`` in a message and it stays inert.

This module imports ipywidgets; ``import adfkit`` does not import it.

Examples
--------
>>> import adfkit
>>> from adfkit.widgets import LoopBrowser
>>> browser = LoopBrowser(adfkit.open_adf("sample_agents/long-runner.adf"))
>>> browser.kind.value = "compaction_summary"
>>> browser.n_matches == int((browser.frame["kind"] == "compaction_summary").sum())
True
"""

from __future__ import annotations

import base64
import contextlib
import math
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from adfkit._analysis.tables import blocks_frame, tool_calls_frame
from adfkit._base.errors import AdfError
from adfkit._base.html import escape as _escape
from adfkit._base.parts import NOT_IN_FILE, PARTS
from adfkit._base.redact import safe_cut
from adfkit._core.rows import parse_content

if TYPE_CHECKING:
    from adfkit._facade.agent import AgentFile

__all__ = [
    "AuditExplorer",
    "LoopBrowser",
    "ReplayPlayer",
    "answer",
    "audit_html",
    "composition_html",
    "escape",
    "rows_html",
]

ALL = "(all)"
#: Classes that tell JupyterLab's MathJax (2 and 3) to leave an element alone: agent text such
#: as ``$$x$$`` is shown as written, never typeset.
INERT = "tex2jax_ignore mathjax_ignore"

#: Colours of the row kinds (the context blocks are teal, as in the runtime's Loop tab).
KIND_COLORS: dict[str, str] = {
    "message": "#3182ce",
    "assistant": "#805ad5",
    "tool_result": "#718096",
    "context": "#319795",
    "system_prompt": "#2c7a7b",
    "dynamic_instructions": "#4fd1c5",
    "loop_inject": "#81e6d9",
    "compaction_summary": "#d69e2e",
    "trigger": "#38a169",
    "notice": "#dd6b20",
    "unknown": "#a0aec0",
}

#: The parts of a context window in the plots' colours (one palette: :mod:`adfkit._base.parts`).
PART_COLORS: dict[str, str] = {p.name: p.color for p in (*PARTS, NOT_IN_FILE)}

_STYLE = """<style>
.adf-loop{font-family:system-ui,sans-serif;font-size:13px;line-height:1.4}
.adf-row{margin:4px 0;padding:4px 8px;border-left:3px solid #cbd5e0;border-radius:3px}
.adf-head{color:#4a5568;font-size:11px}
.adf-seq{font-family:monospace;font-weight:600}
.adf-body{white-space:pre-wrap;word-break:break-word}
.adf-row pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:12px}
.adf-user{background:#ebf8ff;border-left-color:#3182ce}
.adf-assistant{background:#faf5ff;border-left-color:#805ad5}
.adf-tool_result{background:#f7fafc;border-left-color:#718096}
.adf-context{background:#e6fffa;border-left-color:#319795;color:#234e52}
.adf-trigger{background:#f0fff4;border-left-color:#38a169;font-style:italic}
.adf-notice{background:#fffaf0;border-left-color:#dd6b20}
.adf-compaction{background:#fefcbf;border:1px solid #d69e2e;border-left:6px solid #d69e2e;
  font-weight:600}
.adf-error{color:#c53030}
.adf-empty{color:#718096;font-style:italic}
.adf-bar{display:flex;height:18px;width:100%;border:1px solid #cbd5e0;margin:4px 0}
.adf-table td,.adf-table th{padding:1px 8px;text-align:left}
</style>"""


def escape(value: Any) -> str:
    """HTML-escape any value's text (quotes included); ``None``/NA become an empty string.

    Examples
    --------
    >>> escape("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    return _escape(value)


def _na(v: Any) -> bool:
    """True for None, pandas NA/NaT and float NaN."""
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


def _clip(text: str, max_chars: int, mark: str = "") -> str:
    """Escaped text, cut at ``max_chars`` (never inside a secret: ``safe_cut``) with a note
    saying how much was left out; each occurrence of ``mark`` (any case) highlighted with
    ``<mark>``."""
    if len(text) <= max_chars:
        return _marked(text, mark)
    cut = safe_cut(text, max_chars)
    return _marked(text[:cut], mark) + (
        f'<span class="adf-empty"> ... ({len(text) - cut:,} more characters)</span>'
    )


def _marked(text: str, mark: str) -> str:
    """``text`` escaped, with every occurrence of ``mark`` (any case) in ``<mark>``."""
    if not mark:
        return escape(text)
    parts = re.split(f"({re.escape(mark)})", text, flags=re.IGNORECASE)
    return "".join(f"<mark>{escape(p)}</mark>" if i % 2 else escape(p) for i, p in enumerate(parts))


def _opened(html: str) -> str:
    """A ``<details>`` element opened when it holds a highlighted match, so the match shows."""
    if "<mark>" in html and html.startswith("<details"):
        return "<details open" + html[len("<details") :]
    return html


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return repr(value)


def _block_html(
    b: Mapping[str, Any], tool_names: Mapping[str, str], max_chars: int, mark: str = ""
) -> str:
    return _opened(_block_body(b, tool_names, max_chars, mark))


def _block_body(
    b: Mapping[str, Any], tool_names: Mapping[str, str], max_chars: int, mark: str
) -> str:
    t = b.get("type")
    if t == "text":
        txt = b.get("text")
        txt = txt if isinstance(txt, str) else _json(txt)
        return f'<div class="adf-body">{_clip(txt, max_chars, mark)}</div>'
    if t == "thinking":
        txt = b.get("thinking")
        txt = txt if isinstance(txt, str) else ""
        return (
            f'<details class="adf-thinking"><summary>thinking ({len(txt):,} chars)</summary>'
            f'<div class="adf-body">{_clip(txt, max_chars, mark)}</div></details>'
        )
    if t == "tool_use":
        name = escape(b.get("name"))
        inp = _json(b.get("input"))
        return (
            f'<details class="adf-tool-use"><summary>call <b>{name}</b> '
            f'<span class="adf-head">{escape(b.get("id"))}</span></summary>'
            f"<pre>{_clip(inp, max_chars, mark)}</pre></details>"
        )
    if t == "tool_result":
        content = b.get("content")
        txt = content if isinstance(content, str) else _json(content)
        uid = b.get("tool_use_id")
        name = tool_names.get(str(uid), "") if uid is not None else ""
        err = b.get("is_error") is True
        label = "error" if err else "result"
        cls = "adf-tool-result adf-error" if err else "adf-tool-result"
        return (
            f'<details class="{cls}"><summary>&#8627; {label}'
            + (f" of <b>{escape(name)}</b>" if name else "")
            + f" ({len(txt):,} chars)</summary><pre>{_clip(txt, max_chars, mark)}</pre></details>"
        )
    return (
        f'<details class="adf-other"><summary>[{escape(t)}] block</summary>'
        f"<pre>{_clip(_json(dict(b)), max_chars)}</pre></details>"
    )


def _tokens_txt(row: Mapping[str, Any]) -> str:
    parts = []
    for key, label in (("tokens_input", "in"), ("tokens_output", "out")):
        v = row.get(key)
        if v is not None and not _na(v):
            parts.append(f"{label} {int(v):,}")
    if not parts:
        v = row.get("tokens_total")
        if v is not None and not _na(v):
            parts.append(f"total {int(v):,}")
    return " / ".join(parts)


def _row_html(
    row: Mapping[str, Any], tool_names: Mapping[str, str], max_chars: int, mark: str = ""
) -> str:
    kind = str(row.get("kind") or "unknown")
    sub = row.get("subkind")
    sub = None if _na(sub) else str(sub)
    role = str(row.get("role") or "")
    seq = row.get("seq")
    blocks, bad = parse_content(row.get("content") if isinstance(row.get("content"), str) else "[]")
    head = [f'<span class="adf-seq">S{escape(seq)}</span>', escape(role), escape(kind)]
    if sub:
        head.append(escape(sub))
    ts = row.get("created_at")
    if isinstance(ts, pd.Timestamp) and not pd.isna(ts):
        head.append(escape(ts.strftime("%Y-%m-%d %H:%M:%S")))
    if not _na(row.get("model")) and kind in ("assistant", "compaction_summary"):
        head.append(escape(row.get("model")))
    tok = _tokens_txt(row)
    if tok:
        head.append(escape(tok) + " tokens")
    if row.get("origin") == "audit":
        head.append(f"archived (audit #{escape(row.get('audit_id'))})")
    if bad or row.get("malformed") is True:
        head.append('<span class="adf-error">malformed</span>')
    head_html = f'<div class="adf-head">{" &middot; ".join(head)}</div>'
    attrs = f'data-seq="{escape(seq)}" data-kind="{escape(kind)}"'
    if kind == "context":
        txt = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        folded = _opened(
            f"<details><summary>Context: <b>{escape(sub or '')}</b> ({len(txt):,} chars)"
            f'</summary><div class="adf-body">{_clip(txt, max_chars, mark)}</div></details>'
        )
        return f'<div class="adf-row adf-context" {attrs}>{head_html}{folded}</div>'
    if kind == "compaction_summary":
        txt = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        label = "Loop compacted" + (", audited" if sub == "audited" else "")
        folded = _opened(
            f"<details><summary>summary ({len(txt):,} chars)</summary>"
            f'<div class="adf-body">{_clip(txt, max_chars, mark)}</div></details>'
        )
        return (
            f'<div class="adf-row adf-compaction" {attrs}>&#9472;&#9472; {label} '
            f"&#9472;&#9472;{head_html}{folded}</div>"
        )
    cls = {
        "assistant": "adf-assistant",
        "tool_result": "adf-tool_result",
        "trigger": "adf-trigger",
        "notice": "adf-notice",
    }.get(kind, "adf-user")
    body = "".join(_block_html(b, tool_names, max_chars, mark) for b in blocks)
    if not blocks:
        body = '<div class="adf-empty">(no content)</div>'
    return f'<div class="adf-row {cls}" {attrs}>{head_html}{body}</div>'


def rows_html(
    frame: pd.DataFrame,
    *,
    tool_names: Mapping[str, str] | None = None,
    max_chars: int = 4000,
    style: bool = True,
    mark: str = "",
) -> str:
    """Render loop rows as the runtime's Loop tab does. One ``<div>`` per row, in frame order.

    User rows, assistant rows with their tool calls folded in ``<details>``, tool results
    (``<details>``, red when an error), teal context blocks and compaction banners. Every piece
    of agent text is HTML-escaped.

    Parameters
    ----------
    frame : rows with the columns of :meth:`adfkit.AgentFile.loop` (at least ``seq``, ``role``,
        ``kind``, ``content``); typically a page of ``loop()`` or ``history()``.
    tool_names : ``tool_use_id`` -> tool name, to label results; the calls in ``frame`` are
        used when not given.
    max_chars : longest text shown per block; the rest is cut with a note.
    style : include the ``<style>`` block (leave it out when concatenating pages).
    mark : text to highlight (any case) wherever it occurs, its folded block opened.

    Examples
    --------
    >>> import pandas as pd
    >>> page = pd.DataFrame({"seq": [1], "role": ["user"], "kind": ["message"],
    ...                      "content": ['[{"type":"text","text":"<b>hi</b>"}]']})
    >>> "&lt;b&gt;hi&lt;/b&gt;" in rows_html(page)
    True
    """
    names = dict(tool_names or {})
    records = frame.to_dict("records")
    if tool_names is None:
        for r in records:
            if r.get("role") == "assistant" and isinstance(r.get("content"), str):
                for b in parse_content(r["content"])[0]:
                    if b.get("type") == "tool_use" and b.get("id") is not None:
                        names[str(b["id"])] = str(b.get("name"))
    parts = [_row_html(r, names, max_chars, mark) for r in records]
    if not parts:
        parts = ['<div class="adf-empty">No rows match.</div>']
    return (_STYLE if style else "") + f'<div class="adf-loop {INERT}">' + "".join(parts) + "</div>"


def composition_html(composition: Mapping[str, Any] | pd.Series, *, title: str = "") -> str:
    """A stacked bar and a table of estimated tokens by kind (the context window's make-up).

    Parameters
    ----------
    composition : kind -> estimated tokens (a dict or a Series).
    title : a line shown above the bar (escaped).

    Examples
    --------
    >>> "assistant" in composition_html({"assistant": 30, "context": 10})
    True
    """
    items = [
        (str(k), int(round(float(v))))
        for k, v in dict(composition).items()
        if not _na(v) and round(float(v)) > 0
    ]
    total = sum(v for _, v in items)
    segs, rows = [], []
    for k, v in items:
        color = PART_COLORS.get(k) or KIND_COLORS.get(k, "#a0aec0")
        pct = 100.0 * v / total if total else 0.0
        segs.append(
            f'<div title="{escape(k)}: {v:,}" style="width:{pct:.2f}%;background:{color}"></div>'
        )
        rows.append(
            f'<tr data-kind="{escape(k)}"><td><span style="color:{color}">&#9632;</span> '
            f'{escape(k)}</td><td style="text-align:right">{v:,}</td><td>{pct:.1f}%</td></tr>'
        )
    head = f"<div><b>{escape(title)}</b></div>" if title else ""
    return (
        f'<div class="{INERT}">{head}<div class="adf-bar">{"".join(segs)}</div>'
        f'<table class="adf-table"><tr><th>kind</th><th>est. tokens</th><th>share</th></tr>'
        f'{"".join(rows)}<tr><td><b>total</b></td><td style="text-align:right"><b>{total:,}'
        "</b></td><td></td></tr></table></div>"
    )


def audit_html(
    meta: Mapping[str, Any],
    decoded: Any,
    *,
    max_rows: int = 200,
    max_chars: int = 4000,
    start: int = 0,
) -> str:
    """Render one decoded audit row: its metadata, then its content (of archived loop rows,
    ``max_rows`` from row ``start``, counted from 0).

    ``decoded`` is what :meth:`adfkit.AgentFile.decode_audit` returns (a frame of loop rows,
    a dict or a list), or an exception, which is shown as the reason it could not be decoded.

    Examples
    --------
    >>> html = audit_html({"id": 1, "source": "file"},
    ...                   {"path": "x.md", "content_base64": "PGk+aGk8L2k+"})
    >>> "&lt;i&gt;hi&lt;/i&gt;" in html
    True
    """
    cells = "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in meta.items() if not _na(v)
    )
    out = [_STYLE, f'<table class="adf-table adf-audit-meta">{cells}</table>']
    if isinstance(decoded, BaseException):
        detail = decoded.detail if isinstance(decoded, AdfError) else str(decoded)
        out.append(f'<div class="adf-error">Could not decode: {escape(detail)}</div>')
    elif isinstance(decoded, pd.DataFrame):
        n = len(decoded)
        start = min(max(0, start), max(0, n - 1))
        shown = decoded.iloc[start : start + max_rows]
        out.append(
            f"<div>{n:,} archived loop rows"
            + (f"; rows {start + 1:,}-{start + len(shown):,} shown" if n > max_rows else "")
            + "</div>"
        )
        out.append(rows_html(shown, max_chars=max_chars, style=False))
    elif isinstance(decoded, dict) and "content_base64" in decoded:
        raw = decoded.get("content_base64")
        try:
            text = base64.b64decode(str(raw), validate=False).decode("utf-8", "replace")
        except ValueError as exc:
            text = f"(content_base64 is not valid base64: {exc})"
        rest = {k: v for k, v in decoded.items() if k != "content_base64"}
        out.append(f"<pre>{_clip(_json(rest), max_chars)}</pre>")
        out.append(f"<div><b>content</b> ({len(text):,} chars)</div>")
        out.append(f'<pre class="adf-file">{_clip(text, max_chars)}</pre>')
    else:
        out.append(f'<pre class="adf-json">{_clip(_json(decoded), max_chars * 4)}</pre>')
    return f'<div class="adf-loop {INERT}">' + "".join(out) + "</div>"


@contextlib.contextmanager
def answer(label: str = "Answer") -> Iterator[None]:
    """Fold what the block prints and displays behind one line, ``▶ Answer (click to show)``:
    an exercise's answer stays out of sight after Run All until the reader opens it (in
    JupyterLab, in an HTML report). JupyterLab shows a cell's output when it runs even if the
    notebook says to hide it; a closed ``<details>`` element stays closed.

    Printed text is escaped; tables and images keep their own HTML. Consoles that show no HTML
    get the text (``text/plain``) at once.

    In a notebook cell::

        with adfkit.widgets.answer():
            print("fs_read failed most often")
    """
    from IPython.display import display
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        yield
    html, plain = [], []
    for text in (cap.stdout, cap.stderr):
        if text:
            html.append(f"<pre>{escape(text)}</pre>")
            plain.append(text)
    for out in cap.outputs:
        data = out.data or {}
        plain.append(str(data.get("text/plain", "")))
        if "text/html" in data:
            html.append(str(data["text/html"]))
        elif "image/png" in data:
            html.append(f'<img src="data:image/png;base64,{escape(data["image/png"])}">')
        else:
            html.append(f"<pre>{escape(data.get('text/plain', ''))}</pre>")
    summary = f"<summary><b>{escape(label)}</b> (click to show)</summary>"
    bundle = {
        "text/html": f'<details class="adf-answer {INERT}">{summary}{"".join(html)}</details>',
        "text/plain": "\n".join(plain),
    }
    display(bundle, raw=True)


# -- widgets ---------------------------------------------------------------------------------


class _Shown:
    """Display as the widget box in Jupyter; as the current HTML in static renderers (GitHub,
    nbconvert reports), which show ``text/html`` when they cannot run widgets."""

    widget: Any
    html: Any

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = dict(data or {})
        status = getattr(self, "status", None)
        head = f'<div class="adf-head">{escape(status.value)}</div>' if status is not None else ""
        data["text/html"] = head + self.html.value
        return data


def _w() -> Any:
    import ipywidgets

    return ipywidgets


class LoopBrowser(_Shown):
    """Page through the loop or the whole history, filtered by kind, role, tool and text.

    Parameters
    ----------
    agent : an :class:`adfkit.AgentFile`, or a DataFrame with the columns of ``loop()``.
    history : start on the whole history (``True``) or the live loop (``False``).
    page_size : rows per page; only the page is rendered, so paging stays fast on large files.

    Attributes
    ----------
    scope, kind, role, tool, search, page, page_size : the controls (set ``.value``; the
        tool filter's value is a tool name, or None for every tool).
    html : the ``ipywidgets.HTML`` showing the current page (``.html.value``).
    status : a label ``rows a-b of n``.
    widget : the box holding all of them.

    Examples
    --------
    >>> import adfkit
    >>> b = LoopBrowser(adfkit.open_adf("sample_agents/long-runner.adf"), page_size=10)
    >>> b.role.value = "assistant"
    >>> set(b.page_frame["role"]) == {"assistant"}
    True
    """

    def __init__(
        self,
        agent: AgentFile | pd.DataFrame,
        *,
        history: bool = False,
        page_size: int = 50,
    ) -> None:
        w = _w()
        self._agent = None if isinstance(agent, pd.DataFrame) else agent
        self._given = agent if isinstance(agent, pd.DataFrame) else None
        self._state: dict[str, dict[str, Any]] = {}
        scopes = ["frame"] if self._given is not None else ["loop", "history"]
        self.scope = w.ToggleButtons(
            options=scopes,
            value=scopes[-1] if history else scopes[0],
            description="show",
            style={"button_width": "auto"},
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )
        self.kind = w.Dropdown(options=[ALL], value=ALL, description="kind")
        self.role = w.Dropdown(options=[ALL, "user", "assistant"], value=ALL, description="role")
        # Tools are values, not text: a tool named "a,b" or "(all)" is one option of its own;
        # None stands for no filter.
        self.tool = w.Dropdown(options=[(ALL, None)], index=0, description="tool")
        self.search = w.Text(value="", description="text", placeholder="contains...")
        self.page_size = w.BoundedIntText(
            value=page_size, min=1, max=10_000, description="per page"
        )
        self.page = w.BoundedIntText(value=1, min=1, max=1, description="page")
        self.prev = w.Button(description="<", layout=w.Layout(width="3em"))
        self.next = w.Button(description=">", layout=w.Layout(width="3em"))
        self.status = w.Label()
        self.html = w.HTML()
        self.prev.on_click(lambda _: self._step(-1))
        self.next.on_click(lambda _: self._step(1))
        self._busy = False
        self._load_scope()
        for c in (self.kind, self.role, self.tool, self.search, self.page_size):
            c.observe(self._on_filter, names="value")
        self.scope.observe(lambda _: self._load_scope(), names="value")
        self.page.observe(lambda _: self._render(), names="value")
        self.widget = w.VBox(
            [
                w.HBox([self.scope, self.kind, self.role, self.tool]),
                w.HBox([self.search, self.page_size, self.prev, self.page, self.next]),
                self.status,
                self.html,
            ]
        )

    # -- data -----------------------------------------------------------------------------
    def _scope_state(self) -> dict[str, Any]:
        name = self.scope.value
        if name not in self._state:
            if name == "frame":
                df = self._given.reset_index(drop=True)  # type: ignore[union-attr]
            elif name == "history":
                df = self._agent.history()  # type: ignore[union-attr]
            else:
                df = self._agent.loop()  # type: ignore[union-attr]
            df = df.reset_index(drop=True)
            self._state[name] = {
                "frame": df,
                "seq": df["seq"].to_numpy(dtype="int64"),
                "kind": df["kind"].astype("object").to_numpy(),
                "role": df["role"].astype("object").to_numpy(),
                "masks": {},
                "calls": None,
            }
        return self._state[name]

    def _tools(self, st: dict[str, Any]) -> list[str]:
        """The tool names called in this scope, each one value (from the calls themselves)."""
        if "tools" not in st:
            names = self._calls(st)["tool_name"].dropna().astype(str)
            st["tools"] = sorted(set(names))
        tools: list[str] = st["tools"]
        return tools

    @property
    def frame(self) -> pd.DataFrame:
        """Every row of the current scope (loop or history), unfiltered."""
        return self._scope_state()["frame"]

    def _calls(self, st: dict[str, Any]) -> pd.DataFrame:
        if st["calls"] is None:
            if self._agent is not None and self.scope.value in ("loop", "history"):
                st["calls"] = self._agent.tool_calls(history=self.scope.value == "history")
            else:
                st["calls"] = tool_calls_frame(blocks_frame(st["frame"]), st["frame"])
        return st["calls"]

    def _mask(self, field: str, value: str) -> np.ndarray:
        st = self._scope_state()
        key = (field, value)
        if key not in st["masks"]:
            if field in ("kind", "role"):
                m = st[field] == value
            elif field == "tool":
                calls = self._calls(st)
                hit = calls[calls["tool_name"] == value]
                seqs = np.concatenate(
                    [
                        hit["call_seq"].dropna().to_numpy(dtype="int64"),
                        hit["result_seq"].dropna().to_numpy(dtype="int64"),
                    ]
                )
                m = np.isin(st["seq"], seqs)
            else:  # text search
                m = (
                    st["frame"]["text"]
                    .str.contains(value, case=False, regex=False, na=False)
                    .to_numpy(dtype=bool)
                )
            st["masks"][key] = np.asarray(m, dtype=bool)
        mask: np.ndarray = st["masks"][key]
        return mask

    @property
    def matches(self) -> np.ndarray:
        """Row numbers (into :attr:`frame`) that pass the current filters, in display order."""
        st = self._scope_state()
        mask = np.ones(len(st["seq"]), dtype=bool)
        for field, ctl in (("kind", self.kind), ("role", self.role)):
            if ctl.value != ALL:
                mask &= self._mask(field, ctl.value)
        if self.tool.value is not None:
            mask &= self._mask("tool", self.tool.value)
        if self.search.value:
            mask &= self._mask("search", self.search.value)
        return np.flatnonzero(mask)

    @property
    def n_matches(self) -> int:
        """How many rows pass the current filters."""
        return len(self.matches)

    @property
    def page_frame(self) -> pd.DataFrame:
        """The rows of the current page."""
        idx = self.matches
        size = max(1, int(self.page_size.value))
        start = (int(self.page.value) - 1) * size
        return self.frame.iloc[idx[start : start + size]]

    # -- events ---------------------------------------------------------------------------
    def _load_scope(self) -> None:
        st = self._scope_state()
        self._busy = True
        try:
            kinds = [k for k in pd.unique(st["kind"]) if isinstance(k, str)]
            self.kind.options = [ALL, *sorted(kinds)]
            self.kind.value = ALL
            self.tool.options = [(ALL, None), *((t, t) for t in self._tools(st))]
            self.tool.index = 0  # "(all)"; a value of None would show a blank choice
        finally:
            self._busy = False
        self._on_filter()

    def _on_filter(self, _: Any = None) -> None:
        if self._busy:
            return
        size = max(1, int(self.page_size.value))
        pages = max(1, -(-self.n_matches // size))
        self._busy = True
        try:
            self.page.max = pages
            self.page.value = 1
        finally:
            self._busy = False
        self._render()

    def _step(self, d: int) -> None:
        self.page.value = min(max(1, int(self.page.value) + d), int(self.page.max))

    def _render(self, _: Any = None) -> None:
        if self._busy:
            return
        n = self.n_matches
        size = max(1, int(self.page_size.value))
        start = (int(self.page.value) - 1) * size
        page = self.page_frame
        st = self._scope_state()
        names = None
        if self._agent is not None or st["calls"] is not None:
            if "names" not in st:
                calls = self._calls(st)
                st["names"] = dict(
                    zip(
                        calls["tool_use_id"].astype(str),
                        calls["tool_name"].astype(str),
                        strict=True,
                    )
                )
            names = st["names"]
        total = len(self.frame)
        self.status.value = (
            f"rows {start + 1 if n else 0}-{start + len(page)} of {n:,}"
            + (f" (filtered from {total:,})" if n != total else "")
            + f"; page {self.page.value} of {self.page.max}"
        )
        self.prev.disabled = int(self.page.value) <= 1
        self.next.disabled = int(self.page.value) >= int(self.page.max)
        self.html.value = rows_html(page, tool_names=names, mark=self.search.value)


class AuditExplorer(_Shown):
    """Pick an ``adf_audit`` row and see it decoded (loop rows, a message, a deleted file).

    Attributes
    ----------
    select : a Dropdown of audit ids (``.value`` is the id).
    page, prev, next : which ``max_rows`` of an audit row's archived loop rows are shown.
    html : the ``ipywidgets.HTML`` showing the decoded row (``.html.value``).
    widget : the box holding them.

    Examples
    --------
    >>> import adfkit
    >>> x = AuditExplorer(adfkit.open_adf("sample_agents/long-runner.adf"))
    >>> x.select.value = x.select.options[-1][1]
    >>> "archived loop rows" in x.html.value
    True
    """

    def __init__(self, agent: AgentFile, *, max_rows: int = 200) -> None:
        w = _w()
        self._agent = agent
        self.max_rows = int(max_rows)
        self.audit = agent.audit()
        opts: list[tuple[str, int | None]] = [
            (self._label(r), int(r["id"])) for r in self.audit.to_dict("records")
        ]
        self.select = w.Dropdown(
            options=opts or [("(no audit rows)", None)],
            value=opts[0][1] if opts else None,
            description="audit row",
            layout=w.Layout(width="60%"),
        )
        self.html = w.HTML()
        self._last: tuple[int | None, Any] = (None, None)
        self.page = w.BoundedIntText(value=1, min=1, max=1, description="page")
        self.prev = w.Button(description="<", layout=w.Layout(width="3em"))
        self.next = w.Button(description=">", layout=w.Layout(width="3em"))
        self.prev.on_click(lambda _: self._step(-1))
        self.next.on_click(lambda _: self._step(1))
        self.pager = w.HBox([self.prev, self.page, self.next])
        self.select.observe(lambda _: self._on_select(), names="value")
        self.page.observe(lambda _: self._render(), names="value")
        self.widget = w.VBox([self.select, self.pager, self.html])
        self._on_select()

    def _step(self, d: int) -> None:
        self.page.value = min(max(1, int(self.page.value) + d), int(self.page.max))

    def _decoded(self) -> Any:
        """The chosen row decoded (the last one is kept: paging does not decode it again)."""
        aid = self.select.value
        if self._last[0] != aid:
            try:
                decoded: Any = self._agent.decode_audit(int(aid))
            except AdfError as exc:
                decoded = exc
            self._last = (aid, decoded)
        return self._last[1]

    def _on_select(self) -> None:
        """A new audit row: its pages, from the first."""
        d = self._decoded() if self.select.value is not None else None
        n = len(d) if isinstance(d, pd.DataFrame) else 0
        pages = max(1, -(-n // max(1, self.max_rows)))
        self.pager.layout.display = "" if pages > 1 else "none"
        with self.page.hold_trait_notifications():
            self.page.max = pages
            self.page.value = 1
        self._render()

    @staticmethod
    def _label(r: Mapping[str, Any]) -> str:
        where = ""
        if not _na(r.get("start_seq")):
            where = f" seq {r['start_seq']}-{r['end_seq']}"
        elif not _na(r.get("ref")):
            where = f" {r['ref']}"
        return f"#{r['id']} {r['source']}{where} ({r['entry_count']} entries)"

    def _render(self) -> None:
        aid = self.select.value
        if aid is None:
            self.html.value = _STYLE + '<div class="adf-empty">This file has no audit rows.</div>'
            return
        meta = self.audit[self.audit["id"] == aid].iloc[0].to_dict()
        page = int(self.page.value)
        self.prev.disabled = page <= 1
        self.next.disabled = page >= int(self.page.max)
        start = (page - 1) * self.max_rows
        self.html.value = audit_html(meta, self._decoded(), max_rows=self.max_rows, start=start)


#: Part of the context window -> column of :meth:`AgentFile.replay` (and of
#: :meth:`AgentFile.composition`, a view of it), as the plots stack them.
COMPOSITION_PARTS = tuple((p.name, p.column) for p in PARTS)


class ReplayPlayer(_Shown):
    """A slider over model calls showing the context window at each call and its make-up.

    Parameters
    ----------
    agent : an :class:`adfkit.AgentFile`.
    rows : how many of the window's last rows to render below the composition.

    Attributes
    ----------
    call : an IntSlider over the model calls, numbered from 1 as the readout and the title say
        (call ``k`` is ``calls.iloc[k - 1]``); it spans the widget's width, and a text box beside
        it takes a number typed in.
    prev_call, next_call : buttons stepping one call back or forward.
    compaction : a Dropdown of the compactions (and clears): choosing one jumps to the first
        call after it; ``prev_compaction``/``next_compaction`` step between them.
    play : a Play control linked to the slider in the browser.
    html : the ``ipywidgets.HTML`` (composition bar and table, then the rows).
    calls : the model calls (:meth:`AgentFile.replay`), with the columns of ``history()``.

    Examples
    --------
    >>> import adfkit
    >>> p = ReplayPlayer(adfkit.open_adf("sample_agents/long-runner.adf"))
    >>> p.call.value = 3
    >>> p.call_seq == int(p.calls["seq"].iloc[2])
    True
    >>> p.next_compaction.click(); p.call.value > 3
    True
    """

    def __init__(self, agent: AgentFile, *, rows: int = 30) -> None:
        w = _w()
        self._agent = agent
        self.rows = int(rows)
        self._history = agent.history().reset_index(drop=True)
        rep = agent.replay()  # the model calls, with the token parts of each window
        seqs = rep["seq"].astype("int64").tolist()
        self.calls = self._history.set_index("seq").loc[seqs].reset_index()
        self._composition = rep
        n = max(1, len(self.calls))
        self.call = w.IntSlider(
            value=1,
            min=1,
            max=n,
            description="model call",
            continuous_update=False,
            readout=False,  # the number is in the box beside it, once
            layout=w.Layout(width="100%", flex="1 1 auto"),
        )
        self.typed = w.BoundedIntText(value=1, min=1, max=n, layout=w.Layout(width="7em"))
        w.jslink((self.typed, "value"), (self.call, "value"))
        self.play = w.Play(value=1, min=1, max=n, interval=500)
        w.jslink((self.play, "value"), (self.call, "value"))
        self.prev_call = w.Button(description="prev call", layout=w.Layout(width="auto"))
        self.next_call = w.Button(description="next call", layout=w.Layout(width="auto"))
        self.prev_call.on_click(lambda _: self._go(int(self.call.value) - 1))
        self.next_call.on_click(lambda _: self._go(int(self.call.value) + 1))
        # Compactions and clears: the first call after each (1-based), to jump to.
        seq_arr = np.asarray(seqs, dtype="int64")
        ev = agent.events()
        self._after: list[int] = []
        # 0 is the "no jump" entry (calls are numbered from 1): a None value would leave the
        # dropdown blank in the browser.
        labels: list[tuple[str, int]] = [("(jump to a compaction)", 0)]
        for j, (kind, b) in enumerate(zip(ev["event"], ev["boundary_seq"], strict=True)):
            if _na(b):
                continue
            k = int(np.searchsorted(seq_arr, int(b), side="right"))
            if k < len(seq_arr):
                self._after.append(k + 1)
                labels.append((f"{kind} {j + 1} (before call {k + 1})", k + 1))
        self.compaction = w.Dropdown(options=labels, value=0, layout=w.Layout(width="auto"))
        self.compaction.observe(
            lambda ch: self._go(ch["new"]) if ch["new"] else None, names="value"
        )
        self.prev_compaction = w.Button(
            description="prev compaction", layout=w.Layout(width="auto")
        )
        self.next_compaction = w.Button(
            description="next compaction", layout=w.Layout(width="auto")
        )
        self.prev_compaction.on_click(lambda _: self._jump(-1))
        self.next_compaction.on_click(lambda _: self._jump(1))
        self.html = w.HTML()
        self.call.observe(lambda _: self._render(), names="value")
        self.call.observe(lambda _: self._sync_jump(), names="value")
        self.widget = w.VBox(
            [
                w.HBox([self.call, self.typed], layout=w.Layout(width="100%")),
                w.HBox(
                    [
                        self.play,
                        self.prev_call,
                        self.next_call,
                        self.prev_compaction,
                        self.next_compaction,
                        self.compaction,
                    ]
                ),
                self.html,
            ]
        )
        self._render()

    def _go(self, k: int) -> None:
        self.call.value = min(max(1, int(k)), int(self.call.max))

    def _sync_jump(self) -> None:
        """The jump menu names the compaction the slider is at, else its "(jump ...)" entry:
        never a choice left from before the slider moved."""
        now = int(self.call.value)
        self.compaction.value = now if now in self._after else 0

    def _jump(self, d: int) -> None:
        """To the first call after the next (``d=1``) or previous compaction."""
        now = int(self.call.value)
        if d > 0:
            nxt = [k for k in self._after if k > now]
            if nxt:
                self._go(nxt[0])
        else:
            prv = [k for k in self._after if k < now]
            if prv:
                self._go(prv[-1])

    @property
    def call_seq(self) -> int | None:
        """The seq of the assistant row the slider is on."""
        if not len(self.calls):
            return None
        return int(self.calls["seq"].iloc[int(self.call.value) - 1])

    @property
    def window(self) -> pd.DataFrame:
        """The rows the model received at the chosen call (:meth:`AgentFile.context_at`): the
        system prompt in force, the conversation, the dynamic instructions; column ``part``."""
        seq = self.call_seq
        if seq is None:
            return self._history.iloc[:0]
        return self._agent.context_at(seq)

    @property
    def composition(self) -> pd.Series:
        """Estimated tokens sent at the chosen call, by part (:meth:`AgentFile.replay`).

        Index: ``system_prompt``, ``dynamic_instructions``, ``compaction_summary``,
        ``message``, ``assistant``, ``tool_result``, ``loop_inject``, and ``not_in_file``
        (the reported input less those parts, when the provider reported it); float64 tokens.
        """
        seq = self.call_seq
        comp = self._composition
        hit = comp[comp["seq"] == seq] if seq is not None else comp.iloc[:0]
        if not len(hit):
            return pd.Series(dtype="float64")
        r = hit.iloc[0]
        parts = {part: float(r[col]) if not _na(r[col]) else 0.0 for part, col in COMPOSITION_PARTS}
        reported = r.get("tokens_input")
        if reported is not None and not _na(reported):  # what the file does not hold
            parts[NOT_IN_FILE.name] = max(0.0, float(reported) - sum(parts.values()))
        return pd.Series(parts, dtype="float64")

    def _render(self) -> None:
        seq = self.call_seq
        if seq is None:
            self.html.value = _STYLE + '<div class="adf-empty">This file has no model calls.</div>'
            return
        win = self.window
        call = self.calls.iloc[int(self.call.value) - 1]
        tok = _tokens_txt(call.to_dict())
        title = (
            f"call {int(self.call.value)} of {len(self.calls)} (seq {seq}): "
            f"{len(win):,} rows in the window"
            + (f"; provider reported {tok} tokens" if tok else "")
        )
        shown = win.iloc[-self.rows :] if self.rows else win.iloc[:0]
        note = (
            f'<div class="adf-empty">last {len(shown)} of {len(win):,} rows</div>'
            if len(shown) < len(win)
            else ""
        )
        self.html.value = (
            _STYLE
            + composition_html(self.composition, title=title)
            + note
            + rows_html(shown, style=False)
        )
