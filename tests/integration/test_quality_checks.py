"""The output checks on real files: a searchable PDF made by the PDF writer from a page Tesseract
read holds the page's words; a PDF with no text layer fails the check, is placed again once, and a
page that still has no text is recorded (``placement: none``, ``degraded: pdf_text``, a review
reason) -- never ``placement: words`` on a page without words (issue 32)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from pathlib import Path

import docgen
import pymupdf
import pytest
from renderopts import render_opts

from daemon.config import EngineCfg
from daemon.document.model import Document
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.pagerecord import EngineText, ImagePage, PageResult
from daemon.pages.textlayer import read_or_render
from daemon.quality import Review
from daemon.quality.checks import check_pdf
from daemon.quality.run import checked_pdf
from daemon.writers.pdf import PdfInput, PdfOutput, write_pdf, write_pdf_input
from daemon.writers.pdfreport import PdfPageReport, PdfReport

TEXT = ("Quarterly report of the Harbour Road workshop. Orders rose in the spring, deliveries kept pace, "
        "and the new lathe paid for itself within four months. Staff training continues in June.")


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract={"threads": 1}))
    eng.start()
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory, engine: TesseractEngine) -> tuple[Path, list[PageResult]]:
    src = docgen.make_image(tmp_path_factory.mktemp("q") / "report.png", TEXT)
    pg = read_or_render(src, 0, render_opts(text_layer="ocr"))
    assert isinstance(pg, ImagePage)
    answer = engine.recognize([PageRequest("doc-q", 0, pg.image)])[0]
    return src, [PageResult.from_engine(pg, answer, engine_markdown=False)]


def image_only_pdf(src: Path) -> bytes:
    """The scan as a PDF page with no text at all (what a broken text layer leaves)."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_image(page.rect, filename=str(src))
    return doc.tobytes()


def test_the_written_pdf_holds_the_page_words_in_order(scan: tuple[Path, list[PageResult]]) -> None:
    src, pages = scan
    made = write_pdf_input(PdfInput(src, pages, markdown=False))
    [result] = check_pdf(made.data, pages, made.report)
    assert result.ok and result.score >= 0.95, result


def test_a_pdf_without_text_fails_the_check(scan: tuple[Path, list[PageResult]]) -> None:
    _src, pages = scan
    report = PdfReport([PdfPageReport(1, "words", 3)])
    [result] = check_pdf(image_only_pdf(scan[0]), pages, report)
    assert not result.ok and result.score == 0.0 and result.detail == "no text on the page"
    # a page the writer left to its own text layer is not the writer's to check
    assert check_pdf(image_only_pdf(scan[0]), pages, PdfReport([PdfPageReport(1, "text_layer")])) == []


def test_a_failed_page_is_placed_again_once(scan: tuple[Path, list[PageResult]]) -> None:
    src, pages = scan
    job = functools.partial(write_pdf, Document([]), source=src, markdown=False)
    broken = PdfOutput(image_only_pdf(src), PdfReport([PdfPageReport(1, "words", 3)]))
    review, quality = Review(), {}  # type: ignore[var-annotated]
    made = checked_pdf(job, broken, pages, review, quality)
    assert made is not broken and not review  # the page placed again holds its words: nothing to review
    entry = made.report.pages[0].to_json()
    assert entry["text_found"] >= 0.9 and entry["placement"] == "lines" and "degraded" not in entry
    assert quality[0].checks[0].ok


def test_a_page_that_stays_without_text_is_recorded_never_silent(scan: tuple[Path, list[PageResult]], tmp_path: Path) -> None:
    src, pages = scan
    gone = tmp_path / "moved.png"  # the second placement cannot read its source: it fails too
    job = functools.partial(write_pdf, Document([]), source=gone, markdown=False)
    broken = PdfOutput(image_only_pdf(src), PdfReport([PdfPageReport(1, "words", 3)]))
    review, quality = Review(), {}  # type: ignore[var-annotated]
    made = checked_pdf(job, broken, pages, review, quality)
    entry = made.report.pages[0].to_json()
    assert list(entry) == ["page", "placement", "lines", "text_found", "degraded"]  # the sidecar's order
    assert entry["placement"] == "none" and entry["text_found"] == 0.0
    assert [d["stage"] for d in entry["degraded"]] == ["pdf_text"]
    assert [str(r) for r in review.reasons] == ["page 1: pdf_text (no text on the page)"]


def test_scripts_the_extraction_reorders_are_not_judged_but_a_missing_layer_still_is(
    scan: tuple[Path, list[PageResult]],
) -> None:
    """A VLM page whose text mixes the report with Arabic and Hangul words: placed on the page's
    lines, its layer holds the report's words in order; PyMuPDF gives the Arabic words back in
    another order and the Hangul ones without their spaces, which is not the layer's fault and
    must not fail the check (it would send the page to the fallback placement, over the page
    instead of on its lines). The same page as an image-only PDF still fails."""
    src, pages = scan
    mixed = " ".join(f"{w} مرحبا بالعالم 안녕하세요 세계" if k % 3 == 0 else w for k, w in enumerate(TEXT.split()))
    lines = pages[0].layout
    assert lines is not None and lines.lines
    line_only = dataclasses.replace(lines, lines=[dataclasses.replace(ln, words=[]) for ln in lines.lines],
                                    has_words=False)
    assert isinstance(pages[0].content, EngineText)
    vlm = [dataclasses.replace(pages[0], content=EngineText(mixed, True, pages[0].content.geometry, line_only))]
    made = write_pdf_input(PdfInput(src, vlm, markdown=True))
    assert made.report.pages[0].placement == "lines", made.report
    [result] = check_pdf(made.data, vlm, made.report)
    assert result.ok and result.score >= 0.95, result
    [bare] = check_pdf(image_only_pdf(src), vlm, made.report)
    assert not bare.ok and bare.score == 0.0 and bare.detail == "no text on the page", bare
