"""Where a page's text goes in the searchable PDF: line boxes for VLM pages, and the alignment
of a VLM's text (which comes without positions) to them.

Contract:

- The line boxes come from ``daemon.tessapi.find_lines`` (Tesseract's layout analysis alone),
  which the render stage runs on a rendered page in its worker when the searchable PDF needs
  them (``daemon.pages.textlayer.read_or_render(..., lines=True)``).
- ``plain_lines(text, markdown)``: the engine's page text as the plain lines a reader sees
  (Markdown markup, HTML table tags, comments, image placeholders removed; table cells joined
  by spaces; LaTeX kept as written).
- ``place_text(text, layout, markdown, size) -> Placement``: the page's text as positioned lines. With
  Tesseract words (``layout.has_words``) they are used as they are (``words``). Otherwise the
  text's tokens (words; CJK characters one by one) are spread over the layout's lines in reading
  order in proportion to each line's length in ems (its width over the lines' median height),
  tokens measured with Helvetica's advance widths (CJK: one em), per block when the text has as
  many paragraphs as the layout has blocks (``lines``); when the text's length
  is implausible for the lines found (fewer than ``MIN_UNITS_PER_EM`` or more than
  ``MAX_UNITS_PER_EM`` characters per em of line), the lines are not trusted and the text is
  laid out evenly inside each block's box (``blocks``); with no line found at all, inside the
  page's margins (``page``). Every token of the text is placed: nothing is dropped.

Why proportional and not recognition: recognising the page again with Tesseract to match words
would cost about 1 s of CPU per page (bench/RESULTS.md), eight cores for one GPU's 8 pages/s;
layout analysis costs a fraction of that. The price is that a word's box is an estimate within
its line (search, selection and copy work by line; a highlight may be off by a few characters).
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field
from typing import Any

from daemon.models import PageLayout, TextBox, TextLine

#: Text length per em of line (characters; a CJK character counts 2) beyond which the text and
#: the lines found cannot belong together: Latin text runs at ~2.4 characters per line height,
#: CJK at ~1.1 characters (2.2 units). The band is wide on purpose: within it a line's text is
#: stretched or squeezed to the line, which search and copy do not mind; outside it (a page of
#: text on three detected lines, a word on a page of lines) the lines are wrong, not the text.
MIN_UNITS_PER_EM = 0.2
MAX_UNITS_PER_EM = 12.0

_CJK = re.compile(r"[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_TAG = re.compile(r"<[^>]{0,400}>")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPH = re.compile(r"(\*\*|__|\*|`)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_QUOTE = re.compile(r"^\s*>\s?")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


@dataclass
class PlacedLine:
    """A line of the text layer: its box and its words (each with its box), engine image px."""

    box: tuple[int, int, int, int]
    words: list[TextBox] = field(default_factory=list)


@dataclass
class Placement:
    """A page's text layer: ``how`` the text was placed (words | lines | blocks | page | none)."""

    how: str
    lines: list[PlacedLine] = field(default_factory=list)


# --------------------------------------------------------------------------- layout analysis


# --------------------------------------------------------------------------- text


def plain_lines(text: str, markdown: bool) -> list[list[str]]:
    """Paragraphs of plain lines (see the contract); paragraphs were separated by blank lines."""
    if markdown:
        text = _COMMENT.sub("\n", text)
        text = re.sub(r"</(tr|p|div|h\d|li|table)>|<br\s*/?>", "\n", text, flags=re.I)
    paras: list[list[str]] = [[]]
    for raw in text.split("\n"):
        line = raw
        if markdown:
            if _TABLE_RULE.match(line):
                continue
            line = _IMAGE.sub(" ", line)
            line = _LINK.sub(r"\1", line)
            line = _TAG.sub(" ", line)
            line = _HEADING.sub("", line)
            line = _QUOTE.sub("", line)
            line = _EMPH.sub("", line)
            line = line.replace("|", " ").replace("\\$", "$")
            line = html.unescape(line)
        line = " ".join(line.split())
        if line:
            paras[-1].append(line)
        elif paras[-1]:
            paras.append([])
    return [p for p in paras if p]


def _tokens(line: str) -> list[str]:
    """Words of a line, CJK characters one by one (a CJK line has no spaces to split on)."""
    out: list[str] = []
    for word in line.split():
        run = ""
        for ch in word:
            if _CJK.match(ch):
                if run:
                    out.append(run)
                    run = ""
                out.append(ch)
            else:
                run += ch
        if run:
            out.append(run)
    return out


def _units(token: str) -> float:
    """Width of a token in half-em units: CJK characters 2; other text by Helvetica's advance
    widths (PyMuPDF's built-in metrics: an "m" is three times an "i", which a count of letters
    misses and which moves a line break by words), plus a space after a word."""
    if _CJK.fullmatch(token):
        return 2.0
    return 2.0 * (_helvetica().text_length(token, fontsize=1.0) + _SPACE_EM)


@functools.cache
def _helvetica() -> Any:
    import pymupdf

    return pymupdf.Font("helv")


_SPACE_EM = 0.278  # Helvetica's space


def _join_words(tokens: list[str]) -> list[str]:
    """Tokens of one line -> the words written: consecutive CJK characters form one word, so
    that text extraction puts no spaces between them."""
    out: list[str] = []
    for t in tokens:
        if out and _CJK.fullmatch(t) and _CJK.match(out[-1][-1]):
            out[-1] += t
        else:
            out.append(t)
    return out


def _set_line(box: tuple[int, int, int, int], tokens: list[str]) -> PlacedLine:
    """A line's tokens laid out left to right over its box in proportion to their widths."""
    words = _join_words(tokens)
    widths = [sum(_units(t) for t in _tokens(w)) for w in words]
    total = sum(widths) or 1
    x0, y0, x1, y1 = box
    span = x1 - x0
    out: list[TextBox] = []
    acc = 0.0
    for w, u in zip(words, widths, strict=True):
        a = x0 + span * acc / total
        acc += u
        b = x0 + span * (acc - (0 if _CJK.match(w[-1]) else 2 * _SPACE_EM)) / total  # the trailing space is not the word's
        out.append(TextBox(text=w, box=(round(a), y0, max(round(a) + 1, round(b)), y1)))
    return PlacedLine(box=box, words=out)


def _fill(tokens: list[str], boxes: list[tuple[int, int, int, int]]) -> list[PlacedLine]:
    """Spread ``tokens`` over ``boxes`` (lines in reading order) in proportion to each box's
    length in ems; every token lands in exactly one box, order kept."""
    if not tokens:
        return []
    # A line's length in ems, with one em for all lines (their median height): a line without
    # ascenders or descenders has a shorter box, not smaller letters.
    em = max(1, sorted(b[3] - b[1] for b in boxes)[len(boxes) // 2])
    caps = [max(1e-3, (b[2] - b[0]) / em) for b in boxes]
    total_cap = sum(caps)
    units = [_units(t) for t in tokens]
    total_units = sum(units)
    out: list[PlacedLine] = []
    i = 0
    done_units = 0.0
    cum_cap = 0.0
    for j, (box, cap) in enumerate(zip(boxes, caps, strict=True)):
        cum_cap += cap
        target = total_units * cum_cap / total_cap
        take: list[str] = []
        last = j == len(boxes) - 1
        while i < len(tokens) and (last or done_units + units[i] / 2 <= target):
            take.append(tokens[i])
            done_units += units[i]
            i += 1
        if take:
            out.append(_set_line(box, take))
    return out


def _even_lines(box: tuple[int, int, int, int], tokens: list[str], em: float) -> list[PlacedLine]:
    """``tokens`` as evenly spaced lines filling ``box`` (used when no trusted line is known)."""
    x0, y0, x1, y1 = box
    units = sum(_units(t) for t in tokens)
    per_line = max(1.0, (x1 - x0) / max(1.0, em) * 2.2)
    n = max(1, min(round(units / per_line + 0.5), max(1, int((y1 - y0) // max(1.0, em)))))
    h = (y1 - y0) / n
    boxes = [(x0, round(y0 + k * h), x1, max(round(y0 + k * h) + 1, round(y0 + (k + 1) * h))) for k in range(n)]
    return _fill(tokens, boxes)


def place_text(text: str, layout: PageLayout | None, markdown: bool, size: tuple[int, int]) -> Placement:
    """The page's text as positioned lines on an engine image of ``size`` (see the contract)."""
    if layout is not None and layout.has_words:
        lines = [PlacedLine(box=ln.box, words=list(ln.words)) for ln in layout.lines if ln.words]
        return Placement("words" if lines else "none", lines)
    paras = plain_lines(text, markdown)
    tokens = [t for p in paras for ln in p for t in _tokens(ln)]
    if not tokens:
        return Placement("none")
    found = layout.lines if layout is not None else []
    if found:
        units = sum(_units(t) for t in tokens)
        ems = sum((ln.box[2] - ln.box[0]) / max(1, ln.box[3] - ln.box[1]) for ln in found)
        if MIN_UNITS_PER_EM <= units / max(ems, 1e-3) <= MAX_UNITS_PER_EM:
            blocks = sorted({ln.block for ln in found})
            if len(paras) == len(blocks) > 1:
                # As many paragraphs as regions: each paragraph fills its own region's lines.
                out: list[PlacedLine] = []
                for para, b in zip(paras, blocks, strict=True):
                    toks = [t for ln in para for t in _tokens(ln)]
                    out += _fill(toks, [ln.box for ln in found if ln.block == b])
                return Placement("lines", out)
            return Placement("lines", _fill(tokens, [ln.box for ln in found]))
        # The lines found do not fit the text: lay it out inside the blocks' boxes.
        regions: dict[int, list[TextLine]] = {}
        for ln in found:
            regions.setdefault(ln.block, []).append(ln)
        bboxes = [
            (min(ln.box[0] for ln in r), min(ln.box[1] for ln in r), max(ln.box[2] for ln in r), max(ln.box[3] for ln in r))
            for r in regions.values()
        ]
        em = float(sorted(ln.box[3] - ln.box[1] for ln in found)[len(found) // 2])
        areas = [(b[2] - b[0]) * (b[3] - b[1]) for b in bboxes]
        out = []
        i = 0
        total_units = sum(_units(t) for t in tokens)
        acc_area = 0
        done = 0.0
        for k, (bb, area) in enumerate(zip(bboxes, areas, strict=True)):
            acc_area += area
            goal = total_units * acc_area / max(1, sum(areas))
            take: list[str] = []
            while i < len(tokens) and (k == len(bboxes) - 1 or done + _units(tokens[i]) / 2 <= goal):
                take.append(tokens[i])
                done += _units(tokens[i])
                i += 1
            if take:
                out += _even_lines(bb, take, em)
        return Placement("blocks", out)
    w, h = size
    margin = round(0.06 * min(w, h))
    em = max(8.0, h / 60)
    return Placement("page", _even_lines((margin, margin, w - margin, h - margin), tokens, em))
