"""The document model every output writer uses: ``Document -> pages -> blocks``.

A block is one of :class:`Heading`, :class:`Paragraph` (``role`` ``body``, or ``header``/``footer``
for running page headers and footers detected across pages), :class:`ListBlock`, :class:`Table`
(a grid of :class:`Cell` with row/column spans and header rows), :class:`MathBlock` (display
math), :class:`Image` (a placeholder: OCR never has the pixels), :class:`CodeBlock` and
:class:`Rule`.

Every piece of running text in the model (heading text, paragraph text, list items, table cells)
is *normalised inline Markdown*:

- math is delimited only by ``$…$`` (inline) and ``$$…$$`` (display inside running text);
  ``\\(…\\)``, ``\\[…\\]`` and escaped-dollar math like ``\\$x^2\\$`` are rewritten to that form;
- a literal dollar sign is always written ``\\$``, so every unescaped ``$`` is a math delimiter;
- emphasis as ``**bold**``, ``*italic*``, ``~~strike~~``; ``<sup>``, ``<sub>``, ``<u>`` as HTML;
  a line break inside a table cell is ``\\n``.

The parts that build and read it, one module each:

- :mod:`daemon.document.inline`: inline normalisation, and :func:`~daemon.document.inline.parse_inline`
  (normalised inline Markdown -> styled runs for the writers that are not Markdown);
- :mod:`daemon.document.tables`: HTML tables, pipe tables and scanned grids' OCR cells -> :class:`Table`;
- :mod:`daemon.document.markdown`: one page of engine Markdown (or plain OCR text) -> blocks;
- :mod:`daemon.document.parse`: :func:`~daemon.document.parse.parse_document`, the engine's page
  texts (and the blocks some pages come with) -> :class:`Document` (with running headers and
  footers marked); each :class:`Page` keeps its raw text (``raw``: the JSON output's page texts).

Every writer (:mod:`daemon.writers`) takes the :class:`Document`; the searchable PDF also takes
the page records, whose boxes place its text.

The model round-trips through ``to_dict``/``from_dict`` (the JSON output).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from daemon.document.inline import plain_text

#: Version tag written into the JSON form of the model.
MODEL_FORMAT = "ocr-daemon.document/1"

# Spans larger than this are clamped: a model output saying rowspan="100000" must not allocate a
# huge grid.
MAX_SPAN = 1000
MAX_TABLE_CELLS = 200_000



@dataclass
class Cell:
    """One table cell anchored at (row, col), covering ``rowspan`` x ``colspan`` grid slots."""

    text: str
    row: int
    col: int
    rowspan: int = 1
    colspan: int = 1
    header: bool = False

    @property
    def plain(self) -> str:
        return plain_text(self.text)


@dataclass
class Table:
    """A table as a grid. ``cells`` holds only the anchor cells, in row-major order; every grid
    slot ``(r, c)`` with ``r < n_rows`` and ``c < n_cols`` is covered by exactly one cell."""

    n_rows: int
    n_cols: int
    cells: list[Cell]
    header_rows: int = 0
    caption: str = ""
    kind: Literal["table"] = "table"

    def grid(self) -> list[list[Cell]]:
        """``grid[r][c]`` is the cell covering slot (r, c) (the anchor for spanned slots)."""
        g: list[list[Cell | None]] = [[None] * self.n_cols for _ in range(self.n_rows)]
        for cell in self.cells:
            for r in range(cell.row, cell.row + cell.rowspan):
                for c in range(cell.col, cell.col + cell.colspan):
                    g[r][c] = cell
        out: list[list[Cell]] = []
        for r, row in enumerate(g):
            out.append([x if x is not None else Cell("", r, c) for c, x in enumerate(row)])
        return out

    @property
    def has_spans(self) -> bool:
        return any(c.rowspan > 1 or c.colspan > 1 for c in self.cells)

    def rows(self) -> list[list[Cell]]:
        """Anchor cells grouped by the row they start in."""
        out: list[list[Cell]] = [[] for _ in range(self.n_rows)]
        for cell in self.cells:
            out[cell.row].append(cell)
        return out

    def expanded(self) -> list[list[str]]:
        """Plain text of every grid slot, spans expanded into every slot they cover."""
        return [[c.plain for c in row] for row in self.grid()]


@dataclass
class Heading:
    level: int  # 1..6
    text: str
    kind: Literal["heading"] = "heading"


@dataclass
class Paragraph:
    text: str  # lines separated by "\n" are kept as line breaks
    role: Literal["body", "header", "footer"] = "body"
    kind: Literal["paragraph"] = "paragraph"


@dataclass
class ListItem:
    text: str
    children: ListBlock | None = None


@dataclass
class ListBlock:
    items: list[ListItem]
    ordered: bool = False
    start: int = 1
    kind: Literal["list"] = "list"


@dataclass
class MathBlock:
    """Display math: LaTeX source without ``$$`` delimiters (may be a whole environment such as
    ``\\begin{align}…\\end{align}``)."""

    tex: str
    kind: Literal["math"] = "math"


@dataclass
class Image:
    alt: str = ""
    src: str = ""
    kind: Literal["image"] = "image"


@dataclass
class CodeBlock:
    text: str
    lang: str = ""
    kind: Literal["code"] = "code"


@dataclass
class Rule:
    kind: Literal["rule"] = "rule"


Block = Heading | Paragraph | ListBlock | Table | MathBlock | Image | CodeBlock | Rule


@dataclass
class Page:
    number: int  # 1-based
    blocks: list[Block] = field(default_factory=list)
    # the page's text as the engine gave it (Markdown or plain) and the raw file keeps it: the
    # JSON output's page texts; not part of the model's JSON form
    raw: str = field(default="", compare=False, repr=False)


@dataclass
class Document:
    pages: list[Page]
    language: str = "unknown"

    def tables(self) -> list[tuple[int, int, Table]]:
        """``(page number, n-th table on that page (1-based), table)`` for every table."""
        out = []
        for page in self.pages:
            n = 0
            for b in page.blocks:
                if isinstance(b, Table):
                    n += 1
                    out.append((page.number, n, b))
        return out

    def text(self) -> str:
        """The document's words as plain text, without markup, math or code: what language
        detection and keyword matching should read (the raw engine Markdown carries HTML table
        tags whose Latin letters outweigh a short Chinese or Japanese text). Ordered list items
        keep their numbers ("12. März 2018" is a date, not item 12 "März 2018")."""
        parts: list[str] = []

        def items(lb: ListBlock) -> None:
            for n, it in enumerate(lb.items, start=lb.start):
                # An ordered item keeps its number: a line such as "12. März 2018" parses as
                # item 12 of a list, and without the number a date is lost (issue 32).
                prefix = f"{n}. " if lb.ordered else ""
                parts.append(prefix + plain_text(it.text, math_delims=False))
                if it.children:
                    items(it.children)

        for page in self.pages:
            for b in page.blocks:
                if isinstance(b, (Heading, Paragraph)):
                    parts.append(plain_text(b.text, math_delims=False))
                elif isinstance(b, ListBlock):
                    items(b)
                elif isinstance(b, Table):
                    if b.caption:
                        parts.append(plain_text(b.caption, math_delims=False))
                    parts.extend(plain_text(c.text, math_delims=False) for c in b.cells if c.text)
        return "\n".join(p for p in parts if p.strip())

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "language": self.language,
            "pages": [{"number": p.number, "blocks": [_block_to_dict(b) for b in p.blocks]} for p in self.pages],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Document:
        return cls(
            pages=[Page(p["number"], [_block_from_dict(b) for b in p["blocks"]]) for p in d["pages"]],
            language=d.get("language", "unknown"),
        )


def _list_to_dict(lb: ListBlock) -> dict[str, Any]:
    return {
        "type": "list",
        "ordered": lb.ordered,
        "start": lb.start,
        "items": [
            {"text": it.text, **({"children": _list_to_dict(it.children)} if it.children else {})}
            for it in lb.items
        ],
    }


def _list_from_dict(d: dict[str, Any]) -> ListBlock:
    return ListBlock(
        items=[
            ListItem(it["text"], _list_from_dict(it["children"]) if it.get("children") else None)
            for it in d["items"]
        ],
        ordered=d.get("ordered", False),
        start=d.get("start", 1),
    )


def _block_to_dict(b: Block) -> dict[str, Any]:
    if isinstance(b, Heading):
        return {"type": "heading", "level": b.level, "text": b.text}
    if isinstance(b, Paragraph):
        return {"type": "paragraph", "role": b.role, "text": b.text}
    if isinstance(b, ListBlock):
        return _list_to_dict(b)
    if isinstance(b, Table):
        return {
            "type": "table",
            "rows": b.n_rows,
            "cols": b.n_cols,
            "header_rows": b.header_rows,
            "caption": b.caption,
            "cells": [
                {
                    "row": c.row,
                    "col": c.col,
                    "rowspan": c.rowspan,
                    "colspan": c.colspan,
                    "header": c.header,
                    "text": c.text,
                    "plain": c.plain,
                }
                for c in b.cells
            ],
        }
    if isinstance(b, MathBlock):
        return {"type": "math", "tex": b.tex}
    if isinstance(b, Image):
        return {"type": "image", "alt": b.alt, "src": b.src}
    if isinstance(b, CodeBlock):
        return {"type": "code", "lang": b.lang, "text": b.text}
    return {"type": "rule"}


def _block_from_dict(d: dict[str, Any]) -> Block:
    t = d["type"]
    if t == "heading":
        return Heading(d["level"], d["text"])
    if t == "paragraph":
        return Paragraph(d["text"], d.get("role", "body"))
    if t == "list":
        return _list_from_dict(d)
    if t == "table":
        cells = [
            Cell(c["text"], c["row"], c["col"], c.get("rowspan", 1), c.get("colspan", 1), c.get("header", False))
            for c in d["cells"]
        ]
        return Table(d["rows"], d["cols"], cells, d.get("header_rows", 0), d.get("caption", ""))
    if t == "math":
        return MathBlock(d["tex"])
    if t == "image":
        return Image(d.get("alt", ""), d.get("src", ""))
    if t == "code":
        return CodeBlock(d["text"], d.get("lang", ""))
    if t == "rule":
        return Rule()
    raise ValueError(f"unknown block type {t!r}")


def block_to_dict(b: Block) -> dict[str, Any]:
    """One block in the JSON form of the model (the journal keeps text-layer pages' blocks so)."""
    return _block_to_dict(b)


def block_from_dict(d: dict[str, Any]) -> Block:
    """The block ``block_to_dict`` wrote."""
    return _block_from_dict(d)
