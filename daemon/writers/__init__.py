"""Output writers: engine page texts -> the bytes of every requested output file.

Contract (used by ``daemon.fsio``, which does all file I/O):

``render_outputs(pages, formats=..., stem=..., language=..., sidecar=..., markdown=...)``
returns ``{file name: bytes}`` for every format asked for. It is pure (no I/O), deterministic
for the same input, and names every file ``<stem>.<ext>`` (tables as
``<stem>.table-<page>-<n>.csv``). The ``json`` output holds every key of ``sidecar`` at its top
level. ``markdown`` says whether the page texts are engine Markdown (VLM) or plain text
(Tesseract).

All writers work from one :class:`daemon.document.model.Document` built once per call:

- ``txt``  -> ``<stem>.txt``  (:mod:`daemon.writers.text`)
- ``md``   -> ``<stem>.md``   (:mod:`daemon.writers.markdown`)
- ``json`` -> ``<stem>.json`` (:mod:`daemon.writers.jsonout`)
- ``tex``  -> ``<stem>.tex``  (:mod:`daemon.writers.latex`)
- ``csv``  -> ``<stem>.table-<page>-<n>.csv`` per table, none for a document without tables
  (:mod:`daemon.writers.tables`)
- ``xlsx`` -> ``<stem>.xlsx``, one sheet per table (a single note sheet if there is none)
- ``pdf``  -> ``<stem>.pdf`` (``<stem>.ocr.pdf`` beside a PDF source of the same name): the
  source's pages with an invisible text layer (:mod:`daemon.writers.pdf`). It is made from the
  source file and the page geometry, not from the texts alone, so ``render_outputs`` does not
  write it (it raises ``ValueError`` when asked); the pipeline calls ``write_pdf``.

``options`` (keyword, optional, an addition to the contract above that existing callers need
not pass) carries writer settings that are not part of the document, such as the UTF-8 BOM on
CSV files for Excel.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from daemon.document.model import Document, parse_document

log = logging.getLogger(__name__)

#: Every format render_outputs understands (daemon.config.FORMATS lists the same).
FORMATS: tuple[str, ...] = ("txt", "md", "json", "tex", "csv", "xlsx", "pdf")


@dataclass(frozen=True)
class WriterOptions:
    """Settings of the writers that do not come from the document.

    ``csv_bom``: start every CSV file with a UTF-8 byte order mark, so Excel opens it as UTF-8
    (without it, Excel on Windows assumes the ANSI code page and garbles accents and CJK). Off by
    default: most other consumers (Python's csv, pandas, databases) read plain UTF-8 and some
    keep the BOM as part of the first header.
    """

    csv_bom: bool = False


def render_outputs(
    pages: Sequence[str],
    *,
    formats: Sequence[str],
    stem: str,
    language: str,
    sidecar: dict[str, Any],
    markdown: bool,
    options: WriterOptions | None = None,
    parsed: Document | None = None,
) -> dict[str, bytes]:
    """Every output file of ``formats`` for the engine's ``pages``: ``{file name: bytes}``.

    Each name is ``stem`` followed by a suffix that does not depend on ``stem``. ``parsed``: the
    pages already parsed (``parse_document(pages, markdown=markdown, language=language)``), so a
    caller that renders more than once parses once; the writers only read it.
    """
    opts = options or WriterOptions()
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown output format(s) {unknown}; known: {', '.join(FORMATS)}")
    if "pdf" in formats:
        raise ValueError("the pdf output is made from the source file: daemon.writers.pdf.write_pdf")
    doc = parsed if parsed is not None else parse_document(pages, markdown=markdown, language=language)
    out: dict[str, bytes] = {}
    for fmt in dict.fromkeys(formats):  # keep order, drop repeats
        if fmt == "txt":
            from daemon.writers.text import write_txt

            out[f"{stem}.txt"] = write_txt(doc).encode("utf-8")
        elif fmt == "md":
            from daemon.writers.markdown import write_md

            out[f"{stem}.md"] = write_md(doc).encode("utf-8")
        elif fmt == "json":
            from daemon.writers.jsonout import write_json

            out[f"{stem}.json"] = write_json(doc, sidecar, pages).encode("utf-8")
        elif fmt == "tex":
            from daemon.writers.latex import write_tex

            out[f"{stem}.tex"] = write_tex(doc).encode("utf-8")
        elif fmt == "csv":
            from daemon.writers.tables import write_csv

            out.update(write_csv(doc, stem, bom=opts.csv_bom))
        elif fmt == "xlsx":
            from daemon.writers.tables import write_xlsx

            out[f"{stem}.xlsx"] = write_xlsx(doc)
    return out
