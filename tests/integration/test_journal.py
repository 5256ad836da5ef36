"""The journal, on real files and a real database: every test that is not about SQLite's own file
runs against both backends (``backend``: the embedded SQLite journal, and PostgreSQL on a real
server the tests start, tests/pgserver.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from daemon.document.model import Cell, Heading, Paragraph, Table
from daemon.errors import FatalError
from daemon.journal.store import SCHEMA, Journal, sha256_file
from daemon.models import DocState, PageLayout, TextBox, TextLine
from daemon.pagerecord import EngineText, LayerBlocks, PageGeometry, PageResult
from daemon.stages import Degraded


def _file(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


def test_admit_claim_finish_and_known(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    f = _file(tmp_path / "a.pdf", b"one")
    adm = j.admit(f, "in")
    assert adm.action == "queued" and adm.document is not None
    assert adm.document.sha256 == sha256_file(f)
    doc = j.claim(adm.document.id)
    assert doc is not None and doc.attempts == 1
    assert j.claim(adm.document.id) is None  # nobody takes it twice
    j.finish(doc.id, language="en", doctype="other", route="r", pages=1, outputs=[tmp_path / "a.txt"], final_path=f, timings={})
    assert j.admit(f, "in").action == "known"
    # touch: same content, new mtime -> still known (hash decides), not processed again
    os.utime(f, (1, 1))
    assert j.admit(f, "in").action == "known"
    assert j.counts() == {"done": 1}
    assert j.is_output(tmp_path / "a.txt") and j.is_output(str(tmp_path / "a.txt")) and not j.is_output(f)
    assert j.outputs_among([tmp_path / "a.txt", f]) == {tmp_path / "a.txt"}


def test_changed_content_same_path_is_new(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    f = _file(tmp_path / "a.pdf", b"one")
    d1 = j.admit(f, "in").document
    assert d1 is not None
    j.claim(d1.id)
    j.finish(d1.id, language="en", doctype="other", route="r", pages=1, outputs=[], final_path=f, timings={})
    f.write_bytes(b"two, longer")
    adm = j.admit(f, "in")
    assert adm.action == "queued" and adm.document is not None and adm.document.id != d1.id


def test_duplicate_content_under_new_name_links_or_processes(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    a = _file(tmp_path / "a.pdf", b"same bytes")
    d = j.admit(a, "in").document
    assert d is not None
    j.claim(d.id)
    j.finish(d.id, language="en", doctype="other", route="r", pages=1, outputs=[], final_path=None, timings={})
    b = _file(tmp_path / "b.pdf", b"same bytes")
    adm = j.admit(b, "in", duplicates="link")
    assert adm.action == "duplicate" and adm.duplicate_of == d.id
    c = _file(tmp_path / "c.pdf", b"same bytes")
    adm2 = j.admit(c, "in", duplicates="process")
    assert adm2.action == "queued" and adm2.duplicate_of is None


def test_recover_requeues_processing_rows_after_a_crash(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    f = _file(tmp_path / "a.pdf", b"x")
    d = j.admit(f, "in").document
    assert d is not None
    j.claim(d.id)
    j.close()
    j2 = open_j(tmp_path / "state")  # a new process after kill -9
    assert j2.counts() == {"processing": 1}
    assert j2.recover() == 1
    assert [i for i, _ in j2.queued()] == [d.id]


def test_retry_requeue_and_failures(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    f = _file(tmp_path / "a.pdf", b"x")
    d = j.admit(f, "in").document
    assert d is not None
    j.claim(d.id)
    j.retry_later(d.id, "engine down", 30)
    (qid, nb), = j.queued()
    assert qid == d.id and nb > 0
    j.claim(d.id)
    j.fail(d.id, "encrypted PDF", tmp_path / "failed" / "a.pdf")
    assert j.recent_failures()[0].error == "encrypted PDF"
    assert j.requeue(failed=True) == [d.id]
    row = j.get(d.id)
    assert row is not None and row.state == DocState.QUEUED


def test_concurrent_claims_from_threads_take_each_row_once(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    ids = []
    for i in range(40):
        d = j.admit(_file(tmp_path / f"f{i}.pdf", f"content {i}".encode()), "in").document
        assert d is not None
        ids.append(d.id)
    taken: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for i in ids:
            if j.claim(i) is not None:
                with lock:
                    taken.append(i)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == ids


def test_unusable_state_dir_is_fatal(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(FatalError) as ei:
        Journal(blocker / "state")
    assert ei.value.exit_code == 4


def test_readonly_journal_creates_nothing_sees_live_commits_and_refuses_writes(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    missing = tmp_path / "never-started"
    with pytest.raises(FatalError) as ei:
        Journal(missing, readonly=True)
    assert ei.value.exit_code == 4 and not missing.exists()  # no folder, no journal file

    writer = open_j(tmp_path / "state")  # the running daemon
    writer.admit(_file(tmp_path / "a.pdf", b"one"), "in")
    reader = open_j(tmp_path / "state", readonly=True)  # ocr-daemon status
    assert reader.counts() == {"queued": 1}
    writer.admit(_file(tmp_path / "b.pdf", b"two"), "in")
    assert reader.counts() == {"queued": 2}  # WAL: the reader sees the writer's later commit
    with pytest.raises(sqlite3.OperationalError, match="readonly|read-only"):
        reader.admit(_file(tmp_path / "c.pdf", b"three"), "in")
    assert writer.counts() == {"queued": 2}
    reader.close()
    writer.close()


# -- page records, progress, migration (issue 17) --------------------------------------------


def _page(i: int, text: str) -> PageResult:
    """An OCR page with every field the journal keeps: geometry (with a crop box on odd pages),
    word boxes, flags, engine facts and a degraded optional stage."""
    geometry = PageGeometry(size=(256, 362), source_size=(1240, 1754), rotation=90 * i, cropped=bool(i % 2),
                            crop_box=(10, 12, 1230, 1740) if i % 2 else None, script="Latin")
    layout = PageLayout((256, 362), [TextLine((5, 6, 120, 20), [TextBox("text", (5, 6, 40, 20)),
                                                                TextBox("äß", (45, 6, 120, 20))], 0)], True)
    return PageResult(
        index=i, engine="tesseract", content=EngineText(text, False, geometry, layout), seconds=0.25 * (i + 1),
        flags=("banded",) if i else (), meta={"languages": ["eng"], "confidence": 91.5},
        text_layer="glyph soup" if i == 3 else "",
        degraded=(Degraded("tables", "RuntimeError: boom"),) if i == 1 else (),
    )


def _layer_page(i: int) -> PageResult:
    """A text-layer page: its model blocks travel in the record, no geometry."""
    blocks = (Heading(1, "Title"), Paragraph("Body **bold**"),
              Table(2, 2, [Cell("a", 0, 0, header=True), Cell("b", 0, 1, header=True), Cell("1", 1, 0), Cell("2", 1, 1)],
                    header_rows=1))
    return PageResult(
        index=i, engine="text_layer", content=LayerBlocks(blocks, "# Title\n\nBody **bold**"), seconds=0.01,
        meta={"text_layer": {"chars": 20}},
    )


def test_page_records_round_trip_survive_reopen_and_are_dropped_when_final(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    d = j.admit(_file(tmp_path / "a.pdf", b"pages"), "in").document
    assert d is not None and j.claim(d.id) is not None
    j.set_total_pages(d.id, 5)
    for i in (0, 1, 3):
        j.record_page(d.id, "k1", _page(i, f"text of page {i}\nsecond line äß"))
    j.record_page(d.id, "k1", _layer_page(4))
    j.close()
    j2 = open_j(tmp_path / "state")  # another process after kill -9
    assert j2.recover() == 1
    got = j2.done_pages(d.id, "k1")
    assert sorted(got) == [0, 1, 3, 4]
    for i in (0, 1, 3):  # every field back as written
        assert got[i] == _page(i, f"text of page {i}\nsecond line äß")
    assert got[4] == _layer_page(4)
    # another engine/render size: nothing reused, and the stale records go
    assert j2.done_pages(d.id, "k2") == {}
    assert j2.done_pages(d.id, "k1") == {}
    j2.record_page(d.id, "k1", _page(0, "again"))
    j2.claim(d.id)
    j2.finish(d.id, language="en", doctype="other", route="default", pages=5, outputs=[], final_path=None, timings={})
    assert j2.done_pages(d.id, "k1") == {}  # a finished document keeps no page records
    n = j2._conn().execute("SELECT count(*) AS n FROM pages").fetchone()["n"]  # either backend
    assert n == 0


def test_progress_counts_pages_rate_and_eta_from_any_process(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    j = open_j(tmp_path / "state")
    d = j.admit(_file(tmp_path / "big.pdf", b"big"), "in").document
    assert d is not None and j.claim(d.id) is not None
    assert [(p.doc_id, p.pages_done, p.pages_total, p.eta_s) for p in j.progress()] == [(d.id, 0, None, None)]
    j.set_total_pages(d.id, 10)
    # two pages from an earlier attempt (recorded before this one began), three from this one
    row = j.get(d.id)
    assert row is not None and row.started is not None
    started = row.started
    for i in range(5):
        j.record_page(d.id, "k", _page(i, f"p{i}"))
    with j._tx() as db:  # the journal's own connection: either backend
        db.execute("UPDATE pages SET created=? WHERE idx<2", (started - 100,))
        db.execute("UPDATE documents SET started=? WHERE id=?", (started - 3.0, d.id))  # this attempt: 3 s ago
    ro = open_j(tmp_path / "state", readonly=True)
    (p,) = ro.progress()
    assert (p.pages_done, p.pages_total, p.resumed) == (5, 10, 2)
    assert 0.9 < p.pages_per_s <= 1.0  # 3 pages in ~3 s
    assert p.eta_s is not None and 5.0 <= p.eta_s < 5.6  # 5 pages left at ~1 page/s
    assert p.short().startswith(f"doc-{d.id} 5/10 ")
    assert json.loads(json.dumps(p.to_json()))["pages_total"] == 10


def test_an_old_journal_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    old_schema = SCHEMA  # version 1: no pages table, no total_pages/started columns
    db = sqlite3.connect(state / "journal.sqlite3")
    db.executescript(old_schema)
    db.execute(
        "INSERT INTO documents(path, inbox, size, mtime, sha256, state, created, updated, outputs)"
        " VALUES ('/in/old.pdf', 'in', 3, 1.0, 'abc', 'done', 1.0, 1.0, '[\"/out/old.txt\"]')"
    )
    db.execute(
        "INSERT INTO documents(path, inbox, size, mtime, sha256, state, created, updated)"
        " VALUES ('/in/mid.pdf', 'in', 3, 1.0, 'def', 'processing', 1.0, 1.0)"
    )
    db.commit()
    db.close()
    ro = Journal(state, readonly=True)  # `ocr-daemon status` on an old journal: works, no progress
    assert ro.counts() == {"done": 1, "processing": 1} and ro.progress() == []
    ro.close()
    j = Journal(state)
    row = j.get(1)
    assert row is not None and row.outputs == (Path("/out/old.txt"),) and row.total_pages is None
    assert j.recover() == 1
    assert j.claim(2) is not None
    j.record_page(2, "k", _page(0, "resumable now"))
    assert j.done_pages(2, "k")[0].text == "resumable now"
    assert [p.pages_done for p in j.progress()] == [1]
    j.close()
    assert Journal(state).get(2) is not None  # opening again: already migrated, nothing breaks


def test_known_unchanged_is_find_s_skip_test_for_many_files_at_once(tmp_path: Path, open_j: Callable[..., Journal]) -> None:
    """``known_unchanged`` (the rescan's batched lookup, issue 34) says of each file what the
    tracker's per-file check says: its newest row (source at, or moved to, that path) is that
    file with that size and mtime -- whatever else the journal holds."""
    j = open_j(tmp_path / "state")
    (tmp_path / "in").mkdir()
    kept = _file(tmp_path / "in" / "kept.pdf", b"kept")
    touched = _file(tmp_path / "in" / "touched.pdf", b"touched")
    new = _file(tmp_path / "in" / "new.pdf", b"new")
    moved = _file(tmp_path / "in" / "moved.pdf", b"moved")
    for p in (kept, touched, moved):
        j.admit(p, "in")
    doc = j.find(moved)
    assert doc is not None and j.claim(doc.id) is not None
    # an older document was archived to where ``kept`` lies now: kept's own row is newer
    archived = tmp_path / "in" / "archived.pdf"
    j.finish(doc.id, language="en", doctype="letter", route="r", pages=1, outputs=[], final_path=archived, timings={})
    _file(archived, b"another file now")
    os.utime(touched, ns=(1, 10**18))

    def stat(p: Path) -> tuple[Path, int, float]:
        st = p.stat()
        return p, st.st_size, st.st_mtime

    got = j.known_unchanged([stat(p) for p in (kept, touched, new, moved, archived)])
    assert got == {kept, moved}
    assert j.known_unchanged([]) == set()
    # the same as one find() per file
    for p in (kept, touched, new, moved, archived):
        row, st = j.find(p), p.stat()
        assert (p in got) == bool(row and row.path == p and row.size == st.st_size and row.mtime == st.st_mtime)
