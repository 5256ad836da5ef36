"""Held-out evaluation of language + doctype classification with the shipped rules.yaml.

Each held-out document (bench/data/heldout_*.yaml: 6 doctypes x 11 languages, plus a few "other"
documents in sets v2 and v3; written separately from the tuning corpus tests/data/corpus.yaml:
other vendors, topics, layouts and wording) is rendered to a page image
(tests/docgen.py), OCRed by the real Tesseract engine (daemon.engines.tesseract), classified with
the shipped rules.yaml, and scored: language accuracy, doctype accuracy, confusion. Two renderings:
"clean" (as rendered) and "scanned" (skew, blur, speckle, JPEG artefacts). A short-text part
measures detect_language against py3langid alone on 1-2 sentence texts with simulated OCR damage
(bench/data/short_texts.yaml).

Do not tune rules.yaml against these texts; if you do, write a new held-out set.

Run:  OMP_THREAD_LIMIT=1 .venv/bin/python bench/eval_classify.py [--no-ocr] [--modes clean,scanned]
Results: bench/RESULTS.md, section "Classification".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import unicodedata
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import yaml

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Debian Tesseract: 8x slower on 2 cores otherwise

# ============================================================================= held-out sets
# The texts are data files in bench/data/ (heldout_v1/v2/v3.yaml, short_texts.yaml); their header
# comments say when each set was written and what it was kept unseen by.

DATA = Path(__file__).resolve().parent / "data"


def load_set(name: str) -> list[tuple[str, str, str]]:
    """Held-out set ``name`` as ``(language, doctype, text)`` in file order: the order is part of
    the set (a document's index seeds its "scanned" degradation and names its file)."""
    data = yaml.safe_load((DATA / f"heldout_{name}.yaml").read_text(encoding="utf-8"))
    return [(lang, doctype, text) for doctype, by_lang in data.items() for lang, text in by_lang.items()]


def load_short() -> dict[str, list[str]]:
    """Short held-out texts (one or two sentences), ``{language: [text, ...]}``."""
    data: dict[str, list[str]] = yaml.safe_load((DATA / "short_texts.yaml").read_text(encoding="utf-8"))
    return data


# ============================================================================= evaluation

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def degrade(img, seed: int):  # type: ignore[no-untyped-def]
    """Make a rendered page look scanned: slight skew, blur, grey background, speckle, JPEG."""
    import io

    from PIL import Image, ImageFilter

    rnd = random.Random(seed)
    img = img.convert("L").rotate(rnd.uniform(-1.2, 1.2), resample=Image.Resampling.BICUBIC, fillcolor=235, expand=True)
    img = img.filter(ImageFilter.GaussianBlur(0.8))
    px = img.load()
    w, h = img.size
    for _ in range(w * h // 400):  # speckle
        x, y = rnd.randrange(w), rnd.randrange(h)
        px[x, y] = rnd.choice((30, 90, 200))
    img = img.point(lambda v: min(255, int(v * 0.9 + 18)))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=55)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def render(lang: str, text: str):  # type: ignore[no-untyped-def]
    try:
        from docgen import text_image  # tests/docgen.py (shared test document generator)

        return text_image(text, lang=lang if lang in ("zh", "ja") else None, font_size=28)
    except ImportError:  # fallback: draw it here
        from PIL import Image, ImageDraw, ImageFont

        cjk = lang in ("zh", "ja")
        font = ImageFont.truetype(
            "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc" if cjk else "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            28, index=(0 if lang == "ja" else 2) if cjk else 0)
        lines = text.splitlines()
        img = Image.new("RGB", (1400, 120 + 44 * len(lines)), "white")
        d = ImageDraw.Draw(img)
        for i, line in enumerate(lines):
            d.text((60, 60 + 44 * i), line, font=font, fill="black")
        return img


def ocr_all(docs: list[tuple[str, str, str]], *, degraded: bool, threads: int, cjk_both: bool = False) -> list[str]:
    from daemon.config import EngineCfg, TesseractCfg
    from daemon.engines import tesseract as tess
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine

    if cjk_both:  # experiment: Han/Japanese pages get jpn+chi_sim+chi_tra instead of one of them
        orig = tess.choose_languages

        def both(allowed: list[str], script: str, *args: object) -> list[str]:
            if script in ("Han", "Japanese", "Katakana", "Hiragana") and {"zh", "ja"} <= set(allowed):
                return ["jpn", "chi_sim", "chi_tra"]
            return orig(allowed, script, *args)  # type: ignore[arg-type]

        tess.choose_languages = both  # type: ignore[assignment]

    eng = TesseractEngine(EngineCfg(kind="tesseract", tesseract=TesseractCfg(threads=threads)))
    eng.start()
    try:
        futs = []
        for i, (lang, _dt, text) in enumerate(docs):
            img = render(lang, text)
            if degraded:
                img = degrade(img, i)
            futs.append(eng.submit(PageRequest(f"doc-{i}", 0, img)))
        return [f.result().text for f in futs]
    finally:
        eng.close()


def strip_diacritics(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s) if not unicodedata.combining(c))


def ocr_noise(s: str, rnd: random.Random) -> str:
    """Simulated OCR damage: drop 3% of characters, split words at 3% of positions."""
    out = []
    for ch in s:
        r = rnd.random()
        if r < 0.03:
            continue
        if r < 0.06:
            out.append(" ")
        out.append(ch)
    return "".join(out)


def short_texts() -> dict[str, dict[str, float]]:
    """Language accuracy on SHORT: detect_language vs py3langid alone (11 languages)."""
    from daemon.config import LANGUAGES
    from daemon.language import _model_scores, detect_language

    rnd = random.Random(7)
    variants = {
        "clean": lambda s: s,
        "no_diacritics": strip_diacritics,
        "ocr_noise": lambda s: ocr_noise(strip_diacritics(s), rnd),
    }
    res: dict[str, dict[str, float]] = {}
    misses: list[str] = []
    for vname, fn in variants.items():
        ours = base = n = 0
        for lang, sents in load_short().items():
            for s in sents:
                t = fn(s)
                n += 1
                got = detect_language(t)[0]
                ours += got == lang
                p = _model_scores(t, LANGUAGES)
                base += max(p, key=lambda k: p[k]) == lang
                if got != lang:
                    misses.append(f"  {vname}: {lang} -> {got}: {t!r}")
        res[vname] = {"n": n, "detect_language": ours / n, "py3langid_only": base / n}
    print("short texts (1-2 sentences), language accuracy:")
    for vname, r in res.items():
        print(f"  {vname:<14} n={r['n']:<3} detect_language {r['detect_language']:.1%}   py3langid alone {r['py3langid_only']:.1%}")
    if misses:
        print("misses of detect_language:")
        print("\n".join(misses))
    return res


def evaluate(texts: list[str], docs: list[tuple[str, str, str]], label: str) -> dict[str, object]:
    from daemon.config import load_config
    from daemon.understand.classify import classify

    cfg = load_config(REPO / "rules.yaml")
    lang_ok = dt_ok = 0
    confusion: Counter[tuple[str, str]] = Counter()
    lang_conf: Counter[tuple[str, str]] = Counter()
    failures = []
    for i, ((lang, dt, _), text) in enumerate(zip(docs, texts, strict=True)):
        c = classify(text, cfg=cfg, filename=f"scan-{i:03d}.png", pages=1, markdown=False)
        lang_ok += c.language == lang
        dt_ok += c.doctype == dt
        confusion[(dt, c.doctype)] += 1
        if c.language != lang:
            lang_conf[(lang, c.language)] += 1
        if c.language != lang or c.doctype != dt:
            top = sorted(c.doctype_scores.items(), key=lambda kv: -kv[1])[:3]
            failures.append(f"  {lang}/{dt}: got {c.language} ({c.language_confidence:.2f}) / {c.doctype}; top scores {top}")
    n = len(docs)
    print(f"\n[{label}] {n} documents: language {lang_ok}/{n} = {lang_ok / n:.1%}, doctype {dt_ok}/{n} = {dt_ok / n:.1%}")
    truths = list(dict.fromkeys(d for _, d, _ in docs))
    names = list(dict.fromkeys([*truths, "other"]))
    width = max(len(x) for x in names)
    print("doctype confusion (rows: truth, columns: predicted):")
    print(" " * (width + 2) + " ".join(f"{x[:8]:>8}" for x in names))
    for t in truths:
        print(f"  {t:<{width}}" + " ".join(f"{confusion[(t, p)]:>8}" for p in names))
    if lang_conf:
        print("language errors:", ", ".join(f"{a}->{b} x{k}" for (a, b), k in lang_conf.items()))
    if failures:
        print("failures:")
        print("\n".join(failures))
    return {"n": n, "language_accuracy": lang_ok / n, "doctype_accuracy": dt_ok / n,
            "language_errors": {f"{a}->{b}": k for (a, b), k in lang_conf.items()},
            "doctype_confusion": {f"{a}->{b}": k for (a, b), k in confusion.items() if a != b}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-ocr", action="store_true", help="classify the ground-truth text only (no Tesseract)")
    ap.add_argument("--modes", default="clean,scanned", help="clean and/or scanned (degraded) renderings")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--show-ocr", action="store_true", help="print the OCR text of every document")
    ap.add_argument("--cjk-both", action="store_true",
                    help="experiment: OCR Han/Japanese pages with jpn+chi_sim+chi_tra (engine picks one set)")
    ap.add_argument("--sets", default="v3", help="held-out sets to run (comma-separated): v3 (the one unseen by the "
                    "current rules.yaml when first run), v2, v1")
    ap.add_argument("--only", default="", help="comma-separated lang/doctype filters, e.g. ja/invoice,zh/receipt")
    args = ap.parse_args()
    wanted = set(args.only.split(",")) if args.only else set()

    from importlib.metadata import version

    print(f"date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, py3langid {version('py3langid')}, tesserocr {version('tesserocr')}")
    out: dict[str, object] = {"short": short_texts()}
    for set_name in args.sets.split(","):
        docs = load_set(set_name)
        if wanted:
            docs = [d for d in docs if f"{d[0]}/{d[1]}" in wanted or d[0] in wanted or d[1] in wanted]
        out[f"{set_name}/ground_truth_text"] = evaluate(
            [t for _, _, t in docs], docs, f"set {set_name}: ground-truth text, no OCR")
        if args.no_ocr:
            continue
        for mode in args.modes.split(","):
            t0 = time.monotonic()
            texts = ocr_all(docs, degraded=(mode == "scanned"), threads=args.threads, cjk_both=args.cjk_both)
            secs = time.monotonic() - t0
            extra = ", jpn+chi_sim+chi_tra for CJK" if args.cjk_both else ""
            out[f"{set_name}/ocr_{mode}"] = evaluate(
                texts, docs, f"set {set_name}: Tesseract OCR of {mode} renderings{extra}, {secs:.0f} s")
            if args.show_ocr:
                for (lang, dt, _), text in zip(docs, texts, strict=True):
                    print(f"----- {lang}/{dt}\n{text}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
