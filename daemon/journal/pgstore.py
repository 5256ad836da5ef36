"""The shared journal: the same ``Journal`` on a PostgreSQL server, for several daemon hosts that
watch one shared inbox (``daemon.journal_url``; docs/scaling.md).

Contract:
- Same public methods and guarantees as ``store.Journal`` (it is a subclass: every statement is
  ``store.py``'s, translated by ``pgsql.dml``); the same tests run on both
  (tests/integration/test_journal.py). psycopg 3 is the driver (the maintained PostgreSQL driver
  for Python, with a binary wheel), imported only when a ``postgresql://`` journal is used.
- Every write transaction takes one advisory lock (``SERIAL_LOCK``) first: writes are serialised
  as SQLite's ``BEGIN IMMEDIATE`` serialises them, so ``admit``'s read-then-insert never admits
  one file twice, whichever daemons see it at once. A file's sha256 is looked up over the
  whole journal: duplicate detection is global.
- Claims: ``claim`` takes a queued row with ``SELECT ... FOR UPDATE SKIP LOCKED`` (no advisory
  lock: claims of different rows do not wait for each other) and records the claimant (``owner``
  host:pid, ``owner_node`` host:state_dir) and a lease (``daemon.journal_lease`` seconds).
- ``heartbeat()`` (a thread, ``start_heartbeat``) renews the leases of this process's rows (and of
  the hook deliveries it claimed, ``deliveries.claim_due``), keeps its
  ``daemons`` row (status) and puts back to ``queued`` the rows whose lease ran out (a daemon that
  died or lost the server): another daemon takes them and resumes from their recorded pages.
- Fencing: every write of a document in processing (its pages, outputs planned, strikes, its
  final state; ``FENCED``, ``record_page``, ``deliveries.plan``) first checks, in its own
  transaction with the row locked, that the row still carries this process's claim token
  (``claim_token``, new at every claim). A daemon paused past its lease (SIGSTOP, a long GC, a
  partition) whose document was put back or taken over gets ``LeaseLost`` and writes nothing:
  the new holder's results stand alone. The check is the token, not the clock: a daemon that
  comes back before anyone put its document back keeps it.
- A daemon paused inside a transaction holds the others up for at most a lease: its sessions
  have ``idle_in_transaction_session_timeout`` = the lease (the server ends them and frees their
  locks), and the heartbeat's take-over skips rows locked meanwhile.
- ``recover`` puts back only this node's rows (an earlier process of the same state folder,
  which the state-dir lock says is gone) and rows whose lease ran out -- never another live
  daemon's.
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
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from daemon.errors import ExitCode, FatalError
from daemon.journal.pgsql import JournalUnavailable, LeaseLost, dml, journal_error, migrations
from daemon.journal.rows import _doc
from daemon.journal.schema import write_problem
from daemon.journal.store import Journal
from daemon.models import Document
from daemon.pagerecord import PageResult

log = logging.getLogger(__name__)

#: The advisory lock key every serialised write takes ("ocr-daemon journal", arbitrary but fixed).
SERIAL_LOCK = 0x0C2_28

#: ``Journal`` writes of one document in processing, accepted only from its current claim
#: (fencing, module contract); after the last five the claim is over.
FENCED = ("set_planned", "set_total_pages", "strike", "set_final_path", "finish", "supersede", "fail",
          "retry_later", "finish_duplicate")
RELEASING = frozenset(FENCED[4:])
#: The token of a claim found lost: every later write of that document is refused until it is claimed again.
LOST = -1


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


class _Conn:
    """One thread's psycopg connection, spoken to with the SQLite statements of ``store.py``.
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


class PostgresJournal(Journal):
    """``Journal`` on a PostgreSQL server (module contract). One connection per thread."""

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

    # -- claims and leases -------------------------------------------------------------------

    def claim(self, doc_id: int) -> Document | None:
        """``queued -> processing`` for this process, with a lease; None if another daemon (or
        worker) took it, is taking it right now, or it is gone."""
        now = time.time()
        with self._tx(serial=False) as db:
            row = db.execute("SELECT id FROM documents WHERE id=? AND state='queued' FOR UPDATE SKIP LOCKED", (doc_id,)).fetchone()
            if row is None:
                return None
            row = db.execute(
                "UPDATE documents SET state='processing', attempts=attempts+1, started=?, updated=?, owner=?, owner_node=?,"
                " lease_until=?, claim_token=nextval('claim_tokens') WHERE id=? RETURNING *",
                (now, now, self.owner, self.node, now + self.lease, doc_id),
            ).fetchone()
        with self._held_lock:
            self._held[doc_id] = int(row["claim_token"])
        return _doc(row)

    # -- fencing -----------------------------------------------------------------------------

    @contextmanager
    def holding(self, doc_id: int) -> Iterator[None]:
        """Within it, every write transaction of this thread first checks that ``doc_id`` is
        still this process's claim (``_check_claim``) -- in the same transaction, with the row
        locked, so no heartbeat of another daemon can put it back between the check and the write."""
        prev = getattr(self._local, "fence", None)
        self._local.fence = doc_id
        try:
            yield
        finally:
            self._local.fence = prev

    def _check_claim(self, db: _Conn, doc_id: int) -> None:
        """Raise ``LeaseLost`` unless ``doc_id`` is in processing under this process's claim token.
        A document this process never claimed (``admit_unreadable``'s, failed at once) is not checked."""
        with self._held_lock:
            token = self._held.get(doc_id)
        if token is None:
            return
        row = db.execute("SELECT state, owner, claim_token FROM documents WHERE id=? FOR UPDATE", (doc_id,)).fetchone()
        if token != LOST and row is not None and row["state"] == "processing" and row["claim_token"] == token:
            return
        with self._held_lock:
            self._held[doc_id] = LOST
        raise LeaseLost(doc_id, row["owner"] if row is not None and row["state"] == "processing" else None)

    def _released(self, doc_id: int) -> None:
        with self._held_lock:
            self._held.pop(doc_id, None)

    def recover(self, keep: Collection[int] = (), not_before: float = 0.0) -> int:
        """Put back to ``queued`` this node's rows left in ``processing`` (but ``keep``) and every
        row whose lease ran out; another live daemon's rows are left alone."""
        now = time.time()
        with self._tx() as db:
            cur = db.execute(
                "UPDATE documents SET state='queued', not_before=GREATEST(not_before, ?), owner=NULL, lease_until=NULL,"
                " updated=? WHERE state='processing' AND (owner_node=? OR lease_until IS NULL OR lease_until < ?)"
                " AND NOT (id = ANY(?::bigint[]))",
                (not_before, now, self.node, now, [int(i) for i in keep]),
            )
            return int(cur.rowcount)

    def record_page(self, doc_id: int, key: str, page: PageResult) -> None:
        """As ``Journal.record_page``, without the serial lock (only the claimant writes a
        document's pages: fenced, ``holding``), renewing the document's lease on the way."""
        import json

        now = time.time()
        with self.holding(doc_id), self._tx(serial=False) as db:
            db.execute(
                "INSERT OR REPLACE INTO pages(doc_id, idx, key, text, engine, seconds, flags, meta, source, info, created)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (doc_id, page.index, key, page.text, page.engine, page.seconds, json.dumps(list(page.flags)),
                 json.dumps(dict(page.meta), default=str), page.source, page.to_record(), now),
            )
            db.execute("UPDATE documents SET lease_until=? WHERE id=? AND owner=?", (now + self.lease, doc_id, self.owner))

    def heartbeat(self, pages_done: int = 0, pages_per_s: float = 0.0) -> list[int]:
        """Renew this process's leases and its ``daemons`` row; put back rows whose lease ran out.
        Returns the ids put back."""
        now = time.time()
        with self._tx(serial=False) as db:
            db.execute(
                "INSERT INTO daemons(node, host, pid, started, heartbeat, pages_done, pages_per_s, stopped)"
                " VALUES (?,?,?,?,?,?,?,NULL) ON CONFLICT (node) DO UPDATE SET host=excluded.host, pid=excluded.pid,"
                " started=excluded.started, heartbeat=excluded.heartbeat, pages_done=excluded.pages_done,"
                " pages_per_s=excluded.pages_per_s, stopped=NULL",
                (self.node, self.host, os.getpid(), self.started, now, pages_done, pages_per_s),
            )
            db.execute("UPDATE documents SET lease_until=? WHERE owner=? AND state='processing'", (now + self.lease, self.owner))
            db.execute("UPDATE deliveries SET lease_until=? WHERE owner=? AND state='pending'", (now + self.lease, self.owner))
            # SKIP LOCKED: a row locked by a daemon paused inside a transaction is not waited for
            # (the beat would stall with it); its session ends within a lease, and a later beat takes it
            rows = db.execute(
                "UPDATE documents SET state='queued', owner=NULL, lease_until=NULL, updated=? WHERE id IN (SELECT id"
                " FROM documents WHERE state='processing' AND lease_until < ? FOR UPDATE SKIP LOCKED) RETURNING id, path",
                (now, now),
            ).fetchall()
        for r in rows:
            log.warning("doc-%d: its daemon's lease ran out (the daemon stopped or lost the journal): queued again "
                        "for any daemon to take over", r["id"])
        return [int(r["id"]) for r in rows]

    def start_heartbeat(self, stats: Callable[[], tuple[int, float]], on_beat: Callable[[list[int]], None]) -> None:
        """Call ``heartbeat`` every ``min(1 s, lease / 3)`` from a thread (until ``stop_heartbeat``);
        ``on_beat`` hears each beat (with the ids put back) so the daemon can take queued rows other
        daemons admitted. A beat that fails (server away) is tried again at the next one."""
        every = min(1.0, self.lease / 3)

        def run() -> None:
            while not self._beat_stop.wait(every):
                try:
                    ids = self.heartbeat(*stats())
                    on_beat(ids)
                except sqlite3.Error as e:
                    log.debug("heartbeat: %s", e)
                except Exception:  # the beat must go on: a lost beat loses the leases
                    log.exception("heartbeat failed")

        self._beat_stop.clear()
        self._beat = threading.Thread(target=run, name="journal-heartbeat", daemon=True)
        self._beat.start()

    def stop_heartbeat(self) -> None:
        self._beat_stop.set()
        if self._beat is not None and self._beat is not threading.current_thread():
            self._beat.join(timeout=10)
            self._beat = None
            with suppress(sqlite3.Error), self._tx(serial=False) as db:
                db.execute("UPDATE daemons SET stopped=? WHERE node=?", (time.time(), self.node))
                # deliveries a stop cut off: for any daemon now, not after the lease
                db.execute("UPDATE deliveries SET owner=NULL, lease_until=NULL WHERE owner=?", (self.owner,))

    # -- status ------------------------------------------------------------------------------

    def daemons(self) -> list[dict[str, Any]]:
        """Every daemon of this journal: host, pid, state folder, last heartbeat (and its age),
        pages/s, the documents it holds, and its ``state``: ``alive`` (a heartbeat within the
        lease), ``stale`` (none within the lease and no clean stop: killed, paused, cut off -- its
        documents go to the others) or ``stopped`` (a clean stop); ``alive`` is that state == alive."""
        now = time.time()
        rows = self._conn().execute("SELECT * FROM daemons ORDER BY node").fetchall()
        held: dict[str, list[int]] = {}
        for r in self._conn().execute("SELECT id, owner FROM documents WHERE state='processing' AND owner IS NOT NULL"
                                      " ORDER BY id").fetchall():
            held.setdefault(r["owner"], []).append(int(r["id"]))
        out = []
        for r in rows:
            state = "stopped" if r["stopped"] is not None else "alive" if now - r["heartbeat"] <= self.lease else "stale"
            out.append({
                "host": r["host"], "pid": int(r["pid"]), "state_dir": r["node"].split(":", 1)[1],
                "started": round(r["started"], 3), "heartbeat": round(r["heartbeat"], 3),
                "heartbeat_age_seconds": round(max(0.0, now - r["heartbeat"]), 3),
                "pages_done": int(r["pages_done"]), "pages_per_s": round(r["pages_per_s"], 3),
                "state": state, "alive": state == "alive",
                "holding": held.get(f"{r['host']}:{int(r['pid'])}", []) if state != "stopped" else [],
            })
        return out

    def holders(self) -> dict[int, dict[str, Any]]:
        """Who holds each document in processing: {doc id: {"owner": host:pid, "lease_until": t}}."""
        rows = self._conn().execute("SELECT id, owner, lease_until FROM documents WHERE state='processing'").fetchall()
        return {int(r["id"]): {"owner": r["owner"], "lease_until": r["lease_until"]} for r in rows}


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
