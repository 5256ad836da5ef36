"""The journal's own state: a write check, its identity, documents rebuilt from disk, old rows
compacted -- what ``guard``, ``health``, ``rebuild`` and ``retention`` ask of the journal.

Contract:
- ``check_writable``: one small real write (``health``: is the journal writable again?).
- ``identity`` / ``set_identity`` / ``high_water``: the id given to the journal when it was made and
  its highest document id (``guard``: is this the journal the daemon was using, did it lose rows?).
- ``add_rebuilt``: finished documents found on disk (``rebuild``: sidecars, failed-folder notes)
  that the journal lacks, in one transaction; documents without an id in batches of
  ``KNOWN_CHUNK`` (``_add_rebuilt_new``).
- ``compact_finished``: ``retention``'s compaction of old finished rows (still known, still a
  duplicate's original, their outputs still never taken as input).
"""

from __future__ import annotations

import sqlite3
import time

from daemon.journal.base import JournalBase
from daemon.journal.lookups import KNOWN_CHUNK
from daemon.journal.pagerecords import drop_pages
from daemon.journal.rows import RebuiltDoc, _dump_paths, db_path
from daemon.journal.states import add_outputs


class Upkeep(JournalBase):
    """The journal's own state (module contract); part of ``store.Journal``."""

    def check_writable(self) -> None:
        """One small real write (a timestamp in ``meta``); raises like any failed write."""
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('write_check', ?)", (str(time.time()),))

    def identity(self) -> str | None:
        """The id given to this journal when it was made (``guard`` keeps a copy beside it: a
        journal without it, or with another, is not the one the daemon was using)."""
        row = self._conn().execute("SELECT value FROM meta WHERE key='journal_id'").fetchone()
        return str(row["value"]) if row else None

    def high_water(self) -> int:
        """The highest document id in the journal (0 for none): one lower than its marker
        recorded has lost rows (an older copy put back, rows deleted)."""
        row = self._conn().execute("SELECT max(id) AS n FROM documents").fetchone()
        return int(row["n"] or 0) if row else 0

    def set_identity(self, value: str) -> None:
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('journal_id', ?)", (value,))

    def add_rebuilt(self, docs: list[RebuiltDoc]) -> int:
        """Record finished documents found on disk (``daemon.journal.rebuild``: sidecars, failed
        folder notes) that this journal lacks, in one transaction (one sync for the batch: 185
        documents/s one by one, bench/bench_journal_state.py). Returns how many were added; one
        the journal has finished already (same path and content) is left alone. ``mtime`` is
        stored as -1, so a file still in an inbox is hashed once at its next admission and found
        done by its content."""
        added, now = 0, time.time()
        with self._tx() as db:
            added += self._add_rebuilt_new(db, [d for d in docs if not d.id], now)
            for doc in docs:
                if not doc.id:
                    continue
                spath = db_path(doc.path)
                if db.execute(
                    "SELECT 1 FROM documents INDEXED BY documents_path WHERE path=? AND sha256=? AND state IN ('done','duplicate','failed')",
                    (spath, doc.sha256),
                ).fetchone():
                    continue
                cols = (doc.state.value, doc.error, doc.language, doc.doctype, doc.route, doc.pages,
                        _dump_paths(list(doc.outputs)), db_path(doc.final_path), doc.duplicate_of)
                same = db.execute("SELECT path, sha256 FROM documents WHERE id=?", (doc.id,)).fetchone() if doc.id else None
                if doc.id and same is not None and (same["path"], same["sha256"]) == (spath, doc.sha256):
                    # unfinished in this journal (a restored backup) but finished on disk since
                    db.execute(
                        "UPDATE documents SET state=?, error=?, language=?, doctype=?, route=?, pages=?, outputs=?,"
                        " final_path=?, duplicate_of=?, updated=? WHERE id=?", (*cols, now, doc.id),
                    )
                    drop_pages(db, doc.id)
                    new_id: int | None = doc.id
                else:
                    keep_id = bool(doc.id and same is None)  # its old id where free (raw/<id> matches)
                    cur = db.execute(
                        f"INSERT INTO documents({'id, ' if keep_id else ''}path, inbox, size, mtime, sha256, state, error,"
                        " language, doctype, route, pages, outputs, final_path, duplicate_of, created, updated)"
                        f" VALUES ({'?,' if keep_id else ''}?,?,?,-1,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (*((doc.id,) if keep_id else ()), spath, doc.inbox, doc.size, doc.sha256, *cols, doc.created, now),
                    )
                    new_id = doc.id if keep_id else cur.lastrowid
                if doc.outputs and new_id is not None:  # is_output: its outputs are never taken as input
                    add_outputs(db, int(new_id), doc.outputs)
                added += 1
        return added

    def _add_rebuilt_new(self, db: sqlite3.Connection, docs: list[RebuiltDoc], now: float) -> int:
        """``add_rebuilt`` of documents without an id, in batches: one lookup of the finished ones
        per ``KNOWN_CHUNK`` paths, the rows and their outputs inserted with ``executemany`` (a
        journal rebuilt from 100,000 sidecars, or the scale bench's: issue 34)."""
        added = 0
        for i in range(0, len(docs), KNOWN_CHUNK):
            chunk = docs[i:i + KNOWN_CHUNK]
            keys = [str(db_path(d.path)) for d in chunk]
            marks = ",".join("?" * len(keys))
            have = {(r["path"], r["sha256"]) for r in db.execute(
                f"SELECT path, sha256 FROM documents INDEXED BY documents_path WHERE path IN ({marks})"
                " AND state IN ('done','duplicate','failed')",
                keys).fetchall()}
            new = []
            for key, d in zip(keys, chunk, strict=True):
                if (key, d.sha256) not in have:
                    have.add((key, d.sha256))
                    new.append((key, d))
            if not new:
                continue
            db.executemany(
                "INSERT INTO documents(path, inbox, size, mtime, sha256, state, error, language, doctype, route, pages,"
                " outputs, final_path, duplicate_of, created, updated) VALUES (?,?,?,-1,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(key, d.inbox, d.size, d.sha256, d.state.value, d.error, d.language, d.doctype, d.route, d.pages,
                  _dump_paths(list(d.outputs)), db_path(d.final_path), d.duplicate_of, d.created, now) for key, d in new])
            ids = {(r["path"], r["sha256"]): int(r["id"]) for r in db.execute(
                f"SELECT id, path, sha256 FROM documents WHERE path IN ({marks}) ORDER BY id", keys).fetchall()}
            outs = [(db_path(o), ids[(key, d.sha256)]) for key, d in new for o in d.outputs]
            if outs:
                db.executemany("INSERT OR REPLACE INTO outputs(path, doc_id) VALUES (?,?)", outs)
            added += len(new)
        return added

    def compact_finished(self, before: float, batch: int = 10_000) -> int:
        """Compact rows finished (done, duplicate) before ``before``: their timings, planned names
        and error dropped; path, size, mtime, sha256, outputs and final path kept, so the file is
        still known, its content still found as a duplicate and its outputs never taken as input
        (``retention``). ``batch`` rows per transaction; returns how many."""
        n = 0
        for state in ("done", "duplicate"):
            while True:
                with self._tx() as db:
                    cur = db.execute(
                        "UPDATE documents SET timings=NULL, planned=NULL, error=NULL WHERE id IN (SELECT id FROM documents"
                        " WHERE state=? AND updated<? AND (timings IS NOT NULL OR planned IS NOT NULL OR error IS NOT NULL)"
                        " LIMIT ?)", (state, before, batch),
                    )
                    n += max(0, cur.rowcount)
                if cur.rowcount < batch:
                    break
        return n
