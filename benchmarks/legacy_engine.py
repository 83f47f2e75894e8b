"""The process engine adfkit had before issue 37 (a hand-made scheduler: shared-memory claim
flags, pickle spill files, guided batches), kept here only so that ``fleet_engines.py`` can
measure the standard pool against it in the same run. Copied from ``adfkit/_facade/fleet.py``
as of af7fdfd, unchanged but for the names; not part of adfkit.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import multiprocessing
import os
import pickle
import tempfile
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

_CLAIMS: Any = None


def _busy(flag: bool) -> None:
    """Tell adfkit's loaders that every core runs one (no decoding thread), wherever this
    revision keeps the flag."""
    try:
        from adfkit._base import engines

        engines.IN_WORKER = flag
    except ImportError:
        from adfkit._facade import fleet

        fleet._LOCAL.busy_cores = flag


def _init_claims(claims: Any) -> None:
    global _CLAIMS
    _CLAIMS = claims


def _claim(claims: Any, index: int) -> bool:
    with claims.get_lock():
        if claims[index]:
            return False
        claims[index] = True
        return True


def _batch(func: Callable[..., Any], jobs: list[Any]) -> list[Any]:
    _busy(True)
    try:
        return [func(j) for j in jobs]
    finally:
        _busy(False)


def _batch_spilled(
    func: Callable[..., Any], jobs: list[Any], folder: str, index: int
) -> tuple[bool, Any] | None:
    if not _claim(_CLAIMS, index):
        return None
    results = _batch(func, jobs)
    name = None
    try:
        fd, name = tempfile.mkstemp(dir=folder, suffix=".pickle")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(results, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name)
        return False, results
    return True, name


def _mark_done(done: deque[int], k: int, _fut: Future[Any]) -> None:
    done.append(k)


def _unspill(value: tuple[bool, Any]) -> list[Any]:
    spilled, payload = value
    if not spilled:
        return list(payload)
    with open(payload, "rb") as fh:
        data = fh.read()
    os.unlink(payload)
    rows: list[Any] = pickle.loads(data)
    return rows


def _batches(n_items: int, n_procs: int) -> list[range]:
    out: list[range] = []
    i = 0
    while i < n_items:
        size = max(1, min(8, (n_items - i) // (n_procs * 4)))
        out.append(range(i, i + size))
        i += size
    return out


def run(func: Callable[..., Any], jobs: list[Any], workers: int | None = None) -> list[Any]:
    """``[func(job) for job in jobs]`` on the old scheduler, in input order."""
    results: list[Any] = [None] * len(jobs)
    n = min(workers or os.cpu_count() or 1, len(jobs))
    batches = _batches(len(jobs), n)

    def put(batch: range, values: list[Any]) -> None:
        for i, res in zip(batch, values, strict=True):
            results[i] = res

    if n <= 1:
        for b in batches:
            put(b, [func(jobs[i]) for i in b])
        return results
    ctx = multiprocessing.get_context()
    claims = ctx.Array(ctypes.c_bool, len(batches))
    with (
        tempfile.TemporaryDirectory(prefix="adfkit-fleet-", ignore_cleanup_errors=True) as tmp,
        ProcessPoolExecutor(
            max_workers=n - 1, mp_context=ctx, initializer=_init_claims, initargs=(claims,)
        ) as pool,
    ):
        futs: list[Future[Any]] = []
        done: deque[int] = deque()
        for k, b in enumerate(batches):
            fut = pool.submit(_batch_spilled, func, [jobs[i] for i in b], tmp, k)
            fut.add_done_callback(functools.partial(_mark_done, done, k))
            futs.append(fut)
        mine: set[int] = set()
        collected: set[int] = set()

        def collect(k: int) -> None:
            if k not in mine and k not in collected:
                collected.add(k)
                put(batches[k], _unspill(futs[k].result()))

        for k, b in enumerate(batches):
            if _claim(claims, k):
                mine.add(k)
                put(b, _batch(func, [jobs[i] for i in b]))
            while done:
                collect(done.popleft())
        for k in range(len(batches)):
            collect(k)
    return results
