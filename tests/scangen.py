"""Realistic scanner output for the batch tests and bench/bench_blank.py: duplex stacks with
blank backs, separator sheets, sparse pages.

Everything is drawn with Pillow and numpy from a seed (the same seed gives the same bytes), then
"scanned": paper tint and shading, bleed-through of the other side, filing-hole shadows, dust,
sensor noise, a slight skew, JPEG compression -- what an office feeder scanner puts in a PDF.

Separator sheets carry a real barcode made by a well-kept encoder, not by the decoder under
test: ``segno`` (QR Code; pure Python, ISO/IEC 18004 conformant) or ``python-barcode``
(Code 128, drawn with its Pillow writer).

Main helpers:
- ``scan(img, seed=..., **kind)``: a clean page image -> a grey scanned one (see ``Scan``).
- ``blank_back(front, seed)``: the back of ``front`` with nothing printed on it.
- ``separator_sheet(text, symbology)``: a page with a QR or Code 128 barcode of ``text``.
- ``signature_page(seed)``, ``page_number_page(n, pt)``, ``one_line_page(text)``: sparse pages.
- ``scanned_pdf(path, pages, dpi)``: the grey images as JPEG pages of a PDF (like a scanner's).
- ``duplex_batch(path, docs, separators, seed)``: documents (lists of page texts) scanned duplex
  with blank backs, separator sheets between them; returns the page plan (what each page is).
"""

from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pymupdf
from docgen import font_for, text_image
from PIL import Image, ImageDraw, ImageFilter

DPI = 150
A4_PX = (1240, 1754)  # A4 at 150 dpi


def mm(v: float, dpi: int = DPI) -> int:
    return round(v * dpi / 25.4)


@dataclass
class Scan:
    """How a page is "scanned". Defaults: a typical office feeder at its default quality."""

    noise: float = 3.0  # sensor noise, grey levels (standard deviation)
    jpeg: int = 75  # JPEG quality of the scanner's output
    paper: int = 244  # shade of the paper as scanned
    shading: float = 6.0  # darkening towards one side (uneven lamp), grey levels
    bleed: float = 0.0  # bleed-through of the other side, as a fraction of its ink
    holes: str | None = None  # "left" / "right": two filing-hole shadows on that edge
    dust: int = 0  # dark specks of 1-3 px
    skew: float = 0.0  # degrees


def _gray(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("L"), dtype=np.float32)


def scan(img: Image.Image, *, seed: int = 0, back_of: Image.Image | None = None, kind: Scan | None = None) -> Image.Image:
    """``img`` (clean page, white paper) scanned as ``kind`` says; ``back_of``: the page on the
    other side of the sheet, whose ink bleeds through mirrored when ``kind.bleed`` > 0."""
    k = kind or Scan()
    rng = np.random.default_rng(seed)
    ink = 1.0 - _gray(img) / 255.0  # 0 paper .. 1 black
    h, w = ink.shape
    page = np.full((h, w), float(k.paper), dtype=np.float32)
    page -= np.linspace(0, k.shading, w, dtype=np.float32)[None, :]  # uneven lamp
    if back_of is not None and k.bleed > 0:
        other = back_of.convert("L").resize((w, h)).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        other = other.filter(ImageFilter.GaussianBlur(2.5))  # seen through paper: soft
        page -= k.bleed * k.paper * (1.0 - _gray(other) / 255.0)
    page = page * (1.0 - ink) + 25.0 * ink  # printed ink is ~25, not 0, on a scan
    if k.holes:
        # ISO 838: two 6 mm holes, 80 mm apart, centres 12 mm from the edge; the scanner's grey
        # backing shows through (~70), inside a darker rim (the hole's shadow on the paper)
        cx = mm(12) if k.holes == "left" else w - mm(12)
        rim = Image.new("L", (w, h), 0)
        hole = Image.new("L", (w, h), 0)
        for cy in (h // 2 - mm(40), h // 2 + mm(40)):
            ImageDraw.Draw(rim).ellipse((cx - mm(3.6), cy - mm(3.6), cx + mm(3.6), cy + mm(3.6)), fill=255)
            ImageDraw.Draw(hole).ellipse((cx - mm(3), cy - mm(3), cx + mm(3), cy + mm(3)), fill=255)
        page = np.where(np.asarray(rim) > 0, page * 0.6, page)
        page = np.where(np.asarray(hole) > 0, 70.0, page)
    for _ in range(k.dust):
        x, y, s = int(rng.integers(0, w - 3)), int(rng.integers(0, h - 3)), int(rng.integers(1, 4))
        page[y : y + s, x : x + s] = 60.0
    page += rng.normal(0, k.noise, size=page.shape).astype(np.float32)
    out = Image.fromarray(np.clip(page, 0, 255).astype(np.uint8), "L")
    if k.skew:
        out = out.rotate(k.skew, resample=Image.Resampling.BILINEAR, fillcolor=k.paper)
    buf = io.BytesIO()
    out.save(buf, format="JPEG", quality=k.jpeg)
    return Image.open(io.BytesIO(buf.getvalue())).convert("L")


def blank_page(size: tuple[int, int] = A4_PX) -> Image.Image:
    return Image.new("RGB", size, "white")


def text_page(text: str, *, lang: str | None = None) -> Image.Image:
    return text_image(text, width=A4_PX[0], height=A4_PX[1], lang=lang, font_size=30)


def separator_sheet(text: str, symbology: str = "qr") -> Image.Image:
    """An A4 page with ``text`` as a QR code (``segno``) or Code 128 (``python-barcode``) in
    the middle, and a human-readable caption, as printed separator sheets have."""
    page = blank_page()
    if symbology == "qr":
        import segno

        buf = io.BytesIO()
        segno.make_qr(text, error="m").save(buf, kind="png", scale=1, border=0)
        code = Image.open(io.BytesIO(buf.getvalue())).convert("L")
        code = code.resize((mm(40), mm(40)), Image.Resampling.NEAREST)
    elif symbology == "code128":
        import barcode
        from barcode.writer import ImageWriter

        buf = io.BytesIO()
        barcode.get("code128", text, writer=ImageWriter()).write(
            buf, options={"module_width": 0.45, "module_height": 18.0, "dpi": DPI, "write_text": False, "quiet_zone": 4}
        )
        code = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    else:
        raise ValueError(symbology)
    page.paste(code.convert("RGB"), ((page.width - code.width) // 2, (page.height - code.height) // 2))
    draw = ImageDraw.Draw(page)
    caption = f"Separator sheet - {text}"
    font = font_for(caption, 28)
    draw.text(((page.width - draw.textlength(caption, font=font)) // 2, page.height // 2 + code.height // 2 + mm(8)),
              caption, font=font, fill="black")
    return page


def signature_page(seed: int, *, pen: int = 20, width: int = 3) -> Image.Image:
    """A page with only a handwritten-looking signature (a random looping stroke) on it; ``pen``
    is the stroke's darkness (20 a ballpoint, ~140 a light pencil)."""
    rng = random.Random(seed)
    page = blank_page()
    draw = ImageDraw.Draw(page)
    x0, y0 = mm(rng.uniform(60, 110)), mm(rng.uniform(180, 240))
    pts = []
    for i in range(120):
        t = i / 119
        pts.append((x0 + mm(55) * t + mm(4) * math.sin(t * 31 + seed),
                    y0 + mm(5) * math.sin(t * 17 + seed) + mm(2) * math.cos(t * 43)))
    draw.line(pts, fill=(pen, pen, pen), width=width, joint="curve")
    return page


def page_number_page(n: int, *, pt: float = 10.0, top: bool = False) -> Image.Image:
    """A page with only its page number ("- n -") in ``pt`` points, 12 mm from the bottom (or top)."""
    page = blank_page()
    draw = ImageDraw.Draw(page)
    label = f"- {n} -"
    font = font_for(label, round(pt * DPI / 72))
    x = (page.width - draw.textlength(label, font=font)) // 2
    draw.text((x, mm(12) if top else page.height - mm(12) - font.size), label, font=font, fill="black")
    return page


def one_line_page(text: str) -> Image.Image:
    """A page with a single short line (e.g. "This page is intentionally left blank.")."""
    page = blank_page()
    draw = ImageDraw.Draw(page)
    font = font_for(text, 28)
    draw.text((mm(30), mm(140)), text, font=font, fill="black")
    return page


def scanned_pdf(path: Path, pages: list[Image.Image], *, dpi: int = DPI, quality: int = 80) -> Path:
    """The (already scanned) page images as a PDF of JPEG pages, like a scanner writes."""
    doc = pymupdf.open()
    for im in pages:
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=quality)
        w, h = im.width * 72 / dpi, im.height * 72 / dpi
        page = doc.new_page(width=w, height=h)
        page.insert_image(page.rect, stream=buf.getvalue())
    doc.save(str(path))
    doc.close()
    return path


def duplex_batch(
    path: Path, docs: list[list[str]], separators: list[str], *, seed: int = 0, symbologies: tuple[str, ...] = ("qr", "code128"),
    tiff: bool = False,
) -> list[str]:
    """``docs`` (each a list of page texts) scanned duplex -- every sheet's back blank, with
    bleed-through, noise, hole shadows -- with a separator sheet carrying ``separators[i]``
    between document i and i+1 (its back blank too). Written as a scanner's PDF (or a
    multi-page TIFF when ``tiff``). Returns what each page of the file is: "doc<i>", "blank",
    "separator"."""
    rng = random.Random(seed)
    images: list[Image.Image] = []
    plan: list[str] = []

    def sheet(front: Image.Image, what: str) -> None:
        kind = Scan(noise=rng.uniform(2, 5), jpeg=rng.randint(60, 85), bleed=rng.uniform(0.04, 0.12),
                    holes="left", dust=rng.randint(0, 12), skew=rng.uniform(-0.4, 0.4))
        images.append(scan(front, seed=rng.randint(0, 1 << 30), kind=kind))
        back = Scan(noise=kind.noise, jpeg=kind.jpeg, bleed=kind.bleed, holes="right", dust=rng.randint(0, 12),
                    skew=-kind.skew)
        images.append(scan(blank_page(), seed=rng.randint(0, 1 << 30), back_of=front, kind=back))
        plan.extend([what, "blank"])

    for i, pages in enumerate(docs):
        for text in pages:
            sheet(text_page(text), f"doc{i}")
        if i < len(docs) - 1:
            sheet(separator_sheet(separators[i], symbologies[i % len(symbologies)]), "separator")
    if tiff:
        images[0].save(path, format="TIFF", save_all=True, append_images=images[1:], compression="tiff_adobe_deflate",
                       dpi=(DPI, DPI))
    else:
        scanned_pdf(path, images)
    return plan
