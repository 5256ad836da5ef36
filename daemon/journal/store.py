"""The durable journal: one SQLite row per document (WAL mode, in the state dir).

Contract:
- Every state change is one committed transaction; the journal survives ``kill -9`` at any point
  (SQLite WAL + ``synchronous=FULL`` at commit points that matter).
- ``admit()`` is the only way a file enters: it decides, by path+size+mtime and sha256, whether the
  file is new (-> ``queued``), already done (-> ignored), or the same content as an earlier done
  document under another name (-> ``duplicate`` or ``queued``, by ``daemon.duplicates``).
- ``claim()`` moves one ``queued`` row to ``processing`` atomically, so two workers never take the
  same document. ``recover()`` at start puts rows left in ``processing`` by a crash back to
  ``queued``.
- Thread-safe: one connection per thread (SQLite connections are not shared across threads), and
  ``BEGIN IMMEDIATE`` for read-modify-write transactions.
- Rows come out as ``JournalRow`` (frozen; paths, states and JSON columns decoded), never as
  ``sqlite3.Row``/dicts.
- Pages: ``record_page()`` commits each finished page of a document in processing (its raw
  engine text and page facts) as it completes; ``done_pages()`` gives them back so a document
  interrupted by a crash, ``kill -9``, restart or drain resumes from there. They are kept only
  while the document is unfinished: a final state (done, duplicate, failed, superseded) drops
  them in the same transaction. A page is reused only under the same ``key`` (engine and render
  settings): a page read by another engine or at another size is read again.
- Progress: ``progress()`` (read-only, any process, e.g. ``ocr-daemon status`` or the HTTP
  endpoint) gives one ``models.Progress`` per document in processing: pages done/total, pages/s of
  this attempt, ETA.
- Schema versions: a journal written by an older daemon is migrated on open (columns added, the
  pages table created; nothing removed), so it keeps working; a read-only open of an old journal
  works too (no pages: no progress).
- Write failures: ``on_write_error`` hears of every write that failed because the journal cannot
  be written (full, I/O error, damaged...), and a failed transaction never leaves the thread's
  connection inside it (``_tx``): once the fault is gone, the next write works.
- Lookups: every statement the intake and the pipeline run is an index search (``path``,
  ``final_path``, ``sha256``, ``state``, the id; tests/integration/test_journal_plans.py checks
  their plans on SQLite and PostgreSQL); a rescan asks ``known_unchanged`` and ``outputs_among``
  about ``KNOWN_CHUNK`` files per query (issue 34).
- A million rows slow nothing (issue 34 item 2): nothing is loaded per document -- ``is_output``
  is an index search of the ``outputs`` table --; ``counts`` reads ``state_counts`` (kept by
  triggers); the work queue takes the next ids (``queued(limit)``); ``status_summary``'s lists
  are index ranges of the in-flight and recent rows (partial indexes where a condition, not a
  state, picks them). SQLite's planner has no statistics: beside a path, sha256 or final path it
  may pick the ``state`` index, a range of every done row (the per-document CPU that grew with
  the journal, issue 34); those statements name their index (``INDEXED BY``; ``pgsql.dml`` drops
  it for PostgreSQL, whose planner has statistics). ``compact_finished`` is ``retention``'s.
- State upkeep (``daemon.journal.guard``, ``rebuild``, ``health``): ``check_writable``, the journal's
  ``identity``, ``add_rebuilt`` (documents found on disk), ``admit_unreadable``.

Over ~500 lines on purpose: every statement that reads or changes the journal's rows is here
(but the batched lookups, counts and upkeep of issue 34, in ``lookups.py``, its base class),
beside the transactions and migration that keep them consistent. The tables themselves (DDL)
are in ``schema.py``, the row types and their column codecs in ``rows.py`` (re-exported here).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from daemon.errors import ExitCode, FatalError
from daemon.fsio import sha256_file
from daemon.journal.lookups import Lookups
from daemon.journal.rows import (
    WAITING_FOR_SPACE,
    Admission,
    AdmitAction,
    JournalRow,
    RebuiltDoc,
    _doc,
    _dump_paths,
    _row,
    db_path,
    from_db_path,
    status_summary,
)
from daemon.journal.schema import (
    SCHEMA,
    SCHEMA_V2,
    SCHEMA_V3,
    SCHEMA_VERSION,
    V2_COLUMNS,
    V3_FILL,
    write_problem,
)
from daemon.models import DocState, Document, Progress
from daemon.pagerecord import PageResult

__all__ = [
    "NOT_READ", "SCHEMA", "Admission", "AdmitAction", "Journal", "JournalRow", "RebuiltDoc", "db_path",
    "from_db_path", "journal_exists", "journal_path", "sha256_file", "status_summary",
]

log = logging.getLogger(__name__)

#: ``sha256`` of a link, special or hard-linked file: never opened, so never hashed.
NOT_READ = "not-read"

#: States in which a document's page records are dropped (it will not resume).
FINAL_STATES = (DocState.DONE, DocState.DUPLICATE, DocState.FAILED, DocState.SUPERSEDED)




def journal_path(state_dir: Path) -> Path:
    """Where the journal of ``state_dir`` lives (whether or not it exists yet)."""
    return Path(state_dir) / "journal.sqlite3"


def journal_exists(state_dir: Path) -> bool:
    """Whether ``state_dir`` holds a journal; a folder this user cannot look into is a ``FatalError``
    (e.g. the service's 0750 state folder, read by another user)."""
    path = journal_path(state_dir)
    try:
        return path.is_file()
    except OSError as e:
        raise FatalError(f"cannot read the journal {path}: {e}", ExitCode.STATE) from e


class Journal(Lookups):
    """SQLite journal. Open once per process; methods may be called from any thread.

    ``readonly=True`` (for ``ocr-daemon status``) opens an existing journal for reading only: it
    creates no folder, no schema and no journal file (a missing one is a ``FatalError``), and any
    write raises ``sqlite3.OperationalError``.
    """

    def __init__(self, state_dir: Path, *, readonly: bool = False) -> None:
        self.state_dir = Path(state_dir)
        self.path = journal_path(self.state_dir)
        self.readonly = readonly
        self._local = threading.local()
        #: Called (on the failing thread) with the error of every write that fails because the
        #: journal cannot be written (not for constraint or usage errors): the daemon's
        #: ``JournalHealth`` turns it into "not ready" until a test write succeeds again.
        self.on_write_error: Callable[[sqlite3.Error], None] | None = None
        try:
            if readonly:
                if not journal_exists(self.state_dir):
                    raise FatalError(f"no journal at {self.path}", ExitCode.STATE)
                self._conn().execute("SELECT 1 FROM documents LIMIT 1").fetchone()  # the table is there (no count: O(rows))
                return
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self._conn().executescript(SCHEMA)  # executescript manages its own transaction
            self._migrate()
        except (OSError, sqlite3.Error) as e:
            raise FatalError(f"cannot open the journal {self.path}: {e}", ExitCode.STATE) from e

    def _migrate(self) -> None:
        """Bring a journal of an older daemon to ``SCHEMA_VERSION`` (idempotent; adds only)."""
        db = self._conn()
        if int(db.execute("PRAGMA user_version").fetchone()[0]) >= SCHEMA_VERSION:
            return
        with self._tx() as db:
            have = {r["name"] for r in db.execute("PRAGMA table_info(documents)")}
            for name, sqltype in V2_COLUMNS:
                if name not in have:
                    db.execute(f"ALTER TABLE documents ADD COLUMN {name} {sqltype}")
            for stmt in SCHEMA_V2.split(";"):
                if stmt.strip():
                    db.execute(stmt)
            for stmt in SCHEMA_V3:
                db.execute(stmt)
            for stmt in V3_FILL:
                db.execute(stmt)
            self._fill_outputs(db)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _has_pages(self) -> bool:
        """Whether this journal has the pages table (a read-only open of an old one has not)."""
        db = self._conn()
        return db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='pages'").fetchone() is not None

    # -- connection handling -------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None and self.readonly:
            # mode=ro: SQLite neither creates the journal nor writes it (it may add the -wal/-shm
            # files, which it gives to the journal's owner when root opens them); WAL readers see
            # the running daemon's latest commits
            conn = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro", uri=True, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            # FULL: a commit is on disk when it returns, so a kill -9 right after a state change
            # never replays work whose outputs were already reported as done.
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction. A failed write (disk full, I/O error, damaged file) is rolled
        back -- SQLite may have done so itself already, and a COMMIT that fails leaves the
        transaction open, which would break every later ``BEGIN`` on this thread's connection --
        reported to ``on_write_error`` and raised."""
        db = self._conn()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    with suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            if write_problem(e) and self.on_write_error is not None:
                self.on_write_error(e)
            raise

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- admission -----------------------------------------------------------------------

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

    # -- work queue ------------------------------------------------------------------------

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

    def queued(self, limit: int | None = None) -> list[tuple[int, float]]:
        """(id, not_before) of the queued rows, soonest due first (then oldest); at most ``limit``
        (the work queue takes the next few from the journal, not a backlog's every id: issue 34)."""
        rows = self._conn().execute(
            "SELECT id, not_before FROM documents WHERE state='queued' ORDER BY not_before, id LIMIT ?",
            (1 << 62 if limit is None else limit,),
        ).fetchall()
        return [(int(r["id"]), float(r["not_before"])) for r in rows]

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
            self._add_outputs(db, doc_id, paths)

    def _add_outputs(self, db: sqlite3.Connection, doc_id: int, paths: Iterable[Path]) -> None:
        """Record ``paths`` as outputs of ``doc_id`` (``is_output``: never taken as input)."""
        for p in paths:
            db.execute("INSERT OR REPLACE INTO outputs(path, doc_id) VALUES (?,?)", (db_path(p), doc_id))

    def planned(self, doc_id: int) -> list[Path]:
        row = self._conn().execute("SELECT planned FROM documents WHERE id=?", (doc_id,)).fetchone()
        return [Path(p) for p in json.loads(row["planned"])] if row and row["planned"] else []

    def planned_by_unfinished(self, exclude_id: int) -> set[Path]:
        """Output paths planned by documents not finished yet (queued/processing), except one."""
        rows = self._conn().execute(
            "SELECT planned FROM documents INDEXED BY documents_unfinished_planned"
            " WHERE state IN ('queued', 'processing') AND planned IS NOT NULL AND id != ?",
            (exclude_id,),
        ).fetchall()
        return {Path(p) for r in rows for p in json.loads(r["planned"])}

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
            self._add_outputs(db, doc_id, outputs)
            self._drop_pages(db, doc_id)

    def supersede(self, doc_id: int, reason: str) -> None:
        """This version was replaced while being processed: final, nothing written for it."""
        with self._tx() as db:
            db.execute("UPDATE documents SET state='superseded', error=?, updated=? WHERE id=?", (reason, time.time(), doc_id))
            self._drop_pages(db, doc_id)

    def fail(self, doc_id: int, error: str, final_path: Path | None) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE documents SET state='failed', error=?, final_path=?, updated=? WHERE id=?",
                (error, db_path(final_path), time.time(), doc_id),
            )
            self._drop_pages(db, doc_id)

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
            self._add_outputs(db, doc_id, outputs)
            self._drop_pages(db, doc_id)

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
                self._drop_pages(db, doc_id)
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

    # -- pages (resume, progress) ------------------------------------------------------------

    def _drop_pages(self, db: sqlite3.Connection, doc_id: int) -> None:
        db.execute("DELETE FROM pages WHERE doc_id=?", (doc_id,))

    def set_total_pages(self, doc_id: int, n: int) -> None:
        """The document's page count, known once it is opened (progress: done/total)."""
        with self._tx() as db:
            db.execute("UPDATE documents SET total_pages=?, updated=? WHERE id=?", (n, time.time(), doc_id))

    def record_page(self, doc_id: int, key: str, page: PageResult) -> None:
        """Commit one finished page (synced like every commit: a crash after this returns does
        not lose it). Recording a page again replaces it."""
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO pages(doc_id, idx, key, text, engine, seconds, flags, meta, source, info, created)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (doc_id, page.index, key, page.text, page.engine, page.seconds, json.dumps(list(page.flags)),
                 json.dumps(dict(page.meta), default=str), page.source, page.to_record(), time.time()),
            )

    def done_pages(self, doc_id: int, key: str) -> dict[int, PageResult]:
        """Pages of ``doc_id`` already recorded under ``key``, by index. Pages recorded under
        another key (another engine or render size) are dropped: they will be read again, and so
        is a record this version cannot read (``PageResult.from_record``)."""
        if self.readonly and not self._has_pages():
            return {}
        db = self._conn()
        rows = db.execute("SELECT * FROM pages WHERE doc_id=? ORDER BY idx", (doc_id,)).fetchall()
        out: dict[int, PageResult] = {}
        stale = False
        for r in rows:
            if r["key"] != key:
                stale = True
                continue
            try:
                page = PageResult.from_record(
                    index=int(r["idx"]), text=r["text"], engine=r["engine"], seconds=float(r["seconds"]),
                    flags=list(json.loads(r["flags"])), meta=dict(json.loads(r["meta"])), source=r["source"],
                    info=r["info"],
                )
                out[page.index] = page
            except (TypeError, ValueError, KeyError, IndexError) as e:  # damaged or older: read again
                log.warning("doc-%d: page %d record unreadable (%s); reading the page again", doc_id, r["idx"], e)
        if stale and not self.readonly:
            with self._tx() as db:
                db.execute("DELETE FROM pages WHERE doc_id=? AND key!=?", (doc_id, key))
        return out

    def progress(self) -> list[Progress]:
        """One ``Progress`` per document in processing, oldest first. Read-only; cheap (one
        query); callable from any thread or process (``ocr-daemon status``, the HTTP endpoint)."""
        db = self._conn()
        if not self._has_pages():
            return []
        rows = db.execute(
            "SELECT d.id, d.path, d.inbox, d.total_pages, d.started,"
            " (SELECT count(*) FROM pages p WHERE p.doc_id=d.id) AS done,"
            " (SELECT count(*) FROM pages p WHERE p.doc_id=d.id AND p.created >= d.started) AS done_now"
            " FROM documents d WHERE d.state='processing' ORDER BY d.id"
        ).fetchall()
        now = time.time()
        return [
            Progress.compute(
                doc_id=int(r["id"]), path=from_db_path(r["path"]) or Path(), inbox=r["inbox"],
                pages_done=int(r["done"]), pages_total=r["total_pages"], done_this_attempt=int(r["done_now"]),
                started=float(r["started"] or now), now=now,
            )
            for r in rows
        ]

    # -- the journal's own state (health, identity, rebuild) ---------------------------------

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
                    self._drop_pages(db, doc.id)
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
                    self._add_outputs(db, int(new_id), doc.outputs)
                added += 1
        return added

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

    # -- queries ---------------------------------------------------------------------------

    def get(self, doc_id: int) -> JournalRow | None:
        """The row, decoded."""
        row = self._conn().execute("SELECT * FROM documents WHERE id=?", (doc_id,)).fetchone()
        return _row(row) if row else None

    def find(self, path: Path) -> JournalRow | None:
        """The newest row whose source is (or was moved to) ``path``."""
        row = self._conn().execute(
            "SELECT * FROM documents WHERE path=? OR final_path=? ORDER BY id DESC LIMIT 1", (db_path(path), db_path(path))
        ).fetchone()
        return _row(row) if row else None

    def retrying(self, limit: int = 100) -> list[JournalRow]:
        """Documents waiting for another try after a failed one (queued with a strike and the
        last error), soonest next try first."""
        rows = self._conn().execute(
            "SELECT * FROM documents INDEXED BY documents_waiting"
            " WHERE state IN ('queued', 'processing') AND strikes > 0 AND error IS NOT NULL"
            " ORDER BY not_before LIMIT ?", (limit,)
        ).fetchall()
        return [_row(r) for r in rows]

    def waiting_for_space(self, limit: int = 100) -> list[JournalRow]:
        """Documents waiting for a full or read-only destination (``rows.WAITING_FOR_SPACE``; no
        strike for it), soonest next try first."""
        rows = self._conn().execute(
            "SELECT * FROM documents INDEXED BY documents_waiting"
            " WHERE state IN ('queued', 'processing') AND error IS NOT NULL AND error LIKE ?"
            " ORDER BY not_before LIMIT ?", (WAITING_FOR_SPACE + "%", limit)
        ).fetchall()
        return [_row(r) for r in rows]

    def recent_failures(self, limit: int = 10) -> list[JournalRow]:
        rows = self._conn().execute(
            "SELECT * FROM documents WHERE state='failed' ORDER BY updated DESC LIMIT ?", (limit,)
        ).fetchall()
        return [_row(r) for r in rows]

    def recent_finished(self, limit: int = 10) -> list[JournalRow]:
        """The documents done (or linked as duplicates) most recently, newest first."""
        rows = [r for state in ("done", "duplicate") for r in self._conn().execute(  # one index range each
            "SELECT * FROM documents WHERE state=? ORDER BY updated DESC, id DESC LIMIT ?", (state, limit),
        ).fetchall()]
        rows.sort(key=lambda r: (r["updated"], r["id"]), reverse=True)
        return [_row(r) for r in rows[:limit]]
