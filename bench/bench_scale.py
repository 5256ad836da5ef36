"""Scale bench (issue 34 item 5). Parts, each chosen by its option; rows also go to ``--out``
(JSON lines):

- ``--n N...`` (the first part, item 1): CPU of one periodic rescan of an inbox of N kept, done
  files (in-process, below).
- ``--journal N...`` (item 2): a journal of N finished documents (three outputs each), built through
  ``Journal.add_rebuilt`` in batches of 50,000 (one transaction each); then, in this process: the
  CPU and RSS of opening it (nothing is loaded per document), the journal's CPU per new document (a
  real file admitted, claimed, its names planned and checked, finished, the work queue's next ids
  and the output test of its outputs -- every journal call the service makes for one document;
  OCR itself does not depend on N), and the CPU and wall time of ``status_summary`` (``/status``,
  ``ocr-daemon status``). ``--pg`` runs the same on a PostgreSQL journal (tests/pgserver.py starts a
  throw-away server); the server's CPU is added (its backends' /proc times).
- ``--latency N``: a real ``ocr-daemon run`` (Tesseract) on an inbox of N kept, done files: its CPU
  while idle through rescans (``rescan_interval`` 20 s), the time from dropping a one-page PNG to
  its outputs, the daemon's RSS, and ``GET /status``'s time.
- ``--daemon-journal N... --docs D``: a real ``ocr-daemon run`` on a journal of N finished documents
  (built as ``--journal`` builds it): D tiny born-digital PDFs dropped at once, the daemon's and its
  workers' CPU per document until all are done (OCR does not depend on N; the journal's share does).
- ``--admit N... --window S``: the admission of N files renamed into the inbox at once, in this
  process (watcher, stability tracker, ``Journal.admit``, wired as ``Service`` wires them; no OCR):
  time until all are admitted, CPU, RSS, the most events watchdog held queued.
- ``--drain N... --window S``: a real ``ocr-daemon run`` with N tiny born-digital PDFs dropped at once
  (renamed into the inbox): documents done over the first S seconds, documents/s, the daemon's RSS
  (start, max, end) and CPU (daemon and its render workers).

Builds, for each N, an inbox of N tiny distinct files (real files: the daemon refuses hard links)
and a journal with a done row for each, through the journal's own API in one transaction
(``Journal.add_rebuilt``, as ``journal rebuild`` records documents found on disk, then each row's
stat refreshed the way ``admit`` refreshes a done file found again unchanged in content -- the
state a kept source is in after the daemon did it). Then one rescan is run in this process, wired
as ``Service`` wires it (``InboxWatcher`` -> ``StabilityTracker.notice``, the tracker's ``skip`` is
``Intake._skip_known``, the watcher's ``known`` is ``Journal.known_under`` (``known_unchanged`` in code
before it) and its ``is_output_name``
the same test as ``is_output`` where the code has them), and its CPU is measured (``time.process_time``) from the scan's start until the tracker has
taken every candidate it was offered (``StabilityTracker._admit``: stat + "known?" per file) --
which is what the daemon spends on every ``daemon.rescan_interval`` with nothing new.

Runs against whichever ``daemon`` package is imported: ``PYTHONPATH=<a checkout> python
bench/bench_scale.py`` measures that checkout (the bench itself uses only what main has).

    python bench/bench_scale.py --n 1000 10000 [100000] [--repeat 3]
    python bench/bench_scale.py --journal 1000 10000 100000 1000000 [--pg 100000] --out rows.jsonl
    python bench/bench_scale.py --latency 100000 --drain 1000 100000 --window 300 --out rows.jsonl
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import daemon
from daemon.config import InboxCfg
from daemon.intake.stability import StabilityTracker
from daemon.intake.watch import InboxWatcher
from daemon.journal.store import Journal, RebuiltDoc
from daemon.models import DocState
from daemon.service.intake import Intake


def build(root: Path, n: int, open_j: Callable[[], Journal] | None = None) -> tuple[Path, Journal, float]:
    """An inbox of ``n`` kept files and a journal with a done row for each (SQLite in ``root``, or
    ``open_j()``'s); returns the seconds."""
    t0 = time.monotonic()
    inbox = root / "in"
    inbox.mkdir()
    docs = []
    for i in range(n):
        p = inbox / f"scan-{i:07d}.pdf"
        data = b"%PDF-1.4\n% " + str(i).encode() + b"\n%%EOF\n"
        p.write_bytes(data)
        docs.append(RebuiltDoc(id=None, path=p, inbox="in", size=len(data), sha256=f"{i:064x}",
                               state=DocState.DONE, final_path=p, language="en", doctype="letter", route="all",
                               pages=1, created=time.time()))
    j = Journal(root / "state") if open_j is None else open_j()
    for start in range(0, n, 20_000):  # PostgreSQL: one transaction per 20,000 rows, then ANALYZE
        part = docs[start:start + 20_000]
        assert j.add_rebuilt(part) == len(part)
        with j._tx() as db:  # admit's "same content, new stat" refresh, for every row at once
            db.executemany("UPDATE documents SET size=?, mtime=? WHERE path=?",
                           [(d.size, os.lstat(d.path).st_mtime, str(d.path)) for d in part])
        if open_j is not None:  # what autovacuum's analyze does between a server's transactions
            j._conn().execute("ANALYZE documents")
    return inbox, j, time.monotonic() - t0


def rescan_cpu(inbox: Path, j: Journal, server: Any = None) -> tuple[float, float, int, int]:
    """CPU and wall seconds of one rescan, files offered to the tracker, files it kept tracking
    (with a PostgreSQL ``server``: its backends' CPU added)."""
    svc = types.SimpleNamespace(journal=j)
    tracker = StabilityTracker(lambda c, r: None, lambda p, i: None, lambda i: 2.0,
                               skip=lambda p, st: Intake._skip_known(svc, p, st))  # type: ignore[arg-type]
    offered = [0]

    def sink(c: object) -> None:
        offered[0] += 1
        tracker.notice(c)  # type: ignore[arg-type]

    root = inbox.parent  # the service's excluded folders: failed, state, archive roots
    kw: dict[str, object] = {"excluded_dirs": [root / "failed", root / "state", root / "archive"]}
    if hasattr(j, "all_outputs"):  # main before issue 34 item 2: the pipeline's set, loaded at its start
        outputs = j.all_outputs()
        kw["is_output"] = lambda p: str(p) in outputs
    else:
        kw["is_output"] = j.is_output
    params = inspect.signature(InboxWatcher.__init__).parameters
    if "known" in params:  # the code of branch scale on (issue 34): as Service passes them
        # one lookup per scanned folder where the journal has it (issue 36's round), else per 500 files
        kw["known"] = j.known_under if hasattr(j, "known_under") else j.known_unchanged
    if "outputs_among" in params:
        kw["outputs_among"] = j.outputs_among
    elif "is_output_name" in params:
        kw["is_output_name"] = lambda p: str(p) in outputs
    w = InboxWatcher([InboxCfg(path=inbox, name="in")], sink, **kw)  # type: ignore[arg-type]
    from scale_parts import server_cpu

    s0, c0, t0 = server_cpu(server), time.process_time(), time.monotonic()
    w.scan()
    while tracker._inq.qsize():
        tracker._admit(time.monotonic())
    cpu = time.process_time() - c0 + server_cpu(server) - s0
    return cpu, time.monotonic() - t0, offered[0], len(tracker._tracked)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="*", default=[])
    ap.add_argument("--pg-rescan", type=int, nargs="*", default=[], help="--n on a PostgreSQL journal (server CPU added)")
    ap.add_argument("--repeat", type=int, default=3, help="rescans per N (the best and the worst are printed)")
    ap.add_argument("--tmp", type=Path, default=None, help="folder for the inboxes (default: the system's temp)")
    ap.add_argument("--journal", type=int, nargs="*", default=[], help="journal sizes (SQLite)")
    ap.add_argument("--pg", type=int, nargs="*", default=[], help="journal sizes (PostgreSQL)")
    ap.add_argument("--docs", type=int, default=300, help="new documents per journal size")
    ap.add_argument("--latency", type=int, nargs="*", default=[], help="kept files in the daemon's inbox")
    ap.add_argument("--drain", type=int, nargs="*", default=[], help="PDFs dropped at once")
    ap.add_argument("--admit", type=int, nargs="*", default=[], help="files dropped at once, admitted in-process")
    ap.add_argument("--daemon-journal", type=int, nargs="*", default=[], help="journal sizes the whole daemon runs on")
    ap.add_argument("--window", type=float, default=300.0, help="seconds a drain is watched")
    ap.add_argument("--out", type=Path, default=None, help="append each row as JSON here")
    args = ap.parse_args()
    print(f"daemon from {Path(daemon.__file__).parent}; python {platform.python_version()};"
          f" {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
    from scale_parts import (  # bench/ is the script's folder
        admit_part,
        daemon_journal_part,
        drain_part,
        journal_part,
        latency_part,
    )

    for n in args.journal:
        emit(args.out, journal_part(n, args.docs, args.tmp))
    for n in args.pg:
        emit(args.out, journal_part(n, args.docs, args.tmp, pg=True))
    for n in args.latency:
        emit(args.out, latency_part(n, args.tmp))
    for n in args.daemon_journal:
        emit(args.out, daemon_journal_part(n, args.docs, args.tmp))
    for n in args.admit:
        emit(args.out, admit_part(n, args.window, args.tmp))
    for n in args.drain:
        emit(args.out, drain_part(n, args.window, args.tmp))
    if args.n:
        print(f"{'N kept files':>12} | {'build s':>7} | {'rescan CPU s (min-max)':>22} | {'wall s':>7} | {'offered':>7} | {'tracked':>7} | {'CPU/file ms':>11}")
    server: Any = None
    if args.pg_rescan:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from pgserver import PgServer, find_bin

        server = PgServer(find_bin())
        server.start()
    for n, pg in [(n, False) for n in args.n] + [(n, True) for n in args.pg_rescan]:
        root = Path(tempfile.mkdtemp(prefix="bench-scale-", dir=args.tmp))
        try:
            open_j = None
            if pg:
                from daemon.journal.pgstore import PostgresJournal

                url = server.create_db()
                open_j = functools.partial(PostgresJournal, url, root / "state")
            inbox, j, built = build(root, n, open_j)
            runs = [rescan_cpu(inbox, j, server) for _ in range(args.repeat)]
            cpus = sorted(r[0] for r in runs)
            wall = min(r[1] for r in runs)
            print(f"{n:>12} | {built:>7.1f} | {cpus[0]:>10.3f} - {cpus[-1]:<9.3f} | {wall:>7.2f} | {runs[-1][2]:>7} |"
                  f" {runs[-1][3]:>7} | {1000 * cpus[0] / n:>11.4f}", flush=True)
            emit(args.out, {"part": "rescan", "backend": "postgresql" if pg else "sqlite",
                            "daemon": str(Path(daemon.__file__).parent), "n": n, "build_s": round(built, 1), "rescan_cpu_s": [round(c, 3) for c in cpus],
                            "wall_s": round(wall, 3), "offered": runs[-1][2], "cpu_per_file_ms": round(1000 * cpus[0] / n, 4)},
                 show=False)
            j.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)
    if server is not None:
        server.close()
    print(f"load at the end {os.getloadavg()[0]:.1f}")


def emit(out: Path | None, row: dict[str, object], show: bool = True) -> None:
    row = {"commit": commit(), "load": round(os.getloadavg()[0], 1), **row}
    if show:
        print(json.dumps(row), flush=True)
    if out is not None:
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")


def commit() -> str:
    repo = Path(__file__).resolve().parents[1]
    r = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, cwd=repo)
    return r.stdout.strip()


if __name__ == "__main__":
    main()
