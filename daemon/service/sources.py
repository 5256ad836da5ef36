"""The source file's lifecycle: checked before it is read, then kept, archived, deleted, or moved
to the failed folder with a note -- and put back by ``ocr-daemon requeue``.

Contract:
- ``locate(doc, row)`` returns the source to read: a plain regular file (no symlink, no special
  file, no second hard link) whose folder resolves inside its inbox, opened once with
  ``O_NOFOLLOW`` to prove it. It follows a move a crash interrupted: the journal records where a
  source is going before it moves, and a move is link-then-unlink, so after a crash the file is at
  the old place, the new place, or both (same inode: the move is finished). Raises ``InputError``
  (refused for good) or ``TransientError`` (try later).
- ``plan(doc, src, action, archive_dir, row)`` says where the source will end *before* the outputs
  are written (the sidecar records it as ``archived_to``); ``act(...)`` then records the target in
  the journal and moves the file (recorded before it is made, so a crash finds it). A target
  recorded before a crash is reused; two documents never plan the same name (reserved in memory
  until moved). A crash between writing the outputs and the move plans again on the repeat,
  which rewrites the outputs too, so the sidecar always names where the source went.
- ``fail(doc, src, reason)`` moves the source to ``daemon.failed_dir`` and writes
  ``<name>.error.txt`` beside it; ``restore(journal, row)`` undoes that for ``requeue`` (the file
  goes back to its inbox path, the note is removed, the journal forgets the move).
- ``in_place`` (the files given to ``ocr-daemon once``, unless ``--apply-source-action``): such a
  source is never moved, archived, deleted or put in the failed folder; ``plan``/``act``/``fail``
  return it where it is.
- Nothing here raises for a problem moving a file to the failed folder: the file then stays
  where it is (logged), so no file is ever lost.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import threading
from collections.abc import Callable, Collection
from datetime import datetime
from pathlib import Path

from daemon.config import Config
from daemon.errors import InputError, TransientError
from daemon.fsio import (
    atomic_write,
    error_note_name,
    fsync_dir,
    is_within,
    move_file,
    sha256_file,
    unique_path,
)
from daemon.journal.store import Journal, JournalRow
from daemon.models import Document, SourceAction
from daemon.names import display, for_log

log = logging.getLogger(__name__)


class Sources:
    """Source-file checks and moves for one journal; thread-safe."""

    def __init__(
        self, cfg: Config, journal: Journal, *, claim: Callable[[Path], None] | None = None,
        in_place: Collection[Path] = (),
    ) -> None:
        self.cfg = cfg
        self.journal = journal
        # ``ocr-daemon once`` without --apply-source-action: like ocrmypdf or tesseract, a command
        # never moves or deletes the files it was given (kept when done, left in place when failed)
        self.in_place = frozenset(in_place)
        # called with a path the daemon is about to create inside (maybe) a watched folder, so the
        # watcher never takes an archived source as new input
        self._claim = claim or (lambda p: None)
        self._lock = threading.Lock()
        self._reserved: set[Path] = set()

    # -- before reading ------------------------------------------------------------------------

    def locate(self, doc: Document, row: JournalRow | None) -> Path:
        """The source file, checked (see the module contract)."""
        src = doc.path
        moved = row.final_path if row is not None else None
        if moved is not None and moved != src and os.path.lexists(moved):
            if os.path.lexists(src) and same_inode(src, moved):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(src)
                    fsync_dir(src.parent)
            if not os.path.lexists(src):
                return moved  # crash between the move and the journal's finish: carry on from there
        if not os.path.lexists(src):
            raise InputError("the file disappeared before it could be processed")
        st = os.lstat(src)
        if stat.S_ISLNK(st.st_mode):
            raise InputError("the file is a symbolic link; links are refused so nothing outside the inbox is read")
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file (a device, pipe, socket or folder)")
        if st.st_nlink > 1:
            raise InputError(f"the file has {st.st_nlink} hard links; refused so nothing outside the inbox is read")
        inbox = self.cfg.inbox(doc.inbox)
        if inbox is not None:
            root = os.path.realpath(inbox.path)
            real = os.path.realpath(src.parent)
            if not is_within(real, root):
                raise InputError("the file's folder resolves outside the inbox (a symlinked folder); refused")
        try:
            # O_NOFOLLOW|O_NONBLOCK: never follow a link swapped in since the lstat, never block
            # on a FIFO; fstat checks what was really opened.
            fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise InputError("the file is a symbolic link; refused") from e
            raise TransientError(f"cannot open the file: {e.strerror}") from e
        try:
            fst = os.fstat(fd)
            if not stat.S_ISREG(fst.st_mode) or fst.st_nlink > 1:
                raise InputError("the file changed into a link or special file while being opened; refused")
        finally:
            os.close(fd)
        return src

    # -- after the outputs ---------------------------------------------------------------------

    def plan(self, doc: Document, src: Path, action: SourceAction, archive_dir: Path | None, row: JournalRow | None) -> Path | None:
        """Where the source will be once ``act`` ran: ``src`` (kept, or already archived before a
        crash), None (deleted), or the archive target (reserved; nothing is written yet)."""
        if action == "keep" or src != doc.path or doc.path in self.in_place:  # src != doc.path: already archived before a crash
            return src
        if action == "delete":
            return None
        assert archive_dir is not None
        earlier = row.final_path if row is not None else None
        with self._lock:
            if earlier is not None and earlier.parent == archive_dir and not os.path.lexists(earlier):
                target = earlier  # planned before a crash, never moved: the same name again
            else:  # a name free on disk and not planned by another document that has not moved yet
                target = unique_path(archive_dir, src.name, taken=self._reserved)
            self._reserved.add(target)
        return target

    def release(self, target: Path | None) -> None:
        """Give up a name ``plan`` reserved (the outputs could not be written; a retry plans again)."""
        if target is not None:
            with self._lock:
                self._reserved.discard(target)

    def act(self, doc: Document, src: Path, action: SourceAction, target: Path | None) -> Path | None:
        """Keep, delete or archive (to ``target`` from ``plan``) the source. Returns where it is."""
        try:
            if action == "keep" or src != doc.path or doc.path in self.in_place:
                return src
            if changed(doc, src):
                # A new version replaced the file after its pages were read: archiving or deleting
                # it now would lose content that was never OCRed. It stays; the watcher admits it.
                log.info("%s: %s changed while being processed; left in place for the new version", doc.tag, for_log(src.name))
                return src
            if action == "delete":
                try:
                    src.unlink()
                    fsync_dir(src.parent)
                except FileNotFoundError:
                    pass
                except OSError as e:
                    raise TransientError(f"cannot delete {src}: {e.strerror}") from e
                return None
            assert target is not None
            self.journal.set_final_path(doc.id, target)  # before the move: a crash finds the file
            self._claim(target)
            move_file(src, target)
            log.info("%s archived to %s", doc.tag, for_log(target))
            return target
        finally:
            self.release(target)

    # -- failures ------------------------------------------------------------------------------

    def fail(self, doc: Document, src: Path, reason: str) -> Path | None:
        """Move the source to the failed folder with ``<name>.error.txt``; where it is now (its
        old place if it cannot be moved; None if it is gone)."""
        failed_dir = self.cfg.daemon.failed_dir
        if not os.path.lexists(src):
            return None
        if doc.path in self.in_place:
            return src
        try:
            failed_dir.mkdir(parents=True, exist_ok=True)
            if os.path.realpath(src.parent) == os.path.realpath(failed_dir):
                target = src  # already moved there before a crash
            else:
                target = unique_path(failed_dir, src.name)
                self.journal.set_final_path(doc.id, target)
                move_file(src, target)
            note = (
                f"ocr-daemon could not process this file.\n\nReason: {reason}\n\n"
                f"Original location: {display(doc.path)}\nInbox: {doc.inbox}\nSHA-256: {doc.sha256}\n"
                f"Attempts: {doc.attempts}\nWhen: {datetime.now().astimezone().isoformat(timespec='seconds')}\n\n"
                f"To try again: ocr-daemon requeue '{display(target)}'\n"
            )
            atomic_write(failed_dir / error_note_name(target.name), note.encode("utf-8"))
            return target
        except (TransientError, OSError) as e:
            log.error("%s: cannot move to the failed folder (%s); the file stays where it is", doc.tag, for_log(str(e)))
            return src


def restore(journal: Journal, row: JournalRow) -> tuple[bool, str]:
    """``requeue`` of one row: if its source sits in the failed (or any other) folder it was
    moved to, put it back at its inbox path and remove the error note; then one journal
    transition (``Journal.requeue_row``, by the row's id) queues that row with the file as it
    is now. The hash is taken before the move and the transition follows it at once, so a
    running daemon's watcher -- which waits ``stability_delay`` for the file -- finds the row
    queued for exactly that file and takes no new document. Returns (queued, message); a source
    that cannot be moved back is read from where it is."""
    orig, now = row.path, row.final_path
    where = now if now is not None and now != orig and os.path.lexists(now) else orig
    try:
        st = os.lstat(where)
        digest = sha256_file(where)
    except OSError as e:
        return False, f"doc-{row.id}: {for_log(where)}: cannot read the file ({e.strerror}); not queued"
    back, msg = where, ""
    if where != orig and not os.path.lexists(orig):
        try:
            move_file(where, orig)
            back = orig
            err = where.parent / error_note_name(where.name)
            if err.exists():
                err.unlink()
        except (TransientError, OSError) as e:  # keep processing it from where it is
            msg = f"{for_log(where)}: cannot move back to {for_log(orig)} ({e}); it will be read from where it is"
    why = journal.requeue_row(row.id, path=back, size=st.st_size, mtime=st.st_mtime, sha256=digest,
                              expect=row.state.value)
    if why is not None:
        return False, f"doc-{row.id}: {why}"
    return True, msg


def changed(doc: Document, src: Path) -> bool:
    """True if the file at ``src`` is no longer the version the journal admitted (size or mtime
    differ: replaced by rename, rewritten in place). A vanished file is not "changed"."""
    try:
        st = os.lstat(src)
    except OSError:
        return False
    return (st.st_size, st.st_mtime) != (doc.size, doc.mtime)


def same_inode(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
