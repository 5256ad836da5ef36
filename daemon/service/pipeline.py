"""Processing one document: render -> engine -> classify -> route -> outputs -> source action.

Contract:
- ``Pipeline.process(doc)`` takes a document the journal has put in ``processing`` and leaves it
  in exactly one of: ``done``/``duplicate`` (outputs written, source kept/archived/deleted),
  ``failed`` (source moved to the failed folder with ``<name>.error.txt``), or back in
  ``queued`` with a not-before time (transient problem; returns the delay). It never raises for a
  problem with the document; it raises only if the journal itself is unusable.
- Pages are rendered in worker processes (a crash or hang of the renderer cannot take the daemon
  down) and each page is submitted to the engine as soon as it is rendered, so the engine sees
  pages of several documents at once and batches them. At most ``window`` pages of one document
  are between "render started" and "text back" at a time, so memory stays bounded.
- Repeating a document after a crash is safe: output names are recorded in the journal before
  any is written and reused on the repeat; an archive move is recorded before it is made.
- Page-level resume: each page is committed to the journal as its text comes back
  (``Journal.record_page``, unless ``daemon.page_records`` is off); a repeat renders and reads
  only the pages not recorded, and the outputs are the same as an uninterrupted run's (the
  recorded raw text and page facts are what the outputs are made from).
- Progress: a log line per document at most every ``PROGRESS_LOG_EVERY`` seconds, and the
  ``on_progress`` callback (``ocr-daemon once``'s bar) after each page.
- The source file's checks and moves (keep/archive/delete, failed folder) are ``sources.Sources``.

Over ~500 lines: one document's whole flow (open, the render/OCR window with resume, finish in a
render worker, outputs, duplicates, failures, retries) reads top to bottom here; the source
file's lifecycle already lives in ``sources.py``.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
import pickle
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from daemon.config import Config
from daemon.document.model import Document as ParsedDocument
from daemon.document.parse import parse_document
from daemon.engines.base import Engine, PageRequest
from daemon.errors import InputError, TransientError, WorkerCrash
from daemon.fsio import atomic_write, atomic_write_all, fit_stem, plan_output_set, remove_stale_temp
from daemon.journal.store import Journal, PageRecord
from daemon.models import (
    Classification,
    Document,
    PageLayout,
    PageText,
    Progress,
    RenderOptions,
    RouteDecision,
)
from daemon.names import display, for_log
from daemon.pages import probe, textlayer
from daemon.pages.renderpool import OPEN_PRIORITY, RenderPool, RenderTask, warm_render
from daemon.service import metrics
from daemon.service.sources import Sources, changed
from daemon.understand.classify import classify
from daemon.understand.language import warm as language_warm
from daemon.understand.route import choose_route
from daemon.writers import WriterOptions, render_outputs
from daemon.writers.convert import join_raw_pages
from daemon.writers.pdf import PdfInput, pdf_pages, pdf_suffix, pdf_title, write_pdf
from daemon.writers.pdflayout import render_page_with_lines

log = logging.getLogger(__name__)

RAW_DIR = "raw"

#: Seconds between two progress log lines of one document.
PROGRESS_LOG_EVERY = 10.0

OutcomeState = Literal["done", "duplicate", "superseded", "failed", "retry"]


@dataclass
class Outcome:
    state: OutcomeState
    retry_in: float = 0.0
    outputs: list[Path] | None = None
    final_path: Path | None = None
    reason: str = ""
    pages: int = 0


def render_options(cfg: Config, engine_name: str = "") -> RenderOptions:
    e = cfg.engine
    return RenderOptions(
        dpi=e.tesseract.render_dpi if engine_name == "tesseract" else None,  # per-engine resolution
        longest_edge=e.render_longest_edge,
        max_pages=e.max_pages,
        max_image_pixels=e.max_image_pixels,
        autorotate=e.autorotate,
        crop_borders=e.crop_borders,
        text_layer=e.text_layer,
    )


@dataclass
class Prepared:
    """A recognised document before its outputs are named (``prepare_outputs``)."""

    cls: Classification
    decision: RouteDecision
    parsed: ParsedDocument  # the pages parsed, for the JSON file that is rendered once names are known
    body: dict[str, bytes]  # every output file, named ``src.stem`` + suffix; JSON without outputs/timings
    seconds: dict[str, float]  # "classify" (with routing), "render"
    pdf_report: dict[str, Any] | None = None  # the sidecar's "pdf" (per-page placement, PDF/A) when pdf was written


def render_body(
    pages: list[str], formats: list[str], stem: str, language: str, markdown: bool, csv_bom: bool,
) -> tuple[ParsedDocument, dict[str, bytes]]:
    """The pages parsed once and every output of ``formats`` rendered from that parse."""
    parsed = parse_document(pages, markdown=markdown, language=language)
    body = render_outputs(
        pages, formats=formats, stem=stem, language=language, sidecar={}, markdown=markdown,
        options=WriterOptions(csv_bom=csv_bom), parsed=parsed,
    )
    return parsed, body


def prepare_outputs(
    cfg: Config, pages: list[str], src: Path, inbox: str, markdown: bool, when: datetime, pdf: PdfInput | None = None,
) -> Prepared:
    """Classify, route and render a document's outputs: CPU work only, no journal, no files.

    Runs in a render worker process (``Pipeline._prepare``): when many documents finish at
    once (a batch of pages decoded together on the GPU), each one's ~0.1 s of Python here would
    otherwise run one after the other on the daemon's GIL (bench/bench_finish.py).
    """
    t0 = time.monotonic()
    cls = classify("\n\n".join(pages), cfg=cfg, filename=display(src.name), pages=len(pages), markdown=markdown)
    decision, _ = choose_route(cfg, path=src, inbox=inbox, cls=cls, pages=len(pages), when=when)
    t1 = time.monotonic()
    text_formats = [f for f in decision.formats if f != "pdf"]
    parsed, body = render_body(pages, text_formats, src.stem, cls.language, markdown, decision.csv_bom)
    report = None
    if "pdf" in decision.formats and pdf is not None:
        # The searchable PDF: made from the source file and the page geometry (daemon.writers.pdf).
        route = next((r for r in cfg.routes if r.name == decision.name), None)
        job = PdfInput(
            src, pdf.pages, markdown, language=cls.language, title=pdf_title(parsed, src), pdfa=bool(route and route.pdfa),
        )
        try:
            out = write_pdf(job)
            body[src.stem + pdf_suffix(src, decision.destination)] = out.data
            report = out.report
        except Exception as e:  # the text outputs are not lost for a PDF that cannot be made
            log.warning("%s: no pdf output: %s: %s", display(src.name), type(e).__name__, e)
            report = {"error": f"the searchable PDF could not be made: {type(e).__name__}: {e}"}
    return Prepared(cls, decision, parsed, body, {"classify": t1 - t0, "render": time.monotonic() - t1}, report)


def warm_worker() -> None:
    """Run once in each render worker at start (``Pipeline.warm``): the render modules, this
    module (``prepare_outputs``'s imports) and the language model loaded before the first file.
    A worker warmed for rendering alone took 0.75 s for its first ``prepare_outputs`` on the dev
    VM (then 5 ms), which every worker would pay at once when a batch of documents finishes
    together."""
    warm_render()
    language_warm()


def page_key(engine: str, opts: RenderOptions, languages: list[str] | None) -> str:
    """What a recorded page was read with: a page recorded under another key (another engine,
    render size or language hint) is read again on resume, never mixed in."""
    return (
        f"{engine}|edge={opts.longest_edge},dpi={opts.max_dpi},at={opts.dpi},rot={int(opts.autorotate)},"
        f"crop={int(opts.crop_borders)},layer={opts.text_layer}"
        f"|langs={','.join(languages or [])}"
    )


class Pipeline:
    """Processes documents; shared by all document worker threads."""

    def __init__(
        self, cfg: Config, journal: Journal, engine: Engine, *, render_workers: int | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.sources = Sources(cfg, journal, claim=self._claim_output)
        self.cfg = cfg
        self.journal = journal
        self.engine = engine
        self.on_progress = on_progress
        n = render_workers if render_workers is not None else cfg.daemon.render_workers
        self.pool = RenderPool(
            n or max(1, (os.cpu_count() or 2) // 2), cfg.engine.render_memory_mb, nice=cfg.daemon.render_nice
        )
        self.outputs_seen: set[str] = set(journal.all_outputs())
        self._outputs_lock = threading.Lock()
        self._plan_lock = threading.Lock()

    # -- public -------------------------------------------------------------------------------

    @property
    def cfg(self) -> Config:
        return self._cfg

    @cfg.setter
    def cfg(self, cfg: Config) -> None:  # a reload replaces it: the source checks follow
        self._cfg = cfg
        self.sources.cfg = cfg

    def _claim_output(self, path: Path) -> None:
        with self._outputs_lock:  # an archive folder inside a watched inbox must not feed it again
            self.outputs_seen.add(str(path))

    def is_output(self, path: Path) -> bool:
        with self._outputs_lock:
            return str(path) in self.outputs_seen

    def warm(self) -> None:
        """Start the render workers and load in each what pages and finishing need."""
        self.pool.warm(warm_worker)

    def close(self) -> None:
        self.pool.close()

    def process(self, doc: Document) -> Outcome:
        tag = doc.tag
        row = self.journal.get(doc.id)
        src = doc.path
        try:
            src = self.sources.locate(doc, row)
            if row is not None and row.duplicate_of:
                return self._duplicate(doc, src, row.duplicate_of)
            return self._process(doc, src)
        except _Replaced:
            return self._superseded(doc)
        except InputError as e:
            if changed(doc, src):  # the error was about content that is no longer there
                return self._superseded(doc)
            return self._fail(doc, src, e.reason)
        except WorkerCrash as e:
            return self._retry(doc, src, str(e), counted=True)
        except TransientError as e:
            return self._retry(doc, src, str(e), counted=False)
        except Exception as e:  # a bug or an unexpected library error: retry a few times, then fail
            if changed(doc, src):  # e.g. a page index past the end of a shorter new version
                return self._superseded(doc)
            log.exception("%s: unexpected error", tag)
            return self._retry(doc, src, f"internal error: {type(e).__name__}: {e}", counted=True)

    # -- stages -------------------------------------------------------------------------------

    def _process(self, doc: Document, src: Path) -> Outcome:
        tag = doc.tag
        timings: dict[str, float] = {}
        t0 = time.monotonic()
        opts = render_options(self.cfg, self.engine.name)
        opts.math_to_engine = self.engine.output_is_markdown  # a VLM writes math as LaTeX (textlayer)
        n = self._page_count(src, opts)
        timings["count"] = time.monotonic() - t0
        self.journal.set_total_pages(doc.id, n)
        log.info("%s processing %s (%d pages, attempt %d)", tag, for_log(src.name), n, doc.attempts)
        metrics.document_started(doc.id, display(src.name), doc.inbox, n)
        t1 = time.monotonic()
        texts, page_info = self._recognize(doc, src, n, opts)
        timings["ocr"] = time.monotonic() - t1
        if changed(doc, src):
            raise _Replaced  # pages may mix two versions: write nothing for this one
        return self._finish(doc, src, texts, page_info, timings, t0)

    def _finish(
        self, doc: Document, src: Path, texts: list[PageText], page_info: list[dict[str, Any]],
        timings: dict[str, float], t0: float,
    ) -> Outcome:
        """After OCR: classify, route, write the outputs, act on the source, record it done.

        Runs on the document's worker thread; the CPU-heavy part (``prepare_outputs``) runs in a
        render worker, because this process's GIL is shared with every other document worker and
        with vLLM's front-end, and documents decoded together finish together
        (bench/bench_finish.py times a burst of them).
        """
        tag = doc.tag
        n = len(texts)
        pages, markdown = textlayer.unify(texts, self.engine.output_is_markdown)
        prep = self._prepare(doc, src, pages, texts, page_info, markdown)
        cls, decision = prep.cls, prep.decision
        timings["classify"] = prep.seconds["classify"]
        self._save_raw(doc, pages)
        t3 = time.monotonic()
        # Where the source will go is decided (and journaled) before the outputs are written, so
        # the sidecar can say it (``archived_to``); it moves once the outputs are on disk.
        target = self.sources.plan(doc, src, decision.source_action, decision.archive_dir, self.journal.get(doc.id))
        try:
            sidecar = self._sidecar(doc, src, cls, decision, texts, page_info)
            sidecar["archived_to"] = display(target) if target is not None and target != doc.path else None
            if prep.pdf_report is not None:
                sidecar["pdf"] = prep.pdf_report
            outputs = self._write(doc, src, decision, pages, cls.language, sidecar, timings,
                                  rendered=(prep.parsed, prep.body), markdown=markdown)
            timings["write"] = prep.seconds["render"] + time.monotonic() - t3
            final = self.sources.act(doc, src, decision.source_action, target)
        finally:
            self.sources.release(target)
        self._cleanup_temp(doc)
        timings["total"] = time.monotonic() - t0
        metrics.observe_stage("finish", timings["total"] - timings.get("count", 0.0) - timings.get("ocr", 0.0))
        self.journal.finish(
            doc.id,
            language=cls.language,
            doctype=cls.doctype,
            route=decision.name,
            pages=n,
            outputs=outputs,
            final_path=final,
            timings=timings,
        )
        log.info(
            "%s done: %s/%s via route %r, %d pages in %.1fs -> %s",
            tag, cls.language, cls.doctype, decision.name, n, timings["total"], decision.destination,
        )
        return Outcome("done", outputs=outputs, final_path=final, pages=n)

    def _prepare(
        self, doc: Document, src: Path, pages: list[str], texts: list[PageText] | None = None,
        page_info: list[dict[str, Any]] | None = None, markdown: bool | None = None,
    ) -> Prepared:
        """``prepare_outputs`` in a render worker, off this process's GIL (which vLLM's front-end
        and every document worker share); here when the pool cannot run it: closed while the
        daemon stops, its worker crashed (by a page of another file running beside it), out of its memory limit,
        or a result that cannot be pickled. Errors of ``prepare_outputs`` itself propagate (a
        ``RuntimeError`` or ``MemoryError`` after one more try here)."""
        pdf = None
        if texts is not None and page_info is not None and self._pdf_wanted():
            pdf = PdfInput(src, pdf_pages(texts, page_info), self.engine.output_is_markdown)
        md = self.engine.output_is_markdown if markdown is None else markdown
        args = (self.cfg, pages, src, doc.inbox, md, datetime.now(), pdf)
        task: RenderTask | None = None
        try:
            task = self.pool.submit(prepare_outputs, *args, priority=OPEN_PRIORITY)
            return cast(Prepared, task.result())
        except (cf.process.BrokenProcessPool, MemoryError, pickle.PickleError, RuntimeError) as e:
            # RuntimeError: the pool is closed (the daemon is stopping) -- finish this one here.
            if isinstance(e, cf.process.BrokenProcessPool) and task is not None:
                self.pool.reset(task.executor)
            log.info("%s finishing in the daemon's process (render worker: %s)", doc.tag, type(e).__name__)
            return prepare_outputs(*args)

    def _pdf_wanted(self) -> bool:
        """Some route writes the searchable PDF (the route is known only after OCR, so the page
        geometry and, for engines without word boxes, the line boxes are gathered for all)."""
        return any("pdf" in r.formats for r in self.cfg.routes)

    def _page_count(self, src: Path, opts: RenderOptions) -> int:
        timeout = self.cfg.engine.render_timeout
        task = self.pool.submit(probe.page_count, src, opts, priority=OPEN_PRIORITY)
        try:
            while True:  # the clock runs from when a worker takes the task, not while it waits
                try:
                    return int(task.result(timeout=max(0.0, task.deadline(timeout) - time.monotonic())))
                except cf.TimeoutError:
                    if task.overdue(timeout):
                        raise
        except cf.TimeoutError as e:
            self.pool.kill(task)
            raise WorkerCrash(f"opening the file took longer than {timeout:.0f}s (render worker killed)") from e
        except cf.process.BrokenProcessPool as e:
            self.pool.reset(task.executor)
            raise WorkerCrash("the render worker crashed while opening the file") from e
        except MemoryError as e:
            raise WorkerCrash(f"opening the file needed more than {self.cfg.engine.render_memory_mb} MB") from e
        finally:
            task.cancel()  # still waiting for a worker (the clock loop above was interrupted)

    def _recognize(self, doc: Document, src: Path, n: int, opts: RenderOptions) -> tuple[list[PageText], list[dict[str, Any]]]:
        """Render pages in the pool and feed each to the engine as soon as it is ready; pages
        recorded by an earlier attempt are taken from the journal instead (resume), and each
        page read now is recorded as it comes back."""
        inbox = self.cfg.inbox(doc.inbox)
        langs: list[str] | None = list(inbox.languages) if inbox and inbox.languages else None
        window = max(2, min(n, self.engine.max_in_flight, self.cfg.daemon.pages_in_flight_per_document))
        rendering: dict[RenderTask, int] = {}
        ocr: dict[cf.Future[Any], int] = {}
        results: dict[int, PageText] = {}
        info: dict[int, dict[str, Any]] = {}
        limit = self.cfg.engine.render_timeout
        # An engine without word boxes (VLM) gets each page's line boxes from the render worker,
        # for the searchable PDF's alignment (daemon.writers.pdflayout).
        want_pdf = self._pdf_wanted()
        with_lines = want_pdf and not getattr(self.engine, "word_boxes", False)
        line_boxes: dict[int, PageLayout] = {}
        records = self.cfg.daemon.page_records
        key = page_key(self.engine.name, opts, langs)
        if records:
            for i, rec in self.journal.done_pages(doc.id, key).items():
                if i < n:
                    results[i] = rec.text
                    info[i] = dict(rec.info)
        if results:
            log.info("%s resuming: %d of %d pages already done", doc.tag, len(results), n)
        todo = [i for i in range(n) if i not in results]
        meter = _Meter(doc, n, len(results), self.on_progress)
        next_t = 0
        try:
            while len(results) < n:
                while next_t < len(todo) and len(rendering) + len(ocr) < window:
                    i = todo[next_t]
                    # Page index as priority: the first pages of every document render first.
                    # A PDF page with a real text layer comes back as its text (textlayer).
                    fn = render_page_with_lines if with_lines else textlayer.read_or_render
                    rf = self.pool.submit(fn, src, i, opts, priority=i)
                    rendering[rf] = i
                    next_t += 1
                # Wake at the earliest render deadline, counted from when a worker took the page.
                wake = min((r.deadline(limit) for r in rendering), default=None)
                timeout = None if wake is None else max(0.0, wake - time.monotonic())
                done, _ = cf.wait([*rendering, *ocr], timeout=timeout, return_when=cf.FIRST_COMPLETED)
                if not done:
                    late = [r for r in rendering if r.overdue(limit)]
                    if late:
                        self.pool.kill(late[0])
                        raise WorkerCrash(
                            f"page {rendering[late[0]] + 1} took longer than {limit:.0f}s to render (render worker killed)"
                        )
                    continue
                for f in done:
                    if f in rendering:
                        assert isinstance(f, RenderTask)
                        i = rendering.pop(f)
                        try:
                            page = f.result()
                            if isinstance(page, tuple):  # render_page_with_lines
                                page, line_boxes[i] = page
                        except cf.process.BrokenProcessPool as e:
                            self.pool.reset(f.executor)
                            raise WorkerCrash("the render worker crashed on this file") from e
                        except MemoryError as e:
                            raise WorkerCrash(
                                f"page {i + 1} needed more than {self.cfg.engine.render_memory_mb} MB to render"
                            ) from e
                        if isinstance(page, PageText):  # the PDF's own text: no engine
                            info[i] = {"index": i, "source": "text_layer"}
                            if records:
                                self.journal.record_page(doc.id, key, PageRecord(page, info[i]))
                            results[i] = page
                            meter.page()
                            continue
                        info[i] = {
                            "index": i,
                            "rotation": page.rotation,
                            "cropped": page.cropped,
                            "script": page.script,
                            "size": list(page.image.size),
                            "source_size": list(page.source_size),
                            **({"crop_box": list(page.crop_box)} if page.crop_box else {}),
                            "source": "ocr",
                            **({"text_layer": page.text_layer} if page.text_layer else {}),
                        }
                        metrics.page_rendered(doc.id, f.started)
                        # The render stage already ran OSD; the Tesseract engine reuses its script.
                        req = PageRequest(doc.tag, i, page.image, priority=i, languages=langs, meta={"script": page.script})
                        ocr[self.engine.submit(req)] = i
                    else:
                        i = ocr.pop(f)
                        text = f.result()
                        log.debug("%s page %d/%d read by %s in %.2fs", doc.tag, i + 1, n, text.engine, text.seconds)
                        metrics.page_recognized(doc.id, text.seconds)
                        if not want_pdf:
                            text.layout = None  # word boxes are kept only for the pdf output
                        elif text.layout is None and i in line_boxes:
                            text.layout = line_boxes.pop(i)
                        if records:
                            self.journal.record_page(doc.id, key, PageRecord(text, info[i]))
                        results[i] = text
                        meter.page()
        finally:
            for r in rendering:
                r.cancel()
            for g in ocr:
                g.cancel()
        return [results[i] for i in range(n)], [info[i] for i in range(n)]

    def _sidecar(
        self,
        doc: Document,
        src: Path,
        cls: Classification,
        decision: RouteDecision,
        texts: list[PageText],
        page_info: list[dict[str, Any]],
    ) -> dict[str, Any]:
        pages = []
        for t, pi in zip(texts, page_info, strict=True):
            pages.append({**pi, "seconds": round(t.seconds, 3), "flags": t.flags, **({"meta": t.meta} if t.meta else {})})
        return {
            "source": display(doc.path),  # where it was dropped; ``archived_to``: where it went
            "inbox": doc.inbox,
            "sha256": doc.sha256,
            "size": doc.size,
            "language": cls.language,
            "language_confidence": round(cls.language_confidence, 3),
            "doctype": cls.doctype,
            "doctype_scores": {k: round(v, 2) for k, v in cls.doctype_scores.items()},
            "has_table": cls.has_table,
            "has_math": cls.has_math,
            "doc_date": cls.doc_date,
            "route": decision.name,
            "pages": pages,
            "engine": self.engine.name,
            "document_id": doc.id,
            "processed_at": datetime.now().astimezone().isoformat(timespec="seconds"),
        }

    def _write(
        self,
        doc: Document,
        src: Path,
        decision: RouteDecision,
        pages: list[str],
        language: str,
        sidecar: dict[str, Any],
        timings: dict[str, float],
        formats: list[str] | None = None,
        *,
        rendered: tuple[ParsedDocument, dict[str, bytes]] | None = None,
        markdown: bool | None = None,
    ) -> list[Path]:
        """Name, then write atomically, the output set. ``rendered``: ``render_body``'s result
        for these pages and ``decision`` (from ``prepare_outputs``); rendered here when None."""
        dest = decision.destination
        fmts = formats or decision.formats
        markdown = self.engine.output_is_markdown if markdown is None else markdown
        parsed, body = rendered or render_body(pages, fmts, src.stem, language, markdown, decision.csv_bom)
        suffixes = [name[len(src.stem):] for name in body]  # names are stem + a stem-free suffix

        owned = set(self.journal.planned(doc.id))
        # Names planned by unfinished documents (in flight on another worker, or cut off by a
        # crash and re-queued) are taken too: two documents with one stem ("scan.pdf" and
        # "scan.jpg") must never plan the same names and then overwrite each other's outputs.
        with self._plan_lock:
            taken = self.journal.planned_by_unfinished(doc.id) - owned
            stem, paths = plan_output_set(dest, src.stem, lambda s: [s + suf for suf in suffixes], owned, taken)
            self.journal.set_planned(doc.id, paths)
        with self._outputs_lock:
            self.outputs_seen.update(str(p) for p in paths)
        files = {stem + suf: data for suf, data in zip(suffixes, body.values(), strict=True)}
        if "json" in fmts:  # the one file that names the outputs: rendered again, now they are known
            side = {**sidecar, "outputs": [display(p) for p in paths], "timings": {k: round(v, 3) for k, v in timings.items()}}
            files.update(render_outputs(
                pages, formats=["json"], stem=stem, language=language, sidecar=side, markdown=markdown, parsed=parsed,
            ))
        atomic_write_all({dest / name: data for name, data in files.items()})  # the whole set or nothing
        return [dest / name for name in files]

    def _cleanup_temp(self, doc: Document) -> None:
        """Remove temp files a crash left behind for this document's outputs."""
        for p in self.journal.planned(doc.id):
            remove_stale_temp(p)

    def _save_raw(self, doc: Document, pages: list[str]) -> None:
        # raw/<document id>/<stem>.raw.md: the id keeps same-named documents apart, the stem
        # makes `ocr-daemon convert` name its outputs after the source.
        raw = self.cfg.daemon.state_dir / RAW_DIR / str(doc.id) / f"{fit_stem(doc.path.stem, len('.raw.md') + 16)}.raw.md"
        try:
            atomic_write(raw, join_raw_pages(pages).encode("utf-8"))
        except TransientError as e:  # the raw copy is a convenience: never fail a document on it
            log.warning("%s: raw output not saved: %s", doc.tag, e)

    # -- duplicates, failures, retries ---------------------------------------------------------

    def _duplicate(self, doc: Document, src: Path, earlier_id: int) -> Outcome:
        earlier = self.journal.get(earlier_id)
        cls = Classification(
            language=(earlier.language if earlier else None) or "unknown",
            language_confidence=1.0,
            doctype=(earlier.doctype if earlier else None) or "other",
        )
        pages = (earlier.pages if earlier else None) or 0
        decision, _ = choose_route(self.cfg, path=src, inbox=doc.inbox, cls=cls, pages=pages, when=datetime.now())
        sidecar = {
            "source": display(doc.path),
            "inbox": doc.inbox,
            "sha256": doc.sha256,
            "language": cls.language,
            "doctype": cls.doctype,
            "route": decision.name,
            "engine": None,
            "document_id": doc.id,
            "duplicate_of": {
                "document_id": earlier_id,
                "source": display(earlier.path) if earlier else None,
                "outputs": [os.fsdecode(p) for p in earlier.outputs] if earlier else [],
            },
        }
        target = self.sources.plan(doc, src, decision.source_action, decision.archive_dir, self.journal.get(doc.id))
        try:
            sidecar["archived_to"] = display(target) if target is not None and target != doc.path else None
            outputs = self._write(doc, src, decision, [], cls.language, sidecar, {}, formats=["json"])
            final = self.sources.act(doc, src, decision.source_action, target)
        finally:
            self.sources.release(target)
        self.journal.finish_duplicate(doc.id, outputs=outputs, final_path=final)
        log.info("%s duplicate of doc-%d: linked, no OCR (%s)", doc.tag, earlier_id, for_log(src.name))
        return Outcome("duplicate", outputs=outputs, final_path=final)

    def _superseded(self, doc: Document) -> Outcome:
        """The file was replaced (or rewritten) while this version was processed. Nothing is
        written or moved for it; the new version is admitted and processed as its own document."""
        reason = "replaced by a newer version while being processed; the new version is processed on its own"
        self.journal.supersede(doc.id, reason)
        log.info("%s superseded: %s", doc.tag, reason)
        return Outcome("superseded", reason=reason)

    def _fail(self, doc: Document, src: Path, reason: str) -> Outcome:
        final = self.sources.fail(doc, src, reason)
        self.journal.fail(doc.id, reason, final)
        log.info("%s failed: %s", doc.tag, for_log(reason))
        return Outcome("failed", final_path=final, reason=reason)

    def _retry(self, doc: Document, src: Path, reason: str, *, counted: bool) -> Outcome:
        """Back to the queue after a backoff. Environmental problems (disk full, read-only
        destination, engine restarting) are retried without limit -- the file is fine; crashes
        of the render worker and internal errors count, and fail the file after max_attempts."""
        d = self.cfg.daemon
        if counted:
            strikes = self.journal.strike(doc.id)
            if strikes >= d.max_attempts:
                return self._fail(doc, src, f"{reason} (gave up after {strikes} tries)")
        delay = min(d.retry_backoff * (2 ** max(0, doc.attempts - 1)), d.retry_backoff_max)
        self.journal.retry_later(doc.id, reason, delay)
        log.info("%s retry in %.0fs: %s", doc.tag, delay, for_log(reason))
        return Outcome("retry", retry_in=delay, reason=reason)


class _Meter:
    """One document's page progress in this process: the log line (at most every
    ``PROGRESS_LOG_EVERY`` s) and the ``on_progress`` callback (after each page)."""

    def __init__(self, doc: Document, total: int, resumed: int, callback: Callable[[Progress], None] | None) -> None:
        self.doc, self.total, self.resumed, self.callback = doc, total, resumed, callback
        self.done_now = 0
        self.started = time.time()
        self.logged = time.monotonic()
        if callback is not None:
            callback(self.progress())

    def progress(self) -> Progress:
        return Progress.compute(
            doc_id=self.doc.id, path=self.doc.path, inbox=self.doc.inbox, pages_done=self.resumed + self.done_now,
            pages_total=self.total, done_this_attempt=self.done_now, started=self.started, now=time.time(),
        )

    def page(self) -> None:
        self.done_now += 1
        now = time.monotonic()
        last = self.resumed + self.done_now >= self.total
        if now - self.logged >= PROGRESS_LOG_EVERY and not last:
            self.logged = now
            p = self.progress()
            log.info("%s progress: %s", self.doc.tag, p.short().split(" ", 1)[1])
        if self.callback is not None:
            self.callback(self.progress())


class _Replaced(Exception):
    """The source changed after admission (see ``sources.changed``)."""
