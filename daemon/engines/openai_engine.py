"""Engine ``openai``: pages sent to one or more OpenAI-compatible ``/v1/chat/completions`` servers.

For users who already run ``vllm serve lightonai/LightOnOCR-2-1B`` (or a pool of GPUs elsewhere).

Contract (see ``daemon.engines.base``):
- ``OpenAIEngine(engine_cfg)``; ``cfg.openai.base_urls`` lists servers (``http://host:8000`` or
  ``.../v1``). ``start()`` asks each server for ``/v1/models`` (a down server is only logged;
  none reachable raises ``FatalError(ExitCode.ENGINE)``) and picks the model id when
  ``cfg.openai.model`` is unset.
- ``submit`` is thread-safe, returns a future at once, and blocks while
  ``cfg.openai.concurrency`` pages are unfinished (back-pressure). Each page is one request: one
  user message holding the page as a base64 PNG data URL (JPEG for large photos), no text,
  with the configured sampling. Requests go to the server with the fewest requests in flight
  (round robin among ties) among the servers that are up, so a slow server gets fewer pages.
- Server health: a connection error, timeout or HTTP 429/5xx marks that server down for
  ``cfg.openai.down_backoff`` seconds, doubling with each further failure up to
  ``down_backoff_max``; a server that did not answer ``/v1/models`` at start begins down. A
  prober thread asks a down server for ``/v1/models`` once its backoff has passed; when it
  answers, the server is up and takes pages again (else the backoff doubles). While every server
  is down, pages still go to the one due back first (their own retries pace them). ``stats``
  counts requests, failures, down and back events per server.
- Errors: connection errors, timeouts and HTTP 429/5xx are retried up to ``cfg.openai.retries``
  times with exponential backoff (0.5 s, 1 s, 2 s, ... plus jitter), each time on the
  least-busy server that is up; after that the page fails with ``TransientError`` (the pipeline
  retries the document later). HTTP 400/413/422 (the server refuses this page) fail with
  ``InputError``.
- The page policy of ``daemon.engines.pagepolicy`` (repetition retries, banding) applies here too,
  in its blocking form (``recognise_page_sync``) in the page's worker thread.
- ``engine.debug`` (benchmarks only): ``ignore_eos`` goes into every request body,
  ``page_guards: false`` turns the page policy off.
- Standard library only (``http.client``); no new dependency.
"""

from __future__ import annotations

import base64
import concurrent.futures as cf
import http.client
import io
import json
import logging
import random
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from PIL import Image

from daemon.config import EngineCfg
from daemon.engines.base import Engine, InFlight, PageRequest
from daemon.engines.pagepolicy import GenResult, PagePolicy, recognise_page_sync
from daemon.errors import EngineDeadError, ExitCode, FatalError, InputError, TransientError
from daemon.models import PageText

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
REFUSED_STATUS = {400, 413, 415, 422}


@dataclass
class _Server:
    base: str  # scheme://host:port/prefix (prefix without trailing /v1)
    scheme: str
    host: str
    port: int
    prefix: str
    in_flight: int = 0
    failures: int = 0
    # health: down until that monotonic time (0 = up); down_streak doubles the next backoff
    down_until: float = 0.0
    down_streak: int = 0
    requests: int = 0
    downs: int = 0
    backs: int = 0

    @property
    def up(self) -> bool:
        return self.down_until == 0.0


def _parse_base(url: str) -> _Server:
    u = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    if u.scheme not in ("http", "https") or not u.hostname:
        raise FatalError(f"engine.openai.base_urls: {url!r} is not an http(s) URL", ExitCode.CONFIG)
    prefix = u.path.rstrip("/")
    if prefix.endswith("/v1"):
        prefix = prefix[:-3]
    port = u.port or (443 if u.scheme == "https" else 80)
    return _Server(base=f"{u.scheme}://{u.hostname}:{port}{prefix}", scheme=u.scheme, host=u.hostname, port=port, prefix=prefix)


def encode_image(img: Image.Image) -> str:
    """Data URL for a page: PNG (lossless, best for text); JPEG q92 when the PNG is very large."""
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="PNG", optimize=False, compress_level=3)
    data, mime = buf.getvalue(), "image/png"
    if len(data) > 4_000_000:  # photos: PNG balloons; JPEG keeps the request small
        buf = io.BytesIO()
        img.convert("RGB").save(buf, format="JPEG", quality=92)
        data, mime = buf.getvalue(), "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def chat_body(model: str, image_url: str, temperature: float, top_p: float, max_tokens: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request body: the page image alone in one user message (LightOnOCR model card)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": image_url}}]}],
        "temperature": temperature,
        "top_p": top_p,
        "max_tokens": max_tokens,
    }
    body.update(extra or {})
    return body


class _HTTPFailure(Exception):
    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status


class OpenAIEngine(Engine):
    """Pages to OpenAI-compatible servers. See the module docstring."""

    output_is_markdown = True
    backoff_base: float = 0.5

    def __init__(self, engine_cfg: EngineCfg) -> None:
        self.cfg = engine_cfg
        self.policy = PagePolicy.from_config(engine_cfg)
        o = engine_cfg.openai
        if not o.base_urls:
            raise FatalError("engine.kind openai needs engine.openai.base_urls (e.g. http://gpu-host:8000/v1)", ExitCode.CONFIG)
        self.servers = [_parse_base(u) for u in o.base_urls]
        self.model = o.model or engine_cfg.model
        self.name = f"openai:{self.model}"
        self.max_in_flight = o.concurrency
        self._pages = InFlight(o.concurrency, on_done=self.page_done)  # base.py: last_progress
        self.hang_timeout = o.timeout * (o.retries + 1)  # a page may take every try's timeout
        self._lock = threading.Lock()
        self._rr = 0
        self._pool: cf.ThreadPoolExecutor | None = None
        self._closed = False
        self._started = False
        self._stop = threading.Event()
        self._prober: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self._started:
            return
        ok = 0
        for s in self.servers:
            try:
                status, data = self._http(s, "GET", "/v1/models", None, timeout=min(10.0, self.cfg.openai.timeout))
                if status == 200:
                    ok += 1
                    models = [m.get("id") for m in json.loads(data).get("data", [])]
                    if not self.cfg.openai.model and models and self.model not in models:
                        self.model = str(models[0])
                        self.name = f"openai:{self.model}"
                else:
                    log.warning("OpenAI server %s: /v1/models answered HTTP %s", s.base, status)
                    self._mark_down(s, f"HTTP {status}")
            except (OSError, http.client.HTTPException, ValueError) as e:
                log.warning("OpenAI server %s unreachable: %s", s.base, e)
                self._mark_down(s, str(e))
        if ok == 0:
            raise FatalError(
                "none of engine.openai.base_urls answers /v1/models: " + ", ".join(s.base for s in self.servers),
                ExitCode.ENGINE,
            )
        # One thread per page in flight: requests block on the network, not the CPU.
        self._pool = cf.ThreadPoolExecutor(max_workers=self.cfg.openai.concurrency, thread_name_prefix="openai")
        self._prober = threading.Thread(target=self._probe_loop, name="openai-prober", daemon=True)
        self._prober.start()
        self._started = True

    def healthy(self) -> bool:
        return self._started and not self._closed

    def close(self, drain_timeout: float = 0.0) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        pending = self._pages.snapshot()
        if pending and drain_timeout > 0:
            cf.wait(pending, timeout=drain_timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        for f in pending:
            f.cancel()
        if self._prober is not None:
            self._prober.join(timeout=5)

    # ------------------------------------------------------------------ submission

    def submit(self, request: PageRequest) -> cf.Future[PageText]:
        if not self._started:
            self.start()
        if self._closed or self._pool is None:
            f: cf.Future[PageText] = cf.Future()
            f.set_exception(EngineDeadError("the openai engine is closed"))
            return f
        pool = self._pool
        try:
            return self._pages.add(lambda: pool.submit(self._page, request))
        except RuntimeError:  # close() shut the pool down meanwhile
            f = cf.Future()
            f.set_exception(EngineDeadError("the openai engine is closed"))
            return f

    def _page(self, req: PageRequest) -> PageText:
        t0 = time.monotonic()

        def generate(img: Image.Image, temperature: float, max_tokens: int, priority: int) -> GenResult:
            return self._request(img, temperature, max_tokens)

        out = recognise_page_sync(req.image, req.priority, generate, self.policy)
        return out.page_text(req.index, self.name, time.monotonic() - t0)

    # ------------------------------------------------------------------ HTTP

    @property
    def stats(self) -> dict[str, dict[str, int]]:
        """Per server: requests sent, failures in a row, times marked down and back up."""
        with self._lock:
            return {s.base: {"requests": s.requests, "failures": s.failures, "downs": s.downs, "backs": s.backs}
                    for s in self.servers}

    def _pick(self, avoid: _Server | None = None) -> _Server:
        """Least requests in flight among the servers that are up (fewest recent failures breaks
        ties), round robin among equals; when none is up, the one due back first."""
        with self._lock:
            self._rr += 1
            n = len(self.servers)
            order = [self.servers[(self._rr + i) % n] for i in range(n)]
            up = [x for x in order if x.up]
            if up:
                cands = [x for x in up if x is not avoid] or up
                best = min(cands, key=lambda x: (x.in_flight, x.failures))
            else:
                best = min(order, key=lambda x: x.down_until)
            best.in_flight += 1
            best.requests += 1
            return best

    def _release(self, s: _Server, ok: bool, why: str = "") -> None:
        with self._lock:
            s.in_flight -= 1
            s.failures = 0 if ok else min(s.failures + 1, 10)
        if not ok:
            self._mark_down(s, why)

    def _mark_down(self, s: _Server, why: str, probe: bool = False) -> None:
        """Down for the next backoff; ``probe``: the prober's failed probe (it is down already)."""
        o = self.cfg.openai
        with self._lock:
            if not probe and not s.up and time.monotonic() < s.down_until:
                return  # already down: concurrent failures of one outage count once
            backoff = min(o.down_backoff * (2**s.down_streak), o.down_backoff_max)
            s.down_streak = min(s.down_streak + 1, 30)
            s.down_until = time.monotonic() + backoff
            s.downs += 1
        log.warning("OpenAI server %s down (%s); probing it again in %.1f s", s.base, why, backoff)

    def _probe_loop(self) -> None:
        """Ask each down server whose backoff has passed for /v1/models; up again if it answers."""
        while not self._stop.is_set():
            now = time.monotonic()
            with self._lock:
                due = [s for s in self.servers if not s.up and s.down_until <= now]
                waits = [s.down_until - now for s in self.servers if not s.up and s.down_until > now]
            for s in due:
                if self._stop.is_set():
                    return
                try:
                    status, _ = self._http(s, "GET", "/v1/models", None, timeout=min(5.0, self.cfg.openai.timeout))
                    ok, why = status == 200, f"HTTP {status}"
                except (OSError, http.client.HTTPException) as e:
                    ok, why = False, str(e)
                if ok:
                    with self._lock:
                        s.down_until, s.down_streak, s.failures = 0.0, 0, 0
                        s.backs += 1
                    log.info("OpenAI server %s answers again: back in use", s.base)
                else:
                    self._mark_down(s, f"probe: {why}", probe=True)
            self._stop.wait(min([0.5, *waits]) if waits else 0.5)

    def _http(self, s: _Server, method: str, path: str, body: bytes | None, timeout: float) -> tuple[int, bytes]:
        conn_cls = http.client.HTTPSConnection if s.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(s.host, s.port, timeout=timeout)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.cfg.openai.api_key:
            headers["Authorization"] = f"Bearer {self.cfg.openai.api_key}"
        try:
            conn.request(method, s.prefix + path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def _request(self, img: Image.Image, temperature: float, max_tokens: int) -> GenResult:
        o = self.cfg.openai
        # vLLM's server takes ignore_eos as an extra sampling field (benchmarks: engine.debug)
        extra = {"ignore_eos": True} if self.cfg.debug.ignore_eos else None
        body = json.dumps(chat_body(self.model, encode_image(img), temperature, self.cfg.sampling.top_p, max_tokens, extra)).encode()
        last: Exception | None = None
        prev: _Server | None = None
        for attempt in range(o.retries + 1):
            if self._closed:
                raise EngineDeadError("the openai engine is closed")
            s = self._pick(avoid=prev)
            ok = False
            why = ""
            try:
                status, data = self._http(s, "POST", "/v1/chat/completions", body, o.timeout)
                if status == 200:
                    choice = json.loads(data)["choices"][0]
                    usage = json.loads(data).get("usage") or {}
                    ok = True
                    return GenResult(
                        str(choice["message"].get("content") or ""),
                        choice.get("finish_reason"),
                        int(usage.get("completion_tokens") or 0),
                    )
                msg = data[:300].decode("utf-8", "replace")
                if status in REFUSED_STATUS:
                    ok = True  # the server is fine; this page is not
                    raise InputError(f"the OCR server refused the page (HTTP {status}): {msg}")
                last = _HTTPFailure(status, f"HTTP {status} from {s.base}: {msg}")
                why = f"HTTP {status}"
            except (OSError, http.client.HTTPException, ValueError, KeyError, IndexError) as e:
                last = e
                why = f"{type(e).__name__}: {e}"
            finally:
                self._release(s, ok, why)
            prev = s
            if attempt < o.retries:
                delay = self.backoff_base * (2**attempt) * (1 + random.random() * 0.25)
                log.warning("OpenAI request failed (%s); retry %d/%d in %.1fs", last, attempt + 1, o.retries, delay)
                time.sleep(delay)
        raise TransientError(f"OCR server request failed after {o.retries + 1} tries: {last}")
