"""``ocr-daemon once`` processes files several at once, prints them in the order given, and
waits for every process it started (issue 26, item 2)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import docgen
from conftest import REPO, daemon_env, run_cli
from faultkit import fast_rules, tiny_png


def _spans(state: Path) -> dict[str, tuple[float, float]]:
    """File name -> (started, finished) of each document, from the journal."""
    with sqlite3.connect(state / "journal.sqlite3") as db:
        rows = db.execute("SELECT path, started, updated FROM documents").fetchall()
    return {Path(p).name: (float(s), float(u)) for p, s, u in rows}


def test_once_runs_files_at_once_and_prints_them_in_order(tmp_path: Path) -> None:
    cfg = fast_rules(tmp_path, daemon={"workers": 3}, routes=[])
    inbox = tmp_path / "inbox"
    # the first file is the slowest: with files one after another, the others could only start after it
    big = docgen.make_pdf(inbox / "a-big.pdf", [f"Long document page {i}" for i in range(1, 7)], scanned=True)
    small = [tiny_png(inbox / f"{c}-small.png", f"Small file {c}") for c in "bcd"]
    missing = inbox / "e-missing.png"
    files = [big, *small, missing]
    r = run_cli("once", "--jsonl", *map(str, files), "--config", str(cfg))
    assert r.returncode == 1, r.stderr  # the missing one
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [rec["source"] for rec in recs] == [str(f) for f in files]  # the order given, not the order finished
    assert [rec["state"] for rec in recs] == ["done"] * 4 + ["missing"]
    assert recs[0]["pages"] == 6 and all(rec["pages"] == 1 for rec in recs[1:4])
    spans = _spans(tmp_path / "state")
    a0, a1 = spans["a-big.pdf"]
    # the small files were taken while the big one was still being read
    assert any(spans[f.name][0] < a1 for f in small), spans
    # plain progress lines, per file, each file's last page last
    for f, n in ((big, 6), *((s, 1) for s in small)):
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith(f"{f}: page ")]
        assert lines and lines[-1].startswith(f"{f}: page {n}/{n}, "), r.stderr


def test_once_without_jsonl_says_each_file_in_order(tmp_path: Path) -> None:
    cfg = fast_rules(tmp_path, daemon={"workers": 2}, routes=[])
    inbox = tmp_path / "inbox"
    files = [docgen.make_pdf(inbox / "first.pdf", ["First page", "Second page", "Third page"], scanned=True),
             tiny_png(inbox / "second.png", "Second file")]
    r = run_cli("once", *map(str, files), "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    heads = [ln for ln in r.stdout.splitlines() if not ln.startswith("  ")]
    assert heads == [f"{files[0]}: done", f"{files[1]}: done"], r.stdout


#: Runs ``once`` as a child of a subreaper: a process ``once`` started and did not wait for
#: (a render worker, the forkserver, the resource tracker) is handed to this script when its
#: parent ends, instead of to init, and shows up here as a child of ours.
SUBREAPER = textwrap.dedent("""
    import ctypes, json, os, subprocess, sys, time
    PR_SET_CHILD_SUBREAPER = 36
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    p = subprocess.Popen([sys.executable, "-m", "daemon", "once", *sys.argv[1:]], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, err = p.communicate()
    orphans = []
    end = time.monotonic() + 5  # an orphan still alive is waited for a while: it shows either way
    while time.monotonic() < end:
        try:
            pid, status, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            orphans.append({"pid": pid, "cpu": ru.ru_utime + ru.ru_stime})
        else:
            time.sleep(0.1)
    print(json.dumps({"rc": p.returncode, "orphans": orphans, "stderr": err.decode()[-2000:]}))
""")


def test_once_waits_for_every_process_it_started(tmp_path: Path) -> None:
    cfg = fast_rules(tmp_path, daemon={"workers": 2, "render_workers": 2}, routes=[])
    files = [tiny_png(tmp_path / "inbox" / f"w{i}.png", f"Worker {i}") for i in range(3)]
    got = subprocess.run([sys.executable, "-c", SUBREAPER, "--config", str(cfg), *map(str, files)],
                         capture_output=True, text=True, env=daemon_env(), cwd=REPO, timeout=300)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    assert out["rc"] == 0, out["stderr"]
    # none left for the subreaper: every worker was reaped by its parent, and the forkserver by
    # ``once`` itself, so their CPU time counts in once's own rusage (what /usr/bin/time shows)
    assert out["orphans"] == [], out
