"""Accents combined (NFC) and superscripts kept apart in every text output (issue 32, item 7).

Real PDFs made with PyMuPDF: accents drawn as glyphs of their own over their letter (as TeX's
``\\accent`` sets them; MuPDF extracts "pu`o"), a footnote mark set small and raised right before
the next word ("2Vielmehr"), text given decomposed ("o" + U+0300); read through the daemon's
text-layer reader and written by the real writers. And Tesseract's own read of accented text.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pymupdf
import pytest
from PIL import Image, ImageDraw, ImageFont

from daemon.document.layout import layer_blocks
from daemon.document.parse import parse_document
from daemon.pages.textlayer import read_layer
from daemon.writers import render_outputs

FONT = pymupdf.Font("helv")
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _put(page: pymupdf.Page, s: str, x: float, y: float, size: float = 12) -> float:
    page.insert_text((x, y), s, fontname="helv", fontsize=size)
    return x + FONT.text_length(s, size)


def _accent_over(page: pymupdf.Page, accent: str, letter: str, x: float, y: float, before: bool = True) -> float:
    """``letter`` with ``accent`` drawn as a glyph of its own centred over it (drawn first when
    ``before``, as TeX does; MuPDF then gives the accent before or after the letter)."""
    lw, aw = FONT.text_length(letter, 12), FONT.text_length(accent, 12)
    ax = x + (lw - aw) / 2
    if before:
        page.insert_text((ax, y - 1), accent, fontname="helv", fontsize=12)
    x2 = _put(page, letter, x, y)
    if not before:
        page.insert_text((ax, y - 1), accent, fontname="helv", fontsize=12)
    return x2


def _pdf(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    x = _put(page, "Il caff", 72, 100)
    x = _accent_over(page, "\u00b4", "e", x, 100)  # caffé: acute before the e
    x = _put(page, " non ", x, 100)
    x = _put(page, "pu", x, 100)
    x = _accent_over(page, "`", "o", x, 100, before=False)  # può: grave after the o
    x = _put(page, " mancare, ", x, 100)
    x = _put(page, "na", x, 100)
    x = _accent_over(page, "~", "n", x, 100)  # nañ... a tilde too
    _put(page, "a.", x, 100)
    # a caret and a backtick of their own (code, quotes) are not accents
    _put(page, "Run `make` with x^2 set.", 72, 130)
    # a footnote mark set small and raised before the next word
    x = _put(page, "Das Ende des Satzes.", 72, 170)
    x = _put(page, "2", x + 1, 165, size=7)
    _put(page, "Vielmehr gilt das Gegenteil.", x, 170)
    # text given decomposed: "o" + U+0300 in the content itself
    page.insert_text((72, 200), "Citta\u0300 e\u0301te", fontname="dejavu", fontfile=DEJAVU, fontsize=12)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = _pdf(tmp_path_factory.mktemp("acc") / "acc.pdf")
    with pymupdf.open(path) as doc:
        raw = doc[0].get_text()
        assert "caff´e" in raw and "puo`" in raw  # what MuPDF itself extracts: the case under test
        blocks = layer_blocks(read_layer(doc[0], 0))
    doc_model = parse_document(["x"], markdown=True, language="it", blocks=[blocks])
    files = render_outputs(doc_model, formats=["txt", "md", "tex", "json"], stem="a", sidecar={})
    return {name.rsplit(".", 1)[1]: data.decode("utf-8") for name, data in files.items()}


@pytest.mark.parametrize("fmt", ["txt", "md", "json"])
def test_accent_glyphs_are_combined_with_their_letter(outputs: dict[str, str], fmt: str) -> None:
    text = outputs[fmt]
    assert "caffé" in text and "può" in text and "nañ" in text, text
    assert "`o" not in text and "´e" not in text and "o`" not in text


def test_every_text_output_is_nfc(outputs: dict[str, str]) -> None:
    for fmt, text in outputs.items():
        assert unicodedata.is_normalized("NFC", text), fmt
        assert "\u0300" not in text and "\u0301" not in text, fmt
    assert "Città éte" in outputs["txt"]


def test_caret_and_backtick_with_their_own_advance_stay(outputs: dict[str, str]) -> None:
    assert "`make`" in outputs["txt"] and "x^2" in outputs["txt"], outputs["txt"]


def test_a_superscript_mark_is_not_glued_to_the_next_word(outputs: dict[str, str]) -> None:
    txt, md = outputs["txt"], outputs["md"]
    assert "2Vielmehr" not in txt and "²Vielmehr" not in txt, txt
    assert "Satzes.² Vielmehr" in txt, txt
    assert "Satzes.<sup>2</sup>Vielmehr" in md, md
    assert "\\textsuperscript{2}Vielmehr" in outputs["tex"]


def test_a_line_of_one_size_has_no_superscript(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    x = _put(page, "Kapitel", 72, 100)
    _put(page, "2 beginnt hier.", x + 3, 100)
    with_text = tmp_path / "plain.pdf"
    doc.save(with_text)
    with pymupdf.open(with_text) as d:
        layer = read_layer(d[0], 0)
    assert not any(s.sup for b in layer.blocks for ln in b.lines for s in ln.spans)


def test_tesseract_reads_accented_words_as_nfc(tmp_path: Path) -> None:
    """Tesseract's own read of accented Italian, through the words the searchable PDF places."""
    from daemon.pages.orient import tessdata_dir
    from daemon.tessapi import OEM, PSM, ApiSpec, new_api, word_layout

    img = Image.new("L", (1400, 200), 255)
    font = ImageFont.truetype(DEJAVU, 56)
    ImageDraw.Draw(img).text((40, 60), "Perché la città può così", font=font, fill=0)
    api = new_api(ApiSpec(tessdata_dir(), "ita", PSM.SINGLE_LINE, OEM.DEFAULT))
    try:
        api.set_image(img)
        api.recognise()
        words = [w.text for ln in word_layout(api, img.size).lines for w in ln.words]
    finally:
        api.end()
    joined = " ".join(words)
    assert unicodedata.is_normalized("NFC", joined)
    assert "città" in joined and "può" in joined, joined
