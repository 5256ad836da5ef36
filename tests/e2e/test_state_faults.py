"""The daemon's own state under faults (issue 25, items 1-4 and 6), on the real daemon.

Each test runs ``python -m daemon run`` (conftest's daemon-process fixture) with the Tesseract
engine on tiny real PNGs/PDFs and does to the state folder what the world does: fills its
filesystem (a small tmpfs), starts a second daemon on it, damages or deletes the journal, drops
a file the daemon may not read and hidden files. It then checks what a user would see -- the
folders, the exit codes, the log, ``/healthz/ready`` and ``/metrics`` -- and the journal, read
with the sqlite3 module. docs/reliability.md describes the promises tested here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import docgen
import pytest
from conftest import http_url, run_cli, wait_for, with_http
from faultkit import (
    check_exactly_once,
    fast_rules,
    files_in,
    journal_rows,
    output_sets,
    state_counts,
    tiny_png_bytes,
    tmpfs,
)

EXIT_STATE, EXIT_LOCKED = 4, 5


def _drop(inbox: Path, items: dict[str, bytes]) -> None:
    for name, data in items.items():
        tmp = inbox / f".{name}.part"
        tmp.write_bytes(data)
        os.rename(tmp, inbox / name)


def _get(url: str, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url + path, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _gauge(url: str, name: str) -> float | None:
    _, body = _get(url, "/metrics")
    for line in body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def _wait_exit(d, timeout: float = 60) -> int:  # type: ignore[no-untyped-def]
    try:
        return d.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the daemon did not exit:\n{d.log()}") from None


# ---------------------------------------------------------------------------------------------
# 1. the state folder's filesystem fills up while documents are in flight


@pytest.fixture
def state_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path/state`` as a 16 MiB tmpfs (root only; skipped where mounting is refused)."""
    with tmpfs(tmp_path / "state", "16m") as mnt:
        yield mnt


def _fill(folder: Path) -> Path:
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        while os.write(fd, b"\0" * 65536) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def _pages_recorded(tmp: Path) -> dict[int, int]:
    db = sqlite3.connect(f"file:{tmp / 'state' / 'journal.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        return dict(db.execute("SELECT doc_id, count(*) FROM pages GROUP BY doc_id").fetchall())
    except sqlite3.Error:
        return {}
    finally:
        db.close()


def test_full_state_disk_stalls_not_ready_then_resumes_by_itself_exactly_once(
    tmp_path: Path, state_tmpfs: Path, start_daemon  # type: ignore[no-untyped-def]
) -> None:
    cfg = with_http(fast_rules(tmp_path, daemon={"workers": 4, "journal_backup_interval": 0, "retry_backoff": 0.5},
                               engine={"tesseract": {"threads": 2, "languages": ["en"], "render_dpi": None}}))
    d = start_daemon(cfg)
    d.wait_ready()
    url = http_url(d)
    staged = tmp_path / "staged"
    staged.mkdir()
    inputs: dict[str, bytes] = {}
    for i in range(4):  # four multi-page scans, all in flight at once (workers: 4)
        pdf = docgen.make_pdf(staged / f"scan{i}.pdf", [f"Scan {i} page {p} of the full disk test" for p in range(12)],
                              scanned=True, scan_width=300)
        inputs[pdf.name] = pdf.read_bytes()
    for name in inputs:
        os.rename(staged / name, tmp_path / "inbox" / name)
    wait_for(lambda: len([n for n in _pages_recorded(tmp_path).values() if n >= 1]) >= 4, 120, "four documents with pages recorded")
    filler = _fill(state_tmpfs)
    try:
        d.wait_log("the journal cannot be written", 120)
        code, body = wait_for(lambda: (r := _get(url, "/healthz/ready"))[0] == 503 and "journal" in r[1] and r, 30,
                              "/healthz/ready 503 naming the journal")
        assert "cannot be written" in body, body
        assert _gauge(url, "ocr_daemon_journal_writable") == 0
        time.sleep(3)  # stays stalled, and alive, while the disk is full
        assert d.proc.poll() is None
        assert _get(url, "/healthz/ready")[0] == 503
        assert not files_in(tmp_path / "failed")
    finally:
        filler.unlink()
    # space is back: the daemon resumes by itself, every document ends exactly once
    wait_for(lambda: state_counts(tmp_path).get("done") == 4, 180, "all four done after the space came back")
    wait_for(lambda: _get(url, "/healthz/ready")[0] == 200, 30, "ready again")
    assert _gauge(url, "ocr_daemon_journal_writable") == 1
    assert "Exception in thread" not in d.log(), d.log()
    assert "the journal can be written again" in d.log()
    assert d.stop() == 0
    v = check_exactly_once(tmp_path, inputs)
    assert v, str(v)


# ---------------------------------------------------------------------------------------------
# 2. two daemons (or once) on one state folder


def test_second_daemon_and_once_are_refused_status_works_and_kill9_leaves_no_stale_lock(
    tmp_path: Path, start_daemon  # type: ignore[no-untyped-def]
) -> None:
    cfg = fast_rules(tmp_path)
    inbox = tmp_path / "inbox"
    d1 = start_daemon(cfg)
    d1.wait_ready()
    first = {f"a{i}.png": tiny_png_bytes(f"first {i}") for i in range(3)}
    _drop(inbox, first)
    wait_for(lambda: state_counts(tmp_path).get("done") == 3, 120, "first batch done")

    d2 = start_daemon(cfg)
    assert _wait_exit(d2) == EXIT_LOCKED, d2.log()
    assert f"another ocr-daemon (pid {d1.proc.pid})" in d2.log(), d2.log()
    assert "re-queued" not in d2.log() and "initial scan" not in d2.log()
    extra = tmp_path / "extra.png"
    extra.write_bytes(tiny_png_bytes("once"))
    once = run_cli("once", "--config", str(cfg), str(extra))
    assert once.returncode == EXIT_LOCKED, once.stderr
    assert f"pid {d1.proc.pid}" in once.stderr
    rebuild = run_cli("journal", "rebuild", "--config", str(cfg))
    assert rebuild.returncode == EXIT_LOCKED, rebuild.stderr
    status = run_cli("status", "--config", str(cfg), "--json")  # reading needs no lock
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["counts"] == {"done": 3}

    second = {f"b{i}.png": tiny_png_bytes(f"second {i}") for i in range(2)}
    _drop(inbox, second)
    wait_for(lambda: state_counts(tmp_path).get("done") == 5, 120, "second batch done by the first daemon")
    d1.kill9()  # the kernel drops the lock with the process: a new daemon starts at once
    d3 = start_daemon(cfg)
    d3.wait_ready()
    assert d3.stop() == 0
    assert state_counts(tmp_path) == {"done": 5}
    v = check_exactly_once(tmp_path, {**first, **second})
    assert v, str(v)


# ---------------------------------------------------------------------------------------------
# 3. a damaged journal


def _damage(journal: Path, table: str = "documents") -> None:
    """Overwrite the root page of ``table`` (one page) with garbage, as a bad sector would."""
    db = sqlite3.connect(journal)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file itself, none newer in the -wal
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (table,)).fetchone()[0]
    db.close()
    with open(journal, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(os.urandom(page_size))


def test_damaged_journal_refuses_to_start_and_restore_or_rebuild_recover_it(
    tmp_path: Path, start_daemon  # type: ignore[no-untyped-def]
) -> None:
    cfg = fast_rules(tmp_path)  # daemon.journal_backup_interval: the default hour
    inbox, state = tmp_path / "inbox", tmp_path / "state"
    d = start_daemon(cfg)
    d.wait_ready()
    first = {f"a{i}.png": tiny_png_bytes(f"pre {i}") for i in range(3)}
    _drop(inbox, first)
    wait_for(lambda: state_counts(tmp_path).get("done") == 3, 120, "first batch done")
    assert d.stop() == 0
    shutil.rmtree(state / "backups", ignore_errors=True)  # (one may have been made at the start)
    # no backup yet: the next start makes one within seconds -- of the three documents done
    d = start_daemon(cfg)
    d.wait_ready()
    d.wait_log("journal backed up to", 60)
    later = {f"b{i}.png": tiny_png_bytes(f"post {i}") for i in range(2)}
    _drop(inbox, later)  # done after the backup: a restore must not do them again
    wait_for(lambda: state_counts(tmp_path).get("done") == 5, 120, "second batch done")
    assert d.stop() == 0
    assert len(list((state / "backups").iterdir())) == 1

    _damage(state / "journal.sqlite3")
    d = start_daemon(cfg)
    assert _wait_exit(d) == EXIT_STATE, d.log()
    log = d.log()
    assert "is damaged" in log and "ocr-daemon journal restore" in log and "ocr-daemon journal rebuild" in log, log
    assert "initial scan" not in log

    r = run_cli("journal", "restore", "--config", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "restored" in r.stdout and "kept as" in r.stdout
    assert list(state.glob("journal.sqlite3.replaced-*")), "the damaged journal was not kept"
    d = start_daemon(cfg)
    d.wait_ready()
    time.sleep(3)  # a rescan or two: nothing is processed again
    assert d.stop() == 0
    assert state_counts(tmp_path) == {"done": 5}, journal_rows(tmp_path)
    v = check_exactly_once(tmp_path, {**first, **later})
    assert v, str(v)

    # the other way out: rebuild (keeps the damaged journal beside the new one)
    _damage(state / "journal.sqlite3")
    r = run_cli("journal", "rebuild", "--config", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "damaged" in r.stdout and "5 document(s) added from 5 sidecar(s)" in r.stdout, r.stdout
    assert list(state.glob("journal.sqlite3.damaged-*"))
    d = start_daemon(cfg)
    d.wait_ready()
    _drop(inbox, {"c.png": tiny_png_bytes("after rebuild")})
    wait_for(lambda: state_counts(tmp_path).get("done") == 6, 120, "a new file after the rebuild")
    assert d.stop() == 0
    v = check_exactly_once(tmp_path, {**first, **later, "c.png": tiny_png_bytes("after rebuild")})
    assert v, str(v)


# ---------------------------------------------------------------------------------------------
# 4. a lost or emptied journal (source: keep -- the files stay in the inbox)


def test_lost_or_emptied_journal_is_rebuilt_from_the_sidecars_and_nothing_is_done_twice(
    tmp_path: Path, start_daemon  # type: ignore[no-untyped-def]
) -> None:
    cfg = fast_rules(tmp_path, routes=[{"name": "all", "destination": "out", "source": "keep"}])
    inbox, state = tmp_path / "inbox", tmp_path / "state"
    d = start_daemon(cfg)
    d.wait_ready()
    inputs = {f"k{i}.png": tiny_png_bytes(f"kept {i}") for i in range(3)}
    _drop(inbox, inputs)
    bad = inbox / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    wait_for(lambda: state_counts(tmp_path) == {"done": 3, "failed": 1}, 120, "three done, one failed")
    d.signal(signal.SIGKILL)  # unclean: the -wal is left beside the journal
    d.proc.wait(timeout=10)
    assert json.loads((state / "journal.marker").read_text())["journal_id"]

    for how in ("deleted", "emptied"):
        journal = state / "journal.sqlite3"
        if how == "deleted":
            journal.unlink()  # the -wal/-shm stay: they must not be replayed into a new journal
        else:
            for side in ("-wal", "-shm"):
                Path(f"{journal}{side}").unlink(missing_ok=True)
            journal.write_bytes(b"")
        d = start_daemon(cfg)
        d.wait_ready()
        log = d.log()
        assert "is missing or empty" in log and "rebuilt from the outputs on disk: 4 document(s) added from 3 sidecar(s) and 1 failed-folder note(s)" in log, log
        if how == "deleted":
            assert list(state.glob("journal.sqlite3-wal.orphan-*")), "a stray -wal was not set aside"
        time.sleep(3)  # rescans (every 2 s) see the kept files: known, by their content
        assert d.stop() == 0
        assert state_counts(tmp_path) == {"done": 3, "failed": 1}, journal_rows(tmp_path)
        sets = output_sets(tmp_path / "out")
        assert sorted(len(v) for v in sets.values()) == [1, 1, 1], sets  # no second output set (-1)
        assert not [p for p in files_in(tmp_path / "out") if "-1." in p.name]
        for name, data in inputs.items():
            assert (inbox / name).read_bytes() == data
    # the failed file is known again: requeue finds it in the failed folder
    r = run_cli("requeue", "--config", str(cfg), str(tmp_path / "failed" / "broken.png"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (inbox / "broken.png").exists()


# ---------------------------------------------------------------------------------------------
# 6. an unreadable file; hidden files


def test_unreadable_file_is_failed_after_max_attempts_and_hidden_files_are_logged_once(
    tmp_path: Path, start_daemon  # type: ignore[no-untyped-def]
) -> None:
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:  # root reads a mode-000 file: run the daemon without that power
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root, and no setpriv to drop CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH")
        prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search", "--")
    cfg = fast_rules(tmp_path, daemon={"max_attempts": 2, "rescan_interval": 1}, inbox={"invalid_grace": 0.5})
    inbox = tmp_path / "inbox"
    d = start_daemon(cfg, prefix=prefix)
    d.wait_ready()
    locked = inbox / "locked.png"
    locked.write_bytes(tiny_png_bytes("locked"))
    locked.chmod(0)
    hidden = {".hidden.png": tiny_png_bytes("hidden"), "..dots.png": tiny_png_bytes("dots")}
    for name, data in hidden.items():
        (inbox / name).write_bytes(data)
    _drop(inbox, {"ok.png": tiny_png_bytes("fine")})
    wait_for(lambda: (tmp_path / "failed" / "locked.png.error.txt").exists(), 120, "the unreadable file failed, with its note")
    assert (tmp_path / "failed" / "locked.png").exists() and not locked.exists()
    note = (tmp_path / "failed" / "locked.png.error.txt").read_text()
    assert "cannot read the file: Permission denied (tried 2 times)" in note, note
    wait_for(lambda: state_counts(tmp_path).get("done") == 1, 60, "the readable file done")
    time.sleep(3)  # more rescans: the hidden files stay ignored, logged once each
    assert d.stop() == 0
    log = d.log()
    assert log.count("cannot read locked.png: Permission denied (try 1 of 2") == 1, log
    for name in hidden:
        assert log.count(f"ignoring the hidden file {inbox / name}") == 1, log
        assert (inbox / name).exists()
    rows = {Path(r["path"]).name: r for r in journal_rows(tmp_path)}
    assert rows["locked.png"]["state"] == "failed" and "Permission denied" in rows["locked.png"]["error"]
    assert set(rows) == {"locked.png", "ok.png"}
