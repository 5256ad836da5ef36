"""Real pages with the table layouts that went wrong on bank statements and invoices (issue 26):
born-digital PDFs drawn with PyMuPDF and page images rendered from them like a scanner would.

Shared by tests/integration/test_table_regressions.py (bench/tables/generate.py draws the
benchmark's pages; these are smaller, fixed pages for the tests).

- ``statement_pdf(path)``: a bank statement: a filled title band, the header row drawn as one
  filled box per column with white bold text, ``STATEMENT`` under it without any rule (one
  description wraps onto a second line).
- ``title_band_pdf(path)``: a ruled title box of three cells (a double rule along its top) with
  the bank's name in the middle one, account lines, and ``LEDGER`` as a fully ruled table.
- ``invoice_pdf(path)``: an invoice: the recipient's address beside the invoice details (name |
  label | value on four lines), then ``ITEMS`` in a light grey grid (#b8b8b8).
- ``zebra_statement_pdf(path)``: a bank statement without any rule: the header row white on a
  dark band, every other row shaded light grey, ``BANDED`` (two descriptions wrap onto a second
  line; a money-in column filled in two rows only).
- ``scan_of(pdf, path, ...)``: page 1 of a PDF rendered as a grey scan (paper 236, a skew, blur
  and noise from a fixed seed), saved as PNG.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image, ImageFilter

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
DEJAVU_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

STATEMENT = [
    ["Date", "Description", "Debit", "Credit"],
    ["02/10/2026", "Salary from Atelier Lumiere", "", "2950.00"],
    ["03/10/2026", "Card payment Saint-Paul bakery", "8.40", ""],
    ["05/10/2026", "Direct debit Rhone Energy monthly instalment for October reference EDR-445", "96.20", ""],
    ["07/10/2026", "Cash withdrawal Bellecour", "60.00", ""],
    ["12/10/2026", "Rent Les Tanneurs", "845.00", ""],
    ["21/10/2026", "Health insurance refund", "", "42.60"],
]
LEDGER = [
    ["Date", "Entry", "Amount", "Balance"],
    ["2026-10-02", "Wages", "9800.00", "21436.52"],
    ["2026-10-05", "Transfer", "-1500.00", "19936.52"],
    ["2026-10-11", "Rent", "-3200.00", "16736.52"],
]
ITEMS = [
    ["Pos", "Article", "Quantity", "Price", "Amount"],
    ["1", "Dough mixer", "1", "2980.00", "2980.00"],
    ["2", "Baking trays", "20", "18.50", "370.00"],
    ["3", "Proofing baskets", "12", "9.80", "117.60"],
    ["4", "Dough scraper", "6", "4.90", "29.40"],
]
BANDED = [
    ["Date", "Description", "Money out", "Money in", "Balance"],
    ["01 Mar", "Balance brought forward", "", "", "980.40"],
    ["02 Mar", "Card payment Corner Grocer Leeds", "23.15", "", "957.25"],
    ["04 Mar", "Faster payment from J Okafor share of the March utility bills", "", "120.00", "1,077.25"],
    ["07 Mar", "Direct debit Yorkshire Water", "28.90", "", "1,048.35"],
    ["11 Mar", "Standing order Northgate Building Society mortgage payment", "655.10", "", "393.25"],
    ["15 Mar", "Cash withdrawal Headingley", "30.00", "", "363.25"],
    ["25 Mar", "Salary Aire Valley Freight", "", "1,904.60", "2,267.85"],
    ["28 Mar", "Direct debit City Council Tax", "131.00", "", "2,136.85"],
]
ADDRESS = ["Hofmann Bakery", "Anna Hofmann", "Linden Avenue 7", "80331 Munich"]
DETAILS = [("Invoice", "2026-1187"), ("Date", "14.11.2026"), ("Customer", "K-40211"), ("Delivery", "12.11.2026")]
BAND = (0.16, 0.27, 0.45)


def _page() -> tuple[pymupdf.Document, pymupdf.Page]:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_font(fontname="dv", fontfile=DEJAVU)
    page.insert_font(fontname="dvb", fontfile=DEJAVU_BOLD)
    return doc, page


def _text(page: pymupdf.Page, x: float, y: float, text: str, size: float = 10, bold: bool = False,
          color: tuple = (0, 0, 0), right: float | None = None) -> None:
    if right is not None:
        x = right - pymupdf.Font(fontfile=DEJAVU_BOLD if bold else DEJAVU).text_length(text, fontsize=size)
    page.insert_text((x, y), text, fontname="dvb" if bold else "dv", fontsize=size, color=color)


def _wrap(text: str, width: float, size: float = 10) -> list[str]:
    """``text`` broken into lines at most ``width`` pt wide (DejaVu Sans at ``size``)."""
    lines, cur = [], ""
    for w in text.split():
        if cur and pymupdf.Font(fontfile=DEJAVU).text_length(cur + " " + w, fontsize=size) > width:
            lines.append(cur)
            cur = w
        else:
            cur = (cur + " " + w).strip()
    return [*lines, cur]


def statement_pdf(path: Path) -> Path:
    """See the module docstring."""
    doc, page = _page()
    page.draw_rect(pymupdf.Rect(0, 0, 595, 70), fill=BAND, color=None)
    _text(page, 40, 44, "Rhone Valley Bank", 20, True, (1, 1, 1))
    for k, line in enumerate(["Current account 00412 558 903", "Statement of October 2026"]):
        _text(page, 40, 100 + 14 * k, line)
    xs = [40, 115, 375, 465, 555]
    top = 150.0
    for c in range(4):
        page.draw_rect(pymupdf.Rect(xs[c] + 0.8, top, xs[c + 1] - 0.8, top + 20), fill=BAND, color=None)
        _text(page, xs[c] + 4, top + 14, STATEMENT[0][c], 10, True, (1, 1, 1))
    y = top + 20 + 14
    for row in STATEMENT[1:]:
        lines = _wrap(row[1], 250)  # the description wrapped into its 260 pt column
        _text(page, xs[0] + 4, y, row[0])
        for k, ln in enumerate(lines):
            _text(page, xs[1] + 4, y + 12.5 * k, ln)
        for c in (2, 3):
            if row[c]:
                _text(page, 0, y, row[c], right=xs[c + 1] - 4)
        y += 12.5 * len(lines) + 9
    _text(page, 40, y + 40, "Please check this statement and tell us about any entry you do not recognise.", 9)
    path.write_bytes(doc.tobytes())
    return path


def title_band_pdf(path: Path) -> Path:
    """See the module docstring."""
    doc, page = _page()
    page.draw_rect(pymupdf.Rect(40, 36, 555, 84), color=(0, 0, 0), width=1.0)
    page.draw_line((40, 40), (555, 40), width=0.5)  # a double rule along its top: two rows on a scan
    for x in (130, 465):
        page.draw_line((x, 36), (x, 84), width=0.8)
    page.draw_rect(pymupdf.Rect(60, 44, 110, 76), fill=(0.75, 0.1, 0.1), color=None)
    _text(page, 200, 68, "Jiangnan Commercial Bank", 16, True)
    for k, line in enumerate(["Account holder: Wang Xiaoming", "Account 6222 0210 0104 5567"]):
        _text(page, 40, 110 + 14 * k, line)
    xs, top, h = [40, 140, 300, 420, 555], 160.0, 20.0
    for r, row in enumerate(LEDGER):
        for c, cell in enumerate(row):
            _text(page, xs[c] + 4, top + h * r + 14, cell, 10, r == 0)
    for r in range(len(LEDGER) + 1):
        page.draw_line((xs[0], top + h * r), (xs[-1], top + h * r), width=0.6)
    for x in xs:
        page.draw_line((x, top), (x, top + h * len(LEDGER)), width=0.6)
    path.write_bytes(doc.tobytes())
    return path


def invoice_pdf(path: Path) -> Path:
    """See the module docstring."""
    doc, page = _page()
    _text(page, 40, 50, "Mueller and Sons Ltd", 18, True)
    for k, line in enumerate(ADDRESS):
        _text(page, 40, 100 + 16 * k, line, 11)
    for k, (label, value) in enumerate(DETAILS):
        _text(page, 330, 100 + 16 * k, label, 11)
        _text(page, 0, 100 + 16 * k, value, 11, right=555)
    _text(page, 40, 190, "Invoice", 16, True)
    xs, top, h = [40, 90, 300, 385, 470, 555], 215.0, 24.0
    grey = (0.72, 0.72, 0.72)
    for r, row in enumerate(ITEMS):
        for c, cell in enumerate(row):
            if c < 2:
                _text(page, xs[c] + 5, top + h * r + 16, cell, 11, r == 0)
            else:
                _text(page, 0, top + h * r + 16, cell, 11, r == 0, right=xs[c + 1] - 5)
    for r in range(len(ITEMS) + 1):
        page.draw_line((xs[0], top + h * r), (xs[-1], top + h * r), color=grey, width=0.7)
    for x in xs:
        page.draw_line((x, top), (x, top + h * len(ITEMS)), color=grey, width=0.7)
    _text(page, 330, top + h * len(ITEMS) + 30, "Total", 11, True)
    _text(page, 0, top + h * len(ITEMS) + 30, "3497.00", 11, True, right=555)
    path.write_bytes(doc.tobytes())
    return path


def zebra_statement_pdf(path: Path, shade: float = 0.86) -> Path:
    """See the module docstring (``shade``: the grey of the shaded rows, 1 for none)."""
    doc, page = _page()
    _text(page, 40, 50, "Aire Valley Bank", 18, True)
    for k, line in enumerate(["Sort code 40-22-18", "Account number 31907264", "1 March to 31 March 2026"]):
        _text(page, 40, 90 + 14 * k, line)
    xs, top = [40, 95, 330, 420, 495, 555], 150.0
    page.draw_rect(pymupdf.Rect(xs[0], top, xs[-1], top + 18), fill=(0.3, 0.3, 0.3), color=None)
    for c, head in enumerate(BANDED[0]):
        _text(page, xs[c] + 4, top + 13, head, 9, True, (1, 1, 1))
    y = top + 18
    for r, row in enumerate(BANDED[1:]):
        lines = _wrap(row[1], 225)
        h = 8 + 12 * len(lines)
        if r % 2:
            page.draw_rect(pymupdf.Rect(xs[0], y, xs[-1], y + h), fill=(shade, shade, shade), color=None)
        _text(page, xs[0] + 4, y + 14, row[0])
        for k, ln in enumerate(lines):
            _text(page, xs[1] + 4, y + 14 + 12 * k, ln)
        for c in (2, 3, 4):
            if row[c]:
                _text(page, 0, y + 14, row[c], right=xs[c + 1] - 4)
        y += h
    _text(page, 40, y + 30, "Please check this statement and tell us at once about any entry you do not recognise.", 9)
    path.write_bytes(doc.tobytes())
    return path


def scan_of(pdf: Path, path: Path, *, dpi: int = 200, skew: float = 0.4, noise: float = 6.0, seed: int = 7) -> Path:
    """See the module docstring."""
    rng = np.random.default_rng(seed)
    pix = pymupdf.open(pdf)[0].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    a = 28 + np.asarray(img, dtype=np.float32) * (236 - 28) / 255
    img = Image.fromarray(a.astype(np.uint8)).rotate(skew, resample=Image.Resampling.BICUBIC, fillcolor=236)
    a = np.asarray(img.filter(ImageFilter.GaussianBlur(0.6)), dtype=np.float32)
    a += rng.normal(0, noise, a.shape)
    # a JPEG like a scanner's: its resolution recorded, lossy compression
    jpeg = {"dpi": (dpi, dpi), "quality": 85} if path.suffix.lower() in (".jpg", ".jpeg") else {}
    Image.fromarray(a.clip(0, 255).astype(np.uint8)).save(path, **jpeg)
    return path


WEEKDAYS = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
TIMESHEET_HEAD = ["Datum", "Wochentag", "Beginn", "Ende", "Pause", "Stunden", "Bemerkung"]


def timesheet_rows() -> list[list[str]]:
    """A German monthly timesheet's cells, header first: March 2026 (1 March is a Sunday), 31
    day rows; weekends "Ruhetag" with no times, a holiday-free month with a few remarks."""
    import datetime as dt

    rows = [TIMESHEET_HEAD]
    remarks = {4: "Homeoffice", 12: "Dienstreise Köln", 19: "Schulung", 26: "Homeoffice"}
    for day in range(1, 32):
        d = dt.date(2026, 3, day)
        wd = WEEKDAYS[d.weekday()]
        if d.weekday() >= 5:
            rows.append([d.strftime("%d.%m.%Y"), wd, "", "", "", "", "Ruhetag"])
            continue
        start = ["07:30", "08:00", "08:15", "09:00"][day % 4]
        end = ["16:00", "16:45", "17:00", "17:30"][day % 4]
        h0, m0 = map(int, start.split(":"))
        h1, m1 = map(int, end.split(":"))
        hours = (h1 * 60 + m1 - h0 * 60 - m0 - 30) / 60
        rows.append([d.strftime("%d.%m.%Y"), wd, start, end, "0:30", f"{hours:.2f}".replace(".", ","),
                     remarks.get(day, "")])
    return rows


def timesheet_pdf(path: Path, style: str = "grid") -> Path:
    """A German employee's ruled monthly timesheet (the form of issue 32): title, employer and
    employee lines, a header and 31 day rows, the month's total and two signature lines.
    ``style``: "grid" (one rule per row and column edge), "cells" (every cell a rectangle of its
    own, weekends shaded: a spreadsheet's export), "hrules" (a rule under every row, no vertical
    rule)."""
    doc, page = _page()
    _text(page, 40, 50, "Stundenzettel März 2026", 16, True)
    for k, line in enumerate(["Arbeitgeber: Bäckerei Hofmann GmbH, Lindenallee 7, 80331 München",
                              "Arbeitnehmer: Anna Schmidt", "Personalnummer: 4711    Abteilung: Backstube"]):
        _text(page, 40, 80 + 14 * k, line, 10)
    rows = timesheet_rows()
    xs, top, h = [40, 112, 190, 245, 300, 350, 405, 555], 130.0, 17.0
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            if cell:
                _text(page, xs[c] + 4, top + h * r + 12, cell, 9, r == 0)
    if style == "cells":
        for r, row in enumerate(rows):
            fill = (0.85, 0.85, 0.85) if r == 0 or row[-1] == "Ruhetag" else None
            for c in range(len(row)):
                page.draw_rect(pymupdf.Rect(xs[c], top + h * r, xs[c + 1], top + h * (r + 1)), color=(0, 0, 0),
                               fill=fill, width=0.5, overlay=False)
    else:
        for r in range(len(rows) + 1):
            page.draw_line((xs[0], top + h * r), (xs[-1], top + h * r), width=0.6)
        for x in xs if style == "grid" else ():
            page.draw_line((x, top), (x, top + h * len(rows)), width=0.6)
    total = sum(float(r[5].replace(",", ".")) for r in rows[1:] if r[5])
    y = top + h * len(rows) + 22
    _text(page, 40, y, f"Summe der Arbeitsstunden: {total:.2f}".replace(".", ","), 10, True)
    for x, label in ((40, "Datum, Unterschrift Arbeitnehmer"), (320, "Datum, Unterschrift Arbeitgeber")):
        page.draw_line((x, y + 50), (x + 230, y + 50), width=0.6)
        _text(page, x, y + 62, label, 8)
    path.write_bytes(doc.tobytes())
    return path


TOC = [("第一章 总则", "General provisions", 1), ("第二章 合同的订立", "Conclusion of contracts", 7),
       ("第三章 合同的效力", "Validity of contracts", 15), ("第四章 合同的履行", "Performance of contracts", 22),
       ("第五章 合同的变更和转让", "Modification and assignment", 31), ("第六章 合同的权利义务终止", "Termination", 38),
       ("第七章 违约责任", "Liability for breach", 46), ("第八章 其他规定", "Miscellaneous provisions", 53),
       ("第九章 买卖合同", "Sales contracts", 60), ("第十章 供用电、水、气、热力合同", "Supply contracts", 74),
       ("第十一章 赠与合同", "Gift contracts", 79), ("第十二章 借款合同", "Loan contracts", 83),
       ("第十三章 租赁合同", "Lease contracts", 90), ("第十四章 融资租赁合同", "Financial leasing", 101),
       ("第十五章 承揽合同", "Work contracts", 108), ("第十六章 建设工程合同", "Construction contracts", 115)]


def toc_pdf(path: Path) -> Path:
    """A two-column table of contents (issue 32: exported as a table): Chinese chapter titles
    with their English names under them and page numbers, set in two columns side by side."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((40, 60), "目录 Contents", fontname="china-s", fontsize=18)
    half = (len(TOC) + 1) // 2
    for k, (zh, en, pg) in enumerate(TOC):
        x, y = (40, 110 + 44 * k) if k < half else (315, 110 + 44 * (k - half))
        page.insert_text((x, y), zh, fontname="china-s", fontsize=11)
        page.insert_text((x, y + 15), en, fontname="helv", fontsize=9)
        num = str(pg)
        page.insert_text((x + 240 - pymupdf.get_text_length(num, "helv", 11), y), num, fontname="helv", fontsize=11)
    path.write_bytes(doc.tobytes())
    return path
