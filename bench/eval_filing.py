"""Filing and dates on tests/data/filing_docs.yaml (issue 32 item 6): doctype and document date
accuracy of the shipped rules.yaml, on the ground-truth text and on Tesseract's reading of the
documents rendered as scans (bench/eval_classify.py's render + degrade), plus how many would be
filed unsure (margin under the routes' default ``min_margin``).

The documents are the ones written for issue 32 (letters in the 11 languages, time sheets, forms,
citation-bearing texts, quarterly reports, and the real kinds they must be told from). Classifies
as the daemon does (service.outputs.prepare_outputs): the document model's plain text.

Before/after on the same OCR text: run once with ``--save-ocr F`` here, then with another
checkout's interpreter and ``--load-ocr F`` (it imports that checkout's daemon and rules.yaml):
  OMP_THREAD_LIMIT=1 .venv/bin/python bench/eval_filing.py --ocr --save-ocr /tmp/filing-ocr.json
  /work/main/.venv/bin/python bench/eval_filing.py --load-ocr /tmp/filing-ocr.json
Results: bench/RESULTS.md, section "Filing and dates".
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DOCS: dict[str, dict[str, Any]] = yaml.safe_load((HERE.parent / "tests/data/filing_docs.yaml").read_text(encoding="utf-8"))


def score(texts: dict[str, str], label: str, verbose: bool) -> dict[str, Any]:
    import daemon
    from daemon.config import load_config
    from daemon.document.parse import parse_document
    from daemon.understand.classify import classify

    repo = Path(daemon.__file__).resolve().parents[1]
    cfg = load_config(repo / "rules.yaml")
    has_plain = "plain" in inspect.signature(classify).parameters
    min_margin = getattr(cfg.routes[0], "min_margin", None) if cfg.routes else None
    ok = dok = unsure_right = unsure_wrong = wrong_sure = 0
    for name, d in DOCS.items():
        t = texts[name]
        kw = {"plain": parse_document([t], markdown=False).text()} if has_plain else {}
        c = classify(t, cfg=cfg, filename="scan.pdf", pages=1, markdown=False, **kw)
        good, dgood = c.doctype == d["doctype"], c.doc_date == d["date"]
        ok += good
        dok += dgood
        if c.doctype != "other" and min_margin is not None:
            margin = c.doctype_scores[c.doctype] - c.doctype_thresholds[c.doctype]
            sure = margin >= min_margin
            unsure_right += good and not sure
            unsure_wrong += not good and not sure
            wrong_sure += not good and sure
        elif c.doctype != "other":
            wrong_sure += not good  # no gate: every filing acts
        if verbose and not (good and dgood):
            print(f"  {label} {name}: {c.doctype} (want {d['doctype']}), date {c.doc_date} (want {d['date']})")
    n = len(DOCS)
    out = {"label": label, "repo": str(repo), "n": n, "doctype_ok": ok, "date_ok": dok,
           "misfiled_acting": wrong_sure, "misfiled_held": unsure_wrong, "right_but_unsure": unsure_right}
    print(f"[{label}] {repo}: doctype {ok}/{n}, date {dok}/{n}; wrong doctype acted on {wrong_sure}, "
          f"wrong doctype held for review {unsure_wrong}, right but held for review {unsure_right}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ocr", action="store_true", help="also render each document as a scan and OCR it (Tesseract)")
    ap.add_argument("--save-ocr", type=Path, help="write the OCR texts here (JSON)")
    ap.add_argument("--load-ocr", type=Path, help="score these OCR texts instead of OCRing")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    score({k: d["text"] for k, d in DOCS.items()}, "text", args.verbose)
    ocr: dict[str, str] | None = None
    if args.load_ocr:
        ocr = json.loads(args.load_ocr.read_text(encoding="utf-8"))
    elif args.ocr:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from eval_classify import ocr_all

        names = list(DOCS)
        got = ocr_all([(DOCS[k]["lang"], DOCS[k]["doctype"], DOCS[k]["text"]) for k in names], degraded=True, threads=1)
        ocr = dict(zip(names, got, strict=True))
        if args.save_ocr:
            args.save_ocr.write_text(json.dumps(ocr, ensure_ascii=False, indent=1), encoding="utf-8")
    if ocr is not None:
        score(ocr, "scanned+OCR", args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
