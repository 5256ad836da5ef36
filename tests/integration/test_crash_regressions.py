"""Crashes that failed whole documents (issue 24, item 1), each reproduced with a generated
document through the real code path (Tesseract, the table finder, the xlsx writer, the render
worker pool, ``ocr-daemon once``/``route``):

- tesserocr raising "No text returned" on an empty word (a rule, a speck) while a scanned page's
  table regions are read: a form with fill-in lines, JPEG or PNG, 150-300 dpi;
- ``min()`` of no rules: a table whose horizontal rules are drawn in pieces with small gaps;
- openpyxl's ``MergedCell`` as the frozen-pane anchor: a scanned table whose first column's
  header spans two rows;
- one line of large text (a 320x40 or 640x80 image, scaled up by the render stage) taken for a
  ruled table made of its letters' strokes, its text lost;
- a PDF whose page tree has a cycle: MuPDF's exception could not be pickled back from the render
  worker ("internal error: TypeError: cannot pickle ..." after 3 tries) instead of one
  ``InputError``.
"""

from __future__ import annotations

import io
import json
import pickle
from collections.abc import Iterator
from pathlib import Path

import docgen
import layoutgen
import numpy as np
import pymupdf
import pytest
from conftest import run_cli, write_rules
from PIL import Image, ImageDraw, ImageFont
from renderopts import render_opts

from daemon.config import EngineCfg, TesseractCfg
from daemon.document.model import Document, Table
from daemon.document.parse import parse_document
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.models import RenderOptions
from daemon.pagerecord import ImagePage, PageResult
from daemon.pages.renderpool import RenderPool
from daemon.pages.textlayer import read_or_render
from daemon.service.outputs import page_document, page_texts
from daemon.writers.tables import write_xlsx

#: The Tesseract engine's render settings (engine.tesseract.render_dpi's default).
TESS_RENDER = render_opts(autorotate=False, dpi=300)


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1, languages=["en"])))
    eng.start()
    yield eng
    eng.close()


def _read(engine: TesseractEngine, path: Path, opts: RenderOptions = TESS_RENDER) -> PageResult:
    """The image's one page rendered, recognised, and finished as the pipeline records it."""
    page = read_or_render(path, 0, opts)
    assert isinstance(page, ImagePage)
    answer = engine.submit(PageRequest(path.stem, 0, page.image)).result(timeout=300)
    return PageResult.from_engine(page, answer, engine_markdown=False)


def _document(res: PageResult) -> Document:
    """The document model of the one page, as the pipeline makes it."""
    return page_document([res], False, page_texts([res], engine_markdown=False)[0])


def _scan_noise(img: Image.Image, path: Path, seed: int = 0) -> Path:
    """``img`` (grey) with scanner noise, saved as JPEG (quality 70: its artefacts too) or PNG."""
    a = np.asarray(img, dtype=np.int16)
    noisy = np.clip(a + np.random.default_rng(seed).normal(0, 12, a.shape), 0, 255).astype(np.uint8)
    out = Image.fromarray(noisy)
    if path.suffix == ".jpg":
        out.save(path, "JPEG", quality=70)
    else:
        out.save(path, "PNG")
    return path


# ------------------------------------------------------------------ empty words ("No text returned")


def _form_scan(path: Path, dpi: int) -> Path:
    """An A4 page at ``dpi``: an underlined heading, a paragraph, amounts with a rule above the
    total, and fill-in lines (Name, Date, Signature) whose labels stand left of the lines."""
    s = dpi / 150
    img = Image.new("L", (round(8.27 * dpi), round(11.69 * dpi)), 255)
    d = ImageDraw.Draw(img)
    body = ImageFont.truetype(str(docgen.DEJAVU), round(22 * s))
    head = ImageFont.truetype(str(docgen.DEJAVU), round(30 * s))
    lw = max(2, round(2 * s))
    x, y = round(100 * s), round(100 * s)
    d.text((x, y), "Quarterly Report", font=head, fill=0)
    d.line([(x, y + round(42 * s)), (x + round(340 * s), y + round(42 * s))], fill=0, width=lw)
    y += round(80 * s)
    for line in ["The committee met on 3 March to review the accounts.",
                 "All members were present and the minutes were approved.",
                 "Expenses for the quarter are listed below."]:
        d.text((x, y), line, font=body, fill=0)
        y += round(36 * s)
    y += round(20 * s)
    for item, amount in [("Rent", "1,200.00"), ("Power", "310.50"), ("Travel", "95.20")]:
        d.text((x, y), item, font=body, fill=0)
        d.text((x + round(600 * s), y), amount, font=body, fill=0)
        y += round(36 * s)
    d.line([(x + round(450 * s), y + round(4 * s)), (x + round(790 * s), y + round(4 * s))], fill=0, width=lw)
    y += round(14 * s)
    d.text((x, y), "Total", font=body, fill=0)
    d.text((x + round(600 * s), y), "1,605.70", font=body, fill=0)
    y += round(100 * s)
    for label in ("Name", "Date", "Signature"):
        d.text((x, y), label + ":", font=body, fill=0)
        d.line([(x + round(200 * s), y + round(26 * s)), (x + round(600 * s), y + round(26 * s))], fill=0, width=lw)
        y += round(60 * s)
    return _scan_noise(img, path)


@pytest.mark.parametrize(("dpi", "ext"), [(150, "jpg"), (200, "png"), (300, "jpg")])
def test_scan_with_short_rules_and_fill_in_lines_is_read(engine: TesseractEngine, tmp_path: Path,
                                                         dpi: int, ext: str) -> None:
    # The fill-in lines make a region between rules with no word in it: Tesseract's words there
    # are empty, and tesserocr raised on them ("tesseract failed on a table ...: No text returned").
    res = _read(engine, _form_scan(tmp_path / f"form{dpi}.{ext}", dpi))
    for words in ("Quarterly Report", "minutes were approved", "Travel 95.20", "Total 1,605.70", "Signature"):
        assert words in res.text, res.text


# ------------------------------------------------------------------ rules drawn in pieces (min() of nothing)

ROWS = [
    ["Item", "Quantity", "Amount"],
    ["Printer paper", "12", "54.00"],
    ["Toner cartridge", "2", "118.50"],
    ["Service contract", "1", "240.00"],
]


def _pieced_rules_table(gap: int) -> Image.Image:
    """A page with a heading and a table whose rules (under every row, none above the header,
    no vertical ones) are each drawn as two halves ``gap`` px apart."""
    img = Image.new("L", (1240, 1754), 255)
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(docgen.DEJAVU), 30)
    d.text((100, 120), "Storage volumes by terminal", fill=0, font=font)
    top, row_h = 260, 72
    for r, row in enumerate(ROWS):
        for c, cell in enumerate(row):
            d.text((100 + c * 340, top + r * row_h + 17), cell, fill=0, font=font)
        y = top + (r + 1) * row_h
        d.line([(100, y), (610, y)], fill=0, width=2)
        d.line([(610 + gap, y), (1120, y)], fill=0, width=2)
    return img


@pytest.mark.parametrize("gap", [3, 6])
def test_table_with_rules_drawn_in_pieces(engine: TesseractEngine, tmp_path: Path, gap: int) -> None:
    # The region's rules were looked for among the pieces, none of which spans the table:
    # "tesseract failed on a table ...: min() arg is an empty sequence".
    png = tmp_path / "pieces.png"
    _pieced_rules_table(gap).save(png)
    res = _read(engine, png, render_opts(autorotate=False))
    blocks = _document(res).pages[0].blocks
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 1, res.text
    assert tables[0].expanded() == ROWS  # the header above the first rule included


# ------------------------------------------------------------------ spanning cells -> xlsx (MergedCell)

SPAN_BODY = [["Printer paper", "54.00", "10.26"], ["Toner cartridge", "118.50", "22.52"], ["Service contract", "240.00", "45.60"]]


def _spanning_header_table() -> Image.Image:
    """A ruled table whose first column's header "Item" spans two rows and whose "Amount" spans
    the two columns "Net" and "VAT" under it, between two lines of text."""
    img = Image.new("L", (1240, 1754), 255)
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(docgen.DEJAVU), 30)
    bold = ImageFont.truetype(str(layoutgen.DEJAVU_BOLD), 30)
    d.text((100, 120), "Expenses of the second quarter", fill=0, font=font)
    x = [100, 520, 820, 1120]
    top, row_h = 260, 66
    ys = [top + r * row_h for r in range(len(SPAN_BODY) + 3)]
    d.text((x[0] + 14, top + row_h - 15), "Item", fill=0, font=bold)  # centred on its two rows
    d.text((x[1] + 14, ys[0] + 16), "Amount", fill=0, font=bold)
    d.text((x[1] + 14, ys[1] + 16), "Net", fill=0, font=bold)
    d.text((x[2] + 14, ys[1] + 16), "VAT", fill=0, font=bold)
    for r, row in enumerate(SPAN_BODY):
        for c, cell in enumerate(row):
            d.text((x[c] + 14, ys[r + 2] + 16), cell, fill=0, font=font)
    for k, y in enumerate(ys):
        # the rule under "Amount" only under it; none between the two rows "Item" spans
        x0 = x[1] if k == 1 else x[0]
        d.line([(x0, y), (x[-1], y)], fill=0, width=3)
    for k, xv in enumerate(x):
        # the rule between "Net" and "VAT" starts below "Amount"
        d.line([(xv, ys[1] if k == 2 else ys[0]), (xv, ys[-1])], fill=0, width=3)
    d.text((100, ys[-1] + 80), "All amounts in euro", fill=0, font=font)
    return img


def test_scanned_table_with_spanning_cells_to_xlsx(engine: TesseractEngine, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    png = tmp_path / "spans.png"
    _spanning_header_table().save(png)
    doc = _document(_read(engine, png, render_opts(autorotate=False)))
    tables = doc.tables()
    assert len(tables) == 1
    t = tables[0][2]
    assert t.expanded() == [["Item", "Amount", "Amount"], ["Item", "Net", "VAT"], *SPAN_BODY]
    # "TypeError: 'MergedCell' object is not iterable": the frozen pane's anchor (A2, the first
    # row under the header) lies inside "Item"'s merged range
    xlsx = tmp_path / "spans.xlsx"
    xlsx.write_bytes(write_xlsx(doc))
    ws = load_workbook(xlsx).active
    assert ws is not None
    assert sorted(str(r) for r in ws.merged_cells.ranges) == ["A1:A2", "B1:C1"]
    assert [ws.cell(row=1, column=c).value for c in (1, 2)] == ["Item", "Amount"]
    assert [ws.cell(row=4, column=c).value for c in (1, 2, 3)] == ["Toner cartridge", 118.5, 22.52]
    assert ws.freeze_panes == "A2"


def test_xlsx_of_a_table_whose_first_column_spans_into_the_body() -> None:
    """The writer alone (no OCR): a header cell of the first column spanning the first body row
    too, as a scanned grid without a rule under it comes out."""
    from openpyxl import load_workbook

    doc = parse_document(["<table><tr><th rowspan=\"2\">Item</th><th>Qty</th></tr><tr><td>2</td></tr>"
                          "<tr><td>Paper</td><td>3</td></tr></table>"], markdown=True)
    data = write_xlsx(doc)
    ws = load_workbook(io.BytesIO(data)).active
    assert ws is not None
    assert [str(r) for r in ws.merged_cells.ranges] == ["A1:A2"]
    assert [[c.value for c in row] for row in ws.iter_rows()] == [["Item", "Qty"], [None, 2], ["Paper", 3]]
    assert ws.freeze_panes == "A2"


# ------------------------------------------------------------------ one line of text

def _one_line(path: Path, text: str, size: tuple[int, int], *, bold: bool = False) -> Path:
    """An image of exactly one line of ``text`` (cap height about half the image's height)."""
    w, h = size
    img = Image.new("RGB", size, "white")
    font = ImageFont.truetype(str(layoutgen.DEJAVU_BOLD if bold else docgen.DEJAVU), int(h * 0.55))
    ImageDraw.Draw(img).text((int(h * 0.2), int(h * 0.225) - 2), text, font=font, fill="black")
    img.save(path)
    return path


@pytest.mark.parametrize(("text", "size", "bold"), [
    ("TOTAL 4444 EUR", (320, 40), False),
    ("Total: 1,234.56", (320, 40), False),
    ("TOTAL 4444 EUR", (640, 80), True),
    ("Order #4711 HEH", (640, 80), True),
])
def test_one_line_images_yield_their_text(engine: TesseractEngine, tmp_path: Path, text: str,
                                          size: tuple[int, int], bold: bool) -> None:
    # Scaled up to 1540 px, the letters' strokes are longer than the shortest rule a page
    # image may have: a "4" or an "E" made a ruled grid, which replaced the line's text.
    res = _read(engine, _one_line(tmp_path / "line.png", text, size, bold=bold))
    assert res.text == text
    assert not res.meta.get("markdown")


def test_route_explain_on_one_line_image(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path)
    png = _one_line(tmp_path / "line.png", "TOTAL 4444 EUR", (320, 40))
    r = run_cli("route", "--explain", "--config", str(cfg), str(png))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "has_table=no" in r.stdout, r.stdout


# ------------------------------------------------------------------ a cycle in a PDF's page tree

def _pdf_bytes(objects: list[str]) -> bytes:
    """A PDF of the given objects (numbered from 1; object 1 the catalog) with a correct xref."""
    out = b"%PDF-1.7\n"
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{obj}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def make_page_tree_cycle_pdf(path: Path) -> Path:
    """A PDF whose root page-tree node lists a node that lists the root again (MuPDF: "cycle in
    page tree" when it loads any page). /Count says 3, so the file opens with 3 pages."""
    content = "BT /F1 24 Tf 72 700 Td (Quarterly report) Tj ET"
    path.write_bytes(_pdf_bytes([
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [5 0 R 3 0 R] /Count 3 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 2 >>",
    ]))
    return path


def load_page(path: str, index: int) -> None:
    """Run in a render worker: load a page with PyMuPDF, letting its exception out as it is."""
    with pymupdf.open(path) as doc:
        doc.load_page(index)


def test_render_worker_sends_back_an_exception_that_cannot_be_pickled(tmp_path: Path) -> None:
    pdf = make_page_tree_cycle_pdf(tmp_path / "cycle.pdf")
    pool = RenderPool(1, memory_mb=1024)
    try:
        task = pool.submit(load_page, str(pdf), 0)
        err = task.exception(timeout=120)
    finally:
        pool.close()
    assert err is not None
    # MuPDF's own exception holds a SWIG pointer: it came back as "cannot pickle 'SwigPyObject'"
    assert "cycle in page tree" in str(err), repr(err)
    assert "FzErrorFormat" in str(err)
    pickle.loads(pickle.dumps(err))


def test_pdf_with_page_tree_cycle_fails_at_once_as_corrupt(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, routes=[{"name": "all", "destination": "out",
                                         "formats": ["txt", "md", "json", "csv", "xlsx", "tex", "pdf"]}])
    pdf = make_page_tree_cycle_pdf(tmp_path / "inbox" / "cycle.pdf")
    r = run_cli("once", "--jsonl", "--apply-source-action", str(pdf), "--config", str(cfg))
    assert r.returncode == 1, r.stderr
    rec = json.loads(r.stdout)
    assert rec["state"] == "failed", rec
    assert rec["error"].startswith("corrupt PDF: "), rec
    assert "cycle in page tree" in rec["error"]
    note = next((tmp_path / "failed").glob("cycle*.txt")).read_text()
    assert "Attempts: 1\n" in note, note  # an InputError: no second try


def test_route_explain_on_pdf_with_page_tree_cycle(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path)
    pdf = make_page_tree_cycle_pdf(tmp_path / "cycle.pdf")
    r = run_cli("route", "--explain", "--config", str(cfg), str(pdf))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr, r.stderr
    assert "corrupt PDF: " in r.stderr
