"""Plain (Tesseract) text whose lines start like a list or heading number ("1. Méthodologie")
must come out of the md writer as text that CommonMark shows exactly as printed, and out of the
txt writer without a stray backslash (issue 15 item 7)."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from daemon.document.blocksmd import write_md
from daemon.document.parse import parse_document
from daemon.writers.text import write_txt


@pytest.mark.parametrize(
    "line",
    ["1. Méthodologie", "2) Résultats", "12. Schlussfolgerung", "3.1 Verfahren", "- Punkt", "# Titel", "+ mehr"],
)
def test_numbered_line_shown_literally(line: str) -> None:
    doc = parse_document([f"{line}\n\nLe texte ici."], markdown=False)
    md = write_md(doc)
    html = MarkdownIt("commonmark").render(md)
    # Shown as the printed text: a paragraph, no list/heading, and no backslash left over.
    assert f"<p>{line}</p>" in html, (md, html)
    assert "\\" not in write_txt(doc)
