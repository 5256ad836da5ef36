"""The daemon as users run it: ``ocr-daemon run`` in a subprocess, real inotify, real Tesseract,
real SQLite, real files dropped into a temp inbox."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import docgen
import pytest
import yaml
from conftest import run_cli, sidecars, wait_for, write_rules

LETTER_EN = (
    "Dear Mr Smith,\n"
    "Thank you for your letter of 3 March. We are pleased to confirm your appointment "
    "on Monday at ten o'clock.\nYours sincerely,\nJane Doe"
)
RECHNUNG_DE = (
    "Rechnung Nr. 2024-117\nRechnungsdatum: 12.11.2024\n"
    "Sehr geehrte Damen und Herren, wir berechnen Ihnen folgende Leistungen.\n"
    "Gesamtbetrag 1.234,56 EUR inkl. MwSt.\nZahlbar bis 15.12.2024 auf IBAN DE89 3704 0044 0532 0130 00"
)


def journal_rows(tmp: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(tmp / "state" / "journal.sqlite3")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("SELECT * FROM documents ORDER BY id")]
    db.close()
    return rows


def no_temp_files(root: Path) -> bool:
    return not [p for p in root.rglob("*") if p.name.endswith(".ocr-tmp")]


def test_dropped_file_is_seen_by_inotify_processed_and_written_beside(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    # A rescan interval of an hour: only inotify can make this file be seen in time.
    cfg = write_rules(tmp_path, daemon={"state_dir": "state", "failed_dir": "failed", "rescan_interval": 3600})
    d = start_daemon(cfg)
    d.wait_ready()
    assert "with inotify" in d.log()
    tmp_src = tmp_path / "letter.png"
    docgen.make_image(tmp_src, LETTER_EN)
    shutil.move(tmp_src, tmp_path / "inbox" / "letter.png")  # mv into the inbox
    out = tmp_path / "inbox" / "letter.json"
    wait_for(out.exists, 60, "sidecar beside the source")
    side = json.loads(out.read_text())
    assert side["language"] == "en"
    assert side["engine"] == "tesseract"
    assert side["route"] == "default"
    assert side["source"] == str(tmp_path / "inbox" / "letter.png")
    assert sorted(Path(p).name for p in side["outputs"]) == ["letter.json", "letter.md", "letter.txt"]
    # Tesseract reads an image at its own size when that lies between 1540 px and A4 at
    # engine.tesseract.render_dpi (300): this 150 dpi A4 letter is not scaled down to 1540 px
    assert len(side["pages"]) == 1 and side["pages"][0]["size"] == [1240, 1753]
    assert "Smith" in (tmp_path / "inbox" / "letter.txt").read_text()
    assert (tmp_path / "inbox" / "letter.png").exists()  # default route keeps the source
    assert d.stop() == 0
    rows = journal_rows(tmp_path)
    assert [r["state"] for r in rows] == ["done"]
    # Restart: the kept source (and its outputs beside it) is not processed again.
    d2 = start_daemon(cfg)
    d2.wait_ready()
    time.sleep(2)
    assert d2.stop() == 0
    assert len(journal_rows(tmp_path)) == 1
    assert "doc-2" not in d2.log()


def test_files_present_before_start_and_slow_writes(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = write_rules(tmp_path, inboxes=[{"path": "inbox", "stability_delay": 1.0, "invalid_grace": 30}])
    docgen.make_image(tmp_path / "inbox" / "early.jpg", LETTER_EN, fmt="jpeg")
    d = start_daemon(cfg)
    d.wait_ready()
    wait_for((tmp_path / "inbox" / "early.json").exists, 60, "file present before start processed")
    # A PDF written in 12 chunks, 0.4 s apart (each gap < stability_delay): it must be taken
    # only once complete -- the sidecar's hash is the hash of the whole file.
    src = docgen.make_pdf(tmp_path / "slow-src.pdf", [RECHNUNG_DE])
    data = src.read_bytes()
    dst = tmp_path / "inbox" / "slow.pdf"
    step = len(data) // 12 + 1
    with open(dst, "wb") as f:
        for i in range(0, len(data), step):
            f.write(data[i : i + step])
            f.flush()
            time.sleep(0.4)
    wait_for((tmp_path / "inbox" / "slow.json").exists, 60, "slow file processed")
    import hashlib

    side = json.loads((tmp_path / "inbox" / "slow.json").read_text())
    assert side["sha256"] == hashlib.sha256(data).hexdigest()
    assert side["language"] == "de"
    d.stop()
    rows = journal_rows(tmp_path)
    assert sorted(Path(r["path"]).name for r in rows) == ["early.jpg", "slow.pdf"]
    assert {r["state"] for r in rows} == {"done"}


def test_kill9_mid_document_then_restart_loses_and_doubles_nothing(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = write_rules(
        tmp_path,
        routes=[{"name": "all", "destination": "out", "source": "archive", "archive_to": "archive"}],
    )
    pages = [f"Page {i + 1}. " + LETTER_EN for i in range(6)]
    src = docgen.make_pdf(tmp_path / "multi.pdf", pages, scanned=True)
    d = start_daemon(cfg)
    d.wait_ready()
    shutil.move(src, tmp_path / "inbox" / "multi.pdf")
    d.wait_log("doc-1 processing", 60)
    time.sleep(1.5)  # well inside the OCR of a 6-page scan
    d.kill9()
    rows = journal_rows(tmp_path)
    assert rows[0]["state"] == "processing"  # the crash left it mid-document
    d2 = start_daemon(cfg)
    d2.wait_log("doc-1 done", 120)
    d2.stop()
    assert "re-queued 1 document(s)" in d2.log()
    outs = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert outs == ["multi.json", "multi.md", "multi.txt"]  # one complete set, no multi-1.*
    assert sorted(p.name for p in (tmp_path / "archive").iterdir()) == ["multi.pdf"]
    assert not (tmp_path / "inbox" / "multi.pdf").exists()
    assert no_temp_files(tmp_path)
    rows = journal_rows(tmp_path)
    assert [(r["state"], r["attempts"]) for r in rows] == [("done", 2)]
    side = json.loads((tmp_path / "out" / "multi.json").read_text())
    assert len(side["pages"]) == 6


def test_duplicates_are_linked_not_reprocessed(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = write_rules(tmp_path, routes=[{"name": "all", "destination": "out"}])
    d = start_daemon(cfg)
    d.wait_ready()
    docgen.make_image(tmp_path / "a.png", LETTER_EN)
    shutil.copy(tmp_path / "a.png", tmp_path / "inbox" / "a.png")
    wait_for((tmp_path / "out" / "a.json").exists, 60, "first copy processed")
    shutil.copy(tmp_path / "a.png", tmp_path / "inbox" / "copy-of-a.png")
    d.wait_log("duplicate of doc-1", 30)
    d.stop()
    side = json.loads((tmp_path / "out" / "copy-of-a.json").read_text())
    assert side["duplicate_of"]["document_id"] == 1
    assert str(tmp_path / "out" / "a.txt") in side["duplicate_of"]["outputs"]
    assert not (tmp_path / "out" / "copy-of-a.txt").exists()  # no second OCR
    assert [r["state"] for r in journal_rows(tmp_path)] == ["done", "duplicate"]


def test_every_route_action(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    routes = [
        {"name": "del", "match": {"filename": "del-*"}, "formats": ["txt"], "destination": "out/{inbox}/{language}", "source": "delete"},
        {"name": "arch", "match": {"filename": "arch-*", "language": ["de"]}, "formats": ["md", "json"],
         "destination": "out/{yyyy}/{stem}", "source": "archive", "archive_to": "archive/{language}"},
        {"name": "keep", "match": {"pages": {"min": 1, "max": 1}}, "formats": ["txt", "json"], "destination": "beside", "source": "keep"},
    ]
    cfg = write_rules(tmp_path, routes=routes)
    d = start_daemon(cfg)
    d.wait_ready()
    docgen.make_image(tmp_path / "inbox" / "del-1.png", LETTER_EN)
    docgen.make_image(tmp_path / "inbox" / "arch-1.png", RECHNUNG_DE)
    docgen.make_image(tmp_path / "inbox" / "keep-1.png", LETTER_EN)
    year = time.strftime("%Y")
    wait_for(lambda: len([r for r in journal_rows(tmp_path) if r["state"] == "done"]) == 3, 90, "three documents")
    d.stop()
    # delete: outputs in the templated folder, source gone
    assert (tmp_path / "out" / "inbox" / "en" / "del-1.txt").exists()
    assert not (tmp_path / "inbox" / "del-1.png").exists()
    # archive: outputs per template, source moved to archive/<language>
    assert sorted(p.name for p in (tmp_path / "out" / year / "arch-1").iterdir()) == ["arch-1.json", "arch-1.md"]
    assert (tmp_path / "archive" / "de" / "arch-1.png").exists()
    assert not (tmp_path / "inbox" / "arch-1.png").exists()
    # keep + beside
    assert (tmp_path / "inbox" / "keep-1.png").exists()
    assert (tmp_path / "inbox" / "keep-1.txt").exists() and (tmp_path / "inbox" / "keep-1.json").exists()
    assert not (tmp_path / "inbox" / "keep-1.md").exists()
    routes_taken = {Path(r["path"]).name: r["route"] for r in journal_rows(tmp_path)}
    assert routes_taken == {"del-1.png": "del", "arch-1.png": "arch", "keep-1.png": "keep"}


def test_bad_input_goes_to_failed_with_reason_and_daemon_keeps_going(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = write_rules(tmp_path, routes=[{"name": "all", "destination": "out"}])
    d = start_daemon(cfg)
    d.wait_ready()
    (tmp_path / "inbox" / "garbage.pdf").write_bytes(b"<html>this is not a pdf</html>")
    docgen.make_encrypted_pdf(tmp_path / "inbox" / "locked.pdf")
    (tmp_path / "inbox" / "empty.png").write_bytes(b"")
    docgen.make_image(tmp_path / "inbox" / "good.png", LETTER_EN)
    wait_for((tmp_path / "out" / "good.json").exists, 60, "good file processed")
    wait_for(lambda: len(list((tmp_path / "failed").glob("*.error.txt"))) == 3 if (tmp_path / "failed").exists() else False, 60, "3 failures")
    assert d.proc.poll() is None  # still running
    d.stop()
    failed = {p.name for p in (tmp_path / "failed").iterdir()}
    assert {"garbage.pdf", "locked.pdf", "empty.png"} <= failed
    assert "password" in (tmp_path / "failed" / "locked.pdf.error.txt").read_text().lower()
    assert "not a pdf" in (tmp_path / "failed" / "garbage.pdf.error.txt").read_text().lower()
    assert "empty" in (tmp_path / "failed" / "empty.png.error.txt").read_text().lower()
    states = {Path(r["path"]).name: r["state"] for r in journal_rows(tmp_path)}
    assert states == {"garbage.pdf": "failed", "locked.pdf": "failed", "empty.png": "failed", "good.png": "done"}
    # status shows them; requeue puts one back into the inbox and the queue
    r = run_cli("status", "--config", str(cfg))
    assert r.returncode == 0 and "failed      3" in r.stdout and "locked.pdf" in r.stdout
    r = run_cli("requeue", "--config", str(cfg), str(tmp_path / "failed" / "garbage.pdf"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "inbox" / "garbage.pdf").exists() and not (tmp_path / "failed" / "garbage.pdf.error.txt").exists()
    assert {Path(r["path"]).name: r["state"] for r in journal_rows(tmp_path)}["garbage.pdf"] == "queued"


def test_status_creates_no_journal_and_root_leaves_the_state_folder_to_its_owner(tmp_path: Path) -> None:
    """``sudo ocr-daemon status`` / ``requeue`` must not leave root-owned files in the service's
    state folder: the daemon, running as ``ocr-daemon``, would then fail with "attempt to write a
    readonly database". Status used to create the journal (and its folder) as root before the
    first start. The -wal/-shm files a root process opens are given to the journal's owner by
    SQLite itself, which the second half relies on and checks."""
    from daemon.journal.store import Journal

    daemon_section = {"state_dir": "state", "failed_dir": "failed", "rescan_interval": 2}
    cfg = write_rules(tmp_path, daemon=daemon_section)
    r = run_cli("status", "--config", str(cfg))
    assert r.returncode == 0 and "none yet" in r.stdout, r.stdout + r.stderr
    assert not (tmp_path / "state").exists()  # no journal, not even its folder
    r = run_cli("requeue", "--config", str(cfg), "--failed")
    assert r.returncode == 0 and not (tmp_path / "state").exists(), r.stderr
    if os.geteuid() != 0:
        pytest.skip("the ownership half needs root")
    # a state folder that the unprivileged owner can reach (pytest's tmp_path is root-only)
    base = Path(tempfile.mkdtemp(prefix="ocrd-owner-", dir="/tmp"))
    try:
        base.chmod(0o755)
        state = base / "state"
        cfg = write_rules(tmp_path, daemon={**daemon_section, "state_dir": str(state)})
        j = Journal(state)
        (base / "a.pdf").write_bytes(b"%PDF-1.4 not read")
        j.admit(base / "a.pdf", "inbox")
        j.close()
        nobody = 65534
        for p in [state, *state.iterdir()]:
            os.chown(p, nobody, nobody)
        state.chmod(0o750)
        def owners() -> dict[str, int]:
            return {p.name: p.lstat().st_uid for p in [state, *state.iterdir()]}

        r = run_cli("status", "--config", str(cfg))
        assert r.returncode == 0 and "queued      1" in r.stdout, r.stdout + r.stderr
        # a read-only SQLite reader leaves -wal/-shm behind: they must be the owner's, not root's
        assert set(owners().values()) == {nobody} and len(owners()) > 2, owners()
        r = run_cli("requeue", "--config", str(cfg), "--failed")
        assert r.returncode == 0, r.stderr
        assert set(owners().values()) == {nobody}, owners()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_sighup_reloads_rules_and_keeps_old_ones_when_invalid(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = write_rules(tmp_path, routes=[{"name": "first", "destination": "out-a"}])
    d = start_daemon(cfg)
    d.wait_ready()
    docgen.make_image(tmp_path / "inbox" / "one.png", LETTER_EN)
    wait_for((tmp_path / "out-a" / "one.json").exists, 60, "first route")
    data = yaml.safe_load(cfg.read_text())
    data["routes"] = [{"name": "second", "destination": "out-b"}]
    cfg.write_text(yaml.safe_dump(data))
    d.signal(signal.SIGHUP)
    d.wait_log("reloaded", 20)
    docgen.make_image(tmp_path / "inbox" / "two.png", LETTER_EN)
    wait_for((tmp_path / "out-b" / "two.json").exists, 60, "second route after reload")
    cfg.write_text("inboxes: [{path: inbox, watch: never}]\n")  # invalid
    d.signal(signal.SIGHUP)
    d.wait_log("is invalid, keeping the running config", 20)
    docgen.make_image(tmp_path / "inbox" / "three.png", LETTER_EN)
    wait_for((tmp_path / "out-b" / "three.json").exists, 60, "old config kept")
    assert d.proc.poll() is None
    assert d.stop() == 0


def test_invalid_config_exits_2_without_starting(tmp_path: Path) -> None:
    cfg = tmp_path / "rules.yaml"
    cfg.write_text("inboxes: []\n")
    r = run_cli("run", "--config", str(cfg), timeout=60)
    assert r.returncode == 2
    assert "inboxes" in r.stderr


def test_once_and_route_explain(tmp_path: Path) -> None:
    shipped = yaml.safe_load((Path(__file__).resolve().parents[2] / "rules.yaml").read_text())
    cfg = write_rules(
        tmp_path,
        doctypes=shipped["doctypes"],
        routes=[{"name": "invoices", "match": {"doctype": "invoice"}, "destination": "invoices/{language}",
                 "source": "delete"},
                {"name": "rest", "destination": "rest"}],
    )
    f = docgen.make_image(tmp_path / "rechnung.png", RECHNUNG_DE)
    r = run_cli("route", "--explain", "--config", str(cfg), str(f))
    assert r.returncode == 0, r.stderr
    assert "invoice" in r.stdout and "route 'invoices'" in r.stdout
    r = run_cli("once", "--config", str(cfg), str(f))
    assert r.returncode == 0, r.stderr
    assert str(tmp_path / "invoices" / "de" / "rechnung.txt") in r.stdout
    side = sidecars(tmp_path / "invoices")[0]
    assert (side["language"], side["doctype"], side["route"]) == ("de", "invoice", "invoices")
    # The raw engine output is kept, and `convert` rebuilds outputs from it without OCR.
    raw = tmp_path / "state" / "raw" / "1" / "rechnung.raw.md"
    assert raw.read_text(encoding="utf-8").startswith("<!-- page 1 -->")
    r = run_cli("convert", str(raw), "--to", "txt,csv", "--plain", "--out", str(tmp_path / "again"))
    assert r.returncode == 0, r.stderr
    assert "Rechnung" in (tmp_path / "again" / "rechnung.txt").read_text(encoding="utf-8")
    r = run_cli("once", "--config", str(cfg), str(f))
    assert r.returncode == 0 and "already done" in r.stdout
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"nope")
    r = run_cli("once", "--config", str(cfg), str(bad))
    assert r.returncode == 1 and "failed" in r.stderr
    # like ocrmypdf or tesseract, `once` leaves the files it was given where they are ...
    assert bad.read_bytes() == b"nope" and not (tmp_path / "failed").exists()
    assert f.is_file()  # the done one too, though its route says `source: delete`
    # ... unless asked to act as the daemon would
    bad2 = tmp_path / "bad2.pdf"
    bad2.write_bytes(b"nope again")
    r = run_cli("once", "--apply-source-action", "--config", str(cfg), str(bad2))
    assert r.returncode == 1 and "moved to" in r.stderr
    assert not bad2.exists() and (tmp_path / "failed" / "bad2.pdf.error.txt").exists()


def test_small_file_is_not_held_behind_a_big_pdf(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = write_rules(tmp_path, routes=[{"name": "all", "destination": "out"}])
    big = docgen.make_pdf(tmp_path / "big.pdf", [f"Page {i + 1}. " + LETTER_EN for i in range(12)], scanned=True)
    d = start_daemon(cfg)
    d.wait_ready()
    shutil.move(big, tmp_path / "inbox" / "big.pdf")
    d.wait_log("doc-1 processing", 60)
    docgen.make_image(tmp_path / "small.png", LETTER_EN)
    shutil.move(tmp_path / "small.png", tmp_path / "inbox" / "small.png")
    d.wait_log("doc-1 done", 180)
    d.stop()
    log = d.log()
    # The one-page file overtakes the 12-page PDF: a document holds at most a window of pages in
    # the engine (and its page gets priority 0), so the small page waits behind a few, not all.
    assert "doc-2 done" in log and log.index("doc-2 done") < log.index("doc-1 done"), log


def test_archive_folder_inside_a_recursive_inbox_is_not_taken_again(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = write_rules(
        tmp_path,
        inboxes=[{"path": "inbox", "recursive": True, "stability_delay": 0.5}],
        routes=[{"name": "all", "destination": "inbox/out", "source": "archive", "archive_to": "inbox/archived/{language}"}],
    )
    d = start_daemon(cfg)
    d.wait_ready()
    docgen.make_image(tmp_path / "inbox" / "letter.png", LETTER_EN)
    wait_for((tmp_path / "inbox" / "archived" / "en" / "letter.png").exists, 60, "source archived inside the inbox")
    time.sleep(5)  # two rescans (rescan_interval 2 s) and the inotify events of the move
    d.stop()
    rows = journal_rows(tmp_path)
    assert [(Path(r["path"]).name, r["state"]) for r in rows] == [("letter.png", "done")], rows
    # After a restart (the journal, not memory, must remember) it is still not taken.
    d2 = start_daemon(cfg)
    d2.wait_ready()
    time.sleep(3)
    d2.stop()
    assert len(journal_rows(tmp_path)) == 1
