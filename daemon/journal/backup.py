"""Online backups of the journal, and the integrity check they and the start-up share.

Contract:
- ``make_backup(journal, folder, keep)`` copies the live journal with SQLite's online backup API
  (``sqlite3.Connection.backup``: a consistent snapshot under one read transaction; in WAL mode
  the daemon's writers go on meanwhile), checks the copy (``quick_check``), then publishes it
  atomically as ``journal-<UTC time>.sqlite3`` and removes the oldest beyond ``keep``. A copy
  that fails its check is deleted and ``JournalDamaged`` raised: a damaged journal never
  rotates good backups out. A copy that cannot be written (disk full) is removed and the error
  raised; the backups already there are left as they are.
- ``quick_check(path, budget)`` runs ``PRAGMA quick_check`` (the page and b-tree structure of
  every table and index, without the cross-check of index entries that ``integrity_check``
  adds) and gives up -- passing, with a warning -- once ``budget`` seconds are spent, so a very
  large journal cannot hold the start up for long. ``QUICK_CHECK_BUDGET`` cites the measurement.
- ``restore_backup(backup, journal)`` puts a backup in the journal's place (the caller holds the
  state lock and has set the old journal aside); ``backups(folder)`` lists them, newest first.
- ``scheduled(...)`` is the daemon's periodic job (``first_due`` its first time): it never raises;
  it skips while the journal cannot be written, and reports a copy that fails its check to the
  journal's health (the daemon then says "damaged" and is not ready).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from daemon.fsio import fsync_dir

log = logging.getLogger(__name__)

#: Seconds the start-up ``quick_check`` may take before it is cut short (and passed, with a
#: warning). Measured with bench/bench_journal_state.py on the shared 2-core dev VM
#: (bench/RESULTS.md): 100k finished documents (a 74 MB journal) 0.42 s (median 0.47 s), 1M
#: (738 MB) 1.8 s (median 2.2 s) -- about 3 s per GB -- so 30 s covers a ~10 GB journal (over
#: ten million documents) and bounds the start of anything larger.
QUICK_CHECK_BUDGET = 30.0

#: Name of the backups folder inside the state folder, and of each backup in it.
BACKUP_DIR = "backups"
BACKUP_PREFIX = "journal-"
BACKUP_SUFFIX = ".sqlite3"


class JournalDamaged(Exception):
    """The journal (or a copy of it) fails ``quick_check``; ``str()`` says what is wrong."""


def quick_check(path: Path, budget: float = QUICK_CHECK_BUDGET) -> str | None:
    """None if the SQLite file at ``path`` passes ``PRAGMA quick_check`` (or the check ran out of
    ``budget`` seconds: logged), else what is wrong (SQLite's first messages)."""
    try:
        db = sqlite3.connect(path, timeout=30, isolation_level=None)
    except sqlite3.Error as e:
        return str(e)
    deadline = time.monotonic() + budget
    # SQLite calls this every 10k virtual-machine steps (~1 ms); non-zero interrupts the check
    db.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        found = [str(r[0]) for r in db.execute("PRAGMA quick_check(5)").fetchall()]
    except sqlite3.Error as e:
        if getattr(e, "sqlite_errorcode", None) == sqlite3.SQLITE_INTERRUPT:
            log.warning("integrity check of %s stopped after %.0f s (a very large journal): started unchecked", path, budget)
            return None
        return str(e)
    finally:
        db.close()
    return None if found == ["ok"] else "; ".join(found)


def backups(folder: Path) -> list[Path]:
    """The backups in ``folder``, newest first (their names sort by time)."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(BACKUP_PREFIX) and n.endswith(BACKUP_SUFFIX)]
    except OSError:
        return []
    return [folder / n for n in sorted(names, reverse=True)]


def make_backup(journal: Path, folder: Path, keep: int) -> Path:
    """Back ``journal`` up into ``folder``, keeping the newest ``keep`` backups (see the module
    contract). Returns the new backup; raises ``JournalDamaged``, ``OSError`` or ``sqlite3.Error``."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{BACKUP_PREFIX}{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}{BACKUP_SUFFIX}"
    tmp = folder / f".{name}.tmp"
    try:
        src = sqlite3.connect(journal, timeout=30)
        try:
            dst = sqlite3.connect(tmp)
            try:
                src.backup(dst)  # all pages in one step: one consistent snapshot
            finally:
                dst.close()
        finally:
            src.close()
        problem = quick_check(tmp)
        if problem is not None:
            raise JournalDamaged(problem)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.rename(tmp, folder / name)
        fsync_dir(folder)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    for old in backups(folder)[keep:]:
        with contextlib.suppress(OSError):
            old.unlink()
    return folder / name


def restore_backup(backup: Path, journal: Path) -> None:
    """Copy ``backup`` to ``journal`` (not there: the caller set it aside) through a temp file,
    so a journal is whole or absent. A backup is a complete database (no -wal file)."""
    tmp = journal.with_name(f".{journal.name}.restore-tmp")
    try:
        src = sqlite3.connect(f"{backup.absolute().as_uri()}?mode=ro", uri=True)
        try:
            dst = sqlite3.connect(tmp)
            try:
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.rename(tmp, journal)
        fsync_dir(journal.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def first_due(folder: Path, interval: float) -> datetime:
    """When the daemon's first backup is due: ``interval`` after the newest one there is (soon
    after the start if none is that recent)."""
    newest = backups(folder)[:1]
    try:
        last = newest[0].stat().st_mtime if newest else 0.0
    except OSError:
        last = 0.0
    return datetime.now() + timedelta(seconds=max(5.0, last + interval - time.time()))


def scheduled(journal: Path, folder: Path, keep: int, health: Any) -> None:
    """One periodic backup (``health``: the daemon's ``JournalHealth``). Logs; never raises."""
    if not health.writable:
        log.warning("journal backup skipped: the journal cannot be written now")
        return
    t0 = time.monotonic()
    try:
        made = make_backup(journal, folder, keep)
    except JournalDamaged as e:
        log.error("journal backup: the copy fails its check (%s); the older backups are kept", e)
        health.failed(sqlite3.DatabaseError(f"a backup of it fails its check: {e}"), damaged=True)
    except (OSError, sqlite3.Error) as e:
        log.warning("journal backup failed (%s); the older backups are kept", e)
    else:
        log.info("journal backed up to %s in %.2f s", made, time.monotonic() - t0)
