"""The SQLite journal, on real files and a real database."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from daemon.errors import FatalError
from daemon.journal.store import Journal, sha256_file


def _file(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


def test_admit_claim_finish_and_known(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
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
    assert str(tmp_path / "a.txt") in j.all_outputs()


def test_changed_content_same_path_is_new(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    f = _file(tmp_path / "a.pdf", b"one")
    d1 = j.admit(f, "in").document
    assert d1 is not None
    j.claim(d1.id)
    j.finish(d1.id, language="en", doctype="other", route="r", pages=1, outputs=[], final_path=f, timings={})
    f.write_bytes(b"two, longer")
    adm = j.admit(f, "in")
    assert adm.action == "queued" and adm.document is not None and adm.document.id != d1.id


def test_duplicate_content_under_new_name_links_or_processes(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
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


def test_recover_requeues_processing_rows_after_a_crash(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    f = _file(tmp_path / "a.pdf", b"x")
    d = j.admit(f, "in").document
    assert d is not None
    j.claim(d.id)
    j.close()
    j2 = Journal(tmp_path / "state")  # a new process after kill -9
    assert j2.counts() == {"processing": 1}
    assert j2.recover() == 1
    assert [i for i, _ in j2.queued()] == [d.id]


def test_retry_requeue_and_failures(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    f = _file(tmp_path / "a.pdf", b"x")
    d = j.admit(f, "in").document
    assert d is not None
    j.claim(d.id)
    j.retry_later(d.id, "engine down", 30)
    (qid, nb), = j.queued()
    assert qid == d.id and nb > 0
    j.claim(d.id)
    j.fail(d.id, "encrypted PDF", tmp_path / "failed" / "a.pdf")
    assert j.recent_failures()[0]["error"] == "encrypted PDF"
    assert j.requeue(failed=True) == [d.id]
    assert j.get(d.id)["state"] == "queued"  # type: ignore[index]


def test_concurrent_claims_from_threads_take_each_row_once(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
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


def test_readonly_journal_creates_nothing_sees_live_commits_and_refuses_writes(tmp_path: Path) -> None:
    missing = tmp_path / "never-started"
    with pytest.raises(FatalError) as ei:
        Journal(missing, readonly=True)
    assert ei.value.exit_code == 4 and not missing.exists()  # no folder, no journal file

    writer = Journal(tmp_path / "state")  # the running daemon
    writer.admit(_file(tmp_path / "a.pdf", b"one"), "in")
    reader = Journal(tmp_path / "state", readonly=True)  # ocr-daemon status
    assert reader.counts() == {"queued": 1}
    writer.admit(_file(tmp_path / "b.pdf", b"two"), "in")
    assert reader.counts() == {"queued": 2}  # WAL: the reader sees the writer's later commit
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader.admit(_file(tmp_path / "c.pdf", b"three"), "in")
    assert writer.counts() == {"queued": 2}
    reader.close()
    writer.close()
