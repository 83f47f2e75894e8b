"""Run one function over many jobs on an engine that is someone else's: ``serial``,
``processes`` (:class:`concurrent.futures.ProcessPoolExecutor`) or ``dask``
(``dask.distributed``: a cluster the caller's client points at, or a ``LocalCluster`` started
and closed for the call). Results come back in input order; what a job raises is raised here
(the fleet functions catch their own failures and return them as error rows).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from adfkit._base.errors import AdfError

T = TypeVar("T")
R = TypeVar("R")

ENGINES = ("serial", "processes", "dask")

#: True in a process of the process engine (every core runs a job: a reader starts no
#: decoding thread of its own).
IN_WORKER = False


def _mark_worker() -> None:
    global IN_WORKER
    IN_WORKER = True


def run(
    func: Callable[[T], R],
    jobs: Iterable[T],
    *,
    engine: str = "processes",
    workers: int | None = None,
    client: Any = None,
    progress: bool | None = None,
    desc: str = "",
) -> list[R]:
    """``[func(job) for job in jobs]`` on ``engine``, in input order.

    ``engine``: ``"serial"`` (this process), ``"processes"`` (a process pool of ``workers``
    processes, default all cores; ``func`` and the jobs must pickle: a module-level function,
    or a :func:`functools.partial` of one) or ``"dask"`` (on ``client``, a
    ``dask.distributed.Client``; with none, a ``LocalCluster`` of ``workers`` one-thread
    workers). ``progress``: a ``tqdm.auto`` bar (default: from 20 jobs on).

    Examples
    --------
    >>> run(abs, [-1, 2, -3], engine="serial")
    [1, 2, 3]
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {list(ENGINES)}, got {engine!r}")
    todo = list(jobs)
    with _progress(len(todo), progress, desc) as bar:
        if engine == "serial" or (engine == "processes" and len(todo) <= 1):
            return [_step(func, j, bar) for j in todo]
        if engine == "processes":
            return _processes(func, todo, workers, bar)
        return _dask(func, todo, client, workers, bar)


def _step(func: Callable[[T], R], job: T, bar: Any) -> R:
    out = func(job)
    bar.update()
    return out


def chunk_size(n_jobs: int, n_procs: int) -> int:
    """Jobs sent to a process at a time: about four chunks per process (so that processes
    finish close together), at most 8 (so that results stream back while others run).

    >>> chunk_size(200, 2), chunk_size(10, 2), chunk_size(1000, 16)
    (8, 1, 8)
    """
    return max(1, min(8, n_jobs // (n_procs * 4)))


def _processes(func: Callable[[T], R], jobs: list[T], workers: int | None, bar: Any) -> list[R]:
    import multiprocessing
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    n = min(workers or os.cpu_count() or 1, len(jobs))
    ctx = multiprocessing.get_context()
    out: list[R] = []
    with (
        tempfile.TemporaryDirectory(prefix="adfkit-engine-", ignore_cleanup_errors=True) as tmp,
        ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_mark_worker) as pool,
    ):
        spilled = functools.partial(_spill, func, tmp)
        for res in pool.map(spilled, jobs, chunksize=chunk_size(len(jobs), n)):
            out.append(_unspill(res))
            bar.update()
    return out


# A worker's result comes back through a file, not the pool's pipe: a fleet's frames are
# hundreds of MB, and through the one result pipe (under a lock, 64 KB at a time, into a buffer
# that grows, unpickled by the pool's thread) a worker with a result waits while the parent
# drains the other's. 200 generated agents' history (317 MB of frames), best of 4 interleaved
# rounds on a loaded 2-core machine: serial 4.12 s CPU, the pipe 6.25 s, files 5.57 s.


def _spill(func: Callable[[T], R], folder: str, job: T) -> tuple[bool, Any]:
    """``func(job)`` pickled to a file in ``folder``: ``(True, its name)``; ``(False, the
    result)`` when the file cannot be written (it then comes back through the pipe)."""
    import pickle
    import tempfile

    result = func(job)
    name = None
    try:
        fd, name = tempfile.mkstemp(dir=folder, suffix=".pickle")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name)
        return False, result
    return True, name


def _unspill(res: tuple[bool, Any]) -> Any:
    """The result :func:`_spill` returned, read back (its file removed)."""
    import pickle

    spilled, value = res
    if not spilled:
        return value
    with open(value, "rb") as fh:
        data = fh.read()
    os.unlink(value)
    return pickle.loads(data)


def _dask(
    func: Callable[[T], R], jobs: list[T], client: Any, workers: int | None, bar: Any
) -> list[R]:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise AdfError(
            'engine="dask" needs dask, which is not installed: pip install "adfkit[dask]"'
        ) from None
    with contextlib.ExitStack() as own:
        if client is None:
            cluster = own.enter_context(
                LocalCluster(
                    n_workers=workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    dashboard_address=None,
                )
            )
            client = own.enter_context(Client(cluster))
        futs = client.map(func, jobs, pure=False)
        where = {f.key: i for i, f in enumerate(futs)}
        results: list[Any] = [None] * len(jobs)
        for fut in as_completed(futs):
            results[where[fut.key]] = fut.result()
            bar.update()
        return results


class _NoBar(contextlib.AbstractContextManager["_NoBar"]):
    """The progress bar when none is shown (tqdm is not even imported: it costs 0.2 s)."""

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


def _progress(total: int, progress: bool | None, desc: str) -> Any:
    show = total >= 20 if progress is None else progress
    if not show:
        return _NoBar()
    from tqdm.auto import tqdm

    # every job drawn (mininterval 0): a bar's last state never depends on the machine's
    # speed (at the default 0.1 s a quick run showed 0/3 and cleared)
    return tqdm(total=total, desc=desc, unit="file", leave=False, mininterval=0)
