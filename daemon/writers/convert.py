"""Outputs rebuilt from a saved raw engine output, without OCR (``ocr-daemon convert``, whose
command line is ``daemon.commands.convert``), and the raw file's format.

The daemon keeps each document's raw engine output as ``<stem>.raw.md`` in its state dir. That
file is the page texts joined by :func:`join_raw_pages`: every page starts with a line
``<!-- page N -->`` (:data:`RAW_PAGE_MARK`, N 1-based) followed by the page text exactly as
the engine returned it and one newline. :func:`split_raw_pages` inverts it exactly
(``split_raw_pages(join_raw_pages(p)) == p`` for page texts that do not themselves contain a
mark line). A file without any mark is one page. The ``.md`` the md writer produces uses the
same marks, so it can be converted again too.

``convert_outputs(raw, formats, source=, stem=, language=, plain=, csv_bom=)`` makes the outputs
(``{name: bytes}``, named ``<stem>.<ext>``) of a raw file's text, as the daemon's writers do,
with a sidecar; it writes nothing. ``raw_stem(path)``: the file name without ``.raw.md`` / ``.md``
/ ``.txt``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

from daemon.document.parse import parse_document
from daemon.language import detect_language
from daemon.writers import WriterOptions, render_outputs

log = logging.getLogger(__name__)

#: The page mark line of raw engine output files (``.format(n=page number)``, 1-based).
RAW_PAGE_MARK = "<!-- page {n} -->"
_MARK_LINE = re.compile(r"^<!-- page (\d+) -->[ \t]*$", re.M)


def join_raw_pages(texts: Sequence[str]) -> str:
    """Page texts -> the raw file's text (see the module docstring)."""
    return "".join(RAW_PAGE_MARK.format(n=n) + "\n" + text + "\n" for n, text in enumerate(texts, start=1))


def split_raw_pages(text: str) -> list[str]:
    """The raw file's text -> page texts. Text before the first mark (if not blank) is kept as
    part of the first page; a file without marks is a single page."""
    marks = list(_MARK_LINE.finditer(text))
    if not marks:
        return [text]
    pages: list[str] = []
    for k, m in enumerate(marks):
        start = m.end() + 1 if text[m.end() : m.end() + 1] == "\n" else m.end()
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        body = text[start:end]
        if body.endswith("\n"):
            body = body[:-1]
        pages.append(body)
    head = text[: marks[0].start()]
    if head.strip():
        pages[0] = head.rstrip("\n") + "\n" + pages[0]
    return pages


def raw_stem(path: Path) -> str:
    """``path``'s name without ``.raw.md`` / ``.md`` / ``.markdown`` / ``.txt``."""
    name = path.name
    for suffix in (".raw.md", ".md", ".markdown", ".txt"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem or name


def _detect_language(text: str) -> str:
    """Language via ``daemon.language.detect_language``; ``en`` when it fails."""
    try:
        got = detect_language(text)
    except Exception:
        log.warning("language detection failed; assuming en", exc_info=True)
        return "en"
    code = got[0] if isinstance(got, tuple) else got
    return str(code)


def convert_outputs(raw: str, formats: list[str], *, source: Path, stem: str, language: str | None = None,
                    plain: bool = False, csv_bom: bool = False) -> dict[str, bytes]:
    """The outputs (``{file name: bytes}``) of ``formats`` made from a raw file's text ``raw``:
    its pages (``split_raw_pages``), their language (``language``, else detected on the words of
    the document model), a sidecar naming ``source`` and every output. ``plain``: the pages are
    plain OCR text (Tesseract), not Markdown. Writes nothing; ``formats`` are writers' names."""

    pages = split_raw_pages(raw)
    # the one parse of the engine's text (Markdown, or plain text)
    doc = parse_document(pages, markdown=not plain)
    # detect on the words only: HTML table markup would make a Chinese document look English
    language = language or _detect_language(doc.text())
    doc.language = language
    options = WriterOptions(csv_bom=csv_bom)
    sidecar = {"source": str(source), "language": language, "pages": len(pages), "engine": "convert"}
    names = render_outputs(doc, formats=formats, stem=stem, sidecar=sidecar, options=options)
    sidecar["outputs"] = sorted(names)
    return render_outputs(doc, formats=formats, stem=stem, sidecar=sidecar, options=options)
