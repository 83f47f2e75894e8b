"""OpenTelemetry GenAI traces in JSON lines: OTLP/JSON (the OpenTelemetry file exporter's
format, ``adfkit export --otlp``) or the JS SDK's span objects (Copilot CLI's
``COPILOT_OTEL_FILE_EXPORTER_PATH``): recognition and opening. The reader is
:mod:`.parser`, imported when a file is opened."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from adfkit._core.model_catalog import maker_of
from adfkit._core.registry import FormatSpec, Probe

#: The start of an OTLP/JSON trace export (its one top-level field), or of a line of the
#: OpenTelemetry JS SDK's span/metric JSON (Copilot CLI's file exporter), after a byte-order
#: mark.
_START = re.compile(
    rb"^(?:\xef\xbb\xbf)?\s*\{\s*"
    rb'(?:"resourceSpans"\s*:\s*\[|"type"\s*:\s*"(?:span|metric)")'
)


def claims(probe: Probe) -> bool:
    """Positive recognition: a file that opens as an OTLP trace export
    (``{"resourceSpans": [...]``) or as a line of spans the OpenTelemetry JS SDK writes
    (``{"type": "span", ...}``: Copilot CLI's ``COPILOT_OTEL_FILE_EXPORTER_PATH``), read from
    its first bytes (one line can be longer than what recognition reads), and names a GenAI
    attribute (``"gen_ai.``) in them."""
    if probe.is_dir:
        return False
    head = probe.head
    return bool(_START.match(head)) and b'"gen_ai.' in head


def open_session(path: str | os.PathLike[str], **options: Any) -> Any:
    """The trace's agent as a :class:`adfkit._sources.transcript.source.TranscriptSource`."""
    from adfkit._sources.otel.parser import parse_otlp
    from adfkit._sources.transcript.source import TranscriptSource

    return TranscriptSource(parse_otlp(Path(path)))


def provider(model: str | None) -> str | None:
    """Who serves ``model``: :func:`adfkit._core.model_catalog.maker_of` (the id alone)."""
    return maker_of(model)


SPEC = FormatSpec(
    name="otel",
    label="OpenTelemetry GenAI trace",
    looks_for='a first line {"resourceSpans": [...]} (OTLP JSON) or {"type": "span"} with '
    "gen_ai.* attributes",
    claims=claims,
    open=open_session,
    provider=provider,
)

__all__ = ["SPEC", "claims"]
