"""The ``low_confidence`` flag on a calibration set with real pages (issue 32 item 5, its bar: no
scan read below 0.80 word recall without a flag).

The set (each page's truth known, a page is *bad* when its real word recall is < 0.8):

- generated: bench/bench_flags.py's tune pages (tests/data/corpus.yaml drawn and degraded by
  tests/qualitygen.py: clean, blur, noise, ~50 dpi, turned, handwriting-like, vertical CJK);
- real: every born-digital PDF page of bench/realdocs' **tune** split, rasterised here and
  "scanned" (tests/scangen.py) in three ways -- ``s150`` (an office feeder at 150 dpi), ``s75b``
  (75 dpi, blurred: a bad fax-like copy), ``s100n`` (100 dpi, heavy noise) -- each page's truth
  the text of the PDF page it was made from (PyMuPDF), plus realdocs' own rasterised tune
  scans (``scan-*``, bench_flags.realdocs_scans).

Read by ``ocr-daemon once`` (Tesseract, the whole pipeline) with ``quality.min_confidence: 0``
(nothing flagged; every signal recorded in the sidecar's ``confidence``). Rows keep each page's
figure, its signals and its txt, so rules can be scored again without reading anything
(``--rescore``). Reports, on the same rows: *before* (the figure under 76 alone, the rule at
aefb3c0) and *after* (as shipped: the figure under ``quality.min_confidence``'s default, 50, or
a signal of daemon.quality.signals).

    .venv/bin/python bench/bench_flag.py --out bench/results/2026-12-03/flag-calib.jsonl
    .venv/bin/python bench/bench_flag.py --rescore bench/results/2026-12-03/flag-calib.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench" / "realdocs"))
sys.path.insert(0, str(REPO))

import bench_flags  # noqa: E402
from evaluate import word_recall  # noqa: E402

from daemon.config.schema import MIN_CONFIDENCE  # noqa: E402
from daemon.quality import signals  # noqa: E402

BAD_BELOW = 0.8
OLD_THRESHOLD = 76.0
VARIANTS = ("s150", "s75b", "s100n")
VARIANTS_RUN = set(VARIANTS)  # --variants


def real_pages(cache: Path, inbox: Path | None) -> dict[str, tuple[str, str, str]]:
    """The born-digital tune pages of bench/realdocs rasterised and scanned into ``inbox`` (None:
    the truth only): {stem: (kind, language, truth)}."""
    import fetch
    import pymupdf
    from PIL import Image, ImageFilter
    from scangen import Scan, scan

    src = fetch.load_sources(REPO / "bench" / "realdocs" / "sources.yaml")
    out: dict[str, tuple[str, str, str]] = {}
    for d in src["documents"]:
        if d["split"] != "tune" or not d["labels"].get("born_digital") or not (cache / d["file"]).exists():
            continue
        with pymupdf.open(cache / d["file"]) as doc:
            for k, pg in enumerate(doc):
                truth = pg.get_text()
                if len(truth.split()) < 30:
                    continue
                for v, variant in enumerate(VARIANTS):
                    if variant not in VARIANTS_RUN:
                        continue
                    stem = f"{d['id']}-p{k}-{variant}"
                    out[stem] = (variant, d["labels"]["language"], truth)
                    if inbox is None:
                        continue
                    dpi = {"s150": 150, "s75b": 75, "s100n": 100}[variant]
                    pix = pg.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
                    img = Image.frombytes("L", (pix.width, pix.height), pix.samples).convert("RGB")
                    seed = hash((d["id"], k, v)) % 10_000
                    img = scan(img, seed=seed, kind=Scan(noise=55.0 if variant == "s100n" else 3.0,
                                                         dust=2500 if variant == "s100n" else 0, skew=0.4))
                    if variant == "s75b":
                        img = img.filter(ImageFilter.GaussianBlur(0.9))
                    img.save(inbox / f"{stem}.png", dpi=(dpi, dpi))
    return out


ONLY: set[str] = set()  # --only


def truths(work: Path, cache: Path | None, limit: int | None, draw: bool) -> dict[str, tuple[str, str, str]]:
    """The set's pages (drawn into ``work/inbox`` when ``draw``): {key: (kind, language, truth)}."""
    inbox = work / "inbox"
    truth: dict[str, tuple[str, str, str]] = {}
    seeds = {r[0]: i for i, r in enumerate(bench_flags.plan("tune", None))}
    for stem, kind, lang, text in bench_flags.plan("tune", limit, ONLY or None):
        if draw:
            bench_flags.qualitygen.page(text, kind, seed=seeds[stem], lang=lang).save(inbox / f"{stem}.png")
        truth[stem] = (kind, lang, text)
    if cache is not None:
        truth.update(real_pages(cache, inbox if draw else None))
        (work / "debs").mkdir(exist_ok=True)
        for path, lang, texts in bench_flags.realdocs_scans("tune", cache, work / "debs").values():
            if draw:
                (inbox / path.name).write_bytes(path.read_bytes())
            for k, text in enumerate(texts):
                truth[f"{path.stem}#{k}"] = ("realscan", lang, text)
    return truth


def read(work: Path, cache: Path | None, limit: int | None) -> list[dict]:
    inbox, outdir = work / "inbox", work / "out"
    inbox.mkdir(parents=True)
    truth = truths(work, cache, limit, draw=True)
    rules = work / "rules.yaml"
    rules.write_text(yaml.safe_dump({
        "daemon": {"state_dir": str(work / "state"), "failed_dir": str(work / "failed"), "http": None},
        "engine": {"kind": "tesseract"},
        "inboxes": [{"path": str(inbox)}],
        "quality": {"min_confidence": 0},
        "routes": [{"name": "all", "destination": str(outdir), "formats": ["txt", "json"]}],
    }), encoding="utf-8")
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "daemon", "once", *sorted(map(str, inbox.iterdir())), "--config", str(rules)],
                   env=dict(os.environ, OMP_THREAD_LIMIT="1"), check=False, capture_output=True, cwd=REPO)
    print(f"{len(truth)} pages read in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return collect(outdir, truth)


def collect(outdir: Path, truth: dict[str, tuple[str, str, str]]) -> list[dict]:
    """The rows of the pages of ``truth`` from the outputs in ``outdir``."""
    rows = []
    for key, (kind, lang, text) in truth.items():
        stem, _, k = key.partition("#")
        index = int(k or 0)
        side_path = outdir / f"{stem}.json"
        if not side_path.exists():
            rows.append({"page": key, "kind": kind, "lang": lang, "error": "no sidecar"})
            continue
        side = json.loads(side_path.read_text(encoding="utf-8"))
        hyp = bench_flags.hypothesis(outdir, stem, side, index)
        rec = word_recall(text, hyp)
        rows.append({"page": key, "kind": kind, "lang": lang, "doc_language": side.get("language"),
                     "recall": None if rec is None else round(rec, 3),
                     "confidence": side["pages"][index].get("confidence"), "text": hyp})
    return rows


def rejudge(row: dict) -> list[str]:
    """The signals as daemon.quality.signals judges them now, from a row's recorded figures and
    text (the dictionary share and the language worked out again; low_words as recorded)."""
    from daemon.language import UNKNOWN, detect_language

    conf = row["confidence"]
    placed = detect_language(row["text"])[0]
    lang = placed if placed != UNKNOWN else (row.get("doc_language") or "unknown")
    dictionary = signals.dictionary_share(row["text"], lang)
    row["dictionary"] = None if dictionary is None else round(dictionary, 3)
    row["page_language"] = placed
    return signals.judge(lang, dictionary, conf.get("low_words"), placed == UNKNOWN and signals.unplaced(row["text"]))


def score(rows: list[dict], flagged_if) -> dict:  # type: ignore[no-untyped-def]
    judged = [r for r in rows if r.get("recall") is not None]
    bad = {r["page"] for r in judged if r["recall"] < BAD_BELOW}
    flagged = {r["page"] for r in judged if flagged_if(r)}
    hit = bad & flagged
    return {"pages": len(judged), "bad": len(bad), "flagged": len(flagged), "true_flags": len(hit),
            "precision": round(len(hit) / len(flagged), 3) if flagged else None,
            "recall": round(len(hit) / len(bad), 3) if bad else None,
            "bad_unflagged": sorted(bad - flagged), "good_flagged": sorted(flagged - bad)}


def old_rule(r: dict) -> bool:
    return r["confidence"] is not None and r["confidence"]["value"] < OLD_THRESHOLD


def new_rule(r: dict) -> bool:
    return r["confidence"] is not None and (r["confidence"]["value"] < MIN_CONFIDENCE or bool(r.get("signals")))


def summarise(rows: list[dict]) -> dict:
    for r in rows:
        if r.get("confidence") is not None:
            r["signals"] = rejudge(r)
    out = {"before (figure < 76)": score(rows, old_rule), f"after (figure < {MIN_CONFIDENCE:.0f} or a signal)": score(rows, new_rule)}
    for part, keep in (("generated", lambda r: r["kind"] in bench_flags.qualitygen.KINDS),
                       ("real", lambda r: r["kind"] not in bench_flags.qualitygen.KINDS)):
        sub = [r for r in rows if keep(r)]
        out[f"{part}: before"] = score(sub, old_rule)
        out[f"{part}: after"] = score(sub, new_rule)
    for name in ("dictionary", "low_words", "language"):
        out[f"signal {name} alone"] = score(rows, lambda r, n=name: n in (r.get("signals") or []))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realdocs", type=Path, default=Path.home() / ".cache" / "ocr-daemon" / "realdocs")
    ap.add_argument("--limit", type=int, default=None, help="only the first N generated pages")
    ap.add_argument("--out", type=Path, default=None, help="the rows (jsonl) and the summary (.md beside)")
    ap.add_argument("--rescore", type=Path, default=None, help="score the rows of an earlier --out again")
    ap.add_argument("--outputs", type=Path, default=None, help="score the outputs folder of a run (the pages done)")
    ap.add_argument("--only", default="", help="only these generated pages (comma-separated names)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="the scanned variants of the real pages to read")
    a = ap.parse_args(argv)
    ONLY.update(n for n in a.only.split(",") if n)
    VARIANTS_RUN.clear()
    VARIANTS_RUN.update(v for v in a.variants.split(",") if v)
    if a.outputs:
        with tempfile.TemporaryDirectory(prefix="bench-flag-") as tmp:
            truth = truths(Path(tmp), a.realdocs if a.realdocs.exists() else None, a.limit, draw=False)
        rows = [r for r in collect(a.outputs, truth) if "error" not in r]
    elif a.rescore:
        rows = [json.loads(line) for line in a.rescore.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        with tempfile.TemporaryDirectory(prefix="bench-flag-") as tmp:
            rows = read(Path(tmp), a.realdocs if a.realdocs.exists() else None, a.limit)
    summary = summarise(rows)
    print(json.dumps(summary, indent=1, ensure_ascii=False))
    if a.out:
        a.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        a.out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
