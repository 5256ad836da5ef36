"""Shared fixtures: a config in tmp_path and a real ``ocr-daemon run`` subprocess; and a
session-wide check that the tests leave no process behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/docgen.py importable as docgen

# In-process tests load Tesseract as the daemon does: set what its entry point sets (daemon/procenv.py).
from daemon import procenv  # noqa: E402
from daemon.journal.store import Journal  # noqa: E402

procenv.apply()


# -- no process left behind -----------------------------------------------------------------------

#: Environment variable set for the whole test session; every process the tests start inherits
#: it (daemons, their forkserver and render workers, tools), so one that outlives its parent --
#: re-parented to init after a ``kill -9`` -- is still recognised as this session's.
SESSION_MARK = "OCR_DAEMON_TEST_SESSION"


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, state letter) of every process now."""
    out: dict[int, tuple[int, str]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(d)] = (int(fields[1]), fields[0])
        except (OSError, IndexError, ValueError):
            continue
    return out


def _has_mark(pid: int, token: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f"{SESSION_MARK}={token}".encode() in f.read().split(b"\0")
    except OSError:  # gone, or another user's
        return False


def _describe(pid: int, table: dict[int, tuple[int, str]]) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        cmd = "?"
    ppid = table.get(pid, (0, "?"))[0]
    return f"  pid {pid} (parent {ppid}{', orphaned' if ppid == 1 else ''}): {cmd[:200]}"


def leftover_processes(token: str, before: set[int], me: int) -> list[int]:
    """Processes started during the session and still alive: descendants of this pytest process
    or carrying the session's mark (orphans), not zombies, not pytest itself, and not ones that
    were already there when the session began."""
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    below, todo = set(), [me]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in below:
                below.add(c)
                todo.append(c)
    return sorted(
        pid for pid, (_, state) in table.items()
        if pid != me and pid not in before and state != "Z" and (pid in below or _has_mark(pid, token))
    )


# The places a real install uses (install.sh, docs/operations.md): a test that runs the daemon
# with the shipped defaults writes a root-owned journal there, and the next real install on the
# machine (test_install's overlay of /var/lib) finds a journal its service user cannot write.
SYSTEM_PLACES = (Path("/var/lib/ocr-daemon"), Path("/srv/ocr"), Path("/etc/ocr-daemon"))


def _system_state() -> dict[str, tuple[int, int] | None]:
    out: dict[str, tuple[int, int] | None] = {}
    for place in SYSTEM_PLACES:
        try:
            st = place.stat()
            out[str(place)] = (st.st_mtime_ns, len(list(place.iterdir())) if place.is_dir() else -1)
        except OSError:
            out[str(place)] = None
    return out


@pytest.fixture(autouse=True)
def nothing_written_to_system_places() -> Iterator[None]:
    """FAIL the test that creates or changes /var/lib/ocr-daemon, /srv/ocr or /etc/ocr-daemon on
    the machine running the suite (tests use temp folders; real installs run in overlays)."""
    before = _system_state()
    t0 = time.time()
    yield
    after = _system_state()
    changed = [p for p in after if after[p] != before[p]]
    if changed:
        who = "\n".join(line for p in changed for line in who_wrote(Path(p), t0))
        pytest.fail(f"the test wrote to {', '.join(changed)} on this machine (use a temp state_dir)\n{who}",
                    pytrace=False)


def _holding(paths: set[str]) -> list[tuple[int, str]]:
    """The processes with one of ``paths`` open (as ``fuser`` finds them: /proc/PID/fd)."""
    found = []
    for pid in _proc_table():
        with contextlib.suppress(OSError):
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(_readlink(f"/proc/{pid}/fd/{fd}") in paths for fd in fds):
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                found.append((pid, cmd))
    return found


def _readlink(p: str) -> str:
    try:
        return os.readlink(p)
    except OSError:
        return ""


def who_wrote(place: Path, since: float) -> list[str]:
    """Who wrote to ``place`` (for the guard's message): what in it changed since ``since`` (name,
    owner, time), the processes holding a file there open (``fuser``: a process still running),
    and the last documents a journal found there recorded (their paths name the test's folder,
    and so the test, when the writer is gone)."""
    out: list[str] = []
    files = []
    with contextlib.suppress(OSError):
        for f in sorted(place.rglob("*")) if place.is_dir() else [place]:
            st = f.lstat()
            if st.st_mtime >= since - 1:
                files.append(f)
                out.append(f"  {f} (uid {st.st_uid}, changed {time.strftime('%H:%M:%S', time.localtime(st.st_mtime))})")
    if files:
        holders = _holding({str(f) for f in files})
        out += [f"  open by: pid {pid} {cmd}" for pid, cmd in holders] or ["  no process has a file there open now"]
    journal = place / "journal.sqlite3" if place.is_dir() else None
    if journal is not None and journal.is_file():
        import sqlite3

        with contextlib.suppress(sqlite3.Error):
            db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=1)
            try:
                rows = db.execute("SELECT id, path, state FROM documents ORDER BY id DESC LIMIT 5").fetchall()
            finally:
                db.close()
            out += [f"  journal row doc-{i}: {p!r} ({s})" for i, p, s in rows]
    return out


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """FAIL the run (an error at the last test's teardown) if the tests leave a process behind:
    a daemon not stopped, render workers that outlived a killed daemon, a tool still running.
    Processes get 15 s to finish exiting; the ones left are listed, then killed."""
    token = uuid.uuid4().hex
    os.environ[SESSION_MARK] = token
    me = os.getpid()
    before = set(_proc_table())
    yield
    import multiprocessing.forkserver as mp_forkserver
    import multiprocessing.resource_tracker as mp_tracker

    # this process's own forkserver and resource tracker (in-process RenderPool tests) end with
    # pytest, not before: stop them now, they are not leftovers of a test
    for helper in (getattr(mp_forkserver, "_forkserver", None), getattr(mp_tracker, "_resource_tracker", None)):
        stop = getattr(helper, "_stop", None)
        if stop is not None:
            with contextlib.suppress(Exception):
                stop()
    deadline = time.monotonic() + 15
    left = leftover_processes(token, before, me)
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = leftover_processes(token, before, me)
    if left:
        table = _proc_table()
        lines = [_describe(p, table) for p in left]
        for p in left:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
        pytest.fail(
            f"the tests left {len(left)} process(es) behind (now killed):\n" + "\n".join(lines), pytrace=False
        )


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

    def __init__(self, config: Path, *args: str, prefix: tuple[str, ...] = ()) -> None:
        """``prefix``: a command the daemon runs under (e.g. ``setpriv`` dropping capabilities)."""
        self.config = config
        self.log_path = config.parent / f"daemon-{time.time_ns() // 1000}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "daemon", "run", "--config", str(config), *args],
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

    def start(config: Path, *args: str, prefix: tuple[str, ...] = ()) -> DaemonProc:
        d = DaemonProc(config, *args, prefix=prefix)
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


# -- a real PostgreSQL server (shared journal, issue 28) --------------------------------------------


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """One PostgreSQL cluster for the session (tests/pgserver.py); skipped only without the binaries."""
    from pgserver import PgServer, find_bin

    bindir = find_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries missing (Debian package postgresql; tests/run.sh installs it)")
    pytest.importorskip("psycopg", reason="psycopg missing: pip install -e '.[test]'")
    server = PgServer(bindir)
    server.start()
    yield server
    server.close()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """A fresh database on the session's server."""
    return str(pg_server.create_db())


@pytest.fixture(params=["sqlite", "postgres"])
def open_j(request: pytest.FixtureRequest) -> Iterator[Callable[..., Journal]]:
    """``open_j(state_dir, readonly=False)``: a journal of the backend under test; a PostgreSQL one
    gets a fresh database of the session's server (all ``open_j`` calls of a test share it)."""
    opened: list[Journal] = []
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None

    def open_(state: Path, readonly: bool = False) -> Journal:
        if url is None:
            j = Journal(state, readonly=readonly)
        else:
            from daemon.journal.pgstore import PostgresJournal

            j = PostgresJournal(url, state, readonly=readonly)
        opened.append(j)
        return j

    yield open_
    for j in opened:
        j.close()
