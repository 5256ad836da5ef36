"""Born-digital PDF pages through the text layer (daemon.pages.textlayer): speed, cost of the
per-page decision, word recall against the PDF's own text, tables against PyMuPDF's.

For every PDF (``--pdf``, repeatable; without one a generated 60-page report from
tests/layoutgen.py and a generated 10-page scan (docgen, image-only pages) are used):

- **pages/s**: ``read_or_render`` (what a render worker runs per page: open, judge, extract,
  build the page's blocks and Markdown; a page without a usable layer is rendered instead) over all pages,
  in ``--workers`` processes (the render pool), wall clock; and CPU ms per page in one process.
- **decision cost**: ``read_layer`` (and, once per document, opening it) on pages whose layer is *not* used
  (scans: they go on to the renderer and the engine, so this is what the check adds to the
  GPU path), next to ``render_page``'s time for the same pages; and the CPU time of the
  Tesseract engine's table search on those pages' images (``daemon.pages.tables``).
- **word recall**: words of the page's own text (``page.get_text()``, hyphenated line ends
  joined) found in the words of the document model built from the page's layer blocks (what
  the writers get; the ``txt`` writer's output), counted with repeats, over the pages whose
  layer is used.
- ``--tables``: ruled tables found by ``daemon.pages.tables`` vs ``page.find_tables()``
  (PyMuPDF): tables found by both, cells equal (text, whitespace-normalised), and the time of
  each.
- ``--ocr N``: the "before" figure: word recall of the Tesseract engine on N pages (evenly
  spread) rendered at ``engine.render_longest_edge`` 1540 px, as the daemon did before.

Rows (one JSON object per PDF) go to ``--rows`` (a .jsonl file). Usage:
``OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_textlayer.py [--pdf X.pdf ...] [--workers 2]
[--tables] [--ocr 10] [--rows bench/results/2026-12-01/textlayer.jsonl]``
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pymupdf  # noqa: E402
from renderopts import render_opts  # noqa: E402

from daemon.document.parse import parse_document  # noqa: E402
from daemon.pagerecord import LayerBlocks, LayerPage  # noqa: E402
from daemon.pages.render import render_page  # noqa: E402
from daemon.pages.textlayer import read_layer, read_or_render  # noqa: E402
from daemon.writers.text import write_txt  # noqa: E402

OPTS = render_opts(autorotate=False)


# CJK is scored per character (it has no spaces: a line break in the PDF's text would split a
# "word" that a joined paragraph keeps whole); other scripts per \w+ word.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")


def words(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def reference_words(page: pymupdf.Page) -> list[str]:
    text = page.get_text()
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)  # a word broken at the line end is one word
    return words(text)


def recall(ref: list[str], got: list[str]) -> tuple[int, int]:
    bag: dict[str, int] = {}
    for w in got:
        bag[w] = bag.get(w, 0) + 1
    hit = 0
    for w in ref:
        if bag.get(w, 0) > 0:
            bag[w] -= 1
            hit += 1
    return hit, len(ref)


def _one(args: tuple[str, int]) -> tuple[int, str, LayerBlocks | None, float]:
    path, i = args
    t = time.process_time()
    r = read_or_render(Path(path), i, OPTS)
    cpu = time.process_time() - t
    if isinstance(r, LayerPage):
        return i, "text_layer", r.content, cpu
    return i, r.text_layer_note, None, cpu


def throughput(path: Path, n: int, workers: int) -> dict[str, Any]:
    tasks = [(str(path), i) for i in range(n)]
    with cf.ProcessPoolExecutor(workers) as ex:
        list(ex.map(_one, tasks[: min(n, workers * 2)]))  # start and import in every worker
        t0 = time.perf_counter()
        res = list(ex.map(_one, tasks, chunksize=1))
        wall = time.perf_counter() - t0
    used = [r for r in res if r[1] == "text_layer"]
    reasons: dict[str, int] = {}
    for r in res:
        if r[1] != "text_layer":
            reasons[r[1]] = reasons.get(r[1], 0) + 1
    return {
        "pages": n, "text_layer_pages": len(used), "not_used": reasons,
        "pages_per_s": round(n / wall, 1), "workers": workers,
        "cpu_ms_per_text_page": round(1000 * sum(r[3] for r in used) / max(1, len(used)), 1),
        "_texts": {r[0]: r[2] for r in used},
    }


def decision_cost(path: Path, pages: list[int]) -> dict[str, Any]:
    """ms per page of the check on pages whose layer is not used, next to rendering them."""
    if not pages:
        return {}
    t = time.perf_counter()
    doc = pymupdf.open(path)  # once per document and worker, as textlayer._open keeps it
    opened = time.perf_counter() - t
    t = time.perf_counter()
    for i in pages:
        read_layer(doc.load_page(i), i, "auto", True)
    check = (time.perf_counter() - t) / len(pages)
    doc.close()
    t = time.perf_counter()
    images = [render_page(path, i, OPTS).image.convert("L") for i in pages]
    rend = (time.perf_counter() - t) / len(pages)
    from daemon.pages.scantables import find_image_grids, find_image_rule_regions

    t = time.process_time()
    for g in images:  # what the Tesseract engine adds to every page it reads: the table search
        find_image_rule_regions(g, find_image_grids(g))
    detect = (time.process_time() - t) / len(pages)
    t = time.perf_counter()
    for i in pages:
        render_page(path, i, render_opts())
    rend_osd = (time.perf_counter() - t) / len(pages)
    return {"check_ms": round(1000 * check, 2), "open_ms": round(1000 * opened, 1), "render_ms_no_osd": round(1000 * rend, 1),
            "render_ms_with_osd": round(1000 * rend_osd, 1), "pages_checked": len(pages),
            "image_table_search_cpu_ms": round(1000 * detect, 1)}


def _norm(s: str | None) -> str:
    return " ".join((s or "").split())


def tables(path: Path) -> dict[str, Any]:
    from daemon.pages.tables import find_grids
    from daemon.pages.textlayer import vector_segments

    doc = pymupdf.open(path)
    ours = theirs = both = cells_equal = cells_total = 0
    t_ours = t_theirs = 0.0
    for page in doc:
        t = time.perf_counter()
        h, v = vector_segments(page)
        grids = find_grids(h, v, tol=2.0, min_size=4.0) if len(h) >= 2 and len(v) >= 2 else []
        layer = read_layer(page, page.number, "ocr") if grids else None
        t_ours += time.perf_counter() - t
        t = time.perf_counter()
        ft = page.find_tables().tables
        t_theirs += time.perf_counter() - t
        ours += len(grids)
        theirs += len(ft)
        if not grids or not ft or layer is None:
            continue
        from daemon.document.layout import _table

        lines = [ln for b in layer.blocks for ln in b.lines]
        for g in grids:
            match = [f for f in ft if abs(f.bbox[1] - g.bbox[1]) < 4 and abs(f.bbox[3] - g.bbox[3]) < 4]
            if not match:
                continue
            both += 1
            tb = _table(g, lines)
            mine = tb.expanded() if tb else []
            ref = [[_norm(c) for c in row] for row in match[0].extract()]
            for r, row in enumerate(ref):
                for c, cell in enumerate(row):
                    cells_total += 1
                    if r < len(mine) and c < len(mine[r]) and _norm(mine[r][c]) == cell:
                        cells_equal += 1
    n = max(1, doc.page_count)
    return {"tables_ours": ours, "tables_find_tables": theirs, "tables_both": both,
            "cells_equal": cells_equal, "cells_compared": cells_total,
            "ms_per_page_ours": round(1000 * t_ours / n, 1), "ms_per_page_find_tables": round(1000 * t_theirs / n, 1)}


def ocr_recall(path: Path, k: int, text_pages: list[int]) -> dict[str, Any]:
    from daemon.config import EngineCfg, TesseractCfg
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine

    pick = text_pages[:: max(1, len(text_pages) // k)][:k]
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=2)))
    eng.start()
    try:
        doc = pymupdf.open(path)
        hit = total = 0
        t = time.perf_counter()
        for i in pick:
            img = render_page(path, i, render_opts()).image
            res = eng.submit(PageRequest("bench", i, img)).result(timeout=600)
            h, n = recall(reference_words(doc[i]), words(res.text))
            hit, total = hit + h, total + n
        secs = time.perf_counter() - t
    finally:
        eng.close()
    return {"ocr_pages": len(pick), "ocr_word_recall": round(hit / max(1, total), 4),
            "ocr_s_per_page": round(secs / max(1, len(pick)), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdf", action="append", type=Path, default=[])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tables", action="store_true")
    ap.add_argument("--ocr", type=int, default=0, help="pages read with Tesseract for the 'before' recall")
    ap.add_argument("--rows", type=Path)
    a = ap.parse_args()
    pdfs = list(a.pdf)
    tmp = tempfile.TemporaryDirectory()
    if not pdfs:
        import docgen
        import layoutgen

        pdfs = [layoutgen.make_layout_pdf(Path(tmp.name) / "generated-report.pdf", pages=60),
                docgen.make_pdf(Path(tmp.name) / "generated-scan.pdf",
                                [docgen.SAMPLES[k] for k in ("en", "de", "fr", "zh", "ja")] * 2, scanned=True)]
    print(f"# {platform.node()} nproc={os.cpu_count()} load={os.getloadavg()[0]:.1f} "
          f"PyMuPDF {pymupdf.VersionBind} {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    rows = []
    for path in pdfs:
        doc = pymupdf.open(path)
        n = doc.page_count
        row: dict[str, Any] = {"pdf": path.name, **throughput(path, n, a.workers)}
        texts = row.pop("_texts")
        hit = total = 0
        for i, layer in texts.items():
            got = words(write_txt(parse_document([layer.markdown], markdown=True, blocks=[layer.blocks])))
            h, t = recall(reference_words(doc[i]), got)
            hit, total = hit + h, total + t
        row["word_recall"] = round(hit / max(1, total), 4)
        row["words"] = total
        not_used = [i for i in range(n) if i not in texts]
        row.update(decision_cost(path, not_used[:20]))
        if a.tables:
            row.update(tables(path))
        if a.ocr:
            row.update(ocr_recall(path, a.ocr, sorted(texts)))
        print(json.dumps(row, ensure_ascii=False))
        rows.append(row)
    if a.rows:
        a.rows.parent.mkdir(parents=True, exist_ok=True)
        with open(a.rows, "a", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                    "host": platform.node(), **r}, ensure_ascii=False) + "\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
