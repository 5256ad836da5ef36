"""``open_journal(cfg)``: the journal a config names -- the embedded SQLite journal in
``daemon.state_dir`` (``daemon.journal_url`` null, the default) or the shared PostgreSQL one
(``postgresql://...``, ``pgstore.PostgresJournal``). Both have ``store.Journal``'s methods and
guarantees; psycopg is imported only for the second."""

from __future__ import annotations

from pathlib import Path

from daemon.config import Config
from daemon.journal.store import Journal


def open_journal(cfg: Config, *, readonly: bool = False, state_dir: Path | None = None) -> Journal:
    state = Path(state_dir if state_dir is not None else cfg.daemon.state_dir)
    url = cfg.daemon.journal_url
    if url:
        from daemon.journal.pgstore import PostgresJournal

        # the daemon's reads wait for a server that restarts (its writes fail and JournalHealth
        # holds new work back meanwhile); `status` (readonly) says at once that it is away
        return PostgresJournal(url, state, readonly=readonly, lease=cfg.daemon.journal_lease,
                               wait_reads=0.0 if readonly else float("inf"))
    return Journal(state, readonly=readonly)
