"""The HTTP endpoint of a real ``ocr-daemon run`` against hostile and careless clients, over real
HTTP on loopback (uvicorn in the daemon's process):

- a foreign Host is refused (421) on every route, the upload form and a valid upload included
  (nothing lands in the inbox); a malformed Host (``[``) gets 400, never no answer;
- with ``token_file`` every request but the health probes needs the bearer token (401);
- an upload over ``upload_max_mb`` sent without Content-Length is refused while it streams (413),
  the inbox untouched and the daemon's peak RSS not grown by the upload's size; one under the
  limit lands without being held in memory either;
- ``upload_concurrency`` uploads at once, the next gets 503 with Retry-After;
- clients that go away mid-upload or before reading a response leave no partial file and no
  traceback in the log; bytes that are not HTTP get 400, and no warning;
- ``check-config`` refuses a listen address on the network without ``allow_remote`` and a token
  (naming the keys) and notes who can reach it with them.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import re
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from conftest import http_url, run_cli, wait_for, with_http, write_rules

ROUTES = [{"name": "all", "destination": "out"}]
TOKEN = secrets.token_hex(32)
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MIB = 1 << 20


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def call(port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> tuple[int, http.client.HTTPResponse, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)  # a Host in headers replaces the automatic one
        r = conn.getresponse()
        return r.status, r, r.read()
    finally:
        conn.close()


def form_head(token: str, filename: str) -> tuple[bytes, bytes, str]:
    """(the form up to the file's bytes, its end, the boundary) of an upload form."""
    b = "----hostile-" + secrets.token_hex(6)
    head = (f'--{b}\r\nContent-Disposition: form-data; name="token"\r\n\r\n{token}\r\n'
            f'--{b}\r\nContent-Disposition: form-data; name="inbox"\r\n\r\ninbox\r\n'
            f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return head, f"\r\n--{b}--\r\n".encode(), b


class RawUpload:
    """A chunked (no Content-Length) upload over a plain socket, sent piece by piece while a
    thread reads the answer (which may come before the body is all sent)."""

    def __init__(self, port: int, boundary: str, host: str = "localhost") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.sendall((f"POST /upload HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n"
                           f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n").encode())
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.text = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        r = http.client.HTTPResponse(self.sock)
        try:
            r.begin()
            self.status, self.headers, self.text = r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        except OSError:
            self.status = 0

    def send(self, data: bytes) -> bool:
        """False once the server stopped reading (it answered and closed)."""
        try:
            self.sock.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            return True
        except OSError:
            return False

    def end(self) -> None:
        self.sock.sendall(b"0\r\n\r\n")

    def answer(self, timeout: float = 60) -> int:
        self._reader.join(timeout)
        assert self.status is not None, "no answer"
        return self.status

    def close(self) -> None:
        # shutdown first: close() alone would wait for the reader thread's recv, sending no FIN
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def pieces(total: int, size: int = 256 * 1024) -> Iterator[bytes]:
    block = (b"hostile upload " * (size // 15 + 1))[:size]
    for _ in range(total // size):
        yield block


def reset_peak_rss(pid: int) -> int:
    """Reset the process's peak resident set to its current one (Linux: ``5`` to clear_refs), so
    a later ``peak_rss`` is the peak since now; returns it."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return peak_rss(pid)


def peak_rss(pid: int) -> int:
    """The process's peak resident set (VmHWM), bytes."""
    text = Path(f"/proc/{pid}/status").read_text()
    m = re.search(r"^VmHWM:\s+(\d+) kB", text, re.MULTILINE)
    assert m, text
    return int(m.group(1)) * 1024


def inbox_files(tmp: Path) -> list[str]:
    return sorted(p.name for p in (tmp / "inbox").iterdir())


def test_hostile_clients(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "token").write_text(TOKEN + "\n")
    limit_mb = 64
    cfg = with_http(write_rules(tmp_path, routes=ROUTES), upload=True, upload_max_mb=limit_mb, upload_concurrency=1,
                    token_file=str(tmp_path / "token"))
    d = start_daemon(cfg)
    port = _port(http_url(d))
    d.wait_ready()
    ok = {"Host": "localhost", **AUTH}
    status, _, page = call(port, "GET", "/upload", ok)
    assert status == 200
    m = re.search(r'name="token" value="([^"]+)"', page.decode())
    assert m
    form_token = m.group(1)

    # Host allow-list: every route, a complete valid upload included; malformed Host: 400
    head, tail, b = form_head(form_token, "evil.png")
    upload = head + b"\x89PNG not really" + tail
    routes = [("GET", "/healthz/live"), ("GET", "/healthz/ready"), ("GET", "/metrics"), ("GET", "/status"),
              ("GET", "/"), ("GET", "/index.html"), ("GET", "/upload"), ("GET", "/upload/x"),
              ("GET", "/upload/x.json"), ("GET", "/upload/x/files/0/x.txt"), ("HEAD", "/status"),
              ("PUT", "/status"), ("GET", "/no-such-page"), ("POST", "/upload")]
    for method, path in routes:
        body = upload if method == "POST" else None
        headers = {"Content-Type": f"multipart/form-data; boundary={b}"} if body else {}
        for host, want in (("evil.example", 421), ("evil.example:80", 421), ("localhost.evil.example", 421),
                           ("[", 400), ("bad host", 400), ("localhost:99999", 400)):
            assert call(port, method, path, {**headers, **AUTH, "Host": host}, body)[0] == want, (method, path, host)
        # the same with a good Host passes the guard (and, but for the probes, needs the token)
        first = call(port, method, path, {**headers, "Host": f"127.0.0.1:{port}"}, body)[0]
        assert first == (200 if path.startswith("/healthz") else 401), (method, path, first)
    assert inbox_files(tmp_path) == []
    status, r, _ = call(port, "GET", "/status", {"Host": "localhost"})
    assert status == 401 and "Bearer" in (r.getheader("WWW-Authenticate") or "")
    assert call(port, "GET", "/status", {"Host": "localhost", "Authorization": f"Bearer {TOKEN[:-1]}"})[0] == 401
    assert call(port, "GET", "/status", ok)[0] == 200
    basic = base64.b64encode(f"me:{TOKEN}".encode()).decode()
    assert call(port, "GET", "/", {"Host": "localhost", "Authorization": f"Basic {basic}"})[0] == 200  # a browser's

    # Over the limit, streamed without Content-Length: refused at the limit, nothing kept, and
    # the daemon's peak RSS does not grow by the upload's size.
    hwm0 = reset_peak_rss(d.proc.pid)
    head, tail, b = form_head(form_token, "huge.png")
    up = RawUpload(port, b)
    sent = len(head) if up.send(head) else 0
    for piece in pieces(3 * limit_mb * MIB):
        if not up.send(piece):
            break
        sent += len(piece)
    assert up.answer() == 413 and b"upload_max_mb" in up.text, (up.status, up.text)
    up.close()
    assert limit_mb * MIB <= sent < 3 * limit_mb * MIB  # it read up to the limit, then stopped
    grew = peak_rss(d.proc.pid) - hwm0
    assert grew < limit_mb * MIB // 4, f"peak RSS grew {grew / MIB:.1f} MiB during a {sent / MIB:.0f} MiB upload"
    assert inbox_files(tmp_path) == []
    # with a Content-Length over the limit: refused before the body
    status, _, text = call(port, "POST", "/upload", {**ok, "Content-Type": f"multipart/form-data; boundary={b}",
                                                    "Content-Length": str((limit_mb + 1) * MIB)})
    assert status == 413

    # Under the limit: it lands, still streamed (the peak grows by far less than its size).
    hwm0 = reset_peak_rss(d.proc.pid)
    head, tail, b = form_head(form_token, "big.png")
    big = RawUpload(port, b)
    assert big.send(head)
    size = 0
    for piece in pieces(48 * MIB):
        assert big.send(piece)
        size += len(piece)
        if size == 4 * MIB:
            # the first slot is taken: a second upload meanwhile gets 503 with Retry-After
            wait_for(lambda: [n for n in inbox_files(tmp_path) if n.endswith(".upload-part")], 30, "the partial file")
            h2, t2, b2 = form_head(form_token, "second.png")
            status, r, text = call(port, "POST", "/upload", {**ok, "Content-Type": f"multipart/form-data; boundary={b2}"},
                                   h2 + b"second" + t2)
            assert status == 503 and r.getheader("Retry-After") == "5", (status, text)
    assert big.send(tail)
    big.end()
    assert big.answer() == 303 and big.headers["location"].startswith("/upload/"), (big.status, big.text)
    grew = peak_rss(d.proc.pid) - hwm0
    big.close()
    assert grew < 12 * MIB, f"peak RSS grew {grew / MIB:.1f} MiB during a 48 MiB upload"
    assert (tmp_path / "inbox" / "big.png").stat().st_size == size
    # the slot is free again
    status, r, text = call(port, "POST", "/upload", {**ok, "Content-Type": f"multipart/form-data; boundary={b2}"},
                           h2 + b"second" + t2)
    assert status == 303, text

    # Clients that go away: mid-upload (after the file started), and before reading an answer.
    head, tail, b = form_head(form_token, "gone.png")
    gone = RawUpload(port, b)
    gone.send(head)
    for piece in pieces(3 * MIB):
        gone.send(piece)
    wait_for(lambda: [n for n in inbox_files(tmp_path) if n.endswith(".upload-part")], 30, "the partial file")
    gone.close()
    # at once, not after the 30 s body timeout (http.BODY_TIMEOUT) that would drop it too
    wait_for(lambda: not [n for n in inbox_files(tmp_path) if n.endswith(".upload-part")], 10, "the partial file removed")
    assert not (tmp_path / "inbox" / "gone.png").exists()
    for path in ("/metrics", "/status", "/"):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
        s.close()
    # not HTTP at all (a TLS hello, a scanner's junk): 400, then closed
    for junk in (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(64) + b"\r\n\r\n", b"HELLO\r\n\r\n"):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(junk)
        answer = s.recv(4096)
        s.close()
        assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert call(port, "GET", "/healthz/live", {"Host": "localhost"})[0] == 200
    time.sleep(0.5)
    assert d.stop() == 0
    log = d.log()
    assert "Traceback" not in log and "ERROR" not in log and "WARNING" not in log, log[-5000:]


def test_check_config_on_a_remote_listen(tmp_path: Path) -> None:
    cfg = with_http(write_rules(tmp_path, routes=ROUTES), listen="0.0.0.0:9750")
    r = run_cli("check-config", "--config", str(cfg))
    assert r.returncode != 0
    assert "daemon.http.listen" in r.stderr and "allow_remote" in r.stderr and "daemon.http.token_file" in r.stderr, r.stderr
    (tmp_path / "token").write_text("short\n")
    cfg = with_http(cfg, listen="0.0.0.0:9750", allow_remote=True, token_file="token")
    r = run_cli("check-config", "--config", str(cfg))
    assert r.returncode != 0 and "daemon.http.token_file" in r.stderr and "at least 32" in r.stderr, r.stderr
    (tmp_path / "token").write_text(TOKEN + "\n")
    (tmp_path / "token").chmod(0o600)
    r = run_cli("check-config", "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    assert "note: " in r.stderr and "reachable from the network" in r.stderr and "Bearer" in r.stderr, r.stderr
