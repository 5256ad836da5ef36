"""The journal's lookups and upkeep that a million rows must not slow (issue 34), as a base class of
``store.Journal`` (split from store.py, which holds the rest of its statements, to keep that
module near its size limit; same contract: every statement here is an index search or an index
range, checked by tests/integration/test_journal_plans.py on SQLite and PostgreSQL).

Contract:
- ``known_under``: what a rescan compares a folder's files with, for the whole folder at once (two
  index range reads). ``known_unchanged`` / ``outputs_among``: a batch of files asked at once
  (``KNOWN_CHUNK`` paths per query); ``is_output`` one path (the ``outputs`` table, archived
  sources' final path).
- ``counts``: documents by state from ``state_counts`` (kept by the schema's triggers).
- ``compact_finished``: ``retention``'s compaction of old finished rows (still known, still a
  duplicate's original). ``_add_rebuilt_new``: ``add_rebuilt`` in batches. ``_fill_outputs``:
  schema version 3's migration of the output names into ``outputs``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from daemon.journal.rows import RebuiltDoc, _dump_paths, db_path

#: A path as ``known_unchanged`` is given it (and gives it back): a ``Path`` or its string.
P = TypeVar("P", Path, str)

#: Paths per query of ``known_unchanged`` (SQLite allows 32,766 parameters; PostgreSQL 65,535).
KNOWN_CHUNK = 512


class Lookups:
    """Base of ``store.Journal``: see the module docstring."""

    readonly: bool

    def _conn(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _tx(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _fill_outputs(self, db: sqlite3.Connection) -> None:
        """The ``outputs`` table from the rows' JSON columns (version 3's migration: once)."""
        rows = db.execute("SELECT id, outputs, planned FROM documents WHERE outputs IS NOT NULL OR planned IS NOT NULL")
        batch: list[tuple[str, int]] = []
        for r in rows.fetchall():
            for col in ("outputs", "planned"):
                batch += [(str(db_path(p)), int(r["id"])) for p in json.loads(r[col] or "[]")]
        for i in range(0, len(batch), 10_000):
            db.executemany("INSERT OR REPLACE INTO outputs(path, doc_id) VALUES (?,?)", batch[i:i + 10_000])

    def _add_rebuilt_new(self, db: sqlite3.Connection, docs: list[RebuiltDoc], now: float) -> int:
        """``add_rebuilt`` of documents without an id, in batches: one lookup of the finished ones
        per ``KNOWN_CHUNK`` paths, the rows and their outputs inserted with ``executemany`` (a
        journal rebuilt from 100,000 sidecars, or the scale bench's: issue 34)."""
        added = 0
        for i in range(0, len(docs), KNOWN_CHUNK):
            chunk = docs[i:i + KNOWN_CHUNK]
            keys = [str(db_path(d.path)) for d in chunk]
            marks = ",".join("?" * len(keys))
            have = {(r["path"], r["sha256"]) for r in db.execute(
                f"SELECT path, sha256 FROM documents INDEXED BY documents_path WHERE path IN ({marks})"
                " AND state IN ('done','duplicate','failed')",
                keys).fetchall()}
            new = []
            for key, d in zip(keys, chunk, strict=True):
                if (key, d.sha256) not in have:
                    have.add((key, d.sha256))
                    new.append((key, d))
            if not new:
                continue
            db.executemany(
                "INSERT INTO documents(path, inbox, size, mtime, sha256, state, error, language, doctype, route, pages,"
                " outputs, final_path, duplicate_of, created, updated) VALUES (?,?,?,-1,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(key, d.inbox, d.size, d.sha256, d.state.value, d.error, d.language, d.doctype, d.route, d.pages,
                  _dump_paths(list(d.outputs)), db_path(d.final_path), d.duplicate_of, d.created, now) for key, d in new])
            ids = {(r["path"], r["sha256"]): int(r["id"]) for r in db.execute(
                f"SELECT id, path, sha256 FROM documents WHERE path IN ({marks}) ORDER BY id", keys).fetchall()}
            outs = [(db_path(o), ids[(key, d.sha256)]) for key, d in new for o in d.outputs]
            if outs:
                db.executemany("INSERT OR REPLACE INTO outputs(path, doc_id) VALUES (?,?)", outs)
            added += len(new)
        return added

    def known_unchanged(self, files: Iterable[tuple[P, int, float]]) -> set[P]:
        """Of ``files`` -- (path, size, mtime) as ``os.lstat`` gives them -- the paths whose newest
        row (as ``find`` picks it: source at, or moved to, that path) is that file unchanged: its
        ``path`` is this path with this size and mtime. The rescan leaves those out before the
        stability tracker sees them (the same test the tracker's ``skip`` makes one file at a time
        with ``find``). One indexed query per ``KNOWN_CHUNK`` paths (issue 34: one query per file
        made a rescan of N kept files cost O(N) queries, each O(N) without the final_path index)."""
        out: set[P] = set()
        todo = [(str(db_path(p)), p, size, mtime) for p, size, mtime in files]
        db = self._conn()
        for i in range(0, len(todo), KNOWN_CHUNK):
            chunk = todo[i:i + KNOWN_CHUNK]
            keys: list[str] = [c[0] for c in chunk]
            # padded to a power of two (repeating a key changes nothing): a handful of distinct
            # statements for SQLite's and pgsql.dml's statement caches, not one per chunk length
            width = 1 << (len(keys) - 1).bit_length()
            keys += [keys[-1]] * (width - len(keys))
            marks = ",".join("?" * width)
            newest: dict[str, tuple[int, str, int, float]] = {}  # key -> (id, path, size, mtime)
            for r in db.execute(
                f"SELECT id, path, final_path, size, mtime FROM documents WHERE path IN ({marks}) OR final_path IN ({marks})",
                (*keys, *keys),
            ).fetchall():
                row = (r["id"], r["path"], r["size"], r["mtime"])
                for key in (row[1], r["final_path"]):
                    if key is not None:
                        have = newest.get(key)
                        if have is None or row[0] > have[0]:
                            newest[key] = row
            for key, path, size, mtime in chunk:
                found = newest.get(key)
                if found is not None and found[1] == key and found[2] == size and found[3] == mtime:
                    out.add(path)
        return out

    def known_under(self, folder: Path | str) -> dict[str, tuple[int, float]]:
        """For every file under ``folder`` (at any depth) that the journal has as a source at that
        path, its newest row's (size, mtime), keyed by the path relative to ``folder``: a rescan
        leaves out a file whose ``lstat`` gives the same pair, as ``known_unchanged`` would. Two
        index range reads for the whole folder (its ``path`` range, ordered by id so the newest row
        wins; then its ``final_path`` range), not a query per file or per batch of files (issue 34:
        100k kept files rescanned in under a second of CPU). Left out, so that the rescan offers
        them and the tracker asks ``find`` about each: a path some row was moved to from elsewhere
        (``find`` may pick that row), and names stored as ``b64:`` (not UTF-8: outside the range)."""
        base = str(db_path(folder)).rstrip("/")
        lo, hi = base + "/", base + "0"  # "0" follows "/": every path that starts with base + "/"
        cut = len(lo)
        out = {path[cut:]: (size, mtime) for path, size, mtime in _tuples(
            self._conn(), "SELECT path, size, mtime FROM documents INDEXED BY documents_path WHERE path >= ? AND path < ?"
            " ORDER BY path, id", (lo, hi))}
        for (moved_to,) in _tuples(
                self._conn(), "SELECT final_path FROM documents INDEXED BY documents_final_path"
                " WHERE final_path >= ? AND final_path < ? AND path <> final_path", (lo, hi)):
            out.pop(moved_to[cut:], None)
        return out

    def compact_finished(self, before: float, batch: int = 10_000) -> int:
        """Compact rows finished (done, duplicate) before ``before``: their timings, planned names
        and error dropped; path, size, mtime, sha256, outputs and final path kept, so the file is
        still known, its content still found as a duplicate and its outputs never taken as input
        (``retention``). ``batch`` rows per transaction; returns how many."""
        n = 0
        for state in ("done", "duplicate"):
            while True:
                with self._tx() as db:
                    cur = db.execute(
                        "UPDATE documents SET timings=NULL, planned=NULL, error=NULL WHERE id IN (SELECT id FROM documents"
                        " WHERE state=? AND updated<? AND (timings IS NOT NULL OR planned IS NOT NULL OR error IS NOT NULL)"
                        " LIMIT ?)", (state, before, batch),
                    )
                    n += max(0, cur.rowcount)
                if cur.rowcount < batch:
                    break
        return n

    def counts(self) -> dict[str, int]:
        """Documents by state, from ``state_counts`` (kept by triggers: a few rows, whatever the
        journal's size); a read-only open of a journal older than version 3 counts its rows."""
        db = self._conn()
        if self.readonly and not self._has_table("state_counts"):
            rows = db.execute("SELECT state, COUNT(*) AS n FROM documents GROUP BY state").fetchall()
        else:
            rows = db.execute("SELECT state, n FROM state_counts WHERE n > 0").fetchall()
        return {r["state"]: int(r["n"]) for r in rows}

    def _has_table(self, name: str) -> bool:
        return self._conn().execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None

    def is_output(self, path: Path | str) -> bool:
        """Whether the daemon wrote or planned ``path`` as an output, or archived a source there
        (the watcher never takes these as input, even inside an inbox): two index searches."""
        key = db_path(path)
        db = self._conn()
        if db.execute("SELECT 1 FROM outputs WHERE path=?", (key,)).fetchone() is not None:
            return True
        return db.execute(
            "SELECT 1 FROM documents INDEXED BY documents_final_path WHERE final_path=? AND path<>final_path"
            " AND state IN ('done', 'duplicate') LIMIT 1",
            (key,),
        ).fetchone() is not None

    def outputs_among(self, paths: Iterable[P]) -> set[P]:
        """Of ``paths``, those ``is_output`` says the daemon wrote, archived to or planned: one
        query per ``KNOWN_CHUNK`` paths (a rescan asks about the files it did not skip)."""
        todo = [(str(db_path(p)), p) for p in paths]
        out: set[P] = set()
        db = self._conn()
        for i in range(0, len(todo), KNOWN_CHUNK):
            chunk = todo[i:i + KNOWN_CHUNK]
            keys = [c[0] for c in chunk]
            width = 1 << (len(keys) - 1).bit_length()  # padded: a handful of distinct statements
            keys += [keys[-1]] * (width - len(keys))
            marks = ",".join("?" * width)
            hit = {r["path"] for r in db.execute(f"SELECT path FROM outputs WHERE path IN ({marks})", keys).fetchall()}
            hit |= {r["final_path"] for r in db.execute(
                f"SELECT final_path FROM documents INDEXED BY documents_final_path WHERE final_path IN ({marks}) AND path<>final_path"
                " AND state IN ('done', 'duplicate')", keys).fetchall()}
            out.update(p for key, p in chunk if key in hit)
        return out


def _tuples(db: Any, sql: str, params: tuple[object, ...]) -> Iterable[tuple[Any, ...]]:
    """The rows of ``sql`` as plain tuples, read as they come on SQLite (no ``sqlite3.Row`` per row:
    ``known_under`` reads one row per kept file); PostgreSQL's rows are dicts in column order."""
    if isinstance(db, sqlite3.Connection):
        cur = db.cursor()
        cur.row_factory = None
        return cur.execute(sql, params)
    return [tuple(r.values()) for r in db.execute(sql, params).fetchall()]
