"""The model calls of a sample (its ``ModelEvent`` events): what the parser keeps of each, its
output message and the model its row names (the format's notes: :mod:`.parser`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Call:
    """One ``ModelEvent``: its input messages, the rows they are (``seqs``; None: no row), the
    rows it holds edited, the row its output is, whether it is a summarizer's."""

    index: int  # 0-based position in sample.events
    ev: dict[str, Any]
    inputs: list[dict[str, Any]]
    seqs: list[int | None] = field(default_factory=list)
    edited: list[int] = field(default_factory=list)
    out_seq: int | None = None
    summarizer: bool = False


def is_model(e: Any) -> bool:
    return isinstance(e, dict) and e.get("event") == "model"


def output_message(ev: dict[str, Any]) -> dict[str, Any] | None:
    out = ev.get("output")
    ch = out.get("choices") if isinstance(out, dict) else None
    if isinstance(ch, list) and ch and isinstance(ch[0], dict):
        m = ch[0].get("message")
        return m if isinstance(m, dict) else None
    return None


def row_model(ev: dict[str, Any]) -> str | None:
    """The model a call's row names: the provider's own name, as assistant messages carry it
    (``output.model``, then the output message's ``model``), else Inspect's
    ``<provider>/<model>`` of the event."""
    out = ev.get("output")
    om = output_message(ev)
    for v in (
        out.get("model") if isinstance(out, dict) else None,
        om.get("model") if om else None,
        ev.get("model"),
    ):
        if isinstance(v, str) and v:
            return v
    return None
