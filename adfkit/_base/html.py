"""HTML escaping for everything that renders agent text (widgets, reports).

Agent files are written by language models and by whoever messaged them: every string from a
file is untrusted. These helpers escape every value they are given, so no tag, attribute or
entity from a file reaches the page as markup.
"""

from __future__ import annotations

import html
import math
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
