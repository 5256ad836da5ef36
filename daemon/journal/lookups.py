"""The journal's reads: a document by id or path, the work queue's next ids, planned outputs,
the status lists, the counts by state, and the batched lookups of a rescan.

Contract:
- Reads only: nothing here writes (``store.Journal``'s ``readonly`` open runs all of it); rows come
  out as ``JournalRow`` (frozen; paths, states and JSON columns decoded), never as
  ``sqlite3.Row``/dicts.
- A million rows slow nothing (issue 34): every statement is an index search or an index range,
  checked by tests/integration/test_journal_plans.py on SQLite and PostgreSQL. SQLite's planner
  has no statistics: beside a path, sha256 or final path it may pick the ``state`` index, a range
  of every done row, so those statements name their index (``INDEXED BY``; ``pgsql.dml`` drops it
  for PostgreSQL, whose planner has statistics).
- ``get`` / ``find``: one row by id, or the newest whose source is (or was moved to) a path.
- ``queued(limit)``: the work queue's next ids, not a backlog's every id; ``planned`` /
  ``planned_by_unfinished``: output names claimed before they are written.
- ``retrying``, ``waiting_for_space``, ``recent_failures``, ``recent_finished``: ``status_summary``'s
  lists, index ranges of the in-flight and recent rows (partial indexes where a condition, not a
  state, picks them).
- ``counts``: documents by state from ``state_counts`` (kept by the schema's triggers).
- ``known_under``: what a rescan compares a folder's files with, for the whole folder at once (two
  index range reads). ``known_unchanged`` / ``outputs_among``: a batch of files asked at once
  (``KNOWN_CHUNK`` paths per query); ``is_output`` one path (the ``outputs`` table, archived
  sources' final path).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from daemon.journal.base import JournalBase
from daemon.journal.known import KnownFiles
from daemon.journal.rows import WAITING_FOR_SPACE, JournalRow, _row, db_path

#: A path as ``known_unchanged`` is given it (and gives it back): a ``Path`` or its string.
P = TypeVar("P", Path, str)

#: Paths per query of ``known_unchanged`` (SQLite allows 32,766 parameters; PostgreSQL 65,535).
KNOWN_CHUNK = 512


class Lookups(JournalBase):
    """The journal's reads (module contract); part of ``store.Journal``."""

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

    def queued(self, limit: int | None = None) -> list[tuple[int, float]]:
        """(id, not_before) of the queued rows, soonest due first (then oldest); at most ``limit``
        (the work queue takes the next few from the journal, not a backlog's every id: issue 34)."""
        rows = self._conn().execute(
            "SELECT id, not_before FROM documents WHERE state='queued' ORDER BY not_before, id LIMIT ?",
            (1 << 62 if limit is None else limit,),
        ).fetchall()
        return [(int(r["id"]), float(r["not_before"])) for r in rows]

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

    def known_under(self, folder: Path | str) -> KnownFiles:
        """For every file under ``folder`` (at any depth) that the journal has as a source at that
        path, its newest row's (size, mtime), by the path relative to ``folder``: a rescan
        leaves out a file whose ``lstat`` gives the same pair, as ``known_unchanged`` would. Two
        index range reads for the whole folder (its ``final_path`` range; then its ``path`` range,
        ordered by id so the newest row wins), not a query per file or per batch of files (issue
        34: 100k kept files rescanned in under a second of CPU), read as they come into a
        ``KnownFiles`` (24 bytes a file). Left out, so that the rescan offers them and the
        tracker asks ``find`` about each: a path some row was moved to from elsewhere (``find``
        may pick that row), and names stored as ``b64:`` (not UTF-8: outside the range)."""
        base = str(db_path(folder)).rstrip("/")
        lo, hi = base + "/", base + "0"  # "0" follows "/": every path that starts with base + "/"
        cut = len(lo)
        moved_in = [moved_to[cut:] for (moved_to,) in _tuples(
            self._conn(), "SELECT final_path FROM documents INDEXED BY documents_final_path"
            " WHERE final_path >= ? AND final_path < ? AND path <> final_path", (lo, hi))]
        rows = _tuples(self._conn(), "SELECT path, size, mtime FROM documents INDEXED BY documents_path"
                       " WHERE path >= ? AND path < ? ORDER BY path, id", (lo, hi))
        return KnownFiles(_chunks(rows), cut=cut, leave_out=moved_in)

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


def _chunks(rows: Iterable[tuple[Any, ...]], size: int = 4096) -> Iterator[list[tuple[Any, ...]]]:
    """``rows`` ``size`` at a time (``KnownFiles`` reads a whole folder's rows, never all at once)."""
    it = iter(rows)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def _tuples(db: Any, sql: str, params: tuple[object, ...]) -> Iterable[tuple[Any, ...]]:
    """The rows of ``sql`` as plain tuples, read as they come on SQLite (no ``sqlite3.Row`` per row:
    ``known_under`` reads one row per kept file); on PostgreSQL fetched as tuples too (no dict)."""
    if isinstance(db, sqlite3.Connection):
        cur = db.cursor()
        cur.row_factory = None
        return cur.execute(sql, params)
    rows: list[tuple[Any, ...]] = db.execute(sql, params).tuples()
    return rows
