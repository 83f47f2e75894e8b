"""The names an OpenHands conversation folder is recognised by (no file is read)."""

from __future__ import annotations

import os
import re
from pathlib import Path

STATE_FILE = "base_state.json"
EVENTS_DIR = "events"
EVENT_NAME = re.compile(r"^event-(\d+)-(.+)\.json$")


def is_conversation(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a folder holding ``base_state.json`` or an ``events/`` folder with
    ``event-<idx>-<id>.json`` files (looked at by name only, at most 1,000 entries). A single
    event file, ``base_state.json`` alone, or any other file is not a conversation.

    Examples
    --------
    >>> is_conversation("sample_agents/long-runner.adf"), is_conversation("no/such/folder")
    (False, False)
    """
    p = Path(path)
    try:
        if not p.is_dir():
            return False
        if (p / STATE_FILE).is_file():
            return True
        ev = p / EVENTS_DIR
        if not ev.is_dir():
            return False
        with os.scandir(ev) as it:
            for n, entry in enumerate(it):
                if EVENT_NAME.match(entry.name):
                    return True
                if n >= 1000:
                    break
    except OSError:
        return False
    return False
