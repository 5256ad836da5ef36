"""A scanned page's tables and paragraphs become document-model blocks directly
(daemon.pages.scantables.grid_table, daemon.document.markdown.markdown_paragraphs): the same
blocks the Markdown parser made of the page's text (its HTML tables and escaped paragraphs)
when that text was how they reached the writers, so no output changed (issue 36)."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st
from propgen import PROPS

from daemon.document.lines import letters, plain_paragraphs
from daemon.document.markdown import markdown_paragraphs, parse_markdown_page
from daemon.document.model import Paragraph, Table
from daemon.layerrecords import Grid, GridCell
from daemon.pages.scantables import ScannedPage, _scanned, grid_html, grid_table

# OCR cell texts with what HTML and Markdown treat specially: markup, entities, dollars,
# emphasis marks, whitespace runs, a ligature and a decomposed accent
CELL_TEXTS = st.lists(
    st.sampled_from(["Total", "12,50", "<b>", "a<b", "&amp;", "&", "$5", "$x$", "*", "**", "_x_", "`", "|", "~~",
                     "  ", "\t", "\n", "ﬁle", "e\u0301", "中文", "\\", "[1](x)", "#", "-", "1.", ">"]),
    max_size=5,
).map("".join)


@st.composite
def grids(draw: st.DrawFn) -> Grid:
    """Grids as the table finders make them: anchor cells row-major, some spans, some slots
    left without a cell, some cells empty."""
    n_rows, n_cols = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    taken: set[tuple[int, int]] = set()
    cells = []
    for r in range(n_rows):
        for c in range(n_cols):
            if (r, c) in taken or draw(st.integers(0, 9)) == 0:
                continue
            rs = draw(st.integers(1, n_rows - r)) if draw(st.booleans()) and draw(st.booleans()) else 1
            cs = draw(st.integers(1, n_cols - c)) if draw(st.booleans()) and draw(st.booleans()) else 1
            if any((r + dr, c + dc) in taken for dr in range(rs) for dc in range(cs)):
                rs = cs = 1
            taken |= {(r + dr, c + dc) for dr in range(rs) for dc in range(cs)}
            cells.append(GridCell(r, c, rs, cs, (0.0, 0.0, 1.0, 1.0), draw(CELL_TEXTS)))
    return Grid([float(x) for x in range(n_cols + 1)], [float(y) for y in range(n_rows + 1)], cells, filled=True)


def _parsed(text: str) -> list:  # type: ignore[type-arg]
    """What the Markdown parser makes of a page's text, as the document model did before."""
    return parse_markdown_page(unicodedata.normalize("NFC", letters(unicodedata.normalize("NFC", text))))


@PROPS
@given(grids())
def test_a_grid_is_the_table_its_html_parses_to(grid: Grid) -> None:
    table = grid_table(grid)
    parsed = [b for b in _parsed(grid_html(grid)) if isinstance(b, Table)]
    assert ([table] if table is not None else []) == parsed


def test_a_scanned_page_is_the_blocks_its_text_parses_to() -> None:
    """Paragraphs with Markdown marks (escaped by ``plain_paragraphs``; an escaped ``$x$`` pair
    is math to the inline normaliser, as on every Markdown page) around a table with a span."""
    grid = Grid([0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0], [
        GridCell(0, 0, 1, 2, (0.0, 0.0, 2.0, 1.0), "Item & <price>"),
        GridCell(1, 0, 1, 1, (0.0, 1.0, 1.0, 2.0), "*Tea*"), GridCell(1, 1, 1, 1, (1.0, 1.0, 2.0, 2.0), "$3"),
        GridCell(2, 0, 1, 1, (0.0, 2.0, 1.0, 3.0), "Total"), GridCell(2, 1, 1, 1, (1.0, 2.0, 2.0, 3.0), "$3"),
    ], filled=True)
    before = plain_paragraphs("Invoice 42 for *you*\nsigned: J. Doe\n\nCosts $x$ and 50% <off>")
    after = plain_paragraphs("# 1. Thanks _all_ ﬁne")
    page = _scanned([*before, grid, *after])
    assert isinstance(page, ScannedPage)
    assert list(page.blocks) == _parsed(page.text)
    assert [type(b) for b in page.blocks] == [Paragraph, Paragraph, Table, Paragraph]
    assert page.text.count("<table>") == 1 and "<th colspan=\"2\">Item &amp; &lt;price&gt;</th>" in page.text


def test_markdown_paragraphs_are_those_of_the_markdown_page() -> None:
    paras = plain_paragraphs("A line with \\$y\\$ and `code`\n\n- not a list\n\n> not a quote")
    assert markdown_paragraphs(paras) == _parsed("\n\n".join(paras))
