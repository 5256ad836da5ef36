"""The journal's tables (DDL) and their versions, which ``store.Journal`` creates and migrates, and
which SQLite errors mean the journal cannot be written now (``write_problem``).

The statements that read or change rows are ``store.py``'s.
"""

from __future__ import annotations

import sqlite3

#: Every lookup of the intake and the pipeline is an index search (tests/integration/
#: test_journal_plans.py checks each statement's plan). ``documents_final_path``: ``find``,
#: ``requeue`` and ``known_unchanged`` look a path up in ``path`` OR ``final_path``, which scanned
#: the whole table without it (issue 34: 18.8 ms per lookup at 100k rows, a rescan of N kept files
#: O(N^2)). The script runs at every writable open (``IF NOT EXISTS``): an older journal gets a new
#: index in place. (No ``;`` in comments here: pgsql splits the script at them.)
SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    path        TEXT NOT NULL,
    inbox       TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mtime       REAL NOT NULL,
    sha256      TEXT NOT NULL,
    state       TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,      -- times claimed for processing
    strikes     INTEGER NOT NULL DEFAULT 0,      -- counted failures (worker crashes, internal errors)
    not_before  REAL NOT NULL DEFAULT 0,      -- retry backoff: do not start before this time
    error       TEXT,
    language    TEXT,
    doctype     TEXT,
    route       TEXT,
    pages       INTEGER,
    outputs     TEXT,                          -- JSON list of output paths written
    planned     TEXT,                          -- JSON list of output paths this doc owns (crash repeat)
    final_path  TEXT,                          -- where the source ended (archive/failed/kept path)
    duplicate_of INTEGER,
    timings     TEXT,                          -- JSON {stage: seconds}
    created     REAL NOT NULL,
    updated     REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_path ON documents(path);
CREATE INDEX IF NOT EXISTS documents_sha ON documents(sha256);
CREATE INDEX IF NOT EXISTS documents_state ON documents(state);
CREATE INDEX IF NOT EXISTS documents_final_path ON documents(final_path);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""

#: Version 2: ``documents.total_pages``/``started`` and the ``pages`` table (page-level resume and
#: progress). ``PRAGMA user_version`` holds the version; older journals are migrated on open.
SCHEMA_VERSION = 3

SCHEMA_V2 = """
CREATE TABLE IF NOT EXISTS pages (
    doc_id   INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL,                -- 0-based page index
    key      TEXT NOT NULL,                   -- engine + render settings it was read with
    text     TEXT NOT NULL,                   -- the engine's raw text
    engine   TEXT NOT NULL,
    seconds  REAL NOT NULL,
    flags    TEXT NOT NULL,                   -- JSON list
    meta     TEXT NOT NULL,                   -- JSON object (engine facts)
    source   TEXT NOT NULL,                   -- ocr | text_layer
    info     TEXT NOT NULL,                   -- JSON object: rotation, cropped, script, size, source_size
    created  REAL NOT NULL,
    PRIMARY KEY (doc_id, idx)
);
"""
#: Version 3 (issue 34 item 2: a journal of a million documents slows nothing): ``outputs`` (every
#: output path a document planned or wrote, so ``is_output`` is one index search, not a set of
#: every path loaded at start), ``state_counts`` (documents by state, kept by triggers: ``counts``
#: reads a handful of rows, not every row) and the indexes that give ``status`` its recent rows and
#: the work queue its next rows without reading the others: ``(state, updated)``, ``(state,
#: not_before)``, and two partial ones (documents waiting for another try, outputs planned by
#: unfinished documents), whose rows are few however large the journal. One statement per item
#: (the triggers hold semicolons); the migration fills both tables from the rows already there.
SCHEMA_V3 = (
    "CREATE TABLE IF NOT EXISTS outputs (path TEXT PRIMARY KEY, doc_id INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS state_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS documents_state_updated ON documents(state, updated, id)",
    "CREATE INDEX IF NOT EXISTS documents_queue ON documents(state, not_before, id)",
    "CREATE INDEX IF NOT EXISTS documents_waiting ON documents(not_before)"
    " WHERE state IN ('queued', 'processing') AND error IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS documents_unfinished_planned ON documents(id)"
    " WHERE state IN ('queued', 'processing') AND planned IS NOT NULL",
    "CREATE TRIGGER IF NOT EXISTS documents_count_insert AFTER INSERT ON documents BEGIN"
    " INSERT INTO state_counts(state, n) VALUES (NEW.state, 1) ON CONFLICT(state) DO UPDATE SET n = n + 1; END",
    "CREATE TRIGGER IF NOT EXISTS documents_count_update AFTER UPDATE OF state ON documents"
    " WHEN OLD.state IS NOT NEW.state BEGIN"
    " UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;"
    " INSERT INTO state_counts(state, n) VALUES (NEW.state, 1) ON CONFLICT(state) DO UPDATE SET n = n + 1; END",
    "CREATE TRIGGER IF NOT EXISTS documents_count_delete AFTER DELETE ON documents BEGIN"
    " UPDATE state_counts SET n = n - 1 WHERE state = OLD.state; END",
)
#: What version 3's migration fills its tables with (the counts and outputs of the rows there).
V3_FILL = (
    "DELETE FROM state_counts",
    "INSERT INTO state_counts(state, n) SELECT state, count(*) FROM documents GROUP BY state",
)

#: Columns added to ``documents`` by version 2 (name, SQL type).
V2_COLUMNS = (("total_pages", "INTEGER"), ("started", "REAL"))


#: SQLite result codes (primary, ``errorcode & 0xff``) that say the journal cannot be written
#: now -- full, I/O error, read-only, busy/locked past the timeout, damaged, not a database, not
#: openable -- as opposed to a statement that is wrong (constraint, misuse: a bug, not a fault).
WRITE_PROBLEMS = frozenset({
    sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM,
})


def write_problem(e: sqlite3.Error) -> bool:
    """The error says the journal cannot be written now (``WRITE_PROBLEMS``), not a wrong statement."""
    code = getattr(e, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in WRITE_PROBLEMS
