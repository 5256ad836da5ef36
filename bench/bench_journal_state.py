"""What the journal's state upkeep costs (issue 25): the start-up integrity check, an online
backup, the WAL written per document, and a rebuild from sidecars.

1. ``check``: journals of ``--rows`` finished documents (rows shaped like the daemon's: paths,
   three outputs, planned names, timings) made with one bulk insert; then ``PRAGMA quick_check``
   (what the daemon runs at start, ``daemon.journal.backup.quick_check``) and, for comparison,
   ``PRAGMA integrity_check``; and ``make_backup`` (backup API + the copy's quick_check). Each
   timed ``--repeat`` times, best and median; the file size.
2. ``wal``: one 10-page document through the journal's real calls (admit, claim, 10 page
   records, set_planned, set_final_path, finish) with auto-checkpoints off: WAL bytes and frames
   it appends, and commits (what ``journal.health.HEADROOM`` is sized from).
3. ``rebuild``: ``--sidecars`` sidecar files written like the daemon's ``<stem>.json`` in an
   output folder, then ``rebuild.from_disk`` into an empty journal: seconds and documents/s.

Usage: .venv/bin/python bench/bench_journal_state.py [--rows 100000,1000000] [--repeat 3]
       [--sidecars 10000] [--out bench/results/<date>/journal_state.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from daemon.config import load_config  # noqa: E402
from daemon.journal import rebuild  # noqa: E402
from daemon.journal.backup import make_backup, quick_check  # noqa: E402
from daemon.journal.store import Journal  # noqa: E402
from daemon.pagerecord import EngineText, PageGeometry, PageResult  # noqa: E402


def timed(fn: Any, repeat: int) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return {"best_s": round(min(runs), 4), "median_s": round(statistics.median(runs), 4)}


def fill(state: Path, rows: int) -> Path:
    j = Journal(state)
    j.close()
    db = sqlite3.connect(state / "journal.sqlite3", isolation_level=None)
    db.execute("BEGIN")
    now = time.time()
    batch = []
    for i in range(1, rows + 1):
        stem = f"/srv/ocr/out/invoice/2026/scan-{i:07d}"
        outs = json.dumps([f"{stem}.txt", f"{stem}.md", f"{stem}.json"])
        batch.append((
            f"/srv/ocr/inbox/scans/scan-{i:07d}.pdf", "scans", 200_000 + i, now - i, f"{i:064x}", "done", 1, 0, 0,
            "en", "invoice", "invoices", 3, outs, outs, f"/srv/ocr/archive/2026/scan-{i:07d}.pdf",
            json.dumps({"count": 0.01, "ocr": 4.2, "classify": 0.05, "write": 0.02, "total": 4.3}), now - i, now - i,
        ))
        if len(batch) == 50_000:
            _insert(db, batch)
            batch = []
    _insert(db, batch)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return state / "journal.sqlite3"


def _insert(db: sqlite3.Connection, batch: list[tuple[Any, ...]]) -> None:
    db.executemany(
        "INSERT INTO documents(path, inbox, size, mtime, sha256, state, attempts, strikes, not_before, language, doctype,"
        " route, pages, outputs, planned, final_path, timings, created, updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        batch,
    )


def bench_check(rows: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as td:
        state = Path(td)
        path = fill(state, rows)
        assert quick_check(path) is None

        def integrity() -> None:
            db = sqlite3.connect(path)
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            db.close()

        out = {
            "what": "check", "rows": rows, "bytes": path.stat().st_size,
            "quick_check": timed(lambda: quick_check(path, budget=1e9), repeat),
            "integrity_check": timed(integrity, repeat),
            "backup": timed(lambda: make_backup(path, state / "backups", 1), repeat),
        }
    return out


def bench_wal() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as td:
        state = Path(td) / "state"
        src = Path(td) / "scan.pdf"
        src.write_bytes(os.urandom(200_000))
        j = Journal(state)
        db = j._conn()
        db.execute("PRAGMA wal_autocheckpoint=0")  # the WAL only grows: its growth is what one document writes
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        wal = state / "journal.sqlite3-wal"
        page = int(db.execute("PRAGMA page_size").fetchone()[0])
        commits = 0
        doc = j.admit(src, "scans").document
        assert doc is not None
        j.claim(doc.id)
        j.set_total_pages(doc.id, 10)
        commits += 3
        text = "Invoice 2026-0042\nACME GmbH, Musterstrasse 1\n" * 40  # ~1.9 KB of text: a dense A4 page
        for i in range(10):
            j.record_page(doc.id, "k", PageResult(i, "tesseract", EngineText(text, False, PageGeometry((1000, 1400), (1000, 1400))), seconds=1.0))
            commits += 1
        outs = [Path(f"/srv/ocr/out/scan{s}") for s in (".txt", ".md", ".json")]
        j.set_planned(doc.id, outs)
        j.set_final_path(doc.id, Path("/srv/ocr/archive/scan.pdf"))
        j.finish(doc.id, language="en", doctype="invoice", route="r", pages=10, outputs=outs,
                 final_path=Path("/srv/ocr/archive/scan.pdf"), timings={"total": 1.0})
        commits += 3
        size = wal.stat().st_size
        j.close()
    return {"what": "wal", "pages": 10, "page_text_bytes": len(text), "commits": commits, "wal_bytes": size,
            "wal_frames": (size - 32) // (page + 24), "page_size": page}


def bench_rebuild(n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        (tmp / "inbox").mkdir()
        out = tmp / "out"
        out.mkdir()
        (tmp / "rules.yaml").write_text(
            "daemon: {state_dir: state, failed_dir: failed}\ninboxes: [{path: inbox}]\n"
            "routes: [{name: all, destination: out, source: archive, archive_to: archive}]\n"
        )
        for i in range(n):
            stem = out / f"scan-{i:06d}"
            side = {"source": str(tmp / "inbox" / f"scan-{i:06d}.pdf"), "inbox": "inbox", "sha256": f"{i:064x}",
                    "size": 1000 + i, "language": "en", "doctype": "other", "route": "all",
                    "pages": [{"index": 0, "seconds": 1.0, "flags": []}], "engine": "tesseract", "document_id": i + 1,
                    "processed_at": "2026-12-01T10:00:00+00:00", "archived_to": str(tmp / "archive" / f"scan-{i:06d}.pdf"),
                    "outputs": [f"{stem}.txt", f"{stem}.md", f"{stem}.json"], "timings": {"total": 1.0}}
            Path(f"{stem}.json").write_text(json.dumps(side))
        cfg = load_config(tmp / "rules.yaml")
        j = Journal(tmp / "state")
        t0 = time.perf_counter()
        rep = rebuild.from_disk(j, cfg)
        secs = time.perf_counter() - t0
        j.close()
    assert rep.added == n, rep
    return {"what": "rebuild", "sidecars": n, "seconds": round(secs, 3), "docs_per_s": round(n / secs, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sidecars", type=int, default=10000)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    meta = {"host": platform.node(), "cpus": os.cpu_count(), "sqlite": sqlite3.sqlite_version}
    results = [bench_wal(), bench_rebuild(args.sidecars)]
    results += [bench_check(int(r), args.repeat) for r in args.rows.split(",") if r]
    for r in results:
        r.update(meta)
        print(json.dumps(r))
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with open(args.out, "a") as f:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
