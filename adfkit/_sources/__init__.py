"""The formats adfkit reads, one package each, found by the registry
(:func:`adfkit._core.registry.with_discovered`: every package here whose ``__init__`` assigns a
``SPEC``). How a format package names its parts: ``docs/formats.md`` ("Adding a format").

A package's ``__init__`` holds its ``SPEC`` (:class:`adfkit._core.registry.FormatSpec`) and only
what recognition needs; its reader is imported when a file is opened.
"""
