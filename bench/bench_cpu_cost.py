"""CPU cost per page of the daemon's own work, for capacity planning (docs/engines.md "Capacity planning").

    OMP_THREAD_LIMIT=1 python bench/bench_cpu_cost.py [--pages 16] [--docs 8] [--results R.jsonl]

Measures on this machine, in CPU seconds of one core (``time.process_time``, so a shared machine
does not inflate it; wall time beside it):

- ``render_ms``: ``render_page`` of an A4 text PDF at 1540 px, autorotate+crop on (the default) and
  off (the GPU bench's setting): what the render processes spend per page;
- ``png_ms``: the ``openai`` engine's PNG + base64 encoding of one rendered page
  (``openai_engine.encode_image``), spent in the daemon's process per request;
- ``finish_ms``: classify, route, write txt/md/json and the journal for one page, from
  bench/bench_finish.py's serial run (one document after another on one thread: wall time, an
  upper bound of its CPU time), divided by its pages.

The in-process vLLM engine's own input processing (vLLM's HF image processor in the daemon's
process) is not here: it needs vLLM (the GPU rows record the pages' input times, ``--iter-log``).
One JSON line (machine, CPUs, figures) to stdout and ``--results``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import docgen  # noqa: E402
from renderopts import render_opts  # noqa: E402

from daemon.pages.render import render_page  # noqa: E402


def _cpu_ms(fn, n: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(CPU ms, wall ms) per call of ``fn(i)`` for i in range(n)."""
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(n):
        fn(i)
    return (time.process_time() - c0) / n * 1000, (time.perf_counter() - w0) / n * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=16, help="pages rendered and encoded per measurement")
    ap.add_argument("--docs", type=int, default=8, help="documents of 8 pages finished (bench_finish, serial)")
    ap.add_argument("--results", default="")
    a = ap.parse_args()
    row: dict[str, object] = {"row": "cpu_cost", "date": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()),
                              "machine": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
                              # what else ran: the CPU columns are this process's own time, the wall ones are not
                              "run": os.environ.get("OCR_BENCH_RUN", ""), "loadavg_1m_start": round(os.getloadavg()[0], 2)}
    try:
        from rowfacts import git_commit

        row["commit"] = git_commit()
    except Exception:  # rowfacts reads git or .bench-commit; a figure without it is still a figure
        row["commit"] = "unknown"
    with tempfile.TemporaryDirectory() as d:
        pdf = docgen.make_pdf(Path(d) / "text.pdf", [docgen.SAMPLES["en"] * 4] * a.pages)
        render_page(pdf, 0, render_opts())  # imports, OSD model
        for label, on in (("render_autorotate_on", True), ("render_autorotate_off", False)):
            opts = render_opts(autorotate=on, crop_borders=on)
            cpu, wall = _cpu_ms(lambda i, o=opts: render_page(pdf, i % a.pages, o), a.pages)
            row[f"{label}_ms"] = {"cpu": round(cpu, 1), "wall": round(wall, 1)}
        from daemon.engines.openai_engine import encode_image

        page = render_page(pdf, 0, render_opts(autorotate=False, crop_borders=False)).image
        cpu, wall = _cpu_ms(lambda i: encode_image(page), a.pages)
        row["png_ms"] = {"cpu": round(cpu, 1), "wall": round(wall, 1), "size": list(page.size)}
    import bench_finish

    runs = [bench_finish.run(a.docs, 8, max(1, (os.cpu_count() or 2) // 2), threaded=False, seed=s) for s in range(2)]
    row["finish_ms"] = {"wall_serial_per_page": round(statistics.median(r["wall_s"] for r in runs) / (a.docs * 8) * 1000, 1),
                        "docs": a.docs, "pages_per_doc": 8}
    row["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(row), flush=True)
    if a.results:
        with open(a.results, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
