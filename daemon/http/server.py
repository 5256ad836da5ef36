"""Serving an ASGI app on ``daemon.http.listen`` from the daemon's process: uvicorn in a thread.

Contract:
- ``ServerThread(listen, app, what=...).start()`` binds ``listen`` (``host:port``, ``[v6]:port`` or
  a Unix socket path, see ``parse_listen``) at once, then serves ``app`` with uvicorn on its own
  asyncio event loop in a thread named ``http``; ``url`` says where (``http://host:port/`` or
  ``unix:PATH``) and the log line ``http endpoint listening on <url> (<what>)`` says when.
- Bind error (port taken, ...): an error is logged once, the daemon goes on (OCR never stops for
  its health endpoint) and the bind is retried every ``RETRY_BIND`` seconds until it works or
  ``close()``.
- A Unix socket: a stale socket file (nobody listening) is replaced; any other file there is a
  bind error. The socket is made group-accessible (0660). ``close()`` stops the server (idle
  connections are closed, requests in flight get ``GRACE`` seconds), joins the thread and removes
  the socket file. ``close()`` is idempotent and safe against a retry binding concurrently.
- A request uvicorn cannot parse is answered 400 and logged at debug level (not uvicorn's
  warning each: a scanner would fill the log).
- Bounded: at most ``MAX_CONNECTIONS`` connections, ``MAX_PER_CLIENT`` of one client (IP address);
  over either bound the oldest idle connection (of that client, for its own bound) is closed to
  make room, so a health probe is never starved by a flood of idle sockets; only when all are
  busy is the new one closed on accept. A client must
  send a request head within ``HEAD_TIMEOUT`` of connecting or of its previous response
  (uvicorn's keep-alive timer starts only after a response, so a connection that never sends
  would stay forever); keep-alive ``KEEP_ALIVE`` seconds; listen backlog ``BACKLOG``.

Why uvicorn (+ Starlette, in ``endpoint.py``) and not ``http.server``: the stdlib server spends a
thread per connection without bound (600 idle connections: "can't start new thread", and
/healthz/live unanswered for 30 s) with a backlog of 5 (200 concurrent /status: 5 never
answered). uvicorn's h11 event loop holds thousands of idle connections without a thread each
and has ``limit_concurrency``, ``backlog`` and ``timeout_keep_alive``; it is the ASGI server the
vLLM extra already brings, well kept and typed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

#: Seconds between tries to bind an address that was taken.
RETRY_BIND = 30.0
#: Connections held at once. The load test (bench/bench_http_load.py) holds 600 idle ones while
#: /healthz/live answers; each cost ~3.8 KiB of RSS there and one file descriptor (the systemd
#: unit's LimitNOFILE is 65536), so 1000 bound them to ~4 MiB.
MAX_CONNECTIONS = 1000
#: Connections one client (one IP address; every Unix-socket client counts as one) holds at once:
#: a quarter of ``MAX_CONNECTIONS``, so one client can never take the endpoint from the others.
MAX_PER_CLIENT = MAX_CONNECTIONS // 4
#: Pending connections the kernel queues before accept (Linux caps it at net.core.somaxconn,
#: 4096 by default since 5.4); the stdlib server's 5 dropped a burst of 200.
BACKLOG = 2048
#: Seconds an idle keep-alive connection stays open after a response (uvicorn's default; the
#: status page reloads every 5 s, over a new connection or this one).
KEEP_ALIVE = 5
#: Seconds a client has for a request head (a connection that sends nothing, or too slowly).
HEAD_TIMEOUT = 15.0
#: Seconds requests in flight get to finish when the endpoint closes.
GRACE = 3


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


class _Protocol(H11Protocol):
    """uvicorn's h11 protocol with the two bounds it lacks (see the module contract)."""

    _head_timer: asyncio.TimerHandle | None = None

    _client: Any = None
    _idle_since = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        self._client = peer[0] if isinstance(peer, tuple) and peer else "unix"
        self._idle_since = self.loop.time()
        mine = _clients(self.server_state).setdefault(self._client, {})
        mine[self] = None  # in order of idle-since: on_response_complete moves it to the end
        # Over a bound: the oldest idle connection (of this client, when it is the one over its
        # own bound) makes room, so a new request -- a health probe -- always gets in; only
        # when every connection is busy is the new one closed (issue 33: 1,100 idle sockets
        # from one client reset 50 of 50 probes). The per-client walk stops at the first idle
        # one (the oldest are idle): O(1) an accept, not a scan of every connection.
        if len(mine) > MAX_PER_CLIENT:
            victim = next((c for c in mine if c is not self and _idle(c)), None)
        elif len(self.connections) > MAX_CONNECTIONS:
            victim = min((c for c in self.connections if c is not self and _idle(c)),
                         key=lambda c: getattr(c, "_idle_since", 0.0), default=None)
        else:
            self._arm_head_timer()
            return
        if victim is None:
            transport.close()  # connection_lost takes it out of the set again
            return
        victim.transport.close()
        self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT, self._head_timeout)

    def _head_timeout(self) -> None:
        self._head_timer = None
        busy = self.cycle is not None and not self.cycle.response_complete
        if not busy and not self.transport.is_closing():
            self.transport.close()  # no request (or only part of its head) in time

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._idle_since = self.loop.time()
        mine = _clients(self.server_state).get(self._client)
        if mine is not None and mine.pop(self, 0) is None:
            mine[self] = None  # now the newest idle one of its client
        if not self.transport.is_closing():
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        clients = _clients(self.server_state)
        mine = clients.get(self._client)
        if mine is not None:
            mine.pop(self, None)
            if not mine:
                del clients[self._client]
        super().connection_lost(exc)


def _clients(state: Any) -> dict[Any, dict[Any, None]]:
    """The server's connections by client (IP address, or "unix"), each oldest idle first; kept
    on uvicorn's per-server state, touched only on its event loop."""
    clients: dict[Any, dict[Any, None]] | None = getattr(state, "ocr_clients", None)
    if clients is None:
        clients = {}
        state.ocr_clients = clients
    return clients


def _idle(c: Any) -> bool:
    """A connection with no request in flight (none yet, or its last response sent)."""
    cycle = getattr(c, "cycle", None)
    return (cycle is None or cycle.response_complete) and not c.transport.is_closing()


class _QuietClientErrors(logging.Filter):
    """uvicorn warns about every request it cannot parse (a port scanner, TLS spoken to plain
    HTTP): the client's fault, answered 400; a debug line here instead of a warning each."""

    NOISE = frozenset({"Invalid HTTP request received."})

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() in self.NOISE:
            log.debug("http: %s", record.getMessage())
            return False
        return True


_uvicorn_log = logging.getLogger("uvicorn.error")
if not any(isinstance(f, _QuietClientErrors) for f in _uvicorn_log.filters):
    _uvicorn_log.addFilter(_QuietClientErrors())


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


def bind(listen: str) -> tuple[socket.socket, str]:
    """A listening socket for ``listen`` and its URL; raises ``OSError``."""
    fam, addr = parse_listen(listen)
    sock = socket.socket(fam, socket.SOCK_STREAM)
    try:
        if fam == socket.AF_UNIX:
            _clear_stale_socket(Path(addr))
            sock.bind(addr)
            with contextlib.suppress(OSError):
                os.chmod(addr, 0o660)  # the service's group (operators) may connect
            url = f"unix:{addr}"
        else:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # rebind over TIME_WAIT after a restart
            if fam == socket.AF_INET6:
                # "[::]" serves IPv4 too, whatever net.ipv6.bindv6only says
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind(addr)
            host, port = sock.getsockname()[:2]
            url = f"http://[{host}]:{port}/" if fam == socket.AF_INET6 else f"http://{host}:{port}/"
        sock.listen(BACKLOG)  # listening before the URL is logged: a client may connect at once
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock, url


class ServerThread:
    """See the module docstring."""

    def __init__(self, listen: str, app: Any, *, what: str = "") -> None:
        self.listen = listen
        self.app = app
        self.what = what
        self.url: str | None = None  # where it listens, once bound
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._retry: threading.Thread | None = None

    def start(self) -> None:
        if self._bind(first=True):
            return
        self._retry = threading.Thread(target=self._retry_loop, name="http-bind", daemon=True)
        self._retry.start()

    def _retry_loop(self) -> None:
        while not self._closed.wait(RETRY_BIND):
            if self._bind(first=False):
                return

    def _bind(self, *, first: bool) -> bool:
        try:
            sock, url = bind(self.listen)
        except OSError as e:
            if first:
                why = "the address is in use (another ocr-daemon or another program)" if e.errno == errno.EADDRINUSE else e.strerror
                log.error(
                    "http endpoint: cannot listen on %s: %s; documents are processed as usual, the endpoint "
                    "retries every %.0fs (set daemon.http.listen to a free port, or daemon.http: null)",
                    self.listen, why, RETRY_BIND,
                )
            return False
        config = uvicorn.Config(
            self.app, http=_Protocol, ws="none", lifespan="off", interface="asgi3",
            # the daemon's logging stays as it is: no dictConfig, no access log, uvicorn's own
            # lines only from warnings up ("Invalid HTTP request received.", errors)
            log_config=None, log_level="warning", access_log=False,
            # X-Forwarded-For would let a local proxy's client pose as another address
            proxy_headers=False, server_header=False,
            # one more than the connections held: a request on the last connection is served
            limit_concurrency=MAX_CONNECTIONS + 1, backlog=BACKLOG, timeout_keep_alive=KEEP_ALIVE,
            timeout_graceful_shutdown=GRACE,
        )
        server = uvicorn.Server(config)
        with self._lock:  # close() may run meanwhile (the retry thread binds late)
            self.url = url
            if self._closed.is_set():
                sock.close()
                self._unlink_socket()
                return True
            self._server = server
            self._thread = threading.Thread(target=self._run, args=(server, sock), name="http", daemon=True)
            self._thread.start()
        log.info("http endpoint listening on %s (%s)", url, self.what)
        return True

    def _run(self, server: uvicorn.Server, sock: socket.socket) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(server.serve(sockets=[sock]))
        except BaseException:  # noqa: BLE001 - the endpoint's thread must log, not vanish
            log.exception("http endpoint stopped by an error; documents are processed as usual")
        finally:
            sock.close()
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    def close(self, timeout: float = GRACE + 5) -> None:
        with self._lock:
            self._closed.set()
            server, thread = self._server, self._thread
        if server is not None:
            server.should_exit = True  # uvicorn's main loop looks every 0.1 s
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("http endpoint: its thread did not stop within %.0fs", timeout)
        self._unlink_socket()

    def _unlink_socket(self) -> None:
        if "/" in self.listen and self.url is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.listen)
