"""The ``low_confidence`` flag's precision and recall, and the output checks' cost (issue 32).

Pages with known text are drawn and degraded on purpose (tests/qualitygen.py: clean, blur,
heavy noise, ~50 dpi, turned 90 degrees, a handwriting-like face, CJK in vertical columns),
read by ``ocr-daemon once`` (Tesseract, the real pipeline: render, OSD, engine, finish), and each
page's sidecar confidence figure is compared with its real word recall (the multiset word recall
of bench/realdocs/evaluate.py against the drawn text). A page is *bad* when its recall is < 0.8
(the issue's line); the flag should be on every bad page (recall) and on few good ones
(precision).

- ``--set tune``: the texts of tests/data/corpus.yaml; the threshold is chosen here: the best F1
  of the flag against the bad pages, in the middle of the run of thresholds that reach it (the
  lowest with recall >= ``--want-recall`` when one is as good). ``review_at`` counts a page as
  caught when it is flagged *or* one of its output checks failed (both make ``review``).
- ``--set holdout``: bench/data/heldout_v3.yaml, never used to choose: reported at the threshold
  given by ``--threshold`` (the default of ``quality.min_confidence``), or the tune set's.
- ``--realdocs DIR``: also the real pages of bench/realdocs rasterised by its fetch.py (``scan-*``
  of the same split, from fetch.py's cache ``DIR``), each page's truth the text of the PDF page
  it was made from.
- The output checks' cost: the sidecar's ``timings.checks`` (the confidence figures, the
  checks of the PDF's text layer, the tables and the txt, and a PDF placed again), per page.

    .venv/bin/python bench/bench_flags.py --set tune --out bench/results/flags-tune.json
    .venv/bin/python bench/bench_flags.py --set holdout --threshold 76
    .venv/bin/python bench/bench_flags.py --set tune --limit 0 --realdocs ~/.cache/ocr-daemon/realdocs --out real.json
    .venv/bin/python bench/bench_flags.py --rescore flags-tune.json real.json --threshold 40

Writes a JSON file of per-page rows and a summary; prints the summary table.
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
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench" / "realdocs"))
sys.path.insert(0, str(REPO))

import qualitygen  # noqa: E402
from evaluate import word_recall  # noqa: E402

SETS = {"tune": REPO / "tests" / "data" / "corpus.yaml", "holdout": REPO / "bench" / "data" / "heldout_v3.yaml"}
BAD_BELOW = 0.8
CJK = {"zh", "ja"}


def texts(which: str) -> list[tuple[str, str, str]]:
    """(name, language, text) of a set, in file order."""
    data = yaml.safe_load(SETS[which].read_text(encoding="utf-8"))
    out = []
    for doctype, by_lang in data.items():
        for lang, text in by_lang.items():
            out.append((f"{doctype}-{lang}", lang, text))
    return out


def plan(which: str, limit: int | None, only: set[str] | None = None) -> list[tuple[str, str, str, str]]:
    """(file stem, kind, language, text): each text once, degraded by one kind in turn (CJK
    texts take every kind, Latin ones all but ``tategaki``)."""
    rows = []
    latin_kinds = [k for k in qualitygen.KINDS if k != "tategaki"]
    n_cjk = n_lat = 0
    for name, lang, text in texts(which):
        if lang in CJK:
            kind = qualitygen.KINDS[n_cjk % len(qualitygen.KINDS)]
            n_cjk += 1
        else:
            kind = latin_kinds[n_lat % len(latin_kinds)]
            n_lat += 1
        rows.append((f"{name}-{kind}", kind, lang, text))
    rows = rows[:limit] if limit is not None else rows
    return [r for r in rows if not only or r[0] in only]


def realdocs_scans(which: str, folder: Path, work: Path) -> dict[str, tuple[Path, str, list[str]]]:
    """The set's rasterised pages of bench/realdocs (``scan-*``, the ``which`` split) in
    ``folder`` (fetch.py's cache): id -> (file, language, the text of each page, from the PDF
    the page was rasterised from)."""
    import gzip

    import fetch
    import pymupdf

    src = fetch.load_sources(REPO / "bench" / "realdocs" / "sources.yaml")
    out = {}
    for d in src["documents"]:
        if not d["id"].startswith("scan-") or d["split"] != which or not (folder / d["file"]).exists():
            continue
        name, _, version = d["origin"]["debian"].partition("=")
        deb = fetch.fetch_debian(name, version, folder / "_packages" / "debian")
        raw = fetch.extract_member(deb, "debian", d["origin"]["path"], work)
        if d["origin"]["path"].endswith(".gz"):
            raw = gzip.decompress(raw)
        with pymupdf.open(stream=raw, filetype="pdf") as fz:
            out[d["id"]] = (folder / d["file"], d["labels"]["language"], [fz[p].get_text() for p in d["pages"]])
    return out


def run(which: str, limit: int | None, work: Path, realdocs: Path | None = None,
        only: set[str] | None = None) -> list[dict]:
    inbox, out = work / "inbox", work / "out"
    inbox.mkdir(parents=True)
    seeds = {r[0]: i for i, r in enumerate(plan(which, None))}  # a page's seed is its place in the whole set
    pages = plan(which, limit, only)
    truth: dict[str, tuple[str, str, str]] = {}
    for stem, kind, lang, text in pages:
        qualitygen.page(text, kind, seed=seeds[stem], lang=lang).save(inbox / f"{stem}.png")
        truth[stem] = (kind, lang, text)
    (work / "debs").mkdir()
    real = realdocs_scans(which, realdocs, work / "debs") if realdocs else {}
    for path, lang, page_texts in real.values():
        (inbox / path.name).write_bytes(path.read_bytes())
        for k, text in enumerate(page_texts):
            truth[f"{path.stem}#{k}"] = ("realdocs", lang, text)
    rules = work / "rules.yaml"
    rules.write_text(yaml.safe_dump({
        "daemon": {"state_dir": str(work / "state"), "failed_dir": str(work / "failed"), "http": None},
        "engine": {"kind": "tesseract"},
        "inboxes": [{"path": str(inbox)}],
        "quality": {"min_confidence": 0},  # the figure is what is measured; no flag needed here
        "routes": [{"name": "all", "destination": str(out), "formats": ["txt", "json", "pdf", "csv"]}],
    }), encoding="utf-8")
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "daemon", "once", *sorted(map(str, inbox.iterdir())),
                    "--config", str(rules)], env=env, check=False, capture_output=True, cwd=REPO)
    print(f"{len(pages)} pages read in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return score_outputs(out, truth)


def score_outputs(out: Path, truth: dict[str, tuple[str, str, str]]) -> list[dict]:
    """The rows of the pages in ``truth`` from the outputs in ``out``."""
    rows = []
    for key, (kind, lang, text) in truth.items():
        stem, _, k = key.partition("#")
        index = int(k or 0)
        side_path = out / f"{stem}.json"
        if not side_path.exists():
            rows.append({"page": key, "kind": kind, "lang": lang, "error": "no sidecar"})
            continue
        side = json.loads(side_path.read_text(encoding="utf-8"))
        p = side["pages"][index]
        conf = p.get("confidence")
        rec = word_recall(text, hypothesis(out, stem, side, index))
        rows.append({
            "page": key, "kind": kind, "lang": lang, "recall": None if rec is None else round(rec, 3),
            "confidence": None if conf is None else conf["value"], "engine": None if conf is None else conf["engine"],
            "wordlike": None if conf is None else conf["wordlike"], "rotation": p.get("rotation"),
            "checks": p.get("checks", []), "check_seconds": (side.get("timings") or {}).get("checks"),
        })
    return rows


def hypothesis(out: Path, stem: str, side: dict, index: int) -> str:
    """What the reader gets of a page: its page of the txt output (pages split at form feeds);
    the raw page text would count a table's HTML tags glued to its words as misses."""
    txt = out / f"{stem}.txt"
    if txt.exists():
        pages = txt.read_text(encoding="utf-8").split("\f")
        return pages[index] if index < len(pages) else ""
    return (side.get("page_texts") or [""] * (index + 1))[index]


def scores(rows: list[dict], threshold: float, with_checks: bool = False) -> dict:
    """The flag (``with_checks``: the flag or a failed output check on the page, i.e. the page
    makes its document ``review``) against the bad pages."""
    judged = [r for r in rows if r.get("recall") is not None]
    bad = [r for r in judged if r["recall"] < BAD_BELOW]
    flagged = [r for r in judged if (r["confidence"] is not None and r["confidence"] < threshold)
               or (with_checks and any(not c["ok"] for c in r.get("checks", [])))]
    hit = [r for r in flagged if r["recall"] < BAD_BELOW]
    return {"threshold": threshold, "pages": len(judged), "bad": len(bad), "flagged": len(flagged),
            "true_flags": len(hit), "precision": round(len(hit) / len(flagged), 3) if flagged else None,
            "recall": round(len(hit) / len(bad), 3) if bad else None,
            "bad_unflagged": [r["page"] for r in bad if r not in hit],
            "good_flagged": [r["page"] for r in flagged if r not in hit]}


def _f1(s: dict) -> float:
    p, r = s["precision"] or 0.0, s["recall"] or 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def choose(rows: list[dict], want: float) -> float:
    """The threshold (whole points) of the best F1 of the flag on this set: the middle of the run
    of thresholds that reach it (as far from the bad pages' figures as from the good ones'), or
    the lowest one whose recall is >= ``want`` when that has an F1 as good."""
    f1 = {t: _f1(scores(rows, float(t))) for t in range(0, 101)}
    best = max(f1.values())
    if best == 0.0:
        return 0.0
    top = [t for t, v in f1.items() if v == best]
    for t in range(0, 101):
        s = scores(rows, float(t))
        if s["recall"] is not None and s["recall"] >= want and f1[t] == best:
            return float(t)
    run = [top[0]]
    for t in top[1:]:  # the first unbroken run of best thresholds
        if t != run[-1] + 1:
            break
        run.append(t)
    return float(round((run[0] + run[-1]) / 2))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=sorted(SETS), default="tune")
    ap.add_argument("--limit", type=int, default=None, help="only the first N generated pages (0: none)")
    ap.add_argument("--threshold", type=float, default=None, help="report at this threshold (default: chosen)")
    ap.add_argument("--want-recall", type=float, default=0.95)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--rescore", type=Path, nargs="+", default=None,
                    help="score the rows of earlier --out files again (together)")
    ap.add_argument("--from-outputs", type=Path, default=None, help="score a kept outputs folder of --set")
    ap.add_argument("--only", default="", help="only these generated pages (comma-separated names)")
    ap.add_argument("--realdocs", type=Path, default=None,
                    help="also the set's rasterised real pages (scan-*) from this fetch.py cache folder")
    a = ap.parse_args(argv)
    if a.from_outputs:  # the outputs of an earlier run, kept (generated pages only)
        truth = {stem: (kind, lang, text) for stem, kind, lang, text in plan(a.set, a.limit)}
        rows = score_outputs(a.from_outputs, truth)
    elif a.rescore:
        by_page: dict[str, dict] = {}  # a later file's row of a page replaces an earlier one's
        for f in a.rescore:
            by_page.update({r["page"]: r for r in json.loads(f.read_text(encoding="utf-8"))["rows"]
                            if "recall" in r or r["page"] not in by_page})  # an error row replaces nothing
        rows = list(by_page.values())
    else:
        with tempfile.TemporaryDirectory(prefix="bench-flags-") as tmp:
            rows = run(a.set, a.limit, Path(tmp), a.realdocs, set(a.only.split(",")) if a.only else None)
    chosen = choose(rows, a.want_recall)
    at = a.threshold if a.threshold is not None else chosen
    cost = [r["check_seconds"] for r in rows if r.get("check_seconds") is not None]
    summary = {
        "set": a.set, "chosen_threshold": chosen, "reported_at": scores(rows, at),
        "review_at": scores(rows, at, with_checks=True),
        "sweep": [scores(rows, float(t)) for t in (20, 30, 40, 50, 60, 70, 80)],
        "check_seconds_per_page": round(sum(cost) / len(cost), 4) if cost else None,
        "by_kind": {k: {"pages": len(g), "mean_recall": round(sum(r["recall"] for r in g) / len(g), 3),
                        "flagged_at": sum(1 for r in g if r["confidence"] is not None and r["confidence"] < at)}
                    for k in (*qualitygen.KINDS, "realdocs")
                    if (g := [r for r in rows if r.get("kind") == k and r.get("recall") is not None])},
    }
    print(json.dumps(summary, indent=1))
    if a.out:
        a.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
