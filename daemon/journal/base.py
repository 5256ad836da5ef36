"""What every part of the journal stands on: this thread's connection and its write transactions.

Contract:
- The journal is assembled from parts, one responsibility each, each written once for both
  journals: ``states.StateChanges`` (a document's way through the states), ``pagerecords.PageRecords``
  (each finished page of a document in processing), ``lookups.Lookups`` (the reads),
  ``upkeep.Upkeep`` (the journal's own state: write check, identity, rebuild, compaction) and,
  for the shared journal only, ``leases.Leases`` (claims, leases, fencing, heartbeat).
  ``store.Journal`` (SQLite) and ``pgstore.PostgresJournal`` (PostgreSQL) put them together and
  add what differs: the connection, the transactions and the schema's migration.
- A part uses only what ``JournalBase`` declares: ``_conn()`` (this thread's connection, for
  reads), ``_tx(serial)`` (one write transaction, committed or rolled back whole; ``serial``: the
  shared journal serialises it behind its advisory lock -- SQLite serialises every write
  transaction anyway), ``_has_pages()`` and the attributes below. Every statement is written in
  SQLite's dialect; ``pgstore`` runs it through ``pgsql.dml``: the dialect differences stay there.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path


class JournalBase:
    """The connection and transactions the journal's parts run their statements on."""

    state_dir: Path
    #: The journal file (for the shared journal: its URL without password, for messages only).
    path: Path
    readonly: bool
    #: Called (on the failing thread) with the error of every write that fails because the
    #: journal cannot be written (not for constraint or usage errors): the daemon's
    #: ``JournalHealth`` turns it into "not ready" until a test write succeeds again.
    on_write_error: Callable[[sqlite3.Error], None] | None
    _local: threading.local

    def _conn(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _tx(self, serial: bool = True) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _has_pages(self) -> bool:
        """Whether this journal has the pages table (a read-only open of an old one has not)."""
        raise NotImplementedError
