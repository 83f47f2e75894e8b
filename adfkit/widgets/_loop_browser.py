"""The LoopBrowser: the loop or the whole history, filtered, one page at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from adfkit._analysis.tables import blocks_frame, tool_calls_frame
from adfkit._core.rows import row_text
from adfkit.widgets._html import rows_html
from adfkit.widgets._shown import _Shown, _w

if TYPE_CHECKING:
    from adfkit._facade.agent import AgentFile


ALL = "(all)"


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
        tool filter's value is a tool name, or None for every tool). ``search`` looks through
        all the text of each row, any case: its text and thinking, tool calls' names and
        inputs, tool results.
    html : the ``ipywidgets.HTML`` showing the current page (``.html.value``).
    status : a label ``rows a-b of n``, or ``no rows match ...`` saying what was asked.
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
            else:  # text search: all the text of each row, tool inputs and results too
                m = self._all_text(st).str.contains(value, case=False, regex=False, na=False)
                m = m.to_numpy(dtype=bool)
            st["masks"][key] = np.asarray(m, dtype=bool)
        mask: np.ndarray = st["masks"][key]
        return mask

    def _all_text(self, st: dict[str, Any]) -> pd.Series:
        """Every row's text as the search sees it (:func:`adfkit._core.rows.row_text`), built
        on the first search of a scope."""
        if "all_text" not in st:
            content = st["frame"]["content"].astype(object).tolist()
            st["all_text"] = pd.Series([row_text(c) for c in content], dtype="string")
        text: pd.Series = st["all_text"]
        return text

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

    def _status(self, n: int, start: int, shown: int) -> str:
        """``rows 1-50 of 162 (filtered from 725); page 1 of 4``, or what matched nothing:
        ``no rows match "explain.go" (in 725 rows of the history)``."""
        total = len(self.frame)
        if not n:
            asked = [f'"{self.search.value}"'] if self.search.value else []
            asked += [
                f"{name} {ctl.value}"
                for name, ctl in (("kind", self.kind), ("role", self.role))
                if ctl.value != ALL
            ]
            asked += [f"tool {self.tool.value}"] if self.tool.value is not None else []
            if not asked:
                return f"no rows in the {self.scope.value}"
            what = asked[0] + (f" with {', '.join(asked[1:])}" if asked[1:] else "")
            return f"no rows match {what} (in {total:,} rows of the {self.scope.value})"
        return (
            f"rows {start + 1:,}-{start + shown:,} of {n:,}"
            + (f" (filtered from {total:,})" if n != total else "")
            + f"; page {self.page.value} of {self.page.max}"
        )

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
        self.status.value = self._status(n, start, len(page))
        self.prev.disabled = int(self.page.value) <= 1
        self.next.disabled = int(self.page.value) >= int(self.page.max)
        self.html.value = rows_html(page, tool_names=names, mark=self.search.value)
