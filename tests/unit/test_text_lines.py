"""Text people can search (issue 26 item 3): ligatures as letters, line breaks that mean
something kept (an address, a signature block), wrapped lines joined, Markdown hard breaks that
CommonMark renders, the yen sign put back where it is safe. The functions of
``daemon.document.lines`` and the writers, on hand-made text; the same through the real pipeline
is in tests/e2e/test_searchable_text.py."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from daemon.document.blocksmd import write_md
from daemon.document.layout import layer_blocks
from daemon.document.lines import (
    MIN_FULL_COLUMNS,
    fix_yen,
    full_width,
    hard_breaks,
    is_line_block,
    join_lines,
    letters,
    plain_paragraphs,
)
from daemon.document.markdown import parse_markdown_page, parse_plain_page
from daemon.document.model import Document, Page, Paragraph
from daemon.document.parse import parse_document
from daemon.layerrecords import Line, PageLayer, Span, TextBlock, Verdict
from daemon.writers import render_outputs
from daemon.writers.text import write_txt

PROSE = [
    "Caro cliente, junto enviamos o extrato da sua conta a ordem referente",
    "ao mes de marco. Por favor verifique os movimentos e contacte-nos em",
    "caso de duvida. O saldo disponivel inclui os juros creditados no dia",
    "trinta e um.",
]
ADDRESS = ["Banco Lusitano de Poupança", "Avenida da Liberdade 110", "1250-146 Lisboa"]
SIGNATURE = ["Atenciosamente,", "Maria Fernandes", "Gestora de Conta"]


# --------------------------------------------------------------------------------- letters


def test_letters_turns_ligatures_into_letters_and_nothing_else() -> None:
    assert letters("di\ufb00erences \ufb01rst \ufb02ow o\ufb03ce ba\ufb04e \ufb05 \ufb06") == (
        "differences first flow office baffle st st"
    )
    assert letters("\u0133s") == "ijs"
    kept = "x² ½ H₂O ，。 ｱ ① ™ Straße ﬁ"[:-1]  # NFKC would change each of these
    assert letters(kept) == kept


def test_parse_document_reads_ligatures_as_letters_in_every_text_output() -> None:
    page = "The di\ufb00erences in the \ufb01rst o\ufb03ce"
    for markdown in (False, True):
        out = render_outputs(parse_document([page], markdown=markdown, language="en"), formats=["txt", "md", "json"], stem="d", sidecar={})
        for name, data in out.items():
            text = data.decode("utf-8")
            assert "differences" in text and "first office" in text, (name, text)
            assert not any("\ufb00" <= c <= "\ufb06" for c in text), (name, text)


# -------------------------------------------------------------------------------------- yen


def test_yen_from_the_japanese_model_backslash() -> None:
    page = "合計金額: \\12,000 (税込)\n送料:\\800\nご注文ありがとうございました。"
    assert fix_yen(page) == "合計金額: ¥12,000 (税込)\n送料:¥800\nご注文ありがとうございました。"
    # a Latin page keeps its backslashes (a path, a TeX command)
    assert fix_yen("C:\\2024\\report and \\1 in sed") == "C:\\2024\\report and \\1 in sed"


def test_yen_from_a_latin_model_only_on_a_page_that_names_the_yen() -> None:
    assert fix_yen("Montant total : ¥12 000 TTC\nLivraison Y800") == "Montant total : ¥12 000 TTC\nLivraison ¥800"
    assert fix_yen("Price in JPY: Y 1,500 (Y2K ready, Yokohama, XY800)") == (
        "Price in JPY: ¥ 1,500 (Y2K ready, Yokohama, XY800)"
    )
    # no yen named: a Y before a number is left alone (a model number, a grid reference)
    assert fix_yen("Model Y800 and row Y12") == "Model Y800 and row Y12"


# ------------------------------------------------------------------------------ plain lines


def test_address_and_signature_lines_stay_lines_and_prose_is_joined() -> None:
    page = "\n".join(ADDRESS) + "\n\n" + "\n".join(PROSE) + "\n\n" + "\n".join(SIGNATURE)
    paras = plain_paragraphs(page)
    assert paras[0] == "\n".join(ADDRESS)
    assert paras[1] == " ".join(PROSE)
    assert paras[2] == "\n".join(SIGNATURE)


def test_a_closing_in_the_same_tesseract_paragraph_keeps_its_breaks() -> None:
    lines = PROSE + SIGNATURE
    hard = hard_breaks(lines, full_width(lines))
    assert hard == [False, False, False, True, True, True]
    assert join_lines(lines, hard) == " ".join(PROSE) + "\n" + "\n".join(SIGNATURE)


def test_hyphenated_word_at_a_line_end_is_joined_and_cjk_has_no_space() -> None:
    lines = ["Die Lieferung enthält drei Kartons Druckerpapier und einen War-",
             "tungsvertrag für die Drucker der Buchhaltung im zweiten Stock des",
             "Gebäudes."]
    assert plain_paragraphs("\n".join(lines)) == [
        "Die Lieferung enthält drei Kartons Druckerpapier und einen Wartungsvertrag für die Drucker der "
        "Buchhaltung im zweiten Stock des Gebäudes."
    ]
    zh = ["感谢您的订购。请在三十天内支付全部金额。交付内容包括三箱打印纸和一份服务合同，", "以及安装服务。"]
    assert plain_paragraphs("\n".join(zh)) == ["".join(zh)]


def test_a_page_of_short_lines_keeps_them_all() -> None:
    receipt = ["SUPERMERCADO CENTRAL", "Leite 1L        0,89", "Pao             1,20", "TOTAL           2,09"]
    assert full_width(receipt) == MIN_FULL_COLUMNS
    assert plain_paragraphs("\n".join(receipt)) == ["\n".join(receipt)]


def test_plain_paragraphs_escape_every_line_start() -> None:
    # a kept line starting like a list item or heading stays text (escaped per line)
    paras = plain_paragraphs("Avenida 1\n- ver verso\n# 12 andar")
    doc = Document([Page(1, [Paragraph(paras[0])])])
    html = MarkdownIt("commonmark").render(write_md(doc))
    assert "<ul>" not in html and "<h1>" not in html, html
    assert write_txt(doc) == "Avenida 1\n- ver verso\n# 12 andar\n"


# ----------------------------------------------------------------------- Markdown hard breaks


def test_md_hard_breaks_render_as_lines_in_commonmark_and_txt_stays_plain() -> None:
    page = "\n".join(ADDRESS) + "\n\n" + "\n".join(PROSE)
    doc = parse_document([page], markdown=False)
    md = write_md(doc)
    assert "Banco Lusitano de Poupança  \nAvenida da Liberdade 110  \n1250-146 Lisboa\n" in md
    html = MarkdownIt("commonmark").render(md)
    assert "<p>Banco Lusitano de Poupança<br />\nAvenida da Liberdade 110<br />\n1250-146 Lisboa</p>" in html
    assert html.count("<br />") == 2  # the prose is one paragraph without breaks
    txt = write_txt(doc)
    assert "\n".join(ADDRESS) + "\n" in txt and "  \n" not in txt and "\\" not in txt
    # the md file read back (ocr-daemon convert) is the same document
    again = parse_markdown_page(md.split("\n", 1)[1])
    assert again == doc.pages[0].blocks


def test_md_hard_breaks_in_list_items() -> None:
    doc = parse_document(["- Maria Fernandes\n  Gestora de Conta\n- Rui Costa"], markdown=True)
    md = write_md(doc)
    html = MarkdownIt("commonmark").render(md)
    assert "Maria Fernandes<br />\nGestora de Conta" in html, (md, html)
    assert parse_markdown_page(md.split("\n", 1)[1]) == doc.pages[0].blocks


# -------------------------------------------------------------------------- text-layer blocks


def _block(lines: list[str], x0: float, y0: float, size: float = 10.0, char: float = 5.0) -> TextBlock:
    out = []
    for k, t in enumerate(lines):
        y = y0 + k * 1.2 * size
        box = (x0, y, x0 + char * len(t), y + size)
        out.append(Line([Span(t, box, size, False, False, False)], box))
    return TextBlock(out, (x0, y0, x0 + char * max(len(t) for t in lines), y0 + 1.2 * size * len(lines)))


def _layer(blocks: list[TextBlock]) -> PageLayer:
    return PageLayer(0, 595.0, 842.0, Verdict(True, "text"), blocks)


def test_layer_address_and_signature_keep_lines_prose_joins() -> None:
    prose = [p + " x" * 8 for p in PROSE[:3]] + [PROSE[3]]  # ~90 characters: a full line
    blocks = _layer([_block(ADDRESS, 56, 60), _block(prose, 56, 140), _block(SIGNATURE, 56, 260)])
    paras = [b.text for b in layer_blocks(blocks) if isinstance(b, Paragraph)]
    assert paras[0] == "\n".join(ADDRESS)
    assert "\n" not in paras[1] and paras[1].startswith(prose[0] + " " + prose[1])
    assert paras[2] == "\n".join(SIGNATURE)


def test_layer_signature_alone_on_the_right_keeps_lines() -> None:
    prose = [p + " x" * 8 for p in PROSE]
    blocks = _layer([_block(prose, 56, 140), _block(SIGNATURE, 360, 300)])
    paras = [b.text for b in layer_blocks(blocks) if isinstance(b, Paragraph)]
    assert paras[1] == "\n".join(SIGNATURE)


def test_layer_columns_stay_paragraphs() -> None:
    # two columns of short justified lines under a full-width abstract that starts where the
    # left column starts: the column's lines are not short for their column
    col = ["Lorem ipsum dolor sit amet, consectetur", "adipiscing elit, sed do eiusmod tempor",
           "incididunt ut labore et dolore magna aliq", "ua. Ut enim ad minim veniam."]
    abstract = [c + " " + c for c in col[:2]]
    blocks = _layer([_block(abstract, 56, 60), _block(col, 56, 120), _block(col, 56, 200),
                     _block(col, 310, 120), _block(col, 310, 200)])
    paras = [b.text for b in layer_blocks(blocks) if isinstance(b, Paragraph)]
    assert len(paras) == 5 and not any("\n" in p for p in paras), paras


@pytest.mark.parametrize(
    ("widths", "lefts", "expect"),
    [
        ([130, 120, 75], [56, 56, 56], True),  # address, left-aligned
        ([130, 120, 75], [300, 310, 355], True),  # right-aligned (right edges 430)
        ([130, 120, 75], [56, 80, 40], False),  # ragged on both sides: no aligned lines
        ([310, 120], [56, 56], False),  # wider than 3/4 of the full line (400)
        ([250, 250, 250.5, 90], [56, 56, 56, 56], False),  # a justified paragraph
        ([75, 75, 80], [56, 56, 56], True),  # a signature of lines about as long
        ([250, 120], [56, 56], True),  # two short lines
    ],
)
def test_is_line_block(widths: list[float], lefts: list[float], expect: bool) -> None:
    assert is_line_block(widths, lefts, 10.0, 400.0) is expect


def test_parse_plain_page_is_plain_paragraphs() -> None:
    page = "\n".join(ADDRESS) + "\n\n" + "\n".join(PROSE)
    assert [b.text for b in parse_plain_page(page) if isinstance(b, Paragraph)] == plain_paragraphs(page)


def test_a_wrapped_paragraph_that_tesseract_split_is_one() -> None:
    page = "\n".join(PROSE[:2]) + "\n\n" + "\n".join(PROSE[2:]) + "\n\n" + "\n".join(SIGNATURE)
    assert plain_paragraphs(page) == [" ".join(PROSE), "\n".join(SIGNATURE)]
    # a short line before the blank line, or a capital after it: two paragraphs
    assert len(plain_paragraphs("Saldo final: 980,55 EUR\n\nmovimentos do mes")) == 2
    assert len(plain_paragraphs(PROSE[0] + "\n\n" + "Ao mes de marco e abril.")) == 2


def test_a_narrow_column_beside_a_picture_is_joined_against_its_own_width() -> None:
    column = ["A report creeps into camp that", "Johnston is coming with fifty", "thousand men to raise the siege,",
              "but I do not believe it. We have", "often heard that Richmond had", "fallen, but it continues within",
              "the confederate lines."]
    page = "\n".join(PROSE) + "\n\n" + "\n".join(column) + "\n\n" + "\n".join(ADDRESS) + "\n\n" + "\n".join(SIGNATURE)
    paras = plain_paragraphs(page)
    assert paras[1] == " ".join(column)
    assert paras[2] == "\n".join(ADDRESS) and paras[3] == "\n".join(SIGNATURE)
