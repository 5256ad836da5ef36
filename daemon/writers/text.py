"""``txt`` writer: readable plain text from the document model.

- Styles are dropped; math stays as its LaTeX source between ``$…$`` / ``$$…$$``.
- Tables are laid out as aligned columns (two spaces apart, a dashed rule under the header
  rows, numbers right-aligned). Widths are display widths: CJK full-width characters count
  two columns (``unicodedata.east_asian_width`` W/F), combining marks zero.
- Pages are separated by a form feed (``\\f``) on a line of its own.
"""

from __future__ import annotations

import re
import unicodedata

from daemon.document.inline import plain_text
from daemon.document.model import (
    Block,
    CodeBlock,
    Document,
    Heading,
    Image,
    ListBlock,
    MathBlock,
    Paragraph,
    Rule,
    Table,
)

COL_GAP = "  "
_NUMERIC = re.compile(r"^[-+−(]?[$€£¥￥]?\s?\d[\d.,' \u00a0\u202f]*\s?(%|€|kr|[A-Z]{3})?\)?$")


def display_width(s: str) -> int:
    """Columns ``s`` takes in a terminal / monospaced font."""
    w = 0
    for ch in s:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Cc", "Cf", "Mn", "Me"):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def _pad(s: str, width: int, right: bool = False) -> str:
    fill = " " * max(0, width - display_width(s))
    return fill + s if right else s + fill


def write_txt(doc: Document) -> str:
    pages = []
    for page in doc.pages:
        pages.append("\n\n".join(x for x in (_block(b) for b in page.blocks) if x).rstrip() + "\n")
    return "\f\n".join(pages)


def _block(b: Block) -> str:
    if isinstance(b, Heading):
        t = plain_text(b.text).replace("\n", " ")
        if b.level <= 2:
            return t + "\n" + ("=" if b.level == 1 else "-") * max(3, display_width(t))
        return t
    if isinstance(b, Paragraph):
        return plain_text(b.text)
    if isinstance(b, ListBlock):
        return "\n".join(_list(b, 0))
    if isinstance(b, Table):
        return table_text(b)
    if isinstance(b, MathBlock):
        return "$$\n" + b.tex.strip() + "\n$$"
    if isinstance(b, Image):
        return f"[image: {b.alt}]" if b.alt else "[image]"
    if isinstance(b, CodeBlock):
        return "\n".join("    " + ln for ln in b.text.split("\n"))
    if isinstance(b, Rule):
        return "-" * 20
    return ""


def _list(lb: ListBlock, indent: int) -> list[str]:
    out: list[str] = []
    for k, item in enumerate(lb.items):
        marker = f"{lb.start + k}." if lb.ordered else "-"
        lines = plain_text(item.text).split("\n")
        out.append(" " * indent + f"{marker} {lines[0]}")
        out.extend(" " * (indent + len(marker) + 1) + ln for ln in lines[1:])
        if item.children:
            out.extend(_list(item.children, indent + len(marker) + 1))
    return out


def table_text(t: Table) -> str:
    """The table as aligned columns. A spanned cell's text is printed once, in its top-left
    slot, across the width of all the columns it spans."""
    rows = t.rows()
    texts = {(c.row, c.col): plain_text(c.text).split("\n") for c in t.cells}
    widths = [0] * t.n_cols
    for c in t.cells:
        if c.colspan == 1:
            widths[c.col] = max(widths[c.col], *(display_width(x) for x in texts[(c.row, c.col)]))
    for c in sorted(t.cells, key=lambda x: x.colspan):
        if c.colspan > 1:
            need = max(display_width(x) for x in texts[(c.row, c.col)])
            have = sum(widths[c.col : c.col + c.colspan]) + len(COL_GAP) * (c.colspan - 1)
            if need > have:
                widths[c.col + c.colspan - 1] += need - have
    numeric_col = [False] * t.n_cols
    for col in range(t.n_cols):
        body = [c for c in t.cells if c.col == col and c.colspan == 1 and c.row >= t.header_rows and c.text]
        numeric_col[col] = bool(body) and all(_NUMERIC.match(plain_text(c.text).strip()) for c in body)
    grid = t.grid()
    lines: list[str] = []
    if t.caption:
        lines.append(plain_text(t.caption))
    for r in range(t.n_rows):
        anchors = {c.col: c for c in rows[r]}
        height = max([len(texts[(c.row, c.col)]) for c in rows[r]] or [1])
        for k in range(height):
            parts: list[str] = []
            col = 0
            while col < t.n_cols:
                cell = anchors.get(col)
                span = cell.colspan if cell else grid[r][col].colspan if grid[r][col].row < r else 1
                span = max(1, min(span, t.n_cols - col))
                width = sum(widths[col : col + span]) + len(COL_GAP) * (span - 1)
                if cell:
                    txt = texts[(cell.row, cell.col)]
                    s = txt[k] if k < len(txt) else ""
                    parts.append(_pad(s, width, right=numeric_col[col] and span == 1 and r >= t.header_rows))
                else:
                    parts.append(" " * width)
                col += span
            lines.append(COL_GAP.join(parts).rstrip())
        if t.header_rows and r == t.header_rows - 1:
            lines.append(COL_GAP.join("-" * w for w in widths))
    return "\n".join(lines)
