"""The systemd watchdog is fed by page-level progress (issue 17, defect 1).

A real ``Service`` in this process (real journal, inotify, render workers, Tesseract) with a real
``NOTIFY_SOCKET`` datagram socket and a short ``WATCHDOG_USEC``. The engine is the real
``TesseractEngine`` with one switch added: ``submit`` waits on a gate and is paced, so a long
document keeps finishing pages (but no document) for as long as the test wants, and then the
engine really stalls (pages held, none finishing).
"""

from __future__ import annotations

import concurrent.futures as cf
import re
import socket
import threading
import time
from pathlib import Path

import docgen
import pytest
from conftest import wait_for, write_rules

from daemon.config import load_config
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.models import PageText
from daemon.service.service import Service


class GatedTesseract(TesseractEngine):
    """Tesseract whose ``submit`` waits while ``gate`` is closed and takes ``pace`` s a page."""

    def __init__(self, *a: object, **kw: object) -> None:
        super().__init__(*a, **kw)  # type: ignore[arg-type]
        self.gate = threading.Event()
        self.gate.set()
        self.pace = 0.25

    def submit(self, request: PageRequest) -> cf.Future[PageText]:
        self.gate.wait()
        time.sleep(self.pace)
        return super().submit(request)


class Pings:
    def __init__(self, tmp: Path) -> None:
        self.addr = str(tmp / "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.addr)
        self.sock.settimeout(0.2)
        self.msgs: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            for m in data.decode().split("\n"):
                self.msgs.append((time.monotonic(), m))

    def watchdog(self, since: float, until: float) -> list[float]:
        return [t for t, m in self.msgs if m == "WATCHDOG=1" and since <= t <= until]

    def close(self) -> None:
        self._stop.set()
        self._t.join()
        self.sock.close()


def test_long_document_keeps_pinging_while_pages_complete_and_stops_when_the_engine_stalls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hang = 1.5
    cfg_path = write_rules(
        tmp_path,
        daemon={"state_dir": "state", "failed_dir": "failed", "rescan_interval": 60, "drain_timeout": 0, "workers": 1, "render_workers": 1},
        engine={"kind": "tesseract", "render_longest_edge": 256, "autorotate": False, "crop_borders": False,
                "tesseract": {"threads": 1, "languages": ["en"], "hang_timeout": hang, "render_dpi": None}},
    )
    pings = Pings(tmp_path)
    monkeypatch.setenv("NOTIFY_SOCKET", pings.addr)
    monkeypatch.setenv("WATCHDOG_USEC", "1000000")  # pings every 0.5 s; systemd would kill after 1 s without
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    cfg = load_config(cfg_path)
    svc = Service(cfg, config_path=cfg_path)
    engine = GatedTesseract(cfg.engine)
    svc.engine = engine
    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(svc.run()), daemon=True)
    runner.start()
    try:
        wait_for(lambda: any(m == "READY=1" for _, m in pings.msgs), 60, "READY=1")
        docgen.make_pdf(tmp_path / "long.pdf", [f"Page {i} of a long scan" for i in range(60)], scanned=True, scan_width=400)
        (tmp_path / "long.pdf").rename(tmp_path / "inbox" / "long.pdf")
        wait_for(lambda: engine.last_progress > 0, 60, "the first page finished")
        # Phase 1: pages finish every ~0.25 s, no document does, for 4 x hang_timeout.
        t0 = time.monotonic()
        time.sleep(4 * hang)
        t1 = time.monotonic()
        assert svc.workers.done_count == 0, "the document finished: the test proves nothing about page progress"
        got = pings.watchdog(t0, t1)
        assert len(got) >= 8, f"only {len(got)} pings in {t1 - t0:.1f} s while pages completed"
        gaps = [b - a for a, b in zip([t0, *got], [*got, t1], strict=True)]
        assert max(gaps) < 1.0, f"a ping came {max(gaps):.2f} s after the previous (WatchdogSec 1 s)"
        # the STATUS= line (every 5 s) shows the document's page progress in short
        wait_for(lambda: any(re.search(r"; doc-1 \d+/60 [\d.]+ p/s", m) for _, m in pings.msgs if m.startswith("STATUS=")),
                 10, "STATUS= with doc-1's pages")
        # Phase 2: the engine stalls (no page finishes); within hang_timeout (+ a ping period and
        # the page that was being recognised) the pings stop, and stay stopped.
        engine.gate.clear()
        stalled = time.monotonic()
        time.sleep(hang + 1.5)
        t2 = time.monotonic()
        time.sleep(2.0)
        assert pings.watchdog(t2, time.monotonic()) == [], "still pinging although no page finished"
        assert pings.watchdog(stalled, stalled + 0.6), "stopped pinging at once, before hang_timeout"
        # Phase 3: pages finish again -> pings again.
        engine.gate.set()
        t3 = time.monotonic()
        wait_for(lambda: pings.watchdog(t3, time.monotonic()), 10, "pings once pages finish again")
    finally:
        engine.gate.set()
        svc.request_stop()
        runner.join(60)
        pings.close()
    assert not runner.is_alive()
    assert result == [0]
