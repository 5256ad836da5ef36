"""The long-running daemon's lifecycle: start, the main loop (watchdog, status, reload), the stop.

Contract:
- ``Service.run()`` blocks until SIGTERM/SIGINT (or ``request_stop()``), then drains: stops taking
  new files, lets in-flight documents finish for up to ``daemon.drain_timeout`` seconds, and
  leaves anything unfinished ``queued`` in the journal for the next start. Returns an exit code
  (0 after a stop). The drain's end is fixed when the stop is asked for; a shared journal's reads
  stop waiting for an unreachable database then, so a stop with the database down is bounded too
  (its documents stay claimed: this state folder's next start or, after the lease, another daemon
  takes them).
- The parts it runs: ``intake.Intake`` (watchers, stability tracker, admission, scanner batches),
  ``workers.Workers`` (the work queue window and the document workers, the journal's recovery
  after a failed write), ``pipeline.Pipeline`` (one document), ``hooks.Dispatcher`` (``on_done``
  deliveries) and the HTTP endpoint (``daemon.http``). ``/healthz/ready``, ``/metrics`` and
  ``/status`` read ``cfg``, ``journal``, ``engine``, ``pipeline``, ``scheduler``, ``intake``,
  ``workers``, ``stopping()`` and ``state_problems()``.
- Start order: state lock -> journal checked (``journal.guard.open_state``: damaged -> exit 4,
  lost -> rebuilt from the outputs) -> HTTP endpoint (not ready yet) -> journal recovery (crash
  leftovers re-queued) -> hook deliveries -> engine -> pipeline and its render workers ->
  batch splitter -> document workers -> observers -> initial scan -> ``READY=1``. Events
  arriving during the scan are not lost: the observers start first. A second daemon on the same
  state folder exits 5 before touching it.
- While the journal cannot be written (``journal.health``) no new document is started and
  ``/healthz/ready`` says why; ``Workers.check_journal`` runs every ``JOURNAL_CHECK_EVERY`` s.
  The state lock file is checked every ``LOCK_CHECK_EVERY`` s (taken again, or a clean stop).
- The journal is backed up online every ``daemon.journal_backup_interval`` s (``journal.backup``);
  every ``daemon.maintenance_interval`` s retention runs (``journal.retention``: raw/ pruned, rows
  compacted, vacuum, the state folder's size for ``status``).
- systemd: ``READY=1``, ``STATUS=`` every 5 s (queue, throughput, the documents furthest from
  done), ``WATCHDOG=1`` while ``Workers.making_progress``, ``EXTEND_TIMEOUT_USEC`` while the
  engine loads, ``RELOADING=1``/``STOPPING=1``.
- SIGHUP reloads ``rules.yaml``; an invalid new file is reported and the old config is kept.
  Engine settings need a restart (logged); inboxes, doctypes and routes apply at once.
- Threads: signal handlers only set events; the main thread does reload/stop. Watch callbacks
  only enqueue; the stability thread admits into the journal (or, for an inbox that splits
  scanner batches, hands PDFs and TIFFs to the batch splitter's thread: daemon.intake.batch);
  ``workers`` threads process; ``hooks.Dispatcher``'s threads deliver ``on_done`` hooks (started
  after the journal recovery, stopped after the drain).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sqlite3
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from types import FrameType

from apscheduler.schedulers.background import BackgroundScheduler

from daemon.config import Config, filesystem_problems, load_config
from daemon.config.restart import restart_changes
from daemon.engines import create_engine
from daemon.engines.base import Engine
from daemon.errors import ConfigError, ExitCode, FatalError, OcrDaemonError
from daemon.http.endpoint import HttpEndpoint, start_http
from daemon.journal import backup, retention
from daemon.journal.guard import open_state, write_marker
from daemon.journal.health import JournalHealth
from daemon.service import metrics
from daemon.service.hooks import Dispatcher
from daemon.service.intake import Intake
from daemon.service.pipeline import Pipeline
from daemon.service.sdnotify import notify, watchdog_interval
from daemon.service.workers import JOURNAL_CHECK_EVERY, Workers

log = logging.getLogger(__name__)

#: Seconds between checks that the state lock file is still the one held (guard.StateLock.check).
LOCK_CHECK_EVERY = 5.0


class Service:
    def __init__(self, cfg: Config, *, config_path: Path | None = None, engine_override: str | None = None) -> None:
        self.cfg = cfg
        self.config_path = config_path
        self.engine_override = engine_override
        # the lock first: nothing (recovery included) touches a journal another daemon uses
        self.journal, self.state_lock = open_state(cfg)
        self.journal_health = JournalHealth(self.journal)
        self.engine: Engine = create_engine(cfg, engine_override)
        self.pipeline: Pipeline | None = None
        self.scheduler = BackgroundScheduler(daemon=True)
        self._stop = threading.Event()
        self._reload = threading.Event()
        self._stop_at: float | None = None  # monotonic end of the drain, once a stop was asked for
        self.hooks = Dispatcher(self.journal)  # routes[].on_done deliveries
        self.workers = Workers(cfg, self.journal, self.journal_health, self.hooks, self._stop)
        self.intake = Intake(cfg, self.journal, self.workers, self.scheduler, stopping=self.stopping,
                             after_rescan=self._after_rescan)
        self.http: HttpEndpoint | None = None  # daemon.http: health, metrics, status page

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
        self.intake.attach(self.pipeline)
        self.journal_health.check_space()  # too little room: not ready until probe() finds it (check_journal)
        self.workers.start(self.pipeline, self.engine)
        self._start_heartbeat()
        self.intake.tracker.start()
        self.intake.start_watching()
        self.workers.sync_queue()
        n = self.intake.scan()
        log.info("initial scan: %d file(s) seen in %d inbox(es)", n, len(self.cfg.inboxes))
        self.scheduler.add_job(self.workers.check_journal, "interval", seconds=JOURNAL_CHECK_EVERY, id="journal-check",
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

    def _start_heartbeat(self) -> None:
        """A shared journal (``daemon.journal_url``, pgstore.py): renew this daemon's leases, show
        it in ``status``, and queue what other daemons admitted or lost, every second."""
        start = getattr(self.journal, "start_heartbeat", None)
        if start is not None:
            start(lambda: (self.workers.pages_done, metrics.METRICS.rate(60)), lambda _ids: self.workers.sync_queue())

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

    def stopping(self) -> bool:
        """True once SIGTERM/SIGINT (or ``request_stop``) started the drain."""
        return self._stop.is_set()

    def status_line(self) -> str:
        """Queue depth and throughput, as shown by ``systemctl status`` (sd_notify STATUS=)."""
        counts = self.journal.counts()
        busy, rate = self.workers.throughput(time.monotonic())
        line = (
            f"{counts.get('queued', 0)} queued, {busy} processing, {self.intake.tracker.pending()} settling; "
            f"{counts.get('done', 0)} done, {counts.get('failed', 0)} failed; {rate:.1f} pages/min (5 min)"
        )
        # Documents in progress, in short (systemctl shows one line): the two furthest from done.
        progress = sorted(self.journal.progress(), key=lambda p: -((p.pages_total or 0) - p.pages_done))
        if progress:
            line += "; " + ", ".join(p.short() for p in progress[:2]) + (f" +{len(progress) - 2}" if len(progress) > 2 else "")
        return line

    def _status(self) -> None:
        notify(f"STATUS={self.status_line()}")

    def _after_rescan(self) -> None:
        """After the periodic rescan: the next queued documents from the journal, and ``STATUS=``."""
        self.workers.sync_queue()
        self._status()

    # -- main loop --------------------------------------------------------------------------------

    def _signal(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGHUP:
            self._reload.set()
        else:
            self.request_stop()

    def request_stop(self) -> None:
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
            if wd is not None and self.workers.making_progress(now):
                notify("WATCHDOG=1")
            if now - last_status > 5:
                with contextlib.suppress(sqlite3.Error):  # a shared journal's server away: next time
                    self._status()
                last_status = now
        self.shutdown()
        return ExitCode.OK

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
        self.workers.cfg = new
        self.intake.reload(new)
        if self.scheduler.get_job("journal-backup") is not None:
            self.scheduler.remove_job("journal-backup")
        self._schedule_backups()  # a new interval or number kept applies at once
        n = self.intake.scan()
        log.info("reloaded %s: %d inbox(es), %d route(s); %d file(s) seen", self.config_path, len(new.inboxes), len(new.routes), n)
        notify("READY=1")

    def shutdown(self) -> None:
        notify("STOPPING=1")
        log.info("stopping: no new files; draining in-flight documents (up to %.0fs)", self.cfg.daemon.drain_timeout)
        self.intake.stop()
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        deadline = self._stop_at or time.monotonic() + self.cfg.daemon.drain_timeout
        if self.workers.drain(deadline) and self.pipeline is not None:
            # the deadline passed: a render worker busy with one file (a huge PDF MuPDF repairs)
            # must not hold the stop; its document resumes at the next start
            self.pipeline.close(kill=True)
        # Whatever is still running fails its pages with EngineDeadError -> retried next start.
        self.engine.close(drain_timeout=0.0)
        left = self.workers.join(timeout=10)
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
