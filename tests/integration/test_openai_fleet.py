"""The ``openai`` engine against a fleet of two real servers (tests/integration/openai_stub.py, each
its own process on loopback): load spread, one server killed with SIGKILL mid-run (no page lost,
its pages in flight re-sent to the other), retried with backoff and used again once restarted."""

from __future__ import annotations

import concurrent.futures as cf
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from daemon.config import EngineCfg
from daemon.engines.base import PageRequest
from daemon.engines.openai_engine import OpenAIEngine

STUB = Path(__file__).with_name("openai_stub.py")


class Server:
    def __init__(self, name: str, log: Path, port: int = 0, delay: float = 0.15) -> None:
        self.name, self.log = name, log
        self.proc = subprocess.Popen(
            [sys.executable, str(STUB), "--name", name, "--port", str(port), "--delay", str(delay), "--log", str(log)],
            stdout=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), line
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)

    def requests(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    made: list[Server] = []
    yield made
    for s in made:
        s.kill()


def page(i: int) -> PageRequest:
    # a width per page: the answer names the size, so each page's text shows it came back in place
    return PageRequest("doc", i, Image.new("RGB", (200 + i, 100), "white"))


def wait_for(cond, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def fleet_cfg(*urls: str) -> EngineCfg:
    return EngineCfg(kind="openai", openai={"base_urls": list(urls), "concurrency": 8, "timeout": 30, "retries": 4,
                                            "down_backoff": 0.3, "down_backoff_max": 1.0})


def test_killed_server_loses_no_page_and_is_used_again_once_back(servers: list[Server], tmp_path: Path) -> None:
    a = Server("A", tmp_path / "a1.log")
    b = Server("B", tmp_path / "b.log")
    servers += [a, b]
    eng = OpenAIEngine(fleet_cfg(a.url, b.url))
    eng.start()
    try:
        with cf.ThreadPoolExecutor(4) as submitters:
            first = list(submitters.map(eng.submit, [page(i) for i in range(40)]))
            # load spread: both servers take pages while both are up
            wait_for(lambda: len(a.requests()) >= 6 and len(b.requests()) >= 6)
            a.kill()  # SIGKILL with requests of A in flight
            in_flight_at_kill = {line.split()[1] for line in a.requests()}
            wait_for(lambda: eng.stats[f"http://127.0.0.1:{a.port}"]["downs"] >= 1)
            more = list(submitters.map(eng.submit, [page(i) for i in range(40, 70)]))
            time.sleep(1.0)  # A stays dead a while: its backoff grows, pages go to B
            a2 = Server("A", tmp_path / "a2.log", port=a.port)  # back on the same address
            servers.append(a2)
            wait_for(lambda: eng.stats[f"http://127.0.0.1:{a.port}"]["backs"] >= 1)
            last = list(submitters.map(eng.submit, [page(i) for i in range(70, 110)]))
            res = [f.result(timeout=60) for f in first + more + last]
    finally:
        eng.close()

    # every page back, each with the answer for its own image
    assert [r.index for r in res] == list(range(110))
    assert [r.text.split()[1] for r in res] == [f"{200 + i}x100" for i in range(110)]
    # pages A had when it was killed and never answered were answered by B
    answered_by = {r.text.split()[1]: r.text.split()[0] for r in res}
    lost_on_a = [size for size in in_flight_at_kill if answered_by[size] == "B"]
    assert lost_on_a, "no request of the killed server was re-sent"
    # the restarted server takes pages again (least-loaded choice among the servers that are up)
    assert len(a2.requests()) >= 10, a2.requests()
    assert Counter(r.text.split()[0] for r in res[70:])["A"] >= 10
    st = eng.stats[f"http://127.0.0.1:{a.port}"]
    assert st["downs"] >= 1 and st["backs"] >= 1


def test_server_down_at_start_joins_when_it_comes_up(servers: list[Server], tmp_path: Path) -> None:
    a = Server("A", tmp_path / "a.log")
    gone = Server("B", tmp_path / "b0.log")
    servers += [a, gone]
    gone.kill()  # its port is free: B is not running when the engine starts
    eng = OpenAIEngine(fleet_cfg(a.url, gone.url))
    eng.start()  # one of two answers: the engine starts, B begins down
    try:
        assert eng.stats[f"http://127.0.0.1:{gone.port}"]["downs"] >= 1  # down from the start
        assert [f.result(timeout=60).text.split()[0] for f in [eng.submit(page(i)) for i in range(8)]] == ["A"] * 8
        b = Server("B", tmp_path / "b.log", port=gone.port)
        servers.append(b)
        wait_for(lambda: eng.stats[f"http://127.0.0.1:{gone.port}"]["backs"] >= 1)
        res = [f.result(timeout=60) for f in [eng.submit(page(i)) for i in range(8, 40)]]
    finally:
        eng.close()
    assert [r.index for r in res] == list(range(8, 40))
    assert len(b.requests()) >= 8
    assert not eng._prober or not eng._prober.is_alive()  # close() stopped the prober thread
