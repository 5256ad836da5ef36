"""Property-based tests of the optional stages that need no Tesseract: random page images and
random word layouts through table finding (daemon.pages.scantables, daemon.pages.tables), the
searchable PDF's text placement (daemon.writers.pdflayout.place_text), document dates
(daemon.dates) and classification (daemon.understand.classify).

Each stage's contract says it never raises for such input (the table geometry: "pure geometry,
never raises"; place_text: "every token of the text is placed"); a property failing here is a
page that would have cost a document. The stages that read pixels with Tesseract are in
tests/integration/test_stage_properties_ocr.py; the writers in tests/integration/test_writer_fuzz.py.

Hypothesis runs derandomized without an example database (``PROPS``), so CI runs the same
examples every time and a failure reproduces; max_examples are kept small for 2 cores.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, note
from hypothesis import strategies as st
from PIL import Image
from propgen import COORD, PAGE_TEXTS, PROPS, layouts, page_images, random_page

from daemon.config import LANGUAGES, Config, parse_config_text
from daemon.dates import document_date, find_dates
from daemon.layerrecords import Grid, GridCell
from daemon.models import PageLayout
from daemon.pages import tables, unruled
from daemon.pages.scantables import (
    find_image_grids,
    find_image_rule_regions,
    find_unruled_tables,
    image_segments,
)
from daemon.pages.tables import Seg
from daemon.understand.classify import classify, detect_math, detect_table
from daemon.writers.pdflayout import _CJK, place_text, plain_lines


@PROPS
@given(page_images())
@example(Image.new("L", (1, 1), 0))
@example(Image.new("L", (4000, 3), 0))  # a page-wide black band: one huge rule per row
@example(Image.new("L", (3, 4000), 0))
@example(random_page("black", 2000, 2000, 0))  # all ink: every row and column one rule
def test_scan_table_finders_never_fail(img: Image.Image) -> None:
    note(img.info.get("made_by", f"{img.mode} image of {img.size}"))
    h, v = image_segments(img)
    assert all(s.y0 == s.y1 for s in h) and all(s.x0 == s.x1 for s in v)
    grids = find_image_grids(img)
    for g in grids:
        assert g.n_rows >= 2 and g.n_cols >= 2 and g.xs == sorted(g.xs) and g.ys == sorted(g.ys)
        _cells_inside(g)
    for r in find_image_rule_regions(img, grids):
        x0, y0, x1, y1 = r.bbox
        assert x0 <= x1 and y0 <= y1 and len(r.rules) >= 2
    # a 2-D array is accepted too (the contract: PIL "L" or a 2-D array)
    assert len(find_image_grids(np.asarray(img))) == len(grids)


def _cells_inside(g: Grid) -> None:
    """Every anchor cell lies on the grid and no two cells cover the same slot."""
    seen: set[tuple[int, int]] = set()
    for c in g.cells:
        assert c.rowspan >= 1 and c.colspan >= 1
        assert c.row >= 0 and c.row + c.rowspan <= g.n_rows and c.col >= 0 and c.col + c.colspan <= g.n_cols
        slots = {(r, k) for r in range(c.row, c.row + c.rowspan) for k in range(c.col, c.col + c.colspan)}
        assert not slots & seen, f"cells overlap at {slots & seen}"
        seen |= slots


# -- word layouts -------------------------------------------------------------------------------

BOXES = st.lists(st.tuples(COORD, COORD, COORD, COORD), max_size=3)


def _words(layout: PageLayout, size: float | None) -> list[tables.Word]:
    return [(float(b[0]), float(b[1]), float(b[2]), float(b[3]), w.text, size if size is not None else 1.2 * (b[3] - b[1]))
            for ln in layout.lines for w in ln.words for b in [w.box]]


@PROPS
@given(layouts(has_words=True), BOXES, st.one_of(st.none(), st.sampled_from([0.0, -3.0, 0.001, 12.0, 1e6])))
def test_word_table_geometry_never_fails(layout: PageLayout, taken: list[Any], size: float | None) -> None:
    """find_unruled_tables / unruled_grids / text_grid / not_a_table on any words (font size 0,
    negative or huge included: a PDF's text layer can say so)."""
    for g in find_unruled_tables(layout, taken):
        assert g.filled and g.n_rows >= unruled.MIN_UNRULED_ROWS and g.n_cols >= unruled.MIN_UNRULED_COLS
        _cells_inside(g)
    words = _words(layout, size)
    for g in unruled.unruled_grids(words, taken):
        _cells_inside(g)
        assert unruled.not_a_table(g) is None
    # text_grid gets what its callers give it: boxes with x0 <= x1 and y0 <= y1 (Tesseract's
    # and PyMuPDF's, which normalises even mirrored text's), any font size from a text layer
    # (0 included) without rules, Tesseract's (> 0) with rules. (An inverted box makes it raise
    # StopIteration: reported, not reachable now.)
    words = [w for w in words if w[0] <= w[2] and w[1] <= w[3]]
    if words:
        xs = [w[0] for w in words] + [w[2] for w in words]
        ys = [w[1] for w in words] + [w[3] for w in words]
        region = (min(xs), min(ys), max(xs), max(ys))
        with_rules = [sorted({w[1] for w in words})[:5]] if all(w[5] > 0 for w in words) else []
        for rules in (None, *with_rules):
            tg = tables.text_grid(words, region, rules)
            if tg is not None:
                assert tg.n_rows >= 2 and tg.n_cols >= 2
                _cells_inside(tg)
                unruled.not_a_table(tg)


SEG_COORD = st.one_of(st.integers(-100, 1000), st.sampled_from([0, 10**6])).map(float)


@st.composite
def segments(draw: st.DrawFn) -> tuple[list[Seg], list[Seg]]:
    hs = [Seg(a, y, b, y) for a, b, y in draw(st.lists(st.tuples(SEG_COORD, SEG_COORD, SEG_COORD), max_size=25))]
    vs = [Seg(x, a, x, b) for a, b, x in draw(st.lists(st.tuples(SEG_COORD, SEG_COORD, SEG_COORD), max_size=25))]
    return hs, vs


@PROPS
@given(segments(), st.sampled_from([0.0, 0.5, 4.0, 50.0]), st.sampled_from([0.0, 5.0, 200.0]))
@example(([Seg(0, 0, 100, 0), Seg(0, 50, 100, 50), Seg(0, 100, 100, 100)],
          [Seg(0, 0, 0, 100), Seg(50, 0, 50, 50), Seg(100, 0, 100, 100)]), 4.0, 0.0)  # a cell spanning two rows
def test_rule_geometry_never_fails(segs: tuple[list[Seg], list[Seg]], tol: float, min_size: float) -> None:
    h, v = segs
    for g in tables.find_grids(h, v, tol, min_size):
        assert g.n_cols >= 2
        _cells_inside(g)
    for x0, y0, x1, y1 in tables.rule_regions(h, v, tol, min_size, 300.0):
        assert x0 <= x1 and y0 <= y1


@PROPS
@given(st.lists(st.lists(st.one_of(st.text(max_size=8), st.sampled_from(["•", "(1)", "1.2", "∑x", "{", "a"])),
                         min_size=1, max_size=5), min_size=1, max_size=8))
def test_not_a_table_takes_any_filled_grid(rows: list[list[str]]) -> None:
    n_cols = max(len(r) for r in rows)
    cells = [GridCell(r, c, 1, 1, (c * 10.0, r * 10.0, c * 10.0 + 10, r * 10.0 + 10), t)
             for r, row in enumerate(rows) for c, t in enumerate(row)]
    verdict = unruled.not_a_table(Grid([10.0 * k for k in range(n_cols + 1)], [10.0 * k for k in range(len(rows) + 1)],
                                      cells, filled=True))
    assert verdict in (None, "code", "math", "list", "type sample", "table of contents")


# -- the searchable PDF's text placement ----------------------------------------------------------

def _placed_chars(lines: list[Any]) -> str:
    return "".join(w.text for ln in lines for w in ln.words).replace(" ", "")


@PROPS
@given(PAGE_TEXTS, st.one_of(st.none(), layouts(has_words=False), layouts(has_words=True)), st.booleans(),
       st.sampled_from([(1240, 1754), (1, 1), (320, 40), (5000, 20)]))
def test_place_text_places_every_token(text: str, layout: PageLayout | None, markdown: bool,
                                       size: tuple[int, int]) -> None:
    """Every token is placed (the contract: nothing is dropped), in order, each line's words
    inside its line's box, on any text and any (odd) layout."""
    placed = place_text(text, layout, markdown, size)
    if layout is not None and layout.has_words:
        assert placed.how in ("words", "none")
        return
    tokens = "".join("".join(ln.split()) for p in plain_lines(text, markdown) for ln in p)
    assert placed.how in (("none",) if not tokens else ("lines", "blocks", "page"))
    assert _placed_chars(placed.lines) == tokens
    for ln in placed.lines:
        for w in ln.words:
            assert ln.box[0] <= w.box[0] <= w.box[2] <= max(ln.box[2], w.box[0] + 1), (ln.box, w)
            assert not (len(w.text) > 1 and _CJK.fullmatch(w.text[0]) and " " in w.text)


# -- dates and classification -------------------------------------------------------------------

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATE_TEXT = st.one_of(
    st.text(max_size=120),
    st.lists(st.sampled_from(["2024-03-14", "14.03.2024", "03/14/2024", "2024年3月14日", "令和元年5月1日", "平成31年4月1日",
                              "14 März 2024", "March 14, 2024", "1er mars 2024", "Datum:", "日付", " ", "\n", "31.02.2024",
                              "0/0/1900", "99-99-2099", "२०२४-०३-१४", "２０２４年３月１４日", "x", "1.2.3"]),
                    max_size=12).map("".join),
)


@PROPS
@given(DATE_TEXT, st.sampled_from([*LANGUAGES, "unknown", ""]))
def test_dates_never_fail_and_are_real_dates(text: str, language: str) -> None:
    found = find_dates(text, language)
    for f in found:
        assert ISO.match(f.iso) and 1900 <= datetime.date.fromisoformat(f.iso).year <= datetime.date.today().year + 1
    assert [f.start for f in found] == sorted(f.start for f in found)
    best = document_date(text, language)
    assert best is None if not found else best in {f.iso for f in found}


@PROPS
@given(st.dates(datetime.date(1900, 1, 1), datetime.date(2025, 12, 31)),
       st.text(st.characters(exclude_categories=["Nd"]), max_size=30), st.sampled_from(LANGUAGES))
def test_an_iso_date_in_any_text_is_found(day: datetime.date, noise: str, language: str) -> None:
    assert day.isoformat() in {f.iso for f in find_dates(f"{noise} {day.isoformat()} {noise}", language)}


@pytest.fixture(scope="module")
def shipped() -> Config:
    """A config with the shipped doctypes (no doctypes: section)."""
    return parse_config_text("inboxes: [{path: /tmp/in}]\n")


@PROPS
@given(st.one_of(PAGE_TEXTS, DATE_TEXT), st.text(max_size=20), st.integers(0, 600), st.booleans())
def test_classify_never_fails(shipped: Config, text: str, filename: str, pages: int, markdown: bool) -> None:
    c = classify(text, cfg=shipped, filename=filename or "x.pdf", pages=pages, markdown=markdown)
    assert c.language in (*LANGUAGES, "unknown") and 0.0 <= c.language_confidence <= 1.0
    assert c.doctype in (*shipped.doctypes, "other")
    assert c.has_table == detect_table(text, markdown) and c.has_math == detect_math(text)
    assert c.doc_date is None or ISO.match(c.doc_date)
