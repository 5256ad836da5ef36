"""No paragraph left behind: ink on the page where Tesseract's read found no words is read again.

Contract:

- ``missing_regions(gray, layout) -> list[box]``: boxes (page px, top-left origin) of text-like
  ink that no recognised line covers. Cheap, numpy on a copy of at most ``EDGE`` px: the ink is
  what is ``INK_DELTA`` darker than the paper around it (a tile's bright percentile, so uneven
  light and tinted paper count as paper); strokes thinner than 3 px of the copy go (ruled
  paper, table rules, underlines, specks of noise); the lines the read found are painted out;
  what is left is grouped on a grid of ``CELL`` px cells into regions, and a region is kept when
  it is shaped and filled like text (``_text_like``): at least a line high and a few letters
  wide, neither a solid block (a photo) nor a few specks, with the many stroke edges per row
  that letters make.
- ``recover(api, gray, layout, regions) -> (layout, lines)`` (``api``: a ``daemon.tessapi.TessApi``): each region cropped (with a margin;
  words the read had already are dropped from what the crop gives) and read again on its own with a uniform-block segmentation (PSM 6) and Otsu's global
  threshold on the crop (``api`` is left as it was found: PSM AUTO, the engine's threshold);
  a recovered line is kept when its mean word confidence is ``MIN_LINE_CONF`` or more and it
  has a word of two letters; the kept lines are merged into ``layout`` in reading order (after
  the block above them that overlaps them horizontally, else before the first one below) as
  blocks of their own. Returns the merged layout and the indexes of the recovered lines in it
  (none: ``layout`` itself and an empty set).
- ``lost_text(spec, gray, layout, thresholding_method) -> (layout, lines) | None``: the two
  above with the API ``spec`` names (this thread's, ``daemon.tessapi.thread_api``; discarded
  when Tesseract fails, and the error raised): None when no region is missing or none was
  read again (the check alone, ~0.03 s, on every page).
- ``merge_text(text, layout, recovered) -> str``: the page text with the recovered lines put in as
  paragraphs where they belong (after the paragraph of the line they follow in the layout).

Why (issue 32): a handwritten-style diary page photographed on ruled paper lost whole lines:
Tesseract's layout analysis on the Sauvola-binarised page (``tesseract.THRESHOLDING_METHOD``:
chosen for light grey text and shaded panels) merged the ruled lines with the writing and
dropped two of nine lines without a word (their ink is there; a crop of one read with PSM 6 and
Otsu gives the line at confidence 90+). The check is the safety net for every such loss
(a block taken for an image, a region erased): the engine calls it on every page, as the
optional stage ``lost_text``; it reads nothing on a page whose ink the read covered. Cost of
the check alone on a 300 dpi A4 page: bench/RESULTS.md ("Lost text").
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from daemon.models import PageLayout, TextBox, TextLine
from daemon.tessapi import PSM, ApiSpec, TessApi, discard, thread_api

#: The check works on a copy whose longest edge is at most this (a 300 dpi A4 page: 1/4, where
#: 10 pt text is still 6-8 px tall and a 3 px table rule 1 px thin).
EDGE = 900
#: Ink: at least this much darker than the paper around it (grey levels of the engine's page,
#: after its ink gamma; paper ~218, black ~10, light-grey text ~110-160, scanner noise +-6).
INK_DELTA = 45
#: Paper level per tile of this many copy px: the tile's 90th percentile, the brightest of it
#: and its 8 neighbours (a tile full of a bold heading takes its paper from beside it).
TILE = 24
#: Grid cell of the region search (copy px): a cell is inky with ``CELL_INK`` of its pixels ink.
CELL = 6
CELL_INK = 0.04
#: Cells joined sideways (each side) and one up and down before regions are found: word gaps
#: and line gaps closed, a column gutter of 2 x 2 cells (~8 mm on a 300 dpi A4 page) not.
JOIN_X = 2
#: A region is read again only when at least this high and wide (copy px: ~2/3 of a 10 pt line,
#: ~4 letters) and with at most this much ink (a photo or a filled shape is solid).
MIN_H, MIN_W = 5, 18
MAX_FILL = 0.55
#: Letters make a stroke edge every few px along a row: at least this many per px of width on
#: the region's inky rows (text measured 0.15-0.35 on the copy; a photo's shading under 0.05).
MIN_EDGES = 0.08
#: At most this many regions read again on a page (a page of scattered specks must not cost a
#: read per speck), largest first.
MAX_REGIONS = 12
#: A recovered line is kept with at least this mean word confidence (recovered diary lines read
#: at 85-95, a crop of a photo or of noise at 0-40).
MIN_LINE_CONF = 55.0
#: Margin around a region's crop (page px): Tesseract wants some paper round the letters.
PAD = 12

Box = tuple[int, int, int, int]


def _ink(gray: Image.Image) -> tuple[np.ndarray, int]:
    """The ink mask of a reduced copy, thin strokes removed, and the reduction factor."""
    f = max(1, -(-max(gray.size) // EDGE))
    small = gray.reduce(f) if f > 1 else gray
    a = np.asarray(small, dtype=np.int16)
    h, w = a.shape
    th, tw = -(-h // TILE), -(-w // TILE)
    padded = np.full((th * TILE, tw * TILE), 0, dtype=np.int16)
    padded[:h, :w] = a
    tiles = padded.reshape(th, TILE, tw, TILE).transpose(0, 2, 1, 3).reshape(th, tw, TILE * TILE)
    paper = np.percentile(tiles, 90, axis=2)
    big = np.pad(paper, 1, mode="edge")
    paper = np.max([big[dy:dy + th, dx:dx + tw] for dy in range(3) for dx in range(3)], axis=0)
    bg = np.repeat(np.repeat(paper, TILE, axis=0), TILE, axis=1)[:h, :w]
    ink = (bg - a) > INK_DELTA
    # a vertical opening of 3: strokes of 1-2 px (rules, underlines, noise) go, letters stay
    core = np.zeros_like(ink)
    core[1:-1] = ink[:-2] & ink[1:-1] & ink[2:]
    opened = core.copy()
    opened[:-1] |= core[1:]
    opened[1:] |= core[:-1]
    return opened, f


def _components(cells: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Bounding boxes (r0, c0, r1, c1; exclusive ends) of 8-connected True cells."""
    seen = np.zeros_like(cells)
    out = []
    rows, cols = cells.shape
    for r, c in zip(*np.nonzero(cells), strict=True):
        if seen[r, c]:
            continue
        stack = [(int(r), int(c))]
        seen[r, c] = True
        r0, c0, r1, c1 = r, c, r, c
        while stack:
            y, x = stack.pop()
            r0, c0, r1, c1 = min(r0, y), min(c0, x), max(r1, y), max(c1, x)
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    yy, xx = y + dy, x + dx
                    if 0 <= yy < rows and 0 <= xx < cols and cells[yy, xx] and not seen[yy, xx]:
                        seen[yy, xx] = True
                        stack.append((yy, xx))
        out.append((int(r0), int(c0), int(r1) + 1, int(c1) + 1))
    return out


def _text_like(ink: np.ndarray) -> bool:
    """See the module docstring: shape, fill and stroke edges of a region's ink."""
    h, w = ink.shape
    if h < MIN_H or w < MIN_W:
        return False
    fill = float(ink.mean())
    if fill > MAX_FILL or fill < 0.03:
        return False
    rows = ink[ink.any(axis=1)]
    if len(rows) == 0:
        return False
    edges = np.count_nonzero(rows[:, 1:] != rows[:, :-1]) / (len(rows) * w)
    return edges >= MIN_EDGES


def missing_regions(gray: Image.Image, layout: PageLayout) -> list[Box]:
    """See the module docstring."""
    ink, f = _ink(gray)
    h, w = ink.shape
    sx = w / max(1, layout.size[0]) if layout.size[0] else 1.0 / f
    sy = h / max(1, layout.size[1]) if layout.size[1] else 1.0 / f
    for ln in layout.lines:  # what the read found (its lines, with a margin) is not missing
        boxes = [ln.box, *(wd.box for wd in ln.words)]
        for x0, y0, x1, y1 in boxes:
            m = max(2, round(0.25 * (y1 - y0) * sy))
            ink[max(0, int(y0 * sy) - m):int(y1 * sy) + m + 1, max(0, int(x0 * sx) - m):int(x1 * sx) + m + 1] = False
    if not ink.any():
        return []
    ch, cw = -(-h // CELL), -(-w // CELL)
    grid = np.zeros((ch * CELL, cw * CELL), dtype=bool)
    grid[:h, :w] = ink
    share = grid.reshape(ch, CELL, cw, CELL).mean(axis=(1, 3))
    cells = share >= CELL_INK
    # the words of a line and the lines of a paragraph one region: a paragraph is read as one
    # block (PSM 6 keeps its lines in order), not word by word
    grown = cells.copy()
    for d in range(1, JOIN_X + 1):
        grown[:, d:] |= cells[:, :-d]
        grown[:, :-d] |= cells[:, d:]
    tall = grown.copy()
    tall[1:] |= grown[:-1]
    tall[:-1] |= grown[1:]
    cells = tall
    found: list[tuple[int, Box]] = []
    for r0, c0, r1, c1 in _components(cells):
        y0, x0, y1, x1 = r0 * CELL, c0 * CELL, min(h, r1 * CELL), min(w, c1 * CELL)
        part = ink[y0:y1, x0:x1]
        if not _text_like(part):
            continue
        box = (int(x0 / sx), int(y0 / sy), int(x1 / sx), int(y1 / sy))
        found.append((int(part.sum()), box))
    found.sort(reverse=True)
    return sorted((b for _, b in found[:MAX_REGIONS]), key=lambda b: (b[1], b[0]))


def _read_crop(api: TessApi, crop: Image.Image, off: tuple[int, int]) -> list[TextLine]:
    """The crop's lines (page coordinates) whose words are sure enough (``MIN_LINE_CONF``)."""
    api.set_image(crop)
    api.recognise()
    lines: list[tuple[TextLine, list[float]]] = []
    dx, dy = off
    for wd in api.words():
        if wd.new_line or not lines:
            lb = wd.line_box
            if lb is None:
                continue
            lines.append((TextLine(box=(lb[0] + dx, lb[1] + dy, lb[2] + dx, lb[3] + dy)), []))
        if wd.text is None:
            continue
        text = wd.text.strip()
        b = wd.box
        if text and b is not None:
            lines[-1][0].words.append(TextBox(text, (b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy)))
            lines[-1][1].append(wd.conf)
    kept = []
    for ln, confs in lines:
        letters = any(sum(ch.isalnum() for ch in w.text) >= 2 for w in ln.words)
        if ln.words and letters and sum(confs) / len(confs) >= MIN_LINE_CONF:
            kept.append(ln)
    return kept


def recover(api: TessApi, gray: Image.Image, layout: PageLayout, regions: list[Box],
            restore_threshold: str) -> tuple[PageLayout, set[int]]:
    """See the module docstring. ``restore_threshold``: the engine's ``thresholding_method``,
    set back on ``api`` afterwards (with PSM AUTO)."""
    found: list[TextLine] = []
    api.set_psm(PSM.SINGLE_BLOCK)
    api.set_variable("thresholding_method", "0")
    try:
        for x0, y0, x1, y1 in regions:
            # (a wider margin was tried: pypdf-vicksburg's caption under a woodcut, read at 12 px
            # as "he Yankee Lookout." -- its "T" painted out with the column beside it -- was
            # not read at 24 or 48 px, where the crop took in the ends of the column's lines)
            box = (max(0, x0 - PAD), max(0, y0 - PAD), min(gray.width, x1 + PAD), min(gray.height, y1 + PAD))
            found += _read_crop(api, gray.crop(box), (box[0], box[1]))
    finally:
        api.clear()
        api.set_psm(PSM.AUTO)
        api.set_variable("thresholding_method", restore_threshold)
    found = _new_words_only(found, layout)
    if not found:
        return layout, set()
    return merge_layout(layout, found)


def lost_text(
    spec: ApiSpec, gray: Image.Image, words: PageLayout, thresholding_method: str,
) -> tuple[PageLayout, set[int]] | None:
    """``words`` with the lines of ink the read left without words; None
    when there were none (the check alone, ~0.03 s, on every page)."""
    regions = missing_regions(gray, words)
    if not regions:
        return None
    try:
        merged, recovered = recover(thread_api(spec), gray, words, regions, thresholding_method)
    except Exception:
        discard(spec)  # a failed API may be in a bad state: rebuild it next time
        raise
    return (merged, recovered) if recovered else None


def _new_words_only(found: list[TextLine], layout: PageLayout) -> list[TextLine]:
    """``found`` without the words the read had already (a wider crop takes in the ends of
    found lines: a recovered word whose centre lies in a found word's box is that word)."""
    known = [w.box for ln in layout.lines for w in ln.words]
    out = []
    for ln in found:
        words = [w for w in ln.words
                 if not any(b[0] <= (w.box[0] + w.box[2]) / 2 <= b[2] and b[1] <= (w.box[1] + w.box[3]) / 2 <= b[3]
                            for b in known)]
        if words:
            box = (min(w.box[0] for w in words), min(w.box[1] for w in words),
                   max(w.box[2] for w in words), max(w.box[3] for w in words))
            out.append(TextLine(box, words))
    return out


def _anchor(lines: list[TextLine], new: TextLine) -> int:
    """Index in ``lines`` after which ``new`` goes (-1: before all): after the last line of the
    block above it that overlaps it horizontally; else before the first overlapping line below."""
    x0, y0, x1, _ = new.box
    above = [k for k, ln in enumerate(lines) if ln.box[0] < x1 and x0 < ln.box[2] and ln.box[1] < y0]
    if above:
        k = max(above, key=lambda k: lines[k].box[1])
        blk = lines[k].block
        while k + 1 < len(lines) and lines[k + 1].block == blk:
            k += 1
        return k
    below = [k for k, ln in enumerate(lines) if ln.box[0] < x1 and x0 < ln.box[2]]
    return min(below) - 1 if below else len(lines) - 1


def merge_layout(layout: PageLayout, found: list[TextLine]) -> tuple[PageLayout, set[int]]:
    """``found`` lines put into ``layout`` in reading order (see ``_anchor``), each run of
    recovered lines one block of its own, blocks renumbered in order; and the indexes of the
    recovered lines in the merged layout."""
    lines = [TextLine(ln.box, list(ln.words), ln.block) for ln in layout.lines]
    added: list[TextLine] = []
    marker = -1  # recovered lines carry a negative block until renumbering
    for ln in sorted(found, key=lambda ln: (ln.box[1], ln.box[0])):
        k = _anchor(lines, ln)
        prev = lines[k] if k >= 0 else None
        if prev is None or prev.block >= 0:  # a new run (after a line the read found)
            marker -= 1
        new = TextLine(ln.box, list(ln.words), marker)
        lines.insert(k + 1, new)
        added.append(new)
    out: list[TextLine] = []
    last: int | None = None
    n = -1
    for ln in lines:
        if ln.block != last:
            n += 1
            last = ln.block
        out.append(TextLine(ln.box, ln.words, n))
    ids = {id(ln) for ln in added}
    return PageLayout(layout.size, out, layout.has_words, layout.confidence), {k for k, ln in enumerate(lines) if id(ln) in ids}


def _line_text(ln: TextLine) -> str:
    return " ".join(w.text for w in ln.words)


def merge_text(text: str, layout: PageLayout, recovered: set[int]) -> str:
    """See the module docstring. ``layout`` and ``recovered``: ``merge_layout``'s."""
    if not recovered:
        return text
    paras = [p for p in text.split("\n\n") if p.strip()]
    after: dict[int, list[str]] = {}  # paragraph index (-1: before the first) -> recovered runs
    at, cursor = -1, 0
    run: list[str] = []
    block = -1
    for k, ln in enumerate(layout.lines):
        if k in recovered:
            if run and ln.block != block:
                after.setdefault(at, []).append("\n".join(run))
                run = []
            run.append(_line_text(ln))
            block = ln.block
            continue
        if run:
            after.setdefault(at, []).append("\n".join(run))
            run = []
        t = _line_text(ln)
        for p in range(cursor, len(paras)):
            if t and t in paras[p]:
                at = cursor = p
                break
    if run:
        after.setdefault(at, []).append("\n".join(run))
    parts = list(after.get(-1, []))
    for p, para in enumerate(paras):
        parts.append(para)
        parts += after.get(p, [])
    return "\n\n".join(parts)
