"""Fault attacks of issue 33 on the real daemon: runs tests/e2e/test_faults_round3.py (each test
starts ``ocr-daemon run`` and attacks it) and prints one table row per attack: what was done,
what is expected, what was observed (each test writes its row through ``observe``), and whether
the test's checks held.

The tests check behaviour with generous time bounds (a loaded CI machine); the goals in time
(``/healthz/live`` < 1 s under a huge sparse file and under a connection flood, SIGTERM within
``drain_timeout`` + a few s) are read here, from the observed column.

Needs root for the tmpfs attacks (full output disk, small state disk) and the PostgreSQL binaries
for the outage; the tests that cannot run here are listed as skipped.

Usage: OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_faults.py [-k EXPR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = "tests/e2e/test_faults_round3.py"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="pytest -k expression (a subset of the attacks)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows_file = Path(tmp) / "rows.jsonl"
        report = Path(tmp) / "report.txt"
        env = {**os.environ, "FAULTS_OBSERVE": str(rows_file), "OMP_THREAD_LIMIT": "1"}
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", TESTS]
        if args.k:
            cmd += ["-k", args.k]
        t0 = time.monotonic()
        with open(report, "w") as out:
            rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
        took = time.monotonic() - t0
        text = report.read_text()
        rows = [json.loads(line) for line in rows_file.read_text().splitlines()] if rows_file.exists() else []
    outcome = {m.group(2): m.group(1) for m in re.finditer(r"^(PASSED|FAILED|SKIPPED|ERROR) \S+::(\w+)", text, re.M)}
    print("| attack | expected | observed |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r['attack']} | {r['expected']} | {r['observed']} |")
    print()
    print("| test | result |")
    print("|---|---|")
    for name, res in outcome.items():
        print(f"| {name} | {res} |")
    tail = text.strip().splitlines()[-1] if text.strip() else ""
    print(f"\npytest: {tail} ({took:.0f} s wall)")
    if rc != 0:
        print(text[-6000:], file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
