"""Each output checked against what was recognised, before it is written.

Contract (every function is pure CPU on bytes and page records; none raises for a bad output: a
check that cannot run is a failed check):

- ``tokens(text)``: the words a check compares: NFKC, case-folded, punctuation around words
  dropped, CJK characters one token each (a PDF's text layer and Tesseract split CJK text into
  words differently).
- ``found_in_order(expected, got)``: the share of ``expected`` found in ``got`` in the same order
  (difflib's matching blocks: the longest common subsequence it finds).
- ``check_pdf(data, pages, report) -> list[CheckResult]``: for each page the PDF writer placed
  text on (``report.pages[i].placement`` other than ``text_layer``), the text PyMuPDF
  extracts from the written PDF page (content-stream order) must hold ``PDF_MIN_FOUND`` of the
  page's words in order. Words in scripts outside the 11 languages that PyMuPDF does not give
  back as they were placed are left out on both sides (``_JUDGED_NOT``: right-to-left scripts
  come back in another word order, Hangul without its spaces; a page in one of the 11 languages
  can quote them: an address, a name).
- ``check_tables(parsed, pages)``: each table of the document model (what the CSV, XLSX and the
  tables of md/txt/tex are made from) against the words the engine's plain read found on its
  page (Tesseract's word boxes): a table whose cells hold more than ``TABLE_MAX_EXTRA`` of words
  that read does not have (or has fewer times: repeated rows) fails. Pages without word boxes
  (VLM, text layer: the table *is* their text) are not checked. And the other way: the page as
  rebuilt with its tables must keep ``TABLE_MIN_KEPT`` of the words that read found
  (``page_words``; a table read as junk or with rows lost fails it).
- ``check_txt(data, texts, markdown)``: each page of the txt output (pages split at form feeds)
  must hold ``TXT_MIN_FOUND`` of its page text's words (as a multiset: a table's cells of several
  lines are printed side by side, line by line, so their order differs by design).

``CheckResult.ok`` False: the pipeline records it on the page (``pages[].checks``) and the
document needs review (daemon.quality.review); the PDF's are re-placed once first
(daemon.service.outputs). Cost: bench/bench_flags.py reports seconds per page.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from daemon.writers.pdfreport import PdfReport

from daemon.document.model import Document, Table
from daemon.writers.pdflayout import plain_lines

#: Share of a page's words its PDF text layer must hold, in order. Below it the layer is wrong
#: (a page with no text, text off the page, lines in reverse); above it only extraction details
#: differ (hyphens, ligatures, a word split by the glyphless font).
PDF_MIN_FOUND = 0.9
#: Share of a page's words the txt output must hold (it is written from the same text).
TXT_MIN_FOUND = 0.9
#: Share of a table's words the page's plain read does not hold before the table fails: cells are
#: read on their own (their words may differ a little from the page read's), but a table that
#: repeats rows or holds text from elsewhere has many more.
TABLE_MAX_EXTRA = 0.2
#: Share of the words the engine's plain read found on a page that the page must still hold once
#: its tables are read cell by cell (a table read as junk, or rows lost, loses them; issue 32's
#: timesheet kept 4 of 31 rows while the plain read had 0.99 of the words).
TABLE_MIN_KEPT = 0.85

_CJK = re.compile(r"([\u2e80-\u2fff\u3000-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef])")
_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
#: Scripts the pdf_text check does not judge (see the module docstring): Hebrew, Arabic, Syriac,
#: Thaana, NKo ... (U+0590-08FF), their presentation forms, and Hangul (jamo, compatibility jamo,
#: syllables). Measured with synthetic noise pages (300 random words of one script, 20 line
#: boxes): in order 1.0 for Latin, Cyrillic, Greek, Han, kana, Thai, Devanagari; 0.01-0.04 for
#: Arabic and Hebrew and 0.0 for Hangul, with the same text layer a viewer searches.
_JUDGED_NOT = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")


@dataclass(frozen=True)
class CheckResult:
    """One output check of one page (0-based ``page``)."""

    check: str  # "pdf_text", "table_words", "page_words", "txt_text"
    page: int
    ok: bool
    score: float  # the share found (pdf_text, txt_text) or the share of extra words (table_words)
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "ok": self.ok, "score": round(self.score, 3)}
        if self.detail:
            out["detail"] = self.detail
        return out


def tokens(text: str) -> list[str]:
    """See the module docstring."""
    out: list[str] = []
    for raw in unicodedata.normalize("NFKC", text).casefold().split():
        for part in _CJK.split(raw):
            t = _PUNCT.sub("", part)
            if t:
                out.append(t)
    return out


def found_in_order(expected: Sequence[str], got: Sequence[str]) -> float:
    """Share of ``expected`` found in ``got`` in order (1.0 when nothing is expected)."""
    if not expected:
        return 1.0
    if not got:
        return 0.0
    sm = difflib.SequenceMatcher(None, expected, got, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks()) / len(expected)


def page_words(page: Any) -> list[str]:
    """The words recognised on a page (``PageResult``): Tesseract's word boxes when it has
    them, else its text as the reader sees it."""
    layout = page.layout
    if layout is not None and layout.has_words:
        return tokens(" ".join(w.text for ln in layout.lines for w in ln.words))
    return text_words(page.text, page.markdown)


def text_words(text: str, markdown: bool) -> list[str]:
    return tokens("\n".join(line for para in plain_lines(text, markdown) for line in para) if markdown else text)


def check_pdf(data: bytes, pages: Sequence[Any], report: PdfReport | None) -> list[CheckResult]:
    """See the module docstring (``pages``: the ``PageResult``s the PDF was written from)."""
    import pymupdf

    placed = {e.index for e in (report.pages if report is not None else []) if e.placement != "text_layer"}
    wanted = [(p, page_words(p)) for p in pages if p.index in placed]
    wanted = [(p, w) for p, w in wanted if w]
    if not wanted:
        return []
    out: list[CheckResult] = []
    try:
        fz = pymupdf.open(stream=data, filetype="pdf")
    except Exception as e:
        return [CheckResult("pdf_text", p.index, False, 0.0, f"the PDF does not open: {e}") for p, _ in wanted]
    with fz:
        for p, words in wanted:
            try:
                got = tokens(" ".join(w[4] for w in fz[p.index].get_text("words", sort=False)))
            except Exception as e:  # a page PyMuPDF cannot read holds no text for a reader either
                out.append(CheckResult("pdf_text", p.index, False, 0.0, f"the page's text cannot be read: {e}"))
                continue
            share = found_in_order(_judged(words), _judged(got)) if got else 0.0
            detail = "" if share >= PDF_MIN_FOUND else ("no text on the page" if not got else
                                                         f"{share:.2f} of the words in order")
            out.append(CheckResult("pdf_text", p.index, share >= PDF_MIN_FOUND, share, detail))
    return out


def _judged(words: Sequence[str]) -> list[str]:
    return [w for w in words if not _JUDGED_NOT.search(w)]


def check_tables(parsed: Any, pages: Sequence[Any]) -> list[CheckResult]:
    """See the module docstring (``parsed``: the ``daemon.document.model.Document``)."""

    by_index = {p.index: p for p in pages}
    out: list[CheckResult] = []
    for k, dpage in enumerate(parsed.pages):
        page = by_index.get(k)
        if page is None or page.layout is None or not page.layout.has_words:
            continue
        tables = [b for b in dpage.blocks if isinstance(b, Table)]
        if not tables:
            continue
        read = page_words(page)
        have = Counter(read)
        if read:  # the other way round: the page rebuilt with its tables keeps what the read found

            kept = sum((have & Counter(tokens(Document([dpage]).text()))).values()) / len(read)
            ok = kept >= TABLE_MIN_KEPT
            out.append(CheckResult("page_words", k, ok, kept,
                                   "" if ok else f"the page with its tables keeps {kept:.2f} of the words read"))
        for n, table in enumerate(tables, 1):
            words = tokens(" ".join(c.text for c in table.cells))
            if not words:
                continue
            extra = sum((Counter(words) - have).values())
            share = extra / len(words)
            ok = share <= TABLE_MAX_EXTRA
            out.append(CheckResult("table_words", k, ok, share,
                                   "" if ok else f"table {n}: {share:.2f} of its words not in the page's read"))
    return out


def check_txt(data: bytes, texts: Sequence[str], markdown: bool) -> list[CheckResult]:
    """See the module docstring."""
    pages = data.decode("utf-8", "replace").split("\f")
    out: list[CheckResult] = []
    for i, text in enumerate(texts):
        words = text_words(text, markdown)
        if not words:
            continue
        got = Counter(tokens(pages[i]) if i < len(pages) else [])
        share = sum((Counter(words) & got).values()) / len(words)
        ok = share >= TXT_MIN_FOUND
        out.append(CheckResult("txt_text", i, ok, share, "" if ok else f"{share:.2f} of the words"))
    return out
