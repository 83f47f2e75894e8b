"""The one part of the build pyproject.toml cannot say: which packages the wheel holds.

Every package under ``adfkit/`` is found (a format package added as ``adfkit/_sources/<name>/``
ships with no edit anywhere; ``adfkit/data``, a folder of JSON without ``__init__.py``, too),
plus the two folders pyproject.toml's ``[tool.setuptools.package-dir]`` maps into it from the
repository's root: ``notebooks/`` as ``adfkit.notebooks`` and ``sample_agents/`` as
``adfkit.sample_agents``. pyproject's ``packages`` is a list or a ``find`` table, never both,
and ``find`` cannot see a folder that lives outside ``adfkit/``: hence these lines. Everything
else (metadata, the mapping, which data files ship) is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

MAPPED = ["adfkit.notebooks", "adfkit.sample_agents"]

setup(
    packages=[
        *find_namespace_packages(include=["adfkit", "adfkit.*"], exclude=["*.__pycache__"]),
        *MAPPED,
    ]
)
