"""Processing one document: render -> engine -> classify -> route -> outputs -> source action.

Contract:
- ``Pipeline.process(doc)`` takes a document the journal has put in ``processing`` and leaves it
  in exactly one of: ``done``/``duplicate`` (outputs written, source kept/archived/deleted),
  ``failed`` (source moved to the failed folder with ``<name>.error.txt``), or back in
  ``queued`` with a not-before time (transient problem; returns the delay). It never raises for a
  problem with the document; it raises only if the journal itself is unusable (a write that
  fails for want of space, I/O or a lock: the service takes no document until it can write), or
  ``LeaseLost`` when a shared journal says another daemon holds the document now (fencing, pgstore.py).
- Pages are rendered in worker processes (a crash or hang of the renderer cannot take the daemon
  down) and each page is submitted to the engine as soon as it is rendered, so the engine sees
  pages of several documents at once and batches them. At most ``window`` pages of one document
  are between "render started" and "text back" at a time, so memory stays bounded.
- Repeating a document after a crash is safe: output names are recorded in the journal before
  any is written and reused on the repeat; an archive move is recorded before it is made.
- ``claims`` (``claims.OutputClaims``) answers the watcher's "did the daemon write this?".
- Page-level resume: each page is committed to the journal as its text comes back
  (``Journal.record_page``, unless ``daemon.page_records`` is off); a repeat renders and reads
  only the pages not recorded, and the outputs are the same as an uninterrupted run's (the
  recorded raw text and page facts are what the outputs are made from).
- Progress: a log line per document at most every ``PROGRESS_LOG_EVERY`` seconds, and the
  ``on_progress`` callback (``ocr-daemon once``'s bar) after each page.
- The source file's checks and moves (keep/archive/delete, failed folder) are ``sources.Sources``;
  the render/recognise scheduling is ``recognize.Recognizer``; classifying, routing and rendering
  the outputs' bytes is ``outputs.prepare_outputs``; the sidecar is ``sidecar.Sidecar``; the
  ends other than done (superseded, failed, waiting, retried) are ``endings.Endings``; the phase
  times (the sidecar's and the journal's ``timings``) are ``timings.Timings``.
- ``_finish`` is a recipe of named steps: prepare (classify, route, render the outputs' bytes),
  the pages' findings, the raw copy, write and move the source, hooks, the journal's "done".
- Stages (``daemon.stages``): only the essential ones (open, render, recognise, write) can fail a
  document. Optional stages that failed are recorded on their pages or the document
  (``degraded``), logged with document and page, counted in ``/metrics``, and the document is
  done with what the essential stages gave.
- Quality (daemon.quality): each page's confidence figure, its ``low_confidence`` flag and its
  outputs' checks go on the page in the sidecar, the document's ``review`` and
  ``review_reasons`` at the top; flagged pages, failed checks and review documents are logged
  and counted in ``/metrics``.
- Hooks (``routes[].on_done``): their deliveries are journaled (``hooks.record``) after the outputs
  are written and before the document is recorded done/duplicate; the daemon's dispatcher
  (``daemon.service.hooks``) makes them. A hook never fails the document.
- Retries are bounded and visible: every error but a bad input (``InputError``: failed at once)
  and a full/read-only destination (``NoSpaceError``: waits uncounted, ``Endings.wait_for_space``)
  counts one strike; the document is retried with exponential backoff until
  ``daemon.max_attempts`` strikes, or failed at once when an error about the document itself (on
  the same page, or the same bug) comes back twice in a row: that is not transient. While it waits, ``status``, ``/status``
  and ``/metrics`` show it with its attempt count, last error and next try.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
import pickle
import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import cast

from daemon.config import Config
from daemon.config.options import render_options as config_render_options
from daemon.document.model import Document as ParsedDocument
from daemon.engines.base import Engine
from daemon.errors import InputError, NoSpaceError, TransientError, WorkerCrash
from daemon.fsio import atomic_write, atomic_write_all, fit_stem, plan_output_set, remove_stale_temp
from daemon.intake.batch import part_info
from daemon.journal.pgsql import LeaseLost
from daemon.journal.schema import write_problem
from daemon.journal.store import Journal
from daemon.models import Classification, Document, Progress, RenderOptions, RouteDecision
from daemon.names import display, for_log
from daemon.pagerecord import PageResult
from daemon.pages import probe
from daemon.pages.renderpool import OPEN_PRIORITY, RenderPool, RenderTask
from daemon.quality.run import LOW_CONFIDENCE, with_quality
from daemon.service import hooks, metrics
from daemon.service.claims import OutputClaims
from daemon.service.endings import Endings, Outcome
from daemon.service.outputs import Prepared, prepare_outputs, warm_worker
from daemon.service.recognize import Recognizer
from daemon.service.sidecar import DuplicateOf, Sidecar
from daemon.service.sources import Sources, changed
from daemon.service.timings import Timings
from daemon.stages import Degraded
from daemon.understand.route import choose_route
from daemon.writers import render_outputs
from daemon.writers.convert import join_raw_pages
from daemon.writers.pdfreport import PdfReport

log = logging.getLogger(__name__)

RAW_DIR = "raw"

#: Seconds between two progress log lines of one document.
PROGRESS_LOG_EVERY = 10.0


def render_options(cfg: Config, engine_name: str = "", math_to_engine: bool = False) -> RenderOptions:
    return config_render_options(cfg.engine, engine_name, math_to_engine)


class Pipeline:
    """Processes documents; shared by all document worker threads."""

    def __init__(
        self, cfg: Config, journal: Journal, engine: Engine, *, render_workers: int | None = None,
        on_progress: Callable[[Progress], None] | None = None, sources_in_place: Collection[Path] = (),
    ) -> None:
        self.claims = OutputClaims(journal)  # the watcher's "did the daemon write this?"
        self.sources = Sources(cfg, journal, claim=self.claims.claim, in_place=sources_in_place)
        self.endings = Endings(cfg, journal, self.sources)  # superseded, failed, waiting, retried
        self.cfg = cfg
        self.journal = journal
        self.engine = engine
        self.on_progress = on_progress
        n = render_workers if render_workers is not None else cfg.daemon.render_workers
        self.pool = RenderPool(
            n or max(1, (os.cpu_count() or 2) // 2), cfg.engine.render_memory_mb, nice=cfg.daemon.render_nice
        )
        self._plan_lock = threading.Lock()

    # -- public -------------------------------------------------------------------------------

    @property
    def cfg(self) -> Config:
        return self._cfg

    @cfg.setter
    def cfg(self, cfg: Config) -> None:  # a reload replaces it: the source checks and retries follow
        self._cfg = cfg
        self.sources.cfg = cfg
        self.endings.cfg = cfg

    def warm(self) -> None:
        """Start the render workers and load in each what pages and finishing need."""
        self.pool.warm(warm_worker)

    def close(self, *, kill: bool = False) -> None:
        self.pool.close(kill=kill)

    def process(self, doc: Document) -> Outcome:
        row = self.journal.get(doc.id)
        src = doc.path
        try:
            src = self.sources.locate(doc, row)
            if row is not None and row.duplicate_of:
                return self._duplicate(doc, src, row.duplicate_of)
            return self._process(doc, src)
        except _Replaced:
            return self.endings.superseded(doc)
        except InputError as e:
            if changed(doc, src):  # the error was about content that is no longer there
                return self.endings.superseded(doc)
            return self.endings.fail(doc, src, e.reason)
        except LeaseLost:
            raise  # another daemon holds it now (a shared journal): nothing more is written for it
        except sqlite3.Error as e:
            if write_problem(e):  # the journal cannot be written: not this document's fault, and
                raise  # no strike could be recorded; the service waits for the journal (service.py)
            return self.endings.unexpected(doc, src, e)
        except NoSpaceError as e:  # a full or read-only destination: waits, never counted
            return self.endings.wait_for_space(doc, str(e))
        except Exception as e:  # transient, a crash, a bug: bounded retries (``Endings.retry``)
            return self.endings.unexpected(doc, src, e)

    # -- stages -------------------------------------------------------------------------------

    def _process(self, doc: Document, src: Path) -> Outcome:
        """The recipe: open -> render and recognise every page -> finish."""
        t0 = time.monotonic()
        # math_to_engine: a VLM writes math as LaTeX (textlayer)
        opts = render_options(self.cfg, self.engine.name, self.engine.output_is_markdown)
        n = self._page_count(src, opts)
        timings = Timings(count=time.monotonic() - t0)
        self.journal.set_total_pages(doc.id, n)
        log.info("%s processing %s (%d pages, attempt %d)", doc.tag, for_log(src.name), n, doc.attempts)
        metrics.document_started(doc.id, display(src.name), doc.inbox, n)
        t1 = time.monotonic()
        recognizer = Recognizer(self.cfg, self.journal, self.engine, self.pool, want_pdf=self._pdf_wanted())
        pages = recognizer.pages(doc, src, n, opts, _Meter(doc, n, self.on_progress))
        timings = replace(timings, ocr=time.monotonic() - t1)
        if changed(doc, src):
            raise _Replaced  # pages may mix two versions: write nothing for this one
        return self._finish(doc, src, pages, timings, t0)

    def _finish(self, doc: Document, src: Path, pages: list[PageResult], timings: Timings, t0: float) -> Outcome:
        """After OCR: classify and route, the pages' findings, the raw copy, the outputs and the
        source's move, then hooks and the journal's "done".

        Runs on the document's worker thread; the CPU-heavy part (``prepare_outputs``) runs in a
        render worker, because this process's GIL is shared with every other document worker and
        with vLLM's front-end, and documents decoded together finish together
        (bench/bench_finish.py times a burst of them).
        """
        prep = self._prepare(doc, src, pages)
        # the quality check's own seconds are its share of classify and write
        timings = replace(timings, classify=prep.seconds["classify"], checks=prep.seconds.get("checks", 0.0))
        pages = _with_findings(doc, pages, prep)
        self._save_raw(doc, prep.texts)
        outputs, final, timings = self._write_and_move(doc, src, pages, prep, timings)
        self._cleanup_temp(doc)
        timings = replace(timings, total=time.monotonic() - t0)
        metrics.observe_stage("finish", timings.finish)
        hooks.record(self.journal, self.cfg, doc.id, prep.decision.name, outputs)  # journaled before "done"
        self._record_done(doc, pages, prep, outputs, final, timings)
        return Outcome("done", outputs=outputs, final_path=final, pages=len(pages))

    def _write_and_move(
        self, doc: Document, src: Path, pages: list[PageResult], prep: Prepared, timings: Timings,
    ) -> tuple[list[Path], Path | None, Timings]:
        """The sidecar and the outputs written, then the source kept, archived or deleted: the
        outputs, where the source is now, and the timings with ``write``."""
        t3 = time.monotonic()
        decision = prep.decision
        # Where the source will go is decided (and journaled) before the outputs are written, so
        # the sidecar can say it (``archived_to``); it moves once the outputs are on disk.
        target = self.sources.plan(doc, src, decision.source_action, decision.archive_dir, self.journal.get(doc.id))
        try:
            sidecar = Sidecar.of_document(
                doc, prep.cls, decision.name, self.engine.name, pages, target, prep.pdf_report, prep.degraded,
                part_info(src),  # a part of a split scanner batch: where its pages came from
                review=prep.review, classification=decision.classification,
            )
            outputs = self._write(doc, src, decision, sidecar, timings, prep)
            timings = replace(timings, write=prep.seconds["render"] + time.monotonic() - t3)
            final = self.sources.act(doc, src, decision.source_action, target)
        finally:
            self.sources.release(target)
        return outputs, final, timings

    def _record_done(
        self, doc: Document, pages: list[PageResult], prep: Prepared, outputs: list[Path], final: Path | None,
        timings: Timings,
    ) -> None:
        """The journal's "done", then the quality findings counted and the document's log line."""
        cls, decision, n = prep.cls, prep.decision, len(pages)
        self.journal.finish(
            doc.id, language=cls.language, doctype=cls.doctype, route=decision.name, pages=n, outputs=outputs,
            final_path=final, timings=timings.as_dict(),
        )
        _count_review(doc, pages, prep)  # once the document is done (a retried write is not counted twice)
        log.info(
            "%s done: %s/%s via route %r, %d pages in %.1fs -> %s",
            doc.tag, cls.language, cls.doctype, decision.name, n, timings.total, decision.destination,
        )

    def _prepare(self, doc: Document, src: Path, pages: list[PageResult]) -> Prepared:
        """``prepare_outputs`` in a render worker, off this process's GIL (which vLLM's front-end
        and every document worker share); here when the pool cannot run it: closed while the
        daemon stops, its worker crashed (by a page of another file running beside it), out of its memory limit,
        or a result that cannot be pickled. Errors of ``prepare_outputs`` itself propagate (a
        ``RuntimeError`` or ``MemoryError`` after one more try here)."""
        args = (self.cfg, pages, src, doc.inbox, self.engine.output_is_markdown, datetime.now())
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

    def _write(
        self, doc: Document, src: Path, decision: RouteDecision, sidecar: Sidecar, timings: Timings,
        prep: Prepared | None,
    ) -> list[Path]:
        """Name, then write atomically, the output set: ``prep``'s files (None: the sidecar
        alone, a duplicate's) and the JSON, rendered again now that the names are known."""
        dest = decision.destination
        body = dict(prep.body) if prep is not None else {src.stem + ".json": b""}
        json_wanted = src.stem + ".json" in body
        suffixes = [name[len(src.stem):] for name in body]  # names are stem + a stem-free suffix
        stem, paths = self._plan_names(doc, dest, src.stem, suffixes)
        files = {stem + suf: data for suf, data in zip(suffixes, body.values(), strict=True)}
        if json_wanted:  # the one file that names the outputs: rendered again, now they are known
            side = sidecar.named(paths, timings).to_json()
            parsed = prep.parsed if prep is not None else ParsedDocument([], sidecar.language)
            files.update(render_outputs(parsed, formats=["json"], stem=stem, sidecar=side))
        atomic_write_all({dest / name: data for name, data in files.items()})  # the whole set or nothing
        return [dest / name for name in files]

    def _plan_names(self, doc: Document, dest: Path, stem: str, suffixes: list[str]) -> tuple[str, list[Path]]:
        """The output set's stem and paths in ``dest``, recorded in the journal before any is written
        (this document's names from an earlier try are reused)."""
        owned = set(self.journal.planned(doc.id))
        # Names planned by unfinished documents (in flight on another worker, or cut off by a
        # crash and re-queued) are taken too: two documents with one stem ("scan.pdf" and
        # "scan.jpg") must never plan the same names and then overwrite each other's outputs.
        with self._plan_lock:
            taken = self.journal.planned_by_unfinished(doc.id) - owned
            stem, paths = plan_output_set(dest, stem, lambda s: [s + suf for suf in suffixes], owned, taken)
            self.journal.set_planned(doc.id, paths)
        return stem, paths

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

    # -- duplicates (failures and retries: ``endings``) ---------------------------------------------------------

    def _duplicate(self, doc: Document, src: Path, earlier_id: int) -> Outcome:
        earlier = self.journal.get(earlier_id)
        cls = Classification(
            language=(earlier.language if earlier else None) or "unknown",
            language_confidence=1.0,
            doctype=(earlier.doctype if earlier else None) or "other",
        )
        pages = (earlier.pages if earlier else None) or 0
        decision, _ = choose_route(self.cfg, path=src, inbox=doc.inbox, cls=cls, pages=pages, when=datetime.now())
        linked = DuplicateOf(
            earlier_id, display(earlier.path) if earlier else None,
            tuple(os.fsdecode(p) for p in earlier.outputs) if earlier else (),
        )
        target = self.sources.plan(doc, src, decision.source_action, decision.archive_dir, self.journal.get(doc.id))
        try:
            sidecar = Sidecar.of_duplicate(doc, cls, decision.name, linked, target)
            outputs = self._write(doc, src, decision, sidecar, Timings(), None)  # a duplicate: no timings
            final = self.sources.act(doc, src, decision.source_action, target)
        finally:
            self.sources.release(target)
        hooks.record(self.journal, self.cfg, doc.id, decision.name, outputs)  # journaled before "duplicate"
        self.journal.finish_duplicate(doc.id, outputs=outputs, final_path=final)
        log.info("%s duplicate of doc-%d: linked, no OCR (%s)", doc.tag, earlier_id, for_log(src.name))
        return Outcome("duplicate", outputs=outputs, final_path=final)


class _Meter:
    """One document's page progress in this process: the log line (at most every
    ``PROGRESS_LOG_EVERY`` s) and the ``on_progress`` callback (``start``, then after each page)."""

    def __init__(self, doc: Document, total: int, callback: Callable[[Progress], None] | None) -> None:
        self.doc, self.total, self.resumed, self.callback = doc, total, 0, callback
        self.done_now = 0
        self.started = time.time()
        self.logged = time.monotonic()

    def start(self, resumed: int) -> None:
        self.resumed = resumed
        if self.callback is not None:
            self.callback(self.progress())

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


def _count_review(doc: Document, pages: list[PageResult], prep: Prepared) -> None:
    """The quality check's findings in the log and ``/metrics`` (daemon.quality)."""
    for p in pages:
        for flag in p.flags:
            if flag == LOW_CONFIDENCE:
                metrics.page_flagged(flag)
        for c in p.checks:
            if not c.get("ok", True):
                metrics.output_check_failed(str(c.get("check")))
    if prep.review:
        metrics.document_review()
        log.warning("%s needs review: %s", doc.tag, "; ".join(str(r) for r in prep.review.reasons))


def _with_findings(doc: Document, pages: list[PageResult], prep: Prepared) -> list[PageResult]:
    """The pages with the PDF writer's failures and the quality check's findings on them; the
    document's degraded optional stages logged and counted."""
    pages = with_quality(_with_pdf_degradations(pages, prep.pdf_report), prep.quality)
    for d in prep.degraded:
        log.warning("%s: %s stage degraded: %s", doc.tag, d.stage, d.error)
        metrics.stage_degraded(d.stage)
    return pages


def _with_pdf_degradations(pages: list[PageResult], report: PdfReport | None) -> list[PageResult]:
    """The pages with the PDF writer's per-page failures (line alignment) added to them."""
    by_page: dict[int, list[Degraded]] = {}
    for entry in report.pages if report is not None else []:
        for d in entry.all_degraded():
            by_page.setdefault(entry.index, []).append(d)
    return [p.with_degraded(by_page.get(p.index, [])) for p in pages]


class _Replaced(Exception):
    """The source changed after admission (see ``sources.changed``)."""
