"""AgentFile.mind(): mind.md sections, mind/<slug>.md pages with front matter, mind/log.md."""

from __future__ import annotations

import pandas as pd
import pytest
from adfbuild import build, row, text
from conftest import runtime_fixture, sample

import adfkit
from adfkit import Mind, schema
from adfkit._analysis.mind import parse_front_matter, split_sections
from adfsynth.scenarios import MIND_PAGES

INDEX = """# Mind

Short index.

## Always

- Be brief.
- Cite [S12].

## Pages

- [Tides](adf-file://mind/tides.md) — tide tables

```md
## Not a heading (inside a code fence)
```

## Rules

- Never guess.

## Extra

free text
"""

TIDES = """---
type: reference
description: "tide tables: where they live"
status: active  # still used
stale_after: 2026-09-01
sources: [adf-audit://seq/412, "adf-file://imported/tides.csv"]
owner: harbour
---
# Tides

Body line.
"""

CREW = """---
type: person
sources:
  - adf-audit://seq/7
  - 'adf-audit://seq/9'
---
# Crew
"""

LOOSE = "# Loose page\n\nNo front matter here.\n"

LOG = """# Mind Log

<!-- newest first -->

## [2026-06-03] update | mind/tides.md
- new table [S40]

## [2026-06-02] lint | mind/crew.md
- tidy

## [2026-06-01] ingest | mind/tides.md
- first version
- second line

## Something else
stray
"""


@pytest.fixture
def mind_file(tmp_path):
    return build(
        tmp_path / "m.adf",
        loop=[row(1, "user", text("hi"))],
        files={
            "mind.md": INDEX,
            "mind/tides.md": TIDES,
            "mind/crew.md": CREW,
            "mind/loose.md": LOOSE,
            "mind/log.md": LOG,
            "notes/other.md": "# not a page",
        },
    )


def test_index_sections(mind_file):
    m = adfkit.open_adf(mind_file).mind()
    assert isinstance(m, Mind)
    assert m.index == {
        "": "# Mind\n\nShort index.",
        "Always": "- Be brief.\n- Cite [S12].",
        "Pages": "- [Tides](adf-file://mind/tides.md) — tide tables\n\n"
        "```md\n## Not a heading (inside a code fence)\n```",
        "Rules": "- Never guess.",
        "Extra": "free text",
    }


def test_pages_with_front_matter(mind_file):
    p = adfkit.open_adf(mind_file).mind().pages.set_index("slug")
    assert sorted(p.index) == ["crew", "loose", "tides"]
    t = p.loc["tides"]
    assert t["path"] == "mind/tides.md"
    assert (t["type"], t["description"], t["status"], t["stale_after"]) == (
        "reference",
        "tide tables: where they live",
        "active",
        "2026-09-01",
    )
    assert t["sources"] == ("adf-audit://seq/412", "adf-file://imported/tides.csv")
    assert t["owner"] == "harbour"  # an extra front matter key becomes a column
    assert t["title"] == "Tides" and t["linked"] and pd.isna(t["problems"])
    assert t["body"] == "# Tides\n\nBody line.\n"
    assert t["size"] == len(TIDES.encode())
    c = p.loc["crew"]
    assert c["sources"] == ("adf-audit://seq/7", "adf-audit://seq/9")
    assert pd.isna(c["description"]) and not c["linked"]
    loose = p.loc["loose"]
    assert loose["problems"] == "no front matter" and pd.isna(loose["type"])
    assert loose["sources"] == () and loose["title"] == "Loose page"


def test_columns_and_dtypes(mind_file):
    m = adfkit.open_adf(mind_file).mind()
    assert list(m.pages.columns) == [*schema.MIND_PAGES, "owner"]
    for c, dt in schema.MIND_PAGES.items():
        assert str(m.pages[c].dtype) == dt, c
    assert list(m.log.columns) == list(schema.MIND_LOG)
    for c, dt in schema.MIND_LOG.items():
        assert str(m.log[c].dtype) == dt, c


def test_log_timeline(mind_file):
    log = adfkit.open_adf(mind_file).mind().log
    assert log["position"].tolist() == [0, 1, 2, 3]
    assert log["date"].dt.strftime("%Y-%m-%d").tolist()[:3] == [
        "2026-06-03",
        "2026-06-02",
        "2026-06-01",
    ]
    assert pd.isna(log["date"].iloc[3])
    assert log["action"].tolist()[:3] == ["update", "lint", "ingest"]
    assert pd.isna(log["action"].iloc[3])
    assert log["title"].tolist() == [
        "mind/tides.md",
        "mind/crew.md",
        "mind/tides.md",
        "Something else",
    ]
    assert log["page"].tolist()[:3] == ["mind/tides.md", "mind/crew.md", "mind/tides.md"]
    assert log["body"].iloc[2] == "- first version\n- second line"


@pytest.mark.parametrize("files", [{}, {"mind.md": ""}])
def test_missing_or_empty_mind(tmp_path, files):
    m = adfkit.open_adf(build(tmp_path / "e.adf", files=files)).mind()
    assert m.index == {"Always": "", "Pages": "", "Rules": ""}
    assert m.pages.empty and list(m.pages.columns) == list(schema.MIND_PAGES)
    assert m.log.empty and list(m.log.columns) == list(schema.MIND_LOG)
    assert repr(m) == "<Mind: index sections none; 0 page(s); 0 log entries>"


def test_front_matter_parser_edge_cases():
    assert parse_front_matter("no front matter") == (None, "no front matter")
    assert parse_front_matter("---\ntype: x\n(no closing fence)") == (
        None,
        "---\ntype: x\n(no closing fence)",
    )
    fm, body = parse_front_matter("\ufeff---\r\ntype: 'it''s'\r\nempty:\r\n---\r\nB")
    assert fm == {"type": "it's", "empty": ""} and body == "B"
    assert split_sections("## always\nx")["Always"] == "x"


def test_sample_mind_keeper_pages_match_synth():
    """The simulator writes the pages of its ``MIND_PAGES`` (slug, type, description)."""
    m = adfkit.open_adf(sample("mind-keeper")).mind()
    got = sorted(m.pages[["slug", "type", "description"]].itertuples(index=False, name=None))
    assert got == sorted(MIND_PAGES)
    assert m.pages["linked"].all()
    assert set(m.log["action"]) <= {"ingest", "update", "lint"}
    ingested = set(m.log.loc[m.log["action"] == "ingest", "page"])
    assert ingested == {f"mind/{slug}.md" for slug, _, _ in MIND_PAGES}


def test_runtime_mind_keeper_is_well_formed():
    m = adfkit.open_adf(runtime_fixture("mind-keeper")).mind()
    assert m.index["Always"] and m.index["Pages"]
    assert len(m.pages) > 0 and m.pages["problems"].isna().all()
    assert m.pages["type"].notna().all() and m.pages["linked"].all()
    assert len(m.log) > 0 and m.log["date"].notna().all()
    assert set(m.log["action"]) <= {"ingest", "update", "lint"}
