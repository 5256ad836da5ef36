"""Cost of the journal's per-page records (page-level resume): daemon pages/s with and without.

Two measurements, on the CPU (Tesseract engine):

1. The daemon end to end: ``ocr-daemon run`` on a temp inbox, one scanned PDF of ``--pages``
   pages dropped in, pages/s = pages / the document's ``ocr`` time (journal timings: first
   render submitted -> last page's text back, where the per-page commits happen). Runs alternate
   ``daemon.page_records: true`` / ``false`` (A B A B ...) so drift of the shared machine hits
   both alike. Two page sizes: ``1540`` (the default render size: what a user gets) and ``256``
   (tiny pages, ~10x faster: the worst case for a fixed per-page cost).
2. The commit alone: ``Journal.record_page`` N times in a row (one synced SQLite commit each,
   as the daemon does per page), ms per page.

Every row (run, commit, settings in force) is appended to ``--out`` as JSON lines.

Usage: OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_journal_pages.py [--pages 24] [--rounds 3]
       [--edges 1540,256] [--scan-width 1240] [--commits 500]
       [--out bench/results/2026-12-01/journal_pages.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import docgen  # noqa: E402

from daemon.journal.store import Journal  # noqa: E402
from daemon.pagerecord import EngineText, PageGeometry, PageResult  # noqa: E402


def commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO)
    dirty = subprocess.run(["git", "status", "--porcelain", "daemon"], capture_output=True, text=True, cwd=REPO).stdout
    return r.stdout.strip() + ("+dirty" if dirty.strip() else "")


def daemon_run(pdf: bytes, pages: int, edge: int, records: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        (tmp / "inbox").mkdir()
        cfg = {
            "daemon": {"state_dir": "state", "failed_dir": "failed", "rescan_interval": 3600, "page_records": records},
            "engine": {"kind": "tesseract", "render_longest_edge": edge, "tesseract": {"languages": ["en"], "render_dpi": None}},  # pages at the edge asked for
            "inboxes": [{"path": "inbox", "stability_delay": 0.3}],
            "routes": [{"name": "all", "destination": "out", "formats": ["txt", "json"]}],
        }
        (tmp / "rules.yaml").write_text(yaml.safe_dump(cfg))
        env = dict(os.environ, OMP_THREAD_LIMIT="1", PYTHONUNBUFFERED="1")
        log = open(tmp / "log", "w")  # noqa: SIM115
        proc = subprocess.Popen([sys.executable, "-m", "daemon", "run", "--config", str(tmp / "rules.yaml")],
                                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        try:
            deadline = time.monotonic() + 600
            while "initial scan" not in (tmp / "log").read_text():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit((tmp / "log").read_text())
                time.sleep(0.05)
            (tmp / "scan.pdf").write_bytes(pdf)
            (tmp / "scan.pdf").rename(tmp / "inbox" / "scan.pdf")
            while "doc-1 done" not in (tmp / "log").read_text():
                if proc.poll() is not None or time.monotonic() > deadline + 1200:
                    raise SystemExit((tmp / "log").read_text())
                time.sleep(0.1)
            db = sqlite3.connect(tmp / "state" / "journal.sqlite3")
            timings = json.loads(db.execute("SELECT timings FROM documents WHERE id=1").fetchone()[0])
            db.close()
        finally:
            proc.terminate()
            proc.wait(timeout=120)
            log.close()
    return {"pages": pages, "edge": edge, "page_records": records, "ocr_s": round(timings["ocr"], 3),
            "total_s": round(timings["total"], 3), "pages_per_s": round(pages / timings["ocr"], 3)}


def commit_cost(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=REPO / "bench") as td:  # the repo's disk, like a state dir
        tmp = Path(td)
        j = Journal(tmp / "state")
        f = tmp / "a.pdf"
        f.write_bytes(b"x")
        d = j.admit(f, "in").document
        assert d is not None and j.claim(d.id) is not None
        text = "A line of recognised text on a page of a long document. " * 40  # ~2.3 KB, a page's worth
        geometry = PageGeometry(size=(1089, 1540), source_size=(2480, 3508), script="Latin")
        t0 = time.perf_counter()
        for i in range(n):
            page = PageResult(index=i, engine="tesseract", content=EngineText(text, False, geometry), seconds=0.8,
                              meta={"confidence": 90.0})
            j.record_page(d.id, "k", page)
        dt = time.perf_counter() - t0
        j.close()
    return {"kind": "record_page", "n": n, "ms_per_page": round(dt / n * 1000, 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--edges", default="1540,256")
    ap.add_argument("--commits", type=int, default=500)
    ap.add_argument("--scan-width", type=int, default=1240, help="px width of each scanned page in the PDF")
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/2026-12-01/journal_pages.jsonl")
    a = ap.parse_args()
    head = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit(), "nproc": os.cpu_count(),
            "python": platform.python_version(), "engine": "tesseract", "languages": ["en"], "scan_width": a.scan_width,
            "loadavg_1m": round(os.getloadavg()[0], 2)}
    print(json.dumps(head))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        row = {**head, **row}
        rows.append(row)
        print(json.dumps(row), flush=True)
        with a.out.open("a") as f:
            f.write(json.dumps(row) + "\n")

    with tempfile.TemporaryDirectory() as td:
        pdf = docgen.make_pdf(Path(td) / "scan.pdf", [
            f"Page {i + 1}. The harbour office report lists invoice {1000 + 37 * i} paid on {i % 28 + 1} March, "
            f"with the balance of {i * 113} euros carried forward to the next quarter." for i in range(a.pages)
        ], scanned=True, scan_width=a.scan_width).read_bytes()
    for edge in (int(e) for e in a.edges.split(",")):
        for r in range(a.rounds):
            for records in ((True, False) if r % 2 == 0 else (False, True)):
                emit({"kind": "daemon", "round": r, **daemon_run(pdf, a.pages, edge, records)})
    emit(commit_cost(a.commits))
    for edge in (int(e) for e in a.edges.split(",")):
        on = [x["pages_per_s"] for x in rows if x.get("edge") == edge and x["page_records"] is True]
        off = [x["pages_per_s"] for x in rows if x.get("edge") == edge and x["page_records"] is False]
        if on and off:
            m_on, m_off = statistics.median(on), statistics.median(off)
            print(f"edge {edge}: with records median {m_on:.2f} pages/s, without {m_off:.2f} pages/s "
                  f"({(m_on / m_off - 1) * 100:+.1f} %); runs with {on}, without {off}")


if __name__ == "__main__":
    main()
