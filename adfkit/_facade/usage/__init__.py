"""Usage per session and day, written once: what ``adfkit usage``, the ``usage`` and
``usage_days`` tables of fleets, exports and the index count.

- :mod:`.frames`: the calls that count for an agent (its own and its subagents':
  ``usage_with_subagents``) and its ``usage_days`` frame, from the tables.
- :mod:`.days`: the rule of a day (``day_rows``) and the command's sums and text (``summarize``,
  ``render``) over plain rows, without pandas.
- :mod:`.reading`: many files read for ``adfkit usage``: a format's ``figures`` fast path
  (:class:`~adfkit._core.registry.FormatSpec`), the index's rows, else the full table.
"""
