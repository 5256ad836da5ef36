"""Several daemons on one inbox through one PostgreSQL journal (issue 28): real daemons, real
Tesseract, a real PostgreSQL server the tests start (tests/pgserver.py), real ``kill -9``."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import docgen
import psycopg
import yaml
from conftest import run_cli, wait_for
from psycopg.rows import dict_row

LETTER = "Dear customer, thank you for your order. The invoice is attached. Kind regards, the shop."


def _config(tmp: Path, name: str, url: str, lease: float = 3.0) -> Path:
    """One daemon's rules.yaml: its own state folder, the shared inbox, outputs and journal."""
    home = tmp / name
    home.mkdir()
    cfg = {
        "daemon": {"state_dir": str(home / "state"), "failed_dir": str(tmp / "failed"), "rescan_interval": 2,
                   "retry_backoff": 1, "drain_timeout": 20, "workers": 1, "render_workers": 1, "http": None,
                   "journal_url": url, "journal_lease": lease},
        "engine": {"kind": "tesseract", "tesseract": {"threads": 1}},
        "inboxes": [{"path": str(tmp / "inbox"), "name": "inbox", "stability_delay": 0.5, "invalid_grace": 2}],
        "routes": [{"name": "all", "destination": str(tmp / "out"), "formats": ["txt", "json"], "source": "archive",
                    "archive_to": str(tmp / "archive")}],
    }
    path = home / "rules.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    (tmp / "inbox").mkdir(exist_ok=True)
    return path


def _rows(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url, row_factory=dict_row) as c:
        return list(c.execute("SELECT id, path, state, owner, attempts FROM documents ORDER BY id").fetchall())


def _pages_recorded(url: str, doc_id: int) -> int:
    with psycopg.connect(url) as c:
        row = c.execute("SELECT count(*) FROM pages WHERE doc_id=%s", (doc_id,)).fetchone()
        return int(row[0]) if row else 0


def _one_result_set_each(tmp: Path, stems: list[str]) -> None:
    outs = Counter(p.stem for p in (tmp / "out").iterdir())
    assert sorted(outs) == sorted(stems), outs
    assert set(outs.values()) == {2}  # txt + json, no name-1.* second set
    assert sorted(p.stem for p in (tmp / "archive").iterdir()) == sorted(stems)


def test_two_daemons_share_an_inbox_and_one_finishes_what_a_killed_one_held(tmp_path: Path, pg_url: str, start_daemon) -> None:  # type: ignore[no-untyped-def]
    a = start_daemon(_config(tmp_path, "a", pg_url))
    b = start_daemon(_config(tmp_path, "b", pg_url))
    a.wait_ready()
    b.wait_ready()
    big = docgen.make_pdf(tmp_path / "big.pdf", [f"Page {i + 1}. {LETTER}" for i in range(6)], scanned=True)
    shutil.move(big, tmp_path / "inbox" / "big.pdf")
    smalls = []
    for i in range(4):
        p = docgen.make_image(tmp_path / f"s{i}.png", f"Note {i}. {LETTER}")
        shutil.move(p, tmp_path / "inbox" / p.name)
        smalls.append(p.stem)
    # the 6-page scan is taken by one daemon; once it has recorded a page, that daemon is killed
    held = wait_for(lambda: next((r for r in _rows(pg_url) if r["path"].endswith("big.pdf") and r["state"] == "processing"),
                                 None), 120, "big.pdf claimed")
    wait_for(lambda: _pages_recorded(pg_url, held["id"]) >= 1, 120, "a page of big.pdf recorded")
    victim, survivor = (a, b) if held["owner"].endswith(f":{a.proc.pid}") else (b, a)
    assert held["owner"].endswith(f":{victim.proc.pid}")
    victim.kill9()
    survivor.wait_log(f"doc-{held['id']} resuming:", 120)
    wait_for(lambda: all(r["state"] == "done" for r in _rows(pg_url)) and len(_rows(pg_url)) == 5, 240, "all done")
    status = run_cli("status", "--json", "--config", str(survivor.config))
    text = run_cli("status", "--config", str(survivor.config)).stdout
    survivor.stop()
    assert "daemons of this journal:" in text and f"pid {survivor.proc.pid}" in text and "alive" in text
    assert "lease ran out" in survivor.log()
    rows = _rows(pg_url)
    big_row = next(r for r in rows if r["path"].endswith("big.pdf"))
    assert big_row["owner"].endswith(f":{survivor.proc.pid}") and big_row["attempts"] == 2
    assert len(json.loads((tmp_path / "out" / "big.json").read_text())["pages"]) == 6
    _one_result_set_each(tmp_path, ["big", *smalls])
    summary = json.loads(status.stdout)
    assert {d["pid"] for d in summary["daemons"]} == {a.proc.pid, b.proc.pid}
    assert {d["pid"]: d["alive"] for d in summary["daemons"]}[victim.proc.pid] is False


def test_daemons_wait_through_a_database_restart_and_lose_nothing(tmp_path: Path, pg_server: Any, start_daemon) -> None:  # type: ignore[no-untyped-def]
    url = pg_server.create_db()
    a = start_daemon(_config(tmp_path, "a", url, lease=10))
    b = start_daemon(_config(tmp_path, "b", url, lease=10))
    a.wait_ready()
    b.wait_ready()
    stems = []
    for i in range(2):
        p = docgen.make_image(tmp_path / f"first{i}.png", f"First {i}. {LETTER}")
        shutil.move(p, tmp_path / "inbox" / p.name)
        stems.append(p.stem)
    wait_for(lambda: any(r["state"] == "processing" for r in _rows(url)), 120, "work under way")
    pg_server.stop()
    for i in range(2):  # dropped while the journal is away: admitted once it is back
        p = docgen.make_image(tmp_path / f"during{i}.png", f"During {i}. {LETTER}")
        shutil.move(p, tmp_path / "inbox" / p.name)
        stems.append(p.stem)
    time.sleep(4)
    pg_server.start()
    try:
        wait_for(lambda: len(_rows(url)) == 4 and all(r["state"] == "done" for r in _rows(url)), 240, "all done")
    except AssertionError:
        raise AssertionError(f"not all done after the restart: {_rows(url)}\n{a.log()}\n{b.log()}") from None
    for d in (a, b):
        assert d.proc.poll() is None, d.log()  # neither daemon gave up
    a.stop()
    b.stop()
    assert "cannot be written" in a.log() + b.log()
    _one_result_set_each(tmp_path, stems)


def test_the_default_sqlite_journal_never_imports_psycopg(tmp_path: Path) -> None:
    """The default (no journal_url) never imports psycopg: a plain install keeps working."""
    import subprocess
    import sys

    code = "import sys, daemon.journal.factory, daemon.service.service; print('psycopg' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

