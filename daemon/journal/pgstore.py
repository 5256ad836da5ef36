"""The shared journal: the same ``Journal`` on a PostgreSQL server, for several daemon hosts that
watch one shared inbox (``daemon.journal_url``; docs/scaling.md).

Contract:
- Same public methods and guarantees as ``store.Journal`` (it is a subclass: the same parts --
  ``states``, ``pagerecords``, ``lookups``, ``upkeep`` -- with every statement translated by
  ``pgsql.dml``), and one part of its own, ``leases.Leases``: claims with a lease, the heartbeat,
  fencing (``FENCED`` writes are checked against the claim), a ``recover`` that leaves other live
  daemons' rows alone. The same tests run on both (tests/integration/test_journal.py). psycopg 3
  is the driver (the maintained PostgreSQL driver for Python, with a binary wheel), imported only
  when a ``postgresql://`` journal is used. Here: the connections, transactions and migrations.
- Every write transaction takes one advisory lock (``SERIAL_LOCK``) first: writes are serialised
  as SQLite's ``BEGIN IMMEDIATE`` serialises them, so ``admit``'s read-then-insert never admits
  one file twice, whichever daemons see it at once. A file's sha256 is looked up over the
  whole journal: duplicate detection is global. (Claims, page records and the heartbeat go
  without it: ``leases``.)
- A daemon paused inside a transaction holds the others up for at most a lease: its sessions
  have ``idle_in_transaction_session_timeout`` = the lease (the server ends them and frees their
  locks), and the heartbeat's take-over skips rows locked meanwhile.
- Errors come out as ``sqlite3.Error`` with a SQLite code (``pgsql.journal_error``): a server that
  is down or restarting is "cannot be written now", so the daemon waits, reconnects (a broken
  connection is dropped and opened again at the next use) and loses nothing. Reads wait no longer
  than ``give_up_waits`` says (a stopping daemon's drain deadline).
- ``readonly=True`` (``ocr-daemon status``) opens a read-only session and creates nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from daemon.errors import ExitCode, FatalError
from daemon.journal.leases import FENCED, RELEASING, Leases
from daemon.journal.pgsql import JournalUnavailable, dml, journal_error, migrations
from daemon.journal.schema import write_problem
from daemon.journal.store import Journal

log = logging.getLogger(__name__)

#: The advisory lock key every serialised write takes ("ocr-daemon journal", arbitrary but fixed).
SERIAL_LOCK = 0x0C2_28


def redact(url: str) -> str:
    """The URL without its password (for logs and status)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        parts = conninfo_to_dict(url)
    except Exception:
        return "postgresql://?"
    parts.pop("password", None)
    return f"postgresql {make_conninfo(**{k: str(v) for k, v in parts.items()})}"


class _Cursor:
    """What a SQLite cursor offers the journal's code: fetchone/fetchall/iteration/rowcount/lastrowid."""

    def __init__(self, cur: Any, returns_id: bool) -> None:
        self._cur = cur
        self.rowcount = cur.rowcount
        self.lastrowid: int | None = None
        self._first: Any = None
        if returns_id:  # an INSERT that SQLite would answer with lastrowid (``pgsql.dml``)
            self._first = cur.fetchone()
            self.lastrowid = None if self._first is None else int(self._first["id"])

    def fetchone(self) -> Any:
        if self._first is not None:
            row, self._first = self._first, None
            return row
        return self._cur.fetchone() if self._cur.description is not None else None

    def fetchall(self) -> list[Any]:
        return list(self._cur.fetchall()) if self._cur.description is not None else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    def tuples(self) -> list[tuple[Any, ...]]:
        """``fetchall`` as plain tuples: no dict per row (``Journal.known_under`` reads one row
        per kept file: 0.22 -> 0.12 s of client CPU at 100,000 rows, issue 34)."""
        from psycopg.rows import tuple_row

        if self._cur.description is None:
            return []
        self._cur.row_factory = tuple_row
        rows: list[tuple[Any, ...]] = self._cur.fetchall()
        return rows


class _Conn:
    """One thread's psycopg connection, spoken to with the SQLite statements of the journal's parts.
    Opened on first use and again after it broke. A statement outside a transaction (a read)
    that finds the server away waits for it, up to the journal's ``wait_reads`` seconds: the
    daemon's readers (status line, stability checks, queue sync) never treat a restarting server
    as a crash; statements inside ``_tx`` fail at once (the transaction is lost; its caller and
    the journal's health decide)."""

    def __init__(self, journal: PostgresJournal) -> None:
        self.raw: Any = None
        self.in_tx = False
        self._journal = journal

    def ensure(self) -> Any:
        if self.raw is None or self.raw.closed:
            self.raw = None
            self.raw = self._journal._connect()
        return self.raw

    def close(self) -> None:
        raw, self.raw = self.raw, None
        if raw is not None:
            with suppress(Exception):
                raw.close()

    def executemany(self, sql: str, seq: Any) -> None:
        """Inside a transaction only (``_tx``): many rows of one statement, pipelined."""
        import psycopg

        assert self.in_tx, "executemany outside a transaction"
        try:
            with self.raw.cursor() as cur:
                cur.executemany(dml(sql), [tuple(p) for p in seq])
        except psycopg.Error as e:
            raise journal_error(e) from e

    def execute(self, sql: str, params: Any = ()) -> _Cursor:
        import psycopg

        pg = dml(sql)
        returns_id = pg.endswith(" RETURNING id") and "RETURNING" not in sql
        until, delay, told = time.monotonic() + self._journal.wait_reads, 0.2, False
        while True:
            deadline = min(until, self._journal.give_up_at)  # a stop sets give_up_at (``give_up_waits``)
            try:
                if self.in_tx:
                    return _Cursor(self.raw.execute(pg, tuple(params)), returns_id)
                return _Cursor(self.ensure().execute(pg, tuple(params)), returns_id)
            except (psycopg.Error, JournalUnavailable) as e:
                err = e if isinstance(e, JournalUnavailable) else journal_error(e)
                if not isinstance(err, JournalUnavailable):
                    raise err from e
                if not self.in_tx:
                    self.close()
                left = deadline - time.monotonic()
                if self.in_tx or left <= 0:
                    raise err from e
                if not told:
                    log.warning("the journal %s is out of reach (%s); waiting for it", self._journal.path, err)
                    told = True
                time.sleep(min(delay, left, 1.0))  # 1 s slices: a stop's give_up_at is seen within a second
                delay = min(delay * 2, 5.0)


class PostgresJournal(Leases, Journal):
    """``Journal`` on a PostgreSQL server, with the shared journal's ``Leases`` (module contract).
    One connection per thread."""

    shared = True

    def __init__(self, url: str, state_dir: Path, *, readonly: bool = False, lease: float = 30.0,
                 wait_reads: float = 0.0) -> None:
        try:
            import psycopg  # noqa: F401  (the optional extra: say so plainly when it is missing)
        except ImportError as e:
            raise FatalError("daemon.journal_url needs psycopg: pip install 'ocr-daemon[postgres]'", ExitCode.CONFIG) from e
        self.url = url
        self.state_dir = Path(state_dir)
        self.path = Path(redact(url))  # for messages only: there is no journal file
        self.readonly = readonly
        self.lease = lease
        #: Seconds a read waits for a server that is away (``_Conn``): the daemon waits as long
        #: as it takes (``factory.open_journal``); ``status`` and the tests fail at once.
        self.wait_reads = wait_reads
        #: When (monotonic) reads stop waiting for a server that is away, whatever ``wait_reads``
        #: says: a stopping daemon's drain deadline (``give_up_waits``).
        self.give_up_at = float("inf")
        self.host = socket.gethostname()
        self.owner = f"{self.host}:{os.getpid()}"
        self.node = f"{self.host}:{self.state_dir.absolute()}"
        self._local = threading.local()
        self.on_write_error: Callable[[sqlite3.Error], None] | None = None
        self._beat_stop = threading.Event()
        self._beat: threading.Thread | None = None
        self.started = time.time()
        #: The claim token of each document this process holds (``claim``), checked by every write
        #: of it (``holding``); ``LOST`` once a write found the claim gone.
        self._held: dict[int, int] = {}
        self._held_lock = threading.Lock()
        try:
            if readonly:
                self._conn().execute("SELECT 1 FROM documents LIMIT 1").fetchone()  # the table is there (no count: O(rows))
                return
            self._migrate()
        except sqlite3.Error as e:
            raise FatalError(f"cannot open the journal {self.path}: {e}", ExitCode.STATE) from e

    # -- connections and transactions --------------------------------------------------------

    def _conn(self) -> _Conn:  # type: ignore[override]
        conn: _Conn | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = _Conn(self)
        return conn

    def _connect(self) -> Any:
        import psycopg
        from psycopg.rows import dict_row

        try:
            raw = psycopg.connect(self.url, autocommit=True, row_factory=dict_row, connect_timeout=10,
                                  application_name=f"ocr-daemon {self.owner}"[:63])
            if self.readonly:
                raw.execute("SET default_transaction_read_only = on")
            else:
                # A process paused inside a transaction (SIGSTOP, a long GC, a partition) keeps its
                # row locks and maybe the serial lock: the server ends that session after a lease
                # of idleness, so it holds up the other daemons no longer than it keeps its documents
                raw.execute(f"SET idle_in_transaction_session_timeout = {int(max(1.0, self.lease) * 1000)}")
        except psycopg.Error as e:
            raise journal_error(e) from e
        return raw

    def _drop(self) -> None:
        """Close this thread's connection (broken): the next use opens a new one."""
        conn: _Conn | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()

    @contextmanager
    def _tx(self, serial: bool = True) -> Iterator[_Conn]:  # type: ignore[override]
        """One write transaction; ``serial``: behind ``SERIAL_LOCK`` (module contract). A failed
        one is rolled back, reported to ``on_write_error`` when the journal cannot be written now,
        and raised as ``sqlite3.Error``."""
        import psycopg

        db = self._conn()
        try:
            with db.ensure().transaction():
                db.in_tx = True
                try:
                    if serial:
                        db.execute("SELECT pg_advisory_xact_lock(?)", (SERIAL_LOCK,))
                    fence = getattr(self._local, "fence", None)
                    if fence is not None:
                        self._check_claim(db, fence)
                    yield db
                finally:
                    db.in_tx = False
        except (psycopg.Error, sqlite3.Error) as e:
            err = e if isinstance(e, sqlite3.Error) else journal_error(e)
            if write_problem(err):
                self._drop()
                if self.on_write_error is not None:
                    self.on_write_error(err)
            if err is e:
                raise
            raise err from e

    def close(self) -> None:
        """Close this thread's connection, as ``Journal.close`` does -- and nothing more: the HTTP
        endpoint's and the hooks' threads call it after each job, and the heartbeat must go on
        (it stops with ``stop_heartbeat``, at the daemon's stop). Closing it here stopped the
        heartbeat at the first ``/status`` request, and the daemon's leases ran out under it."""
        self._drop()

    def give_up_waits(self, at: float) -> None:
        """Reads waiting for the server give up (``JournalUnavailable``) at ``at`` (monotonic):
        the daemon calls it when asked to stop, with its drain deadline, so a stop while the
        database is down ends in bounded time (the documents stay claimed in the journal: this
        node's next start or, after the lease, another daemon takes them)."""
        self.give_up_at = min(self.give_up_at, at)

    def _migrate(self) -> None:
        """Bring the server's tables to the newest version (``pgsql.migrations``), one
        transaction per version, behind the serial lock: daemons starting at once migrate once."""
        steps = migrations()
        with self._tx() as db:
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        have = int(row["value"]) if row else 0
        for version in range(have + 1, len(steps) + 1):
            with self._tx() as db:
                row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                if row and int(row["value"]) >= version:
                    continue  # another daemon did it meanwhile
                for stmt in steps[version - 1]:
                    db.execute(stmt)
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),))
            log.info("journal %s: schema version %d", self.path, version)

    def _has_pages(self) -> bool:
        return True


def _fenced(name: str) -> Callable[..., Any]:
    """``Journal.<name>(doc_id, ...)`` checked against the claim (``holding``); the last writes of
    a claim (``RELEASING``) end it."""
    base = getattr(Journal, name)

    def method(self: PostgresJournal, doc_id: int, *args: Any, **kwargs: Any) -> Any:
        with self.holding(doc_id):
            out = base(self, doc_id, *args, **kwargs)
        if name in RELEASING:
            self._released(doc_id)
        return out

    method.__name__ = name
    method.__doc__ = base.__doc__
    return method


for _name in FENCED:
    setattr(PostgresJournal, _name, _fenced(_name))
