"""The daemon's way in: inbox watchers, the stability tracker, admission into the journal.

Contract:
- ``Intake(cfg, journal, workers, scheduler, stopping=..., after_rescan=...)`` owns the inbox
  watcher (``intake.watch.InboxWatcher``), the stability tracker (``intake.stability``), the
  read failures (``intake.unreadable``) and, for inboxes that split scanner batches, the batch
  splitter (``intake.batch``). ``cfg`` is replaced on a reload (``reload``).
- Watch callbacks only notice; the stability thread admits a settled file into the journal, or
  hands a PDF or TIFF of a splitting inbox to the batch splitter's thread (its parts come back
  through the watcher). A file the journal has with this size and mtime is skipped before it is
  tracked. An admitted document's id goes into the work queue while the queue has room
  (``Workers.queue_window``); the rest wait in the journal for ``Workers.sync_queue``.
- Backlogs (issue 34): the tracker tracks at most ``TRACK_MAX`` files and, once it has room
  again, a rescan runs on the watcher's rescan thread, so a 100,000-file drop costs memory for a
  few thousand.
- A file that cannot be read (permission denied) is tried at ``daemon.max_attempts`` scans, then
  moved to the failed folder with the reason; a file over its inbox's ``max_file_mb`` is failed
  unread, never hashed (``fail_unreadable``).
- ``attach(pipeline)`` (at start, once the pipeline is warm) makes the batch splitter and
  finishes a split an unclean stop interrupted; ``start_watching()`` starts the watcher (the
  failed, state and archive folders excluded; the daemon's own outputs recognised through
  ``Pipeline.claims``) and (re)schedules the periodic rescan and each inbox's cron scan;
  ``scan()`` scans every inbox now; ``reload(cfg)`` applies a new config at once (inboxes,
  routes' archive folders); ``stop()`` stops the watcher, the tracker and the splitter.
- Its log lines are the daemon's (logger ``daemon.service.service``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from daemon.config import Config, template_root
from daemon.fsio import is_within
from daemon.intake import batch, contentcheck
from daemon.intake.stability import StabilityTracker
from daemon.intake.unreadable import ReadFailures
from daemon.intake.watch import InboxWatcher
from daemon.journal.store import AdmitAction, Journal
from daemon.models import Candidate
from daemon.names import for_log
from daemon.service import metrics
from daemon.service.pipeline import Pipeline
from daemon.service.workers import Workers

log = logging.getLogger("daemon.service.service")  # the daemon's lines keep one logger name

#: Scheduler jobs that follow the inboxes (replaced on reload); the journal's own jobs stay.
WATCH_JOBS = ("rescan", "cron-")


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


class Intake:
    """See the module docstring."""

    def __init__(
        self, cfg: Config, journal: Journal, workers: Workers, scheduler: BackgroundScheduler, *,
        stopping: Callable[[], bool], after_rescan: Callable[[], None],
    ) -> None:
        self.cfg = cfg
        self.journal = journal
        self.workers = workers
        self.scheduler = scheduler
        self.stopping = stopping
        self.after_rescan = after_rescan  # the periodic rescan's follow-up: the queue synced, STATUS=
        self.read_failures = ReadFailures()
        self.pipeline: Pipeline | None = None
        self.batches: batch.Splitter | None = None  # scanner batches, for inboxes that split them
        self.tracker = StabilityTracker(
            self._on_stable, self._content_check, self._delay_for, grace_for=self._grace_for, skip=self._skip_known,
            on_room=self._tracker_has_room,
        )
        self.watcher: InboxWatcher | None = None

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
            self.fail_unreadable(cand, str(probe_error))
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
                self.fail_unreadable(cand, f"cannot read the file: {e.strerror} (tried {tries} times)")
            return
        except sqlite3.Error as e:  # journal health has it; the next scan offers the file again
            log.warning("cannot admit %s now: journal error: %s", for_log(cand.path.name), e)
            return
        self.read_failures.forget(cand.path)
        if adm.action in (AdmitAction.QUEUED, AdmitAction.DUPLICATE) and adm.document is not None:
            d = adm.document
            extra = f" (duplicate of doc-{adm.duplicate_of})" if adm.duplicate_of else ""
            log.info("%s queued %s from inbox %r%s", d.tag, for_log(cand.path.name), cand.inbox, extra)
            if self.workers.queue.due() < self.workers.queue_window():  # else it waits in the journal (sync_queue)
                self.workers.queue.put(d.id)

    def fail_unreadable(self, cand: Candidate, reason: str) -> None:
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

    def attach(self, pipeline: Pipeline) -> None:
        """The pipeline, warm: the batch splitter on its pool; a split an unclean stop cut short finished."""
        self.pipeline = pipeline
        self.batches = batch.Splitter(self.cfg, pipeline.pool)
        if self.batches.recover():
            log.info("finished scanner batch split(s) an unclean stop interrupted")

    def scan(self) -> int:
        """Every inbox scanned now: the files seen."""
        return self.watcher.scan() if self.watcher else 0

    def reload(self, cfg: Config) -> None:
        """A new config: the splitter's, and the watcher started again on its inboxes."""
        self.cfg = cfg
        if self.batches is not None:
            self.batches.cfg = cfg
        if self.watcher is not None:
            self.watcher.stop()
        self.start_watching()

    def stop(self) -> None:
        """No new files: the watcher, the tracker and the splitter stopped."""
        if self.watcher is not None:
            self.watcher.stop()
        self.tracker.stop()
        if self.batches is not None:
            self.batches.close()  # a split cut short is finished or redone at the next start

    # -- watching -------------------------------------------------------------------------------

    def start_watching(self) -> None:
        cfg = self.cfg
        excluded = [cfg.daemon.failed_dir, cfg.daemon.state_dir, *archive_roots(cfg), *batch.archive_roots(cfg)]
        self.watcher = InboxWatcher(
            cfg.inboxes,
            self.tracker.notice,
            excluded_dirs=excluded,
            is_output=self.pipeline.claims.is_output if self.pipeline else None,
            is_output_name=self.pipeline.claims.is_output if self.pipeline else None,
            known=self.journal.known_under,  # a rescan skips kept files done already: one lookup per folder
            outputs_among=self.pipeline.claims.outputs_among if self.pipeline else None,
            full=self.tracker.full,  # back-pressure: no journal lookup for a file the tracker would drop
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
        self.after_rescan()

    def _tracker_has_room(self) -> None:
        """The stability tracker dropped notices for want of room and has room again (a big drop:
        back-pressure, ``intake.stability``): rescan, on the watcher's rescan thread (scans never
        overlap)."""
        if self.watcher is not None and not self.stopping():
            self.watcher.scan_soon()

    def _scan_inbox(self, name: str) -> None:
        ib = self.cfg.inbox(name)
        if ib is not None and self.watcher is not None:
            n = self.watcher.scan(ib)
            log.info("scheduled scan of inbox %r: %d file(s)", name, n)
