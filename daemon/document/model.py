"""The document model every output writer uses, and the parsers that build it.

``Document -> pages -> blocks``. A block is one of :class:`Heading`, :class:`Paragraph`
(``role`` ``body``, or ``header``/``footer`` for running page headers and footers detected across
pages), :class:`ListBlock`, :class:`Table` (a grid of :class:`Cell` with row/column spans and
header rows), :class:`MathBlock` (display math), :class:`Image` (a placeholder: OCR never has the
pixels), :class:`CodeBlock` and :class:`Rule`.

Every piece of running text in the model (heading text, paragraph text, list items, table cells)
is *normalised inline Markdown*:

- math is delimited only by ``$…$`` (inline) and ``$$…$$`` (display inside running text);
  ``\\(…\\)``, ``\\[…\\]`` and escaped-dollar math like ``\\$x^2\\$`` are rewritten to that form;
- a literal dollar sign is always written ``\\$``, so every unescaped ``$`` is a math delimiter;
- emphasis as ``**bold**``, ``*italic*``, ``~~strike~~``; ``<sup>``, ``<sub>``, ``<u>`` as HTML;
  a line break inside a table cell is ``\\n``.

:func:`parse_inline` turns such a string into styled :class:`Run` objects for the writers that
are not Markdown. :func:`parse_document` builds a :class:`Document` from the engine's page
texts: Markdown with HTML tables (LightOnOCR) or plain text (Tesseract).

Parsing never raises on odd input: whatever cannot be understood stays as paragraph text.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Literal

log = logging.getLogger(__name__)

#: Version tag written into the JSON form of the model.
MODEL_FORMAT = "ocr-daemon.document/1"

# Spans larger than this are clamped: a model output saying rowspan="100000" must not allocate a
# huge grid.
MAX_SPAN = 1000
MAX_TABLE_CELLS = 200_000


# --------------------------------------------------------------------------------------------
# Blocks


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
        tags whose Latin letters outweigh a short Chinese or Japanese text)."""
        parts: list[str] = []

        def items(lb: ListBlock) -> None:
            for it in lb.items:
                parts.append(plain_text(it.text, math_delims=False))
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


# --------------------------------------------------------------------------------------------
# Inline Markdown: normalisation


_LATEXISH = re.compile(r"[\\^_{}=]")
_NUMBERISH = re.compile(r"^[\d\s.,'%+\-−]*$")


def _find_unescaped(s: str, needle: str, start: int) -> int:
    """Index of the next ``needle`` at or after ``start`` that is not backslash-escaped."""
    i = start
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s.startswith(needle, i):
            return i
        i += 1
    return -1


def _math_body_ok(body: str) -> bool:
    """Can ``body`` sit between math delimiters at all: not blank, no blank line, no unescaped
    ``$``, and no odd run of backslashes at its end (it would escape the closing delimiter)."""
    stripped = body.strip()
    if not stripped or "\n\n" in body or _find_unescaped(stripped, "$", 0) != -1:
        return False
    return (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 0


def _inline_math_ok(content: str, after: str) -> bool:
    """TeX/pandoc rule for ``$…$``: no space just inside the delimiters and no digit right after
    the closing one (so ``$5 and $10`` stays money) -- unless the content plainly is LaTeX."""
    if not _math_body_ok(content) or "\n" in content or "\\(" in content or "\\[" in content:
        return False
    if not _LATEXISH.search(content) and len(re.findall(r"(?:^|\s)[^\W\d_]{3,}(?=[\s,.;:!?]|$)", content)) >= 2:
        return False  # "$3 per run, and 50$": prose between two prices, not a formula
    edge_space = content[0].isspace() or content[-1].isspace()
    # "$ x^2 $" is sloppy math; "$5 and $" is money
    if edge_space and not (content[0].isspace() and content[-1].isspace() and _LATEXISH.search(content)):
        return False
    return not after.isdigit()


def _escaped_math_ok(content: str, after: str) -> bool:
    """Whether ``\\$content\\$`` is math the engine escaped by mistake rather than two literal
    dollar signs (``\\$5 and \\$10``): tight delimiters, not just a number, and either LaTeX
    markup or a short formula-like token (``x``, ``2x``, ``n+1``)."""
    if not _math_body_ok(content) or content[0].isspace() or content[-1].isspace() or after.isdigit():
        return False
    if _NUMBERISH.match(content) or not re.search(r"[A-Za-z\\]", content) or "$" in content:
        return False
    if "\n" in content or "\\(" in content or "\\[" in content:
        return False
    if _LATEXISH.search(content):
        return True
    return len(content) <= 12 and bool(re.fullmatch(r"[A-Za-z0-9+\-*/=<>().,' ]+", content)) and (
        len(re.findall(r"[A-Za-z]+", content)) <= 3 and all(len(w) <= 2 for w in re.findall(r"[A-Za-z]+", content))
    )


def _next_dollar(s: str, start: int) -> tuple[int, int]:
    """(position, length) of the next dollar token at/after ``start``: ``$`` (1) or ``\\$`` (2);
    (-1, 0) if none. ``\\\\`` pairs are skipped."""
    i = start
    while i < len(s):
        if s[i] == "\\":
            if s[i + 1 : i + 2] == "$":
                return i, 2
            i += 2
            continue
        if s[i] == "$":
            return i, 1
        i += 1
    return -1, 0


def _escaped_pair(s: str, i: int, open_len: int) -> tuple[str, int] | None:
    """Repair escaped-dollar math: the dollar token at ``i`` (``open_len`` 1 or 2) and the next
    dollar token, when at least one of them is escaped and the text between looks like math.
    Returns (``$body$``, index after the closing token) or None."""
    j, close_len = _next_dollar(s, i + open_len)
    if j == -1 or (open_len == 1 and close_len == 1):
        return None
    body = s[i + open_len : j]
    if _escaped_math_ok(body, s[j + close_len : j + close_len + 1]):
        return f"${body}$", j + close_len
    return None


def _code_span_end(s: str, i: int) -> tuple[int, int]:
    """For a backtick run at ``i``: (length of the run, index just past the closing run or -1)."""
    j = i
    while j < len(s) and s[j] == "`":
        j += 1
    ticks = s[i:j]
    k = s.find(ticks, j)
    while k != -1 and k + len(ticks) < len(s) and s[k + len(ticks)] == "`":
        k = s.find(ticks, k + len(ticks) + 1)
    return len(ticks), (k + len(ticks) if k != -1 else -1)


def normalize_inline(s: str) -> str:
    """Normalise engine Markdown inline text (see the module docstring): math delimiters,
    repaired escaped-dollar math, literal dollars escaped. Code spans are left untouched.
    Idempotent: ``normalize_inline(normalize_inline(x)) == normalize_inline(x)``."""
    # Two passes: first \(…\) / \[…\] become dollars, then every dollar token is judged once
    # with all of them in view (judging them in one pass made the result depend on the order).
    return _normalize_pass(_normalize_pass(s, parens=True), parens=False)


def _normalize_pass(s: str, *, parens: bool) -> str:
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == "`":
            nt, end = _code_span_end(s, i)
            if end == -1:
                out.append(s[i : i + nt])
                i += nt
            else:
                out.append(s[i:end])
                i = end
            continue
        if ch == "\\" and i + 1 < n:
            nxt = s[i + 1]
            if parens and nxt in "([":
                close = "\\)" if nxt == "(" else "\\]"
                j = s.find(close, i + 2)
                # "$" inside \(…\) would be judged again by the dollar pass: leave such text alone
                if j != -1 and _math_body_ok(s[i + 2 : j]) and "$" not in s[i + 2 : j]:
                    body = s[i + 2 : j].strip()
                    out.append(f"${body}$" if nxt == "(" else f"$${body}$$")
                    i = j + 2
                    continue
            if nxt == "$" and not parens:
                if s.startswith("\\$\\$", i):
                    j = s.find("\\$\\$", i + 4)
                    if j != -1 and _math_body_ok(s[i + 4 : j]) and _escaped_math_ok(s[i + 4 : j], ""):
                        out.append("$$" + s[i + 4 : j].strip() + "$$")
                        i = j + 4
                        continue
                got = _escaped_pair(s, i, 2)
                if got:
                    out.append(got[0])
                    i = got[1]
                    continue
                out.append("\\$")
                i += 2
                continue
            out.append(s[i : i + 2])
            i += 2
            continue
        if ch == "$" and not parens:
            if s.startswith("$$", i):
                j = _find_unescaped(s, "$$", i + 2)
                if j != -1 and _math_body_ok(s[i + 2 : j]):
                    out.append("$$" + s[i + 2 : j].strip() + "$$")
                    i = j + 2
                    continue
                out.append("\\$")  # no closing "$$": the second "$" may still open inline math
                i += 1
                continue
            j = _find_unescaped(s, "$", i + 1)
            if j != -1:
                body = s[i + 1 : j]
                if _inline_math_ok(body, s[j + 1 : j + 2]):
                    out.append("$" + body.strip() + "$")
                    i = j + 1
                    continue
            got = _escaped_pair(s, i, 1)
            if got:
                out.append(got[0])
                i = got[1]
                continue
            out.append("\\$")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_MD_ESCAPE = re.compile(r"([\\`*_$<\[\]~|])")
_MD_LINE_START = re.compile(r"^(\s*)(#{1,6}\s|[-+*]\s|\d{1,9}[.)]\s|>|={3,}\s*$|-{3,}\s*$)")


def escape_plain(text: str) -> str:
    """Plain text (Tesseract) -> inline Markdown that means exactly that text."""
    lines = []
    for line in text.split("\n"):
        line = _MD_ESCAPE.sub(r"\\\1", line)
        m = _MD_LINE_START.match(line)
        if m and m.group(2)[0].isdigit():
            # CommonMark escapes only ASCII punctuation: "\1." shows the backslash; "1\." is a
            # literal "1." that does not start an ordered list.
            k = len(m.group(1)) + len(m.group(2).rstrip()) - 1
            line = line[:k] + "\\" + line[k:]
        elif m:
            line = m.group(1) + "\\" + line[len(m.group(1)) :]
        lines.append(line)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Inline Markdown: runs


@dataclass
class Run:
    """A piece of inline content. ``kind``: ``text`` (styled by the flags), ``math`` (LaTeX source
    in ``text``; ``display`` for ``$$…$$``), ``code``, ``break`` (a hard line break), ``image``
    (``text`` is the alt text)."""

    kind: Literal["text", "math", "code", "break", "image"]
    text: str = ""
    bold: bool = False
    italic: bool = False
    underline: bool = False
    strike: bool = False
    sup: bool = False
    sub: bool = False
    href: str | None = None
    display: bool = False

    def style(self) -> tuple[bool, bool, bool, bool, bool, bool, str | None]:
        return (self.bold, self.italic, self.underline, self.strike, self.sup, self.sub, self.href)


# Placeholders in the supplementary private use area stand for atoms and style toggles while the
# emphasis regexes run, so the regexes never see inside math or code.
_PUA = 0xF0000
_ATOM_RE = re.compile("[\U000f0000-\U000ffffd]")
_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[^<>]*?)?)\s*(/?)>")
_ATTR_RE = re.compile(r"""([A-Za-z_:][-\w:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_ENTITY_RE = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_STYLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strike",
    "del": "strike",
    "strike": "strike",
    "sup": "sup",
    "sub": "sub",
}
_ESCAPABLE = set("\\`*_{}[]()#+-.!|$<>~&%^\"'=:;,/?@")


def _attrs(s: str) -> dict[str, str]:
    return {m.group(1).lower(): html.unescape(m.group(2) or m.group(3) or m.group(4) or "") for m in _ATTR_RE.finditer(s)}


def _wrapper(on: str, off: str) -> Callable[[re.Match[str]], str]:
    return lambda m: on + m.group(1) + off


def parse_inline(text: str) -> list[Run]:
    """Normalised inline Markdown -> runs (adjacent runs of the same style merged). A newline is
    a ``break`` run: OCR line breaks inside a paragraph or a cell are kept."""
    return [dataclasses.replace(r) for r in _parse_inline_cached(text)]


@functools.lru_cache(maxsize=32768)
def _parse_inline_cached(text: str) -> tuple[Run, ...]:
    # every writer reads the same cell texts (and render_outputs runs twice per document)
    return tuple(_parse_inline(text))


def _parse_inline(text: str) -> list[Run]:
    atoms: list[tuple[str, ...]] = []

    def atom(*a: str) -> str:
        atoms.append(a)
        return chr(_PUA + len(atoms) - 1)

    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "`":
            nt, end = _code_span_end(text, i)
            if end != -1:
                body = text[i + nt : end - nt].replace("\n", " ")  # CommonMark: line ends -> spaces
                if body.startswith(" ") and body.endswith(" ") and body.strip():
                    body = body[1:-1]
                buf.append(atom("code", body))
                i = end
            else:
                buf.append(atom("lit", text[i : i + nt]))
                i += nt
            continue
        if _PUA <= ord(ch) <= 0xFFFFD:  # the input's own private-use characters: keep, never as placeholders
            buf.append(atom("lit", ch))
            i += 1
            continue
        if ch == "\n":
            buf.append(atom("break"))
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "\n":
                buf.append(atom("break"))
            elif nxt in _ESCAPABLE:
                buf.append(atom("lit", nxt))
            else:
                buf.append(atom("lit", "\\" + nxt))
            i += 2
            continue
        if ch == "$":
            if text.startswith("$$", i):
                j = _find_unescaped(text, "$$", i + 2)
                if j != -1:
                    buf.append(atom("math", text[i + 2 : j].strip(), "display"))
                    i = j + 2
                    continue
            else:
                j = _find_unescaped(text, "$", i + 1)
                if j != -1:
                    buf.append(atom("math", text[i + 1 : j].strip(), ""))
                    i = j + 1
                    continue
            buf.append(atom("lit", "$"))
            i += 1
            continue
        if ch == "<":
            m = _TAG_RE.match(text, i)
            if m:
                closing, name, rest, _selfclose = m.group(1), m.group(2).lower(), m.group(3), m.group(4)
                if name == "br":
                    buf.append(atom("break"))
                elif name == "img":
                    a = _attrs(rest)
                    buf.append(atom("image", a.get("alt", ""), a.get("src", "")))
                elif name in _STYLE_TAGS:
                    buf.append(atom("off" if closing else "on", _STYLE_TAGS[name]))
                elif name == "a":
                    buf.append(atom("linkoff") if closing else atom("linkon", _attrs(rest).get("href", "")))
                elif name == "code":
                    pass  # <code>…</code> in a cell: keep the text, drop the tag
                # any other tag (span, font, p, div …) is dropped, its text kept
                i = m.end()
                continue
            m2 = re.match(r"<((?:https?|ftp)://[^\s<>]+|mailto:[^\s<>]+)>", text[i:])
            if m2:
                buf.append(atom("linkon", m2.group(1)) + m2.group(1) + atom("linkoff"))
                i += m2.end()
                continue
        if ch == "!" and text.startswith("![", i):
            m = re.match(r"!\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)", text[i:])
            if m:
                buf.append(atom("image", m.group(1), m.group(2)))
                i += m.end()
                continue
        if ch == "[":
            m = re.match(r"\[([^\[\]]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text[i:])
            if m:
                # the link text goes through the emphasis pass below like any other text
                buf.append(atom("linkon", m.group(2)) + m.group(1) + atom("linkoff"))
                i += m.end()
                continue
        buf.append(ch)
        i += 1
    s = "".join(buf)

    def toggle(name: str) -> tuple[str, str]:
        return atom("on", name), atom("off", name)

    for pattern, name in (
        (r"\*\*(?=\S)(.+?)(?<=\S)\*\*", "bold"),
        (r"(?<![\w\\])__(?=\S)(.+?)(?<=\S)__(?!\w)", "bold"),
        (r"~~(?=\S)(.+?)(?<=\S)~~", "strike"),
        (r"\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*", "italic"),
        (r"(?<![\w\\])_(?=[^\s_])([^_]+?)(?<=[^\s_])_(?!\w)", "italic"),
    ):
        on, off = toggle(name)
        s = re.sub(pattern, _wrapper(on, off), s, flags=re.S)

    runs: list[Run] = []
    flags = {"bold": 0, "italic": 0, "underline": 0, "strike": 0, "sup": 0, "sub": 0}
    links: list[str] = []

    def styled(kind: Any, txt: str = "", display: bool = False) -> Run:
        return Run(
            kind,
            txt,
            bold=flags["bold"] > 0,
            italic=flags["italic"] > 0,
            underline=flags["underline"] > 0,
            strike=flags["strike"] > 0,
            sup=flags["sup"] > 0,
            sub=flags["sub"] > 0,
            href=links[-1] if links else None,
            display=display,
        )

    def add_text(txt: str) -> None:
        if not txt:
            return
        r = styled("text", txt)
        if runs and runs[-1].kind == "text" and runs[-1].style() == r.style():
            runs[-1].text += txt
        else:
            runs.append(r)

    pos = 0
    for m in _ATOM_RE.finditer(s):
        add_text(_ENTITY_RE.sub(lambda e: html.unescape(e.group(0)), s[pos : m.start()]))
        pos = m.end()
        at = atoms[ord(m.group(0)) - _PUA]
        k = at[0]
        if k == "lit":
            add_text(at[1])
        elif k == "code":
            runs.append(styled("code", at[1]))
        elif k == "math":
            runs.append(styled("math", at[1], display=at[2] == "display"))
        elif k == "break":
            runs.append(styled("break"))
        elif k == "image":
            runs.append(styled("image", at[1]))
        elif k == "on":
            flags[at[1]] += 1
        elif k == "off":
            flags[at[1]] = max(0, flags[at[1]] - 1)
        elif k == "linkon":
            links.append(at[1])
        elif k == "linkoff" and links:
            links.pop()
    add_text(_ENTITY_RE.sub(lambda e: html.unescape(e.group(0)), s[pos:]))
    return runs


@functools.lru_cache(maxsize=32768)
def plain_text(text: str, *, math_delims: bool = True) -> str:
    """Inline Markdown -> plain text: styles dropped, math kept as LaTeX source (``$…$`` when
    ``math_delims``), images as ``[image: alt]``, links as ``text (url)``."""
    parts: list[str] = []
    runs = _parse_inline_cached(text)
    for idx, r in enumerate(runs):
        if r.kind == "text":
            parts.append(_unicode_script(r.text, r.sup, r.sub))
        elif r.kind == "code":
            parts.append(r.text)
        elif r.kind == "math":
            d = "$$" if r.display else "$"
            parts.append(f"{d}{r.text}{d}" if math_delims else r.text)
        elif r.kind == "break":
            parts.append("\n")
        elif r.kind == "image":
            parts.append(f"[image: {r.text}]" if r.text else "[image]")
        nxt = runs[idx + 1] if idx + 1 < len(runs) else None
        if r.href and (nxt is None or nxt.href != r.href):
            label = "".join(x.text for x in runs[: idx + 1] if x.href == r.href)
            if r.href not in (label, "mailto:" + label):
                parts.append(f" ({r.href})")
    return "".join(parts)


_SUP = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUB = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")


def _unicode_script(t: str, sup: bool, sub: bool) -> str:
    """Superscript/subscript text in plain output: Unicode digits where they exist (m², H₂O),
    else the text as is (1er, footnote marks)."""
    if not (sup or sub):
        return t
    table, chars = (_SUP, "0123456789+-=()n") if sup else (_SUB, "0123456789+-=()")
    if t and all(c in chars for c in t):
        return t.translate(table)
    return t


# --------------------------------------------------------------------------------------------
# HTML tables


_INLINE_MD = {"b": "**", "strong": "**", "i": "*", "em": "*", "s": "~~", "del": "~~", "strike": "~~", "code": "`"}
_INLINE_HTML = {"sup", "sub", "u"}
_BLOCKISH = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "caption"}


_HTML_WS = " \t\n\r\f"
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


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


# --------------------------------------------------------------------------------------------
# Pipe tables


_DELIM_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


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
    if len(lines) < 2 or not _DELIM_ROW.match(lines[1]):
        return None
    head = _split_pipe_row(lines[0])
    body = [_split_pipe_row(ln) for ln in lines[2:]]
    rows = [[(normalize_inline(t.replace("<br>", "\n").replace("<br/>", "\n")), 1, 1, r == 0) for t in row]
            for r, row in enumerate([head, *body])]
    n = max(len(r) for r in rows)
    rows = [r + [("", 1, 1, i == 0)] * (n - len(r)) for i, r in enumerate(rows)]
    return _place(rows, [True] + [False] * len(body))


# --------------------------------------------------------------------------------------------
# Block parser


_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*(?:\s#+\s*)?$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_LIST_ITEM = re.compile(r"^(\s*)([-*+•]|(\d{1,9})[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_IMAGE_LINE = re.compile(r"^!\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)$")
_IMG_TAG_LINE = re.compile(r"^<img\b[^<>]*>$", re.I)
_MATH_ENV = re.compile(r"^\\begin\{(equation|align|gather|multline|flalign|alignat|eqnarray|displaymath|math)(\*?)\}")
_TABLE_OPEN = re.compile(r"<table\b", re.I)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.I)
_COMMENT_LINE = re.compile(r"^\s*<!--.*?-->\s*$")


def _collect_until(lines: list[str], i: int, first_rest: str, close: str) -> tuple[str, str, int] | None:
    """From ``first_rest`` (line i after the opener) collect text until ``close`` (unescaped),
    stopping at a blank line. Returns (content, rest of the closing line, next line index)."""
    buf = first_rest
    j = i
    while True:
        k = buf.find(close) if close.startswith("\\") else _find_unescaped(buf, close, 0)
        if k != -1:
            return buf[:k], buf[k + len(close) :], j + 1
        j += 1
        if j >= len(lines) or not lines[j].strip():
            return None
        buf += "\n" + lines[j]


def parse_markdown_page(text: str) -> list[Block]:
    """One page of engine Markdown -> blocks."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            t = normalize_inline("\n".join(ln.strip() for ln in para)).strip()
            if t:
                blocks.append(Paragraph(t))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s:
            flush()
            i += 1
            continue
        if _COMMENT_LINE.match(s):
            flush()
            i += 1
            continue
        if s.startswith("<!--"):
            j = i
            while j < len(lines) and "-->" not in lines[j]:
                j += 1
            if j < len(lines):
                flush()
                rest = lines[j].split("-->", 1)[1]
                if rest.strip():
                    lines[j] = rest
                    i = j
                else:
                    i = j + 1
                continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            j = i + 1
            body: list[str] = []
            while j < len(lines) and not lines[j].strip().startswith(fence):
                body.append(lines[j])
                j += 1
            if j < len(lines):
                flush()
                blocks.append(CodeBlock("\n".join(body), m.group(2)))
                i = j + 1
                continue
        # display math
        opener = "$$" if s.startswith("$$") else "\\[" if s.startswith("\\[") else ""
        if opener and not para:
            close = "$$" if opener == "$$" else "\\]"
            got = _collect_until(lines, i, s[len(opener) :], close)
            if got is not None and got[0].strip():
                content, rest, nxt = got
                blocks.append(MathBlock(content.strip()))
                if rest.strip():
                    lines[nxt - 1] = rest
                    i = nxt - 1
                else:
                    i = nxt
                continue
        m = _MATH_ENV.match(s)
        if m:
            end = f"\\end{{{m.group(1)}{m.group(2)}}}"
            got = _collect_until(lines, i, s, end)
            if got is not None:
                flush()
                content, rest, nxt = got
                blocks.append(MathBlock((content + end).strip()))
                if rest.strip():
                    lines[nxt - 1] = rest
                    i = nxt - 1
                else:
                    i = nxt
                continue
        # HTML table
        tm = _TABLE_OPEN.search(line)
        if tm:
            before = line[: tm.start()]
            buf = line[tm.start() :]
            j = i
            depth = 0
            end_pos = -1
            while True:
                depth = len(_TABLE_OPEN.findall(buf)) - len(_TABLE_CLOSE.findall(buf))
                if depth <= 0:
                    closes = list(_TABLE_CLOSE.finditer(buf))
                    end_pos = closes[-1].end() if closes else len(buf)
                    break
                j += 1
                if j >= len(lines):
                    end_pos = len(buf)  # unterminated table: take the rest of the page
                    break
                buf += "\n" + lines[j]
            if before.strip():
                para.append(before)
            flush()
            table = parse_html_table(buf[:end_pos])
            if table is not None:
                blocks.append(table)
            rest = buf[end_pos:]
            if rest.strip():
                lines[j] = rest
                i = j
            else:
                i = j + 1
            continue
        # pipe table
        if "|" in s and i + 1 < len(lines) and _DELIM_ROW.match(lines[i + 1]) and "-" in lines[i + 1]:
            j = i + 2
            while j < len(lines) and lines[j].strip() and "|" in lines[j]:
                j += 1
            table = parse_pipe_table([ln for ln in lines[i:j]])
            if table is not None:
                flush()
                blocks.append(table)
                i = j
                continue
        m = _HEADING.match(line)
        if m:
            flush()
            blocks.append(Heading(len(m.group(1)), normalize_inline(m.group(2).strip())))
            i += 1
            continue
        if para and re.match(r"^\s{0,3}(=+|-+)\s*$", line):  # setext heading
            level = 1 if s.startswith("=") else 2
            t = normalize_inline(" ".join(p.strip() for p in para))
            para.clear()
            blocks.append(Heading(level, t))
            i += 1
            continue
        if _RULE.match(line):
            flush()
            blocks.append(Rule())
            i += 1
            continue
        if _LIST_ITEM.match(line) and not para:
            lst, i = _parse_list(lines, i)
            blocks.append(lst)
            continue
        m = _IMAGE_LINE.match(s)
        if m:
            flush()
            blocks.append(Image(m.group(1), m.group(2)))
            i += 1
            continue
        if _IMG_TAG_LINE.match(s):
            flush()
            a = _attrs(s[4:-1])
            blocks.append(Image(a.get("alt", ""), a.get("src", "")))
            i += 1
            continue
        if s.startswith(">"):
            para.append(s.lstrip(">").strip())
            i += 1
            continue
        para.append(line)
        i += 1
    flush()
    return blocks


def _parse_list(lines: list[str], i: int) -> tuple[ListBlock, int]:
    """Consecutive list lines from ``lines[i]`` -> a (nested) ListBlock, and the next index."""
    items: list[tuple[int, bool, int, str]] = []  # indent, ordered, number, text
    while i < len(lines):
        line = lines[i]
        m = _LIST_ITEM.match(line)
        if m and not _RULE.match(line):
            indent = len(m.group(1).expandtabs(4))
            if items and indent <= items[0][0] and (m.group(3) is not None) != items[0][1]:
                break  # "- a" then "1. b" at the same level: two lists
            items.append((indent, m.group(3) is not None, int(m.group(3) or 1), m.group(4).strip()))
            i += 1
            continue
        if not line.strip():
            # a blank line ends the list unless the next non-blank line is another item
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and _LIST_ITEM.match(lines[j]) and not _RULE.match(lines[j]):
                i = j
                continue
            break
        if items and (line.startswith("  ") or line.startswith("\t")) and not _TABLE_OPEN.search(line):
            ind, o, num, t = items[-1]
            items[-1] = (ind, o, num, t + "\n" + line.strip())
            i += 1
            continue
        break
    root = ListBlock([], ordered=items[0][1], start=items[0][2])
    stack: list[tuple[int, ListBlock]] = [(items[0][0], root)]
    for indent, ordered, num, text in items:
        item = ListItem(normalize_inline(text))
        while len(stack) > 1 and indent < stack[-1][0]:
            stack.pop()
        cur_indent, cur = stack[-1]
        if indent > cur_indent + 1 and cur.items:
            sub = ListBlock([], ordered=ordered, start=num)
            cur.items[-1].children = sub
            stack.append((indent, sub))
            cur = sub
        cur.items.append(item)
    return root, i


def parse_plain_page(text: str) -> list[Block]:
    """One page of plain OCR text -> paragraphs (separated by blank lines; line breaks kept)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    out: list[Block] = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = [ln.rstrip() for ln in chunk.split("\n") if ln.strip()]
        if lines:
            out.append(Paragraph(escape_plain("\n".join(lines))))
    return out


# --------------------------------------------------------------------------------------------
# Document


_PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:(?:page|p\.|seite|s\.|página|pág\.|pagina|pag\.|sida|side|blz\.|bladzijde)\s*)?"
    r"\d{1,4}(?:\s*(?:/|of|von|de|di|van|av|af|sur)\s*\d{1,4})?[-–—\s]*$|^第\s*\d{1,4}\s*[页頁]$|^\d{1,4}\s*ページ$",
    re.I,
)


def _norm_running(text: str) -> str:
    return re.sub(r"\d+", "#", plain_text(text).strip().lower())


def _mark_running_heads(pages: list[Page]) -> None:
    """Mark running page headers/footers: a short first/last paragraph that repeats (digits
    ignored) on at least half of the pages (and at least 2), or a last line that is just a page
    number. Only the role changes; the text stays where it was."""
    for pos, role in ((0, "header"), (-1, "footer")):
        ends: list[Paragraph | None] = []
        for p in pages:
            b = p.blocks[pos] if p.blocks else None
            ends.append(b if isinstance(b, Paragraph) and len(b.text) <= 120 and "\n" not in b.text.strip() else None)
        counts: dict[str, int] = {}
        for b in ends:
            if b is not None:
                counts[_norm_running(b.text)] = counts.get(_norm_running(b.text), 0) + 1
        for p, b in zip(pages, ends, strict=True):
            if b is None or len(p.blocks) < 2:
                continue
            k = counts[_norm_running(b.text)]
            repeated = len(pages) >= 2 and k >= 2 and k * 2 >= len(pages)
            if repeated or (role == "footer" and _PAGE_NUMBER.match(plain_text(b.text).strip())):
                b.role = role  # type: ignore[assignment]


def parse_document(pages: Sequence[str], *, markdown: bool = True, language: str = "unknown") -> Document:
    """Engine page texts -> :class:`Document`. ``markdown``: the texts are engine Markdown
    (VLM); else plain OCR text (Tesseract)."""
    parsed = [
        Page(n, parse_markdown_page(t) if markdown else parse_plain_page(t)) for n, t in enumerate(pages, start=1)
    ]
    _mark_running_heads(parsed)
    return Document(parsed, language)
