"""Document model: the Markdown/plain-text parsers, inline normalisation, table grids."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.document.inline import escape_plain, normalize_inline, parse_inline, plain_text
from daemon.document.markdown import parse_markdown_page
from daemon.document.model import Document, Heading, Image, ListBlock, MathBlock, Paragraph, Table
from daemon.document.parse import parse_document
from daemon.document.tables import parse_html_table
from daemon.writers.convert import join_raw_pages, split_raw_pages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "model_outputs"


def _table(blocks: list) -> Table:
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 1, blocks
    return tables[0]


# --- inline normalisation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "want"),
    [
        (r"the step \(\eta_t\) here", r"the step $\eta_t$ here"),
        (r"display \[ a+b \] inline", r"display $$a+b$$ inline"),
        (r"escaped \$x^2 + y^2\$ math", r"escaped $x^2 + y^2$ math"),
        (r"escaped \$\alpha\$ too", r"escaped $\alpha$ too"),
        (r"\$x\$", r"$x$"),
        (r"costs \$5 and \$10", r"costs \$5 and \$10"),  # money stays money
        (r"costs $5 and $10", r"costs \$5 and \$10"),
        (r"price $3.50, or $x$", r"price \$3.50, or $x$"),
        (r"50$ per month", r"50\$ per month"),
        (r"$$E=mc^2$$", r"$$E=mc^2$$"),
        (r"code `$x$` stays", r"code `$x$` stays"),
        (r"math $\$5$ keeps its escape", r"math $\$5$ keeps its escape"),
        ("line $a\nb$ two", "line \\$a\nb\\$ two"),  # inline math never spans lines
    ],
)
def test_normalize_inline(src: str, want: str) -> None:
    assert normalize_inline(src) == want
    assert normalize_inline(want) == want  # idempotent


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="$\\()[]x5 ^_`a\n", max_size=30))
def test_normalize_inline_idempotent_and_balanced(s: str) -> None:
    once = normalize_inline(s)
    assert normalize_inline(once) == once
    # every math run the runs parser finds is closed: no stray "$" leaks into text runs
    for r in parse_inline(once):
        if r.kind == "text":
            assert "$" not in r.text or "\\$" in once or "`" in once


def test_parse_inline_styles_math_and_code_are_opaque() -> None:
    runs = parse_inline(r"**bold *both*** and $a*b*c$ and `x*y*z` and file_name_here <sup>2</sup> &amp;")
    kinds = [(r.kind, r.text, r.bold, r.italic, r.sup) for r in runs]
    assert ("text", "bold ", True, False, False) in kinds
    assert ("text", "both", True, True, False) in kinds
    assert ("math", "a*b*c", False, False, False) in kinds
    assert ("code", "x*y*z", False, False, False) in kinds
    assert ("text", "2", False, False, True) in kinds
    assert plain_text(r"file_name_here &amp; **b**") == "file_name_here & b"


def test_plain_text_links_images_breaks_scripts() -> None:
    assert plain_text("[site](https://x.org) and <https://y.org>") == "site (https://x.org) and https://y.org"
    assert plain_text("![Fig](a.png)") == "[image: Fig]"
    assert plain_text("a<br>b\nc") == "a\nb\nc"
    assert plain_text("m<sup>2</sup> H<sub>2</sub>O 1<sup>er</sup>") == "m² H₂O 1er"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n*_$`<[]~|#\\&"), max_size=40))
def test_plain_text_roundtrip(s: str) -> None:
    """Tesseract text survives the model exactly: whatever it contains is never taken as markup."""
    lines = [ln.strip() for ln in s.split("\n")]
    text = "\n".join(ln for ln in lines if ln)
    assert plain_text(escape_plain(text)) == text


# --- tables ---------------------------------------------------------------------------------


def test_html_table_spans_headers_and_inline_formatting() -> None:
    t = parse_html_table(
        """<table border="1" class="dataframe"><thead>
        <tr><th rowspan="2">Method</th><th colspan="2">A <b>set</b></th></tr>
        <tr><th>x</th><th>y</th></tr></thead>
        <tbody><tr><td rowspan="2"><b>SGD <i>(ours)</i> </b></td><td>1</td><td>2</td></tr>
        <tr><td colspan="2">n/a &amp; <sup>*</sup></td></tr></tbody></table>"""
    )
    assert t is not None
    assert (t.n_rows, t.n_cols, t.header_rows) == (4, 3, 2)
    g = t.grid()
    assert [[c.plain for c in row] for row in g] == [
        ["Method", "A set", "A set"],
        ["Method", "x", "y"],
        ["SGD (ours)", "1", "2"],
        ["SGD (ours)", "n/a & *", "n/a & *"],  # <sup>*</sup>: no Unicode superscript star
    ]
    sgd = g[2][0]
    assert (sgd.rowspan, sgd.colspan, sgd.text) == (2, 1, "**SGD *(ours)***")
    assert g[0][1].text == "A **set**"
    assert all(c.header for c in g[0] + g[1]) and not any(c.header for c in g[2])


def test_html_table_tolerates_engine_slips() -> None:
    # missing </td> and </tr>, a rowspan past the end, a ragged row, a nested table
    t = parse_html_table(
        "<table><tr><td>a<td rowspan=9>b<tr><td>c</td></tr><tr><td>d<td>e<td>f</td></tr>"
        "<tr><td><table><tr><td>in1</td><td>in2</td></tr></table></td></tr></table>"
    )
    assert t is not None
    # HTML layout: b covers column 1 in every row, so row 3's d/e/f land in columns 0, 2, 3
    assert t.n_cols == 4 and t.n_rows == 4
    g = t.expanded()
    assert g[0] == ["a", "b", "", ""] and [row[1] for row in g] == ["b"] * 4
    assert g[1] == ["c", "b", "", ""]
    assert g[2] == ["d", "b", "e", "f"]
    assert "in1" in g[3][0] and "in2" in g[3][0]
    # every grid slot covered exactly once
    seen = {(r, c) for cell in t.cells for r in range(cell.row, cell.row + cell.rowspan) for c in range(cell.col, cell.col + cell.colspan)}
    assert len(seen) == sum(cell.rowspan * cell.colspan for cell in t.cells) == t.n_rows * t.n_cols


def test_pipe_table_with_escaped_pipe_and_math() -> None:
    blocks = parse_markdown_page("| A | B |\n|:--|--:|\n| x \\| y | $a_1$ |\n| 3 |\n")
    t = _table(blocks)
    assert t.expanded() == [["A", "B"], ["x | y", "$a_1$"], ["3", ""]]
    assert t.header_rows == 1


# --- blocks ---------------------------------------------------------------------------------


def test_blocks_math_lists_headings_images() -> None:
    page = (
        "# Title\n\ntext with $x$\n\n$$\na = b\n$$\n\n\\[ c = d \\]\n\n"
        "\\begin{align}\nx &= 1 \\\\\ny &= 2\n\\end{align}\n\n"
        "- one\n- two\n  - two.a\n\n3. three\n4. four\n\n![cap](f.png)\n\n---\n"
    )
    blocks = parse_markdown_page(page)
    kinds = [b.kind for b in blocks]
    assert kinds == ["heading", "paragraph", "math", "math", "math", "list", "list", "image", "rule"]
    assert isinstance(blocks[0], Heading) and blocks[0].level == 1
    assert [b.tex for b in blocks if isinstance(b, MathBlock)] == [
        "a = b",
        "c = d",
        "\\begin{align}\nx &= 1 \\\\\ny &= 2\n\\end{align}",
    ]
    ul, ol = blocks[5], blocks[6]
    assert isinstance(ul, ListBlock) and isinstance(ol, ListBlock)
    assert not ul.ordered and ul.items[1].children is not None and ul.items[1].children.items[0].text == "two.a"
    assert ol.ordered and ol.start == 3 and [i.text for i in ol.items] == ["three", "four"]
    assert isinstance(blocks[7], Image) and (blocks[7].alt, blocks[7].src) == ("cap", "f.png")


def test_table_with_text_around_on_the_same_line() -> None:
    blocks = parse_markdown_page("before <table><tr><td>1</td></tr></table> after")
    assert [b.kind for b in blocks] == ["paragraph", "table", "paragraph"]


def test_running_headers_and_page_number_footers() -> None:
    pages = [f"ACME Corp · Report 2024\n\nBody {n} text\n\nPage {n} of 3" for n in (1, 2, 3)]
    doc = parse_document(pages)
    for p in doc.pages:
        roles = [b.role for b in p.blocks if isinstance(b, Paragraph)]
        assert roles == ["header", "body", "footer"]
    single = parse_document(["Only text\n\nmore text"])
    assert [b.role for b in single.pages[0].blocks if isinstance(b, Paragraph)] == ["body", "body"]


def test_plain_pages_are_paragraphs_only() -> None:
    doc = parse_document(["# not a heading\n- not a list\n\n<table><tr><td>x</td></tr></table> 50% & $5"], markdown=False)
    blocks = doc.pages[0].blocks
    assert [b.kind for b in blocks] == ["paragraph", "paragraph"]
    assert plain_text(blocks[0].text) == "# not a heading\n- not a list"
    assert plain_text(blocks[1].text) == "<table><tr><td>x</td></tr></table> 50% & $5"


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.md")), ids=lambda p: p.name)
def test_fixture_model_roundtrips_through_dict(fixture: Path) -> None:
    doc = parse_document(split_raw_pages(fixture.read_text(encoding="utf-8")), language="en")
    assert doc.pages and all(p.blocks for p in doc.pages)
    assert Document.from_dict(doc.to_dict()) == doc


# --- raw page files -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40).filter(lambda t: "<!-- page" not in t), max_size=5))
def test_raw_pages_join_split_exact(pages: list[str]) -> None:
    if not pages:
        return
    assert split_raw_pages(join_raw_pages(pages)) == pages


def test_raw_file_without_marks_is_one_page() -> None:
    assert split_raw_pages("just text\n") == ["just text\n"]


def test_document_text_is_words_only() -> None:
    doc = parse_document(['# 标题\n\n<table border="1" class="dataframe"><tr><th>项目</th></tr><tr><td>收入 $x^2$</td></tr></table>\n\n- 第一 **粗体**'])
    assert doc.text() == "标题\n项目\n收入 x^2\n第一 粗体"


def test_html_table_keeps_no_break_spaces() -> None:
    """HTML collapses ASCII whitespace only (found by held-out set v2: "Abb.&nbsp;2")."""
    t = parse_html_table("<table><tr><td> Abb.&nbsp;2 \n  x </td><td>&nbsp;</td></tr></table>")
    assert t is not None
    assert t.expanded() == [["Abb.\u00a02 x", "\u00a0"]]


def test_brackets_of_plain_text_stay_brackets_not_display_math() -> None:
    # A PDF's text layer (daemon.document.layout) and Tesseract paragraphs are escaped into
    # Markdown; "\[mut/Mb\]" was then read as the engines' display math and written "$$mut/Mb$$"
    # (real-world set, 2026-12-01). Brackets now stay as they are; a link-like "[a](b)" keeps
    # its text literal.
    from daemon.document.blocksmd import write_md
    from daemon.document.inline import escape_plain
    from daemon.writers.text import write_txt

    plain = "megabase [mut/Mb]) see [1], [a](http://x) and $5"
    doc = parse_document([escape_plain(plain)], markdown=True, language="en")
    assert write_txt(doc).strip() == plain
    md = write_md(doc)
    assert "$$" not in md and "[mut/Mb]" in md
    again = parse_document([md.split("\n", 2)[2]], markdown=True, language="en")
    assert write_txt(again).strip() == plain
