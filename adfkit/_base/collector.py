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


#: Whether this process is adfkit's own command, marked by the console script
#: (``imports_frozen(entry=True)``): only there does :class:`imports_frozen` freeze.
_own_process = False


def own_process() -> bool:
    """Whether the console script marked this process as adfkit's own command
    (``imports_frozen(entry=True)``): nobody else's code runs in it, and nobody reads its help.

    Examples
    --------
    >>> own_process()  # a doctest run is nobody's command
    False
    """
    return _own_process


class imports_frozen:  # noqa: N801 - used as a function: ``with imports_frozen():``
    """The imports in the block made with the cyclic garbage collector paused; in adfkit's own
    command process, every object alive at the end (the modules, classes and functions
    imported) then moved out of the collector's sight for the rest of the process
    (:func:`gc.freeze`).

    Imports make long-lived objects, no garbage worth finding: without this, the collections
    their allocations trigger walk them, and every full collection afterwards walks them
    again (``adfkit report``, importing pandas then matplotlib, spent 60-90 ms of its ~1.2 s
    CPU in the collector that way). A freeze is process-wide (whatever garbage exists then is
    never collected), so only a process that is adfkit's own does it: the console script
    marks it so with ``entry=True`` as it imports the CLI, before any file is read; a command
    about to draw then imports matplotlib in a block of its own, before reading its files.
    Elsewhere (a test run, a program calling :func:`adfkit.cli.main`) the block only pauses
    the collector. The collector is back as it was afterwards, by an exception too.

    Examples
    --------
    >>> import gc
    >>> before = gc.get_freeze_count()
    >>> with imports_frozen():  # not the console script's process: paused, not frozen
    ...     kept = [[] for _ in range(3)]
    ...     paused = not gc.isenabled()
    >>> paused, gc.isenabled(), gc.get_freeze_count() == before
    (True, True, True)
    """

    __slots__ = ("_entry", "_was_on")

    def __init__(self, *, entry: bool = False) -> None:
        self._entry = entry

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        global _own_process
        _own_process = _own_process or self._entry
        if _own_process:
            gc.freeze()
        if self._was_on:
            gc.enable()
