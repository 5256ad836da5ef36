"""Load benchmark (issue 5, test 3): N tiny files dropped at once into a running daemon whose
inotify reader is stalled (SIGSTOP) while its event queue is flooded past
``/proc/sys/fs/inotify/max_queued_events``, so the files' own events are lost and only the
overflow-triggered rescan can find them.

Reports: files/s (first drop -> last output), drop -> output latency p50/p99/max, RSS of the
daemon process and of the daemon + render workers (sampled from /proc every 0.5 s), duplicates,
and the mean time per stage from the journal. A second, smaller part compares the per-file cost
of the default render settings (1540 px longest edge, OSD autorotate, border crop) with the
256 px / no-OSD settings used for the big run, to show what dominates for tiny inputs.

Usage: OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_load.py [--n 10000] [--compare 100]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from conftest import DaemonProc  # noqa: E402
from faultkit import fast_rules, make_inputs, run_load  # noqa: E402


def versions() -> str:
    import PIL
    import pymupdf
    import watchdog.version

    tess = subprocess.run(["tesseract", "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    try:
        import tesserocr

        tess.append(f"tesserocr {tesserocr.__version__} ({tesserocr.tesseract_version().splitlines()[0]})")
    except ImportError:
        pass
    return (
        f"Python {platform.python_version()}, watchdog {watchdog.version.VERSION_STRING}, Pillow {PIL.__version__}, "
        f"PyMuPDF {pymupdf.VersionBind}, {'; '.join(tess)}"
    )


def cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


def one_run(n: int, *, engine: dict[str, object] | None = None, label: str) -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-load-"))
    try:
        cfg = fast_rules(tmp, daemon={"rescan_interval": 3600, "workers": 2}, engine=engine)
        t = time.monotonic()
        inputs = make_inputs(tmp / "staged", n)
        gen = time.monotonic() - t
        d = DaemonProc(cfg)
        d.wait_ready(120)
        res = run_load(tmp, d, tmp / "staged", inputs, timeout=4 * 3600)
        rc = d.stop(120)
        lines = [f"### {label}", f"(generated {n} inputs in {gen:.1f} s; daemon exit code {rc})", *res.lines()]
        print("\n".join(lines), flush=True)
        return lines
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--compare", type=int, default=100, help="files per render-settings comparison run (0: skip)")
    args = ap.parse_args()
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    print(f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} CPUs ({cpu()}); {versions()}")
    print(f"max_queued_events {Path('/proc/sys/fs/inotify/max_queued_events').read_text().strip()}; "
          f"load average before: {os.getloadavg()}", flush=True)
    one_run(args.n, label=f"{args.n} tiny PNGs, 256 px, no OSD/crop, 2 document workers")
    if args.compare:
        one_run(args.compare, label=f"{args.compare} tiny PNGs, 256 px, no OSD/crop")
        one_run(args.compare, engine={"render_longest_edge": 1540, "autorotate": True, "crop_borders": True},
                label=f"{args.compare} tiny PNGs, default render settings (1540 px, OSD autorotate, border crop)")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
