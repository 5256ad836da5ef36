"""The document workers: threads that take document ids from the work queue and process them.

Contract:
- ``Workers(cfg, journal, journal_health, hooks, stop)``; ``start(pipeline, engine)`` starts
  ``count()`` threads (``daemon.workers``, or ``auto``: from the engine's page capacity). Each
  takes the next id whose time has come, claims the document in the journal and runs
  ``Pipeline.process``; the outcome is counted (``metrics.document_finished``), a retry goes back
  into the queue at its time (not once ``stop`` is set), a done or duplicate document wakes the
  hook dispatcher. ``busy_documents()``: the ids in process and their start times.
- Backlogs (issue 34): the queue is the journal's; the work queue in memory holds the next
  ``queue_window()`` ids (``QUEUE_PER_WORKER`` per worker, at least ``QUEUE_MIN``);
  ``sync_queue()`` takes the next ones from the journal (``Journal.queued(limit)``, an index
  range), and a worker does so whenever the queue is down to half the window.
- The journal failing a write (state folder full, I/O error) is a stage error like any other:
  the worker survives, the document is left ``processing``; while the journal cannot be written
  (``journal.health``) no document is started; ``check_journal()`` (every
  ``JOURNAL_CHECK_EVERY`` s) queues those documents again once a test write succeeds. A shared
  journal's ``LeaseLost`` (fencing, ``journal.pgstore``) drops that document; the worker goes on.
- ``making_progress(now)`` is the systemd watchdog's test (page-level: a page, or a document's
  start or end, within the engine's ``hang_timeout`` plus ``drain_timeout``); ``throughput(now)``
  the documents in process and the pages per minute of the last 5 minutes (``STATUS=``).
- ``drain(deadline)`` closes the queue and waits for the threads until ``deadline``; it says
  whether one is still running. ``join(timeout)`` waits again, after the engine was closed.
- Its log lines are the daemon's (logger ``daemon.service.service``).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections import deque

from daemon.config import Config
from daemon.engines.base import Engine
from daemon.journal.health import JournalHealth
from daemon.journal.pgsql import LeaseLost
from daemon.journal.store import Journal
from daemon.service import metrics
from daemon.service.hooks import Dispatcher
from daemon.service.pipeline import Pipeline
from daemon.service.workqueue import WorkQueue

log = logging.getLogger("daemon.service.service")  # the daemon's lines keep one logger name

#: Seconds between checks whether an unwritable journal can be written again (a statvfs and a
#: one-row commit; nothing while it is writable).
JOURNAL_CHECK_EVERY = 2.0
#: Work queue ids per worker, and at least (``Workers.queue_window``): the rest wait in the journal.
QUEUE_PER_WORKER = 8
QUEUE_MIN = 32


class Workers:
    """See the module docstring."""

    def __init__(
        self, cfg: Config, journal: Journal, journal_health: JournalHealth, hooks: Dispatcher, stop: threading.Event,
    ) -> None:
        self.cfg = cfg  # replaced on a reload
        self.journal = journal
        self.journal_health = journal_health
        self.hooks = hooks
        self._stop = stop  # set once the drain starts (``Service``)
        self.pipeline: Pipeline | None = None
        self.engine: Engine | None = None
        self.queue = WorkQueue()
        self._workers: list[threading.Thread] = []
        self._busy: dict[int, float] = {}  # doc id -> start time, for STATUS and drain
        self._busy_lock = threading.Lock()
        self.last_progress = time.monotonic()
        self.done_count = 0
        self.pages_done = 0
        self._recent: deque[tuple[float, int]] = deque(maxlen=10_000)  # (finish time, pages)

    def start(self, pipeline: Pipeline, engine: Engine) -> None:
        self.pipeline, self.engine = pipeline, engine
        for i in range(self.count()):
            t = threading.Thread(target=self._worker, name=f"worker-{i}", daemon=True)
            t.start()
            self._workers.append(t)

    def count(self) -> int:
        """Documents in flight. ``auto`` (0): enough that one-page files alone keep the engine
        full -- half its page capacity (measured on the H200: the vLLM engine needs ~256 pages
        in flight; 4 workers starved it) -- and at least 4 so a big PDF never blocks the rest."""
        n = self.cfg.daemon.workers
        assert self.engine is not None
        return n if n > 0 else max(4, self.engine.max_in_flight // 2)

    def queue_window(self) -> int:
        """Ids the work queue holds at most (``QUEUE_PER_WORKER`` per worker): the backlog stays in
        the journal, which gives the next ones (``Journal.queued``, an index range) as they go."""
        return max(QUEUE_MIN, QUEUE_PER_WORKER * max(1, len(self._workers)))

    def sync_queue(self) -> None:
        """Queue the next rows the journal holds as queued (admitted, after a crash, a requeue, a
        retry), up to ``queue_window``."""
        room = self.queue_window() - self.queue.due()
        if room <= 0:
            return
        with self._busy_lock:
            busy = set(self._busy)
        for doc_id, not_before in self.journal.queued(limit=room + len(busy)):
            if doc_id not in busy:
                self.queue.put(doc_id, not_before)

    def _worker(self) -> None:
        assert self.pipeline is not None
        while True:
            if self.queue.due() <= self.queue_window() // 2 and not self._stop.is_set():
                with contextlib.suppress(sqlite3.Error):  # the journal's health has it; the next sync takes them
                    self.sync_queue()  # the next ones from the journal's queue
            doc_id = self.queue.get()
            if doc_id is None:
                return
            while not self.journal_health.wait(1.0):  # start nothing the journal cannot record
                if self._stop.is_set():
                    return  # still queued in the journal: the next start takes it
            with self._busy_lock:  # busy before the claim: check_journal never re-queues it under us
                self._busy[doc_id] = time.monotonic()
            try:
                doc = self.journal.claim(doc_id)
                if doc is None:
                    continue
                outcome = self.pipeline.process(doc)
            except LeaseLost as e:  # a shared journal: paused past its lease, taken over (pgstore.py)
                log.warning("%s", e)
                metrics.document_finished(doc_id, "taken_over")
                continue
            except Exception as e:  # process() raises only when the journal itself failed
                self._stranded(doc_id, e)
                continue
            finally:
                with self._busy_lock:
                    self._busy.pop(doc_id, None)
            metrics.document_finished(doc_id, outcome.state, outcome.reason)
            self.last_progress = time.monotonic()
            if outcome.state == "retry":
                if not self._stop.is_set():
                    self.queue.put(doc_id, time.time() + outcome.retry_in)
            else:
                if outcome.state in ("done", "duplicate"):
                    self.hooks.wake()
                self.done_count += 1
                self.pages_done += outcome.pages
                with self._busy_lock:
                    self._recent.append((time.monotonic(), outcome.pages))

    def _stranded(self, doc_id: int, e: Exception) -> None:
        """A document cut off by a journal error: left ``processing`` in the journal, it is queued
        again by ``check_journal`` once the journal can be written."""
        log.error("doc-%d: cut off by a journal error (%s: %s); queued again once the journal can be written",
                  doc_id, type(e).__name__, e)
        metrics.document_finished(doc_id, "retry", str(e))
        self.journal_health.failed(e)  # checked by a real write before anything starts again

    def check_journal(self) -> None:
        """While the journal cannot be written: once it can (``JournalHealth.probe``), queue the
        documents a failed write left ``processing`` (no worker holds them) and go on."""
        if self.journal_health.writable or not self.journal_health.probe():
            return
        try:
            with self._busy_lock:  # no worker claims between the snapshot and the update
                n = self.journal.recover(keep=set(self._busy), not_before=time.time() + self.cfg.daemon.retry_backoff)
        except sqlite3.Error:
            return  # unwritable again (the health has it): tried at the next check
        if n:
            log.info("queued again %d document(s) a journal error had cut off", n)
        self.sync_queue()

    def busy_documents(self) -> dict[int, float]:
        """Documents being processed: id -> monotonic start time (a copy)."""
        with self._busy_lock:
            return dict(self._busy)

    def making_progress(self, now: float) -> bool:
        """Healthy = nothing in flight, or a *page* finished (or a document started or ended)
        within the engine's ``hang_timeout`` (plus ``drain_timeout``: a drain may hold pages that
        long). Page-level, so a 300-page document keeps the watchdog fed while pages complete,
        and a stalled engine stops it: systemd then restarts the daemon, and the document resumes
        from its recorded pages."""
        with self._busy_lock:
            if not self._busy:
                return True
            latest_start = max(self._busy.values())
        assert self.engine is not None
        ref = max(self.last_progress, self.engine.last_progress, latest_start)
        return now - ref < self.engine.hang_timeout + self.cfg.daemon.drain_timeout

    def throughput(self, now: float) -> tuple[int, float]:
        """Documents in process, and pages per minute over the last 5 minutes (at least 1)."""
        with self._busy_lock:
            busy = len(self._busy)
            last = [(t, p) for t, p in self._recent if now - t <= 300]
        span = max(60.0, now - min((t for t, _ in last), default=now))
        return busy, sum(p for _, p in last) / span * 60 if last else 0.0

    def drain(self, deadline: float) -> bool:
        """No more ids; the threads waited for until ``deadline``: whether one still runs."""
        self.queue.close()
        for t in self._workers:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        return any(t.is_alive() for t in self._workers)

    def join(self, timeout: float) -> list[int]:
        """The threads waited for (each up to ``timeout``): the documents still unfinished."""
        for t in self._workers:
            t.join(timeout=timeout)
        with self._busy_lock:
            return list(self._busy)
