"""Reading an OpenHands conversation folder: its files, read-only and capped.

``base_state.json`` and the ``events/event-<idx>-<id>.json`` files are read whole, each only if
it is a regular file (a FIFO or a device never blocks the read) and at most its cap; the folder
listing is checked for missing indexes (gaps, fewer files than ``.eventlog-len-<N>.marker``
states). What cannot be read becomes a finding, never an exception.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adfkit._base.files import open_regular
from adfkit._sources.openhands.names import EVENT_NAME, EVENTS_DIR, STATE_FILE, is_conversation
from adfkit._sources.transcript.kit import Findings, loads_line

#: Cap on one event file (real ones are ~1-100 KB; a huge observation is skipped with a finding).
DEFAULT_MAX_EVENT_BYTES = 32 * 1024**2
#: Cap on the number of event files read (the rest are left with a finding).
DEFAULT_MAX_EVENTS = 200_000
#: Cap on the bytes of all event files read (each parsed event costs Python objects too).
DEFAULT_MAX_TOTAL_BYTES = 2 * 1024**3
#: Cap on ``base_state.json`` (per-call usage lists grow with the calls: ~250 bytes each).
DEFAULT_MAX_STATE_BYTES = 256 * 1024**2

_MARKER = re.compile(r"^\.eventlog-len-(\d+)\.marker$")
_WHAT = "OpenHands conversation folder"


def conversation_folder(path: str | os.PathLike[str]) -> Path | None:
    """The conversation folder ``path`` names (itself, or the parent of its ``events/``), or
    None when it is not one (:func:`adfkit._sources.openhands.is_conversation`)."""
    p = Path(path)
    if is_conversation(p):
        return p
    if p.name == EVENTS_DIR and is_conversation(p.parent):
        return p.parent
    return None


def read_capped(path: str | Path, cap: int) -> tuple[bytes | None, int, str | None]:
    """``(data, size, problem)`` of one file, read-only and only if it is a regular file:
    ``data`` is None when the file is larger than ``cap`` bytes (never read past it) or cannot
    be read, ``problem`` says why."""
    try:
        fd, st = open_regular(path)
    except ValueError as e:
        return None, 0, f"is {e}, not a regular file"
    except OSError as e:
        return None, 0, f"cannot be read ({e.strerror})"
    try:
        if st.st_size > cap:
            return None, int(st.st_size), f"{st.st_size:,} bytes, over the cap of {cap:,}"
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
    except OSError as e:
        return None, int(st.st_size), f"cannot be read ({e.strerror})"
    finally:
        os.close(fd)
    if len(data) > cap:  # grew while read
        return None, len(data), f"over the cap of {cap:,} bytes"
    return data, len(data), None


#: Digits an event file's index may have: the writer pads to 5; more than 12 is no event
#: log (an index must stay a row number: Int64, with room for arithmetic).
MAX_INDEX_DIGITS = 12


@dataclass(slots=True)
class EventFile:
    idx: int
    name: str
    obj: dict[str, Any] | None = None


def list_events(folder: Path, fnd: Findings, max_events: int) -> tuple[list[EventFile], int | None]:
    """The event files by idx, and the length the ``.eventlog-len-<N>.marker`` states."""
    ev = folder / EVENTS_DIR
    files: list[EventFile] = []
    marker: int | None = None
    other = 0
    if not ev.is_dir():
        fnd.add("no_events_folder", "warning", None, "no events/ folder: no event was read")
        return files, None
    huge: list[str] = []
    with os.scandir(ev) as it:
        for entry in it:
            name = entry.name
            m = EVENT_NAME.match(name)
            if m and len(m.group(1)) > MAX_INDEX_DIGITS:
                huge.append(name)
                continue
            if m:
                files.append(EventFile(int(m.group(1)), name))
                continue
            mk = _MARKER.match(name)
            if mk and len(mk.group(1)) <= MAX_INDEX_DIGITS:
                marker = int(mk.group(1))
            elif not name.startswith("."):
                other += 1
    if other:
        fnd.add("unknown_file", "info", None, f"{other} file(s) in events/ not named event-*.json")
    if huge:
        fnd.add(
            "bad_event_index",
            "warning",
            None,
            f"{len(huge)} event file(s) with an index of more than {MAX_INDEX_DIGITS} digits "
            f"(the first: {huge[0][:80]}); not read",
        )
    files.sort(key=lambda f: (f.idx, f.name))
    if len(files) > max_events:
        fnd.add(
            "event_count_cap",
            "error",
            None,
            f"{len(files):,} event files, over max_events={max_events:,}: read the first "
            f"{max_events:,}",
        )
        files = files[:max_events]
    return files, marker


def read_events(
    folder: Path, files: list[EventFile], fnd: Findings, cap: int, total_cap: int
) -> None:
    """Parse each event file into ``obj`` (None when it cannot be read, with a finding); stop
    after ``total_cap`` bytes in all (the rest stay unread, one ``total_size_cap`` finding)."""
    ev = os.fspath(folder / EVENTS_DIR)
    join = os.path.join  # a Path per file costs more than reading a small one
    last = files[-1].idx if files else -1
    held = 0
    for f in files:
        line = f.idx + 1
        data, _size, problem = read_capped(join(ev, f.name), min(cap, max(total_cap - held, 0)))
        if data is None and held + _size > total_cap and _size <= cap:
            fnd.add(
                "total_size_cap",
                "error",
                line,
                f"stopped at {f.name}: the event files read reach max_total_bytes="
                f"{total_cap:,}; the rest are not read",
            )
            break
        if data is not None:
            held += len(data)
        if data is None:
            check = "huge_event_file" if problem and "cap" in problem else "unreadable_event"
            fnd.add(check, "warning", line, f"{f.name}: {problem}; skipped")
            continue
        obj, problem = loads_line(data) if data.strip() else (None, "empty file")
        if obj is None:
            if f.idx == last:
                fnd.add(
                    "truncated_last_event",
                    "warning",
                    line,
                    f"{f.name}: the last event file is {problem or 'not valid JSON'} (being "
                    "written when copied?); read up to the event before",
                )
            else:
                fnd.add("bad_json", "warning", line, f"{f.name}: {problem}; skipped")
            continue
        if problem is not None:
            fnd.add("encoding", "warning", line, f"{f.name}: {problem}")
        if type(obj) is not dict:
            fnd.add("not_an_object", "warning", line, f"{f.name}: JSON but not an object; skipped")
            continue
        f.obj = obj


def check_sequence(files: list[EventFile], marker: int | None, fnd: Findings) -> None:
    """Missing event files: gaps in the idx sequence, fewer files than the marker states,
    one idx written twice."""
    seen: set[int] = set()
    dup = 0
    for f in files:
        if f.idx in seen:
            dup += 1
        seen.add(f.idx)
    if dup:
        fnd.add("duplicate_event_index", "warning", None, f"{dup} event index(es) used twice")
    if not files:
        return
    gaps: list[tuple[int, int]] = []
    prev = -1
    for i in sorted(seen):
        if i > prev + 1:
            gaps.append((prev + 1, i - 1))
        prev = i
    if gaps:
        n = sum(b - a + 1 for a, b in gaps)
        where = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in gaps[:5])
        fnd.add(
            "missing_event_files",
            "error",
            gaps[0][0] + 1,
            f"{n} event file(s) missing (index {where}{', ...' if len(gaps) > 5 else ''})",
        )
    if marker is not None and marker > prev + 1:
        fnd.add(
            "missing_event_files",
            "error",
            None,
            f"events/.eventlog-len-{marker}.marker states {marker} events, the last file is "
            f"index {prev}: {marker - prev - 1} missing at the end",
        )


def read_state(folder: Path, fnd: Findings) -> dict[str, Any]:
    p = folder / STATE_FILE
    if not p.exists():
        fnd.add("no_base_state", "warning", None, f"no {STATE_FILE}: no usage, model or settings")
        return {}
    data, _size, problem = read_capped(p, DEFAULT_MAX_STATE_BYTES)
    if data is None:
        fnd.add("unreadable_base_state", "error", None, f"{STATE_FILE} {problem}")
        return {}
    obj, problem = loads_line(data)
    if not isinstance(obj, dict):
        fnd.add(
            "bad_base_state",
            "error",
            None,
            f"{STATE_FILE}: {problem or 'not a JSON object'}: no usage, model or settings",
        )
        return {}
    return obj
