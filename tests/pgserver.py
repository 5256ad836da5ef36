"""A real PostgreSQL server for the tests: initdb'd in a temp folder, on a free loopback port,
run as a user that is not root (PostgreSQL refuses root: ``runuser -u postgres`` when the tests
run as root), stopped and removed after. Debian's ``postgresql`` package provides the binaries
(tests/run.sh installs it); ``find_bin`` says None when they are missing."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def find_bin() -> Path | None:
    """The folder of ``initdb``/``pg_ctl`` (Debian keeps them under /usr/lib/postgresql/N/bin)."""
    for cand in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(cand) / "initdb").exists() and (Path(cand) / "pg_ctl").exists():
            return Path(cand)
    which = shutil.which("initdb")
    return Path(which).parent if which else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One cluster: ``start``/``stop``/``restart`` (the restart test stops it under the daemons),
    ``create_db`` for a fresh database per test."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="ocr-test-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._n = 0
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-U", "ocr", "-A", "trust", "-E", "UTF8", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.prefix, str(self.bindir / tool), *args], check=True, capture_output=True, cwd=self.root)

    def start(self) -> None:
        # fsync off: a test cluster need not survive power loss, and it saves seconds per test
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", opts, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://ocr@127.0.0.1:{self.port}/{db}"

    def create_db(self) -> str:
        import psycopg

        self._n += 1
        name = f"t{self._n}_{os.getpid()}"
        for _ in range(50):  # right after a restart the server may still refuse a moment
            try:
                with psycopg.connect(self.url(), autocommit=True) as c:
                    c.execute(f"CREATE DATABASE {name}")
                return self.url(name)
            except psycopg.OperationalError:
                time.sleep(0.2)
        raise RuntimeError(f"cannot create a database on {self.url()}")

    def close(self) -> None:
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
