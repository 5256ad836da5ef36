"""Every journal lookup the intake and the pipeline make is an index search, never a scan of the
whole ``documents`` table (issue 34: ``find``'s ``path = ? OR final_path = ?`` scanned it, which
made a rescan of N kept files O(N^2)). The statements are the ones the journal really runs: a
document's whole life (admit, duplicate, claim, pages, finish, archive, requeue, fail, retry...)
is run on a SQLite journal with a trace on its connection, and each statement that reads or
changes ``documents`` is checked with ``EXPLAIN QUERY PLAN`` -- and on PostgreSQL with
``EXPLAIN`` under ``enable_seqscan=off`` (a sequential scan is then chosen only where no index
can serve)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pagerecords import ocr_page

from daemon.journal.store import Journal, sha256_file, status_summary
from daemon.models import DocState

#: Statements left out: SQLite's ``max(id)`` (the primary key's last entry, not a scan).
WHOLE_TABLE = ("SELECT max(id)",)
#: The partial indexes (schema.SCHEMA_V3): their rows are few however large the journal.
PARTIAL = re.compile(r"USING INDEX (documents_waiting|documents_unfinished_planned)\b")


def _life(j: Journal, root: Path) -> None:
    """One of every intake and pipeline call, on real files."""
    inbox, archive = root / "in", root / "archive"
    inbox.mkdir()
    archive.mkdir()
    a, b, c = inbox / "a.pdf", inbox / "b.pdf", inbox / "c.pdf"
    a.write_bytes(b"%PDF-1.4 a\n%%EOF\n")
    b.write_bytes(b"%PDF-1.4 b\n%%EOF\n")
    doc_a = j.admit(a, "in").document
    assert doc_a is not None
    j.admit(a, "in")  # known by path+size+mtime
    os.utime(a, ns=(1, 10**18))
    j.admit(a, "in")  # same content, new mtime: refreshed
    doc_b = j.admit(b, "in").document
    assert doc_b is not None
    j.queued()
    assert j.claim(doc_b.id) is not None
    j.set_planned(doc_b.id, [archive / "b.txt"])
    j.planned(doc_b.id)
    j.planned_by_unfinished(doc_a.id)
    j.set_total_pages(doc_b.id, 1)
    j.record_page(doc_b.id, "k", ocr_page(0, "hello", seconds=0.1))
    j.done_pages(doc_b.id, "k")
    j.strike(doc_b.id)
    j.set_final_path(doc_b.id, archive / "b.pdf")
    j.finish(doc_b.id, language="en", doctype="letter", route="all", pages=1, outputs=[archive / "b.txt"],
             final_path=archive / "b.pdf", timings={})
    c.write_bytes(b.read_bytes())
    doc_c = j.admit(c, "in").document  # same content as a done document: a duplicate
    assert doc_c is not None
    j.claim(doc_c.id)
    j.finish_duplicate(doc_c.id, outputs=[archive / "b.txt"], final_path=c)
    j.find(archive / "b.pdf")
    j.find(a)
    j.known_unchanged([(a, a.stat().st_size, a.stat().st_mtime), (c, 1, 2.0)])
    j.known_under(inbox)  # the rescan: one range of the path index and one of final_path
    assert j.requeue(paths=[archive / "b.pdf"]) == [doc_b.id]
    j.claim(doc_b.id)
    j.fail(doc_b.id, "bad", root / "failed" / "b.pdf")
    j.requeue(failed=True)
    j.claim(doc_b.id)
    j.retry_later(doc_b.id, "later", 0)
    j.claim(doc_b.id)
    j.recover()
    j.claim(doc_b.id)
    j.fail(doc_b.id, "bad", root / "failed" / "b.pdf")
    st = b.stat()
    assert j.requeue_row(doc_b.id, path=b, size=st.st_size, mtime=st.st_mtime, sha256=sha256_file(b), expect="failed") is None
    j.move_source(doc_b.id, b)
    j.claim(doc_b.id)
    j.supersede(doc_b.id, "changed")
    j.get(doc_a.id)
    assert j.get(doc_b.id) is not None and j.get(doc_b.id).state == DocState.SUPERSEDED  # type: ignore[union-attr]
    # what the work queue, the scan's output test, status, /status, /metrics and retention run (item 2)
    j.queued(limit=8)
    assert j.is_output(archive / "b.txt") and j.outputs_among([str(archive / "b.txt"), str(a)]) == {str(archive / "b.txt")}
    status_summary(j, 3)
    j.compact_finished(0.0)


def _statements(tmp_path: Path) -> tuple[Journal, list[str]]:
    j = Journal(tmp_path / "state")
    seen: list[str] = []
    j._conn().set_trace_callback(seen.append)
    _life(j, tmp_path)
    j._conn().set_trace_callback(None)
    out: list[str] = []
    for s in seen:
        s = " ".join(s.split())
        if (re.match(r"(SELECT|UPDATE|DELETE)\b", s, re.I) and re.search(r"\b(documents|outputs|state_counts)\b", s) and s not in out
                and not s.startswith(WHOLE_TABLE)):
            out.append(s)
    return j, out


def test_every_lookup_of_a_document_s_life_is_an_index_search_on_sqlite(tmp_path: Path) -> None:
    j, stmts = _statements(tmp_path)
    assert any("final_path IN" in s for s in stmts) and any("OR final_path=" in s for s in stmts)
    assert any("FROM state_counts" in s for s in stmts) and any("ORDER BY updated DESC, id DESC" in s for s in stmts)
    db = j._conn()
    for s in stmts:
        plan = [r["detail"] for r in db.execute("EXPLAIN QUERY PLAN " + s)]
        # a scan of a partial index reads only its rows (unfinished documents with planned names, or waiting)
        scans = [d for d in plan if re.match(r"SCAN (documents|d|outputs)\b", d) and not PARTIAL.search(d)
                 or "TEMP B-TREE" in d and re.search(r"ORDER BY (updated|not_before)", s)]  # a sort of every row
        assert not scans, f"{s}\n  plan: {plan}"
        # a search of the state index beside a path, sha256 or final path reads every done row
        if re.search(r"\b(path|sha256|final_path)\s*(=|IN\b)", s):
            assert not [d for d in plan if re.search(r"INDEX documents_(state|queue|state_updated) \(state=\?\)$", d)], \
                f"{s}\n  plan: {plan}"
    j.close()


def test_an_older_journal_gets_the_final_path_index_at_open(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    j._conn().execute("DROP INDEX documents_final_path")
    j.close()
    j = Journal(tmp_path / "state")
    names = {r["name"] for r in j._conn().execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"documents_path", "documents_final_path", "documents_sha", "documents_state"} <= names
    j.close()


def test_every_lookup_of_a_document_s_life_is_an_index_search_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    from daemon.journal.pgstore import PostgresJournal

    j, stmts = _statements(tmp_path)
    j.close()
    pj = PostgresJournal(pg_url, tmp_path / "pgstate")
    try:
        db = pj._conn()
        db.execute("SET enable_seqscan = off")
        checked = 0
        for s in stmts:
            if re.search(r"\bmax\(", s):  # SQLite's scalar max(); PostgresJournal.recover (leases.py) has its own statement
                continue
            plan = [next(iter(r.values())) for r in db.execute("EXPLAIN " + s.replace("%", "%%")).fetchall()]
            assert not [p for p in plan if re.search(r"Seq Scan on (documents|outputs)", p)], f"{s}\n  plan: {plan}"
            checked += 1
        assert checked >= len(stmts) - 2
        # an older server journal (schema version 3) gets the index at open
        db.execute("DROP INDEX documents_final_path")
        db.execute("UPDATE meta SET value='3' WHERE key='schema_version'")
    finally:
        pj.close()
    pj = PostgresJournal(pg_url, tmp_path / "pgstate")
    try:
        names = {r["indexname"] for r in pj._conn().execute("SELECT indexname FROM pg_indexes WHERE tablename='documents'")}
        assert "documents_final_path" in names
    finally:
        pj.close()


@pytest.mark.parametrize("n", [1200])
def test_known_unchanged_answers_many_paths_in_a_few_queries(tmp_path: Path, n: int) -> None:
    j = Journal(tmp_path / "state")
    inbox = tmp_path / "in"
    inbox.mkdir()
    files = []
    for i in range(n):
        p = inbox / f"f{i}.pdf"
        p.write_bytes(b"%PDF-1.4 " + str(i).encode() + b"\n%%EOF\n")
        files.append(p)
    for p in files[: n // 2]:
        j.admit(p, "in")
    queries: list[str] = []
    j._conn().set_trace_callback(queries.append)
    got = j.known_unchanged([(p, p.stat().st_size, p.stat().st_mtime) for p in files])
    j._conn().set_trace_callback(None)
    assert got == set(files[: n // 2])
    assert len([q for q in queries if "final_path IN" in q]) == -(-n // 512)
    j.close()


def _vm_steps(j: Journal, call: object) -> int:
    """SQLite virtual-machine steps ``call()`` makes on ``j``'s connection (rows read cost steps)."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    j._conn().set_progress_handler(tick, 100)
    call()  # type: ignore[operator]
    j._conn().set_progress_handler(None, 0)
    return steps[0]


def test_status_reads_what_is_in_flight_and_recent_not_every_row(tmp_path: Path) -> None:
    """``status`` (``status_summary``: /status, ``ocr-daemon status``), the metrics' counts and the
    work queue's next ids cost the same on a journal of 300 done documents and of 3,000 (issue 34:
    ``counts`` grouped every row, ``recent_finished`` sorted every done row, ``queued`` gave every id)."""
    from daemon.journal.rows import RebuiltDoc

    def build(n: int) -> Journal:
        j = Journal(tmp_path / f"state{n}")
        j.add_rebuilt([RebuiltDoc(id=None, path=tmp_path / f"in/{i}.pdf", inbox="in", size=1, sha256=f"{i:064x}",
                                  state=DocState.DONE, outputs=(tmp_path / f"in/{i}.txt",), created=float(i))
                       for i in range(n)])
        with j._tx() as db:  # a backlog too: queued rows
            db.executemany("INSERT INTO documents(path, inbox, size, mtime, sha256, state, created, updated)"
                           " VALUES (?, 'in', 1, 1, ?, 'queued', 0, 0)", [(f"/q/{i}", f"q{i}") for i in range(n // 3)])
        return j

    small, big = build(300), build(3000)
    for name, call in [("status", lambda j: status_summary(j, 3)), ("counts", lambda j: j.counts()),
                       ("queued", lambda j: j.queued(limit=32)), ("is_output", lambda j: j.is_output(tmp_path / "in/7.txt"))]:
        a, b = _vm_steps(small, lambda c=call: c(small)), _vm_steps(big, lambda c=call: c(big))
        assert b <= 1.5 * a + 20, f"{name}: {a} VM steps at 300 rows, {b} at 3,000"
    assert big.counts() == {"done": 3000, "queued": 1000} and len(big.queued(limit=32)) == 32
    assert big.is_output(tmp_path / "in/7.txt") and not big.is_output(tmp_path / "in/7.pdf")
    small.close()
    big.close()


def test_an_older_journal_is_migrated_to_the_counts_and_outputs_tables(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    a = tmp_path / "a.pdf"
    a.write_bytes(b"%PDF-1.4 a\n%%EOF\n")
    doc = j.admit(a, "in").document
    assert doc is not None and j.claim(doc.id)
    j.finish(doc.id, language="en", doctype="letter", route="all", pages=1, outputs=[tmp_path / "a.txt"], final_path=a,
             timings={})
    db = j._conn()
    for t in ("outputs", "state_counts"):  # as a version-2 journal had it
        db.execute(f"DROP TABLE {t}")
    for trig in ("insert", "update", "delete"):
        db.execute(f"DROP TRIGGER documents_count_{trig}")
    db.execute("PRAGMA user_version=2")
    j.close()
    j = Journal(tmp_path / "state")
    assert j.counts() == {"done": 1} and j.is_output(tmp_path / "a.txt")
    j.close()
