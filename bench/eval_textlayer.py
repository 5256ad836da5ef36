"""Text layer and tables on the real-world set (bench/realdocs: sources.yaml + fetch.py).

For each document of the chosen split that is born-digital or has a table, runs
``ocr-daemon once`` (Tesseract engine, formats txt + csv + json, a fresh state folder) with the
daemon code found under ``--code`` (default: this checkout; point it at an export of an older
commit for "before" figures) and ``engine.text_layer`` as given, then scores:

- **word recall** (born-digital documents): words of each page's own text layer
  (``page.get_text()``, hyphenated line ends joined, lower-cased ``\\w+`` tokens, CJK per character) found in the
  ``txt`` output, counted with repeats, summed over the document's pages;
- **table sources -> CSV**: documents labelled ``has_table`` for which at least one CSV file
  was written;
- **cells right** (documents with ``expected_cells``): the best placement of the expected rows
  over any written CSV (any row/column offset); a cell is right when its text equals the CSV's
  (whitespace-normalised); empty expected cells are not scored.

Usage: ``OMP_THREAD_LIMIT=1 .venv/bin/python bench/eval_textlayer.py --sources bench/realdocs/sources.yaml
--cache ~/.cache/ocr-daemon/realdocs --split tune [--text-layer auto|ocr] [--code DIR] [--rows out.jsonl]``
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pymupdf
import yaml

ROOT = Path(__file__).resolve().parent.parent


# CJK is scored per character (it has no spaces: a line break in the PDF's text would split a
# "word" that a joined paragraph keeps whole); other scripts per \w+ word.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")


def words(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def layer_words(pdf: Path) -> list[str]:
    out: list[str] = []
    for page in pymupdf.open(pdf):
        out += words(re.sub(r"(\w)-\n(\w)", r"\1\2", page.get_text()))
    return out


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


def _norm(s: str) -> str:
    return " ".join(str(s).split()).lower()


def cells_right(expected: list[list[Any]], tables: list[list[list[str]]]) -> tuple[int, int]:
    want = [(r, c, _norm(v)) for r, row in enumerate(expected) for c, v in enumerate(row) if _norm(v)]
    best = 0
    for t in tables:
        if not t:
            continue
        width = max(len(r) for r in t)
        for r0 in range(-len(expected) + 1, len(t)):
            for c0 in range(-len(expected[0]) + 1, width):
                n = 0
                for r, c, v in want:
                    rr, cc = r + r0, c + c0
                    if 0 <= rr < len(t) and 0 <= cc < len(t[rr]) and _norm(t[rr][cc]) == v:
                        n += 1
                best = max(best, n)
    return best, len(want)


def run_once(code: Path, src: Path, text_layer: str, langs: list[str] | None) -> tuple[Path, float, str]:
    tmp = Path(tempfile.mkdtemp(prefix="evaltl-"))
    (tmp / "inbox").mkdir()
    f = tmp / "inbox" / src.name
    f.write_bytes(src.read_bytes())
    engine: dict[str, Any] = {"kind": "tesseract", "tesseract": {"threads": 2}}
    if text_layer != "-":
        engine["text_layer"] = text_layer
    cfg = {
        "daemon": {"state_dir": "state", "failed_dir": "failed", "render_workers": 2},
        "engine": engine,
        "inboxes": [{"path": "inbox", **({"languages": langs} if langs else {})}],
        "routes": [{"name": "all", "destination": str(tmp / "out"), "formats": ["txt", "csv", "json"]}],
    }
    (tmp / "rules.yaml").write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_THREAD_LIMIT": "1"}
    t = time.perf_counter()
    # cwd=tmp: ``python -m`` puts the working folder before PYTHONPATH, which must pick the code
    r = subprocess.run([sys.executable, "-m", "daemon", "once", str(f), "--config", str(tmp / "rules.yaml")],
                       env=env, capture_output=True, text=True, timeout=1800, cwd=tmp)
    return tmp / "out", time.perf_counter() - t, (r.stderr or "")[-300:] if r.returncode else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--split", default="tune", choices=["tune", "holdout", "all"])
    ap.add_argument("--text-layer", default="auto", help="auto | any | ocr | - (leave the key out: older code)")
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--ids", default="")
    ap.add_argument("--rows", type=Path)
    a = ap.parse_args()
    data = yaml.safe_load(a.sources.read_text())
    docs = data["documents"] if "documents" in data else next(v for v in data.values() if isinstance(v, list))
    ids = set(filter(None, a.ids.split(",")))
    rows = []
    tot = {"hit": 0, "words": 0, "tables": 0, "with_csv": 0, "cells_right": 0, "cells": 0}
    for d in docs:
        lab = d.get("labels", {})
        if ids and d["id"] not in ids:
            continue
        if not ids and a.split != "all" and d.get("split") != a.split:
            continue
        if not (lab.get("born_digital") or lab.get("has_table")):
            continue
        src = a.cache / d["file"]
        if not src.exists():
            print(f"{d['id']}: missing {src}", file=sys.stderr)
            continue
        out, secs, err = run_once(a.code, src, a.text_layer, None)
        row: dict[str, Any] = {"id": d["id"], "split": d.get("split"), "seconds": round(secs, 1)}
        shutil.rmtree(out.parent / "state", ignore_errors=True)
        if err:
            row["error"] = err
        txt = next(iter(out.glob("*.txt")), None)
        if lab.get("born_digital") and src.suffix == ".pdf":
            h, n = recall(layer_words(src), words(txt.read_text() if txt else ""))
            row["word_recall"] = round(h / max(1, n), 4)
            tot["hit"] += h
            tot["words"] += n
        if lab.get("has_table"):
            tables = []
            for c in sorted(out.glob("*.csv")):
                with open(c, newline="", encoding="utf-8-sig") as fh:
                    tables.append(list(csv.reader(fh)))
            row["csv_files"] = len(tables)
            tot["tables"] += 1
            tot["with_csv"] += bool(tables)
            if lab.get("expected_cells"):
                ok, n = cells_right(lab["expected_cells"], tables)
                row["cells_right"] = f"{ok}/{n}"
                tot["cells_right"] += ok
                tot["cells"] += n
        side = next(iter(out.glob("*.json")), None)
        if side:
            pages = json.loads(side.read_text()).get("pages", [])
            row["sources"] = [p.get("source", "ocr") for p in pages]
        print(json.dumps(row, ensure_ascii=False), flush=True)
        rows.append(row)
    summary = {
        "split": a.split, "text_layer": a.text_layer, "code": str(a.code),
        "word_recall": round(tot["hit"] / max(1, tot["words"]), 4), "words": tot["words"],
        "table_sources_with_csv": f"{tot['with_csv']}/{tot['tables']}",
        "cells_right": f"{tot['cells_right']}/{tot['cells']}",
    }
    print(json.dumps(summary))
    if a.rows:
        a.rows.parent.mkdir(parents=True, exist_ok=True)
        with open(a.rows, "a", encoding="utf-8") as f:
            for r in [*rows, {"summary": summary}]:
                f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **r},
                                   ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
