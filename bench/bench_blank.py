"""Blank-page detection (``inboxes[].drop_blank_pages``): the ink measure on blank backs of real
scans against sparse real pages, the threshold chosen from it, and the cost per page.

Pages are generated (tests/scangen.py) as an office feeder scans them, over wider ranges than
the tests use:

- blank backs: paper shade 225-250, uneven lamp 0-15 levels, sensor noise sd 1-8, JPEG quality
  35-92, bleed-through of the front (a text page, or a page with a black header bar) 0-25 %,
  filing-hole shadows on the left, right or none, 0-40 dust specks, skew up to 0.8 degrees;
- sparse real pages, scanned the same way: only a signature (ballpoint to light pencil, 2-4 px
  strokes), only a page number (8-12 pt, top or bottom), only one short line.

Each page goes into a scanner-like PDF (JPEG pages) and through ``daemon.intake.pagescan.scan_page``
as the daemon runs it (render at SCAN_DPI, barcode read, ink measure). For each candidate
``INK_DELTA`` it prints the highest ink (ppm) of a blank back and the lowest of a sparse page;
the margin between them is what the threshold is chosen in.

Usage: OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_blank.py [--blanks 120] [--sparse 60] [--timed 30]
       [--out bench/results/2026-12-02/blank_pages.txt]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

import docgen  # noqa: E402
import scangen  # noqa: E402
from PIL import ImageDraw  # noqa: E402

from daemon.intake import pagescan  # noqa: E402
from daemon.pages import render  # noqa: E402

DELTAS = (40, 50, 60, 70, 80, 90, 110)
#: speck filters compared at the INK_DELTA in force: none, 3x3 >= 3, the one in force
SPECKS = ((1, 1), (3, 3), pagescan.SPECK)


def random_kind(rng: random.Random, holes: bool = True) -> scangen.Scan:
    return scangen.Scan(
        noise=rng.uniform(1, 8), jpeg=rng.randint(35, 92), paper=rng.randint(225, 250), shading=rng.uniform(0, 15),
        bleed=rng.uniform(0, 0.25), holes=rng.choice(["left", "right", None]) if holes else None,
        dust=rng.randint(0, 40), skew=rng.uniform(-0.8, 0.8),
    )


def front_page(rng: random.Random) -> object:
    lang = rng.choice(sorted(docgen.SAMPLES))
    page = scangen.text_page(docgen.SAMPLES[lang] * rng.randint(1, 3), lang=lang)
    if rng.random() < 0.3:  # a letterhead bar: the strongest bleed-through of an office page
        ImageDraw.Draw(page).rectangle((80, 60, page.width - 80, 200), fill="black")
    return page


def sparse_page(i: int, rng: random.Random) -> tuple[str, object]:
    kind = i % 3
    if kind == 0:
        pen = rng.choice([20, 60, 100, 140])
        return f"signature pen={pen}", scangen.signature_page(rng.randint(0, 1 << 30), pen=pen, width=rng.randint(2, 4))
    if kind == 1:
        pt = rng.choice([8.0, 9.0, 10.0, 12.0])
        top = rng.random() < 0.3
        return f"page number {pt:g}pt{' top' if top else ''}", scangen.page_number_page(rng.randint(1, 99), pt=pt, top=top)
    return "one line", scangen.one_line_page(rng.choice(["This page is intentionally left blank.", "Notes:", "Anlage 3"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blanks", type=int, default=120)
    ap.add_argument("--sparse", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--timed", type=int, default=30, help="pages scan_page is timed on")
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/2026-12-02/blank_pages.txt")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    labels: list[tuple[str, str]] = []  # (blank|sparse, description)
    images = []
    for _ in range(a.blanks):
        k = random_kind(rng)
        images.append(scangen.scan(scangen.blank_page(), seed=rng.randint(0, 1 << 30), back_of=front_page(rng), kind=k))
        labels.append(("blank", f"noise={k.noise:.1f} jpeg={k.jpeg} bleed={k.bleed:.2f} holes={k.holes} dust={k.dust}"))
    for i in range(a.sparse):
        what, page = sparse_page(i, rng)
        k = random_kind(rng)
        images.append(scangen.scan(page, seed=rng.randint(0, 1 << 30), back_of=front_page(rng), kind=k))  # type: ignore[arg-type]
        labels.append(("sparse", f"{what}; noise={k.noise:.1f} jpeg={k.jpeg} bleed={k.bleed:.2f} holes={k.holes}"))
    lines: list[str] = []

    def say(s: str) -> None:
        print(s, flush=True)
        lines.append(s)

    with tempfile.TemporaryDirectory() as td:
        pdf = scangen.scanned_pdf(Path(td) / "pages.pdf", images)
        opts = pagescan.scan_options(10_000, 200_000_000)
        by_delta: dict[int, list[float]] = {d: [] for d in DELTAS}
        by_speck: dict[tuple[int, int], list[float]] = {sp: [] for sp in SPECKS}
        scan_s: list[float] = []
        flags: list[bool] = []
        for i in range(len(images)):
            gray = np.asarray(render.render_page(pdf, i, opts).image.convert("L"))
            px_mm = max(gray.shape) / pagescan.PAGE_LONG_EDGE_MM
            for d in DELTAS:
                by_delta[d].append(pagescan.ink_ppm(gray, px_mm, delta=d))
            for sp in SPECKS:
                by_speck[sp].append(pagescan.ink_ppm(gray, px_mm, speck=sp))
            flags.append(pagescan.is_blank(pagescan.ink_ppm(gray, px_mm)))
        for i in range(min(len(images), a.timed)):  # the daemon's call, timed: render + barcode + ink
            t0 = time.perf_counter()
            res = pagescan.scan_page(pdf, i, "PATCH T", True, opts)
            scan_s.append(time.perf_counter() - t0)
            assert res.blank == flags[i]
    blank_idx = [i for i, (k, _) in enumerate(labels) if k == "blank"]
    sparse_idx = [i for i, (k, _) in enumerate(labels) if k == "sparse"]
    say(f"bench_blank: {len(blank_idx)} blank backs, {len(sparse_idx)} sparse real pages, seed {a.seed}, "
        f"scanned at {scangen.DPI} dpi, looked at {pagescan.SCAN_DPI} dpi")
    say(f"content area: {pagescan.SIDE_MARGIN_MM:g} mm side bands and {pagescan.TOP_BOTTOM_MARGIN_MM:g} mm top/bottom left out")
    say("")
    def row(name: str, vals: list[float]) -> None:
        hi = max(vals[i] for i in blank_idx)
        lo = min(vals[i] for i in sparse_idx)
        say(f"{name:>16}  {hi:>18.1f}  {lo:>19.1f}  {lo / hi if hi else float('inf'):>5.1f}")

    say(f"ink delta (speck filter {pagescan.SPECK})  max ppm blank back  min ppm sparse page  ratio")
    for d in DELTAS:
        row(f"delta {d}", by_delta[d])
    say("")
    say(f"speck filter (delta {pagescan.INK_DELTA})")
    for sp in SPECKS:
        row("none" if sp[0] == 1 else f"{sp[0]}x{sp[0]} >= {sp[1]}", by_speck[sp])
    d = pagescan.INK_DELTA
    say("")
    say(f"in force: INK_DELTA {d}, BLANK_BELOW_PPM {pagescan.BLANK_BELOW_PPM:g}")
    worst_blank = sorted(blank_idx, key=lambda i: -by_delta[d][i])[:3]
    sparse_low = sorted(sparse_idx, key=lambda i: by_delta[d][i])[:5]
    say("highest blank backs: " + "; ".join(f"{by_delta[d][i]:.1f} ppm ({labels[i][1]})" for i in worst_blank))
    say("lowest sparse pages: " + "; ".join(f"{by_delta[d][i]:.1f} ppm ({labels[i][1]})" for i in sparse_low))
    for what in ("signature", "page number", "one line"):
        vals = [by_delta[d][i] for i in sparse_idx if labels[i][1].startswith(what)]
        say(f"  {what}: min {min(vals):.0f} ppm, median {statistics.median(vals):.0f} ppm ({len(vals)} pages)")
    wrong_blank = [i for i in blank_idx if not flags[i]]
    wrong_sparse = [i for i in sparse_idx if flags[i]]
    say(f"decisions by scan_page: {len(blank_idx) - len(wrong_blank)}/{len(blank_idx)} blank backs dropped, "
        f"{len(sparse_idx) - len(wrong_sparse)}/{len(sparse_idx)} sparse pages kept")
    say(f"scan_page per page (render at {pagescan.SCAN_DPI} dpi + barcode read + ink), {len(scan_s)} pages on "
        f"{os.cpu_count()} shared cores: median {statistics.median(scan_s) * 1000:.0f} ms, max {max(scan_s) * 1000:.0f} ms")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if not wrong_blank and not wrong_sparse else 1


if __name__ == "__main__":
    raise SystemExit(main())
