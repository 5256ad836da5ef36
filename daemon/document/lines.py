"""Text people can search: letters instead of presentation forms, and line breaks that mean
something (an address, a signature block) kept while lines that only wrap are joined.

Contract:

- ``letters(text)``: the typographic ligatures of Unicode's Alphabetic Presentation Forms
  (``ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ``, the Armenian ``ﬓ``-``ﬗ``) and the Dutch ``Ĳ ĳ`` become the letters they
  stand for (``diﬀerences`` -> ``differences``), through their Unicode compatibility mapping
  (``unicodedata``, NFKC of each such character). Nothing else changes: NFKC of the whole text
  would also turn ``x²`` into ``x2``, ``½`` into ``1⁄2`` and full-width CJK punctuation into
  ASCII.
- ``fix_yen(text)``: a yen sign that Tesseract read as something else, put back only where that
  is safe: on a page with Chinese/Japanese text, a backslash before a number (the ``jpn`` model
  has no ``¥`` and reads it as ``\\``, the JIS X 0201 code of the yen sign); on any other page
  that already names the yen (``¥``, ``JPY``, ``yen``, ``円``), a ``Y`` standing alone before a
  number (``Y800``; the Latin models other than ``eng`` have no ``¥``). ``Y2K`` or a ``Y`` in a
  word stays.
- ``hard_breaks(lines, full)``: for plain lines (no geometry: Tesseract text), whether each line
  break is a real one: the next line's first word would have fit on the line (so the writer
  broke the line on purpose) -- measured in display columns against ``full``, the width of a
  full line on the page. A line ending in a hyphenated word part (``exam-``) before a lowercase
  continuation wraps.
- ``join_lines(lines, hard)``: the lines as one string, ``"\\n"`` at hard breaks, and at the
  others a space (none between CJK characters; ``exam-`` + ``ple`` -> ``example``).
- ``plain_paragraphs(text)``: one page of plain OCR text -> its paragraphs (split at blank
  lines) as normalised inline Markdown (``daemon.document.inline.escape_plain``), with
  ``letters`` and ``fix_yen`` applied and lines joined where they only wrap
  (``hard_breaks`` against the page's full line width, ``full_width``, or the paragraph's own
  width where it is a narrower column, ``column_width``). A blank line after a
  wrapped paragraph's full line (two lines or more) before a line starting in lowercase is no
  paragraph break: Tesseract sets the short last line of a paragraph apart so.
- ``is_line_block(widths, lefts, size, full)``: whether a block of a PDF text layer is lines (an
  address, a signature block) rather than a wrapped paragraph (see the function).

In the document model a ``"\\n"`` inside a paragraph is a line break (``daemon.document.model``):
the txt writer prints it as a new line, the md writer as a Markdown hard break.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from daemon.document.inline import escape_plain

# --------------------------------------------------------------------------------- letters

_LIGATURES = [*range(0xFB00, 0xFB07), *range(0xFB13, 0xFB18), 0x0132, 0x0133]
_LETTERS = {cp: unicodedata.normalize("NFKC", chr(cp)) for cp in _LIGATURES}


def letters(text: str) -> str:
    """See the module docstring."""
    return text.translate(_LETTERS) if any(ord(c) in _LETTERS for c in text) else text


# ------------------------------------------------------------------------------------- yen

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
#: CJK characters on a page from which a backslash before a number is a yen sign: a Latin page
#: quoting one Chinese word keeps its backslashes.
YEN_CJK_CHARS = 10
_BACKSLASH_AMOUNT = re.compile(r"\\(?=\s?\d)")
_NAMES_YEN = re.compile(r"¥|￥|円|\bJPY\b|\byen\b", re.I)
# "Y800", "Y 1,500", "(Y12.000)": a Y standing alone before an amount that ends the word
_Y_AMOUNT = re.compile(r"(?<![\w.,])Y(?=\s?\d[\d.,' ]*\d(?![\w])|\s?\d(?![\w.,]))")


def fix_yen(text: str) -> str:
    """See the module docstring."""
    if "\\" in text and len(_CJK.findall(text)) >= YEN_CJK_CHARS:
        text = _BACKSLASH_AMOUNT.sub("¥", text)
    if "Y" in text and _NAMES_YEN.search(text):
        text = _Y_AMOUNT.sub("¥", text)
    return text


# --------------------------------------------------------------------------------- breaks

_CJK_LINE_EDGE = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_WRAPPED_HYPHEN = re.compile(r"[^\W\d_]-$")
#: The share of a full line that a line plus the next line's first word must stay under for the
#: break to count as made on purpose. Plain text is measured in characters, and a proportional
#: font's character widths vary: "mmmm" is three times as wide as "iiii". A wrapped prose line
#: is at least ~88 % of the full width when the next word did not fit (a 60-character line
#: wraps before a word of 7); 0.9 leaves those joined.
FIT_SHARE = 0.9
#: A full line is at least this many columns: on a page of only short lines (a receipt, an
#: address label, a page with a letterhead and a short table) the longest line is no full line,
#: and its lines stay lines. A full line of an A4 page at 10-12 pt is 75-100 characters, of a
#: 150 dpi scan at 32 px (tests/docgen.py) about 57; a till receipt is 32-48 wide.
MIN_FULL_COLUMNS = 50


def display_width(s: str) -> int:
    """Columns ``s`` takes in a monospaced font (CJK full-width characters count two)."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in s if not unicodedata.combining(c))


def _first_word(line: str) -> str:
    s = line.strip()
    if s and _CJK_LINE_EDGE.match(s[0]):
        return s[0]
    return s.split(" ", 1)[0] if s else ""


def wraps_hyphen(line: str, nxt: str) -> bool:
    """``exam-`` at a line end before ``ple``: a word broken at the line end."""
    return bool(_WRAPPED_HYPHEN.search(line.rstrip())) and nxt.strip()[:1].islower()


def hard_breaks(lines: Sequence[str], full: float) -> list[bool]:
    """For each break between ``lines[i]`` and ``lines[i + 1]``: True when it is a real line
    break (see the module docstring). ``full``: the display width of a full line."""
    out = []
    for line, nxt in zip(lines, lines[1:], strict=False):
        if wraps_hyphen(line, nxt):
            out.append(False)
            continue
        need = display_width(line.rstrip()) + 1 + display_width(_first_word(nxt))
        out.append(need <= FIT_SHARE * full)
    return out


def join_lines(lines: Sequence[str], hard: Sequence[bool]) -> str:
    """See the module docstring. ``hard[i]`` is the break after ``lines[i]``."""
    text = ""
    for i, raw in enumerate(lines):
        ln = raw.strip()
        if not ln:
            continue
        if not text:
            text = ln
        elif hard[i - 1]:
            text += "\n" + ln
        elif wraps_hyphen(text, ln):
            text = text[:-1] + ln
        elif _CJK_LINE_EDGE.match(text[-1]) and _CJK_LINE_EDGE.match(ln[0]):
            text += ln
        else:
            text += " " + ln
    return text


def full_width(lines: Sequence[str]) -> float:
    """The display width of a full line of a page of plain text: the 90th percentile of its
    line widths (a few over-long lines, a table row Tesseract read as one line, do not set it),
    at least ``MIN_FULL_COLUMNS``."""
    widths = sorted(display_width(ln.strip()) for ln in lines if ln.strip())
    if not widths:
        return float(MIN_FULL_COLUMNS)
    return float(max(MIN_FULL_COLUMNS, widths[min(len(widths) - 1, int(0.9 * len(widths)))]))


def plain_paragraphs(text: str) -> list[str]:
    """See the module docstring."""
    text = fix_yen(letters(text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")))
    chunks = [[ln.rstrip() for ln in chunk.split("\n") if ln.strip()] for chunk in re.split(r"\n\s*\n", text)]
    full = full_width([ln for chunk in chunks for ln in chunk])
    paras: list[list[str]] = []
    for lines in chunks:
        if not lines:
            continue
        if (paras and len(paras[-1]) >= 2 and lines[0].strip()[:1].islower()
                and not hard_breaks([paras[-1][-1], lines[0]], full)[0]):
            # Tesseract's paragraph model sets a wrapped paragraph's short last line apart
            # ("... contacte-nos em" / blank / "caso de dúvida."); no paragraph starts in lowercase.
            # Only after a wrapped paragraph (two lines or more): a one-line paragraph is the
            # page's full width by itself, and "zweiter Absatz" after it is a paragraph of its own.
            paras[-1].extend(lines)
        else:
            paras.append(lines)
    return [escape_plain(join_lines(lines, hard_breaks(lines, column_width(lines, full)))) for lines in paras]


#: A paragraph of plain lines is a column narrower than the page (text beside a picture, the
#: second of two columns under a full-width heading) when it has at least this many lines ...
COLUMN_MIN_LINES = 5
#: ... its widest line is at least this share of the page's full line (a signature block, an
#: address are narrower: 15-30 characters against 60-100) ...
COLUMN_SHARE = 0.45
#: ... and at least this share of its breaks wrap against its own widest line.
COLUMN_WRAPS = 2 / 3


def column_width(lines: Sequence[str], full: float) -> float:
    """The width the lines of one paragraph were wrapped to: ``full``, or the paragraph's own
    widest line when it is a narrower column (see the constants above; measured on the scanned
    book page of the real-world set, pypdf-vicksburg, whose text beside a picture is ~34
    characters wide against ~65, and the LinnSequencer sheet, 58 against 90)."""
    if len(lines) < COLUMN_MIN_LINES:
        return full
    widest = float(max(display_width(ln.strip()) for ln in lines))
    if widest >= FIT_SHARE * full or widest < COLUMN_SHARE * full:
        return full
    wraps = [not hard for hard in hard_breaks(lines, widest)]
    return widest if sum(wraps) >= COLUMN_WRAPS * len(wraps) else full


# ------------------------------------------------------------------------- text-layer blocks

#: A text-layer block is lines when its widest line is at most this share of a full line of its
#: column: an address or a signature block is narrow next to the letter's paragraphs.
SHORT_SHARE = 0.75


def is_line_block(widths: Sequence[float], lefts: Sequence[float], size: float, full: float) -> bool:
    """Whether a block of text-layer lines is lines to keep as they are (an address, a signature
    block) rather than a paragraph wrapped at its right edge.

    ``widths``/``lefts``: of each line; ``size``: the block's font size; ``full``: the width of a
    full line of the block's column. True when the block has two or more lines, all aligned
    (left, right or centred, within half the font size), its widest line is at most
    ``SHORT_SHARE`` of ``full``, and it is not a justified paragraph (three or more lines of
    which all but the last are as wide as the widest, within a tenth of the font size).
    """
    n = len(widths)
    if n < 2 or max(widths) > SHORT_SHARE * full:
        return False
    tol = 0.5 * size
    rights = [lf + w for lf, w in zip(lefts, widths, strict=True)]
    mids = [lf + w / 2 for lf, w in zip(lefts, widths, strict=True)]
    if not any(max(v) - min(v) <= tol for v in (lefts, rights, mids)):
        return False
    widest = max(widths)
    # justified lines end within a fraction of a point of each other; lines of an address or a
    # signature that happen to be about as long still differ by a letter or more
    return not (n >= 3 and all(w >= widest - 0.1 * size for w in widths[:-1]))
