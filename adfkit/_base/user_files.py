"""JSON files a user hands adfkit (price tables, taxonomies): read with one error form."""

from __future__ import annotations

import json
import os
from typing import Any

from adfkit._base.errors import SettingsFileError


def read_json_file(path: str | os.PathLike[str], what: str) -> Any:
    """The parsed JSON of ``path``; :class:`SettingsFileError` naming the file and ``what`` it
    is (``"price file"``) when it cannot be read, is not UTF-8 or is not JSON."""
    where = os.fspath(path)
    try:
        with open(where, encoding="utf-8") as f:
            return json.load(f)
    except OSError as exc:
        raise SettingsFileError(f"cannot read the {what} ({exc.strerror})", path=where) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SettingsFileError(f"the {what} is not valid JSON ({exc})", path=where) from None
