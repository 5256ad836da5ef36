"""Output writers: the document model -> the bytes of every requested output file.

Contract (used by ``daemon.fsio``, which does all file I/O):

``render_outputs(doc, formats=..., stem=..., sidecar=..., options=...)`` returns
``{file name: bytes}`` for every format asked for, from the one
:class:`daemon.document.model.Document` (``daemon.document.parse.parse_document`` makes it once
per document; the writers only read it). It is pure (no I/O), deterministic for the same input,
and names every file ``<stem>.<ext>`` (tables as ``<stem>.table-<page>-<n>.csv``). The ``json``
output holds every key of ``sidecar`` at its top level.

- ``txt``  -> ``<stem>.txt``  (:mod:`daemon.writers.text`)
- ``md``   -> ``<stem>.md``   (:mod:`daemon.document.blocksmd`)
- ``json`` -> ``<stem>.json`` (:mod:`daemon.writers.jsonout`)
- ``tex``  -> ``<stem>.tex``  (:mod:`daemon.writers.latex`)
- ``csv``  -> ``<stem>.table-<page>-<n>.csv`` per table, none for a document without tables
  (:mod:`daemon.writers.tables`)
- ``xlsx`` -> ``<stem>.xlsx``, one sheet per table (a single note sheet if there is none)
- ``pdf`` (``SOURCE_FORMATS``) is listed in ``FORMATS`` but made from the source file by
  :mod:`daemon.writers.pdf`; ``render_outputs`` refuses it.
- ``pdf``  -> ``<stem>.pdf`` (``<stem>.ocr.pdf`` beside a PDF source of the same name): the
  source's pages with an invisible text layer (:mod:`daemon.writers.pdf`). It is made from the
  source file, the document and the page records (their boxes and geometry place the text), so
  ``render_outputs`` does not write it (it raises ``ValueError`` when asked); the pipeline calls
  ``write_pdf``.

``options`` (keyword, optional) carries writer settings that are not part of the document, such
as the UTF-8 BOM on CSV files for Excel.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from daemon.document.model import Document
from daemon.vocab import FORMATS, SOURCE_FORMATS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WriterOptions:
    """Settings of the writers that do not come from the document.

    ``csv_bom``: start every CSV file with a UTF-8 byte order mark, so Excel opens it as UTF-8
    (without it, Excel on Windows assumes the ANSI code page and garbles accents and CJK). Off by
    default: most other consumers (Python's csv, pandas, databases) read plain UTF-8 and some
    keep the BOM as part of the first header.
    """

    csv_bom: bool = False


@dataclass(frozen=True)
class WriteJob:
    """What one writer gets besides the document: the file stem, the sidecar and the writer
    options."""

    stem: str
    sidecar: dict[str, Any]
    options: WriterOptions


#: A writer: the document and its job -> ``{file name: bytes}``.
Writer = Callable[[Document, WriteJob], dict[str, bytes]]

# Each writer module is imported on first use: openpyxl (xlsx) and the TeX checker cost import
# time that a daemon writing only txt/md/json never needs to pay.


def _txt(doc: Document, job: WriteJob) -> dict[str, bytes]:
    from daemon.writers.text import write_txt

    return {f"{job.stem}.txt": write_txt(doc).encode("utf-8")}


def _md(doc: Document, job: WriteJob) -> dict[str, bytes]:
    from daemon.document.blocksmd import write_md

    return {f"{job.stem}.md": write_md(doc).encode("utf-8")}


def _json(doc: Document, job: WriteJob) -> dict[str, bytes]:
    from daemon.writers.jsonout import write_json

    return {f"{job.stem}.json": write_json(doc, job.sidecar).encode("utf-8")}


def _tex(doc: Document, job: WriteJob) -> dict[str, bytes]:
    from daemon.writers.latex import write_tex

    return {f"{job.stem}.tex": write_tex(doc).encode("utf-8")}


def _csv(doc: Document, job: WriteJob) -> dict[str, bytes]:
    from daemon.writers.tables import write_csv

    return write_csv(doc, job.stem, bom=job.options.csv_bom)


def _xlsx(doc: Document, job: WriteJob) -> dict[str, bytes]:
    from daemon.writers.tables import write_xlsx

    return {f"{job.stem}.xlsx": write_xlsx(doc)}


#: The writers of the output formats: ``{format: writer}``, the formats of daemon.vocab.FORMATS
#: (the list the config validates ``formats:`` against) before its ``SOURCE_FORMATS``.
WRITERS: dict[str, Writer] = {"txt": _txt, "md": _md, "json": _json, "tex": _tex, "csv": _csv, "xlsx": _xlsx}


def render_outputs(
    doc: Document,
    *,
    formats: Sequence[str],
    stem: str,
    sidecar: dict[str, Any],
    options: WriterOptions | None = None,
) -> dict[str, bytes]:
    """Every output file of ``formats`` for the document ``doc``: ``{file name: bytes}``.

    Each name is ``stem`` followed by a suffix that does not depend on ``stem``. The writers only
    read ``doc``, so a caller that renders more than once builds it once.
    """
    opts = options or WriterOptions()
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown output format(s) {unknown}; known: {', '.join(FORMATS)}")
    if made_from_source := [f for f in formats if f in SOURCE_FORMATS]:
        raise ValueError(f"{made_from_source} are made from the source file (daemon.writers.pdf.write_pdf), not here")
    job = WriteJob(stem=stem, sidecar=sidecar, options=opts)
    out: dict[str, bytes] = {}
    for fmt in dict.fromkeys(formats):  # keep order, drop repeats
        out.update(WRITERS[fmt](doc, job))
    return out
