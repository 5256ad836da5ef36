#!/usr/bin/env python3
"""One run of the table benchmark: the daemon and the table libraries on the truth set, scored.

    OMP_THREAD_LIMIT=1 python3 bench/tables/run.py --repo . --split tune \\
        --out bench/results/2026-12-02/tables-tune.jsonl [--bench-python bench/out/tables-venv/bin/python] \\
        [--readers daemon,pymupdf,...] [--ids a,b] [--timeout 600]
    python3 bench/tables/run.py --rescore bench/results/2026-12-02/tables-tune.jsonl

- the daemon: ``ocr-daemon once FILE --config RULES --engine tesseract`` per document (the
  realdocs harness's temporary rules: every route writes csv), its ``<stem>.table-<page>-<n>.csv``
  files are its tables;
- the libraries: ``libs.py`` in the bench venv (born-digital PDFs: PyMuPDF, pdfplumber, camelot;
  scans: img2table), one subprocess for all documents.

Scores (``score.py``): per table cell F1 and exact match; per reader and category (born-digital
ruled / unruled, scanned ruled / unruled) the mean cell F1 over the category's tables, the exact
matches, and the false-positive tables on pages whose labels are complete. The JSONL holds one
metadata line and one line per (document, reader) with the tables read and their scores; next to
it ``.summary.json`` and ``.summary.md``. ``--rescore`` rebuilds the scores and summaries from the
tables stored in a JSONL file. Rows are kept in ``<out>.daemon-partial.jsonl`` and
``<out>.libs-partial.jsonl`` as they are done, so that a run killed from outside (the shared
machine killed long runs twice) goes on where it stopped when started again with the same
arguments; they are removed when the run is complete. A daemon call killed by SIGKILL is run
again (twice at most).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
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

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from score import Expected, pair, prepare  # noqa: E402

ROOT = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon"
CATEGORIES = ["born-ruled", "born-unruled", "scan-ruled", "scan-unruled"]
PDF_READERS = ["pymupdf", "pymupdf-text", "pdfplumber", "pdfplumber-text", "camelot-lattice", "camelot-stream", "camelot-auto"]
SCAN_READERS = ["img2table", "img2table-bordered"]


def _evaluate_module():
    spec = importlib.util.spec_from_file_location("realdocs_evaluate", HERE.parent / "realdocs" / "evaluate.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_truth(split: str, ids: set[str] | None) -> list[dict]:
    docs = yaml.safe_load((HERE / "truth.yaml").read_text(encoding="utf-8"))["documents"]
    return [d for d in docs if (split == "all" or d["split"] == split) and (not ids or d["id"] in ids)]


def form_of(doc: dict) -> str:
    return "pdf" if doc["tables"][0]["category"].startswith("born") else "scan"


def run_daemon(docs: list[dict], repo: Path, timeout: float, log, partial: Path | None = None) -> list[dict]:
    """The daemon's rows; each also appended to ``partial`` as it is done, and the documents
    already there are not run again (a run cut short goes on where it stopped)."""
    ev = _evaluate_module()
    done: dict[str, dict] = {}
    if partial is not None and partial.exists():
        for line in partial.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r
    # ``python -m daemon``, the same entry point as the ``ocr-daemon`` script: processes named
    # ocr-daemon were being SIGKILLed from outside on the shared machine during these runs
    cmd0 = [str(repo / ".venv" / "bin" / "python"), "-m", "daemon"]
    env = dict(os.environ)
    env.setdefault("OMP_THREAD_LIMIT", "1")
    env["PYTHONSAFEPATH"] = "1"  # ``-m daemon`` imports --repo's installed daemon, not the one in the cwd
    rows = []
    with tempfile.TemporaryDirectory(prefix="tables-bench-") as t:
        tmp = Path(t)
        rules = ev.make_rules(repo, tmp, formats=["csv", "json"])
        for d in docs:
            if d["id"] in done:
                rows.append(done[d["id"]])
                continue
            src = ROOT / d["file"]
            stem = d["id"]
            dst = tmp / "inbox" / f"{stem}{src.suffix}"
            shutil.copyfile(src, dst)
            for attempt in range(3):
                rc, out, secs, timed_out = ev.run_once([*cmd0, "once", str(dst), "--config", str(rules), "--engine",
                                                        "tesseract"], env, timeout)
                if rc != -signal.SIGKILL or timed_out:
                    break
                # killed from outside (the shared machine's memory or another user's cleanup):
                # the call is run again rather than scored as no table
                log(f"{d['id']} daemon: killed (rc {rc}) after {secs:.1f} s, attempt {attempt + 1}; again")
            _, csvs = ev.find_outputs(tmp, stem)
            tables = []
            for p in csvs:
                page, n = p.name[len(stem) + len(".table-"):-len(".csv")].split("-")
                tables.append({"page": int(page), "n": int(n), "rows": ev.read_csv(p)})
            tables.sort(key=lambda t: (t["page"], t["n"]))
            error = None if rc == 0 and not timed_out else f"rc {rc}{' (timeout)' if timed_out else ''}: {out[-600:]}"
            rows.append({"id": d["id"], "reader": "daemon", "seconds": round(secs, 2), "error": error,
                         "tables": [{"page": t["page"], "rows": t["rows"]} for t in tables]})
            log(f"{d['id']} daemon: {len(tables)} table(s), {secs:.1f} s" + (f" ({error[:80]})" if error else ""))
            if partial is not None:
                with open(partial, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
    return rows


def run_libs(docs: list[dict], python: str, readers: set[str] | None, log, of: Path) -> tuple[list[dict], dict]:
    """The libraries' rows (``libs.py`` writes them to ``of`` as they are done; a run cut short
    goes on where it stopped)."""
    jobs = [{"id": d["id"], "path": str(ROOT / d["file"]), "pages": sorted({t["page"] for t in d["tables"]}),
             "form": form_of(d), "lang": d["language"]} for d in docs]
    with tempfile.TemporaryDirectory(prefix="tables-libs-") as t:
        jf = Path(t) / "jobs.json"
        jf.write_text(json.dumps(jobs), encoding="utf-8")
        env = dict(os.environ)
        env.setdefault("OMP_THREAD_LIMIT", "1")
        proc = subprocess.run([python, str(HERE / "libs.py"), str(jf), str(of), ",".join(sorted(readers or []))],
                              env=env, stderr=subprocess.PIPE, text=True, errors="replace")
        for line in proc.stderr.splitlines():
            if " table(s), " in line:
                log(line)
        lines = [json.loads(x) for x in of.read_text(encoding="utf-8").splitlines() if x.strip()]
    return lines[1:], lines[0].get("versions", {}) if lines else {}


def score_rows(docs: list[dict], rows: list[dict]) -> list[dict]:
    """Adds per-table scores and false positives to each (document, reader) row."""
    by_id = {d["id"]: d for d in docs}
    for row in rows:
        d = by_id[row["id"]]
        row["scores"], row["false_positives"] = [], 0
        for page in sorted({t["page"] for t in d["tables"]}):
            truth = [t for t in d["tables"] if t["page"] == page]
            expected = []
            for t in truth:
                with open(HERE / "truth" / t["csv"], encoding="utf-8", newline="") as f:
                    import csv
                    expected.append(Expected.make(list(csv.reader(f)), t.get("spans")))
            got = [prepare(t["rows"]) for t in row["tables"] if t["page"] == page]
            got = [g for g in got if g]
            scores, extra = pair(expected, got)
            for t, s in zip(truth, scores, strict=True):
                row["scores"].append({"csv": t["csv"], "category": t["category"],
                                      "f1": round(s.f1, 4) if s else 0.0, "precision": round(s.precision, 4) if s else 0.0,
                                      "recall": round(s.recall, 4) if s else 0.0, "exact": bool(s and s.exact)})
            if d.get("complete", True):
                row["false_positives"] += len(extra)
    return rows


def summarise(docs: list[dict], rows: list[dict]) -> dict:
    by_id = {d["id"]: d for d in docs}
    out: dict = {}
    for row in rows:
        d = by_id[row["id"]]
        agg = out.setdefault(row["reader"], {})
        cats = {s["category"] for s in row["scores"]}
        for s in row["scores"]:
            a = agg.setdefault(s["category"], {"tables": 0, "f1_sum": 0.0, "exact": 0, "false_positives": 0,
                                               "documents": 0, "seconds": 0.0, "errors": 0})
            a["tables"] += 1
            a["f1_sum"] += s["f1"]
            a["exact"] += int(s["exact"])
        first = d["tables"][0]["category"]
        a = agg[first]
        a["false_positives"] += row["false_positives"]
        a["documents"] += 1
        a["seconds"] += row["seconds"]
        a["errors"] += int(bool(row.get("error")))
        del cats
    for agg in out.values():
        for a in agg.values():
            a["cell_f1"] = round(a.pop("f1_sum") / a["tables"], 4) if a["tables"] else 0.0
            a["seconds"] = round(a["seconds"], 1)
    return out


def summary_md(summary: dict, meta: dict, by_split: dict[str, dict] | None = None) -> str:
    lines = [f"# Table benchmark, split `{meta['split']}` ({meta['date']})", "",
             f"Daemon commit {meta.get('commit', '?')}; libraries {json.dumps(meta.get('versions', {}))}.", ""]
    lines += _summary_table(summary)
    for split, sub in (by_split or {}).items():
        lines += ["", f"## Split `{split}`", ""] + _summary_table(sub)
    return "\n".join(lines) + "\n"


def _summary_table(summary: dict) -> list[str]:
    lines = ["Cell F1 (mean over the category's tables) / exact tables / false-positive tables / seconds:", ""]
    readers = sorted(summary, key=lambda r: (r != "daemon", r))
    lines.append("| reader | " + " | ".join(CATEGORIES) + " |")
    lines.append("|---|" + "---|" * len(CATEGORIES))
    for r in readers:
        cells = []
        for c in CATEGORIES:
            a = summary[r].get(c)
            cells.append("" if not a else f"{a['cell_f1']:.3f} / {a['exact']}/{a['tables']} / {a['false_positives']} / {a['seconds']:.0f}")
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    lines += ["", "Best library per category (by cell F1):", ""]
    for c in CATEGORIES:
        libs = [(summary[r][c]["cell_f1"], summary[r][c]["exact"], r) for r in readers if r != "daemon" and c in summary[r]]
        if not libs:
            continue
        f1, ex, best = max(libs)
        d = summary.get("daemon", {}).get(c)
        lines.append(f"- {c}: {best} {f1:.3f} ({ex} exact)" + (f"; daemon {d['cell_f1']:.3f} ({d['exact']} exact)" if d else ""))
    return lines


def write_all(out: Path, meta: dict, docs: list[dict], rows: list[dict]) -> None:
    rows = score_rows(docs, rows)
    summary = summarise(docs, rows)
    splits = sorted({d["split"] for d in docs})
    by_split = {sp: summarise([d for d in docs if d["split"] == sp], [r for r in rows if r["id"] in
                              {d["id"] for d in docs if d["split"] == sp}]) for sp in splits} if len(splits) > 1 else {}
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps(meta, ensure_ascii=False) + "\n")
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    stem = out.with_suffix("")
    Path(f"{stem}.summary.json").write_text(json.dumps({"meta": meta, "summary": summary, "by_split": by_split}, indent=1,
                                                       ensure_ascii=False) + "\n", encoding="utf-8")
    Path(f"{stem}.summary.md").write_text(summary_md(summary, meta, by_split), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=HERE.parent.parent)
    ap.add_argument("--split", choices=["tune", "holdout", "all"], default="tune")
    ap.add_argument("--ids")
    ap.add_argument("--readers", help="comma-separated; default: all")
    ap.add_argument("--bench-python", default=str(HERE.parent / "out" / "tables-venv" / "bin" / "python"))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--rescore", type=Path, help="re-score the tables stored in this JSONL file")
    ap.add_argument("--commit", help="the daemon's commit to record (default: git rev-parse in --repo)")
    ap.add_argument("--merge", type=Path, nargs="*", default=[],
                    help="with --rescore: add the (document, reader) rows of these JSONL files (readers not already there)")
    ap.add_argument("--replace", action="store_true", help="with --merge: replace rows of the same (document, reader)")
    args = ap.parse_args(argv)
    if args.rescore:
        lines = [json.loads(x) for x in args.rescore.read_text(encoding="utf-8").splitlines() if x.strip()]
        meta, rows = lines[0], lines[1:]
        have = {r["reader"] for r in rows}
        for extra in args.merge:
            more = [json.loads(x) for x in extra.read_text(encoding="utf-8").splitlines() if x.strip()]
            if args.replace:  # rows of the same (document, reader) are replaced (a document run again)
                again = {(r["id"], r["reader"]) for r in more[1:]}
                rows = [r for r in rows if (r["id"], r["reader"]) not in again] + more[1:]
                continue
            rows += [r for r in more[1:] if r["reader"] not in have]
            meta.setdefault("merged", []).append({"file": extra.name, **{k: more[0].get(k) for k in ("commit", "versions")}})
            if not meta.get("versions"):
                meta["versions"] = more[0].get("versions", {})
        docs = load_truth("all", {r["id"] for r in rows})
        write_all(args.rescore, meta, docs, rows)
        print(Path(f"{args.rescore.with_suffix('')}.summary.md").read_text(encoding="utf-8"))
        return 0
    if args.out is None:
        ap.error("--out is needed")
    docs = load_truth(args.split, set(args.ids.split(",")) if args.ids else None)
    readers = set(args.readers.split(",")) if args.readers else None

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    t0 = time.time()
    rows: list[dict] = []
    if readers is None or "daemon" in readers:
        rows += run_daemon(docs, args.repo.resolve(), args.timeout, log, Path(f"{args.out.with_suffix('')}.daemon-partial.jsonl"))
    lib_readers = None if readers is None else readers - {"daemon"}
    versions: dict = {}
    if lib_readers is None or lib_readers:
        lib_rows, versions = run_libs(docs, args.bench_python, lib_readers, log,
                                      Path(f"{args.out.with_suffix('')}.libs-partial.jsonl"))
        rows += lib_rows
    try:
        if args.commit:
            raise OSError
        commit = subprocess.run(["git", "-C", str(args.repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(args.repo), "status", "--porcelain", "daemon"], capture_output=True,
                                    text=True).stdout.strip())
    except OSError:
        commit, dirty = args.commit or "?", False
    meta = {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "split": args.split,
            "commit": commit + ("+dirty" if dirty else ""), "machine": f"{platform.node()} nproc={os.cpu_count()}",
            "versions": versions, "documents": len(docs), "tables": sum(len(d["tables"]) for d in docs),
            "wall_seconds": round(time.time() - t0), "command": " ".join(sys.argv)}
    write_all(args.out, meta, docs, rows)
    for part in ("daemon-partial", "libs-partial"):  # the run is complete: its rows are in --out
        Path(f"{args.out.with_suffix('')}.{part}.jsonl").unlink(missing_ok=True)
    print(Path(f"{args.out.with_suffix('')}.summary.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
