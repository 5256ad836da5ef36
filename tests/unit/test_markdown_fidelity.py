"""The Markdown of a born-digital page says the words as printed (issue 26 item 4: born-digital
word recall): an underscore inside a word is not escaped, text set in a monospaced font is code
(no escapes, ``# apt-get update`` stays a command), a table whose only merged cell is a title
row is a pipe table under its title. Text-layer pages built by hand (``layer_blocks``) and one
real PDF read by PyMuPDF."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from markdown_it import MarkdownIt

from daemon.document.blocksmd import write_md
from daemon.document.inline import escape_markdown_chars, escape_plain, plain_text
from daemon.document.layout import layer_blocks, layer_page
from daemon.document.model import Cell, CodeBlock, Document, Page, Paragraph, Table
from daemon.layerrecords import Line, PageLayer, Span, TextBlock, Verdict
from daemon.pages.textlayer import read_layer
from daemon.writers.text import write_txt

MD = MarkdownIt("commonmark").enable("table")


def test_intraword_underscore_is_not_escaped_and_renders_as_written() -> None:
    for word in ("package_name", "override_dh_auto_build", "x_1", "é_ü"):
        assert escape_markdown_chars(word) == word
        assert MD.render(word) == f"<p>{word}</p>\n"
    # an underscore that could open or close emphasis is still escaped
    for text, html in (("_x_", "_x_"), ("a __b__ c", "a __b__ c"), ("__init__", "__init__"), ("snake_ x", "snake_ x")):
        esc = escape_plain(text)
        assert MD.render(esc) == f"<p>{html}</p>\n", esc
        assert plain_text(esc) == text


def _line(parts: list[tuple[str, bool]], x0: float, y: float, size: float = 10.0) -> Line:
    spans, x = [], x0
    for text, mono in parts:
        w = 5.0 * len(text)
        spans.append(Span(text, (x, y, x + w, y + size), size, False, False, mono))
        x += w
    return Line(spans, (x0, y, x, y + size))


def _page(rows: list[list[list[tuple[str, bool]]]]) -> PageLayer:
    blocks, y = [], 60.0
    for rows_of_block in rows:
        lines = []
        for parts in rows_of_block:
            lines.append(_line(parts, 56.0, y))
            y += 12
        blocks.append(TextBlock(lines, (56.0, lines[0].bbox[1], max(ln.bbox[2] for ln in lines), y)))
        y += 20
    return PageLayer(0, 595.0, 842.0, Verdict(True, "text"), blocks)


PROSE = "You can install some of these packages by the following command line and check them."


def test_monospaced_block_is_code_and_monospaced_words_are_code_spans() -> None:
    layer = _page([
        [[(PROSE, False)], [("with apt-get as root, e.g. ", False), ("package_name", True), (" and ", False),
                            ("paquet*.info", True), (".", False)]],
        [[("# apt-get update", True)], [("# apt-get install package_name", True)]],
        [[(PROSE, False)]],
    ])
    blocks = layer_blocks(layer)
    assert isinstance(blocks[1], CodeBlock) and blocks[1].text == "# apt-get update\n# apt-get install package_name"
    para = blocks[0]
    assert isinstance(para, Paragraph)
    assert para.text.endswith("e.g. `package_name` and `paquet*.info`."), para.text
    md = layer_page(layer, []).markdown
    assert "```\n# apt-get update\n# apt-get install package_name\n```" in md
    html = MD.render(md)
    assert "<code>paquet*.info</code>" in html and "<h1>" not in html, html
    txt = write_txt(Document([Page(1, blocks)]))
    assert "e.g. package_name and paquet*.info." in txt and "    # apt-get update" in txt


def test_a_page_set_in_a_monospaced_font_is_not_code() -> None:
    # a typewriter-style letter: everything is monospaced, so the font says nothing
    layer = _page([[[("# 12 Main Street", True)], [("Springfield", True)]], [[(PROSE, True)]]])
    blocks = layer_blocks(layer)
    assert not any(isinstance(b, CodeBlock) for b in blocks)
    assert "`" not in "".join(b.text for b in blocks if isinstance(b, Paragraph))


def test_monospaced_font_without_the_pdf_flag(tmp_path: Path) -> None:
    """DejaVu Sans Mono embedded by PyMuPDF: found monospaced by its name."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_font(fontname="dvm", fontfile="/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
    page.insert_textbox(pymupdf.Rect(56, 56, 539, 200), PROSE * 3, fontname="helv", fontsize=10)
    page.insert_text((56, 240), "# apt-get install package_name", fontname="dvm", fontsize=10)
    page.insert_textbox(pymupdf.Rect(56, 280, 539, 400), PROSE * 3, fontname="helv", fontsize=10)
    doc.save(str(tmp_path / "m.pdf"))
    with pymupdf.open(str(tmp_path / "m.pdf")) as d:
        layer = read_layer(d[0], 0)
    assert any(s.mono for b in layer.blocks for ln in b.lines for s in ln.spans)
    md = layer_page(layer, []).markdown
    assert "```\n# apt-get install package_name\n```" in md, md


def test_title_row_table_is_a_pipe_table_under_its_title() -> None:
    cells = [Cell("Tjenestetabel", 0, 0, colspan=3, header=True)]
    rows = [["Tjenestebeskrivelse", "Almindeligt navn", "DNS-tjenestenavn"], ["Centraliseret logning", "rsyslog", "syslog"],
            ["Tjeneste for domænenavn", "DNS (BIND)", "domæne"]]
    cells += [Cell(t, r + 1, c) for r, row in enumerate(rows) for c, t in enumerate(row)]
    table = Table(4, 3, cells, header_rows=1)
    md = write_md(Document([Page(1, [table])]))
    assert "Tjenestetabel\n\n| Tjenestebeskrivelse | Almindeligt navn | DNS-tjenestenavn |\n|---|---|---|\n" in md, md
    html = MD.render(md)
    assert "<p>Tjenestetabel</p>" in html and "<th>Tjenestebeskrivelse</th>" in html and "<td>rsyslog</td>" in html
    # another span keeps the HTML table; the model (CSV, JSON) is the same table either way
    spanned = Table(4, 3, [*cells[:-1], Cell("domæne", 3, 2)], header_rows=1)
    spanned.cells[1].rowspan = 2
    spanned.cells = [c for c in spanned.cells if not (c.row == 2 and c.col == 0)]
    assert "<table>" in write_md(Document([Page(1, [spanned])]))
