"""Scanned prose and a handwritten-style diary page, for the lost-paragraph checks (issue 32).

Everything is made here from a seed (the same seed gives the same bytes):

- ``prose_paragraphs()``: real prose, the paragraphs of the GNU GPL 3's preamble and first
  sections as Debian ships them (``/usr/share/common-licenses/GPL-3``; nobody on the team wrote
  them).
- ``prose_pdf(path, paragraphs)``: a born-digital A4 PDF of headed paragraphs (PyMuPDF Story,
  Times 11 pt), as a word processor would set them; returns the text of each page.
- ``scan_pdf(src, dst, dpi, skew, noise, seed)``: that PDF "scanned": each page rendered at
  ``dpi``, turned by ``skew`` degrees, paper tint and sensor noise, saved as an image-only PDF
  (JPEG pages, like a scanner's).
- ``diary_page(path, lines, seed)``: a photo of a diary page written in a script-like font
  (URW Z003, Zapf Chancery, when installed, else DejaVu Serif Italic), each line on its own
  wavering baseline with jittered letters, on ruled paper with uneven light; returns the lines.
"""

from __future__ import annotations

import io
import math
import random
import re
from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image, ImageDraw, ImageFilter, ImageFont

GPL3 = Path("/usr/share/common-licenses/GPL-3")
SCRIPT_FONTS = (
    Path("/usr/share/fonts/opentype/urw-base35/Z003-MediumItalic.otf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif-Italic.ttf"),
)

DIARY_LINES = [
    "Monday the fourth of March, rain all morning",
    "Walked to the market with Anna after lunch",
    "Bought apples, bread and a small jar of honey",
    "The old bridge is closed again for repairs",
    "We took the long way home along the river",
    "In the evening I wrote three letters to friends",
    "Father called and asked about the garden",
    "The roses need cutting before the frost comes",
    "Must remember to return the library books",
]


def prose_paragraphs() -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) of the GPL 3's preamble and its first sections, each paragraph one
    line of plain words (the license's line breaks joined)."""
    text = GPL3.read_text(encoding="utf-8")
    body = text.split("Preamble", 1)[1]
    paras = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", body)]
    paras = [p for p in paras if len(p) > 60][:16]
    return [("Preamble", paras[:8]), ("Terms and Conditions", paras[8:16])]


def prose_pdf(path: Path, sections: list[tuple[str, list[str]]] | None = None) -> list[str]:
    """A born-digital A4 PDF of ``sections``; returns each page's text (PyMuPDF's extraction)."""
    sections = sections or prose_paragraphs()
    html = "".join(
        f"<h3>{h}</h3>" + "".join(f"<p>{p}</p>" for p in ps) for h, ps in sections
    )
    css = "body {font-family: serif; font-size: 11pt;} p {margin-bottom: 6pt; text-align: justify;}"
    story = pymupdf.Story(html=html, user_css=css)
    writer = pymupdf.DocumentWriter(str(path))
    rect = pymupdf.paper_rect("a4")
    where = rect + (72, 72, -72, -72)
    more = True
    while more:
        dev = writer.begin_page(rect)
        more, _ = story.place(where)
        story.draw(dev)
        writer.end_page()
    writer.close()
    with pymupdf.open(path) as doc:
        return [page.get_text() for page in doc]


def _scan_image(img: Image.Image, skew: float, noise: float, rng: np.random.Generator) -> Image.Image:
    gray = img.convert("L")
    if skew:
        gray = gray.rotate(skew, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    a = np.asarray(gray, dtype=np.float32)
    a = 242 - (242 - 12) * (1 - a / 255)  # paper tint, ink not quite black
    a += rng.normal(0, noise, a.shape)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def scan_pdf(src: Path, dst: Path, *, dpi: int = 300, skew: float = -1.0, noise: float = 6.0, seed: int = 0) -> Path:
    """``src`` rendered at ``dpi``, turned ``skew`` degrees, noisy, as an image-only PDF."""
    rng = np.random.default_rng(seed)
    out = pymupdf.open()
    with pymupdf.open(src) as doc:
        for page in doc:
            pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
            scanned = _scan_image(img, skew, noise, rng)
            buf = io.BytesIO()
            scanned.save(buf, format="JPEG", quality=80, dpi=(dpi, dpi))
            p = out.new_page(width=page.rect.width, height=page.rect.height)
            p.insert_image(p.rect, stream=buf.getvalue())
    out.save(dst)
    out.close()
    return dst


def _script_font(size: int) -> ImageFont.FreeTypeFont:
    for f in SCRIPT_FONTS:
        if f.is_file():
            return ImageFont.truetype(str(f), size)
    return ImageFont.load_default(size)


def diary_page(path: Path, lines: list[str] | None = None, *, seed: int = 0, size: tuple[int, int] = (1800, 2400)) -> list[str]:
    """A photo-like diary page (see the module docstring), saved as JPEG at ``path``."""
    lines = lines or DIARY_LINES
    rng = random.Random(seed)
    w, h = size
    page = Image.new("L", size, 236)
    draw = ImageDraw.Draw(page)
    pitch = 200
    top = 260
    for k in range(1, (h - top) // pitch + 1):  # ruled paper: thin light-blue-grey lines
        y = top + k * pitch
        draw.line((90, y, w - 90, y), fill=185, width=3)
    font = _script_font(78)
    for n, line in enumerate(lines):
        base = top + (n + 1) * pitch - 22
        x = 150 + rng.randint(-20, 30)
        drift = rng.uniform(-0.02, 0.02)  # the line runs up or down a little
        for ch in line:
            if ch == " ":
                x += font.getlength(" ") * rng.uniform(0.9, 1.4)
                continue
            dy = math.sin(x / 210 + n) * 6 + rng.uniform(-3, 3) + drift * (x - 150)
            glyph = Image.new("L", (120, 160), 0)
            ImageDraw.Draw(glyph).text((20, 20), ch, font=font, fill=255)
            glyph = glyph.rotate(rng.uniform(-6, 6), resample=Image.Resampling.BICUBIC)
            ink = rng.randint(30, 70)
            page.paste(Image.new("L", glyph.size, ink), (int(x) - 20, int(base - 100 + dy) - 20), glyph)
            x += font.getlength(ch) * rng.uniform(0.95, 1.08)
    # the photo: uneven light (darker towards one corner), a little blur and noise, slightly turned
    a = np.asarray(page, dtype=np.float32)
    yy, xx = np.mgrid[0:h, 0:w]
    a -= 40 * (xx / w * 0.6 + yy / h * 0.4)
    img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(1.2))
    img = img.rotate(rng.uniform(-1.5, 1.5), resample=Image.Resampling.BICUBIC, fillcolor=120)
    a = np.asarray(img, dtype=np.float32) + np.random.default_rng(seed).normal(0, 5, (h, w))
    Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).convert("RGB").save(path, format="JPEG", quality=85)
    return lines
