#!/usr/bin/env python3
"""CPU per scanned page of the held-out scans with the daemon *running*, as the product is used.

    OMP_THREAD_LIMIT=1 .venv/bin/python bench/heldout32/resident.py --out bench/results/DATE/heldout32-resident-COMMIT

``--set DIR`` (e.g. bench/heldout40): another set's scans, as in run.py; ``--ids a,b``: only those
scans (a smoke test).

run.py measures ``ocr-daemon once``: one process per document, which pays the start-up (imports,
a render worker, Tesseract models; ~3 s of CPU a document, bench/cpu_profile_2026-12-03.md)
every time, as OCRmyPDF does. A watched-folder daemon starts once. This measures that, on the
same files, in one run, each side in a cgroup v2 of its own (bench/bench_ocrmypdf.py's ``Side``):

- ``daemon-idle``: ``ocr-daemon run --engine tesseract`` started, ready (its log's "initial
  scan" line, right before READY=1), left idle for as long as ``daemon`` below took, stopped with
  SIGTERM: what running costs with nothing to do (start-up included).
- ``daemon``: the same, then every scanned document of the set copied into the inbox at once;
  stopped (SIGTERM) once each has its sidecar. CPU of the whole tree (render workers included)
  from start to exit, over the scanned pages; and the same minus ``daemon-idle``.
- ``ocrmypdf``: ``ocrmypdf -j 1 -l LANG`` on each scanned document, one after the other (as in
  run.py).

RULES are run.py's (REPO/rules.yaml, every route writing every format to a temporary folder,
sources kept), with the HTTP endpoint off. The searchable-PDF word recall of the daemon's PDFs is
scored as in run.py, to show the same outputs as ``once``. Writes PREFIX.jsonl and PREFIX.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as h32  # noqa: E402  (bench/heldout32/run.py: its paths, scoring and Side)


def start_daemon(side: h32.Side, cmd: list[str], rules: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.setdefault("OMP_THREAD_LIMIT", "1")
    with open(log, "wb") as f:
        return subprocess.Popen(side.argv([*cmd, "run", "--config", str(rules), "--engine", "tesseract"]),
                                stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def wait_ready(log: Path, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        if "initial scan:" in log.read_text(errors="replace"):  # logged right before READY=1
            return
        time.sleep(0.5)
    raise RuntimeError("daemon not ready in time")


def stop(proc: subprocess.Popen[bytes], side: h32.Side) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
    side.wait_empty(60)
    return rc


def rules_for(tmp: Path) -> Path:
    rules = h32.make_rules(h32.REPO, tmp, h32.ALL_FORMATS)
    cfg = yaml.safe_load(rules.read_text(encoding="utf-8"))
    cfg["daemon"]["http"] = None  # no port: nothing else is measured here
    rules.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return rules


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--set", dest="set_dir", type=Path, default=HERE, help="set folder with sources.yaml")
    ap.add_argument("--cache", type=Path, default=None, help="default: ~/.cache/ocr-daemon/<set name>")
    ap.add_argument("--daemon-cmd", default=str(h32.REPO / ".venv" / "bin" / "ocr-daemon"))
    ap.add_argument("--ocrmypdf", default=str(h32.REPO / ".venv-ocrmypdf" / "bin" / "ocrmypdf"))
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--ids", default="", help="comma-separated document ids (default: every scan)")
    args = ap.parse_args()
    args.cache = args.cache or h32.heldout_fetch.set_dest(args.set_dir)
    set_name = args.set_dir.resolve().name
    cmd = args.daemon_cmd.split()
    want = {i for i in args.ids.split(",") if i}
    docs = [d for d in h32.heldout_fetch.load_sources(args.set_dir)["documents"]
            if d.get("scan") and (not want or d["id"] in want)]
    pages = 0
    refs: dict[str, list[str]] = {}
    for d in docs:
        refs[d["id"]] = json.loads(h32.heldout_fetch.ref_path(args.cache, d).read_text(encoding="utf-8"))
        pages += len(refs[d["id"]])
    meta = {"set": set_name, "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.node()} {os.cpu_count()} CPUs", "loadavg_start": os.getloadavg(),
            "commit": h32._git("rev-parse", "HEAD"), "daemon_tree": h32._git("rev-parse", "HEAD:daemon"),
            "versions": h32._versions(args.ocrmypdf), "documents": len(docs), "pages": pages,
            "omp_thread_limit": os.environ.get("OMP_THREAD_LIMIT", "1 (default)"),
            "command": " ".join(["bench/heldout32/resident.py", *sys.argv[1:]])}
    rows: list[dict[str, Any]] = []
    base = Path(tempfile.mkdtemp(prefix=f"{set_name}-resident-"))
    try:
        # the daemon with every scan
        tmp = base / "busy"
        rules = rules_for(tmp)
        side = h32.Side("h32r-daemon")
        meta["cpu_method"] = side.method
        t0 = time.monotonic()
        proc = start_daemon(side, cmd, rules, tmp / "daemon.log")
        wait_ready(tmp / "daemon.log", proc)
        ready_cpu = side.cpu_s()
        for d in docs:
            shutil.copyfile(args.cache / d["file"], tmp / "inbox" / Path(d["file"]).name)
        left = {Path(d["file"]).stem for d in docs}
        end = time.monotonic() + args.timeout
        while left and time.monotonic() < end and proc.poll() is None:
            left = {s for s in left if not list((tmp / "out").rglob(f"{s}.json"))}
            failed = {s for s in left if list((tmp / "failed").glob(f"{s}.*"))}
            left -= failed
            time.sleep(1)
        busy_wall = time.monotonic() - t0
        rc = stop(proc, side)
        busy_cpu = side.cpu_s()
        side.close()
        per_doc = []
        for d in docs:
            stem = Path(d["file"]).stem
            pdf = next(iter(sorted((tmp / "out").rglob(f"{stem}.pdf"))), None)
            s = h32.score_pdf(refs[d["id"]], h32.pdf_page_texts(pdf))
            per_doc.append({"id": d["id"], "pdf_recall": s.get("pdf_recall")})
        recalls = [r["pdf_recall"] for r in per_doc if r["pdf_recall"] is not None]
        rows.append({"side": "daemon", "rc": rc, "wall_s": round(busy_wall, 1), "cpu_s": round(busy_cpu, 2),
                     "cpu_at_ready_s": round(ready_cpu, 2), "pages": pages, "not_done": sorted(left),
                     "pdf_recall_mean": round(sum(recalls) / len(recalls), 4) if recalls else None,
                     "per_doc": per_doc})
        print(json.dumps(rows[-1])[:400], flush=True)

        # the same daemon idle for as long
        tmp = base / "idle"
        rules = rules_for(tmp)
        side = h32.Side("h32r-idle")
        proc = start_daemon(side, cmd, rules, tmp / "daemon.log")
        wait_ready(tmp / "daemon.log", proc)
        time.sleep(max(0.0, busy_wall - 5))
        rc = stop(proc, side)
        idle_cpu = side.cpu_s()
        side.close()
        rows.append({"side": "daemon-idle", "rc": rc, "wall_s": round(busy_wall, 1), "cpu_s": round(idle_cpu, 2)})
        print(json.dumps(rows[-1]), flush=True)

        # OCRmyPDF on the same files, one after the other
        side = h32.Side("h32r-ocrmypdf")
        out = base / "ocrmypdf"
        out.mkdir()
        t0 = time.monotonic()
        cpu0 = side.cpu_s()
        ocr_rows = []
        for d in docs:
            ns = argparse.Namespace(ocrmypdf=args.ocrmypdf, timeout=900)
            r = h32.run_ocrmypdf(d, args.cache / d["file"], refs[d["id"]], side, out, ns, [])
            ocr_rows.append({"id": d["id"], "pdf_recall": r.get("pdf_recall"), "cpu_s": r["cpu_s"], "rc": r["rc"]})
        ocpu = side.cpu_s() - cpu0
        side.close()
        orec = [r["pdf_recall"] for r in ocr_rows if r["pdf_recall"] is not None]
        rows.append({"side": "ocrmypdf", "wall_s": round(time.monotonic() - t0, 1), "cpu_s": round(ocpu, 2),
                     "pages": pages, "pdf_recall_mean": round(sum(orec) / len(orec), 4) if orec else None,
                     "per_doc": ocr_rows})
        print(json.dumps(rows[-1])[:400], flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{args.out}.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"meta": meta}, ensure_ascii=False) + "\n")
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    busy, idle, ocr = rows[0], rows[1], rows[2]
    md = [f"# Held-out scans ({set_name}), the daemon running ({meta['date']}, {meta['machine']})", "",
          f"- commit {meta['commit']}; {meta['documents']} scanned documents, {pages} pages; {meta['cpu_method']}",
          f"- command: `{meta['command']}`", "",
          "| side | CPU s | CPU s per scanned page | searchable-PDF recall (mean) | wall s |", "|---|---|---|---|---|",
          f"| ocr-daemon run (start, every scan, stop) | {busy['cpu_s']} | {busy['cpu_s'] / pages:.2f} | "
          f"{busy['pdf_recall_mean']} | {busy['wall_s']} |",
          f"| ocr-daemon run idle as long (start, stop) | {idle['cpu_s']} | | | {idle['wall_s']} |",
          f"| ocr-daemon, busy minus idle | {busy['cpu_s'] - idle['cpu_s']:.2f} | {(busy['cpu_s'] - idle['cpu_s']) / pages:.2f} | | |",
          f"| OCRmyPDF `-j 1 -l LANG`, one call per document | {ocr['cpu_s']} | {ocr['cpu_s'] / pages:.2f} | "
          f"{ocr['pdf_recall_mean']} | {ocr['wall_s']} |", ""]
    if busy["not_done"]:
        md.append(f"not done: {busy['not_done']}")
    Path(f"{args.out}.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
