"""The watcher's "did the daemon write this?": outputs written or planned, and archive paths
claimed by documents in flight.

Contract: ``OutputClaims(journal)``; ``claim(path)`` remembers an archive target about to be
moved to (``sources.Sources.plan``), the newest ``CLAIMED_MAX`` only (the journal answers for the
rest once it records the move); ``is_output(path)`` / ``outputs_among(paths)`` say whether the
daemon wrote, planned or archived to a path: the claims, then the journal (index searches; issue
34: nothing loaded per document at start). A journal that cannot answer makes them say "output"
(not taken now, asked again at the next scan). Thread-safe.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

from daemon.journal.store import Journal

#: Archive paths claimed by documents in flight that ``is_output`` remembers (the journal has the rest).
CLAIMED_MAX = 4096


class OutputClaims:
    """See the module docstring."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        # Paths claimed (an archive move about to be made) before the journal has them as a done
        # document's final path: the newest CLAIMED_MAX only -- the journal answers for the rest
        # (issue 34: every output path was loaded here at start, +26 MB per 100k documents).
        self._claimed: OrderedDict[str, None] = OrderedDict()
        self._outputs_lock = threading.Lock()

    def claim(self, path: Path) -> None:
        with self._outputs_lock:  # an archive folder inside a watched inbox must not feed it again
            self._claimed[str(path)] = None
            while len(self._claimed) > CLAIMED_MAX:
                self._claimed.popitem(last=False)

    def is_output(self, path: Path | str) -> bool:
        """Whether the daemon wrote, planned or archived to ``path`` (``Journal.is_output``: index
        searches, nothing held in memory but the claims of documents in flight)."""
        with self._outputs_lock:
            if str(path) in self._claimed:
                return True
        try:
            return self.journal.is_output(path)
        except sqlite3.Error:  # the journal cannot answer now: not taken now, the next scan asks again
            return True

    def outputs_among(self, paths: list[str]) -> set[str]:
        """``is_output`` for a rescan's batch of paths (``Journal.outputs_among``: one query per 512)."""
        with self._outputs_lock:
            claimed = {p for p in paths if p in self._claimed}
        try:
            return claimed | self.journal.outputs_among(paths)
        except sqlite3.Error:
            return set(paths)
