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

from typing import TYPE_CHECKING, Any

from adfkit._base.errors import (
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
    OutputPathError,
    SettingsFileError,
    SidecarError,
    SkippedFilesWarning,
    UnknownFormatError,
    UnsafeSchemaError,
    UnsupportedSchemaError,
)

if TYPE_CHECKING:  # the names below are imported on first use (PEP 562 ``__getattr__``)
    from adfkit import schema
    from adfkit._analysis.compactors import register_compactor
    from adfkit._analysis.mind import Mind
    from adfkit._analysis.observe import Observation, load_taxonomy, signature
    from adfkit._analysis.simulate import (
        SimulationResult,
        SlidingWindowPolicy,
        ThresholdPolicy,
        TrimToolResultsPolicy,
    )
    from adfkit._base.bundled import sample_path
    from adfkit._base.engines import run
    from adfkit._core.opening import formats, list_sessions
    from adfkit._core.registry import FormatSpec, register_format
    from adfkit._facade.agent import (
        AgentCollection,
        AgentFile,
        observe,
        open,
        open_adf,
        open_claude_code,
        open_codex,
        simulate,
        simulate_sweep,
    )
    from adfkit._facade.fleet import FleetResult, export, export_otlp, load_fleet
    from adfkit._facade.lab_dataset import export_compaction_dataset
    from adfkit._sources.claude_code.listing import list_claude_code_sessions
    from adfkit._sources.codex.listing import list_codex_sessions

    __version__: str

#: Public names loaded on first use -> the module that defines them. ``import adfkit`` imports
#: no pandas: ``schema``, the readers, analyses, fleets (and Parquet, zstandard, Dask behind
#: them) are imported when a name that needs them is first touched.
_LAZY: dict[str, str] = {
    # the facade: it opens paths; the functions that take "an agent" hand analyses a source
    **dict.fromkeys(
        [
            "AgentCollection",
            "AgentFile",
            "observe",
            "open",
            "open_adf",
            "open_claude_code",
            "open_codex",
            "simulate",
            "simulate_sweep",
        ],
        "_facade.agent",
    ),
    **dict.fromkeys(["formats", "list_sessions"], "_core.opening"),
    "sample_path": "_base.bundled",
    "run": "_base.engines",
    **dict.fromkeys(["FormatSpec", "register_format"], "_core.registry"),
    "list_claude_code_sessions": "_sources.claude_code.listing",
    "list_codex_sessions": "_sources.codex.listing",
    **dict.fromkeys(["FleetResult", "export", "export_otlp", "load_fleet"], "_facade.fleet"),
    "export_compaction_dataset": "_facade.lab_dataset",
    "register_compactor": "_analysis.compactors",
    "Mind": "_analysis.mind",
    **dict.fromkeys(["Observation", "load_taxonomy", "signature"], "_analysis.observe"),
    **dict.fromkeys(
        [
            "SimulationResult",
            "SlidingWindowPolicy",
            "ThresholdPolicy",
            "TrimToolResultsPolicy",
        ],
        "_analysis.simulate",
    ),
}


def _version() -> str:
    """The installed version (``0.0.0`` from a source tree without an install)."""
    from adfkit._base.installed import installed_version

    return installed_version("adfkit") or "0.0.0"


def __getattr__(name: str) -> Any:
    """A lazy public name: import its module once, then keep the name in this namespace."""
    import importlib

    if name == "__version__":
        value: Any = _version()
    elif name == "schema":  # a submodule (``from . import`` here would ask __getattr__ again)
        value = importlib.import_module(f"{__name__}.schema")
    elif name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AdfError",
    "AdfWarning",
    "AgentCollection",
    "AgentFile",
    "BlobError",
    "BlobTooLargeError",
    "CorruptFileError",
    "FileBusyError",
    "FleetResult",
    "FormatSpec",
    "MalformedRowError",
    "Mind",
    "NewerSchemaWarning",
    "NotAdfError",
    "NotSQLiteError",
    "NotTranscriptError",
    "Observation",
    "OutputPathError",
    "SimulationResult",
    "SlidingWindowPolicy",
    "ThresholdPolicy",
    "TrimToolResultsPolicy",
    "SettingsFileError",
    "SidecarError",
    "SkippedFilesWarning",
    "UnsafeSchemaError",
    "UnknownFormatError",
    "UnsupportedSchemaError",
    "__version__",
    "export",
    "export_compaction_dataset",
    "export_otlp",
    "formats",
    "list_sessions",
    "list_claude_code_sessions",
    "list_codex_sessions",
    "load_fleet",
    "load_taxonomy",
    "observe",
    "open",
    "open_adf",
    "open_claude_code",
    "open_codex",
    "register_compactor",
    "register_format",
    "run",
    "sample_path",
    "schema",
    "signature",
    "simulate",
    "simulate_sweep",
]
