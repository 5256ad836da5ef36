#!/usr/bin/env python3
"""CPU cost of the table detection on page images (no OCR): ``find_image_grids`` +
``find_image_rule_regions`` on the truth set's scans, rendered as the daemon renders them
(1540 px) and darkened with the Tesseract engine's gamma, as the engine hands them over.

    OMP_THREAD_LIMIT=1 python3 bench/tables/bench_detect.py [--repeat 3]

Prints CPU ms per page (median and mean over pages, best of ``--repeat`` per page). Run it with
another checkout's Python (its installed daemon) to compare two versions of the detection.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon"
GAMMA_LUT = [round(255 * (v / 255) ** 2.0) for v in range(256)]  # daemon.engines.tesseract.INK_LUT


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from daemon.config import EngineCfg
    from daemon.config.options import render_options
    from daemon.pagerecord import ImagePage
    from daemon.pages.scantables import find_image_grids, find_image_rule_regions
    from daemon.pages.textlayer import read_or_render

    docs = yaml.safe_load((HERE / "truth.yaml").read_text(encoding="utf-8"))["documents"]
    costs = []
    for d in docs:
        if not d["tables"][0]["category"].startswith("scan"):
            continue
        page = read_or_render(ROOT / d["file"], 0, render_options(EngineCfg(), "", False))
        assert isinstance(page, ImagePage)
        gray = page.image.convert("L").point(GAMMA_LUT)
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.process_time()
            grids = find_image_grids(gray)
            find_image_rule_regions(gray, grids)
            best = min(best, time.process_time() - t0)
        costs.append(best * 1000)
        print(f"{d['id']:40s} {gray.size[0]}x{gray.size[1]} {best * 1000:7.1f} ms")
    print(f"{len(costs)} pages: median {statistics.median(costs):.1f} ms, mean {statistics.mean(costs):.1f} ms CPU per page")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
