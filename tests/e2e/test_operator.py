"""An operator's day with a real ``ocr-daemon run`` (issue 35): started as the installer prints
it for a machine without systemd -- detached with ``setsid -f``, ``--log-file``, ``--pid-file``;
an inbox it creates is setgid and group-writable; a subtree the group cannot drop into is warned
about at start; a failure is a WARNING line naming the file and where it went; a reload says
which changed keys it did not apply; ``kill $(cat PIDFILE)`` stops it and the pid file goes."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import yaml
from conftest import REPO, daemon_env, wait_for, write_rules


def test_detached_run_with_log_and_pid_files(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, inboxes=[
        {"path": "inbox", "stability_delay": 0.5, "recursive": True},
        {"path": "shared/drop", "stability_delay": 0.5},  # does not exist: the daemon creates it
    ])
    inbox = tmp_path / "inbox"
    os.chmod(inbox, 0o2775)
    (inbox / "acme").mkdir()
    os.chmod(inbox / "acme", 0o755)  # a subfolder the group cannot drop into
    log_file, pid_file = tmp_path / "log" / "ocr-daemon.log", tmp_path / "ocr-daemon.pid"
    # as install.sh prints it (without setpriv: this test runs as one user)
    argv = ["setsid", "-f", sys.executable, "-m", "daemon", "run", "--config", str(cfg),
            "--log-file", str(log_file), "--pid-file", str(pid_file)]
    r = subprocess.run(argv, env=daemon_env(), cwd=REPO, timeout=30, capture_output=True, text=True)
    pid = int(wait_for(lambda: pid_file.is_file() and pid_file.read_text().strip(), 30, "the pid file"))

    def log() -> str:
        return log_file.read_text(encoding="utf-8", errors="replace") if log_file.exists() else ""

    try:
        assert r.returncode == 0 and r.stdout == r.stderr == "", r  # returns at once, says nothing on the terminal
        wait_for(lambda: "initial scan:" in log(), 60, "the daemon ready")
        drop = tmp_path / "shared" / "drop"
        mode = drop.stat().st_mode
        assert stat.S_IMODE(mode) == 0o2775, oct(mode)  # setgid, group-writable whatever the umask
        assert re.search(rf"WARNING .*inbox 'inbox': {re.escape(str(inbox / 'acme'))} .*cannot drop files", log()), log()

        (inbox / "acme" / "broken.pdf").write_bytes(b"this is not a PDF\n" * 20)
        wait_for(lambda: "failed:" in log(), 60, "broken.pdf failed")
        line = next(x for x in log().splitlines() if "failed:" in x)
        assert re.search(rf" WARNING \S+: doc-\d+ failed: {re.escape(str(inbox / 'acme' / 'broken.pdf'))}: not a PDF.*; "
                         rf"now at {re.escape(str(tmp_path / 'failed' / 'broken.pdf'))}$", line), line

        data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
        data["daemon"]["rescan_interval"] = 30  # applied
        data["engine"]["tesseract"]["threads"] = 1  # needs a restart
        cfg.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        os.kill(pid, signal.SIGHUP)
        wait_for(lambda: "reloaded " in log(), 30, "the reload")
        assert re.search(r"WARNING .*reload: not applied until a restart .*: engine\.tesseract\.threads changed$",
                         log(), re.M), log()
        assert "daemon.rescan_interval" not in log()
    finally:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid):
            time.sleep(0.1)
    assert "INFO daemon.service.service: stopped" in log(), log()
    assert not pid_file.exists()


def _state(pid: int) -> str:
    try:
        return "zombie" if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z" else "running"
    except OSError:
        return "gone"
