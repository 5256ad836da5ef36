"""One page of engine text -> blocks of the document model.

Contract:
- ``parse_markdown_page(text)``: engine Markdown (LightOnOCR: CommonMark-ish with HTML tables,
  ``$…$``/``\\[…\\]`` math, ``<img>`` placeholders) -> headings (ATX and setext), paragraphs,
  nested lists, display math (``$$``, ``\\[``, ``\\begin{equation}`` and friends), code fences,
  HTML and pipe tables, images, rules. Comments are dropped; block quotes become paragraph text.
- ``parse_plain_page(text)``: plain OCR text (Tesseract) -> paragraphs split at blank lines,
  Markdown-significant characters escaped, line breaks kept where the lines are lines (an
  address, a signature block) and wrapped lines joined (``daemon.document.lines.plain_paragraphs``).
- ``markdown_paragraphs(paragraphs)``: such paragraphs on a page of a document whose other
  pages are Markdown (a scanned page's text around its tables, ``daemon.pages.scantables``; a
  plain page beside text-layer pages): each in NFC and normalised as inline Markdown
  (``normalize_inline``), as the Markdown pages' paragraphs are. The raw file holds such a
  document as Markdown, and ``ocr-daemon convert`` reads these paragraphs back from it as exactly
  these blocks.

Never raises on odd input: whatever cannot be understood stays paragraph text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable

from daemon.document.inline import find_unescaped, normalize_inline, tag_attrs
from daemon.document.lines import plain_paragraphs
from daemon.document.model import (
    Block,
    CodeBlock,
    Heading,
    Image,
    ListBlock,
    ListItem,
    MathBlock,
    Paragraph,
    Rule,
)
from daemon.document.tables import DELIM_ROW, parse_html_table, parse_pipe_table

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
_SETEXT_UNDERLINE = re.compile(r"^\s{0,3}(=+|-+)\s*$")


def _collect_until(lines: list[str], i: int, first_rest: str, close: str) -> tuple[str, str, int] | None:
    """From ``first_rest`` (line i after the opener) collect text until ``close`` (unescaped),
    stopping at a blank line. Returns (content, rest of the closing line, next line index)."""
    buf = first_rest
    j = i
    while True:
        k = buf.find(close) if close.startswith("\\") else find_unescaped(buf, close, 0)
        if k != -1:
            return buf[:k], buf[k + len(close) :], j + 1
        j += 1
        if j >= len(lines) or not lines[j].strip():
            return None
        buf += "\n" + lines[j]


def parse_markdown_page(text: str) -> list[Block]:
    """One page of engine Markdown -> blocks."""
    return _PageParser(text).parse()


class _PageParser:
    """Line by line: each step looks at the current line and either takes it (and maybe more
    lines; it then adds blocks, moves ``i`` on and returns True) or leaves it to the next step.
    A line no step takes is paragraph text. Steps that end inside a line (a table or display
    math followed by more text) put the rest of that line back for the next round."""

    def __init__(self, text: str) -> None:
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.blocks: list[Block] = []
        self.para: list[str] = []
        self.i = 0
        # in order: earlier steps win (a fence before a heading, a heading before a list …)
        self.steps: tuple[Callable[[str, str], bool], ...] = (
            self._blank,
            self._comment,
            self._fence,
            self._display_math,
            self._math_env,
            self._html_table,
            self._pipe_table,
            self._atx_heading,
            self._setext_heading,
            self._rule,
            self._list,
            self._image,
            self._quote,
        )

    def parse(self) -> list[Block]:
        while self.i < len(self.lines):
            line = self.lines[self.i]
            s = line.strip()
            if not any(step(line, s) for step in self.steps):
                self.para.append(line)
                self.i += 1
        self.flush()
        return self.blocks

    def flush(self) -> None:
        """The paragraph collected so far becomes a block."""
        if self.para:
            t = normalize_inline("\n".join(ln.strip() for ln in self.para)).strip()
            if t:
                self.blocks.append(Paragraph(t))
            self.para.clear()

    def _add(self, block: Block, *, flush: bool = True) -> None:
        if flush:
            self.flush()
        self.blocks.append(block)

    def _resume(self, j: int, rest: str) -> None:
        """Go on after line ``j``, or at ``rest`` (the unread end of line ``j``) if it has text."""
        if rest.strip():
            self.lines[j] = rest
            self.i = j
        else:
            self.i = j + 1

    def _blank(self, line: str, s: str) -> bool:
        if s:
            return False
        self.flush()
        self.i += 1
        return True

    def _comment(self, line: str, s: str) -> bool:
        if _COMMENT_LINE.match(s):
            self.flush()
            self.i += 1
            return True
        if not s.startswith("<!--"):
            return False
        j = self.i
        while j < len(self.lines) and "-->" not in self.lines[j]:
            j += 1
        if j >= len(self.lines):
            return False  # never closed: text
        self.flush()
        self._resume(j, self.lines[j].split("-->", 1)[1])
        return True

    def _fence(self, line: str, s: str) -> bool:
        m = _FENCE.match(line)
        if not m:
            return False
        fence = m.group(1)
        j = self.i + 1
        while j < len(self.lines) and not self.lines[j].strip().startswith(fence):
            j += 1
        if j >= len(self.lines):
            return False  # never closed: text
        self._add(CodeBlock("\n".join(self.lines[self.i + 1 : j]), m.group(2)))
        self.i = j + 1
        return True

    def _display_math(self, line: str, s: str) -> bool:
        opener = "$$" if s.startswith("$$") else "\\[" if s.startswith("\\[") else ""
        if not opener or self.para:
            return False
        got = _collect_until(self.lines, self.i, s[len(opener) :], "$$" if opener == "$$" else "\\]")
        if got is None or not got[0].strip():
            return False
        content, rest, nxt = got
        self._add(MathBlock(content.strip()), flush=False)  # no paragraph is open
        self._resume(nxt - 1, rest)
        return True

    def _math_env(self, line: str, s: str) -> bool:
        m = _MATH_ENV.match(s)
        if not m:
            return False
        end = f"\\end{{{m.group(1)}{m.group(2)}}}"
        got = _collect_until(self.lines, self.i, s, end)
        if got is None:
            return False
        content, rest, nxt = got
        self._add(MathBlock((content + end).strip()))
        self._resume(nxt - 1, rest)
        return True

    def _html_table(self, line: str, s: str) -> bool:
        tm = _TABLE_OPEN.search(line)
        if not tm:
            return False
        before = line[: tm.start()]
        buf, end_pos, j = _collect_html_table(self.lines, self.i, line[tm.start() :])
        if before.strip():
            self.para.append(before)
        self.flush()
        table = parse_html_table(buf[:end_pos])
        if table is not None:
            self.blocks.append(table)
        self._resume(j, buf[end_pos:])
        return True

    def _pipe_table(self, line: str, s: str) -> bool:
        lines, i = self.lines, self.i
        if not ("|" in s and i + 1 < len(lines) and DELIM_ROW.match(lines[i + 1]) and "-" in lines[i + 1]):
            return False
        j = i + 2
        while j < len(lines) and lines[j].strip() and "|" in lines[j]:
            j += 1
        table = parse_pipe_table(lines[i:j])
        if table is None:
            return False
        self._add(table)
        self.i = j
        return True

    def _atx_heading(self, line: str, s: str) -> bool:
        m = _HEADING.match(line)
        if not m:
            return False
        self._add(Heading(len(m.group(1)), normalize_inline(m.group(2).strip())))
        self.i += 1
        return True

    def _setext_heading(self, line: str, s: str) -> bool:
        if not (self.para and _SETEXT_UNDERLINE.match(line)):
            return False
        level = 1 if s.startswith("=") else 2
        t = normalize_inline(" ".join(p.strip() for p in self.para))
        self.para.clear()
        self.blocks.append(Heading(level, t))
        self.i += 1
        return True

    def _rule(self, line: str, s: str) -> bool:
        if not _RULE.match(line):
            return False
        self._add(Rule())
        self.i += 1
        return True

    def _list(self, line: str, s: str) -> bool:
        if self.para or not _LIST_ITEM.match(line):
            return False  # a list does not interrupt a paragraph
        lst, self.i = _parse_list(self.lines, self.i)
        self.blocks.append(lst)
        return True

    def _image(self, line: str, s: str) -> bool:
        m = _IMAGE_LINE.match(s)
        if m:
            self._add(Image(m.group(1), m.group(2)))
        elif _IMG_TAG_LINE.match(s):
            a = tag_attrs(s[4:-1])
            self._add(Image(a.get("alt", ""), a.get("src", "")))
        else:
            return False
        self.i += 1
        return True

    def _quote(self, line: str, s: str) -> bool:
        if not s.startswith(">"):
            return False
        self.para.append(s.lstrip(">").strip())  # block quotes: their text, as paragraph text
        self.i += 1
        return True


def _collect_html_table(lines: list[str], i: int, buf: str) -> tuple[str, int, int]:
    """From ``buf`` (line i from ``<table``) collect lines until the tables opened are closed
    (nested tables count). Returns (the text, the end of the table in it, the last line index);
    an unterminated table takes the rest of the page."""
    j = i
    while True:
        depth = len(_TABLE_OPEN.findall(buf)) - len(_TABLE_CLOSE.findall(buf))
        if depth <= 0:
            closes = list(_TABLE_CLOSE.finditer(buf))
            return buf, (closes[-1].end() if closes else len(buf)), j
        j += 1
        if j >= len(lines):
            return buf, len(buf), j
        buf += "\n" + lines[j]


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
    """One page of plain OCR text -> paragraphs (separated by blank lines; see the module
    docstring for its line breaks)."""
    return [Paragraph(p) for p in plain_paragraphs(text)]


def markdown_paragraphs(paragraphs: Iterable[str]) -> list[Block]:
    """Plain paragraphs on a page of a Markdown document -> blocks (see the module docstring)."""
    out: list[Block] = []
    for p in paragraphs:
        t = normalize_inline(unicodedata.normalize("NFC", p)).strip()
        if t:
            out.append(Paragraph(t))
    return out
