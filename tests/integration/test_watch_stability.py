"""Watcher filtering, real inotify events, and the stability rule, on real files."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from conftest import wait_for

from daemon.config import InboxCfg
from daemon.intake.stability import StabilityTracker
from daemon.intake.watch import InboxWatcher, is_temp_name
from daemon.journal.known import KnownFiles
from daemon.models import Candidate


def test_temp_and_hidden_names_are_ignored() -> None:
    for name in (".hidden.pdf", "~lock.pdf", "scan.pdf.part", "x.tmp", "dl.pdf.crdownload", ".out.txt.ocr-tmp"):
        assert is_temp_name(name), name
    assert not is_temp_name("scan.pdf")


def test_accepts_respects_globs_recursion_and_excluded_folders(tmp_path: Path) -> None:
    inbox = InboxCfg(path=tmp_path / "in", exclude=["*draft*"])
    flat = InboxWatcher([inbox], lambda c: None, excluded_dirs=[tmp_path / "in" / "failed"])
    assert flat.accepts(tmp_path / "in" / "a.PDF", inbox)
    assert not flat.accepts(tmp_path / "in" / "a.txt", inbox)  # outputs are not inputs
    assert not flat.accepts(tmp_path / "in" / "my-draft.pdf", inbox)
    assert not flat.accepts(tmp_path / "in" / "sub" / "a.pdf", inbox)  # not recursive
    rec = InboxCfg(path=tmp_path / "in", recursive=True)
    w = InboxWatcher([rec], lambda c: None, excluded_dirs=[tmp_path / "in" / "failed"], is_output=lambda p: p.name == "mine.png")
    assert w.accepts(tmp_path / "in" / "sub" / "a.pdf", rec)
    assert not w.accepts(tmp_path / "in" / "failed" / "a.pdf", rec)
    assert not w.accepts(tmp_path / "in" / ".git" / "a.pdf", rec)
    assert not w.accepts(tmp_path / "in" / "mine.png", rec)


def test_inotify_events_reach_the_sink_and_scan_finds_existing_files(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "before.pdf").write_bytes(b"%PDF-1.4")
    seen: list[Candidate] = []
    lock = threading.Lock()

    def sink(c: Candidate) -> None:
        with lock:
            seen.append(c)

    inbox = InboxCfg(path=folder, watch="inotify")
    w = InboxWatcher([inbox], sink)
    w.start()
    try:
        assert w.modes[inbox.name] == "inotify"
        assert w.scan() == 1
        (folder / "new.png").write_bytes(b"\x89PNG")
        (folder / ".partial.png").write_bytes(b"x")
        (tmp_path / "moved.jpg").write_bytes(b"\xff\xd8")
        (tmp_path / "moved.jpg").rename(folder / "moved.jpg")
        wait_for(lambda: {"new.png", "moved.jpg"} <= {c.path.name for c in seen}, 10, "inotify events")
        assert ".partial.png" not in {c.path.name for c in seen}
    finally:
        w.stop()


def test_a_rescan_leaves_out_files_the_journal_has_unchanged_with_one_lookup_per_folder(tmp_path: Path) -> None:
    """Issue 34: a rescan of an inbox of kept done files offers only what changed, with one journal
    lookup for the scanned folder (subfolders included); a file changed in place is offered again
    (the daemon takes it, as before), and so is a file the daemon moved to a kept file's path from
    elsewhere (the tracker asks the journal about it); a journal that cannot answer makes the scan
    offer everything (the tracker then asks file by file)."""
    from daemon.journal.store import Journal

    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    files = [folder / f"f{i}.pdf" for i in range(520)] + [folder / "sub" / "deep.pdf"]
    for i, p in enumerate(files):
        p.write_bytes(b"%PDF-1.4 " + str(i).encode() + b"\n%%EOF\n")
    j = Journal(tmp_path / "state")
    for p in files:
        j.admit(p, "in")
    fresh = folder / "fresh.pdf"
    fresh.write_bytes(b"%PDF-1.4 fresh\n%%EOF\n")
    calls: list[str] = []
    broken = False

    def known(under: str) -> KnownFiles:
        calls.append(under)
        if broken:
            raise OSError("journal down")
        return j.known_under(under)

    seen: list[Candidate] = []
    inbox = InboxCfg(path=folder, recursive=True)
    w = InboxWatcher([inbox], seen.append, known=known)
    assert w.scan() == len(files) + 1  # every file found counts, offered or not
    assert [c.path for c in seen] == [fresh]
    assert calls == [str(folder)]
    os.utime(files[3], ns=(1, 10**18))  # changed in place: offered again
    elsewhere = tmp_path / "elsewhere.pdf"
    elsewhere.write_bytes(b"%PDF-1.4 moved in\n%%EOF\n")
    moved = j.admit(elsewhere, "in").document
    assert moved is not None
    j.set_final_path(moved.id, files[4])  # a row that ends at a kept file's path: find may pick it
    seen.clear()
    w.scan()
    assert {c.path for c in seen} == {fresh, files[3], files[4]}
    broken = True
    seen.clear()
    w.scan()
    assert len(seen) == len(files) + 1
    j.close()


def test_full_scans_never_overlap_and_one_asked_for_meanwhile_runs_after(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.pdf").write_bytes(b"%PDF-1.4")
    entered, release = threading.Event(), threading.Event()
    offered: list[Path] = []
    w: InboxWatcher

    def sink(c: Candidate) -> None:
        offered.append(c.path)
        if len(offered) == 1:
            entered.set()
            assert release.wait(10)

    w = InboxWatcher([InboxCfg(path=folder)], sink)
    t = threading.Thread(target=w.scan)
    t.start()
    assert entered.wait(10)
    assert w.scan() == 0  # another scan is running: not a second one at once...
    release.set()
    t.join(10)
    assert offered == [folder / "a.pdf"] * 2  # ...but the running one went round once more


def test_scans_asked_for_run_on_one_rescan_thread_that_stop_ends(tmp_path: Path) -> None:
    """``scan_soon`` (the tracker's ``on_room``, an inotify overflow) scans on the watcher's one
    rescan thread: asks made while it scans are one more scan after it, not a thread each; the
    thread outlives a failed scan and ``stop`` ends it."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.pdf").write_bytes(b"%PDF-1.4")
    entered, release = threading.Event(), threading.Event()
    offered: list[tuple[Path, str]] = []
    fail = [True]

    def sink(c: Candidate) -> None:
        offered.append((c.path, threading.current_thread().name))
        if fail[0]:
            fail[0] = False
            raise RuntimeError("a scan that fails")
        if len(offered) == 2:
            entered.set()
            assert release.wait(10)

    w = InboxWatcher([InboxCfg(path=folder)], sink)
    w.start()
    try:
        w.scan_soon()
        wait_for(lambda: len(offered) == 1, 10, "the failed scan")
        w.scan_soon()  # the thread is still there
        assert entered.wait(10)
        for _ in range(5):
            w.scan_soon()  # during the scan: one more scan after it
        w._on_overflow()  # watchdog's overflow: the same
        assert len([t for t in threading.enumerate() if t.name == "rescan"]) == 1  # one thread, not one per ask
        release.set()
        wait_for(lambda: len(offered) == 3, 10, "the scan asked for meanwhile")
        time.sleep(0.5)
        assert len(offered) == 3 and {name for _, name in offered} == {"rescan"}
    finally:
        release.set()
        w.stop()
    assert not [t for t in threading.enumerate() if t.name == "rescan"]


def test_poll_mode_sees_files(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    seen: list[Candidate] = []
    inbox = InboxCfg(path=folder, watch="poll", stability_delay=1)
    w = InboxWatcher([inbox], seen.append)
    w.start()
    try:
        assert w.modes[inbox.name] == "poll"
        (folder / "a.pdf").write_bytes(b"%PDF")
        wait_for(lambda: any(c.path.name == "a.pdf" for c in seen), 10, "polling observer event")
    finally:
        w.stop()


def _tracker(stable: list[tuple[Candidate, str | None]], probe=lambda p: None, delay=0.5, grace=3.0, tick=0.25) -> StabilityTracker:  # type: ignore[no-untyped-def]
    return StabilityTracker(lambda c, r: stable.append((c, r)), lambda p, inbox: probe(p), lambda inbox: delay, grace_for=lambda inbox: grace, tick=tick)


def test_file_growing_in_chunks_is_not_taken_until_stable(tmp_path: Path) -> None:
    stable: list[tuple[Candidate, str | None]] = []
    t = _tracker(stable, delay=0.5)
    f = tmp_path / "slow.pdf"
    f.write_bytes(b"x")
    t.notice(Candidate(f, "in"))
    now = 100.0
    for i in range(10):  # 10 chunks, 0.3 s apart (< delay): never stable while growing
        t.step(now)
        assert stable == []
        with open(f, "ab") as fh:
            fh.write(b"y" * (i + 1))
        now += 0.3
    t.step(now)
    assert stable == []
    t.step(now + 0.6)
    assert [c.path for c, _ in stable] == [f] and stable[0][1] is None


def test_unopenable_file_waits_for_grace_then_is_passed_on_with_reason(tmp_path: Path) -> None:
    stable: list[tuple[Candidate, str | None]] = []
    t = _tracker(stable, probe=lambda p: "not a PDF", delay=0.5, grace=3.0)
    f = tmp_path / "bad.pdf"
    f.write_bytes(b"garbage")
    t.notice(Candidate(f, "in"))
    t.step(0.0)
    t.step(1.0)
    t.step(2.5)
    assert stable == []
    t.step(3.5)
    assert stable == [(Candidate(f, "in"), "not a PDF")]


def test_vanished_file_is_forgotten(tmp_path: Path) -> None:
    stable: list[tuple[Candidate, str | None]] = []
    t = _tracker(stable)
    f = tmp_path / "gone.pdf"
    f.write_bytes(b"x")
    t.notice(Candidate(f, "in"))
    t.step(0.0)
    f.unlink()
    t.step(5.0)
    assert stable == [] and t.pending() == 0


@pytest.mark.parametrize("tick", [0.25, 30.0])
def test_tracker_thread_hands_on_a_real_file_when_its_delay_ends(tmp_path: Path, tick: float) -> None:
    # tick 30 s: a tracker that only polled on its tick would hold the file for 30 s; it must
    # admit the notice at once and wake when the file's 0.3 s are over.
    stable: list[tuple[Candidate, str | None]] = []
    t = _tracker(stable, delay=0.3, tick=tick)
    t.start()
    try:
        time.sleep(0.2)  # the thread is asleep on its tick when the file comes
        f = tmp_path / "a.pdf"
        f.write_bytes(b"%PDF")
        start = time.monotonic()
        t.notice(Candidate(f, "in"))
        wait_for(lambda: stable, 10, "stable file")
        assert 0.3 <= time.monotonic() - start < 10
        assert stable == [(Candidate(f, "in"), None)]
    finally:
        t.stop()


def test_tracker_thread_waits_for_a_growing_file_between_deadlines(tmp_path: Path) -> None:
    # The thread sleeps until a file is due; a file written again meanwhile must still be held
    # until it has been unchanged for the whole delay.
    stable: list[tuple[Candidate, str | None]] = []
    t = _tracker(stable, delay=0.4, tick=30.0)
    t.start()
    try:
        f = tmp_path / "growing.pdf"
        f.write_bytes(b"x")
        t.notice(Candidate(f, "in"))
        for i in range(8):  # a write every 0.15 s for 1.2 s: never 0.4 s unchanged
            time.sleep(0.15)
            with open(f, "ab") as fh:
                fh.write(b"y" * (i + 1))
            assert stable == []
        last_write = time.monotonic()
        wait_for(lambda: stable, 10, "stable file after the writes stop")
        assert time.monotonic() - last_write >= 0.4
        assert [c.path for c, _ in stable] == [f]
    finally:
        t.stop()


def test_a_flood_of_notices_is_taken_in_batches_between_passes(tmp_path: Path) -> None:
    """Issue 34: the tracker takes ``ADMIT_BATCH`` notices at a time and looks at its due files in
    between, so a file noticed first is handed on when due, not after every later notice."""
    from daemon.intake.stability import ADMIT_BATCH

    first = tmp_path / "first.pdf"
    first.write_bytes(b"%PDF-1.4\n%%EOF\n")
    handed: list[Path] = []
    tr = StabilityTracker(lambda c, r: handed.append(c.path), lambda p, i: None, lambda i: 0.0)
    tr.notice(Candidate(first, "in"))
    for i in range(ADMIT_BATCH + 5):
        tr.notice(Candidate(tmp_path / f"gone-{i}.pdf", "in"))  # vanished meanwhile: never tracked
    tr._wake.clear()
    tr._admit(time.monotonic())
    assert tr._inq.qsize() == 6 and tr._wake.is_set()  # the rest are taken at the next wake-up
    tr.step(time.monotonic() + 1)
    assert handed == [first]
    tr.step(time.monotonic() + 2)
    assert tr._inq.qsize() == 0 and tr.pending() == 0


def test_a_scan_offers_exactly_what_accepts_takes(tmp_path: Path) -> None:
    """The scan tests the files of a folder by name, is_output and globs only once the folder
    itself is known to take files (issue 34: ``accepts`` per file was most of a rescan's CPU): it
    must offer exactly the files ``accepts`` takes -- excluded folders, temp-named folders (also
    when an event makes the watcher scan one of them directly), outputs and globs included."""
    root = tmp_path / "in"
    names = ["a.pdf", "b.PNG", "c.txt", "draft-1.pdf", ".hidden.pdf", "x.pdf.part", "mine.png",
             "sub/d.pdf", "sub/deeper/e.tif", "sub/.tmp/f.pdf", "sub/g.tmp/h.pdf", "failed/i.pdf",
             "failed/more/j.pdf", "state", ".incoming/k.pdf"]
    for n in names:
        (root / n).parent.mkdir(parents=True, exist_ok=True)
        (root / n).write_bytes(b"%PDF-1.4")
    for recursive, by_name in ((True, False), (False, False), (True, True)):
        inbox = InboxCfg(path=root, recursive=recursive, exclude=["*draft*"])
        seen: list[Candidate] = []
        w = InboxWatcher([inbox], seen.append, excluded_dirs=[root / "failed", root / "state"],
                         is_output=lambda p: p.name == "mine.png",
                         is_output_name=(lambda s: s.endswith("/mine.png")) if by_name else None)
        want = {root / n for n in names if w.accepts(root / n, inbox)}
        assert w.scan() == len(want)
        assert {c.path for c in seen} == want
        assert {p.name for p in want} == ({"a.pdf", "b.PNG", "d.pdf", "e.tif"} if recursive else {"a.pdf", "b.PNG"})
        for folder in ("sub/.tmp", "sub/g.tmp", ".incoming", "failed", "failed/more"):
            seen.clear()
            assert w.scan_dir(root / folder, inbox) == 0 and not seen, folder


def test_a_rescan_leaves_out_the_daemon_s_outputs_asked_in_batches(tmp_path: Path) -> None:
    """Issue 34 item 2: the outputs test is a journal query per batch (``outputs_among``), not a set
    of every output path held in memory: a searchable PDF the daemon wrote into the inbox is never
    offered, a new file is."""
    from daemon.journal.store import Journal

    folder = tmp_path / "in"
    folder.mkdir()
    src, out, fresh = folder / "scan.pdf", folder / "scan.ocr.pdf", folder / "fresh.pdf"
    for p in (src, out, fresh):
        p.write_bytes(b"%PDF-1.4 " + p.name.encode() + b"\n%%EOF\n")
    j = Journal(tmp_path / "state")
    doc = j.admit(src, "in").document
    assert doc is not None and j.claim(doc.id)
    j.finish(doc.id, language="en", doctype="letter", route="all", pages=1, outputs=[out], final_path=src, timings={})
    asked: list[int] = []

    def among(paths: list[str]) -> set[str]:
        asked.append(len(paths))
        return j.outputs_among(paths)

    seen: list[Candidate] = []
    w = InboxWatcher([InboxCfg(path=folder)], seen.append, known=j.known_under, outputs_among=among)
    w.scan()
    assert [c.path for c in seen] == [fresh] and asked == [2]  # scan.pdf known, scan.ocr.pdf an output
    j.close()


def test_the_tracker_takes_at_most_track_max_files_and_asks_for_a_rescan_once_it_has_room(tmp_path: Path) -> None:
    """Issue 34 item 3: a big drop is tracked ``track_max`` files at a time (memory and the per-pass
    stats bounded); the dropped notices are not lost: ``on_room`` asks for a rescan once half the
    room is free, and the files it offers are taken."""
    files = [tmp_path / f"f{i:02d}.pdf" for i in range(25)]
    for p in files:
        p.write_bytes(b"x")
    stable: list[Candidate] = []
    rooms: list[int] = []
    t = StabilityTracker(lambda c, r: stable.append(c), lambda p, inbox: None, lambda inbox: 0.0,
                         on_room=lambda: rooms.append(len(stable)), track_max=10)
    for p in files:
        t.notice(Candidate(p, "in"))
    assert t.pending() == 10
    t.step(time.monotonic() + 1)
    assert len(stable) == 10 and rooms == [10]  # handed on, then room: one rescan asked for
    for p in files:  # the rescan offers every file again; the journal (not here) skips taken ones
        if p not in {c.path for c in stable}:
            t.notice(Candidate(p, "in"))
    t.step(time.monotonic() + 2)
    t.step(time.monotonic() + 3)
    assert t.pending() == 0 and rooms == [10, 20]
    for p in files[20:]:
        t.notice(Candidate(p, "in"))
    t.step(time.monotonic() + 4)
    assert sorted(c.path for c in stable) == files and rooms == [10, 20]  # nothing dropped: no rescan


def test_an_event_s_path_is_offered_exactly_when_accepts_takes_it(tmp_path: Path) -> None:
    """Events are tested on strings (issue 34: watchdog's one dispatcher thread runs the handler for
    every event of a big drop); the answer must be ``accepts``'s for every kind of path."""
    root = tmp_path / "in"
    names = ["a.pdf", "b.PNG", "c.txt", "draft-1.pdf", ".hidden.pdf", "x.pdf.part", "mine.png", "state",
             "sub/d.pdf", "sub/deeper/e.tif", "sub/.tmp/f.pdf", "failed/i.pdf", "../outside.pdf"]
    for recursive in (True, False):
        inbox = InboxCfg(path=root, recursive=recursive, exclude=["*draft*"])
        seen: list[Candidate] = []
        asked: list[str] = []

        def is_output(p: Path | str, asked: list[str] = asked) -> bool:
            asked.append(str(p))
            return str(p).endswith("/mine.png")

        w = InboxWatcher([inbox], seen.append, excluded_dirs=[root / "failed", root / "state"],
                         is_output=is_output, is_output_name=is_output)
        for n in names:
            w.offer_event(os.path.join(str(root), n), inbox)
        assert not any(p.endswith(("c.txt", "draft-1.pdf", ".part")) for p in asked)  # globs before the journal
        want = [os.path.join(str(root), n) for n in names if w.accepts(Path(os.path.join(str(root), n)), inbox)]
        assert [str(c.path) for c in seen] == want
        assert {Path(p).name for p in want} == ({"a.pdf", "b.PNG", "d.pdf", "e.tif"} if recursive else {"a.pdf", "b.PNG"})


def test_the_observer_queues_only_events_of_files_made_written_or_moved_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real inotify: reading an inbox file (open, close without writing -- the daemon's own reads)
    and the folder-modified event inotify adds to each file event never reach the handler (issue
    34: watchdog queues every event it is given, unbounded, ahead of one dispatcher thread)."""
    from daemon.intake import watch

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "kept.pdf").write_bytes(b"%PDF-1.4 kept")
    events: list[str] = []
    real = watch._Handler.on_any_event

    def counted(self: watch._Handler, event: watch.FileSystemEvent) -> None:
        events.append(f"{event.event_type} {'dir' if event.is_directory else 'file'}")
        real(self, event)

    monkeypatch.setattr(watch._Handler, "on_any_event", counted)
    seen: list[Candidate] = []
    w = InboxWatcher([InboxCfg(path=folder, watch="inotify")], seen.append)
    w.start()
    try:
        for _ in range(20):
            (folder / "kept.pdf").read_bytes()
        (tmp_path / "new.pdf").write_bytes(b"%PDF-1.4 new")
        (tmp_path / "new.pdf").rename(folder / "new.pdf")
        wait_for(lambda: [c.path.name for c in seen] == ["new.pdf"], 10, "the moved-in file")
        time.sleep(0.5)  # anything else inotify reported has been dispatched by now
        assert events == ["created file"]  # moved in from an unwatched folder: inotify's IN_MOVED_TO alone
    finally:
        w.stop()


def test_a_full_tracker_drops_events_and_scan_batches_before_any_journal_lookup(tmp_path: Path) -> None:
    """Back-pressure reaches the watcher (issue 34): while the tracker has no room, an event's file
    and a scan's batch are dropped before ``is_output`` / ``outputs_among`` (journal lookups) are
    asked; the tracker counts them as dropped, so the rescan ``on_room`` asks for offers them once
    it has room."""
    folder = tmp_path / "in"
    folder.mkdir()
    files = [folder / f"f{i}.pdf" for i in range(4)]
    for p in files:
        p.write_bytes(b"%PDF-1.4 " + p.name.encode())
    stable: list[Candidate] = []
    rooms: list[int] = []
    t = StabilityTracker(lambda c, r: stable.append(c), lambda p, inbox: None, lambda inbox: 0.0,
                         on_room=lambda: rooms.append(len(stable)), track_max=2)
    asked: list[object] = []

    def is_output(p: Path | str) -> bool:
        asked.append(p)
        return False

    def among(paths: list[str]) -> set[str]:
        asked.append(list(paths))
        return set()

    inbox = InboxCfg(path=folder)

    def known(under: str) -> KnownFiles:  # the journal has the files handed on
        return KnownFiles([[(c.path.name, c.path.stat().st_size, c.path.stat().st_mtime) for c in stable]])

    w = InboxWatcher([inbox], t.notice, is_output=is_output, is_output_name=is_output,
                     known=known, outputs_among=among, full=t.full)
    assert not t.full()
    t.notice(Candidate(files[0], "in"))
    t.notice(Candidate(files[1], "in"))
    asked.clear()
    w.offer_event(str(files[2]), inbox)
    w.scan()
    assert asked == [] and t.pending() == 2  # nothing asked of the journal, nothing taken
    t.step(time.monotonic() + 1)
    assert len(stable) == 2 and rooms == [2]  # room again: the rescan is asked for, once
    w.scan()
    assert len(asked) == 1 and sorted(asked[0]) == [str(p) for p in files[2:]]  # type: ignore[arg-type]
    t.step(time.monotonic() + 2)
    assert sorted(c.path for c in stable) == files and rooms == [2]
