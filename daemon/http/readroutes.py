"""The endpoint's read-only routes: health, Prometheus metrics, the status JSON and the status page.

Contract (``ReadRoutes(endpoint)``; the routes are registered by ``endpoint.HttpEndpoint``):
- ``GET /healthz/live``: 200 while the process serves. ``GET /healthz/ready``: 200 once the
  journal is recovered, the engine started and the inboxes watched; 503 with the reasons before
  that, while the engine restarts and during the drain (``metrics.ready_problems``: attributes
  and flags only, no journal read, no wait).
- ``GET /metrics``: the Prometheus text format (``prometheus_client``). ``GET /status``: JSON,
  ``counts`` and ``recent_failures`` as ``ocr-daemon status --json`` prints them plus ``live``
  (``status()``). ``GET /`` and ``/index.html``: an HTML page of the same (``statuspage``),
  linking the upload form for a client that may upload.
- What reads the journal runs in the endpoint's journal pool (``HttpEndpoint.journal_page``): a
  failure there is a 500 and a logged traceback, never a hung event loop.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import Response

from daemon.http.responses import client, html, json_page, response, text
from daemon.http.statuspage import page_html
from daemon.journal.store import status_summary
from daemon.service.metrics import METRICS, live_progress, ready_problems

if TYPE_CHECKING:
    from daemon.http.endpoint import HttpEndpoint


class ReadRoutes:
    """See the module docstring."""

    def __init__(self, endpoint: HttpEndpoint) -> None:
        self.endpoint = endpoint
        self.svc = endpoint.svc
        self.cfg = endpoint.cfg

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
                "settling": svc.intake.tracker.pending(),
                "processing": len(svc.workers.busy_documents()),
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

    async def live(self, request: Request) -> Response:
        return text(200, "live\n")

    async def ready(self, request: Request) -> Response:
        problems = ready_problems(self.svc)  # attributes and flags only: no journal, no wait
        if problems:
            return text(503, "not ready: " + "; ".join(problems) + "\n")
        return text(200, "ready\n")

    async def metrics(self, request: Request) -> Response:
        return await self.endpoint.journal_page(
            request, lambda: response(200, generate_latest(METRICS.registry), CONTENT_TYPE_LATEST))

    async def status_json(self, request: Request) -> Response:
        return await self.endpoint.journal_page(request, lambda: json_page(self.status()))

    async def page(self, request: Request) -> Response:
        upload = self.endpoint.uploads.may_upload(client(request))
        return await self.endpoint.journal_page(request, lambda: html(page_html(self.status(), upload=upload)))
