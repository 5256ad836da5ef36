"""Retention of the daemon's state folder (issue 34 item 4): what a year of documents leaves.

Contract:
- ``prune_raw(state_dir, keep_days)``: removes ``raw/<id>/`` folders (the engine's raw output of a
  finished document, ``service.pipeline._save_raw``) last written more than ``keep_days`` ago;
  ``keep_days`` 0 keeps everything. Returns how many folders went. A folder that cannot be
  removed is left (logged); nothing else under the state folder is touched.
- ``Journal.compact_finished`` (upkeep.py) compacts finished rows older than
  ``daemon.keep_journal_days``: path, size, mtime, sha256, state, outputs and final path stay (the
  file is still known, its content still found as a duplicate, its outputs never taken as input).
- ``vacuum(journal)``: a SQLite journal whose free pages are at least ``VACUUM_FREE`` of its pages
  is vacuumed (a shared PostgreSQL journal is left to the server's autovacuum).
- ``state_size(state_dir, journal)``: the state folder's size by part (journal, raw/, backups/);
  ``run`` records it in the journal's ``meta`` (``STATE_SIZE_KEY``) so ``status`` shows it without
  walking a folder of a million files at every call (the journal file's own size is stat'ed live).
- ``run(cfg, journal)`` does all of it once (the service schedules it every
  ``daemon.maintenance_interval`` s) and never raises for a filesystem or journal problem (logged:
  retention only removes what is no longer needed, so it can always wait for the next run).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

RAW_DIR = "raw"
BACKUP_DIR = "backups"
#: Vacuum a SQLite journal once this share of its pages is free (rows compacted or deleted).
VACUUM_FREE = 0.2
#: The ``meta`` key holding the state folder's size as of the last ``run`` (JSON).
STATE_SIZE_KEY = "state_size"
DAY = 86400.0


def prune_raw(state_dir: Path, keep_days: float, now: float | None = None) -> int:
    """Remove ``raw/<id>/`` folders last written more than ``keep_days`` ago; returns how many."""
    if keep_days <= 0:
        return 0
    cutoff = (time.time() if now is None else now) - keep_days * DAY
    removed = 0
    try:
        it = os.scandir(Path(state_dir) / RAW_DIR)
    except FileNotFoundError:
        return 0
    with it:
        for entry in it:
            try:
                if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                    continue
                shutil.rmtree(entry.path)
                removed += 1
            except OSError as e:
                log.warning("retention: cannot remove %s: %s", entry.path, e.strerror or e)
    return removed


def _tree_bytes(folder: Path) -> tuple[int, int]:
    """(bytes on disk, entries) under ``folder``."""
    total = n = 0
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
                n += 1
            except OSError:
                continue
    return total, n


def journal_bytes(journal: Any) -> int | None:
    """The SQLite journal's files (main, WAL) on disk; None for a shared journal."""
    if getattr(journal, "shared", False):
        return None
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += os.stat(f"{journal.path}{suffix}").st_blocks * 512
        except OSError:
            continue
    return total


def state_size(state_dir: Path, journal: Any) -> dict[str, Any]:
    """The state folder's size by part (bytes on disk), and when it was measured."""
    raw_bytes, raw_entries = _tree_bytes(Path(state_dir) / RAW_DIR)
    backup_bytes, _ = _tree_bytes(Path(state_dir) / BACKUP_DIR)
    return {"measured": round(time.time(), 3), "journal_bytes": journal_bytes(journal), "raw_bytes": raw_bytes,
            "raw_entries": raw_entries, "backups_bytes": backup_bytes}


def vacuum(journal: Any) -> bool:
    """VACUUM a SQLite journal with at least ``VACUUM_FREE`` free pages; True if it did."""
    if getattr(journal, "shared", False):
        return False
    db = journal._conn()
    pages = int(db.execute("PRAGMA page_count").fetchone()[0])
    free = int(db.execute("PRAGMA freelist_count").fetchone()[0])
    if pages == 0 or free < VACUUM_FREE * pages:
        return False
    db.execute("VACUUM")
    return True


def recorded_size(journal: Any) -> dict[str, Any] | None:
    """The state folder's size as the last ``run`` recorded it, the journal's own bytes live."""
    try:
        row = journal._conn().execute("SELECT value FROM meta WHERE key=?", (STATE_SIZE_KEY,)).fetchone()
    except sqlite3.Error:
        return None
    out: dict[str, Any] = json.loads(row["value"]) if row else {}
    live = journal_bytes(journal)
    if live is not None:
        out["journal_bytes"] = live
    return out or None


def run(cfg: Any, journal: Any) -> dict[str, Any]:
    """One retention run (module contract); returns what it did."""
    d = cfg.daemon
    done: dict[str, Any] = {}
    try:
        done["raw_pruned"] = prune_raw(d.state_dir, d.keep_raw_days)
        if d.keep_journal_days > 0:
            done["rows_compacted"] = journal.compact_finished(time.time() - d.keep_journal_days * DAY)
        done["vacuumed"] = vacuum(journal)
        size = state_size(d.state_dir, journal)
        with journal._tx() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (STATE_SIZE_KEY, json.dumps(size)))
        done["state_size"] = size
    except (OSError, sqlite3.Error) as e:
        log.warning("retention run stopped: %s (tried again at the next run)", e)
        done["error"] = str(e)
    log.info("retention: %s", ", ".join(f"{k} {v}" for k, v in done.items() if k != "state_size"))
    return done
