"""The fleet of a shared PostgreSQL journal (issue 28, second half): real daemons, real Tesseract,
a real PostgreSQL server (tests/pgserver.py), real HTTP, real signals (``kill -9``, SIGSTOP).

- ``/status``, the status page and ``/metrics`` of any daemon show every daemon of the journal
  (host, pid, heartbeat age, pages/s, alive/stale) and which daemon holds each document.
- Fencing: a daemon stopped (SIGSTOP) past its lease while it holds a document, taken over and
  finished by another, writes nothing of it when it is continued (SIGCONT): one result set.
- SIGTERM while the database is down: the daemon stops within its drain timeout; the document it
  held is finished after the database and a daemon are back.
"""

from __future__ import annotations

import json
import shutil
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import docgen
import yaml
from conftest import http_url, run_cli, wait_for
from prometheus_client.parser import text_string_to_metric_families
from test_shared_journal import LETTER, _config, _one_result_set_each, _pages_recorded, _rows


def _with_http(config: Path) -> Path:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["daemon"]["http"] = {"listen": "127.0.0.1:0"}
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return config


def _get(url: str, path: str) -> str:
    with urllib.request.urlopen(url + path, timeout=30) as r:  # noqa: S310 - the test's own daemon
        return str(r.read().decode("utf-8"))


def _fleet_metrics(text: str) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    for fam in text_string_to_metric_families(text):
        if fam.name.startswith("ocr_daemon_fleet_daemon_"):
            for s in fam.samples:
                out.setdefault(fam.name, {})[int(s.labels["pid"])] = s.value
    return out


def test_status_page_and_metrics_show_every_daemon_and_the_holder_of_each_document(
        tmp_path: Path, pg_url: str, start_daemon: Any) -> None:
    # a lease of 10 s: heartbeats late by seconds on the loaded 2-core test VM are not "stale"
    a = start_daemon(_with_http(_config(tmp_path, "a", pg_url, lease=10.0)))
    b = start_daemon(_config(tmp_path, "b", pg_url, lease=10.0))
    a.wait_ready()
    b.wait_ready()
    url = http_url(a)
    big = docgen.make_pdf(tmp_path / "big.pdf", [f"Page {i + 1}. {LETTER}" for i in range(6)], scanned=True)
    shutil.move(big, tmp_path / "inbox" / "big.pdf")
    held = wait_for(lambda: next((r for r in _rows(pg_url) if r["state"] == "processing"), None), 120, "big.pdf claimed")
    holder = a if held["owner"].endswith(f":{a.proc.pid}") else b
    st = json.loads(_get(url, "/status"))
    by_pid = {d["pid"]: d for d in st["daemons"]}
    assert set(by_pid) == {a.proc.pid, b.proc.pid}
    for d in by_pid.values():
        assert d["state"] == "alive" and d["alive"] is True and 0 <= d["heartbeat_age_seconds"] < 10.0
    assert by_pid[holder.proc.pid]["holding"] == [held["id"]]
    assert [p["held_by"] for p in st["in_progress"] if p["id"] == held["id"]] == [held["owner"]]
    text = run_cli("status", "--config", str(a.config)).stdout  # the command says the same
    assert f"pid {holder.proc.pid} ({holder.config.parent / 'state'}): alive, last heartbeat" in text, text
    assert f"holding doc-{held['id']}" in text
    page = _get(url, "/")
    assert 'id="daemons"' in page and f'<td class="num">{a.proc.pid}</td>' in page and f'<td class="num">{b.proc.pid}</td>' in page
    assert f'<td class="holder">{held["owner"]}</td>' in page
    m = _fleet_metrics(_get(url, "/metrics"))
    assert m["ocr_daemon_fleet_daemon_alive"] == {a.proc.pid: 1.0, b.proc.pid: 1.0}
    assert m["ocr_daemon_fleet_daemon_documents_held"][holder.proc.pid] == 1.0
    assert set(m["ocr_daemon_fleet_daemon_heartbeat_age_seconds"]) == {a.proc.pid, b.proc.pid}
    assert set(m["ocr_daemon_fleet_daemon_pages_per_second"]) == {a.proc.pid, b.proc.pid}
    # b killed: a's page and metrics show it stale (no heartbeat within its 10 s lease), not alive
    b.kill9()
    wait_for(lambda: {d["pid"]: d["state"] for d in json.loads(_get(url, "/status"))["daemons"]}[b.proc.pid] == "stale",
             60, "b shown stale")
    m = _fleet_metrics(_get(url, "/metrics"))
    assert m["ocr_daemon_fleet_daemon_alive"] == {a.proc.pid: 1.0, b.proc.pid: 0.0}
    assert m["ocr_daemon_fleet_daemon_heartbeat_age_seconds"][b.proc.pid] > 10.0
    assert '<tr class="daemon stale">' in _get(url, "/")
    assert f"pid {b.proc.pid} ({b.config.parent / 'state'}): stale" in run_cli("status", "--config", str(a.config)).stdout
    wait_for(lambda: all(r["state"] == "done" for r in _rows(pg_url)), 240, "big.pdf done")


def test_the_sqlite_journal_shows_no_fleet(tmp_path: Path, start_daemon: Any) -> None:
    """The default journal: no daemons list, no fleet series (SQLite behaviour unchanged)."""
    cfg = _config(tmp_path, "solo", "")
    data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    del data["daemon"]["journal_url"], data["daemon"]["journal_lease"]
    cfg.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    d = start_daemon(_with_http(cfg))
    d.wait_ready()
    url = http_url(d)
    assert "daemons" not in json.loads(_get(url, "/status"))
    assert 'id="daemons"' not in _get(url, "/")
    assert _fleet_metrics(_get(url, "/metrics")) == {}


def _drop_big(tmp: Path, pages: int = 6) -> None:
    big = docgen.make_pdf(tmp / "big.pdf", [f"Page {i + 1}. {LETTER}" for i in range(pages)], scanned=True)
    shutil.move(big, tmp / "inbox" / "big.pdf")


def test_a_daemon_stopped_past_its_lease_writes_nothing_over_the_new_holder(
        tmp_path: Path, pg_url: str, start_daemon: Any) -> None:
    a = start_daemon(_config(tmp_path, "a", pg_url))
    b = start_daemon(_config(tmp_path, "b", pg_url))
    a.wait_ready()
    b.wait_ready()
    _drop_big(tmp_path)
    held = wait_for(lambda: next((r for r in _rows(pg_url) if r["state"] == "processing"), None), 120, "big.pdf claimed")
    wait_for(lambda: _pages_recorded(pg_url, held["id"]) >= 1, 120, "a page of big.pdf recorded")
    paused, other = (a, b) if held["owner"].endswith(f":{a.proc.pid}") else (b, a)
    paused.signal(signal.SIGSTOP)  # its render and OCR children go on; it holds the document, silent
    try:
        other.wait_log(f"doc-{held['id']} resuming:", 120)
        wait_for(lambda: _rows(pg_url)[0]["state"] == "done", 240, "big.pdf done by the other daemon")
    finally:
        paused.signal(signal.SIGCONT)
    paused.wait_log(f"doc-{held['id']}: lease lost", 120)
    # it carries on: alive, and takes new work (a second file, done by whichever daemon takes it)
    note = docgen.make_image(tmp_path / "note.png", f"Note. {LETTER}")
    shutil.move(note, tmp_path / "inbox" / "note.png")
    wait_for(lambda: len(_rows(pg_url)) == 2 and all(r["state"] == "done" for r in _rows(pg_url)), 240, "note done")
    assert paused.proc.poll() is None, paused.log()
    row = _rows(pg_url)[0]
    assert row["owner"] == f"{row['owner'].split(':')[0]}:{other.proc.pid}" and row["attempts"] == 2
    paused_log = paused.log()
    assert f"doc-{held['id']} done" not in paused_log and "Traceback" not in paused_log
    assert len(json.loads((tmp_path / "out" / "big.json").read_text())["pages"]) == 6
    _one_result_set_each(tmp_path, ["big", "note"])


def test_sigterm_while_the_database_is_down_stops_within_the_drain_timeout(
        tmp_path: Path, pg_server: Any, start_daemon: Any) -> None:
    url = pg_server.create_db()
    cfg = _config(tmp_path, "a", url, lease=3.0)
    data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    data["daemon"]["drain_timeout"] = 5
    cfg.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    a = start_daemon(cfg)
    a.wait_ready()
    _drop_big(tmp_path, pages=4)
    held = wait_for(lambda: next((r for r in _rows(url) if r["state"] == "processing"), None), 120, "big.pdf claimed")
    wait_for(lambda: _pages_recorded(url, held["id"]) >= 1, 120, "a page of big.pdf recorded")
    pg_server.stop()
    try:
        time.sleep(2)  # the daemon notices: its heartbeat and page writes fail, its reads wait
        t0 = time.monotonic()
        a.signal(signal.SIGTERM)
        try:
            rc = a.proc.wait(timeout=60)
        except Exception:
            raise AssertionError(f"no stop within 60 s of SIGTERM with the database down:\n{a.log()}") from None
        took = time.monotonic() - t0
    finally:
        pg_server.start()
    log = a.log()
    # drain 5 s, then bounded steps: the heartbeat thread's join and the connects that fail at once
    assert rc == 0 and took < 5 + 12, (rc, took, log)
    # stopped cleanly: threads whose reads gave up at the drain's end log it (the stability
    # tracker's step, a rescan) and go on; nothing died unhandled
    assert log.rstrip().endswith("stopped") and "Exception in thread" not in log
    print(f"stopped {took:.1f}s after SIGTERM with the database down (drain_timeout 5)")
    b = start_daemon(cfg)  # the same state folder: takes its document back at once and finishes it
    wait_for(lambda: [r["state"] for r in _rows(url)] == ["done"], 240, "big.pdf done after the restart")
    b.stop()
    assert len(json.loads((tmp_path / "out" / "big.json").read_text())["pages"]) == 4
    _one_result_set_each(tmp_path, ["big"])
