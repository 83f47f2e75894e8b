"""What every widget shares: its display in a notebook, ipywidgets on first use."""

from __future__ import annotations

from typing import Any

from adfkit.widgets._html import escape


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
