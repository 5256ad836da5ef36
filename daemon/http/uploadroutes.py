"""The endpoint's upload routes (opt-in, ``daemon.http.upload``): the form, the post, an upload's
page and its outputs' downloads.

Contract (``UploadRoutes(endpoint)``; the routes are registered by ``endpoint.HttpEndpoint``):
- ``GET /upload``: the form (with this process's form token; a page elsewhere cannot post here).
  ``POST /upload``: streamed into the chosen inbox (``upload.UploadSink``: never whole in memory,
  ``upload_max_mb`` enforced while it arrives, at most ``upload_concurrency`` at once, 503 +
  Retry-After beyond); the file then goes the normal way (stability wait, journal, routing) and
  the client is sent to its page (303).
- ``GET /upload/<id>`` (``.json`` for JSON) shows its state (``state()``) and, once done, its
  outputs as links to ``GET /upload/<id>/files/<n>/<name>``, which serves only the files the
  journal lists as that upload's outputs (opened without following a symbolic link; as an
  attachment). The newest ``MAX_UPLOADS`` uploads are remembered, until the daemon restarts.
- Uploads are taken only from ``upload_clients`` (loopback by default; any client of a Unix
  socket, which its file permissions guard): ``may_upload``.
- A client that goes away (mid-upload, mid-download) costs a debug line, never a traceback.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import secrets
import stat
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from python_multipart.multipart import parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse

from daemon.http.responses import client, html, json_page, response, text
from daemon.http.statuspage import upload_form_html, upload_page_html
from daemon.http.upload import Upload, UploadError, UploadSink, UploadTarget, clean_name
from daemon.names import display, for_log
from daemon.service.metrics import live_progress

if TYPE_CHECKING:
    from daemon.http.endpoint import HttpEndpoint

log = logging.getLogger(__name__)

#: Uploads remembered for their status page (oldest forgotten first).
MAX_UPLOADS = 1000
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


class UploadRoutes:
    """See the module docstring."""

    def __init__(self, endpoint: HttpEndpoint) -> None:
        self.svc = endpoint.svc
        self.cfg = endpoint.cfg
        self.endpoint = endpoint
        self.token = secrets.token_urlsafe(24)  # the upload form's: proves a post came from our page
        self.uploads: dict[str, Upload] = {}
        self.active_uploads = 0  # changed on the event loop only
        self._lock = threading.Lock()

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

    def target(self, fields: dict[str, str], filename: str) -> UploadTarget:
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

    def state(self, up: Upload) -> dict[str, Any]:
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

    async def form(self, request: Request) -> Response:
        if not self.may_upload(client(request)):
            return text(403, self.refusal())
        return html(upload_form_html(self.svc.cfg.inboxes, max_mb=self.cfg.upload_max_mb, token=self.token))

    def refusal(self) -> str:
        if not self.cfg.upload:
            return "uploads are off (daemon.http.upload: false)\n"
        return "uploads are allowed only from daemon.http.upload_clients\n"

    async def page(self, request: Request) -> Response:
        uid, _, fmt = request.path_params["ref"].partition(".")
        up = self.uploads.get(uid)
        if up is None or fmt not in ("", "json"):
            return text(404, "no such upload (uploads are forgotten when the daemon restarts)\n")

        def page() -> Response:
            state = self.state(up)
            state["downloads"] = [f"/upload/{uid}/files/{i}/{quote(Path(o).name)}" for i, o in enumerate(state.get("outputs") or [])]
            return json_page(state) if fmt == "json" else html(upload_page_html(state))

        return await self.endpoint.journal_page(request, page)

    async def download(self, request: Request) -> Response:
        p = request.path_params
        up = self.uploads.get(p["uid"])
        missing = text(404, "no such file of this upload\n")
        if up is None:
            return missing
        try:
            state = await self.endpoint.in_pool(self.state, up)
        except Exception:
            log.exception("http: %s failed", for_log(request.url.path))
            return text(500, "internal error (see the daemon's log)\n")
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

    async def post(self, request: Request) -> Response:
        if not self.may_upload(client(request)):
            return text(403, self.refusal(), {"Connection": "close"})
        ctype, params = parse_options_header(request.headers.get("content-type", ""))
        if ctype != b"multipart/form-data" or b"boundary" not in params:
            return text(400, "expected multipart/form-data\n", {"Connection": "close"})
        limit = self.cfg.upload_max_mb << 20
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > limit + FORM_OVERHEAD):
            return text(413, f"larger than daemon.http.upload_max_mb ({self.cfg.upload_max_mb} MiB)\n", {"Connection": "close"})
        if self.active_uploads >= self.cfg.upload_concurrency:
            return text(503, f"busy: {self.cfg.upload_concurrency} upload(s) in progress (daemon.http.upload_concurrency); "
                         "try again shortly\n", {"Retry-After": str(RETRY_AFTER), "Connection": "close"})
        self.active_uploads += 1
        sink = UploadSink(params[b"boundary"], limit, self.target)
        try:
            dest = await self._receive(request, sink)
        except UploadError as e:
            await run_in_threadpool(sink.abort)
            if e.status >= 500:
                log.error("http upload failed: %s", e.message)
            return text(e.status, e.message + "\n", {"Connection": "close"})
        except ClientDisconnect:
            await run_in_threadpool(sink.abort)
            log.debug("http upload: the client went away after %d bytes", sink.size)
            return text(400, "the client went away\n")  # nobody reads it
        except BaseException:  # cancelled (the endpoint closes) or a bug: nothing left behind
            sink.abort()
            raise
        finally:
            self.active_uploads -= 1
        assert sink.target is not None
        uid = self.remember(dest, sink.target.inbox, sink.size)
        return response(303, b"", "text/plain", {"Location": f"/upload/{uid}"})

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
