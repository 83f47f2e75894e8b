"""The formats adfkit reads, one package each; ``adfkit._core.registry.BUILTIN`` lists them.

A package's ``__init__`` holds its ``SPEC`` (:class:`adfkit._core.registry.FormatSpec`) and only
what recognition needs; its reader is imported when a file is opened.
"""
