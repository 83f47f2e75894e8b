"""The HTML renderers: pure functions from frames to escaped HTML strings (rows, audit
rows, the composition of a window), usable without a kernel."""

from __future__ import annotations

import base64
import contextlib
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
import pandas as pd

from adfkit._base.errors import AdfError
from adfkit._base.html import INERT as INERT
from adfkit._base.html import escape as _escape
from adfkit._base.html import markdown
from adfkit._base.parts import NOT_IN_FILE, PARTS
from adfkit._base.redact import safe_cut
from adfkit._core.rows import parse_content

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
.adf-md{word-break:break-word}
.adf-md>:first-child{margin-top:0}.adf-md>:last-child{margin-bottom:0}
.adf-md h1,.adf-md h2,.adf-md h3,.adf-md h4{font-size:1.05em;margin:6px 0 2px}
.adf-md pre{background:#f6f8fa;border:1px solid #e2e8f0;padding:4px 6px;overflow-x:auto}
.adf-md code{background:#f6f8fa;font-size:12px}
.adf-md table{border-collapse:collapse}
.adf-md td,.adf-md th{border:1px solid #cbd5e0;padding:1px 6px}
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
        if not isinstance(txt, str):
            return f'<div class="adf-body">{_clip(_json(txt), max_chars, mark)}</div>'
        return f'<div class="adf-md">{markdown(txt, max_chars, mark)}</div>'
    if t == "thinking":
        txt = b.get("thinking")
        txt = txt if isinstance(txt, str) else ""
        return (
            f'<details class="adf-thinking"><summary>thinking ({len(txt):,} chars)</summary>'
            f'<div class="adf-md">{markdown(txt, max_chars, mark)}</div></details>'
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
        label = "Context compacted" + (", audited" if sub == "audited" else "")
        folded = _opened(
            f"<details><summary>summary ({len(txt):,} chars)</summary>"
            f'<div class="adf-md">{markdown(txt, max_chars, mark)}</div></details>'
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
    (``<details>``, red when an error), teal context blocks and compaction banners. Message,
    thinking and summary text is rendered as markdown (headings, lists, tables, code blocks),
    safely: raw HTML in it is shown as text, no image or script runs
    (:func:`adfkit._base.html.markdown`); tool inputs, results and context blocks are shown as
    written. Every piece of agent text is HTML-escaped.

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
