"""Ruled tables: line segments -> grids of cells, for born-digital PDFs and for page images.

Contract:

- ``find_grids(h, v, tol) -> list[Grid]``: horizontal and vertical line segments (any units: PDF
  points or pixels) -> the ruled tables they draw. A grid is a connected set of rules with at
  least 2 columns (a single box or a column of boxes, such as a frame around a code listing, is
  not a table). Slots not separated by a rule are merged into one cell (row/column spans) when the
  merged slots form a rectangle. Pure geometry, no I/O, never raises.
- ``rule_regions(h, v, ...)`` and ``text_grid(words, region, rules)``: tables drawn with
  horizontal rules only, their columns from the words' x-gaps.
- ``merge_collinear(segs, tol)``: (position, start, end) segments on one line joined where they
  overlap or leave a gap of at most ``tol`` (a rule drawn in pieces is one rule); what
  ``find_grids`` and ``rule_regions`` see, for callers that need the same rules.
- ``unruled_grids(words, taken) -> list[Grid]``: tables without any rule among a page's words
  (any units; a word's font size in its tuple), outside the boxes ``taken``: at least
  ``MIN_UNRULED_ROWS`` consecutive rows of at least ``MIN_UNRULED_COLS`` cells that line up in
  columns (``text_grid``), short cells, rows close together, and not code, formulas, a list,
  a type sample or a table of contents (``not_a_table``). One function for both paths: scans
  (Tesseract's word boxes, ``scantables.find_unruled_tables``) and born-digital pages (the text
  layer's words, ``textlayer.read_layer``). Filled grids. Pure geometry, never raises.
- Page images (scans) use these through ``daemon.pages.scantables``.

Why our own line finder instead of PyMuPDF's ``find_tables()`` or img2table: ``find_tables``
took 256 ms per page on the Debian reference PDF (261 pages, 2 cores; also on pages without any
table), which alone would cap born-digital pages at ~4 pages/s against the 50 pages/s target;
the page's vector drawings (``get_cdrawings``, 3 ms/page there) already hold every rule of a
ruled table. img2table pulls OpenCV and polars (~100 MB) for the same line detection
``daemon.pages.scantables`` does with numpy. Born-digital tables with horizontal rules only (booktabs style) are found from
the rules' region and the words' x-gaps (``rule_regions`` + ``text_grid``); tables without any
rule (whitespace only) from the words alone (``unruled_grids``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

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


def merge_collinear(segs: list[tuple[float, float, float]], tol: float) -> list[tuple[float, float, float]]:
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
    hs = merge_collinear([(s.y0, min(s.x0, s.x1), max(s.x0, s.x1)) for s in h
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
        # one line per row: its words left to right (by centre they came in the order of their
        # heights: "1" before "Item" in "Item 1", whose capital I sits higher)
        rows = [sorted(r, key=lambda w: w[0]) for r in rows]
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
# Tables without any rule (whitespace only)


#: An unruled table has at least this many rows with at least MIN_UNRULED_COLS cells each (a
#: cell: words closer than ``MIN_COLUMN_GAP`` font sizes). Two columns are not enough: a page set
#: in two columns, or "label   value" lines, would pass.
MIN_UNRULED_ROWS = 3
MIN_UNRULED_COLS = 3
#: ... and its filled cells hold at most this many words in the median (a page set in three
#: columns of prose lines up as well, but its "cells" are 5-10 words long).
MAX_UNRULED_CELL_WORDS = 3.0
#: Rows of one table are at most this many font sizes apart (bottom of one to top of the next;
#: body text lines are ~0.2-0.5 apart, a paragraph break ~1, the invoice's rows 0.4).
MAX_UNRULED_ROW_GAP = 1.5


def _cells_of(row: list[Word], size: float) -> int:
    """Number of word groups of a text row that lie ``MIN_COLUMN_GAP`` font sizes apart."""
    xs = sorted((w[0], w[2]) for w in row)
    n, right = 1, xs[0][1]
    for a, b in xs[1:]:
        if a - right >= MIN_COLUMN_GAP * size:
            n += 1
        right = max(right, b)
    return n


def _centre_in(w: Word, box: tuple[float, float, float, float]) -> bool:
    cx, cy = (w[0] + w[2]) / 2, (w[1] + w[3]) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


#: Code: a comment or a shell prompt starting a cell (``# ...``, ``// ...``, ``$ cmd``; not
#: ``$ 10.00``), braces, a TeX or escape command, an assignment (`` = ``, ``:=``), a statement's
#: ``;`` at the end of a cell.
_CODE = re.compile(r"^(?:#|//|/\*|%|\$|>>>)\s?[^\d\s]|[{}]|\\[A-Za-z_@]|(?:^|\s)(?:=|:=|==)(?:\s|$)|;$")
#: Math operators, arrows, math alphanumerics (formulas set in columns), equation numbers.
_MATH = re.compile("[\u2200-\u22ff\u27c0-\u27ef\u2980-\u2aff\U0001d400-\U0001d7ff]")
_EQ_NO = re.compile(r"^\(\d{1,3}(?:[.-]\d{1,3})*[a-z]?\)$")
#: A TOC's page number, its dot leaders, a section number starting its line (1, 2.1, A.2, 第 3 节).
_PAGE_NO = re.compile(r"^(?:\d{1,3}|[ivxlc]{1,6})$")
_LEADERS = re.compile(r"(?:\.\s?){4,}|…|^\.$")
_SECTION_START = re.compile(r"^(?:(?:\d{1,3}|[A-Z]|[IVX]{1,5})(?:\.\d{1,3})*\.?(?:\s|$)|第\s?\d{1,3}\s?[章节部])")
#: A list's bullet or enumerator (the whole cell: ``•``, ``1.``, ``2)``, ``(a)``; an invoice's
#: plain position numbers ``1``, ``2`` are no enumerators).
_BULLET_CELL = re.compile(r"^(?:[•◦▪▫●○■□‣⁃∙·▸►✓✔*–—-]|\(?(?:\d{1,2}|[a-z])[.)])$")


def _column(rows: list[list[str]], k: int) -> list[str]:
    return [r[k] for r in rows if r[k]]


def _toc(rows: list[list[str]]) -> bool:
    """A table of contents: a column of page numbers (1-3 digits or roman, in at least 60 % of
    the rows, non-decreasing) with text to its left, and dot leaders, or section numbers at the
    start of the text (then not all one page), in at least half of the rows."""
    n = len(rows)
    for k in range(1, len(rows[0])):
        col = _column(rows, k)
        if len(col) < 3 or len(col) * 5 < 3 * n or not all(_PAGE_NO.match(c) for c in col):
            continue
        nums = [int(c) for c in col if c.isdigit()]
        if nums != sorted(nums):
            continue
        left = [r[:k] for r in rows]
        if sum(1 for r in left if any(ch.isalpha() for c in r for ch in c)) * 2 < n:
            continue
        leaders = sum(1 for r in rows if any(_LEADERS.search(c) for c in r))
        sections = sum(1 for r in left if any(_SECTION_START.match(c) for c in r))
        # (section numbers alone with one page number throughout: an invoice's positions and
        # a quantity of 1 on every line)
        if leaders * 2 >= n or (sections * 2 >= n and len(set(col)) >= 2):
            return True
    return False


def not_a_table(g: Grid) -> str | None:
    """Why a filled grid made from text alignment alone is no table, or None when it is one:
    code (``_CODE`` in at least a third of its rows: a listing's aligned comments, line
    numbers, braces), math (math glyphs in half of the rows, or a column of equation numbers),
    a list (a first column of bullets or enumerators alone), a type sample (three quarters of the cells one
    letter each: an alphabet set in a grid) or a table of contents (``_toc``): all of them line
    up in columns of short cells too."""
    rows = [["" for _ in range(g.n_cols)] for _ in range(g.n_rows)]
    for c in g.cells:
        rows[c.row][c.col] = c.text
    n = len(rows)
    if sum(1 for r in rows if any(_CODE.search(c) for c in r)) * 3 >= n:
        return "code"
    if (sum(1 for r in rows if any(_MATH.search(c) for c in r)) * 2 >= n
            or any(len(col) >= 3 and all(_EQ_NO.match(c) for c in col) for col in map(lambda k: _column(rows, k), range(g.n_cols)))):
        return "math"
    first = _column(rows, 0)
    if first and all(_BULLET_CELL.match(c) for c in first):
        return "list"
    texts = [c for r in rows for c in r if c]
    if sum(1 for c in texts if len(c) == 1 and not c.isdigit()) * 4 >= 3 * len(texts):
        return "type sample"
    if _toc(rows):
        return "table of contents"
    return None


def unruled_grids(words: list[Word], taken: list[tuple[float, float, float, float]]) -> list[Grid]:
    """Tables without any rule among a page's ``words`` (scans: Tesseract's word boxes; born-digital
    pages: the text layer's), outside the boxes ``taken`` by other tables: at least
    ``MIN_UNRULED_ROWS`` consecutive visual rows (across the whole page) of at least
    ``MIN_UNRULED_COLS`` word groups, no more than ``MAX_UNRULED_ROW_GAP`` font sizes apart, whose
    words line up in columns (``text_grid``) with short cells (a median of at most
    ``MAX_UNRULED_CELL_WORDS`` words). Filled grids (cell texts set)."""
    words = [w for w in words if w[3] > w[1] and w[2] > w[0] and not any(_centre_in(w, t) for t in taken)]
    if len(words) < MIN_UNRULED_ROWS * MIN_UNRULED_COLS:
        return []
    size = sorted(w[5] for w in words)[len(words) // 2]
    # visual rows across the whole page: Tesseract often makes each column of an unruled
    # table a block of its own, so its text lines are not the table's rows
    rows: list[list[Word]] = []
    centre_sum = 0.0  # of the last row's word centres
    for w in sorted(words, key=lambda w: ((w[1] + w[3]) / 2, w[0])):
        cy = (w[1] + w[3]) / 2
        if rows and abs(cy - centre_sum / len(rows[-1])) <= 0.5 * size:
            rows[-1].append(w)
            centre_sum += cy
        else:
            rows.append([w])
            centre_sum = cy
    out: list[Grid] = []
    run: list[list[Word]] = []

    def flush() -> None:
        # a run's first and last rows with fewer cells (a caption, a "Total due" line) stay text
        while run and _cells_of(run[0], size) < MIN_UNRULED_COLS:
            run.pop(0)
        while run and _cells_of(run[-1], size) < MIN_UNRULED_COLS:
            run.pop()
        if sum(1 for r in run if _cells_of(r, size) >= MIN_UNRULED_COLS) < MIN_UNRULED_ROWS:
            return
        ws = [w for r in run for w in r]
        box = (min(w[0] for w in ws) - 1, min(w[1] for w in ws) - 1, max(w[2] for w in ws) + 1, max(w[3] for w in ws) + 1)
        g = text_grid(ws, box)
        if g is None or g.n_cols < MIN_UNRULED_COLS or g.n_rows < MIN_UNRULED_ROWS:
            return
        lengths = sorted(len(c.text.split()) for c in g.cells if c.text)
        if lengths and lengths[len(lengths) // 2] <= MAX_UNRULED_CELL_WORDS and not_a_table(g) is None:
            out.append(g)

    for row in rows:
        joins = bool(run) and min(w[1] for w in row) - max(w[3] for w in run[-1]) <= MAX_UNRULED_ROW_GAP * size
        if _cells_of(row, size) >= 2 and joins:
            run.append(row)
            continue
        flush()
        run = [row] if _cells_of(row, size) >= 2 else []
    flush()
    return out
