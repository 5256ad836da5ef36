"""Deskew: a scanned page fed in a few degrees askew is turned straight before it is read.

Contract:
- ``skew_angle(img) -> float``: the angle (degrees, counter-clockwise as seen) that the page's
  text lines rise by; 0.0 when the page has no clear lines (a blank page, a photo) or the skew is
  below ``MIN_SKEW``. Projection profiles of the page's dark pixels: for each candidate angle the
  pixels are projected onto the axis across the lines, and the angle whose profile is sharpest
  (sum of squared bin counts: text lines make tall narrow peaks only when the projection runs
  along them) wins; coarse then fine. Works on a copy of at most ``EDGE`` px.
- ``deskew(img) -> (image, angle)``: the page turned by ``-angle`` (expanded so no corner is cut,
  new corners white) and the angle; the page itself when the angle is 0.
- ``unskew_point(x, y, angle, size, before)``: a point of the deskewed image (size ``size``) back
  on the image before the turn (size ``before``): the searchable PDF maps word boxes so.

Why: Tesseract's line finding copes with about 2-3 degrees; the gate corpus' scans skewed
3.7-4.4 degrees lost whole paragraphs (tests/e2e/test_gate.py, issue 24) and OCRmyPDF offers
``--deskew`` for the same reason. Cost measured in bench/RESULTS.md ("Deskew").
An optional stage (``daemon.stages.Stage.DESKEW``): if it fails, the page is read as it was.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image

#: The estimate works on a copy this long at most: text lines of a 300 dpi A4 page are still
#: 4-8 px tall at 1000 px, and the cost grows with the dark pixels.
EDGE = 1000
#: Skews below this are left: Tesseract reads them about as well as straight pages, and turning
#: a page costs a resample of every letter. Measured (the engine's read, mean confidence): the
#: table set's gen-invoice-es-scan, -0.6 degrees askew, 91 as it is and 86 turned (its unruled
#: table lost: cell F1 0.91 -> 0.0; the set's scan-unruled F1 0.59 -> 0.39 with 0.5); the same
#: page turned further, -1.2: 82 / 83, -2.0: 75 / 84 (table found only turned); OCRmyPDF's
#: skew.pdf, -1.9: 92 / 94 and 8 % more words. The gate's skewed scans are 3.7-4.4 degrees.
MIN_SKEW = 1.0
#: The search range; pages turned more than this are not "skewed" but wrongly fed, and OSD's
#: 90-degree steps are the other stage's.
MAX_SKEW = 10.0
#: Dark pixels used at most (a random, fixed-seed sample beyond): enough for a stable profile.
MAX_POINTS = 150_000
#: The winning angle's profile must be this much sharper than the straight one's ...
MIN_GAIN = 1.10
#: ... and this much sharper than the median over the search range, else the page has no clear
#: lines and is left: text pages measured 3.0-4.9 (straight, 4 and 4.5 degrees askew, a ruled
#: table), a photo 1.08, scattered blobs 1.03.
MIN_PEAK = 1.5


def _dark_points(img: Image.Image) -> np.ndarray | None:
    g = img.convert("L")
    scale = min(1.0, EDGE / max(g.size))
    if scale < 1.0:
        g = g.resize((max(1, round(g.width * scale)), max(1, round(g.height * scale))), Image.Resampling.BOX)
    a = np.asarray(g, dtype=np.uint8)
    hist = np.bincount(a.ravel(), minlength=256).astype(np.float64)
    # Otsu's threshold: ink against paper whatever the paper's grey
    total = hist.sum()
    cum, cum_mean = np.cumsum(hist), np.cumsum(hist * np.arange(256))
    w0 = cum / total
    w1 = 1.0 - w0
    with np.errstate(divide="ignore", invalid="ignore"):
        m0 = cum_mean / cum
        m1 = (cum_mean[-1] - cum_mean) / (total - cum)
        between = w0 * w1 * (m0 - m1) ** 2
    if not np.isfinite(between).any():  # one grey level: a blank page
        return None
    t = int(np.nanargmax(between))
    ys, xs = np.nonzero(a <= t)
    if len(ys) < 200 or len(ys) > 0.5 * a.size:  # blank, or mostly dark (a photo, a negative)
        return None
    if len(ys) > MAX_POINTS:
        pick = np.random.default_rng(0).choice(len(ys), MAX_POINTS, replace=False)
        ys, xs = ys[pick], xs[pick]
    return np.stack([xs.astype(np.float64), ys.astype(np.float64)])


def _sharpness(pts: np.ndarray, angle: float) -> float:
    t = math.tan(math.radians(angle))
    proj = pts[1] + pts[0] * t  # a line rising by ``angle`` (y falls as x grows) projects to one bin
    proj = np.round(proj - proj.min()).astype(np.int64)
    counts = np.bincount(proj).astype(np.float64)
    return float((counts * counts).sum())


def skew_angle(img: Image.Image) -> float:
    """See the module contract."""
    pts = _dark_points(img)
    if pts is None:
        return 0.0
    coarse = np.arange(-MAX_SKEW, MAX_SKEW + 1e-9, 0.5)
    scores = np.array([_sharpness(pts, a) for a in coarse])
    at = int(np.argmax(scores))
    if scores[at] < MIN_PEAK * float(np.median(scores)) or at in (0, len(coarse) - 1):
        return 0.0  # no clear lines, or the sharpest at the range's edge: not a skewed text page
    best = float(coarse[at])
    fine = np.arange(best - 0.5, best + 0.5 + 1e-9, 0.1)
    fscores = [_sharpness(pts, a) for a in fine]
    angle = float(fine[int(np.argmax(fscores))])
    straight = float(scores[int(np.argmin(np.abs(coarse)))])  # the coarse search's own 0 degrees
    if abs(angle) < MIN_SKEW or max(fscores) < MIN_GAIN * straight:
        return 0.0
    return round(angle, 2)


def deskew(img: Image.Image) -> tuple[Image.Image, float]:
    """See the module contract."""
    angle = skew_angle(img)
    if not angle:
        return img, 0.0
    # the lines rise by ``angle`` (counter-clockwise): turn the page clockwise by as much
    fill = (255, 255, 255) if img.mode == "RGB" else 255
    out = img.rotate(-angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=fill)
    return out, angle


def unskew_point(x: float, y: float, angle: float, size: tuple[int, int], before: tuple[int, int]) -> tuple[float, float]:
    """See the module contract (image px, top-left origin, y down)."""
    if not angle:
        return x, y
    # ``deskew`` turned the page clockwise by ``angle`` around its centre: turn back
    a = math.radians(angle)
    dx, dy = x - size[0] / 2, y - size[1] / 2
    bx = dx * math.cos(a) + dy * math.sin(a)
    by = -dx * math.sin(a) + dy * math.cos(a)
    return before[0] / 2 + bx, before[1] / 2 + by
