"""``KnownFiles`` (daemon/journal/known.py): what a rescan compares a folder's files with answers
as the dict of ``rel -> (size, mtime)`` it replaced would -- the newest row of a path wins, left
out names and unknown names are None, however the rows are chunked -- and holds a 100,000-file
folder in a few megabytes, and is built in a few more, not the dict's ~16 (issue 34: the daemon's
RSS while a big drop is admitted)."""

from __future__ import annotations

import gc
import random
import tracemalloc

from daemon.journal.known import KnownFiles

BASE = "/srv/inbox/"


def _rows(n: int) -> list[tuple[str, int, float]]:
    return [(f"{BASE}{i // 1000:03d}/scan-{i:07d}.pdf", 10_000 + i, 1.7e9 + i * 0.37) for i in range(n)]


def _chunks(rows: list[tuple[str, int, float]], size: int) -> list[list[tuple[str, int, float]]]:
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def test_answers_as_a_dict_of_the_newest_row_of_each_path() -> None:
    rows = _rows(3000)
    # a path admitted again (a newer row, ordered after its older one: ORDER BY path, id)
    rows.insert(11, (rows[10][0], 99, 2.5))
    rows.insert(12, (rows[10][0], 7, 3.5))
    moved = rows[500][0][len(BASE):]
    want: dict[str, tuple[int, float]] = {}
    for path, size, mtime in rows:
        want[path[len(BASE):]] = (size, mtime)
    del want[moved]
    names = [*(p[len(BASE):] for p, _, _ in rows), "000/new.pdf", "", "scan-0000001.pdf", moved]
    random.Random(1).shuffle(names)
    for size in (1, 4096, len(rows)):
        known = KnownFiles(_chunks(rows, size), cut=len(BASE), leave_out=[moved, "never/admitted.pdf"])
        assert known.stamps(names) == [want.get(n) for n in names]
        assert known.get(rows[10][0][len(BASE):]) == (7, 3.5)  # the newest of its three rows
        assert len(known) == len(want) == 2999


def test_an_empty_folder_and_an_empty_batch() -> None:
    empty = KnownFiles()
    assert len(empty) == 0 and empty.stamps(["a.pdf", "b.pdf"]) == [None, None] and empty.get("a.pdf") is None
    assert KnownFiles(_chunks(_rows(5), 2), cut=len(BASE)).stamps([]) == []


def test_a_100k_file_folder_is_held_in_a_few_megabytes() -> None:
    rows = _rows(100_000)
    chunks = _chunks(rows, 4096)
    KnownFiles(chunks[:1], cut=len(BASE))  # numpy loaded before the measurement, as in the daemon
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        known = KnownFiles(chunks, cut=len(BASE))
        gc.collect()
        held, peak = (m - base for m in tracemalloc.get_traced_memory())
        as_dict = {p[len(BASE):]: (s, m) for p, s, m in rows}
        gc.collect()
        dict_held = tracemalloc.get_traced_memory()[0] - base - held
    finally:
        tracemalloc.stop()
    assert known.get("099/scan-0099999.pdf") == as_dict["099/scan-0099999.pdf"]
    assert held < 3_000_000, held  # 24 bytes a file
    assert peak < 6_000_000, peak  # while it is built too: a rescan's high-water mark is the daemon's RSS
    assert dict_held > 5 * held, (dict_held, held)
