"""The daemon's HTTP endpoint: health, Prometheus metrics, status JSON, a small HTML page, and
(opt-in) uploading one file into an inbox. The pages' HTML is built in ``statuspage.py``.

(~540 lines: the server's lifecycle with its bind retries, the request guards (loopback Host,
upload clients, token, size) and the upload path (multipart parsing, the write into the inbox,
its state) are one request-handling unit; splitting them would spread the security checks of
one request over modules.)

Contract:
- ``HttpEndpoint(svc, cfg).start()`` serves ``daemon.http.listen`` (``host:port``, ``[v6]:port``
  or a Unix socket path) from threads of the daemon's process (stdlib ``ThreadingHTTPServer``:
  a handful of small requests a minute needs no framework, and it adds no dependency to a
  hardened service). ``close()`` stops it and removes its socket file.
- Endpoints: ``GET /healthz/live`` (200 while the process serves), ``GET /healthz/ready`` (200
  once the journal is recovered, the engine started and the inboxes watched; 503 with the
  reasons before that, while the engine restarts and during the drain), ``GET /metrics``
  (Prometheus text format by ``prometheus_client``), ``GET /status`` (JSON: ``counts`` and
  ``recent_failures`` as ``ocr-daemon status --json`` prints them, plus ``live``), ``GET /`` (an
  HTML page of the same that reloads itself every 5 s; no JavaScript).
- Read-only: no endpoint changes state, except ``POST /upload`` when ``daemon.http.upload`` is
  true. An upload is written to the chosen inbox under a name the inbox does not take, then
  renamed into place, so it goes the normal way (stability wait, journal, routing);
  ``GET /upload/<id>`` shows its state and, once done, its outputs. Uploads are taken only from
  ``upload_clients`` (loopback by default; any client of a Unix socket, which its file
  permissions guard), only with the form's per-process token (a page elsewhere cannot post
  here), and up to ``upload_max_mb``.
- A listen address that is loopback answers only requests whose ``Host`` is a loopback name
  (no DNS rebinding of the page from a web site).
- Port taken (or any other bind error): the daemon logs an error saying so and keeps
  processing documents; the endpoint retries binding every ``RETRY_BIND`` seconds and logs when
  it is up. OCR never stops for the sake of its health endpoint; a monitor sees the endpoint
  missing.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import json
import logging
import os
import secrets
import socket
import socketserver
import stat
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from python_multipart import MultipartParser
from python_multipart.multipart import parse_options_header

from daemon.config import HttpCfg
from daemon.journal.store import status_summary
from daemon.names import display, for_log
from daemon.service.metrics import METRICS, live_progress, ready_problems
from daemon.service.statuspage import page_html, upload_form_html, upload_page_html

log = logging.getLogger(__name__)

#: Seconds between tries to bind an address that was taken.
RETRY_BIND = 30.0
#: Seconds a client may take to send a request (a stalled client holds only its own thread).
REQUEST_TIMEOUT = 30.0
#: Uploads remembered for their status page (oldest forgotten first).
MAX_UPLOADS = 1000


def parse_listen(listen: str) -> tuple[socket.AddressFamily, Any]:
    """(address family, address) of a ``daemon.http.listen`` value."""
    if "/" in listen:
        return socket.AF_UNIX, listen
    host, _, port = listen.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        return socket.AF_INET6, (host[1:-1], int(port))
    try:
        fam = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:
        fam = socket.AF_INET  # a name such as localhost: resolved by bind
    return fam, (host, int(port))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _TCPServer(ThreadingHTTPServer):
    daemon_threads = True
    endpoint: HttpEndpoint

    def server_bind(self) -> None:
        # HTTPServer's would look the host up with getfqdn(): a DNS query that the unit's IP
        # firewall drops, stalling the start for its timeouts (0.0.0.0 resolves the host name).
        socketserver.TCPServer.server_bind(self)
        self.server_name = str(self.server_address[0])
        self.server_port = int(self.server_address[1])


class _TCP6Server(_TCPServer):
    address_family = socket.AF_INET6


class _UnixServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    endpoint: HttpEndpoint


@dataclass
class Upload:
    path: Path
    inbox: str
    name: str
    created: float  # Unix time, to tell this document from an earlier one at the same path


class HttpEndpoint:
    """See the module docstring."""

    def __init__(self, svc: Any, cfg: HttpCfg) -> None:
        self.svc = svc
        self.cfg = cfg
        self.token = secrets.token_urlsafe(24)  # the upload form's: proves a post came from our page
        self.url: str | None = None  # where it listens, once bound
        self.uploads: dict[str, Upload] = {}
        self._lock = threading.Lock()
        self._server: _TCPServer | _UnixServer | None = None
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._retry: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        METRICS.service.svc = self.svc
        if self._bind(first=True):
            return
        self._retry = threading.Thread(target=self._retry_loop, name="http-bind", daemon=True)
        self._retry.start()

    def _retry_loop(self) -> None:
        while not self._closed.wait(RETRY_BIND):
            if self._bind(first=False):
                return

    def _bind(self, *, first: bool) -> bool:
        fam, addr = parse_listen(self.cfg.listen)
        try:
            server: _TCPServer | _UnixServer
            if fam == socket.AF_UNIX:
                _clear_stale_socket(Path(addr))
                server = _UnixServer(addr, _Handler, bind_and_activate=True)
                with contextlib.suppress(OSError):
                    os.chmod(addr, 0o660)  # the service's group (operators) may connect
                self.url = f"unix:{addr}"
            else:
                server = (_TCP6Server if fam == socket.AF_INET6 else _TCPServer)(addr, _Handler)
                host, port = str(server.server_address[0]), int(server.server_address[1])
                shown = f"[{host}]" if fam == socket.AF_INET6 else host
                self.url = f"http://{shown}:{port}/"
        except OSError as e:
            if first:
                why = "the address is in use (another ocr-daemon or another program)" if e.errno == errno.EADDRINUSE else e.strerror
                log.error(
                    "http endpoint: cannot listen on %s: %s; documents are processed as usual, the endpoint "
                    "retries every %.0fs (set daemon.http.listen to a free port, or daemon.http: null)",
                    self.cfg.listen, why, RETRY_BIND,
                )
            return False
        with self._lock:  # close() may run meanwhile (the retry thread binds late)
            if self._closed.is_set():
                server.server_close()
                return True
            server.endpoint = self
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5}, name="http", daemon=True)
            self._thread.start()
        log.info("http endpoint listening on %s (status page, /metrics, /healthz/ready%s)", self.url,
                 ", uploads on" if self.cfg.upload else "")
        return True

    def close(self) -> None:
        with self._lock:
            self._closed.set()
            server = self._server
        if server is not None:
            server.shutdown()
            server.server_close()
            if isinstance(server, _UnixServer):
                with contextlib.suppress(OSError):
                    os.unlink(self.cfg.listen)
        if METRICS.service.svc is self.svc:
            METRICS.service.svc = None

    # -- content ---------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        svc = self.svc
        problems = ready_problems(svc)
        return {
            # what `ocr-daemon status --json` prints (tests compare the two)
            **status_summary(svc.journal, svc.cfg.daemon.max_attempts),
            "live": {
                "ready": not problems,
                "not_ready": problems,
                "engine": svc.engine.name,
                "started": datetime.fromtimestamp(METRICS.started).astimezone().isoformat(timespec="seconds"),
                "uptime_seconds": round(time.time() - METRICS.started, 1),
                "queue": len(svc.queue),
                "settling": svc.tracker.pending(),
                "processing": len(svc.busy_documents()),
                "pages_since_start": METRICS.pages_count,
                "pages_per_second": round(METRICS.rate(60), 3),
                "pages_per_second_5min": round(METRICS.rate(300), 3),
                "history": METRICS.history(),
                "documents": [p.as_dict() for p in live_progress(svc)],
                "upload": self.cfg.upload,
            },
        }

    def may_upload(self, client: str) -> bool:
        if not self.cfg.upload:
            return False
        if self.url and self.url.startswith("unix:"):
            return True
        try:
            ip = ipaddress.ip_address(client.split("%")[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        nets = [ipaddress.ip_network(n, strict=False) for n in self.cfg.upload_clients]
        return any(ip.version == n.version and ip in n for n in nets)

    def save_upload(self, inbox_name: str, filename: str, data: bytes) -> tuple[str, Upload]:
        """Drop ``data`` into the inbox as ``filename`` (made unique); returns (id, record).
        Raises ``ValueError`` with a message for the user."""
        from daemon.fsio import unique_path

        ib = self.svc.cfg.inbox(inbox_name)
        if ib is None:
            raise ValueError(f"no inbox named {inbox_name!r}")
        name = os.path.basename(filename.replace("\\", "/")).lstrip(".-").strip()
        if not name or len(name.encode("utf-8", "surrogateescape")) > 200:
            raise ValueError("the file needs a name (at most 200 bytes)")
        if not data:
            raise ValueError("the file is empty")
        folder = Path(ib.path)
        target = unique_path(folder, name)
        if not ib.wants(target):
            raise ValueError(f"inbox {ib.name!r} does not take {name!r} (include: {', '.join(ib.include)})")
        # Written under a name no inbox glob takes, then renamed into place: the watcher sees one
        # complete file appear (no stability wait on a half-written upload).
        tmp = folder / f".{secrets.token_hex(8)}.upload-part"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o640)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        up = Upload(target, ib.name, target.name, time.time())
        uid = secrets.token_urlsafe(12)
        with self._lock:
            self.uploads[uid] = up
            while len(self.uploads) > MAX_UPLOADS:
                self.uploads.pop(next(iter(self.uploads)))
        log.info("http upload: %s into inbox %r (%d bytes)", for_log(target.name), ib.name, len(data))
        return uid, up

    def upload_state(self, up: Upload) -> dict[str, Any]:
        """Where an upload is: settling, queued, processing (with progress), done, failed..."""
        row = None
        found = self.svc.journal.find(up.path)
        if found is not None and found.created >= up.created - 1:
            row = found
        out: dict[str, Any] = {"name": up.name, "inbox": up.inbox, "path": display(up.path)}
        if row is None:
            out["state"] = "settling"
            return out
        out.update(
            id=row.id, state=str(row.state), error=row.error, language=row.language, doctype=row.doctype,
            route=row.route, pages=row.pages, outputs=[str(o) for o in row.outputs],
            duplicate_of=row.duplicate_of,
        )
        prog = next((p for p in live_progress(self.svc) if p.id == row.id), None)
        if prog is not None:
            out["progress"] = prog.as_dict()
        return out


def _clear_stale_socket(path: Path) -> None:
    """Remove a socket file a killed daemon left behind; anything else there is an error."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise OSError(errno.EEXIST, f"{path} exists and is not a socket")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
    except ConnectionRefusedError:
        os.unlink(path)  # nobody listens: stale
        return
    except OSError:
        return
    finally:
        s.close()
    raise OSError(errno.EADDRINUSE, "in use")


# ---------------------------------------------------------------------------------------------
# request handling


class _Handler(BaseHTTPRequestHandler):
    server: _TCPServer | _UnixServer
    server_version = "ocr-daemon"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT

    @property
    def ep(self) -> HttpEndpoint:
        return self.server.endpoint

    def address_string(self) -> str:
        return self.client_address[0] if isinstance(self.client_address, tuple) else "unix"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("http %s %s", self.address_string(), format % args)

    def _client(self) -> str:
        return self.client_address[0] if isinstance(self.client_address, tuple) else ""

    def _host_ok(self) -> bool:
        """Loopback listen: the Host header must name loopback (blocks DNS rebinding)."""
        if not isinstance(self.server, _TCPServer):
            return True
        if not _loopback(str(self.server.server_address[0])):
            return True
        host = self.headers.get("Host")
        if host is None:
            return True
        name = urlsplit(f"//{host}").hostname or ""
        return _loopback(name)

    def _send(self, code: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if ctype.startswith("text/html"):
            # no script at all; forms post only here; the page cannot be framed
            self.send_header("Content-Security-Policy",
                             "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _text(self, code: int, text: str) -> None:
        self._send(code, text.encode("utf-8"), "text/plain; charset=utf-8")

    def _json(self, code: int, data: Any) -> None:
        self._send(code, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), "application/json")

    def _html(self, code: int, page: str) -> None:
        self._send(code, page.encode("utf-8"), "text/html; charset=utf-8")

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        finally:
            # Each request thread opened its own journal connection (the journal keeps one per
            # thread); close it before the thread waits for the next request or ends.
            self.ep.svc.journal.close()

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            return self._text(HTTPStatus.FORBIDDEN, "forbidden: Host is not a loopback name\n")
        path = urlsplit(self.path).path
        try:
            if path == "/healthz/live":
                return self._text(HTTPStatus.OK, "live\n")
            if path == "/healthz/ready":
                problems = ready_problems(self.ep.svc)
                if problems:
                    return self._text(HTTPStatus.SERVICE_UNAVAILABLE, "not ready: " + "; ".join(problems) + "\n")
                return self._text(HTTPStatus.OK, "ready\n")
            if path == "/metrics":
                return self._send(HTTPStatus.OK, generate_latest(METRICS.registry), CONTENT_TYPE_LATEST)
            if path == "/status":
                return self._json(HTTPStatus.OK, self.ep.status())
            if path in ("/", "/index.html"):
                return self._html(HTTPStatus.OK, page_html(self.ep.status(), upload=self.ep.may_upload(self._client())))
            if path == "/upload":
                if not self.ep.may_upload(self._client()):
                    return self._text(HTTPStatus.FORBIDDEN, _upload_refusal(self.ep))
                return self._html(HTTPStatus.OK, upload_form_html(self.ep.svc.cfg.inboxes, max_mb=self.ep.cfg.upload_max_mb, token=self.ep.token))
            if path.startswith("/upload/"):
                uid, _, fmt = path[len("/upload/"):].partition(".")
                up = self.ep.uploads.get(uid)
                if up is None or fmt not in ("", "json"):
                    return self._text(HTTPStatus.NOT_FOUND, "no such upload (uploads are forgotten when the daemon restarts)\n")
                state = self.ep.upload_state(up)
                if fmt == "json":
                    return self._json(HTTPStatus.OK, state)
                return self._html(HTTPStatus.OK, upload_page_html(state))
            return self._text(HTTPStatus.NOT_FOUND, "not found; try /, /status, /metrics, /healthz/live, /healthz/ready\n")
        except Exception:
            log.exception("http: %s failed", for_log(path))
            return self._text(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (see the daemon's log)\n")

    def do_POST(self) -> None:
        if not self._host_ok():
            return self._text(HTTPStatus.FORBIDDEN, "forbidden: Host is not a loopback name\n")
        if urlsplit(self.path).path != "/upload":
            return self._text(HTTPStatus.METHOD_NOT_ALLOWED, "read-only: only POST /upload (when enabled) changes anything\n")
        ep = self.ep
        if not ep.may_upload(self._client()):
            self.close_connection = True
            return self._text(HTTPStatus.FORBIDDEN, _upload_refusal(ep))
        ctype, params = parse_options_header(self.headers.get("Content-Type", ""))
        length = self.headers.get("Content-Length")
        limit = ep.cfg.upload_max_mb << 20
        if ctype != b"multipart/form-data" or b"boundary" not in params:
            self.close_connection = True
            return self._text(HTTPStatus.BAD_REQUEST, "expected multipart/form-data\n")
        if length is None or not length.isdigit():
            self.close_connection = True
            return self._text(HTTPStatus.LENGTH_REQUIRED, "Content-Length required\n")
        if int(length) > limit + 65536:
            self.close_connection = True
            return self._text(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"larger than daemon.http.upload_max_mb ({ep.cfg.upload_max_mb} MiB)\n")
        try:
            fields, files = parse_multipart(self.rfile, int(length), params[b"boundary"])
        except ValueError as e:
            self.close_connection = True
            return self._text(HTTPStatus.BAD_REQUEST, f"bad form: {e}\n")
        if not secrets.compare_digest(fields.get("token", ""), ep.token):
            return self._text(HTTPStatus.FORBIDDEN, "the form's token is missing or stale: reload the upload page\n")
        if "file" not in files:
            return self._text(HTTPStatus.BAD_REQUEST, "no file in the form (field 'file')\n")
        filename, data = files["file"]
        inbox = fields.get("inbox") or ep.svc.cfg.inboxes[0].name
        try:
            uid, _ = ep.save_upload(inbox, filename, data)
        except ValueError as e:
            return self._text(HTTPStatus.BAD_REQUEST, f"{e}\n")
        except OSError as e:
            log.error("http upload into inbox %r failed: %s", inbox, e)
            return self._text(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot write into the inbox: {e.strerror}\n")
        self._send(HTTPStatus.SEE_OTHER, b"", "text/plain", {"Location": f"/upload/{uid}"})

    do_PUT = do_DELETE = do_PATCH = do_POST


def _upload_refusal(ep: HttpEndpoint) -> str:
    if not ep.cfg.upload:
        return "uploads are off (daemon.http.upload: false)\n"
    return "uploads are allowed only from daemon.http.upload_clients\n"


def parse_multipart(stream: Any, length: int, boundary: bytes) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """A multipart/form-data body read from ``stream``: (text fields, files as (filename, data)).
    Parsed by python-multipart (the parser Starlette and FastAPI use; the stdlib's ``cgi`` is gone
    in Python 3.13)."""
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    cur: dict[str, Any] = {}
    header: list[bytes] = [b"", b""]

    def on_part_begin() -> None:
        cur.clear()
        cur["headers"] = {}
        cur["data"] = bytearray()

    def on_header_field(data: bytes, start: int, end: int) -> None:
        header[0] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        header[1] += data[start:end]

    def on_header_end() -> None:
        cur["headers"][header[0].decode("latin-1").lower()] = header[1]
        header[0], header[1] = b"", b""

    def on_part_data(data: bytes, start: int, end: int) -> None:
        cur["data"] += data[start:end]

    def on_part_end() -> None:
        _, opts = parse_options_header(cur["headers"].get("content-disposition", b""))
        name = opts.get(b"name", b"").decode("utf-8", "replace")
        if b"filename" in opts:
            files[name] = (opts[b"filename"].decode("utf-8", "surrogateescape"), bytes(cur["data"]))
        else:
            fields[name] = bytes(cur["data"]).decode("utf-8", "replace")

    parser = MultipartParser(boundary, {
        "on_part_begin": on_part_begin, "on_header_field": on_header_field, "on_header_value": on_header_value,
        "on_header_end": on_header_end, "on_part_data": on_part_data, "on_part_end": on_part_end,
    })
    left = length
    while left > 0:
        chunk = stream.read(min(left, 1 << 16))
        if not chunk:
            raise ValueError("the body ended early")
        left -= len(chunk)
        try:
            parser.write(chunk)
        except Exception as e:
            raise ValueError(str(e)) from e
    parser.finalize()
    return fields, files


def start_http(svc: Any) -> HttpEndpoint | None:
    """The endpoint ``svc.cfg.daemon.http`` asks for, started; None when it is off."""
    cfg = svc.cfg.daemon.http
    if cfg is None:
        return None
    ep = HttpEndpoint(svc, cfg)
    ep.start()
    return ep
