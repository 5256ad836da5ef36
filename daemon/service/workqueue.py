"""The daemon's work queue in memory: the next document ids for the workers.

Contract: ids ordered by not-before time, then id; thread-safe; ``put`` of an id already in it
does nothing; ``get`` blocks until an id's time has come (None once ``close``d); ``due()`` counts
the ids whose time has come. It holds a window of the journal's queue, never the whole backlog
(``Workers.queue_window``, issue 34).
"""

from __future__ import annotations

import heapq
import threading
import time


class WorkQueue:
    """Document ids ordered by not-before time, then id. Thread-safe; ``close()`` wakes getters."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []
        self._ids: set[int] = set()
        self._cv = threading.Condition()
        self._closed = False

    def put(self, doc_id: int, not_before: float = 0.0) -> None:
        with self._cv:
            if doc_id in self._ids:
                return
            self._ids.add(doc_id)
            heapq.heappush(self._heap, (not_before, doc_id))
            self._cv.notify()

    def get(self) -> int | None:
        """Next id whose time has come; None once closed."""
        with self._cv:
            while not self._closed:
                if self._heap:
                    nb, doc_id = self._heap[0]
                    wait = nb - time.time()
                    if wait <= 0:
                        heapq.heappop(self._heap)
                        self._ids.discard(doc_id)
                        return doc_id
                    self._cv.wait(timeout=min(wait, 5.0))
                else:
                    self._cv.wait(timeout=5.0)
            return None

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()

    def __len__(self) -> int:
        with self._cv:
            return len(self._heap)

    def due(self) -> int:
        """Ids whose time has come (retries waiting for a later time not counted)."""
        now = time.time()
        with self._cv:
            return sum(1 for nb, _ in self._heap if nb <= now)
