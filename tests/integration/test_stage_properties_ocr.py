"""Property-based tests of the optional stages that read pixels with Tesseract or write files:
random page images (propgen.random_page: noise, rules, short rules, spanning grids, ruled tables,
blobs, words; 1 px to 1000 px; all black, all white) through the scanned-table reader
(daemon.pages.scantables.read_scanned_page, with a real tesserocr API, as the Tesseract engine
calls it), orientation (daemon.pages.orient), layout analysis (daemon.tessapi.find_lines),
and random page texts and layouts through the searchable PDF writer (daemon.writers.pdf.write_pdf)
on small generated PDFs and images.

No exception may escape but the documented ones: ``read_scanned_page``, the orientation calls and
``find_lines`` document none (``find_lines``: "never raises for a page"); ``write_pdf`` raises
``InputError`` only when the source does not open as the pages the daemon read, which these
inputs never are. The pure stages are in tests/unit/test_stage_properties.py, the text writers
in tests/integration/test_writer_fuzz.py. Few examples (Tesseract costs ~0.1-1 s per image), run
derandomized (``propgen.PROPS``) so CI repeats them exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docgen
import pymupdf
import pytest
from hypothesis import event, example, given, note, settings
from hypothesis import strategies as st
from PIL import Image
from propgen import HOSTILE, PAGE_TEXTS, PROPS, layouts, page_images, random_page

from daemon.document.model import Block
from daemon.document.parse import parse_document
from daemon.models import PageLayout
from daemon.pagerecord import EngineText, LayerBlocks, PageGeometry, PageResult
from daemon.pages import orient
from daemon.pages.orient import tessdata_dir
from daemon.pages.scantables import (
    ScannedPage,
    find_image_grids,
    find_image_rule_regions,
    find_unruled_tables,
    read_scanned_page,
)
from daemon.tessapi import find_lines
from daemon.writers.pdf import PdfInput, write_pdf_input

SMALL = st.one_of(st.integers(1, 4), st.integers(5, 300), st.integers(301, 1000))
ANGLES = (0, 90, 180, 270)


@pytest.fixture(scope="module")
def api() -> Iterator[Any]:
    """A Tesseract API set up as the Tesseract engine sets up its own (tesseract._spec)."""
    from daemon.engines.tesseract import _spec
    from daemon.tessapi import new_api

    a = new_api(_spec(tessdata_dir(), ["eng", "deu"]))
    yield a
    a.end()


#: Pages that have something for the table finders (a blank or noisy page has nothing to read).
TABLE_PAGES = page_images(st.integers(120, 1000), ("table", "table", "grid", "short_rules", "rules", "text"))


@settings(PROPS, max_examples=40)
@given(st.one_of(TABLE_PAGES, page_images(SMALL)))
@example(random_page("rules", 120, 120, 620))  # found here: RuntimeError "No text returned" (_ocr_words)
@example(random_page("short_rules", 900, 600, 1))  # underlines and a rule above a total
@example(random_page("table", 900, 500, 2))  # a ruled table with spanning cells
@example(Image.new("L", (1, 1), 0))
@example(Image.new("L", (800, 600), 0))  # all black: one rule per row and column
def test_scanned_table_reader_never_fails(api: Any, img: Image.Image) -> None:
    """What the engine does on every page (daemon.engines.tesstables.page_tables): the page's words, the ruled
    grids and rule regions on its pixels, the unruled tables among its words, then
    read_scanned_page with the same API; the page text it returns parses, and the API is left
    in its page segmentation mode for the next page."""
    note(img.info.get("made_by", f"{img.mode} image of {img.size}"))
    from daemon.tessapi import PSM, word_layout

    api.set_image(img)
    api.text()
    words = word_layout(api, img.size)
    api.clear()
    grids = find_image_grids(img)
    regions = find_image_rule_regions(img, grids)
    grids += find_unruled_tables(words, [g.bbox for g in grids] + [r.bbox for r in regions])
    event(f"tables to read: {'yes' if grids or regions else 'no'}")
    if not grids and not regions:
        return
    got = read_scanned_page(api, img, grids, regions)
    event(f"read: {'a table' if got else 'no table after all'}")
    assert got is None or isinstance(got, ScannedPage)
    if got:
        assert all(isinstance(b, Block) for b in got.blocks)
        parse_document([got.text], markdown=True, language="en")
    assert api.psm() == PSM.AUTO


@settings(PROPS, max_examples=15)
@given(page_images(SMALL), st.sampled_from(ANGLES))
@example(Image.new("L", (1, 1), 255), 0)
@example(Image.new("L", (600, 400), 0), 90)
def test_orientation_never_fails(img: Image.Image, turn: int) -> None:
    """OSD on any page, turned any way: an answer or None, never an exception; a turn keeps
    the page's pixels (the size swaps on a quarter turn)."""
    note(img.info.get("made_by", f"{img.mode} image of {img.size}"))
    page = img.convert("RGB").rotate(-turn, expand=True)
    o = orient.detect_orientation(page)
    assert o is None or o.rotate_cw in ANGLES
    upright, degrees, script = orient.upright_with_script(page)
    assert degrees in ANGLES and isinstance(script, str)
    assert upright.size == (page.size if degrees in (0, 180) else page.size[::-1])
    rot, sc, conf = orient.detect_script(page)
    assert rot in ANGLES and isinstance(sc, str) and conf >= 0
    for s in ("Latin", "Han", "Japanese", "Cyrillic", ""):
        assert orient.reads_better(page.rotate(180), page, s) in (True, False, None)


@settings(PROPS, max_examples=15)
@given(page_images(SMALL))
@example(Image.new("L", (1, 1), 0))
def test_layout_analysis_never_fails(img: Image.Image) -> None:
    note(img.info.get("made_by", f"{img.mode} image of {img.size}"))
    layout = find_lines(img.convert("RGB"))
    assert layout.size == img.size and not layout.has_words
    for ln in layout.lines:
        assert ln.words == [] and ln.block >= 0


# -- the searchable PDF ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[tuple[int, int]]]]:
    """Small real sources: name -> (path, each page's decoded size in px)."""
    d = tmp_path_factory.mktemp("pdfsrc")
    out: dict[str, tuple[Path, list[tuple[int, int]]]] = {}
    scanned = docgen.make_pdf(d / "scanned.pdf", ["Seite eins", "第二页"], scanned=True, scan_width=300)
    out["scanned_pdf"] = (scanned, [(300, 424)] * 2)
    out["text_pdf"] = (docgen.make_pdf(d / "text.pdf", ["Born digital text"]), [(595, 842)])
    out["png"] = (docgen.make_image(d / "p.png", "Total 12", width=320), [(320, 452)])
    out["jpeg_exif"] = (docgen.make_image(d / "e.jpg", "Rotated by tag", "jpeg", width=320, exif_orientation=6),
                        [(320, 452)])
    out["rgba_png"] = (docgen.make_image(d / "a.png", "Alpha", width=200, mode="RGBA"), [(200, 282)])
    out["tiff"] = (docgen.make_multipage_tiff(d / "m.tif", ["one", "two", "three"], width=240), [(240, 339)] * 3)
    return out


SIZES = st.one_of(st.tuples(st.integers(1, 3000), st.integers(1, 3000)), st.sampled_from([(1, 1), (1540, 1089)]))


@st.composite
def pdf_pages(draw: st.DrawFn, n: int, decoded: list[tuple[int, int]]) -> list[PageResult]:
    pages = []
    for i in range(n):
        sw, sh = decoded[i] if draw(st.booleans()) else draw(SIZES)
        crop = None
        if draw(st.booleans()):
            x0, y0 = draw(st.integers(0, sw - 1)), draw(st.integers(0, sh - 1))
            crop = (x0, y0, draw(st.integers(x0 + 1, sw)), draw(st.integers(y0 + 1, sh)))
        layout: PageLayout | None = draw(st.one_of(st.none(), layouts(has_words=True), layouts(has_words=False)))
        text = draw(PAGE_TEXTS)
        content: EngineText | LayerBlocks
        if draw(st.sampled_from(["ocr", "ocr", "text_layer"])) == "ocr":
            geometry = PageGeometry(size=draw(SIZES), source_size=(sw, sh), rotation=draw(st.sampled_from(ANGLES)),
                                    cropped=crop is not None, crop_box=crop)
            content = EngineText(text, False, geometry, layout)
        else:
            content = LayerBlocks((), text)
        pages.append(PageResult(index=i, engine="test", content=content))
    return pages


@settings(PROPS, max_examples=30)
@given(st.data(), st.sampled_from(["scanned_pdf", "text_pdf", "png", "jpeg_exif", "rgba_png", "tiff"]),
       st.booleans(), st.sampled_from(["de", "zh", "ja", "unknown", "ar"]),
       st.one_of(st.text(max_size=30), st.lists(st.sampled_from(HOSTILE), max_size=4).map("".join)))
def test_searchable_pdf_never_fails(sources: dict[str, tuple[Path, list[tuple[int, int]]]], data: st.DataObject,
                                    kind: str, markdown: bool, language: str, title: str) -> None:
    """Any page texts and layouts (empty, huge, inverted, zero-size boxes; control characters,
    RTL, CJK), any engine image size, turn and crop: a PDF with the source's pages."""
    src, decoded = sources[kind]
    pages = data.draw(pdf_pages(len(decoded), decoded))
    out = write_pdf_input(PdfInput(src, pages, markdown=markdown, language=language, title=title))
    assert [p.page for p in out.report.pages] == list(range(1, len(pages) + 1))
    assert {p.placement for p in out.report.pages} <= {"words", "lines", "blocks", "page", "none", "text_layer"}
    with pymupdf.open(stream=out.data, filetype="pdf") as doc:
        assert doc.page_count == len(pages)
        for page in doc:
            page.get_text()
