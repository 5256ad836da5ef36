"""Held-out check of the output writers (issue 4).

Runs ``python -m daemon convert FILE --to md,txt,tex,csv,xlsx,json`` (what ``ocr-daemon
convert`` runs) on every model-style page output in ``bench/heldout_outputs/`` and checks the
results against the hand-written ``expected.json`` (written before the first run):

- ``.tex`` compiles with ``xelatex -interaction=nonstopmode -halt-on-error``;
- every table: one CSV whose grid equals the expected grid (spans expanded), one XLSX sheet whose
  cells hold the expected text or the expected number, and whose merged ranges are the expected
  ones;
- the ``.md`` parses back to the same tables;
- LaTeX fragments that must be in the ``.tex`` (escaping, repaired math);
- language detection (``daemon.language`` via convert's default) against the expected language.

Usage: ``.venv/bin/python bench/eval_outputs.py [--set bench/heldout_outputs_v2] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openpyxl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from daemon.document.parse import parse_document  # noqa: E402
from daemon.writers.convert import _detect_language, split_raw_pages  # noqa: E402

HELDOUT = ROOT / "bench" / "heldout_outputs"


def ref_number(text: str, lang: str) -> float | None:
    """A deliberately simple reading of an expected cell as a number (independent of
    daemon.writers.numbers): drop currency and spaces, apply the language's separators."""
    s = text
    for sym in ("€", "kr.", "kr", "¥", "￥", "$", "\u00a0", "\u202f", " "):
        s = s.replace(sym, "")
    pct = s.endswith("%")
    s = s.rstrip("%").replace("−", "-")
    if lang in ("de", "fr", "es", "it", "nl", "pt", "da", "sv"):
        s = s.replace(".", "").replace(",", ".")
    else:
        s = s.replace(",", "")
    try:
        v = float(s)
    except ValueError:
        return None
    return v / 100 if pct else v


def check_file(src: Path, exp: dict, out: Path) -> dict:
    res: dict = {"file": src.name, "problems": []}
    lang = exp["language"]
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "daemon", "convert", str(src), "--to", "md,txt,tex,csv,xlsx,json", "--out", str(out),
         "--language", lang],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    res["convert_s"] = round(time.perf_counter() - t0, 3)
    if p.returncode != 0:
        res["problems"].append(f"convert exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return res
    stem = src.stem
    raw = src.read_text(encoding="utf-8")
    res["detected_language"] = _detect_language(parse_document(split_raw_pages(raw)).text())  # as convert does
    res["language_ok"] = res["detected_language"] == lang
    # tex
    d = out / "tex"
    d.mkdir()
    shutil.copy(out / f"{stem}.tex", d / f"{stem}.tex")
    t0 = time.perf_counter()
    c = subprocess.run(["xelatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", f"{stem}.tex"],
                       cwd=d, capture_output=True, timeout=300)
    res["xelatex_s"] = round(time.perf_counter() - t0, 2)
    res["tex_ok"] = c.returncode == 0 and (d / f"{stem}.pdf").exists()
    log = (d / f"{stem}.log").read_text(encoding="utf-8", errors="replace") if (d / f"{stem}.log").exists() else ""
    res["missing_glyphs"] = log.count("Missing character")
    tex = (out / f"{stem}.tex").read_text(encoding="utf-8")
    res["verbatim_math"] = tex.count("\\texttt{\\$")
    if not res["tex_ok"]:
        res["problems"].append("xelatex failed: " + " | ".join(ln for ln in log.splitlines() if ln.startswith("!"))[:300])
    for frag in exp.get("tex_contains", []):
        if frag not in tex:
            res["problems"].append(f"tex lacks {frag!r}")
    # tables
    wb = openpyxl.load_workbook(out / f"{stem}.xlsx")
    csvs = sorted(x.name for x in out.glob(f"{stem}.table-*.csv"))
    res["tables"] = len(exp["tables"])
    res["tables_ok"] = 0
    if len(csvs) != len(exp["tables"]):
        res["problems"].append(f"{len(csvs)} CSV files for {len(exp['tables'])} tables")
    for t in exp["tables"]:
        ok = True
        page, n = t["sheet"][1:].split("-t")
        name = f"{stem}.table-{page}-{n}.csv"
        grid = t["grid"]
        if not (out / name).exists():
            res["problems"].append(f"{name} missing")
            continue
        rows = list(csv.reader(io.StringIO((out / name).read_text(encoding="utf-8"), newline="")))
        if rows != grid:
            ok = False
            res["problems"].append(f"{name}: grid differs: got {rows} want {grid}")
        if t["sheet"] not in wb.sheetnames:
            res["problems"].append(f"sheet {t['sheet']} missing")
            continue
        ws = wb[t["sheet"]]
        merged = sorted(str(r) for r in ws.merged_cells.ranges)
        if merged != sorted(t["merged"]):
            ok = False
            res["problems"].append(f"{t['sheet']}: merged {merged} want {sorted(t['merged'])}")
        covered = set()
        for rng in ws.merged_cells.ranges:
            for r in range(rng.min_row, rng.max_row + 1):
                for col in range(rng.min_col, rng.max_col + 1):
                    if (r, col) != (rng.min_row, rng.min_col):
                        covered.add((r, col))
        for r, row in enumerate(grid, start=1):
            for col, want in enumerate(row, start=1):
                if (r, col) in covered:
                    continue
                cell = ws.cell(row=r, column=col)
                v = cell.value
                if cell.coordinate in t["numbers"]:
                    good = isinstance(v, (int, float)) and abs(v - t["numbers"][cell.coordinate]) < 1e-9
                elif isinstance(v, (int, float)):
                    ref = ref_number(want, lang)  # not listed: compare with a simple independent reading
                    good = ref is not None and abs(v - ref) < 1e-9
                else:
                    good = (v or "") == want
                if not good:
                    ok = False
                    res["problems"].append(f"{t['sheet']}!{cell.coordinate}: got {v!r} want {want!r}")
        res["tables_ok"] += ok
    # md round trip: the written .md parses to the same tables
    doc = parse_document(split_raw_pages(raw), language=lang)
    again = parse_document(split_raw_pages((out / f"{stem}.md").read_text(encoding="utf-8")), language=lang)
    res["md_tables_roundtrip"] = [t for _, _, t in doc.tables()] == [t for _, _, t in again.tables()]
    if not res["md_tables_roundtrip"]:
        res["problems"].append("md tables do not parse back the same")
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", type=Path, help="keep the outputs in this folder")
    ap.add_argument("--set", type=Path, default=HELDOUT, help="folder with the outputs and expected.json")
    args = ap.parse_args()
    heldout = args.set.resolve()
    expected = json.loads((heldout / "expected.json").read_text(encoding="utf-8"))
    base = Path(tempfile.mkdtemp(prefix="eval-outputs-")) if not args.keep else args.keep
    results = []
    for name in sorted(k for k in expected if not k.startswith("_")):
        out = base / Path(name).stem
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        results.append(check_file(heldout / name, expected[name], out))
    if not args.keep:
        shutil.rmtree(base)
    n = len(results)
    tex_ok = sum(r.get("tex_ok", False) for r in results)
    tables = sum(r.get("tables", 0) for r in results)
    tables_ok = sum(r.get("tables_ok", 0) for r in results)
    lang_ok = sum(r.get("language_ok", False) for r in results)
    md_ok = sum(r.get("md_tables_roundtrip", False) for r in results)
    print("| file | tex | tables ok | md tables | language | missing glyphs | verbatim math | xelatex s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['file']} | {'ok' if r.get('tex_ok') else 'FAIL'} | {r.get('tables_ok', 0)}/{r.get('tables', 0)} | "
              f"{'ok' if r.get('md_tables_roundtrip') else 'FAIL'} | {r.get('detected_language')} | "
              f"{r.get('missing_glyphs')} | {r.get('verbatim_math')} | {r.get('xelatex_s')} |")
    print()
    print(f"documents: {n}; .tex compiling: {tex_ok}/{n} ({100 * tex_ok / n:.0f}%); "
          f"tables preserved in CSV+XLSX: {tables_ok}/{tables} ({100 * tables_ok / max(1, tables):.0f}%); "
          f"md tables round trip: {md_ok}/{n}; language detected: {lang_ok}/{n}")
    problems = [(r["file"], p) for r in results for p in r["problems"]]
    for f, p in problems:
        print(f"- {f}: {p}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
