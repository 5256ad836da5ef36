"""``ocr-daemon once``'s page progress, told of every document in flight (``daemon.commands.once``): on a
terminal one ``tqdm`` bar for the whole run (pages done of the pages known so far, files done of
files given); otherwise plain lines per file, its first page, then at most every ``every``
seconds, and its last page. Callbacks come from the document threads; it locks. The display
only: what is counted comes from the pipeline's ``on_progress`` callback.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from daemon.models import Progress, format_duration

__all__ = ["OnceProgress"]


class OnceProgress:
    """``once``'s page progress (see the module contract). ``add(doc_id, name)`` before a
    document's first callback; ``__call__(progress)`` from any thread; ``close()`` at the end."""

    def __init__(self, stream: TextIO, *, tty: bool | None = None, every: float = 5.0, files: int = 1) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.every = every
        self.files = files
        self._lock = threading.Lock()
        self._names: dict[int, str] = {}
        self._last: dict[int, float] = {}
        self._done: dict[int, int] = {}  # doc id -> pages done (tty bar)
        self._total: dict[int, int] = {}
        self._finished = 0
        self._bar: Any = None

    def add(self, doc_id: int, name: str) -> None:
        with self._lock:
            self._names[doc_id] = name

    def file_done(self) -> None:
        with self._lock:
            self._finished += 1
            if self._bar is not None:
                self._bar.set_postfix_str(f"{self._finished}/{self.files} files", refresh=True)

    def __call__(self, p: Progress) -> None:
        with self._lock:
            if self.tty:
                self._draw(p)
            else:
                self._line(p)

    def _draw(self, p: Progress) -> None:
        self._done[p.doc_id] = p.pages_done
        if p.pages_total is not None:
            self._total[p.doc_id] = p.pages_total
        total, done = sum(self._total.values()), sum(self._done.values())
        if self._bar is None:
            from tqdm import tqdm

            try:
                size = os.get_terminal_size(self.stream.fileno())
                cols, rows = size.columns, size.lines
            except (OSError, ValueError, AttributeError):
                cols = rows = 0
            # a terminal that reports no size (a bare pty, a serial console) would show no bar
            desc = Path(self._names.get(p.doc_id, "")).name if self.files == 1 else f"{self.files} files"
            self._bar = tqdm(total=total, initial=done, desc=desc, unit="page", file=self.stream,
                             ncols=cols or 80, nrows=rows or 24, leave=True)
            return
        if self._bar.total != total:
            self._bar.total = total
            self._bar.refresh()
        self._bar.update(done - self._bar.n)

    def _line(self, p: Progress) -> None:
        now = time.monotonic()
        final = p.pages_total is not None and p.pages_done >= p.pages_total
        last = self._last.get(p.doc_id, 0.0)
        if final or not last or now - last >= self.every:
            self._last[p.doc_id] = now
            eta = f", ETA {format_duration(p.eta_s)}" if p.eta_s is not None and not final else ""
            resumed = f" ({p.resumed} from an earlier run)" if p.resumed else ""
            name = self._names.get(p.doc_id, str(p.path))
            print(f"{name}: page {p.pages_done}/{p.pages_total}{resumed}, {p.pages_per_s:.2f} pages/s{eta}",
                  file=self.stream, flush=True)

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
