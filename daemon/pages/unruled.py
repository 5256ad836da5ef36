"""Tables without any rule (whitespace only), among a page's words: scans (Tesseract's word boxes,
``daemon.pages.scantables.find_unruled_tables``) and born-digital pages (the text layer's words,
``daemon.pages.textlayer``). The ruled tables and the column finder they share (``text_grid``)
are ``daemon.pages.tables``'s.

Contract:

- ``unruled_grids(words, taken) -> list[Grid]``: tables without any rule among a page's words
  (any units; a word's font size in its tuple), outside the boxes ``taken``: at least
  ``MIN_UNRULED_ROWS`` consecutive rows of at least ``MIN_UNRULED_COLS`` cells that line up in
  columns (``tables.text_grid``; a wrapped cell's next lines join its row), short cells, rows
  close together, not code, formulas, a list, a type sample or a table of contents
  (``not_a_table``), and, when shorter than ``MIN_HEADERLESS_ROWS`` rows, with a header row or
  two columns of numbers (an address block is none of these). Filled grids. Pure geometry, never
  raises.
- ``not_a_table(grid) -> str | None``: why a filled grid made from text alignment alone is no
  table.
"""

from __future__ import annotations

import re

from daemon.layerrecords import Grid
from daemon.pages.tablerows import WRAP_GAP_RATIO, Word, header_by_content, numeric_columns
from daemon.pages.tables import MIN_COLUMN_GAP, _centre_in, text_grid

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
#: An unruled candidate of fewer rows needs a header row (``tablerows.header_by_content``) or two
#: columns of numbers: an invoice's address block beside its details block (name | label |
#: value, 3-4 lines) lines up in three columns too (generated invoices, issue 26).
MIN_HEADERLESS_ROWS = 6


def _in_one_column(row: list[Word], rows: list[list[Word]], size: float) -> bool:
    """The words of ``row`` lie inside one column of ``rows`` (word groups ``MIN_COLUMN_GAP``
    font sizes apart, over the rows of two cells or more)."""
    spans = sorted((w[0], w[2]) for r in rows if _cells_of(r, size) >= 2 for w in r)
    cols: list[list[float]] = []
    for a, b in spans:
        if cols and a - cols[-1][1] < MIN_COLUMN_GAP * size:
            cols[-1][1] = max(cols[-1][1], b)
        else:
            cols.append([a, b])
    x0, x1 = min(w[0] for w in row), max(w[2] for w in row)
    return len(cols) >= 2 and any(a - size <= x0 and x1 <= b + size for a, b in cols)


def _texts(g: Grid) -> list[list[str]]:
    rows = [["" for _ in range(g.n_cols)] for _ in range(g.n_rows)]
    for c in g.cells:
        rows[c.row][c.col] = c.text
    return rows


def _cells_of(row: list[Word], size: float) -> int:
    """Number of word groups of a text row that lie ``MIN_COLUMN_GAP`` font sizes apart."""
    xs = sorted((w[0], w[2]) for w in row)
    n, right = 1, xs[0][1]
    for a, b in xs[1:]:
        if a - right >= MIN_COLUMN_GAP * size:
            n += 1
        right = max(right, b)
    return n


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

    def gap(a: list[Word], b: list[Word]) -> float:
        return min(w[1] for w in b) - max(w[3] for w in a)

    def wrapped(k: int) -> bool:
        """Row k of the run is the next line of a cell of row k - 1 (one column, a small gap)."""
        gaps = sorted(gap(run[i - 1], run[i]) for i in range(1, len(run)))
        return (k > 0 and _in_one_column(run[k], run[:k], size)
                and gap(run[k - 1], run[k]) < WRAP_GAP_RATIO * gaps[len(gaps) // 2])

    def flush() -> None:
        # a run's first and last rows with fewer cells (a caption, a "Total due" line) stay text
        while run and _cells_of(run[0], size) < MIN_UNRULED_COLS:
            run.pop(0)
        while run and _cells_of(run[-1], size) < MIN_UNRULED_COLS and not wrapped(len(run) - 1):
            run.pop()
        if sum(1 for r in run if _cells_of(r, size) >= MIN_UNRULED_COLS) < MIN_UNRULED_ROWS:
            return
        ws = [w for r in run for w in r]
        box = (min(w[0] for w in ws) - 1, min(w[1] for w in ws) - 1, max(w[2] for w in ws) + 1, max(w[3] for w in ws) + 1)
        g = text_grid(ws, box)
        if g is None or g.n_cols < MIN_UNRULED_COLS or g.n_rows < MIN_UNRULED_ROWS:
            return
        lengths = sorted(len(c.text.split()) for c in g.cells if c.text)
        if not lengths or lengths[len(lengths) // 2] > MAX_UNRULED_CELL_WORDS or not_a_table(g) is not None:
            return
        cells = _texts(g)
        if g.n_rows < MIN_HEADERLESS_ROWS and not header_by_content(cells) and len(numeric_columns(cells)) < 2:
            return  # an address block beside an invoice's details, not a table
        out.append(g)

    for row in rows:
        joins = bool(run) and gap(run[-1], row) <= MAX_UNRULED_ROW_GAP * size
        # a row of one cell inside a column: the next line of a wrapped cell
        if joins and (_cells_of(row, size) >= 2 or _in_one_column(row, run, size)):
            run.append(row)
            continue
        flush()
        run = [row] if _cells_of(row, size) >= 2 else []
    flush()
    return out
