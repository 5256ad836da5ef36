"""How long opening a new file waits behind queued page renders: FIFO process pool vs RenderPool.

Replays the start of the H200 daemon run (bench/RESULTS.md): 23 documents of 8 pages have queued
their page renders (184 tasks) when 9 more documents ask for their page count. Measures, for each
pool, when the 9 page counts are back and when all renders are done.

    python bench/bench_renderqueue.py --dir /tmp/bw --workers 2

``--dir`` holds ``pdf/doc*.pdf`` from ``python bench/bench_gpu.py pages --dir DIR``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from daemon.config import EngineCfg  # noqa: E402
from daemon.config.options import render_options  # noqa: E402
from daemon.pages import probe, render  # noqa: E402
from daemon.pages.renderpool import OPEN_PRIORITY, RenderPool  # noqa: E402


def run(pool_kind: str, pdfs: list[Path], workers: int, first: int, prefetch: int = 1) -> dict[str, Any]:
    opts = dataclasses.replace(render_options(EngineCfg(), "", False), longest_edge=1540, autorotate=False)
    if pool_kind == "fifo":
        ex = cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"))

        def submit(fn: Any, *a: Any, priority: int = 0) -> cf.Future[Any]:
            return ex.submit(fn, *a)

        close = ex.shutdown
    else:
        rp = RenderPool(workers, prefetch=prefetch)
        submit, close = rp.submit, rp.close
    for f in [submit(probe.probe, Path("/")) for _ in range(workers)]:  # warm the workers
        f.result()
    t0 = time.monotonic()
    renders = [submit(render.render_page, p, i, opts, priority=i) for p in pdfs[:first] for i in range(8)]
    counts = [submit(probe.page_count, p, opts, priority=OPEN_PRIORITY) for p in pdfs[first:]]
    for f in counts:
        f.result()
    counts_s = time.monotonic() - t0
    for f in renders:
        f.result()
    all_s = time.monotonic() - t0
    close()
    return {"pool": pool_kind, "renders": len(renders), "page_counts": len(counts),
            "page_counts_back_s": round(counts_s, 2), "all_renders_s": round(all_s, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/bw")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--first", type=int, default=23)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    pdfs = sorted((Path(args.dir) / "pdf").glob("doc*.pdf"))
    assert len(pdfs) > args.first, "need more PDFs than --first"
    kinds = (("fifo", 0), ("priority", 0), ("priority", 1), ("priority", args.workers))
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {k: [] for k in kinds}
    for _ in range(args.repeat):  # interleaved, so drift of this machine hits every kind alike
        for kind, prefetch in kinds:
            runs[(kind, prefetch)].append(run(kind, pdfs, args.workers, args.first, prefetch))
    for (kind, prefetch), rows in runs.items():
        print({"pool": kind, "prefetch": prefetch, "renders": rows[0]["renders"], "page_counts": rows[0]["page_counts"], "runs": args.repeat,
               "page_counts_back_s": sorted(r["page_counts_back_s"] for r in rows),
               "all_renders_s": sorted(r["all_renders_s"] for r in rows)}, flush=True)


if __name__ == "__main__":
    main()
