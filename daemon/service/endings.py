"""How a document's processing ends when it is not done: superseded, failed, waiting for space,
or retried with backoff (``Pipeline.process`` hands each problem here).

Contract:
- ``Outcome`` is what ``Pipeline.process`` returns: the state (done, duplicate, superseded,
  failed, retry), the delay before a retry, the outputs, where the source went, the reason.
- ``Endings(cfg, journal, sources)`` records each end in the journal and returns its ``Outcome``:
  ``superseded`` (the file changed while processed: nothing written or moved), ``fail`` (the
  source to the failed folder with its reason, ``sources.Sources.fail``), ``wait_for_space`` (a
  full or read-only destination: back to the queue with backoff, no strike), ``retry`` (one
  strike; backoff until ``daemon.max_attempts`` strikes, or failed at once when an error about
  the document itself comes back the same twice in a row), ``unexpected`` (an exception that is
  not the document's input error: superseded if the file changed, else a retry).
- Its log lines are the pipeline's (logger ``daemon.service.pipeline``): one WARNING per failure
  or retry naming the file, and for a failure where it went.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from daemon.config import Config
from daemon.errors import OcrDaemonError
from daemon.journal.rows import WAITING_FOR_SPACE
from daemon.journal.store import Journal
from daemon.models import Document
from daemon.names import for_log
from daemon.service import metrics
from daemon.service.sources import Sources, changed
from daemon.stages import describe

log = logging.getLogger("daemon.service.pipeline")  # one logger for a document's lines, whatever ends it

OutcomeState = Literal["done", "duplicate", "superseded", "failed", "retry"]


@dataclass
class Outcome:
    state: OutcomeState
    retry_in: float = 0.0
    outputs: list[Path] | None = None
    final_path: Path | None = None
    reason: str = ""
    pages: int = 0


class Endings:
    """The journal's record and the ``Outcome`` of a document that is not done (module docstring)."""

    def __init__(self, cfg: Config, journal: Journal, sources: Sources) -> None:
        self.cfg = cfg  # replaced on a reload (``Pipeline.cfg``)
        self.journal = journal
        self.sources = sources

    def unexpected(self, doc: Document, src: Path, e: Exception) -> Outcome:
        if changed(doc, src):  # e.g. a page index past the end of a shorter new version
            return self.superseded(doc)
        if isinstance(e, OcrDaemonError):
            return self.retry(doc, src, str(e))
        log.exception("%s: unexpected error", doc.tag)
        return self.retry(doc, src, f"internal error: {describe(e)}")

    def superseded(self, doc: Document) -> Outcome:
        """The file was replaced (or rewritten) while this version was processed. Nothing is
        written or moved for it; the new version is admitted and processed as its own document."""
        reason = "replaced by a newer version while being processed; the new version is processed on its own"
        self.journal.supersede(doc.id, reason)
        log.info("%s superseded: %s", doc.tag, reason)
        return Outcome("superseded", reason=reason)

    def fail(self, doc: Document, src: Path, reason: str) -> Outcome:
        final = self.sources.fail(doc, src, reason)
        self.journal.fail(doc.id, reason, final)
        # WARNING with the file's name and where it went: "where did my file go?" from the log alone
        log.warning("%s failed: %s: %s; now at %s", doc.tag, for_log(doc.path), for_log(reason),
                    for_log(str(final)) if final is not None else "(gone)")
        return Outcome("failed", final_path=final, reason=reason)

    def wait_for_space(self, doc: Document, reason: str) -> Outcome:
        """The destination is full, over quota or read-only: back to the queue with backoff and
        no strike -- the document is fine and the problem passes when space returns (issue 33:
        6 of 6 documents had gone to failed/ after 3 tries). Shown as waiting in ``status``,
        ``/status``, the status page and ``/metrics`` (``ocr_daemon_documents_waiting_for_space``)."""
        d = self.cfg.daemon
        delay = min(d.retry_backoff * (2 ** max(0, doc.attempts - 1)), d.retry_backoff_max)
        self.journal.retry_later(doc.id, WAITING_FOR_SPACE + reason, delay)
        log.warning("%s waiting for the destination, next try in %.0fs (not counted as a try): %s", doc.tag, delay,
                    for_log(reason))
        return Outcome("retry", retry_in=delay, reason=reason)

    def retry(self, doc: Document, src: Path, reason: str) -> Outcome:
        """Back to the queue after a backoff, bounded: every try counts (a disk that stays full,
        an engine that keeps dying on this file, a bug), and after ``max_attempts`` tries the
        document is failed with its reason -- at once when an error about the document itself (on
        one of its pages, or a bug) comes back the same twice in a row. Errors around it (a full
        disk, a read-only destination, an engine restarting) get every try: they can pass."""
        d = self.cfg.daemon
        row = self.journal.get(doc.id)
        previous = row.error if row is not None and row.strikes > 0 else None
        strikes = self.journal.strike(doc.id)
        metrics.document_retried()
        if previous == reason and _about_the_document(reason):
            return self.fail(doc, src, f"{reason} (the same error twice in a row: not a passing problem)")
        if strikes >= d.max_attempts:
            return self.fail(doc, src, f"{reason} (gave up after {strikes} tries)")
        delay = min(d.retry_backoff * (2 ** max(0, strikes - 1)), d.retry_backoff_max)
        self.journal.retry_later(doc.id, reason, delay)
        log.warning("%s %s: attempt %d of %d failed, retry in %.0fs: %s", doc.tag, for_log(doc.path), strikes,
                    d.max_attempts, delay, for_log(reason))
        return Outcome("retry", retry_in=delay, reason=reason)



#: An error about the document itself: on one of its pages, or a bug (not the disk, destination or engine).
_DOCUMENT_ERROR = re.compile(r"\bpages? \d+|^internal error")


def _about_the_document(reason: str) -> bool:
    return bool(_DOCUMENT_ERROR.search(reason))
