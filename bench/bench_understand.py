"""Issue 15 items 2-4 on real pages and small print: render resolution, orientation, languages.

Real pages come from PDFs you fetch yourself (never committed), e.g. Debian's manuals:

    mkdir -p /tmp/real && cd /tmp/real && apt-get download debian-reference-{de,fr,es,it,pt,ja,zh-cn,zh-tw}
    for f in *.deb; do dpkg-deb --fsys-tarfile $f | tar -x --wildcards -O '*.pdf' > ${f%%_*}.pdf; done

Each real page's own text layer is the reference text (these are born-digital PDFs); the page is
rendered as an image and OCRed by the real Tesseract engine (``daemon.engines.tesseract``), so
the figures are OCR quality, not the text layer's.

    OMP_THREAD_LIMIT=1 python bench/bench_understand.py dpi    --pdfs /tmp/real [--pages 40,90] [--dpi 0,300]
    OMP_THREAD_LIMIT=1 python bench/bench_understand.py orient --pdfs /tmp/real [--pages 40,90]
    OMP_THREAD_LIMIT=1 python bench/bench_understand.py langs  --pdfs /tmp/real [--pages 40,90]

``dpi``: CER and s/page per resolution (0 = the VLM's 1540 px) on the real pages and on
generated invoices set in 5, 6, 7 and 9 pt (tests/docgen.py). ``orient``: every real page turned
0/90/180/270 through ``daemon.pages.orient.make_upright``: right, wrong, left as is. ``langs``: the
pages of several documents in one PDF (languages interleaved, as in a multi-language document)
through one engine with one ``doc_tag``: language per page (``daemon.language``) and,
for Chinese, the share of characters in the wrong script (simplified vs traditional).
Rows go to ``--out`` (JSONL) as well.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import docgen  # noqa: E402
import pymupdf  # noqa: E402
from renderopts import render_opts  # noqa: E402

from daemon.config import EngineCfg  # noqa: E402
from daemon.engines.base import PageRequest  # noqa: E402
from daemon.engines.tesseract import TesseractEngine  # noqa: E402
from daemon.pages.orient import make_upright  # noqa: E402
from daemon.pages.render import render_page  # noqa: E402

LANG_OF = {"de": "de", "fr": "fr", "es": "es", "it": "it", "pt": "pt", "ja": "ja", "zh-cn": "zh", "zh-tw": "zh",
           "en": "en", "nl": "nl", "sv": "sv", "da": "da"}

SMALL_PRINT = """Rechnung Nr. 2024-117 vom 14.03.2024
Kundennummer 448213, Lieferung an Lager 3, Bahnhofstraße 12, 80335 München
Pos. Artikel Menge Einzelpreis Betrag
1 Schraubendreher-Satz, 12-teilig 4 18,90 75,60
2 Wasserpumpenzange 250 mm 2 23,45 46,90
3 Kabelbinder schwarz 200 x 4,8 mm 10 3,15 31,50
Zwischensumme 154,00 EUR, zuzüglich 19 % Umsatzsteuer 29,26 EUR
Gesamtbetrag 183,26 EUR. Zahlbar innerhalb von 14 Tagen ohne Abzug.
Bankverbindung: Stadtsparkasse München, IBAN DE12 7015 0000 0012 3456 78
Es gelten unsere Allgemeinen Geschäftsbedingungen in der Fassung vom 1. Januar 2024."""


def _pdfs(folder: Path) -> list[tuple[str, Path]]:
    out = []
    for p in sorted(folder.glob("*.pdf")):
        code = p.stem.split(".")[-1].removeprefix("debian-reference-")
        out.append((code, p))
    return out


def _ref(pdf: Path, i: int) -> str:
    with pymupdf.open(str(pdf)) as d:
        return str(d[i].get_text())


def _engine() -> TesseractEngine:
    e = TesseractEngine(EngineCfg(kind="tesseract"))
    e.start()
    return e


def cmd_dpi(args: argparse.Namespace, rows: list[dict]) -> None:
    eng = _engine()
    cases: list[tuple[str, Path, int, str]] = []
    tmp = Path(args.tmp)
    tmp.mkdir(parents=True, exist_ok=True)
    for pt in (5, 6, 7, 9):
        pdf = docgen.make_pdf(tmp / f"small-{pt}pt.pdf", [SMALL_PRINT], font_size=pt)
        cases.append((f"invoice {pt}pt", pdf, 0, SMALL_PRINT))
    for code, pdf in _pdfs(Path(args.pdfs)):
        for i in args.pages:
            cases.append((f"{code} p{i + 1}", pdf, i, _ref(pdf, i)))
    try:
        for dpi in args.dpi:
            opts = render_opts(dpi=dpi or None, max_image_pixels=100_000_000)
            for name, pdf, i, ref in cases:
                t0 = time.process_time()
                page = render_page(pdf, i, opts)
                t1 = time.process_time()
                req = PageRequest(f"{name}@{dpi}", i, page.image, script=page.geometry.script)
                text = eng.recognize([req])[0].text
                t2 = time.process_time()
                row = {"bench": "dpi", "case": name, "dpi": dpi, "size": list(page.image.size),
                       "cer": round(docgen.cer(ref, text), 4), "render_cpu_s": round(t1 - t0, 2),
                       "ocr_cpu_s": round(t2 - t1, 2)}
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
    finally:
        eng.close()


def cmd_orient(args: argparse.Namespace, rows: list[dict]) -> None:
    for code, pdf in _pdfs(Path(args.pdfs)):
        for i in args.pages:
            page = render_page(pdf, i, render_opts(autorotate=False, max_image_pixels=100_000_000))
            for turn in (0, 90, 180, 270):
                img = page.image.rotate(turn, expand=True)  # content turned ccw by `turn`
                t0 = time.process_time()
                _out, rot = make_upright(img)
                secs = time.process_time() - t0
                want = turn  # PIL turns counter-clockwise: the clockwise turn `turn` undoes it
                verdict = "right" if rot == want else ("left" if rot == 0 else "wrong")
                row = {"bench": "orient", "case": f"{code} p{i + 1}", "turned": turn, "rotated_cw": rot,
                       "verdict": verdict, "cpu_s": round(secs, 2)}
                rows.append(row)
                print(json.dumps(row), flush=True)


def cmd_langs(args: argparse.Namespace, rows: list[dict]) -> None:
    from daemon.language import detect_language, han_variant_counts

    eng = _engine()
    try:
        for dpi in args.dpi:
            opts = render_opts(dpi=dpi or None, max_image_pixels=100_000_000)
            # One "document" whose pages alternate between the PDFs: the engine must not carry
            # one page's language over to the next.
            seq = [(code, pdf, i) for i in args.pages for code, pdf in _pdfs(Path(args.pdfs))]
            for k, (code, pdf, i) in enumerate(seq):
                page = render_page(pdf, i, opts)
                req = PageRequest(f"mixed@{dpi}", k, page.image, script=page.geometry.script)
                text = eng.recognize([req])[0].text
                lang, conf = detect_language(text)
                simp, trad = han_variant_counts(text)
                want = LANG_OF.get(code, code)
                row = {"bench": "langs", "case": f"{code} p{i + 1}", "dpi": dpi, "want": want, "got": lang,
                       "conf": conf, "simplified_only": simp, "traditional_only": trad,
                       "cer": round(docgen.cer(_ref(pdf, i), text), 4)}
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
    finally:
        eng.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["dpi", "orient", "langs"])
    ap.add_argument("--pdfs", default="/tmp/real", help="folder of real PDFs (see above)")
    ap.add_argument("--pages", default="40,90", help="0-based page numbers taken from each PDF")
    ap.add_argument("--dpi", default="0,300", help="render resolutions (0 = the VLM's 1540 px)")
    ap.add_argument("--tmp", default="/tmp/bench_understand")
    ap.add_argument("--out", type=Path, help="append the rows here (JSONL)")
    args = ap.parse_args()
    args.pages = [int(x) for x in args.pages.split(",")]
    args.dpi = [int(x) for x in args.dpi.split(",")]
    rows: list[dict] = []
    {"dpi": cmd_dpi, "orient": cmd_orient, "langs": cmd_langs}[args.what](args, rows)
    if args.out:
        with args.out.open("a") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
