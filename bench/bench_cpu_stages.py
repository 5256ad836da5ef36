#!/usr/bin/env python3
"""Where the daemon's CPU per scanned page goes, stage by stage (bench/cpu_profile_2026-12-03.md).

    OMP_THREAD_LIMIT=1 python bench/bench_cpu_stages.py build --out /tmp/cpuprof
    OMP_THREAD_LIMIT=1 python bench/bench_cpu_stages.py stages --corpus /tmp/cpuprof [--out R.jsonl]
    OMP_THREAD_LIMIT=1 python bench/bench_cpu_stages.py recall --corpus /tmp/cpuprof [--repo BASE] [--out R.jsonl]

``build``: a small profiling set in bench/bench_ocrmypdf.py's corpus format (``manifest.json`` and
``corpus/*.pdf``, so ``bench_ocrmypdf.py run --corpus`` works on it): one synthetic 300 dpi grey
scan per language (en, de, fr, zh, ja; tests/data/corpus.yaml texts drawn by tests/docgen.py,
``bench_ocrmypdf._scan_page``: skew <= 0.8 deg, grain, JPEG), and the ``scan-*`` documents of
bench/realdocs whose split is ``tune`` (never the holdout).

``stages``: every page of the set on this thread, as the daemon's render worker and Tesseract
worker do it (``read_or_render`` with rules.yaml's render options, then
``TesseractEngine._recognise``), each sub-stage timed in CPU seconds of this thread
(``time.thread_time``; Tesseract runs on the calling thread): the render (PDF/image decode,
crop, resize), OSD and the orientation probe/read checks, deskew, the PDF line finder; the
engine's model loads, vertical check, language probe, each full-page read (labelled: main,
language re-read, flip band, flip read, Otsu re-read), the lost-text check and its re-read,
the table search and the table read. Prints CPU s per page by stage and one JSON row per page.
Model loads are counted once per model set (as in a warm daemon thread); ``once`` pays them
per process and per Tesseract thread.

``recall``: the word recall of each document of the set against its reference text, read as
the daemon reads it (``cmd_recall``); ``--repo`` imports another checkout's daemon (a base
commit's worktree) for a before/after in one session.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "realdocs"))

SYNTH_LANGS = ("en", "de", "fr", "zh", "ja")


def cmd_build(args: argparse.Namespace) -> int:
    import io

    import bench_ocrmypdf as bo
    import fetch
    import yaml

    out = args.out / "corpus"
    out.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((REPO / "tests" / "data" / "corpus.yaml").read_text(encoding="utf-8"))
    kinds = [k for k in data if k != "other"]
    docs: list[dict[str, Any]] = []
    for i, lang in enumerate(SYNTH_LANGS):
        rng = random.Random(f"cpu:{i}")
        a, b = kinds[i % len(kinds)], kinds[(i + 1) % len(kinds)]
        text = data[a][lang].strip() + "\n\n" + data[b][lang].strip()
        img = bo._scan_page(text, lang, rng)
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=80)
        name = f"synth-{i:02d}-{lang}.pdf"
        (out / name).write_bytes(bo._images_pdf([buf.getvalue()], [img.size], bo.SYNTH_DPI))
        docs.append({"file": name, "set": "synthetic", "language": lang, "tess": bo._tess_langs(lang),
                     "pages": 1, "reference": text})
    sources = fetch.load_sources(HERE / "realdocs" / "sources.yaml")
    tune = [d for d in sources["documents"] if d.get("split") == "tune" and d["id"].startswith("scan-")]
    if args.real:
        tune = [d for d in tune if d["id"] in args.real.split(",")]
    orig = fetch.load_sources
    fetch.load_sources = lambda _p: {**sources, "documents": tune}  # build_real: only the tune scans
    try:
        docs += bo.build_real(out, args.cache)
    finally:
        fetch.load_sources = orig
    (args.out / "manifest.json").write_text(json.dumps(docs, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(docs)} documents, {sum(d['pages'] for d in docs)} pages -> {out}")
    return 0


class Clock:
    """CPU seconds of this thread by stage; nested stages are subtracted from their parent."""

    def __init__(self) -> None:
        self.total: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self.page: list[tuple[str, float]] = []
        self._stack: list[list[float]] = []

    def wrap(self, owner: Any, attr: str, label: str | Callable[..., str]) -> None:
        orig = getattr(owner, attr)
        clock = self

        def timed(*a: Any, **k: Any) -> Any:
            name = label(*a, **k) if callable(label) else label
            clock._stack.append([0.0])
            t = time.thread_time()
            try:
                return orig(*a, **k)
            finally:
                dt = time.thread_time() - t
                inner = clock._stack.pop()[0]
                if clock._stack:
                    clock._stack[-1][0] += dt
                clock.total[name] += dt - inner
                clock.calls[name] += 1
                clock.page.append((name, dt - inner))

        setattr(owner, attr, timed)


def cmd_stages(args: argparse.Namespace) -> int:
    from daemon import tessapi
    from daemon.config import load_config
    from daemon.engines import tesseract as tmod
    from daemon.engines import tessrecover
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine
    from daemon.pagerecord import ImagePage
    from daemon.pages import orient, render, textlayer
    from daemon.service.pipeline import render_options

    cfg = load_config(REPO / "rules.yaml")
    opts = render_options(cfg, "tesseract")
    eng = TesseractEngine(cfg.engine)
    eng.start()
    ck = Clock()
    # render worker
    ck.wrap(render, "_render_pdf_page", "render: decode/raster")
    ck.wrap(render, "_render_image_page", "render: decode/raster")
    ck.wrap(render, "dark_border_box", "render: crop check")
    ck.wrap(render, "_resize_longest", "render: resize")
    ck.wrap(orient, "detect_orientation", "orient: OSD")
    ck.wrap(orient, "reads_better", "orient: 180/axis read check")
    ck.wrap(orient, "_probed", "orient: probe (OSD unsure)")
    if hasattr(orient, "upright_band"):  # the read-first upright check (issue 32, round two)
        ck.wrap(orient, "upright_band", "orient: upright band (eng)")
        ck.wrap(render, "upright_by_reading", "orient: other")
    ck.wrap(render, "upright_with_script", "orient: other")
    if hasattr(orient, "upright_by_reading"):
        ck.wrap(orient, "upright_with_script", "orient: other")
    ck.wrap(render, "deskew", "render: deskew")
    ck.wrap(textlayer, "find_lines", "render: line finder")
    # engine
    # (the engine's APIs carry its threshold variable; the render stage's do not)
    ck.wrap(tessapi, "new_api", lambda spec: "engine: model load" if spec.variables else "orient: model load")
    ck.wrap(eng, "_vertical", "engine: vertical check")
    reads: list[str] = []

    def ocr_label(req: Any, langs: list[str], gray: Any, layout: bool = True) -> str:
        kind = reads[-1] if reads else "read: main"
        if not layout:  # a band: the language probe (eng, then the CJK models), or the flip check's
            kind = f"probe band ({'+'.join(langs[:1])}{'...' if len(langs) > 1 else ''})" if not reads else kind + " (band)"
        return kind

    ck.wrap(eng, "_ocr", ocr_label)

    def tag(attr: str, kind: str) -> None:
        orig = getattr(eng, attr)

        def tagged(*a: Any, **k: Any) -> Any:
            reads.append(kind)
            try:
                return orig(*a, **k)
            finally:
                reads.pop()

        setattr(eng, attr, tagged)

    tag("_reread", "read: language re-read")
    tag("_flip_check", "read: flip 180")
    tag("_threshold_check", "read: Otsu re-read")
    ck.wrap(tmod, "missing_regions", "lost text: check")
    ck.wrap(tmod, "recover", "lost text: re-read")
    ck.wrap(eng, "_tables", "tables: search+read")
    ck.wrap(tmod, "word_layout", "engine: word boxes")
    _ = tessrecover

    manifest = json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8"))
    docs = [d for d in manifest if not args.only or any(s in d["file"] for s in args.only.split(","))]
    pages = 0
    rows = []
    for d in docs:
        path = args.corpus / "corpus" / d["file"]
        for i in range(d["pages"]):
            ck.page.clear()
            reads.clear()
            t = time.thread_time()
            rp = textlayer.read_or_render(path, i, opts, lines=False)
            t_render = time.thread_time() - t
            assert isinstance(rp, ImagePage)
            # the render stage's script and read-first band, as the pipeline passes them
            req = PageRequest(d["file"], i, rp.image, priority=i, script=rp.geometry.script, band=rp.band)
            t = time.thread_time()
            res = eng._recognise(req)
            t_rec = time.thread_time() - t
            pages += 1
            named_render = sum(v for k, v in ck.page if k.startswith(("render", "orient")))
            named_eng = sum(v for k, v in ck.page if not k.startswith(("render", "orient")))
            ck.total["render: other"] += t_render - named_render
            ck.total["engine: other (tidy, merge, plan)"] += t_rec - named_eng
            full = [k for k, _ in ck.page if k.startswith("read:") and "band" not in k]
            row = {"file": d["file"], "page": i, "size": rp.image.size, "script": rp.geometry.script,
                   "rotation": rp.geometry.rotation, "render_s": round(t_render, 3), "engine_s": round(t_rec, 3),
                   "full_reads": len(full), "stages": [(k, round(v, 3)) for k, v in ck.page],
                   "meta": {k: v for k, v in res.meta.items() if k != "markdown"}}
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    eng.close()
    print(f"\n{pages} pages; CPU s per page by stage (calls):")
    for k, v in sorted(ck.total.items()):
        print(f"  {k:<36} {v / pages:6.3f}  ({ck.calls[k]})")
    print(f"  {'total':<36} {sum(ck.total.values()) / pages:6.3f}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
            f.write(json.dumps({"kind": "summary", "pages": pages,
                                "cpu_s_per_page": {k: round(v / pages, 4) for k, v in ck.total.items()},
                                "calls": dict(ck.calls)}) + "\n")
    return 0


#: py-spy frames (substring of "func (file" ) -> stage; the first rule found anywhere in a stack wins.
SPY_RULES = [
    ("_find_and_load (", "start-up: imports"), ("load_config (", "start-up: config load"),
    ("_probed (", "orient: probe (OSD unsure)"), ("reads_better (", "orient: 180/axis read check"),
    ("detect_orientation (", "orient: OSD"), ("deskew (daemon", "render: deskew"),
    ("_render_pdf_page (", "render: decode/raster"), ("_render_image_page (", "render: decode/raster"),
    ("dark_border_box (", "render: crop check"), ("find_lines (", "render: line finder (PDF layout)"),
    ("new_api (", "engine: model load"), ("_vertical (", "engine: vertical check"),
    ("_plan (", "engine: language probe band(s)"), ("_reread (", "read: language re-read"),
    ("_flip_check (", "read: flip 180"), ("_threshold_check (", "read: Otsu re-read"),
    ("_lost_text (", "lost text"), ("_tables (daemon/engines", "tables: search+read"),
    ("_ocr (daemon/engines", "read: main"), ("_recognise (", "engine: other"),
    ("check_pdf (", "quality checks"), ("daemon/quality/", "quality checks"),
    ("write_pdf (", "writer: pdf"), ("daemon/writers/pdf", "writer: pdf"),
    ("write_xlsx (", "writer: xlsx"), ("daemon/writers/latex", "writer: tex"),
    ("daemon/writers/", "writer: txt/md/json/csv"), ("daemon/understand/", "classify+language"),
    ("daemon/journal/", "journal"), ("daemon/pages/", "render: other"), ("daemon/document/", "document model"),
    ("daemon/intake/", "intake (count, checks)"), ("daemon/service/", "pipeline other"),
]


#: Leaf frames of threads that wait (py-spy without --idle still samples some of them).
IDLE_LEAVES = ("Condition.wait", "_PollLikeSelector.select", "Connection._recv", "Connection._poll", "wait (",
               "Future.result", "sleep (", "Event.wait", "Thread.join", "select (", "accept (")


def spy_buckets(raw: Path) -> collections.Counter[str]:
    """Samples of a py-spy ``-f raw`` file by stage (``SPY_RULES``); unmatched: by process."""
    out: collections.Counter[str] = collections.Counter()
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        leaf = stack.rsplit(";", 1)[-1]
        if leaf.startswith(IDLE_LEAVES) or leaf.startswith("process "):
            continue  # a thread py-spy saw waiting (a lock, a pipe, a select): no CPU
        for needle, stage in SPY_RULES:
            if needle in stack:
                out[stage] += int(n)
                break
        else:
            procs = stack.count("process ")
            out["other: render worker / forkserver" if procs > 1 else "other: main process"] += int(n)
    return out


def cmd_spy(args: argparse.Namespace) -> int:
    b = spy_buckets(args.raw)
    total = sum(b.values())
    for k, v in b.most_common():
        print(f"  {k:<40} {v:6d}  {v / total:6.1%}  {v / args.rate / args.pages:6.2f} s/page")
    print(f"  {'total':<40} {total:6d}  {total / args.rate / args.pages:6.2f} s/page")
    return 0


def cmd_bands(args: argparse.Namespace) -> int:
    """The eng language-probe band at several heights: CPU, confidence, the Latin language it
    decides (``tessplan.latin_language``) and its words, per page (recommendation 3a, and the
    upright-by-band test of recommendation 2, in bench/cpu_profile_2026-12-03.md)."""
    from daemon import tessapi
    from daemon.config import load_config
    from daemon.engines import tesseract as tmod
    from daemon.engines.tesseract import INK_LUT, TesseractEngine
    from daemon.engines.tessplan import LATIN, latin_language, probe_band
    from daemon.pages import render
    from daemon.service.pipeline import render_options

    cfg = load_config(REPO / "rules.yaml")
    opts = render_options(cfg, "tesseract")
    eng = TesseractEngine(cfg.engine)
    latin = [a for a in eng.languages if a in LATIN]
    api = tessapi.new_api(tmod._spec(eng.tessdata, ["eng"]))
    shares = [float(x) for x in args.shares.split(",")]
    for d in json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8")):
        for i in range(d["pages"]):
            page = render.render_page(args.corpus / "corpus" / d["file"], i, opts)
            gray = page.image.convert("L").point(INK_LUT)
            row: dict[str, Any] = {"file": d["file"], "page": i, "script": page.geometry.script}
            for share in shares:
                band = probe_band(gray, share)
                t = time.thread_time()
                api.set_image(band)
                text = api.text()
                conf = api.mean_conf()
                api.clear()
                row[str(share)] = {"cpu_s": round(time.thread_time() - t, 2), "conf": conf,
                                   "language": latin_language(text, latin), "words": len(text.split())}
            print(json.dumps(row), flush=True)
    api.end()
    return 0


FORMATS = ["txt", "md", "json", "csv", "xlsx", "tex", "pdf"]


def cmd_once(args: argparse.Namespace) -> int:
    """``ocr-daemon once --engine tesseract`` (every format), one process per document as a user
    runs it, each in a cgroup v2 of its own (``bench_ocrmypdf.Side``): CPU of the whole process
    tree; beside it the sidecar's ``timings``; then OCRmyPDF (``-l LANG``, and with
    ``--rotate-pages --deskew``) on the same files, and the bare start-up of the CLI."""
    import shutil
    import subprocess
    import tempfile

    import bench_ocrmypdf as bo

    manifest = json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8"))
    docs = [d for d in manifest if not args.only or any(s in d["file"] for s in args.only.split(","))]
    py = str(REPO / ".venv" / "bin" / "python")
    rows: list[dict[str, Any]] = []

    def measure(name: str, argv: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess]:
        side = bo.Side(name)
        t = time.monotonic()
        try:
            proc = subprocess.run(side.argv(argv), env=env, cwd=REPO, capture_output=True, timeout=1800, check=False)
            side.wait_empty()
            return side.cpu_s(), time.monotonic() - t, proc
        finally:
            side.close()

    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    with tempfile.TemporaryDirectory(prefix="cpuprof-") as tmp:
        work = Path(tmp)
        for what, argv in (("startup: ocr-daemon --help", [py, "-m", "daemon", "--help"]),
                           ("startup: import daemon.once+service", [py, "-c", "import daemon.cli, daemon.commands.once, "
                            "daemon.service.service, daemon.service.pipeline, daemon.engines.tesseract"])):
            for _ in range(2):
                cpu, wall, _p = measure("startup", argv, env)
                rows.append({"side": what, "cpu_s": round(cpu, 3), "wall_s": round(wall, 2)})
                print(json.dumps(rows[-1]), flush=True)
        for sidename in args.sides.split(","):
            for d in docs:
                stem = Path(d["file"]).stem
                if sidename == "daemon":
                    w = work / f"daemon-{stem}"
                    (w / "inbox").mkdir(parents=True)
                    shutil.copyfile(args.corpus / "corpus" / d["file"], w / "inbox" / d["file"])
                    rules = bo._rules(w, FORMATS)
                    argv = [py, "-m", "daemon", "once", "--engine", "tesseract", "--jsonl", "--hooks-wait", "0",
                            "--config", str(rules), str(w / "inbox" / d["file"])]
                    cpu, wall, proc = measure("daemon", argv, env)
                    side_json = next((w / "out").rglob("*.json"), None)
                    sc = json.loads(side_json.read_text(encoding="utf-8")) if side_json else {}
                    extra = {"timings": sc.get("timings"),
                             "pages_meta": [p.get("meta") for p in sc.get("pages", [])],
                             "stderr": proc.stderr.decode(errors="replace")[-300:] if proc.returncode else ""}
                else:
                    exe = args.ocrmypdf
                    flags = ["--rotate-pages", "--deskew"] if sidename == "ocrmypdf-rotate" else []
                    argv = [exe, "-j", "1", "-l", d["tess"], *flags, "--output-type", "pdf", "--sidecar",
                            str(work / f"{stem}.{sidename}.txt"), str(args.corpus / "corpus" / d["file"]),
                            str(work / f"{stem}.{sidename}.pdf")]
                    cpu, wall, proc = measure(sidename, argv, {k: v for k, v in os.environ.items()
                                                               if k != "OMP_THREAD_LIMIT"})
                    extra = {"stderr": proc.stderr.decode(errors="replace")[-300:] if proc.returncode else ""}
                rows.append({"side": sidename, "file": d["file"], "pages": d["pages"], "rc": proc.returncode,
                             "cpu_s": round(cpu, 2), "wall_s": round(wall, 1), **extra})
                print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    for sidename in args.sides.split(","):
        sub = [r for r in rows if r["side"] == sidename]
        pages = sum(r["pages"] for r in sub)
        print(f"{sidename}: {sum(r['cpu_s'] for r in sub) / max(1, pages):.2f} CPU s per page ({pages} pages)")
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """Word recall of every document of the set against its manifest ``reference`` (realdocs'
    ``evaluate.word_recall``), each document's pages rendered as the pipeline's render worker
    does (``read_or_render``, rules.yaml's Tesseract options) and submitted together to one
    ``TesseractEngine`` with rules.yaml's threads, as the daemon reads them. ``--repo``: the
    daemon checkout to import (a base commit's worktree: its code, this venv)."""
    if args.repo:  # before anything imports daemon
        sys.path.insert(0, str(args.repo.resolve()))
    from evaluate import word_recall

    import daemon
    from daemon.config import load_config
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine
    from daemon.pagerecord import ImagePage
    from daemon.pages import textlayer
    from daemon.service.pipeline import render_options
    repo = Path(daemon.__file__).resolve().parent.parent
    cfg = load_config(repo / "rules.yaml")
    opts = render_options(cfg, "tesseract")
    eng = TesseractEngine(cfg.engine)
    eng.start()
    rows = []
    try:
        for d in json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8")):
            if args.only and not any(x in d["file"] for x in args.only.split(",")):
                continue
            path = args.corpus / "corpus" / d["file"]
            reqs, geo = [], []
            for i in range(d["pages"]):
                rp = textlayer.read_or_render(path, i, opts, lines=False)
                assert isinstance(rp, ImagePage)
                reqs.append(PageRequest(d["file"], i, rp.image, priority=i, script=rp.geometry.script, band=rp.band))
                geo.append(rp.geometry.rotation)
            res = [f.result() for f in [eng.submit(r) for r in reqs]]
            rotation = [(g + r.turned) % 360 for g, r in zip(geo, res, strict=True)]
            row = {"file": d["file"], "language": d["language"], "rotation": rotation,
                   "languages": [r.meta.get("languages") for r in res],
                   "recall": round(word_recall(d["reference"], "\n".join(r.text for r in res)) or 0.0, 4)}
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    finally:
        eng.close()
    print(f"{repo}: mean word recall {sum(r['recall'] for r in rows) / max(1, len(rows)):.4f} ({len(rows)} documents)")
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps({"repo": str(repo), **r}, ensure_ascii=False) + "\n")
    return 0


def main() -> int:
    from bench_ocrmypdf import DEFAULT_CACHE

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    b.add_argument("--real", default="", help="comma-separated realdocs ids (tune scans only)")
    s = sub.add_parser("stages")
    s.add_argument("--corpus", type=Path, required=True)
    s.add_argument("--only", default="")
    s.add_argument("--out", type=Path)
    o = sub.add_parser("once")
    o.add_argument("--corpus", type=Path, required=True)
    o.add_argument("--only", default="")
    o.add_argument("--sides", default="daemon,ocrmypdf,ocrmypdf-rotate")
    o.add_argument("--ocrmypdf", default="/work/wt/evalset/.venv-ocrmypdf/bin/ocrmypdf")
    o.add_argument("--out", type=Path)
    n = sub.add_parser("bands")
    n.add_argument("--corpus", type=Path, required=True)
    n.add_argument("--shares", default="0.25,0.12,0.08")
    y = sub.add_parser("spy")
    y.add_argument("raw", type=Path)
    y.add_argument("--rate", type=float, default=50)
    y.add_argument("--pages", type=int, default=1)
    r = sub.add_parser("recall")
    r.add_argument("--corpus", type=Path, required=True)
    r.add_argument("--repo", type=Path, help="daemon checkout to import (default: this one)")
    r.add_argument("--only", default="")
    r.add_argument("--out", type=Path)
    args = p.parse_args()
    return {"bands": cmd_bands, "spy": cmd_spy, "build": cmd_build, "stages": cmd_stages, "once": cmd_once,
            "recall": cmd_recall}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
