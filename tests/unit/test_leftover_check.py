"""The session check of tests/conftest.py finds processes a test leaves behind: a child still
running, and an orphan re-parented away from pytest (as render workers were after kill -9)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

from conftest import SESSION_MARK, _proc_table, leftover_processes, wait_for


def test_leftover_check_finds_a_running_child_and_an_orphan_and_not_older_processes() -> None:
    token = os.environ[SESSION_MARK]
    me = os.getpid()
    before = set(_proc_table())
    assert leftover_processes(token, before, me) == []
    child = subprocess.Popen(["sleep", "60"])
    # an orphan: sh starts sleep in the background and exits at once, sleep goes to init
    out = subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True)
    orphan = int(out.stdout.strip())
    try:
        wait_for(lambda: _proc_table().get(orphan, (me, ""))[0] != me, 10, "the orphan to be re-parented")
        left = leftover_processes(token, before, me)
        assert child.pid in left and orphan in left
        # a process that was there when the check began is not this session's leftover
        assert leftover_processes(token, before | {child.pid, orphan}, me) == []
    finally:
        child.kill()
        child.wait()
        os.kill(orphan, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while orphan in leftover_processes(token, before, me) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftover_processes(token, before, me) == []


def _link(path: str) -> str:
    """A /proc fd link's target, "" when the fd closed meanwhile (the shell's own fds come and go
    while it sets up fd 3 and execs: the suite at 8fc5a01 read one that had just gone)."""
    try:
        return os.readlink(path)
    except FileNotFoundError:
        return ""


def test_system_place_guard_names_the_writer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The /var/lib/ocr-daemon guard's message (``who_wrote``): the files changed, the process
    that holds one open, and the journal rows whose paths name the test that wrote there."""
    from conftest import who_wrote

    from daemon.journal.store import Journal

    place = tmp_path / "var-lib-ocr-daemon"
    src = tmp_path / "test_something0" / "inbox" / "letter.pdf"
    src.parent.mkdir(parents=True)
    src.write_bytes(b"%PDF-1.4\n")
    t0 = time.time()
    j = Journal(place)
    j.admit(src, "inbox")
    j.close()
    holder = subprocess.Popen(["sh", "-c", f"exec 3<'{place / 'journal.sqlite3'}'; exec sleep 60"])
    try:
        wait_for(lambda: any("journal.sqlite3" in _link(f"/proc/{holder.pid}/fd/{fd}")
                             for fd in os.listdir(f"/proc/{holder.pid}/fd")), 10, "the file held open")
        lines = "\n".join(who_wrote(place, t0))
    finally:
        holder.kill()
        holder.wait()
    assert str(place / "journal.sqlite3") in lines, lines
    assert re.search(rf"open by: pid {holder.pid} sleep 60", lines), lines
    assert "journal row doc-1:" in lines and "test_something0/inbox/letter.pdf" in lines, lines
