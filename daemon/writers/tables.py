"""``csv`` and ``xlsx`` writers: the document's tables as data.

CSV: one file per table, ``<stem>.table-<page>-<n>.csv`` (page 1-based, n = the table's number
on that page, 1-based). Every grid slot gets the text of the cell covering it (spans expanded
into each covered slot), plain text (styles dropped, math as ``$…$`` source, line breaks kept
inside quoted fields). UTF-8, RFC 4180 quoting, CRLF line ends; optional UTF-8 BOM for Excel.
A document without tables has no CSV file.

XLSX: one workbook per document, one sheet per table, named ``p<page>-t<n>``; merged cells
merged; header rows bold and frozen; numbers stored as numbers where the cell is exactly one
number in the document's locale (:mod:`daemon.writers.numbers`), everything else as text (never
as a formula, even when it starts with ``=``). A document without tables gets one sheet saying
so. The file is byte-for-byte deterministic (fixed timestamps in the zip and the properties).
"""

from __future__ import annotations

import csv
import datetime
import io
import zipfile

from daemon.document.model import Document, Table
from daemon.writers.numbers import parse_number
from daemon.writers.text import display_width

BOM = "\ufeff"
# openpyxl refuses these (XML 1.0 cannot hold them): controls, the noncharacters U+FFFE/U+FFFF and
# lone surrogates (the gate's property test put U+FFFE in a cell: lxml's ValueError)
_XML_ILLEGAL = {chr(c) for c in range(32) if c not in (9, 10, 13)} | {"\ufffe", "\uffff"} | {
    chr(c) for c in range(0xD800, 0xE000)
}
MAX_CELL_CHARS = 32767  # Excel's limit per cell
_FIXED_TIME = datetime.datetime(2000, 1, 1)


def csv_name(stem: str, page: int, n: int) -> str:
    return f"{stem}.table-{page}-{n}.csv"


def table_csv(t: Table, *, bom: bool = False) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    for row in t.expanded():
        w.writerow(row)
    return ((BOM if bom else "") + buf.getvalue()).encode("utf-8")


def write_csv(doc: Document, stem: str, *, bom: bool = False) -> dict[str, bytes]:
    return {csv_name(stem, page, n): table_csv(t, bom=bom) for page, n, t in doc.tables()}


def sheet_name(page: int, n: int) -> str:
    return f"p{page}-t{n}"


def _clean(s: str) -> str:
    if any(ch in _XML_ILLEGAL for ch in s):
        s = "".join(ch for ch in s if ch not in _XML_ILLEGAL)
    return s[:MAX_CELL_CHARS]


def write_xlsx(doc: Document) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font
    from openpyxl.utils import get_column_letter
    from openpyxl.writer.excel import ExcelWriter

    wb = Workbook()
    default = wb.active
    tables = doc.tables()
    if default is not None:
        wb.remove(default)
    if not tables:
        ws = wb.create_sheet("no tables")
        ws["A1"] = "This document has no tables."
    bold = Font(bold=True)
    for page, n, t in tables:
        ws = wb.create_sheet(sheet_name(page, n))
        widths = [8.0] * t.n_cols
        merged: set[tuple[int, int]] = set()  # slots (row, col) inside a merged range
        for cell in t.cells:
            if (cell.row, cell.col) in merged:
                # openpyxl keeps a read-only MergedCell there; a table keeping its contract
                # (one cell per slot) never comes here, one that does not loses this cell only
                continue
            text = _clean(cell.plain)
            number = None if cell.header else parse_number(text, doc.language)
            xc = ws.cell(row=cell.row + 1, column=cell.col + 1)
            if number is not None:
                xc.value = number.value
                if number.number_format != "General":
                    xc.number_format = number.number_format
            elif text:
                xc.value = text
                xc.data_type = "s"  # text starting with "=" is text, not a formula
            if cell.header:
                xc.font = bold
            if "\n" in text:
                xc.alignment = Alignment(wrap_text=True, vertical="top")
            span = {(r, c) for r in range(cell.row, cell.row + cell.rowspan) for c in range(cell.col, cell.col + cell.colspan)}
            if len(span) > 1 and not span & merged:  # ranges that overlap cannot both be merged
                merged |= span
                ws.merge_cells(
                    start_row=cell.row + 1,
                    start_column=cell.col + 1,
                    end_row=cell.row + cell.rowspan,
                    end_column=cell.col + cell.colspan,
                )
                if "\n" not in text:
                    xc.alignment = Alignment(vertical="center")
            if cell.colspan == 1 and text:
                widest = max(display_width(x) for x in text.split("\n"))
                widths[cell.col] = min(60.0, max(widths[cell.col], widest + 2.0))
        for c, wdt in enumerate(widths, start=1):
            ws.column_dimensions[get_column_letter(c)].width = wdt
        if 0 < t.header_rows < t.n_rows:
            # by name: the cell object there is a MergedCell when a header cell of the first
            # column spans into the body (a scanned grid with no rule under it), which openpyxl's
            # setter does not take ("'MergedCell' object is not iterable")
            ws.freeze_panes = f"A{t.header_rows + 1}"
    wb.properties.creator = "ocr-daemon"
    wb.properties.created = _FIXED_TIME
    wb.properties.modified = _FIXED_TIME
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(wb, archive).save()
    return _fixed_zip(raw.getvalue())


def _fixed_zip(data: bytes) -> bytes:
    """The same zip with every entry's timestamp fixed, so equal input gives equal bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o600 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()
