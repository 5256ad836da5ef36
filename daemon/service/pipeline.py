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
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import errno
import json
import logging
import os
import pickle
import stat
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from daemon.config import Config
from daemon.document.model import Document as ParsedDocument
from daemon.document.model import parse_document
from daemon.engines.base import Engine, PageRequest
from daemon.errors import InputError, TransientError, WorkerCrash
from daemon.fsio import (
    atomic_write,
    atomic_write_all,
    error_note_name,
    fit_stem,
    fsync_dir,
    move_file,
    plan_output_set,
    remove_stale_temp,
    unique_path,
)
from daemon.journal.store import Journal
from daemon.models import Classification, Document, PageText, RenderOptions, RouteDecision
from daemon.names import display, for_log
from daemon.pages import probe, render
from daemon.pages.renderpool import OPEN_PRIORITY, RenderPool, RenderTask, warm_render
from daemon.understand.classify import classify
from daemon.understand.classify import warm as classify_warm
from daemon.understand.route import choose_route
from daemon.writers import WriterOptions, render_outputs
from daemon.writers.convert import join_raw_pages

log = logging.getLogger(__name__)

RAW_DIR = "raw"


@dataclass
class Outcome:
    state: str  # done | duplicate | superseded | failed | retry
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
    )


@dataclass
class Prepared:
    """A recognised document before its outputs are named (``prepare_outputs``)."""

    cls: Classification
    decision: RouteDecision
    parsed: ParsedDocument  # the pages parsed, for the JSON file that is rendered once names are known
    body: dict[str, bytes]  # every output file, named ``src.stem`` + suffix; JSON without outputs/timings
    seconds: dict[str, float]  # "classify" (with routing), "render"


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


def prepare_outputs(cfg: Config, pages: list[str], src: Path, inbox: str, markdown: bool, when: datetime) -> Prepared:
    """Classify, route and render a document's outputs: CPU work only, no journal, no files.

    Runs in a render worker process (``Pipeline._prepare``): when many documents finish at
    once (a batch of pages decoded together on the GPU), each one's ~0.1 s of Python here would
    otherwise run one after the other on the daemon's GIL (bench/bench_finish.py).
    """
    t0 = time.monotonic()
    cls = classify("\n\n".join(pages), cfg=cfg, filename=display(src.name), pages=len(pages), markdown=markdown)
    decision, _ = choose_route(cfg, path=src, inbox=inbox, cls=cls, pages=len(pages), when=when)
    t1 = time.monotonic()
    parsed, body = render_body(pages, decision.formats, src.stem, cls.language, markdown, decision.csv_bom)
    return Prepared(cls, decision, parsed, body, {"classify": t1 - t0, "render": time.monotonic() - t1})


def warm_worker() -> None:
    """Run once in each render worker at start (``Pipeline.warm``): the render modules, this
    module (``prepare_outputs``'s imports) and the language model loaded before the first file.
    A worker warmed for rendering alone took 0.75 s for its first ``prepare_outputs`` on the dev
    VM (then 5 ms), which every worker would pay at once when a batch of documents finishes
    together."""
    warm_render()
    classify_warm()


class Pipeline:
    """Processes documents; shared by all document worker threads."""

    def __init__(self, cfg: Config, journal: Journal, engine: Engine, *, render_workers: int | None = None) -> None:
        self.cfg = cfg
        self.journal = journal
        self.engine = engine
        n = render_workers if render_workers is not None else cfg.daemon.render_workers
        self.pool = RenderPool(
            n or max(1, (os.cpu_count() or 2) // 2), cfg.engine.render_memory_mb, nice=cfg.daemon.render_nice
        )
        self.outputs_seen: set[str] = set(journal.all_outputs())
        self._outputs_lock = threading.Lock()
        self._plan_lock = threading.Lock()

    # -- public -------------------------------------------------------------------------------

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
        row = self.journal.get(doc.id) or {}
        src = doc.path
        try:
            src = self._locate_source(doc, row)
            if row.get("duplicate_of"):
                return self._duplicate(doc, src, int(row["duplicate_of"]))
            return self._process(doc, src)
        except _Replaced:
            return self._superseded(doc)
        except InputError as e:
            if _changed(doc, src):  # the error was about content that is no longer there
                return self._superseded(doc)
            return self._fail(doc, src, e.reason)
        except WorkerCrash as e:
            return self._retry(doc, src, str(e), counted=True)
        except TransientError as e:
            return self._retry(doc, src, str(e), counted=False)
        except Exception as e:  # a bug or an unexpected library error: retry a few times, then fail
            if _changed(doc, src):  # e.g. a page index past the end of a shorter new version
                return self._superseded(doc)
            log.exception("%s: unexpected error", tag)
            return self._retry(doc, src, f"internal error: {type(e).__name__}: {e}", counted=True)

    # -- stages -------------------------------------------------------------------------------

    def _locate_source(self, doc: Document, row: dict[str, Any]) -> Path:
        """The source file, checked to be a plain regular file inside its inbox.

        Follows a move recorded before a crash: the journal stores where a source is going
        (archive or failed folder) before moving it, and a move is link-then-unlink, so after a
        crash the file is at the old place, the new place, or both (same inode: finish the move).
        """
        src = doc.path
        moved: Path | None = row.get("final_path")
        if moved is not None and moved != src and os.path.lexists(moved):
            if os.path.lexists(src) and _same_inode(src, moved):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(src)
                    fsync_dir(src.parent)
            if not os.path.lexists(src):
                return moved  # crash between the move and the journal's finish: carry on from there
        if not os.path.lexists(src):
            raise InputError("the file disappeared before it could be processed")
        st = os.lstat(src)
        if stat.S_ISLNK(st.st_mode):
            raise InputError("the file is a symbolic link; links are refused so nothing outside the inbox is read")
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file (a device, pipe, socket or folder)")
        if st.st_nlink > 1:
            raise InputError(f"the file has {st.st_nlink} hard links; refused so nothing outside the inbox is read")
        inbox = self.cfg.inbox(doc.inbox)
        if inbox is not None:
            root = os.path.realpath(inbox.path)
            real = os.path.realpath(src.parent)
            if real != root and not real.startswith(root.rstrip("/") + "/"):
                raise InputError("the file's folder resolves outside the inbox (a symlinked folder); refused")
        try:
            # O_NOFOLLOW|O_NONBLOCK: never follow a link swapped in since the lstat, never block
            # on a FIFO; fstat checks what was really opened.
            fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise InputError("the file is a symbolic link; refused") from e
            raise TransientError(f"cannot open the file: {e.strerror}") from e
        try:
            fst = os.fstat(fd)
            if not stat.S_ISREG(fst.st_mode) or fst.st_nlink > 1:
                raise InputError("the file changed into a link or special file while being opened; refused")
        finally:
            os.close(fd)
        return src

    def _process(self, doc: Document, src: Path) -> Outcome:
        tag = doc.tag
        timings: dict[str, float] = {}
        t0 = time.monotonic()
        opts = render_options(self.cfg, self.engine.name)
        n = self._page_count(src, opts)
        timings["count"] = time.monotonic() - t0
        log.info("%s processing %s (%d pages, attempt %d)", tag, for_log(src.name), n, doc.attempts)
        t1 = time.monotonic()
        texts, page_info = self._recognize(doc, src, n, opts)
        timings["ocr"] = time.monotonic() - t1
        if _changed(doc, src):
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
        pages = [t.text for t in texts]
        prep = self._prepare(doc, src, pages)
        cls, decision = prep.cls, prep.decision
        timings["classify"] = prep.seconds["classify"]
        self._save_raw(doc, pages)
        t3 = time.monotonic()
        sidecar = self._sidecar(doc, src, cls, decision, texts, page_info)
        outputs = self._write(doc, src, decision, pages, cls.language, sidecar, timings, rendered=(prep.parsed, prep.body))
        timings["write"] = prep.seconds["render"] + time.monotonic() - t3
        final = self._source_action(doc, src, decision)
        self._cleanup_temp(doc)
        timings["total"] = time.monotonic() - t0
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

    def _prepare(self, doc: Document, src: Path, pages: list[str]) -> Prepared:
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
        """Render pages in the pool and feed each to the engine as soon as it is ready."""
        inbox = self.cfg.inbox(doc.inbox)
        langs: list[str] | None = list(inbox.languages) if inbox and inbox.languages else None
        window = max(2, min(n, self.engine.max_in_flight, self.cfg.daemon.pages_in_flight_per_document))
        rendering: dict[RenderTask, int] = {}
        ocr: dict[cf.Future[Any], int] = {}
        results: dict[int, PageText] = {}
        info: dict[int, dict[str, Any]] = {}
        limit = self.cfg.engine.render_timeout
        next_i = 0
        try:
            while len(results) < n:
                while next_i < n and len(rendering) + len(ocr) < window:
                    # Page index as priority: the first pages of every document render first.
                    rf = self.pool.submit(render.render_page, src, next_i, opts, priority=next_i)
                    rendering[rf] = next_i
                    next_i += 1
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
                        except cf.process.BrokenProcessPool as e:
                            self.pool.reset(f.executor)
                            raise WorkerCrash("the render worker crashed on this file") from e
                        except MemoryError as e:
                            raise WorkerCrash(
                                f"page {i + 1} needed more than {self.cfg.engine.render_memory_mb} MB to render"
                            ) from e
                        info[i] = {
                            "index": i,
                            "rotation": page.rotation,
                            "cropped": page.cropped,
                            "script": page.script,
                            "size": list(page.image.size),
                            "source_size": list(page.source_size),
                        }
                        # The render stage already ran OSD; the Tesseract engine reuses its script.
                        req = PageRequest(doc.tag, i, page.image, priority=i, languages=langs, meta={"script": page.script})
                        ocr[self.engine.submit(req)] = i
                    else:
                        i = ocr.pop(f)
                        results[i] = f.result()
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
            "source": display(src),
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
    ) -> list[Path]:
        """Name, then write atomically, the output set. ``rendered``: ``render_body``'s result
        for these pages and ``decision`` (from ``prepare_outputs``); rendered here when None."""
        dest = decision.destination
        fmts = formats or decision.formats
        markdown = self.engine.output_is_markdown
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

    def _source_action(self, doc: Document, src: Path, decision: RouteDecision) -> Path | None:
        action = decision.source_action
        if action == "keep" or src != doc.path:  # src != doc.path: already archived before a crash
            return src
        if _changed(doc, src):
            # A new version replaced the file after its pages were read: archiving or deleting
            # it now would lose content that was never OCRed. It stays; the watcher admits it.
            log.info("%s: %s changed while being processed; left in place for the new version", doc.tag, for_log(src.name))
            return src
        if action == "delete":
            try:
                src.unlink()
                fsync_dir(src.parent)
            except FileNotFoundError:
                pass
            except OSError as e:
                raise TransientError(f"cannot delete {src}: {e.strerror}") from e
            return None
        assert decision.archive_dir is not None
        target = unique_path(decision.archive_dir, src.name)
        self.journal.set_final_path(doc.id, target)
        with self._outputs_lock:  # an archive folder inside a watched inbox must not feed it again
            self.outputs_seen.add(str(target))
        move_file(src, target)
        log.info("%s archived to %s", doc.tag, for_log(target))
        return target

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
        earlier = self.journal.get(earlier_id) or {}
        cls = Classification(
            language=earlier.get("language") or "unknown",
            language_confidence=1.0,
            doctype=earlier.get("doctype") or "other",
        )
        pages = int(earlier.get("pages") or 0)
        decision, _ = choose_route(self.cfg, path=src, inbox=doc.inbox, cls=cls, pages=pages, when=datetime.now())
        sidecar = {
            "source": display(src),
            "inbox": doc.inbox,
            "sha256": doc.sha256,
            "language": cls.language,
            "doctype": cls.doctype,
            "route": decision.name,
            "engine": None,
            "document_id": doc.id,
            "duplicate_of": {
                "document_id": earlier_id,
                "source": display(earlier["path"]) if earlier.get("path") else None,
                "outputs": _json_list(earlier.get("outputs")),
            },
        }
        outputs = self._write(doc, src, decision, [], cls.language, sidecar, {}, formats=["json"])
        final = self._source_action(doc, src, decision)
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
        failed_dir = self.cfg.daemon.failed_dir
        final: Path | None = None
        if os.path.lexists(src):
            try:
                failed_dir.mkdir(parents=True, exist_ok=True)
                if os.path.realpath(src.parent) == os.path.realpath(failed_dir):
                    target = src  # already moved there before a crash
                else:
                    target = unique_path(failed_dir, src.name)
                    self.journal.set_final_path(doc.id, target)
                    move_file(src, target)
                final = target
                note = (
                    f"ocr-daemon could not process this file.\n\nReason: {reason}\n\n"
                    f"Original location: {display(doc.path)}\nInbox: {doc.inbox}\nSHA-256: {doc.sha256}\n"
                    f"Attempts: {doc.attempts}\nWhen: {datetime.now().astimezone().isoformat(timespec='seconds')}\n\n"
                    f"To try again: ocr-daemon requeue '{display(target)}'\n"
                )
                atomic_write(failed_dir / error_note_name(target.name), note.encode("utf-8"))
            except (TransientError, OSError) as e:
                log.error("%s: cannot move to the failed folder (%s); the file stays where it is", doc.tag, for_log(str(e)))
                final = src
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


class _Replaced(Exception):
    """The source changed after admission (see ``_changed``)."""


def _changed(doc: Document, src: Path) -> bool:
    """True if the file at ``src`` is no longer the version the journal admitted (size or mtime
    differ: replaced by rename, rewritten in place). A vanished file is not "changed"."""
    try:
        st = os.lstat(src)
    except OSError:
        return False
    return (st.st_size, st.st_mtime) != (doc.size, doc.mtime)


def _same_inode(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _json_list(v: Any) -> list[str]:
    with contextlib.suppress(TypeError, ValueError):
        return list(json.loads(v))
    return []
