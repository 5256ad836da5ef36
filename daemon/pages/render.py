"""Render stage: an input file (PDF or image) -> upright RGB page images at the engine's size.

Public API (used by the pipeline; names and signatures are stable):

- ``render_page(path, index, opts) -> Page``: one page. Module-level and returns a picklable
  ``Page`` so the pipeline can call it in a ``ProcessPoolExecutor``.
- ``crop_dark_borders(image)``: the scanner-border crop.

Opening and refusing files is ``daemon.pages.probe``'s (``page_count``, ``probe``); turning
pages upright is ``daemon.pages.orient``'s. When autorotate is on, ``Page.script`` carries the
OSD script of the page (pass it to the engine as ``PageRequest.meta["script"]`` to save the
engine a second OSD pass). With ``opts.read_first`` (the Tesseract engine) the page's English text
band is read first and OSD runs only where it does not read as upright text
(``orient.upright_by_reading``); ``Page.band`` then carries that read (text, confidence) for the
engine's language probe (``PageRequest.meta["band"]``).

Sizes (``opts.dpi`` unset: the VLM, which was trained on pages of 1540 px):
- PDF pages are rendered so the longest edge is ``opts.longest_edge`` px but never above
  ``opts.max_dpi`` (a small receipt page stays small rather than being blown up), and a page
  that would exceed ``opts.max_image_pixels`` is refused ("page too large to render").
- Images are always resized so the longest edge is ``opts.longest_edge`` -- downscaled, and
  *upscaled* too: image DPI metadata is unreliable, and both engines read text best at the
  size they were tuned for (LightOnOCR was trained at 1540 px; Tesseract wants x-heights of
  20+ px, which a 1000 px phone photo of a page does not give). Upscaling uses LANCZOS.

Sizes with ``opts.dpi`` set (Tesseract, ``engine.tesseract.render_dpi``, default 300: it reads
best near 300 dpi, and small print is lost at 1540 px, which is ~132 dpi on A4):
- PDF pages are rendered at ``opts.dpi``; pages larger than A3 get A3's pixel count at that
  resolution, and never fewer pixels than the VLM size would give.
- Images keep their size between ``opts.longest_edge`` and an A4 page's longest edge at
  ``opts.dpi`` (3508 px at 300 dpi); smaller ones are upscaled to ``opts.longest_edge``,
  larger ones downscaled to that cap. ``opts.max_image_pixels`` bounds both.
- Orientation detection (OSD) looks at a copy of at most ``OSD_EDGE`` px (its cost grows with
  pixels; the VLM-size page was what it was calibrated on); the turn is applied to the page.

Page processing order: decode (JPEG via ``draft`` at a reduced DCT scale when the file is much
bigger than the target) -> EXIF orientation -> RGB (alpha composited over white) -> dark
border crop -> resize to the target -> OSD orientation fix -> deskew (``daemon.pages.deskew``).
Cropping runs before resizing so the page content, not the scanner lid, fills the target size;
orientation runs after resizing because OSD cost grows with pixels and a 90 degree turn keeps
the longest edge; deskew comes last, on the upright page, whose lines it measures.
"""

from __future__ import annotations

import logging
import struct
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from daemon.errors import InputError
from daemon.models import Page, RenderOptions
from daemon.pages.deskew import deskew
from daemon.pages.orient import upright_by_reading, upright_with_script
from daemon.pages.probe import (
    KIND_WORDS,
    check_pixels,
    classify,
    corrupt_pdf_errors,
    image_frames,
    mupdf,
    open_image,
    open_pdf,
    short,
)
from daemon.stages import Degraded, Stage, optional

__all__ = ["render_page", "crop_dark_borders", "image_target"]

log = logging.getLogger(__name__)

#: Page sizes (inches, short x long edge) that bound a page rendered at ``opts.dpi``.
A4_INCHES = (210 / 25.4, 297 / 25.4)
A3_INCHES = (297 / 25.4, 420 / 25.4)

#: A pixel this dark (0-255 luminance) counts as scanner border.
_DARK = 70
#: A row/column is border when at least this fraction of it is dark.
_BORDER_FRACTION = 0.6
#: Never crop more than this fraction of a dimension in total (a dark photo is not a border).
_MAX_CROP = 0.4
#: A dark edge band is no scanner border when this many of its rows (columns, for a side band)
#: hold at least ``_TEXT_RUNS`` light runs between dark pixels: white letters on a dark
#: letterhead band at the top edge of a page ("Banco Lusitano de Poupança" in white on navy
#: was cut off as border and its line lost). A scanner border is dark throughout; the page
#: corner of a skewed scan entering it is one light run per row, reaching the band's end.
_TEXT_ROWS = 3
_TEXT_RUNS = 6
#: A thumbnail pixel this light (0-255) is paper or a letter's stroke, not border.
_LIGHT = 150


# --------------------------------------------------------------------------- rendering


def _to_rgb(im: Image.Image) -> Image.Image:
    """RGB; transparency is composited over white (a transparent PNG scan is paper, not ink)."""
    if im.mode == "RGB":
        return im
    if im.mode == "P" and "transparency" in im.info:
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "LA", "PA", "RGBa", "La"):
        rgba = im.convert("RGBA")
        bg = Image.new("RGB", im.size, (255, 255, 255))
        bg.paste(rgba, mask=rgba.getchannel("A"))
        return bg
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16-bit grayscale scans: scale to 8 bits rather than clipping at 255.
        arr = np.asarray(im, dtype=np.uint32)
        peak = int(arr.max()) or 1
        shift = max(0, peak.bit_length() - 8)
        return Image.fromarray((arr >> shift).astype(np.uint8), "L").convert("RGB")
    return im.convert("RGB")


def crop_dark_borders(img: Image.Image) -> tuple[Image.Image, bool]:
    """Remove near-black scanner borders at the edges; returns (image, cropped?)."""
    box = dark_border_box(img)
    return (img, False) if box is None else (img.crop(box), True)


def dark_border_box(img: Image.Image) -> tuple[int, int, int, int] | None:
    """The box ``crop_dark_borders`` keeps (x0, y0, x1, y1), or None when nothing is cropped.

    Works on a grayscale thumbnail (~600 px) for speed: from each edge inwards, rows/columns
    where at least 60 % of the pixels are darker than 70/255 are border. A couple of pixels more
    are trimmed for the anti-aliased edge. Nothing is cropped when the "border" would take more
    than 40 % of a dimension (a dark photo, a black slide), or when it is under 0.5 %.
    """
    w, h = img.size
    factor = max(1, max(w, h) // 600)
    # Box-reduce first, then grey: 10x cheaper than converting the full-size page.
    thumb = (img.reduce(factor) if factor > 1 else img).convert("L")
    tw, th = thumb.size
    scale = tw / w
    dark = np.asarray(thumb) < _DARK
    rows = dark.mean(axis=1) >= _BORDER_FRACTION
    cols = dark.mean(axis=0) >= _BORDER_FRACTION

    def run(flags: np.ndarray) -> int:
        n = 0
        for v in flags:
            if not v:
                break
            n += 1
        return n

    top, bottom = run(rows), run(rows[::-1])
    left, right = run(cols), run(cols[::-1])
    light = np.asarray(thumb) >= _LIGHT
    top = 0 if _holds_text(light[:top]) else top
    bottom = 0 if bottom and _holds_text(light[th - bottom:]) else bottom
    left = 0 if _holds_text(light[:, :left].T) else left
    right = 0 if right and _holds_text(light[:, tw - right:].T) else right
    if top + bottom > _MAX_CROP * th or left + right > _MAX_CROP * tw:
        return None
    if max(top, bottom) < 0.005 * th and max(left, right) < 0.005 * tw:
        return None
    pad = 2  # thumbnail px: the blurred border edge
    box = (
        round((left + pad if left else 0) / scale),
        round((top + pad if top else 0) / scale),
        round(w - (right + pad if right else 0) / scale),
        round(h - (bottom + pad if bottom else 0) / scale),
    )
    if box[2] - box[0] < 16 or box[3] - box[1] < 16:
        return None
    return box


def _holds_text(band: np.ndarray) -> bool:
    """Whether an edge band (rows of light/not-light flags) holds light letters: at least
    ``_TEXT_ROWS`` rows with ``_TEXT_RUNS`` or more light runs that start and end inside the row."""
    if band.size == 0:
        return False
    starts = band[:, 1:] & ~band[:, :-1]  # dark -> light inside the row
    return int(((starts.sum(axis=1) - band[:, -1]) >= _TEXT_RUNS).sum()) >= _TEXT_ROWS


def image_target(opts: RenderOptions, size: tuple[int, int]) -> int:
    """Longest edge (px) an image page is brought to.

    Without ``opts.dpi`` (the VLM): ``opts.longest_edge``, up or down. With it (Tesseract): the
    image keeps its own size between ``opts.longest_edge`` (smaller ones are upscaled, see the
    module docstring) and an A4 page's longest edge at ``opts.dpi`` (a 12 Mpx phone photo is
    brought down to it), and never above ``opts.max_image_pixels``.
    """
    if not opts.dpi:
        return opts.longest_edge
    w, h = size
    edge = max(w, h, 1)
    target = min(max(edge, opts.longest_edge), round(A4_INCHES[1] * opts.dpi))
    # The pixel limit bounds the rendered page too (an extreme aspect ratio scaled up).
    if w * h * (target / edge) ** 2 > opts.max_image_pixels:
        target = int(edge * (opts.max_image_pixels / max(w * h, 1)) ** 0.5)
    return max(1, target)


def _resize_longest(img: Image.Image, longest: int) -> Image.Image:
    w, h = img.size
    if max(w, h) == longest:
        return img
    s = longest / max(w, h)
    size = (max(1, round(w * s)), max(1, round(h * s)))
    # Reducing first with a box filter keeps LANCZOS fast on big downscales.
    return img.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0 if s < 1 else None)


def _render_pdf_page(path: Path, index: int, opts: RenderOptions) -> tuple[Image.Image, tuple[int, int]]:
    doc = open_pdf(path)
    try:
        if not 0 <= index < doc.page_count:
            raise IndexError(f"page {index} out of range (document has {doc.page_count})")
        # a page tree with a cycle opens, with the page count its root claims, and fails here
        with corrupt_pdf_errors(f"page {index + 1}"):
            page = doc.load_page(index)
            rect = page.rect  # already accounts for /Rotate
        if rect.width <= 0 or rect.height <= 0:
            raise InputError(f"page {index + 1} has no area")
        if opts.dpi:
            # At the engine's resolution; a page larger than A3 is scaled down to A3's pixel count
            # at that resolution (a poster at 300 dpi would be hundreds of Mpx).
            budget = (A3_INCHES[0] * opts.dpi) * (A3_INCHES[1] * opts.dpi)
            zoom = min(opts.dpi / 72.0, (budget / (rect.width * rect.height)) ** 0.5)
            zoom = max(zoom, min(opts.longest_edge / max(rect.width, rect.height), opts.max_dpi / 72.0))
        else:
            zoom = min(opts.longest_edge / max(rect.width, rect.height), opts.max_dpi / 72.0)
        pw, ph = round(rect.width * zoom), round(rect.height * zoom)
        if pw * ph > opts.max_image_pixels:
            raise InputError(f"page too large to render: page {index + 1} would be {pw}x{ph} px")
        # MuPDF decodes embedded images whole (Flate) before scaling: refuse bombs from the
        # image dictionaries (a cheap read of the page's resources).
        with corrupt_pdf_errors(f"page {index + 1}"):
            images = page.get_images(full=True)
        for info in images:
            iw, ih = int(info[2]), int(info[3])
            if iw * ih > opts.max_image_pixels:
                raise InputError(
                    f"image too large: page {index + 1} embeds a {iw}x{ih} image = {iw * ih / 1e6:.0f} Mpx "
                    f"> limit {opts.max_image_pixels / 1e6:.0f} Mpx (refused as a possible decompression bomb)"
                )
        try:
            fz = mupdf()
            pix = page.get_pixmap(matrix=fz.Matrix(zoom, zoom), colorspace=fz.csRGB, alpha=False)
        except Exception as e:
            raise InputError(f"corrupt PDF page {index + 1} ({short(e)})") from e
        img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
        return img, (pix.width, pix.height)
    finally:
        doc.close()


def _render_image_page(path: Path, index: int, opts: RenderOptions) -> tuple[Image.Image, tuple[int, int]]:
    kind, _ = classify(path)
    with open_image(path) as im:
        n = image_frames(im)
        if not 0 <= index < n:
            raise IndexError(f"page {index} out of range (image has {n})")
        if index:
            im.seek(index)
        check_pixels(im.width, im.height, opts, "image" if n == 1 else f"page {index + 1}")
        source = im.size
        edge = image_target(opts, im.size)
        if kind == "jpeg" and max(im.size) > 2 * edge:
            # Decode at 1/2, 1/4 or 1/8 DCT scale, never below the target size.
            im.draft("RGB", (im.width * edge // max(im.size), im.height * edge // max(im.size)))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. "Corrupt EXIF data" / palette warnings
                im.load()
                out = ImageOps.exif_transpose(im)
        except (OSError, SyntaxError, ValueError, struct.error, EOFError, TypeError) as e:
            msg = str(e).lower()
            if "truncat" in msg:
                raise InputError(f"truncated {KIND_WORDS[kind].split()[1]}") from e
            raise InputError(f"corrupt image ({short(e)})") from e
        return _to_rgb(out), source


def render_page(path: Path, index: int, opts: RenderOptions) -> Page:
    """Render page ``index`` (0-based) of ``path`` as an upright RGB page at the target size.

    Raises ``InputError`` for bad files (see ``page_count``); ``IndexError`` for an index out of
    range (a caller bug). Safe to call in worker processes: module-level, returns a ``Page``
    whose PIL image pickles.
    """
    path = Path(path)
    kind, _ = classify(path)
    if kind == "pdf":
        img, source = _render_pdf_page(path, index, opts)
        target = max(img.size)  # already at the target, or smaller by the dpi cap
    else:
        img, source = _render_image_page(path, index, opts)
        target = image_target(opts, source)
    # The crop and the upright turn are optional stages (daemon.stages): one that fails leaves
    # the page as it was, recorded in ``Page.degraded``; the page is still read.
    degraded: list[Degraded] = []
    crop_box = None
    if opts.crop_borders:
        page_img = img
        crop_box = optional(Stage.CROP, lambda: dark_border_box(page_img), lambda: None, degraded)
        if crop_box is not None:
            before = img.size
            img = img.crop(crop_box)
            if kind == "pdf":
                # Scale the page content back up to the size the uncropped page had.
                target = max(before) if opts.dpi else min(opts.longest_edge, max(before))
    img = _resize_longest(img, target)
    rotation, script = 0, ""
    band: tuple[str, float] | None = None
    if opts.autorotate and opts.read_first:
        upright = img
        img, rotation, script, read = optional(
            Stage.ORIENTATION, lambda: upright_by_reading(upright), lambda: (upright, 0, "", None), degraded
        )
        band = (read.text, read.conf) if read is not None else None
    elif opts.autorotate:
        upright = img
        img, rotation, script = optional(
            Stage.ORIENTATION, lambda: upright_with_script(upright), lambda: (upright, 0, ""), degraded
        )
    skew, unskewed = 0.0, None
    if opts.deskew:  # after the upright turn: the skew is measured along the page's lines
        straight = img
        img, skew = optional(Stage.DESKEW, lambda: deskew(straight), lambda: (straight, 0.0), degraded)
        unskewed = straight.size if skew else None
    img.load()
    return Page(
        index=index, image=img, rotation=rotation, cropped=crop_box is not None, source_size=source, script=script,
        crop_box=crop_box, skew=skew, unskewed_size=unskewed, degraded=degraded, band=band,
    )
