"""daemon.http's listen forms, bound for real (uvicorn in the process): the any-address
(refused without ``allow_remote`` and a token, served with them), IPv6 loopback (the Host check
takes ``[::1]:port``), and a second endpoint on a taken port retrying until the port is free.
The daemon's own tests (tests/e2e/test_http.py) cover the endpoints; this covers the binding."""

from __future__ import annotations

import http.client
import logging
import secrets
import socket
import time
import types
from pathlib import Path

import pytest

from daemon.config import HttpCfg
from daemon.http import endpoint as H
from daemon.http import server as httpserver
from daemon.journal.store import Journal


def _get(host: str, port: int, path: str = "/healthz/live", host_header: str | None = None,
         headers: dict[str, str] | None = None) -> int:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path, headers={**({"Host": host_header} if host_header else {}), **(headers or {})})
        return conn.getresponse().status
    finally:
        conn.close()


def _port(ep: H.HttpEndpoint) -> int:
    assert ep.url is not None
    return int(ep.url.rstrip("/").rsplit(":", 1)[1])


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_any_address_needs_allow_remote_and_a_token(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    svc = types.SimpleNamespace(journal=Journal(tmp_path / "state"))
    port = _free_port()
    token = secrets.token_hex(32)
    (tmp_path / "token").write_text(token + "\n")
    for refused in (HttpCfg(listen=f"0.0.0.0:{port}"), HttpCfg(listen=f"0.0.0.0:{port}", allow_remote=True),
                    HttpCfg(listen=f"0.0.0.0:{port}", token_file=tmp_path / "token"),
                    HttpCfg(listen=f"0.0.0.0:{port}", allow_remote=True, token_file=tmp_path / "missing")):
        ep = H.HttpEndpoint(svc, refused)
        with caplog.at_level(logging.ERROR):
            ep.start()
        try:
            assert ep.url is None
            with pytest.raises(ConnectionRefusedError):
                _get("127.0.0.1", port)
        finally:
            ep.close()
    assert "not serving" in caplog.text

    ep4 = H.HttpEndpoint(svc, HttpCfg(listen="0.0.0.0:0", allow_remote=True, token_file=tmp_path / "token",
                                      hosts=["ocr.example.org"]))
    ep4.start()
    try:
        assert ep4.url and ep4.url.startswith("http://0.0.0.0:")
        port = _port(ep4)
        auth = {"Authorization": f"Bearer {token}"}
        # (this svc has no engine: a path past the guard is /nothing-here, 404)
        assert _get("127.0.0.1", port, "/healthz/live", "ocr.example.org") == 200  # probes need no token
        assert _get("127.0.0.1", port, "/nothing-here", "ocr.example.org") == 401
        assert _get("127.0.0.1", port, "/nothing-here", "ocr.example.org", auth) == 404
        # the names of `hosts`, and the address the connection came in on; no other name
        assert _get("127.0.0.1", port, "/nothing-here", f"127.0.0.1:{port}", auth) == 404
        assert _get("127.0.0.1", port, "/nothing-here", "localhost", auth) == 421  # hosts replaces the default list
        assert _get("127.0.0.1", port, "/nothing-here", "evil.example", auth) == 421
    finally:
        ep4.close()


def test_ipv6_loopback(tmp_path: Path) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this kernel")
    svc = types.SimpleNamespace(journal=Journal(tmp_path / "state"))
    ep6 = H.HttpEndpoint(svc, HttpCfg(listen="[::1]:0"))
    ep6.start()
    try:
        port = _port(ep6)
        assert ep6.url == f"http://[::1]:{port}/"
        assert _get("::1", port, host_header=f"[::1]:{port}") == 200
        assert _get("::1", port, host_header="evil.example") == 421
    finally:
        ep6.close()


def test_taken_port_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpserver, "RETRY_BIND", 0.2)  # the daemon's 30 s; tests/e2e/test_http.py waits that out once
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
        assert _get("127.0.0.1", port) == 200
    finally:
        blocker.close()
        ep.close()
