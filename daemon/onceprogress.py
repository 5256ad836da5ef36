"""``ocr-daemon once``'s page progress for the file being processed: a ``tqdm`` bar on a
terminal, else a plain line for the first page, then at most every few seconds, and the last page.
Split out of cli.py (which re-exports it) to keep that module under the size limit.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, TextIO

from daemon.models import Progress, format_duration


class OnceProgress:
    """``once``'s page progress for the file being processed: a ``tqdm`` bar on a terminal,
    else a plain line on ``stream`` for the first page, then at most every ``every`` seconds,
    and the last page."""

    def __init__(self, stream: TextIO, *, tty: bool | None = None, every: float = 5.0) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.every = every
        self.name = ""
        self._bar: Any = None
        self._last = 0.0

    def start(self, name: str) -> None:
        self.close()
        self.name = name
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        if self.tty:
            if self._bar is None:
                from tqdm import tqdm

                try:
                    size = os.get_terminal_size(self.stream.fileno())
                    cols, rows = size.columns, size.lines
                except (OSError, ValueError, AttributeError):
                    cols = rows = 0
                # a terminal that reports no size (a bare pty, a serial console) would show no bar
                self._bar = tqdm(total=p.pages_total, initial=p.pages_done, desc=Path(self.name).name, unit="page",
                                 file=self.stream, ncols=cols or 80, nrows=rows or 24, leave=True)
            else:
                self._bar.update(p.pages_done - self._bar.n)
            return
        now = time.monotonic()
        final = p.pages_total is not None and p.pages_done >= p.pages_total
        if final or not self._last or now - self._last >= self.every:
            self._last = now
            eta = f", ETA {format_duration(p.eta_s)}" if p.eta_s is not None and not final else ""
            resumed = f" ({p.resumed} from an earlier run)" if p.resumed else ""
            print(f"{self.name}: page {p.pages_done}/{p.pages_total}{resumed}, {p.pages_per_s:.2f} pages/s{eta}",
                  file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
