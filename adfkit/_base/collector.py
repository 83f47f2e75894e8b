"""Holding Python's cyclic garbage collector off while many small acyclic objects are made."""

from __future__ import annotations

import gc


class gc_paused:  # noqa: N801 - used as a function: ``with gc_paused():``
    """Pause the cyclic garbage collector while a reader builds many small acyclic objects (the
    collector's passes over them only cost: about 2x on a large transcript). Nests: an inner
    pause leaves the collector as the outer one wants it.

    A class, not a generator-based context manager: leaving it allocates nothing, so the one
    collection the objects made during the pause cost when the collector is back on comes when
    the caller next allocates, as after a plain ``gc.enable()``.

    Examples
    --------
    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """

    __slots__ = ("_was_on",)

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_on:
            gc.enable()
