"""An OpenHands conversation behind the reader boundary: a transcript source whose input is a
folder, whose settings come from ``base_state.json`` and whose findings name event files."""

from __future__ import annotations

import dataclasses
import os

from adfkit._core.source import AgentSource, Finding, Info, Provenance, Settings, StorageReport
from adfkit._sources.openhands.rule import compaction_rule
from adfkit._sources.transcript.kit import ParsedTranscript
from adfkit._sources.transcript.source import TranscriptSource


def _int(meta: dict[str, str], key: str) -> int | None:
    v = meta.get(key)
    return int(v) if v is not None and v.isdigit() else None


class OpenHandsSource(TranscriptSource):
    """One parsed OpenHands conversation (:func:`.parser.parse_openhands`).

    Differs from other transcripts in three places: :meth:`settings` applies the condenser
    settings ``base_state.json`` records (``max_tokens`` as the threshold when set);
    :meth:`info` measures the folder (``file_bytes``: every file in it); :meth:`storage_report`
    names the event file of each finding (table ``events``, ``rows`` the event index).
    """

    def __init__(self, parsed: ParsedTranscript) -> None:
        super().__init__(parsed)
        self._children: list[AgentSource] | None = None

    @property
    def name(self) -> str:
        """``base_state.id`` (subagents: ``agent-<folder name>``), else the folder name."""
        p = self.parsed
        if p.agent_id:
            return f"agent-{p.agent_id}"
        return p.session_id or os.path.basename(os.path.normpath(self.path))

    def context_window(self) -> int | None:
        """The window the calls' ``TokenUsage.context_window`` records (the latest), else the
        agent LLM's ``max_input_tokens``, else None."""
        w = self.parsed.meta.get("context_window") or self.parsed.meta.get("max_input_tokens")
        return int(w) if w and w.isdigit() else super().context_window()

    def settings(self) -> Settings:
        """As :meth:`TranscriptSource.settings`, with the condenser settings ``base_state.json``
        records in the threshold and its rule text (:func:`.rule.compaction_rule`): a recorded
        ``max_tokens`` is the threshold (``configured``), else the context window
        (``assumed``: the agent asks for a condensation when the LLM reports it exceeded)."""
        st = super().settings()
        m = self.parsed.meta
        max_tokens = _int(m, "condenser_max_tokens")
        window, threshold, text = compaction_rule(
            st.model,
            self.context_window(),
            max_size=_int(m, "condenser_max_size"),
            keep_first=_int(m, "condenser_keep_first"),
            max_tokens=max_tokens,
        )
        source: Provenance | None = (
            None if threshold is None else "configured" if max_tokens else "assumed"
        )
        return dataclasses.replace(
            st,
            compact_threshold=threshold,
            threshold_source=source,
            threshold_rule=text,
            context_window=window,
        )

    def info(self, *, sizes: bool = True) -> Info:
        """As :meth:`TranscriptSource.info`; ``file_bytes`` is the size of every file of the
        folder (``base_state.json`` and the event files), ``live`` True when the last event file
        is half-written, ``tool_version`` None (OpenHands records none)."""
        out = super().info(sizes=sizes)
        out["file_bytes"] = _folder_bytes(self.path)
        out["live"] = any(f.check == "truncated_last_event" for f in self.parsed.findings)
        return out

    def storage_report(self) -> StorageReport:
        """The reader's findings, one per check and event file: table ``events``, ``rows`` the
        event index (the ``<idx>`` of ``event-<idx>-<id>.json``; empty for the whole folder)."""
        found = [
            Finding(
                check=f.check,
                severity=f.severity,
                table="events",
                rows=(int(f.line) - 1,) if f.line else (),
                detail=f.detail,
            )
            for f in self.parsed.findings
        ]
        return StorageReport(findings=tuple(found))

    def subagents(self) -> list[AgentSource]:
        """The conversations under ``subagents/`` (OpenHands' delegation), each a source."""
        if self._children is None:
            self._children = [OpenHandsSource(s) for s in self.parsed.subagents]
        return list(self._children)


def _folder_bytes(path: str) -> int:
    total = 0
    for dirpath, dirnames, files in os.walk(path):
        dirnames[:] = [d for d in dirnames if d != "subagents"]
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                continue
    return total
