"""``list_sessions`` where the agent's folder is not there: no session, the listing's columns."""

from __future__ import annotations

from pathlib import Path

import pytest

import adfkit
from adfkit._base.errors import AdfError
from adfkit._core import registry

LISTED = [s.name for s in registry.specs() if s.list_sessions is not None]


@pytest.mark.parametrize("name", LISTED)
def test_missing_default_folder_lists_no_session_with_every_column(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HOME without the agent's folder: an empty listing with the same columns as the
    listing of a folder of the agent's that holds no session."""
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    spec = registry.spec(name)
    got = adfkit.list_sessions(format=name)
    (tmp_path / "empty").mkdir()
    want = ["format", *spec.list_sessions(tmp_path / "empty").columns]
    assert len(got) == 0
    assert list(got.columns) == want
    assert {"path", "modified"} <= set(got.columns)
    assert not (tmp_path / "nobody").exists()  # nothing created in HOME


def test_missing_default_folders_list_every_format_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No agent's folder at all: every listing's columns, no row."""
    monkeypatch.setenv("HOME", str(tmp_path))
    got = adfkit.list_sessions()
    assert len(got) == 0
    assert {"path", "session_id", "modified", "cwd", "model", "error"} <= set(got.columns)


@pytest.mark.parametrize("name", LISTED)
def test_missing_named_folder_is_an_error_naming_it(name: str, tmp_path: Path) -> None:
    with pytest.raises(AdfError, match="nowhere"):
        adfkit.list_sessions(tmp_path / "nowhere", format=name)
