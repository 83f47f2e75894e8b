"""One module per agent, each with ``AGENT`` (the folder name under
``tests/fixtures/recorded/``), ``PACKAGE`` and ``VERSION`` (what npm installs) and
``record(ctx: drive.Context) -> drive.Recorded``: install, configure a fresh HOME, drive the
scenarios against a ``server.Recorder``, and collect the files the agent wrote. A headless
mode that cannot do something (a manual compaction, a subagent) says so in
``Recorded.notes``; it is never faked."""
