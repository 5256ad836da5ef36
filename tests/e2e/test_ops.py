"""Operating the daemon (issue 17): render workers die with a killed daemon; page-level resume
after kill -9 and drain with the same outputs as an uninterrupted run; progress in ``status``
(also with an invalid rules.yaml, and into a closed pipe) and in ``once`` (TTY bar, plain lines)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import docgen
import yaml
from conftest import REPO, DaemonProc, daemon_env, run_cli, wait_for
from faultkit import descendants, fast_rules

N_PAGES = 16  # kills at 2, 5 and 8 pages leave a margin before the document is done


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill9_of_the_daemon_leaves_no_render_worker(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = fast_rules(tmp_path, daemon={"render_workers": 2})
    d = start_daemon(cfg)
    d.wait_ready()
    below = [p for p in descendants(d.proc.pid) if p != d.proc.pid]
    # the forkserver and the two (warmed) render workers
    assert len(below) >= 3, f"expected a forkserver and 2 workers below the daemon, found {below}"
    d.kill9()
    wait_for(lambda: not [p for p in below if _alive(p)], 15, "the render workers to die with the daemon")


# -- page-level resume ---------------------------------------------------------------------------


def _scan(path: Path) -> Path:
    pages = [
        f"Page {i + 1} of the harbour office report.\nInvoice {1000 + 37 * i} was paid on {i + 1} March.\n"
        f"Balance carried forward {i * 113} euros."
        for i in range(N_PAGES)
    ]
    return docgen.make_pdf(path, pages, scanned=True, scan_width=1000)


def _rules(tmp: Path) -> Path:
    # 1000 px pages (legible to Tesseract), English only, sources archived (the sidecar's archived_to)
    return fast_rules(tmp, daemon={"drain_timeout": 0}, engine={"render_longest_edge": 1000})


def _recorded(tmp: Path) -> set[int]:
    db_file = tmp / "state" / "journal.sqlite3"
    if not db_file.exists():
        return set()
    db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)
    try:
        return {int(r[0]) for r in db.execute("SELECT idx FROM pages")}
    except sqlite3.OperationalError:  # not created yet
        return set()
    finally:
        db.close()


def _reads(log: str) -> list[int]:
    """Page indexes (0-based) the daemon got text back for, from its DEBUG lines."""
    return [int(m) - 1 for m in re.findall(r"doc-1 page (\d+)/\d+ read by", log)]


def _outputs(tmp: Path) -> dict[str, Any]:
    """The output set, with what differs between any two runs taken out: the temp folder in
    paths, the time of processing, timings and each page's seconds."""
    out: dict[str, Any] = {}
    for p in sorted((tmp / "out").iterdir()):
        raw = p.read_bytes()
        if p.suffix == ".json":
            side = json.loads(raw.decode().replace(str(tmp), "<tmp>"))
            side.pop("processed_at")
            side.pop("timings")
            for page in side["pages"]:
                page.pop("seconds")
            out[p.name] = side
        else:
            out[p.name] = raw
    return out


def test_kill9_and_drain_mid_document_resume_from_recorded_pages_with_identical_outputs(tmp_path: Path) -> None:
    # the uninterrupted run (of the very same bytes: a PDF made twice differs in its /ID)
    scan = _scan(tmp_path / "scan.pdf").read_bytes()
    ref = tmp_path / "ref"
    ref.mkdir()
    cfg = _rules(ref)
    (ref / "scan.pdf").write_bytes(scan)
    d = DaemonProc(cfg, "--log-level", "DEBUG")
    try:
        d.wait_ready()
        (ref / "scan.pdf").rename(ref / "inbox" / "scan.pdf")
        d.wait_log("doc-1 done", 180)
    finally:
        assert d.stop() == 0
    assert sorted(_reads(d.log())) == list(range(N_PAGES))
    expected = _outputs(ref)
    assert sorted(expected) == ["scan.json", "scan.md", "scan.txt"]
    assert b"harbour" in expected["scan.txt"]

    # interrupted at several page counts: kill -9, a drain (SIGTERM, drain_timeout 0), kill -9
    run = tmp_path / "int"
    run.mkdir()
    cfg = _rules(run)
    (run / "scan.pdf").write_bytes(scan)
    logs: list[str] = []
    kept: list[set[int]] = []  # pages recorded when each interruption struck
    for i, (at, how) in enumerate([(2, signal.SIGKILL), (5, signal.SIGTERM), (8, signal.SIGKILL)]):
        d = DaemonProc(cfg, "--log-level", "DEBUG")
        try:
            d.wait_ready()
            if i == 0:
                (run / "scan.pdf").rename(run / "inbox" / "scan.pdf")
            else:
                d.wait_log(f"doc-1 resuming: {len(kept[-1])} of {N_PAGES} pages already done", 60)
            wait_for(lambda at=at: len(_recorded(run)) >= at, 180, f"{at} pages recorded")
            if how == signal.SIGKILL:
                d.kill9()
            else:
                d.signal(signal.SIGTERM)
                assert d.proc.wait(timeout=60) == 0
        finally:
            d.stop()
        kept.append(_recorded(run))
        assert len(kept[-1]) < N_PAGES, "the document finished before the interruption: nothing was tested"
        logs.append(d.log())
    d = DaemonProc(cfg, "--log-level", "DEBUG")
    try:
        d.wait_log(f"doc-1 resuming: {len(kept[-1])} of {N_PAGES} pages already done", 60)
        d.wait_log("doc-1 done", 180)
    finally:
        assert d.stop() == 0
    logs.append(d.log())

    assert _outputs(run) == expected  # txt and md byte for byte; the JSON but for times
    side = json.loads((run / "out" / "scan.json").read_text())
    assert side["source"] == str(run / "inbox" / "scan.pdf")  # where it was dropped
    assert side["archived_to"] == str(run / "archive" / "scan.pdf")  # where it went
    assert (run / "archive" / "scan.pdf").is_file() and not (run / "inbox" / "scan.pdf").exists()
    # Each page read once, plus at most the pages in flight at each interruption (4: Tesseract's
    # max_in_flight with 2 threads); a page recorded before an interruption is never read again.
    reads = [_reads(log) for log in logs]
    every = [p for r in reads for p in r]
    assert set(every) == set(range(N_PAGES))
    assert len(every) <= N_PAGES + 3 * 4, reads
    for k, recorded in enumerate(kept):
        again = recorded & {p for r in reads[k + 1 :] for p in r}
        assert not again, f"pages {sorted(again)} were recorded before interruption {k + 1} and read again"
    assert _recorded(run) == set()  # a finished document keeps no page records


# -- status ----------------------------------------------------------------------------------------


def test_status_shows_progress_works_with_invalid_rules_and_into_a_closed_pipe(tmp_path: Path) -> None:
    cfg = _rules(tmp_path)
    _scan(tmp_path / "scan.pdf")
    d = DaemonProc(cfg)
    try:
        d.wait_ready()
        (tmp_path / "scan.pdf").rename(tmp_path / "inbox" / "scan.pdf")
        wait_for(lambda: len(_recorded(tmp_path)) >= 3, 180, "3 pages recorded")
        d.signal(signal.SIGSTOP)  # hold it mid-document while status looks (the journal is consistent)
        try:
            r = run_cli("status", "--json", "--config", str(cfg))
            assert r.returncode == 0, r.stderr
            (p,) = json.loads(r.stdout)["in_progress"]
            assert p["pages_total"] == N_PAGES and 3 <= p["pages_done"] < N_PAGES and p["path"].endswith("scan.pdf")
            assert p["pages_per_s"] > 0 and p["eta_s"] > 0
            text = run_cli("status", "--config", str(cfg))
            assert text.returncode == 0, text.stderr
            assert re.search(rf"doc-1 scan\.pdf: \d+/{N_PAGES} pages, [\d.]+ pages/s, ETA \d+", text.stdout), text.stdout
            # rules.yaml broken (an unknown key, a bad type): status still reads the journal
            bad = tmp_path / "bad.yaml"
            data = yaml.safe_load(cfg.read_text())
            data["daemon"]["bogus_key"] = 1
            data["daemon"]["workers"] = "many"
            bad.write_text(yaml.safe_dump(data))
            assert run_cli("check-config", "--config", str(bad)).returncode == 2
            r = run_cli("status", "--config", str(bad))
            assert r.returncode == 0, r.stderr
            assert "processing  1" in r.stdout and "doc-1 scan.pdf" in r.stdout
            assert "error(s)" in r.stderr and "check-config" in r.stderr
            # `status | head` after head has gone: no traceback, exit 141 like a tool killed by SIGPIPE
            rd, wr = os.pipe()
            os.close(rd)
            proc = subprocess.run([sys.executable, "-m", "daemon", "status", "--config", str(cfg)], stdout=wr,
                                  stderr=subprocess.PIPE, text=True, env=daemon_env(), cwd=REPO, timeout=120)
            os.close(wr)
            assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
            assert proc.returncode == 141
        finally:
            d.signal(signal.SIGCONT)
        d.wait_log("doc-1 done", 180)
    finally:
        assert d.stop() == 0
    r = run_cli("status", "--json", "--config", str(cfg))
    assert json.loads(r.stdout)["in_progress"] == [] and json.loads(r.stdout)["counts"] == {"done": 1}


# -- once ------------------------------------------------------------------------------------------


def _once_cfg(tmp: Path) -> Path:
    cfg = fast_rules(tmp, engine={"render_longest_edge": 600})
    data = yaml.safe_load(cfg.read_text())
    data["routes"] = []  # default route: outputs beside the file, source kept
    cfg.write_text(yaml.safe_dump(data))
    return cfg


def test_once_shows_a_progress_bar_on_a_terminal_and_plain_lines_otherwise(tmp_path: Path) -> None:
    cfg = _once_cfg(tmp_path)
    pdf = docgen.make_pdf(tmp_path / "three.pdf", [f"Page {i} of three" for i in range(1, 4)], scanned=True)
    # not a terminal: plain lines on stderr, the last one for page 3/3; stdout only says where outputs went
    r = run_cli("once", "--config", str(cfg), str(pdf))
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if " page " in ln]
    assert lines and lines[-1].startswith(f"{pdf}: page 3/3, ") and "pages/s" in lines[-1], r.stderr
    assert "\r" not in r.stderr and "page" not in r.stdout.split("\n", 1)[0].split(":", 1)[1]
    # a terminal (a pty on stderr): tqdm's bar, redrawn in place with \r
    pdf = docgen.make_pdf(tmp_path / "other.pdf", [f"Another page {i}" for i in range(1, 4)], scanned=True)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "daemon", "once", "--config", str(cfg), str(pdf)],
                            stdout=subprocess.PIPE, stderr=slave, env=daemon_env(), cwd=REPO)
    os.close(slave)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            seen += chunk
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert proc.returncode == 0, seen.decode(errors="replace")
    term = seen.decode(errors="replace")
    assert "\r" in term and re.search(r"3/3 \[", term) and "page/s" in term, term
    assert b"done" in out
