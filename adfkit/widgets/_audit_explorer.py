"""The AuditExplorer: one ``adf_audit`` row, decoded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from adfkit._base.errors import AdfError
from adfkit.widgets._html import _STYLE, _na, audit_html
from adfkit.widgets._shown import _Shown, _w

if TYPE_CHECKING:
    from adfkit._facade.agent import AgentFile


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
