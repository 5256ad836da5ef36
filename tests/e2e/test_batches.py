"""Scanner batches end to end (docs/batches.md): a duplex stack of three documents in three
languages with two separator sheets (QR, Code 128) and blank backs comes out as three documents,
through ``ocr-daemon once`` and through the running daemon; a separator value that does not match
does not split; ``{subdir}``/``match.subdir`` route the parts; a kill -9 in the middle of a
split, and an original that cannot be moved away, neither lose nor double a part."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import docgen
import pytest
import scangen
from conftest import run_cli, wait_for, write_rules
from faultkit import IN_CREATE, Inotify, fast_rules, journal_rows, temp_files

LANGS = ["en", "de", "fr"]
DOCS = [[docgen.SAMPLES[lang]] for lang in LANGS]


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("batch") / "scan.pdf"
    return path, scangen.duplex_batch(path, DOCS, ["PATCH T", "PATCH T"], seed=11)


def sidecars(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.rglob("*.json"))]


def check_three_documents(out: Path, plan: list[str]) -> None:
    """One sidecar per part, with its language, text, original pages and the pages left out."""
    sides = sorted(sidecars(out), key=lambda s: s["batch"]["part"])
    assert [s["batch"]["part"] for s in sides] == [1, 2, 3], [s.get("source") for s in sides]
    for k, side in enumerate(sides):
        assert Path(side["source"]).name == f"scan.part{k + 1}.pdf"
        assert side["language"] == LANGS[k] and len(side["pages"]) == 1
        assert side["batch"]["pages"] == [i + 1 for i, w in enumerate(plan) if w == f"doc{k}"]
        text = Path(next(o for o in side["outputs"] if o.endswith(".txt"))).read_text(encoding="utf-8")
        found = [w for w in docgen.SAMPLE_WORDS[LANGS[k]] if w in text]
        assert len(found) >= 4, (LANGS[k], text)
    dropped = {d["page"]: d["reason"] for s in sides for d in s["dropped_pages"]}
    assert dropped == {i + 1: ("separator" if w == "separator" else "blank")
                       for i, w in enumerate(plan) if w in ("blank", "separator")}


def test_once_splits_a_batch_into_three_documents(tmp_path: Path, batch: tuple[Path, list[str]]) -> None:
    cfg = write_rules(tmp_path, inboxes=[{"path": "inbox", "separator": "PATCH T", "drop_blank_pages": True}],
                      routes=[{"name": "all", "destination": "out"}])
    src = shutil.copy(batch[0], tmp_path / "inbox" / "scan.pdf")
    r = run_cli("once", str(src), "--config", str(cfg), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "split into 3 part(s)" in r.stdout and r.stdout.count(": done") == 3, r.stdout
    check_three_documents(tmp_path / "out", batch[1])
    assert (tmp_path / "inbox" / "batch-originals" / "scan.pdf").read_bytes() == batch[0].read_bytes()


def test_daemon_splits_routes_by_subdir_and_ignores_other_separators(
    tmp_path: Path, batch: tuple[Path, list[str]], start_daemon,  # type: ignore[no-untyped-def]
) -> None:
    cfg = write_rules(
        tmp_path,
        inboxes=[
            {"path": "inbox", "recursive": True, "stability_delay": 0.5, "separator": "PATCH T", "drop_blank_pages": True},
            {"path": "plain", "stability_delay": 0.5, "separator": "PATCH X"},
        ],
        routes=[
            {"name": "acme", "match": {"subdir": "acme*"}, "destination": "out/{subdir}", "source": "archive",
             "archive_to": "done/{subdir}"},
            {"name": "rest", "destination": "other"},
        ],
    )
    (tmp_path / "plain").mkdir()
    # a stack whose separator sheet says PATCH T, in an inbox that splits at PATCH X: one document
    other = tmp_path / "stage" / "mixed.pdf"
    other.parent.mkdir()
    scangen.scanned_pdf(other, [scangen.scan(scangen.text_page(docgen.SAMPLES["en"]), seed=1),
                                scangen.scan(scangen.separator_sheet("PATCH T"), seed=2),
                                scangen.scan(scangen.text_page(docgen.SAMPLES["de"]), seed=3)])
    d = start_daemon(cfg)
    d.wait_ready()
    (tmp_path / "inbox" / "acme").mkdir()
    staged = tmp_path / "inbox" / "acme" / ".scan.pdf.tmp"
    shutil.copy(batch[0], staged)
    staged.rename(tmp_path / "inbox" / "acme" / "scan.pdf")
    shutil.copy(other, tmp_path / "plain" / "mixed.pdf")
    wait_for(lambda: len(list((tmp_path / "out").rglob("*.json"))) == 3 and list((tmp_path / "other").glob("*.json")),
             timeout=600, what="three parts and the unsplit file done")
    wait_for(lambda: not list((tmp_path / "inbox" / "acme").glob("*.part*.pdf")), timeout=60, what="parts archived")
    d.stop()
    check_three_documents(tmp_path / "out" / "acme", batch[1])  # {subdir} in the destination, match.subdir
    assert sorted(p.name for p in (tmp_path / "done" / "acme").iterdir()) == [f"scan.part{k}.pdf" for k in (1, 2, 3)]
    assert (tmp_path / "inbox" / "batch-originals" / "acme" / "scan.pdf").is_file()
    (plain,) = sidecars(tmp_path / "other")
    assert len(plain["pages"]) == 3 and "batch" not in plain and "dropped_pages" not in plain
    assert (tmp_path / "plain" / "mixed.pdf").is_file()  # kept, not split
    assert len(journal_rows(tmp_path)) == 4  # three parts and the unsplit file; never the original


def rules(tmp: Path, **inbox: Any) -> Path:
    return fast_rules(tmp, inbox={"separator": "PATCH T", "drop_blank_pages": True, **inbox},
                      engine={"max_pages": 50})


def check_once_each(tmp: Path, archived_original: Path) -> None:
    sides = sidecars(tmp / "out")
    assert sorted(s["batch"]["part"] for s in sides) == [1, 2, 3], [s["source"] for s in sides]
    assert sorted(p.name for p in (tmp / "archive").iterdir()) == [f"scan.part{k}.pdf" for k in (1, 2, 3)]
    assert archived_original.is_file()
    assert not list((tmp / "inbox").glob("*.pdf")) and not temp_files(tmp)
    rows = journal_rows(tmp)
    assert sorted(r["state"] for r in rows) == ["done"] * 3, rows
    assert not list((tmp / "state" / "batches").glob("*.json"))


@pytest.mark.parametrize("point", [".scan.part2.pdf.ocr-tmp", "scan.part2.pdf"])
def test_kill9_during_the_split_loses_and_doubles_nothing(
    tmp_path: Path, batch: tuple[Path, list[str]], start_daemon, point: str,  # type: ignore[no-untyped-def]
) -> None:
    """Killed the moment a part's temp file is created (before the split is recorded: it is done
    again from the start) or the moment a part is published (after: only finished)."""
    cfg = rules(tmp_path)
    d = start_daemon(cfg)
    d.wait_ready()
    ino = Inotify()
    try:
        ino.watch(tmp_path / "inbox", IN_CREATE)
        shutil.copy(batch[0], tmp_path / "inbox" / ".scan.pdf.tmp")
        (tmp_path / "inbox" / ".scan.pdf.tmp").rename(tmp_path / "inbox" / "scan.pdf")
        hit = False
        for _ in range(600):
            if any(p.name == point for p, _ in ino.read(1.0)):
                d.signal(signal.SIGKILL)
                hit = True
                break
        assert hit, d.log()
    finally:
        ino.close()
    d.kill9()
    assert not list((tmp_path / "out").glob("*.json")) if (tmp_path / "out").exists() else True
    d2 = start_daemon(cfg)
    wait_for(lambda: len(list((tmp_path / "archive").glob("*.pdf"))) == 3 if (tmp_path / "archive").exists() else False,
             timeout=600, what="three parts done and archived")
    d2.stop()
    check_once_each(tmp_path, tmp_path / "inbox" / "batch-originals" / "scan.pdf")
    # published before the kill: the restart finished the recorded split; else it split again
    assert ("finished scanner batch split" in d2.log()) == (not point.startswith(".")), d2.log()


def test_original_that_cannot_be_moved_is_not_split_twice(
    tmp_path: Path, batch: tuple[Path, list[str]], start_daemon,  # type: ignore[no-untyped-def]
) -> None:
    """The parts are published, processed and archived while the original cannot leave the inbox
    (its archive folder is blocked by a file); rescans find it again and only retry the move."""
    cfg = rules(tmp_path, batch_archive="blocked")
    (tmp_path / "blocked").write_text("a file where the folder should be")
    d = start_daemon(cfg)
    d.wait_ready()
    shutil.copy(batch[0], tmp_path / "inbox" / ".scan.pdf.tmp")
    (tmp_path / "inbox" / ".scan.pdf.tmp").rename(tmp_path / "inbox" / "scan.pdf")
    wait_for(lambda: len(list((tmp_path / "archive").glob("*.pdf"))) == 3 if (tmp_path / "archive").exists() else False,
             timeout=600, what="three parts done and archived")
    d.wait_log("batch split not finished", count=2, timeout=60)  # the rescans came back to it
    assert (tmp_path / "inbox" / "scan.pdf").is_file()
    (tmp_path / "blocked").unlink()
    wait_for(lambda: (tmp_path / "blocked" / "scan.pdf").is_file(), timeout=60, what="the original moved")
    d.stop()
    check_once_each(tmp_path, tmp_path / "blocked" / "scan.pdf")
