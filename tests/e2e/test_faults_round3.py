"""Fault injection, round three (issue 33): the attacks that had got through, on the real daemon.

Each test starts ``python -m daemon run`` (conftest.DaemonProc) on real files in ``tmp_path`` and
attacks it the way the issue did: a huge sparse ``.pdf`` (``truncate``), a full or read-only
output tmpfs (faultkit.tmpfs, root only), a valid PDF whose name is not UTF-8 and names with
control characters, the state lock file removed, ``requeue`` against a running daemon, a state
disk filled and freed again, a database outage without hooks and a connection flood from one
client. bench/bench_faults.py runs them all and prints what each expected and observed.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import docgen
import pytest
from conftest import REPO, daemon_env, http_url, run_cli, wait_for, with_http
from faultkit import fast_rules, files_in, journal_rows, mount, state_counts, tiny_png_bytes, tmpfs

from daemon.journal.store import NOT_READ

GIB = 1 << 30


def _drop(inbox: Path, name: str | bytes, data: bytes) -> Path:
    """Write under a hidden temp name and rename it in (the usual safe way); ``name`` may be bytes."""
    inbox.mkdir(exist_ok=True)
    tmp = inbox / ".drop.part"
    tmp.write_bytes(data)
    dst = os.path.join(os.fsencode(inbox), name) if isinstance(name, bytes) else os.path.join(inbox, name)
    os.rename(tmp, dst)
    return Path(os.fsdecode(dst))


def _sparse_pdf(path: Path, size: int, *, eof: bool = False) -> Path:
    """A ``%PDF-1.4`` header, then ``size`` bytes of holes (``truncate -s``), ``%%EOF`` at the end if asked."""
    tmp = path.parent / f".{path.name}.part"
    tmp.write_bytes(b"%PDF-1.4\n")
    subprocess.run(["truncate", "-s", str(size), str(tmp)], check=True)
    if eof:
        with open(tmp, "r+b") as f:
            f.seek(size - 8)
            f.write(b"\n%%EOF\n")
    os.rename(tmp, path)
    return path


def observe(attack: str, expected: str, observed: str) -> None:
    """One row of bench/bench_faults.py's table: appended (JSON line) to the file named by
    ``FAULTS_OBSERVE`` when the bench runs these tests; nothing otherwise."""
    out = os.environ.get("FAULTS_OBSERVE")
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps({"attack": attack, "expected": expected, "observed": observed}) + "\n")


def _get(url: str, path: str, timeout: float = 5) -> tuple[int, str]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------
# 1. a huge sparse .pdf: refused at once, never opened in the daemon; health answers throughout


def test_huge_sparse_pdf_is_refused_at_once_and_health_stays_answering(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = with_http(fast_rules(tmp_path))
    d = start_daemon(cfg)
    url = http_url(d)
    d.wait_ready()
    inbox = tmp_path / "inbox"
    _sparse_pdf(inbox / "big.pdf", 8 * GIB)
    _drop(inbox, "small.png", tiny_png_bytes("hello world"))
    worst, errors, stop = [0.0], [0], threading.Event()

    def probe() -> None:  # /healthz/live every 50 ms while the daemon deals with both
        while not stop.is_set():
            t = time.monotonic()
            try:
                ok = _get(url, "/healthz/live", timeout=10)[0] == 200
            except OSError:
                ok = False
            worst[0] = max(worst[0], time.monotonic() - t)
            errors[0] += not ok
            time.sleep(0.05)

    th = threading.Thread(target=probe, daemon=True)
    th.start()
    try:
        wait_for(lambda: state_counts(tmp_path) == {"done": 1, "failed": 1}, 60, "small done, big failed")
    finally:
        stop.set()
        th.join(15)
    note = (tmp_path / "failed" / "big.pdf.error.txt").read_text()
    observe("8 GiB sparse .pdf + a PNG dropped", "/healthz/live < 1 s throughout; failed at once, clear reason",
            f"/healthz/live worst {worst[0]:.2f} s, {errors[0]} unanswered; {state_counts(tmp_path)}; reason: "
            f"{next((ln for ln in note.splitlines() if 'too large' in ln), '?').strip()[:80]}")
    # answered throughout (the bug: 131 s unanswered); the < 1 s goal is bench/bench_faults.py's
    assert worst[0] < 5.0 and errors[0] == 0, f"/healthz/live took {worst[0]:.2f} s, {errors[0]} unanswered"
    assert "file too large: 8,192 MiB > limit 2,048 MiB" in note, note
    assert (tmp_path / "failed" / "big.pdf").stat().st_size == 8 * GIB  # moved, not lost
    big = next(r for r in journal_rows(tmp_path) if r["path"].endswith("big.pdf"))
    assert big["sha256"] == NOT_READ and big["strikes"] == 0, big  # never hashed nor retried
    assert d.stop() == 0


def test_sigterm_ends_within_drain_timeout_while_a_worker_chews_a_big_pdf(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    """A 3 GiB sparse PDF under a raised ``max_file_mb`` (MuPDF repairs it in a render worker for
    ~35 s): SIGTERM still ends the daemon within ``drain_timeout`` + a few seconds, the worker
    killed at the deadline; the file stays in the inbox for the next start."""
    drain = 3
    cfg = fast_rules(tmp_path, daemon={"drain_timeout": drain}, inbox={"max_file_mb": 4096})
    d = start_daemon(cfg)
    d.wait_ready()
    inbox = tmp_path / "inbox"
    _sparse_pdf(inbox / "chew.pdf", 3 * GIB, eof=True)
    d.wait_log("queued chew.pdf", 60)
    time.sleep(1.5)  # the render worker is inside MuPDF's repair now
    t = time.monotonic()
    d.signal(signal.SIGTERM)
    d.proc.wait(timeout=drain + 60)
    took = time.monotonic() - t
    observe(f"SIGTERM while a worker repairs a 3 GiB sparse PDF (drain_timeout {drain})",
            f"ends within {drain} + a few s", f"ended in {took:.1f} s, exit {d.proc.returncode}")
    assert took < drain + 5, f"SIGTERM took {took:.1f} s (drain_timeout {drain})"
    assert d.proc.returncode == 0, d.log()
    assert (inbox / "chew.pdf").exists()
    assert not files_in(tmp_path / "failed")


# ---------------------------------------------------------------------------------------------
# 2. a full (or read-only) output disk costs no attempt


@pytest.fixture
def small_out(tmp_path: Path):  # type: ignore[no-untyped-def]
    with tmpfs(tmp_path / "out", "1m") as mnt:
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


def test_full_output_disk_fails_nothing_and_documents_finish_when_space_returns(tmp_path: Path, small_out: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    # max_attempts 2 and a short backoff: the old behaviour (a strike a try) fails them in seconds
    cfg = with_http(fast_rules(tmp_path, daemon={"max_attempts": 2, "retry_backoff": 0.5, "retry_backoff_max": 1}))
    d = start_daemon(cfg)
    url = http_url(d)
    d.wait_ready()
    filler = _fill(small_out)
    inbox = tmp_path / "inbox"
    for i in range(3):
        _drop(inbox, f"full{i}.png", tiny_png_bytes(f"full disk {i}"))
    d.wait_log("waiting for the destination", 60, count=9)  # three tries each, at least
    rows = journal_rows(tmp_path)
    full_rows = [(r["state"], r["strikes"]) for r in rows]
    # waiting (queued), or being tried again right now; never a strike
    assert len(rows) == 3 and all(st in ("queued", "processing") and k == 0 for st, k in full_rows), rows
    assert all("no space left on device" in (r["error"] or "") for r in rows), rows
    # visible: /status, the status page, /metrics and `ocr-daemon status`
    code, body = _get(url, "/status")
    assert code == 200 and len(json.loads(body)["waiting_for_space"]) == 3, body
    code, page = _get(url, "/")
    assert code == 200 and page.count('class="waiting"') == 3, page
    code, metrics = _get(url, "/metrics")
    assert "ocr_daemon_documents_waiting_for_space 3.0" in metrics
    st = subprocess.run([sys.executable, "-m", "daemon", "status", "--config", str(cfg)], capture_output=True,
                        text=True, cwd=REPO, env=daemon_env(), timeout=60)
    assert "waiting for a full or read-only destination" in st.stdout and st.stdout.count("no space left") == 3, st.stdout
    # a read-only remount is waited for the same way
    filler.unlink()
    assert mount("-o", "remount,ro", str(small_out))
    try:
        d.wait_log("read-only filesystem", 30, count=3)
        assert state_counts(tmp_path) == {"queued": 3} or "failed" not in state_counts(tmp_path)
    finally:
        assert mount("-o", "remount,rw", str(small_out))
    wait_for(lambda: state_counts(tmp_path).get("done") == 3, 60, "documents done once space returned")
    observe("output folder on a full 1 MiB tmpfs (then read-only), 3 PNGs", "no strike, waits visibly, done when space returns",
            f"while full: (state, strikes) {sorted(set(full_rows))} x{len(full_rows)}; after: {state_counts(tmp_path)}, "
            f"strikes {sum(r['strikes'] for r in journal_rows(tmp_path))}")
    assert not files_in(tmp_path / "failed")
    assert all(r["strikes"] == 0 for r in journal_rows(tmp_path))
    assert d.stop() == 0


# ---------------------------------------------------------------------------------------------
# 3. file names are bytes: a non-UTF-8 name is processed, control characters never reach names or prints


def test_non_utf8_and_control_character_names(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = fast_rules(tmp_path)
    d = start_daemon(cfg)
    d.wait_ready()
    inbox = tmp_path / "inbox"
    made = docgen.make_pdf(tmp_path / "made.pdf", ["Invoice number 42 for the consulting services delivered in March, payable within thirty days."])
    _drop(inbox, b"bad\xff\xfe.pdf", made.read_bytes())
    _drop(inbox, "new\nline.png", tiny_png_bytes("newline"))
    _drop(inbox, "tab\tand\x1b[31mansi.png", tiny_png_bytes("escape"))
    wait_for(lambda: state_counts(tmp_path).get("done") == 3, 90, "three documents done")
    out = sorted(os.listdir(os.fsencode(tmp_path / "out")))
    observe("names bad\\xff\\xfe.pdf, new\\nline.png, tab\\t\\x1b[31m.png", "processed; safe, unique output names",
            f"{state_counts(tmp_path)}; outputs {sorted({n.rsplit(b'.', 1)[0].decode('utf-8', 'backslashreplace') for n in out})}")
    assert not any(c < 0x20 or c == 0x7F for name in out for c in name), out  # no control byte in a name
    for name in out:
        name.decode("utf-8")  # every output name is valid UTF-8
    stems = {n.rsplit(b".", 1)[0] for n in out}
    assert len(stems) == 3, out  # one distinct, stable stem per source
    assert any(s.startswith(b"bad__-") for s in stems), out
    text = next(n for n in out if n.startswith(b"bad") and n.endswith(b".txt"))
    assert "Invoice" in (tmp_path / "out" / os.fsdecode(text)).read_text()
    st = subprocess.run([sys.executable, "-m", "daemon", "status", "--config", str(cfg)], capture_output=True,
                        cwd=REPO, env=daemon_env(), timeout=60)
    assert b"\x1b" not in st.stdout and b"new\nline" not in st.stdout
    assert b"\x1b" not in Path(d.log_path).read_bytes()
    assert d.stop() == 0


# ---------------------------------------------------------------------------------------------
# 8. requeue against a running daemon: one transition, one run, no spurious failure


def test_requeue_against_a_running_daemon_makes_exactly_one_run(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = fast_rules(tmp_path)
    d = start_daemon(cfg)
    d.wait_ready()
    inbox, failed = tmp_path / "inbox", tmp_path / "failed"
    good = tiny_png_bytes("good page")
    _drop(inbox, "fixme.png", b"this is not an image")
    _drop(inbox, "first.png", good)
    _drop(inbox, "dup.png", b"nor is this")
    wait_for(lambda: state_counts(tmp_path) == {"done": 1, "failed": 2}, 60, "one done, two failed")
    # the user fixes the files where they lie: one with new content, one with the done file's
    (failed / "fixme.png").write_bytes(tiny_png_bytes("fixed page"))
    (failed / "dup.png").write_bytes(good)
    r = run_cli("requeue", "--config", str(cfg), str(failed / "fixme.png"), str(failed / "dup.png"))
    assert r.returncode == 0 and "2 document(s) queued" in r.stdout, r.stdout + r.stderr
    wait_for(lambda: state_counts(tmp_path) == {"done": 3}, 60, "both requeued rows done")
    time.sleep(3)  # a rescan (rescan_interval 2) more: nothing is taken again
    rows = journal_rows(tmp_path)
    observe("requeue (fixed file; file = a done one's content) against a running daemon",
            "one run each, no new row, no failure",
            f"rows {[r['state'] for r in rows]}; runs fixme {d.log().count('processing fixme.png')}, "
            f"dup {d.log().count('processing dup.png')}")
    assert len(rows) == 3 and {r["state"] for r in rows} == {"done"}, rows  # no new row, no superseded
    assert d.log().count("processing fixme.png") == 1 and d.log().count("processing dup.png") == 1, d.log()
    # requeue --failed has nothing to do now, and flips no row
    r = run_cli("requeue", "--config", str(cfg), "--failed")
    assert r.returncode == 0 and "0 document(s) queued" in r.stdout, r.stdout + r.stderr
    time.sleep(2.5)
    assert [r["state"] for r in journal_rows(tmp_path)] == ["done"] * 3
    assert not files_in(failed), files_in(failed)
    assert d.stop() == 0


# ---------------------------------------------------------------------------------------------
# 4. a state lock that cannot be deleted away


def test_removing_the_lock_file_does_not_let_a_second_daemon_run(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = fast_rules(tmp_path)
    a = start_daemon(cfg)
    a.wait_ready()
    lock = tmp_path / "state" / "daemon.lock"
    gone = threading.Event()

    def keep_removing() -> None:  # until B has given up: A's 5-s check would take the file again
        while not gone.is_set():
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
            time.sleep(0.05)

    th = threading.Thread(target=keep_removing, daemon=True)
    th.start()
    try:
        time.sleep(0.2)
        b = start_daemon(cfg)
        b.proc.wait(timeout=60)
    finally:
        gone.set()
        th.join(5)
    observe("rm state/daemon.lock, then a second `run`", "refused (exit 5)", f"second daemon exit {b.proc.returncode}")
    assert b.proc.returncode == 5, b.log()  # ExitCode.LOCKED
    # the folder's own lock refused it (or, in the 50 ms after one of A's checks took the file
    # again, that file's lock, naming A)
    assert "holds a lock on the folder itself" in b.log() or f"(pid {a.proc.pid})" in b.log(), b.log()
    a.wait_log("was removed or replaced; taken again", 30)  # A's check, every 5 s
    wait_for(lambda: lock.exists() and lock.read_text().strip() == str(a.proc.pid), 30, "A holds the file again")
    _drop(tmp_path / "inbox", "after.png", tiny_png_bytes("still working"))
    wait_for(lambda: state_counts(tmp_path).get("done") == 1, 60, "A still processes")
    assert a.stop() == 0


# ---------------------------------------------------------------------------------------------
# 5. one room rule for the state disk: what lets the daemon start ready is what lets it go on


def test_state_disk_room_rule_is_the_same_at_start_and_resume(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    with tmpfs(tmp_path / "state", "8m") as state:
        filler = state / "filler.bin"
        filler.write_bytes(b"\0" * (6 << 20))  # ~2 MiB left: less than the 4 MiB rule (journal.health.HEADROOM)
        cfg = with_http(fast_rules(tmp_path))
        d = start_daemon(cfg)
        url = http_url(d)
        d.wait_ready()
        _drop(tmp_path / "inbox", "wait.png", tiny_png_bytes("waiting page"))
        code, body = wait_for(lambda: (r := _get(url, "/healthz/ready")) and r[0] == 503 and r, 30, "not ready")
        observe("start with ~2 MiB free on the state fs, then free it", "not ready at start (same rule as resume); ready once room",
                f"at start: {code} {body.strip()[:70]}")
        assert "needs 4096 KiB to start or go on" in body, body
        time.sleep(2)
        assert state_counts(tmp_path).get("done", 0) == 0  # no document started
        filler.unlink()  # room again: the same rule lets it go on
        wait_for(lambda: _get(url, "/healthz/ready")[0] == 200, 30, "ready once there is room")
        wait_for(lambda: state_counts(tmp_path).get("done") == 1, 60, "the waiting document done")
        assert d.stop() == 0


# ---------------------------------------------------------------------------------------------
# 6. quiet logs: a database outage without hooks is one line from the dispatcher, no traceback


def test_database_outage_without_hooks_logs_one_line_not_tracebacks(tmp_path: Path, pg_server, start_daemon) -> None:  # type: ignore[no-untyped-def]
    url = pg_server.create_db()
    cfg = fast_rules(tmp_path, daemon={"journal_url": url, "journal_lease": 10})
    d = start_daemon(cfg)
    d.wait_ready()
    pg_server.stop()
    try:
        # each of the dispatcher's threads reads the journal at least every hooks.POLL (30) s with
        # nothing due: 31 s makes every one of them meet the outage (the bug: a traceback each, every 5 s)
        time.sleep(31)
    finally:
        pg_server.start()
    _drop(tmp_path / "inbox", "after.png", tiny_png_bytes("after the outage"))
    d.wait_log("archived to", 90)
    log = d.log()
    assert d.stop() == 0
    observe("31 s PostgreSQL outage, no hooks", "no traceback; one line per outage",
            f"tracebacks {log.count('Traceback')}; dispatcher lines {log.count('hooks: cannot read the journal')}")
    assert "hooks: dispatcher error" not in log and "Traceback" not in log, log
    assert log.count("hooks: cannot read the journal") == 1, log


# ---------------------------------------------------------------------------------------------
# 7. a connection flood from one client never starves the health probes


def test_idle_connection_flood_from_one_client_does_not_starve_health_probes(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = with_http(fast_rules(tmp_path))
    d = start_daemon(cfg)
    url = http_url(d)
    d.wait_ready()
    host, port = url.removeprefix("http://").rsplit(":", 1)
    flood = []
    try:
        for _ in range(1100):  # idle: connected, nothing sent (over MAX_CONNECTIONS 1000)
            flood.append(socket.create_connection((host, int(port)), timeout=10))
        time.sleep(0.5)
        answered, worst = 0, 0.0
        for _ in range(50):  # the same client address (127.0.0.1) as the flood
            t = time.monotonic()
            try:
                code, _ = _get(url, "/healthz/live", timeout=5)
                answered += code == 200
            except OSError:
                pass
            worst = max(worst, time.monotonic() - t)
        observe("1,100 idle sockets from one client, 50 probes from the same address", "50/50 answered, < 1 s",
                f"{answered}/50 answered, worst {worst:.2f} s")
        # every probe answered (the bug: 50 of 50 reset); the < 1 s goal is bench/bench_faults.py's
        assert answered == 50 and worst < 5.0, (answered, worst)
    finally:
        for s in flood:
            s.close()
    assert d.stop() == 0
