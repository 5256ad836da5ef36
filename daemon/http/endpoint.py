"""The daemon's HTTP endpoint: health, Prometheus metrics, status JSON, a small HTML page, and
(opt-in) uploading one file into an inbox and downloading what the daemon made of it. The API is
described in docs/http.md; the pages' HTML is built in ``statuspage.py``, the routes are
``readroutes.py`` (health, metrics, status) and ``uploadroutes.py`` (uploads, downloads).

Contract:
- ``HttpEndpoint(svc, cfg).start()`` serves ``daemon.http.listen`` from the daemon's process
  (``httpserver.ServerThread``: uvicorn on its own event loop in a thread, bounded connections,
  bind retries while the port is taken); ``close()`` stops it and removes its socket file.
  The routes are a Starlette app; every request first passes ``guard.Guard`` (Host
  allow-list: 400/421; bearer token when ``token_file`` is set: 401); an unknown path is 404,
  another method than a route's is 405.
- It refuses to serve (an error logged; documents are processed as usual) a listen address on
  the network without ``allow_remote`` and a readable token (``check-config`` reports both).
- Endpoints: ``GET /healthz/live``, ``GET /healthz/ready``, ``GET /metrics``, ``GET /status``
  (JSON), ``GET /`` (an HTML page of the same that reloads itself every 5 s; no JavaScript):
  ``readroutes.ReadRoutes``. What reads the journal runs in a pool of ``JOURNAL_WORKERS``
  threads (``in_pool``, ``journal_page``); the event loop itself never waits on SQLite.
- Read-only: no endpoint changes state, except ``POST /upload`` when ``daemon.http.upload`` is
  true: the form, the post, an upload's page and its downloads are ``uploadroutes.UploadRoutes``
  (taken only from ``upload_clients`` and only with the form's per-process token).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from daemon.config import HttpCfg
from daemon.config.validate import read_token
from daemon.http.guard import Guard
from daemon.http.readroutes import ReadRoutes
from daemon.http.responses import text
from daemon.http.server import RETRY_BIND, ServerThread, parse_listen
from daemon.http.uploadroutes import UploadRoutes
from daemon.names import for_log
from daemon.service.metrics import METRICS

__all__ = ["RETRY_BIND", "HttpEndpoint", "parse_listen", "start_http"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Threads that read the journal for /status, /, /metrics and upload pages (SQLite reads of a
#: few ms each). With 4, 200 concurrent /status were all answered in 0.62 s on the busy 2-core VM
#: (bench/bench_http_load.py); more would only contend for the GIL with the event loop.
JOURNAL_WORKERS = 4


class HttpEndpoint:
    """See the module docstring."""

    def __init__(self, svc: Any, cfg: HttpCfg) -> None:
        self.svc = svc
        self.cfg = cfg
        self._pool = ThreadPoolExecutor(JOURNAL_WORKERS, thread_name_prefix="http-journal")
        self._server: ServerThread | None = None
        self.uploads = UploadRoutes(self)  # the form, posts, an upload's page, downloads
        self.reads = ReadRoutes(self)  # health, metrics, status JSON and page

    @property
    def url(self) -> str | None:
        """Where it listens, once bound."""
        return self._server.url if self._server is not None else None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        METRICS.service.svc = self.svc
        cfg = self.cfg
        if cfg.remote() and not (cfg.allow_remote and cfg.token_file):
            log.error("http endpoint: not serving %s: it is reachable from the network, which needs "
                      "daemon.http.allow_remote: true and daemon.http.token_file (ocr-daemon check-config)", cfg.listen)
            return
        bearer = None
        if cfg.token_file is not None:
            try:
                bearer = read_token(cfg.token_file)
            except ValueError as e:
                log.error("http endpoint: not serving: daemon.http.token_file %s: %s", cfg.token_file, e)
                return
        app = Guard(self._app(), hosts=cfg.allowed_hosts(), token=bearer)
        what = "status page, /metrics, /healthz/ready" + (", uploads on" if cfg.upload else "")
        if bearer:
            what += ", bearer token required"
        self._server = ServerThread(cfg.listen, app, what=what)
        self._server.start()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if METRICS.service.svc is self.svc:
            METRICS.service.svc = None

    async def in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a journal worker; its journal connection is closed after (the journal
        keeps one per thread, and the next job may come much later)."""
        def job() -> T:
            try:
                return fn(*args)
            finally:
                self.svc.journal.close()

        return await asyncio.get_running_loop().run_in_executor(self._pool, job)

    # -- routes ----------------------------------------------------------------------------

    def _app(self) -> Starlette:
        reads, ups = self.reads, self.uploads
        routes = [
            Route("/healthz/live", reads.live, methods=["GET"]),
            Route("/healthz/ready", reads.ready, methods=["GET"]),
            Route("/metrics", reads.metrics, methods=["GET"]),
            Route("/status", reads.status_json, methods=["GET"]),
            Route("/", reads.page, methods=["GET"]),
            Route("/index.html", reads.page, methods=["GET"]),
            Route("/upload", ups.form, methods=["GET"]),
            Route("/upload", ups.post, methods=["POST"]),
            Route("/upload/{ref}", ups.page, methods=["GET"]),
            Route("/upload/{uid}/files/{n:int}/{name}", ups.download, methods=["GET"]),
        ]
        handlers: dict[Any, Any] = {404: self._not_found, 405: self._not_allowed}
        return Starlette(routes=routes, exception_handlers=handlers)

    async def _not_found(self, request: Request, exc: Exception) -> Response:
        return text(404, "not found; try /, /status, /metrics, /healthz/live, /healthz/ready\n")

    async def _not_allowed(self, request: Request, exc: Exception) -> Response:
        headers = exc.headers if isinstance(exc, HTTPException) and exc.headers else {}
        return text(405, "read-only: only POST /upload (when enabled) changes anything\n", dict(headers))

    async def journal_page(self, request: Request, fn: Callable[[], Response]) -> Response:
        """``fn()``'s response, made in a journal worker (``in_pool``); 500 if it raises."""
        try:
            return await self.in_pool(fn)
        except Exception:
            log.exception("http: %s failed", for_log(request.url.path))
            return text(500, "internal error (see the daemon's log)\n")


def start_http(svc: Any) -> HttpEndpoint | None:
    """The endpoint ``svc.cfg.daemon.http`` asks for, started; None when it is off."""
    cfg = svc.cfg.daemon.http
    if cfg is None:
        return None
    ep = HttpEndpoint(svc, cfg)
    ep.start()
    return ep

