#!/usr/bin/env python3
"""CPU per scanned page, throughput and word recall: ocr-daemon beside OCRmyPDF, same PDFs, one run.

    python bench/bench_ocrmypdf.py build --out /tmp/ocrbench            # the corpus (~2 min)
    python bench/bench_ocrmypdf.py run --corpus /tmp/ocrbench --results bench/results/DATE/ocrmypdf.jsonl

The corpus (``build``; nothing of it is committed, it is rebuilt byte for byte from the repo and
the realdocs cache) is image-only PDFs with a known text:

- ``synthetic``: 24 documents, 11 languages, 1-3 pages each (48 pages): two texts of
  tests/data/corpus.yaml per page (the same language), drawn by tests/docgen.py's ``text_image``
  at 300 dpi (A4, 42 px ~ 10 pt type) with a seeded skew of at most 0.8 degrees and grain,
  saved as grey JPEG pages (quality 80). Reference: the texts drawn.
- ``real``: every document of bench/realdocs with a text reference: the born-digital PDFs
  rasterised by its fetch.py at 150 dpi into image-only PDFs (JPEG pages; reference: the PDF's
  own text layer), and its ``scan-*`` page images (some turned 90/180/270 degrees) put into
  image-only PDFs at their 150 dpi (reference: the text layer of the Debian PDF pages they were
  rasterised from, out of the cached .deb).

``run`` processes the whole corpus once per side, one side after the other, each side's processes
in a cgroup v2 of their own (created under the unified hierarchy, this process' children moved in
before they exec, CPU = ``cpu.stat`` usage_usec, which counts every process that ever ran in it,
waited for or not):

- ``ocrmypdf``: ``ocrmypdf -j 1 -l <the document's languages> --output-type pdf --sidecar``,
  two files at once (the brief's baseline, issue 26); OMP_THREAD_LIMIT is left to OCRmyPDF
  (with -j 1 it sets 1).
- ``daemon``: ``ocr-daemon once --jsonl`` on every file in one call, rules.yaml's settings
  (all 11 languages, no hint) with one route writing txt + pdf (the searchable PDF, like
  OCRmyPDF's output).

Word recall per document: the evaluate.py metric of bench/realdocs (multiset of case-folded words,
every CJK character a word) of OCRmyPDF's sidecar text or the daemon's .txt output against the
reference; the row gives the mean over documents and the pooled recall. Where cgroup v2 cannot
be written, CPU falls back to ``RUSAGE_CHILDREN`` (only waited-for processes: a lower bound) and
the row says so. The wait4 rusage of each side's top process (what ``/usr/bin/time`` shows) is
recorded beside the cgroup's figure.

Rows (JSON lines to --results): one per document and side, then one summary per side, with the
commit, versions, machine and settings in force.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import gzip
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE / "realdocs"))

LANGS = ("zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da")
TESS = {"zh": "chi_sim", "en": "eng", "ja": "jpn", "fr": "fra", "de": "deu", "es": "spa", "it": "ita",
        "nl": "nld", "pt": "por", "sv": "swe", "da": "dan"}
SEED = 26
SYNTH_DOCS = 24
SYNTH_DPI = 300
REAL_DPI = 150
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon" / "realdocs"


# ------------------------------------------------------------------------------------------ corpus

def _tess_langs(lang: str, zh_script: str | None = None) -> str:
    if lang == "zh" and zh_script == "traditional":
        return "chi_tra"
    return TESS[lang]


def _scan_page(text: str, lang: str, rng: random.Random) -> Any:
    """One synthetic 300 dpi grey scan of ``text``: docgen's page, a slight skew, grain."""
    import docgen
    import numpy as np
    from PIL import Image

    width = round(8.27 * SYNTH_DPI)
    img = docgen.text_image(text, width=width, font_size=42, lang="zh" if lang == "zh" else lang,
                            height=round(11.69 * SYNTH_DPI), margin=200).convert("L")
    img = img.rotate(rng.uniform(-0.8, 0.8), resample=Image.Resampling.BICUBIC, fillcolor=255)
    a = np.asarray(img, dtype=np.int16)
    noise = np.random.default_rng(rng.randrange(1 << 30)).normal(0, 10, a.shape)
    return Image.fromarray(np.clip(a * 0.92 + 12 + noise, 0, 255).astype(np.uint8))


def _images_pdf(images: list[bytes], sizes: list[tuple[int, int]], dpi: int) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for data, (w, h) in zip(images, sizes, strict=True):
        page = doc.new_page(width=w * 72 / dpi, height=h * 72 / dpi)
        page.insert_image(page.rect, stream=data)
    doc.set_metadata({})
    return doc.tobytes(garbage=4, deflate=True, no_new_id=True)


def build_synthetic(out: Path) -> list[dict[str, Any]]:
    import io

    import yaml

    data = yaml.safe_load((REPO / "tests" / "data" / "corpus.yaml").read_text(encoding="utf-8"))
    kinds = [k for k in data if k != "other"]
    docs = []
    for i in range(SYNTH_DOCS):
        lang = LANGS[i % len(LANGS)]
        rng = random.Random(f"{SEED}:{i}")
        texts, pngs, sizes = [], [], []
        for j in range(1 + i % 3):
            a, b = kinds[(i + 2 * j) % len(kinds)], kinds[(i + 2 * j + 1) % len(kinds)]
            text = data[a][lang].strip() + "\n\n" + data[b][lang].strip()
            img = _scan_page(text, lang, rng)
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=80)
            texts.append(text)
            pngs.append(buf.getvalue())
            sizes.append(img.size)
        name = f"synth-{i:02d}-{lang}.pdf"
        (out / name).write_bytes(_images_pdf(pngs, sizes, SYNTH_DPI))
        docs.append({"file": name, "set": "synthetic", "language": lang, "tess": _tess_langs(lang),
                     "pages": len(texts), "reference": "\n\n".join(texts)})
    return docs


def build_real(out: Path, cache: Path) -> list[dict[str, Any]]:
    import fetch  # bench/realdocs/fetch.py
    import pymupdf

    sources = fetch.load_sources(HERE / "realdocs" / "sources.yaml")
    docs = []
    with tempfile.TemporaryDirectory() as work:
        for d in sources["documents"]:
            labels = d["labels"]
            src = cache / d["file"]
            if not src.is_file():
                continue
            if labels.get("born_digital"):
                with pymupdf.open(src) as pdf:
                    reference = "\n".join(p.get_text() for p in pdf)
                    n = pdf.page_count
                data = fetch.render(src.read_bytes(), "pdf", None, {"dpi": REAL_DPI, "format": "pdf"})
            elif d["id"].startswith("scan-"):
                origin = d["origin"]
                archive = _archive_for(cache, origin)
                raw = fetch.extract_member(archive, "debian", origin["path"], Path(work))
                if origin["path"].endswith(".gz"):
                    raw = gzip.decompress(raw)
                with pymupdf.open(stream=raw, filetype="pdf") as pdf:
                    reference = "\n".join(pdf[p].get_text() for p in d["pages"])
                n = len(d["pages"])
                if src.suffix == ".pdf":
                    data = src.read_bytes()
                else:
                    from PIL import Image

                    with Image.open(src) as im:
                        size = im.size
                    data = _images_pdf([src.read_bytes()], [size], REAL_DPI)
            else:
                continue  # a scan with no text reference
            name = f"real-{d['id']}.pdf"
            (out / name).write_bytes(data)
            docs.append({"file": name, "set": "real", "language": labels["language"],
                         "tess": _tess_langs(labels["language"], labels.get("zh_script")),
                         "pages": n, "reference": reference})
    return docs


def _archive_for(cache: Path, origin: dict[str, str]) -> Path:
    name, version = origin["debian"].split("=", 1)
    for p in (cache / "_packages").rglob(f"{name}_*.deb"):
        if p.name.split("_")[1].replace("%3a", ":") == version:
            return p
    raise FileNotFoundError(f"{origin['debian']}: no .deb in {cache / '_packages'} (run bench/realdocs/fetch.py)")


def cmd_build(args: argparse.Namespace) -> int:
    out = args.out / "corpus"
    out.mkdir(parents=True, exist_ok=True)
    docs = build_synthetic(out) + build_real(out, args.cache)
    (args.out / "manifest.json").write_text(json.dumps(docs, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(docs)} documents, {sum(d['pages'] for d in docs)} pages -> {out}")
    return 0


# ------------------------------------------------------------------------------------------ cgroup

def cgroup2_root() -> Path | None:
    """The cgroup v2 (unified) mount point, when this process may make a child there."""
    with open("/proc/mounts", encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 2 and parts[2] == "cgroup2" and os.access(parts[1], os.W_OK):
                return Path(parts[1])
    return None


class Side:
    """The processes of one side in a cgroup v2 of their own (or, without one, RUSAGE_CHILDREN)."""

    def __init__(self, name: str) -> None:
        root = cgroup2_root()
        self.path: Path | None = None
        if root is not None:
            p = root / f"ocrbench-{name}-{os.getpid()}"
            try:
                p.mkdir()
                self.path = p
            except OSError:
                self.path = None
        self.method = "cgroup2 cpu.stat usage_usec" if self.path else "RUSAGE_CHILDREN (waited processes only)"
        self._r0 = resource.getrusage(resource.RUSAGE_CHILDREN)

    def argv(self, cmd: list[str]) -> list[str]:
        """``cmd`` started inside this side's cgroup (the shell moves itself in, then execs)."""
        if self.path is None:
            return cmd
        return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.path), *cmd]

    def wait_empty(self, timeout: float = 60.0) -> bool:
        """True once no process is left in the cgroup (every worker ended), False at the timeout."""
        if self.path is None:
            return True
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if "populated 0" in (self.path / "cgroup.events").read_text():
                return True
            time.sleep(0.2)
        return False

    def cpu_s(self) -> float:
        if self.path is not None:
            for line in (self.path / "cpu.stat").read_text().splitlines():
                k, v = line.split()
                if k == "usage_usec":
                    return int(v) / 1e6
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (r.ru_utime + r.ru_stime) - (self._r0.ru_utime + self._r0.ru_stime)

    def close(self) -> None:
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")
        self.wait_empty(10)
        with contextlib.suppress(OSError):
            self.path.rmdir()


# ------------------------------------------------------------------------------------------ scoring

def recall(ref: str, hyp: str) -> tuple[int, int]:
    """(reference words found in ``hyp``, reference words) on multisets (evaluate.py's words)."""
    import collections

    from evaluate import words

    r = collections.Counter(words(ref))
    h = collections.Counter(words(hyp))
    return sum((r & h).values()), sum(r.values())


# ------------------------------------------------------------------------------------------ sides

def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_ocrmypdf(docs: list[dict[str, Any]], corpus: Path, work: Path, jobs: int, timeout: float) -> tuple[dict, list]:
    side = Side("ocrmypdf")
    env = {k: v for k, v in os.environ.items() if k != "OMP_THREAD_LIMIT"}  # OCRmyPDF sets it itself
    exe = str(Path(sys.executable).parent / "ocrmypdf")
    out = work / "ocrmypdf"
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    ru0 = _child_cpu()
    t0 = time.monotonic()

    def one(d: dict[str, Any]) -> dict[str, Any]:
        stem = Path(d["file"]).stem
        argv = [exe, "-j", "1", "-l", d["tess"], "--output-type", "pdf", "--sidecar", str(out / f"{stem}.txt"),
                str(corpus / d["file"]), str(out / f"{stem}.pdf")]
        s = time.monotonic()
        proc = subprocess.run(side.argv(argv), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout, check=False)
        txt = out / f"{stem}.txt"
        hyp = txt.read_text(encoding="utf-8", errors="replace") if txt.is_file() else ""
        found, total = recall(d["reference"], hyp)
        return {"file": d["file"], "rc": proc.returncode, "seconds": round(time.monotonic() - s, 2),
                "found": found, "ref_words": total, "recall": round(found / total, 4) if total else None,
                "error": proc.stderr.decode(errors="replace")[-300:] if proc.returncode else None}

    try:
        with cf.ThreadPoolExecutor(jobs) as ex:
            rows = list(ex.map(one, docs))
        wall = time.monotonic() - t0
        side.wait_empty()
        cpu = side.cpu_s()
    finally:
        side.close()
    return {"cpu_s": cpu, "wall_s": wall, "cpu_method": side.method, "waited_cpu_s": _child_cpu() - ru0,
            "settings": {"argv": "ocrmypdf -j 1 -l LANG --output-type pdf --sidecar OUT.txt IN.pdf OUT.pdf",
                         "files_at_once": jobs}}, rows


def _rules(work: Path, formats: list[str]) -> Path:
    import yaml

    cfg = yaml.safe_load((REPO / "rules.yaml").read_text(encoding="utf-8"))
    cfg["daemon"] = {**cfg.get("daemon", {}), "state_dir": str(work / "state"), "failed_dir": str(work / "failed"),
                     "http": None}
    cfg["inboxes"] = [{"path": str(work / "inbox"), "name": "inbox"}]
    cfg["routes"] = [{"name": "all", "destination": str(work / "out"), "formats": formats, "source": "keep"}]
    cfg.get("engine", {})["kind"] = "tesseract"
    path = work / "rules.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def run_daemon(docs: list[dict[str, Any]], corpus: Path, work: Path, timeout: float, formats: list[str]) -> tuple[dict, list]:
    side = Side("daemon")
    work = work / "daemon"
    (work / "inbox").mkdir(parents=True, exist_ok=True)
    for d in docs:
        shutil.copyfile(corpus / d["file"], work / "inbox" / d["file"])
    rules = _rules(work, formats)
    env = dict(os.environ)
    argv = [sys.executable, "-m", "daemon", "once", "--jsonl", "--hooks-wait", "0", "--config", str(rules),
            *(str(work / "inbox" / d["file"]) for d in docs)]
    ru0 = _child_cpu()
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(side.argv(argv), env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        wall = time.monotonic() - t0
        # what /usr/bin/time would show: the top process and the descendants it (transitively) waited for
        waited = _child_cpu() - ru0
        emptied = side.wait_empty()
        cpu = side.cpu_s()
    finally:
        side.close()
    recs: dict[str, dict[str, Any]] = {}
    for line in out.decode(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            r = json.loads(line)
            recs[Path(r["source"]).name] = r
    rows = []
    for d in docs:
        r = recs.get(d["file"], {})
        txts = [Path(o) for o in r.get("outputs", []) if o.endswith(".txt")]
        hyp = txts[0].read_text(encoding="utf-8", errors="replace") if txts else ""
        found, total = recall(d["reference"], hyp)
        rows.append({"file": d["file"], "rc": 0 if r.get("state") == "done" else 1, "seconds": r.get("seconds"),
                     "found": found, "ref_words": total, "recall": round(found / total, 4) if total else None,
                     "language_got": r.get("language"), "error": r.get("error")})
    return {"cpu_s": cpu, "wall_s": wall, "cpu_method": side.method, "waited_cpu_s": waited,
            "left_processes": not emptied, "rc": proc.returncode, "stderr_tail": err.decode(errors="replace")[-800:],
            "settings": {"argv": "ocr-daemon once --jsonl --hooks-wait 0 FILES...", "formats": formats,
                         "languages": "rules.yaml default (all 11), no hint"}}, rows


# ------------------------------------------------------------------------------------------ run

def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for cmd, key in ((["tesseract", "--version"], "tesseract_cli"), ([str(Path(sys.executable).parent / "ocrmypdf"),
                                                                        "--version"], "ocrmypdf")):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    with contextlib.suppress(Exception):
        import tesserocr

        out["tesserocr_tesseract"] = tesserocr.tesseract_version().splitlines()[0]
    return out


def _commit() -> str:
    try:
        c = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "daemon"], cwd=REPO, capture_output=True, text=True).stdout
        return c + ("+dirty" if dirty.strip() else "")
    except OSError:
        return "?"


def summary(name: str, docs: list[dict], side: dict, rows: list[dict]) -> dict[str, Any]:
    pages = sum(d["pages"] for d in docs)
    recs = [r["recall"] for r in rows if r["recall"] is not None]
    by_set = {}
    for s in ("synthetic", "real"):
        sub = [(r, d) for r, d in zip(rows, docs, strict=True) if d["set"] == s and r["recall"] is not None]
        if sub:
            by_set[s] = round(sum(r["recall"] for r, _ in sub) / len(sub), 4)
    return {
        "kind": "summary", "side": name, "docs": len(docs), "pages": pages, "failed": sum(1 for r in rows if r["rc"]),
        "cpu_s": round(side["cpu_s"], 1), "cpu_s_per_page": round(side["cpu_s"] / pages, 3),
        "wall_s": round(side["wall_s"], 1), "pages_per_wall_s": round(pages / side["wall_s"], 3),
        "recall_mean": round(sum(recs) / len(recs), 4) if recs else None,
        "recall_pooled": round(sum(r["found"] for r in rows) / max(1, sum(r["ref_words"] for r in rows)), 4),
        "recall_by_set": by_set,
        **{k: v for k, v in side.items() if k not in ("cpu_s", "wall_s")},
    }


def cmd_run(args: argparse.Namespace) -> int:
    manifest = json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8"))
    docs = [d for d in manifest if not args.only or any(s in d["file"] for s in args.only.split(","))]
    if args.limit:
        docs = docs[: args.limit]
    corpus = args.corpus / "corpus"
    meta = {"commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": platform.node(),
            "cpus": os.cpu_count(), "loadavg_start": os.getloadavg(), "versions": _versions(),
            "omp_thread_limit_env": os.environ.get("OMP_THREAD_LIMIT")}
    out_rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ocrbench-") as tmp:
        work = Path(tmp)
        for name in args.sides.split(","):
            print(f"{name}: {len(docs)} documents, {sum(d['pages'] for d in docs)} pages ...", file=sys.stderr, flush=True)
            if name == "ocrmypdf":
                side, rows = run_ocrmypdf(docs, corpus, work, args.jobs, args.timeout)
            elif name == "daemon":
                side, rows = run_daemon(docs, corpus, work, args.timeout, args.formats.split(","))
            else:
                raise SystemExit(f"unknown side {name!r}")
            for r, d in zip(rows, docs, strict=True):
                out_rows.append({"kind": "doc", "side": name, "set": d["set"], "language": d["language"],
                                 "pages": d["pages"], **r})
            s = summary(name, docs, side, rows)
            s.update(meta, loadavg_end=os.getloadavg())
            out_rows.append(s)
            print(json.dumps({k: s[k] for k in ("side", "pages", "failed", "cpu_s_per_page", "pages_per_wall_s",
                                                "recall_mean", "recall_pooled", "recall_by_set", "waited_cpu_s", "cpu_s")}),
                  file=sys.stderr, flush=True)
    if args.results:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        with open(args.results, "a", encoding="utf-8") as f:
            for r in out_rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    r = sub.add_parser("run")
    r.add_argument("--corpus", type=Path, required=True)
    r.add_argument("--sides", default="ocrmypdf,daemon")
    r.add_argument("--jobs", type=int, default=2, help="OCRmyPDF files at once")
    r.add_argument("--formats", default="txt,pdf")
    r.add_argument("--only", default="", help="comma-separated substrings of file names")
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--timeout", type=float, default=7200)
    r.add_argument("--results", type=Path)
    args = p.parse_args()
    return cmd_build(args) if args.cmd == "build" else cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())
