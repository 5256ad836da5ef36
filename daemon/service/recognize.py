"""Render and recognise one document's pages: the scheduling between the render pool and the
engine, with page-level resume.

Contract:

- ``Recognizer(cfg, journal, engine, pool, want_pdf=...).pages(doc, src, n, opts, progress)``
  ``-> list[PageResult]``
  returns every page of the document, in order. Each page is rendered in the pool
  (``daemon.pages.textlayer.read_or_render``: its text layer, or an image) and, when it is an
  image, submitted to the engine as soon as it is rendered, so the engine sees pages of several
  documents at once and batches them. At most ``window`` pages of one document are between
  "render started" and "text back" at a time, so memory stays bounded.
- Resume: pages the journal holds under the same key (engine, render settings, language hint)
  are taken from it; each page read now is committed as it comes back (``daemon.page_records``).
- A page whose render takes longer than ``engine.render_timeout`` (counted from when a worker
  took it), a render worker that dies, or one over its memory limit -> ``WorkerCrash`` (the
  render worker is killed or its pool rebuilt). Engine errors propagate as the engine raised them.
- More pages to OCR than ``engine.max_ocr_pages`` (counted as pages come back from the render
  stage, resumed ones included) -> ``InputError`` naming the key.
- ``progress.start(resumed)`` once the resumed pages are known, ``progress.page()`` after each
  page finished now.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from daemon.config import Config
from daemon.engines.base import Engine, PageRequest
from daemon.errors import InputError, WorkerCrash
from daemon.journal.store import Journal
from daemon.models import Document, RenderOptions
from daemon.pagerecord import ImagePage, LayerPage, PageResult, RenderedPage
from daemon.pages import probe, render, textlayer
from daemon.pages.renderpool import RenderPool, RenderTask
from daemon.service import metrics

log = logging.getLogger(__name__)


def page_key(engine: str, opts: RenderOptions, languages: list[str] | None) -> str:
    """What a recorded page was read with: a page recorded under another key (another engine,
    render size or language hint) is read again on resume, never mixed in."""
    return (
        f"{engine}|edge={opts.longest_edge},dpi={render.MAX_DPI},at={opts.dpi},rot={int(opts.autorotate)},"
        f"crop={int(opts.crop_borders)},deskew={int(opts.deskew)},layer={opts.text_layer}"
        f"|langs={','.join(languages or [])}"
    )


class PageProgress(Protocol):
    """Told how many pages were resumed from the journal, then of each page finished now."""

    def start(self, resumed: int) -> None: ...

    def page(self) -> None: ...


class Recognizer:
    """Runs one document's pages through the render pool and the engine (see the contract)."""

    def __init__(self, cfg: Config, journal: Journal, engine: Engine, pool: RenderPool, *, want_pdf: bool) -> None:
        self.cfg = cfg
        self.journal = journal
        self.engine = engine
        self.pool = pool
        self.want_pdf = want_pdf  # some route writes the searchable PDF: keep the page boxes

    def pages(self, doc: Document, src: Any, n: int, opts: RenderOptions, progress: PageProgress) -> list[PageResult]:
        inbox = self.cfg.inbox(doc.inbox)
        langs: list[str] | None = list(inbox.languages) if inbox and inbox.languages else None
        key = page_key(self.engine.name, opts, langs)
        results = self._resumed(doc, key, n)
        progress.start(len(results))
        on_page = progress.page
        todo = [i for i in range(n) if i not in results]
        window = max(2, min(n, self.engine.max_in_flight, self.cfg.daemon.pages_in_flight_per_document))
        # An engine without word boxes (VLM) gets each page's line boxes from the render worker,
        # for the searchable PDF's alignment (daemon.writers.pdflayout).
        with_lines = self.want_pdf and not getattr(self.engine, "word_boxes", False)
        limit = self.cfg.engine.render_timeout
        rendering: dict[RenderTask, int] = {}
        reading: dict[cf.Future[Any], ImagePage] = {}
        next_t = 0
        # engine.max_ocr_pages: probe.page_count refused what had no text at all; a page whose
        # layer is not usable (glyph soup, an OCR layer) is known only once rendered
        to_ocr = sum(r.source == "ocr" for r in results.values())
        try:
            while len(results) < n:
                while next_t < len(todo) and len(rendering) + len(reading) < window:
                    i = todo[next_t]
                    # Page index as priority: the first pages of every document render first.
                    rendering[self.pool.submit(textlayer.read_or_render, src, i, opts, with_lines, priority=i)] = i
                    next_t += 1
                # Wake at the earliest render deadline, counted from when a worker took the page.
                wake = min((r.deadline(limit) for r in rendering), default=None)
                timeout = None if wake is None else max(0.0, wake - time.monotonic())
                done, _ = cf.wait([*rendering, *reading], timeout=timeout, return_when=cf.FIRST_COMPLETED)
                if not done:
                    self._kill_late(rendering, limit)
                    continue
                for f in done:
                    if f in rendering:
                        assert isinstance(f, RenderTask)
                        match self._rendered(f, rendering.pop(f)):
                            case LayerPage() as layer:  # the PDF's own text: no engine
                                metrics.page_from_text_layer(doc.id)
                                self._record(doc, key, PageResult.from_layer(layer), results, on_page)
                            case ImagePage() as page:
                                to_ocr += 1
                                if to_ocr > opts.max_ocr_pages:
                                    raise InputError(probe.ocr_limit_reason(to_ocr, n, opts.max_ocr_pages, at_least=True))
                                metrics.page_rendered(doc.id, f.started)
                                # The render stage already ran OSD (or read the page's text band,
                                # which showed it upright); the Tesseract engine reuses both.
                                req = PageRequest(
                                    doc.tag, page.index, page.image, priority=page.index, languages=langs,
                                    script=page.geometry.script, band=page.band,
                                )
                                reading[self.engine.submit(req)] = page
                    else:
                        page = reading.pop(f)
                        answer = f.result()
                        log.debug("%s page %d/%d read by %s in %.2fs", doc.tag, page.index + 1, n, answer.engine,
                                  answer.seconds)
                        metrics.page_recognized(doc.id, answer.seconds)
                        result = PageResult.from_engine(page, answer, self.engine.output_is_markdown)
                        self._record(doc, key, result if self.want_pdf else result.without_layout(), results, on_page)
        finally:
            for r in rendering:
                r.cancel()
            for g in reading:
                g.cancel()
        return [results[i] for i in range(n)]

    # -- parts -------------------------------------------------------------------------------

    def _resumed(self, doc: Document, key: str, n: int) -> dict[int, PageResult]:
        if not self.cfg.daemon.page_records:
            return {}
        results = {i: rec for i, rec in self.journal.done_pages(doc.id, key).items() if i < n}
        if results:
            log.info("%s resuming: %d of %d pages already done", doc.tag, len(results), n)
        return results

    def _record(
        self, doc: Document, key: str, page: PageResult, results: dict[int, PageResult], on_page: Callable[[], None],
    ) -> None:
        for d in page.degraded:  # the optional stages that failed on it: log and count here, once
            log.warning("%s page %d: %s stage degraded: %s", doc.tag, page.index + 1, d.stage, d.error)
            metrics.stage_degraded(d.stage)
        if self.cfg.daemon.page_records:
            self.journal.record_page(doc.id, key, page)
        results[page.index] = page
        on_page()

    def _rendered(self, f: RenderTask, i: int) -> RenderedPage:
        try:
            page = f.result()
        except cf.process.BrokenProcessPool as e:
            self.pool.reset(f.executor)
            raise WorkerCrash("the render worker crashed on this file") from e
        except MemoryError as e:
            raise WorkerCrash(f"page {i + 1} needed more than {self.cfg.engine.render_memory_mb} MB to render") from e
        if not isinstance(page, ImagePage | LayerPage):
            raise TypeError(f"the render stage returned {type(page).__name__}")
        return page

    def _kill_late(self, rendering: dict[RenderTask, int], limit: float) -> None:
        late = [r for r in rendering if r.overdue(limit)]
        if late:
            self.pool.kill(late[0])
            raise WorkerCrash(f"page {rendering[late[0]] + 1} took longer than {limit:.0f}s to render (render worker killed)")
