"""The journal's own state (daemon.journal.guard, health, rebuild, backup), in process, on real
SQLite files: a journal filled to its limit (``PRAGMA max_page_count``, SQLite's own "full"), the
state lock from a second open, a journal put back from an older copy, names that are not UTF-8.
The daemon-level behaviour is tests/e2e/test_state_faults.py."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import write_rules
from pagerecords import ocr_page

from daemon.config import load_config
from daemon.errors import ExitCode, FatalError
from daemon.journal import backup, guard, rebuild
from daemon.journal.health import JournalHealth
from daemon.journal.store import Journal


def _done(j: Journal, f: Path, outputs: list[Path]) -> int:
    doc = j.admit(f, "inbox").document
    assert doc is not None and j.claim(doc.id) is not None
    j.finish(doc.id, language="en", doctype="other", route="all", pages=1, outputs=outputs, final_path=f, timings={})
    return doc.id


def test_a_full_journal_is_unwritable_until_a_probe_write_works_and_its_connection_stays_usable(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    health = JournalHealth(j, headroom=0)
    f = tmp_path / "a.png"
    f.write_bytes(b"a file")
    doc = j.admit(f, "inbox").document
    assert doc is not None and j.claim(doc.id) is not None
    db = j._conn()
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count={pages}")  # SQLite's own "disk full" for this connection
    big = ocr_page(0, "x" * 200_000, seconds=1.0)
    with pytest.raises(sqlite3.OperationalError, match="full"):
        j.record_page(doc.id, "k", big)
    assert not health.writable and "cannot be written (database or disk is full)" in (health.problem() or "")
    assert not db.in_transaction  # the failed commit left nothing open on this thread's connection
    assert health.probe() is True  # a small write fits: writable again (headroom 0 here)
    assert health.writable and health.problem() is None
    db.execute(f"PRAGMA max_page_count={pages * 100}")
    j.record_page(doc.id, "k", big)  # the same connection works once there is room
    assert set(j.done_pages(doc.id, "k")) == {0}


def test_headroom_keeps_it_unwritable_while_the_filesystem_is_short_of_space(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    st = os.statvfs(tmp_path)
    health = JournalHealth(j, headroom=st.f_bavail * st.f_frsize * 2)  # more than there is
    health.failed(sqlite3.OperationalError("database or disk is full"))
    assert health.probe() is False and not health.writable
    assert "free on the state folder's filesystem" in (health.problem() or "")


def test_state_lock_refuses_a_second_holder_naming_the_pid_and_frees_on_release(tmp_path: Path) -> None:
    first = guard.StateLock(tmp_path / "state")
    with pytest.raises(FatalError) as e:
        guard.StateLock(tmp_path / "state")  # another open file description: flock says no
    assert e.value.exit_code == ExitCode.LOCKED and f"pid {os.getpid()}" in str(e.value)
    first.release()
    guard.StateLock(tmp_path / "state").release()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own files as another user")
def test_root_in_the_service_users_state_folder_leaves_a_journal_the_service_can_write(tmp_path: Path) -> None:
    """`sudo ocr-daemon once` in the service's state folder made a root-owned journal, and the
    service then died with "attempt to write a readonly database" (CI's real install)."""
    nobody = 65534
    base = Path(tempfile.mkdtemp(prefix="ocrd-owner-"))  # pytest's tmp_path is root's alone (0700)
    try:
        _root_then_service(base, nobody)
    finally:
        shutil.rmtree(base)


def _root_then_service(tmp_path: Path, nobody: int) -> None:
    os.chmod(tmp_path, 0o755)
    cfg = load_config(write_rules(tmp_path, routes=[{"name": "all", "destination": "out"}]))
    state = Path(cfg.daemon.state_dir)
    state.mkdir(parents=True)
    os.chown(state, nobody, nobody)
    journal, lock = guard.open_state(cfg)  # as root
    journal.close()
    lock.release()
    assert os.stat(journal.path).st_uid == nobody and os.stat(state / guard.LOCK_NAME).st_uid == nobody
    code = ("import sys; from daemon.config import load_config; from daemon.journal import guard\n"
            "j, lock = guard.open_state(load_config(sys.argv[1])); j.set_identity('x' * 32); print('wrote')")
    run = [sys.executable, "-c", code, str(tmp_path / "rules.yaml")]
    as_nobody = ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups"]
    r = subprocess.run(as_nobody + run, capture_output=True, text=True, timeout=60, cwd="/")
    assert r.returncode == 0 and "wrote" in r.stdout, r.stderr
    # a journal the service cannot write (left by root before this fix): a sentence, not a traceback
    os.chown(journal.path, 0, 0)
    r = subprocess.run(as_nobody + run, capture_output=True, text=True, timeout=60, cwd="/")
    assert "FatalError" in r.stderr and "belongs to root and cannot be written" in r.stderr, r.stderr
    assert f"chown -R nobody: {state}" in r.stderr


def test_an_older_copy_put_back_is_noticed_and_filled_in_from_the_sidecars(tmp_path: Path) -> None:
    cfg = load_config(write_rules(tmp_path, routes=[{"name": "all", "destination": "out"}]))
    out = tmp_path / "out"
    out.mkdir()
    journal, lock = guard.open_state(cfg)
    files = []
    for i in range(3):
        f = tmp_path / "inbox" / f"f{i}.png"
        f.write_bytes(f"file {i}".encode())
        files.append(f)
    _done(journal, files[0], [out / "f0.json"])
    old = backup.make_backup(journal.path, tmp_path / "b", keep=1)  # the copy: one document
    for i in (1, 2):
        doc_id = _done(journal, files[i], [out / f"f{i}.json"])
        side = {"source": str(files[i]), "inbox": "inbox", "sha256": journal.get(doc_id).sha256,  # type: ignore[union-attr]
                "size": files[i].stat().st_size, "document_id": doc_id, "outputs": [str(out / f"f{i}.json")]}
        (out / f"f{i}.json").write_text(json.dumps(side))
    guard.write_marker(journal)  # a clean stop: the marker says 3
    journal.close()
    lock.release()
    for side in ("-wal", "-shm"):
        Path(f"{journal.path}{side}").unlink(missing_ok=True)
    backup.restore_backup(old, journal.path)  # by hand, as an operator might: cp backup journal.sqlite3
    j2, lock2 = guard.open_state(cfg)
    try:
        assert j2.counts() == {"done": 3}
        assert {r.path for r in (j2.get(i) for i in (1, 2, 3)) if r} == set(files)
        for f in files:  # each is known: not processed again
            assert j2.admit(f, "inbox").action == "known"
    finally:
        lock2.release()


def test_rebuild_round_trips_names_that_are_not_utf8_and_skips_foreign_json(tmp_path: Path) -> None:
    cfg = load_config(write_rules(tmp_path, routes=[{"name": "all", "destination": "out"}]))
    out = tmp_path / "out"
    out.mkdir()
    raw = os.fsdecode(b"scan-\xff\xfe.png")
    src = tmp_path / "inbox" / raw
    src.write_bytes(b"bytes")
    from daemon.names import display

    me = out / os.fsdecode(b"scan-\xff\xfe.json")
    me.write_text(json.dumps({"source": display(src), "inbox": "inbox", "sha256": "ab" * 32, "size": 5,
                              "document_id": 7, "outputs": [display(me)]}))
    (out / "other.json").write_text(json.dumps({"source": "x", "sha256": "cd" * 32, "document_id": 1, "outputs": []}))
    j = Journal(cfg.daemon.state_dir)
    rep = rebuild.from_disk(j, cfg)
    assert (rep.sidecars, rep.added, rep.unreadable) == (1, 1, 1), rep
    row = j.get(7)
    assert row is not None and row.path == src and row.final_path == src and row.outputs == (me,)
    assert rebuild.from_disk(j, cfg).added == 0  # idempotent


def test_a_damaged_backup_copy_is_refused_and_the_good_backups_stay(tmp_path: Path) -> None:
    j = Journal(tmp_path / "state")
    f = tmp_path / "a.png"
    f.write_bytes(b"x")
    _done(j, f, [])
    good = backup.make_backup(j.path, tmp_path / "b", keep=1)
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(good.read_bytes()[:4096] + os.urandom(good.stat().st_size - 4096))
    assert backup.quick_check(bad) is not None
    with pytest.raises(backup.JournalDamaged):
        backup.make_backup(bad, tmp_path / "b", keep=1)
    assert backup.backups(tmp_path / "b") == [good] and not list((tmp_path / "b").glob(".*"))
