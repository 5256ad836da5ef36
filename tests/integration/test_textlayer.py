"""PDF text layers (daemon.pages.textlayer + daemon.document.layout) on real generated PDFs, and
the pipeline with a real Tesseract engine on a PDF that mixes a born-digital and a scanned page."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

import docgen
import layoutgen
import pymupdf
import pytest
from renderopts import render_opts

from daemon.config import Config
from daemon.document.model import Block, Heading, ListBlock, Paragraph, Table
from daemon.document.parse import parse_document
from daemon.engines.tesseract import TesseractEngine
from daemon.journal.store import Journal
from daemon.pagerecord import (
    EngineText,
    ImagePage,
    LayerBlocks,
    LayerPage,
    PageGeometry,
    PageResult,
    RenderedPage,
)
from daemon.pages.textlayer import read_layer, read_or_render
from daemon.service.outputs import page_texts
from daemon.service.pipeline import Pipeline


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def recall(reference: list[str], text: str) -> float:
    """Share of the reference words (with repeats) found in ``text``."""
    got: dict[str, int] = {}
    for w in _words(text):
        got[w] = got.get(w, 0) + 1
    hit = 0
    for w in _words(" ".join(reference)):
        if got.get(w, 0) > 0:
            got[w] -= 1
            hit += 1
    return hit / max(1, len(_words(" ".join(reference))))


def layer_of(got: RenderedPage) -> LayerPage:
    """The page's text layer: the render stage read it, and made no image for the engine."""
    assert isinstance(got, LayerPage), got
    assert got.degraded == ()  # no optional stage failed on it
    return got


def blocks_of(got: RenderedPage) -> list[Block]:
    """The model blocks the writers get for a text-layer page. Its Markdown (the raw file, the
    JSON's page text, ``ocr-daemon convert``) parses back to the same blocks, tables with the
    same cells."""
    layer = layer_of(got).content
    blocks = list(layer.blocks)
    again = parse_document([layer.markdown], markdown=True).pages[0].blocks
    assert [type(b) for b in again] == [type(b) for b in blocks]
    assert [b.expanded() for b in again if isinstance(b, Table)] == [b.expanded() for b in blocks if isinstance(b, Table)]
    return blocks


def image_of(got: RenderedPage) -> ImagePage:
    """A page rendered for the engine: an image with its geometry, no text layer."""
    assert isinstance(got, ImagePage), got
    assert got.geometry.size == got.image.size
    return got


def test_born_digital_page_becomes_headings_lists_and_table(tmp_path: Path) -> None:
    pdf = layoutgen.make_layout_pdf(tmp_path / "report.pdf")
    got = read_or_render(pdf, 0, render_opts())
    layer = layer_of(got)
    assert PageResult.from_layer(layer).source == "text_layer" and layer.meta["text_layer"]["tables"] == 1
    assert recall(layoutgen.LAYOUT_WORDS, layer.content.markdown) >= 0.99, layer.content.markdown
    blocks = blocks_of(got)
    assert parse_document([layer.content.markdown], markdown=True).pages[0].blocks == blocks  # the Markdown says it all
    headings = [(b.level, b.text) for b in blocks if isinstance(b, Heading)]
    assert headings == [(1, layoutgen.TITLE), (2, layoutgen.SECTION)]
    lists = [b for b in blocks if isinstance(b, ListBlock)]
    assert [(lb.ordered, [i.text for i in lb.items]) for lb in lists] == [
        (False, layoutgen.BULLETS), (True, layoutgen.NUMBERED)]
    paras = [b.text for b in blocks if isinstance(b, Paragraph)]
    assert paras[:2] == layoutgen.PARAGRAPHS  # wrapped lines joined back into the paragraph
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 1
    assert tables[0].expanded() == layoutgen.TABLE
    assert tables[0].header_rows == 1  # the first row is set in bold
    # reading order: title, section, paragraphs, lists, table, closing line
    kinds = [type(b).__name__ for b in blocks]
    assert kinds == ["Heading", "Heading", "Paragraph", "Paragraph", "ListBlock", "ListBlock", "Table", "Paragraph"]


def test_invisible_ocr_layer_is_ocred_again_unless_any(tmp_path: Path) -> None:
    pdf = layoutgen.make_invisible_ocr_pdf(tmp_path / "ocred.pdf")
    got = image_of(read_or_render(pdf, 0, render_opts(autorotate=False)))
    assert got.text_layer_note == "invisible OCR layer over a scan"
    trusted = read_or_render(pdf, 0, render_opts(text_layer="any"))
    assert layoutgen.INVISIBLE_TEXT in layer_of(trusted).content.markdown


@pytest.mark.parametrize("kind", ["notounicode", "pua"])
def test_glyph_soup_is_ocred(tmp_path: Path, kind: str) -> None:
    pdf = layoutgen.make_soup_pdf(tmp_path / f"{kind}.pdf", kind)
    layer = read_layer(pymupdf.open(pdf)[0], 0)
    assert not layer.verdict.use
    assert layer.verdict.reason.startswith("glyph soup"), layer.verdict
    assert layer.verdict.bad > 0.5
    got = image_of(read_or_render(pdf, 0, render_opts(autorotate=False)))
    assert got.text_layer_note.startswith("glyph soup")


def test_scan_without_text_and_text_layer_ocr_render_the_page(tmp_path: Path) -> None:
    scan = docgen.make_pdf(tmp_path / "scan.pdf", [docgen.SAMPLES["en"]], scanned=True)
    got = image_of(read_or_render(scan, 0, render_opts(autorotate=False)))
    assert got.text_layer_note == "no text layer"
    born = layoutgen.make_layout_pdf(tmp_path / "born.pdf")
    forced = image_of(read_or_render(born, 0, render_opts(text_layer="ocr", autorotate=False)))
    assert forced.text_layer_note == ""
    img = docgen.make_image(tmp_path / "page.png", "An image has no text layer")
    image_of(read_or_render(img, 0, render_opts(autorotate=False)))


def test_math_glyphs_go_to_a_vlm_but_not_to_tesseract(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    text = "Let f be smooth. Then ∀x ∈ Ω: ∇f(x) ≠ 0 ⇒ ∫∂Ω f ≤ ∑ ∥x∥ and ∃y ∉ ∅ with ∂f/∂y ≥ 0. " * 6
    page.insert_textbox(pymupdf.Rect(50, 50, 545, 800), text, fontname="dejavu",
                        fontfile=str(layoutgen.DEJAVU), fontsize=11)
    pdf = tmp_path / "math.pdf"
    doc.save(pdf)
    layer = read_layer(pymupdf.open(pdf)[0], 0, math_to_engine=True)
    assert not layer.verdict.use and layer.verdict.reason.startswith("math"), layer.verdict
    assert read_layer(pymupdf.open(pdf)[0], 0, math_to_engine=False).verdict.use


def test_page_texts_turn_plain_pages_into_the_same_paragraphs() -> None:
    plain = "First line *not emphasis*\nsecond line\n\n1. not a list"
    geometry = PageGeometry((100, 100), (100, 100))
    layer = PageResult(0, "text_layer", LayerBlocks((), "# Title\n\nBody"))
    texts = [layer, PageResult(1, "tesseract", EngineText(plain, False, geometry))]
    pages, markdown = page_texts(texts, engine_markdown=False)
    assert markdown
    assert pages[0] == "# Title\n\nBody"
    as_md = parse_document([pages[1]], markdown=True).pages[0].blocks
    as_plain = parse_document([plain], markdown=False).pages[0].blocks
    assert as_md == as_plain
    assert page_texts([PageResult(0, "tesseract", EngineText(plain, False, geometry))], engine_markdown=False) == ([plain], False)


@pytest.fixture
def tess_pipe(tmp_path: Path) -> Iterator[Pipeline]:
    cfg = Config.model_validate({
        "daemon": {"state_dir": str(tmp_path / "state"), "failed_dir": str(tmp_path / "failed")},
        "engine": {"kind": "tesseract", "tesseract": {"threads": 1, "languages": ["en"]}},
        "inboxes": [{"path": str(tmp_path / "inbox")}],
        "routes": [{"name": "all", "formats": ["txt", "md", "json", "csv", "xlsx"],
                    "destination": str(tmp_path / "out"), "source": "keep"}],
    })
    (tmp_path / "inbox").mkdir()
    journal = Journal(cfg.daemon.state_dir)
    engine = TesseractEngine(cfg.engine)
    engine.start()
    p = Pipeline(cfg, journal, engine, render_workers=1)
    yield p
    p.close()
    engine.close()
    journal.close()


def process_done(pipe: Pipeline, src: Path) -> None:
    """``src`` (in the inbox) through the journal and the whole pipeline; it must end done."""
    adm = pipe.journal.admit(src, "inbox")
    assert adm.document is not None
    doc = pipe.journal.claim(adm.document.id)
    assert doc is not None
    out = pipe.process(doc)
    assert out.state == "done", out.reason


def test_pipeline_reads_the_layer_and_ocrs_the_scan(tess_pipe: Pipeline, tmp_path: Path) -> None:
    born = layoutgen.make_layout_pdf(tmp_path / "born.pdf")
    scan = docgen.make_pdf(tmp_path / "scan.pdf", [docgen.SAMPLES["en"]], scanned=True)
    mixed = pymupdf.open(born)
    mixed.insert_pdf(pymupdf.open(scan))
    src = tmp_path / "inbox" / "mixed.pdf"
    mixed.save(src)
    process_done(tess_pipe, src)
    side = json.loads((tmp_path / "out" / "mixed.json").read_text())
    assert [p["source"] for p in side["pages"]] == ["text_layer", "ocr"]
    assert side["pages"][1]["text_layer"] == "no text layer"
    with open(tmp_path / "out" / "mixed.table-1-1.csv", newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == layoutgen.TABLE
    md = (tmp_path / "out" / "mixed.md").read_text()
    assert f"# {layoutgen.TITLE}" in md
    assert recall(docgen.SAMPLE_WORDS["en"], md) == 1.0  # the scanned page was OCRed
    assert (tmp_path / "out" / "mixed.xlsx").stat().st_size > 0


def test_table_with_horizontal_rules_only(tmp_path: Path) -> None:
    pdf = layoutgen.make_booktabs_pdf(tmp_path / "booktabs.pdf")
    got = read_or_render(pdf, 0, render_opts())
    blocks = blocks_of(got)
    assert [type(b).__name__ for b in blocks] == ["Paragraph", "Table", "Paragraph"]
    table = blocks[1]
    assert isinstance(table, Table) and table.expanded() == layoutgen.TABLE
    assert [b.text for b in blocks if isinstance(b, Paragraph)] == layoutgen.PARAGRAPHS


def test_text_page_with_a_dense_drawing_is_read_without_a_table_search(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(50, 50, 545, 200), " ".join(layoutgen.PARAGRAPHS), fontname="helv", fontsize=10)
    shape = page.new_shape()
    for k in range(3000):  # a plot's grid: 6,000 axis-parallel strokes
        y = 250 + (k % 500)
        shape.draw_line((50, y), (545, y))
        shape.draw_line((50 + (k % 495), 250), (50 + (k % 495), 750))
    shape.finish(width=0.1)
    shape.commit()
    pdf = tmp_path / "plot.pdf"
    doc.save(pdf)
    layer = layer_of(read_or_render(pdf, 0, render_opts()))
    assert layer.meta["text_layer"]["tables"] == 0
    assert not any(isinstance(b, Table) for b in layer.content.blocks)
    assert recall(" ".join(layoutgen.PARAGRAPHS).split(), layer.content.markdown) == 1.0


def test_unruled_table_becomes_a_table_and_a_csv(tess_pipe: Pipeline, tmp_path: Path) -> None:
    # no rule anywhere on the page: the columns come from the words' positions alone
    pdf = layoutgen.make_unruled_pdf(tmp_path / "unruled.pdf")
    page = pymupdf.open(pdf)[0]
    assert page.get_drawings() == []
    got = read_or_render(pdf, 0, render_opts())
    assert layer_of(got).meta["text_layer"]["tables"] == 1
    blocks = blocks_of(got)
    assert [type(b).__name__ for b in blocks] == ["Paragraph", "Table", "Paragraph"]
    table = blocks[1]
    assert isinstance(table, Table) and table.expanded() == layoutgen.UNRULED_TABLE
    assert [b.text for b in blocks if isinstance(b, Paragraph)] == layoutgen.PARAGRAPHS
    # the whole path: the daemon's pipeline writes the table as a CSV
    src = tmp_path / "inbox" / "unruled.pdf"
    src.write_bytes(pdf.read_bytes())
    process_done(tess_pipe, src)
    with open(tmp_path / "out" / "unruled.table-1-1.csv", newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == layoutgen.UNRULED_TABLE
    assert sorted(p.name for p in (tmp_path / "out").glob("*.csv")) == ["unruled.table-1-1.csv"]


@pytest.mark.parametrize("kind", ["prose", "two_columns", "three_columns", "toc", "list", "code"])
def test_aligned_text_that_is_no_table_stays_text(tmp_path: Path, kind: str) -> None:
    pdf = layoutgen.make_no_table_pdf(tmp_path / f"{kind}.pdf", kind)
    layer = read_layer(pymupdf.open(pdf)[0], 0)
    assert layer.verdict.use
    assert layer.tables == []
    got = read_or_render(pdf, 0, render_opts())
    assert layer_of(got).meta["text_layer"]["tables"] == 0
    blocks = blocks_of(got)
    assert blocks and not any(isinstance(b, Table) for b in blocks)
    # every word of the page is still in its text
    words = [w[4] for w in pymupdf.open(pdf)[0].get_text("words")]
    assert recall(words, layer_of(got).content.markdown) >= 0.99
