"""Pages with known text, read well or badly on purpose: the quality check's tests and
bench/bench_flags.py (the ``low_confidence`` flag's precision and recall).

Each page is drawn with Pillow from its text and then degraded in one way, seeded (the same
arguments give the same bytes):

- ``clean``: a 150 dpi scan (scangen's office feeder);
- ``blur``: out of focus (Gaussian blur, radius 2.5 px at 150 dpi);
- ``noise``: a bad photocopy (grey noise of sigma 70 and dark specks);
- ``lowdpi``: scanned at ~50 dpi (the image is small, the letters a few px high);
- ``rot90``: the sheet put on the scanner sideways;
- ``hand``: a handwriting-like face (URW Z003, a calligraphic italic) slightly blurred;
- ``tategaki``: CJK text in vertical columns read right to left (a Japanese letter's layout);
  Latin text is drawn horizontally there (no vertical Latin layout exists).

``page(text, kind, seed, lang)`` returns the image; ``KINDS`` lists the kinds.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from docgen import _CJK_FACE, NOTO_CJK, is_cjk, text_image
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from scangen import Scan, scan

KINDS = ("clean", "blur", "noise", "lowdpi", "rot90", "hand", "tategaki")
HAND_FONT = Path("/usr/share/fonts/opentype/urw-base35/Z003-MediumItalic.otf")


def _hand_image(text: str, width: int = 1240, font_size: int = 40) -> Image.Image:
    font = ImageFont.truetype(str(HAND_FONT), font_size)
    margin = width // 12
    lines: list[str] = []
    for para in text.split("\n"):
        line = ""
        for w in para.split(" "):
            cand = w if not line else line + " " + w
            if line and font.getlength(cand) > width - 2 * margin:
                lines.append(line)
                line = w
            else:
                line = cand
        lines.append(line)
    h = max(int(width * 1.414), 2 * margin + int(font_size * 1.5) * len(lines))
    img = Image.new("RGB", (width, h), "white")
    d = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        d.text((margin, margin + i * int(font_size * 1.5)), line, font=font, fill="black")
    return img


def tategaki_image(text: str, lang: str = "ja", width: int = 1240, font_size: int = 34) -> Image.Image:
    """CJK ``text`` in vertical columns, right to left, top to bottom in each column."""
    font = ImageFont.truetype(str(NOTO_CJK), font_size, index=_CJK_FACE.get(lang, 0))
    h = int(width * 1.414)
    margin = width // 12
    step = int(font_size * 1.15)
    col_w = int(font_size * 1.8)
    per_col = (h - 2 * margin) // step
    img = Image.new("RGB", (width, h), "white")
    d = ImageDraw.Draw(img)
    x = width - margin - font_size
    for para in text.split("\n"):
        chars = [c for c in para if not c.isspace()]
        while chars:
            col, chars = chars[:per_col], chars[per_col:]
            for k, c in enumerate(col):
                d.text((x, margin + k * step), c, font=font, fill="black")
            x -= col_w
            if x < margin:
                return img
        if para.strip():
            continue
        x -= col_w // 2  # a blank line: a wider gap between columns
    return img


def page(text: str, kind: str, seed: int = 0, lang: str | None = None) -> Image.Image:
    """The page of ``text`` degraded as ``kind`` says (see the module docstring); grey or RGB."""
    rng = random.Random(seed)
    if kind == "tategaki" and is_cjk(text):
        img = tategaki_image(text, "ja" if lang == "ja" else (lang or "zh"))
    elif kind == "hand" and not is_cjk(text):
        img = _hand_image(text)
    else:
        img = text_image(text, lang=lang)
    if kind == "hand":
        img = img.filter(ImageFilter.GaussianBlur(1.0))
    out = scan(img, seed=seed, kind=Scan(noise=70.0 if kind == "noise" else 3.0, dust=4000 if kind == "noise" else 0,
                                         skew=rng.uniform(-0.8, 0.8)))
    if kind == "blur":
        out = out.filter(ImageFilter.GaussianBlur(2.5))
    elif kind == "lowdpi":
        out = out.resize((out.width // 3, out.height // 3), Image.Resampling.BILINEAR)
    elif kind == "rot90":
        out = out.rotate(-90, expand=True, fillcolor=244)
    return out


def noise_page(seed: int = 0, size: tuple[int, int] = (1240, 1754)) -> Image.Image:
    """Paper with nothing printed on it but heavy noise and specks (junk for any engine)."""
    arr = np.random.default_rng(seed).normal(200, 60, size=(size[1], size[0]))
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "L")
