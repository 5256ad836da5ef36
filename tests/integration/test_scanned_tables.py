"""Scanned ruled tables: the Tesseract engine finds the table on the page image and reads it
cell by cell (daemon.pages.tables), so the csv writer gets a real table on a CPU machine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import docgen
import layoutgen
import pytest
from renderopts import render_opts

from daemon.config import EngineCfg, TesseractCfg
from daemon.document.model import Document, Paragraph, Table
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.models import PageText
from daemon.pagerecord import ImagePage, PageResult
from daemon.pages.render import render_page
from daemon.pages.scantables import find_image_grids
from daemon.pages.textlayer import read_or_render
from daemon.service.outputs import page_document, page_texts
from daemon.writers.tables import write_csv

ROWS = [
    ["Item", "Quantity", "Amount"],
    ["Printer paper", "12", "54.00"],
    ["Toner cartridge", "2", "118.50"],
    ["Service contract", "1", "240.00"],
    ["Total", "", "412.50"],
]


def _document(page: ImagePage, res: PageText) -> Document:
    """The document model of the one page, as the pipeline makes it (the scanned tables' blocks
    as the engine built them)."""
    done = [PageResult.from_engine(page, res, engine_markdown=False)]
    return page_document(done, False, page_texts(done, engine_markdown=False)[0])


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1, languages=["en"])))
    eng.start()
    yield eng
    eng.close()


def test_scanned_ruled_table_becomes_a_table_with_the_right_cells(engine: TesseractEngine, tmp_path: Path) -> None:
    png = tmp_path / "statement.png"
    layoutgen.ruled_table_image(ROWS).save(png)
    page = read_or_render(png, 0, render_opts(autorotate=False))  # as the pipeline renders it (1540 px)
    assert isinstance(page, ImagePage)
    res = engine.submit(PageRequest("doc-t", 0, page.image)).result(timeout=300)
    assert res.markdown
    doc = _document(page, res)
    blocks = doc.pages[0].blocks
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 1
    assert tables[0].expanded() == ROWS
    paras = [b.text for b in blocks if isinstance(b, Paragraph)]
    assert paras == ["Monthly statement of the storage account", "Please keep this statement for your records"]
    assert [type(b).__name__ for b in blocks] == ["Paragraph", "Table", "Paragraph"]
    files = write_csv(doc, "statement")
    assert list(files) == ["statement.table-1-1.csv"]
    assert files["statement.table-1-1.csv"].decode().splitlines()[1] == "Printer paper,12,54.00"


@pytest.mark.parametrize("lang", ["en", "de", "zh", "ja"])
def test_text_pages_have_no_ruled_table(tmp_path: Path, lang: str) -> None:
    png = docgen.make_image(tmp_path / f"{lang}.png", docgen.SAMPLES[lang] * 3, lang=lang)
    page = render_page(png, 0, render_opts(autorotate=False))
    assert find_image_grids(page.image.convert("L")) == []


def test_scanned_table_with_grey_horizontal_rules_only(engine: TesseractEngine, tmp_path: Path) -> None:
    png = tmp_path / "volumes.png"
    layoutgen.rules_only_table_image(ROWS[:4]).save(png)
    page = read_or_render(png, 0, render_opts(autorotate=False))
    assert isinstance(page, ImagePage)
    res = engine.submit(PageRequest("doc-r", 0, page.image)).result(timeout=300)
    blocks = _document(page, res).pages[0].blocks
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 1
    assert tables[0].expanded() == ROWS[:4]  # the header above the first rule included
    assert [b.text for b in blocks if isinstance(b, Paragraph)] == ["Storage volumes by terminal"]


INVOICE = [
    ["Quantity", "Description", "Unit price", "Amount"],
    ["2", "Mooring rope", "9.95", "19.90"],
    ["5", "Fender", "20.00", "100.00"],
    ["1", "Deck brush", "19.95", "19.95"],
    ["10", "Shackle", "12.30", "123.00"],
]


def test_scanned_unruled_table_becomes_a_table_with_the_right_cells(engine: TesseractEngine, tmp_path: Path) -> None:
    png = tmp_path / "invoice.png"
    layoutgen.unruled_table_image(INVOICE).save(png)
    page = read_or_render(png, 0, render_opts(autorotate=False))
    assert isinstance(page, ImagePage)
    res = engine.submit(PageRequest("doc-u", 0, page.image)).result(timeout=300)
    assert res.markdown
    doc = _document(page, res)
    blocks = doc.pages[0].blocks
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 1
    assert tables[0].expanded() == INVOICE
    text = " ".join(b.text for b in blocks if isinstance(b, Paragraph))
    assert "Invoice No: 2024-117" in text and "Total due within 30 days" in text  # outside the table, as text
    files = write_csv(doc, "invoice")
    assert files["invoice.table-1-1.csv"].decode().splitlines()[2] == "5,Fender,20.00,100.00"


@pytest.mark.parametrize("lang", ["en", "de", "zh", "ja"])
def test_text_pages_give_no_table(engine: TesseractEngine, tmp_path: Path, lang: str) -> None:
    """Pages of running text (justified lines with wide word gaps included) hold no table."""
    png = docgen.make_image(tmp_path / f"{lang}.png", docgen.SAMPLES[lang] * 3, lang=lang)
    page = render_page(png, 0, render_opts(autorotate=False))
    res = engine.submit(PageRequest(f"doc-{lang}", 0, page.image)).result(timeout=300)
    assert "<table>" not in res.text and not res.meta.get("markdown")


def test_a_ruled_grid_of_drawings_is_no_table(engine: TesseractEngine, tmp_path: Path) -> None:
    """Lines of a plan or a chart make a ruled grid; its cells read as junk at low confidence
    (30-39 on the real set's photos and screenshots, 92-100 on real tables), so it stays page text."""
    png = tmp_path / "plan.png"
    layoutgen.picture_grid_image().save(png)
    page = render_page(png, 0, render_opts(autorotate=False))
    assert find_image_grids(page.image.convert("L")), "the test image must hold a ruled grid"
    res = engine.submit(PageRequest("doc-p", 0, page.image)).result(timeout=300)
    assert "<table>" not in res.text and not res.meta.get("markdown")
    assert "storage yard plan" in res.text


PACKAGES = [
    ["package", "popcon", "size", "description"],
    ["mc", "V:54, I:226", "1482", "full-screen file manager in text mode"],
    ["sudo", "V:638, I:823", "5990", "program giving limited root privileges to users"],
    ["vim", "V:97, I:390", "3570", "Unix text editor Vi IMproved, a programmers' text editor"],
    ["emacs-nox", "V:3, I:18", "33819", "GNU Emacs, the extensible self-documenting text editor"],
    ["w3m", "V:14, I:190", "2828", "text-mode WWW browsers, gopher and typography"],
    ["gpm", "V:11, I:14", "521", "Unix style cut-and-paste on the text console (daemon)"],
]


def test_a_tight_ruled_table_keeps_its_rows_and_words(engine: TesseractEngine, tmp_path: Path) -> None:
    """A table set as the Debian reference's package lists are (descenders and underlined links
    touching 1 px rules, a JPEG at 150 dpi in a PDF, rendered at 300 dpi): one table row per
    printed row, every word whole. Its rules broken where text touched them made cells span rows
    and a column's edge cut words ("éditeur de te pour progra" on the scanned French reference,
    issue 26)."""
    pdf = tmp_path / "packages.pdf"
    layoutgen.tight_ruled_table_image(PACKAGES, widths=(160, 170, 100, 700)).save(pdf, "PDF", resolution=150, quality=75)
    page = read_or_render(pdf, 0, render_opts(autorotate=False, dpi=300))  # the Tesseract engine's render
    assert isinstance(page, ImagePage)
    (grid,) = find_image_grids(page.image.convert("L"))
    assert (grid.n_rows, grid.n_cols) == (7, 4) and all(c.rowspan == c.colspan == 1 for c in grid.cells)
    res = engine.submit(PageRequest("doc-k", 0, page.image)).result(timeout=300)
    (table,) = [b for b in _document(page, res).pages[0].blocks if isinstance(b, Table)]
    rows = table.expanded()
    assert len(rows) == len(PACKAGES) and all(len(r) == 4 for r in rows), rows
    # ("I:226" reads as "1:226" in DejaVu Sans, in the page read too)
    words = {w.strip(",.()'").replace("I:", "1:") for r in rows for c in r for w in c.split()}
    expected = {w.strip(",.()'").replace("I:", "1:") for r in PACKAGES for c in r for w in c.split()}
    assert len(expected - words) <= 2, (sorted(expected - words), rows)
