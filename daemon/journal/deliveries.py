"""The journal of hook deliveries (``routes[].on_done``): one row per hook of a done document.

Contract:
- The ``deliveries`` table lives in the journal's SQLite file, beside ``documents``, and is
  created by this module (``CREATE TABLE IF NOT EXISTS`` on first use by a writing ``Journal``);
  every statement goes through the ``Journal``'s own per-thread connection and ``BEGIN IMMEDIATE``
  transaction helper, so it shares the journal's durability (WAL, ``synchronous=FULL``) and locking.
- ``plan()`` records a document's deliveries -- the hook, its settings at that moment, the sidecar's
  path and its exact bytes -- BEFORE the pipeline records the document done. A delivery is due only
  once its document is ``done``/``duplicate`` (a join on ``documents``), so a crash between ``plan``
  and "done" delivers nothing early, and a crash after "done" loses nothing: the row is pending until
  ``delivered()`` or ``failed()`` commits. Planning a document again (a crash repeat, a requeue)
  replaces its rows: the newest outputs are the ones delivered.
- At least once: a delivery cut off by a crash or a stop is repeated; every try carries the same
  idempotency key, the document id (``Delivery.key``). A try is counted (``started``) before it is
  made, so tries cut off by crashes count towards the hook's ``attempts`` too.
- Rows come out as frozen ``Delivery`` records. A read-only journal (``ocr-daemon status``) of a
  daemon that never had hooks has no table: every query then answers empty.
- A shared journal (several daemons, ``pgstore.py``): a delivery is claimed before it is made
  (``claim_due``: owner and lease, renewed by the claimant's heartbeat), so one daemon makes each;
  its outcome is written only by its claimant and ends the claim; a claim whose lease ran out
  (the daemon died) is taken over by another daemon, which makes the try again (same key).
- Delivered rows keep their record (when, tries) but drop the payload; pending and failed rows
  keep it (a failed one can be looked at, or delivered again by hand).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.journal.store import Journal, db_path, from_db_path

SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id    INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL,                 -- exec | webhook
    spec      TEXT NOT NULL,                 -- JSON: target (argv or url), timeout, attempts, backoff, backoff_max
    route     TEXT NOT NULL,
    sidecar   TEXT NOT NULL,                 -- the sidecar's path (journal path text)
    payload   BLOB,                          -- the sidecar's bytes (NULL once delivered)
    state     TEXT NOT NULL,                 -- pending | delivered | failed
    attempts  INTEGER NOT NULL DEFAULT 0,    -- tries made
    next_try  REAL NOT NULL DEFAULT 0,       -- not before this time (backoff)
    error     TEXT,                          -- the last try's error
    created   REAL NOT NULL,
    updated   REAL NOT NULL,
    UNIQUE (doc_id, kind)
);
CREATE INDEX IF NOT EXISTS deliveries_state ON deliveries(state, next_try);
"""

#: The document states whose deliveries are due (the hooks run once the document is one of these).
FINISHED = ("done", "duplicate")

KINDS = ("exec", "webhook")


@dataclass(frozen=True)
class HookSpec:
    """One hook of a route as planned: what to run or call, and how to retry it."""

    kind: str  # exec | webhook
    target: tuple[str, ...] | str  # argv (exec) or URL (webhook)
    timeout: float
    attempts: int
    backoff: float
    backoff_max: float

    def to_json(self) -> str:
        target = list(self.target) if isinstance(self.target, tuple) else self.target
        return json.dumps({"target": target, "timeout": self.timeout, "attempts": self.attempts,
                           "backoff": self.backoff, "backoff_max": self.backoff_max})

    @classmethod
    def from_json(cls, kind: str, text: str) -> HookSpec:
        d = json.loads(text)
        t = d["target"]
        return cls(kind, tuple(str(a) for a in t) if isinstance(t, list) else str(t), float(d["timeout"]),
                   int(d["attempts"]), float(d["backoff"]), float(d["backoff_max"]))

    def delay(self, tries: int) -> float:
        """Seconds before the next try after ``tries`` failed ones (1 -> ``backoff``, doubling)."""
        return float(min(self.backoff * (2 ** max(0, tries - 1)), self.backoff_max))


@dataclass(frozen=True)
class Delivery:
    """One ``deliveries`` row, decoded."""

    id: int
    doc_id: int
    spec: HookSpec
    route: str
    sidecar: Path
    payload: bytes
    state: str
    attempts: int
    next_try: float
    error: str | None
    updated: float

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def key(self) -> str:
        """The idempotency key: the document id, the same on every try and after any crash."""
        return str(self.doc_id)

    @property
    def tag(self) -> str:
        return f"doc-{self.doc_id}"

    def to_json(self) -> dict[str, Any]:
        """As ``status --json`` and ``/status`` list it (the target as ``target_text`` shows it)."""
        return {
            "id": self.id, "document_id": self.doc_id, "kind": self.kind, "target": target_text(self.spec),
            "route": self.route, "sidecar": str(self.sidecar), "state": self.state, "attempts": self.attempts,
            "max_attempts": self.spec.attempts, "next_try": round(self.next_try, 3), "error": self.error,
            "updated": round(self.updated, 3),
        }


#: Journals whose table is known to exist (created once per ``Journal`` object, not per call).
_READY: weakref.WeakSet[Journal] = weakref.WeakSet()


def _ensure(journal: Journal) -> bool:
    """Create the table in a writable journal; whether the table is there to read."""
    if journal in _READY:
        return True
    if journal.readonly:
        db = journal._conn()
        if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='deliveries'").fetchone() is None:
            return False
    else:
        with journal._tx() as db:
            for stmt in SCHEMA.split(";"):
                if stmt.strip():
                    db.execute(stmt)
    _READY.add(journal)
    return True


def plan(journal: Journal, doc_id: int, route: str, hooks: Sequence[HookSpec], sidecar: Path, payload: bytes) -> None:
    """Record ``doc_id``'s deliveries (replacing any earlier ones of it) in one transaction. Call it
    before the document is recorded done: nothing is delivered before that (module contract)."""
    _ensure(journal)
    now = time.time()
    hold = getattr(journal, "holding", None)  # a shared journal: only the document's holder plans (leases.py)
    with hold(doc_id) if hold is not None else contextlib.nullcontext(), journal._tx() as db:
        db.execute("DELETE FROM deliveries WHERE doc_id=?", (doc_id,))
        for h in hooks:
            db.execute(
                "INSERT INTO deliveries(doc_id, kind, spec, route, sidecar, payload, state, attempts, next_try, created,"
                " updated) VALUES (?,?,?,?,?,?,'pending',0,0,?,?)",
                (doc_id, h.kind, h.to_json(), route, db_path(sidecar), payload, now, now),
            )


def due(journal: Journal, now: float, *, exclude: Sequence[int] = (), doc_ids: Sequence[int] | None = None,
        limit: int = 1) -> list[Delivery]:
    """Pending deliveries of finished documents whose time has come, soonest first; not those in
    ``exclude`` (being delivered), only those of ``doc_ids`` when given."""
    if not _ensure(journal):
        return []
    sql, args = _pending_sql(exclude, doc_ids)
    rows = journal._conn().execute(
        f"SELECT dl.* FROM deliveries dl JOIN documents d ON d.id = dl.doc_id WHERE {sql} AND dl.next_try <= ?"
        " ORDER BY dl.next_try, dl.id LIMIT ?", (*args, now, limit),
    ).fetchall()
    return [_delivery(r) for r in rows]


def claim_due(journal: Journal, now: float, *, exclude: Sequence[int] = (),
              doc_ids: Sequence[int] | None = None) -> Delivery | None:
    """The next due delivery for this process to make. The SQLite journal has one daemon: the
    soonest due (``due``; the dispatcher keeps its own threads apart). A shared journal
    (``journal.shared``) has several: the row is claimed -- ``owner`` (host:pid) and a lease, in
    one ``UPDATE ... FOR UPDATE SKIP LOCKED`` -- so each delivery is made by one daemon; the
    claimant's heartbeat renews the lease, and a claim whose lease ran out (its daemon died) is
    taken by the next daemon that looks."""
    if not getattr(journal, "shared", False):
        got = due(journal, now, exclude=exclude, doc_ids=doc_ids)
        return got[0] if got else None
    if not _ensure(journal):
        return None
    sql, args = _pending_sql(exclude, doc_ids)
    owner, lease = journal.owner, journal.lease  # type: ignore[attr-defined]  # PostgresJournal
    with journal._tx() as db:
        row = db.execute(
            "UPDATE deliveries SET owner=?, lease_until=? WHERE id = (SELECT dl.id FROM deliveries dl JOIN documents d"
            f" ON d.id = dl.doc_id WHERE {sql} AND dl.next_try <= ? AND (dl.owner IS NULL OR dl.lease_until < ?)"
            " ORDER BY dl.next_try, dl.id LIMIT 1 FOR UPDATE OF dl SKIP LOCKED) RETURNING *",
            (owner, now + lease, *args, now, now),
        ).fetchone()
    return None if row is None else _delivery(row)


def _claimed(journal: Journal) -> tuple[str, str, tuple[Any, ...]]:
    """A shared journal's outcome writes: (SET part ending the claim, WHERE part: only by its
    claimant, its arguments); nothing for the SQLite journal."""
    if not getattr(journal, "shared", False):
        return "", "", ()
    return ", owner=NULL, lease_until=NULL", " AND owner=?", (journal.owner,)  # type: ignore[attr-defined]


def next_try(journal: Journal, *, exclude: Sequence[int] = (), doc_ids: Sequence[int] | None = None) -> float | None:
    """When the soonest pending delivery of a finished document is due (None: nothing pending);
    with a shared journal, one another daemon holds is due when its lease runs out."""
    if not _ensure(journal):
        return None
    sql, args = _pending_sql(exclude, doc_ids)
    when = "GREATEST(dl.next_try, COALESCE(dl.lease_until, 0))" if getattr(journal, "shared", False) else "dl.next_try"
    row = journal._conn().execute(
        f"SELECT min({when}) AS t FROM deliveries dl JOIN documents d ON d.id = dl.doc_id WHERE {sql}", args,
    ).fetchone()
    return None if row is None or row["t"] is None else float(row["t"])


def _pending_sql(exclude: Sequence[int], doc_ids: Sequence[int] | None) -> tuple[str, list[Any]]:
    sql = f"dl.state='pending' AND d.state IN ({','.join('?' * len(FINISHED))})"
    args: list[Any] = list(FINISHED)
    if exclude:
        sql += f" AND dl.id NOT IN ({','.join('?' * len(exclude))})"
        args += list(exclude)
    if doc_ids is not None:
        sql += f" AND dl.doc_id IN ({','.join('?' * len(doc_ids)) or 'NULL'})"
        args += list(doc_ids)
    return sql, args


def started(journal: Journal, delivery_id: int, attempts: int) -> None:
    """A try begins: it counts before it is made, so tries cut off by crashes are bounded too."""
    _, mine, who = _claimed(journal)
    with journal._tx() as db:
        db.execute(f"UPDATE deliveries SET attempts=?, updated=? WHERE id=? AND state='pending'{mine}",
                   (attempts, time.time(), delivery_id, *who))


def delivered(journal: Journal, delivery_id: int, attempts: int) -> None:
    end, mine, who = _claimed(journal)
    with journal._tx() as db:
        db.execute(
            f"UPDATE deliveries SET state='delivered', attempts=?, error=NULL, payload=NULL, updated=?{end} WHERE id=?"
            f" AND state='pending'{mine}", (attempts, time.time(), delivery_id, *who),
        )


def retry_later(journal: Journal, delivery_id: int, attempts: int, error: str, when: float) -> None:
    """Pending again, from ``when``; with a shared journal, for any daemon to try."""
    end, mine, who = _claimed(journal)
    with journal._tx() as db:
        db.execute(
            f"UPDATE deliveries SET attempts=?, error=?, next_try=?, updated=?{end} WHERE id=? AND state='pending'{mine}",
            (attempts, error, when, time.time(), delivery_id, *who),
        )


def failed(journal: Journal, delivery_id: int, attempts: int, error: str) -> None:
    end, mine, who = _claimed(journal)
    with journal._tx() as db:
        db.execute(
            f"UPDATE deliveries SET state='failed', attempts=?, error=?, updated=?{end} WHERE id=? AND state='pending'{mine}",
            (attempts, error, time.time(), delivery_id, *who),
        )


def of_document(journal: Journal, doc_id: int) -> list[Delivery]:
    """Every delivery row of one document (any state), by kind."""
    if not _ensure(journal):
        return []
    rows = journal._conn().execute("SELECT * FROM deliveries WHERE doc_id=? ORDER BY kind", (doc_id,)).fetchall()
    return [_delivery(r) for r in rows]


def pending_count(journal: Journal) -> int:
    """Deliveries waiting to be made (their document is done; not delivered nor failed yet)."""
    if not _ensure(journal):
        return 0
    sql, args = _pending_sql((), None)
    row = journal._conn().execute(
        f"SELECT count(*) AS n FROM deliveries dl JOIN documents d ON d.id = dl.doc_id WHERE {sql}", args
    ).fetchone()
    return int(row["n"])


def summary(journal: Journal | None, limit: int = 10) -> dict[str, Any]:
    """The ``hooks`` part of ``status --json`` and ``/status``: counts (pending, failed, delivered)
    and up to ``limit`` pending (soonest first) and failed (newest first) deliveries. Read-only;
    ``None`` (no journal yet) gives the empty summary."""
    out: dict[str, Any] = {"pending": 0, "failed": 0, "delivered": 0, "pending_deliveries": [], "failed_deliveries": []}
    if journal is None or not _ensure(journal):
        return out
    db = journal._conn()
    out["pending"] = pending_count(journal)
    for state in ("failed", "delivered"):
        out[state] = int(db.execute("SELECT count(*) AS n FROM deliveries WHERE state=?", (state,)).fetchone()["n"])
    sql, args = _pending_sql((), None)
    pending = db.execute(
        f"SELECT dl.* FROM deliveries dl JOIN documents d ON d.id = dl.doc_id WHERE {sql}"
        " ORDER BY dl.next_try, dl.id LIMIT ?", (*args, limit),
    ).fetchall()
    failed_rows = db.execute(
        "SELECT * FROM deliveries WHERE state='failed' ORDER BY updated DESC, id DESC LIMIT ?", (limit,)
    ).fetchall()
    out["pending_deliveries"] = [_delivery(r).to_json() for r in pending]
    out["failed_deliveries"] = [_delivery(r).to_json() for r in failed_rows]
    return out


def target_text(spec: HookSpec) -> str:
    """The hook as logs and status show it: the command line, or the URL without its user, password,
    query and fragment (where tokens tend to be)."""
    if isinstance(spec.target, tuple):
        import shlex

        return shlex.join(spec.target)
    from urllib.parse import urlsplit

    u = urlsplit(spec.target)
    host = u.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{u.port}" if u.port else ""
    except ValueError:
        port = ""
    return f"{u.scheme}://{host}{port}{u.path}"


def _delivery(r: sqlite3.Row) -> Delivery:
    return Delivery(
        id=int(r["id"]), doc_id=int(r["doc_id"]), spec=HookSpec.from_json(r["kind"], r["spec"]), route=r["route"],
        sidecar=from_db_path(r["sidecar"]) or Path(), payload=bytes(r["payload"] or b""), state=r["state"],
        attempts=int(r["attempts"]), next_try=float(r["next_try"]), error=r["error"], updated=float(r["updated"]),
    )
