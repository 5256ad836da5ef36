"""CPU benchmark of the render stage and of the Tesseract engine (figures go in bench/RESULTS.md).

Usage (from the repo root)::

    OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_render.py            # render + tesseract
    OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_render.py --calibrate # OSD confidence table
    OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_render.py --languages # language strategies

Default run: pages/s of ``render_page`` at 1540 px for a 20-page text PDF, a 10-page scanned
(image-only) PDF and 10 JPEG scans (2480x3508, A4 at 300 dpi), each with autorotate+crop on and
off, in one process (single core: the pipeline scales this with worker processes); then
Tesseract seconds/page through ``TesseractEngine`` (1 thread and all cores).

``--calibrate``: OSD orientation confidence on generated pages in the 11 languages turned
0/90/180/270, on short-text pages and on pages without text, to set ``ORIENT_MIN_CONF``.

``--languages``: character error rate and seconds/page of language strategies on one page per
language: all 11 traineddata at once, OSD script -> Latin set / CJK set, OSD -> eng only.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import docgen  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402
from renderopts import render_opts  # noqa: E402

from daemon.pages.orient import ORIENT_MIN_CONF, detect_orientation, make_upright  # noqa: E402
from daemon.pages.render import render_page  # noqa: E402


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import PIL
    import pymupdf
    import tesserocr

    return (
        f"nproc={os.cpu_count()} cpu={cpu!r} python={platform.python_version()} "
        f"pymupdf={pymupdf.__version__} pillow={PIL.__version__} tesserocr={tesserocr.__version__} "
        f"({tesserocr.tesseract_version().splitlines()[0]})"
    )


def _texts(n: int) -> list[str]:
    langs = list(docgen.SAMPLES)
    return [docgen.SAMPLES[langs[i % len(langs)]] * 3 for i in range(n)]


class Clock:
    """Wall time and this process's CPU time. The CPU figure is what a page costs on one core
    whatever else the machine runs (the 2-core dev box is shared), the wall figure is what was seen."""

    def __enter__(self) -> Clock:
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.w0
        self.cpu = time.process_time() - self.c0


def _rate(label: str, n: int, c: Clock) -> None:
    print(f"  {label:34}: {n / c.cpu:6.2f} pages per CPU-second ({c.cpu / n * 1000:5.0f} ms CPU/page), "
          f"{n / c.wall:6.2f} pages/s wall")


def bench_render(tmp: Path) -> None:
    text_pdf = docgen.make_pdf(tmp / "text.pdf", [docgen.SAMPLES["en"] * 4] * 20)
    scan_pdf = docgen.make_pdf(tmp / "scan.pdf", _texts(10), scanned=True, scan_width=1654)
    jpgs = []
    for i, t in enumerate(_texts(10)):
        p = tmp / f"scan{i}.jpg"
        docgen.make_image(p, t, "jpeg", width=2480, font_size=48, dark_border=(40, 30, 60, 50) if i % 2 else 0)
        jpgs.append(p)
    render_page(text_pdf, 0, render_opts())  # warm: imports, OSD model
    for label, on in (("autorotate+crop on", True), ("autorotate+crop off", False)):
        opts = render_opts(autorotate=on, crop_borders=on)
        print(f"render at 1540 px [{label}]")
        with Clock() as c:
            for i in range(20):
                render_page(text_pdf, i, opts)
        _rate("text PDF, 20 A4 pages", 20, c)
        with Clock() as c:
            for i in range(10):
                render_page(scan_pdf, i, opts)
        _rate("scanned PDF, 10 pages (200 dpi img)", 10, c)
        with Clock() as c:
            for p in jpgs:
                render_page(p, 0, opts)
        _rate("JPEG scans 2480x3508, 10 files", 10, c)


def bench_tesseract(tmp: Path) -> None:
    from daemon.config import EngineCfg, TesseractCfg
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine

    opts = render_opts()
    langs = list(docgen.SAMPLES)
    pages = []
    for i, lang in enumerate(langs * 2):
        body = "\n\n".join([docgen.SAMPLES[lang]] * 4)  # a full page: ~4 paragraphs
        p = docgen.make_image(tmp / f"t{i}.png", body, lang=lang, font_size=28)
        pg = render_page(p, 0, opts)
        pages.append((pg.image, pg.geometry.script))
    for threads in sorted({1, os.cpu_count() or 1}):
        for with_script in (False, True):
            eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=threads)))
            eng.start()
            # Warm every thread's language models first (loading is a one-off start-up cost).
            eng.recognize([PageRequest("warm", i, im) for i, (im, _) in enumerate(pages[: len(langs)])] * threads)
            reqs = [PageRequest(f"doc-{i}", 0, im, script=sc if with_script else "")
                    for i, (im, sc) in enumerate(pages)]
            with Clock() as c:
                eng.recognize(reqs)
            eng.close()
            how = "script from render (no OSD in engine)" if with_script else "engine runs OSD"
            print(f"tesseract threads={threads}, {how}: {c.cpu / len(pages):.2f} CPU-s/page, "
                  f"{c.wall / len(pages):.2f} s/page wall ({len(pages)} full pages, 11 languages, first page of each doc)")


def _non_text_pages(n_noise: int) -> dict[str, Image.Image]:
    from PIL import ImageFilter

    rnd = random.Random(1)
    out: dict[str, Image.Image] = {"blank": Image.new("RGB", (1089, 1540), "white")}
    for k in range(n_noise):
        noise = Image.effect_noise((1089, 1540), (30, 60, 100)[k % 3]).convert("RGB")
        out[f"noise{k}"] = noise.filter(ImageFilter.GaussianBlur(1)) if k % 2 else noise
    photo = Image.new("RGB", (1540, 1089), (120, 140, 90))
    d = ImageDraw.Draw(photo)
    for _ in range(60):
        x, y = rnd.randrange(1540), rnd.randrange(1089)
        r = rnd.randrange(20, 200)
        d.ellipse((x, y, x + r, y + r), fill=(rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)))
    out["shapes"] = photo
    grid = Image.new("RGB", (1089, 1540), "white")
    d = ImageDraw.Draw(grid)
    for k in range(0, 1540, 80):
        d.line((0, k, 1089, k), fill="black", width=2)
    for k in range(0, 1089, 120):
        d.line((k, 0, k, 1540), fill="black", width=2)
    out["empty table"] = grid
    return out


def calibrate(tmp: Path, n_noise: int = 60) -> None:
    """Per page: the first OSD answer (fix, conf) and what ``make_upright`` finally did."""
    opts = render_opts(autorotate=False, crop_borders=False)
    rows: list[tuple[str, int, int, float, str, str]] = []
    rnd = random.Random(2)
    cases: list[tuple[str, str]] = [(lang, docgen.SAMPLES[lang]) for lang in docgen.SAMPLES]
    cases += [("short-en", "Invoice 2024-0042"), ("short-de", "Rechnung Nr. 17\nBetrag: 120,00 EUR")]
    cases += [("short-zh", "发票 2024"), ("short-ja", "請求書のご案内")]
    cases += [("numbers", "\n".join(" ".join(f"{rnd.randrange(10**5):>6}" for _ in range(6)) for _ in range(25)))]
    dense = [(f"{lang}-dense", (docgen.SAMPLES[lang] + "\n") * 4) for lang in ("en", "zh", "ja", "sv")]
    noisy = [(f"{lang}-noisy", docgen.SAMPLES[lang]) for lang in ("de", "zh", "ja")]

    def judge(name: str, rot: int, img: Image.Image) -> None:
        want = (360 - rot) % 360
        o = detect_orientation(img)
        _, done = make_upright(img)
        first = "none" if o is None else ("ok" if o.rotate_cw == want else "WRONG")
        final = "ok" if done == want else ("left" if done == 0 else "WRONG")
        rows.append((name, rot, -1 if o is None else o.rotate_cw, 0.0 if o is None else o.confidence, first, final))

    for name, text in cases + dense + noisy:
        p = tmp / ("c.jpg" if "noisy" in name else "c.png")
        for rot in (0, 90, 180, 270):
            size = 24 if "dense" in name else 32
            docgen.make_image(p, text, "jpeg" if "noisy" in name else "png", rotate=rot, font_size=size)
            if "noisy" in name:
                # A poor scan: grey speckle, soft focus, heavy JPEG compression.
                from PIL import ImageChops, ImageFilter

                im = Image.open(p).convert("L")
                speckle = Image.effect_noise(im.size, 40).point(lambda v: 0 if v < 40 else 255)
                im = ImageChops.darker(im, speckle).filter(ImageFilter.GaussianBlur(1.2))
                im.save(p, quality=35)
            judge(name, rot, render_page(p, 0, opts).image)
    for name, img in _non_text_pages(n_noise).items():
        judge(name, 0, img)
    print(f"ORIENT_MIN_CONF={ORIENT_MIN_CONF}")
    print(f"{'page':12} {'turned':>6} {'osd_cw':>6} {'conf':>6}  first-pass  make_upright")
    for name, rot, fix, conf, first, final in rows:
        print(f"{name:12} {rot:6d} {fix:6d} {conf:6.2f}  {first:10}  {final}")
    ok = [r[3] for r in rows if r[4] == "ok"]
    wrong = [r[3] for r in rows if r[4] == "WRONG" and r[2] != 0]
    print(f"first pass: correct n={len(ok)} (min conf {min(ok, default=0):.2f}); wrong turn proposed n={len(wrong)} "
          f"(max conf {max(wrong, default=0):.2f})")
    finals = [r[5] for r in rows]
    print(f"make_upright: ok {finals.count('ok')}, left as is {finals.count('left')}, WRONG {finals.count('WRONG')} "
          f"of {len(rows)}")


def languages(tmp: Path) -> None:
    """CER and s/page of language strategies on one full page per language (4 paragraphs)."""
    from tesserocr import OEM, PSM, PyTessBaseAPI

    from daemon.engines.tesseract import LATIN, TESS_CODES, tidy_text
    from daemon.language import detect_language
    from daemon.pages.orient import tessdata_dir

    opts = render_opts(autorotate=False)
    pages = {}
    for lang, text in docgen.SAMPLES.items():
        body = "\n\n".join([text] * 4)
        p = docgen.make_image(tmp / f"{lang}.png", body, lang=lang, font_size=28)
        pages[lang] = (body, render_page(p, 0, opts).image.convert("L"))
    apis: dict[str, PyTessBaseAPI] = {}

    def ocr(key: str, img: Image.Image) -> tuple[str, float]:
        if key not in apis:
            apis[key] = PyTessBaseAPI(path=tessdata_dir(), lang=key, psm=PSM.AUTO, oem=OEM.LSTM_ONLY)
        t0 = time.thread_time()
        apis[key].SetImage(img)
        out = tidy_text(apis[key].GetUTF8Text())
        return out, time.thread_time() - t0

    all11 = "+".join(c for a in TESS_CODES for c in TESS_CODES[a])
    latin9 = "+".join(["eng"] + [TESS_CODES[a][0] for a in LATIN if a != "en"])

    def osd_s(img: Image.Image) -> tuple[str, float]:
        t0 = time.thread_time()
        o = detect_orientation(img)
        return (o.script if o else ""), time.thread_time() - t0

    def pair(lang: str) -> str:
        return "eng" if lang == "en" else TESS_CODES[lang][0] + "+eng"

    def strat(name: str, lang: str, img: Image.Image) -> tuple[str, float]:
        if name == "all 11 at once":
            return ocr(all11, img)
        script, t_osd = osd_s(img)
        cjk = {"Han": "chi_sim+chi_tra", "Japanese": "jpn"}.get(script)
        if cjk:
            out, t = ocr(cjk, img)
            return out, t + t_osd
        if name == "OSD -> Latin 9 (eng first)":
            out, t = ocr(latin9, img)
        elif name == "OSD -> eng only":
            out, t = ocr("eng", img)
        elif name == "OSD -> <lang>+eng (oracle)":
            out, t = ocr(pair(lang), img)
        elif name == "OSD -> Latin 9, re-read as <detected>+eng":
            out, t = ocr(latin9, img)
            det, _ = detect_language(out, LATIN)
            if det != "en":
                out, t2 = ocr(pair(det), img)
                t += t2
        else:  # "document memory": later pages of a document use the language of page 1
            first, _ = ocr(latin9, img)
            det, _ = detect_language(first, LATIN)
            out, t = ocr(pair(det), img)  # timing: a later page, already knowing the language
        return out, t + t_osd

    names = ["all 11 at once", "OSD -> Latin 9 (eng first)", "OSD -> eng only", "OSD -> Latin 9, re-read as <detected>+eng",
             "pages 2+ of a document: <lang of page 1>+eng", "OSD -> <lang>+eng (oracle)"]
    for lang, (_, img) in pages.items():  # load every model once before timing (on a strip: cheap)
        for name in names:
            strat(name, lang, img.crop((0, 0, img.width, 250)))
    print(f"{'strategy':48} {'CER Latin':>9} {'CER CJK':>8} {'CPU s/pg Latin':>14} {'CPU s/pg CJK':>12}  per language CER")
    for name in names:
        cers, secs = {}, {}
        for lang, (text, img) in pages.items():
            out, secs[lang] = strat(name, lang, img)
            cers[lang] = docgen.cer(text, out)
        cjk = ("zh", "ja")
        print(f"{name:48} {statistics.mean(cers[a] for a in LATIN):9.4f} {statistics.mean(cers[a] for a in cjk):8.4f} "
              f"{statistics.mean(secs[a] for a in LATIN):14.2f} {statistics.mean(secs[a] for a in cjk):12.2f}  "
              + " ".join(f"{k}:{v:.3f}" for k, v in cers.items()))
    for api in apis.values():
        api.End()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--languages", action="store_true")
    args = ap.parse_args()
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine())
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.calibrate:
            calibrate(tmp)
        elif args.languages:
            languages(tmp)
        else:
            bench_render(tmp)
            bench_tesseract(tmp)


if __name__ == "__main__":
    main()
