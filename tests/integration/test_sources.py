"""The source file's lifecycle (daemon/service/sources.py) on real files and a real journal:
checks before reading, archive names planned before the outputs, the failed folder and its
note, and ``requeue``'s way back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_rules

from daemon.config import load_config
from daemon.errors import InputError
from daemon.journal.store import Journal
from daemon.models import DocState, Document
from daemon.service.sources import Sources, restore


@pytest.fixture
def env(tmp_path: Path) -> tuple[Sources, Journal, Path]:
    cfg = load_config(write_rules(tmp_path))
    journal = Journal(cfg.daemon.state_dir)
    return Sources(cfg, journal), journal, tmp_path


def _doc(journal: Journal, path: Path, data: bytes) -> Document:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    d = journal.admit(path, "inbox").document
    assert d is not None
    claimed = journal.claim(d.id)
    assert claimed is not None
    return claimed


def test_two_documents_archiving_one_name_get_two_targets_and_a_released_name_is_reused(env) -> None:  # type: ignore[no-untyped-def]
    sources, journal, tmp = env
    archive = tmp / "archive"
    a = _doc(journal, tmp / "inbox" / "scan.pdf", b"first")
    b = _doc(journal, tmp / "inbox" / "sub" / "scan.pdf", b"second")
    ta = sources.plan(a, a.path, "archive", archive, journal.get(a.id))
    tb = sources.plan(b, b.path, "archive", archive, journal.get(b.id))
    assert (ta, tb) == (archive / "scan.pdf", archive / "scan-1.pdf")  # neither moved yet: no clash
    sources.release(tb)  # b's outputs could not be written: its retry plans again, same name
    assert sources.plan(b, b.path, "archive", archive, journal.get(b.id)) == tb
    assert sources.act(a, a.path, "archive", ta) == ta and ta.read_bytes() == b"first"
    assert sources.act(b, b.path, "archive", tb) == tb and tb.read_bytes() == b"second"
    row = journal.get(a.id)
    assert row is not None and row.final_path == ta  # recorded (before the move)


def test_a_target_recorded_before_a_crash_is_planned_again(env) -> None:  # type: ignore[no-untyped-def]
    sources, journal, tmp = env
    archive = tmp / "archive"
    (archive).mkdir()
    a = _doc(journal, tmp / "inbox" / "scan.pdf", b"content")
    (archive / "scan.pdf").write_bytes(b"someone else's")  # the plain name is taken meanwhile
    journal.set_final_path(a.id, archive / "scan-7.pdf")  # recorded, then the crash: never moved
    assert sources.plan(a, a.path, "archive", archive, journal.get(a.id)) == archive / "scan-7.pdf"
    assert sources.plan(a, a.path, "keep", None, journal.get(a.id)) == a.path
    assert sources.plan(a, a.path, "delete", None, journal.get(a.id)) is None


def test_fail_moves_to_the_failed_folder_with_a_note_and_restore_puts_it_back(env) -> None:  # type: ignore[no-untyped-def]
    sources, journal, tmp = env
    a = _doc(journal, tmp / "inbox" / "bad.pdf", b"%PDF-broken")
    where = sources.fail(a, a.path, "the PDF is encrypted")
    journal.fail(a.id, "the PDF is encrypted", where)
    assert where == tmp / "failed" / "bad.pdf" and not a.path.exists()
    note = (tmp / "failed" / "bad.pdf.error.txt").read_text()
    assert "the PDF is encrypted" in note and "ocr-daemon requeue" in note
    row = journal.get(a.id)
    assert row is not None
    queued, msg = restore(journal, row)
    assert queued and msg == ""
    assert a.path.read_bytes() == b"%PDF-broken" and not (tmp / "failed" / "bad.pdf").exists()
    assert not (tmp / "failed" / "bad.pdf.error.txt").exists()
    row = journal.get(a.id)
    assert row is not None and row.state == DocState.QUEUED and row.final_path is None


def test_locate_refuses_links_and_follows_an_interrupted_move(env) -> None:  # type: ignore[no-untyped-def]
    sources, journal, tmp = env
    a = _doc(journal, tmp / "inbox" / "a.pdf", b"a")
    os.link(a.path, tmp / "elsewhere.pdf")  # a second hard link: content reachable from outside
    with pytest.raises(InputError, match="hard links"):
        sources.locate(a, journal.get(a.id))
    (tmp / "elsewhere.pdf").unlink()
    assert sources.locate(a, journal.get(a.id)) == a.path
    # killed between link() and unlink() of the archive move: finish the move, read from there
    moved = tmp / "archive" / "a.pdf"
    moved.parent.mkdir()
    journal.set_final_path(a.id, moved)
    os.link(a.path, moved)
    assert sources.locate(a, journal.get(a.id)) == moved and not a.path.exists()
    b = _doc(journal, tmp / "inbox" / "b.pdf", b"b")
    b.path.unlink()
    b.path.symlink_to(tmp / "elsewhere.pdf")
    with pytest.raises(InputError, match="symbolic link"):
        sources.locate(b, journal.get(b.id))
