"""Slow independent jobs (a notebook run, an ``adfkit report``) started ahead of the tests that
need them and run two at a time, each at most once per session.

Each job is a kernel or a subprocess that keeps one core busy; a test that waits on its job
while the next one runs uses the machine's second core. A test asks for the result of exactly
the job it checks, and fails on that job's own error (the exception is re-raised in the test),
so what each test proves is unchanged; only the waiting overlaps.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

#: Jobs run at once: the cores of this machine, at most 2 (each job is a whole process).
WORKERS = max(1, min(2, os.cpu_count() or 1))


class Background:
    """Jobs by key: ``start`` queues one (a key queued again is the same job), ``result`` waits
    for it and returns its value or raises its exception. ``close`` drops what was queued and
    not started, and waits for what runs."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="background")
        self._jobs: dict[Hashable, Future[Any]] = {}
        self._lock = threading.Lock()

    def start(self, key: Hashable, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        with self._lock:
            if key not in self._jobs:
                self._jobs[key] = self._pool.submit(func, *args, **kwargs)

    def result(self, key: Hashable) -> Any:
        return self._jobs[key].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
