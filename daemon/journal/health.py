"""Whether the journal can be written now: what keeps the daemon "not ready" while it cannot.

Contract:
- ``JournalHealth(journal)`` hooks ``journal.on_write_error``: a write that fails because the
  journal cannot be written (state folder full, I/O error, read-only, damaged), on any thread,
  marks it unwritable at once; ``problem()`` then says why (``/healthz/ready``'s reason,
  ``ocr_daemon_journal_writable``). ``failed(e)`` marks it the same way for an error the
  caller caught itself.
- Only ``probe()`` clears the mark: at least ``HEADROOM`` bytes free on the state folder's
  filesystem, a journal that passes ``quick_check`` when the error said "damaged", and a real
  small write that commits. A small write that happens to fit into space SQLite already had
  does not flip readiness back and forth while the disk is still full.
- ``check_space()`` at start applies ``probe``'s room rule: the room that lets the daemon go on
  after a full disk is the room it needs to start ready (one threshold, ``HEADROOM``).
- ``wait(timeout)``: block until writable (True) or ``timeout`` passes (False).
- Thread-safe; nothing here raises.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading

from daemon.journal.backup import quick_check
from daemon.journal.store import Journal

log = logging.getLogger(__name__)

#: Free bytes the state folder's filesystem needs before the journal counts as writable again.
#: The WAL grows until SQLite's auto-checkpoint at 1000 pages (4 MiB) and is then reused from its
#: start; one 10-page document appends 49 WAL frames (197 KiB) in 16 commits
#: (bench/bench_journal_state.py "wal"), so four in flight need ~0.8 MiB. 4 MiB free lets the
#: WAL reach its full size: work goes on instead of failing again at the next page.
HEADROOM = 4 << 20

#: SQLite result codes that say the file is damaged (not just unwritable now).
DAMAGE = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


class JournalHealth:
    """See the module contract."""

    def __init__(self, journal: Journal, headroom: int = HEADROOM) -> None:
        self.journal = journal
        self.headroom = headroom
        self._ok = threading.Event()
        self._ok.set()
        self._lock = threading.Lock()
        self._problem: str | None = None
        self._damaged = False
        journal.on_write_error = self.failed

    @property
    def writable(self) -> bool:
        return self._ok.is_set()

    def problem(self) -> str | None:
        with self._lock:
            return self._problem

    def wait(self, timeout: float) -> bool:
        return self._ok.wait(timeout)

    def failed(self, e: BaseException, *, damaged: bool = False) -> None:
        """The journal failed a write (or an error the caller caught came from it); ``damaged``:
        known to be damaged (a backup copy failed its check)."""
        code = getattr(e, "sqlite_errorcode", None)
        damaged = damaged or (code is not None and (code & 0xFF) in DAMAGE)
        with self._lock:
            first = self._problem is None
            self._damaged = self._damaged or damaged
            self._problem = self._describe(str(e))
            self._ok.clear()
        if first:
            log.error("the journal cannot be written (%s): no new document is started until it can; documents a "
                      "failed write cut off are queued again then", e)

    def _describe(self, error: str) -> str:
        if self._damaged:
            return (f"the journal {self.journal.path} is damaged ({error}): stop the daemon and recover it "
                    "(ocr-daemon journal restore or rebuild; docs/reliability.md)")
        return f"the journal {self.journal.path} cannot be written ({error}); documents wait until it can"

    def check_space(self) -> bool:
        """At start: the same rule as ``probe``'s for going on (``HEADROOM`` free on the state
        folder's filesystem). Less, and the journal is marked unwritable -- the daemon starts not
        ready and takes no document -- until ``probe`` finds the room (issue 33: it had started
        ready with 1864 KiB free, then stayed not ready for good with 1408 KiB freed after a full
        disk). True when there is room."""
        try:
            st = os.statvfs(self.journal.state_dir)
            free = st.f_bavail * st.f_frsize
        except OSError:
            return True  # the first write says more than a failed statvfs
        if free >= self.headroom:
            return True
        with self._lock:
            self._problem = (f"{free // 1024} KiB free on the state folder's filesystem; needs "
                             f"{self.headroom // 1024} KiB to start or go on (docs/reliability.md)")
            self._ok.clear()
        log.error("the journal's folder has too little room: %s; no document is started until it has", self._problem)
        return False

    def probe(self) -> bool:
        """Writable again? (see the module contract). Clears the mark and returns True if so."""
        try:
            st = os.statvfs(self.journal.state_dir)
            free = st.f_bavail * st.f_frsize
        except OSError as e:
            return self._still(f"cannot check the state folder: {e.strerror}")
        if free < self.headroom:
            return self._still(f"{free // 1024} KiB free on the state folder's filesystem; "
                               f"needs {self.headroom // 1024} KiB to go on")
        if self._damaged:
            found = quick_check(self.journal.path)
            if found is not None:
                return self._still(found)
        try:
            self.journal.check_writable()
        except Exception as e:  # on_write_error has recorded a journal error; anything else here
            return self._still(str(e))
        with self._lock:
            was, self._problem, self._damaged = self._problem, None, False
            self._ok.set()
        if was is not None:
            log.info("the journal can be written again: documents are started again")
        return True

    def _still(self, why: str) -> bool:
        with self._lock:
            if self._problem is not None or not self._ok.is_set():
                self._problem = self._describe(why)
                self._ok.clear()
        return False
