"""Looking at the pages of a scanned batch: separator sheets (a barcode) and blank pages.

Contract:
- ``scan_page(path, index, separator, blank, opts) -> PageScan`` looks at one page of a PDF or
  multi-page TIFF: rendered through ``daemon.pages.render`` (so the same files are refused the
  same way: bombs, encrypted or corrupt files raise ``InputError``) in grey at ``SCAN_DPI``,
  without border crop or orientation. Module-level and picklable: the batch splitter runs it in
  a render worker, so a file that crashes or hangs the decoder never takes the daemon down.
- ``barcode_texts(gray)``: the text of every barcode or QR code on a page, read with zxing-cpp
  (``zxingcpp`` on PyPI: the maintained C++ port of ZXing, the reference open-source barcode
  reader; one wheel, no system library, and it reads every common 1D and 2D symbology in one
  call -- Code 128, Code 39, QR, DataMatrix, PDF417 -- with rotation and inversion handled).
  A page is a separator when one of them, stripped of surrounding spaces, equals ``separator``
  (a blank page never is: the back of a separator sheet shows its code through the paper, and
  zxing reads a QR code mirrored).
- ``ink_ppm(gray, px_per_mm)``: parts per million of the page's content area that is ink;
  ``is_blank(ppm)`` compares it with ``BLANK_BELOW_PPM``. Hand-written with numpy: no maintained
  library decides "blank scan"; the rule is below, and its numbers are measured by
  ``bench/bench_blank.py`` (results in bench/results/2026-12-02/blank_pages.txt).

The blank rule, and why each step:
1. The margin bands are left out: ``SIDE_MARGIN_MM`` left and right (ISO 838 filing holes sit
   12 mm from the edge, 6 mm wide: their shadows end by 15 mm, and a duplex back has them on the
   other side), ``TOP_BOTTOM_MARGIN_MM`` at the top and bottom (the feeder's edge shadow; a page
   number 10-15 mm from the edge stays inside).
2. The paper's shade is the median of what is left (a blank page is mostly paper; a tinted or
   recycled sheet is not "ink").
3. Ink is a pixel ``INK_DELTA`` grey levels darker than the paper: bleed-through of the front
   side, JPEG ringing and scanner noise stay above it, a pencil stroke does not.
4. A pixel counts only with enough ink around it (``SPECK``): noise pixels and dust specks
   go, strokes of a pen or a printed digit stay.
5. Blank = the ink left covers less than ``BLANK_BELOW_PPM`` of the content area.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from daemon.models import RenderOptions
from daemon.pages import render

#: Resolution pages are looked at: Code 128 modules of 0.4 mm are ~2.4 px, QR modules far more,
#: and a 10 pt page number's strokes ~2 px. Cost: 279 ms a page median (render + barcode read + ink,
#: bench/bench_blank.py on the shared 2-core dev machine, 2026-12-02), well under OCR's seconds.
SCAN_DPI = 150
#: Long edge assumed for a page when converting mm to pixels (A4; a Letter page is 6 % shorter,
#: which only shifts the margin bands by a millimetre).
PAGE_LONG_EDGE_MM = 297.0
SIDE_MARGIN_MM = 20.0
TOP_BOTTOM_MARGIN_MM = 8.0
#: Grey levels below the paper's shade that make a pixel ink. Measured (bench/bench_blank.py,
#: 2026-12-02, 120 generated blank backs, 60 sparse real pages): at 60 the bleed-through of a
#: letterhead bar on a dark paper already counts as ink (7080 ppm on a blank back); at 80 the
#: worst blank back scores 18 ppm (clustered dust) and the sparsest real page 38 ppm (a lone
#: 8 pt page number), the widest ratio of the deltas tried (70: 29 vs 46; 90: 14 vs 26). A light
#: pencil signature is ~100 levels below the paper, so it still counts.
INK_DELTA = 80
#: Blank below this many ink pixels per million of the content area: 26, between the worst blank
#: back (18 ppm) and the sparsest real page (38 ppm) of the same measurement (their geometric
#: mean); a lone signature scores 187+ ppm, a single line of text 300+. A page in doubt is kept.
BLANK_BELOW_PPM = 26.0
#: Speck filter: an ink pixel counts only with at least ``SPECK[1]`` ink pixels in the
#: ``SPECK[0]`` x ``SPECK[0]`` square around it (7 px = 1.2 mm at SCAN_DPI). Dust up to 3x3 px
#: (9) never reaches 12; a pen or print stroke 2 px wide does over any 7 px of its length.
SPECK = (7, 12)


@dataclass(frozen=True)
class PageScan:
    """What one page is: ``index`` (0-based), a separator sheet, blank, and its ink (ppm)."""

    index: int
    separator: bool
    blank: bool
    ink_ppm: float


def scan_options(max_pages: int, max_image_pixels: int) -> RenderOptions:
    """Render options for looking at pages: ``SCAN_DPI``, no crop, no turning."""
    return RenderOptions(
        dpi=SCAN_DPI, longest_edge=1, max_pages=max_pages, max_ocr_pages=max_pages,  # scanned, not OCRed here
        max_image_pixels=max_image_pixels,
        autorotate=False, crop_borders=False, deskew=True, text_layer="ocr", math_to_engine=False, read_first=False,
    )


def scan_page(path: Path, index: int, separator: str | None, blank: bool, opts: RenderOptions) -> PageScan:
    """See the module contract."""
    page = render.render_page(Path(path), index, opts)
    gray = np.asarray(page.image.convert("L"))
    ppm = ink_ppm(gray, max(gray.shape) / PAGE_LONG_EDGE_MM) if blank else -1.0
    if is_blank(ppm):
        # first: the back of a separator sheet is blank, though zxing reads its code through the
        # paper (a QR code is readable mirrored)
        return PageScan(index, False, True, ppm)
    is_sep = separator is not None and separator.strip() in (t.strip() for t in barcode_texts(gray))
    return PageScan(index, is_sep, False, ppm)


def barcode_texts(gray: np.ndarray) -> list[str]:
    """Text of every barcode/QR code zxing-cpp finds on the page (see the module contract)."""
    import zxingcpp

    return [b.text for b in zxingcpp.read_barcodes(np.ascontiguousarray(gray))]


def ink_ppm(gray: np.ndarray, px_per_mm: float, *, delta: int = INK_DELTA, speck: tuple[int, int] = SPECK) -> float:
    """Ink per million pixels of the content area (see the module contract's blank rule);
    ``delta`` and ``speck``: other values only to measure them (bench/bench_blank.py)."""
    h, w = gray.shape
    side, tb = round(SIDE_MARGIN_MM * px_per_mm), round(TOP_BOTTOM_MARGIN_MM * px_per_mm)
    area = gray[tb : h - tb, side : w - side] if h > 2 * tb + 8 and w > 2 * side + 8 else gray
    paper = float(np.median(area))
    ink = area.astype(np.int16) < paper - delta
    size, least = speck
    if size > 1:
        ink &= _box_sum(ink, size) >= least
    return int(np.count_nonzero(ink)) * 1e6 / max(1, ink.size)


def _box_sum(mask: np.ndarray, size: int) -> np.ndarray:
    """For every pixel, how many of the ``size`` x ``size`` pixels around it are set (an
    integral image: four lookups per pixel, whatever the size)."""
    r = size // 2
    s = np.pad(mask.astype(np.int32), ((r + 1, r), (r + 1, r))).cumsum(0).cumsum(1)
    h, w = mask.shape
    return s[size:size + h, size:size + w] - s[:h, size:size + w] - s[size:size + h, :w] + s[:h, :w]


def is_blank(ppm: float) -> bool:
    return 0 <= ppm < BLANK_BELOW_PPM
