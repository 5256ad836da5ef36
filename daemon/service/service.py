"""The long-running daemon: watchers, stability tracker, work queue, document workers.

Contract:
- ``Service.run()`` blocks until SIGTERM/SIGINT (or ``request_stop()``), then drains: stops taking
  new files, lets in-flight documents finish for up to ``daemon.drain_timeout`` seconds, and
  leaves anything unfinished ``queued`` in the journal for the next start. Returns an exit code
  (0 after a stop). The drain's end is fixed when the stop is asked for; a shared journal's reads
  stop waiting for an unreachable database then, so a stop with the database down is bounded too
  (its documents stay claimed: this state folder's next start or, after the lease, another daemon
  takes them).
- A shared journal's ``LeaseLost`` (this daemon was paused past its lease and the document taken
  over: fencing, ``journal.pgstore``) drops that document in its worker, which goes on.
- Start order: state lock -> journal checked (``journal.guard.open_state``: damaged -> exit 4,
  lost -> rebuilt from the outputs) -> journal recovery (crash leftovers re-queued) -> engine ->
  observers -> initial scan -> ``READY=1``. Events arriving during the scan are not lost: the
  observers start first. A second daemon on the same state folder exits 5 before touching it.
- The journal failing a write (state folder full, I/O error) is a stage error like any other:
  the document's worker survives, the document is left ``processing``; while the journal
  cannot be written (``journal.health``) no new document is started and ``/healthz/ready`` says
  why; once a test write succeeds (checked every ``JOURNAL_CHECK_EVERY`` s) the documents left
  ``processing`` are queued again and work resumes by itself.
- The journal is backed up online every ``daemon.journal_backup_interval`` s (``journal.backup``);
  every ``daemon.maintenance_interval`` s retention runs (``journal.retention``: raw/ pruned, rows
  compacted, vacuum, the state folder's size for ``status``).
- Backlogs (issue 34): the queue is the journal's; the work queue in memory holds the next
  ``queue_window`` ids (``QUEUE_PER_WORKER`` per worker) and workers take the next ones from the
  journal as it empties (``Journal.queued(limit)``); the stability tracker tracks at most
  ``TRACK_MAX`` files and asks for a rescan once it has room (``intake.stability``), so a
  100,000-file drop costs memory for a few thousand.
- A file that cannot be read (permission denied) is tried at ``daemon.max_attempts`` scans, then
  moved to the failed folder with the reason (``intake.unreadable``).
- SIGHUP reloads ``rules.yaml``; an invalid new file is reported and the old config is kept.
  Engine settings need a restart (logged); inboxes, doctypes and routes apply at once.
- Threads: signal handlers only set events; the main thread does reload/stop. Watch callbacks
  only enqueue; the stability thread admits into the journal (or, for an inbox that splits
  scanner batches, hands PDFs and TIFFs to the batch splitter's thread: daemon.intake.batch);
  ``workers`` threads process; ``hooks.Dispatcher``'s threads deliver ``on_done`` hooks (started
  after the journal recovery, stopped after the drain).

Over ~500 lines (604; the work queue itself is workqueue.py): the workers' loop and what it does when the journal fails under it belong
with the lifecycle; the journal's own checks live in ``daemon.journal`` (guard, health, backup).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sqlite3
import threading
import time
from collections import deque
from datetime import datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from daemon.config import Config, filesystem_problems, load_config, template_root
from daemon.config.restart import restart_changes
from daemon.engines import create_engine
from daemon.engines.base import Engine
from daemon.errors import ConfigError, ExitCode, FatalError, OcrDaemonError
from daemon.fsio import is_within
from daemon.intake import batch, contentcheck
from daemon.intake.stability import StabilityTracker
from daemon.intake.unreadable import ReadFailures
from daemon.intake.watch import InboxWatcher
from daemon.journal import backup, retention
from daemon.journal.guard import open_state, write_marker
from daemon.journal.health import JournalHealth
from daemon.journal.pgsql import LeaseLost
from daemon.journal.store import AdmitAction
from daemon.models import Candidate
from daemon.names import for_log
from daemon.service import metrics
from daemon.service.hooks import Dispatcher
from daemon.service.http import HttpEndpoint, start_http
from daemon.service.pipeline import Pipeline
from daemon.service.sdnotify import notify, watchdog_interval
from daemon.service.workqueue import WorkQueue

log = logging.getLogger(__name__)

#: Seconds between checks whether an unwritable journal can be written again (a statvfs and a
#: one-row commit; nothing while it is writable).
JOURNAL_CHECK_EVERY = 2.0
#: Seconds between checks that the state lock file is still the one held (guard.StateLock.check).
LOCK_CHECK_EVERY = 5.0
#: Scheduler jobs that follow the inboxes (replaced on reload); the journal's own jobs stay.
WATCH_JOBS = ("rescan", "cron-")
#: Work queue ids per worker, and at least (``Service.queue_window``): the rest wait in the journal.
QUEUE_PER_WORKER = 8
QUEUE_MIN = 32


def archive_roots(cfg: Config) -> list[Path]:
    """Fixed folders that archive templates write into, never taken as input. A root that is an
    inbox itself or holds one (e.g. ``{inbox}-archive`` has the config folder as its root) is
    left out: excluding it would hide the inbox; archived paths are still skipped one by one."""
    roots = []
    inboxes = [os.path.abspath(i.path) for i in cfg.inboxes]
    for r in cfg.routes:
        if r.source == "archive" and r.archive_to:
            root = os.path.abspath(template_root(r.archive_to))
            if not any(is_within(ib, root) for ib in inboxes):
                roots.append(Path(root))
    return roots


class Service:
    def __init__(self, cfg: Config, *, config_path: Path | None = None, engine_override: str | None = None) -> None:
        self.cfg = cfg
        self.config_path = config_path
        self.engine_override = engine_override
        # the lock first: nothing (recovery included) touches a journal another daemon uses
        self.journal, self.state_lock = open_state(cfg)
        self.journal_health = JournalHealth(self.journal)
        self.read_failures = ReadFailures()
        self.engine: Engine = create_engine(cfg, engine_override)
        self.pipeline: Pipeline | None = None
        self.batches: batch.Splitter | None = None  # scanner batches, for inboxes that split them
        self.queue = WorkQueue()
        self.tracker = StabilityTracker(
            self._on_stable, self._content_check, self._delay_for, grace_for=self._grace_for, skip=self._skip_known,
            on_room=self._tracker_has_room,
        )
        self.watcher: InboxWatcher | None = None
        self.scheduler = BackgroundScheduler(daemon=True)
        self._stop = threading.Event()
        self._reload = threading.Event()
        self._stop_at: float | None = None  # monotonic end of the drain, once a stop was asked for
        self._workers: list[threading.Thread] = []
        self._busy: dict[int, float] = {}  # doc id -> start time, for STATUS and drain
        self._busy_lock = threading.Lock()
        self.last_progress = time.monotonic()
        self.done_count = 0
        self.pages_done = 0
        self._recent: deque[tuple[float, int]] = deque(maxlen=10_000)  # (finish time, pages)
        self._started = time.monotonic()
        self.http: HttpEndpoint | None = None  # daemon.http: health, metrics, status page
        self.hooks = Dispatcher(self.journal)  # routes[].on_done deliveries

    # -- callbacks ------------------------------------------------------------------------------

    def _delay_for(self, inbox: str) -> float:
        ib = self.cfg.inbox(inbox)
        return ib.stability_delay if ib else 2.0

    def _grace_for(self, inbox: str) -> float:
        ib = self.cfg.inbox(inbox)
        return ib.invalid_grace if ib else 30.0

    def _content_check(self, path: Path, inbox: str) -> str | None:
        ib = self.cfg.inbox(inbox)
        return contentcheck.check(path, (ib.max_file_mb if ib else 2048) << 20)

    def _skip_known(self, path: Path, st: Any) -> bool:
        """Cheap pre-check: skip files the journal already has with this size+mtime."""
        row = self.journal.find(path)
        return bool(row and row.path == path and row.size == st.st_size and row.mtime == st.st_mtime)

    def _on_stable(self, cand: Candidate, probe_error: str | None) -> None:
        metrics.observe_stage("stability_wait", time.monotonic() - cand.seen)
        if isinstance(probe_error, contentcheck.Refused):  # too big: failed unread, never hashed
            self._fail_unreadable(cand, str(probe_error))
            return
        if probe_error is None and self.batches is not None and self.batches.wants(cand.path, cand.inbox):
            self.batches.submit(cand, self._admit)  # its parts come back through the watcher
            return
        self._admit(cand)

    def _admit(self, cand: Candidate) -> None:
        try:
            adm = self.journal.admit(cand.path, cand.inbox, duplicates=self.cfg.daemon.duplicates)
        except FileNotFoundError:
            return
        except OSError as e:
            tries, limit = self.read_failures.add(cand.path), self.cfg.daemon.max_attempts
            if tries < limit:
                log.warning("cannot read %s: %s (try %d of %d; tried again at the next scan)", for_log(cand.path.name),
                            e.strerror, tries, limit)
            else:
                self._fail_unreadable(cand, f"cannot read the file: {e.strerror} (tried {tries} times)")
            return
        except sqlite3.Error as e:  # journal health has it; the next scan offers the file again
            log.warning("cannot admit %s now: journal error: %s", for_log(cand.path.name), e)
            return
        self.read_failures.forget(cand.path)
        if adm.action in (AdmitAction.QUEUED, AdmitAction.DUPLICATE) and adm.document is not None:
            d = adm.document
            extra = f" (duplicate of doc-{adm.duplicate_of})" if adm.duplicate_of else ""
            log.info("%s queued %s from inbox %r%s", d.tag, for_log(cand.path.name), cand.inbox, extra)
            if self.queue.due() < self.queue_window():  # else it waits in the journal (_sync_queue)
                self.queue.put(d.id)

    def _fail_unreadable(self, cand: Candidate, reason: str) -> None:
        """A file unread after ``max_attempts`` tries: to the failed folder with ``reason``."""
        try:
            doc = self.journal.admit_unreadable(cand.path, cand.inbox, reason)
            final = self.pipeline.sources.fail(doc, cand.path, reason) if self.pipeline else cand.path
            self.journal.fail(doc.id, reason, final)
        except (OSError, sqlite3.Error) as e:
            log.warning("cannot fail the unreadable %s now: %s", for_log(cand.path.name), e)
            return
        self.read_failures.forget(cand.path)
        metrics.document_finished(doc.id, "failed", reason)
        log.warning("%s failed: %s: %s; now at %s", doc.tag, for_log(cand.path), for_log(reason), for_log(str(final)))

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        problems = filesystem_problems(self.cfg)
        if problems:
            raise ConfigError(problems)
        self.http = start_http(self)  # first: /healthz/ready answers 503 while the rest starts
        recovered = self.journal.recover()
        if recovered:
            log.info("re-queued %d document(s) left in processing by an unclean stop", recovered)
        self.hooks.start()  # resumes deliveries a stop or crash left pending
        self._start_engine()
        self.pipeline = Pipeline(self.cfg, self.journal, self.engine)
        self.pipeline.warm()
        self.batches = batch.Splitter(self.cfg, self.pipeline.pool)
        if self.batches.recover():
            log.info("finished scanner batch split(s) an unclean stop interrupted")
        self.journal_health.check_space()  # too little room: not ready until probe() finds it (_check_journal)
        for i in range(self.worker_count()):
            t = threading.Thread(target=self._worker, name=f"worker-{i}", daemon=True)
            t.start()
            self._workers.append(t)
        self._start_heartbeat()
        self.tracker.start()
        self._start_watching()
        self._sync_queue()
        n = self.watcher.scan() if self.watcher else 0
        log.info("initial scan: %d file(s) seen in %d inbox(es)", n, len(self.cfg.inboxes))
        self.scheduler.add_job(self._check_journal, "interval", seconds=JOURNAL_CHECK_EVERY, id="journal-check",
                               max_instances=1, coalesce=True)
        self.scheduler.add_job(self._check_state_lock, "interval", seconds=LOCK_CHECK_EVERY, id="lock-check",
                               max_instances=1, coalesce=True)
        self._schedule_backups()
        self._schedule_retention()
        self.scheduler.start()
        notify("READY=1")
        self._status()

    def _check_state_lock(self) -> None:
        """The state lock file still the one held (``StateLock.check``); else taken again, or,
        when that fails, the daemon stops taking work (a clean stop) and says why."""
        try:
            msg = self.state_lock.check()
        except FatalError as e:
            log.error("%s", e)
            self.request_stop()
            return
        if msg:
            log.warning("%s", msg)

    def worker_count(self) -> int:
        """Documents in flight. ``auto`` (0): enough that one-page files alone keep the engine
        full -- half its page capacity (measured on the H200: the vLLM engine needs ~256 pages
        in flight; 4 workers starved it) -- and at least 4 so a big PDF never blocks the rest."""
        n = self.cfg.daemon.workers
        return n if n > 0 else max(4, self.engine.max_in_flight // 2)

    def _start_engine(self) -> None:
        done = threading.Event()

        def extend() -> None:  # a model load can take minutes: keep systemd's start timeout away
            while not done.wait(20):
                notify("EXTEND_TIMEOUT_USEC=60000000")

        t = threading.Thread(target=extend, name="extend-timeout", daemon=True)
        t.start()
        try:
            self.engine.start()
        except OcrDaemonError:
            raise
        except Exception as e:
            raise FatalError(f"the {self.engine.name} engine failed to start: {e}", ExitCode.ENGINE) from e
        finally:
            done.set()

    def _start_watching(self) -> None:
        cfg = self.cfg
        excluded = [cfg.daemon.failed_dir, cfg.daemon.state_dir, *archive_roots(cfg), *batch.archive_roots(cfg)]
        self.watcher = InboxWatcher(
            cfg.inboxes,
            self.tracker.notice,
            excluded_dirs=excluded,
            is_output=self.pipeline.is_output if self.pipeline else None,
            is_output_name=self.pipeline.is_output if self.pipeline else None,
            known=self.journal.known_under,  # a rescan skips kept files done already: one lookup per folder
            outputs_among=self.pipeline.outputs_among if self.pipeline else None,
        )
        self.watcher.start()
        for job in self.scheduler.get_jobs():
            if job.id.startswith(WATCH_JOBS):
                job.remove()
        self.scheduler.add_job(self._rescan, "interval", seconds=cfg.daemon.rescan_interval, id="rescan", max_instances=1, coalesce=True)
        for ib in cfg.inboxes:
            if ib.schedule:
                self.scheduler.add_job(
                    self._scan_inbox, CronTrigger.from_crontab(ib.schedule), args=[ib.name], id=f"cron-{ib.name}", max_instances=1, coalesce=True
                )

    def _rescan(self) -> None:
        if self.watcher is not None:
            self.watcher.scan()
        self._sync_queue()
        self._status()

    def _tracker_has_room(self) -> None:
        """The stability tracker dropped notices for want of room and has room again (a big drop:
        back-pressure, ``intake.stability``): rescan, on a thread of its own (scans never overlap)."""
        if self.watcher is not None and not self._stop.is_set():
            threading.Thread(target=self.watcher.scan, name="room-rescan", daemon=True).start()

    def _scan_inbox(self, name: str) -> None:
        ib = self.cfg.inbox(name)
        if ib is not None and self.watcher is not None:
            n = self.watcher.scan(ib)
            log.info("scheduled scan of inbox %r: %d file(s)", name, n)

    def queue_window(self) -> int:
        """Ids the work queue holds at most (``QUEUE_PER_WORKER`` per worker): the backlog stays in
        the journal, which gives the next ones (``Journal.queued``, an index range) as they go."""
        return max(QUEUE_MIN, QUEUE_PER_WORKER * max(1, len(self._workers)))

    def _sync_queue(self) -> None:
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
                    self._sync_queue()  # the next ones from the journal's queue
            doc_id = self.queue.get()
            if doc_id is None:
                return
            while not self.journal_health.wait(1.0):  # start nothing the journal cannot record
                if self._stop.is_set():
                    return  # still queued in the journal: the next start takes it
            with self._busy_lock:  # busy before the claim: _check_journal never re-queues it under us
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
        again by ``_check_journal`` once the journal can be written."""
        log.error("doc-%d: cut off by a journal error (%s: %s); queued again once the journal can be written",
                  doc_id, type(e).__name__, e)
        metrics.document_finished(doc_id, "retry", str(e))
        self.journal_health.failed(e)  # checked by a real write before anything starts again

    def _check_journal(self) -> None:
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
        self._sync_queue()

    def _start_heartbeat(self) -> None:
        """A shared journal (``daemon.journal_url``, pgstore.py): renew this daemon's leases, show
        it in ``status``, and queue what other daemons admitted or lost, every second."""
        start = getattr(self.journal, "start_heartbeat", None)
        if start is not None:
            start(lambda: (self.pages_done, metrics.METRICS.rate(60)), lambda _ids: self._sync_queue())

    def _schedule_backups(self) -> None:
        if getattr(self.journal, "shared", False):
            return  # the server's journal is backed up by its server (docs/scaling.md)
        d, folder = self.cfg.daemon, self.journal.state_dir / backup.BACKUP_DIR
        if d.journal_backup_interval > 0:
            self.scheduler.add_job(
                backup.scheduled, "interval", seconds=d.journal_backup_interval, id="journal-backup",
                args=[self.journal.path, folder, d.journal_backup_keep, self.journal_health],
                next_run_time=backup.first_due(folder, d.journal_backup_interval), max_instances=1, coalesce=True,
            )

    def _schedule_retention(self) -> None:
        """``daemon.maintenance_interval``: raw/ pruned, rows compacted, the journal vacuumed, the
        state folder's size recorded (``journal.retention``); the first run a minute after start."""
        d = self.cfg.daemon
        if d.maintenance_interval > 0:
            self.scheduler.add_job(
                lambda: retention.run(self.cfg, self.journal), "interval", seconds=d.maintenance_interval, id="retention",
                next_run_time=datetime.now() + timedelta(seconds=min(60.0, d.maintenance_interval)),
                max_instances=1, coalesce=True,
            )

    def state_problems(self) -> list[str]:
        """Why the daemon's own state keeps it from taking work (``/healthz/ready``); [] if it does not."""
        p = self.journal_health.problem()
        return [p] if p else []

    def busy_documents(self) -> dict[int, float]:
        """Documents being processed: id -> monotonic start time (a copy)."""
        with self._busy_lock:
            return dict(self._busy)

    def stopping(self) -> bool:
        """True once SIGTERM/SIGINT (or ``request_stop``) started the drain."""
        return self._stop.is_set()

    def status_line(self) -> str:
        """Queue depth and throughput, as shown by ``systemctl status`` (sd_notify STATUS=)."""
        counts = self.journal.counts()
        now = time.monotonic()
        with self._busy_lock:
            busy = len(self._busy)
            last = [(t, p) for t, p in self._recent if now - t <= 300]
        span = max(60.0, now - min((t for t, _ in last), default=now))
        rate = sum(p for _, p in last) / span * 60 if last else 0.0
        line = (
            f"{counts.get('queued', 0)} queued, {busy} processing, {self.tracker.pending()} settling; "
            f"{counts.get('done', 0)} done, {counts.get('failed', 0)} failed; {rate:.1f} pages/min (5 min)"
        )
        # Documents in progress, in short (systemctl shows one line): the two furthest from done.
        progress = sorted(self.journal.progress(), key=lambda p: -((p.pages_total or 0) - p.pages_done))
        if progress:
            line += "; " + ", ".join(p.short() for p in progress[:2]) + (f" +{len(progress) - 2}" if len(progress) > 2 else "")
        return line

    def _status(self) -> None:
        notify(f"STATUS={self.status_line()}")

    # -- main loop --------------------------------------------------------------------------------

    def request_stop(self) -> None:
        self._begin_stop()

    def _signal(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGHUP:
            self._reload.set()
        else:
            self._begin_stop()

    def _begin_stop(self) -> None:
        """The drain starts now and ends ``drain_timeout`` later; a shared journal's reads stop
        waiting for an unreachable server then, so a stop while the database is down is bounded too."""
        if self._stop_at is None:
            self._stop_at = time.monotonic() + self.cfg.daemon.drain_timeout
            give_up = getattr(self.journal, "give_up_waits", None)
            if give_up is not None:
                give_up(self._stop_at)
        self._stop.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self._signal)
        signal.signal(signal.SIGINT, self._signal)
        signal.signal(signal.SIGHUP, self._signal)

    def run(self) -> int:
        self.start()
        wd = watchdog_interval()
        last_status = 0.0
        while not self._stop.wait(1.0 if wd is None else min(1.0, wd)):
            if self._reload.is_set():
                self._reload.clear()
                self.reload()
            now = time.monotonic()
            if wd is not None and self._making_progress(now):
                notify("WATCHDOG=1")
            if now - last_status > 5:
                with contextlib.suppress(sqlite3.Error):  # a shared journal's server away: next time
                    self._status()
                last_status = now
        self.shutdown()
        return ExitCode.OK

    def _making_progress(self, now: float) -> bool:
        """Healthy = nothing in flight, or a *page* finished (or a document started or ended)
        within the engine's ``hang_timeout`` (plus ``drain_timeout``: a drain may hold pages that
        long). Page-level, so a 300-page document keeps the watchdog fed while pages complete,
        and a stalled engine stops it: systemd then restarts the daemon, and the document resumes
        from its recorded pages."""
        with self._busy_lock:
            if not self._busy:
                return True
            latest_start = max(self._busy.values())
        ref = max(self.last_progress, self.engine.last_progress, latest_start)
        return now - ref < self.engine.hang_timeout + self.cfg.daemon.drain_timeout

    def reload(self) -> None:
        if self.config_path is None:
            return
        try:
            new = load_config(self.config_path)
        except ConfigError as e:
            log.error("reload: %s is invalid, keeping the running config:\n%s", self.config_path, "\n".join(e.problems))
            return
        problems = filesystem_problems(new)
        if problems:
            log.error("reload: %s is not usable, keeping the running config:\n%s", self.config_path, "\n".join(problems))
            return
        not_applied = restart_changes(self.cfg, new)  # daemon/config/restart.py: read only at start
        if not_applied:
            log.warning("reload: not applied until a restart (systemctl restart ocr-daemon): %s changed",
                        ", ".join(not_applied))
        notify("RELOADING=1")
        self.cfg = new
        if self.pipeline is not None:
            self.pipeline.cfg = new
        if self.batches is not None:
            self.batches.cfg = new
        if self.watcher is not None:
            self.watcher.stop()
        self._start_watching()
        if self.scheduler.get_job("journal-backup") is not None:
            self.scheduler.remove_job("journal-backup")
        self._schedule_backups()  # a new interval or number kept applies at once
        n = self.watcher.scan() if self.watcher else 0
        log.info("reloaded %s: %d inbox(es), %d route(s); %d file(s) seen", self.config_path, len(new.inboxes), len(new.routes), n)
        notify("READY=1")

    def shutdown(self) -> None:
        notify("STOPPING=1")
        log.info("stopping: no new files; draining in-flight documents (up to %.0fs)", self.cfg.daemon.drain_timeout)
        if self.watcher is not None:
            self.watcher.stop()
        self.tracker.stop()
        if self.batches is not None:
            self.batches.close()  # a split cut short is finished or redone at the next start
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        self.queue.close()
        deadline = self._stop_at or time.monotonic() + self.cfg.daemon.drain_timeout
        for t in self._workers:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.pipeline is not None and any(t.is_alive() for t in self._workers):
            # the deadline passed: a render worker busy with one file (a huge PDF MuPDF repairs)
            # must not hold the stop; its document resumes at the next start
            self.pipeline.close(kill=True)
        # Whatever is still running fails its pages with EngineDeadError -> retried next start.
        self.engine.close(drain_timeout=0.0)
        for t in self._workers:
            t.join(timeout=10)
        with self._busy_lock:
            left = list(self._busy)
        if left:
            log.warning("stopped with %d document(s) unfinished; they resume at the next start", len(left))
        self.hooks.stop()  # tries still running after its grace stay pending for the next start
        stop_heartbeat = getattr(self.journal, "stop_heartbeat", None)
        if stop_heartbeat is not None:
            stop_heartbeat()
        try:
            self.journal.recover()  # anything still marked processing goes back to queued
            write_marker(self.journal)
        except sqlite3.Error as e:  # the next start's recovery does it
            log.warning("cannot re-queue unfinished documents now (%s); the next start does", e)
        if self.pipeline is not None:
            self.pipeline.close()
        if self.http is not None:
            self.http.close()
        self.state_lock.release()
        log.info("stopped")
