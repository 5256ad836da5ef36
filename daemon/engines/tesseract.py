"""The Tesseract CPU engine: tesserocr (bundled Tesseract 5.5) with Debian's tessdata.

(One engine: its worker threads, queue and drain, the page's passes (the language probe, the read,
the upside-down, lost-text and table checks) and the measured constants behind each; the loaded
APIs are ``daemon.tessapi``'s per-thread cache; which models read a page ``daemon.engines.tessplan``;
each document's language ``tessdoc``; the text ``tesswords``, its words ``daemon.tessapi.word_layout``; the table pass ``tesstables``.)

Contract: exactly the one in ``daemon/engines/base.py``. In short:

- ``start()`` checks that every needed traineddata file exists and loads one API per worker
  thread; raises ``FatalError(..., ExitCode.ENGINE)`` naming the missing files and the tessdata
  folder otherwise. Idempotent.
- ``submit(req)`` is thread-safe, returns a ``Future[PageText]`` at once and blocks only while
  ``max_in_flight`` pages are already queued or running (back-pressure). Lower
  ``req.priority`` runs first; equal priorities run in submission order.
- Pages run in parallel on ``cfg.tesseract.threads`` worker threads (0 = the CPUs this process
  may use). Each thread keeps its own Tesseract APIs loaded (one per language set it has needed,
  ``daemon.tessapi.thread_api``: Tesseract APIs are not thread-safe, and tesserocr releases the
  GIL while recognising).
- Errors: an unusable image (no pixels) -> ``InputError``; a failure of the page's first read
  inside Tesseract -> ``TransientError`` (the pipeline retries the document, bounded by
  ``daemon.max_attempts``). Every later pass only improves the page (re-reads in its own language
  or script, the upside-down re-read, the table search): one that fails is an optional stage
  (``daemon.stages``) recorded in ``PageText.degraded``, and the page keeps the read it had. ``close(drain_timeout)`` lets queued
  and running pages finish for up to ``drain_timeout`` s, then fails the rest with
  ``EngineDeadError``; ``submit`` after ``close`` returns a future failed the same way.
- ``PageText.text`` is plain text, paragraphs separated by one blank line, no spaces between
  CJK characters; ``PageText.meta`` holds ``languages`` (the traineddata used), ``script`` (from
  OSD), ``confidence`` (Tesseract's mean word confidence, 0-100), ``word_confidence`` (the same
  weighted by word length: daemon.quality.confidence), ``low_words`` (the share of words under
  confidence 60, daemon.quality.signals), ``ink_ppm`` (a page read as next to no
  words: how much ink it has, daemon.intake.pagescan). ``PageText.layout`` holds the
  final pass's words with their boxes on the page image, by line in reading order (for the
  searchable PDF; read from the recognised page, a few ms).

``OMP_THREAD_LIMIT=1`` must be in the environment before tesserocr is imported: Debian's OpenMP
build of Tesseract is ~8x slower on a 2-core machine otherwise, and our parallelism is one page
per thread anyway. The entry point sets it (:mod:`daemon.procenv`), not this module.

Language choice (``daemon.engines.tessplan``; measured on generated full pages, bench/RESULTS.md
"Tesseract language strategy", CER = character error rate vs the known text): a Latin page read
with ``<language>+eng`` (Swedish, Danish: alone, their å æ ø) has CER 0.0 %, with all 9 Latin models (English first) 0.6 % (Nordic
letters: sv "lådor" -> "ládor"), with English alone 1.4 %. So every page is read once, with its
language's model: the document's language is decided on its first page by a probe (a quarter of
the page read with English, or with the CJK models for a page OSD calls Han/Japanese or whose
English read is unsure), remembered per document (``doc_tag``), and later pages start there; a
later page whose text is another Latin language is read again with that one (per page only when
it changes). The script comes from the render stage's OSD (``PageRequest.script``);
``PageRequest.band`` (text, confidence), when the render stage read the page's English
band to see it upright (``daemon.pages.orient.upright_by_reading``), is the probe's English band
(not read again). Pages of one document read at the same time wait for the page that is probing
the document's language (``daemon.engines.tessdoc``) instead of each probing a band (issue 32).
Issue 26: the all-Latin first read plus the re-read cost 2-5 one-model reads on each document's
first page (bench/bench_tesseract_passes.py); the probe costs about a third of one.

The allowed languages come from ``PageRequest.languages`` (ISO 639-1; e.g. an inbox's
``languages`` hint) or else ``cfg.tesseract.languages``. ``PageText.meta["languages"]`` names
the traineddata of the final pass, ``meta["probe"]`` the model sets the probe read the band with,
``meta["first_pass"]`` those of a discarded full read (a later page's language changed, or the
probe could not tell and the page's own text named another language).

Checks before the costly passes (issue 26): a page read below ``FLIP_RETRY_BELOW_CONF`` is read
upside down in full only when its probe band reads ``FLIP_MARGIN`` better upside down; the table
search (``daemon.engines.tesstables``) reads nothing when the page shows no table.

Lost text (issue 32; optional stage ``lost_text``): a page read below ``FLIP_RETRY_BELOW_CONF``
is also read with Otsu's global threshold and that read kept when ``FLIP_MARGIN`` surer (Sauvola
lost lines of a diary photo on ruled paper); then ink the read left without words is read again
on its own and merged in reading order (``daemon.engines.tessrecover``, ~0.02 s a page when
nothing is missing).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import heapq
import itertools
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from daemon.config import EngineCfg
from daemon.engines.base import Engine, PageRequest
from daemon.engines.tessdoc import DocLanguages
from daemon.engines.tessplan import (
    BAND_MIN_WORDS,
    CJK_SCRIPTS,
    CJK_UNDECIDED,
    LATIN,
    LEARN_MIN_CHARS,
    TESS_CODES,
    VERTICAL_SHARE,
    Plan,
    band_words,
    choose_languages,
    lang_pass_is_latin,
    latin_language,
    plan_page,
    probe_band,
    probe_bands,
    vertical_band,
    vertical_models,
)
from daemon.engines.tessrecover import lost_text, merge_text
from daemon.engines.tesstables import page_tables
from daemon.engines.tesswords import ink_ppm_of as _ink_ppm
from daemon.engines.tesswords import (
    layout_confidences,
    low_word_share,
    tidy_text,
    vertical_share,
)
from daemon.errors import EngineDeadError, ExitCode, FatalError, InputError, TransientError
from daemon.models import PageLayout, PageText
from daemon.stages import Degraded, Stage, optional
from daemon.tessapi import (
    OEM,
    PSM,
    ApiSpec,
    TessApi,
    adopt,
    discard,
    load,
    new_api,
    release_thread,
    thread_api,
    word_layout,
)
from daemon.tessdata import tessdata_dir

__all__ = ["TesseractEngine", "TESS_CODES", "LATIN", "choose_languages", "lang_pass_is_latin", "tidy_text"]

log = logging.getLogger(__name__)

#: Binarisation. Tesseract's default (global Otsu) drops text in light grey or orange (luma
#: 170-200: a test page of black, grey and orange lines read at CER 0.66) and whole shaded panels
#: (black text on a grey-200 box: CER 1.0). Sauvola's local threshold on the grey page with a
#: gamma of 2 (ink pulled darker, paper stays white) read both at CER 0.0; on real born-digital
#: pages it costs 0.1-0.4 points of CER on Latin text and nothing on Chinese, where Leptonica's
#: adaptive Otsu (method 1) went from CER 0.058 to 0.218 (bench/RESULTS.md, "Binarisation").
THRESHOLDING_METHOD = "2"  # Sauvola
INK_GAMMA = 2.0
INK_LUT = [round(255 * (v / 255) ** INK_GAMMA) for v in range(256)]

#: A page read below this mean confidence is also read upside down (see ``_recognise``), and
#: that read is kept when it is ``FLIP_MARGIN`` surer (upright text reads at 80-95, upside-down
#: text at 20-70: bench/RESULTS.md, "Orientation").
FLIP_RETRY_BELOW_CONF = 70.0
FLIP_MARGIN = 15.0
#: The upside-down check's band (a quarter of the page: the language probe's was this size too
#: before issue 32 made it 12 %).
FLIP_BAND = 0.25

def _spec(tessdata: str, langs: list[str]) -> ApiSpec:
    """The engine's API for the model set ``langs``: automatic layout, the LSTM models, and
    Sauvola's threshold (``THRESHOLDING_METHOD``)."""
    return ApiSpec(tessdata, "+".join(langs), PSM.AUTO, OEM.LSTM_ONLY, (("thresholding_method", THRESHOLDING_METHOD),))


def _usable_cpus() -> int:
    """CPUs this process may run on (affinity/cpuset aware), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _Closed:
    """Sentinel put on the queue to stop a worker."""


class TesseractEngine(Engine):
    """Tesseract through tesserocr; see the module docstring for the contract."""

    name = "tesseract"
    output_is_markdown = False
    word_boxes = True

    def __init__(self, engine_cfg: EngineCfg) -> None:
        self.cfg = engine_cfg
        self.threads = engine_cfg.tesseract.threads or _usable_cpus()
        self.hang_timeout = engine_cfg.tesseract.hang_timeout
        # Enough queued pages that no worker waits for the pipeline, few enough to bound memory
        # (a 1540 px RGB page is ~7 MB).
        self.max_in_flight = max(4, 2 * self.threads)
        self.languages: list[str] = list(engine_cfg.tesseract.languages)
        self.tessdata = tessdata_dir()
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._heap: list[tuple[int, int, Any]] = []
        self._seq = itertools.count()
        self._in_flight = 0  # submitted and not finished (queued + running)
        self._running: set[cf.Future[PageText]] = set()
        # doc_tag -> the language decided on an earlier page of that document (``tessdoc``)
        self._docs = DocLanguages()
        self._workers: list[threading.Thread] = []
        self._spare: TessApi | None = None  # start()'s API, for the first worker
        self._started = False
        self._closed = False

    # ------------------------------------------------------------------ lifecycle

    def _check_tessdata(self) -> None:
        folder = Path(self.tessdata)
        if not folder.is_dir():
            raise FatalError(
                f"tesseract: tessdata folder {folder} does not exist (install tesseract-ocr and the "
                "language packs, or set TESSDATA_PREFIX)",
                ExitCode.ENGINE,
            )
        needed = ["osd"] + [c for a in self.languages for c in TESS_CODES[a]]
        missing = [c for c in dict.fromkeys(needed) if not (folder / f"{c}.traineddata").is_file()]
        if missing:
            pkgs = " ".join("tesseract-ocr-" + m.replace("_", "-") for m in missing)
            raise FatalError(
                f"tesseract: missing traineddata in {folder}: "
                + ", ".join(f"{m}.traineddata" for m in missing)
                + f" (Debian/Ubuntu: apt-get install {pkgs})",
                ExitCode.ENGINE,
            )

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            if self._closed:
                raise FatalError("tesseract: engine already closed", ExitCode.ENGINE)
        self._check_tessdata()
        try:
            load()
        except ImportError as e:
            raise FatalError(f"tesseract: tesserocr is not installed ({e})", ExitCode.ENGINE) from e
        # Load one English API up front so a broken install fails here, not on the first page.
        # It is kept and handed to the first worker thread (``_worker``): loading it again there
        # cost every process (``ocr-daemon once``: one per document) another 0.1-0.4 s of CPU
        # (bench/cpu_profile_2026-12-03.md).
        langs = ["eng"] if "en" in self.languages else list(TESS_CODES[self.languages[0]])
        try:
            api = new_api(_spec(self.tessdata, langs))
        except Exception as e:
            raise FatalError(f"tesseract: cannot initialise Tesseract with {self.tessdata}: {e}", ExitCode.ENGINE) from e
        with self._lock:
            self._spare = api
            self._started = True
            for i in range(self.threads):
                t = threading.Thread(target=self._worker, name=f"tesseract-{i}", daemon=True)
                t.start()
                self._workers.append(t)
        log.info(
            "tesseract engine: %d threads, languages %s, tessdata %s",
            self.threads,
            ",".join(self.languages),
            self.tessdata,
        )

    def healthy(self) -> bool:
        with self._lock:
            return self._started and not self._closed

    def close(self, drain_timeout: float = 0.0) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._cv.notify_all()  # wake submitters blocked on back-pressure
        self._docs.close()  # and pages waiting for their document's language
        with self._lock:
            deadline = time.monotonic() + max(0.0, drain_timeout)
            while self._in_flight and self._workers:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(left)
            leftovers = [item for _, _, item in self._heap]
            self._heap.clear()
            running = list(self._running)
            for _ in self._workers:
                heapq.heappush(self._heap, (-1, next(self._seq), _Closed()))
            self._cv.notify_all()
        dead = EngineDeadError("tesseract engine closed before the page was recognised")
        for _req, fut in leftovers:
            if not fut.done():
                fut.set_exception(dead)
        for fut in running:
            if not fut.done():
                with contextlib.suppress(cf.InvalidStateError):
                    fut.set_exception(dead)
        for t in self._workers:
            t.join(timeout=0.5)  # a page mid-recognition finishes on its own; threads are daemons
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:  # no worker took it (none started)
            with contextlib.suppress(Exception):
                spare.end()

    # ------------------------------------------------------------------ submission

    def submit(self, request: PageRequest) -> cf.Future[PageText]:
        fut: cf.Future[PageText] = cf.Future()
        with self._lock:
            if not self._started and not self._closed:
                raise RuntimeError("TesseractEngine.submit() before start()")
            while not self._closed and self._in_flight >= self.max_in_flight:
                self._cv.wait()
            if self._closed:
                fut.set_exception(EngineDeadError("tesseract engine is closed"))
                return fut
            self._in_flight += 1
            heapq.heappush(self._heap, (request.priority, next(self._seq), (request, fut)))
            self._cv.notify_all()
        return self.track(fut)  # base.py: last_progress

    # ------------------------------------------------------------------ workers

    def _worker(self) -> None:
        with self._lock:
            if self._spare is not None:  # the API start() loaded: reused, not loaded again
                adopt(self._spare)
                self._spare = None
        try:
            while True:
                with self._lock:
                    while not self._heap:
                        self._cv.wait()
                    _, _, item = heapq.heappop(self._heap)
                    if isinstance(item, _Closed):
                        return
                    req, fut = item
                    if not fut.set_running_or_notify_cancel():
                        self._finish_locked(fut)
                        continue
                    self._running.add(fut)
                try:
                    result: PageText | BaseException = self._recognise(req)
                except BaseException as e:  # delivered through the future, never lost
                    result = e
                with self._lock:
                    self._running.discard(fut)
                    self._finish_locked(fut)
                try:
                    if isinstance(result, BaseException):
                        fut.set_exception(result)
                    else:
                        fut.set_result(result)
                except cf.InvalidStateError:
                    pass  # close() already failed it after the drain timeout
        finally:
            release_thread()  # this thread's loaded APIs

    def _finish_locked(self, fut: cf.Future[PageText]) -> None:
        self._in_flight -= 1
        self._cv.notify_all()

    def _recognise(self, req: PageRequest) -> PageText:
        t0 = time.monotonic()
        img = req.image
        if img.width < 1 or img.height < 1:
            raise InputError(f"page {req.index + 1} is empty (0 px)")
        # The hint narrows the configured languages; it never adds one whose traineddata start()
        # did not check (a hint outside the config falls back to the config).
        hint = req.languages or self.languages
        allowed: list[str] = [a for a in hint if a in self.languages] or list(self.languages)
        gray = img.convert("L") if img.mode != "L" else img
        gray = gray.point(INK_LUT)  # light grey and orange text darker (see INK_GAMMA)
        script = req.script
        degraded: list[Degraded] = []
        plan = self._plan(req, allowed, script, gray, degraded)
        langs = plan.models
        # The read is the essential stage; every other pass (the probe before it, a re-read in
        # the page's own language, the upside-down re-read, the table search) is optional
        # (daemon.stages): one that fails leaves the page as the passes before it read it.
        raw, conf, layout = self._ocr(req, langs, gray)
        text = tidy_text(raw)
        first_pass = None
        latin = [a for a in allowed if a in LATIN]
        known = self._docs.known(req.doc_tag)
        # The Latin language the read's models are for, when the page's own text may say another:
        # the probe could not tell (the read used its models), or the document's language was
        # known (a Danish manual whose page 1 was English: each page is checked, cheaply).
        read_as = (("en" if "en" in latin else latin[0]) if plan.decide_after
                   else known if not plan.probes and known in latin else None)
        if read_as is not None and len(latin) > 1 and lang_pass_is_latin(langs):
            lang = latin_language(text, latin)
            if lang is not None and lang != read_as:
                again = choose_languages(allowed, "Latin", lang)
                got = self._reread(req, again, gray, degraded)
                if got is not None:
                    first_pass, langs = langs, again
                    (raw, conf, layout), text = got, tidy_text(got[0])
            if lang is not None and lang != known:
                self._docs.remember(req.doc_tag, lang)
        turned = 0
        meta_threshold = ""
        words_on_gray = layout  # the words where they lie on ``gray`` (the table search reads them)
        if conf < FLIP_RETRY_BELOW_CONF and len(text) >= LEARN_MIN_CHARS:
            # An upside-down page OSD could not judge (no answer, or too unsure to turn it): the
            # read is junk at middling confidence (a 150 dpi Swedish manual page: 69). Its probe
            # band is read the other way up first (a quarter of the cost); only when that reads
            # clearly surer is the whole page read upside down, and kept when it is.
            flipped = gray.rotate(180)
            got = optional(Stage.ORIENTATION, lambda: self._flip_check(req, langs, flipped, conf), lambda: None,
                           degraded)
            raw2, conf2, layout2 = got if got is not None else ("", -1.0, layout)
            if got is not None and conf2 >= conf + FLIP_MARGIN:
                turned, raw, conf, text = 180, raw2, conf2, tidy_text(raw2)
                # the words' boxes stay on the turned page: the page record adds the turn to the
                # page's rotation (``PageResult.from_engine``), so the sidecar says 180 and the
                # searchable PDF shows the page upright with its text in reading order (boxes put
                # back on the upside-down page drew every line backwards, issue 32)
                layout, gray, words_on_gray = layout2, flipped, layout2
                # the language was decided (or not) on the upside-down page's junk: the Danish
                # page turned 180 deg was read with English ("laeser", "veerdier"); read it again
                # in the language its upright text names
                lang = latin_language(text, latin) if len(latin) > 1 and lang_pass_is_latin(langs) else None
                again = choose_languages(allowed, "Latin", lang) if lang is not None else langs
                if lang is not None and again != langs:
                    got = self._reread(req, again, gray, degraded)
                    if got is not None:
                        first_pass, langs = first_pass or langs, again
                        (raw, conf, layout), text = got, tidy_text(got[0])
                        words_on_gray = layout
                    self._docs.remember(req.doc_tag, lang)
        if conf < FLIP_RETRY_BELOW_CONF and len(text) >= LEARN_MIN_CHARS:
            # an unsure read may be the binarisation's fault: Sauvola on ruled paper under uneven
            # light merged the rules with the writing (a diary page: confidence 59, 4 of 9 lines
            # right; Otsu's global threshold: 93, 9 of 9). Kept only when clearly surer.
            otsu_gray = gray
            got = optional(Stage.LOST_TEXT, lambda: self._threshold_check(req, langs, otsu_gray), lambda: None,
                           degraded)
            if got is not None and got[1] >= conf + FLIP_MARGIN:
                raw, conf, words_on_gray = got
                text = tidy_text(raw)
                layout = words_on_gray  # on the turned page, like the read's (see above)
                meta_threshold = "otsu"
        # ink the read left without words (a dropped paragraph) read again on its own
        lost_gray, lost_words = gray, words_on_gray
        got_lost = optional(Stage.LOST_TEXT, lambda: lost_text(_spec(self.tessdata, langs), lost_gray, lost_words, THRESHOLDING_METHOD),
                            lambda: None, degraded)
        if got_lost is not None:
            words_on_gray, recovered = got_lost
            text = tidy_text(merge_text(text, words_on_gray, recovered))
            layout = words_on_gray  # on the turned page, like the read's (see above)
        # tables (``tesstables``): ruled ones read cell by cell, unruled ones from the words above
        page_gray, page_words = gray, words_on_gray
        rejected: list[str] = []
        # (not on a page written in columns: the table search reads rows of horizontal words,
        # and a vertical letter's columns came out as a 7-column table of single characters)
        tables = None if plan.vertical else optional(
            Stage.TABLES, lambda: page_tables(_spec(self.tessdata, langs), page_gray, page_words, rejected), lambda: None, degraded
        )
        # a table whose cells lost words stayed page text: the sidecar says so (issue 32)
        degraded.extend(Degraded(Stage.TABLES.value, why) for why in rejected)
        if tables is not None:
            text = tables.text
        secs = time.monotonic() - t0
        log.debug("%s page %d: %s, %.2f s, conf %.0f", req.doc_tag, req.index + 1, "+".join(langs), secs, conf)
        meta: dict[str, Any] = {"languages": langs, "script": script or None, "confidence": conf}
        if layout.confidence is not None:  # the page's quality figure (daemon.quality.confidence)
            meta["word_confidence"] = round(layout.confidence, 1)
            low = low_word_share(layout_confidences(layout))
            if low is not None:  # the spread of the word confidences (daemon.quality.signals)
                meta["low_words"] = round(low, 3)
        if len(text.split()) < 3:  # next to nothing read: a blank page, or a page with ink read as nothing?
            meta["ink_ppm"] = round(_ink_ppm(gray))
        if plan.probes:
            meta["probe"] = plan.probes
        if first_pass:
            meta["first_pass"] = first_pass
        if plan.vertical:
            meta["vertical"] = True
        if meta_threshold:
            meta["threshold"] = meta_threshold  # the page was read binarised this way (not Sauvola)
        if got_lost is not None:
            meta["lost_text"] = len(got_lost[1])  # lines the read had left out, read again
        if turned:
            meta["turned"] = turned  # the sidecar's engine details (the pipeline reads ``PageText.turned``)
        return PageText(
            index=req.index, text=text, engine=self.name, seconds=secs, meta=meta, layout=layout, degraded=degraded,
            markdown=tables is not None,  # inline Markdown and HTML tables
            turned=turned,
            blocks=tables.blocks if tables is not None else None,
        )

    def _plan(
        self, req: PageRequest, allowed: list[str], script: str, gray: Any,
        degraded: list[Degraded],
    ) -> Plan:
        """The page's models (``tessplan.plan_page``), its probe read on this thread's APIs; the
        language decided is remembered for the document. The probe is an optional stage: when it
        fails, the page is read with every model its script allows (the old, costly way)."""
        # a page of the same document probing now: its decision is waited for (``tessdoc``)
        known, owner = self._docs.claim(req.doc_tag)
        try:
            return self._plan_known(req, allowed, script, gray, degraded, known)
        finally:
            if owner:
                self._docs.release(req.doc_tag)

    def _plan_known(
        self, req: PageRequest, allowed: list[str], script: str, gray: Any,
        degraded: list[Degraded], known: str | None,
    ) -> Plan:
        vertical = script in CJK_SCRIPTS and optional(
            Stage.LANGUAGE_REREAD, lambda: self._vertical(allowed, script, gray), lambda: False, degraded,
        )

        def models(names: list[str]) -> list[str]:
            return (vertical_models(names, self._have) or names) if vertical else names

        # the render stage's read-first upright check read the page's English band already
        # (``daemon.pages.orient.upright_by_reading``; the page as it is, not turned): the probe
        # takes that read as its English band instead of reading one again
        pre: tuple[str, float] | None = (str(req.band[0]), float(req.band[1])) if req.band else None

        def read_band(names: list[str], share: float) -> tuple[str, float]:
            nonlocal pre
            if pre is not None and names == ["eng"] and not vertical:
                pre_read, pre = pre, None
                return pre_read
            best: tuple[str, float] | None = None
            for band in [vertical_band(gray, share)] if vertical else probe_bands(gray, share):
                raw, conf, _ = self._ocr(req, models(names), band, layout=False)
                if best is None or band_words(raw) > band_words(best[0]):
                    best = (raw, conf)
                if band_words(raw) >= BAND_MIN_WORDS:  # else the next band (a screenshot read as no words)
                    break
            assert best is not None
            return best

        plan = optional(Stage.LANGUAGE_REREAD, lambda: plan_page(allowed, script, known, read_band),
                        lambda: Plan(choose_languages(allowed, script, known)), degraded)
        if vertical:
            plan.models, plan.vertical = models(plan.models), True
        if plan.language is not None and plan.language != known:
            self._docs.remember(req.doc_tag, plan.language)
        elif plan.language is None and known is None and not lang_pass_is_latin(plan.models):
            self._docs.remember(req.doc_tag, CJK_UNDECIDED)  # (tessplan.CJK_UNDECIDED)
        return plan

    def _vertical(self, allowed: list[str], script: str, gray: Any) -> bool:
        """An upright CJK page (OSD's script) written in columns: Tesseract's layout analysis
        (``vertical_share``, 0.15-0.5 s, CJK pages only) finds most of its lines running top to
        bottom. Read with the horizontal models such a page is junk (a vertical Japanese letter:
        confidence 24)."""
        names = choose_languages(allowed, script)
        if vertical_models(names, self._have) is None:
            return False
        return vertical_share(thread_api(_spec(self.tessdata, names[:1])), gray) >= VERTICAL_SHARE

    def _have(self, model: str) -> bool:
        return (Path(self.tessdata) / f"{model}.traineddata").is_file()

    def _flip_check(
        self, req: PageRequest, langs: list[str], flipped: Any, conf: float,
    ) -> tuple[str, float, PageLayout] | None:
        """The page read upside down, when its probe band reads ``FLIP_MARGIN`` surer that way up
        than the page did; else None (the page stays as read)."""
        _, band_conf, _ = self._ocr(req, langs, probe_band(flipped, FLIP_BAND), layout=False)
        if band_conf < conf + FLIP_MARGIN:
            return None
        return self._ocr(req, langs, flipped)

    def _reread(
        self, req: PageRequest, langs: list[str], gray: Any, degraded: list[Degraded],
    ) -> tuple[str, float, PageLayout] | None:
        """One more Tesseract pass with ``langs`` (optional stage ``language_reread``): None
        when it fails, and the page keeps the read it had."""
        return optional(Stage.LANGUAGE_REREAD, lambda: self._ocr(req, langs, gray), lambda: None, degraded)

    def _threshold_check(
        self, req: PageRequest, langs: list[str], gray: Any,
    ) -> tuple[str, float, PageLayout]:
        """The page read again binarised with Otsu's global threshold instead of Sauvola."""
        api = thread_api(_spec(self.tessdata, langs))
        api.set_variable("thresholding_method", "0")
        try:
            return self._ocr(req, langs, gray)
        finally:
            api.set_variable("thresholding_method", THRESHOLDING_METHOD)

    def _ocr(
        self, req: PageRequest, langs: list[str], gray: Any, layout: bool = True,
    ) -> tuple[str, float, PageLayout]:
        """One Tesseract pass with ``langs`` on this thread's (cached) API: text, mean
        confidence, and the words with their boxes (none with ``layout=False``: a probe)."""
        try:
            api = thread_api(_spec(self.tessdata, langs))
            api.set_image(gray)
            raw = api.text()
            conf = api.mean_conf()
            words = word_layout(api, gray.size) if layout else PageLayout(size=gray.size)
            api.clear()
        except Exception as e:
            discard(_spec(self.tessdata, langs))  # a failed API may be in a bad state: rebuild next time
            raise TransientError(f"tesseract failed on {req.doc_tag} page {req.index + 1}: {e}") from e
        return str(raw), conf, words
