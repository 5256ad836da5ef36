"""Stability tracking: a file is handed on only once it is complete.

Contract:
- ``notice(candidate)`` is cheap and thread-safe; the watcher's callbacks call it and return.
  ``full()`` says whether a notice would now be dropped (and counts it as one).
- A tracked file is handed to ``on_stable`` when its size and mtime have not changed for the
  inbox's ``stability_delay`` AND it opens as what it claims (``probe(path, inbox)`` returns None;
  the daemon's is ``daemon.intake.contentcheck.check``, which never parses the file here).
- A file that stays unchanged but never opens (a corrupt or mislabelled file) is handed on anyway
  after the inbox's ``invalid_grace`` seconds, so the pipeline can send it to the failed folder with the
  probe's reason -- bad input is never silently left behind.
- A probe reason that is a ``contentcheck.Refused`` (a file over ``inboxes[].max_file_mb``) is
  final: the file is handed on at once with it, without waiting ``invalid_grace``.
- A file that disappears is forgotten. Each path is handed on at most once per tracking; if it
  changes again later, it is tracked again (the journal decides whether it is new).
- ``on_stable`` runs on the tracker's own thread; it must not block for long.
- Timing: a new path is stat'ed as soon as its notice arrives (its delay starts then), and the
  thread sleeps until the next file is due (or ``tick``, the longest it waits between stats of a
  file that is still changing): a file is handed on within milliseconds of its delay running out,
  not up to a tick later. Notices are taken ``ADMIT_BATCH`` at a time, with the due files looked at
  in between: a flood of notices (a big drop, a rescan) never holds up a file that is due.
- Back-pressure (issue 34): at most ``TRACK_MAX`` files are tracked or waiting to be; a notice
  past that is dropped (its file is still in the inbox) and, once the tracker is down to half
  of it, ``on_room`` is called once (the daemon rescans: files admitted meanwhile are skipped as
  known). A 100,000-file drop costs memory and a pass's stats for ``TRACK_MAX`` files, not for
  every file of the drop.
"""

from __future__ import annotations

import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from daemon.intake.contentcheck import Refused
from daemon.models import Candidate
from daemon.names import for_log

log = logging.getLogger(__name__)

#: Seconds between probes (opening the file) of one stable file that does not open yet.
PROBE_EVERY = 1.0
#: Notices taken (one lstat and a journal lookup each) before the tracker looks again whether a
#: tracked file is due.
ADMIT_BATCH = 1000
#: Files tracked or noticed at most (back-pressure: the rest wait in the inbox for ``on_room``).
TRACK_MAX = 5000


@dataclass(slots=True)  # up to TRACK_MAX of them: no __dict__ each
class _Tracked:
    cand: Candidate
    size: int
    mtime_ns: int
    since: float  # monotonic time the current (size, mtime) was first seen
    last_probe: float = 0.0


class StabilityTracker:
    """See the module docstring."""

    def __init__(
        self,
        on_stable: Callable[[Candidate, str | None], None],
        probe: Callable[[Path, str], str | None],
        delay_for: Callable[[str], float],
        *,
        grace_for: Callable[[str], float] | None = None,
        tick: float = 0.25,
        skip: Callable[[Path, os.stat_result], bool] | None = None,
        on_room: Callable[[], None] | None = None,
        track_max: int = TRACK_MAX,
    ) -> None:
        self._on_room = on_room
        self._track_max = track_max
        self._dropped = False  # notices were dropped for want of room: call on_room once there is
        self._on_stable = on_stable
        self._probe = probe
        self._delay_for = delay_for
        self._grace_for = grace_for or (lambda inbox: 30.0)
        self._tick = tick
        self._skip = skip
        self._inq: queue.SimpleQueue[Candidate] = queue.SimpleQueue()
        self._tracked: dict[Path, _Tracked] = {}
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def notice(self, cand: Candidate) -> None:
        if self.full():
            return  # still in the inbox: offered again by the rescan on_room asks for
        self._inq.put(cand)
        self._wake.set()

    def full(self) -> bool:
        """Whether a notice now would be dropped for want of room. When it would, the tracker
        counts one as dropped (``on_room`` follows once it has room), so the watcher may ask
        this before the costlier tests of a file and drop it itself."""
        if self._on_room is None or len(self._tracked) + self._inq.qsize() < self._track_max:
            return False
        self._dropped = True
        return True

    def _room_check(self) -> None:
        if self._dropped and self._on_room is not None and self.pending() <= self._track_max // 2:
            self._dropped = False
            self._on_room()

    def pending(self) -> int:
        return len(self._tracked) + self._inq.qsize()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="stability", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
                self._sleep()
            except Exception:  # never let one bad path kill the tracker thread
                log.exception("stability tracker step failed")
                self._stop.wait(self._tick)

    def _sleep(self) -> None:
        """Wait until the next tracked file is due or ``tick`` has passed, admitting new notices.

        A notice wakes the thread only to stat the new path (so its delay starts at the event);
        the full pass waits for a deadline. Repeated events for a file already tracked (every
        write of a growing file) cost a queue read each, not a stat of every tracked file.
        """
        end = time.monotonic() + self._tick
        due = self._next_due()  # once per pass: O(tracked), like the pass itself
        while not self._stop.is_set():
            timeout = min(end, due) - time.monotonic()
            if timeout <= 0:
                return
            if self._wake.wait(timeout):
                self._wake.clear()
                due = min(due, self._admit(time.monotonic()))

    def _next_due(self) -> float:
        """Monotonic time the earliest tracked file can next be handed on (inf if none)."""
        due = float("inf")
        for t in self._tracked.values():
            d = t.since + self._delay_for(t.cand.inbox)
            if t.last_probe:
                d = max(d, t.last_probe + PROBE_EVERY)
            due = min(due, d)
        return due

    def _admit(self, now: float) -> float:
        """Take new notices -- at most ``ADMIT_BATCH``, the wake flag left set when more wait, so
        a flood of notices never holds up handing on a file that is due (issue 34) -- stat each
        new path once and start its delay at ``now``. Returns when the earliest of them is due
        (inf if none was new)."""
        due = float("inf")
        for _ in range(ADMIT_BATCH):
            try:
                cand = self._inq.get_nowait()
            except queue.Empty:
                break
            if cand.path not in self._tracked:
                st = _stat(cand.path)
                if st is None or (self._skip is not None and self._skip(cand.path, st)):
                    continue
                self._tracked[cand.path] = _Tracked(cand, st.st_size, st.st_mtime_ns, now)
                due = min(due, now + self._delay_for(cand.inbox))
        else:
            if not self._inq.empty():
                self._wake.set()  # more notices: _sleep goes on taking them between due files
        return due

    def step(self, now: float | None = None) -> None:
        """One pass: take new notices, stat every tracked file, hand on the stable ones."""
        now = time.monotonic() if now is None else now
        self._admit(now)
        for path, t in list(self._tracked.items()):
            st = _stat(path)
            if st is None:
                del self._tracked[path]
                continue
            if (st.st_size, st.st_mtime_ns) != (t.size, t.mtime_ns):
                t.size, t.mtime_ns, t.since = st.st_size, st.st_mtime_ns, now
                continue
            stable_for = now - t.since
            if stable_for < self._delay_for(t.cand.inbox):
                continue
            if now - t.last_probe < PROBE_EVERY and t.last_probe:
                continue  # probing opens the file: at most once every PROBE_EVERY s per file
            special = _not_plain(st)
            if special is not None:
                # Never open a link, FIFO, device or hard-linked file to probe it: opening a FIFO
                # blocks this thread (and so every inbox) forever, and a link's target lies
                # outside the inbox. Hand it on unread; the pipeline refuses it.
                del self._tracked[path]
                self._on_stable(t.cand, special)
                continue
            t.last_probe = now
            reason = self._probe(path, t.cand.inbox)
            if reason is None:
                del self._tracked[path]
                self._on_stable(t.cand, None)
            elif isinstance(reason, Refused):
                del self._tracked[path]
                log.info("%s: %s; passing it on to fail it", for_log(path.name), reason)
                self._on_stable(t.cand, reason)
            elif stable_for >= max(self._grace_for(t.cand.inbox), self._delay_for(t.cand.inbox)):
                del self._tracked[path]
                log.info("%s: unchanged for %.0fs but does not open (%s); passing it on to fail it", for_log(path.name), stable_for, reason)
                self._on_stable(t.cand, reason)
        self._room_check()


def _not_plain(st: os.stat_result) -> str | None:
    """Why a file must not be opened (link, special file, hard link), or None."""
    if stat.S_ISLNK(st.st_mode):
        return "symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_nlink > 1:
        return "hard-linked file"
    return None


def _stat(path: Path) -> os.stat_result | None:
    try:
        # lstat: a symlink is judged as the link itself; the pipeline refuses links.
        st = os.lstat(path)
    except OSError:
        return None
    return st
