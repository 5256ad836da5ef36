"""Tables of engine text -> :class:`daemon.document.model.Table`.

Contract:
- ``parse_html_table(fragment)``: one ``<table>…</table>`` (LightOnOCR writes tables as HTML)
  -> a ``Table`` with row/column spans, header rows and caption, or None when there is no cell.
  Spans are clamped to ``MAX_SPAN`` and the grid to ``MAX_TABLE_CELLS``, so a hostile
  ``rowspan="100000"`` cannot allocate a huge grid. Cell text becomes normalised inline Markdown.
- ``parse_pipe_table(lines)``: a Markdown pipe table (header row, delimiter row, body rows) ->
  a ``Table``, or None when the lines are not one.
- ``continued(first, second)``: ``first`` with ``second``'s rows under it when ``second`` is its
  continuation (same columns, its first row ``first``'s header again or a body row of it), else
  None; ``daemon.document.parse`` joins a table continued by the next block or the next page.
- ``ocr_table(rows)``: rows of OCR cell texts ``(text, rowspan, colspan, header)`` (a scanned
  grid, ``daemon.pages.scantables``) -> a ``Table`` laid out as an HTML table of those cells
  would be (rows without cells dropped, spans clamped, header rows found the same way), each
  text read the way an HTML cell's text is: ligatures as letters and NFC
  (``daemon.document.lines.letters``), whitespace runs one space, ``<`` escaped, normalised
  inline Markdown (other Markdown marks in OCR text stay marks, as they did when the grid went
  through HTML). None when there is no cell.
- ``DELIM_ROW`` matches a pipe table's delimiter row (the block parser uses it to spot tables).
- ``numeric(text)``: a cell's text is a number, an amount, a date or a code of digits (the
  continued-table rule here; the table finders of ``daemon.pages.tablerows``).

Never raises on odd input.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from html.parser import HTMLParser

from daemon.document.inline import normalize_inline
from daemon.document.lines import letters
from daemon.document.model import MAX_SPAN, MAX_TABLE_CELLS, Cell, Table

log = logging.getLogger(__name__)

_INLINE_MD = {"b": "**", "strong": "**", "i": "*", "em": "*", "s": "~~", "del": "~~", "strike": "~~", "code": "`"}
_INLINE_HTML = {"sup", "sub", "u"}
_BLOCKISH = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "caption"}


_HTML_WS = " \t\n\r\f"
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")

_DIGITISH = re.compile(r"[\d.,:/'’\-−+%()]")
_UNIT = re.compile(r"[$€£¥₹]|\b(?:EUR|USD|GBP|CHF|SEK|DKK|NOK|kr|Kč|zł)\b", re.I)


def numeric(text: str) -> bool:
    """A number, an amount, a date, a code of digits: at least 60 % of its characters (currency
    signs, codes and spaces left out) are digits or their punctuation, and one is a digit."""
    t = _UNIT.sub("", text).replace(" ", "").replace("\u00a0", "").replace("\u202f", "")
    if not t or not any(ch.isdigit() for ch in t):
        return False
    return len(_DIGITISH.findall(t)) >= 0.6 * len(t)


class _CellBuf:
    """Collects one cell's content as inline Markdown."""

    def __init__(self, header: bool, rowspan: int, colspan: int) -> None:
        self.header = header
        self.rowspan = rowspan
        self.colspan = colspan
        self.buf = ""
        self.pending: list[str] = []  # opening markers waiting for the first non-space text
        self.open: list[tuple[str, str, str]] = []  # (tag, opener, closer) currently open

    def data(self, text: str) -> None:
        text = _HTML_SPACE.sub(" ", text)  # HTML collapses ASCII whitespace only: &nbsp; stays
        if not text:
            return
        text = text.replace("<", "\\<")
        if self.pending:
            stripped = text.lstrip(" ")
            if not stripped:
                self.buf += text
                return
            self.buf += text[: len(text) - len(stripped)] + "".join(self.pending) + stripped
            self.pending.clear()
        else:
            self.buf += text

    def raw(self, s: str) -> None:
        """Markup that must not be escaped (already Markdown)."""
        if self.pending:
            self.buf += "".join(self.pending)
            self.pending.clear()
        self.buf += s

    def open_tag(self, tag: str, opener: str, closer: str) -> None:
        self.pending.append(opener)
        self.open.append((tag, opener, closer))

    def close_tag(self, tag: str) -> None:
        for k in range(len(self.open) - 1, -1, -1):
            if self.open[k][0] == tag:
                break
        else:
            return
        for _t, opener, closer in reversed(self.open[k:]):
            if self.pending and self.pending[-1] == opener:
                self.pending.pop()  # nothing inside: drop the pair
                continue
            trail = self.buf[len(self.buf.rstrip(" ")) :]
            self.buf = self.buf.rstrip(" ") + closer + trail
        del self.open[k:]

    def newline(self) -> None:
        self.buf = self.buf.rstrip(" ")
        if self.buf and not self.buf.endswith("\n"):
            self.buf += "\n"

    def text(self) -> str:
        for t, _o, _c in reversed(list(self.open)):
            self.close_tag(t)
        lines = [ln.strip(_HTML_WS) for ln in self.buf.split("\n")]
        return normalize_inline("\n".join(ln for ln in lines if ln))


class _TableHTMLParser(HTMLParser):
    """Builds rows of cell buffers from one ``<table>…</table>`` fragment. Tolerates the usual
    engine slips: missing ``</td>``/``</tr>``, cells outside rows, stray end tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[_CellBuf]] = []
        self.row_header: list[bool] = []
        self.cell: _CellBuf | None = None
        self.in_thead = False
        self.in_row = False
        self.depth = 0  # nesting of <table>; inner tables are flattened into the current cell
        self.caption: list[str] = []
        self.in_caption = False

    def _start_row(self) -> None:
        self._end_cell()
        self.rows.append([])
        self.row_header.append(self.in_thead)
        self.in_row = True

    def _end_cell(self) -> None:
        self.cell = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "table":
            self.depth += 1
            if self.depth > 1 and self.cell is not None:
                self.cell.newline()
            return
        if self.depth > 1:
            if self.cell is not None and tag in ("tr", "td", "th"):
                if tag == "tr":
                    self.cell.newline()
                elif self.cell.buf and not self.cell.buf.endswith("\n"):
                    self.cell.raw(" ")
            return
        if tag == "caption":
            self.in_caption = True
        elif tag == "thead":
            self.in_thead = True
        elif tag in ("tbody", "tfoot"):
            self.in_thead = False
        elif tag == "tr":
            self._start_row()
        elif tag in ("td", "th"):
            if not self.in_row:
                self._start_row()
            self.cell = _CellBuf(tag == "th" or self.in_thead, _span(a.get("rowspan")), _span(a.get("colspan")))
            self.rows[-1].append(self.cell)
        elif self.cell is not None:
            self._inline_start(tag, a)

    def _inline_start(self, tag: str, a: dict[str, str]) -> None:
        assert self.cell is not None
        if tag == "br":
            self.cell.newline()
        elif tag in _INLINE_MD:
            self.cell.open_tag(tag, _INLINE_MD[tag], _INLINE_MD[tag])
        elif tag in _INLINE_HTML:
            self.cell.open_tag(tag, f"<{tag}>", f"</{tag}>")
        elif tag == "a":
            self.cell.open_tag(tag, "[", "](" + a.get("href", "").replace(")", "%29").replace(" ", "%20") + ")")
        elif tag == "img":
            self.cell.raw(f"![{a.get('alt', '').replace(']', '')}]({a.get('src', '').replace(')', '%29')})")
        elif tag in _BLOCKISH:
            self.cell.newline()
            if tag == "li":
                self.cell.raw("- ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.depth = max(0, self.depth - 1)
            if self.depth >= 1 and self.cell is not None:
                self.cell.newline()
            return
        if self.depth > 1:
            return
        if tag == "caption":
            self.in_caption = False
        elif tag == "thead":
            self.in_thead = False
        elif tag == "tr":
            self._end_cell()
            self.in_row = False
        elif tag in ("td", "th"):
            self._end_cell()
        elif self.cell is not None:
            if tag in _INLINE_MD or tag in _INLINE_HTML or tag == "a":
                self.cell.close_tag(tag)
            elif tag in _BLOCKISH:
                self.cell.newline()

    def handle_data(self, data: str) -> None:
        if self.in_caption and self.cell is None:
            self.caption.append(data)
        elif self.cell is not None:
            self.cell.data(data)


def _span(v: str | None) -> int:
    m = re.match(r"\s*(\d+)", v or "")
    if not m:
        return 1
    k = int(m.group(1))
    return 0 if k == 0 else min(k, MAX_SPAN)  # 0 = "to the end of the section" in HTML


def parse_html_table(fragment: str) -> Table | None:
    """One ``<table>…</table>`` fragment -> :class:`Table` (None if it has no cells)."""
    p = _TableHTMLParser()
    # "<!" that does not open a comment makes html.parser try a declaration (and raise on text
    # like "<![img](a.png)"): it is text
    fragment = re.sub(r"<!(?!--)", "&lt;!", fragment)
    try:
        p.feed(fragment)
        p.close()
    except Exception as e:  # html.parser is lenient; never let odd markup kill a document
        log.warning("could not parse all of an HTML table (%s); keeping what was read", e)
    rows = [(r, h) for r, h in zip(p.rows, p.row_header, strict=True) if r]
    return _place(
        [[(c.text(), c.rowspan, c.colspan, c.header) for c in r] for r, _ in rows],
        [h for _, h in rows],
        normalize_inline(_HTML_SPACE.sub(" ", "".join(p.caption)).strip(_HTML_WS)),
    )


def ocr_table(rows: Sequence[Sequence[tuple[str, int, int, bool]]]) -> Table | None:
    """Rows of OCR cells -> :class:`Table` (see the module docstring)."""
    kept = [[(_ocr_cell(t), min(rs, MAX_SPAN) if rs > 1 else 1, min(cs, MAX_SPAN) if cs > 1 else 1, h)
             for t, rs, cs, h in row] for row in rows if row]
    return _place(kept, [False] * len(kept))


def _ocr_cell(text: str) -> str:
    """An OCR cell's text as ``_CellBuf`` reads it from ``<td>`` + the text HTML-escaped."""
    text = _HTML_SPACE.sub(" ", unicodedata.normalize("NFC", letters(text))).replace("<", "\\<")
    return normalize_inline(text.strip(_HTML_WS))


def _place(rows: list[list[tuple[str, int, int, bool]]], row_header: list[bool], caption: str = "") -> Table | None:
    """Lay out rows of ``(text, rowspan, colspan, is_header)`` on a grid the way HTML does."""
    n_rows = len(rows)
    if n_rows == 0:
        return None
    taken: set[tuple[int, int]] = set()
    cells: list[Cell] = []
    for r, row in enumerate(rows):
        c = 0
        for text, rs, cs, hdr in row:
            while (r, c) in taken:
                c += 1
            rs = n_rows - r if rs == 0 else min(rs, n_rows - r)
            cs = max(1, cs)
            if len(taken) + rs * cs > MAX_TABLE_CELLS:
                rs, cs = 1, 1
            # a span never overlaps a cell placed earlier: shrink it where it would
            while cs > 1 and any((r + dr, c + cs - 1) in taken for dr in range(rs)):
                cs -= 1
            while rs > 1 and any((r + rs - 1, c + dc) in taken for dc in range(cs)):
                rs -= 1
            cells.append(Cell(text, r, c, rs, cs, hdr))
            for dr in range(rs):
                for dc in range(cs):
                    taken.add((r + dr, c + dc))
            c += cs
    n_cols = max((c for _, c in taken), default=-1) + 1
    if n_cols == 0:
        return None
    for r in range(n_rows):  # ragged rows: fill the holes with empty cells
        for c in range(n_cols):
            if (r, c) not in taken:
                cells.append(Cell("", r, c, 1, 1, row_header[r] if r < len(row_header) else False))
    cells.sort(key=lambda x: (x.row, x.col))
    header_rows = 0
    by_row: list[list[Cell]] = [[] for _ in range(n_rows)]
    for cell in cells:
        by_row[cell.row].append(cell)
    for r in range(n_rows):
        anchors = [x for x in by_row[r] if x.text or x.colspan > 1 or x.rowspan > 1]
        if (row_header[r] or (anchors and all(x.header for x in by_row[r] if x.text))) and any(
            x.header for x in by_row[r]
        ):
            header_rows += 1
        else:
            break
    if header_rows == n_rows and n_rows > 1 and not any(row_header):
        header_rows = 1  # an all-<th> table: only the first row is a header row
    for cell in cells:
        if cell.row < header_rows:
            cell.header = True
    return Table(n_rows, n_cols, cells, header_rows, caption)




DELIM_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _split_pipe_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells, cur, i = [], [], 0
    in_code = False
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            cells.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    cells.append("".join(cur))
    return [c.strip() for c in cells]


def parse_pipe_table(lines: Sequence[str]) -> Table | None:
    """GFM pipe table lines (header, delimiter, body…) -> :class:`Table`."""
    if len(lines) < 2 or not DELIM_ROW.match(lines[1]):
        return None
    head = _split_pipe_row(lines[0])
    body = [_split_pipe_row(ln) for ln in lines[2:]]
    rows = [[(normalize_inline(t.replace("<br>", "\n").replace("<br/>", "\n")), 1, 1, r == 0) for t in row]
            for r, row in enumerate([head, *body])]
    n = max(len(r) for r in rows)
    rows = [r + [("", 1, 1, i == 0)] * (n - len(r)) for i, r in enumerate(rows)]
    return _place(rows, [True] + [False] * len(body))


def continued(first: Table, second: Table, header_again: bool = False) -> Table | None:
    """``first`` with the rows of ``second`` under it when ``second`` is its continuation (issue
    32: a timesheet's table split where a rule broke, or where the page ended): the same number
    of columns, no spans, and ``second``'s first row either ``first``'s header again (dropped: a
    header repeated on the next page) or a body row of ``first`` (empty or a number in every
    column of numbers of ``first``'s body, one such column at least: a table beside another, with
    a header of its own, is not one); None when it is not. ``header_again``: only the first kind
    (tables on one page: the model does not know where they lie, and two blocks of one list set
    side by side, the table set's population ranking, are two tables)."""
    if first.n_cols != second.n_cols or first.has_spans or second.has_spans or first.n_rows < 2 or second.n_rows < 1:
        return None
    a, b = first.expanded(), second.expanded()
    rows_b = b
    if b[0] == a[0]:
        rows_b = b[1:]
    elif header_again:
        return None
    else:
        # columns of numbers: every filled body cell a number (two thirds of them when 3 or more)
        nums = [k for k in range(first.n_cols) for col in [[r[k] for r in a[1:] if r[k]]]
                if col and sum(1 for c in col if numeric(c)) * 3 >= 2 * len(col) and (len(col) >= 3 or all(map(numeric, col)))]
        if not nums or not all(not b[0][k] or numeric(b[0][k]) for k in nums) or not any(b[0][k] for k in nums):
            return None
    header = max(first.header_rows, 1 if any(c.header for c in first.cells) else 0)
    cells = list(first.cells)
    for r, row in enumerate(second.grid()[len(b) - len(rows_b):]):
        cells += [Cell(c.text, first.n_rows + r, k) for k, c in enumerate(row)]
    return Table(first.n_rows + len(rows_b), first.n_cols, cells, header_rows=header, caption=first.caption)
