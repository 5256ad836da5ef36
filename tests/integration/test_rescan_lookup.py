"""The rescan's lookup of a whole folder (``Journal.known_under``, issue 34): on SQLite and on a
real PostgreSQL server, what it says of each file is what the stability tracker's per-file check
(``find``: the newest row with the file at, or moved to, that path, with that size and mtime)
says, or it leaves the file out (then the tracker asks); sibling folders whose names start the
same and files with LIKE's wildcards in their names are told apart; a rescan through the real
watcher offers exactly the files that changed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from daemon.config import InboxCfg
from daemon.intake import watch
from daemon.intake.watch import InboxWatcher
from daemon.journal.store import Journal
from daemon.models import Candidate


def _file(p: Path, data: bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def _skipped_by_find(j: Journal, p: Path) -> bool:
    row, st = j.find(p), os.lstat(p)
    return bool(row and row.path == p and row.size == st.st_size and row.mtime == st.st_mtime)


def test_known_under_agrees_with_find_for_every_file_of_the_folder(tmp_path: Path, open_j: Callable[[Path], Journal]) -> None:
    j = open_j(tmp_path / "state")
    inbox = tmp_path / "in"
    kept = _file(inbox / "kept.pdf", b"kept")
    deep = _file(inbox / "2026" / "12" / "deep.pdf", b"deep")
    touched = _file(inbox / "touched.pdf", b"touched")
    wild = _file(inbox / "100%_sure.pdf", b"wildcards")
    new = _file(inbox / "new.pdf", b"new")
    moved = _file(inbox / "moved.pdf", b"moved")
    sibling = _file(tmp_path / "in2" / "kept.pdf", b"a sibling folder")  # "in2" sorts between "in/" and "in0"
    beside = _file(tmp_path / "in.pdf", b"beside the folder")
    archived = _file(inbox / "archived.pdf", b"archived")
    for p in (archived, kept, deep, touched, wild, moved, sibling, beside):
        assert j.admit(p, "in").document is not None
    doc = j.find(moved)
    assert doc is not None and j.claim(doc.id) is not None
    # a newer document was archived to where ``archived`` lies (unchanged): find() picks that row
    j.finish(doc.id, language="en", doctype="letter", route="r", pages=1, outputs=[], final_path=archived, timings={})
    os.utime(touched, ns=(1, 10**18))
    # a kept file done, changed, admitted again (newer row), then put back as it was: the newest row counts
    again = _file(inbox / "again.pdf", b"first")
    st0 = os.lstat(again)
    assert j.admit(again, "in").document is not None
    _file(again, b"second version")
    assert j.admit(again, "in").document is not None
    _file(again, b"first")
    os.utime(again, ns=(st0.st_atime_ns, st0.st_mtime_ns))

    got = j.known_under(inbox)
    files = {"kept.pdf": kept, "2026/12/deep.pdf": deep, "touched.pdf": touched, "100%_sure.pdf": wild, "new.pdf": new,
             "moved.pdf": moved, "archived.pdf": archived, "again.pdf": again}
    have = dict(zip(files, got.stamps(list(files)), strict=True))
    assert {rel for rel, stamp in have.items() if stamp is not None} == {
        "kept.pdf", "2026/12/deep.pdf", "touched.pdf", "100%_sure.pdf", "moved.pdf", "again.pdf"}
    assert len(got) == 6 and have == {rel: got.get(rel) for rel in files}  # one at a time: the same
    skipped = set()
    for rel, p in files.items():
        st = os.lstat(p)
        if have[rel] == (st.st_size, st.st_mtime):
            skipped.add(rel)
            assert _skipped_by_find(j, p), rel  # never skips a file the tracker would take
    assert skipped == {"kept.pdf", "2026/12/deep.pdf", "100%_sure.pdf", "moved.pdf"}
    assert {rel for rel, p in files.items() if _skipped_by_find(j, p)} == skipped  # the same files as find()
    sub = j.known_under(inbox / "2026")
    assert len(sub) == 1 and sub.get("12/deep.pdf") == have["2026/12/deep.pdf"] and sub.get("2026/12/deep.pdf") is None
    assert len(j.known_under(tmp_path / "empty")) == 0 and j.known_under(tmp_path / "empty").stamps(["kept.pdf"]) == [None]


@pytest.mark.parametrize("chunk", [7, watch.LOOKUP_CHUNK])  # 7: a folder's files compared in many chunks
def test_a_rescan_offers_what_changed_and_names_that_are_not_utf8(
        tmp_path: Path, open_j: Callable[[Path], Journal], chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "LOOKUP_CHUNK", chunk)
    j = open_j(tmp_path / "state")
    inbox = tmp_path / "in"
    files = [_file(inbox / ("sub" if i % 3 == 0 else "") / f"f{i}.pdf", b"%PDF-1.4 " + str(i).encode()) for i in range(60)]
    odd = Path(os.fsdecode(bytes(inbox) + b"/caf\xe9.pdf"))  # Latin-1 name: stored as b64:, outside the range
    _file(odd, b"%PDF-1.4 odd")
    for p in [*files, odd]:
        assert j.admit(p, "in").document is not None
    seen: list[Candidate] = []
    w = InboxWatcher([InboxCfg(path=inbox, recursive=True)], seen.append, known=j.known_under)
    assert w.scan() == len(files) + 1
    assert [c.path for c in seen] == [odd]  # offered: the tracker's find() skips it
    assert _skipped_by_find(j, odd)
    os.utime(files[7], ns=(1, 10**18))
    _file(files[9], b"%PDF-1.4 rewritten in place, longer")
    seen.clear()
    w.scan()
    assert {c.path for c in seen} == {odd, files[7], files[9]}
