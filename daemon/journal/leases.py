"""The shared journal's claims, leases and fencing: how several daemons on one PostgreSQL journal
share its documents without two of them writing one (``pgstore.PostgresJournal``'s part).

Contract:
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
- ``recover`` puts back only this node's rows (an earlier process of the same state folder,
  which the state-dir lock says is gone) and rows whose lease ran out -- never another live
  daemon's.
- ``daemons`` / ``holders``: who is alive, how fast, and who holds which document (status).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from daemon.journal.base import JournalBase
from daemon.journal.pgsql import LeaseLost
from daemon.journal.rows import _doc
from daemon.models import Document
from daemon.pagerecord import PageResult

if TYPE_CHECKING:
    from daemon.journal.pgstore import _Conn

log = logging.getLogger(__name__)

#: ``Journal`` writes of one document in processing, accepted only from its current claim
#: (fencing, module contract); after the last five the claim is over.
FENCED = ("set_planned", "set_total_pages", "strike", "set_final_path", "finish", "supersede", "fail",
          "retry_later", "finish_duplicate")
RELEASING = frozenset(FENCED[4:])
#: The token of a claim found lost: every later write of that document is refused until it is claimed again.
LOST = -1


class Leases(JournalBase):
    """Claims, leases and fencing of the shared journal (module contract); part of
    ``pgstore.PostgresJournal``, which sets the attributes below."""

    lease: float
    host: str
    #: This process: host:pid.
    owner: str
    #: This state folder: host:state_dir (the same after a restart).
    node: str
    started: float
    #: The claim token of each document this process holds (``claim``), checked by every write
    #: of it (``holding``); ``LOST`` once a write found the claim gone.
    _held: dict[int, int]
    _held_lock: threading.Lock
    _beat_stop: threading.Event
    _beat: threading.Thread | None

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
