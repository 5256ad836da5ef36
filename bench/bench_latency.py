"""Idle-to-output latency: a one-page file dropped into an idle, running daemon -> its outputs.

Starts ``ocr-daemon run`` (Tesseract engine unless ``--engine`` says otherwise) on a temp inbox,
waits until it is idle, then N times: drops a one-page PNG (atomic rename, as ``mv`` does) and
times until the ``.json`` sidecar (written last) exists. Reported per stability delay, since the
delay (default 2 s) is a deliberate part of the latency: the daemon never takes a file before it
has been unchanged that long.

Usage: OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_latency.py [--runs 5] [--delays 0.5,2]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import docgen  # noqa: E402

TEXT = (
    "Dear Ms Jensen,\nThank you for your letter of 12 May. We confirm the delivery of the "
    "ordered goods on Friday.\nKind regards,\nPeter Olsen"
)


def run(delay: float, runs: int, engine: str) -> list[float]:
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        (tmp / "inbox").mkdir()
        cfg = {
            "daemon": {"state_dir": "state", "failed_dir": "failed", "rescan_interval": 3600, "http": None},
            "engine": {"kind": engine},
            "inboxes": [{"path": "inbox", "stability_delay": delay}],
            "routes": [{"name": "all", "destination": "out", "formats": ["txt", "md", "json"]}],
        }
        (tmp / "rules.yaml").write_text(yaml.safe_dump(cfg))
        src = docgen.make_image(tmp / "page.png", TEXT)
        env = dict(os.environ, OMP_THREAD_LIMIT="1", PYTHONUNBUFFERED="1")
        log = open(tmp / "log", "w")  # noqa: SIM115
        proc = subprocess.Popen([sys.executable, "-m", "daemon", "run", "--config", str(tmp / "rules.yaml")],
                                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        try:
            deadline = time.monotonic() + 600
            while "initial scan" not in (tmp / "log").read_text():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit((tmp / "log").read_text())
                time.sleep(0.05)
            time.sleep(2)  # idle
            out = []
            for i in range(runs):
                staged = tmp / f"drop-{i}.png"
                staged.write_bytes(src.read_bytes() + b"\0" * i)  # distinct content: no duplicate shortcut
                t0 = time.monotonic()
                staged.rename(tmp / "inbox" / staged.name)
                target = tmp / "out" / f"drop-{i}.json"
                while not target.exists():
                    if time.monotonic() - t0 > 300:
                        raise SystemExit("timed out\n" + (tmp / "log").read_text())
                    time.sleep(0.01)
                out.append(time.monotonic() - t0)
                time.sleep(1.5)  # back to idle
            return out
        finally:
            proc.terminate()
            proc.wait(timeout=60)
            log.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--delays", default="0.5,2")
    ap.add_argument("--engine", default="tesseract")
    a = ap.parse_args()
    print(f"date={time.strftime('%Y-%m-%d')} nproc={os.cpu_count()} python={platform.python_version()} engine={a.engine}")
    for d in (float(x) for x in a.delays.split(",")):
        xs = run(d, a.runs, a.engine)
        print(
            f"stability_delay={d:g}s: drop->sidecar median {statistics.median(xs):.2f}s "
            f"min {min(xs):.2f}s max {max(xs):.2f}s (n={len(xs)})"
        )


if __name__ == "__main__":
    main()
