"""Retention (issue 34 item 4, ``daemon.journal.retention``): raw/<id>/ pruned by age, finished rows
compacted with the file still known and its content still found as a duplicate, the journal
vacuumed once it is mostly free pages, and the state folder's size recorded for ``status`` -- on
real folders and real SQLite and PostgreSQL journals."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from daemon.journal import retention
from daemon.journal.store import AdmitAction, Journal, sha256_file, status_summary

DAY = 86400.0


def _cfg(state: Path, *, raw_days: float = 0.0, journal_days: float = 0.0) -> SimpleNamespace:
    return SimpleNamespace(daemon=SimpleNamespace(state_dir=state, keep_raw_days=raw_days, keep_journal_days=journal_days,
                                                  maintenance_interval=DAY))


def _done(j: Journal, path: Path, body: bytes, out: Path) -> int:
    path.write_bytes(body)
    doc = j.admit(path, "in").document
    assert doc is not None and j.claim(doc.id) is not None
    j.set_planned(doc.id, [out])
    j.finish(doc.id, language="en", doctype="letter", route="all", pages=1, outputs=[out], final_path=path,
             timings={"ocr": 1.5, "write": 0.1})
    return doc.id


def test_raw_folders_older_than_keep_raw_days_are_pruned_and_the_size_is_recorded(tmp_path: Path) -> None:
    state = tmp_path / "state"
    j = Journal(state)
    now = time.time()
    for doc_id, age_days in [(1, 40), (2, 31), (3, 29), (4, 0)]:
        d = state / "raw" / str(doc_id)
        d.mkdir(parents=True)
        (d / "scan.raw.md").write_text("page text " * 200)
        os.utime(d, (now - age_days * DAY, now - age_days * DAY))
    (state / "raw" / "notes.txt").write_text("not a document folder")  # files are left alone
    assert retention.prune_raw(state, 0) == 0  # 0: kept for ever
    done = retention.run(_cfg(state, raw_days=30), j)
    assert done["raw_pruned"] == 2
    assert sorted(p.name for p in (state / "raw").iterdir()) == ["3", "4", "notes.txt"]
    size = status_summary(j)["state_size"]
    assert size["raw_entries"] == 5 and size["raw_bytes"] > 0 and size["journal_bytes"] > 0
    assert abs(size["measured"] - time.time()) < 60
    j.close()


def test_compacted_rows_stay_known_and_still_find_duplicates(tmp_path: Path, open_j: Callable[[Path], Journal]) -> None:
    j = open_j(tmp_path / "state")
    inbox = tmp_path / "in"
    inbox.mkdir()
    old_id = _done(j, inbox / "old.pdf", b"%PDF-1.4 old\n%%EOF\n", inbox / "old.txt")
    new_id = _done(j, inbox / "new.pdf", b"%PDF-1.4 new\n%%EOF\n", inbox / "new.txt")
    with j._tx() as db:  # the old one finished 400 days ago
        db.execute("UPDATE documents SET updated=? WHERE id=?", (time.time() - 400 * DAY, old_id))
    done = retention.run(_cfg(tmp_path / "state", journal_days=365), j)
    assert done["rows_compacted"] == 1
    old, new = j.get(old_id), j.get(new_id)
    assert old is not None and new is not None
    assert old.timings == {} and j.planned(old_id) == [] and new.timings == {"ocr": 1.5, "write": 0.1}
    assert old.outputs == (inbox / "old.txt",) and old.sha256 == sha256_file(inbox / "old.pdf")
    # the kept source is still known (no second OCR), its output never an input, its content a duplicate
    assert j.admit(inbox / "old.pdf", "in").action == AdmitAction.KNOWN
    assert j.known_unchanged([(inbox / "old.pdf", (st := os.lstat(inbox / "old.pdf")).st_size, st.st_mtime)]) == {inbox / "old.pdf"}
    assert j.is_output(inbox / "old.txt")
    (inbox / "copy.pdf").write_bytes((inbox / "old.pdf").read_bytes())
    adm = j.admit(inbox / "copy.pdf", "in")
    assert adm.action == AdmitAction.DUPLICATE and adm.duplicate_of == old_id
    assert retention.run(_cfg(tmp_path / "state", journal_days=365), j)["rows_compacted"] == 0  # once


def test_a_journal_mostly_free_pages_is_vacuumed(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    with j._tx() as db:
        db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [(f"k{i}", "x" * 2000) for i in range(2000)])
    assert not retention.vacuum(j)  # nothing free
    with j._tx() as db:
        db.execute("DELETE FROM meta WHERE key LIKE 'k%'")
    pages = j._conn().execute("PRAGMA page_count").fetchone()[0]
    assert retention.vacuum(j)
    assert j._conn().execute("PRAGMA page_count").fetchone()[0] < pages / 4
    j.close()
