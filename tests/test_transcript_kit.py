"""The transcript kit's drafts: what a parser builds becomes the finished row field for field."""

from __future__ import annotations

import dataclasses

from adfkit._sources.transcript.kit import RowDraft, TranscriptRow


def test_row_draft_final_copies_each_attribute_to_the_field_of_its_name() -> None:
    d = RowDraft("assistant", [{"type": "text", "text": "hi"}], 7, 1500)
    values = {
        "seq": 3,
        "model": "m",
        "tokens": {"input": 1},
        "kind_hint": "notice",
        "uuid": "u",
        "parent_uuid": "p",
        "call_key": "k",
        "sidechain": True,
        "agent_id": "a",
        "branch": "branch-1",
        "malformed": True,
        "note": "n",
        "ord": 2,
    }
    for k, v in values.items():
        setattr(d, k, v)
    d.lines.append(9)
    row = d.final()
    expected = {
        **values,
        "role": "assistant",
        "content": [{"type": "text", "text": "hi"}],
        "created_at": 1500,
        "line": 7,
        "lines": (7, 9),
    }
    assert {f.name: getattr(row, f.name) for f in dataclasses.fields(TranscriptRow)} == expected


def test_row_draft_without_usage_finishes_with_empty_tokens() -> None:
    row = RowDraft("user", [], 1, None).final()
    assert row.tokens == {} and row.lines == (1,) and row.created_at is None
