"""Finishing a recognised document: classify, route, and render every output's bytes.

Contract:

- ``prepare_outputs(cfg, pages, src, inbox, engine_markdown, when) -> Prepared``: CPU work only,
  no journal, no files. Runs in a render worker process (``Pipeline._prepare``): when many
  documents finish at once (a batch of pages decoded together on the GPU), each one's ~0.1 s of
  Python here would otherwise run one after the other on the daemon's GIL
  (bench/bench_finish.py). The text outputs are named ``src.stem`` + suffix; the JSON is
  rendered again once the output names are known (``Pipeline._write``).
- Optional stages here (``daemon.stages``): classification features (fallback: language
  ``unknown``, doctype ``other``), the document date (inside ``classify``) and the searchable PDF
  (the text outputs never wait on it; a PDF that cannot be made is reported in the sidecar's
  ``pdf.error``). Their failures are ``Prepared.degraded``; per-page failures of the PDF's line
  alignment come back in the PDF report and are put on their pages by the pipeline.
- The quality check (daemon.quality): each page's confidence before routing (a page under
  ``quality.min_confidence`` is flagged and the document needs review: ``match.review``), and
  every rendered output checked against the recognised words before it is written (the PDF's
  failing pages placed again once). ``Prepared.review`` holds the reasons (any stage here adds
  one with ``review.add``), ``Prepared.quality`` the per-page findings.
- ``warm_worker()`` loads, in a render worker at start, what rendering and finishing import.
"""

from __future__ import annotations

import functools
import logging
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from daemon.config import Config
from daemon.document.lines import plain_paragraphs
from daemon.document.model import Document as ParsedDocument
from daemon.document.parse import parse_document
from daemon.language import warm as language_warm
from daemon.models import Classification, RouteDecision
from daemon.names import display
from daemon.pagerecord import PageResult
from daemon.pages.renderpool import warm_render
from daemon.quality.review import Review
from daemon.quality.run import PageQuality, assess_pages, check_text_outputs, checked_pdf
from daemon.stages import Degraded, Stage, optional
from daemon.understand.classify import classify
from daemon.understand.route import choose_route
from daemon.writers import WriterOptions, render_outputs
from daemon.writers.pdf import pdf_suffix, write_pdf
from daemon.writers.pdfreport import PdfReport

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    """A recognised document before its outputs are named (``prepare_outputs``)."""

    cls: Classification
    decision: RouteDecision
    parsed: ParsedDocument  # the pages parsed, for the JSON file that is rendered once names are known
    body: dict[str, bytes]  # every output file, named ``src.stem`` + suffix; JSON without outputs/timings
    seconds: dict[str, float]  # "classify" (with routing), "render", "checks" (the quality check's part of both)
    texts: list[str]  # the page texts as the raw file keeps them (``page_texts``; the JSON's too)
    pdf_report: PdfReport | None = None  # the sidecar's "pdf" (per-page placement, PDF/A) when pdf was written
    degraded: list[Degraded] = field(default_factory=list)  # document-level optional stages that failed
    review: Review = field(default_factory=Review)  # why the document needs review (daemon.quality)
    quality: dict[int, PageQuality] = field(default_factory=dict)  # page index -> confidence, flag, checks


def page_texts(pages: Sequence[PageResult], engine_markdown: bool) -> tuple[list[str], bool]:
    """The page strings of a document and whether they are Markdown: the raw file's (which
    ``ocr-daemon convert`` reads back), the JSON's page texts, what classification and the txt
    check read. A plain-text engine's document with some Markdown pages (from the text layer, or
    scanned tables) becomes Markdown as a whole: its plain pages are escaped into the paragraphs
    ``parse_plain_page`` makes, so the raw file holds one kind of text. The document model is
    not made from these strings (``page_document``)."""
    # NFC: every output (the JSON's page texts too) has "ò", never "o" + U+0300
    if engine_markdown or not any(p.markdown for p in pages):
        return [unicodedata.normalize("NFC", p.text) for p in pages], engine_markdown

    return [unicodedata.normalize("NFC", p.text if p.markdown else "\n\n".join(plain_paragraphs(p.text)))
            for p in pages], True


def page_document(pages: Sequence[PageResult], engine_markdown: bool, texts: Sequence[str]) -> ParsedDocument:
    """The document model of the finished pages: the blocks of text-layer pages and of scanned
    pages with tables as they are, the engine's Markdown parsed, plain OCR text made paragraphs
    (not joined into a page of Markdown and parsed back); ``texts`` (``page_texts``) are kept as the
    pages' raw texts (the JSON's page texts)."""
    return parse_document(
        [p.text for p in pages], markdown=[engine_markdown or p.markdown for p in pages],
        blocks=[p.blocks for p in pages], raw=texts,
    )


def _unclassified() -> Classification:
    return Classification(language="unknown", language_confidence=0.0, doctype="other")


def prepare_outputs(
    cfg: Config, pages: Sequence[PageResult], src: Path, inbox: str, engine_markdown: bool, when: datetime,
) -> Prepared:
    """See the module docstring."""
    t0 = time.monotonic()
    degraded: list[Degraded] = []
    texts, markdown = page_texts(pages, engine_markdown)
    joined = "\n\n".join(texts)
    # The document model is parsed first: classification and the document date read its plain
    # text (a line "12. März 2018" is item 12 of a list to Markdown; issue 32). Its language is
    # only a label on the model, set once it is known.
    parsed = page_document(pages, engine_markdown, texts)
    cls = optional(
        Stage.CLASSIFY,
        lambda: classify(joined, cfg=cfg, filename=display(src.name), pages=len(pages), markdown=markdown,
                         degraded=degraded, plain=parsed.text()),
        _unclassified, degraded,
    )
    # Each page's confidence, before routing: a route can take the documents that need review.
    parsed.language = cls.language
    review = Review()
    tq = time.monotonic()
    none: dict[int, PageQuality] = {}
    quality = optional(
        Stage.QUALITY, lambda: assess_pages(pages, cls.language, cfg.quality.min_confidence, review), lambda: none,
        degraded,
    )
    checking = time.monotonic() - tq  # the quality check's own seconds (the sidecar's timings.checks)
    decision, _ = choose_route(cfg, path=src, inbox=inbox, cls=cls, pages=len(pages), when=when, review=review.needed)
    for reason in decision.review_reasons:  # an unsure doctype that kept the source in place
        review.add(reason)
    t1 = time.monotonic()
    text_formats = [f for f in decision.formats if f != "pdf"]
    body = render_outputs(parsed, formats=text_formats, stem=src.stem, sidecar={},
                          options=WriterOptions(csv_bom=decision.csv_bom))
    check = cfg.quality.check_outputs
    if check:  # each output against the recognised words, before anything is written
        tq = time.monotonic()
        optional(Stage.QUALITY, lambda: check_text_outputs(body, src.stem, parsed, pages, texts, markdown, review,
                                                           quality), lambda: None, degraded)
        checking += time.monotonic() - tq
    report = None
    if "pdf" in decision.formats:
        # The searchable PDF: made from the source file, the document and the page records (daemon.writers.pdf).
        route = next((r for r in cfg.routes if r.name == decision.name), None)
        write = functools.partial(write_pdf, parsed, source=src, markdown=engine_markdown,
                                  pdfa=bool(route and route.pdfa))
        made = optional(Stage.PDF, lambda: write(pages), lambda: None, degraded)
        if made is not None and check:
            first, tq = made, time.monotonic()
            made = optional(Stage.QUALITY, lambda: checked_pdf(write, first, pages, review, quality), lambda: first,
                            degraded)
            checking += time.monotonic() - tq
        if made is not None:
            body[src.stem + pdf_suffix(src, decision.destination)] = made.data
            report = made.report
        else:  # the text outputs are not lost for a PDF that cannot be made
            log.warning("%s: no pdf output: %s", display(src.name), degraded[-1].error)
            report = PdfReport(error=f"the searchable PDF could not be made: {degraded[-1].error}")
    for d in degraded:
        if d.stage == Stage.QUALITY.value:  # a check that could not run is no pass: never silent
            review.add("quality check failed", detail=d.error[:120])
    return Prepared(
        cls, decision, parsed, body, {"classify": t1 - t0, "render": time.monotonic() - t1, "checks": checking}, texts,
        report, degraded, review, quality,
    )


def warm_worker() -> None:
    """Run once in each render worker at start (``Pipeline.warm``): the render modules, this
    module (``prepare_outputs``'s imports) and the language model loaded before the first file.
    A worker warmed for rendering alone took 0.75 s for its first ``prepare_outputs`` on the dev
    VM (then 5 ms), which every worker would pay at once when a batch of documents finishes
    together."""
    warm_render()
    language_warm()
