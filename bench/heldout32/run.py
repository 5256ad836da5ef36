#!/usr/bin/env python3
"""Issue 32's held-out measurement: ocr-daemon beside OCRmyPDF on the same real documents, one run.

    python3 bench/heldout32/fetch.py                      # once: the documents, into ~/.cache/ocr-daemon/heldout32
    OMP_THREAD_LIMIT=1 .venv/bin/python bench/heldout32/run.py --out bench/results/DATE/heldout32-COMMIT

``--set DIR`` runs another set with the same machinery: DIR/sources.yaml, documents in
~/.cache/ocr-daemon/<DIR's name> (made by ``fetch.py --set DIR``), e.g. ``--set bench/heldout40``.

Sides, run document by document (the three sides of one document at the same time, so a change
in the machine's load falls on all of them alike; ``--serial``: one after the other), each side's processes in a cgroup v2 of their
own (bench/bench_ocrmypdf.py's ``Side``; CPU = ``cpu.stat`` usage_usec, read before and after
each call; where no cgroup can be made, RUSAGE_CHILDREN of the waited call):

- ``daemon``: ``ocr-daemon once --jsonl --hooks-wait 0 FILE --config RULES --engine tesseract``,
  RULES a temporary copy of REPO/rules.yaml (bench/realdocs/evaluate.py's ``make_rules``) whose
  every route writes every format (txt md json csv xlsx tex pdf) into a temporary folder and keeps
  its source; OMP_THREAD_LIMIT as in the environment (1 by default). Every document.
- ``ocrmypdf``: ``ocrmypdf -j 1 -l LANG --output-type pdf --sidecar OUT.txt IN OUT.pdf`` (images also
  ``--image-dpi DPI``); LANG from the document's label (chi_sim / jpn / ...). Scanned documents only.
- ``ocrmypdf-rd``: the same with ``--rotate-pages --deskew``. Scanned documents only.

Metrics (per document in the JSONL rows, aggregated in the summary):

- searchable-PDF word recall (scans): for each page, the output PDF page's text (PyMuPDF
  ``get_text()``) against the reference page text (the text layer of the born-digital page the scan
  was rasterised from, made by fetch.py), multiset word recall with bench/realdocs/evaluate.py's
  ``words`` (NFKC, case-folded, punctuation stripped, every CJK/kana character a word). A
  document's recall pools its pages (found / reference words). Summary: mean and min over scans.
- word order (scans): of the reference's adjacent word pairs (per page), the share found as
  adjacent pairs in the output PDF's text (multisets), pooled per document; mean over scans.
- CPU s per scanned page: the side's CPU over all scanned documents / their pages.
- formats (daemon): which of txt md json xlsx tex pdf were written (csv counted apart: only where a
  table was found), the output PDF's page count; "all formats" = all six and the page count right.
- doctype / language right (daemon): sidecar ``doctype`` / ``language`` against the labels
  (doctype lenient: also ``doctype_also_ok``).
- flags (daemon): per page ``pages[].flags`` (``low_confidence``) and ``pages[].degraded``; the
  document's ``review`` and ``degraded`` stages; the ``low_confidence`` flag's precision / recall
  against scanned pages whose PDF word recall < 0.80 ("bad pages"), and the same for "flag or a
  degraded stage"; and the issue's key count: scanned documents whose PDF recall < 0.80 with no
  ``low_confidence`` page flag and no degraded stage ("unflagged bad").
- also: the daemon's txt word recall (every document), born-digital PDF word recall, page
  rotations the daemon applied against the labels.

Writes OUT.jsonl (first line: metadata with commit, versions, settings, command; then one row per
document and side) and OUT.md (the summary table). ``--summary-only`` rebuilds OUT.md from OUT.jsonl.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "realdocs"))
sys.path.insert(0, str(HERE))

import fetch as heldout_fetch  # noqa: E402  (bench/heldout32/fetch.py)
import pymupdf  # noqa: E402
from bench_ocrmypdf import Side  # noqa: E402
from evaluate import ALL_FORMATS, make_rules, words  # noqa: E402  (bench/realdocs/evaluate.py)

TESS = {"zh": "chi_sim", "en": "eng", "ja": "jpn", "fr": "fra", "de": "deu", "es": "spa", "it": "ita",
        "nl": "nld", "pt": "por", "sv": "swe", "da": "dan"}
BAD_RECALL = 0.80  # the line: a scanned page/document below it must be flagged
SIDES = ("daemon", "ocrmypdf", "ocrmypdf-rd")


# ------------------------------------------------------------------------------------------ scoring

def recall_counts(ref: str, hyp: str) -> tuple[int, int]:
    r = collections.Counter(words(ref))
    h = collections.Counter(words(hyp))
    return sum((r & h).values()), sum(r.values())


def order_counts(ref: str, hyp: str) -> tuple[int, int]:
    """(reference adjacent word pairs found adjacent in hyp, reference pairs), on multisets."""
    rw, hw = words(ref), words(hyp)
    r = collections.Counter(zip(rw, rw[1:], strict=False))
    h = collections.Counter(zip(hw, hw[1:], strict=False))
    return sum((r & h).values()), sum(r.values())


def pdf_page_texts(path: Path | None) -> list[str] | None:
    if path is None or not path.is_file():
        return None
    try:
        with pymupdf.open(path) as d:
            return [p.get_text() for p in d]
    except Exception:  # noqa: BLE001 - an unreadable output scores as no text
        return None


def score_pdf(refs: list[str], texts: list[str] | None) -> dict[str, Any]:
    """Per-page and pooled recall / word order of an output PDF's text layer against the references."""
    if texts is None:
        texts = []
    if len(texts) != len(refs):  # page counts differ: score the whole text against the whole reference
        joined = "\n".join(texts)
        per_page = [recall_counts(r, joined if i == 0 else "") for i, r in enumerate(refs)]
        orders = [order_counts("\n".join(refs), joined)]
        page_ok = False
    else:
        per_page = [recall_counts(r, t) for r, t in zip(refs, texts, strict=True)]
        orders = [order_counts(r, t) for r, t in zip(refs, texts, strict=True)]
        page_ok = True
    found, total = sum(f for f, _ in per_page), sum(t for _, t in per_page)
    ofound, ototal = sum(f for f, _ in orders), sum(t for _, t in orders)
    return {"pdf_recall": round(found / total, 4) if total else None,
            "pdf_page_recall": [round(f / t, 4) if t else None for f, t in per_page] if page_ok else None,
            "word_order": round(ofound / ototal, 4) if ototal else None,
            "pdf_pages_got": len(texts)}


# ------------------------------------------------------------------------------------------ running

def run_call(side: Side, argv: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str, float, float]:
    """(rc, stdout, stderr tail, wall s, CPU s) of one call inside the side's cgroup."""
    c0 = side.cpu_s()
    t0 = time.monotonic()
    proc = subprocess.Popen(side.argv(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True, text=True, errors="replace")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err = (err or "") + f"\nTIMEOUT after {timeout} s"
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    wall = time.monotonic() - t0
    side.wait_empty(30)
    return proc.returncode, out or "", (err or "")[-1500:], wall, side.cpu_s() - c0


def run_daemon(doc: dict, path: Path, refs: list[str], side: Side, tmp: Path, rules: Path, args) -> dict[str, Any]:
    dst = tmp / "inbox" / path.name
    shutil.copyfile(path, dst)
    argv = [*args.daemon_cmd, "once", "--jsonl", "--hooks-wait", "0", str(dst), "--config", str(rules),
            "--engine", "tesseract"]
    env = dict(os.environ)
    env.setdefault("OMP_THREAD_LIMIT", "1")
    rc, out, err, wall, cpu = run_call(side, argv, env, args.timeout)
    rec: dict[str, Any] = {}
    for line in out.splitlines():
        with contextlib.suppress(ValueError):
            r = json.loads(line)
            if isinstance(r, dict) and "source" in r:
                rec = r
    outputs = [Path(o) for o in rec.get("outputs") or []]
    stem = path.stem
    by_ext = {o.suffix.lstrip("."): o for o in outputs}
    pdf = next((o for o in outputs if o.suffix == ".pdf"), None)
    sidecar_path = next((o for o in outputs if o.suffix == ".json"), None)
    csvs = sorted((tmp / "out").rglob(f"{stem}.table-*.csv"))
    side_doc: dict[str, Any] = {}
    if sidecar_path and sidecar_path.is_file():
        side_doc = json.loads(sidecar_path.read_text(encoding="utf-8"))
    labels = doc["labels"]
    row: dict[str, Any] = {"rc": rc, "state": rec.get("state"), "seconds": round(wall, 2), "cpu_s": round(cpu, 2),
                           "error": rec.get("error") or (err[-600:] if rc else None)}
    formats = {f: f in by_ext and by_ext[f].is_file() for f in ("txt", "md", "json", "xlsx", "tex", "pdf")}
    texts = pdf_page_texts(pdf)
    row["formats"] = formats
    row["csv_count"] = len(csvs)
    row["xlsx"] = formats["xlsx"]
    row["pdf_pages_ok"] = texts is not None and len(texts) == len(refs)
    row["all_formats_ok"] = all(formats.values()) and row["pdf_pages_ok"] and rec.get("state") == "done"
    row.update(score_pdf(refs, texts))
    txt = by_ext.get("txt")
    if txt and txt.is_file():
        f, t = recall_counts("\n".join(refs), txt.read_text(encoding="utf-8", errors="replace"))
        row["txt_recall"] = round(f / t, 4) if t else None
    row["language"] = side_doc.get("language")
    row["doctype"] = side_doc.get("doctype")
    row["doctype_scores"] = side_doc.get("doctype_scores")
    row["language_ok"] = row["language"] == labels["language"]
    row["doctype_ok"] = row["doctype"] == labels["doctype"]
    row["doctype_ok_lenient"] = row["doctype_ok"] or row["doctype"] in (labels.get("doctype_also_ok") or [])
    pages = [p for p in side_doc.get("pages") or [] if isinstance(p, dict)]
    row["page_flags"] = [list(p.get("flags") or []) for p in pages]
    row["page_degraded"] = [[d.get("stage") for d in p.get("degraded") or []] for p in pages]
    row["page_rotation"] = [p.get("rotation") for p in pages]
    row["page_source"] = [p.get("source") for p in pages]
    row["page_confidence"] = [(p.get("meta") or {}).get("confidence") for p in pages]
    row["review"] = side_doc.get("review")
    row["degraded"] = sorted({d.get("stage") for d in side_doc.get("degraded") or []})
    row["pdf_placement"] = [p.get("placement") for p in ((side_doc.get("pdf") or {}).get("pages") or [])]
    row["low_confidence"] = any("low_confidence" in f for f in row["page_flags"])
    row["any_degraded"] = bool(row["degraded"]) or any(row["page_degraded"])
    return row


def run_ocrmypdf(doc: dict, path: Path, refs: list[str], side: Side, tmp: Path, args, extra: list[str]) -> dict[str, Any]:
    labels = doc["labels"]
    lang = TESS[labels["language"]]
    if labels["language"] == "zh" and labels.get("zh_script") == "traditional":
        lang = "chi_tra"
    name = side_name = "ocrmypdf-rd" if extra else "ocrmypdf"
    out = tmp / name
    out.mkdir(exist_ok=True)
    pdf = out / f"{path.stem}.pdf"
    argv = [args.ocrmypdf, "-j", "1", "-l", lang, *extra, "--output-type", "pdf",
            "--sidecar", str(out / f"{path.stem}.txt")]
    if path.suffix.lower() in (".png", ".jpg", ".jpeg"):
        argv += ["--image-dpi", str(doc["scan"]["dpi"])]
    argv += [str(path), str(pdf)]
    env = {k: v for k, v in os.environ.items() if k != "OMP_THREAD_LIMIT"}  # OCRmyPDF sets it (-j 1: 1)
    rc, _out, err, wall, cpu = run_call(side, argv, env, args.timeout)
    row: dict[str, Any] = {"rc": rc, "state": "done" if rc == 0 else "failed", "seconds": round(wall, 2),
                           "cpu_s": round(cpu, 2), "error": err[-600:] if rc else None, "side_argv": side_name}
    row.update(score_pdf(refs, pdf_page_texts(pdf)))
    return row


# ------------------------------------------------------------------------------------------ summary

def _mean(xs: list[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return round(sum(v) / len(v), 4) if v else None


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    s: dict[str, Any] = {}
    for side in SIDES:
        rs = [r for r in rows if r["side"] == side]
        scans = [r for r in rs if r["scanned"]]
        pages = sum(r["pages"] for r in scans)
        rec = [r.get("pdf_recall") for r in scans]
        d: dict[str, Any] = {
            "documents": len(rs), "done": sum(r.get("state") == "done" for r in rs),
            "scans": len(scans), "scan_pages": pages,
            "scan_pdf_recall_mean": _mean(rec),
            "scan_pdf_recall_min": min((x if x is not None else 0.0) for x in rec) if rec else None,
            "scan_word_order_mean": _mean([r.get("word_order") for r in scans]),
            "scan_cpu_s": round(sum(r["cpu_s"] for r in scans), 1),
            "scan_cpu_s_per_page": round(sum(r["cpu_s"] for r in scans) / pages, 2) if pages else None,
            "scan_wall_s_per_page": round(sum(r["seconds"] for r in scans) / pages, 2) if pages else None,
            "scans_below_080": sum(1 for x in rec if (x or 0.0) < BAD_RECALL),
        }
        if side == "daemon":
            born = [r for r in rs if not r["scanned"]]
            d["born_digital_pdf_recall_mean"] = _mean([r.get("pdf_recall") for r in born])
            d["born_digital_word_order_mean"] = _mean([r.get("word_order") for r in born])
            d["txt_recall_mean"] = _mean([r.get("txt_recall") for r in rs])
            d["all_formats_ok"] = sum(bool(r.get("all_formats_ok")) for r in rs)
            d["doctype_ok"] = sum(bool(r.get("doctype_ok")) for r in rs)
            d["doctype_ok_lenient"] = sum(bool(r.get("doctype_ok_lenient")) for r in rs)
            d["language_ok"] = sum(bool(r.get("language_ok")) for r in rs)
            d["doctype_confusion"] = dict(collections.Counter(f"{r['expected_doctype']} -> {r.get('doctype')}"
                                                              for r in rs if not r.get("doctype_ok")))
            d["review_documents"] = sum(bool(r.get("review")) for r in rs)
            d["low_confidence_pages"] = sum(sum("low_confidence" in f for f in r.get("page_flags") or []) for r in rs)
            d["degraded_stages"] = dict(collections.Counter(x for r in rs for x in
                                                            (r.get("degraded") or []) + [y for p in r.get("page_degraded") or [] for y in p]))
            d["unflagged_bad_scans"] = [r["id"] for r in scans if (r.get("pdf_recall") or 0.0) < BAD_RECALL
                                        and not r.get("low_confidence") and not r.get("any_degraded")]
            d["unflagged_bad_scans_count"] = len(d["unflagged_bad_scans"])
            d["flag"] = flag_quality(scans, with_degraded=False)
            d["flag_or_degraded"] = flag_quality(scans, with_degraded=True)
            rot = [(r["id"], r["expected_rotation"], r.get("page_rotation")) for r in scans if r["expected_rotation"]]
            # the label says how far the content is turned clockwise; the sidecar's rotation is the
            # clockwise turn the daemon applied to make it upright: right when they add up to 360
            d["turned_scans_rotation_right"] = sum(1 for _, e, got in rot if got and all(g == (360 - e) % 360 for g in got))
            d["turned_scans"] = len(rot)
        s[side] = d
    return s


def flag_quality(scans: list[dict[str, Any]], with_degraded: bool) -> dict[str, Any]:
    """Precision / recall of a page's flag against the scanned pages whose PDF recall < 0.80."""
    tp = fp = fn = tn = 0
    for r in scans:
        recalls = r.get("pdf_page_recall") or [r.get("pdf_recall")] * r["pages"]
        flags = r.get("page_flags") or []
        degr = r.get("page_degraded") or []
        for i, rec in enumerate(recalls):
            flagged = i < len(flags) and "low_confidence" in flags[i]
            if with_degraded:
                flagged = flagged or (i < len(degr) and bool(degr[i])) or bool(r.get("degraded"))
            bad = (rec or 0.0) < BAD_RECALL
            tp += flagged and bad
            fp += flagged and not bad
            fn += bad and not flagged
            tn += not bad and not flagged
    return {"bad_pages": tp + fn, "flagged_pages": tp + fp, "tp": tp, "fp": fp, "fn": fn,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None}


def markdown(meta: dict[str, Any], s: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    d, o, rd = s["daemon"], s.get("ocrmypdf", {}), s.get("ocrmypdf-rd", {})
    n = d["documents"]

    def g(x: dict, k: str) -> str:
        v = x.get(k)
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)
    lines = [f"# Issue 32 held-out set {meta.get('set', 'heldout32')}: {n} documents ({d['scans']} scanned, {d['scan_pages']} scanned pages)", "",
             f"- date: {meta['date']}, machine: {meta['machine']}, load at start: {meta['loadavg_start']}",
             f"- ocr-daemon commit: {meta['commit']}{meta['dirty']}; engine tesseract; every format {ALL_FORMATS}",
             f"- versions: {meta['versions']}", f"- command: `{meta['command']}`",
             f"- CPU: {meta['cpu_method']}", "",
             "| | ocr-daemon | OCRmyPDF `-l` | OCRmyPDF `--rotate-pages --deskew` |", "|---|---|---|---|",
             f"| scans: searchable-PDF word recall, mean / min | {g(d, 'scan_pdf_recall_mean')} / {g(d, 'scan_pdf_recall_min')} "
             f"| {g(o, 'scan_pdf_recall_mean')} / {g(o, 'scan_pdf_recall_min')} | {g(rd, 'scan_pdf_recall_mean')} / {g(rd, 'scan_pdf_recall_min')} |",
             f"| scans: word order kept (adjacent word pairs found) | {g(d, 'scan_word_order_mean')} | {g(o, 'scan_word_order_mean')} "
             f"| {g(rd, 'scan_word_order_mean')} |",
             f"| CPU s per scanned page | {g(d, 'scan_cpu_s_per_page')} | {g(o, 'scan_cpu_s_per_page')} | {g(rd, 'scan_cpu_s_per_page')} |",
             f"| scans with PDF recall < 0.80 | {d['scans_below_080']}/{d['scans']} | {o.get('scans_below_080', '-')}/{o.get('scans', '-')} "
             f"| {rd.get('scans_below_080', '-')}/{rd.get('scans', '-')} |",
             f"| documents done | {d['done']}/{n} | {o.get('done', '-')}/{o.get('documents', '-')} | {rd.get('done', '-')}/{rd.get('documents', '-')} |",
             "", "ocr-daemon only:", "", "| metric | value |", "|---|---|",
             f"| done with every format (txt md json xlsx tex pdf, PDF page count right) | {d['all_formats_ok']}/{n} |",
             f"| doctype right (strict / lenient) | {d['doctype_ok']}/{n} / {d['doctype_ok_lenient']}/{n} |",
             f"| language right | {d['language_ok']}/{n} |",
             f"| **scanned documents with PDF recall < 0.80 and no low_confidence flag nor degraded stage** | "
             f"**{d['unflagged_bad_scans_count']}** ({', '.join(d['unflagged_bad_scans']) or 'none'}) |",
             f"| `low_confidence` flag vs scanned pages with recall < 0.80: precision / recall | {g(d['flag'], 'precision')} / "
             f"{g(d['flag'], 'recall')} (bad pages {d['flag']['bad_pages']}, flagged {d['flag']['flagged_pages']}) |",
             f"| flag or degraded stage: precision / recall | {g(d['flag_or_degraded'], 'precision')} / {g(d['flag_or_degraded'], 'recall')} |",
             f"| documents with review: true / pages flagged low_confidence | {d['review_documents']} / {d['low_confidence_pages']} |",
             f"| degraded stages | {d['degraded_stages'] or 'none'} |",
             f"| turned scans turned upright (sidecar rotation = 360 - label) | {d['turned_scans_rotation_right']}/{d['turned_scans']} |",
             f"| born-digital: PDF word recall / word order (mean) | {g(d, 'born_digital_pdf_recall_mean')} / {g(d, 'born_digital_word_order_mean')} |",
             f"| txt word recall (mean, every document) | {g(d, 'txt_recall_mean')} |",
             f"| doctype misses (label -> got) | {d['doctype_confusion'] or 'none'} |",
             "", "Per document (PDF recall / word order; daemon: doctype, flags):", "",
             "| id | kind | pages | daemon | OCRmyPDF -l | OCRmyPDF -rd | daemon doctype exp/got | lang exp/got | turn needed/applied | flags / degraded | formats |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    by = collections.defaultdict(dict)
    for r in rows:
        by[r["id"]][r["side"]] = r
    for i, sides in by.items():
        dm = sides.get("daemon", {})

        def pr(r: dict | None) -> str:
            if not r:
                return "-"
            return f"{g(r, 'pdf_recall')} / {g(r, 'word_order')}"
        fl = ",".join(sorted({x for f in dm.get("page_flags") or [] for x in f})) or "-"
        dg = ",".join(sorted(set(dm.get("degraded") or []) | {y for p in dm.get("page_degraded") or [] for y in p})) or "-"
        fm = "all" if dm.get("all_formats_ok") else "missing " + ",".join(k for k, v in (dm.get("formats") or {}).items() if not v)
        lines.append(f"| {i} | {'scan' if dm.get('scanned') else 'born'} | {dm.get('pages')} | {pr(dm)} | {pr(sides.get('ocrmypdf'))} | "
                     f"{pr(sides.get('ocrmypdf-rd'))} | {dm.get('expected_doctype')}/{dm.get('doctype')} | "
                     f"{dm.get('expected_language')}/{dm.get('language')} | {(360 - int(dm.get('expected_rotation') or 0)) % 360}/"
                     f"{dm.get('page_rotation')} | "
                     f"{fl} / {dg}{' review' if dm.get('review') else ''} | {fm}; csv {dm.get('csv_count')} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ main

def _git(*a: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _versions(ocrmypdf: str) -> dict[str, str]:
    v = {"python": platform.python_version(), "pymupdf": pymupdf.VersionBind}
    for key, cmd in (("tesseract", ["tesseract", "--version"]), ("ocrmypdf", [ocrmypdf, "--version"]),
                     ("ghostscript", ["gs", "--version"])):
        with contextlib.suppress(OSError, subprocess.SubprocessError, IndexError):
            v[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.splitlines()[0].strip()
    return v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="path prefix: writes PREFIX.jsonl and PREFIX.md")
    ap.add_argument("--set", dest="set_dir", type=Path, default=HERE, help="set folder with sources.yaml (default: bench/heldout32)")
    ap.add_argument("--cache", type=Path, default=None, help="folder filled by fetch.py (default: ~/.cache/ocr-daemon/<set name>)")
    ap.add_argument("--daemon-cmd", default=str(REPO / ".venv" / "bin" / "ocr-daemon"))
    ap.add_argument("--ocrmypdf", default=str(REPO / ".venv-ocrmypdf" / "bin" / "ocrmypdf"))
    ap.add_argument("--sides", default=",".join(SIDES))
    ap.add_argument("--ids", default="", help="comma-separated document ids (default: all)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one call may take")
    ap.add_argument("--serial", dest="parallel_sides", action="store_false",
                    help="run the sides of a document one after the other (default: at the same time)")
    ap.add_argument("--summary-only", action="store_true", help="rebuild PREFIX.md from PREFIX.jsonl")
    args = ap.parse_args(argv)
    args.cache = args.cache or heldout_fetch.set_dest(args.set_dir)
    set_name = args.set_dir.resolve().name
    jsonl, md = Path(f"{args.out}.jsonl"), Path(f"{args.out}.md")
    if args.summary_only:
        lines = [json.loads(x) for x in jsonl.read_text(encoding="utf-8").splitlines() if x.strip()]
        meta, rows = lines[0]["meta"], lines[1:]
        md.write_text(markdown(meta, summarise(rows), rows), encoding="utf-8")
        print(md.read_text(encoding="utf-8"))
        return 0
    args.daemon_cmd = args.daemon_cmd.split()
    sides = [x for x in args.sides.split(",") if x]
    src = heldout_fetch.load_sources(args.set_dir)
    want = {i for i in args.ids.split(",") if i}
    docs = [d for d in src["documents"] if not want or d["id"] in want]
    missing = [d["id"] for d in docs if not (args.cache / d["file"]).exists() or not heldout_fetch.ref_path(args.cache, d).exists()]
    if missing:
        print(f"not in {args.cache}: {missing}; run bench/heldout32/fetch.py --set {args.set_dir} first", file=sys.stderr)
        return 2
    meta = {"set": set_name, "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.node()} {os.cpu_count()} CPUs", "loadavg_start": os.getloadavg(),
            "commit": _git("rev-parse", "HEAD"),
            # the daemon/ tree's hash: equal across commits that only change bench/ or docs
            "daemon_tree": _git("rev-parse", "HEAD:daemon"),
            "dirty": " (+ uncommitted changes in daemon/)" if _git("status", "--porcelain", "--", "daemon") else "",
            "versions": _versions(args.ocrmypdf), "omp_thread_limit": os.environ.get("OMP_THREAD_LIMIT", "1 (default)"),
            "command": " ".join(["bench/heldout32/run.py", *(sys.argv[1:] if argv is None else argv)]),
            "sides": {"daemon": " ".join(args.daemon_cmd) + " once --jsonl --hooks-wait 0 FILE --config RULES --engine tesseract"
                                f" (every route writes {ALL_FORMATS})",
                      "ocrmypdf": f"{args.ocrmypdf} -j 1 -l LANG --output-type pdf --sidecar OUT.txt [--image-dpi DPI] IN OUT.pdf",
                      "ocrmypdf-rd": f"{args.ocrmypdf} -j 1 -l LANG --rotate-pages --deskew --output-type pdf ..."},
            "documents": len(docs), "bad_recall": BAD_RECALL, "parallel_sides": args.parallel_sides}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    tmp = Path(tempfile.mkdtemp(prefix=f"{set_name}-run-"))
    side_objs = {name: Side(f"h32-{name}") for name in sides}
    meta["cpu_method"] = next(iter(side_objs.values())).method
    rows: list[dict[str, Any]] = []
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    try:
        rules = make_rules(REPO, tmp, ALL_FORMATS)
        with open(jsonl, "w", encoding="utf-8") as out:
            out.write(json.dumps({"meta": meta}, ensure_ascii=False) + "\n")
            for k, d in enumerate(docs, 1):
                path = args.cache / d["file"]
                refs = json.loads(heldout_fetch.ref_path(args.cache, d).read_text(encoding="utf-8"))
                scanned = bool(d.get("scan"))
                base = {"id": d["id"], "file": d["file"], "pages": len(refs), "scanned": scanned,
                        "expected_language": d["labels"]["language"], "expected_doctype": d["labels"]["doctype"],
                        "expected_rotation": d["labels"].get("rotation", 0), "vertical": d["labels"].get("vertical", False),
                        "has_table": d["labels"].get("has_table", False)}
                # OCRmyPDF is compared on the scans only (a born-digital PDF has its text)
                todo = [n for n in sides if n == "daemon" or scanned]
                if not todo:  # an OCRmyPDF-only run has nothing to do on a born-digital document
                    continue

                def one(name: str, d=d, path=path, refs=refs) -> dict[str, Any]:
                    if name == "daemon":
                        return run_daemon(d, path, refs, side_objs[name], tmp, rules, args)
                    return run_ocrmypdf(d, path, refs, side_objs[name], tmp, args,
                                        ["--rotate-pages", "--deskew"] if name == "ocrmypdf-rd" else [])
                # the sides of one document run at the same time, each in its own cgroup, so each
                # call's CPU is still its own; on a shared machine this keeps the run's wall time down
                with cf.ThreadPoolExecutor(len(todo) if args.parallel_sides else 1) as ex:
                    results = list(ex.map(one, todo))
                for name, r in zip(todo, results, strict=True):
                    row = {**base, "side": name, **r}
                    rows.append(row)
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    out.flush()
                    print(f"[{k}/{len(docs)}] {d['id']} {name}: {row.get('state')} pdf recall {row.get('pdf_recall')} "
                          f"order {row.get('word_order')} cpu {row['cpu_s']} s", flush=True)
    finally:
        for s in side_objs.values():
            s.close()
        shutil.rmtree(tmp, ignore_errors=True)
    md.write_text(markdown(meta, summarise(rows), rows), encoding="utf-8")
    print(md.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
