"""adfkit: look inside the memory of ADF agents (and of Claude Code and Codex sessions).

Open an agent file read-only and get its loop, audit history, compactions and metrics as
pandas DataFrames::

    import adfkit
    with adfkit.open_adf("sample_agents/long-runner.adf") as agent:
        agent.history()        # the whole lifetime transcript
        agent.compactions()    # what each compaction swept

``adfkit.open(path)`` also reads Claude Code session transcripts and Codex CLI rollouts
(``list_claude_code_sessions``, ``list_codex_sessions`` find them), with the same tables.

Plots live in :mod:`adfkit.plots`, widgets in :mod:`adfkit.widgets` (imported on demand).
"""

import importlib.metadata as _metadata

from . import schema
from ._agent import AgentFile, open, open_adf, open_claude_code, open_codex
from ._claude_code import list_claude_code_sessions
from ._codex import list_codex_sessions
from ._errors import (
    AdfError,
    AdfWarning,
    BlobError,
    BlobTooLargeError,
    CorruptFileError,
    FileBusyError,
    MalformedRowError,
    NewerSchemaWarning,
    NotAdfError,
    NotSQLiteError,
    NotTranscriptError,
    SettingsFileError,
    SidecarError,
    UnknownFormatError,
    UnsafeSchemaError,
    UnsupportedSchemaError,
)
from ._fleet import FleetResult, export, load_fleet
from ._mind import Mind
from ._observe import Observation, load_taxonomy, observe, signature
from ._simulate import (
    SimulationResult,
    SlidingWindowPolicy,
    ThresholdPolicy,
    TrimToolResultsPolicy,
    simulate,
    simulate_sweep,
)

try:
    __version__ = _metadata.version("adfkit")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "AdfError",
    "AdfWarning",
    "AgentFile",
    "BlobError",
    "BlobTooLargeError",
    "CorruptFileError",
    "FileBusyError",
    "FleetResult",
    "MalformedRowError",
    "Mind",
    "NewerSchemaWarning",
    "NotAdfError",
    "NotSQLiteError",
    "NotTranscriptError",
    "Observation",
    "SimulationResult",
    "SlidingWindowPolicy",
    "ThresholdPolicy",
    "TrimToolResultsPolicy",
    "SettingsFileError",
    "SidecarError",
    "UnsafeSchemaError",
    "NotTranscriptError",
    "UnknownFormatError",
    "UnsupportedSchemaError",
    "__version__",
    "export",
    "list_claude_code_sessions",
    "list_codex_sessions",
    "load_fleet",
    "load_taxonomy",
    "observe",
    "open",
    "open_adf",
    "open_claude_code",
    "open_codex",
    "schema",
    "signature",
    "simulate",
    "simulate_sweep",
]
