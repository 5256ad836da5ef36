"""Rows of tables made from text lines: wrapped cells, header rows, the body under a ruled header.

Contract (pure geometry over word tuples ``tables.Word``: x0, y0, x1, y1, text, font size; any
units; never raises on odd input):

- ``text_lines(words, size) -> list[list[Word]]``: words -> visual lines (vertical centres within
  half a font size of the line's mean centre), each left to right.
- ``reading_order(words, size)``: a cell's words line by line, left to right.
- ``columns(rows, gap) -> list[list[float]]``: column x ranges from the rows' words (the x
  covered by two rows or more; one stray word bridges no gap).
- ``assign_columns(line, cols, gap)``: each word of a line to a column (a phrase stays together).
- ``join_wrapped(lines, size, col_of) -> list[list[Word]]``: lines -> table rows, a cell wrapped
  over several lines kept in one row. Lines are joined only when the gaps between them are
  clearly of two kinds (``_two_gap_kinds``: the small ones inside rows, the large ones between
  rows, the large ones at least as many as half the small ones; a gap measured between the words
  that lie over each other, so that a skewed scan's drift does not close it) and the lines joined are not two
  lines that each fill most columns (rows of a table set with a blank line every few rows).
- ``numeric_columns(rows)``, ``header_by_content(rows)``: what the table finders ask about a
  candidate's cells (a header row: text cells above a column of numbers; a number is
  ``daemon.document.tables.numeric``'s).
- ``body_under_header(xs, header, words, top, size) -> rows | None``: the body of a table whose
  header row is ruled or drawn as a filled band while its body has no rule (bank statements):
  the text lines right under the header, as long as they stay inside the header's columns.
- ``header_over(spans, top, words, reach) -> list[str] | None``: a header line above a table's
  first rule (tables with rules under the header and under every row only), its phrases put in
  the columns whose words' x ranges are ``spans``.
"""

from __future__ import annotations

from collections.abc import Callable

from daemon.document.tables import numeric

Word = tuple[float, float, float, float, str, float]

#: A wrapped cell's lines are at most this share of the gap between rows apart (measured on the
#: generated statements and the GRI index: lines inside a row 0.1-0.3 font sizes apart, rows
#: 0.8-2.3; a table set line under line has one kind of gap only).
WRAP_GAP_RATIO = 0.5
#: ... and the two kinds differ by at least this many font sizes.
WRAP_GAP_MIN = 0.3
#: A line fills "most columns" (two such lines are two rows, whatever their gap) from this share.
FULL_LINE = 0.8
#: Rows of an unruled body under a header are at most this many font sizes apart (the same bound
#: as ``unruled.MAX_UNRULED_ROW_GAP``; zebra-striped statements' rows are ~0.9 apart).
MAX_BODY_GAP = 1.5



def numeric_columns(rows: list[list[str]], skip: int = 0) -> list[int]:
    """Columns whose cells below the first ``skip`` rows are numbers (two thirds of at least two)."""
    out = []
    for k in range(max((len(r) for r in rows), default=0)):
        cells = [r[k] for r in rows[skip:] if k < len(r) and r[k]]
        if len(cells) >= 2 and sum(1 for c in cells if numeric(c)) * 3 >= 2 * len(cells):
            out.append(k)
    return out


def header_by_content(rows: list[list[str]]) -> bool:
    """The first row is a header: two or more text cells, none of them a number, above at least
    one column of numbers."""
    if len(rows) < 2:
        return False
    first = [c for c in rows[0] if c]
    if len(first) < 2 or any(numeric(c) for c in first):
        return False
    return any(k < len(rows[0]) and rows[0][k] for k in numeric_columns(rows, skip=1))


def _centre_y(w: Word) -> float:
    return (w[1] + w[3]) / 2


def text_lines(words: list[Word], size: float) -> list[list[Word]]:
    """See the contract."""
    lines: list[list[Word]] = []
    centre = 0.0  # the mean centre of the last line's words: a skewed line drifts along its words
    for w in sorted(words, key=lambda w: (_centre_y(w), w[0])):
        if lines and abs(_centre_y(w) - centre) <= 0.5 * size:
            lines[-1].append(w)
            centre += (_centre_y(w) - centre) / len(lines[-1])
        else:
            lines.append([w])
            centre = _centre_y(w)
    # one line: its words left to right (by centre they came in the order of their heights:
    # "1" before "Item" in "Item 1", whose capital I sits higher)
    return [sorted(ln, key=lambda w: w[0]) for ln in lines]


def reading_order(words: list[Word], size: float) -> list[Word]:
    """Words of one cell or row in reading order: its text lines top to bottom, each left to
    right (on a skewed scan one line's words drift by more than a rounded y can tell)."""
    return [w for ln in text_lines(words, size) for w in ln]


def columns(rows: list[list[Word]], gap: float) -> list[list[float]]:
    """Column x ranges of a table's rows: the x ranges covered by the words of more than one row
    (of any row when there are fewer than four), joined where less than ``gap`` apart. A stray
    word in one row (a speck Tesseract read as "~" between two columns, a header wider than its
    column) does not join two columns."""
    thr = 1 if len(rows) >= 4 else 0
    events: list[tuple[float, int]] = []
    for r in rows:
        spans: list[list[float]] = []
        for a, b in sorted((w[0], w[2]) for w in r):
            if spans and a - spans[-1][1] < gap:
                spans[-1][1] = max(spans[-1][1], b)
            else:
                spans.append([a, b])
        events += [(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans]
    events.sort(key=lambda e: (e[0], e[1]))
    solid: list[list[float]] = []
    cov = 0
    for x, d in events:
        before = cov
        cov += d
        if before <= thr < cov:
            solid.append([x, x])
        elif cov <= thr < before and solid:
            solid[-1][1] = x
    if not solid and thr:
        return columns(rows[:3], gap)  # every x covered by one row only: no gap is sure
    cols: list[list[float]] = []
    for a, b in solid:
        if cols and a - cols[-1][1] < gap:
            cols[-1][1] = max(cols[-1][1], b)
        else:
            cols.append([a, b])
    return cols


def assign_columns(line: list[Word], cols: list[list[float]], gap: float) -> list[int]:
    """The column of each word of one text line (left to right): the column whose x range it
    overlaps most; a word overlapping none (a header wider than its column, right-aligned over
    numbers) goes with its neighbour on the line when closer than ``gap`` to it (the words of
    one phrase stay together), else to the nearest column."""
    if not cols:
        return [0 for _ in line]
    out: list[int | None] = []
    for w in line:
        over = [max(0.0, min(w[2], b) - max(w[0], a)) for a, b in cols]
        out.append(max(range(len(cols)), key=lambda i: over[i]) if max(over) > 0 else None)
    for _ in range(len(line)):
        changed = False
        for i, w in enumerate(line):
            if out[i] is not None:
                continue
            gl = w[0] - line[i - 1][2] if i > 0 and out[i - 1] is not None else None
            gr = line[i + 1][0] - w[2] if i + 1 < len(line) and out[i + 1] is not None else None
            if gl is not None and gl < gap and (gr is None or gl <= gr):
                out[i], changed = out[i - 1], True
            elif gr is not None and gr < gap:
                out[i], changed = out[i + 1], True
        if not changed:
            break
    return [k if k is not None else min(range(len(cols)), key=lambda j: max(cols[j][0] - w[2], w[0] - cols[j][1]))
            for k, w in zip(out, line, strict=True)]


def _two_gap_kinds(gaps: list[float], size: float) -> float | None:
    """The threshold between the small gaps (inside rows) and the large ones (between rows), or
    None when the gaps are not clearly of two kinds (see the contract)."""
    if len(gaps) < 2 or size <= 0:
        return None
    s = sorted(gaps)
    k = max(range(1, len(s)), key=lambda i: s[i] - s[i - 1])  # the widest jump
    small, large = s[:k], s[k:]
    if len(large) < 2 or 2 * len(large) < len(small):
        return None
    if s[k] - s[k - 1] < WRAP_GAP_MIN * size or max(small) > WRAP_GAP_RATIO * max(min(large), 0.0):
        return None
    return (s[k - 1] + s[k]) / 2


def _line_gap(upper: list[Word], lower: list[Word]) -> float:
    """The gap between two text lines, measured between the words that lie over each other (the
    smallest such gap), or between the lines' boxes when none do. Over the words: a scan ~0.7
    degrees askew drifts ~10 px along a 900 px line, so the boxes of whole lines come that much
    closer than the words over each other are (the generated bank statement's wrapped cells 4-5 px
    under their row, rows 8-10 px apart by box and 15-20 px by word: its rows were not told apart
    from its wrapped lines, cell F1 0)."""
    pairs = [b[1] - a[3] for a in upper for b in lower if min(a[2], b[2]) > max(a[0], b[0])]
    if pairs:
        return min(pairs)
    return min(w[1] for w in lower) - max(w[3] for w in upper)


def join_wrapped(lines: list[list[Word]], size: float, n_cols: int, col_of: Callable[[Word], int]) -> list[list[Word]]:
    """See the contract. ``col_of(word)``: the word's column (0..n_cols-1)."""
    if len(lines) < 3 or n_cols < 1:
        return lines
    gaps = [_line_gap(lines[k], lines[k + 1]) for k in range(len(lines) - 1)]
    cut = _two_gap_kinds(gaps, size)
    if cut is None:
        return lines

    def full(ln: list[Word]) -> bool:
        return len({col_of(w) for w in ln}) >= FULL_LINE * n_cols

    rows = [list(lines[0])]
    first_full = full(lines[0])
    for k, ln in enumerate(lines[1:]):
        if gaps[k] < cut and not (first_full and full(ln)):
            rows[-1].extend(ln)
        else:
            rows.append(list(ln))
            first_full = full(ln)
    return rows


def _cell_texts(row: list[Word], xs: list[float], size: float) -> list[str] | None:
    """Texts of a row's words in the columns between ``xs`` (reading order: lines top to bottom,
    words left to right); None when a word lies across an inner column edge."""
    tol = 0.1 * max(size, 0.0)
    cells = ["" for _ in range(len(xs) - 1)]
    for w in sorted(row, key=lambda w: (round(_centre_y(w) / max(size, 1e-6)), w[0])):
        if any(w[0] < x - tol and w[2] > x + tol for x in xs[1:-1]):
            return None
        cx = (w[0] + w[2]) / 2
        k = sum(1 for x in xs[1:-1] if cx > x)
        cells[k] = (cells[k] + " " + w[4]).strip()
    return cells


def body_under_header(xs: list[float], header_bottom: float, words: list[Word], size: float
                      ) -> list[tuple[list[str], float, float]] | None:
    """See the contract: (cells, top, bottom) of each body row under a header whose columns are
    ``xs`` and whose bottom edge is ``header_bottom``; None when fewer than two rows are found.
    A line ends the body when it is more than ``MAX_BODY_GAP`` font sizes below the last one,
    holds a word outside the header's width or a word across an inner column edge."""
    if len(xs) < 3 or size <= 0:
        return None
    tol = 0.2 * size
    below = [w for w in words if _centre_y(w) > header_bottom and w[3] > w[1]]
    lines = text_lines(below, size)
    body: list[list[Word]] = []
    last = header_bottom
    for ln in lines:
        top = min(w[1] for w in ln)
        if top - last > MAX_BODY_GAP * size:
            break
        if any(w[0] < xs[0] - tol or w[2] > xs[-1] + tol for w in ln):
            break
        if _cell_texts(ln, xs, size) is None:
            break
        body.append(ln)
        last = max(w[3] for w in ln)
    if len(body) < 2:
        return None

    def col_of(w: Word) -> int:
        return sum(1 for x in xs[1:-1] if (w[0] + w[2]) / 2 > x)

    out = []
    for row in join_wrapped(body, size, len(xs) - 1, col_of):
        cells = _cell_texts(row, xs, size)
        if cells is None:
            return None
        out.append((cells, min(w[1] for w in row), max(w[3] for w in row)))
    return out if len(out) >= 2 else None


def header_over(spans: list[tuple[float, float]], top: float, words: list[Word], reach: float) -> list[str] | None:
    """See the contract. ``spans``: the x range the words of each column cover. The line(s)
    within ``reach`` above ``top`` (two at most): a word overlapping a column's range goes to that
    column; a word overlapping none (a header wider than its column's values, right-aligned
    over numbers) goes with the closer of its neighbours on the line, or else to the nearest
    range. None when there is no such line, a word overlaps two ranges or lies far outside the
    table (a paragraph line), or fewer than two columns get a word."""
    above = [w for w in words if top - reach <= _centre_y(w) < top and w[3] > w[1] and w[2] >= w[0]]
    if not above or len(spans) < 2:
        return None
    size = sorted(w[5] for w in above)[len(above) // 2]
    if size <= 0:
        return None
    lines = text_lines(above, size)
    if len(lines) > 2:
        return None
    left, right = spans[0][0], spans[-1][1]
    if any(w[0] < left - 4 * size or w[2] > right + 4 * size for ln in lines for w in ln):
        return None
    cells = ["" for _ in spans]
    for ln in lines:
        col: list[int | None] = []
        for w in ln:
            over = [max(0.0, min(w[2], s1) - max(w[0], s0)) for s0, s1 in spans]
            if sum(1 for o in over if o > 0) > 1:
                return None
            col.append(max(range(len(spans)), key=lambda i: over[i]) if max(over) > 0 else None)
        for _ in range(len(ln)):  # words overlapping no range join their closer neighbour's column
            for i, w in enumerate(ln):
                if col[i] is not None:
                    continue
                gl = w[0] - ln[i - 1][2] if i > 0 and col[i - 1] is not None else None
                gr = ln[i + 1][0] - w[2] if i + 1 < len(ln) and col[i + 1] is not None else None
                if gl is not None and (gr is None or gl <= gr):
                    col[i] = col[i - 1]
                elif gr is not None:
                    col[i] = col[i + 1]
        for i, w in enumerate(ln):
            k = col[i]
            if k is None:
                k = min(range(len(spans)), key=lambda j: max(spans[j][0] - w[2], w[0] - spans[j][1]))
            cells[k] = (cells[k] + " " + w[4]).strip()
    return cells if sum(1 for c in cells if c) >= 2 else None
