"""Tables on page images (scans), for the Tesseract engine: ruled grids and tables with
horizontal rules only, read with Tesseract into the document model's blocks (paragraphs and
tables) and the same page as inline Markdown with HTML tables (the page's text).

Contract:

- ``image_segments(gray) -> (h, v)``: the long dark horizontal/vertical runs of a page image
  (a scanned ruled table's lines), in pixels, numpy only; long against the page's size and
  against its strokes' thickness (``stroke_width``), so the letters of one line of text scaled
  up to the page size are no rules.
- ``find_image_grids(gray, segments=None, light=None) -> list[Grid]`` (ruled tables of at least 2 rows and 2
  columns: thin rules, light grey or dark, ``daemon.pages.scanrules``, then dark runs where no such
  grid is) and ``find_image_rule_regions(gray, grids, segments=None, light=None)`` (regions
  between long thin horizontal rules, light grey and skewed ones too, with no vertical rule along
  half their height, and no grid over a quarter of their area): no OCR (~10 ms CPU per 1540 px
  page for the dark rules, bench/RESULTS.md; the light ones add ~50-100 ms, "Tables" there); the
  engine runs them on every page it reads, with ``image_segments`` and ``scanrules.light_segments``
  computed once for both (``segments``, ``light``).
- ``find_unruled_tables(layout, taken) -> list[Grid]``: tables with no rules at all (an
  invoice's item list) among the words of the engine's own pass (``layout``, no further OCR),
  outside the boxes ``taken`` by ruled tables: at least ``tables.MIN_UNRULED_ROWS`` consecutive text
  rows of at least ``tables.MIN_UNRULED_COLS`` cells that line up in columns (``tables.text_grid``),
  with short cells (three columns of prose have long ones), and not code, formulas, a list, a
  table of contents or a short block without a header (an address block):
  ``unruled.unruled_grids``, which the text layer's words go through too.
  Filled grids (cell texts set).
- ``read_scanned_page(api, gray, grids, regions, words=None) -> ScannedPage | None``: the page read with a
  Tesseract API (``daemon.tessapi.TessApi``), its rules painted over first
  (``scanrules.erase_rules``): a region becomes a table when its words line up in columns (``tables.text_grid``), ruled tables are read cell by cell (a
  grid whose cells read below ``MIN_GRID_CONF`` is dropped: lines of a picture, not a table; so
  is one with text in one row or one column only: a title band; and, with ``words``, one whose
  cells do not keep the words the engine's page read has over it (``region_tokens`` through
  ``daemon.pages.tablecheck.check``: it stays page text and the reason goes to ``rejected``,
  unless its cells read ``SURER_CELLS`` surer than the page read over it, ``region_conf``: then
  it stays a table and ``rejected`` says so),
  the text outside the tables
  in bands between them; in page order, the paragraphs
  (``daemon.document.lines.plain_paragraphs``) and tables (``grid_table``) as blocks of
  ``daemon.document.model`` (the writers take them as they are, as a text layer's), and the same
  page as text: the paragraphs and the tables as HTML (``grid_html``; the journal, the raw file
  and the JSON's page texts), or None when no table was found after all. With ``words`` (the engine's
  read of the same page image, ``PageLayout``) the regions' words and the text between the tables
  are taken from it, in its blocks and lines, and only the ruled cells are read again: the bands
  were a second read of the whole page (0.9 s of the 7.5 s a page cost on average, 3.3 s on a
  manual page with one unruled table; issue 26). Without, each is read from the image.

The geometry (rules -> grid) is ``daemon.pages.tables``', shared with born-digital PDFs.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from daemon.document.lines import plain_paragraphs
from daemon.document.markdown import markdown_paragraphs
from daemon.document.model import Block, Table
from daemon.document.tables import ocr_table
from daemon.layerrecords import Grid, GridCell
from daemon.models import PageLayout
from daemon.pages.inkruns import (
    INK,
    MIN_RULE_SHARE,
    MIN_RULE_STROKES,
    _runs,
    closed_gaps,
    closed_gaps_down,
    stroke_width,
)
from daemon.pages.scanrules import Runs, erase_rules, light_grids, light_segments
from daemon.pages.tablecheck import SCAN_REPEATED_SHARE, check, tokens
from daemon.pages.tables import (
    SPECK,
    Seg,
    Word,
    find_grids,
    merge_collinear,
    reading_order,
    rule_regions,
    text_grid,
)
from daemon.pages.unruled import unruled_grids
from daemon.tessapi import PSM, word_layout

log = logging.getLogger(__name__)

#: A ruled grid is kept as a table only when Tesseract's mean confidence over its non-empty cells
#: is at least this. Measured (debug log, tune split + the tests' tables): grids drawn by a photo,
#: a map or a screenshot 30-39 (c03-29, Vicksburg, a Swedish screenshot), real tables 92-100.
MIN_GRID_CONF = 60.0

#: The page read's words over a ruled grid that the check of its cells wants held
#: (``region_tokens``; repeats are counted against all of them) are read at least this sure: its rules read as letters ("acne", "Senet",
#: "falas" over the grey-ruled test invoice's grid) at 0-42, its words at 80-97.
MIN_REFERENCE_CONF = 50.0

#: A ruled table whose cells do not hold the page read's words is kept all the same when its
#: cells' mean confidence is at least this much above the page read's over it (``region_conf``).
#: Measured (tune split of bench/tables): at 10, the scanned Chinese statement (cells 64, page
#: 60; cell F1 0.69) was lost; the timesheets whose skew cut their cells' words read 80-81
#: against the page's 92-94.
SURER_CELLS = 0.0

def image_segments(gray: Any) -> tuple[list[Seg], list[Seg]]:
    """Horizontal and vertical rules of a grayscale page image (PIL "L" or a 2-D array): dark
    runs at least ``MIN_RULE_SHARE`` of the shorter edge and ``MIN_RULE_STROKES`` stroke widths
    long."""
    a = np.asarray(gray)
    if a.ndim != 2 or a.size == 0:
        return [], []
    ink = a < INK
    # Close 1 px gaps along each direction (broken scanned lines, a slight skew's steps).
    hmask, vmask = closed_gaps(ink), closed_gaps_down(ink)
    min_len = max(20, int(MIN_RULE_SHARE * min(a.shape)))
    min_len = max(min_len, int(MIN_RULE_STROKES * stroke_width(ink, min_len)))
    h = [Seg(s, r, e, r) for r, s, e in _runs(hmask, min_len)]
    v = [Seg(r, s, r, e) for r, s, e in _runs(vmask.T, min_len)]
    return h, v


def find_image_grids(
    gray: Any, segments: tuple[list[Seg], list[Seg]] | None = None, light: tuple[list[Seg], list[Seg]] | None = None,
) -> list[Grid]:
    """Ruled tables on a page image (pixels): thin rules, light or dark (``scanrules``), then dark
    runs; ``segments``: the page's ``image_segments``, ``light``: its ``light_segments``, if known."""

    # thin rules, light grey or dark, chained across a skewed scan's staircase (an invoice's
    # grey item table was lost, a skewed dark grid got sliver rows: issue 26); then grids of
    # the dark runs where there is none (rules thicker than a thin rule). With ``light``:
    # ``light_grids`` with nothing taken, on thin rules found once for this and the rule regions
    # (``light_segments`` is 0.1 s of a 300 dpi page's 0.35 s table search, issue 26)
    if light is None:
        grids = light_grids(gray, [])
    else:
        lh, lv = light
        grids = [g for g in find_grids(lh, lv, tol=4.0) if g.n_rows >= 2] if len(lh) >= 2 and len(lv) >= 2 else []
    h, v = segments if segments is not None else image_segments(gray)
    # one row of boxes on a page image is a form field or a frame around a title (three such
    # "tables" of one row on a scanned web page in the tune set), not a table
    if len(h) >= 2 and len(v) >= 2:
        grids += [g for g in find_grids(h, v, tol=4.0)
                  if g.n_rows >= 2 and not any(_overlaps(g.bbox, t.bbox) for t in grids)]
    return grids


@dataclass
class RuleRegion:
    """A region between horizontal rules (no vertical rules) that may hold a table."""

    bbox: tuple[float, float, float, float]
    rules: list[float]  # y of every rule in it, top to bottom


#: A rule is at most this many px thick (a thicker run of long rows is a filled area).
MAX_RULE_THICKNESS = 6


def find_image_rule_regions(
    gray: Any, grids: list[Grid], segments: tuple[list[Seg], list[Seg]] | None = None,
    light: tuple[list[Seg], list[Seg]] | None = None,
) -> list[RuleRegion]:
    """Regions of a page image between long horizontal rules (>= a quarter of the page wide)
    that no vertical rule touches and no ruled grid covers (``segments``: ``image_segments``)."""
    a = np.asarray(gray)
    if a.ndim != 2 or a.size == 0:
        return []

    hgt, wid = a.shape
    # thin light or dark runs, joined below into rules: a rule on a skewed scan is a staircase
    # of runs, none a quarter of the page long (the generated scans' grey row rules were lost)
    thin, _ = light if light is not None else light_segments(a)
    if len(thin) < 2:
        return []
    _, v = segments if segments is not None else image_segments(gray)
    # The rules as ``rule_regions`` joins them: one drawn in pieces a few px apart (each cell's
    # own border, a scanned line with a break) spans the region only once joined.
    joined = merge_collinear([(s.y0, s.x0, s.x1) for s in thin], tol=4.0)
    out = []
    for box in rule_regions(thin, v, tol=4.0, min_width=wid / 4, max_two_rule_height=0.4 * hgt):
        # a small grid inside (the lines of a picture in a cell) leaves the region a table
        if any(_overlaps(box, g.bbox) and _area(g.bbox) > 0.25 * _area(box) for g in grids):
            continue
        ys = sorted(y for y, x0, x1 in joined if box[1] - 1 <= y <= box[3] + 1 and x0 <= box[0] + 12 and x1 >= box[2] - 12)
        out.append(RuleRegion(box, ys))
    return out


def _area(b: tuple[float, float, float, float]) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _ocr_words(api: Any, img: Any, box: tuple[int, int, int, int]) -> list[Word]:
    """Words of a crop of the page image with their boxes in page pixels (font size taken as
    1.2x the word box's height). The words come from ``daemon.tessapi.word_layout`` (the engine's), the one
    place that makes Tesseract's words a layout (it leaves out the empty words tesserocr raises
    on: a crop of nothing but fill-in lines has one)."""
    x0, y0, x1, y1 = box
    if x1 - x0 < 8 or y1 - y0 < 8:
        return []
    api.set_psm(PSM.AUTO)
    api.set_image(img.crop(box))
    api.recognise()
    layout = word_layout(api, (x1 - x0, y1 - y0))
    return [(b[0] + x0, b[1] + y0, b[2] + x0, b[3] + y0, wd.text, 1.2 * (b[3] - b[1]))
            for ln in layout.lines for wd in ln.words for b in [wd.box]]


def _layout_words(layout: PageLayout, box: tuple[int, int, int, int]) -> list[Word]:
    """The words of ``layout`` whose centre lies in ``box``, as ``_ocr_words`` gives them."""
    x0, y0, x1, y1 = box
    return [(float(b[0]), float(b[1]), float(b[2]), float(b[3]), wd.text, 1.2 * (b[3] - b[1]))
            for ln in layout.lines for wd in ln.words for b in [wd.box]
            if x0 <= (b[0] + b[2]) / 2 < x1 and y0 <= (b[1] + b[3]) / 2 < y1]


def _region_grid(api: Any, img: Any, region: RuleRegion, layout: PageLayout | None = None) -> Grid | None:
    """A rule region's words made into a table: read with Tesseract from the rule-erased page
    image ``img``; with ``layout`` (the page read) only when its words there line up in columns
    already (else None), and its words are the table when the read of the region makes none.
    Tables without a rule above the header (rules under the header and between rows only) get
    the line above the first rule as header row when its words sit inside the columns found."""
    x0, y0, x1, y1 = (int(v) for v in region.bbox)
    box = (x0, y0, x1, y1)
    # The page read's words are the cheap test: a region whose words do not line up in columns
    # there is no table (a manual page's code boxes made one region of most of the page: reading
    # it again cost 2-3 s, issue 26). One that is a table is read again from the image with its
    # rules painted out: the page read, made with the rules in place, merged a statement's
    # header cells and read the grey rules beside its amounts as "=«=*~" (cell F1 1.0 -> 0.28 on
    # the table set's gen-statement-it-scan when the page read's words were used for the cells).
    # Where the region's own read makes no table, the page read's does (the gate's Chinese table
    # with grey rules: its crop read as one column).
    def page_read(b: tuple[int, int, int, int]) -> list[Word]:
        return _layout_words(layout, b) if layout is not None else []

    def region_read(b: tuple[int, int, int, int]) -> list[Word]:
        return _ocr_words(api, img, b)

    cheap = text_grid(page_read(box), region.bbox, region.rules) if layout is not None else None
    if layout is not None and cheap is None:
        return None
    words = region_read
    g = text_grid(region_read(box), region.bbox, region.rules)
    if g is None:
        g, words = cheap, page_read
    if g is None or len(region.rules) < 2:  # (no band height to look above the first rule with)
        return g
    band = int(min(b - a for a, b in zip(region.rules, region.rules[1:], strict=False)))
    head = words((x0, max(0, y0 - band), x1, y0))
    cols = ["" for _ in range(g.n_cols)]
    for w in reading_order(head, sorted(w[5] for w in head)[len(head) // 2] if head else 1.0):
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


def _cell_text(api: Any, bbox: tuple[float, float, float, float], width: int, height: int) -> tuple[str, float]:
    """A ruled cell's text and Tesseract's mean confidence for it ("", 0 for an empty cell)."""
    inset = 4  # keep the rules out of the cell (they read as | or _)
    x0, y0 = int(bbox[0]) + inset, int(bbox[1]) + inset
    x1, y1 = min(width, int(bbox[2]) - inset), min(height, int(bbox[3]) - inset)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return "", 0.0
    # marks alone ("|", ":", "~") are what Tesseract reads from a rule's remains or a speck
    txt = " ".join(t for t in api.read_rect(x0, y0, x1 - x0, y1 - y0, PSM.SINGLE_BLOCK).split() if not SPECK.match(t))
    return txt, (api.mean_conf() if txt else 0.0)


def _read_cells(api: Any, img: Any, grid: Grid) -> float:
    """Fill a ruled grid's cells from the page image; the mean confidence of its non-empty cells
    (0 when none has text)."""
    w, h = img.size
    api.set_image(img)
    confs = []
    for c in grid.cells:
        c.text, conf = _cell_text(api, c.bbox, w, h)
        if c.text:
            confs.append(conf)
    return sum(confs) / len(confs) if confs else 0.0


def region_conf(grid: Grid, layout: PageLayout) -> float:
    """The page read's mean word confidence over ``grid`` (words whose centre lies in it; 0 when
    none, 100 when not known)."""
    x0, y0, x1, y1 = grid.bbox
    confs = [wd.conf for ln in layout.lines for wd in ln.words
             if x0 <= (wd.box[0] + wd.box[2]) / 2 <= x1 and y0 <= (wd.box[1] + wd.box[3]) / 2 <= y1]
    if any(c < 0 for c in confs):
        return 100.0
    return sum(confs) / len(confs) if confs else 0.0


def region_tokens(grid: Grid, layout: PageLayout, min_conf: float = 0.0) -> list[str]:
    """The page read's words over ``grid`` (a quarter of a word's box or more inside the grid's,
    so that a word the grid's edge cuts counts), as ``tablecheck.tokens``; only those read with
    a confidence of ``min_conf`` or more (or of unknown confidence)."""
    x0, y0, x1, y1 = grid.bbox

    def inside(b: tuple[int, int, int, int]) -> bool:
        over = (max(b[0], x0), max(b[1], y0), min(b[2], x1), min(b[3], y1))
        return _area(over) >= 0.25 * max(1.0, _area(b))

    return [t for ln in layout.lines for wd in ln.words
            if inside(wd.box) and (wd.conf < 0 or wd.conf >= min_conf) for t in tokens(wd.text)]


@dataclass(frozen=True)
class ScannedPage:
    """A page read with its tables (``read_scanned_page``): its blocks, and its text."""

    blocks: tuple[Block, ...]  # paragraphs and tables, in page order
    text: str  # the same page as inline Markdown paragraphs and HTML tables


def grid_table(grid: Grid, header_rows: int = 1) -> Table | None:
    """A grid whose cells have text -> a :class:`~daemon.document.model.Table`: its rows of
    cells in the order ``grid_html`` writes them (``daemon.document.tables.ocr_table``)."""
    rows: dict[int, list[tuple[str, int, int, bool]]] = {}
    for c in grid.cells:
        rows.setdefault(c.row, []).append((c.text, c.rowspan, c.colspan, c.row < header_rows))
    return ocr_table([rows.get(r, []) for r in range(grid.n_rows)])


def grid_html(grid: Grid, header_rows: int = 1) -> str:
    """A grid whose cells have text -> an HTML table (the page's text; ``grid_table`` is the
    same table in the document model)."""
    rows: dict[int, list[str]] = {}
    for c in grid.cells:
        tag = "th" if c.row < header_rows else "td"
        span = (f' rowspan="{c.rowspan}"' if c.rowspan > 1 else "") + (f' colspan="{c.colspan}"' if c.colspan > 1 else "")
        rows.setdefault(c.row, []).append(f"<{tag}{span}>{html.escape(c.text, quote=False)}</{tag}>")
    body = "".join(f"<tr>{''.join(rows.get(r, []))}</tr>" for r in range(grid.n_rows))
    return f"<table>{body}</table>"


def _layout_text(layout: PageLayout, top: float, bottom: float, tables: list[Grid]) -> list[str]:
    """The paragraphs of ``layout`` between ``top`` and ``bottom`` (word centres), words inside
    a table's box left out: one per Tesseract block, its lines joined with newlines."""
    paras: list[list[str]] = []
    block = None
    for ln in layout.lines:
        kept = [wd.text for wd in ln.words if top <= (wd.box[1] + wd.box[3]) / 2 < bottom
                and not any(g.bbox[0] - 3 <= (wd.box[0] + wd.box[2]) / 2 <= g.bbox[2] + 3
                            and g.bbox[1] - 3 <= (wd.box[1] + wd.box[3]) / 2 <= g.bbox[3] + 3 for g in tables)]
        if not kept:
            continue
        if ln.block != block or not paras:
            paras.append([])
            block = ln.block
        paras[-1].append(_CJK_SPACE.sub("", " ".join(kept)))
    return ["\n".join(p) for p in paras]


# no space between two CJK words (the engine's plain text has none either: tesseract.tidy_text)
_CJK = r"[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
_CJK_SPACE = re.compile(rf"(?<={_CJK}) +(?={_CJK})")
_TOKEN = re.compile(rf"{_CJK}|(?:(?!{_CJK})[^\W_])+")


def read_scanned_page(
    api: Any, gray: Any, grids: list[Grid], regions: list[RuleRegion] | None = None, words: PageLayout | None = None,
    runs: Runs | None = None, rejected: list[str] | None = None,
) -> ScannedPage | None:
    """Read a page image that has ruled tables (``grids``) or regions between horizontal rules
    (``regions``): a region becomes a table when its words line up in columns (``text_grid``);
    then bands of text between the tables (tables whited out) with the API's page segmentation,
    or from ``words`` (see the contract), and every ruled table cell by cell. Returns the
    paragraphs and tables in page order (``ScannedPage``), or None when no table was found after all.
    ``runs``: the page's ``scanrules.rule_runs``, if known. A ruled table whose cells do not keep
    the words (``tablecheck.check``) stays page text, and why is appended to ``rejected``. The
    API's image and mode are reset."""
    from PIL import Image, ImageDraw


    img = gray if isinstance(gray, Image.Image) else Image.fromarray(np.asarray(gray))
    img = erase_rules(img.convert("L") if img.mode != "L" else img, runs)  # rules confuse Tesseract's layout
    w, h = img.size
    grids = list(grids)
    try:
        for region in regions or []:
            g = _region_grid(api, img, region, words)
            if g is not None:
                grids.append(g)
    finally:
        api.set_psm(PSM.AUTO)
        api.clear()
    if not grids:
        return None
    # Ruled grids are read cell by cell first: lines in a photo, a drawing or a screenshot make
    # grids too, whose cells read as junk; such a grid is no table, its area stays page text.
    try:
        kept = []
        for g in grids:
            conf = 100.0 if g.filled else _read_cells(api, img, g)
            # the page read's words the cells kept (a grid whose cells cut its words or lost its
            # rows is no better than the page text: issue 26, the Debian package list)
            # the page read's words the cells kept (a grid whose cells cut its words or lost its
            # rows is no better than the page text: issue 26, the Debian package list; issue 32,
            # a timesheet whose rows after the fourth read as junk): ``tablecheck.check``
            verdict = None if g.filled or words is None else check(
                [t for c in g.cells for t in tokens(c.text)], region_tokens(g, words, MIN_REFERENCE_CONF),
                SCAN_REPEATED_SHARE, region_tokens(g, words))
            log.debug("ruled grid %dx%d at %s: mean cell confidence %.0f, %s%s",
                      g.n_rows, g.n_cols, g.bbox, conf, verdict,
                      "" if verdict is None or verdict.ok else f", missing {verdict.missing}")
            # text in one row or one column only: a title band drawn as boxes, a frame (issue 26)
            texts = [c for c in g.cells if c.text]
            if not (conf >= MIN_GRID_CONF and len({c.row for c in texts}) >= 2 and len({c.col for c in texts}) >= 2):
                continue  # no table (lines of a picture, a title band): nothing to report
            if verdict is not None and not verdict.ok:
                # the page read is no truth either: over a ruled table it can be the worse read
                # (the table set's scanned Chinese statement: "1639921" for "16,399.21" at 90).
                # The cells stay the table when they read clearly surer than the page did over
                # them, and the sidecar says that their words differ from the page read's.
                page_conf = region_conf(g, words) if words is not None else 100.0
                surer = conf >= page_conf + SURER_CELLS
                if rejected is not None:
                    what = (f"kept: its cells read surer than the page ({conf:.0f} against {page_conf:.0f})"
                            if surer else f"rejected (cells read at {conf:.0f}, the page at {page_conf:.0f})")
                    rejected.append(f"table of {g.n_rows} rows x {g.n_cols} columns {what}: {verdict.reason}")
                if not surer:
                    continue
            kept.append(g)
    finally:
        api.set_psm(PSM.AUTO)
        api.clear()
    grids = kept
    if not grids:
        return None
    grids.sort(key=lambda g: (g.bbox[1], g.bbox[0]))
    parts: list[str | Grid] = []  # paragraphs and tables, in page order
    if words is not None:
        top = 0.0
        for g in [*grids, None]:
            bottom = g.bbox[1] if g is not None else float(h)
            # the same paragraphs as the image branch below: Tesseract's blocks as its chunks
            parts += plain_paragraphs("\n\n".join(_layout_text(words, top, bottom, grids)))
            if g is None:
                break
            if any(c.text for c in g.cells):
                parts.append(g)
            top = max(top, g.bbox[3])
        return _scanned(parts)
    blank = img.copy()
    draw = ImageDraw.Draw(blank)
    for grid in grids:
        x0, y0, x1, y1 = grid.bbox
        draw.rectangle([x0 - 3, y0 - 3, x1 + 3, y1 + 3], fill=255)
    top = 0.0
    try:
        seq: list[Grid | None] = [*grids, None]
        for g in seq:
            bottom = g.bbox[1] if g is not None else float(h)
            if bottom - top >= 12:
                api.set_psm(PSM.AUTO)
                # a crop, not SetRectangle: with PSM.AUTO, tesserocr 2.13 read nothing in a
                # rectangle that a crop of the same pixels reads
                api.set_image(blank.crop((0, int(top), w, int(bottom))))
                # the same paragraphs as a page without tables (lines kept where they are lines)
                parts.extend(plain_paragraphs(api.text()))
            if g is None:
                break
            if any(c.text for c in g.cells):
                parts.append(g)
            top = max(top, g.bbox[3])
    finally:
        api.set_psm(PSM.AUTO)
        api.clear()
    return _scanned(parts)


def _scanned(parts: list[str | Grid]) -> ScannedPage:
    """The page's paragraphs (``plain_paragraphs``'s) and grids as blocks and as text."""
    blocks: list[Block] = []
    for part in parts:
        if isinstance(part, str):
            blocks += markdown_paragraphs([part])
        elif (table := grid_table(part)) is not None:
            blocks.append(table)
    return ScannedPage(tuple(blocks), "\n\n".join(p if isinstance(p, str) else grid_html(p) for p in parts))


def find_unruled_tables(layout: PageLayout | None, taken: list[tuple[float, float, float, float]]) -> list[Grid]:
    """Unruled tables among the words of ``layout`` (see the contract): its word boxes (font
    size taken as 1.2x a box's height) through ``tables.unruled_grids``, the geometry the text
    layer's words go through too."""
    if layout is None or not layout.has_words:
        return []
    words: list[Word] = [
        (float(b[0]), float(b[1]), float(b[2]), float(b[3]), wd.text, 1.2 * (b[3] - b[1]))
        for ln in layout.lines for wd in ln.words for b in [wd.box]
    ]
    return unruled_grids(words, taken)  # (it drops empty boxes)
