"""The shared (PostgreSQL) journal's own guarantees, on a real server (tests/pgserver.py): several
daemons -- here several ``PostgresJournal`` objects with their own state folders and owners --
race for files and claims, leases run out and are taken over, the server goes away and comes back.
(What both backends share is tested on both in test_journal.py.)"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from daemon.journal.pgstore import PostgresJournal
from daemon.journal.rows import status_summary
from daemon.journal.schema import write_problem
from daemon.journal.store import AdmitAction
from daemon.pagerecord import PageResult


def _daemon(url: str, tmp: Path, name: str, lease: float = 30.0) -> PostgresJournal:
    j = PostgresJournal(url, tmp / name / "state", lease=lease)
    j.owner = f"host-{name}:{1000 + len(name)}"  # one process plays several daemons
    return j


def _page(i: int) -> PageResult:
    return PageResult(index=i, text=f"page {i}", engine="tesseract", seconds=0.1)


def test_racing_daemons_admit_a_file_once_and_claim_each_row_once(tmp_path: Path, pg_url: str) -> None:
    js = [_daemon(pg_url, tmp_path, n) for n in ("a", "b", "c")]
    files = []
    for i in range(30):
        f = tmp_path / f"f{i}.pdf"
        f.write_bytes(f"content {i}".encode())
        files.append(f)
    admitted: list[tuple[str, int | None]] = []
    taken: list[tuple[str, int]] = []
    lock = threading.Lock()

    def daemon(j: PostgresJournal) -> None:  # every daemon sees every file of the shared inbox
        for f in files:
            adm = j.admit(f, "in")
            with lock:
                admitted.append((adm.action, adm.document.id if adm.document else None))
        for doc_id, _ in j.queued():
            if j.claim(doc_id) is not None:
                with lock:
                    taken.append((j.owner, doc_id))

    threads = [threading.Thread(target=daemon, args=(j,)) for j in js]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for a, _ in admitted if a == AdmitAction.QUEUED) == 30  # each file admitted once
    assert js[0].counts() == {"processing": 30}
    assert sorted(i for _, i in taken) == sorted({i for _, i in admitted})  # each row claimed once
    owners = {r["owner"] for r in js[0]._conn().execute("SELECT owner FROM documents").fetchall()}
    assert owners == {o for o, _ in taken}
    for j in js:
        j.close()


def test_duplicates_are_found_across_daemons(tmp_path: Path, pg_url: str) -> None:
    a, b = _daemon(pg_url, tmp_path, "a"), _daemon(pg_url, tmp_path, "b")
    (tmp_path / "one.pdf").write_bytes(b"same bytes")
    (tmp_path / "two.pdf").write_bytes(b"same bytes")
    d = a.admit(tmp_path / "one.pdf", "in").document
    assert d is not None and a.claim(d.id) is not None
    a.finish(d.id, language="en", doctype="other", route="r", pages=1, outputs=[], final_path=None, timings={})
    adm = b.admit(tmp_path / "two.pdf", "in")
    assert adm.action == AdmitAction.DUPLICATE and adm.duplicate_of == d.id


def test_a_lease_renewed_holds_one_run_out_is_taken_over_with_its_pages(tmp_path: Path, pg_url: str) -> None:
    a, b = _daemon(pg_url, tmp_path, "a", lease=1.5), _daemon(pg_url, tmp_path, "b", lease=1.5)
    (tmp_path / "x.pdf").write_bytes(b"x")
    d = a.admit(tmp_path / "x.pdf", "in").document
    assert d is not None and a.claim(d.id) is not None
    a.record_page(d.id, "k", _page(0))
    a.record_page(d.id, "k", _page(1))
    for _ in range(3):  # a keeps beating: nobody takes its document
        time.sleep(0.8)
        a.heartbeat()
        assert b.heartbeat() == []
    assert b.recover() == 0  # another node's live row is not "left by a crash"
    assert b.claim(d.id) is None
    time.sleep(1.8)  # a stops beating (killed): its lease runs out
    assert b.heartbeat() == [d.id]
    taken = b.claim(d.id)
    assert taken is not None and taken.attempts == 2
    assert sorted(b.done_pages(d.id, "k")) == [0, 1]  # b resumes from a's pages
    assert b.holders()[d.id]["owner"] == b.owner
    summary = status_summary(b)
    assert [p["held_by"] for p in summary["in_progress"]] == [b.owner]
    alive = {x["state_dir"]: x["alive"] for x in summary["daemons"]}
    assert alive == {str(a.state_dir.absolute()): False, str(b.state_dir.absolute()): True}  # a went silent


def test_a_restarted_daemon_recovers_its_own_rows_only(tmp_path: Path, pg_url: str) -> None:
    a, b = _daemon(pg_url, tmp_path, "a"), _daemon(pg_url, tmp_path, "b")
    for n in ("p", "q"):
        (tmp_path / f"{n}.pdf").write_bytes(n.encode())
    da = a.admit(tmp_path / "p.pdf", "in").document
    db_ = b.admit(tmp_path / "q.pdf", "in").document
    assert da is not None and db_ is not None and a.claim(da.id) and b.claim(db_.id)
    a.close()
    a2 = _daemon(pg_url, tmp_path, "a")  # a again after kill -9: same state folder (node)
    assert a2.recover() == 1
    assert {r.id: r.state.value for r in (a2.get(da.id), a2.get(db_.id)) if r} == {da.id: "queued", db_.id: "processing"}


def test_the_server_going_away_is_cannot_be_written_now_and_it_reconnects(tmp_path: Path, pg_server: Any) -> None:
    url = pg_server.create_db()
    j = _daemon(url, tmp_path, "a")
    heard: list[sqlite3.Error] = []
    j.on_write_error = heard.append
    (tmp_path / "a.pdf").write_bytes(b"a")
    j.admit(tmp_path / "a.pdf", "in")
    patient = PostgresJournal(url, tmp_path / "a" / "state", wait_reads=60.0)  # the daemon's: reads wait
    pg_server.stop()
    try:
        with pytest.raises(sqlite3.OperationalError) as ei:
            j.check_writable()
        assert write_problem(ei.value) and heard and write_problem(heard[0])
        with pytest.raises(sqlite3.OperationalError):
            j.counts()  # with wait_reads=0 (status), reads fail the same way (callers catch sqlite3.Error)
        got: list[dict[str, int]] = []
        reader = threading.Thread(target=lambda: got.append(patient.counts()))
        reader.start()
        time.sleep(1.5)
        assert reader.is_alive() and not got  # still waiting, not failed
    finally:
        pg_server.start()
    reader.join(timeout=60)
    assert got == [{"queued": 1}]
    j.check_writable()  # a new connection: works again
    assert j.counts() == {"queued": 1}
    j.close()
