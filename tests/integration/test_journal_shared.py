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
from pagerecords import ocr_page

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
    return ocr_page(i, f"page {i}", seconds=0.1)


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


def test_a_daemon_paused_past_its_lease_is_fenced_off_its_taken_over_document(tmp_path: Path, pg_url: str) -> None:
    """Fencing: a's writes of a document b took over (a paused past its lease) are refused, in the
    same transaction as the write, and nothing of them lands; b's results are the only ones."""
    from daemon.journal import deliveries
    from daemon.journal.pgsql import LeaseLost

    a, b = _daemon(pg_url, tmp_path, "a", lease=1.0), _daemon(pg_url, tmp_path, "b", lease=1.0)
    (tmp_path / "x.pdf").write_bytes(b"x")
    d = a.admit(tmp_path / "x.pdf", "in").document
    assert d is not None and a.claim(d.id) is not None
    a.record_page(d.id, "k", _page(0))
    time.sleep(1.3)  # a is paused: no heartbeat, its lease runs out; it still holds its token
    a.record_page(d.id, "k", _page(1))  # back before anyone put it back: the claim is still a's
    time.sleep(1.3)
    assert b.heartbeat() == [d.id]
    assert b.claim(d.id) is not None
    with pytest.raises(LeaseLost, match="lease lost") as lost:
        a.record_page(d.id, "k", ocr_page(2, "stale", seconds=0.1))
    assert lost.value.holder == b.owner
    assert sorted(b.done_pages(d.id, "k")) == [0, 1]  # a's page 2 was not written
    for write in (lambda: a.set_planned(d.id, [tmp_path / "x.txt"]), lambda: a.strike(d.id),
                  lambda: a.finish(d.id, language="en", doctype="other", route="r", pages=3, outputs=[],
                                   final_path=None, timings={}),
                  lambda: a.fail(d.id, "stale", None),
                  lambda: deliveries.plan(a, d.id, "r", [deliveries.HookSpec("exec", ("true",), 5, 1, 1, 1)],
                                          tmp_path / "x.json", b"{}")):
        with pytest.raises(LeaseLost):
            write()
    row = b.get(d.id)
    assert row is not None and row.state.value == "processing" and row.strikes == 0 and row.planned == ()
    assert deliveries.of_document(b, d.id) == []
    b.record_page(d.id, "k", _page(2))
    b.finish(d.id, language="en", doctype="other", route="r", pages=3, outputs=[], final_path=None, timings={})
    assert b.get(d.id).state.value == "done"  # type: ignore[union-attr]
    with pytest.raises(LeaseLost):  # and a never writes over the finished document
        a.finish(d.id, language="de", doctype="letter", route="x", pages=1, outputs=[], final_path=None, timings={})
    assert b.get(d.id).language == "en"  # type: ignore[union-attr]
    # a claims it again later (requeued): a new token, its writes count again
    b.requeue(paths=[tmp_path / "x.pdf"])
    assert a.claim(d.id) is not None
    a.strike(d.id)
    assert a.get(d.id).strikes == 1  # type: ignore[union-attr]


def _done_with_hook(j: PostgresJournal, tmp: Path, name: str, script: str) -> int:
    """A document admitted, claimed and finished by ``j``, with one exec hook: ``sh -c script``."""
    from daemon.journal import deliveries

    f = tmp / f"{name}.pdf"
    f.write_bytes(name.encode())
    d = j.admit(f, "in").document
    assert d is not None and j.claim(d.id) is not None
    hook = deliveries.HookSpec("exec", ("sh", "-c", script, "hook"), timeout=20, attempts=3, backoff=1, backoff_max=1)
    deliveries.plan(j, d.id, "r", [hook], tmp / f"{name}.json", b"{}")
    j.finish(d.id, language="en", doctype="other", route="r", pages=1, outputs=[], final_path=None, timings={})
    return d.id


def test_each_hook_delivery_is_made_by_one_daemon(tmp_path: Path, pg_url: str) -> None:
    """Two daemons' dispatchers (4 threads each) on one journal: every delivery is claimed, so each
    exec hook runs once -- with ``due`` alone both would take the same soonest rows."""
    from daemon.journal import deliveries
    from daemon.service.hooks import Dispatcher

    a, b = _daemon(pg_url, tmp_path, "a"), _daemon(pg_url, tmp_path, "b")
    ran = tmp_path / "ran.log"
    ids = [_done_with_hook(a, tmp_path, f"d{i}", f'echo "$OCR_DAEMON_DOCUMENT_ID" >> {ran}; sleep 0.3')
           for i in range(12)]
    ds = [Dispatcher(a), Dispatcher(b)]
    for d in ds:
        d.start()
    try:
        deadline = time.monotonic() + 120
        while deliveries.pending_count(a) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        for d in ds:
            d.stop()
    lines = ran.read_text().split()
    assert sorted(lines) == sorted(str(i) for i in ids)  # each once, none twice
    rows = a._conn().execute("SELECT state, attempts, owner FROM deliveries").fetchall()
    assert {(r["state"], r["attempts"], r["owner"]) for r in rows} == {("delivered", 1, None)}


def test_a_delivery_whose_claimant_died_is_made_by_another_daemon(tmp_path: Path, pg_url: str) -> None:
    from daemon.journal import deliveries
    from daemon.service.hooks import Dispatcher

    a, b = _daemon(pg_url, tmp_path, "a", lease=2.0), _daemon(pg_url, tmp_path, "b", lease=2.0)
    ran = tmp_path / "ran.log"
    doc_id = _done_with_hook(a, tmp_path, "x", f'echo "$OCR_DAEMON_DOCUMENT_ID $OCR_DAEMON_ATTEMPT" >> {ran}')
    got = deliveries.claim_due(a, time.time())  # a takes it, counts its try, and dies before making it
    assert got is not None and got.doc_id == doc_id
    deliveries.started(a, got.id, 1)
    assert deliveries.claim_due(b, time.time()) is None  # a's lease holds
    t0 = time.monotonic()
    disp = Dispatcher(b, threads=1)
    disp.start()
    try:
        wait = time.monotonic() + 60
        while deliveries.pending_count(b) and time.monotonic() < wait:
            time.sleep(0.1)
    finally:
        disp.stop()
    assert time.monotonic() - t0 >= 1.0  # not before a's lease ran out
    assert ran.read_text().split() == [str(doc_id), "2"]  # made once, by b, as the second try
    (row,) = deliveries.of_document(b, doc_id)
    assert (row.state, row.attempts) == ("delivered", 2)
    deliveries.delivered(a, got.id, 1)  # a, back from the dead, cannot write over b's outcome
    assert deliveries.of_document(b, doc_id)[0].attempts == 2


def test_journal_rebuild_and_restore_refuse_a_shared_journal_and_touch_nothing(tmp_path: Path, pg_url: str) -> None:
    """``ocr-daemon journal rebuild|restore`` work on one state folder's SQLite journal; with
    ``daemon.journal_url`` they say to use pg_dump/pg_restore (exit 2) and change nothing."""
    import json

    from conftest import run_cli

    j = _daemon(pg_url, tmp_path, "a")
    (tmp_path / "x.pdf").write_bytes(b"x")
    assert j.admit(tmp_path / "x.pdf", "in").document is not None
    state = tmp_path / "state"
    cfg = tmp_path / "rules.yaml"
    cfg.write_text(json.dumps({"daemon": {"state_dir": str(state), "journal_url": pg_url},
                               "inboxes": [{"path": str(tmp_path / "in")}]}), encoding="utf-8")
    for action in ("rebuild", "restore"):
        r = run_cli("journal", action, "--config", str(cfg))
        assert r.returncode == 2, r.stderr
        assert "pg_dump" in r.stderr and "pg_restore" in r.stderr and "nothing was done" in r.stderr
    assert not state.exists()  # no SQLite journal made, no state folder
    assert j.counts() == {"queued": 1}


def test_a_daemon_paused_inside_a_transaction_holds_the_others_up_for_a_lease_at_most(tmp_path: Path, pg_url: str) -> None:
    """a stops in the middle of a serial write transaction (its row lock and the serial lock
    held): b's heartbeat does not wait for it, b's admission waits no longer than about a lease
    (the server ends a's idle transaction), then b takes a's document over and a's write is lost
    (it failed, nothing committed)."""
    a, b = _daemon(pg_url, tmp_path, "a", lease=2.0), _daemon(pg_url, tmp_path, "b", lease=2.0)
    (tmp_path / "x.pdf").write_bytes(b"x")
    (tmp_path / "y.pdf").write_bytes(b"y")
    d = a.admit(tmp_path / "x.pdf", "in").document
    assert d is not None and a.claim(d.id) is not None
    a.heartbeat()
    inside, outcome = threading.Event(), []

    def paused_write() -> None:
        try:
            with a.holding(d.id), a._tx() as db:
                db.execute("UPDATE documents SET error='paused' WHERE id=?", (d.id,))
                time.sleep(1.5)
                db.execute("SELECT 1")  # its last statement: the server's idle clock starts here
                inside.set()
                time.sleep(6.0)  # "SIGSTOP" with the row and the serial lock held
            outcome.append("committed")
        except sqlite3.Error as e:
            outcome.append(type(e).__name__)

    t = threading.Thread(target=paused_write)
    t.start()
    assert inside.wait(10)
    time.sleep(0.8)  # a's lease (from its last beat) has run out; its session is not ended yet
    t0 = time.monotonic()
    assert b.heartbeat() == []  # its row is locked: skipped, not waited for
    assert time.monotonic() - t0 < 1.0
    t0 = time.monotonic()
    assert b.admit(tmp_path / "y.pdf", "in").action == AdmitAction.QUEUED  # behind the serial lock a holds
    assert time.monotonic() - t0 < 3.0  # the server ended a's session after 2 s idle in its transaction
    deadline = time.monotonic() + 5
    while d.id not in b.heartbeat() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert b.claim(d.id) is not None
    t.join()
    assert outcome == ["JournalUnavailable"]
    row = b.get(d.id)
    assert row is not None and row.error is None and row.state.value == "processing"
