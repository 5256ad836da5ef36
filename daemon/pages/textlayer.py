"""A PDF page's own text layer: is it real text, and what does it say (spans, fonts, tables).

Contract:

- ``read_or_render(path, index, opts, lines=False) -> ImagePage | LayerPage``: the render
  stage's entry point for one page (module-level, picklable result, run in render worker
  processes). With ``opts.text_layer == "ocr"``, or for images, the page is rendered
  (``render.render_page``: an ``ImagePage``). Otherwise the PDF page's text layer is judged
  (``judge``); a real text layer gives a ``LayerPage`` (model blocks built by
  ``daemon.document.layout``, their Markdown, and the verdict's measurements; the engine never
  sees the page), anything else an ``ImagePage`` whose ``text_layer_note`` says why the layer was
  not used. Optional stages that failed (the layer's tables and layout, orientation,
  crop, line boxes) are in ``degraded``. Raises what ``render_page`` raises. The last two PDFs stay open in the
  calling process (a worker reads a document's pages in a row), used under a lock.
- ``read_layer(page, mode, math_to_engine) -> PageLayer``: one PyMuPDF page -> the verdict plus,
  when the layer is used, its text blocks (lines of styled spans) and tables: ruled ones from
  the vector rules (``tables.find_grids``; a grid of one row is a header band joined to the
  unruled rows under it, ``tables.header_body``, or no table: a title band; a grid with text
  in one column is a frame), ones with horizontal rules only (``rule_regions`` +
  ``rules_table``: rows between the rules, the header above the first rule) and ones without
  any rule from the words of the layer's horizontal lines (``unruled.unruled_grids``, the
  function the Tesseract engine uses on scans); no table search on a page of more than
  ``MAX_RULES`` strokes (a drawing). Then ``keep_words``: a table found twice over one region is
  kept once, and one whose cells would not hold the words of the lines it takes
  (``daemon.pages.tablecheck``) stays text, recorded in ``degraded`` (``text_layer_tables``).
  One ``get_text("dict")`` pass serves both the verdict and the extraction (a page with a spacing
  accent next to a letter, "pu`o", is read again as ``rawdict``: an accent glyph over a letter's
  box is combined with it, "può"). Span text is Unicode NFC; a short span set smaller and raised
  above its line's baseline is ``Span.sup`` (a footnote mark: the layout writes it
  ``<sup>2</sup>``, so it is never glued to the next word as "2Vielmehr").

The rules (``judge``); numbers measured on the documents named in bench/RESULTS.md
("Text layer"):

- fewer than ``MIN_CHARS`` visible non-space characters: no text layer (a scan, or text drawn
  as curves) -> OCR;
- more invisible characters (render mode 3, alpha 0) than visible ones: an OCR layer another
  program put over a scan -> OCR again, unless ``text_layer: any`` (then the invisible text is
  used as it is);
- more than ``MAX_BAD`` of the characters are U+FFFD, private-use or control characters, or
  ``(cid:N)`` placeholders (fonts without a usable ToUnicode map), or fewer than ``MIN_WORDISH``
  of them are letters, digits or common punctuation: glyph soup -> OCR;
- images cover more than ``MAX_IMAGE_COVER`` of the page while the text is short
  (< ``IMAGE_TEXT_CHARS``): a scan with a caption or stamp text -> OCR;
- with a VLM engine (``math_to_engine``), pages whose characters are more than ``MAX_MATH``
  math glyphs (TeX math fonts CMMI/CMSY/CMEX/MSAM/MSBM, *Math* fonts, Symbol, or Unicode math
  operators): the VLM writes the formulas as LaTeX, which the text layer cannot (it holds them
  as loose glyph fragments) -> the engine. Tesseract cannot read formulas either, so without a
  VLM the text layer is used.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.document.layout import layer_page
from daemon.layerrecords import Grid, Line, PageLayer, Span, TextBlock, Verdict
from daemon.models import RenderOptions
from daemon.pagerecord import LayerPage, RenderedPage
from daemon.pages import probe, render
from daemon.pages.probe import mupdf
from daemon.pages.tablecheck import check, overlapping, tokens
from daemon.pages.tables import (
    Seg,
    find_grids,
    header_body,
    region_rules,
    rule_regions,
    rules_table,
)
from daemon.pages.unruled import unruled_grids
from daemon.stages import Degraded, Stage, optional
from daemon.tessapi import find_lines

if TYPE_CHECKING:
    import pymupdf

#: Visible non-space characters a page needs for its text layer to count (a page number or a
#: stamp alone is not a page's text). Scans in the real-world set carry 0 characters; the
#: shortest born-digital page there (a title page) ~40.
MIN_CHARS = 16
#: Share of bad characters (U+FFFD, private use, controls, "(cid:N)") above which a layer is
#: glyph soup. Born-digital pages we measured have 0-0.3 % (a stray private-use bullet); pages of
#: fonts without ToUnicode have 60-100 %.
MAX_BAD = 0.05
#: Share of letters/digits/common punctuation below which a layer is soup (custom-encoded
#: fonts that map glyphs to random ASCII symbols). Code listings measured 0.80 and above.
MIN_WORDISH = 0.5
#: A page mostly covered by images with little text over it is a scan (with a caption).
MAX_IMAGE_COVER = 0.6
IMAGE_TEXT_CHARS = 400
#: Axis-parallel strokes on a page beyond which it is a drawing, not tables (the table search
#: is quadratic in rules; the Debian reference's busiest table page has ~200).
MAX_RULES = 4000
#: Share of math glyphs from which a VLM engine reads the page instead (see the docstring).
MAX_MATH = 0.03

_MATH_FONT = re.compile(r"CMMI|CMSY|CMEX|MSAM|MSBM|MATH|SYMBOL|STIX|ESINT|RSFS|EUSM|EUFM|EUEX", re.I)
_CID = re.compile(r"\(cid:\d+\)")
_MONO_FONT = re.compile(r"mono|courier|consol|menlo|typewriter|\bcmtt|LMMono|SFTT|Inconsolata|code", re.I)
_PUNCT = set(".,;:!?'\"()[]{}-–—/\\%&@#*+=<>_|~^$€£¥§°«»„“”‘’…·•")


# Characters that are no text: U+FFFD (MuPDF's "no Unicode for this glyph"), private use,
# controls other than tab/newline.
_BAD = re.compile("[\ufffd\ue000-\uf8ff\U000f0000-\U0010ffff\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Not letters, digits, marks or common punctuation (\w covers letters and digits of every script).
_NOT_WORDISH = re.compile("[^\\w\\s" + re.escape("".join(sorted(_PUNCT))) + "\u0300-\u036f]")
# Math operators, arrows, math alphanumerics (the relations and operators of running text, such
# as + = < > ± ×, are not counted).
_MATH_CHAR = re.compile("[\u2200-\u22ff\u27c0-\u27ef\u2980-\u2aff\U0001d400-\U0001d7ff]")


@functools.lru_cache(maxsize=1024)
def _math_font(font: str) -> bool:
    return bool(_MATH_FONT.search(font))


def _image_cover(page: pymupdf.Page, area: float) -> float:
    """Share of the page covered by images (overlaps counted once, on a coarse 40x40 raster)."""
    try:
        infos = page.get_image_info()
    except Exception:
        return 0.0
    rects = [mupdf().Rect(i["bbox"]) & page.rect for i in infos]
    rects = [r for r in rects if not r.is_empty]
    if not rects:
        return 0.0
    if len(rects) == 1:
        return min(1.0, rects[0].get_area() / area)
    n = 40
    pr = page.rect
    hit = 0
    for gy in range(n):
        y = pr.y0 + (gy + 0.5) * pr.height / n
        for gx in range(n):
            x = pr.x0 + (gx + 0.5) * pr.width / n
            if any(r.x0 <= x <= r.x1 and r.y0 <= y <= r.y1 for r in rects):
                hit += 1
    return hit / (n * n)


def judge(spans: list[dict[str, Any]], page: pymupdf.Page, mode: str, math_to_engine: bool) -> Verdict:
    """The rules of the module docstring over a page's raw spans (``get_text("dict")``)."""
    vis = inv = math = 0
    texts: list[str] = []
    for s in spans:
        text = s.get("text", "")
        n = len(text) - sum(map(text.count, " \t\n\u00a0"))
        if n <= 0:
            continue
        if s.get("alpha", 255) == 0:
            inv += n
            if mode != "any":
                continue
        else:
            vis += n
        texts.append(text)
        math += n if _math_font(s.get("font", "")) else len(_MATH_CHAR.findall(text))
    joined = "".join(texts)
    bad = len(_BAD.findall(joined)) + sum(len(c) for c in _CID.findall(joined))
    wordish = vis + (inv if mode == "any" else 0) - len(_NOT_WORDISH.findall(joined))
    used = vis + (inv if mode == "any" else 0)
    area = max(1.0, page.rect.width * page.rect.height)
    v = Verdict(False, "", vis, inv, bad / max(1, used), wordish / max(1, used), 0.0, math / max(1, used))
    if mode != "any" and inv > vis and inv >= MIN_CHARS:
        v.reason = "invisible OCR layer over a scan"
    elif used < MIN_CHARS:
        v.reason = "no text layer"
    elif v.bad > MAX_BAD:
        v.reason = "glyph soup (unmapped or private-use glyphs)"
    elif v.wordish < MIN_WORDISH:
        v.reason = "glyph soup (not words)"
    else:
        # an OCR layer the user trusts (``any``) lies over an image by nature
        ocr_layer = mode == "any" and inv > vis
        v.image_cover = _image_cover(page, area) if used < IMAGE_TEXT_CHARS and not ocr_layer else 0.0
        if v.image_cover > MAX_IMAGE_COVER:
            v.reason = "mostly image"
        elif math_to_engine and v.math > MAX_MATH:
            v.reason = "math set as glyphs (the VLM writes LaTeX)"
        else:
            v.use, v.reason = True, "text"
    return v


def vector_segments(page: pymupdf.Page) -> tuple[list[Seg], list[Seg]]:
    """Horizontal and vertical rules drawn on a page (lines, thin rectangles, rectangle edges)."""
    h: list[Seg] = []
    v: list[Seg] = []
    try:
        drawings = page.get_cdrawings()
    except Exception:
        return h, v
    for d in drawings:
        for item in d.get("items", ()):
            op = item[0]
            if op == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                if abs(y1 - y0) < 1.0 and abs(x1 - x0) > 2:
                    h.append(Seg(min(x0, x1), y0, max(x0, x1), y0))
                elif abs(x1 - x0) < 1.0 and abs(y1 - y0) > 2:
                    v.append(Seg(x0, min(y0, y1), x0, max(y0, y1)))
            elif op == "re":
                x0, y0, x1, y1 = item[1]
                x0, x1 = min(x0, x1), max(x0, x1)
                y0, y1 = min(y0, y1), max(y0, y1)
                if y1 - y0 < 3 and x1 - x0 > 2:  # a thin rectangle drawn as a rule
                    h.append(Seg(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2))
                elif x1 - x0 < 3 and y1 - y0 > 2:
                    v.append(Seg((x0 + x1) / 2, y0, (x0 + x1) / 2, y1))
                elif x1 - x0 > 2 and y1 - y0 > 2:  # a box (cell borders drawn as rectangles)
                    h += [Seg(x0, y0, x1, y0), Seg(x0, y1, x1, y1)]
                    v += [Seg(x0, y0, x0, y1), Seg(x1, y0, x1, y1)]
    return h, v


@functools.lru_cache(maxsize=1024)
def _font_style(font: str, flags: int) -> tuple[bool, bool, bool]:
    bold = bool(flags & 16) or bool(re.search(r"bold|black|heavy|semibold|demi", font, re.I))
    italic = bool(flags & 2) or bool(re.search(r"italic|oblique", font, re.I))
    # MuPDF's monospaced flag (8) is set from the font descriptor, which many producers leave
    # out: LiberationMono / Courier in the Debian manuals of the real-world set came without it
    mono = bool(flags & 8) or bool(_MONO_FONT.search(font))
    return bold, italic, mono


def _span(s: dict[str, Any]) -> Span:
    bold, italic, mono = _font_style(str(s.get("font", "")), int(s.get("flags", 0)))
    # U+FFFD: a glyph without a Unicode value (a few on a page pass the glyph-soup rule); it
    # says nothing, so it is left out of the text. NFC: a letter and a combining accent the PDF
    # gives apart ("o" + U+0300) are one character, as a search or a reader types it.
    text = unicodedata.normalize("NFC", str(s.get("text", "")).replace("\ufffd", ""))
    return Span(text, tuple(s["bbox"]), float(s.get("size", 0.0)), bold, italic, mono)


#: Spacing accents that PDFs draw as glyphs of their own over (or under) a letter (TeX's
#: ``\accent``, some word processors): MuPDF gives "perch´e", "pu`o". Each -> its combining mark.
SPACING_ACCENTS = {
    "`": "\u0300", "\u02cb": "\u0300", "\u00b4": "\u0301", "\u02ca": "\u0301", "^": "\u0302",
    "\u02c6": "\u0302", "~": "\u0303", "\u02dc": "\u0303", "\u00af": "\u0304", "\u02c9": "\u0304",
    "\u02d8": "\u0306", "\u02d9": "\u0307", "\u00a8": "\u0308", "\u02da": "\u030a",
    "\u02dd": "\u030b", "\u02c7": "\u030c", "\u00b8": "\u0327", "\u02db": "\u0328",
}
_ACCENT_BY_LETTER = re.compile(
    "[" + re.escape("".join(SPACING_ACCENTS)) + r"][^\W\d_]|[^\W\d_][" + re.escape("".join(SPACING_ACCENTS)) + "]"
)
#: An accent glyph belongs to a letter when at least this share of its width lies over the
#: letter's (a grave set over an "o" overlaps it wholly; a backtick or caret in running text or
#: code has an advance of its own and overlaps nothing).
ACCENT_OVERLAP = 0.4


def _combine_accents(raw: dict[str, Any]) -> None:
    """Spacing accents over letters (``rawdict`` with per-character boxes) combined with their
    letter, in place; every span gets its ``text`` from its characters."""
    for b in raw.get("blocks", ()):
        for ln in b.get("lines", ()):
            chars = [(si, ch) for si, sp in enumerate(ln["spans"]) for ch in sp.get("chars", ())]
            marks: dict[int, str] = {}
            drop: set[int] = set()
            for k, (_, ch) in enumerate(chars):
                mark = SPACING_ACCENTS.get(ch["c"])
                if mark is None:
                    continue
                ax0, ax1 = ch["bbox"][0], ch["bbox"][2]
                width = max(ax1 - ax0, 1e-3)
                for j in (k + 1, k - 1):  # TeX sets the accent before its letter; others after
                    if not 0 <= j < len(chars) or j in drop or not chars[j][1]["c"].isalpha():
                        continue
                    lx0, lx1 = chars[j][1]["bbox"][0], chars[j][1]["bbox"][2]
                    if min(ax1, lx1) - max(ax0, lx0) >= ACCENT_OVERLAP * width:
                        drop.add(k)
                        marks[j] = marks.get(j, "") + mark
                        break
            texts: list[list[str]] = [[] for _ in ln["spans"]]
            for k, (si, ch) in enumerate(chars):
                if k not in drop:
                    texts[si].append(ch["c"] + marks.get(k, ""))
            for sp, t in zip(ln["spans"], texts, strict=True):
                sp["text"] = "".join(t)


def _mark_superscripts(spans: list[Span], raw_spans: list[dict[str, Any]]) -> None:
    """A short span set at most ``SUP_SIZE`` of its line's main size whose baseline is raised by
    ``SUP_RISE`` of that size is a superscript (a footnote mark before or after a word, m²)."""
    if len(spans) < 2:
        return
    main = max(range(len(spans)), key=lambda k: len(spans[k].text.strip()))
    size = spans[main].size
    base = float(raw_spans[main].get("origin", (0.0, spans[main].bbox[3]))[1])
    for sp, rs in zip(spans, raw_spans, strict=True):
        core = sp.text.strip()
        y = float(rs.get("origin", (0.0, sp.bbox[3]))[1])
        if core and len(core) <= SUP_CHARS and sp.size <= SUP_SIZE * size and base - y >= SUP_RISE * size:
            sp.sup = True


#: Superscript spans (``_mark_superscripts``): at most this size of the line's main span, raised
#: at least this share of that size, at most this many characters (footnote marks "2", "12", "*").
SUP_SIZE = 0.8
SUP_RISE = 0.15
SUP_CHARS = 4


def read_layer(
    page: pymupdf.Page, index: int, mode: str = "auto", math_to_engine: bool = False,
    degraded: list[Degraded] | None = None,
) -> PageLayer:
    """See the module docstring. A failed table search is recorded in ``degraded``."""
    # Without TEXT_PRESERVE_LIGATURES MuPDF writes a ligature glyph (U+FB00-FB06) as its letters,
    # each with its share of the glyph's box: "diﬀerences" is found by a search for "differences".
    fz = mupdf()
    flags = fz.TEXT_PRESERVE_WHITESPACE | fz.TEXT_MEDIABOX_CLIP
    raw = page.get_text("dict", flags=flags)
    spans = [s for b in raw.get("blocks", ()) if b.get("type") == 0 for ln in b["lines"] for s in ln["spans"]]
    if any(_ACCENT_BY_LETTER.search(s.get("text", "")) for s in spans):
        # accents set as glyphs of their own: the characters' boxes say which letter each is over
        raw = page.get_text("rawdict", flags=flags)
        _combine_accents(raw)
        spans = [s for b in raw.get("blocks", ()) if b.get("type") == 0 for ln in b["lines"] for s in ln["spans"]]
    verdict = judge(spans, page, mode, math_to_engine)
    layer = PageLayer(index, page.rect.width, page.rect.height, verdict)
    if not verdict.use:
        return layer
    for b in raw.get("blocks", ()):
        if b.get("type") != 0:
            continue
        lines: list[Line] = []
        for ln in b["lines"]:
            kept = [s for s in ln["spans"] if s.get("text") and (mode == "any" or s.get("alpha", 255) != 0)]
            ss = [_span(s) for s in kept]
            _mark_superscripts(ss, kept)
            if ss and "".join(s.text for s in ss).strip():
                d = ln.get("dir", (1.0, 0.0))
                lines.append(Line(ss, tuple(ln["bbox"]), abs(d[1]) < 0.02 and d[0] > 0))
        if lines:
            layer.blocks.append(TextBlock(lines, tuple(b["bbox"])))
    # tables only add to the text: a table search that fails leaves the page's text without them
    sink = degraded if degraded is not None else []
    rejected: list[str] = []
    found: list[Grid] = optional(Stage.TEXT_LAYER_TABLES, lambda: _find_tables(page, layer), list, sink)
    layer.tables = optional(Stage.TEXT_LAYER_TABLES, lambda: keep_words(layer, found, rejected), list, sink)
    # a table that would have lost or repeated words stays text: the sidecar says so (issue 32)
    sink.extend(Degraded(Stage.TEXT_LAYER_TABLES.value, why) for why in rejected)
    return layer


def keep_words(layer: PageLayer, tables: list[Grid], rejected: list[str]) -> list[Grid]:
    """The tables that keep the words (issue 32): one found again over another (a tail of it, a
    region of it) is dropped, the larger kept (``tablecheck.overlapping``: the born-digital
    timesheet came out as 15 tables, each the rows under the one before, and its rows were
    written up to 15 times); then a table whose cells do not hold the words of the lines it
    takes from the page (``daemon.document.layout`` takes every line whose centre lies in its
    box) is left out, its lines stay text, and why goes to ``rejected``."""
    by_area = sorted(tables, key=lambda g: -(g.bbox[2] - g.bbox[0]) * (g.bbox[3] - g.bbox[1]))
    dropped = set(overlapping([g.bbox for g in by_area]))
    kept = []
    for k, g in enumerate(by_area):
        if k in dropped:
            continue
        taken = [ln for b in layer.blocks for ln in b.lines if _centre_in_box(ln.bbox, g.bbox)]
        region = [t for ln in taken for s in ln.spans for t in tokens(s.text)]
        if g.filled:
            cells = [t for c in g.cells for t in tokens(c.text)]
        else:  # the spans whose centre lies in a cell (what the layout writes in it)
            cells = [t for ln in taken for s in ln.spans
                     if any(_centre_in_box(s.bbox, c.bbox) for c in g.cells) for t in tokens(s.text)]
        verdict = check(cells, region)
        if verdict.ok:
            kept.append(g)
        else:
            rejected.append(f"table of {g.n_rows} rows x {g.n_cols} columns on page {layer.index + 1} rejected: "
                            f"{verdict.reason}")
    kept.sort(key=lambda g: (g.bbox[1], g.bbox[0]))
    return kept


def _centre_in_box(b: tuple[float, float, float, float], box: tuple[float, float, float, float]) -> bool:
    x, y = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _find_tables(page: pymupdf.Page, layer: PageLayer) -> list[Grid]:
    """The layer's tables: ruled, with horizontal rules only, and without any rule (see the
    module docstring); none on a drawing."""
    tables: list[Grid] = []
    h, v = vector_segments(page)
    if len(h) + len(v) > MAX_RULES:  # a drawing (a plot, a map), not tables: no table search
        return tables
    words = _words(layer)
    if len(h) >= 2 and len(v) >= 2:
        for g in find_grids(h, v, tol=2.0, min_size=4.0):
            # a grid of one row: a title band drawn as boxes, or the header of a table whose body
            # has no rule (a bank statement's header band); a grid with text in one column: a
            # frame (both came out as tables: issue 26)
            body = header_body(g, words) if g.n_rows == 1 else None
            if body is not None:
                tables.append(body)
            elif g.n_rows > 1 and len({c.col for c in g.cells if _has_words(c.bbox, words)}) >= 2:
                tables.append(g)
    if len(h) >= 2:  # tables with horizontal rules only: columns from the words' gaps
        regions = [r for r in rule_regions(h, v, tol=2.0, min_width=0.25 * page.rect.width,
                                             max_two_rule_height=0.4 * page.rect.height)
                   if not any(_overlap(r, g.bbox) for g in tables)]
        for r in regions:
            found = rules_table(words, r, region_rules(h, r, tol=2.0))
            if found is not None:
                tables.append(found)
    # tables without any rule: the same geometry as on scans, over the layer's own words of
    # horizontal lines (vertical CJK text and text set along a curve line up in columns too)
    tables += unruled_grids(_words(layer, horizontal=True), [g.bbox for g in tables])
    tables.sort(key=lambda g: (g.bbox[1], g.bbox[0]))
    return tables


def _has_words(box: tuple[float, float, float, float], words: list[tuple[float, float, float, float, str, float]]) -> bool:
    return any(box[0] <= (w[0] + w[2]) / 2 <= box[2] and box[1] <= (w[1] + w[3]) / 2 <= box[3] for w in words)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _words(layer: PageLayer, horizontal: bool = False) -> list[tuple[float, float, float, float, str, float]]:
    """Words of the layer's spans with boxes (a span's width shared by its characters); only
    those of horizontal lines when ``horizontal``."""
    out = []
    for b in layer.blocks:
        for ln in b.lines:
            if horizontal and not ln.horizontal:
                continue
            for s in ln.spans:
                n = len(s.text)
                if not n:
                    continue
                w = (s.bbox[2] - s.bbox[0]) / n
                for m in re.finditer(r"\S+", s.text):
                    out.append((s.bbox[0] + w * m.start(), s.bbox[1], s.bbox[0] + w * m.end(), s.bbox[3],
                                m.group(), s.size))
    return out


#: Documents kept open in this (render worker) process: opening costs more than reading a page's
#: text in documents with a long outline (PyMuPDF loads the outline on open: 54 ms of the
#: Debian reference's ~80 ms per page), and a worker reads the pages of one document in a row.
_OPEN: dict[tuple[str, int, int, int, int], pymupdf.Document] = {}
_OPEN_MAX = 2
_OPEN_LOCK = threading.Lock()


def _open(path: Path) -> pymupdf.Document:
    """The PDF at ``path``, opened once per version of the file (device, inode, size, mtime)."""
    st = os.stat(path)
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    doc = _OPEN.get(key)
    if doc is not None and not doc.is_closed:
        return doc
    doc = probe.mupdf_open(path)
    while len(_OPEN) >= _OPEN_MAX:
        old = _OPEN.pop(next(iter(_OPEN)))
        old.close()
    _OPEN[key] = doc
    return doc


def _is_pdf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return b"%PDF-" in f.read(1024)
    except OSError:
        return False


def _has_eof(path: Path) -> bool:
    """A repaired PDF is rendered only when it is not truncated (render.py's rule)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, path.stat().st_size - 2048))
            return b"%%EOF" in f.read()
    except OSError:
        return False


def read_or_render(path: Path, index: int, opts: RenderOptions, lines: bool = False) -> RenderedPage:
    """See the module docstring. ``lines``: also find the rendered image's line boxes (the
    searchable PDF of an engine without word boxes; optional stage ``pdf_alignment``)."""
    t0 = time.monotonic()
    path = Path(path)
    degraded: list[Degraded] = []
    note = ""
    if opts.text_layer != "ocr" and _is_pdf(path):
        with _OPEN_LOCK:  # a kept-open document is used by one thread at a time (MuPDF's rule)
            layer = _read_kept_open(path, index, opts.text_layer, opts.math_to_engine, degraded)
        if layer is not None and layer.verdict.use:
            content = layer_page(layer, degraded)
            return LayerPage(index, content, verdict_meta(layer), tuple(degraded), time.monotonic() - t0)
        note = layer.verdict.reason if layer is not None else ""  # None: the renderer names the problem
    page = render.render_page(path, index, opts)
    boxes = None
    if lines:
        img = page.image
        boxes = optional(Stage.PDF_ALIGNMENT, lambda: find_lines(img), lambda: None, degraded)
    return replace(
        page, lines=boxes, text_layer_note=note, degraded=(*page.degraded, *degraded), seconds=time.monotonic() - t0,
    )


def verdict_meta(layer: PageLayer) -> dict[str, Any]:
    """The verdict's measurements of a layer that is used (the sidecar's ``pages[].meta``)."""
    v = layer.verdict
    return {"text_layer": {"chars": v.chars, "invisible": v.invisible, "bad": round(v.bad, 4),
                           "math": round(v.math, 4), "tables": len(layer.tables)}}


def _read_kept_open(
    path: Path, index: int, mode: str, math_to_engine: bool, degraded: list[Degraded],
) -> PageLayer | None:
    try:
        doc = _open(path)
    except Exception:
        return None
    # the document stays open for the next page (``_open``)
    if doc.needs_pass or (doc.is_repaired and not _has_eof(path)) or not 0 <= index < doc.page_count:
        layer = PageLayer(index, 0, 0, Verdict(False, "not checked"))  # render_page decides
    else:
        try:
            layer = read_layer(doc.load_page(index), index, mode, math_to_engine, degraded)
        except Exception as e:  # a page MuPDF cannot read text from: OCR it
            layer = PageLayer(index, 0, 0, Verdict(False, f"text layer unreadable ({type(e).__name__})"))
    return layer
