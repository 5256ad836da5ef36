"""Real test PDFs and scans with known layout: headings, lists, ruled tables, text layers.

Shared by tests/integration/test_textlayer.py, test_scanned_tables.py and bench/bench_textlayer.py.
Everything is a real file that PyMuPDF and Tesseract read; nothing is mocked.

- ``make_layout_pdf(path, pages=1)``: a born-digital PDF (PyMuPDF, Helvetica): per page a title
  (20 pt bold), a section heading (14 pt bold), body paragraphs (10 pt), a bulleted and a
  numbered list and a ruled table of ``TABLE`` (0.5 pt rules, one merged header cell).
  ``LAYOUT_WORDS`` are the words of one page.
- ``make_invisible_ocr_pdf(path)``: a scan (an image of text) with an invisible text layer over
  it (render mode 3), as OCR programs write them; the layer says ``INVISIBLE_TEXT``.
- ``make_soup_pdf(path, kind)``: glyph soup: ``"notounicode"`` (an embedded TrueType font whose
  ToUnicode map was removed: MuPDF reads U+FFFD) or ``"pua"`` (text in private-use code points).
- ``ruled_table_image(rows, ...)``: a scanned-looking page image with a paragraph above and
  below a fully ruled table of ``rows`` (first row the header).
- ``rules_only_table_image(rows, ...)``: a page image with a table separated by light grey
  horizontal rules only (none above the header).
- ``tight_ruled_table_image(rows, ...)``: a fully ruled table set tight, as the Debian reference's
  package lists are: rows barely taller than the text, descenders and underlined links touching
  the rules, a long last column.
- ``make_booktabs_pdf(path)``: ``TABLE`` with horizontal rules only, in a born-digital PDF.
- ``picture_grid_image()``: a ruled grid whose cells hold drawings, not text (no table).
- ``unruled_table_image(rows, ...)``: an invoice-like page image: address lines, a table of
  ``rows`` with no rules at all (columns at ``xs``, numbers right-aligned), a total line below.
- ``make_unruled_pdf(path)``: ``UNRULED_TABLE`` in a born-digital PDF, aligned by position
  only (no line drawn), between two paragraphs.
- ``make_no_table_pdf(path, kind)``: born-digital pages whose text lines up without being a
  table: justified prose, two or three columns, a table of contents, lists, a code listing.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
from PIL import Image, ImageDraw, ImageFont

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
DEJAVU_BOLD = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")

TITLE = "Quarterly Report of the Harbour Office"
SECTION = "Shipments and Storage"
PARAGRAPHS = [
    "The harbour office handled more containers this quarter than in any quarter before. Most of the "
    "growth came from the new eastern terminal, which opened in March after two years of construction.",
    "Storage fees were raised for the first time since the reform; the table below lists the volumes by "
    "terminal together with the average waiting time of a vessel.",
]
BULLETS = ["eastern terminal opened in March", "two cranes replaced", "night shifts extended"]
NUMBERED = ["inspect the quay walls", "renew the pilot contract"]
TABLE = [
    ["Terminal", "Containers", "Waiting hours"],
    ["North", "12,480", "6.5"],
    ["East", "9,310", "4.0"],
    ["South", "7,055", "11.25"],
]
LAYOUT_WORDS = " ".join([TITLE, SECTION, *PARAGRAPHS, *BULLETS, *NUMBERED, *(c for r in TABLE for c in r)]).split()

INVISIBLE_TEXT = "Invisible layer words zebra quokka marmot"


def make_layout_pdf(path: Path, pages: int = 1) -> Path:
    doc = pymupdf.open()
    for _ in range(pages):
        page = doc.new_page(width=595, height=842)
        y = 80.0
        page.insert_text((60, y), TITLE, fontname="hebo", fontsize=20)
        y += 40
        page.insert_text((60, y), SECTION, fontname="hebo", fontsize=14)
        y += 16
        for para in PARAGRAPHS:
            rect = pymupdf.Rect(60, y, 535, y + 60)
            page.insert_textbox(rect, para, fontname="helv", fontsize=10)
            y += 50
        for item in BULLETS:
            page.insert_text((70, y), "\u2022 " + item, fontname="helv", fontsize=10)
            y += 14
        y += 10
        for k, item in enumerate(NUMBERED, start=1):
            page.insert_text((70, y), f"{k}. {item}", fontname="helv", fontsize=10)
            y += 14
        y += 20
        # The ruled table: rows 20 pt high, columns 160 pt wide; 0.5 pt rules.
        x0, w, h = 60.0, 160.0, 20.0
        top = y
        for r, row in enumerate(TABLE):
            for c, cell in enumerate(row):
                page.insert_text((x0 + c * w + 4, top + r * h + 14), cell, fontname="hebo" if r == 0 else "helv",
                                 fontsize=10)
        for r in range(len(TABLE) + 1):
            page.draw_line((x0, top + r * h), (x0 + w * len(TABLE[0]), top + r * h), width=0.5)
        for c in range(len(TABLE[0]) + 1):
            page.draw_line((x0 + c * w, top), (x0 + c * w, top + h * len(TABLE)), width=0.5)
        y = top + h * len(TABLE) + 30
        page.insert_text((60, y), "End of the report.", fontname="helv", fontsize=10)
    doc.save(path)
    return path


def make_invisible_ocr_pdf(path: Path) -> Path:
    img = Image.new("RGB", (1240, 1754), "white")
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(DEJAVU), 36)
    d.text((100, 150), "Scanned page with words", fill="black", font=font)
    import io

    buf = io.BytesIO()
    img.save(buf, "PNG")
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_image(page.rect, stream=buf.getvalue())
    page.insert_text((50, 80), INVISIBLE_TEXT, fontsize=12, render_mode=3)
    page.insert_text((50, 100), INVISIBLE_TEXT, fontsize=12, render_mode=3)
    doc.save(path)
    return path


def make_soup_pdf(path: Path, kind: str = "notounicode") -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    text = "This page is set in a font whose glyphs have no usable Unicode values. " * 8
    page.insert_textbox(pymupdf.Rect(50, 50, 545, 800), text, fontname="dejavu", fontfile=str(DEJAVU), fontsize=11)
    doc.save(path)
    doc.close()
    doc = pymupdf.open(path)
    for xref in range(1, doc.xref_length()):
        kind_, val = doc.xref_get_key(xref, "ToUnicode")
        if kind_ == "null":
            continue
        if kind == "pua":  # every glyph mapped into the private use area (icon and symbol fonts)
            doc.update_stream(int(val.split()[0]), _PUA_CMAP)
        else:  # no map at all: MuPDF reads U+FFFD
            doc.xref_set_key(xref, "ToUnicode", "null")
    doc.save(path, incremental=True, encryption=pymupdf.PDF_ENCRYPT_KEEP)
    return path


_PUA_CMAP = b"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
1 beginbfrange
<0000> <0FFF> <E000>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end
"""


def ruled_table_image(rows: list[list[str]], *, width: int = 1240, font_size: int = 30,
                      above: str = "Monthly statement of the storage account",
                      below: str = "Please keep this statement for your records") -> Image.Image:
    """A white A4 page at 150 dpi with ``above``, a ruled table of ``rows`` and ``below``."""
    height = round(width * 297 / 210)
    img = Image.new("L", (width, height), 255)
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(DEJAVU), font_size)
    bold = ImageFont.truetype(str(DEJAVU_BOLD), font_size)
    d.text((100, 120), above, fill=0, font=font)
    cols = len(rows[0])
    col_w = (width - 200) // cols
    row_h = int(font_size * 2.2)
    top = 260
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            d.text((100 + c * col_w + 14, top + r * row_h + (row_h - font_size) // 2 - 2), cell, fill=0,
                   font=bold if r == 0 else font)
    for r in range(len(rows) + 1):
        d.line([(100, top + r * row_h), (100 + cols * col_w, top + r * row_h)], fill=0, width=3)
    for c in range(cols + 1):
        d.line([(100 + c * col_w, top), (100 + c * col_w, top + len(rows) * row_h)], fill=0, width=3)
    d.text((100, top + len(rows) * row_h + 80), below, fill=0, font=font)
    return img


def tight_ruled_table_image(rows: list[list[str]], *, widths: tuple[int, ...], links: int = 1, width: int = 1240,
                            font_size: int = 24) -> Image.Image:
    """A white A4 page at 150 dpi with a ruled table of ``rows`` whose columns are ``widths`` px
    wide: rows 1.3 font sizes tall with the baseline low in them, so that descenders (g, p, y)
    reach the rule under them, and column ``links``' body cells underlined as links are, 2 px
    above that rule. Its rules are 1 px, as a text layer's 0.5 pt rules come out at 150 dpi."""
    height = round(width * 297 / 210)
    img = Image.new("L", (width, height), 255)
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(DEJAVU), font_size)
    bold = ImageFont.truetype(str(DEJAVU_BOLD), font_size)
    left, top = 100, 300
    row_h = round(font_size * 1.3)
    xs = [left]
    for w in widths:
        xs.append(xs[-1] + w)
    for r, row in enumerate(rows):
        y = top + r * row_h
        for c, cell in enumerate(row):
            f = bold if r == 0 else font
            # anchor "ls": the baseline, 0.26 font sizes above the rule below (DejaVu's descent is 0.24)
            base = y + row_h - round(0.26 * font_size)
            assert d.textlength(cell, font=f) <= widths[c] - 16, f"{cell!r} does not fit its column"
            d.text((xs[c] + 8, base), cell, fill=0, font=f, anchor="ls")
            if c == links and r > 0:
                x1 = xs[c] + 8 + d.textlength(cell, font=f)
                d.line([(xs[c] + 8, y + row_h - 2), (x1, y + row_h - 2)], fill=0, width=1)
    bottom = top + len(rows) * row_h
    for r in range(len(rows) + 1):
        d.line([(left, top + r * row_h), (xs[-1], top + r * row_h)], fill=0, width=1)
    for x in xs:
        d.line([(x, top), (x, bottom)], fill=0, width=1)
    d.text((left, bottom + 60), "Table 1.1 - Packages of interesting programs in text mode", fill=0, font=font)
    return img


def make_booktabs_pdf(path: Path) -> Path:
    """A page with a paragraph and a ``TABLE`` set with horizontal rules only (above, below the
    header, below the last row), columns 150 pt apart, as LaTeX's booktabs and many invoices do."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(60, 60, 535, 120), PARAGRAPHS[0], fontname="helv", fontsize=10)
    top = 150.0
    for r, row in enumerate(TABLE):
        for c, cell in enumerate(row):
            page.insert_text((70 + c * 150, top + 16 + r * 18), cell, fontname="hebo" if r == 0 else "helv", fontsize=10)
    width = 150 * len(TABLE[0])
    for y in (top + 2, top + 21, top + 18 * len(TABLE) + 6):
        page.draw_line((60, y), (60 + width, y), width=0.6)
    page.insert_textbox(pymupdf.Rect(60, top + 18 * len(TABLE) + 30, 535, 400), PARAGRAPHS[1], fontname="helv",
                        fontsize=10)
    doc.save(path)
    return path


def rules_only_table_image(rows: list[list[str]], *, width: int = 1240, font_size: int = 30,
                           above: str = "Storage volumes by terminal") -> Image.Image:
    """A page image with ``above`` and a table whose rows are separated by light grey
    horizontal rules only (a rule under the header and under every row, none above the header,
    no vertical rules), columns 320 px apart."""
    height = round(width * 297 / 210)
    img = Image.new("L", (width, height), 255)
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(DEJAVU), font_size)
    bold = ImageFont.truetype(str(DEJAVU_BOLD), font_size)
    d.text((100, 120), above, fill=0, font=font)
    row_h = int(font_size * 2.4)
    top = 260
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            d.text((100 + c * 320, top + r * row_h + (row_h - font_size) // 2 - 4), cell, fill=0,
                   font=bold if r == 0 else font)
        d.line([(90, top + (r + 1) * row_h), (width - 90, top + (r + 1) * row_h)], fill=205, width=2)
    return img


def unruled_table_image(rows: list[list[str]], *, xs: tuple[int, ...] = (100, 300, 760, 1040), width: int = 1240,
                        font_size: int = 28) -> Image.Image:
    """A page image with a sender block, a table of ``rows`` without any rule (header bold;
    the first two columns left-aligned at ``xs``, the others right-aligned to ``xs`` + 60) and
    a "Total due" line under it, as in an invoice."""
    height = round(width * 297 / 210)
    img = Image.new("L", (width, height), 255)
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(DEJAVU), font_size)
    bold = ImageFont.truetype(str(DEJAVU_BOLD), font_size)
    for k, line in enumerate(["Harbour Supplies Ltd.", "12 Quay Street", "Invoice No: 2024-117"]):
        d.text((100, 120 + k * 42), line, fill=0, font=bold if k == 0 else font)
    top, pitch = 420, round(font_size * 1.6)
    for r, row in enumerate(rows):
        f = bold if r == 0 else font
        for c, cell in enumerate(row):
            x = xs[c] if c < 2 else xs[c] + 60 - d.textlength(cell, font=f)
            d.text((x, top + r * pitch), cell, fill=0, font=f)
    d.text((100, top + len(rows) * pitch + 60), "Total due within 30 days of the invoice date", fill=0, font=font)
    return img


def picture_grid_image(*, rows: int = 6, cols: int = 5, width: int = 1240, seed: int = 3) -> Image.Image:
    """A page image with a caption and a ruled grid whose cells hold little drawings (random
    strokes, dots and circles) instead of text: lines of a chart, a map or a screenshot, which
    the ruled-table search finds as a grid although it is no table."""
    import random

    rnd = random.Random(seed)
    height = round(width * 297 / 210)
    img = Image.new("L", (width, height), 255)
    d = ImageDraw.Draw(img)
    d.text((100, 120), "Figure 3: storage yard plan", fill=0, font=ImageFont.truetype(str(DEJAVU), 30))
    x0, y0, cw, ch = 100, 260, 200, 110
    for r in range(rows + 1):
        d.line([(x0, y0 + r * ch), (x0 + cols * cw, y0 + r * ch)], fill=0, width=3)
    for c in range(cols + 1):
        d.line([(x0 + c * cw, y0), (x0 + c * cw, y0 + rows * ch)], fill=0, width=3)
    for r in range(rows):
        for c in range(cols):
            bx, by = x0 + c * cw + 15, y0 + r * ch + 15
            for _ in range(rnd.randint(3, 7)):
                px, py = bx + rnd.randint(0, cw - 40), by + rnd.randint(0, ch - 40)
                kind = rnd.random()
                if kind < 0.4:
                    d.line([(px, py), (px + rnd.randint(5, 25), py + rnd.randint(-10, 10))], fill=0, width=rnd.randint(2, 4))
                elif kind < 0.7:
                    d.ellipse([px, py, px + rnd.randint(6, 16), py + rnd.randint(6, 16)], outline=0, width=2)
                else:
                    d.rectangle([px, py, px + rnd.randint(3, 8), py + rnd.randint(3, 8)], fill=0)
    return img


#: An unruled table for born-digital pages: ``make_unruled_pdf``.
UNRULED_TABLE = [
    ["Terminal", "Vessels", "Tonnes", "Share"],
    ["North quay", "42", "18,200", "31 %"],
    ["East basin", "17", "9,450", "16 %"],
    ["Old harbour", "8", "2,130", "4 %"],
    ["Container yard", "63", "28,900", "49 %"],
]


def _right(page: pymupdf.Page, x_right: float, y: float, text: str, font: str = "helv", size: float = 10) -> None:
    page.insert_text((x_right - pymupdf.get_text_length(text, fontname=font, fontsize=size), y), text,
                     fontname=font, fontsize=size)


def make_unruled_pdf(path: Path) -> Path:
    """A born-digital page: a paragraph, ``UNRULED_TABLE`` aligned by position alone (no line
    drawn anywhere; header bold, the first column left-aligned at x=70, the others right-aligned
    to x=260/360/460, rows 14 pt apart), a paragraph under it."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(60, 60, 535, 120), PARAGRAPHS[0], fontname="helv", fontsize=10)
    top = 150.0
    for r, row in enumerate(UNRULED_TABLE):
        font = "hebo" if r == 0 else "helv"
        y = top + r * 14
        page.insert_text((70, y), row[0], fontname=font, fontsize=10)
        for c, cell in enumerate(row[1:]):
            _right(page, 260 + 100 * c, y, cell, font)
    page.insert_textbox(pymupdf.Rect(60, top + 14 * len(UNRULED_TABLE) + 20, 535, 400), PARAGRAPHS[1],
                        fontname="helv", fontsize=10)
    doc.save(path)
    return path


_PROSE = (" ".join(PARAGRAPHS) + " ") * 4

#: A table of contents (section numbers, titles, page numbers right-aligned; no leaders).
TOC = [("1", "Introduction", "1"), ("1.1", "Scope of the report", "2"), ("1.2", "Sources", "4"),
       ("2", "Shipments", "7"), ("2.1", "Bulk cargo", "8"), ("2.2", "Containers", "11"), ("3", "Storage", "15")]


def make_no_table_pdf(path: Path, kind: str) -> Path:
    """A born-digital page that holds no table although its text lines up in places:
    ``"prose"`` (justified paragraphs), ``"two_columns"`` (two justified columns),
    ``"three_columns"`` (three narrow justified columns), ``"toc"`` (a table of contents: section
    numbers, titles and right-aligned page numbers, without and with dot leaders), ``"list"``
    (a bulleted and a numbered list of a term and a short description each) or ``"code"`` (a
    listing in Courier with aligned assignments and comments)."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    if kind == "prose":
        page.insert_textbox(pymupdf.Rect(60, 60, 535, 780), _PROSE, fontname="helv", fontsize=10, align=3)
    elif kind == "two_columns":
        for x0, x1 in ((60, 290), (305, 535)):
            page.insert_textbox(pymupdf.Rect(x0, 60, x1, 780), _PROSE, fontname="helv", fontsize=10, align=3)
    elif kind == "three_columns":
        for x0 in (60, 220, 380):
            page.insert_textbox(pymupdf.Rect(x0, 60, x0 + 150, 780), _PROSE, fontname="helv", fontsize=9, align=3)
    elif kind == "toc":
        page.insert_text((70, 70), "Contents", fontname="hebo", fontsize=14)
        for r, (num, title, pno) in enumerate(TOC):
            y = 100 + r * 14
            page.insert_text((70 if "." not in num else 85, y), num, fontname="helv", fontsize=10)
            page.insert_text((110, y), title, fontname="helv", fontsize=10)
            _right(page, 520, y, pno)
        for r, (num, title, pno) in enumerate(TOC):  # the same with dot leaders
            y = 300 + r * 14
            page.insert_text((70, y), num, fontname="helv", fontsize=10)
            lead = title + " " + ". " * int((380 - pymupdf.get_text_length(title, fontsize=10)) / 5.6)
            page.insert_text((110, y), lead, fontname="helv", fontsize=10)
            _right(page, 520, y, pno)
    elif kind == "list":
        terms = [("Quay", "the harbour wall"), ("Crane", "lifts containers"), ("Pilot", "guides vessels"),
                 ("Berth", "a ship's place")]
        for r, (term, what) in enumerate(terms):
            page.insert_text((70, 100 + r * 14), "•", fontname="helv", fontsize=10)
            page.insert_text((90, 100 + r * 14), term, fontname="hebo", fontsize=10)
            page.insert_text((200, 100 + r * 14), what, fontname="helv", fontsize=10)
        for r, (term, what) in enumerate(terms):
            page.insert_text((70, 200 + r * 14), f"{r + 1}.", fontname="helv", fontsize=10)
            page.insert_text((90, 200 + r * 14), term, fontname="hebo", fontsize=10)
            page.insert_text((200, 200 + r * 14), what, fontname="helv", fontsize=10)
    elif kind == "code":
        code = ["CC       = gcc          # the compiler", "CFLAGS   = -O2 -Wall    # warnings on",
                "LDLIBS   = -lm          # the maths library", "PREFIX   = /usr/local   # where to install",
                "", "for (i = 0; i < n; i++) {", "    total  += row[i];     /* sum */",
                "    count  += 1;          /* rows */", "}"]
        for r, line in enumerate(code):
            page.insert_text((70, 100 + r * 12), line, fontname="cour", fontsize=9)
    else:
        raise ValueError(kind)
    doc.save(path)
    return path
