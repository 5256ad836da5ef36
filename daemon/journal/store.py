"""The durable journal: one SQLite row per document (WAL mode, in the state dir).

Contract:
- ``Journal`` is the SQLite journal put together from its parts (``base.py``): ``states.StateChanges``
  (``admit``, ``claim``, ``finish``, ``fail``, ``requeue`` ...), ``pagerecords.PageRecords``
  (``record_page``, ``done_pages``, ``progress``), ``lookups.Lookups`` (``get``, ``find``, ``queued``,
  ``counts``, ``known_unchanged`` ...) and ``upkeep.Upkeep`` (``check_writable``, ``identity``,
  ``add_rebuilt``, ``compact_finished``); their contracts are in their modules. Here: the
  connections, the transactions and the schema's migration they run on.
- Every state change is one committed transaction; the journal survives ``kill -9`` at any point
  (SQLite WAL + ``synchronous=FULL`` at commit points that matter).
- Thread-safe: one connection per thread (SQLite connections are not shared across threads), and
  ``BEGIN IMMEDIATE`` for read-modify-write transactions.
- Schema versions: a journal written by an older daemon is migrated on open (columns added, the
  pages table created; nothing removed), so it keeps working; a read-only open of an old journal
  works too (no pages: no progress).
- Write failures: ``on_write_error`` hears of every write that failed because the journal cannot
  be written (full, I/O error, damaged...), and a failed transaction never leaves the thread's
  connection inside it (``_tx``): once the fault is gone, the next write works.

The tables themselves (DDL) are in ``schema.py``, the row types and their column codecs in
``rows.py`` (re-exported here, with ``NOT_READ``); the shared PostgreSQL journal, made of the
same parts, in ``pgstore.py``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from daemon.errors import ExitCode, FatalError
from daemon.fsio import sha256_file
from daemon.journal.lookups import Lookups
from daemon.journal.pagerecords import PageRecords
from daemon.journal.rows import (
    Admission,
    AdmitAction,
    JournalRow,
    RebuiltDoc,
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
from daemon.journal.states import NOT_READ, StateChanges
from daemon.journal.upkeep import Upkeep

__all__ = [
    "NOT_READ", "SCHEMA", "Admission", "AdmitAction", "Journal", "JournalRow", "RebuiltDoc", "db_path",
    "from_db_path", "journal_exists", "journal_path", "sha256_file", "status_summary",
]


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


def fill_outputs(db: sqlite3.Connection) -> None:
    """The ``outputs`` table from the rows' JSON columns (version 3's migration: once)."""
    rows = db.execute("SELECT id, outputs, planned FROM documents WHERE outputs IS NOT NULL OR planned IS NOT NULL")
    batch: list[tuple[str, int]] = []
    for r in rows.fetchall():
        for col in ("outputs", "planned"):
            batch += [(str(db_path(p)), int(r["id"])) for p in json.loads(r[col] or "[]")]
    for i in range(0, len(batch), 10_000):
        db.executemany("INSERT OR REPLACE INTO outputs(path, doc_id) VALUES (?,?)", batch[i:i + 10_000])


class Journal(StateChanges, PageRecords, Lookups, Upkeep):
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
            fill_outputs(db)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _has_pages(self) -> bool:
        """Whether this journal has the pages table (a read-only open of an old one has not)."""
        db = self._conn()
        return db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='pages'").fetchone() is not None

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
    def _tx(self, serial: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction. A failed write (disk full, I/O error, damaged file) is rolled
        back -- SQLite may have done so itself already, and a COMMIT that fails leaves the
        transaction open, which would break every later ``BEGIN`` on this thread's connection --
        reported to ``on_write_error`` and raised. ``BEGIN IMMEDIATE`` serialises every write
        transaction, ``serial`` or not (``base.JournalBase._tx``)."""
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
