"""The session check of tests/conftest.py finds processes a test leaves behind: a child still
running, and an orphan re-parented away from pytest (as render workers were after kill -9)."""

from __future__ import annotations

import os
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
