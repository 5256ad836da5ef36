"""Light rules on page images: the grey rules of tables printed in #bbb-#ddd, which the ink
threshold of ``daemon.pages.scantables.image_segments`` (grey level 140) does not see, and
rules on a skewed scan, which are not one run of pixels per pixel row.

Contract (numpy only, no OCR; a page image is PIL "L" or a 2-D array; never raises on odd
images, returns nothing for them):

- ``light_rule_level(gray) -> int``: the grey level below which a pixel may belong to a light
  rule: the paper's level (90th percentile of a sample) less ``max(MIN_CONTRAST, NOISE_FACTOR x
  the paper's noise)`` (noise: a robust standard deviation of the paper's pixels). On a clean
  white page ~243, on the generated noisy scans ~210-220.
- ``light_segments(gray) -> (h, v)``: thin runs darker than that level, as long as
  ``image_segments`` asks (``MIN_RULE_SHARE`` of the shorter edge, ``MIN_RULE_STROKES`` stroke
  widths), thin (``_thin``: paper on both sides across the run, so that a shaded row or a
  header band gives none; crossings of rules stay), and where text touches a rule, the rule
  through it (``_through_text``: +0.02 s on a 300 dpi page, 0.12 -> 0.14 s); the runs of a
  staircase (a skewed page) chained into one rule.
- ``rule_runs(gray)``: those rules' runs before chaining; ``light_segments`` and ``erase_rules``
  take them (``runs=``) so that a page's rules are found once for both.
- ``erase_rules(gray)``: the page image with those rules painted over in the paper's grey, for
  reading the text between them.
- ``light_grids(gray, taken) -> list[Grid]``: grids of those rules (2 rows and 2 columns at
  least, ``tables.find_grids``) that overlap none of the boxes ``taken`` (the dark grids).

Why not img2table's or OpenCV's line detection: see ``daemon.pages.tables`` (the same numpy runs
as ``scantables``, only another threshold and a thinness mask).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daemon.layerrecords import Grid
from daemon.pages.inkruns import INK, MIN_RULE_SHARE, MIN_RULE_STROKES, _runs, closed_gaps, stroke_width
from daemon.pages.tables import Seg, find_grids

#: A light rule is darker than the paper by at least this many grey levels ...
MIN_CONTRAST = 12
#: ... and by this many times the paper's noise (sigma): noise pixels make no run of 30 px or
#: more at 4 sigma (the generated scans: sigma 3-6 at 1540 px after the render stage's scaling).
NOISE_FACTOR = 4.0
#: A rule's pixel has paper this many px away on both sides across it: light rules are 1-3 px
#: thick at 1540 px, cell text starts 6 px or more from them (generated scans), shaded rows and
#: header bands are 30 px thick and more.
MAX_RULE_THICKNESS = 3
#: Pages with a longer edge are looked at in 2x2 blocks (``_rule_runs``).
MAX_EDGE = 2200
#: Runs on lines at most this many px apart chain into one rule (a staircase step is 1 px; the
#: 1 px gap closing leaves 2).
CHAIN_STEP = 2
#: ... and leave at most this many px between them along the line (a descender touching it).
CHAIN_GAP = 4
#: An ink run along a line at least ``THROUGH_LENGTH`` rule lengths long is a rule through the
#: text touching it when at least ``THIN_SHARE`` of it is thin (``_through_text``). Measured on
#: the scanned Debian package list at 300 dpi (2x2 blocks, rule length 40): its row rules 0.68-1.0
#: thin; runs along text lines (x-height and baselines of bold words) at most 0.38 when 120 px
#: or longer (up to 0.72 when shorter: hence the length); the generated grey-ruled statements'
#: skewed rules 0.43-0.79 on each staircase step (rules anyway).
THROUGH_LENGTH = 3
THIN_SHARE = 0.5

#: Rule runs (line, start, end) in page pixels: horizontal ones by row, vertical ones by column.
Runs = tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]


def light_rule_level(gray: Any) -> int:
    """See the contract."""
    a = np.asarray(gray)
    if a.ndim != 2 or a.size == 0:
        return 0
    step = max(1, int(np.sqrt(a.size / 65536)))
    sample = a[::step, ::step].astype(np.float32)
    paper = float(np.percentile(sample, 90))
    near = sample[np.abs(sample - paper) <= 25]
    noise = 1.4826 * float(np.median(np.abs(near - np.median(near)))) if near.size else 0.0
    return int(paper - max(MIN_CONTRAST, NOISE_FACTOR * noise))


def _thin(ink: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the pixels that may belong to a horizontal and to a vertical rule: ink with
    paper ``MAX_RULE_THICKNESS`` px away on both sides across the rule (a filled area, such as a
    shaded row or a header band, and its edges are left out), plus the crossings of two rules
    (ink with paper on all four diagonals, ink above or below and left or right)."""
    t = MAX_RULE_THICKNESS
    h = np.zeros_like(ink)
    v = np.zeros_like(ink)
    if min(ink.shape) <= 2 * t:
        return h, v
    c = ink[t:-t, t:-t]
    up, down, left, right = ink[:-2 * t, t:-t], ink[2 * t:, t:-t], ink[t:-t, :-2 * t], ink[t:-t, 2 * t:]
    diagonals = ink[:-2 * t, :-2 * t] | ink[2 * t:, 2 * t:] | ink[:-2 * t, 2 * t:] | ink[2 * t:, :-2 * t]
    crossing = c & ~diagonals & (up | down) & (left | right)
    h[t:-t, t:-t] = (c & ~up & ~down) | crossing
    v[t:-t, t:-t] = (c & ~left & ~right) | crossing
    return h, v


def _along_shade(light: np.ndarray, dark: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the dark pixels of a rule along a shaded area: thin at the dark level (no dark
    ink ``MAX_RULE_THICKNESS`` px away on either side across it) with light ink (a shade) on
    one side at least (between two shaded rows: on both); ``_thin`` leaves them out, since the shade is ink at the light level. Only
    these: every dark thin pixel would add the strokes of letters (the Debian package list's
    grid was lost)."""
    t = MAX_RULE_THICKNESS
    h = np.zeros_like(dark)
    v = np.zeros_like(dark)
    if min(dark.shape) <= 2 * t:
        return h, v
    c = dark[t:-t, t:-t]
    up, down, left, right = dark[:-2 * t, t:-t], dark[2 * t:, t:-t], dark[t:-t, :-2 * t], dark[t:-t, 2 * t:]
    lup, ldown, lleft, lright = light[:-2 * t, t:-t], light[2 * t:, t:-t], light[t:-t, :-2 * t], light[t:-t, 2 * t:]
    h[t:-t, t:-t] = c & ~up & ~down & (lup | ldown)
    v[t:-t, t:-t] = c & ~left & ~right & (lleft | lright)
    return h, v


def _rule_runs(a: np.ndarray) -> Runs:
    """The runs (line, start, end) of ``light_segments`` before they are chained: horizontal
    ones by row, vertical ones by column, in the image's pixels. A page larger than
    ``MAX_EDGE`` is looked at in 2x2 blocks (their mean): the daemon renders for Tesseract at
    300 dpi, where a scan's noise is twice what it is at 1540 px and its rules twice as thick."""
    if a.ndim != 2 or min(a.shape, default=0) <= 2 * MAX_RULE_THICKNESS:
        return [], []
    if max(a.shape) <= MAX_EDGE:
        return _runs_at(a)
    h, w = a.shape[0] // 2 * 2, a.shape[1] // 2 * 2
    # the blocks' means as ``reshape(...).mean(axis=(1, 3))`` gives them (float64, exact: a sum
    # of 4 grey levels / 4), from 4 strided slices: 0.01 s against 0.12 s on a 300 dpi page
    s = a[0:h:2, 0:w:2].astype(np.uint16) + a[1:h:2, 0:w:2] + a[0:h:2, 1:w:2] + a[1:h:2, 1:w:2]
    small = s / 4.0
    hr, vr = _runs_at(small)
    return [(2 * r, 2 * s, 2 * e) for r, s, e in hr], [(2 * c, 2 * s, 2 * e) for c, s, e in vr]


def _runs_at(a: np.ndarray) -> Runs:
    if min(a.shape, default=0) <= 2 * MAX_RULE_THICKNESS:
        return [], []
    ink = a < max(INK, light_rule_level(a))
    hmask, vmask = _thin(ink)
    # a dark rule along a shaded row (a timesheet's weekends, a header band) has no paper on
    # the shaded side at the light level; at the ink level the shade is paper and the rule thin
    # (issue 32: the rules around shaded rows were lost and their rows merged with the next)
    dark_h, dark_v = _along_shade(ink, a < INK)
    hmask |= dark_h
    vmask |= dark_v
    min_len = max(20, int(MIN_RULE_SHARE * min(a.shape)))
    min_len = max(min_len, int(MIN_RULE_STROKES * stroke_width(ink, min_len)))
    # vertical rules as horizontal ones of the transposed page; 1 px gaps closed along each rule
    h = closed_gaps(_through_text(ink, hmask, min_len))
    v = closed_gaps(_through_text(ink.T, vmask.T, min_len))
    return _runs(h, min_len), _runs(v, min_len)


def _through_text(ink: np.ndarray, thin: np.ndarray, min_len: int) -> np.ndarray:
    """``thin`` (a rule mask along axis 1) plus the ink runs along axis 1 of at least
    ``THROUGH_LENGTH`` x ``min_len`` px that are ``THIN_SHARE`` thin already: a rule that text touches is
    not thin where it does, and its pieces between the letters left the cells of a ruled table
    merged down the page (the Debian reference's package list, rows touched by underlined links
    and descenders at 300 dpi: a 277 px column kept 93 px of its rule; issue 26). A shaded band
    or a photo's dark area has ink runs as long, with no thin pixel in them."""
    out = thin.copy()
    for r, s, e in _runs(closed_gaps(ink), THROUGH_LENGTH * min_len):
        if thin[r, s:e].mean() >= THIN_SHARE:
            out[r, s:e] = True
    return out


def rule_runs(gray: Any) -> Runs:
    """The page's rule runs (line, start, end), horizontal and vertical, before chaining: what
    ``light_segments`` and ``erase_rules`` are made of, found once for both (``runs=``)."""
    return _rule_runs(np.asarray(gray))


def light_segments(gray: Any, runs: Runs | None = None) -> tuple[list[Seg], list[Seg]]:
    """See the contract (``runs``: the page's ``rule_runs``, if known)."""
    hr, vr = runs if runs is not None else rule_runs(gray)
    h = [Seg(s, r, e, r) for r, s, e in _chains(hr)]
    v = [Seg(r, s, r, e) for r, s, e in _chains(vr)]
    return h, v


def erase_rules(gray: Any, runs: Runs | None = None) -> Any:
    """A copy of the page image (PIL "L") with the pixels of its rules (``light_segments``' runs
    and the pixel on each side of them) set to the paper's level: Tesseract reads the text
    between grey rules better without them (on the generated scans it merged words with the
    rule under them into boxes three lines high, read rules as "~", "_" or "|", and dropped
    whole columns next to them). The image itself when it has no rules or is not a 2-D image.
    ``runs``: the page's ``rule_runs``, if known."""
    from PIL import Image

    a = np.asarray(gray)
    hr, vr = runs if runs is not None else _rule_runs(a)
    if not hr and not vr:
        return gray
    step = max(1, int(np.sqrt(a.size / 65536)))
    paper = int(np.percentile(a[::step, ::step], 90))
    out = a.copy()
    k = 2 if max(a.shape) > MAX_EDGE else 1  # runs found in 2x2 blocks cover two pixel lines
    for r, s, e in hr:
        out[max(0, r - k - 1):r + 2 * k + 1, s:e] = paper
    for c, s, e in vr:
        out[s:e, max(0, c - k - 1):c + 2 * k + 1] = paper
    return Image.fromarray(out)


def _chains(runs: list[tuple[int, int, int]]) -> list[tuple[float, int, int]]:
    """Runs (line, start, end) joined into rules: runs on lines at most ``CHAIN_STEP`` apart that
    overlap or touch along the line are one rule (a rule on a skewed page is a staircase of runs
    whose ends drift by more than any fixed tolerance over its length); (mean line weighted by
    length, start, end) per rule."""
    by_line: dict[int, list[int]] = {}
    for k, (r, _, _) in enumerate(runs):
        by_line.setdefault(r, []).append(k)
    parent = list(range(len(runs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for k, (r, s0, e0) in enumerate(runs):
        for d in range(1, CHAIN_STEP + 1):
            for j in by_line.get(r - d, ()):
                _, s1, e1 = runs[j]
                if s0 <= e1 + CHAIN_GAP and e0 >= s1 - CHAIN_GAP:
                    parent[find(k)] = find(j)
    groups: dict[int, list[int]] = {}
    for k in range(len(runs)):
        groups.setdefault(find(k), []).append(k)
    out = []
    for members in groups.values():
        length = sum(runs[k][2] - runs[k][1] for k in members) or 1
        line = sum(runs[k][0] * (runs[k][2] - runs[k][1]) for k in members) / length
        out.append((line, min(runs[k][1] for k in members), max(runs[k][2] for k in members)))
    return out


def light_grids(gray: Any, taken: list[tuple[float, float, float, float]]) -> list[Grid]:
    """See the contract."""
    h, v = light_segments(gray)
    if len(h) < 2 or len(v) < 2:
        return []
    return [g for g in find_grids(h, v, tol=4.0) if g.n_rows >= 2
            and not any(g.bbox[0] < t[2] and t[0] < g.bbox[2] and g.bbox[1] < t[3] and t[1] < g.bbox[3] for t in taken)]
