"""A document's way through the journal's states: admitted, claimed, planned, finished, failed,
put back, requeued -- what the intake, the work queue, the pipeline and ``requeue`` change in a
document's row (its pages are ``pagerecords``', the journal's own state ``upkeep``'s).

Contract:
- Every state change is one committed transaction (``_tx``): it happens whole or not at all,
  and survives ``kill -9`` once the call returns.
- ``admit()`` is the only way a file enters: it decides, by path+size+mtime and sha256, whether the
  file is new (-> ``queued``), already done (-> ignored), or the same content as an earlier done
  document under another name (-> ``duplicate`` or ``queued``, by ``daemon.duplicates``). A link,
  special or hard-linked file is never opened: its ``sha256`` is ``NOT_READ``, as is that of a
  file that could not be read (``admit_unreadable``, recorded in ``processing`` to be failed).
- ``claim()`` moves one ``queued`` row to ``processing`` atomically, so two workers never take the
  same document. ``recover()`` at start puts rows left in ``processing`` by a crash back to
  ``queued``.
- ``set_planned`` and the final states record the document's output names in ``outputs``
  (``add_outputs``: never taken as input, ``Lookups.is_output``). A final state (done, duplicate,
  failed, superseded) drops the document's page records in the same transaction: it will not
  resume.
- ``requeue`` / ``requeue_row`` / ``move_source``: ``ocr-daemon requeue`` and the failed folder.
- Statements beside a path or sha256 name their index (``INDEXED BY``; ``pgsql.dml`` drops it for
  PostgreSQL): tests/integration/test_journal_plans.py checks their plans.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from collections.abc import Collection, Iterable
from pathlib import Path

from daemon.fsio import sha256_file
from daemon.journal.base import JournalBase
from daemon.journal.pagerecords import drop_pages
from daemon.journal.rows import Admission, AdmitAction, _doc, _dump_paths, db_path
from daemon.models import DocState, Document

#: ``sha256`` of a link, special or hard-linked file: never opened, so never hashed.
NOT_READ = "not-read"


def add_outputs(db: sqlite3.Connection, doc_id: int, paths: Iterable[Path]) -> None:
    """Record ``paths`` as outputs of ``doc_id`` (``is_output``: never taken as input)."""
    for p in paths:
        db.execute("INSERT OR REPLACE INTO outputs(path, doc_id) VALUES (?,?)", (db_path(p), doc_id))


class StateChanges(JournalBase):
    """A document's state changes (module contract); part of ``store.Journal``."""

    def admit(self, path: Path, inbox: str, *, duplicates: str = "link") -> Admission:
        """Record a stable file. Hashes it only when path+size+mtime are not already known."""
        # lstat, and no hashing of links, special files or hard-linked files: their content is
        # outside the inbox (or a FIFO that would block); the pipeline refuses them unread.
        st = os.lstat(path)
        spath = db_path(path)
        db = self._conn()
        row = db.execute(
            "SELECT * FROM documents WHERE path=? AND size=? AND mtime=? ORDER BY id DESC LIMIT 1",
            (spath, st.st_size, st.st_mtime),
        ).fetchone()
        if row is not None and row["state"] in (DocState.QUEUED, DocState.PROCESSING, DocState.DONE, DocState.DUPLICATE):
            return Admission(AdmitAction.KNOWN, _doc(row))
        if row is not None and row["state"] == DocState.FAILED:
            # A failed file still in the inbox (e.g. failed folder unwritable) is not retried
            # automatically: ``ocr-daemon requeue`` does that on purpose.
            return Admission(AdmitAction.KNOWN, _doc(row))
        plain = stat.S_ISREG(st.st_mode) and st.st_nlink == 1
        digest = sha256_file(path) if plain else NOT_READ
        now = time.time()
        with self._tx() as db:
            same = db.execute(
                "SELECT * FROM documents INDEXED BY documents_path WHERE path=? AND sha256=? AND state IN ('done','queued','processing','duplicate')"
                " ORDER BY id DESC LIMIT 1",
                (spath, digest),
            ).fetchone()
            if same is not None and (same["final_path"] in (None, spath) or same["state"] != "done"):
                # Same path, same content, only mtime/size metadata changed (touch, copy -p), and
                # the source was kept there: already handled -- refresh the stat so the next
                # rescan is cheap. (A source that was archived away and is dropped again under
                # the same name is a new drop: it falls through to the duplicate check below.)
                db.execute("UPDATE documents SET size=?, mtime=?, updated=? WHERE id=?", (st.st_size, st.st_mtime, now, same["id"]))
                return Admission(AdmitAction.KNOWN, _doc(same))
            earlier = db.execute(
                "SELECT * FROM documents INDEXED BY documents_sha WHERE sha256=? AND state='done' ORDER BY id LIMIT 1", (digest,)
            ).fetchone()
            # Duplicates are queued too: the pipeline links them to the earlier result (no OCR)
            # and applies their route's source action, then marks them ``duplicate``.
            state = DocState.QUEUED
            dup_of = None
            if earlier is not None and duplicates == "link":
                dup_of = int(earlier["id"])
            cur = db.execute(
                "INSERT INTO documents(path, inbox, size, mtime, sha256, state, duplicate_of, created, updated)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (spath, inbox, st.st_size, st.st_mtime, digest, state.value, dup_of, now, now),
            )
            rowid = cur.lastrowid
            assert rowid is not None
            new = db.execute("SELECT * FROM documents WHERE id=?", (rowid,)).fetchone()
        return Admission(AdmitAction.DUPLICATE if dup_of else AdmitAction.QUEUED, _doc(new), dup_of)

    def claim(self, doc_id: int) -> Document | None:
        """``queued -> processing`` for one row; None if someone else took it or it is gone."""
        with self._tx() as db:
            row = db.execute("SELECT * FROM documents WHERE id=?", (doc_id,)).fetchone()
            if row is None or row["state"] != DocState.QUEUED:
                return None
            db.execute(
                "UPDATE documents SET state='processing', attempts=attempts+1, started=?, updated=? WHERE id=?",
                (time.time(), time.time(), doc_id),
            )
            row = db.execute("SELECT * FROM documents WHERE id=?", (doc_id,)).fetchone()
        return _doc(row)

    def recover(self, keep: Collection[int] = (), not_before: float = 0.0) -> int:
        """Put rows a crash left in ``processing`` back to ``queued`` -- all but ``keep`` (rows
        workers of this process still hold: after a failed journal write, the others were left
        in ``processing`` by it), not to start before ``not_before``. Returns how many."""
        held = ",".join(str(int(i)) for i in keep)
        with self._tx() as db:
            cur = db.execute(
                "UPDATE documents SET state='queued', not_before=max(not_before, ?), updated=?"
                f" WHERE state='processing' AND id NOT IN ({held})",
                (not_before, time.time()),
            )
            return cur.rowcount

    def set_planned(self, doc_id: int, paths: list[Path]) -> None:
        """Record the output paths this document owns before writing them (crash repeat safety)."""
        with self._tx() as db:
            db.execute("UPDATE documents SET planned=?, updated=? WHERE id=?", (_dump_paths(paths), time.time(), doc_id))
            add_outputs(db, doc_id, paths)

    def finish(
        self,
        doc_id: int,
        *,
        language: str,
        doctype: str,
        route: str,
        pages: int,
        outputs: list[Path],
        final_path: Path | None,
        timings: dict[str, float],
    ) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE documents SET state='done', error=NULL, language=?, doctype=?, route=?, pages=?, outputs=?,"
                " final_path=?, timings=?, updated=? WHERE id=?",
                (
                    language,
                    doctype,
                    route,
                    pages,
                    _dump_paths(outputs),
                    db_path(final_path),
                    json.dumps(timings),
                    time.time(),
                    doc_id,
                ),
            )
            add_outputs(db, doc_id, outputs)
            drop_pages(db, doc_id)

    def supersede(self, doc_id: int, reason: str) -> None:
        """This version was replaced while being processed: final, nothing written for it."""
        with self._tx() as db:
            db.execute("UPDATE documents SET state='superseded', error=?, updated=? WHERE id=?", (reason, time.time(), doc_id))
            drop_pages(db, doc_id)

    def fail(self, doc_id: int, error: str, final_path: Path | None) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE documents SET state='failed', error=?, final_path=?, updated=? WHERE id=?",
                (error, db_path(final_path), time.time(), doc_id),
            )
            drop_pages(db, doc_id)

    def strike(self, doc_id: int) -> int:
        """Count one crash-type failure; returns the new count."""
        with self._tx() as db:
            db.execute("UPDATE documents SET strikes=strikes+1, updated=? WHERE id=?", (time.time(), doc_id))
            row = db.execute("SELECT strikes FROM documents WHERE id=?", (doc_id,)).fetchone()
        return int(row["strikes"]) if row else 0

    def retry_later(self, doc_id: int, error: str, delay: float) -> None:
        """Back to ``queued`` with a not-before time (transient failure)."""
        with self._tx() as db:
            db.execute(
                "UPDATE documents SET state='queued', error=?, not_before=?, updated=? WHERE id=?",
                (error, time.time() + delay, time.time(), doc_id),
            )

    def set_final_path(self, doc_id: int, final_path: Path | None) -> None:
        """Record where the source is about to go (archive/failed) *before* moving it, so a
        crash between the move and ``finish`` finds the file again."""
        with self._tx() as db:
            db.execute("UPDATE documents SET final_path=?, updated=? WHERE id=?", (db_path(final_path), time.time(), doc_id))

    def finish_duplicate(self, doc_id: int, *, outputs: list[Path], final_path: Path | None) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE documents SET state='duplicate', error=NULL, outputs=?, final_path=?, updated=? WHERE id=?",
                (_dump_paths(outputs), db_path(final_path), time.time(), doc_id),
            )
            add_outputs(db, doc_id, outputs)
            drop_pages(db, doc_id)

    def requeue(self, *, failed: bool = False, paths: list[Path] | None = None) -> list[int]:
        """Put failed rows (or the rows of given paths) back to ``queued``. Returns their ids."""
        with self._tx() as db:
            if failed:
                rows = db.execute("SELECT id FROM documents WHERE state='failed'").fetchall()
            else:
                rows = []
                for p in paths or []:
                    rows += db.execute(
                        "SELECT id FROM documents WHERE (path=? OR final_path=?) ORDER BY id DESC LIMIT 1",
                        (db_path(p), db_path(p)),
                    ).fetchall()
            ids = [int(r["id"]) for r in rows]
            for i in ids:
                db.execute(
                    "UPDATE documents SET state='queued', not_before=0, attempts=0, strikes=0, error=NULL, updated=? WHERE id=?", (time.time(), i)
                )
        return ids

    def requeue_row(
        self, doc_id: int, *, path: Path, size: int, mtime: float, sha256: str, expect: str,
    ) -> str | None:
        """``requeue`` of one row as one transition (issue 33): back to ``queued`` with the file it
        will read now -- ``path`` and that file's size, mtime and sha256 -- so the watcher, seeing the
        file come back, recognises the row (admit: KNOWN) instead of taking a new document, and
        the pipeline does not find it "changed". Only if the row is still in ``expect`` state
        and no other row holds that file (path and content) already. Pages recorded for other content are dropped. Returns None when
        queued, else why not."""
        with self._tx() as db:
            row = db.execute("SELECT state, sha256 FROM documents WHERE id=?", (doc_id,)).fetchone()
            if row is None:
                return "not in the journal"
            if row["state"] != expect:
                return f"is {row['state']} now (it was {expect}); left as it is"
            other = db.execute(
                "SELECT id, state FROM documents INDEXED BY documents_path"
                " WHERE id<>? AND path=? AND sha256=? AND state IN ('queued','processing','done','duplicate')",
                (doc_id, db_path(path), sha256),
            ).fetchone()
            if other is not None:
                return f"the file is doc-{other['id']} ({other['state']}) already: the running daemon took it"
            if row["sha256"] != sha256:
                drop_pages(db, doc_id)
            db.execute(
                "UPDATE documents SET state='queued', path=?, size=?, mtime=?, sha256=?, final_path=NULL, not_before=0,"
                " attempts=0, strikes=0, error=NULL, updated=? WHERE id=?",
                (db_path(path), size, mtime, sha256, time.time(), doc_id),
            )
        return None

    def move_source(self, doc_id: int, new_path: Path) -> None:
        """The source file now lives at ``new_path`` (e.g. ``requeue`` of a file in the failed folder)."""
        with self._tx() as db:
            db.execute("UPDATE documents SET path=?, updated=? WHERE id=?", (db_path(new_path), time.time(), doc_id))

    def admit_unreadable(self, path: Path, inbox: str, reason: str) -> Document:
        """A file that could not be read ``daemon.max_attempts`` times: recorded unread (``sha256``
        is ``NOT_READ``) in ``processing``, for the caller to fail it (``Sources.fail``, ``fail``)."""
        st = os.lstat(path)
        now = time.time()
        with self._tx() as db:
            cur = db.execute(
                "INSERT INTO documents(path, inbox, size, mtime, sha256, state, attempts, error, created, updated)"
                " VALUES (?,?,?,?,?,'processing',1,?,?,?)",
                (db_path(path), inbox, st.st_size, st.st_mtime, NOT_READ, reason, now, now),
            )
            row = db.execute("SELECT * FROM documents WHERE id=?", (cur.lastrowid,)).fetchone()
        return _doc(row)
