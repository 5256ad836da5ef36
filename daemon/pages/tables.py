"""Ruled tables: line segments -> grids of cells, for born-digital PDFs and for page images.

Contract:

- ``find_grids(h, v, tol) -> list[Grid]``: horizontal and vertical line segments (any units: PDF
  points or pixels) -> the ruled tables they draw. A grid is a connected set of rules with at
  least 2 columns (a single box or a column of boxes, such as a frame around a code listing, is
  not a table). Slots not separated by a rule are merged into one cell (row/column spans) when the
  merged slots form a rectangle. Pure geometry, no I/O, never raises.
- ``rule_regions(h, v, ...)`` and ``text_grid(words, region, rules)``: tables drawn with
  horizontal rules only, their columns from the words' x-gaps (rows: the bands between the rules
  when there are three or more, else the text lines, a wrapped cell's lines joined:
  ``tablerows.join_wrapped``). ``region_rules`` gives a region's rules and ``rules_table`` makes
  its table, with the header line above the first rule when rules run under every row only.
- ``header_body(grid, words)``: a ruled grid of one row (a header drawn as boxes or a filled
  band) joined with the unruled rows under it; None for a title band (one cell of text) or when
  no body follows. A one-row grid alone is no table.
- ``merge_collinear(segs, tol)``: (position, start, end) segments on one line joined where they
  overlap or leave a gap of at most ``tol`` (a rule drawn in pieces is one rule); what
  ``find_grids`` and ``rule_regions`` see, for callers that need the same rules.
- Tables without any rule (``unruled_grids``, ``not_a_table`` and their limits) live in
  ``daemon.pages.unruled``, which builds on ``text_grid``. One function for both paths: scans (Tesseract's word boxes, ``scantables.find_unruled_tables``) and
  born-digital pages (the text layer's words, ``textlayer.read_layer``).
- Page images (scans) use these through ``daemon.pages.scantables``.

Why our own line finder instead of PyMuPDF's ``find_tables()`` or img2table: ``find_tables``
took 256 ms per page on the Debian reference PDF (261 pages, 2 cores; also on pages without any
table), which alone would cap born-digital pages at ~4 pages/s against the 50 pages/s target;
the page's vector drawings (``get_cdrawings``, 3 ms/page there) already hold every rule of a
ruled table. img2table pulls OpenCV and polars (~100 MB) for the same line detection
``daemon.pages.scantables`` does with numpy. Born-digital tables with horizontal rules only (booktabs style) are found from
the rules' region and the words' x-gaps (``rule_regions`` + ``text_grid``); tables without any
rule (whitespace only) from the words alone (``unruled.unruled_grids``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from daemon.layerrecords import Grid, GridCell
from daemon.pages.tablerows import (
    Word,
    assign_columns,
    body_under_header,
    columns,
    header_over,
    join_wrapped,
    reading_order,
    text_lines,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Seg:
    """An axis-parallel segment: horizontal when ``y0 == y1``, vertical when ``x0 == x1``."""

    x0: float
    y0: float
    x1: float
    y1: float


def merge_collinear(segs: list[tuple[float, float, float]], tol: float) -> list[tuple[float, float, float]]:
    """(pos, a, b) with a <= b along the line -> the same with segments on one line (pos within
    ``tol``) joined where they overlap or leave a gap of at most ``tol``. Joined again until
    nothing changes: a rule on a skewed scan is a staircase of runs that one pass leaves as two
    or three overlapping chains (the generated scans' rules, 0.2-0.8 degrees)."""
    out = sorted(segs)
    for _ in range(8):
        before = len(out)
        out = sorted(_merge_pass(out, tol))
        if len(out) == before:
            break
    return out


def _merge_pass(segs: list[tuple[float, float, float]], tol: float) -> list[tuple[float, float, float]]:
    out: list[tuple[float, float, float]] = []
    for pos, a, b in segs:
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
    hs = merge_collinear([(s.y0, min(s.x0, s.x1), max(s.x0, s.x1)) for s in h if abs(s.x1 - s.x0) >= min_size], tol)
    vs = merge_collinear([(s.x0, min(s.y0, s.y1), max(s.y0, s.y1)) for s in v if abs(s.y1 - s.y0) >= min_size], tol)
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
    # pieces joined first: a rule drawn cell by cell, or a staircase of runs on a skewed scan
    hs = [r for r in merge_collinear([(s.y0, min(s.x0, s.x1), max(s.x0, s.x1)) for s in h], tol) if r[2] - r[1] >= min_width]
    groups: list[list[tuple[float, float, float]]] = []
    for rule in sorted(hs):
        for g in groups:
            if abs(g[0][1] - rule[1]) <= 3 * tol and abs(g[0][2] - rule[2]) <= 3 * tol:
                g.append(rule)
                break
        else:
            groups.append([rule])
    # rules of one width a long way apart (a title box's and a table's) are two groups: cut
    # where a gap is over three times the group's median gap
    split: list[list[tuple[float, float, float]]] = []
    for g in groups:
        g.sort()
        gaps = sorted(b[0] - a[0] for a, b in zip(g, g[1:], strict=False))
        if len(gaps) < 3:
            split.append(g)
            continue
        cut = 3 * gaps[len(gaps) // 2]
        split.append([g[0]])
        for a, b in zip(g, g[1:], strict=False):
            if b[0] - a[0] > cut:
                split.append([])
            split[-1].append(b)
    out = []
    for g in split:
        if len(g) < 2:
            continue
        x0, x1 = min(r[1] for r in g), max(r[2] for r in g)
        y0, y1 = min(r[0] for r in g), max(r[0] for r in g)
        if len(g) == 2 and y1 - y0 > max_two_rule_height:
            continue
        # a vertical rule of the region runs along half its height at least: shorter verticals
        # are letter strokes on a page image or the edges of pictures in the cells (the flags
        # of a country ranking)
        if any(x0 - tol <= s.x0 <= x1 + tol and min(s.y0, s.y1) <= y1 and max(s.y0, s.y1) >= y0
               and abs(s.y1 - s.y0) >= max(2 * tol, 0.5 * (y1 - y0)) for s in v):
            continue
        out.append((x0, y0, x1, y1))
    return out


#: A "word" of one or two marks that no cell holds alone: what Tesseract reads from a speck or a
#: rule's remains (~ _ : | ' "); dashes, %, currency signs, * and bullets are cells' contents.
SPECK = re.compile(r"^(?:[^\w\-–—%*•/+=#$€£¥&()]|_){1,2}$")


def _col_of(cols: list[list[float]], w: Word) -> int:
    """The column (x range) a word's centre lies in (the nearest one for a word between them)."""
    cx = (w[0] + w[2]) / 2
    return min(range(len(cols)), key=lambda i: 0.0 if cols[i][0] <= cx <= cols[i][1] else min(abs(cx - cols[i][0]), abs(cx - cols[i][1])))


def text_grid(words: list[Word], region: tuple[float, float, float, float],
              rules: list[float] | None = None) -> Grid | None:
    """A table from the words inside ``region``: rows are the text lines (or, when ``rules``
    (the y of the region's horizontal rules) make at least 3 bands, the bands between them, so
    a cell may hold several lines), columns the x ranges that the words of two rows or more
    cover with gaps of at least ``MIN_COLUMN_GAP`` font sizes between them
    (``tablerows.columns``). None unless it has >= 2 rows and >= 2 columns and every column holds
    text in a fifth of the rows (a paragraph between two rules is not a table)."""
    x0, y0, x1, y1 = region
    inside = [w for w in words if x0 - 1 <= (w[0] + w[2]) / 2 <= x1 + 1 and y0 <= (w[1] + w[3]) / 2 <= y1
              and not SPECK.match(w[4])]
    if len(inside) < 4:
        return None
    size = sorted(w[5] for w in inside)[len(inside) // 2]
    bands = sorted(rules or [])
    rows: list[list[Word]] = []
    if len(bands) >= 4 and size > 0:
        for a, b in zip(bands, bands[1:], strict=False):
            band = [w for w in inside if a <= (w[1] + w[3]) / 2 < b]
            if band:
                rows.append(band)
        cols = columns(rows, MIN_COLUMN_GAP * size)
    else:
        lines = text_lines(inside, size)
        cols = columns(lines, MIN_COLUMN_GAP * size)
        # rows: text lines; the lines of a cell wrapped over several lines stay one row
        rows = join_wrapped(lines, size, len(cols), lambda w: _col_of(cols, w))
    if len(rows) < 2 or len(cols) < 2:
        return None
    grid_rows: list[list[str]] = []
    for row in rows:
        cells = ["" for _ in cols]
        for line in text_lines(row, size):  # lines top to bottom, words left to right
            for w, k in zip(line, assign_columns(line, cols, MIN_COLUMN_GAP * size), strict=True):
                cells[k] = (cells[k] + " " + w[4]).strip()
        grid_rows.append(cells)
    filled_rows = sum(1 for r in grid_rows if sum(1 for c in r if c) >= 2)
    # every column holds text in a fifth of the rows, two at least (a bank statement's credit
    # column is sparse; a paragraph between two rules makes one column)
    if filled_rows < 2 or any(sum(1 for r in grid_rows if r[k]) < max(2, len(grid_rows) / 5) for k in range(len(cols))):
        return None
    # the outer edges hold every word (a header wider than its column's values included)
    xs = ([min(cols[0][0], min(w[0] for w in inside))] + [(cols[k][1] + cols[k + 1][0]) / 2 for k in range(len(cols) - 1)]
          + [max(cols[-1][1], max(w[2] for w in inside))])
    tops = [min(w[1] for w in r) for r in rows]
    bottoms = [max(w[3] for w in r) for r in rows]
    ys = [y0] + [(bottoms[k] + tops[k + 1]) / 2 for k in range(len(rows) - 1)] + [y1]
    g = Grid(xs, ys, filled=True)
    for r, row_cells in enumerate(grid_rows):
        for c, text in enumerate(row_cells):
            g.cells.append(GridCell(r, c, 1, 1, (xs[c], ys[r], xs[c + 1], ys[r + 1]), text))
    return g


def region_rules(h: list[Seg], region: tuple[float, float, float, float], tol: float) -> list[float]:
    """The y of the horizontal rules (``h`` joined by ``merge_collinear``) that run across
    ``region`` (a ``rule_regions`` box), top to bottom."""
    x0, y0, x1, y1 = region
    joined = merge_collinear([(s.y0, min(s.x0, s.x1), max(s.x0, s.x1)) for s in h], tol)
    return sorted(y for y, a, b in joined if y0 - tol <= y <= y1 + tol and a <= x0 + 3 * tol and b >= x1 - 3 * tol)


def rules_table(words: list[Word], region: tuple[float, float, float, float], rules: list[float]) -> Grid | None:
    """A table between horizontal rules (``region``, the rules' ``rules``): ``text_grid``, its
    rows the bands between the rules when there are three or more; then, when rules run under
    every row but none above the header, the header line above the first rule
    (``tablerows.header_over``) as its first row."""
    g = text_grid(words, region, rules)
    if g is None or len(rules) < 4:
        return g
    band = min(b - a for a, b in zip(rules, rules[1:], strict=False))
    inside = [w for w in words if _centre_in(w, region)]
    spans = []
    for k in range(g.n_cols):
        ws = [w for w in inside if g.xs[k] <= (w[0] + w[2]) / 2 <= g.xs[k + 1]]
        spans.append((min((w[0] for w in ws), default=g.xs[k]), max((w[2] for w in ws), default=g.xs[k + 1])))
    head = header_over(spans, region[1], words, band)
    if head is None:
        return g
    top = region[1] - band
    cells = [GridCell(0, k, 1, 1, (g.xs[k], top, g.xs[k + 1], region[1]), t) for k, t in enumerate(head)]
    cells += [GridCell(c.row + 1, c.col, c.rowspan, c.colspan, c.bbox, c.text) for c in g.cells]
    return Grid(g.xs, [top, *g.ys], cells, filled=True)


def _centre_in(w: Word, box: tuple[float, float, float, float]) -> bool:
    cx, cy = (w[0] + w[2]) / 2, (w[1] + w[3]) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


def header_body(g: Grid, words: list[Word]) -> Grid | None:
    """A ruled grid of one row with text in two cells or more (a header drawn as boxes or a
    filled band) and the unruled rows under it (``tablerows.body_under_header``) as one filled
    grid; None when there is no such body (a title band)."""
    head: list[str] = []
    sizes: list[float] = []
    for c in g.cells:
        ws = [w for w in words if _centre_in(w, c.bbox)]
        sizes += [w[5] for w in ws]
        head.append(" ".join(w[4] for w in sorted(ws, key=lambda w: (round(w[1]), w[0]))))
    if sum(1 for t in head if t) < 2:
        return None
    size = sorted(sizes)[len(sizes) // 2]
    body = body_under_header(g.xs, g.ys[-1], words, size)
    if body is None:
        return None
    ys = [g.ys[0], g.ys[-1]]
    for k, (_, top, bottom) in enumerate(body):
        ys.append(bottom if k == len(body) - 1 else (bottom + body[k + 1][1]) / 2)
        del top
    out = Grid(list(g.xs), ys, filled=True)
    out.cells = [GridCell(0, c.col, 1, c.colspan, c.bbox, t) for c, t in zip(g.cells, head, strict=True)]
    for r, (cells, _, _) in enumerate(body, 1):
        out.cells += [GridCell(r, k, 1, 1, (g.xs[k], ys[r], g.xs[k + 1], ys[r + 1]), t) for k, t in enumerate(cells)]
    return out


__all__ = ["SPECK", "Grid", "GridCell", "Seg", "Word", "find_grids", "header_body", "merge_collinear", "reading_order",
           "region_rules", "rule_regions", "rules_table", "text_grid"]
