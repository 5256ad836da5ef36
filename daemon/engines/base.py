"""The OCR engine interface every engine implements.

Contract (all engines):

- **Lifecycle.** ``start()`` loads the model / checks the binary; it may take minutes (vLLM) and
  raises ``FatalError(exit_code=ExitCode.ENGINE)`` if the engine can never work (missing model
  folder, no tessdata). ``close()`` stops it; pending futures then fail with ``EngineDeadError``.
  ``close(drain_timeout)`` first lets in-flight pages finish for up to that many seconds.
- **Submission.** ``submit(request)`` hands over *one page* and returns a
  ``concurrent.futures.Future[PageText]`` at once. It is thread-safe and may be called from any
  number of document workers concurrently; pages of different documents are batched together
  by the engine as it sees fit (continuous batching for vLLM, a thread pool for Tesseract).
  ``submit`` blocks only for back-pressure, while the engine already holds ``max_in_flight``
  pages, so memory stays bounded.
- **Ordering.** Futures complete in any order; callers reassemble pages by ``PageRequest.index``.
  ``priority`` is a hint: lower runs earlier (the pipeline passes the page index, so the first
  pages of a small document overtake page 200 of a big one).
- **Errors.** A future fails with ``InputError`` when this page can never be read (the document
  goes to the failed folder), with ``TransientError`` when a retry may work (the pipeline retries
  the document later), and with ``EngineDeadError`` when the engine itself died; the engine then
  restarts itself if it can (``healthy()`` reports whether it is usable now).
- **Threads.** Results are produced on engine-owned threads; callbacks attached to futures must
  be quick. No engine calls back into the pipeline.
- **Progress.** ``last_progress`` is the ``time.monotonic()`` at which the engine last finished a
  page with a result (0.0 before its first); ``hang_timeout`` is how many seconds the engine may
  hold pages without finishing one before it counts as stalled. The service's systemd watchdog
  pings only while pages keep finishing (a 300-page document finishes no *document* for a long
  time, but a page every few seconds). Engines keep it with ``track(future)`` on every future
  ``submit`` returns (``InFlight(limit, on_done=self.page_done)`` does it for them); the
  bookkeeping lives here so every engine gets it alike.
"""

from __future__ import annotations

import abc
import concurrent.futures as cf
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image

from daemon.models import PageText


@dataclass
class PageRequest:
    """One page to recognise."""

    doc_tag: str  # "doc-12": for log lines
    index: int  # page index inside its document
    image: Image.Image  # RGB, upright, already at the engine's target size
    priority: int = 0  # lower = sooner
    languages: list[str] | None = None  # ISO 639-1 hint (Tesseract uses it; VLMs ignore it)
    # What the render stage found out about the page (``daemon.pagerecord.ImagePage``), so the
    # Tesseract engine need not find it again (VLMs ignore both): the OSD script ("Latin", "Han",
    # ...; "" when unknown) and the read-first check's English band (text, mean confidence).
    script: str = ""
    band: tuple[str, float] | None = None


class Engine(abc.ABC):
    """Base class of OCR engines. See the module docstring for the contract."""

    #: Short name written to sidecars ("tesseract", "vllm:lightonai/LightOnOCR-2-1B", ...).
    name: str = "engine"
    #: Whether page text is Markdown (VLM) or plain text (Tesseract).
    output_is_markdown: bool = False
    #: Back-pressure bound: how many pages may be submitted and unfinished at once.
    max_in_flight: int = 8
    #: Whether ``PageText.layout`` carries the recognised words with their boxes (Tesseract);
    #: otherwise the pipeline finds line boxes for the searchable PDF itself.
    word_boxes: bool = False
    #: Seconds with pages in flight and none finished after which the engine counts as stalled
    #: (the watchdog stops pinging). Engines with their own setting overwrite it in ``__init__``.
    hang_timeout: float = 300.0
    #: ``time.monotonic()`` of the last page finished with a result; 0.0 before the first. Set
    #: only by ``page_done`` (class default until then, so subclasses need no ``super().__init__``).
    last_progress: float = 0.0

    def page_done(self, fut: cf.Future[PageText]) -> None:
        """Done callback of every page future: a page that came back with text is progress; a
        failed or cancelled one is not (a dead engine fails its pages quickly)."""
        if not fut.cancelled() and fut.exception() is None:
            self.last_progress = time.monotonic()

    def track(self, fut: cf.Future[PageText]) -> cf.Future[PageText]:
        """Keep ``last_progress`` for ``fut`` (call on each future ``submit`` returns)."""
        fut.add_done_callback(self.page_done)
        return fut

    @abc.abstractmethod
    def start(self) -> None:
        """Load the engine. Idempotent."""

    @abc.abstractmethod
    def submit(self, request: PageRequest) -> cf.Future[PageText]:
        """Queue one page; see the contract above."""

    @abc.abstractmethod
    def close(self, drain_timeout: float = 0.0) -> None:
        """Stop; after ``drain_timeout`` seconds pending futures fail with ``EngineDeadError``."""

    def healthy(self) -> bool:
        """True while the engine can take pages."""
        return True

    def recognize(self, requests: list[PageRequest], timeout: float | None = None) -> list[PageText]:
        """Convenience: submit a batch and wait for all of it, results in request order."""
        futures = [self.submit(r) for r in requests]
        return [f.result(timeout=timeout) for f in futures]

    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InFlight:
    """An engine's unfinished page futures, at most ``limit`` of them: ``submit``'s back-pressure.

    ``add(make)`` blocks while ``limit`` futures are unfinished, then calls ``make()`` for the
    page's future and tracks it until it completes in any way (result, exception, cancel). If
    ``make`` raises, the slot is given back and the exception propagates. ``snapshot()`` lists the
    unfinished futures (for draining at close). ``on_done`` (e.g. ``Engine.page_done``) is called
    with each future as it completes. Thread-safe.
    """

    def __init__(self, limit: int, on_done: Callable[[cf.Future[PageText]], None] | None = None) -> None:
        self._on_done = on_done
        self._sem = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._futures: set[cf.Future[PageText]] = set()

    def add(self, make: Callable[[], cf.Future[PageText]]) -> cf.Future[PageText]:
        self._sem.acquire()
        try:
            fut = make()
        except BaseException:
            self._sem.release()
            raise
        with self._lock:
            self._futures.add(fut)
        fut.add_done_callback(self._done)  # runs at once if fut is already done
        return fut

    def _done(self, fut: cf.Future[PageText]) -> None:
        with self._lock:
            self._futures.discard(fut)
        self._sem.release()
        if self._on_done is not None:
            self._on_done(fut)

    def snapshot(self) -> list[cf.Future[PageText]]:
        with self._lock:
            return list(self._futures)
