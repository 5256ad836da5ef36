"""The table failures of issue 26 on real files: a bank statement whose header row (filled boxes)
came out as a table of its own and its transactions as paragraphs; a title band drawn as a ruled
box that became the table ",,<bank name>,,"; a scanned invoice whose address block became a table
while its grey-ruled item table was lost."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
import tablegen
from renderopts import render_opts

from daemon.config import EngineCfg, TesseractCfg
from daemon.document.layout import layer_blocks
from daemon.document.model import Table
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.pagerecord import ImagePage, PageResult
from daemon.pages.textlayer import read_layer, read_or_render
from daemon.service.outputs import page_document, page_texts
from daemon.writers.tables import table_csv


def _born_digital_tables(pdf: Path) -> list[list[list[str]]]:
    """The page's tables as the csv writer writes them."""
    layer = read_layer(pymupdf.open(pdf)[0], 0)
    return [list(csv.reader(io.StringIO(table_csv(b).decode()))) for b in layer_blocks(layer) if isinstance(b, Table)]


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1, languages=["en"])))
    eng.start()
    yield eng
    eng.close()


def _scanned_tables(engine: TesseractEngine, png: Path) -> tuple[list[list[list[str]]], str]:
    """The page's tables as the csv writer writes them, and the page's text outside them."""
    page = read_or_render(png, 0, render_opts(autorotate=False))
    assert isinstance(page, ImagePage)
    res = engine.submit(PageRequest("doc-t", 0, page.image)).result(timeout=600)
    done = [PageResult.from_engine(page, res, engine_markdown=False)]
    blocks = page_document(done, False, page_texts(done, engine_markdown=False)[0]).pages[0].blocks
    tables = [list(csv.reader(io.StringIO(table_csv(b).decode()))) for b in blocks if isinstance(b, Table)]
    return tables, " ".join(getattr(b, "text", "") for b in blocks if not isinstance(b, Table))


def test_statement_header_row_is_joined_to_its_body(tmp_path: Path) -> None:
    """The header drawn as filled boxes and the unruled transactions under it are one table
    (the CSV held only the header, or a header-only and a body-only CSV); the wrapped
    description stays one cell."""
    tables = _born_digital_tables(tablegen.statement_pdf(tmp_path / "statement.pdf"))
    assert tables == [tablegen.STATEMENT]


def test_title_band_is_no_table(tmp_path: Path) -> None:
    """A ruled box around the bank's name is no table; the ruled ledger under it is the only one."""
    tables = _born_digital_tables(tablegen.title_band_pdf(tmp_path / "title.pdf"))
    assert tables == [tablegen.LEDGER]


def test_scanned_title_band_is_no_table(engine: TesseractEngine, tmp_path: Path) -> None:
    png = tablegen.scan_of(tablegen.title_band_pdf(tmp_path / "title.pdf"), tmp_path / "title.png")
    tables, text = _scanned_tables(engine, png)
    assert len(tables) == 1 and tables[0][0] == tablegen.LEDGER[0] and len(tables[0]) == len(tablegen.LEDGER)
    assert "Jiangnan Commercial Bank" in text


def test_address_block_is_no_table_and_grey_ruled_items_are_found(engine: TesseractEngine, tmp_path: Path) -> None:
    """The recipient's address beside the invoice details lines up in three columns, but it has
    no header and no column of numbers: text. The item table ruled in light grey (lost on the
    scan: the ink threshold does not see its rules, and a skewed rule is no single pixel row)
    is read cell by cell."""
    pdf = tablegen.invoice_pdf(tmp_path / "invoice.pdf")
    assert _born_digital_tables(pdf) == [tablegen.ITEMS]
    tables, text = _scanned_tables(engine, tablegen.scan_of(pdf, tmp_path / "invoice.png", noise=3.0))
    assert len(tables) == 1
    # every cell but the first: the engine's Sauvola binarisation reads nothing in the bold
    # "Pos" cell's rectangle (global Otsu reads it at 96: a reading matter, not the table's)
    assert tables[0][0][1:] == tablegen.ITEMS[0][1:] and tables[0][1:] == tablegen.ITEMS[1:]
    assert "Linden Avenue 7" in text and "14.11.2026" in text


def test_skewed_banded_statement_keeps_wrapped_cells_in_their_rows(engine: TesseractEngine, tmp_path: Path) -> None:
    """A statement without rules, every other row shaded, scanned 0.7 degrees askew: a wrapped
    description stays in its row. Measured over whole lines, the skew's drift closed the gaps
    between rows to those inside a wrapped cell, so wrapped lines became rows of their own (the
    table set's gen-statement-en-scan lost its table that way)."""
    pdf = tablegen.zebra_statement_pdf(tmp_path / "statement.pdf")
    tables, _ = _scanned_tables(engine, tablegen.scan_of(pdf, tmp_path / "statement.png", skew=0.7, seed=3, noise=3.0))
    assert len(tables) == 1
    # (the header, white on a dark band, is Tesseract's to read; the body is the table's)
    assert tables[0][-len(tablegen.BANDED) + 1:] == tablegen.BANDED[1:], tables[0]


def test_rules_along_shaded_rows_are_found(tmp_path: Path) -> None:
    """A timesheet's weekend rows shaded grey, scanned at 200 dpi: the dark rules along the shade
    are rules (at the light rules' level the shade is ink, so they were not thin, and the grid
    had 18 rows for 32: weekends merged into their neighbours, issue 32). The engine's ink
    curve applied, as the engine sees the page."""
    from PIL import Image

    from daemon.engines.tesseract import INK_LUT
    from daemon.pages.scanrules import light_segments, rule_runs
    from daemon.pages.scantables import find_image_grids, image_segments

    pdf = tablegen.timesheet_pdf(tmp_path / "form.pdf", "cells")
    gray = Image.open(tablegen.scan_of(pdf, tmp_path / "form.jpg", dpi=200, skew=0.4, noise=8)).convert("L").point(INK_LUT)
    (grid,) = find_image_grids(gray, image_segments(gray), light_segments(gray, rule_runs(gray)))
    assert (grid.n_rows, grid.n_cols) == (32, 7)
