"""The daemon's hold on its state folder, and the checks made before its journal is used.

Contract:
- ``StateLock(state_dir)``: an exclusive ``fcntl.flock`` on ``<state_dir>/daemon.lock`` and one
  on the state folder itself (a descriptor of the directory: a removed lock file must not let
  a second daemon in; ``check()`` at heartbeat takes a removed or replaced file again), taken
  before the journal is opened (so before its recovery re-queues anything) and held for the
  process's life; the kernel drops it when the process ends, ``kill -9`` included, so it is
  never stale. A second daemon, ``once`` or ``journal rebuild``/``restore`` on the same state
  folder is refused with ``ExitCode.LOCKED`` and a message naming the holder's pid (written in
  the lock file). Commands that only read (``status``) or only queue (``requeue``) take no lock.
- ``open_state(cfg)``: lock -> integrity check (``backup.quick_check``; a damaged journal is a
  ``FatalError(ExitCode.STATE)`` whose message says how to recover) -> open -> the marker check
  -> marker written. ``run`` and ``once`` open the journal only through it. With a shared
  journal (``daemon.journal_url``) it takes the lock and opens ``factory.open_journal``: the
  server's journal has no file here to check, mark or rebuild.
- The marker, ``journal.marker`` beside the journal, holds the journal's id
  (``Journal.identity``) and the highest document id it had (written at open and at a clean
  stop). A journal that is missing, emptied, another one, or behind its marker (an older copy
  put back, rows removed) is noticed at open and filled in from what is on disk
  (``rebuild.from_disk``), with a warning; so is a new journal beside existing outputs (a lost
  state folder). Files already done stay done.
- ``set_aside(journal, why)`` renames a journal and its -wal/-shm to ``<name>.<why>-<time>`` (never
  deleted: a damaged journal may still be wanted); ``-wal``/``-shm`` files without their journal
  are set aside before a new journal is made (SQLite would otherwise replay them into it).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.config import Config
from daemon.errors import ExitCode, FatalError
from daemon.fsio import atomic_write
from daemon.journal import rebuild
from daemon.journal.backup import BACKUP_DIR, backups, quick_check
from daemon.journal.factory import open_journal
from daemon.journal.store import Journal, journal_path

log = logging.getLogger(__name__)

LOCK_NAME = "daemon.lock"
MARKER_NAME = "journal.marker"
SIDE_FILES = ("-wal", "-shm")


class StateLock:
    """See the module contract. ``release()`` (or the process's end) lets go."""

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / LOCK_NAME
        try:
            Path(state_dir).mkdir(parents=True, exist_ok=True)
            self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            if os.geteuid() == 0:  # `sudo ocr-daemon once` first: the file is still the service user's
                owner = os.stat(state_dir)
                if os.fstat(self._fd).st_uid != owner.st_uid:
                    os.fchown(self._fd, owner.st_uid, owner.st_gid)
        except OSError as e:
            raise FatalError(f"cannot use the state folder {state_dir}: {e.strerror}: {self.path}", ExitCode.STATE) from e
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self._fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(self._fd)
            self._fd = None
            raise FatalError(
                f"another ocr-daemon (pid {holder}) is using the state folder {state_dir} (it holds {self.path}); "
                "stop it first, or give this one its own daemon.state_dir",
                ExitCode.LOCKED,
            ) from None
        # The folder itself is locked too: ``rm daemon.lock`` lets a second daemon lock a new
        # file of that name (issue 33), but the folder cannot be deleted under a running daemon
        # (its journal is in it), so its flock is the one that cannot be removed away.
        self._dir_fd: int | None = os.open(state_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(self._dir_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.release()
            raise FatalError(
                f"another ocr-daemon is using the state folder {state_dir} (it holds a lock on the folder itself; "
                f"its {LOCK_NAME} was removed or replaced, so its pid is unknown); stop it first, or give this one "
                "its own daemon.state_dir",
                ExitCode.LOCKED,
            ) from None
        self._write_pid()

    def _write_pid(self) -> None:
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode(), 0)

    def check(self) -> str | None:
        """At heartbeat: None while ``daemon.lock`` is still the file whose lock we hold (same
        inode). Else the file is taken again -- safe, the folder's own lock is still ours, so no
        other daemon can hold the new one -- and the message says what happened; a file that
        cannot be taken again is a ``FatalError`` (the caller stops taking work)."""
        if self._fd is None:
            return None
        held = os.fstat(self._fd)
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino):
                return None
        except FileNotFoundError:
            pass
        old, self._fd = self._fd, None
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._write_pid()
        except OSError as e:
            raise FatalError(f"the state lock {self.path} was removed or replaced and cannot be taken again "
                             f"({e.strerror}); stopping", ExitCode.LOCKED) from e
        finally:
            os.close(old)
        return f"the state lock {self.path} was removed or replaced; taken again (the folder's own lock was held throughout)"

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None
        if getattr(self, "_dir_fd", None) is not None:
            os.close(self._dir_fd)  # type: ignore[arg-type]
            self._dir_fd = None


def open_state(cfg: Config) -> tuple[Journal, StateLock]:
    """The journal of ``cfg``'s state folder, checked, and the lock held on it (module contract)."""
    state = Path(cfg.daemon.state_dir)
    lock = StateLock(state)  # per host, also with a shared journal: one daemon per state folder
    if cfg.daemon.journal_url:  # shared (PostgreSQL): no journal file here to check or mark

        try:
            return open_journal(cfg), lock
        except BaseException:
            lock.release()
            raise
    try:
        path = journal_path(state)
        if os.path.lexists(path):
            problem = quick_check(path)
            if problem is not None:
                raise FatalError(damaged_message(cfg, problem), ExitCode.STATE)
        else:
            set_aside_orphans(path)
        if os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
            raise FatalError(unwritable_message(state, path), ExitCode.STATE)
        journal = Journal(state)
        give_to_state_owner(state, path)
        check_marker(journal, cfg)
    except BaseException:
        lock.release()
        raise
    return journal, lock


def unwritable_message(state: Path, path: Path) -> str:
    try:
        owner = _user(os.stat(path).st_uid)
    except OSError:
        owner = "?"
    return (f"the journal {path} belongs to {owner} and cannot be written by {_user(os.geteuid())} "
            f"(run by another user, e.g. `sudo ocr-daemon once`?); give the state folder back: "
            f"sudo chown -R {_user(os.stat(state).st_uid)}: {state}")


def _user(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def give_to_state_owner(state: Path, path: Path) -> None:
    """Run as root in a state folder that belongs to the service user (``sudo ocr-daemon once``),
    a new journal is the folder owner's, like the lock file; SQLite itself gives its -wal/-shm
    files the owner of the database file when it runs as root."""
    if os.geteuid() != 0:
        return
    try:
        owner, st = os.stat(state), os.stat(path)
        if st.st_uid != owner.st_uid:
            os.chown(path, owner.st_uid, owner.st_gid)
    except OSError as e:
        log.warning("could not give %s to the owner of %s: %s", path, state, e)


def check_marker(journal: Journal, cfg: Config) -> None:
    """Compare the journal with its marker, fill it in from disk where it lost documents, and
    write the marker (see the module contract)."""
    marker = read_marker(journal.state_dir)
    jid, high = journal.identity(), journal.high_water()
    why = None
    if jid is None and marker is not None:
        why = f"the journal {journal.path} is missing or empty, though {MARKER_NAME} says one was in use since {marker.get('since')}"
    elif jid is None:
        why = ""  # a new journal: quietly look for the outputs of a lost state folder
    elif marker is not None and marker.get("journal_id") != jid:
        why = f"the journal {journal.path} is not the one last used here ({MARKER_NAME} names another)"
    elif marker is not None and high < int(marker.get("high_water") or 0):
        why = (f"the journal {journal.path} has documents up to id {high} only, though it had {marker.get('high_water')}"
               " (an older copy put back?)")
    if why is not None:
        rep = rebuild.from_disk(journal, cfg)
        if why or rep.added:
            log.warning("%s: rebuilt from the outputs on disk: %s", why or f"new journal {journal.path}", rep)
    if jid is None:
        jid = uuid.uuid4().hex
        journal.set_identity(jid)
    write_marker(journal, jid)


def read_marker(state_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((Path(state_dir) / MARKER_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:  # unreadable: treated as present, with nothing known
        log.warning("%s unreadable (%s)", Path(state_dir) / MARKER_NAME, e)
        return {}
    return data if isinstance(data, dict) else {}


def write_marker(journal: Journal, jid: str | None = None) -> None:
    """Write (or refresh: the high-water id, at a clean stop) the marker. Never raises: a marker
    that cannot be written (state folder full) is logged; the next start or stop writes it."""
    try:
        jid = jid or journal.identity()
        if jid is None:
            return
        old = read_marker(journal.state_dir) or {}
        since = old.get("since") if old.get("journal_id") == jid else None
        data = {
            "journal_id": jid,
            "since": since or datetime.now().astimezone().isoformat(timespec="seconds"),
            "high_water": journal.high_water(),
            "about": f"ocr-daemon: identifies {journal.path.name} beside it; a journal lost, emptied or replaced is "
                     "noticed at start and rebuilt from the outputs (docs/reliability.md)",
        }
        atomic_write(journal.state_dir / MARKER_NAME, (json.dumps(data, indent=1) + "\n").encode())
    except Exception as e:  # a marker is worth a log line, never a failed start or stop
        log.warning("cannot write %s: %s", journal.state_dir / MARKER_NAME, e)


def set_aside_orphans(path: Path) -> None:
    """-wal/-shm files of a journal ``path`` that is gone: set aside, never replayed into a new one.
    Nothing is done while the journal is there (its -wal holds committed data)."""
    if os.path.lexists(path):
        return
    for side in SIDE_FILES:
        stray = path.with_name(path.name + side)
        if os.path.lexists(stray):
            moved = stray.with_name(f"{stray.name}.orphan-{_stamp()}")
            os.rename(stray, moved)
            log.warning("%s had no journal beside it: set aside as %s", stray, moved.name)


def set_aside(path: Path, why: str) -> Path | None:
    """Rename the journal ``path`` (and its -wal/-shm) to ``<name>.<why>-<time>``; None if absent."""
    if not os.path.lexists(path):
        return None
    stamp = _stamp()
    moved = path.with_name(f"{path.name}.{why}-{stamp}")
    for side in SIDE_FILES:  # the -wal holds committed data: it travels with its journal
        s = path.with_name(path.name + side)
        if os.path.lexists(s):
            os.rename(s, path.with_name(f"{moved.name}{side}"))
    os.rename(path, moved)
    return moved


def damaged_message(cfg: Config, problem: str) -> str:
    """Why the daemon refuses a damaged journal, and the commands that recover it."""
    state = Path(cfg.daemon.state_dir)
    conf = f" --config {cfg.source_path}" if cfg.source_path else ""
    newest = backups(state / BACKUP_DIR)[:1]
    lines = [f"the journal {journal_path(state)} is damaged ({problem}). To recover:"]
    if newest:
        lines.append(f"  ocr-daemon journal restore{conf}   # put the newest automatic backup ({newest[0].name}) back;"
                     " documents finished since are re-added from their outputs")
    lines.append(f"  ocr-daemon journal rebuild{conf}   # a new journal made from the outputs' sidecars")
    lines.append("Either keeps the damaged journal beside the new one; see docs/reliability.md.")
    return "\n".join(lines)


def _stamp() -> str:
    return datetime.now().strftime("%Y%m%dT%H%M%S")
