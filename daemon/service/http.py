"""The daemon's HTTP endpoint: health, Prometheus metrics, status JSON, a small HTML page, and
(opt-in) uploading one file into an inbox and downloading what the daemon made of it. The API is
described in docs/http.md; the pages' HTML is built in ``statuspage.py``.

Contract:
- ``HttpEndpoint(svc, cfg).start()`` serves ``daemon.http.listen`` from the daemon's process
  (``httpserver.ServerThread``: uvicorn on its own event loop in a thread, bounded connections,
  bind retries while the port is taken); ``close()`` stops it and removes its socket file.
  The routes are a Starlette app; every request first passes ``httpguard.Guard`` (Host
  allow-list: 400/421; bearer token when ``token_file`` is set: 401).
- It refuses to serve (an error logged; documents are processed as usual) a listen address on
  the network without ``allow_remote`` and a readable token (``check-config`` reports both).
- Endpoints: ``GET /healthz/live`` (200 while the process serves), ``GET /healthz/ready`` (200
  once the journal is recovered, the engine started and the inboxes watched; 503 with the
  reasons before that, while the engine restarts and during the drain), ``GET /metrics``
  (Prometheus text format by ``prometheus_client``), ``GET /status`` (JSON: ``counts`` and
  ``recent_failures`` as ``ocr-daemon status --json`` prints them, plus ``live``), ``GET /`` (an
  HTML page of the same that reloads itself every 5 s; no JavaScript). What reads the journal
  runs in a pool of ``JOURNAL_WORKERS`` threads; the event loop itself never waits on SQLite.
- Read-only: no endpoint changes state, except ``POST /upload`` when ``daemon.http.upload`` is
  true. An upload is streamed into the chosen inbox (``upload.UploadSink``: never whole in
  memory, ``upload_max_mb`` enforced while it arrives, at most ``upload_concurrency`` at once,
  503 + Retry-After beyond) and goes the normal way (stability wait, journal, routing).
  ``GET /upload/<id>`` shows its state and, once done, its outputs as links to
  ``GET /upload/<id>/files/<n>/<name>``, which serves only the files the journal lists as that
  upload's outputs (opened without following a symbolic link; as an attachment). Uploads are
  taken only from ``upload_clients`` (loopback by default; any client of a Unix socket, which its
  file permissions guard) and only with the form's per-process token (a page elsewhere cannot
  post here).
- A client that goes away (mid-upload, mid-download) costs a debug line, never a traceback.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import secrets
import stat
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from python_multipart.multipart import parse_options_header
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from daemon.config import HttpCfg
from daemon.config.validate import read_token
from daemon.journal.store import status_summary
from daemon.names import display, for_log
from daemon.service.httpguard import Guard
from daemon.service.httpserver import RETRY_BIND, ServerThread, parse_listen
from daemon.service.metrics import METRICS, live_progress, ready_problems
from daemon.service.statuspage import page_html, upload_form_html, upload_page_html
from daemon.service.upload import Upload, UploadError, UploadSink, UploadTarget, clean_name

__all__ = ["RETRY_BIND", "HttpEndpoint", "parse_listen", "start_http"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Uploads remembered for their status page (oldest forgotten first).
MAX_UPLOADS = 1000
#: Threads that read the journal for /status, /, /metrics and upload pages (SQLite reads of a
#: few ms each). With 4, 200 concurrent /status were all answered in 0.62 s on the busy 2-core VM
#: (bench/bench_http_load.py); more would only contend for the GIL with the event loop.
JOURNAL_WORKERS = 4
#: An upload's body is handed to its writer thread in pieces of at least this many bytes (a thread
#: hop per 256 KiB: ~400 for a 100 MiB upload). Measured: 6 concurrent 99 MiB uploads raised the
#: daemon's peak RSS by 9.6 MiB (the stdlib server held them whole: +827 MiB; bench/RESULTS.md).
FEED_BYTES = 256 * 1024
#: Seconds an upload may go without sending a byte before it is dropped (408).
BODY_TIMEOUT = 30.0
#: Bytes of a form beyond its file (boundaries, headers, token, inbox) accepted over the limit.
FORM_OVERHEAD = 64 * 1024
#: Seconds a client is told to wait when every upload slot is taken.
RETRY_AFTER = 5
_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'")


def _response(code: int, body: str | bytes, ctype: str, headers: dict[str, str] | None = None) -> Response:
    extra = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    if ctype.startswith("text/html"):
        extra["Content-Security-Policy"] = _CSP  # no script at all; forms post only here; no framing
    return Response(body, code, {**extra, **(headers or {})}, media_type=ctype)


def _text(code: int, text: str, headers: dict[str, str] | None = None) -> Response:
    return _response(code, text, "text/plain; charset=utf-8", headers)


def _json(data: Any) -> Response:
    return _response(200, json.dumps(data, indent=2, ensure_ascii=False) + "\n", "application/json")


def _html(page: str) -> Response:
    return _response(200, page, "text/html; charset=utf-8")


class HttpEndpoint:
    """See the module docstring."""

    def __init__(self, svc: Any, cfg: HttpCfg) -> None:
        self.svc = svc
        self.cfg = cfg
        self.token = secrets.token_urlsafe(24)  # the upload form's: proves a post came from our page
        self.uploads: dict[str, Upload] = {}
        self.active_uploads = 0  # changed on the event loop only
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(JOURNAL_WORKERS, thread_name_prefix="http-journal")
        self._server: ServerThread | None = None

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

    # -- content ---------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        svc = self.svc
        problems = ready_problems(svc)
        summary = status_summary(svc.journal, svc.cfg.daemon.max_attempts)
        return {
            # what `ocr-daemon status --json` prints (tests compare the two)
            **summary,
            "live": {
                "ready": not problems,
                "not_ready": problems,
                "engine": svc.engine.name,
                "started": datetime.fromtimestamp(METRICS.started).astimezone().isoformat(timespec="seconds"),
                "uptime_seconds": round(time.time() - METRICS.started, 1),
                "queue": summary["counts"].get("queued", 0),  # the journal's queue, not the few ids in memory
                "settling": svc.tracker.pending(),
                "processing": len(svc.busy_documents()),
                # every page finished since start: OCRed, and read from a text layer (of which)
                "pages_since_start": METRICS.pages_count + METRICS.layer_pages_count,
                "text_layer_pages_since_start": METRICS.layer_pages_count,
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
        if "/" in self.cfg.listen:
            return True  # a Unix socket: its file permissions say who connects
        try:
            ip = ipaddress.ip_address(client.split("%")[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        nets = [ipaddress.ip_network(n, strict=False) for n in self.cfg.upload_clients]
        return any(ip.version == n.version and ip in n for n in nets)

    def upload_target(self, fields: dict[str, str], filename: str) -> UploadTarget:
        """Where an upload's file goes; its form's token, inbox and name checked first
        (``UploadError`` with a message for the user)."""
        if not secrets.compare_digest(fields.get("token", "").encode(), self.token.encode()):
            raise UploadError(403, "the form's token is missing or stale (it comes before the file): reload the upload page")
        inbox = fields.get("inbox") or self.svc.cfg.inboxes[0].name
        ib = self.svc.cfg.inbox(inbox)
        if ib is None:
            raise UploadError(400, f"no inbox named {inbox!r}")
        name = clean_name(filename)
        if not ib.wants(Path(ib.path) / name):
            raise UploadError(400, f"inbox {ib.name!r} does not take {name!r} (include: {', '.join(ib.include)})")
        return UploadTarget(Path(ib.path), name, ib.name)

    def remember(self, path: Path, inbox: str, size: int) -> str:
        """Record a landed upload; its id."""
        uid = secrets.token_urlsafe(12)
        with self._lock:
            self.uploads[uid] = Upload(path, inbox, path.name, time.time())
            while len(self.uploads) > MAX_UPLOADS:
                self.uploads.pop(next(iter(self.uploads)))
        log.info("http upload: %s into inbox %r (%d bytes)", for_log(path.name), inbox, size)
        return uid

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

    # -- routes ----------------------------------------------------------------------------

    def _app(self) -> Starlette:
        routes = [
            Route("/healthz/live", self._live, methods=["GET"]),
            Route("/healthz/ready", self._ready, methods=["GET"]),
            Route("/metrics", self._metrics, methods=["GET"]),
            Route("/status", self._status, methods=["GET"]),
            Route("/", self._page, methods=["GET"]),
            Route("/index.html", self._page, methods=["GET"]),
            Route("/upload", self._upload_form, methods=["GET"]),
            Route("/upload", self._upload_post, methods=["POST"]),
            Route("/upload/{ref}", self._upload_page, methods=["GET"]),
            Route("/upload/{uid}/files/{n:int}/{name}", self._download, methods=["GET"]),
        ]
        handlers: dict[Any, Any] = {404: self._not_found, 405: self._not_allowed}
        return Starlette(routes=routes, exception_handlers=handlers)

    async def _not_found(self, request: Request, exc: Exception) -> Response:
        return _text(404, "not found; try /, /status, /metrics, /healthz/live, /healthz/ready\n")

    async def _not_allowed(self, request: Request, exc: Exception) -> Response:
        headers = exc.headers if isinstance(exc, HTTPException) and exc.headers else {}
        return _text(405, "read-only: only POST /upload (when enabled) changes anything\n", dict(headers))

    async def _journal_page(self, request: Request, fn: Callable[[], Response]) -> Response:
        try:
            return await self.in_pool(fn)
        except Exception:
            log.exception("http: %s failed", for_log(request.url.path))
            return _text(500, "internal error (see the daemon's log)\n")

    async def _live(self, request: Request) -> Response:
        return _text(200, "live\n")

    async def _ready(self, request: Request) -> Response:
        problems = ready_problems(self.svc)  # attributes and flags only: no journal, no wait
        if problems:
            return _text(503, "not ready: " + "; ".join(problems) + "\n")
        return _text(200, "ready\n")

    async def _metrics(self, request: Request) -> Response:
        return await self._journal_page(
            request, lambda: _response(200, generate_latest(METRICS.registry), CONTENT_TYPE_LATEST))

    async def _status(self, request: Request) -> Response:
        return await self._journal_page(request, lambda: _json(self.status()))

    async def _page(self, request: Request) -> Response:
        upload = self.may_upload(_client(request))
        return await self._journal_page(request, lambda: _html(page_html(self.status(), upload=upload)))

    async def _upload_form(self, request: Request) -> Response:
        if not self.may_upload(_client(request)):
            return _text(403, self._upload_refusal())
        return _html(upload_form_html(self.svc.cfg.inboxes, max_mb=self.cfg.upload_max_mb, token=self.token))

    def _upload_refusal(self) -> str:
        if not self.cfg.upload:
            return "uploads are off (daemon.http.upload: false)\n"
        return "uploads are allowed only from daemon.http.upload_clients\n"

    async def _upload_page(self, request: Request) -> Response:
        uid, _, fmt = request.path_params["ref"].partition(".")
        up = self.uploads.get(uid)
        if up is None or fmt not in ("", "json"):
            return _text(404, "no such upload (uploads are forgotten when the daemon restarts)\n")

        def page() -> Response:
            state = self.upload_state(up)
            state["downloads"] = [f"/upload/{uid}/files/{i}/{quote(Path(o).name)}" for i, o in enumerate(state.get("outputs") or [])]
            return _json(state) if fmt == "json" else _html(upload_page_html(state))

        return await self._journal_page(request, page)

    async def _download(self, request: Request) -> Response:
        p = request.path_params
        up = self.uploads.get(p["uid"])
        missing = _text(404, "no such file of this upload\n")
        if up is None:
            return missing
        try:
            state = await self.in_pool(self.upload_state, up)
        except Exception:
            log.exception("http: %s failed", for_log(request.url.path))
            return _text(500, "internal error (see the daemon's log)\n")
        outs = (state.get("outputs") or []) if state["state"] in ("done", "duplicate") else []
        if not 0 <= p["n"] < len(outs) or Path(outs[p["n"]]).name != p["name"]:
            return missing
        try:
            fd, size = await run_in_threadpool(_open_regular, outs[p["n"]])
        except OSError as e:
            log.info("http download of %s: %s", for_log(outs[p["n"]]), e.strerror)
            return missing
        disposition = f"attachment; filename*=UTF-8''{quote(p['name'])}"
        return StreamingResponse(_read_chunks(fd), media_type="application/octet-stream", headers={
            "Content-Length": str(size), "Content-Disposition": disposition, "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'; sandbox"})

    async def _upload_post(self, request: Request) -> Response:
        if not self.may_upload(_client(request)):
            return _text(403, self._upload_refusal(), {"Connection": "close"})
        ctype, params = parse_options_header(request.headers.get("content-type", ""))
        if ctype != b"multipart/form-data" or b"boundary" not in params:
            return _text(400, "expected multipart/form-data\n", {"Connection": "close"})
        limit = self.cfg.upload_max_mb << 20
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit + FORM_OVERHEAD):
            return _text(413, f"larger than daemon.http.upload_max_mb ({self.cfg.upload_max_mb} MiB)\n", {"Connection": "close"})
        if self.active_uploads >= self.cfg.upload_concurrency:
            return _text(503, f"busy: {self.cfg.upload_concurrency} upload(s) in progress (daemon.http.upload_concurrency); "
                         "try again shortly\n", {"Retry-After": str(RETRY_AFTER), "Connection": "close"})
        self.active_uploads += 1
        sink = UploadSink(params[b"boundary"], limit, self.upload_target)
        try:
            dest = await self._receive(request, sink)
        except UploadError as e:
            await run_in_threadpool(sink.abort)
            if e.status >= 500:
                log.error("http upload failed: %s", e.message)
            return _text(e.status, e.message + "\n", {"Connection": "close"})
        except ClientDisconnect:
            await run_in_threadpool(sink.abort)
            log.debug("http upload: the client went away after %d bytes", sink.size)
            return _text(400, "the client went away\n")  # nobody reads it
        except BaseException:  # cancelled (the endpoint closes) or a bug: nothing left behind
            sink.abort()
            raise
        finally:
            self.active_uploads -= 1
        assert sink.target is not None
        uid = self.remember(dest, sink.target.inbox, sink.size)
        return _response(303, b"", "text/plain", {"Location": f"/upload/{uid}"})

    async def _receive(self, request: Request, sink: UploadSink) -> Path:
        """The body into ``sink``, in pieces of ``FEED_BYTES`` written by a worker thread."""
        stream = request.stream().__aiter__()
        buf = bytearray()
        while True:
            try:
                chunk = await asyncio.wait_for(stream.__anext__(), BODY_TIMEOUT)
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise UploadError(408, f"no data for {BODY_TIMEOUT:.0f}s: upload dropped") from None
            buf += chunk
            if len(buf) >= FEED_BYTES:
                await run_in_threadpool(sink.feed, bytes(buf))
                buf.clear()
        await run_in_threadpool(sink.feed, bytes(buf))
        return await run_in_threadpool(sink.finish)


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


def _open_regular(path: str) -> tuple[int, int]:
    """(fd, size) of ``path`` opened for reading: a regular file reached without following a
    symbolic link at its last step (an output swapped for a link to a secret is not served)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(0, "not a regular file")
    return fd, st.st_size


async def _read_chunks(fd: int) -> AsyncIterator[bytes]:
    try:
        while chunk := await run_in_threadpool(os.read, fd, 1 << 16):
            yield chunk
    finally:
        os.close(fd)  # also when the client goes away mid-download (the generator is closed)


def start_http(svc: Any) -> HttpEndpoint | None:
    """The endpoint ``svc.cfg.daemon.http`` asks for, started; None when it is off."""
    cfg = svc.cfg.daemon.http
    if cfg is None:
        return None
    ep = HttpEndpoint(svc, cfg)
    ep.start()
    return ep

