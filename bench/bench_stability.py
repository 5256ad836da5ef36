"""Stability tracker hand-on delay (CPU): N real files noticed at once, time until every one has
been handed on, with a 0.5 s stability delay (the GPU bench's inbox setting).

The tracker should hand a file on when its delay has run out, whatever the number of files:
ideally 0.5 s after the notice. Before 61efec4 it polled on a fixed 0.25 s tick (a file's delay
began at the next tick, and it was handed on at the tick after the delay ended).

Usage: .venv/bin/python bench/bench_stability.py [--n 1 10000] [--delay 0.5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from daemon.intake.stability import StabilityTracker  # noqa: E402
from daemon.models import Candidate  # noqa: E402


def run(n: int, delay: float) -> float:
    """Seconds from the first notice until all ``n`` files were handed on."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i in range(n):
            f = Path(tmp) / f"f{i}.pdf"
            f.write_bytes(b"%PDF-1.4")
            files.append(f)
        done: list[Candidate] = []
        all_done = threading.Event()

        def on_stable(c: Candidate, reason: str | None) -> None:
            done.append(c)
            if len(done) == n:
                all_done.set()

        tracker = StabilityTracker(on_stable, lambda p, inbox: None, lambda inbox: delay)
        tracker.start()
        try:
            time.sleep(0.1)  # the thread is asleep when the files come, as in a running daemon
            t0 = time.monotonic()
            for f in files:
                tracker.notice(Candidate(f, "in"))
            if not all_done.wait(600):
                raise SystemExit(f"only {len(done)} of {n} handed on")
            return time.monotonic() - t0
        finally:
            tracker.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, nargs="+", default=[1, 10000])
    ap.add_argument("--delay", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for n in args.n:
        times = [run(n, args.delay) for _ in range(args.repeat)]
        print(f"{n} files, delay {args.delay} s: all handed on after " + ", ".join(f"{t:.3f}" for t in times) + " s")


if __name__ == "__main__":
    main()
