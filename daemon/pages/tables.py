"""Ruled tables: line segments -> grids of cells, for born-digital PDFs and for page images.

Contract:

- ``find_grids(h, v, tol) -> list[Grid]``: horizontal and vertical line segments (any units: PDF
  points or pixels) -> the ruled tables they draw. A grid is a connected set of rules with at
  least 2 rows or 2 columns of slots (a single box, such as a frame around a code listing, is not
  a table). Slots not separated by a rule are merged into one cell (row/column spans) when the
  merged slots form a rectangle. Pure geometry, no I/O, never raises.
- ``image_segments(gray) -> (h, v)``: the long dark horizontal/vertical runs of a page image
  (a scanned ruled table's lines), in pixels, numpy only.
- ``read_scanned_page(api, gray, grids) -> str``: a page image with ruled tables read with a
  tesserocr API: the text outside the tables in bands between them, and each table cell by cell,
  as inline Markdown text blocks and HTML tables, for ``daemon.document.model``'s Markdown parser.

Why our own line finder instead of PyMuPDF's ``find_tables()`` or img2table: ``find_tables``
took 256 ms per page on the Debian reference PDF (261 pages, 2 cores; also on pages without any
table), which alone would cap born-digital pages at ~4 pages/s against the 50 pages/s target;
the page's vector drawings (``get_cdrawings``, 3 ms/page there) already hold every rule of a
ruled table. img2table pulls OpenCV and polars (~100 MB) for the same line detection we do
here with numpy. Born-digital tables with horizontal rules only (booktabs style) are found from
the rules' region and the words' x-gaps (``rule_regions`` + ``text_grid``); tables without any
rule (whitespace only) are not found.
"""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Seg:
    """An axis-parallel segment: horizontal when ``y0 == y1``, vertical when ``x0 == x1``."""

    x0: float
    y0: float
    x1: float
    y1: float


@dataclass
class GridCell:
    row: int
    col: int
    rowspan: int
    colspan: int
    bbox: tuple[float, float, float, float]  # x0, y0, x1, y1
    text: str = ""


@dataclass
class Grid:
    """A ruled table: column edges ``xs``, row edges ``ys`` (sorted), anchor cells row-major."""

    xs: list[float]
    ys: list[float]
    cells: list[GridCell] = field(default_factory=list)
    filled: bool = False  # cells already hold their text (``text_grid``: columns from the words)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (self.xs[0], self.ys[0], self.xs[-1], self.ys[-1])

    @property
    def n_rows(self) -> int:
        return len(self.ys) - 1

    @property
    def n_cols(self) -> int:
        return len(self.xs) - 1


def _merge_collinear(segs: list[tuple[float, float, float]], tol: float) -> list[tuple[float, float, float]]:
    """(pos, a, b) with a <= b along the line -> the same with segments on one line (pos within
    ``tol``) joined where they overlap or leave a gap of at most ``tol``."""
    out: list[tuple[float, float, float]] = []
    for pos, a, b in sorted(segs):
        merged = False
        for k in range(len(out) - 1, -1, -1):
            p2, a2, b2 = out[k]
            if pos - p2 > tol:
                break
            if a <= b2 + tol and b >= a2 - tol:
                out[k] = ((p2 + pos) / 2, min(a, a2), max(b, b2))
                merged = True
                break
        if not merged:
            out.append((pos, a, b))
    return out


def _cluster(values: list[float], tol: float) -> list[float]:
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v - out[-1][-1] <= tol:
            out[-1].append(v)
        else:
            out.append([v])
    return [sum(g) / len(g) for g in out]


def _drop_slivers(edges: list[float], min_gap: float) -> list[float]:
    """Sorted edges without those closer than ``min_gap`` to the one kept before (the outermost
    edges stay)."""
    out: list[float] = []
    for e in edges:
        if out and e - out[-1] < min_gap:
            if e == edges[-1] and len(out) > 1:
                out[-1] = e
            continue
        out.append(e)
    return out


def _covers(lines: list[tuple[float, float, float]], pos: float, a: float, b: float, tol: float) -> bool:
    """A rule at ``pos`` (within tol) covers most (60 %) of the interval a..b."""
    need = 0.6 * (b - a)
    got = 0.0
    for p, s, e in lines:
        if abs(p - pos) <= tol:
            got += max(0.0, min(b, e) - max(a, s))
    return got >= need


def find_grids(h: list[Seg], v: list[Seg], tol: float, min_size: float = 0.0) -> list[Grid]:
    """Ruled tables drawn by horizontal segments ``h`` and vertical segments ``v`` (see the
    module docstring). ``tol``: how far apart two rules may be and still count as one line or
    as touching; ``min_size``: shortest segment considered."""
    hs = _merge_collinear([(s.y0, min(s.x0, s.x1), max(s.x0, s.x1)) for s in h if abs(s.x1 - s.x0) >= min_size], tol)
    vs = _merge_collinear([(s.x0, min(s.y0, s.y1), max(s.y0, s.y1)) for s in v if abs(s.y1 - s.y0) >= min_size], tol)
    if len(hs) < 2 or len(vs) < 2 or len(hs) * len(vs) > 250_000:
        return []
    # Union-find over rules: a horizontal and a vertical rule that touch belong to one table.
    parent = list(range(len(hs) + len(vs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (y, xa, xb) in enumerate(hs):
        for j, (x, ya, yb) in enumerate(vs):
            if xa - tol <= x <= xb + tol and ya - tol <= y <= yb + tol:
                parent[find(i)] = find(len(hs) + j)
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for i in range(len(hs)):
        groups.setdefault(find(i), ([], []))[0].append(i)
    for j in range(len(vs)):
        groups.setdefault(find(len(hs) + j), ([], []))[1].append(j)
    grids: list[Grid] = []
    for hi, vi in groups.values():
        if len(hi) < 2 or len(vi) < 2:
            continue
        gh = [hs[i] for i in hi]
        gv = [vs[j] for j in vi]
        # The rules' outer ends are the table's edges too: many tables have no outer vertical
        # rule (the Debian reference's tables: horizontal rules across, verticals inside only).
        ys = _cluster([y for y, _, _ in gh] + [min(a for _, a, _ in gv), max(b for _, _, b in gv)], tol)
        xs = _cluster([x for x, _, _ in gv] + [min(a for _, a, _ in gh), max(b for _, _, b in gh)], tol)
        # A double rule (a frame drawn twice, 1.5 pt apart) makes slots no text fits in.
        ys, xs = _drop_slivers(ys, 3 * tol), _drop_slivers(xs, 3 * tol)
        if len(ys) < 2 or len(xs) < 3:
            continue  # one column: a frame around a listing or a figure, not a table
        grids.append(_cells(xs, ys, gh, gv, tol))
    grids.sort(key=lambda g: (g.ys[0], g.xs[0]))
    return grids


def _cells(xs: list[float], ys: list[float], hs: list[tuple[float, float, float]], vs: list[tuple[float, float, float]],
           tol: float) -> Grid:
    """Slots of the grid xs x ys merged where no rule separates them (a merged group that is not
    a rectangle is kept as single slots)."""
    nr, nc = len(ys) - 1, len(xs) - 1
    parent = list(range(nr * nc))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for r in range(nr):
        for c in range(nc):
            if c + 1 < nc and not _covers(vs, xs[c + 1], ys[r], ys[r + 1], tol):
                parent[find(r * nc + c)] = find(r * nc + c + 1)
            if r + 1 < nr and not _covers(hs, ys[r + 1], xs[c], xs[c + 1], tol):
                parent[find(r * nc + c)] = find((r + 1) * nc + c)
    groups: dict[int, list[int]] = {}
    for k in range(nr * nc):
        groups.setdefault(find(k), []).append(k)
    cells: list[GridCell] = []
    for members in groups.values():
        rows = [k // nc for k in members]
        cols = [k % nc for k in members]
        r0, r1, c0, c1 = min(rows), max(rows), min(cols), max(cols)
        if (r1 - r0 + 1) * (c1 - c0 + 1) == len(members):
            cells.append(GridCell(r0, c0, r1 - r0 + 1, c1 - c0 + 1, (xs[c0], ys[r0], xs[c1 + 1], ys[r1 + 1])))
        else:
            cells.extend(GridCell(k // nc, k % nc, 1, 1, (xs[k % nc], ys[k // nc], xs[k % nc + 1], ys[k // nc + 1]))
                         for k in members)
    cells.sort(key=lambda c: (c.row, c.col))
    return Grid(xs, ys, cells)


# --------------------------------------------------------------------------------------------
# Tables with horizontal rules only (booktabs style: a rule above, below the header, at the end)


#: A column gap must be this many times the text's font size wide (a word space is ~0.25-0.3).
MIN_COLUMN_GAP = 0.8


def rule_regions(h: list[Seg], v: list[Seg], tol: float, min_width: float,
                 max_two_rule_height: float) -> list[tuple[float, float, float, float]]:
    """Regions (x0, y0, x1, y1) between the first and last of >= 2 horizontal rules of the same
    extent (ends within 3 x tol), at least ``min_width`` long, that no vertical rule touches (a
    rule-framed box is ``find_grids``' business, and a frame of one column is no table). Two
    rules alone further apart than ``max_two_rule_height`` are a page's header and footer rules
    (the Debian reference's table-of-contents pages came out as a table), not a table."""
    hs = _merge_collinear([(s.y0, min(s.x0, s.x1), max(s.x0, s.x1)) for s in h
                           if abs(s.x1 - s.x0) >= min_width], tol)
    groups: list[list[tuple[float, float, float]]] = []
    for rule in sorted(hs):
        for g in groups:
            if abs(g[0][1] - rule[1]) <= 3 * tol and abs(g[0][2] - rule[2]) <= 3 * tol:
                g.append(rule)
                break
        else:
            groups.append([rule])
    out = []
    for g in groups:
        if len(g) < 2:
            continue
        x0, x1 = min(r[1] for r in g), max(r[2] for r in g)
        y0, y1 = min(r[0] for r in g), max(r[0] for r in g)
        if len(g) == 2 and y1 - y0 > max_two_rule_height:
            continue
        # a vertical rule is at least half as long as the closest two rules are apart (shorter
        # verticals are letter strokes on a page image)
        ys = sorted(r[0] for r in g)
        min_gap = min(b - a for a, b in zip(ys, ys[1:], strict=False))
        if any(x0 - tol <= s.x0 <= x1 + tol and min(s.y0, s.y1) <= y1 and max(s.y0, s.y1) >= y0
               and abs(s.y1 - s.y0) >= max(2 * tol, 0.5 * min_gap) for s in v):
            continue
        out.append((x0, y0, x1, y1))
    return out


Word = tuple[float, float, float, float, str, float]  # x0, y0, x1, y1, text, font size


def text_grid(words: list[Word], region: tuple[float, float, float, float],
              rules: list[float] | None = None) -> Grid | None:
    """A table from the words inside ``region``: rows are the text lines (or, when ``rules``
    (the y of the region's horizontal rules) make at least 3 bands, the bands between them, so
    a cell may hold several lines), columns the x ranges that words cover with gaps of at least
    ``MIN_COLUMN_GAP`` font sizes between them. None unless it has >= 2 rows and >= 2 columns
    and every column holds text in at least half of the rows (a paragraph between two rules is
    not a table)."""
    x0, y0, x1, y1 = region
    inside = [w for w in words if x0 - 1 <= (w[0] + w[2]) / 2 <= x1 + 1 and y0 <= (w[1] + w[3]) / 2 <= y1]
    if len(inside) < 4:
        return None
    size = sorted(w[5] for w in inside)[len(inside) // 2]
    rows: list[list[Word]] = []
    bands = sorted(rules or [])
    if len(bands) >= 4:
        for a, b in zip(bands, bands[1:], strict=False):
            band = sorted((w for w in inside if a <= (w[1] + w[3]) / 2 < b), key=lambda w: (round(w[1] / size), w[0]))
            if band:
                rows.append(band)
    else:
        # rows: words whose vertical centres are within half a line of each other
        for w in sorted(inside, key=lambda w: ((w[1] + w[3]) / 2, w[0])):
            cy = (w[1] + w[3]) / 2
            if rows and abs(cy - (rows[-1][0][1] + rows[-1][0][3]) / 2) <= 0.5 * size:
                rows[-1].append(w)
            else:
                rows.append([w])
    spans = sorted((w[0], w[2]) for w in inside)
    cols: list[list[float]] = []
    for a, b in spans:
        if cols and a - cols[-1][1] < MIN_COLUMN_GAP * size:
            cols[-1][1] = max(cols[-1][1], b)
        else:
            cols.append([a, b])
    if len(rows) < 2 or len(cols) < 2:
        return None
    grid_rows: list[list[str]] = []
    for row in rows:
        cells = ["" for _ in cols]
        for w in row:  # in reading order: lines top to bottom, words left to right
            k = next(i for i, c in enumerate(cols) if c[0] <= (w[0] + w[2]) / 2 <= c[1])
            cells[k] = (cells[k] + " " + w[4]).strip()
        grid_rows.append(cells)
    filled_rows = sum(1 for r in grid_rows if sum(1 for c in r if c) >= 2)
    if filled_rows < 2 or any(sum(1 for r in grid_rows if r[k]) * 2 < len(grid_rows) for k in range(len(cols))):
        return None
    xs = [cols[0][0]] + [(cols[k][1] + cols[k + 1][0]) / 2 for k in range(len(cols) - 1)] + [cols[-1][1]]
    tops = [min(w[1] for w in r) for r in rows]
    bottoms = [max(w[3] for w in r) for r in rows]
    ys = [y0] + [(bottoms[k] + tops[k + 1]) / 2 for k in range(len(rows) - 1)] + [y1]
    g = Grid(xs, ys, filled=True)
    for r, row_cells in enumerate(grid_rows):
        for c, text in enumerate(row_cells):
            g.cells.append(GridCell(r, c, 1, 1, (xs[c], ys[r], xs[c + 1], ys[r + 1]), text))
    return g


# --------------------------------------------------------------------------------------------
# Page images


#: A rule on a page image is a dark run at least this share of the page's shorter edge long
#: (at 1540 px, an A4 page is ~1090 px wide: 33 px, shorter than any table column we saw, longer
#: than the strokes of the largest letters in the test scans, 32 px body text ~ 20 px strokes).
MIN_RULE_SHARE = 0.03
#: Gray level below which a pixel is ink (rules are printed black; scans' paper is > 200).
INK = 140


def _runs(mask: np.ndarray, min_len: int) -> list[tuple[int, int, int]]:
    """(line index, start, end) of True runs of at least ``min_len`` along axis 1."""
    rows = np.flatnonzero(mask.sum(axis=1) >= min_len)  # only lines with enough ink at all
    if rows.size == 0:
        return []
    m = mask[rows].astype(np.int8)
    pad = np.zeros((m.shape[0], 1), dtype=np.int8)
    d = np.diff(np.concatenate([pad, m, pad], axis=1), axis=1)
    width = d.shape[1]
    starts = np.flatnonzero(d == 1)  # row-major: each row's starts and ends alternate
    ends = np.flatnonzero(d == -1)
    keep = (ends - starts) >= min_len
    starts, ends = starts[keep], ends[keep]
    return [(int(rows[s // width]), int(s % width), int(e % width) if e % width else width)
            for s, e in zip(starts, ends, strict=True)]


def image_segments(gray: Any) -> tuple[list[Seg], list[Seg]]:
    """Horizontal and vertical rules of a grayscale page image (PIL "L" or a 2-D array)."""
    a = np.asarray(gray)
    if a.ndim != 2 or a.size == 0:
        return [], []
    ink = a < INK
    # Close 1 px gaps along each direction (broken scanned lines, a slight skew's steps).
    hmask = ink.copy()
    hmask[:, 1:-1] |= ink[:, :-2] & ink[:, 2:]
    vmask = ink.copy()
    vmask[1:-1, :] |= ink[:-2, :] & ink[2:, :]
    min_len = max(20, int(MIN_RULE_SHARE * min(a.shape)))
    h = [Seg(s, r, e, r) for r, s, e in _runs(hmask, min_len)]
    v = [Seg(r, s, r, e) for r, s, e in _runs(vmask.T, min_len)]
    return h, v


def find_image_grids(gray: Any) -> list[Grid]:
    """Ruled tables on a page image (pixels)."""
    h, v = image_segments(gray)
    if len(h) < 2 or len(v) < 2:
        return []
    # one row of boxes on a page image is a form field or a frame around a title (three such
    # "tables" of one row on a scanned web page in the tune set), not a table
    return [g for g in find_grids(h, v, tol=4.0) if g.n_rows >= 2]


@dataclass
class RuleRegion:
    """A region between horizontal rules (no vertical rules) that may hold a table."""

    bbox: tuple[float, float, float, float]
    rules: list[float]  # y of every rule in it, top to bottom


#: Gray level below which a long thin run is a rule: light grey rules (#ccc-#ddd, common in
#: tables without vertical rules) are ~200-220; text uses INK.
RULE_GRAY = 225
#: A rule is at most this many px thick (a thicker run of long rows is a filled area).
MAX_RULE_THICKNESS = 6


def find_image_rule_regions(gray: Any, grids: list[Grid]) -> list[RuleRegion]:
    """Regions of a page image between long horizontal rules (>= a quarter of the page wide)
    that no vertical rule touches and no ruled grid covers."""
    a = np.asarray(gray)
    if a.ndim != 2 or a.size == 0:
        return []
    hgt, wid = a.shape
    runs = _runs(a < RULE_GRAY, max(40, wid // 4))
    if len(runs) < 2:
        return []
    # group runs into rules: same extent (ends within 6 px), rows at most 2 px apart
    rules: list[list[int]] = []  # [y0, y1, x0, x1]
    for r, s0, e0 in sorted(runs):
        for rule in rules:
            if r - rule[1] <= 2 and abs(s0 - rule[2]) <= 6 and abs(e0 - rule[3]) <= 6:
                rule[1] = r
                break
        else:
            rules.append([r, r, s0, e0])
    thin = [Seg(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2) for y0, y1, x0, x1 in rules if y1 - y0 < MAX_RULE_THICKNESS]
    _, v = image_segments(gray)
    out = []
    for box in rule_regions(thin, v, tol=4.0, min_width=wid / 4, max_two_rule_height=0.4 * hgt):
        if any(_overlaps(box, g.bbox) for g in grids):
            continue
        ys = sorted(s.y0 for s in thin if box[1] - 1 <= s.y0 <= box[3] + 1 and s.x0 <= box[0] + 12 and s.x1 >= box[2] - 12)
        out.append(RuleRegion(box, ys))
    return out


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _ocr_words(api: Any, img: Any, box: tuple[int, int, int, int]) -> list[Word]:
    """Words of a crop of the page image with their boxes in page pixels (font size taken as
    1.2x the word box's height)."""
    from tesserocr import PSM, RIL, iterate_level

    x0, y0, x1, y1 = box
    if x1 - x0 < 8 or y1 - y0 < 8:
        return []
    api.SetPageSegMode(PSM.AUTO)
    api.SetImage(img.crop(box))
    api.Recognize()
    words: list[Word] = []
    it = api.GetIterator()
    if it is not None:
        for w in iterate_level(it, RIL.WORD):
            text = w.GetUTF8Text(RIL.WORD)
            wb = w.BoundingBox(RIL.WORD)
            if text and text.strip() and wb:
                bx0, by0, bx1, by1 = wb
                words.append((bx0 + x0, by0 + y0, bx1 + x0, by1 + y0, text.strip(), 1.2 * (by1 - by0)))
    return words


def _region_grid(api: Any, img: Any, region: RuleRegion) -> Grid | None:
    """Read a rule region's words with Tesseract (their boxes) and make a table of them. Tables
    without a rule above the header (rules under the header and between rows only) get the
    line above the first rule as header row when its words sit inside the columns found."""
    x0, y0, x1, y1 = (int(v) for v in region.bbox)
    g = text_grid(_ocr_words(api, img, (x0, y0, x1, y1)), region.bbox, region.rules)
    if g is None:
        return None
    band = int(min(b - a for a, b in zip(region.rules, region.rules[1:], strict=False)))
    head = _ocr_words(api, img, (x0, max(0, y0 - band), x1, y0))
    cols = ["" for _ in range(g.n_cols)]
    for w in sorted(head, key=lambda w: (round(w[1] / max(1.0, w[5])), w[0])):
        # the outer edges are open (a header wider than its column's values); an inner one is not
        k = next((k for k in range(g.n_cols) if (k == 0 or g.xs[k] <= w[0])
                  and (k == g.n_cols - 1 or w[2] <= g.xs[k + 1])), None)
        if k is None:  # a word across a column edge: a paragraph line, not a header
            return g
        cols[k] = (cols[k] + " " + w[4]).strip()
    if sum(1 for c in cols if c) < 2:
        return g
    top = float(max(0, y0 - band))
    cells = [GridCell(0, k, 1, 1, (g.xs[k], top, g.xs[k + 1], g.ys[0]), t) for k, t in enumerate(cols)]
    cells += [GridCell(c.row + 1, c.col, c.rowspan, c.colspan, c.bbox, c.text) for c in g.cells]
    return Grid(g.xs, [top, *g.ys], cells, filled=True)


def _cell_text(api: Any, bbox: tuple[float, float, float, float], width: int, height: int) -> str:
    from tesserocr import PSM

    inset = 4  # keep the rules out of the cell (they read as | or _)
    x0, y0 = int(bbox[0]) + inset, int(bbox[1]) + inset
    x1, y1 = min(width, int(bbox[2]) - inset), min(height, int(bbox[3]) - inset)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return ""
    api.SetPageSegMode(PSM.SINGLE_BLOCK)
    api.SetRectangle(x0, y0, x1 - x0, y1 - y0)
    txt = str(api.GetUTF8Text())
    return " ".join(txt.split())


def grid_html(grid: Grid, header_rows: int = 1) -> str:
    """A grid whose cells have text -> an HTML table (the document model's parser reads it)."""
    rows: dict[int, list[str]] = {}
    for c in grid.cells:
        tag = "th" if c.row < header_rows else "td"
        span = (f' rowspan="{c.rowspan}"' if c.rowspan > 1 else "") + (f' colspan="{c.colspan}"' if c.colspan > 1 else "")
        rows.setdefault(c.row, []).append(f"<{tag}{span}>{html.escape(c.text, quote=False)}</{tag}>")
    body = "".join(f"<tr>{''.join(rows.get(r, []))}</tr>" for r in range(grid.n_rows))
    return f"<table>{body}</table>"


def read_scanned_page(api: Any, gray: Any, grids: list[Grid], regions: list[RuleRegion] | None = None) -> str | None:
    """Read a page image that has ruled tables (``grids``) or regions between horizontal rules
    (``regions``): a region becomes a table when its words line up in columns (``text_grid``);
    then bands of text between the tables (tables whited out) with the API's page segmentation,
    and every ruled table cell by cell. Returns inline Markdown paragraphs and HTML tables in
    page order, or None when no table was found after all. The API's image and mode are reset."""
    from PIL import Image, ImageDraw
    from tesserocr import PSM

    from daemon.document.model import escape_plain

    img = gray if isinstance(gray, Image.Image) else Image.fromarray(np.asarray(gray))
    w, h = img.size
    grids = list(grids)
    try:
        for region in regions or []:
            g = _region_grid(api, img, region)
            if g is not None:
                grids.append(g)
    finally:
        api.SetPageSegMode(PSM.AUTO)
        api.Clear()
    if not grids:
        return None
    grids.sort(key=lambda g: (g.bbox[1], g.bbox[0]))
    blank = img.copy()
    draw = ImageDraw.Draw(blank)
    for grid in grids:
        x0, y0, x1, y1 = grid.bbox
        draw.rectangle([x0 - 3, y0 - 3, x1 + 3, y1 + 3], fill=255)
    parts: list[str] = []
    top = 0.0
    try:
        seq: list[Grid | None] = [*grids, None]
        for g in seq:
            bottom = g.bbox[1] if g is not None else float(h)
            if bottom - top >= 12:
                api.SetPageSegMode(PSM.AUTO)
                # a crop, not SetRectangle: with PSM.AUTO, tesserocr 2.13 read nothing in a
                # rectangle that a crop of the same pixels reads
                api.SetImage(blank.crop((0, int(top), w, int(bottom))))
                text = str(api.GetUTF8Text()).replace("\f", "").strip()
                for chunk in text.split("\n\n"):
                    lines = [ln.rstrip() for ln in chunk.split("\n") if ln.strip()]
                    if lines:
                        parts.append(escape_plain("\n".join(lines)))
            if g is None:
                break
            api.SetImage(img)
            for c in g.cells if not g.filled else []:
                c.text = _cell_text(api, c.bbox, w, h)
            if any(c.text for c in g.cells):
                parts.append(grid_html(g))
            top = max(top, g.bbox[3])
    finally:
        api.SetPageSegMode(PSM.AUTO)
        api.Clear()
    return "\n\n".join(parts)
