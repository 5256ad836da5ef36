"""Input probing: is a file what it claims to be, how many pages, and may it be decoded at all.

Public API (used by the stability checker and the pipeline; names and signatures are stable):

- ``probe(path) -> str | None``: ``None`` when the file opens as what it claims to be, else a
  short human reason ("empty file", "not a PDF (starts with '<html')", "truncated JPEG",
  "encrypted PDF (password protected)"). Cheap (header checks, no pixel decoding except a
  reduced-size decode for JPEGs that lack their end marker) and never raises.
- ``page_count(path, opts) -> int``: raises ``InputError`` for every permanent problem (not a
  PDF/image, encrypted, corrupt, more pages than ``opts.max_pages`` in all or more than
  ``opts.max_ocr_pages`` without any text (PDF pages with text count only against the first;
  every image page is a page to OCR), an image bigger than
  ``opts.max_image_pixels`` -- checked from the header, before any pixel is decoded).
- ``mupdf()``: the ``pymupdf`` module, imported on first use (a process that opens no PDF never
  loads it).
- ``sniff(head)``, ``classify(path)``, ``open_pdf``, ``open_image``, ``check_pixels``: the
  helpers ``daemon.pages.render`` opens files with, so both stages refuse the same inputs.
- ``corrupt_pdf_errors(where)``: a context in which MuPDF's exceptions about a broken file
  become ``InputError("corrupt PDF: ...")`` (both stages use it around MuPDF calls that read
  the file's structure).

Formats: pdf, png, jpg/jpeg, tif/tiff (multi-page), webp, bmp, recognised by their content
(magic bytes). A file whose extension names a PDF must contain a PDF ("not a PDF: the file is a
PNG image"); a file with an image extension must contain one of the image formats (a JPEG
named .png is accepted: Pillow decodes what is there). Unknown extensions go by content.

Decompression bombs: Pillow's global limit (default ~89 Mpx warning / 179 Mpx error) cannot
follow the configured ``max_image_pixels``, so this module checks the header size of every image
(every TIFF frame; ``render`` checks every image embedded in a PDF page) against the configured
limit itself before decoding, and raises Pillow's ``Image.MAX_IMAGE_PIXELS`` to a 1 Gpx backstop
(it is process-wide; the pages stage is the only place that opens untrusted input).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import struct
import sys
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageFile, UnidentifiedImageError

from daemon.errors import InputError
from daemon.models import RenderOptions

if TYPE_CHECKING:
    import pymupdf

__all__ = ["probe", "mupdf_open", "page_count", "sniff", "classify", "open_pdf", "open_image", "check_pixels", "image_frames", "short",
           "ocr_limit_reason",
           "corrupt_pdf_errors", "KIND_WORDS"]

log = logging.getLogger(__name__)

# We enforce opts.max_image_pixels ourselves from the header (see module docstring); Pillow's
# own check stays as a process-wide backstop far above any sane page (warning > 1 Gpx, error > 2).
BACKSTOP_PIXELS = 1_000_000_000
Image.MAX_IMAGE_PIXELS = BACKSTOP_PIXELS
ImageFile.LOAD_TRUNCATED_IMAGES = False

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
KIND_WORDS = {
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


def classify(path: Path) -> tuple[str, bytes]:
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
        if kind in KIND_WORDS and kind != "html":
            raise InputError(f"not a PDF: the file is {KIND_WORDS[kind]}")
        raise InputError(f"not a PDF ({_describe_start(head)})")
    if kind in _IMAGE_KINDS or kind == "pdf":
        if want is not None and want != kind and kind == "pdf":
            raise InputError(f"not {KIND_WORDS[want]}: the file is a PDF")
        if want is not None and want != kind:
            log.debug("%s: extension says %s but content is %s; decoding the content", path, want, kind)
        return kind, head
    wanted = KIND_WORDS.get(want or "", "a supported document")
    if kind in KIND_WORDS and kind != "html":
        raise InputError(f"not {wanted}: the file is {KIND_WORDS[kind]}")
    raise InputError(f"not {wanted} ({_describe_start(head)})")


@cache
def mupdf() -> Any:
    """The ``pymupdf`` module, imported on first use with MuPDF's own stderr chatter off (its
    errors still raise): 0.3 s of start-up that the main process of ``ocr-daemon once`` and of
    the daemon skip for image files and scanned pages, which their render workers open."""
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    return pymupdf


# --------------------------------------------------------------------------- probe


def mupdf_open(path: Path) -> pymupdf.Document:
    """``pymupdf.open`` of a PDF file by its bytes name. MuPDF takes a UTF-8 file name: a name
    that is not UTF-8 (``bad\\xff.pdf``, a str with surrogates here) failed as "Failed to open
    file" (issue 33), so such a file is opened through ``/proc/self/fd`` of a descriptor of it
    (MuPDF opens its own descriptor from that name; ours is closed at once)."""
    try:
        os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            return mupdf().open(f"/proc/self/fd/{fd}", filetype="pdf")
        finally:
            os.close(fd)
    return mupdf().open(str(path), filetype="pdf")


def _tail(path: Path, n: int = 2048) -> bytes:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - n))
        return f.read()


def _probe_pdf(path: Path) -> str | None:
    try:
        doc = mupdf_open(path)
    except Exception as e:  # pymupdf raises FileDataError/RuntimeError/ValueError variously
        return f"corrupt PDF ({short(e)})"
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
    name = KIND_WORDS[kind].split(" ", 1)[1].split()[0]  # "PNG", "JPEG", ...
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
        return f"corrupt {name} ({short(e)})"
    if kind == "jpeg":
        if b"\xff\xd9" not in _tail(path, 4096):
            # No end-of-image marker near the end: usually a partial copy. Some cameras append
            # data after EOI, so confirm with a reduced-size decode (1/8 scale: cheap).
            try:
                with Image.open(path) as im:
                    im.draft("L", (max(1, im.width // 8), max(1, im.height // 8)))
                    im.load()
            except (OSError, ValueError, SyntaxError) as e:
                return f"truncated JPEG ({short(e)})" if "truncat" not in str(e) else "truncated JPEG"
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
        return f"corrupt TIFF ({short(e)})"
    return None


def short(e: BaseException) -> str:
    """The first line of an exception's message (its type when it has none), at most 120
    characters, without MuPDF's error-code prefix ("code=7: cycle in page tree")."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return re.sub(r"^code=\d+:\s*", "", text)[:120] or type(e).__name__


def _file_is_broken(e: BaseException) -> bool:
    """An exception of MuPDF's that says the PDF itself is broken: a format or syntax error (a
    cycle in the page tree, a bad object), an unsupported or over-limit feature. Not its system
    errors (out of memory under the worker's cap, I/O), try-later or abort, and nothing that is
    not MuPDF's."""
    if "pymupdf" not in sys.modules:  # no MuPDF call was made in this process: not its exception
        return False
    fz = mupdf()
    m = fz.mupdf
    if isinstance(e, (m.FzErrorSystem, m.FzErrorTrylater, m.FzErrorAbort)):
        return False
    return isinstance(e, (m.FzErrorBase, fz.FileDataError))


@contextlib.contextmanager
def corrupt_pdf_errors(where: str = "") -> Iterator[None]:
    """Turn MuPDF's exceptions about a broken file (``_file_is_broken``) raised inside into
    ``InputError("corrupt PDF: <MuPDF's message>[ (where)]")``: permanent, and one that pickles
    (MuPDF's own carry a SWIG pointer, so they could not come back from a render worker). Any
    other exception passes unchanged."""
    try:
        yield
    except Exception as e:
        if isinstance(e, InputError) or not _file_is_broken(e):
            raise
        raise InputError(f"corrupt PDF: {short(e)}" + (f" ({where})" if where else "")) from e


def probe(path: Path) -> str | None:
    """``None`` if ``path`` opens as what it claims to be, else a short reason. Never raises.

    Meant for the stability checker on every candidate: header checks and, for PDFs, opening
    the document (MuPDF reads the xref only). No page is rendered.
    """
    try:
        path = Path(path)
        try:
            kind, _ = classify(path)
        except InputError as e:
            return e.reason
        if kind == "pdf":
            return _probe_pdf(path)
        return _probe_image(path, kind)
    except Exception as e:  # never raise: the caller only wants a yes/no and a reason
        log.debug("probe(%s) failed unexpectedly", path, exc_info=True)
        return f"unreadable ({short(e)})"


# --------------------------------------------------------------------------- opening


def open_pdf(path: Path) -> pymupdf.Document:
    try:
        doc = mupdf_open(path)
    except Exception as e:
        raise InputError(f"corrupt PDF ({short(e)})") from e
    if doc.needs_pass:
        doc.close()
        raise InputError("encrypted PDF (password protected)")
    if doc.is_repaired and b"%%EOF" not in _tail(path):
        doc.close()
        raise InputError("truncated PDF (no end-of-file marker)")
    return doc


def image_frames(im: Image.Image) -> int:
    return int(getattr(im, "n_frames", 1) or 1)


def check_pixels(w: int, h: int, opts: RenderOptions, what: str = "image") -> None:
    if w <= 0 or h <= 0:
        raise InputError(f"{what} has no pixels ({w}x{h})")
    if w * h > opts.max_image_pixels:
        raise InputError(
            f"{what} too large: {w}x{h} = {w * h / 1e6:.0f} Mpx > limit "
            f"{opts.max_image_pixels / 1e6:.0f} Mpx (refused as a possible decompression bomb)"
        )


def open_image(path: Path) -> Image.Image:
    try:
        return Image.open(path)
    except Image.DecompressionBombError as e:
        raise InputError(f"image too large ({short(e)}; refused as a possible decompression bomb)") from e
    except UnidentifiedImageError as e:
        raise InputError("not a readable image (unknown or corrupt format)") from e
    except (OSError, SyntaxError, ValueError, struct.error) as e:
        raise InputError(f"corrupt image ({short(e)})") from e


def page_count(path: Path, opts: RenderOptions) -> int:
    """Number of pages; raises ``InputError`` for any permanent problem (see module docstring).

    Images: every frame's size is checked against ``opts.max_image_pixels`` from the header.
    """
    path = Path(path)
    kind, _ = classify(path)
    if kind == "pdf":
        doc = open_pdf(path)
        try:
            with corrupt_pdf_errors():
                n = doc.page_count
                if n < 1:
                    raise InputError("PDF has no pages")
                _check_total(n, opts)
                if n > opts.max_ocr_pages:  # only then: a look at every page's text (~1 ms a page)
                    bare = n if opts.text_layer == "ocr" else sum(not doc[i].get_text("text").strip() for i in range(n))
                    _check_ocr(bare, n, opts)
        finally:
            doc.close()
    else:
        reason = _probe_image(path, kind)
        if reason:
            raise InputError(reason)
        with warnings.catch_warnings(), open_image(path) as im:
            warnings.simplefilter("ignore")
            n = image_frames(im)
            _check_total(n, opts)
            _check_ocr(n, n, opts)  # every page of an image is a page to OCR
            for i in range(n):
                try:
                    if i:
                        im.seek(i)
                except Exception as e:  # an IFD that cannot be read
                    raise InputError(f"corrupt image: page {i + 1} unreadable ({short(e)})") from e
                check_pixels(im.width, im.height, opts, "image" if n == 1 else f"page {i + 1}")
    return n


def _check_total(n: int, opts: RenderOptions) -> None:
    if n > opts.max_pages:
        raise InputError(f"too many pages: {n} > limit {opts.max_pages} (engine.max_pages)")


def _check_ocr(bare: int, n: int, opts: RenderOptions) -> None:
    """``bare`` pages have no text layer at all: each is a page to OCR (a PDF page with text may
    still be OCRed if its layer is not usable; ``Recognizer`` counts those as they come)."""
    if bare > opts.max_ocr_pages:
        raise InputError(ocr_limit_reason(bare, n, opts.max_ocr_pages))


def ocr_limit_reason(k: int, n: int, limit: int, *, at_least: bool = False) -> str:
    """The failure reason of a document with more pages to OCR than ``engine.max_ocr_pages``."""
    of = f" of {n}" if k != n else ""
    return (f"too many pages to OCR: {'at least ' if at_least else ''}{k}{of} pages without a usable text layer > limit {limit} "
            "(engine.max_ocr_pages; pages read from a text layer do not count)")
