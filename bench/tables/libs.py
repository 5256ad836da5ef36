#!/usr/bin/env python3
"""The table libraries people use, run on the truth set's files; started by run.py with the bench
venv's Python (they are no dependencies of the daemon: see README.md for the venv).

    BENCH_PYTHON bench/tables/libs.py JOBS.json OUT.jsonl [READERS]

OUT.jsonl is appended to when it holds rows already (a run cut short goes on where it stopped).

JOBS.json: a list of {"id", "path", "pages": [1-based], "form": "pdf" | "scan", "lang"}. Each
reader writes one JSON line per document: {"id", "reader", "seconds", "error", "tables":
[{"page", "rows"}]}. Readers (each with the settings its documentation starts with, and the
variant for tables without rules):

- born-digital PDFs: ``pymupdf`` (``page.find_tables()``), ``pymupdf-text``
  (``strategy="text"``), ``pdfplumber`` (``page.extract_tables()``), ``pdfplumber-text``
  (text strategies), ``camelot-lattice``, ``camelot-stream``, ``camelot-auto`` (camelot 2's own
  choice of flavour per page);
- scans (page images and image-only PDFs): ``img2table`` (Tesseract through img2table's
  ``TesseractOCR`` with the document's labelled language, ``borderless_tables=True``) and
  ``img2table-bordered`` (ruled tables only, img2table's default).
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import warnings

TESS = {"en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita", "pt": "por", "nl": "nld", "sv": "swe",
        "da": "dan", "zh": "chi_sim+chi_tra", "ja": "jpn"}


def _rows(rows: list) -> list[list[str]]:
    return [["" if c is None else str(c) for c in r] for r in rows]


def pymupdf_tables(job: dict, strategy: str | None) -> list[dict]:
    import pymupdf

    out = []
    with pymupdf.open(job["path"]) as doc:
        for p in job["pages"]:
            page = doc[p - 1]
            found = page.find_tables(strategy=strategy) if strategy else page.find_tables()
            out += [{"page": p, "rows": _rows(t.extract())} for t in found.tables]
    return out


def pdfplumber_tables(job: dict, text: bool) -> list[dict]:
    import pdfplumber

    settings = {"vertical_strategy": "text", "horizontal_strategy": "text"} if text else {}
    out = []
    with pdfplumber.open(job["path"]) as pdf:
        for p in job["pages"]:
            out += [{"page": p, "rows": _rows(t)} for t in pdf.pages[p - 1].extract_tables(settings)]
    return out


def camelot_tables(job: dict, flavor: str) -> list[dict]:
    import camelot

    out = []
    for p in job["pages"]:
        tables = camelot.read_pdf(job["path"], pages=str(p), flavor=flavor, suppress_stdout=True)
        out += [{"page": p, "rows": _rows(t.df.values.tolist())} for t in tables]
    return out


_IMG2TABLE_DOCS: dict[str, object] = {}


def img2table_tables(job: dict, borderless: bool) -> list[dict]:
    from img2table.document import PDF, Image
    from img2table.ocr import TesseractOCR

    ocr = TesseractOCR(n_threads=1, lang=TESS.get(job["lang"], "eng"))
    key = job["path"]
    doc = _IMG2TABLE_DOCS.get(key)  # one document object for both variants: its OCR is done once
    if doc is None:
        doc = PDF(key, pages=[p - 1 for p in job["pages"]]) if key.lower().endswith(".pdf") else Image(key)
        _IMG2TABLE_DOCS.clear()
        _IMG2TABLE_DOCS[key] = doc
    found = doc.extract_tables(ocr=ocr, borderless_tables=borderless)
    if isinstance(found, dict):  # a PDF: {page index: [tables]}
        items = [(idx + 1, t) for idx, ts in found.items() for t in ts]
    else:
        items = [(job["pages"][0], t) for t in found]
    out = []
    for page, t in items:
        rows = [[c.value for c in cells] for _, cells in sorted(t.content.items())]
        out.append({"page": page, "rows": _rows(rows)})
    return out


READERS = {
    "pdf": {
        "pymupdf": lambda j: pymupdf_tables(j, None),
        "pymupdf-text": lambda j: pymupdf_tables(j, "text"),
        "pdfplumber": lambda j: pdfplumber_tables(j, False),
        "pdfplumber-text": lambda j: pdfplumber_tables(j, True),
        "camelot-lattice": lambda j: camelot_tables(j, "lattice"),
        "camelot-stream": lambda j: camelot_tables(j, "stream"),
        "camelot-auto": lambda j: camelot_tables(j, "auto"),
    },
    "scan": {
        "img2table": lambda j: img2table_tables(j, True),
        "img2table-bordered": lambda j: img2table_tables(j, False),
    },
}


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {n: version(n) for n in ("pymupdf", "pdfplumber", "camelot-py", "img2table", "opencv-python-headless")}


def main() -> int:
    warnings.simplefilter("ignore")
    with open(sys.argv[1], encoding="utf-8") as f:
        jobs = json.load(f)
    only = set(sys.argv[3].split(",")) if len(sys.argv) > 3 and sys.argv[3] else None
    done: set[tuple[str, str]] = set()
    try:  # rows of an earlier, interrupted run of the same jobs are kept and not run again
        with open(sys.argv[2], encoding="utf-8") as f:
            done = {(r["id"], r["reader"]) for r in map(json.loads, f.read().splitlines()[1:]) if r}
    except (OSError, ValueError, KeyError):
        done = set()
    with open(sys.argv[2], "a" if done else "w", encoding="utf-8") as out:
        if not done:
            out.write(json.dumps({"versions": versions()}) + "\n")
        for job in jobs:
            for name, fn in READERS[job["form"]].items():
                if (only and name not in only) or (job["id"], name) in done:
                    continue
                t0 = time.perf_counter()
                try:
                    tables, error = fn(job), None
                except Exception as e:  # a reader that fails on a file scores 0 there
                    tables, error = [], f"{type(e).__name__}: {e}"
                    traceback.print_exc()
                row = {"id": job["id"], "reader": name, "seconds": round(time.perf_counter() - t0, 3), "error": error,
                       "tables": tables}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
                print(f"{job['id']} {name}: {len(tables)} table(s), {row['seconds']:.1f} s" + (f" ({error})" if error else ""),
                      file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
