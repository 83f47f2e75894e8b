"""Ground truth: the record of what a simulated agent really did.

:class:`GroundTruth` is filled in while a scenario runs and written beside each sample as
``<name>.truth.json`` (its field order is the file's key order); tests compare the reader's
frames with it. ``sha1`` fingerprints file contents and injected minds in it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


def sha1(s: str | bytes) -> str:
    return hashlib.sha1(s.encode("utf-8") if isinstance(s, str) else s).hexdigest()


@dataclass
class GroundTruth:
    """What a scenario really did.  ``to_json()`` gives the ``.truth.json`` text."""

    scenario: str
    seed: int
    schema_version: int
    threshold: int
    model_id: str
    live_seqs: list[int] = field(default_factory=list)
    history_seqs: list[int] = field(default_factory=list)
    lost_seqs: list[int] = field(default_factory=list)
    max_seq: int = 0
    n_live: int = 0
    n_history: int = 0
    compactions: list[dict] = field(default_factory=list)
    clears: list[dict] = field(default_factory=list)
    nudges: list[dict] = field(default_factory=list)
    context_blocks: dict[str, int] = field(default_factory=dict)
    context_rows: list[dict] = field(default_factory=list)
    turns: list[dict] = field(default_factory=list)
    planted: dict[str, Any] = field(default_factory=dict)
    signatures_ge3: dict[str, int] = field(default_factory=dict)
    mind_versions: list[dict] = field(default_factory=list)
    config_changes: list[dict] = field(default_factory=list)
    audit_rows: list[dict] = field(default_factory=list)
    inbox_ids: list[str] = field(default_factory=list)
    outbox_ids: list[str] = field(default_factory=list)
    deleted_files: list[str] = field(default_factory=list)
    reappended: list[dict] = field(default_factory=list)
    tokens_total: dict[str, int] = field(default_factory=dict)
    n_tool_calls: int = 0
    n_tool_errors: int = 0
    final_files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, d: dict) -> GroundTruth:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})
