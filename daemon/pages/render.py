"""Render stage: an input file (PDF or image) -> upright RGB page images at the engine's size.

Public API (used by the stability checker and the pipeline; names and signatures are stable):

- ``probe(path) -> str | None``: ``None`` when the file opens as what it claims to be, else a
  short human reason ("empty file", "not a PDF (starts with '<html')", "truncated JPEG",
  "encrypted PDF (password protected)"). Cheap (header checks, no pixel decoding except a
  reduced-size decode for JPEGs that lack their end marker) and never raises.
- ``page_count(path, opts) -> int``: raises ``InputError`` for every permanent problem (not a
  PDF/image, encrypted, corrupt, more pages than ``opts.max_pages``, an image bigger than
  ``opts.max_image_pixels`` -- checked from the header, before any pixel is decoded).
- ``render_page(path, index, opts) -> Page``: one page. Module-level and returns a picklable
  ``Page`` so the pipeline can call it in a ``ProcessPoolExecutor``.
- ``render_document(path, opts) -> Iterator[Page]``: ``page_count`` then every page.
- ``detect_orientation(image) -> Orientation | None`` and ``detect_script(image)``: Tesseract OSD
  (``--psm 0``); the Tesseract engine uses the script to pick language models. When autorotate
  is on, ``Page.script`` carries the OSD script of the page (pass it to the engine as
  ``PageRequest.meta["script"]`` to save the engine a second OSD pass).

Formats: pdf, png, jpg/jpeg, tif/tiff (multi-page), webp, bmp, recognised by their content
(magic bytes). A file whose extension names a PDF must contain a PDF ("not a PDF: the file is a
PNG image"); a file with an image extension must contain one of the image formats (a JPEG
named .png is accepted: Pillow decodes what is there). Unknown extensions go by content.

Sizes:
- PDF pages are rendered so the longest edge is ``opts.longest_edge`` px but never above
  ``opts.max_dpi`` (a small receipt page stays small rather than being blown up), and a page
  that would exceed ``opts.max_image_pixels`` is refused ("page too large to render").
- Images are always resized so the longest edge is ``opts.longest_edge`` -- downscaled, and
  *upscaled* too: image DPI metadata is unreliable, and both engines read text best at the
  size they were tuned for (LightOnOCR was trained at 1540 px; Tesseract wants x-heights of
  20+ px, which a 1000 px phone photo of a page does not give). Upscaling uses LANCZOS.

Page processing order: decode (JPEG via ``draft`` at a reduced DCT scale when the file is much
bigger than the target) -> EXIF orientation -> RGB (alpha composited over white) -> dark
border crop -> resize to the target -> OSD orientation fix. Cropping runs before resizing so the
page content, not the scanner lid, fills the target size; orientation runs after resizing
because OSD cost grows with pixels and a 90 degree turn keeps the longest edge.

Orientation: Tesseract OSD through tesserocr with ``lang="osd"`` (initialising OSD with the
default ``eng`` aborts the whole process inside Tesseract 5.5.4's OSD code -- a C++
``std::out_of_range``, not a Python exception). One OSD API per thread, kept loaded. A page is
turned only when two OSD passes agree (``make_upright``): the first proposes a turn with
confidence >= ``ORIENT_MIN_CONF`` and a script of our languages, the second, on the turned
page, sees it upright with the same script. Calibrated on 155 generated pages (11 languages x 4
turns, dense, sparse, noisy scans, noise images): 0 wrong turns; one-line pages and the
noisiest CJK scans are left as scanned (bench/RESULTS.md).

Decompression bombs: Pillow's global limit (default ~89 Mpx warning / 179 Mpx error) cannot
follow the configured ``max_image_pixels``, so this module checks the header size of every image
(every TIFF frame, and every image embedded in a PDF page) against the configured limit itself
before decoding, and raises Pillow's ``Image.MAX_IMAGE_PIXELS`` to a 1 Gpx backstop (it is
process-wide; this module is the only place that opens untrusted input).
"""

from __future__ import annotations

import logging
import os
import struct
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError

from daemon.errors import InputError
from daemon.models import Page, RenderOptions

__all__ = [
    "probe",
    "page_count",
    "render_page",
    "render_document",
    "detect_orientation",
    "detect_script",
    "make_upright",
    "crop_dark_borders",
    "Orientation",
    "sniff",
    "tessdata_dir",
    "ORIENT_MIN_CONF",
]

log = logging.getLogger(__name__)

# We enforce opts.max_image_pixels ourselves from the header (see module docstring); Pillow's
# own check stays as a process-wide backstop far above any sane page (warning > 1 Gpx, error > 2).
BACKSTOP_PIXELS = 1_000_000_000
Image.MAX_IMAGE_PIXELS = BACKSTOP_PIXELS
ImageFile.LOAD_TRUNCATED_IMAGES = False
pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's own stderr chatter; errors still raise

DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"

#: Minimum OSD orientation confidence (on both passes) to turn a page. Calibrated with
#: ``bench/bench_render.py --calibrate``: right answers score 5-19 on Latin pages, 4.4-16 on
#: Japanese, 1.6-2.1 on sparse and 7-9 on dense Chinese pages; random noise scores up to 4.4,
#: which the second, confirming pass rejects.
ORIENT_MIN_CONF = 1.5

#: Scripts of the 11 supported languages as OSD names them; an OSD answer naming another
#: script (on noise it says "Arabic" or "Bengali") is not trusted to turn a page.
TEXT_SCRIPTS = frozenset({"Latin", "Han", "Japanese", "Katakana", "Hiragana", "Hangul"})

#: A pixel this dark (0-255 luminance) counts as scanner border.
_DARK = 70
#: A row/column is border when at least this fraction of it is dark.
_BORDER_FRACTION = 0.6
#: Never crop more than this fraction of a dimension in total (a dark photo is not a border).
_MAX_CROP = 0.4

_EXT_KIND = {
    ".pdf": "pdf",
    ".png": "png",
    ".jpg": "jpeg",
    ".jpeg": "jpeg",
    ".tif": "tiff",
    ".tiff": "tiff",
    ".webp": "webp",
    ".bmp": "bmp",
}
_KIND_WORDS = {
    "pdf": "a PDF",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "tiff": "a TIFF image",
    "webp": "a WebP image",
    "bmp": "a BMP image",
    "gif": "a GIF image",
    "zip": "a ZIP archive (or Office document)",
    "html": "an HTML/XML page",
}
_IMAGE_KINDS = ("png", "jpeg", "tiff", "webp", "bmp")


def tessdata_dir() -> str:
    """Tesseract's data folder: ``$TESSDATA_PREFIX`` if set, else Debian's."""
    return os.environ.get("TESSDATA_PREFIX") or DEBIAN_TESSDATA


# --------------------------------------------------------------------------- sniffing


def sniff(head: bytes) -> str | None:
    """The format of a file from its first bytes: pdf, png, jpeg, tiff, webp, bmp, gif, zip,
    html, or None when unknown."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:2] == b"BM" and len(head) >= 26:
        return "bmp"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if head[:4] == b"PK\x03\x04":
        return "zip"
    # PDF readers accept the header anywhere in the first KiB (some generators prepend junk).
    if b"%PDF-" in head[:1024]:
        return "pdf"
    stripped = head.lstrip().lower()
    if stripped.startswith((b"<!doctype html", b"<html", b"<?xml", b"<")):
        return "html"
    return None


def _describe_start(head: bytes) -> str:
    """A short printable rendering of the first bytes, for 'starts with ...' messages."""
    snippet = head.lstrip()[:5]
    text = snippet.decode("latin-1")
    if all(32 <= ord(c) < 127 for c in text):
        return f"starts with {text!r}"
    return "starts with bytes " + snippet.hex(" ")


def _classify(path: Path) -> tuple[str, bytes]:
    """(kind, head) of ``path``; raises InputError when it is not a supported format or does not
    match its extension."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(1024)
    except FileNotFoundError as e:
        raise InputError("file not found") from e
    except IsADirectoryError as e:
        raise InputError("is a folder, not a file") from e
    except PermissionError as e:
        raise InputError("file not readable (permission denied)") from e
    if size == 0:
        raise InputError("empty file")
    kind = sniff(head)
    want = _EXT_KIND.get(path.suffix.lower())
    if want == "pdf" and kind != "pdf":
        if kind in _KIND_WORDS and kind != "html":
            raise InputError(f"not a PDF: the file is {_KIND_WORDS[kind]}")
        raise InputError(f"not a PDF ({_describe_start(head)})")
    if kind in _IMAGE_KINDS or kind == "pdf":
        if want is not None and want != kind and kind == "pdf":
            raise InputError(f"not {_KIND_WORDS[want]}: the file is a PDF")
        if want is not None and want != kind:
            log.debug("%s: extension says %s but content is %s; decoding the content", path, want, kind)
        return kind, head
    wanted = _KIND_WORDS.get(want or "", "a supported document")
    if kind in _KIND_WORDS and kind != "html":
        raise InputError(f"not {wanted}: the file is {_KIND_WORDS[kind]}")
    raise InputError(f"not {wanted} ({_describe_start(head)})")


# --------------------------------------------------------------------------- probe


def _tail(path: Path, n: int = 2048) -> bytes:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - n))
        return f.read()


def _probe_pdf(path: Path) -> str | None:
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except Exception as e:  # pymupdf raises FileDataError/RuntimeError/ValueError variously
        return f"corrupt PDF ({_short(e)})"
    try:
        if doc.needs_pass:
            return "encrypted PDF (password protected)"
        # A PDF cut off mid-copy has no final %%EOF and needs MuPDF's repair to open at all;
        # both together mean "still being written / truncated". (A complete PDF that merely
        # needs repair still renders and is accepted.)
        if doc.is_repaired and b"%%EOF" not in _tail(path):
            return "truncated PDF (no end-of-file marker)"
        if doc.page_count < 1:
            return "PDF has no pages"
        return None
    finally:
        doc.close()


def _probe_image(path: Path, kind: str) -> str | None:
    size = path.stat().st_size
    name = _KIND_WORDS[kind].split(" ", 1)[1].split()[0]  # "PNG", "JPEG", ...
    # Container sizes declared in the header: checked first, Pillow may not even open a cut file.
    if kind == "webp":
        with open(path, "rb") as f:
            riff = f.read(12)
        if size < struct.unpack("<I", riff[4:8])[0] + 8:
            return "truncated WebP"
    elif kind == "bmp":
        with open(path, "rb") as f:
            hdr = f.read(14)
        declared = struct.unpack("<I", hdr[2:6])[0]
        if declared and size < declared:
            return "truncated BMP"
    try:
        with warnings.catch_warnings(), Image.open(path) as im:
            warnings.simplefilter("ignore")  # "Corrupt EXIF data" and the like: not our verdict
            im.verify()  # PNG: walks every chunk checking CRCs (catches truncation), no decode
    except Image.DecompressionBombError:
        return None  # a valid header with > 2 Gpx: page_count refuses it with the limit message
    except (OSError, SyntaxError, ValueError, struct.error, EOFError, TypeError) as e:
        msg = str(e).lower()
        if "truncat" in msg or isinstance(e, EOFError) or "unexpected end" in msg:
            return f"truncated {name}"
        return f"corrupt {name} ({_short(e)})"
    if kind == "jpeg":
        if b"\xff\xd9" not in _tail(path, 4096):
            # No end-of-image marker near the end: usually a partial copy. Some cameras append
            # data after EOI, so confirm with a reduced-size decode (1/8 scale: cheap).
            try:
                with Image.open(path) as im:
                    im.draft("L", (max(1, im.width // 8), max(1, im.height // 8)))
                    im.load()
            except (OSError, ValueError, SyntaxError) as e:
                return f"truncated JPEG ({_short(e)})" if "truncat" not in str(e) else "truncated JPEG"
    elif kind == "tiff":
        return _probe_tiff_extents(path, size)
    return None


def _probe_tiff_extents(path: Path, size: int) -> str | None:
    """Every strip/tile of every frame must lie inside the file (header reads only)."""
    try:
        with warnings.catch_warnings(), Image.open(path) as im:
            warnings.simplefilter("ignore")
            for frame in range(getattr(im, "n_frames", 1)):
                im.seek(frame)
                tags = im.tag_v2  # type: ignore[attr-defined]
                offsets = tags.get(273) or tags.get(324)
                counts = tags.get(279) or tags.get(325)
                if offsets is None or counts is None:
                    continue
                offs = offsets if isinstance(offsets, tuple) else (offsets,)
                cnts = counts if isinstance(counts, tuple) else (counts,)
                if any(o + c > size for o, c in zip(offs, cnts, strict=False)):
                    return "truncated TIFF"
    except Exception as e:  # Pillow raises TypeError etc. for IFDs cut off mid-file
        if size < 8 or "missing" in str(e).lower() or isinstance(e, (EOFError, struct.error, TypeError)):
            return "truncated TIFF"
        return f"corrupt TIFF ({_short(e)})"
    return None


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:120]


def probe(path: Path) -> str | None:
    """``None`` if ``path`` opens as what it claims to be, else a short reason. Never raises.

    Meant for the stability checker on every candidate: header checks and, for PDFs, opening
    the document (MuPDF reads the xref only). No page is rendered.
    """
    try:
        path = Path(path)
        try:
            kind, _ = _classify(path)
        except InputError as e:
            return e.reason
        if kind == "pdf":
            return _probe_pdf(path)
        return _probe_image(path, kind)
    except Exception as e:  # never raise: the caller only wants a yes/no and a reason
        log.debug("probe(%s) failed unexpectedly", path, exc_info=True)
        return f"unreadable ({_short(e)})"


# --------------------------------------------------------------------------- opening


def _open_pdf(path: Path) -> pymupdf.Document:
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except Exception as e:
        raise InputError(f"corrupt PDF ({_short(e)})") from e
    if doc.needs_pass:
        doc.close()
        raise InputError("encrypted PDF (password protected)")
    if doc.is_repaired and b"%%EOF" not in _tail(path):
        doc.close()
        raise InputError("truncated PDF (no end-of-file marker)")
    return doc


def _image_frames(im: Image.Image) -> int:
    return int(getattr(im, "n_frames", 1) or 1)


def _check_pixels(w: int, h: int, opts: RenderOptions, what: str = "image") -> None:
    if w <= 0 or h <= 0:
        raise InputError(f"{what} has no pixels ({w}x{h})")
    if w * h > opts.max_image_pixels:
        raise InputError(
            f"{what} too large: {w}x{h} = {w * h / 1e6:.0f} Mpx > limit "
            f"{opts.max_image_pixels / 1e6:.0f} Mpx (refused as a possible decompression bomb)"
        )


def _open_image(path: Path) -> Image.Image:
    try:
        return Image.open(path)
    except Image.DecompressionBombError as e:
        raise InputError(f"image too large ({_short(e)}; refused as a possible decompression bomb)") from e
    except UnidentifiedImageError as e:
        raise InputError("not a readable image (unknown or corrupt format)") from e
    except (OSError, SyntaxError, ValueError, struct.error) as e:
        raise InputError(f"corrupt image ({_short(e)})") from e


def page_count(path: Path, opts: RenderOptions) -> int:
    """Number of pages; raises ``InputError`` for any permanent problem (see module docstring).

    Images: every frame's size is checked against ``opts.max_image_pixels`` from the header.
    """
    path = Path(path)
    kind, _ = _classify(path)
    if kind == "pdf":
        doc = _open_pdf(path)
        try:
            n = doc.page_count
        finally:
            doc.close()
        if n < 1:
            raise InputError("PDF has no pages")
    else:
        reason = _probe_image(path, kind)
        if reason:
            raise InputError(reason)
        with warnings.catch_warnings(), _open_image(path) as im:
            warnings.simplefilter("ignore")
            n = _image_frames(im)
            if n > opts.max_pages:
                raise InputError(f"too many pages: {n} > limit {opts.max_pages}")
            for i in range(n):
                try:
                    if i:
                        im.seek(i)
                except Exception as e:  # an IFD that cannot be read
                    raise InputError(f"corrupt image: page {i + 1} unreadable ({_short(e)})") from e
                _check_pixels(im.width, im.height, opts, "image" if n == 1 else f"page {i + 1}")
    if n > opts.max_pages:
        raise InputError(f"too many pages: {n} > limit {opts.max_pages}")
    return n


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


def _resize_longest(img: Image.Image, longest: int) -> Image.Image:
    w, h = img.size
    if max(w, h) == longest:
        return img
    s = longest / max(w, h)
    size = (max(1, round(w * s)), max(1, round(h * s)))
    # Reducing first with a box filter keeps LANCZOS fast on big downscales.
    return img.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0 if s < 1 else None)


def _render_pdf_page(path: Path, index: int, opts: RenderOptions) -> tuple[Image.Image, tuple[int, int]]:
    doc = _open_pdf(path)
    try:
        if not 0 <= index < doc.page_count:
            raise IndexError(f"page {index} out of range (document has {doc.page_count})")
        page = doc.load_page(index)
        rect = page.rect  # already accounts for /Rotate
        if rect.width <= 0 or rect.height <= 0:
            raise InputError(f"page {index + 1} has no area")
        zoom = min(opts.longest_edge / max(rect.width, rect.height), opts.max_dpi / 72.0)
        pw, ph = round(rect.width * zoom), round(rect.height * zoom)
        if pw * ph > opts.max_image_pixels:
            raise InputError(f"page too large to render: page {index + 1} would be {pw}x{ph} px")
        # MuPDF decodes embedded images whole (Flate) before scaling: refuse bombs from the
        # image dictionaries (a cheap read of the page's resources).
        for info in page.get_images(full=True):
            iw, ih = int(info[2]), int(info[3])
            if iw * ih > opts.max_image_pixels:
                raise InputError(
                    f"image too large: page {index + 1} embeds a {iw}x{ih} image = {iw * ih / 1e6:.0f} Mpx "
                    f"> limit {opts.max_image_pixels / 1e6:.0f} Mpx (refused as a possible decompression bomb)"
                )
        try:
            pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
        except Exception as e:
            raise InputError(f"corrupt PDF page {index + 1} ({_short(e)})") from e
        img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
        return img, (pix.width, pix.height)
    finally:
        doc.close()


def _render_image_page(path: Path, index: int, opts: RenderOptions) -> tuple[Image.Image, tuple[int, int]]:
    kind, _ = _classify(path)
    with _open_image(path) as im:
        n = _image_frames(im)
        if not 0 <= index < n:
            raise IndexError(f"page {index} out of range (image has {n})")
        if index:
            im.seek(index)
        _check_pixels(im.width, im.height, opts, "image" if n == 1 else f"page {index + 1}")
        source = im.size
        if kind == "jpeg" and max(im.size) > 2 * opts.longest_edge:
            # Decode at 1/2, 1/4 or 1/8 DCT scale, never below the target size.
            im.draft("RGB", (im.width * opts.longest_edge // max(im.size), im.height * opts.longest_edge // max(im.size)))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. "Corrupt EXIF data" / palette warnings
                im.load()
                out = ImageOps.exif_transpose(im)
        except (OSError, SyntaxError, ValueError, struct.error, EOFError, TypeError) as e:
            msg = str(e).lower()
            if "truncat" in msg:
                raise InputError(f"truncated {_KIND_WORDS[kind].split()[1]}") from e
            raise InputError(f"corrupt image ({_short(e)})") from e
        return _to_rgb(out), source


def render_page(path: Path, index: int, opts: RenderOptions) -> Page:
    """Render page ``index`` (0-based) of ``path`` as an upright RGB page at the target size.

    Raises ``InputError`` for bad files (see ``page_count``); ``IndexError`` for an index out of
    range (a caller bug). Safe to call in worker processes: module-level, returns a ``Page``
    whose PIL image pickles.
    """
    path = Path(path)
    kind, _ = _classify(path)
    if kind == "pdf":
        img, source = _render_pdf_page(path, index, opts)
        target = max(img.size)  # already at the target, or smaller by the dpi cap
    else:
        img, source = _render_image_page(path, index, opts)
        target = opts.longest_edge
    cropped = False
    crop_box = None
    if opts.crop_borders:
        before = img.size
        crop_box = dark_border_box(img)
        cropped = crop_box is not None
        if crop_box is not None:
            img = img.crop(crop_box)
        if cropped and kind == "pdf":
            # Scale the page content back up to the size the uncropped page had.
            target = min(opts.longest_edge, max(before))
    img = _resize_longest(img, target)
    rotation, script = 0, ""
    if opts.autorotate:
        img, rotation, script = _upright(img)
    img.load()
    return Page(
        index=index, image=img, rotation=rotation, cropped=cropped, source_size=source, script=script, crop_box=crop_box,
    )


def render_document(path: Path, opts: RenderOptions) -> Iterator[Page]:
    """``page_count`` then ``render_page`` for each page, in order."""
    for i in range(page_count(path, opts)):
        yield render_page(path, i, opts)


# --------------------------------------------------------------------------- OSD


@dataclass(frozen=True)
class Orientation:
    """Tesseract OSD answer for one image.

    ``rotate_cw``: degrees to turn the image clockwise to make it upright (0/90/180/270).
    ``confidence``: OSD's orientation confidence (larger = surer; roughly 2-10 on real text).
    ``script``: Tesseract script name ("Latin", "Han", "Japanese", "Cyrillic", ...).
    """

    rotate_cw: int
    confidence: float
    script: str
    script_confidence: float


_osd_local = threading.local()
_osd_unavailable = False


def _osd_api() -> Any:
    api = getattr(_osd_local, "api", None)
    if api is None:
        from tesserocr import PSM, PyTessBaseAPI

        # lang="osd" is required: with the default "eng" Tesseract 5.5.4 aborts the process.
        api = PyTessBaseAPI(path=tessdata_dir(), lang="osd", psm=PSM.OSD_ONLY)
        _osd_local.api = api
    return api


def detect_orientation(image: Image.Image) -> Orientation | None:
    """Run Tesseract OSD on ``image``; ``None`` when OSD finds too little text to judge.

    Thread-safe (one OSD instance per thread). Costs ~0.1-0.3 s per 1540 px page.
    """
    global _osd_unavailable
    if _osd_unavailable:
        return None
    try:
        api = _osd_api()
    except Exception as e:  # no tesserocr / osd.traineddata (e.g. a GPU-only box): a nicety, not fatal
        # Once per process, then silently off: a warning per page would flood the journal.
        _osd_unavailable = True
        log.warning("orientation detection unavailable, pages are not turned upright: %s", e)
        return None
    try:
        api.SetImage(image.convert("L") if image.mode != "L" else image)
        r = api.DetectOrientationScript()
    except Exception:
        log.debug("OSD failed", exc_info=True)
        return None
    finally:
        api.Clear()
    if not r:
        return None
    deg = int(r.get("orient_deg", 0)) % 360
    # OSD reports how far the content is turned clockwise; undo it.
    return Orientation(
        rotate_cw=(360 - deg) % 360,
        confidence=float(r.get("orient_conf", 0.0)),
        script=str(r.get("script_name", "")),
        script_confidence=float(r.get("script_conf", 0.0)),
    )


def make_upright(image: Image.Image) -> tuple[Image.Image, int]:
    """Turn ``image`` upright when OSD is sure; returns (image, degrees turned clockwise).

    A turn needs two agreeing OSD answers: the first (confidence >= ``ORIENT_MIN_CONF``, script
    one of ``TEXT_SCRIPTS``) proposes it, and OSD on the turned image must then see an upright
    page with the same minimum confidence and the same script. Speckle and photos can fool one
    OSD pass with confidences up to ~4.6 (measured, bench/RESULTS.md), which would turn an
    upright page sideways; their second answer (angle and script) is random, while real text
    confirms itself. The check costs one more OSD pass, only on pages that are to be turned.
    """
    img, rotation, _ = _upright(image)
    return img, rotation


def _upright(image: Image.Image) -> tuple[Image.Image, int, str]:
    """``make_upright`` plus the OSD script of the page ("" when OSD could not tell)."""
    o = detect_orientation(image)
    if o is None:
        return image, 0, ""
    # The script is only worth passing on when OSD read enough text to be sure of anything.
    script = o.script if o.script in TEXT_SCRIPTS and o.confidence >= ORIENT_MIN_CONF else ""
    if not o.rotate_cw or o.confidence < ORIENT_MIN_CONF or o.script not in TEXT_SCRIPTS:
        return image, 0, script
    # PIL rotates counter-clockwise for positive angles.
    turned = image.rotate(-o.rotate_cw, expand=True)
    check = detect_orientation(turned)
    if check is None or check.rotate_cw != 0 or check.confidence < ORIENT_MIN_CONF or check.script != o.script:
        log.debug("OSD proposed %d deg (conf %.2f) but the check disagreed: %s", o.rotate_cw, o.confidence, check)
        return image, 0, ""
    return turned, o.rotate_cw, o.script


def detect_script(image: Image.Image) -> tuple[int, str, float]:
    """(rotate_cw, script name, script confidence) from OSD; (0, "", 0.0) when unknown."""
    o = detect_orientation(image)
    if o is None:
        return 0, "", 0.0
    return o.rotate_cw, o.script, o.script_confidence
