"""Files that cannot be read when they are admitted (permission denied, I/O error).

Contract:
- ``ReadFailures.add(path)`` counts one failed read of the file's current version (path, size,
  mtime; a new version starts again at 1) and returns the count; ``forget(path)`` once it was
  read. The service fails a file whose count reaches ``daemon.max_attempts`` (to the failed
  folder, with the reason) instead of trying it at every rescan forever.
- In memory only: a restart gives every file its full number of tries again. Bounded (the
  oldest entries are dropped past ``limit``); thread-safe.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path


class ReadFailures:
    """See the module contract."""

    def __init__(self, limit: int = 10_000) -> None:
        self._limit = limit
        self._seen: OrderedDict[Path, tuple[tuple[int, int], int]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, path: Path) -> int:
        try:
            st = os.lstat(path)
            version = (st.st_size, st.st_mtime_ns)
        except OSError:
            version = (-1, -1)
        with self._lock:
            old = self._seen.pop(path, None)
            n = old[1] + 1 if old is not None and old[0] == version else 1
            self._seen[path] = (version, n)
            while len(self._seen) > self._limit:
                self._seen.popitem(last=False)
        return n

    def forget(self, path: Path) -> None:
        with self._lock:
            self._seen.pop(path, None)
