"""The records of a PDF page's text layer and of a table's grid, shared by the stages that make them
(``daemon.pages.textlayer``, ``daemon.pages.tables``, ``daemon.pages.scantables``) and the one that
turns them into document blocks (``daemon.document.layout``).

Contract: plain dataclasses, no I/O, no logic beyond derived properties.

- ``Span`` (a run of text in one style: size, bold, italic, mono, superscript), ``Line`` (spans
  with a bounding box and a direction), ``TextBlock`` (lines), ``Verdict`` (whether a page's text
  layer is used, and the measurements that decided it: ``textlayer.judge``) and ``PageLayer`` (one
  page's verdict, text blocks and tables), as ``textlayer.read_layer`` makes them.
- ``Grid`` (a table: column edges ``xs``, row edges ``ys``, anchor cells row-major, ``filled`` when
  the cells hold their text already) of ``GridCell`` (row, column, spans, box, text), as
  ``tables.find_grids``/``text_grid`` and the scanned-table finder make them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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


@dataclass
class Span:
    text: str
    bbox: tuple[float, float, float, float]
    size: float
    bold: bool
    italic: bool
    mono: bool
    sup: bool = False  # set smaller and raised above its line's baseline (a footnote mark, m²)


@dataclass
class Line:
    spans: list[Span]
    bbox: tuple[float, float, float, float]
    horizontal: bool = True  # written left to right (PyMuPDF's line direction (1, 0))

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.spans)


@dataclass
class TextBlock:
    lines: list[Line]
    bbox: tuple[float, float, float, float]


@dataclass
class Verdict:
    """Whether a page's text layer is used, and the measurements that decided it."""

    use: bool
    reason: str  # "text" when used; otherwise why not ("no text layer", "glyph soup", ...)
    chars: int = 0  # visible non-space characters
    invisible: int = 0  # invisible non-space characters (render mode 3)
    bad: float = 0.0  # share of bad characters
    wordish: float = 1.0  # share of letters, digits, common punctuation
    image_cover: float = 0.0  # share of the page covered by images
    math: float = 0.0  # share of math glyphs


@dataclass
class PageLayer:
    index: int
    width: float
    height: float
    verdict: Verdict
    blocks: list[TextBlock] = field(default_factory=list)
    tables: list[Grid] = field(default_factory=list)
