"""Watching inboxes: watchdog observers + full scans, feeding the stability tracker.

Contract:
- Watch callbacks only filter and enqueue (watchdog has a single dispatcher thread per observer).
  Observers queue only ``WATCHED_EVENTS``; an event's path is tested on strings, cheapest test
  first, and dropped before any journal lookup while the sink is ``full`` (the stability tracker's
  back-pressure; a scan drops its batches the same way). The tracker asks for a rescan once it has
  room, so a dropped file is offered again (issue 34: a big drop's memory is the tracker's
  ``TRACK_MAX`` files, not watchdog's queue of every event).
- ``watch: inotify`` uses the inotify observer; ``poll`` the PollingObserver (network shares);
  ``auto`` polls on network/FUSE filesystems (nfs, cifs/smb, fuse, 9p...) and when inotify cannot
  be set up (e.g. ``max_user_watches`` reached), else inotify.
- Inboxes with a cron ``schedule`` are not watched; ``scan(inbox)`` is run at those times.
- ``scan()`` walks inboxes and enqueues every acceptable file: at start, on the periodic rescan
  timer, and (``scan_soon``, on the watcher's one rescan thread) when inotify reports a queue
  overflow (events were lost) or the tracker has room again. A file the journal has unchanged
  (same path, size and mtime as its newest row) is left out, so a rescan costs what changed, not
  what is kept (issue 34): ``known`` gives the journal's (size, mtime) of every file under the
  scanned folder in one lookup (a ``KnownFiles``, 24 bytes a file), a folder's names are looked
  up in it ``LOOKUP_CHUNK`` at a time, and each known file's ``lstat`` (made through the folder's
  descriptor) is compared with it, before any other test of the file. The other files
  are asked ``outputs_among`` (the daemon's own outputs) ``SCAN_BATCH`` at a time. Full scans
  never overlap: one asked for during another makes that one go round again.
- Never enqueued: hidden/temp files (``.*`` -- ``..*`` too --, ``~*``, ``*.part``, ``*.tmp``,
  ``*.crdownload``), files not matching the inbox's include/exclude globs, anything under an
  excluded folder (the daemon's failed/archive/output/state folders), and paths ``is_output``
  says the daemon wrote.
- A hidden file (or folder) that a scan finds sitting in an inbox is logged once (INFO, once per
  path while the daemon runs), so a file dropped as ``.scan.pdf`` is not ignored without a word.
  Events alone do not log: the temp names of a safe drop (``.x.part`` renamed to ``x``) are
  usually gone before a scan sees them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from daemon import procenv
from daemon.config import InboxCfg
from daemon.fsio import is_within, make_inbox_dir, set_shared_roots
from daemon.journal.known import KnownFiles
from daemon.models import Candidate
from daemon.names import for_log

log = logging.getLogger(__name__)

TEMP_SUFFIXES = (".part", ".tmp", ".crdownload", ".partial", ".swp", ".ocr-tmp")
#: Hidden paths remembered as already logged (``_note_hidden``); past this the oldest are forgotten.
HIDDEN_NOTED_MAX = 10_000
#: Files not known unchanged that a scan asks ``outputs_among`` about at once: one query per batch.
SCAN_BATCH = 500
#: Files of a folder a scan compares with the journal's (``KnownFiles.stamps``) at once.
LOOKUP_CHUNK = 1024
#: The events an observer queues (watchdog's ``event_filter``; inotify is not even asked for the
#: others): a file made, written, closed after writing or moved in, a folder made or moved in. Left
#: out: the folder-modified event inotify adds for each file event (half of a drop's events), and
#: the open / close-without-write / delete events of every read of an inbox file (the daemon's
#: own reads included). Issue 34: watchdog's queue is unbounded and its one dispatcher thread
#: slower than inotify, so every event it need not queue is memory a big drop does not take.
WATCHED_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileMovedEvent, DirCreatedEvent, DirMovedEvent,
]
NETWORK_FS = ("nfs", "nfs4", "cifs", "smb", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "davfs", "sshfs")


def is_temp_name(name: str) -> bool:
    return name.startswith((".", "~")) or name.lower().endswith(TEMP_SUFFIXES)


def fs_type(path: Path) -> str:
    """Filesystem type of the mount holding ``path`` (from /proc/self/mounts), '' if unknown."""
    try:
        target = os.path.realpath(path)
        best, kind = "", ""
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mnt = parts[1].replace("\\040", " ")
                if is_within(target, mnt) and len(mnt) >= len(best):
                    best, kind = mnt, parts[2]
        return kind
    except OSError:
        return ""


def wants_polling(path: Path) -> bool:
    kind = fs_type(path)
    return kind in NETWORK_FS or kind.startswith("fuse")


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: InboxWatcher, inbox: InboxCfg) -> None:
        self._w = watcher
        self._inbox = inbox

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            if event.event_type in ("created", "moved") and self._inbox.recursive:
                # A folder moved in with files inside: inotify reports only the folder.
                self._w.scan_dir(Path(os.fsdecode(getattr(event, "dest_path", "") or event.src_path)), self._inbox)
            return
        if event.event_type in ("created", "modified", "closed", "moved"):
            raw = event.dest_path if event.event_type == "moved" else event.src_path
            self._w.offer_event(os.fsdecode(raw), self._inbox)


class _OverflowHook(logging.Handler):
    """watchdog logs inotify queue overflows; we turn that into an immediate rescan."""

    def __init__(self, callback: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self._cb = callback

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._cb()


class InboxWatcher:
    """Observers for the configured inboxes. ``sink`` receives accepted candidates."""

    def __init__(
        self,
        inboxes: Iterable[InboxCfg],
        sink: Callable[[Candidate], None],
        *,
        excluded_dirs: Iterable[Path] = (),
        is_output: Callable[[Path], bool] | None = None,
        is_output_name: Callable[[str], bool] | None = None,
        known: Callable[[str], KnownFiles] | None = None,
        outputs_among: Callable[[list[str]], set[str]] | None = None,
        full: Callable[[], bool] | None = None,
    ) -> None:
        self.inboxes = list(inboxes)
        # the sink has no room now (the tracker's back-pressure: it asks for a rescan once it has):
        # an event or a scan's batch is then dropped before any journal lookup or Path is made
        self._full = full or (lambda: False)
        self._takes_files: dict[str, bool] = {}  # inbox name -> _folder_takes_files(inbox folder)
        self._known = known  # folder -> KnownFiles: (size, mtime) of each of its files the journal has
        # is_output for a scan's batch at once (with ``known``: one query per batch, asked only
        # about the files ``known`` did not leave out; issue 34: no per-file lookup, no set in memory)
        self._outputs_among = outputs_among if known is not None else None
        self._scan_again = False  # a full scan was asked for while one ran: run it again after
        self._sink = sink
        self._excluded = [Path(os.path.abspath(p)) for p in excluded_dirs]
        self._excluded_names = {str(p) for p in self._excluded}
        self._is_output = is_output
        self._is_output_name = is_output_name  # is_output on the path's string (scans: no Path per file)
        self._observers: list[BaseObserver] = []
        self.modes: dict[str, str] = {}
        self._overflow_hook: _OverflowHook | None = None
        self._rescan_lock = threading.Lock()
        self._rescanner = Rescanner(self.scan)  # scan_soon's thread (started and stopped with the watcher)
        self._hidden_noted: OrderedDict[Path, None] = OrderedDict()  # hidden paths logged (bounded)
        self._hidden_lock = threading.Lock()

    # -- filtering --------------------------------------------------------------------------

    def accepts(self, path: Path, inbox: InboxCfg) -> bool:
        if is_temp_name(path.name):
            return False
        try:
            rel = path.relative_to(inbox.path)
        except ValueError:
            return False
        if len(rel.parts) > 1 and (not inbox.recursive or any(is_temp_name(p) for p in rel.parts[:-1])):
            return False
        ap = Path(os.path.abspath(path))
        if any(is_within(ap, ex) for ex in self._excluded):
            return False
        if self._is_output is not None and self._is_output(ap):
            return False
        return inbox.wants(path)

    def offer(self, path: Path, inbox: InboxCfg) -> None:
        if self.accepts(path, inbox):
            self._sink(Candidate(path, inbox.name))

    def offer_event(self, path: str, inbox: InboxCfg) -> None:
        """``offer`` for an event's path, run on watchdog's one dispatcher thread for every event
        (issue 34: a slow handler lets watchdog's unbounded queue grow through a big drop). A file
        directly in the inbox is tested on strings, cheapest test first: its name, the globs, the
        sink's room, and only then ``is_output`` (a journal lookup). Files in subfolders take
        ``accepts``."""
        folder, name = os.path.split(path)
        if is_temp_name(name):
            return
        if folder != os.fspath(inbox.path) or not self._inbox_takes_files(inbox):
            if not self._full() and self.accepts(Path(path), inbox):
                self._sink(Candidate(Path(path), inbox.name))
            return
        ap = os.path.join(os.path.abspath(folder), name)
        if self._takes_name(name, path, ap, inbox) and not self._full() and not self._is_output_at(ap):
            self._sink(Candidate(Path(path), inbox.name))

    def _inbox_takes_files(self, inbox: InboxCfg) -> bool:
        takes = self._takes_files.get(inbox.name)
        if takes is None:
            takes = self._takes_files[inbox.name] = self._folder_takes_files(inbox.path, inbox)
        return takes

    # -- scanning ---------------------------------------------------------------------------

    def scan_dir(self, folder: Path, inbox: InboxCfg) -> int:
        """Offer every acceptable file under ``folder``; returns how many files it found, offered
        or known unchanged. With ``known``, one journal lookup for the whole folder says which files
        the journal has unchanged (a file whose size and mtime are its newest row's is not
        offered, nor tested further), and the others go to the sink ``SCAN_BATCH`` at a time, less
        those ``outputs_among`` says the daemon wrote (issue 34: what a rescan costs per kept file
        is one ``lstat`` and its share of a ``KnownFiles.stamps`` lookup of ``LOOKUP_CHUNK`` names)."""
        known = KnownFiles()
        if self._known is not None:
            try:
                known = self._known(str(folder))
            except Exception as e:  # the journal cannot answer now: the tracker asks it file by file
                log.debug("known-file lookup failed (%s); offering every file", e)
        batch: list[str] = []
        n = self._scan_dir(folder, inbox, batch, self._folder_takes_files(folder, inbox), known, "")
        self._flush(batch, inbox)
        return n

    def _folder_takes_files(self, folder: Path, inbox: InboxCfg) -> bool:
        """Whether ``accepts`` would take a file of ``folder`` on its name alone: the folder is the
        inbox, or (recursive inbox) inside it through folders without temp names, and under no
        excluded folder. Then a scan of it tests each file by name, ``is_output`` and the globs
        only (``accepts`` builds three paths per file: most of a rescan's CPU at 100k files)."""
        try:
            rel = Path(os.path.abspath(folder)).relative_to(os.path.abspath(inbox.path))
        except ValueError:
            return False
        if rel.parts and (not inbox.recursive or any(is_temp_name(p) for p in rel.parts)):
            return False
        return not any(is_within(os.path.abspath(folder), ex) for ex in self._excluded)

    def _scan_dir(self, folder: Path, inbox: InboxCfg, batch: list[str], fast: bool, known: KnownFiles, rel: str) -> int:
        """``scan_dir`` of ``folder``, which is ``rel`` (``""`` or ending in "/") under the folder
        ``known`` describes. The folder is read through a descriptor of its own: each ``lstat`` is
        one name looked up in it, not a whole path walked again. Its files are compared with
        ``known`` ``LOOKUP_CHUNK`` at a time (``_take``)."""
        n = 0
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            log.warning("cannot scan %s: %s", folder, e.strerror)
            return 0
        at = _Folder(os.fspath(folder), os.path.abspath(folder), rel, fast)
        files: list[os.DirEntry[str]] = []
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    try:
                        name = entry.name
                        if name.startswith(".") and (inbox.recursive or not entry.is_dir(follow_symlinks=False)):
                            self._note_hidden(Path(at.top, name), entry.is_dir(follow_symlinks=False))
                        if entry.is_dir(follow_symlinks=False):
                            if inbox.recursive and not is_temp_name(name):
                                sub = Path(at.top, name)
                                n += self._scan_dir(sub, inbox, batch, fast and self._folder_takes_files(sub, inbox),
                                                    known, rel + name + "/")
                            continue
                    except OSError:
                        continue
                    files.append(entry)
                    if len(files) >= LOOKUP_CHUNK:
                        n += self._take(files, at, inbox, batch, known)
            n += self._take(files, at, inbox, batch, known)
        except OSError as e:
            log.warning("cannot scan %s: %s", folder, e.strerror)
        finally:
            os.close(fd)
        return n

    def _take(self, files: list[os.DirEntry[str]], at: _Folder, inbox: InboxCfg, batch: list[str], known: KnownFiles) -> int:
        """Offer the files of ``files`` (entries of the folder ``at``) that ``known`` does not
        have unchanged (its size and mtime), on to the sink or into ``batch``; empties ``files``.
        Returns how many it found acceptable or known unchanged."""
        n = 0
        for entry, have in zip(files, known.stamps([at.rel + e.name for e in files]), strict=True):
            try:
                if have is not None:
                    st = entry.stat(follow_symlinks=False)
                    if st.st_size == have[0] and st.st_mtime == have[1]:
                        n += 1  # the journal has it unchanged: not offered
                        continue
                name = entry.name
                path = os.path.join(at.top, name)
                if not (self._accepted(name, path, at.absfolder, inbox) if at.fast else self.accepts(Path(path), inbox)):
                    continue
                n += 1
                if self._known is None:
                    self._sink(Candidate(Path(path), inbox.name))
                    continue
                batch.append(path)
                if len(batch) >= SCAN_BATCH:
                    self._flush(batch, inbox)
            except OSError:
                continue
        files.clear()
        return n

    def _accepted(self, name: str, path: str, absfolder: str, inbox: InboxCfg) -> bool:
        """``accepts`` for the file ``name`` (at ``path``) of a folder that ``_folder_takes_files``,
        on strings (no ``Path`` built per file: a rescan tests every new file of the inbox)."""
        ap = os.path.join(absfolder, name)
        # with outputs_among, is_output is asked in _flush, for the batch
        return self._takes_name(name, path, ap, inbox) and (self._outputs_among is not None or not self._is_output_at(ap))

    def _takes_name(self, name: str, path: str, ap: str, inbox: InboxCfg) -> bool:
        """The tests of ``accepts`` on a file's name alone, for a file (at ``path``, absolute
        ``ap``) of a folder that ``_folder_takes_files``: not a temp name, not an excluded folder
        itself (a file is under one only if it is one), and the inbox's globs."""
        return not is_temp_name(name) and ap not in self._excluded_names and inbox.wants_name(name, path)

    def _is_output_at(self, ap: str) -> bool:
        """``is_output`` of the absolute path ``ap``, on its string where the watcher has that test."""
        if self._is_output_name is not None:
            return self._is_output_name(ap)
        return self._is_output is not None and self._is_output(Path(ap))

    def _flush(self, batch: list[str], inbox: InboxCfg) -> None:
        """Hand on the files of ``batch`` (none of them known unchanged) that are not the daemon's
        outputs; empties it."""
        if not batch:
            return
        if self._full():
            batch.clear()  # no room: the sink asks for a rescan once it has (back-pressure)
            return
        rest = batch
        if self._outputs_among is not None:
            outputs = self._outputs_among(rest)  # never raises: answers "output" when it cannot tell
            rest = [p for p in rest if p not in outputs]
        for p in rest:
            self._sink(Candidate(Path(p), inbox.name))
        batch.clear()

    def _note_hidden(self, path: Path, is_dir: bool) -> None:
        if any(is_within(os.path.abspath(path), ex) for ex in self._excluded):
            return  # the daemon's own folders (e.g. a state folder kept inside an inbox)
        with self._hidden_lock:  # scans run on the rescan, overflow and cron threads
            if path in self._hidden_noted:
                return
            self._hidden_noted[path] = None
            while len(self._hidden_noted) > HIDDEN_NOTED_MAX:
                self._hidden_noted.popitem(last=False)
        what = "folder (and everything in it)" if is_dir else "file"
        log.info("ignoring the hidden %s %s: names starting with '.' are never processed (rename it to process it)",
                 what, for_log(path))

    def scan(self, inbox: InboxCfg | None = None) -> int:
        """Enqueue every acceptable file of one inbox (or of every continuously watched one).

        Full scans (``inbox`` None: the periodic rescan, an inotify overflow) never overlap: one
        asked for while another runs returns 0 at once and makes the running one go round once
        more when it ends (so files whose events were lost meanwhile are still seen)."""
        if inbox is not None:
            return self.scan_dir(inbox.path, inbox)
        if not self._rescan_lock.acquire(blocking=False):
            self._scan_again = True
            return 0
        try:
            n = -1
            while n < 0 or self._scan_again:
                self._scan_again = False
                n = sum(self.scan_dir(i.path, i) for i in self.inboxes if i.schedule is None)
            procenv.release_free_memory()  # the scan's lookups of known files, dropped (issue 34)
            return n
        finally:
            self._rescan_lock.release()

    def scan_soon(self) -> None:
        """A full scan on the watcher's rescan thread (``Rescanner``), as soon as it is free."""
        self._rescanner.ask()

    def _on_overflow(self) -> None:
        # Called on watchdog's reader thread: the scan runs on the rescan thread, not blocking it.
        log.warning("inotify queue overflowed: events were lost, rescanning inboxes now")
        self.scan_soon()

    # -- observers --------------------------------------------------------------------------

    def start(self) -> None:
        self._rescanner.start()
        self._overflow_hook = _OverflowHook(self._on_overflow)
        logging.getLogger("watchdog.observers.inotify_c").addHandler(self._overflow_hook)
        # folders made inside the inboxes (and a missing inbox) are setgid, group-writable (fsio)
        set_shared_roots([ib.path for ib in self.inboxes])
        for ib in self.inboxes:
            make_inbox_dir(ib.path)
            if ib.schedule is not None:
                self.modes[ib.name] = f"schedule {ib.schedule}"
                continue
            mode = ib.watch
            if mode == "auto":
                mode = "poll" if wants_polling(ib.path) else "inotify"
            obs = self._start_observer(ib, mode)
            self._observers.append(obs)

    def _start_observer(self, ib: InboxCfg, mode: str) -> BaseObserver:
        handler = _Handler(self, ib)
        if mode == "inotify":
            obs: BaseObserver = Observer()
            try:
                obs.schedule(handler, str(ib.path), recursive=ib.recursive, event_filter=WATCHED_EVENTS)
                obs.start()
                self.modes[ib.name] = "inotify"
                log.info("watching %s (%s) with inotify", ib.path, ib.name)
                return obs
            except OSError as e:
                # ENOSPC = inotify watch limit reached; EMFILE = instance limit.
                log.warning("inotify unavailable for %s (%s); polling instead", ib.path, e.strerror or e)
                with contextlib.suppress(Exception):  # the observer may never have started
                    obs.stop()
        obs = PollingObserver(timeout=max(1.0, min(5.0, ib.stability_delay or 1.0)))
        obs.schedule(handler, str(ib.path), recursive=ib.recursive, event_filter=WATCHED_EVENTS)
        obs.start()
        self.modes[ib.name] = "poll"
        log.info("watching %s (%s) by polling", ib.path, ib.name)
        return obs

    def stop(self) -> None:
        for obs in self._observers:
            obs.stop()
        for obs in self._observers:
            obs.join(timeout=5)
        self._observers.clear()
        self._rescanner.stop()
        if self._overflow_hook is not None:
            logging.getLogger("watchdog.observers.inotify_c").removeHandler(self._overflow_hook)
            self._overflow_hook = None


@dataclass(frozen=True)
class _Folder:
    """A folder a scan reads: its path as given (``top``) and absolute, its path under the folder
    ``KnownFiles`` describes (``rel``: ``""`` or ending in "/"), and whether its files are tested
    on their names alone (``fast``: ``_folder_takes_files``)."""

    top: str
    absfolder: str
    rel: str
    fast: bool


class Rescanner:
    """One long-lived thread that runs ``scan`` when asked (``ask``): asks made while it scans are
    one more scan after it. Not a thread per ask: a 100k drop asks ~40 times (the tracker's
    ``on_room``), and each new thread opened a journal connection of its own and filled its page
    cache again (issue 34: the daemon's RSS). The thread outlives a scan that fails."""

    def __init__(self, scan: Callable[[], object]) -> None:
        self._scan = scan
        self._wanted = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="rescan", daemon=True)
        self._thread.start()

    def ask(self) -> None:
        self._wanted.set()

    def stop(self) -> None:
        self._stopping.set()
        self._wanted.set()
        if self._thread is not None:
            self._thread.join(timeout=30)  # a scan in progress ends first
            self._thread = None

    def _loop(self) -> None:
        while True:
            self._wanted.wait()
            if self._stopping.is_set():
                return
            self._wanted.clear()
            try:
                self._scan()
            except Exception:  # the next ask scans again
                log.exception("rescan failed")
