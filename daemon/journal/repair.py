"""Repairing the journal with the daemon stopped (docs/reliability.md): what ``ocr-daemon journal
rebuild`` and ``ocr-daemon journal restore`` do (their command line: ``daemon.commands.journal``).

Contract (``repair(config, action, backup_file, say)``):
- Both take the state lock (``guard.StateLock``): refused with exit code 5 while a daemon (or
  ``once``) uses the state folder.
- ``rebuild``: a damaged journal is set aside (``journal.sqlite3.damaged-<time>``, kept) and a
  new one made; a missing one is made; then the documents the outputs' sidecars and the failed
  folder's notes show are added (``rebuild.from_disk``; idempotent: running it on a healthy
  journal adds only what it lacks).
- ``restore``: the newest automatic backup (or ``--backup FILE``), checked first, replaces the
  journal (the one replaced is set aside, kept); then the documents finished since the backup are
  added from their sidecars, so they are not done twice. A damaged backup is refused, naming
  the others.
- A shared journal (``daemon.journal_url``, PostgreSQL) is refused with a sentence (``RepairError``, exit 2):
  pg_dump/pg_restore back it up and put it back (``SHARED_REFUSAL`` says why not here).
- Both check the whole file (no time limit: an operator is waiting for exactly this) and tell
  ``say`` what they did; ``RepairError`` (exit 4) when there is nothing usable to restore.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

from daemon.config import load_config
from daemon.errors import ExitCode
from daemon.journal import backup, guard, rebuild
from daemon.journal.store import Journal, journal_path

#: ``journal rebuild|restore`` with a shared journal. Refused, not done: the state lock guards one
#: host's daemon only, so rebuilding or replacing a journal that daemons on other hosts may be
#: writing cannot be made safe from here; PostgreSQL's own tools back it up and put it back.
SHARED_REFUSAL = (
    "ocr-daemon journal {action}: this config's journal is shared in PostgreSQL (daemon.journal_url), and "
    "journal rebuild/restore work on the SQLite journal of one state folder only: nothing was done. Back the "
    "shared journal up with pg_dump and put it back with pg_restore, with every daemon of it stopped "
    "(docs/scaling.md)."
)


class RepairError(Exception):
    """Nothing was repaired: the message says why and what to do instead; ``exit_code`` is the
    command's (``CONFIG`` for a shared journal, ``STATE`` when there is nothing usable to restore)."""

    def __init__(self, message: str, exit_code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def repair(config: Path, action: str, backup_file: Path | None, say: Callable[[str], None]) -> None:
    """``journal rebuild|restore`` (the module contract) for the rules file ``config``; each thing
    done is told to ``say`` as it is done. Raises ``RepairError`` when nothing could be done, and
    ``ConfigError`` / ``FatalError`` (another process holds the state folder) as the loaders do."""
    cfg = load_config(config)
    if cfg.daemon.journal_url:
        raise RepairError(SHARED_REFUSAL.format(action=action), ExitCode.CONFIG)
    state = cfg.daemon.state_dir
    lock = guard.StateLock(state)
    try:
        path = journal_path(state)
        if action == "restore":
            found = backup.backups(state / backup.BACKUP_DIR)
            src = Path(os.path.abspath(backup_file)) if backup_file else (found[0] if found else None)
            if src is None or not src.is_file():
                where = src if src is not None else state / backup.BACKUP_DIR
                raise RepairError(f"no backup at {where}: nothing to restore (ocr-daemon journal rebuild makes a "
                                  "journal from the outputs)", ExitCode.STATE)
            problem = backup.quick_check(src, budget=float("inf"))
            if problem is not None:
                others = ", ".join(b.name for b in found if b != src) or "none"
                raise RepairError(f"{src} is damaged too ({problem}); try an older one with --backup (there: {others}), "
                                  "or ocr-daemon journal rebuild", ExitCode.STATE)
            aside = guard.set_aside(path, "replaced")
            guard.set_aside_orphans(path)
            backup.restore_backup(src, path)
            say(f"restored {src}" + (f"; the journal it replaced is kept as {aside}" if aside else ""))
        elif os.path.lexists(path) and (problem := backup.quick_check(path, budget=float("inf"))) is not None:
            say(f"the journal is damaged ({problem}): kept as {guard.set_aside(path, 'damaged')}; making a new one")
        else:
            guard.set_aside_orphans(path)
        journal = Journal(state)
        try:
            rep = rebuild.from_disk(journal, cfg)
            if journal.identity() is None:
                journal.set_identity(uuid.uuid4().hex)
            guard.write_marker(journal)
        finally:
            journal.close()
        say(f"journal {path}: {rep}")
    finally:
        lock.release()
