"""HTML escaping for everything that renders agent text (widgets, reports).

Agent files are written by language models and by whoever messaged them: every string from a
file is untrusted. These helpers escape every value they are given, so no tag, attribute or
entity from a file reaches the page as markup.
"""

from __future__ import annotations

import functools
import html
import math
import re
from typing import Any

import pandas as pd

from adfkit._base.redact import safe_cut


def _is_na(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def escape(value: Any) -> str:
    """HTML-escape any value's text, quotes included; ``None``/NA/NaN become ``""``.

    Safe in element content and in quoted attribute values.

    Examples
    --------
    >>> escape('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    >>> escape(None), escape(3)
    ('', '3')
    """
    return html.escape(_text(value), quote=True)


def _text(value: Any) -> str:
    """A value's text: ``""`` for NA, bytes decoded as UTF-8 (invalid bytes replaced)."""
    if _is_na(value):
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return value if isinstance(value, str) else str(value)


def clip(value: Any, max_chars: int) -> str:
    """Escaped text cut at ``max_chars`` characters (cut *before* escaping, so no entity is
    split, and before a secret the cut would split: :func:`adfkit._base.redact.safe_cut`), with a
    note of how much was left out.

    Examples
    --------
    >>> clip("<b>" * 3, 4)
    '&lt;b&gt;&lt; <span class="adf-more">... (5 more characters)</span>'
    """
    text = _text(value)
    if len(text) <= max_chars:
        return escape(text)
    cut = safe_cut(text, max_chars)  # never a piece of a secret the cut would split
    more = len(text) - cut
    return escape(text[:cut]) + f' <span class="adf-more">... ({more:,} more characters)</span>'


def safe_frame_html(
    df: pd.DataFrame,
    *,
    max_rows: int | None = 200,
    max_chars: int | None = 500,
    classes: str = "adf-table",
    index: bool = False,
) -> str:
    """Render a DataFrame as an HTML ``<table>`` with every header and cell escaped.

    One ``<tr>`` per row of ``df`` (the first ``max_rows``; a final row says how many were left
    out). Cells longer than ``max_chars`` are cut before escaping. ``classes`` is escaped too.

    Examples
    --------
    >>> import pandas as pd
    >>> out = safe_frame_html(pd.DataFrame({"text": ["<script>alert(1)</script>"]}))
    >>> "<script>" in out, "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    (False, True)
    """
    cols = [str(c) for c in df.columns]
    head = ([escape(df.index.name or "")] if index else []) + [escape(c) for c in cols]
    parts = [f'<table class="{escape(classes)}"><thead><tr>']
    parts += [f"<th>{h}</th>" for h in head]
    parts.append("</tr></thead><tbody>")
    shown = df if max_rows is None else df.iloc[:max_rows]
    for label, row in zip(shown.index, shown.itertuples(index=False, name=None), strict=True):
        parts.append("<tr>")
        if index:
            parts.append(f"<th>{escape(label)}</th>")
        for v in row:
            cell = escape(v) if max_chars is None else clip(v, max_chars)
            parts.append(f"<td>{cell}</td>")
        parts.append("</tr>")
    left = len(df) - len(shown)
    if left > 0:
        parts.append(
            f'<tr><td colspan="{len(head)}" class="adf-more">... {left:,} more rows</td></tr>'
        )
    parts.append("</tbody></table>")
    return "".join(parts)


#: Inline markup markdown may produce from agent text; anything else is escaped text.
_TAG = re.compile(r"(<[^>]*>)")


@functools.cache
def _markdown_parser() -> Any:
    """CommonMark with tables and strikethrough, as a transcript viewer shows them, and every
    way agent text could become active content switched off: raw HTML (``html=False``: a
    ``<script>`` or ``<img onerror>`` in the text is shown as text), images (no request leaves
    the page: a report loads nothing from the network) and links to anything but http(s) and
    mailto (markdown-it's own check already refuses ``javascript:``, ``vbscript:``, ``file:``
    and ``data:``)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"]).disable(["image", "html_block", "html_inline"])
    md.validateLink = _web_link  # type: ignore[method-assign]
    return md


def _web_link(url: str) -> bool:
    """Whether a markdown link may be a link: http(s) and mailto only."""
    return url.strip().lower().startswith(("http://", "https://", "mailto:"))


def markdown(value: Any, max_chars: int | None = None, mark: str = "") -> str:
    """Agent text rendered as markdown, safely: headings, lists, tables, emphasis and code
    blocks become HTML, while the text stays data: no raw HTML, script, image or active link
    from it reaches the page (see :func:`_markdown_parser`), and the caller wraps it in an
    element MathJax leaves alone. Cut at ``max_chars`` before rendering (never inside a secret),
    with a note of how much was left out; each occurrence of ``mark`` (any case) in the text
    shown is highlighted with ``<mark>``.

    Examples
    --------
    >>> print(markdown("### Plan\\n\\n- read `a.go`\\n- <script>alert(1)</script>"))
    <h3>Plan</h3>
    <ul>
    <li>read <code>a.go</code></li>
    <li>&lt;script&gt;alert(1)&lt;/script&gt;</li>
    </ul>
    <BLANKLINE>
    >>> markdown("![x](http://evil/x.png) [y](javascript:alert(1))")  # no image is fetched
    '<p>!<a href="http://evil/x.png">x</a> [y](javascript:alert(1))</p>\\n'
    >>> markdown("see a.go and A.GO", mark="a.go")
    '<p>see <mark>a.go</mark> and <mark>A.GO</mark></p>\\n'
    """
    text = _text(value)
    more = ""
    if max_chars is not None and len(text) > max_chars:
        cut = safe_cut(text, max_chars)
        more = f'<span class="adf-more">... ({len(text) - cut:,} more characters)</span>'
        text = text[:cut]
    out: str = _markdown_parser().render(text)
    return (_marked(out, mark) if mark else out) + more


def _marked(rendered: str, mark: str) -> str:
    """``<mark>`` around each occurrence of ``mark`` (any case) in the text of rendered HTML,
    never inside a tag."""
    pattern = re.compile(re.escape(escape(mark)), re.IGNORECASE)
    return "".join(
        part if part.startswith("<") else pattern.sub(lambda m: f"<mark>{m.group()}</mark>", part)
        for part in _TAG.split(rendered)
    )


#: Classes that tell JupyterLab's MathJax (2 and 3) to leave an element alone: agent text such
#: as ``$$x$$`` is shown as written, never typeset.
INERT = "tex2jax_ignore mathjax_ignore"
