"""mkdocs hooks: ``<!-- catalog -->`` in a page becomes the table catalog's grains
(``adfkit._facade.catalog.grains_markdown``), so the docs list exactly the tables adfkit has."""

from __future__ import annotations

from typing import Any

MARK = "<!-- catalog -->"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARK not in markdown:
        return markdown
    from adfkit._facade.catalog import grains_markdown

    return markdown.replace(MARK, grains_markdown())
