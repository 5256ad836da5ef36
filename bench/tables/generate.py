#!/usr/bin/env python3
"""Generated part of the table truth set: bank statements, invoices, price lists and scientific
tables drawn with PyMuPDF as born-digital PDFs, and the same pages rendered to noisy scans.

    python3 bench/tables/generate.py [--dest DIR] [--truth bench/tables/truth] [--check]

Every layout (``LAYOUTS``) is drawn once as a born-digital PDF (``gen-<layout>-pdf``) and once
rendered from that PDF like a scanner would deliver it (``gen-<layout>-scan``: grey page, a
slight skew, blur, noise, JPEG or PNG, some as image-only PDFs). The tables are drawn from
their cell texts, so the expected CSV is known by construction: ``--truth`` writes it
(``<id>-<n>.csv``, header rows first, merged cells' text in every slot they cover, as the
daemon's csv writer does) and ``--check`` fails when the committed CSVs differ from what the
code draws now. The page furniture is what made the daemon's tables go wrong on real
statements and invoices (issue 26): title bands drawn as ruled or filled boxes, header rows as
filled bands with an unruled body under them, address and invoice-detail blocks set in
columns, totals beside the table, grey rules (light on a scan).

Table styles (``TableSpec.style``):
``grid`` (every cell ruled, black), ``grey-grid`` (the same in light grey), ``hrules``
(booktabs: rules above and below the header and below the last row), ``grey-hrules`` (a light
rule under every row, no vertical rule), ``band`` (a filled header band, one box per header
cell, white bold text; the body without any rule), ``zebra`` (a dark header band, every other
body row shaded, no rule), ``unruled`` (whitespace only, bold header).

Files go to ``DEST`` (default ~/.cache/ocr-daemon/tables/gen); runs are byte-for-byte
deterministic for one PyMuPDF/Pillow/numpy version (seeds are fixed per layout).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import os
import sys
from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image, ImageFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from layouts import LAYOUTS, TEXTS, Layout, Rows, Span, TableSpec  # noqa: E402  (the pages' contents)

HERE = Path(__file__).resolve().parent
DEFAULT_DEST = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon" / "tables" / "gen"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
DEJAVU_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
CJK_LANGS = {"zh", "ja"}

class Pen:
    """Text and rules on one PyMuPDF page with the fonts of a language."""

    def __init__(self, page: pymupdf.Page, lang: str) -> None:
        self.page = page
        self.cjk_font = ("china-s" if lang == "zh" else "japan") if lang in CJK_LANGS else ""
        # MuPDF's built-in CJK font (not embedded; every reader we compare maps it) for CJK
        # characters, DejaVu for the rest: the built-in font sets Latin letters and digits one em
        # wide, which no real statement does
        page.insert_font(fontname="dv", fontfile=DEJAVU)
        page.insert_font(fontname="dvb", fontfile=DEJAVU_BOLD)
        self.fonts = {False: pymupdf.Font(fontfile=DEJAVU), True: pymupdf.Font(fontfile=DEJAVU_BOLD)}

    def _runs(self, text: str) -> list[tuple[str, bool]]:
        """``text`` cut into runs of CJK (True) and other characters."""
        out: list[tuple[str, bool]] = []
        for ch in text:
            cjk = bool(self.cjk_font) and ord(ch) >= 0x2e80
            if out and out[-1][1] == cjk:
                out[-1] = (out[-1][0] + ch, cjk)
            else:
                out.append((ch, cjk))
        return out

    def width(self, text: str, size: float, bold: bool = False) -> float:
        return sum(size * len(t) if cjk else self.fonts[bold].text_length(t, fontsize=size) for t, cjk in self._runs(text))

    def text(self, x: float, y: float, text: str, size: float = 9.0, bold: bool = False, color: tuple = (0, 0, 0),
             align: str = "l", width: float = 0.0) -> None:
        """``text`` with its baseline at y; ``align`` r: right-aligned in [x, x + width], c: centred."""
        if align == "r":
            x = x + width - self.width(text, size, bold)
        elif align == "c":
            x = x + (width - self.width(text, size, bold)) / 2
        for t, cjk in self._runs(text):
            font = self.cjk_font if cjk else ("dvb" if bold else "dv")
            self.page.insert_text((x, y), t, fontname=font, fontsize=size, color=color)
            x += self.width(t, size, bold)

    def wrap(self, text: str, size: float, width: float, bold: bool = False) -> list[str]:
        """Lines of ``text`` that fit ``width`` (CJK: by character; otherwise by word)."""
        if self.cjk_font:
            lines, cur = [], ""
            for ch in text:
                if cur and self.width(cur + ch, size, bold) > width:
                    lines.append(cur)
                    cur = ""
                cur += ch
            return [*lines, cur] if cur else lines
        lines, cur = [], ""
        for w in text.split():
            cand = (cur + " " + w).strip()
            if cur and self.width(cand, size, bold) > width:
                lines.append(cur)
                cur = w
            else:
                cur = cand
        return [*lines, cur] if cur else lines

    def line(self, x0: float, y0: float, x1: float, y1: float, color: tuple = (0, 0, 0), width: float = 0.6) -> None:
        self.page.draw_line((x0, y0), (x1, y1), color=color, width=width)

    def box(self, x0: float, y0: float, x1: float, y1: float, fill: tuple | None = None,
            color: tuple | None = None, width: float = 0.6) -> None:
        self.page.draw_rect(pymupdf.Rect(x0, y0, x1, y1), color=color, fill=fill, width=width)


GREY_RULE = (0.72, 0.72, 0.72)
BAND = (0.16, 0.27, 0.45)
SHADE = (0.90, 0.92, 0.95)


def draw_table(pen: Pen, spec: TableSpec, x0: float, top: float) -> float:
    """Draw ``spec`` with its top-left corner at (x0, top); returns the y under it."""
    size, pad = spec.size, 3.5
    lead = size * 1.25
    xs = [x0]
    for w in spec.widths:
        xs.append(xs[-1] + w)
    nh = len(spec.header)
    rows = spec.header + spec.body
    covered = {(rr, cc) for r, c, rs, cs in spec.spans for rr in range(r, r + rs) for cc in range(c, c + cs)
               if (rr, cc) != (r, c)}
    span_of = {(r, c): (rs, cs) for r, c, rs, cs in spec.spans}
    # lines per slot, row heights
    wrapped: dict[tuple[int, int], list[str]] = {}
    heights = []
    for r, row in enumerate(rows):
        n = 1
        for c, cell in enumerate(row):
            if (r, c) in covered or not cell:
                continue
            rs, cs = span_of.get((r, c), (1, 1))
            w = xs[c + cs] - xs[c] - 2 * pad
            if r - nh in spec.sections:
                w = xs[-1] - xs[c] - 2 * pad
            lines = pen.wrap(cell, size, w, bold=r < nh)
            wrapped[(r, c)] = lines
            if rs == 1:
                n = max(n, len(lines))
        heights.append(n * lead + 2 * pad)
    ys = [top]
    for h in heights:
        ys.append(ys[-1] + h)
    style = spec.style
    # backgrounds first
    if style in ("band", "zebra"):
        for c in range(len(spec.widths)):
            if any((r, c) in covered for r in range(nh)) and all((r, c) in covered for r in range(nh)):
                continue
            pen.box(xs[c] + (0.8 if style == "band" else 0), ys[0], xs[c + 1] - (0.8 if style == "band" else 0), ys[nh],
                    fill=BAND)
    if style == "zebra":
        for r in range(nh, len(rows)):
            if (r - nh) % 2 == 1:
                pen.box(xs[0], ys[r], xs[-1], ys[r + 1], fill=SHADE)
    # text
    for r, row in enumerate(rows):
        head = r < nh
        white = head and style in ("band", "zebra")
        for c, _cell in enumerate(row):
            lines = wrapped.get((r, c))
            if not lines:
                continue
            rs, cs = span_of.get((r, c), (1, 1))
            w = xs[c + cs] - xs[c] - 2 * pad
            y = ys[r] + pad + size * 0.95
            if rs > 1:  # a cell over several rows: vertically centred
                y += (ys[r + rs] - ys[r] - 2 * pad - len(lines) * lead) / 2
            al = "c" if (head and cs > 1) else spec.align[c]
            for k, ln in enumerate(lines):
                pen.text(xs[c] + pad, y + k * lead, ln, size, bold=head or (r - nh) in spec.sections,
                         color=(1, 1, 1) if white else (0, 0, 0), align=al, width=w)
    # rules
    if style in ("grid", "grey-grid"):
        color = (0, 0, 0) if style == "grid" else GREY_RULE
        for r in range(len(rows) + 1):
            for c in range(len(spec.widths)):
                if 0 < r < len(rows) and _inside_span(spec.spans, r - 1, c, r, c):
                    continue  # no rule inside a merged cell
                pen.line(xs[c], ys[r], xs[c + 1], ys[r], color=color)
        for c in range(len(spec.widths) + 1):
            for r in range(len(rows)):
                if 0 < c < len(spec.widths) and _inside_span(spec.spans, r, c - 1, r, c):
                    continue
                pen.line(xs[c], ys[r], xs[c], ys[r + 1], color=color)
    elif style == "hrules":
        pen.line(xs[0], ys[0], xs[-1], ys[0], width=0.9)
        for r, c, rs, cs in spec.spans:  # booktabs' \cmidrule under a spanning header cell
            if rs == 1 and cs > 1 and r < nh - 1:
                pen.line(xs[c] + 2, ys[r + 1], xs[c + cs] - 2, ys[r + 1], width=0.4)
        pen.line(xs[0], ys[nh], xs[-1], ys[nh], width=0.5)
        pen.line(xs[0], ys[-1], xs[-1], ys[-1], width=0.9)
    elif style == "grey-hrules":
        for r in range(nh, len(rows) + 1):
            pen.line(xs[0], ys[r], xs[-1], ys[r], color=GREY_RULE, width=0.7 if r == nh else 0.5)
    return ys[-1]


def _inside_span(spans: list[Span], r0: int, c0: int, r1: int, c1: int) -> bool:
    """Slots (r0, c0) and (r1, c1) lie in one merged cell."""
    return any(r <= r0 < r + rs and c <= c0 < c + cs and r <= r1 < r + rs and c <= c1 < c + cs
               for r, c, rs, cs in spans)


# ------------------------------------------------------------------------------------ furniture

def _para(pen: Pen, x: float, y: float, width: float, text: str, size: float = 9.0) -> float:
    for ln in pen.wrap(text, size, width):
        pen.text(x, y, ln, size)
        y += size * 1.35
    return y


def _furniture(pen: Pen, lay: Layout, texts: dict) -> float:
    """Page furniture above the table(s); returns the y where the first table starts."""
    kind = lay.furniture
    if kind == "title-grid":  # a title band drawn as a ruled box of three cells, one with text
        pen.box(40, 36, 555, 84, color=(0, 0, 0), width=1.0)
        pen.line(40, 39, 555, 39, width=0.5)  # a double rule along its top
        pen.line(130, 36, 130, 84, width=0.8)
        pen.line(465, 36, 465, 84, width=0.8)
        pen.box(60, 44, 110, 76, fill=(0.75, 0.1, 0.1))  # the logo
        pen.text(130, 68, texts["bank"], 18, bold=True, align="c", width=335)
        y = 110
        for label in texts["info"]:
            pen.text(40, y, label, 9)
            y += 14
        return y + 12
    if kind == "title-band":  # a filled title band, address block, account details
        pen.box(0, 0, 595, 70, fill=BAND)
        pen.text(40, 44, texts["bank"], 20, bold=True, color=(1, 1, 1))
        pen.text(380, 44, texts["title"], 12, bold=True, color=(1, 1, 1), align="r", width=175)
        y = 100
        for ln in texts["address"]:
            pen.text(330, y, ln, 9)
            y += 12
        y = 100
        for ln in texts["info"]:
            pen.text(40, y, ln, 9)
            y += 12
        return max(y, 100 + 12 * len(texts["address"])) + 24
    if kind == "invoice":  # sender line, recipient block, detail block in two columns of labels/values
        pen.text(40, 50, texts["sender"], 16, bold=True)
        pen.text(40, 64, texts["sender_line"], 7)
        y = 100
        for ln in texts["address"]:
            pen.text(40, y, ln, 9)
            y += 12
        yd = 100
        for label, value in texts["details"]:
            pen.text(340, yd, label, 9)
            pen.text(450, yd, value, 9, align="r", width=105)
            yd += 12
        y = max(y, yd) + 20
        pen.text(40, y, texts["title"], 14, bold=True)
        return y + 22
    if kind == "pricelist":
        pen.text(40, 60, texts["title"], 18, bold=True)
        return _para(pen, 40, 86, 515, texts["intro"]) + 12
    if kind == "paper":  # a paper's page: paragraph, then a caption above the table
        y = _para(pen, 50, 60, 495, texts["intro"], 9.5) + 10
        pen.text(50, y, texts["caption"], 9, bold=False)
        return y + 10
    raise ValueError(kind)


def _after(pen: Pen, lay: Layout, texts: dict, y: float, right: float) -> None:
    """Furniture under the table: totals beside the amount columns, a closing paragraph."""
    if "totals" in texts:
        y += 18
        for label, value in texts["totals"]:
            pen.text(right - 200, y, label, 9, bold=label == texts["totals"][-1][0])
            pen.text(right - 90, y, value, 9, align="r", width=86, bold=label == texts["totals"][-1][0])
            y += 13
    if "outro" in texts:
        _para(pen, 40, y + 22, 515, texts["outro"], 8.5)


def draw_pdf(lay: Layout) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    pen = Pen(page, lay.lang)
    texts = TEXTS[lay.name]
    y = _furniture(pen, lay, texts)
    x0 = 50 if lay.furniture == "paper" else 40
    right = x0
    for k, spec in enumerate(lay.tables):
        if k:
            y += 26
            if "caption2" in texts:
                pen.text(x0, y, texts["caption2"], 9)
                y += 10
        y = draw_table(pen, spec, x0, y)
        right = x0 + sum(spec.widths)
    _after(pen, lay, texts, y, right)
    doc.set_metadata({})
    doc.subset_fonts()
    return doc.tobytes(garbage=4, deflate=True, no_new_id=True)


# ---------------------------------------------------------------------------------------- scans

def scan(pdf: bytes, spec: dict) -> tuple[bytes, str]:
    """Render page 1 of ``pdf`` the way a desk scanner delivers it: ``dpi``, grey paper, a skew of
    ``skew`` degrees, a blur, noise (sigma ``noise``), speckles; ``format`` png | jpg | pdf."""
    rng = np.random.default_rng(spec["seed"])
    dpi = spec["dpi"]
    src = pymupdf.open(stream=pdf, filetype="pdf")
    pix = src[0].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    # paper is not white and ink not black
    a = np.asarray(img, dtype=np.float32)
    a = 28 + a * (236 - 28) / 255
    img = Image.fromarray(a.clip(0, 255).astype(np.uint8))
    if spec.get("skew"):
        img = img.rotate(spec["skew"], resample=Image.Resampling.BICUBIC, expand=False, fillcolor=236)
    img = img.filter(ImageFilter.GaussianBlur(spec.get("blur", 0.7)))
    a = np.asarray(img, dtype=np.float32)
    a += rng.normal(0, spec.get("noise", 8), a.shape)
    # speckles: dark dust and a few white drop-outs
    n = int(a.size * 0.0004)
    ys, xs = rng.integers(0, a.shape[0], n), rng.integers(0, a.shape[1], n)
    a[ys, xs] = rng.integers(20, 110, n)
    img = Image.fromarray(a.clip(0, 255).astype(np.uint8))
    fmt = spec["format"]
    buf = io.BytesIO()
    if fmt == "png":
        img.save(buf, "PNG", optimize=False)
        return buf.getvalue(), "png"
    img.save(buf, "JPEG", quality=spec.get("quality", 70))
    if fmt == "jpg":
        return buf.getvalue(), "jpg"
    dst = pymupdf.open()
    page = dst.new_page(width=img.width * 72 / dpi, height=img.height * 72 / dpi)
    page.insert_image(page.rect, stream=buf.getvalue())
    dst.set_metadata({})
    return dst.tobytes(garbage=4, deflate=True, no_new_id=True), "pdf"



def split_of(layout: str) -> str:
    """holdout <=> int(sha256(layout name)[:8], 16) % 3 == 0 (fixed before any tuning; born-digital
    and scan of one layout always fall on the same side)."""
    return "holdout" if int(hashlib.sha256(layout.encode()).hexdigest()[:8], 16) % 3 == 0 else "tune"


def csv_bytes(rows: Rows) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    ap.add_argument("--truth", type=Path, help="write the expected CSVs into this folder")
    ap.add_argument("--check", action="store_true", help="compare the expected CSVs with bench/tables/truth")
    ap.add_argument("--only", help="comma-separated layout names")
    args = ap.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    bad = 0
    only = set(args.only.split(",")) if args.only else None
    for lay in LAYOUTS:
        if only and lay.name not in only:
            continue
        pdf = draw_pdf(lay)
        (args.dest / f"gen-{lay.name}-pdf.pdf").write_bytes(pdf)
        data, ext = scan(pdf, lay.scan)
        for old in args.dest.glob(f"gen-{lay.name}-scan.*"):
            old.unlink()
        (args.dest / f"gen-{lay.name}-scan.{ext}").write_bytes(data)
        for form in ("pdf", "scan"):
            for n, spec in enumerate(lay.tables, 1):
                want = csv_bytes(spec.expanded())
                name = f"gen-{lay.name}-{form}-{n}.csv"
                if args.truth:
                    args.truth.mkdir(parents=True, exist_ok=True)
                    (args.truth / name).write_bytes(want)
                if args.check and (HERE / "truth" / name).read_bytes() != want:
                    print(f"{name}: differs from the committed truth", file=sys.stderr)
                    bad += 1
        print(f"{lay.name}: {split_of(lay.name)}, {len(lay.tables)} table(s), scan .{ext}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
