"""Several daemons on one inbox through one PostgreSQL journal: pages/s with 1, 2, 3 daemons.

Each run starts a fresh database on a PostgreSQL server this script starts (tests/pgserver.py),
N ``ocr-daemon run`` processes (Tesseract, ``workers: 1``, own state folders, one shared inbox,
``daemon.journal_url``), drops ``--pages`` one-page scans (each with other text: no duplicates)
into the inbox at once, and times from the drop to the last document done in the journal.
pages/s = pages / that time; each daemon's share (rows it finished) is recorded too.

``--kill-after K``: one run of 2 daemons instead, the first killed -9 once K documents are done
and started again; the row says whether every page ended with exactly one result set (one .txt
each) and how many pages each daemon did.

Every row is appended to ``--out`` as JSON lines (machine, CPU count, settings).

Usage: OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_shared_journal.py [--daemons 1,2,3] [--pages 30]
       [--kill-after 20] [--out bench/results/2026-12-02/shared_journal.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import docgen  # noqa: E402
import psycopg  # noqa: E402
from pgserver import PgServer, find_bin  # noqa: E402

TEXT = "Invoice {i}. Dear customer, thank you for your order number {i}. Kind regards, the shop."


def _start(home: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], Any]:
    log = open(home / "daemon.log", "a")  # noqa: SIM115 - closed by the caller
    return subprocess.Popen([sys.executable, "-m", "daemon", "run", "--config", str(home / "rules.yaml")],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO), log


def _ready(home: Path, count: int = 1) -> None:
    deadline = time.monotonic() + 120
    while (home / "daemon.log").read_text(errors="replace").count("initial scan:") < count:
        if time.monotonic() > deadline:
            raise RuntimeError((home / "daemon.log").read_text(errors="replace"))
        time.sleep(0.2)


def run(server: PgServer, n: int, pages: list[Path], tmp: Path, kill_after: int = 0) -> dict[str, object]:
    """``kill_after`` > 0: once that many documents are done, ``kill -9`` the first daemon (mid-document)
    and start it again; the row then says whether every page ended with exactly one result set."""
    url = server.create_db()
    work = Path(tempfile.mkdtemp(dir=tmp))
    inbox = work / "inbox"
    inbox.mkdir()
    procs = []
    env = {**os.environ, "OMP_THREAD_LIMIT": "1", "PYTHONUNBUFFERED": "1"}
    for k in range(n):
        home = work / f"d{k}"
        home.mkdir()
        cfg = {
            "daemon": {"state_dir": str(home / "state"), "failed_dir": str(work / "failed"), "workers": 1,
                       "render_workers": 1, "http": None, "journal_url": url, "rescan_interval": 5},
            "engine": {"kind": "tesseract", "tesseract": {"threads": 1}},
            "inboxes": [{"path": str(inbox), "name": "inbox", "stability_delay": 0.5}],
            "routes": [{"name": "all", "destination": str(work / "out"), "formats": ["txt"], "source": "archive",
                        "archive_to": str(work / "archive")}],
        }
        (home / "rules.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
        procs.append((*_start(home, env), home))
    extra: dict[str, object] = {}
    try:
        for _, _, home in procs:
            _ready(home)
        t0 = time.monotonic()
        for p in pages:
            shutil.copy(p, inbox / p.name)
        with psycopg.connect(url, autocommit=True) as c:
            killed = False
            while True:
                done = c.execute("SELECT count(*) FROM documents WHERE state='done'").fetchone()
                ndone = int(done[0]) if done else 0
                if ndone >= len(pages):
                    break
                if kill_after and not killed and ndone >= kill_after:
                    victim, log, home = procs[0]
                    held = c.execute("SELECT count(*) FROM documents WHERE state='processing' AND owner=%s",
                                     (f"{socket.gethostname()}:{victim.pid}",)).fetchone()
                    victim.kill()  # SIGKILL
                    victim.wait()
                    log.close()
                    procs[0] = (*_start(home, env), home)
                    extra["held_when_killed"] = int(held[0]) if held else 0
                    killed = True
                time.sleep(0.2)
            elapsed = time.monotonic() - t0
            owners = Counter(str(r[0]).rsplit(":", 1)[1] for r in c.execute("SELECT owner FROM documents").fetchall())
            nodes = Counter(str(r[0]) for r in c.execute("SELECT owner_node FROM documents").fetchall())
        if kill_after:
            outs = Counter(p.stem for p in (work / "out").iterdir())
            extra.update({"killed_after": kill_after, "pages_by_node": sorted(nodes.values(), reverse=True),
                          "one_result_set_each": sorted(outs) == sorted(p.stem for p in pages) and set(outs.values()) == {1},
                          "outputs": sum(outs.values())})
    finally:
        for proc, _log, _ in procs:
            proc.terminate()
        for proc, log, _ in procs:
            proc.wait(timeout=60)
            log.close()
        shutil.rmtree(work, ignore_errors=True)
    return {"daemons": n, "pages": len(pages), "seconds": round(elapsed, 2), "pages_per_s": round(len(pages) / elapsed, 3),
            "pages_by_daemon": sorted(owners.values(), reverse=True), **extra}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemons", default="1,2,3")
    ap.add_argument("--pages", type=int, default=30)
    ap.add_argument("--kill-after", type=int, default=0,
                    help="one run of 2 daemons instead: kill -9 the first once this many are done, then restart it")
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/2026-12-02/shared_journal.jsonl")
    a = ap.parse_args()
    bindir = find_bin()
    if bindir is None:
        sys.exit("PostgreSQL server binaries missing (Debian package postgresql)")
    tmp = Path(tempfile.mkdtemp(prefix="bench-shared-"))
    os.chmod(tmp, 0o755)
    pages = [docgen.make_image(tmp / f"page{i:03d}.png", TEXT.format(i=i)) for i in range(a.pages)]
    server = PgServer(bindir)
    server.start()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        for n in [2] if a.kill_after else [int(x) for x in a.daemons.split(",")]:
            row = run(server, n, pages, tmp, a.kill_after)
            row.update({"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": platform.node(), "cpus": os.cpu_count(),
                        "load_before": os.getloadavg()[0], "engine": "tesseract", "workers_per_daemon": 1})
            print(json.dumps(row), flush=True)
            with a.out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
    finally:
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
