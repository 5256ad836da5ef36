"""Environment variables: set by the entry point (``daemon.cli.main``), inherited by render
workers, never changed by importing a module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

from daemon import procenv


def _python(code: str, **env: str) -> str:
    """Run ``code`` in a fresh interpreter whose environment lacks the variables of PROCESS_ENV
    (plus ``env``); its stdout."""
    e = {k: v for k, v in os.environ.items() if k not in procenv.PROCESS_ENV}
    e.update(env)
    e["PYTHONPATH"] = str(REPO)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_importing_the_daemon_changes_no_environment_variable() -> None:
    out = _python(
        "import os; before = dict(os.environ)\n"
        "import daemon.pages.render, daemon.pages.renderpool, daemon.engines.tesseract, daemon.service.service, daemon.cli\n"
        "print(sorted(set(os.environ.items()) ^ set(before.items())))"
    )
    assert out == "[]"


def test_the_entry_point_sets_them_and_a_given_value_wins(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("inboxes: [{path: in}]\nroutes: [{name: all}]\n")
    code = (
        "import os, sys\nfrom daemon.cli import main\n"
        f"rc = main(['check-config', '--config', {str(rules)!r}])\n"
        "print(rc, os.environ.get('OMP_THREAD_LIMIT'))"
    )
    assert _python(code).splitlines()[-1] == "0 1"
    assert _python(code, OMP_THREAD_LIMIT="3").splitlines()[-1] == "0 3"


def test_render_workers_inherit_them() -> None:
    # as in the daemon: the entry point applies them, then the render pool starts its forkserver
    code = (
        "import os\nfrom daemon import procenv\nprocenv.apply()\n"
        "from daemon.pages.renderpool import RenderPool\n"
        "pool = RenderPool(1, memory_mb=1024)\n"
        "try:\n    print(pool.submit(os.getenv, 'OMP_THREAD_LIMIT').result(timeout=60), pool.submit(os.getpid).result(timeout=60) != os.getpid())\n"
        "finally:\n    pool.close()\n"
    )
    assert _python(code) == "1 True"


def test_the_entry_point_limits_this_process_to_two_malloc_arenas() -> None:
    """Issue 34: one glibc arena per allocating thread kept a big drop's memory (91 -> 215 MB).
    Six threads allocating at once: after ``apply()`` they share two arenas (glibc's
    ``malloc_stats`` lists them); without it they spread over more (so the test can fail)."""
    code = (
        "import ctypes, os, sys, threading\nfrom daemon import procenv\n"
        "if sys.argv[1:] == ['apply']:\n    procenv.apply()\n"
        "held = []\nstart = threading.Barrier(6)\n"
        "def work():\n    start.wait()\n    held.append([bytes(2000 + i % 7) for i in range(3000)])\n"
        "ts = [threading.Thread(target=work) for _ in range(6)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "sys.stderr.flush()\nctypes.CDLL('libc.so.6').malloc_stats()\n"
    )
    e = {k: v for k, v in os.environ.items() if k not in procenv.PROCESS_ENV}
    e["PYTHONPATH"] = str(REPO)

    def arenas(*args: str) -> int:
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=e, cwd=REPO, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stderr.count("Arena ")

    assert arenas("apply") <= 2
    assert arenas() > 2
