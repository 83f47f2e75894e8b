"""Holding Python's cyclic garbage collector off while many small acyclic objects are made."""

from __future__ import annotations

import gc


class gc_paused:  # noqa: N801 - used as a function: ``with gc_paused():``
    """Pause the cyclic garbage collector while a reader builds many small acyclic objects (the
    collector's passes over them only cost: about 2x on a large transcript). Nests: an inner
    pause leaves the collector as the outer one wants it. The collector is back as it was
    when the outermost pause is left, by an exception too.

    A class, not a generator-based context manager: leaving it allocates nothing, so the one
    collection the objects made during the pause cost when the collector is back on comes when
    the caller next allocates, as after a plain ``gc.enable()``. With ``settle=True`` the
    outermost pause makes that young collection itself as it leaves (``gc.collect(0)``: the
    objects made in the pause and still alive, only): a caller that times one piece of work
    after another (the facade, one table after another) pays it in the piece that made them,
    not in the next one.

    Examples
    --------
    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """

    __slots__ = ("_settle", "_was_on")

    def __init__(self, *, settle: bool = False) -> None:
        self._settle = settle

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_on:
            gc.enable()
            if self._settle:
                gc.collect(0)
