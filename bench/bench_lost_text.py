#!/usr/bin/env python3
"""Lost text (issue 32, item 4): the ink-vs-words check's CPU cost per page, and word recall with
and without the engine's lost-text passes (``daemon.engines.tessrecover``: ink without words read
again; and the Otsu re-read of a page read below 70 confidence).

    OMP_THREAD_LIMIT=1 python3 bench/bench_lost_text.py [--realdocs ID,ID] [--cache DIR]

Pages: the generated ones (``tests/prosegen.py``: a 2-page scan of the GPL's preamble at 300 dpi,
-1 degree, noise; a photo of a diary page in a script font on ruled paper) and the real-world
set's scans named with ``--realdocs`` (from the cache fetch.py fills), and its born-digital
PDFs named with ``--scan``, "scanned" first like the generated prose (300 dpi, -1 degree, noise;
reference: their own text layer). Each page is rendered as
the pipeline does for Tesseract (300 dpi, orientation, crop, deskew) and read by the real
``TesseractEngine`` twice: as it is ("after") and with both passes switched off ("before").
Word recall: of the reference's words (multiset; lower case, letters and digits, 3+ characters),
the share found in the engine's text. References: the generated pages' own text; a rasterised
Debian page (``scan-*``) the text layer of the page it was made from (extracted from the .deb
fetch.py downloaded); real scans without a reference are reported without recall. The check's
cost is ``missing_regions`` alone on the page's final read (process CPU time, best of 3).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import pymupdf
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench" / "realdocs"))
sys.path.insert(0, str(REPO))

import prosegen  # noqa: E402
from renderopts import render_opts  # noqa: E402

from daemon.config import EngineCfg, TesseractCfg  # noqa: E402
from daemon.engines.base import PageRequest  # noqa: E402
from daemon.engines.tesseract import INK_LUT, TesseractEngine  # noqa: E402
from daemon.engines.tessrecover import missing_regions  # noqa: E402
from daemon.pages.probe import page_count  # noqa: E402
from daemon.pages.render import render_page  # noqa: E402

CACHE = Path.home() / ".cache" / "ocr-daemon" / "realdocs"


def words(s: str) -> list[str]:
    return re.findall(r"[^\W_]{3,}", s.lower())


def recall(ref: str, hyp: str) -> float:
    r, h = collections.Counter(words(ref)), collections.Counter(words(hyp))
    return sum(min(n, h[w]) for w, n in r.items()) / max(1, sum(r.values()))


def reference(doc: dict, workdir: Path) -> list[str] | None:
    """The text of the born-digital pages a rasterised ``scan-*`` document was made from."""
    origin = doc.get("origin", {})
    if "debian" not in origin or "render" not in doc:
        return None
    import fetch

    name, version = origin["debian"].split("=")
    debs = list((CACHE / "_packages" / "debian").glob(f"{name}_*.deb"))
    if not debs:
        return None
    data = fetch.extract_member(debs[0], "debian", origin["path"], workdir)
    if origin["path"].endswith(".gz"):
        data = gzip.decompress(data)
    with pymupdf.open(stream=data, filetype="pdf") as src:
        return [src[p].get_text() for p in doc["pages"]]


def read(engine: TesseractEngine, img, tag: str, index: int):  # type: ignore[no-untyped-def]
    t = time.process_time()
    page = engine.submit(PageRequest(tag, index, img)).result(600)
    return page, time.process_time() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--realdocs", default="")
    ap.add_argument("--scan", default="", help="born-digital real-world documents to scan first (ids)")
    ap.add_argument("--no-generated", action="store_true")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lost-text-"))
    items: list[tuple[str, Path, list[str] | None]] = []
    if not args.no_generated:
        ref = prosegen.prose_pdf(tmp / "prose.pdf")
        prosegen.scan_pdf(tmp / "prose.pdf", tmp / "prose-scan.pdf", dpi=300, skew=-1.0, noise=6.0)
        items.append(("gen-prose-scan", tmp / "prose-scan.pdf", ref))
        items.append(("gen-diary", tmp / "diary.jpg", ["\n".join(prosegen.diary_page(tmp / "diary.jpg"))]))
    docs = {d["id"]: d for d in yaml.safe_load((REPO / "bench/realdocs/sources.yaml").read_text())["documents"]}
    for i in filter(None, args.scan.split(",")):
        src = CACHE / docs[i]["file"]
        with pymupdf.open(src) as d:
            refs = [p.get_text() for p in d]
        items.append((f"{i}-scanned", prosegen.scan_pdf(src, tmp / f"{i}-scan.pdf", dpi=300, skew=-1.0, noise=6.0), refs))
    for i in filter(None, args.realdocs.split(",")):
        d = docs[i]
        items.append((i, CACHE / d["file"], reference(d, tmp)))
    opts = render_opts(dpi=300)
    engine = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1)))
    engine.start()
    rows = []
    try:
        for name, path, refs in items:
            for k in range(page_count(path, opts)):
                img = render_page(path, k, opts).image
                after, cpu_after = read(engine, img, f"{name}-a", k)
                real_lost, real_thr = engine._lost_text, engine._threshold_check
                engine._lost_text = lambda *a, **kw: None  # type: ignore[method-assign]
                engine._threshold_check = lambda *a, **kw: ("", -1.0, None)  # type: ignore[method-assign,return-value,assignment]
                try:
                    before, cpu_before = read(engine, img, f"{name}-b", k)
                finally:
                    engine._lost_text, engine._threshold_check = real_lost, real_thr  # type: ignore[method-assign]
                gray = img.convert("L").point(INK_LUT)
                costs = []
                for _ in range(3):
                    t = time.process_time()
                    missing_regions(gray, before.layout)  # type: ignore[arg-type]
                    costs.append(time.process_time() - t)
                row = {"doc": name, "page": k + 1, "size": img.size, "check_s": round(min(costs), 4),
                       "read_cpu_before_s": round(cpu_before, 2), "read_cpu_after_s": round(cpu_after, 2),
                       "lost_text_lines": after.meta.get("lost_text", 0), "threshold": after.meta.get("threshold", ""),
                       "conf_before": before.meta.get("confidence"), "conf_after": after.meta.get("confidence")}
                if refs is not None and k < len(refs):
                    row["recall_before"] = round(recall(refs[k], before.text), 3)
                    row["recall_after"] = round(recall(refs[k], after.text), 3)
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        engine.close(5)
    checks = [r["check_s"] for r in rows]
    print(f"check: mean {sum(checks) / len(checks):.4f} s, max {max(checks):.4f} s per page over {len(rows)} pages")
    if args.out:
        Path(args.out).write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
