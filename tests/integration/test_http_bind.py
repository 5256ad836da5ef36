"""daemon.http's listen forms, bound for real: IPv4 any-address, IPv6 loopback (the Host check
takes ``[::1]:port``), and a second endpoint on a taken port retrying until the port is free.
The daemon's own tests (tests/e2e/test_http.py) cover the endpoints; this covers the binding."""

from __future__ import annotations

import http.client
import socket
import time
import types
from pathlib import Path

import pytest

from daemon.config import HttpCfg
from daemon.journal.store import Journal
from daemon.service import http as H


def _live(host: str, port: int, host_header: str | None = None) -> int:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", "/healthz/live", headers={"Host": host_header} if host_header else {})
        return conn.getresponse().status
    finally:
        conn.close()


def _port(ep: H.HttpEndpoint) -> int:
    assert ep.url is not None
    return int(ep.url.rstrip("/").rsplit(":", 1)[1])


def test_any_address_and_ipv6_loopback(tmp_path: Path) -> None:
    svc = types.SimpleNamespace(journal=Journal(tmp_path / "state"))
    ep4 = H.HttpEndpoint(svc, HttpCfg(listen="0.0.0.0:0"))
    ep4.start()
    try:
        assert ep4.url and ep4.url.startswith("http://0.0.0.0:")
        # not a loopback listen: any Host is served (the operator chose to expose it)
        assert _live("127.0.0.1", _port(ep4), "ocr.example.org") == 200
    finally:
        ep4.close()
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this kernel")
    ep6 = H.HttpEndpoint(svc, HttpCfg(listen="[::1]:0"))
    ep6.start()
    try:
        port = _port(ep6)
        assert ep6.url == f"http://[::1]:{port}/"
        assert _live("::1", port, f"[::1]:{port}") == 200
        assert _live("::1", port, "evil.example") == 403
    finally:
        ep6.close()


def test_taken_port_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(H, "RETRY_BIND", 0.2)  # the daemon's 30 s; tests/e2e/test_http.py waits that out once
    svc = types.SimpleNamespace(journal=Journal(tmp_path / "state"))
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    port = blocker.getsockname()[1]
    ep = H.HttpEndpoint(svc, HttpCfg(listen=f"127.0.0.1:{port}"))
    ep.start()
    try:
        assert ep.url is None
        blocker.close()
        deadline = time.monotonic() + 10
        while ep.url is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ep.url == f"http://127.0.0.1:{port}/"
        assert _live("127.0.0.1", port) == 200
    finally:
        blocker.close()
        ep.close()
