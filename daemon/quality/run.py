"""The quality check as ``prepare_outputs`` runs it (daemon/service/outputs.py).

Contract:

- ``assess_pages(pages, language, threshold, review) -> dict[int, PageQuality]``: each page's
  confidence (daemon.quality.confidence); a page under ``threshold`` is flagged
  ``low_confidence`` (or one of its signals trips: ``confidence.is_low``) and adds
  ``"page N: low_confidence (conf X)"`` (``"(conf X, dictionary)"`` naming the signals) to ``review``. Runs before
  routing, so ``match.review`` sees it.
- ``checked_pdf(write, made, pages, review, quality)``: the searchable PDF's text layer checked
  (``checks.check_pdf``); pages that fail are placed again once without their word boxes (their
  text spread over the line boxes, or over the page when there are none:
  ``daemon.writers.pdflayout``), and the PDF written again (``write``: the page records -> the
  PDF) when that helps; a page that still
  fails gets a ``pdf_text`` degraded stage in the PDF report (the pipeline puts it on the page),
  ``placement: none`` when the page holds no text at all, and a review reason. Every checked
  page's report entry gets ``text_found`` (the share of its words found in order). The check
  runs as the optional stage ``pdf_text``: when it cannot run, every placed page gets that
  stage's degraded record and a review reason ("not checked"). Returns the PDF to write.
- ``check_text_outputs(body, stem, parsed, pages, texts, markdown, review, quality)``: the tables
  and the txt output (when written) checked; failures add review reasons.
- ``with_quality(pages, quality)``: the pages with their flag, confidence and checks (sidecar).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from daemon.models import PageLayout, TextLine
from daemon.pagerecord import EngineText, PageResult
from daemon.quality.checks import CheckResult, check_pdf, check_tables, check_txt
from daemon.quality.confidence import is_low, page_confidence
from daemon.quality.review import Review
from daemon.stages import Degraded, Stage, optional
from daemon.writers.pdf import PdfOutput

LOW_CONFIDENCE = "low_confidence"


@dataclass
class PageQuality:
    """The quality check's findings on one page."""

    confidence: dict[str, Any] | None = None
    low: bool = False
    checks: list[CheckResult] = field(default_factory=list)


def _get(quality: dict[int, PageQuality], index: int) -> PageQuality:
    return quality.setdefault(index, PageQuality())


def assess_pages(
    pages: Sequence[PageResult], language: str, threshold: float, review: Review,
) -> dict[int, PageQuality]:
    """See the module docstring."""
    quality: dict[int, PageQuality] = {}
    for p in pages:
        conf = page_confidence(p, language)
        if conf is None:
            continue
        q = _get(quality, p.index)
        q.confidence = conf.to_json()
        if is_low(conf, threshold):
            q.low = True
            why = "".join(f", {s}" for s in conf.signals)
            review.add(LOW_CONFIDENCE, page=p.index + 1, detail=f"conf {q.confidence['value']:.0f}{why}")  # as shown
    return quality


def _record(results: Sequence[CheckResult], quality: dict[int, PageQuality], review: Review) -> None:
    for r in results:
        _get(quality, r.page).checks.append(r)
        if not r.ok:
            review.add(r.check, page=r.page + 1, detail=r.detail)


def _replaced(p: PageResult) -> PageResult:
    """A page to place again: its words dropped (its text spread over its line boxes), or with
    no layout at all when it had no words (the text spread over the page)."""
    if not isinstance(p.content, EngineText):
        return p
    lay = p.content.layout
    if lay is not None and lay.has_words and lay.lines:
        lines = [TextLine(ln.box, [], ln.block) for ln in lay.lines]
        return dataclasses.replace(p, content=dataclasses.replace(p.content, layout=PageLayout(lay.size, lines, has_words=False)))
    return dataclasses.replace(p, content=dataclasses.replace(p.content, layout=None))


def checked_pdf(write: Callable[[Sequence[PageResult]], PdfOutput], made: PdfOutput, pages: Sequence[PageResult],
                review: Review, quality: dict[int, PageQuality]) -> PdfOutput:
    """See the module docstring (``write``: ``daemon.writers.pdf.write_pdf`` for this document,
    ``made``: the ``PdfOutput`` it gave for ``pages``)."""
    sink: list[Degraded] = []
    unchecked: list[CheckResult] = []
    results = optional(Stage.PDF_TEXT, lambda: check_pdf(made.data, pages, made.report), lambda: unchecked, sink)
    if sink:  # the check itself could not run: every placed page is unchecked, and says so
        for e in made.report.pages:
            if e.placement != "text_layer":
                e.check_degraded.append(sink[0])
                review.add(Stage.PDF_TEXT.value, page=e.page, detail="not checked")
        return made
    bad = {r.page for r in results if not r.ok}
    if bad:
        again = [_replaced(p) if p.index in bad else p for p in pages]
        try:
            remade: PdfOutput | None = write(again)
        except Exception:  # the first PDF stays; its failed pages are recorded below
            remade = None
        if remade is not None:
            retried = {r.page: r for r in check_pdf(remade.data, pages, remade.report)}
            if sum(retried[i].ok for i in bad if i in retried) > 0:  # it helped: this PDF is written
                made = remade
                results = [retried.get(r.page, r) if r.page in bad else r for r in results]
    entries = {e.index: e for e in made.report.pages}
    for r in results:
        entry = entries.get(r.page)
        if entry is None:
            continue
        entry.text_found = round(r.score, 3)
        if not r.ok:
            if r.score == 0.0:
                entry.placement = "none"  # never claim words were placed on a page that has none
            entry.check_degraded.append(
                Degraded(Stage.PDF_TEXT.value, f"the PDF page's text layer fails its check: {r.detail}")
            )
    _record(results, quality, review)
    return made


def check_text_outputs(
    body: Mapping[str, bytes], stem: str, parsed: Any, pages: Sequence[PageResult], texts: Sequence[str],
    markdown: bool, review: Review, quality: dict[int, PageQuality],
) -> None:
    """See the module docstring."""
    results = check_tables(parsed, pages)
    txt = body.get(stem + ".txt")
    if txt is not None:
        results += check_txt(txt, texts, markdown)
    _record(results, quality, review)


def with_quality(pages: Sequence[PageResult], quality: Mapping[int, PageQuality]) -> list[PageResult]:
    """The pages with the quality check's findings (flag, confidence, checks) on them."""
    out = []
    for p in pages:
        q = quality.get(p.index)
        if q is None:
            out.append(p)
            continue
        flags = (*p.flags, LOW_CONFIDENCE) if q.low and LOW_CONFIDENCE not in p.flags else p.flags
        out.append(dataclasses.replace(p, flags=flags, confidence=q.confidence,
                                       checks=tuple(c.to_json() for c in q.checks)))
    return out
