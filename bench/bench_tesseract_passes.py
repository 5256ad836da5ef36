#!/usr/bin/env python3
"""Where the Tesseract engine's CPU goes, pass by pass, on the corpus of bench/bench_ocrmypdf.py.

    OMP_THREAD_LIMIT=1 python bench/bench_tesseract_passes.py --corpus /tmp/ocrbench [--only synth-0] [--out R.jsonl]

Each page is rendered as the daemon renders it for Tesseract (``render_page`` with rules.yaml's
render settings, OSD orientation included), then recognised by ``TesseractEngine._recognise``
on this thread, one page after another, the pages of a document in order (so the per-document
language memory works as in the daemon, minus pages read at the same time). Every Tesseract
call is timed in CPU seconds of this thread (``time.thread_time``: a shared machine does not
inflate it much): the render (with OSD), each ``_ocr`` pass (labelled with its models), the table
search and read. Prints a table by pass kind, one JSON row per page to --out, and each document's
word recall (bench/bench_ocrmypdf.py's measure) of the engine's page texts against the reference.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--only", default="")
    p.add_argument("--out", type=Path)
    args = p.parse_args()

    from daemon.config import load_config
    from daemon.engines import tesseract as tess_module
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine
    from daemon.pages import render
    from daemon.service.pipeline import render_options

    cfg = load_config(HERE.parent / "rules.yaml")
    opts = render_options(cfg, "tesseract")
    eng = TesseractEngine(cfg.engine)
    eng.start()
    calls: list[tuple[str, float]] = []
    orig_ocr = eng._ocr

    def timed_ocr(req: Any, langs: list[str], gray: Any, layout: bool = True) -> Any:
        t = time.thread_time()
        try:
            return orig_ocr(req, langs, gray, layout=layout)
        finally:
            kind = ("ocr:" if layout else "probe:") + "+".join(langs if len(langs) < 4 else [f"{len(langs)} models"])
            calls.append((kind, time.thread_time() - t))

    orig_tables = tess_module.page_tables

    def timed_tables(*a: Any) -> Any:
        t = time.thread_time()
        try:
            return orig_tables(*a)
        finally:
            calls.append(("tables", time.thread_time() - t))

    eng._ocr = timed_ocr  # type: ignore[method-assign]
    tess_module.page_tables = timed_tables  # the engine's table pass (daemon.engines.tesstables)
    manifest = json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8"))
    docs = [d for d in manifest if not args.only or any(s in d["file"] for s in args.only.split(","))]
    totals: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    pages = 0
    rows = []
    from bench_ocrmypdf import recall

    found_all = ref_all = 0
    for d in docs:
        path = args.corpus / "corpus" / d["file"]
        texts = []
        for i in range(d["pages"]):
            t = time.thread_time()
            page = render.render_page(path, i, opts)
            t_render = time.thread_time() - t
            calls.clear()
            req = PageRequest(d["file"], i, page.image, priority=i, script=page.geometry.script)
            t = time.thread_time()
            res = eng._recognise(req)
            t_rec = time.thread_time() - t
            pages += 1
            totals["render+osd"] += t_render
            counts["render+osd"] += 1
            for k, v in calls:
                totals[k] += v
                counts[k] += 1
            other = t_rec - sum(v for _, v in calls)
            totals["engine other"] += other
            row = {"file": d["file"], "page": i, "size": page.image.size, "script": page.geometry.script,
                   "render_s": round(t_render, 3), "engine_s": round(t_rec, 3),
                   "passes": [(k, round(v, 3)) for k, v in calls], "conf": res.meta.get("confidence"),
                   "languages": res.meta.get("languages")}
            rows.append(row)
            texts.append(res.text)
            print(json.dumps(row), flush=True)
        found, total = recall(d["reference"], "\n\n".join(texts))
        found_all, ref_all = found_all + found, ref_all + total
        print(json.dumps({"file": d["file"], "recall": round(found / max(1, total), 4)}), flush=True)
    eng.close()
    print(f"\n{pages} pages; CPU s per page by pass kind (calls):")
    for k, v in totals.most_common():
        print(f"  {k:<28} {v / pages:6.3f}  ({counts[k]})")
    print(f"  {'total':<28} {sum(totals.values()) / pages:6.3f}")
    print(f"pooled word recall {found_all / max(1, ref_all):.4f}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
