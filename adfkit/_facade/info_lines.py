"""The lines of ``adfkit info``: one agent's :meth:`~adfkit.AgentFile.info` as aligned
``key: value`` text, shared by the command and the plain report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adfkit._core import registry


def _fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _when(value: Any) -> str:
    """A time as a reader writes it: ``2026-06-02 18:16:35 UTC`` (to the second); ``unknown``
    when there is none (a stamp the reader could not place: another unit than ms, out of
    range)."""
    import pandas as pd

    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        return str(value)
    if pd.isna(ts):
        return "unknown"
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC")
    text: str = ts.strftime("%Y-%m-%d %H:%M:%S")
    return text + (" UTC" if ts.tzinfo is not None else "")


def _span(info: Mapping[str, Any]) -> str:
    return (
        f", {_when(info['first_live_at'])} .. {_when(info['last_live_at'])}"
        if info["first_live_at"] or info["last_live_at"]
        else ""
    )


def format_info(info: Mapping[str, Any], label: str | None = None) -> str:
    """Render ``AgentFile.info()`` as aligned ``key: value`` lines, the same lines for every
    kind of record: a line whose values the record does not have (NA) is left out, and a value
    it does not have inside a line is not shown. ``label`` names the kind of record (default:
    its format's :attr:`~adfkit._core.registry.FormatSpec.label`); ``lost_seqs`` (when there) is how
    many seqs were discarded without audit."""
    from adfkit._core import registry

    kind = label or registry.label(str(info["format"]))
    words = registry.words(str(info["format"]))
    lines: list[tuple[str, str | None]] = [
        ("agent", f"{info['name']}" + (f" (@{info['handle']})" if info["handle"] else "")),
        ("format", kind + (f" {info['tool_version']}" if info["tool_version"] else "")),
        ("file", _file(info)),
        (
            "schema",
            None
            if info["schema_version"] is None
            else f"{info['schema_version']} (adf {info['adf_version']})",
        ),
        ("state", _state(info)),
        ("model", _model(info)),
        ("window", _window(info)),
        (words.live, _live(info)),
        ("history", _history(info)),
        (words.swept, _audit(info, words)),
        ("audit on", _audit_on(info) if words.audit_switches else None),
        ("threshold", _threshold(info)),
        (
            "subagents",
            None
            if info["subagents"] is None
            else f"{info['subagents']}"
            + ("" if info["branches"] is None else f"; abandoned branches {info['branches']}"),
        ),
        (
            "messages",
            None
            if info["inbox_rows"] is None
            else f"inbox {info['inbox_rows']}, outbox {info['outbox_rows']}",
        ),
        ("files", None if info["files"] is None else f"{info['files']}"),
    ]
    shown = [(k, v) for k, v in lines if v is not None]
    width = max(len(k) for k, _ in shown)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in shown)


def _tokens(n: int | None) -> str | None:
    return None if n is None else f"{n:,} tokens"


def _file(info: Mapping[str, Any]) -> str:
    size = info["file_bytes"]
    return f"{info['path']}" + ("" if size is None else f" ({_fmt_bytes(size)})")


def _state(info: Mapping[str, Any]) -> str:
    if info["live"] is None:
        text = "-"
    elif info["live"]:
        text = "live, or crashed / cut off"
    else:
        text = "closed cleanly" if info["clean_close"] else "complete"
    if info["sidecars"]:
        text += f"; sidecars {', '.join(info['sidecars'])}"
    if info["turn_checkpoint"]:
        text += f"; last turn {info['turn_checkpoint']}"
    if info["findings"]:
        text += f"; adfkit check lists {info['findings']} finding(s)"
    return text


def _model(info: Mapping[str, Any]) -> str:
    model = info["model"] or "- (not recorded)"
    if info["model_source"] == "loop":
        model += " (latest call; the config names none)"
    if info["provider"]:
        model += f" via {info['provider']}"
    return model


def _live(info: Mapping[str, Any]) -> str | None:
    if info["loop_rows"] is None:
        return None
    lo, hi = info["loop_seq_range"]
    return (
        f"{info['loop_rows']:,} rows"
        + (f", seq {lo}..{hi}" if lo is not None else "")
        + _span(info)
    )


def _history(info: Mapping[str, Any]) -> str:
    """The range (or size) of the history, the seqs lost, each kind of event counted apart (a
    microcompaction is not a compaction) where counted, and the oldest archive's time."""
    if info["highest_seq"]:
        out = f"seq 1..{info['highest_seq']:,}"
    elif info["history_rows"] is not None:
        out = f"{info['history_rows']:,} rows"
    else:
        out = "as the live loop"
    lost = info.get("lost_seqs")
    if lost:
        out += f", {lost:,} of them lost (discarded without audit)"
    if info["compactions"] is not None:
        out += f"; {info['compactions']} compaction(s)"
        for key, word in (("clears", "clear(s)"), ("microcompactions", "microcompaction(s)")):
            if info[key]:
                out += f", {info[key]} {word}"
    if info["first_archived_at"]:
        out += (
            f"; first archive written {_when(info['first_archived_at'])} (older rows are archived)"
        )
    return out


def _audit(info: Mapping[str, Any], words: registry.Words) -> str:
    """What compactions swept and where it is kept, in the format's own words; an ADF file's
    archives of other sources (``mind``...) are named by their source."""
    audit = dict(info["audit_rows"])
    if not audit:
        return "none"
    rows = info["audited_loop_entries"]  # None: info(sizes=False)
    parts = [words.swept_text(audit.pop("loop"), rows)] if "loop" in audit else []
    parts += [f"{v:,} archive(s) of {k} rows" for k, v in sorted(audit.items())]
    text = ", ".join(parts)
    packed = info["audit_compressed_bytes"]
    return text + ("" if packed is None else f", {_fmt_bytes(packed)} compressed")


def _audit_on(info: Mapping[str, Any]) -> str:
    on = [k for k, v in info["audit_settings"].items() if v]
    return ", ".join(on) or "nothing (compacted history is discarded)"


def _threshold(info: Mapping[str, Any]) -> str:
    t, rule = info["compact_threshold"], info["threshold_rule"]
    if t is None:
        return "NA" + (f": {rule}" if rule else "")
    source = info["threshold_source"]
    if source in ("assumed", "recorded"):
        return f"{t:,} tokens ({source}: {rule})" if rule else f"{t:,} tokens ({source})"
    return f"{t:,} tokens"


def _window(info: Mapping[str, Any]) -> str | None:
    """The context window and where it comes from (``assumed``: the format's rule)."""
    text = _tokens(info["context_window"])
    source = info.get("window_source")
    return f"{text} ({source})" if text and source in ("assumed", "recorded") else text
