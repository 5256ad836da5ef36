"""Shared fixtures: a config in tmp_path and a real ``ocr-daemon run`` subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/docgen.py importable as docgen

# In-process tests load Tesseract as the daemon does: set what its entry point sets (daemon/procenv.py).
from daemon import procenv  # noqa: E402

procenv.apply()


def write_rules(tmp: Path, data: dict[str, Any] | None = None, **sections: Any) -> Path:
    """Write a rules.yaml in ``tmp`` with state/failed/inbox folders inside it.

    ``sections`` replace whole top-level sections; the defaults are a tesseract engine, one inbox
    ``tmp/inbox`` with a short stability delay, and no routes (built-in default route).
    """
    cfg: dict[str, Any] = {
        "daemon": {"state_dir": "state", "failed_dir": "failed", "rescan_interval": 2, "retry_backoff": 1, "drain_timeout": 20, "workers": 2, "render_workers": 1},
        "engine": {"kind": "tesseract", "tesseract": {"threads": 2}},
        "inboxes": [{"path": "inbox", "stability_delay": 0.5, "invalid_grace": 2}],
    }
    if data:
        cfg.update(data)
    cfg.update(sections)
    # The HTTP endpoint is on by default at 127.0.0.1:9750: off in tests (daemons run in parallel)
    # unless a test asks for it (tests/e2e/test_http.py uses port 0 or a Unix socket).
    if isinstance(cfg.get("daemon"), dict):
        cfg["daemon"].setdefault("http", None)
    path = tmp / "rules.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    (tmp / "inbox").mkdir(exist_ok=True)
    return path


def with_http(rules: Path, **http: Any) -> Path:
    """Turn the HTTP endpoint on in a rules.yaml from ``write_rules``: ``daemon.http`` = ``http``,
    listening on a free port (127.0.0.1:0) unless ``listen`` says otherwise (``http_url`` finds it)."""
    data = yaml.safe_load(rules.read_text(encoding="utf-8"))
    data["daemon"]["http"] = {"listen": "127.0.0.1:0", **http}
    rules.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return rules


def http_url(d: DaemonProc, timeout: float = 60) -> str:
    """Where the daemon's HTTP endpoint listens (from its log): ``http://127.0.0.1:PORT`` or ``unix:PATH``."""
    import re

    d.wait_log("http endpoint listening on ", timeout)
    m = re.search(r"http endpoint listening on (\S+?)/? \(", d.log())
    assert m, d.log()
    return m.group(1)


def daemon_env() -> dict[str, str]:
    env = dict(os.environ)
    env["OMP_THREAD_LIMIT"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("NOTIFY_SOCKET", None)
    env.pop("JOURNAL_STREAM", None)
    env.pop("INVOCATION_ID", None)
    return env


class DaemonProc:
    """``ocr-daemon run`` as a real subprocess, with its log captured to a file."""

    def __init__(self, config: Path, *args: str) -> None:
        self.config = config
        self.log_path = config.parent / f"daemon-{int(time.time() * 1000)}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "daemon", "run", "--config", str(config), *args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=daemon_env(),
            cwd=REPO,
        )

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_log(self, needle: str, timeout: float = 60, count: int = 1) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.log().count(needle) >= count:
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited {self.proc.returncode} before logging {needle!r}:\n{self.log()}")
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {needle!r} x{count} in the log:\n{self.log()}")

    def wait_ready(self, timeout: float = 60) -> None:
        self.wait_log("initial scan:", timeout)

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._log.close()

    def stop(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


@pytest.fixture
def start_daemon() -> Iterator[Callable[..., DaemonProc]]:
    procs: list[DaemonProc] = []

    def start(config: Path, *args: str) -> DaemonProc:
        d = DaemonProc(config, *args)
        procs.append(d)
        return d

    yield start
    for d in procs:
        if d.proc.poll() is None:
            d.stop()


def wait_for(pred: Callable[[], Any], timeout: float = 60, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def sidecars(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.rglob("*.json"))]


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args], capture_output=True, text=True, env=daemon_env(), cwd=REPO, timeout=timeout
    )
