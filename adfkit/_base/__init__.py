"""Foundation: errors, JavaScript semantics, config, input files, output paths, HTML and redaction.

Imports nothing from adfkit but each other (and :mod:`adfkit.schema`)."""
