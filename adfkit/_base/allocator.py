"""pyarrow's allocations made with the C library's ``malloc`` while adfkit builds a table."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

#: pyarrow's own default allocator on Linux, the one :class:`system_allocator` stands in for.
_DEFAULT_BACKEND = "mimalloc"
#: The switch is the process's, so it is counted: the first block in (of any thread) sets
#: ``malloc``, the last one out puts the default back.
_LOCK = threading.Lock()
_holders = 0
_before: Any = None


class system_allocator:  # noqa: N801 - used as a function: ``with system_allocator():``
    """pyarrow's default allocator set to the C library's ``malloc`` for the time of the
    block, then put back, by an exception too (each buffer is freed by the allocator that made
    it, so buffers made inside live on safely after it).

    mimalloc, pyarrow's default, hands large blocks back to the system and faults fresh pages
    in for the next: on this project's 2-core virtual machine that cost big-runner x16's
    ``usage()`` 0.26-0.29 s of CPU against 0.14 s with ``malloc``, ``observe()`` 0.83-0.86 s
    against 0.58 s, and the index's second run of 40 agents' history 1.2 s against 0.35 s.

    Left alone: a process that chose its allocator (``ARROW_DEFAULT_MEMORY_POOL``, or a pool
    other than mimalloc set with :func:`pyarrow.set_memory_pool`), and a process that has not
    imported pyarrow (adfkit's fast usage path never does). Nests, and across threads: the
    default comes back when the last block of any thread is left. A class, as
    :class:`~.collector.gc_paused`.

    Examples
    --------
    >>> import pyarrow as pa
    >>> with system_allocator():
    ...     inside = pa.default_memory_pool().backend_name
    >>> inside == "system" or "ARROW_DEFAULT_MEMORY_POOL" in os.environ
    True
    """

    __slots__ = ("_held",)

    def __enter__(self) -> None:
        self._held = False
        pa = sys.modules.get("pyarrow")
        if pa is None or "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
            return
        global _holders, _before
        with _LOCK:
            if _holders == 0:
                before = pa.default_memory_pool()
                if before.backend_name != _DEFAULT_BACKEND:
                    return
                pa.set_memory_pool(pa.system_memory_pool())
                _before = before
            _holders += 1
            self._held = True

    def __exit__(self, *exc: object) -> None:
        if not self._held:
            return
        global _holders, _before
        with _LOCK:
            _holders -= 1
            if _holders == 0:
                sys.modules["pyarrow"].set_memory_pool(_before)
                _before = None
