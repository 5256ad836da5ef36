"""The engine's pages -> :class:`daemon.document.model.Document`.

Contract: ``parse_document(texts, markdown=..., language=..., blocks=..., raw=...)`` makes each
page's blocks: those given (a PDF page's text layer, a scanned page's tables:
``daemon.pagerecord.PageResult.blocks``) as they are; else its text parsed, as engine Markdown
when the page is Markdown (``markdown``: one flag for every page, or one per page), else as plain
OCR text (paragraphs; on a page of a document with Markdown pages normalised as those are,
``markdown_paragraphs``; :mod:`daemon.document.markdown`). This is the one place engine Markdown
is parsed. Then it marks running
page headers and footers across pages (the role changes, the text stays where it was). It never
raises on odd input. Each page keeps its text as given (``Page.raw``; ``raw``: other texts to keep
instead, the raw file's). Ligatures in the engine's text become letters first
(``daemon.document.lines.letters``: ``diﬀerences`` -> ``differences``, so that a search finds
it) and the text is put in Unicode NFC (a letter and a combining accent the engine gave apart
are one character); blocks a text layer gave are used as they are (``daemon.pages.textlayer``
reads the layer with ligatures expanded and accents combined already). Last, a table continued at
the top of the next page (or by the next block, its header repeated) is joined to the table it
continues (``daemon.document.tables.continued``: one table, one CSV, its header kept; issue 32).
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Sequence

from daemon.document.inline import plain_text
from daemon.document.lines import letters, plain_paragraphs
from daemon.document.markdown import markdown_paragraphs, parse_markdown_page, parse_plain_page
from daemon.document.model import Block, Document, Page, Paragraph, Table
from daemon.document.tables import continued

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


def parse_document(
    texts: Sequence[str], *, markdown: bool | Sequence[bool] = True, language: str = "unknown",
    blocks: Sequence[Sequence[Block] | None] | None = None, raw: Sequence[str] | None = None,
) -> Document:
    """Engine page texts -> :class:`Document`. ``markdown``: the texts are engine Markdown
    (VLM), for every page or per page; else plain OCR text (Tesseract). ``blocks``: per page,
    blocks already built (a PDF page read from its text layer, a scanned page with tables), used
    as they are (copied: marking running heads changes them) instead of parsing that page's
    text; None for pages to parse. ``raw``: the pages' texts as the raw file holds them
    (``Page.raw``, the JSON's page texts), when they are not ``texts``."""
    flags = [markdown] * len(texts) if isinstance(markdown, bool) else list(markdown)
    among_markdown = any(flags)  # a plain page of a Markdown document: its paragraphs as those pages'
    known = list(blocks) if blocks is not None else []
    kept = list(raw) if raw is not None else list(texts)
    parsed = []
    for n, t in enumerate(texts, start=1):
        given = known[n - 1] if n - 1 < len(known) else None
        if given is not None:
            page_blocks = copy.deepcopy(list(given))
        else:
            t = unicodedata.normalize("NFC", letters(t))  # "o" + U+0300 -> "ò" (see the docstring)
            if flags[n - 1]:
                page_blocks = parse_markdown_page(t)
            elif among_markdown:
                page_blocks = markdown_paragraphs(plain_paragraphs(t))
            else:
                page_blocks = parse_plain_page(t)
        parsed.append(Page(n, page_blocks, raw=kept[n - 1]))
    _mark_running_heads(parsed)
    _join_continued(parsed)
    return Document(parsed, language)


def _join_continued(pages: list[Page]) -> None:
    """A table continued by the first block of the next page (running heads and feet skipped),
    or by the next block with its header again, is one table (``tables.continued``): one CSV,
    its header kept."""
    prev: tuple[Page, int] | None = None  # the last table seen, if nothing but running heads since
    for page in pages:
        k = 0
        while k < len(page.blocks):
            b = page.blocks[k]
            if isinstance(b, Paragraph) and b.role != "body":
                k += 1
                continue
            if isinstance(b, Table) and prev is not None:
                host, i = prev
                host_table = host.blocks[i]
                assert isinstance(host_table, Table)
                joined = continued(host_table, b, header_again=host is page)
                if joined is not None:
                    host.blocks[i] = joined
                    del page.blocks[k]
                    continue
            prev = (page, k) if isinstance(b, Table) else None
            k += 1
