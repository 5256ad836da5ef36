"""A PDF page's text layer (``daemon.pages.textlayer.PageLayer``) -> document model blocks.

Contract:

- ``layer_blocks(layer) -> list[Block]``: headings, paragraphs, lists and tables of one page, in
  reading order, as the blocks of ``daemon.document.model`` (inline text is normalised inline
  Markdown: plain text escaped, bold/italic spans as ``**``/``*``).
- ``layer_page(layer, degraded) -> LayerBlocks``: those blocks (handed to the writers as they
  are) and the same blocks as the page's Markdown (the Markdown the ``md`` writer writes: the raw
  file, the JSON's page texts and ``ocr-daemon convert`` see the page like a VLM page). The layout is an optional stage
  (``daemon.stages``): if it fails, the page's lines come as plain paragraphs (``plain_blocks``)
  and the failure is appended to ``degraded``.

Rules:

- Reading order is the PDF's block order (content-stream order: the order the producer wrote,
  which is the reading order for word processors, LaTeX and report generators; a two-column
  page comes out column by column). Table text is taken out of the blocks and the table put
  where its first text was.
- Body size = the font size that covers the most characters on the page. A block of at most 3
  lines and 200 characters set at least ``HEADING_RATIO`` x the body size is a heading: level 1 at
  >= 1.7x, 2 at >= 1.4x, 3 below. A one-line block entirely in bold, at least body size, at most
  80 characters and not ending like a sentence is a level-4 heading.
- A line starting with a bullet (``• ◦ ▪ ● ■ – - * ·`` ...) or an enumerator (``1.``, ``2)``,
  ``a)``) starts a list item; the following lines of that block continue it.
- Lines of a paragraph are joined with a space (none between CJK characters); a word broken
  with a hyphen at the line end is joined (``exam-`` + ``ple`` -> ``example``) when the next line
  starts with a lowercase letter.
- Except in a block that is lines, not a wrapped paragraph (an address, a signature block;
  ``daemon.document.lines.is_line_block``): its lines stay lines (``"\\n"`` in the paragraph, a
  line break in every output). A full line of its column, which it must be well short of, is
  the 80th percentile of the widths of the lines of the blocks that start where it starts (its
  column); on a page with columns side by side (blocks of 3+ lines next to each other) without
  the blocks more than 1.5x as wide as that column's median block (a full-width abstract above
  two columns), and on a page without columns at least half the page width (a signature block
  alone on the right).
- Text set in a monospaced font (``Span.mono``) is code: a block all in it is a code block (its
  lines and indents kept, nothing escaped: ``# apt-get update`` is a command, not a heading),
  a run of monospaced words in a line a code span (``package_name``, ``paquet*.info``) --
  unless half the page or more is monospaced (``MONO_BODY_SHARE``: a typewriter-style letter).
"""

from __future__ import annotations

import re
from collections import Counter

from daemon.dates import starts_with_date
from daemon.document.blocksmd import blocks_md
from daemon.document.inline import escape_markdown_chars
from daemon.document.lines import is_line_block
from daemon.document.model import Block, Cell, CodeBlock, Heading, ListBlock, ListItem, Paragraph, Table
from daemon.layerrecords import Grid, Line, PageLayer, Span, TextBlock
from daemon.pagerecord import LayerBlocks
from daemon.stages import Degraded, Stage, optional

HEADING_RATIO = 1.2
#: A page with at least this share of its characters in a monospaced font is set in it (a
#: typewriter-style letter, a Courier form): there the font says nothing about code.
MONO_BODY_SHARE = 0.5
_BULLET = re.compile(r"^\s*(?:[•◦▪▫●○■□‣⁃∙·▸►✓✔]\s*|[*–—-]\s+)(?=\S)")
_ENUM = re.compile(r"^\s*(\(?(\d{1,3}|[a-z])[.)])\s+(?=\S)")
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_SENTENCE_END = re.compile(r"[.;,:]$")
_BLOCK_START = re.compile(r"^(#{1,6}(?:\s|$)|[-+*](?:\s|$)|>|={3,}\s*$|-{3,}\s*$)")
_ENUM_START = re.compile(r"^(\d{1,9})([.)])(\s|$)")


def _esc(text: str) -> str:
    """Plain text -> inline Markdown that means that text (inside a line)."""
    return escape_markdown_chars(text)


def _esc_start(text: str) -> str:
    r"""Escape what would make a paragraph's first characters block syntax (a heading, list
    item, quote or rule): ``1.`` becomes ``1\.`` (CommonMark escapes punctuation only)."""
    m = _ENUM_START.match(text)
    if m:
        return m.group(1) + "\\" + text[len(m.group(1)):]
    if _BLOCK_START.match(text):
        return "\\" + text
    return text


def _mono_share(layer: PageLayer) -> float:
    """Share of the page's characters set in a monospaced font."""
    mono = total = 0
    for b in layer.blocks:
        for ln in b.lines:
            for s in ln.spans:
                n = len(s.text.strip())
                total += n
                mono += n if s.mono else 0
    return mono / total if total else 0.0


def _body_size(layer: PageLayer) -> float:
    sizes: Counter[float] = Counter()
    for b in layer.blocks:
        for ln in b.lines:
            for s in ln.spans:
                sizes[round(s.size * 2) / 2] += len(s.text.strip())
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _code_span(text: str) -> str:
    """``text`` as a CommonMark code span (spaces around it stay outside)."""
    core = text.strip()
    if not core:
        return text
    ticks = max((len(m) for m in re.findall(r"`+", core)), default=0)
    fence = "`" * (ticks + 1)
    pad = " " if core.startswith("`") or core.endswith("`") else ""
    return f"{text[: len(text) - len(text.lstrip())]}{fence}{pad}{core}{pad}{fence}{text[len(text.rstrip()):]}"


def _inline(spans: list[Span], styled: bool, code: bool = False) -> str:
    """Spans -> inline Markdown; bold/italic marked only when ``styled`` (not in headings);
    monospaced spans as code spans when ``code`` (see the module docstring)."""
    out: list[str] = []
    k = 0
    while k < len(spans):
        s = spans[k]
        if code and s.mono and s.text.strip():
            run = [s.text]
            k += 1
            # the spaces between two monospaced words belong to the code
            while k < len(spans) and (spans[k].mono or (not spans[k].text.strip() and k + 1 < len(spans)
                                                        and spans[k + 1].mono)):
                run.append(spans[k].text)
                k += 1
            out.append(_code_span("".join(run)))
            continue
        k += 1
        t = _esc(s.text)
        core = t.strip()
        if s.sup and core:
            # a superscript (footnote mark) stays one: "Satzes.<sup>2</sup>Vielmehr", never "2Vielmehr"
            out.append(f"{t[: len(t) - len(t.lstrip())]}<sup>{core}</sup>{t[len(t.rstrip()):]}")
            continue
        if styled and core and len(core) > 1 and (s.bold or s.italic):
            mark = "**" if s.bold else "*"
            if s.bold and s.italic:
                mark = "***"
            lead = t[: len(t) - len(t.lstrip())]
            trail = t[len(t.rstrip()):]
            t = f"{lead}{mark}{core}{mark}{trail}"
        out.append(t)
    return "".join(out)


def _code_block(b: TextBlock) -> CodeBlock:
    """A block set all in a monospaced font: its lines as code, indents kept (in characters of
    the font's width)."""
    x0 = min(ln.bbox[0] for ln in b.lines)
    widths = [(s.bbox[2] - s.bbox[0]) / len(s.text) for ln in b.lines for s in ln.spans if len(s.text.strip()) >= 2]
    char = sorted(widths)[len(widths) // 2] if widths else 0.0
    rows = []
    for ln in b.lines:
        indent = round((ln.bbox[0] - x0) / char) if char > 0 else 0
        rows.append(" " * max(0, min(indent, 40)) + ln.text.strip())
    return CodeBlock("\n".join(rows))


def _mono(b: TextBlock) -> bool:
    spans = [s for ln in b.lines for s in ln.spans if s.text.strip()]
    return bool(spans) and all(s.mono for s in spans)


def _join(lines: list[str]) -> str:
    """Lines of one paragraph -> one string (see the module docstring)."""
    text = ""
    for ln in lines:
        ln = ln.strip()
        if not ln:
            continue
        if not text:
            text = ln
        elif re.search(r"\w-$", text) and ln[:1].islower():
            text = text[:-1] + ln
        elif _CJK.match(text[-1]) and _CJK.match(ln[0]):
            text += ln
        else:
            text += " " + ln
    return text


def _inside(bbox: tuple[float, float, float, float], g: Grid) -> bool:
    x = (bbox[0] + bbox[2]) / 2
    y = (bbox[1] + bbox[3]) / 2
    x0, y0, x1, y1 = g.bbox
    return x0 <= x <= x1 and y0 <= y <= y1


def _table(g: Grid, lines: list[Line]) -> Table | None:
    """The grid's cells filled with the text of the spans whose centre lies in them (or the
    text the grid's cells already hold: ``Grid.filled``)."""
    if g.filled:
        given = [Cell(_esc(c.text), c.row, c.col, c.rowspan, c.colspan) for c in g.cells]
        return Table(g.n_rows, g.n_cols, given) if any(c.text for c in given) else None
    texts: dict[int, list[tuple[float, float, float, float, str]]] = {}
    bold: dict[int, bool] = {}
    for ln in lines:
        for s in ln.spans:
            if not s.text.strip():
                continue
            cx, cy = (s.bbox[0] + s.bbox[2]) / 2, (s.bbox[1] + s.bbox[3]) / 2
            for k, c in enumerate(g.cells):
                x0, y0, x1, y1 = c.bbox
                if x0 <= cx <= x1 and y0 <= cy <= y1:
                    texts.setdefault(k, []).append((round(ln.bbox[1], 0), s.bbox[0], s.bbox[2], s.size, s.text))
                    bold[k] = bold.get(k, True) and s.bold
                    break
    if not texts:
        return None
    cells: list[Cell] = []
    for k, c in enumerate(g.cells):
        parts = sorted(texts.get(k, []))
        rows: list[str] = []
        last_y: float | None = None
        last_x1 = 0.0
        for y, x0, x1, size, t in parts:
            if last_y is not None and y == last_y:
                # whitespace-only spans were dropped: a gap of a fifth of the font size is a space
                gap = x0 - last_x1 > 0.2 * size and not rows[-1].endswith(" ") and not t.startswith(" ")
                rows[-1] += (" " if gap else "") + t
            else:
                rows.append(t)
            last_y, last_x1 = y, x1
        cells.append(Cell(_esc(_join(rows)), c.row, c.col, c.rowspan, c.colspan))
    first = [k for k, c in enumerate(g.cells) if c.row == 0]
    header = 1 if first and all(bold.get(k, False) for k in first if k in texts) and any(k in texts for k in first) else 0
    for cell in cells:
        cell.header = cell.row < header
    return Table(g.n_rows, g.n_cols, cells, header_rows=header)


def _block_kind(b: TextBlock, body: float) -> tuple[str, int]:
    text = " ".join(ln.text.strip() for ln in b.lines).strip()
    size = max((s.size for ln in b.lines for s in ln.spans if s.text.strip()), default=body)
    if len(b.lines) <= 3 and len(text) <= 200 and size >= HEADING_RATIO * body and any(c.isalpha() for c in text):
        r = size / body
        return "heading", 1 if r >= 1.7 else 2 if r >= 1.4 else 3
    spans = [s for ln in b.lines for s in ln.spans if s.text.strip()]
    if (len(b.lines) == 1 and spans and all(s.bold for s in spans) and size >= body - 0.5 and len(text) <= 80
            and not _SENTENCE_END.search(text) and any(c.isalpha() for c in text)):
        return "heading", 4
    return "text", 0


def _paragraph(lines: list[str], keep_lines: bool) -> Paragraph:
    if keep_lines:
        return Paragraph("\n".join(_esc_start(ln.strip()) for ln in lines if ln.strip()))
    return Paragraph(_esc_start(_join(lines)))


def _line_blocks(blocks: list[TextBlock], body: float, page_width: float) -> set[int]:
    """Indexes of the blocks that are lines to keep (see the module docstring)."""
    boxes = [(min(ln.bbox[0] for ln in b.lines), min(ln.bbox[1] for ln in b.lines),
              max(ln.bbox[2] for ln in b.lines), max(ln.bbox[3] for ln in b.lines)) if b.lines else b.bbox
             for b in blocks]
    multi = [k for k, b in enumerate(blocks) if len(b.lines) >= 2]
    tall = [k for k in multi if len(blocks[k].lines) >= 3]
    columns = any(
        boxes[i][2] < boxes[j][0] and boxes[i][1] < boxes[j][3] and boxes[j][1] < boxes[i][3]
        for i in tall for j in tall
    )
    floor = 0.0 if columns else 0.5 * page_width
    multi_set = set(multi)
    out: set[int] = set()
    for k in multi:
        b = blocks[k]
        widths = [ln.bbox[2] - ln.bbox[0] for ln in b.lines]
        lefts = [ln.bbox[0] for ln in b.lines]
        size = max((s.size for ln in b.lines for s in ln.spans if s.text.strip()), default=body)
        if not is_line_block(widths, lefts, size, float("inf")):
            continue  # not aligned, or justified: no full line needed to tell
        group = [j for j in range(len(blocks)) if blocks[j].lines and abs(boxes[j][0] - boxes[k][0]) <= 1.5 * body]
        if columns:
            # a block spanning the columns (an abstract above them) is no line of this column
            spans = sorted(boxes[j][2] - boxes[j][0] for j in group if j in multi_set) or [boxes[k][2] - boxes[k][0]]
            typical = spans[len(spans) // 2]
            group = [j for j in group if boxes[j][2] - boxes[j][0] <= 1.5 * typical]
        col = sorted(ln.bbox[2] - ln.bbox[0] for j in group for ln in blocks[j].lines)
        full = max(floor, col[min(len(col) - 1, int(0.8 * len(col)))] if col else 0.0)
        if is_line_block(widths, lefts, size, full):
            out.add(k)
    return out


def _text_blocks(b: TextBlock, body: float, keep_lines: bool = False, code: bool = False) -> list[Block]:
    """A text block -> a paragraph, or list items (with paragraphs before the first bullet).
    ``keep_lines``: the block is lines (an address): its paragraph keeps its line breaks.
    ``code``: monospaced spans become code spans."""
    out: list[Block] = []
    para: list[str] = []
    items: list[list[str]] = []
    ordered: bool | None = None
    start = 1  # the number of the list's first item ("3." starts a list at 3)
    for ln in b.lines:
        raw = ln.text
        m = _BULLET.match(raw)
        # "12. März 2018" on a line of its own is a date, not item 12 (issue 32)
        e = _ENUM.match(raw) if not m and not starts_with_date(raw) else None
        if m or e:
            if para:
                out.append(_paragraph(para, keep_lines))
                para = []
            kind = e is not None
            if items and ordered is not None and kind != ordered:
                out.append(ListBlock([ListItem(_esc_start(_join(i))) for i in items], ordered=bool(ordered), start=start))
                items = []
            if not items:
                # the start is the first item's number, not the block's first line's (a block
                # "Leipzig / 3. Item" started its list at 1)
                start = int(e.group(2)) if e is not None and e.group(2).isdigit() else 1
            ordered = kind
            cut = (m or e).end()  # type: ignore[union-attr]
            rest = raw[cut:]
            items.append([_esc(rest)])
        elif items:
            items[-1].append(_inline(ln.spans, True, code))
        else:
            para.append(_inline(ln.spans, True, code))
    if para:
        out.append(_paragraph(para, keep_lines))
    if items:
        out.append(ListBlock([ListItem(_esc_start(_join(i))) for i in items], ordered=bool(ordered),
                             start=start if ordered else 1))
    return out


def layer_blocks(layer: PageLayer) -> list[Block]:
    """See the module docstring."""
    body = _body_size(layer)
    tables = list(layer.tables)
    placed: set[int] = set()
    in_table: dict[int, list[Line]] = {k: [] for k in range(len(tables))}
    # Lines inside a table belong to it, wherever the block around them goes.
    kept: list[tuple[TextBlock, list[int]]] = []
    for b in layer.blocks:
        lines: list[Line] = []
        hit: list[int] = []
        for ln in b.lines:
            k = next((k for k, g in enumerate(tables) if _inside(ln.bbox, g)), None)
            if k is None:
                lines.append(ln)
            else:
                in_table[k].append(ln)
                hit.append(k)
        kept.append((TextBlock(lines, b.bbox), list(dict.fromkeys(hit))))
    out: list[Block] = []
    lined = _line_blocks([b for b, _hit in kept], body, layer.width)
    code = _mono_share(layer) < MONO_BODY_SHARE

    def put_table(k: int) -> None:
        if k in placed:
            return
        placed.add(k)
        t = _table(tables[k], in_table[k])
        if t is not None:
            out.append(t)

    for n, (b, hit) in enumerate(kept):
        if b.lines:
            kind, level = _block_kind(b, body)
            if kind == "heading":
                out.append(Heading(level, _join([_inline(ln.spans, False, code) for ln in b.lines])))
            elif code and _mono(b):
                out.append(_code_block(b))
            else:
                for blk in _text_blocks(b, body, n in lined, code):
                    # consecutive list blocks of one kind are one list
                    prev = out[-1] if out else None
                    if (isinstance(blk, ListBlock) and isinstance(prev, ListBlock)
                            and prev.ordered == blk.ordered):
                        prev.items.extend(blk.items)
                    else:
                        out.append(blk)
        for k in hit:
            put_table(k)
    for k in range(len(tables)):
        put_table(k)
    return out


def layer_page(layer: PageLayer, degraded: list[Degraded]) -> LayerBlocks:
    """See the module docstring. The layout (headings, lists, tables placed) is an optional
    stage: if it fails, the layer's lines become plain paragraphs, one per text block."""

    blocks = optional(Stage.TEXT_LAYER_LAYOUT, lambda: layer_blocks(layer), lambda: plain_blocks(layer), degraded)
    return LayerBlocks(tuple(blocks), blocks_md(blocks))


def plain_blocks(layer: PageLayer) -> list[Block]:
    """The layer's text without layout: one paragraph per text block, its lines joined."""
    out: list[Block] = []
    for b in layer.blocks:
        text = _esc_start(_join([_esc(ln.text) for ln in b.lines]))
        if text.strip():
            out.append(Paragraph(text))
    return out
