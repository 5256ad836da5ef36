"""Each finished page of a document in processing, kept so that the document resumes where it
stopped, and the progress it gives.

Contract:
- ``record_page()`` commits each finished page of a document in processing (its raw engine text
  and page facts) as it completes (synced like every commit: a crash after it returns does not
  lose it); ``done_pages()`` gives them back so a document interrupted by a crash, ``kill -9``,
  restart or drain resumes from there. They are kept only while the document is unfinished: a
  final state drops them in its own transaction (``drop_pages``, ``states``). A page is reused
  only under the same ``key`` (engine and render settings): a page read by another engine or at
  another size is read again, and so is a record this version cannot read.
- ``set_total_pages``: the document's page count, once it is opened.
- ``progress()`` (read-only, any process, e.g. ``ocr-daemon status`` or the HTTP endpoint) gives one
  ``models.Progress`` per document in processing: pages done/total, pages/s of this attempt, ETA.
- A read-only open of a journal older than the pages table has no pages: no progress, no resume.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path

from daemon.journal.base import JournalBase
from daemon.journal.rows import from_db_path
from daemon.models import Progress
from daemon.pagerecord import PageResult

log = logging.getLogger(__name__)


def drop_pages(db: sqlite3.Connection, doc_id: int) -> None:
    """Drop the page records of ``doc_id`` (it reached a final state, or its content changed)."""
    db.execute("DELETE FROM pages WHERE doc_id=?", (doc_id,))


class PageRecords(JournalBase):
    """A document's page records and progress (module contract); part of ``store.Journal``."""

    def set_total_pages(self, doc_id: int, n: int) -> None:
        """The document's page count, known once it is opened (progress: done/total)."""
        with self._tx() as db:
            db.execute("UPDATE documents SET total_pages=?, updated=? WHERE id=?", (n, time.time(), doc_id))

    def record_page(self, doc_id: int, key: str, page: PageResult) -> None:
        """Commit one finished page (synced like every commit: a crash after this returns does
        not lose it). Recording a page again replaces it."""
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO pages(doc_id, idx, key, text, engine, seconds, flags, meta, source, info, created)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (doc_id, page.index, key, page.text, page.engine, page.seconds, json.dumps(list(page.flags)),
                 json.dumps(dict(page.meta), default=str), page.source, page.to_record(), time.time()),
            )

    def done_pages(self, doc_id: int, key: str) -> dict[int, PageResult]:
        """Pages of ``doc_id`` already recorded under ``key``, by index. Pages recorded under
        another key (another engine or render size) are dropped: they will be read again, and so
        is a record this version cannot read (``PageResult.from_record``)."""
        if self.readonly and not self._has_pages():
            return {}
        db = self._conn()
        rows = db.execute("SELECT * FROM pages WHERE doc_id=? ORDER BY idx", (doc_id,)).fetchall()
        out: dict[int, PageResult] = {}
        stale = False
        for r in rows:
            if r["key"] != key:
                stale = True
                continue
            try:
                page = PageResult.from_record(
                    index=int(r["idx"]), text=r["text"], engine=r["engine"], seconds=float(r["seconds"]),
                    flags=list(json.loads(r["flags"])), meta=dict(json.loads(r["meta"])), source=r["source"],
                    info=r["info"],
                )
                out[page.index] = page
            except (TypeError, ValueError, KeyError, IndexError) as e:  # damaged or older: read again
                log.warning("doc-%d: page %d record unreadable (%s); reading the page again", doc_id, r["idx"], e)
        if stale and not self.readonly:
            with self._tx() as db:
                db.execute("DELETE FROM pages WHERE doc_id=? AND key!=?", (doc_id, key))
        return out

    def progress(self) -> list[Progress]:
        """One ``Progress`` per document in processing, oldest first. Read-only; cheap (one
        query); callable from any thread or process (``ocr-daemon status``, the HTTP endpoint)."""
        db = self._conn()
        if not self._has_pages():
            return []
        rows = db.execute(
            "SELECT d.id, d.path, d.inbox, d.total_pages, d.started,"
            " (SELECT count(*) FROM pages p WHERE p.doc_id=d.id) AS done,"
            " (SELECT count(*) FROM pages p WHERE p.doc_id=d.id AND p.created >= d.started) AS done_now"
            " FROM documents d WHERE d.state='processing' ORDER BY d.id"
        ).fetchall()
        now = time.time()
        return [
            Progress.compute(
                doc_id=int(r["id"]), path=from_db_path(r["path"]) or Path(), inbox=r["inbox"],
                pages_done=int(r["done"]), pages_total=r["total_pages"], done_this_attempt=int(r["done_now"]),
                started=float(r["started"] or now), now=now,
            )
            for r in rows
        ]
