#!/usr/bin/env python3
"""Word recall and CPU of the Tesseract path at several ``engine.tesseract.render_dpi`` on
150 dpi image-only PDFs (issue 32, bench/cpu_profile_2026-12-03.md item 5).

    OMP_THREAD_LIMIT=1 python bench/bench_render_dpi.py build --out /tmp/dpi [--bornd N]
    OMP_THREAD_LIMIT=1 python bench/bench_render_dpi.py run --corpus /tmp/dpi --dpis 300,200,150 --out R.jsonl

``build``: the ``split: tune`` documents of bench/realdocs only (never the holdout), as
bench/bench_ocrmypdf.py's ``real`` set makes them: the ``scan-*`` page images in image-only PDFs
at their 150 dpi (reference: the text layer of the Debian PDF pages they were rasterised from),
and, with ``--bornd N``, the first N born-digital tune PDFs rasterised at 150 dpi (reference:
their own text layer).

``run``: for each dpi, ``ocr-daemon once --engine tesseract --jsonl`` (one process per document,
txt only, rules.yaml's settings with ``render_dpi`` replaced), each in a cgroup v2 of its own
(``bench_ocrmypdf.Side``): CPU of the whole process tree, word recall of the .txt against the
reference (evaluate.py's words). A page image of 150 dpi rendered at 150 is its own resolution
(1754 px on A4, above ``render_longest_edge``'s 1540).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "realdocs"))


def cmd_build(args: argparse.Namespace) -> int:
    import bench_ocrmypdf as bo
    import fetch  # bench/realdocs/fetch.py

    tune = {d["id"] for d in fetch.load_sources(HERE / "realdocs" / "sources.yaml")["documents"] if d["split"] == "tune"}
    out = args.out / "corpus"
    out.mkdir(parents=True, exist_ok=True)
    docs = [d for d in bo.build_real(out, args.cache) if d["file"][len("real-"):-len(".pdf")] in tune]
    scans = [d for d in docs if d["file"].startswith("real-scan-")]
    bornd = [d for d in docs if not d["file"].startswith("real-scan-")][: args.bornd]
    keep = {d["file"] for d in scans + bornd}
    for p in out.iterdir():
        if p.name not in keep:
            p.unlink()
    (args.out / "manifest.json").write_text(json.dumps(scans + bornd, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(scans)} scans + {len(bornd)} born-digital, {sum(d['pages'] for d in scans + bornd)} pages -> {out}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import bench_ocrmypdf as bo
    import yaml

    docs = json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8"))
    py = str(REPO / ".venv" / "bin" / "python")
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dpi-") as tmp:
        for dpi in [int(x) for x in args.dpis.split(",")]:
            for d in docs:
                w = Path(tmp) / f"{dpi}-{Path(d['file']).stem}"
                (w / "inbox").mkdir(parents=True)
                shutil.copyfile(args.corpus / "corpus" / d["file"], w / "inbox" / d["file"])
                rules = bo._rules(w, ["txt"])
                cfg = yaml.safe_load(rules.read_text(encoding="utf-8"))
                tess = cfg.setdefault("engine", {}).setdefault("tesseract", {})
                tess["render_dpi"] = dpi
                tess["hang_timeout"] = 3600.0  # a loaded machine is no stalled engine
                rules.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
                side = bo.Side("dpi")
                t = time.monotonic()
                try:
                    proc = subprocess.run(side.argv([py, "-m", "daemon", "once", "--engine", "tesseract", "--jsonl",
                                                     "--hooks-wait", "0", "--config", str(rules),
                                                     str(w / "inbox" / d["file"])]),
                                          env=env, cwd=REPO, capture_output=True, timeout=1800, check=False)
                    side.wait_empty()
                    cpu = side.cpu_s()
                finally:
                    side.close()
                txt = next((w / "out").rglob("*.txt"), None)
                found, total = bo.recall(d["reference"], txt.read_text(encoding="utf-8") if txt else "")
                rows.append({"dpi": dpi, "file": d["file"], "pages": d["pages"], "rc": proc.returncode,
                             "cpu_s": round(cpu, 2), "wall_s": round(time.monotonic() - t, 1), "found": found,
                             "ref_words": total, "recall": round(found / total, 4) if total else None,
                             "stderr": proc.stderr.decode(errors="replace")[-300:] if proc.returncode else ""})
                print(json.dumps(rows[-1]), flush=True)
    for dpi in [int(x) for x in args.dpis.split(",")]:
        for name, sub in (("scans", [r for r in rows if r["dpi"] == dpi and "real-scan-" in r["file"]]),
                          ("all", [r for r in rows if r["dpi"] == dpi])):
            if not sub:
                continue
            pages = sum(r["pages"] for r in sub)
            s = {"kind": "summary", "dpi": dpi, "set": name, "docs": len(sub), "pages": pages,
                 "cpu_s_per_page": round(sum(r["cpu_s"] for r in sub) / pages, 2),
                 "recall_pooled": round(sum(r["found"] for r in sub) / max(1, sum(r["ref_words"] for r in sub)), 4),
                 "recall_mean": round(sum(r["recall"] or 0 for r in sub) / len(sub), 4)}
            rows.append(s)
            print(json.dumps(s), flush=True)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


def main() -> int:
    from bench_ocrmypdf import DEFAULT_CACHE

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    b.add_argument("--bornd", type=int, default=0, help="also the first N born-digital tune PDFs, rasterised")
    r = sub.add_parser("run")
    r.add_argument("--corpus", type=Path, required=True)
    r.add_argument("--dpis", default="300,200,150")
    r.add_argument("--out", type=Path)
    args = p.parse_args()
    return {"build": cmd_build, "run": cmd_run}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
