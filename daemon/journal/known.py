"""What a rescan compares a folder's files with: ``KnownFiles``, the journal's files under one folder.

Contract:
- ``KnownFiles(chunks, cut=, leave_out=)`` is built from ``(path, size, mtime)`` rows ordered so
  that a path's newest row comes last (``Journal.known_under``'s index range, read a chunk at a
  time). ``stamps(rels)``: for each name (a path less the first ``cut`` characters), the (size,
  mtime) of its newest row, or None; ``get(rel)`` for one name. ``leave_out``: names answered
  None although rows name them.
- 24 bytes a file and no Python object per file: three numpy arrays sorted by the name's hash.
  A dict of ``rel -> (size, mtime)`` held ~165 bytes a file (100,000 files: 16.4 MB traced, 18.9
  MB of a fresh process's RSS), built again by each of the ~40 rescans that admit a 100k drop,
  and the daemon's RSS kept the high-water mark (issue 34: 90.6 -> 122.8 MB while a 100k drop
  was admitted).
- Exact where it matters: size and mtime are kept as they are; only the name is hashed (Python's
  ``hash``, salted per process). A new file is taken as known only if its name's 64-bit hash is a
  known name's *and* its size and mtime are that file's: ~n/2^64 per file, times that. Of two
  known names with one hash, one entry is kept: the other name is offered and the tracker asks
  the journal about it.
- Names are looked up a batch at a time (``stamps``: one ``searchsorted``); one at a time,
  ``bisect`` on an array cost about 2x a dict's ``get`` (100k lookups of fresh strings: 0.23-0.28
  s against 0.10-0.14 s).
- numpy is loaded by the daemon already; it is imported here on first use, so that commands that
  never rescan do not load it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any


class KnownFiles:
    """See the module docstring."""

    __slots__ = ("_hashes", "_sizes", "_mtimes")

    def __init__(self, chunks: Iterable[Sequence[tuple[str, int, float]]] = (), *, cut: int = 0,
                 leave_out: Iterable[str] = ()) -> None:
        import numpy as np

        # Read into growing arrays (8 bytes a row each), then sorted one column at a time, each
        # column's unsorted array dropped once its sorted copy is made: not every chunk's arrays
        # and then their concatenation (100k rows, traced: peak 7.3 -> 4.1 MB; the daemon's RSS
        # keeps a rescan's high-water mark).
        hashes, sizes, mtimes = array("q"), array("q"), array("d")
        for rows in chunks:
            hashes.extend([hash(r[0][cut:]) for r in rows])
            sizes.extend([r[1] for r in rows])
            mtimes.extend([r[2] for r in rows])
        h = np.frombuffer(hashes, dtype=np.int64) if hashes else np.empty(0, dtype=np.int64)
        order = np.argsort(h, kind="stable")  # stable: a hash's rows stay in row order
        h = h[order]
        del hashes
        last = np.ones(len(h), dtype=bool)  # of a hash's rows, the last: its path's newest row
        last[:-1] = h[1:] != h[:-1]
        if not last.all():
            order, h = order[last], h[last]
        self._hashes: Any = h
        self._sizes: Any = np.frombuffer(sizes, dtype=np.int64)[order] if sizes else np.empty(0, dtype=np.int64)
        del sizes
        self._mtimes: Any = np.frombuffer(mtimes, dtype=np.float64)[order] if mtimes else np.empty(0, dtype=np.float64)
        for rel in leave_out:
            i = self._index(hash(rel))
            if i >= 0:
                self._sizes[i] = -1  # no file has it: answered None

    def __len__(self) -> int:
        return int((self._sizes >= 0).sum())

    def _index(self, h: int) -> int:
        i = int(self._hashes.searchsorted(h))
        return i if i < len(self._hashes) and self._hashes[i] == h else -1

    def get(self, rel: str) -> tuple[int, float] | None:
        return self.stamps([rel])[0]

    def stamps(self, rels: Sequence[str]) -> list[tuple[int, float] | None]:
        """For each name of ``rels``, its (size, mtime), or None where the journal has no such file."""
        import numpy as np

        if not len(self._hashes) or not rels:
            return [None] * len(rels)
        h = np.array([hash(r) for r in rels], dtype=np.int64)
        i = np.minimum(self._hashes.searchsorted(h), len(self._hashes) - 1)
        sizes = self._sizes[i]
        found = ((self._hashes[i] == h) & (sizes >= 0)).tolist()
        return [(s, m) if f else None for f, s, m in zip(found, sizes.tolist(), self._mtimes[i].tolist(), strict=True)]
