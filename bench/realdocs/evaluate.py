#!/usr/bin/env python3
"""Run ocr-daemon on the real-world document set and score it against the hand labels.

    python3 bench/realdocs/evaluate.py --repo /work/main [--split tune|holdout|all] [--ids a,b]
        [--cache ~/.cache/ocr-daemon/realdocs] [--out results.jsonl] [--engine tesseract]
        [--daemon-cmd PATH] [--timeout 900]

The daemon is driven only through its command line (`ocr-daemon once FILE --config RULES
--engine E`), one document per call, so this script does not depend on the daemon's module layout.
The rules file is a temporary copy of REPO/rules.yaml: its daemon, engine, doctypes and routes are
kept, but state_dir, failed_dir, the inbox and every route's destination / archive folder point
into a temporary folder, every route writes [txt, md, csv, json] and keeps its source. Documents
come from the cache made by fetch.py (run it first) and are copied into the temporary inbox.
OMP_THREAD_LIMIT defaults to 1 (set it to override). Each call runs in its own process group; on a
timeout, an error or Ctrl-C the whole group is killed, and the temporary folder is removed.

Metrics (the summary; one JSON row per document goes to --out):
- language accuracy: the sidecar's `language` == the labelled language (document level). Where the
  sidecar gives a language per page (`pages[i].language`), page-level accuracy against the page's
  label (`page_languages`, else the document's language) is reported too.
- doctype accuracy: sidecar `doctype` == label (strict); "lenient" also accepts `doctype_also_ok`.
- born-digital fidelity (documents labelled born_digital: true): the reference is the PDF's own text
  layer (PyMuPDF `page.get_text()` of every page), the hypothesis is the sidecar's `page_texts`
  (pages joined with a newline). Both are NFKC-normalised, whitespace runs become one space.
  * word recall = |ref words ∩ hyp words| / |ref words| on multisets; words are whitespace-separated
    tokens, case-folded and stripped of surrounding punctuation, and every CJK/kana character counts
    as one word.
  * CER = Levenshtein distance(ref, hyp) / len(ref) on the normalised strings (can exceed 1).
  * txt word recall: the same word recall with the document's `.txt` output as the hypothesis
    (the text a user reads: the raw `page_texts` of a page read from its layer are Markdown, with
    escapes, heading marks, HTML tables and joined hyphenations that count as misses above).
  Averages are means over documents (macro).
- scans (documents not born digital whose cache holds `<file>.ref.txt`, written by fetch.py for
  every page it rasterised: the source pages' text layer, or the text it typeset):
  * scan word recall: the same word recall with that reference and the sidecar's `page_texts`;
  * PDF word recall (with --all-formats): the same against the text layer of the searchable PDF
    written (PyMuPDF `get_text()` of each page); word order (adjacent pairs): the share of the
    reference's adjacent word pairs found adjacent in that PDF text.
  Rows also carry the sidecar's `review`, `review_reasons` and per-page `flags`, so a scan read
  badly (PDF recall < 0.8) can be checked for a flag.
- tables: of the documents labelled has_table, how many produced >= 1 CSV (`<stem>.table-*.csv`);
  also how many documents labelled without a table produced one.
- cell accuracy (documents with `expected_cells`): the expected block (rows x cols, header first)
  is laid over every CSV of the document at every (row offset, col offset) >= 0; the placement with
  the most equal cells wins. A cell is equal when both strings are equal after NFKC, case folding
  and removing all whitespace. Empty expected cells are not scored. Score = matched / scored cells
  (0 when no CSV). The summary gives the mean over those documents.
- seconds per page: wall time of the `once` call / pages in the document (includes the engine's
  start-up per call), total and per document.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import csv
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pymupdf
import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon" / "realdocs"
FORMATS = ["txt", "md", "csv", "json"]
#: ``--all-formats``: one route asking for every output format (the robustness gate of issue 24:
#: a document counts as "out" only when it is done with every format written, and its PDF has
#: the source's page count)
ALL_FORMATS = ["txt", "md", "json", "csv", "xlsx", "tex", "pdf"]
CJK_RE = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af])")


# ------------------------------------------------------------------------------------------- text

def norm_text(s: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", s).split())


def words(s: str) -> list[str]:
    s = CJK_RE.sub(r" \1 ", unicodedata.normalize("NFKC", s))
    out = []
    for tok in s.split():
        tok = tok.strip(".,;:!?()[]{}\"'«»“”‘’„<>|*_`~-–—•·…、。，．：；！？（）「」『』【】").casefold()
        if tok:
            out.append(tok)
    return out


def word_recall(ref: str, hyp: str) -> float | None:
    r = collections.Counter(words(ref))
    total = sum(r.values())
    if not total:
        return None
    h = collections.Counter(words(hyp))
    return sum((r & h).values()) / total


def pair_recall(ref: str, hyp: str) -> float | None:
    """Share of the reference's adjacent word pairs that are adjacent in the hypothesis (multisets)."""
    r, h = words(ref), words(hyp)
    rp = collections.Counter(zip(r, r[1:], strict=False))
    if not rp:
        return None
    hp = collections.Counter(zip(h, h[1:], strict=False))
    return round(sum((rp & hp).values()) / sum(rp.values()), 4)


def levenshtein(a: str, b: str) -> int:
    """Edit distance (Myers/Hyyrö bit-parallel, Python ints as bit vectors)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    # b is the pattern (shorter), a the text
    m = len(b)
    peq: dict[str, int] = {}
    for i, c in enumerate(b):
        peq[c] = peq.get(c, 0) | (1 << i)
    mask = (1 << m) - 1
    last = 1 << (m - 1)
    pv, mv, score = mask, 0, m
    for c in a:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & mask
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        pv = (mh | ~(xv | ph)) & mask
        mv = ph & xv
    return score


def cer(ref: str, hyp: str) -> float | None:
    r, h = norm_text(ref), norm_text(hyp)
    if not r:
        return None
    return levenshtein(r, h) / len(r)


def cell_key(s: str) -> str:
    return "".join(unicodedata.normalize("NFKC", s or "").casefold().split())


def cell_accuracy(expected: list[list[str]], tables: list[list[list[str]]]) -> tuple[float, int, int]:
    """(score, matched, scored) of the best placement of `expected` over any of `tables`."""
    exp = [[cell_key(c) for c in row] for row in expected]
    scored = sum(1 for row in exp for c in row if c)
    best = 0
    for t in tables:
        grid = [[cell_key(c) for c in row] for row in t]
        if not grid:
            continue
        width = max(len(r) for r in grid)
        for r0 in range(len(grid)):
            for c0 in range(width):
                n = 0
                for i, row in enumerate(exp):
                    if r0 + i >= len(grid):
                        break
                    g = grid[r0 + i]
                    for j, c in enumerate(row):
                        if c and c0 + j < len(g) and g[c0 + j] == c:
                            n += 1
                best = max(best, n)
    return (best / scored if scored else 0.0), best, scored


# --------------------------------------------------------------------------------------- documents

def page_count(path: Path) -> int:
    try:
        with pymupdf.open(path) as d:
            return d.page_count if d.is_pdf else 1
    except Exception:  # noqa: BLE001 - an unreadable file counts as one page
        return 1


def text_layer(path: Path) -> list[str]:
    with pymupdf.open(path) as d:
        return [p.get_text() for p in d]


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def make_rules(repo: Path, tmp: Path, formats: list[str] = FORMATS) -> Path:
    with open(repo / "rules.yaml", encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    daemon = dict(cfg.get("daemon") or {})
    daemon["state_dir"] = str(tmp / "state")
    daemon["failed_dir"] = str(tmp / "failed")
    cfg["daemon"] = daemon
    cfg["inboxes"] = [{"path": str(tmp / "inbox"), "name": "inbox", "stability_delay": 0}]
    routes = []
    for i, r in enumerate(cfg.get("routes") or []):
        r = dict(r)
        name = str(r.get("name") or f"route{i}")
        r["formats"] = list(formats)
        r["destination"] = str(tmp / "out" / re.sub(r"[^A-Za-z0-9_.-]", "_", name))
        r["source"] = "keep"
        r.pop("archive_to", None)
        routes.append(r)
    routes.append({"name": "realdocs-catch-all", "formats": list(formats), "destination": str(tmp / "out" / "_all"),
                   "source": "keep"})
    cfg["routes"] = routes
    for d in ("state", "failed", "inbox", "out"):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    path = tmp / "rules.yaml"
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(cfg, f, allow_unicode=True, sort_keys=False)
    return path


def run_once(cmd: list[str], env: dict, timeout: float) -> tuple[int, str, float, bool]:
    """Run one daemon call in its own process group; kill the whole group when it overruns."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True, text=True, errors="replace")
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, _ = proc.communicate()
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    finally:
        # the call is over: anything it left behind in its group goes too
        _kill_group(proc, only_leftovers=True)
    return proc.returncode, out or "", time.monotonic() - t0, timed_out


def _kill_group(proc: subprocess.Popen, only_leftovers: bool = False) -> None:
    try:
        pgid = os.getpgid(proc.pid) if proc.poll() is None else proc.pid
    except ProcessLookupError:
        pgid = proc.pid
    for sig in ((signal.SIGKILL,) if only_leftovers else (signal.SIGTERM, signal.SIGKILL)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        if sig == signal.SIGTERM:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)


def find_outputs(tmp: Path, stem: str) -> tuple[Path | None, list[Path]]:
    sidecars = sorted(p for p in (tmp / "out").rglob(f"{stem}.json"))
    csvs = sorted((tmp / "out").rglob(f"{stem}.table-*.csv"))
    return (sidecars[0] if sidecars else None), csvs


def read_csv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return [row for row in csv.reader(f)]


# ------------------------------------------------------------------------------------------ scoring

def evaluate_doc(doc: dict, path: Path, tmp: Path, args, rules: Path, env: dict) -> dict:
    labels = doc["labels"]
    pages = page_count(path)
    dst = tmp / "inbox" / path.name
    shutil.copyfile(path, dst)
    cmd = [*args.daemon_cmd, "once", str(dst), "--config", str(rules), "--engine", args.engine]
    rc, out, secs, timed_out = run_once(cmd, env, args.timeout)
    sidecar_path, csvs = find_outputs(tmp, path.stem)
    row: dict = {
        "id": doc["id"], "split": doc.get("split"), "file": path.name, "pages": pages, "rc": rc,
        "timed_out": timed_out, "seconds": round(secs, 2), "seconds_per_page": round(secs / max(pages, 1), 2),
        "expected_language": labels.get("language"), "expected_doctype": labels.get("doctype"),
        "born_digital": bool(labels.get("born_digital")), "has_table": bool(labels.get("has_table")),
        "csv_count": len(csvs),
    }
    if sidecar_path is None:
        row["error"] = "no sidecar JSON written; output tail: " + out[-1500:]
        return row
    with open(sidecar_path, encoding="utf-8") as f:
        side = json.load(f)
    row["language"] = side.get("language")
    row["doctype"] = side.get("doctype")
    row["route"] = side.get("route")
    row["language_ok"] = row["language"] == labels.get("language")
    row["doctype_ok"] = row["doctype"] == labels.get("doctype")
    row["doctype_ok_lenient"] = row["doctype_ok"] or row["doctype"] in (labels.get("doctype_also_ok") or [])
    # per-page language, where the sidecar gives one
    side_pages = side.get("pages") or []
    page_langs = labels.get("page_languages") or [labels.get("language")] * pages
    got_pages = [p.get("language") if isinstance(p, dict) else None for p in side_pages]
    if any(g is not None for g in got_pages):
        row["page_language"] = got_pages
        row["page_language_ok"] = [g == e for g, e in zip(got_pages, page_langs, strict=False)]
    rots = [p.get("rotation") if isinstance(p, dict) else None for p in side_pages]
    if any(r is not None for r in rots):
        row["page_rotation"] = rots
    if "rotation" in labels:
        row["expected_rotation"] = labels["rotation"]
    page_texts = side.get("page_texts") or []
    hyp = "\n".join(t if isinstance(t, str) else "" for t in page_texts)
    row["text_chars"] = len(hyp)
    if labels.get("born_digital") and path.suffix.lower() == ".pdf":
        ref = "\n".join(text_layer(path))
        wr, c = word_recall(ref, hyp), cer(ref, hyp)
        row["word_recall"] = None if wr is None else round(wr, 4)
        # the same against the txt output (what a user reads as the text: no Markdown escapes,
        # headings or HTML tables, hyphenated line ends as the writer joins them)
        txts = sorted((tmp / "out").rglob(f"{path.stem}.txt"))
        if txts:
            wt = word_recall(ref, txts[0].read_text(encoding="utf-8"))
            row["txt_word_recall"] = None if wt is None else round(wt, 4)
        row["cer"] = None if c is None else round(c, 4)
        row["ref_words"] = len(words(ref))
    row["review"] = side.get("review")
    if side.get("review_reasons"):
        row["review_reasons"] = side["review_reasons"]
    flags = [p.get("flags") or [] if isinstance(p, dict) else [] for p in side_pages]
    if any(flags):
        row["page_flags"] = flags
    ref_path = path.parent / (path.name + ".ref.txt")
    if not labels.get("born_digital") and ref_path.exists():
        sref = ref_path.read_text(encoding="utf-8")
        wr = word_recall(sref, hyp)
        row["scan_word_recall"] = None if wr is None else round(wr, 4)
        row["ref_words"] = len(words(sref))
        pdfs = sorted((tmp / "out").rglob(f"{path.stem}.pdf")) + sorted((tmp / "out").rglob(f"{path.stem}.ocr.pdf"))
        if pdfs:
            ptext = "\n".join(text_layer(pdfs[0]))
            wp = word_recall(sref, ptext)
            row["pdf_word_recall"] = None if wp is None else round(wp, 4)
            row["pdf_word_order"] = pair_recall(sref, ptext)
    if labels.get("expected_cells"):
        score, matched, scored = cell_accuracy(labels["expected_cells"], [read_csv(p) for p in csvs])
        row["cell_accuracy"] = round(score, 4)
        row["cells_matched"], row["cells_scored"] = matched, scored
    if getattr(args, "all_formats", False):
        row.update(formats_check(tmp, path, pages, bool(csvs)))
    if rc != 0:
        row["error"] = f"exit code {rc}; output tail: " + out[-800:]
    return row


def formats_check(tmp: Path, path: Path, pages: int, has_csv: bool) -> dict:
    """Which of ``ALL_FORMATS`` were written for ``path`` (csv only where a table was found), the
    output PDF's page count, and the degraded stages the sidecar records."""
    out = tmp / "out"
    stem = path.stem
    found = {f: bool(sorted(out.rglob(f"{stem}.{f}"))) for f in ("txt", "md", "json", "xlsx", "tex")}
    pdfs = sorted(out.rglob(f"{stem}.pdf")) + sorted(out.rglob(f"{stem}.ocr.pdf"))
    found["pdf"] = bool(pdfs)
    found["csv"] = has_csv
    pdf_pages = page_count(pdfs[0]) if pdfs else None
    missing = [f for f in ALL_FORMATS if not found[f] and f != "csv"]
    degraded: list[str] = []
    for side_path in sorted(out.rglob(f"{stem}.json")):
        side = json.loads(side_path.read_text(encoding="utf-8"))
        degraded += [d["stage"] for d in side.get("degraded") or []]
        degraded += [d["stage"] for p in side.get("pages") or [] if isinstance(p, dict) for d in p.get("degraded") or []]
    return {"formats_missing": missing, "pdf_pages": pdf_pages, "pdf_pages_ok": pdf_pages == pages,
            "all_formats_ok": not missing and pdf_pages == pages, "degraded_stages": sorted(set(degraded))}


def mean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 4) if xs else None


def summarise(rows: list[dict], meta: dict) -> dict:
    ok = [r for r in rows if "language" in r]
    s: dict = {"meta": meta, "documents": len(rows), "with_sidecar": len(ok),
               "errors": [r["id"] for r in rows if r.get("error")]}
    s["language_accuracy"] = _acc([r.get("language_ok") for r in rows])
    if any("all_formats_ok" in r for r in rows):
        s["all_formats_ok"] = _acc([bool(r.get("all_formats_ok")) for r in rows])
        s["degraded_stages"] = dict(collections.Counter(x for r in rows for x in r.get("degraded_stages") or []))
    pl = [x for r in rows for x in (r.get("page_language_ok") or [])]
    s["page_language_accuracy"] = _acc(pl) if pl else None
    s["doctype_accuracy"] = _acc([r.get("doctype_ok") for r in rows])
    s["doctype_accuracy_lenient"] = _acc([r.get("doctype_ok_lenient") for r in rows])
    by_lang: dict = collections.defaultdict(list)
    for r in rows:
        by_lang[r["expected_language"]].append(r)
    s["language_by_label"] = {k: {"n": len(v), "ok": sum(bool(r.get("language_ok")) for r in v),
                                  "got": dict(collections.Counter(str(r.get("language")) for r in v))}
                              for k, v in sorted(by_lang.items())}
    conf = collections.Counter((r["expected_doctype"], str(r.get("doctype"))) for r in rows)
    s["doctype_confusion"] = {f"{e} -> {g}": n for (e, g), n in sorted(conf.items())}
    bd = [r for r in rows if r["born_digital"] and "word_recall" in r]
    s["born_digital"] = {"n": len(bd), "word_recall_mean": mean([r["word_recall"] for r in bd]),
                         "txt_word_recall_mean": mean([r.get("txt_word_recall") for r in bd]),
                         "cer_mean": mean([r["cer"] for r in bd])}
    sc = [r for r in rows if "scan_word_recall" in r]
    pdf_rec = [r["pdf_word_recall"] for r in sc if r.get("pdf_word_recall") is not None]
    bad = [r for r in sc if r.get("pdf_word_recall") is not None and r["pdf_word_recall"] < 0.8]
    s["scans"] = {"n": len(sc), "word_recall_mean": mean([r["scan_word_recall"] for r in sc]),
                  "pdf_word_recall_mean": mean(pdf_rec), "pdf_word_recall_min": min(pdf_rec) if pdf_rec else None,
                  "pdf_word_order_mean": mean([r.get("pdf_word_order") for r in sc]),
                  "pdf_recall_below_0.8": len(bad),
                  "pdf_recall_below_0.8_unflagged": [r["id"] for r in bad if not r.get("review")
                                                     and not r.get("degraded_stages")]}
    tab = [r for r in rows if r["has_table"]]
    notab = [r for r in rows if not r["has_table"]]
    s["tables"] = {"labelled_with_table": len(tab), "with_csv": sum(r["csv_count"] > 0 for r in tab),
                   "labelled_without_table_but_csv": sum(r["csv_count"] > 0 for r in notab)}
    cells = [r for r in rows if "cell_accuracy" in r]
    s["cells"] = {"n": len(cells), "cell_accuracy_mean": mean([r["cell_accuracy"] for r in cells]),
                  "matched": sum(r["cells_matched"] for r in cells), "scored": sum(r["cells_scored"] for r in cells)}
    pages = sum(r["pages"] for r in rows)
    secs = sum(r["seconds"] for r in rows)
    s["pages"] = pages
    s["seconds_total"] = round(secs, 1)
    s["seconds_per_page"] = round(secs / pages, 2) if pages else None
    return s


def _acc(xs: list) -> dict:
    n = len(xs)
    k = sum(1 for x in xs if x)
    return {"ok": k, "n": n, "accuracy": round(k / n, 4) if n else None}


def summary_markdown(s: dict, rows: list[dict]) -> str:
    m = s["meta"]
    lines = [f"# realdocs evaluation ({m['split']}, {s['documents']} documents, {s['pages']} pages)", "",
             f"- date: {m['date']}  machine: {m['machine']}", f"- daemon: {m['repo']} @ {m['commit']}{m['dirty']}",
             f"- command: `{m['command']}`", f"- engine: {m['engine']}  OMP_THREAD_LIMIT={m['omp_thread_limit']}", "",
             "| metric | value |", "|---|---|"]

    def acc(d):
        return "n/a" if not d or d.get("n") == 0 else f"{d['accuracy']:.3f} ({d['ok']}/{d['n']})"
    lines += [f"| language accuracy (document) | {acc(s['language_accuracy'])} |",
              f"| language accuracy (page) | {acc(s['page_language_accuracy'])} |",
              f"| doctype accuracy | {acc(s['doctype_accuracy'])} |",
              f"| doctype accuracy (lenient) | {acc(s['doctype_accuracy_lenient'])} |",
              f"| born-digital word recall (mean, n={s['born_digital']['n']}) | {s['born_digital']['word_recall_mean']} |",
              f"| born-digital word recall of the txt output (mean) | {s['born_digital'].get('txt_word_recall_mean')} |",
              f"| born-digital CER (mean) | {s['born_digital']['cer_mean']} |",
              f"| scans: word recall of page_texts (mean, n={s['scans']['n']}) | {s['scans']['word_recall_mean']} |",
              f"| scans: searchable-PDF word recall mean / min | {s['scans']['pdf_word_recall_mean']} / "
              f"{s['scans']['pdf_word_recall_min']} |",
              f"| scans: searchable-PDF word order (adjacent pairs) | {s['scans']['pdf_word_order_mean']} |",
              f"| scans with PDF recall < 0.8 / of them without review or degraded stage | "
              f"{s['scans']['pdf_recall_below_0.8']} / {len(s['scans']['pdf_recall_below_0.8_unflagged'])} |",
              f"| table documents with >= 1 CSV | {s['tables']['with_csv']}/{s['tables']['labelled_with_table']} |",
              f"| documents without a table but with CSV | {s['tables']['labelled_without_table_but_csv']} |",
              f"| cell accuracy (mean, n={s['cells']['n']}) | {s['cells']['cell_accuracy_mean']} "
              f"({s['cells']['matched']}/{s['cells']['scored']} cells) |",
              f"| seconds per page | {s['seconds_per_page']} ({s['seconds_total']} s total) |",
              f"| documents without a sidecar / with an error | {s['documents'] - s['with_sidecar']} / {len(s['errors'])} |",
              "", "Language by label (ok/n, got):", ""]
    for k, v in s["language_by_label"].items():
        lines.append(f"- {k}: {v['ok']}/{v['n']}  {v['got']}")
    lines += ["", "Doctype (label -> got): " + ", ".join(f"{k}: {v}" for k, v in s["doctype_confusion"].items()), "",
              "| id | split | pages | lang exp/got | doctype exp/got | word recall | CER | scan / PDF recall | rotation exp/got "
              "| review | csv | cells | s/page |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['id']} | {r['split']} | {r['pages']} | {r['expected_language']}/{r.get('language')} | "
                     f"{r['expected_doctype']}/{r.get('doctype')} | {r.get('word_recall', '')} | {r.get('cer', '')} | "
                     f"{r.get('scan_word_recall', '')} / {r.get('pdf_word_recall', '')} | "
                     f"{r.get('expected_rotation', '')}/{r.get('page_rotation', '')} | {r.get('review', '')} | "
                     f"{r['csv_count']} | {r.get('cell_accuracy', '')} | {r['seconds_per_page']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=Path.cwd(), help="ocr-daemon checkout (default: current dir)")
    ap.add_argument("--daemon-cmd", default=None, help="daemon command (default REPO/.venv/bin/ocr-daemon)")
    ap.add_argument("--engine", default="tesseract")
    ap.add_argument("--split", choices=["tune", "holdout", "all"], default="all")
    ap.add_argument("--ids", default="", help="comma-separated ids (overrides --split)")
    ap.add_argument("--sources", type=Path, default=HERE / "sources.yaml")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="folder filled by fetch.py")
    ap.add_argument("--out", type=Path, default=Path("results.jsonl"), help="JSON lines, one row per document; "
                    "the summary goes beside it as .summary.json and .summary.md")
    ap.add_argument("--all-formats", action="store_true",
                    help="every route writes every format (txt md json csv xlsx tex pdf); rows say which were written")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one document may take")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    ap.add_argument("--summary-only", action="store_true",
                    help="run nothing: rebuild the summary files from the rows already in --out (e.g. a cut-short run)")
    args = ap.parse_args(argv)
    if args.summary_only:
        return write_summary_from(args.out)

    repo = args.repo.resolve()
    args.daemon_cmd = (args.daemon_cmd or str(repo / ".venv" / "bin" / "ocr-daemon")).split()
    with open(args.sources, encoding="utf-8") as f:
        src = yaml.safe_load(f)
    docs = src["documents"]
    if args.ids:
        want = [i for i in args.ids.split(",") if i]
        unknown = set(want) - {d["id"] for d in docs}
        if unknown:
            print(f"unknown ids: {sorted(unknown)}", file=sys.stderr)
            return 2
        docs = [d for d in docs if d["id"] in want]
    elif args.split != "all":
        docs = [d for d in docs if d.get("split") == args.split]
    missing = [d["id"] for d in docs if not (args.cache / d["file"]).exists()]
    if missing:
        print(f"not in {args.cache}: {missing} - run fetch.py first", file=sys.stderr)
        return 2
    for d in docs:
        if sha256_file(args.cache / d["file"]) != d.get("sha256"):
            print(f"warning: {d['id']}: sha256 differs from sources.yaml", file=sys.stderr)

    env = dict(os.environ)
    env.setdefault("OMP_THREAD_LIMIT", "1")
    commit = _git(repo, "rev-parse", "HEAD")
    dirty = " (+ uncommitted changes)" if _git(repo, "status", "--porcelain", "--untracked-files=no") else ""
    meta = {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.node()} {os.cpu_count()} CPUs {platform.machine()}",
            "repo": str(repo), "commit": commit, "dirty": dirty, "engine": args.engine,
            "split": args.ids and "ids" or args.split, "omp_thread_limit": env["OMP_THREAD_LIMIT"],
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if argv is None else " ".join(argv),
            "daemon_cmd": " ".join(args.daemon_cmd)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # SIGTERM/SIGHUP (also delivered to background jobs, which ignore SIGINT) unwind like Ctrl-C, so
    # the running daemon call's process group is killed and the temporary folder removed
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _interrupt)
    tmp = Path(tempfile.mkdtemp(prefix="realdocs-eval-"))
    rows: list[dict] = []
    try:
        rules = make_rules(repo, tmp, ALL_FORMATS if args.all_formats else FORMATS)
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(json.dumps({"meta": meta}, ensure_ascii=False) + "\n")
            for i, d in enumerate(docs, 1):
                row = evaluate_doc(d, args.cache / d["file"], tmp, args, rules, env)
                rows.append(row)
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
                print(f"[{i}/{len(docs)}] {d['id']}: lang {row['expected_language']}/{row.get('language')} "
                      f"doctype {row['expected_doctype']}/{row.get('doctype')} csv {row['csv_count']} "
                      f"{row['seconds']} s{' ERROR' if row.get('error') else ''}", flush=True)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    write_summary(args.out, rows, meta)
    return 0


def write_summary(out: Path, rows: list[dict], meta: dict) -> None:
    s = summarise(rows, meta)
    stem = out.with_suffix("")
    Path(f"{stem}.summary.json").write_text(json.dumps(s, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    md = summary_markdown(s, rows)
    Path(f"{stem}.summary.md").write_text(md, encoding="utf-8")
    print(md)


def write_summary_from(out: Path) -> int:
    with open(out, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if not lines or "meta" not in lines[0]:
        print(f"{out}: no metadata line", file=sys.stderr)
        return 2
    write_summary(out, lines[1:], lines[0]["meta"])
    return 0


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _git(repo: Path, *a: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(repo), *a], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
